//! Raft log entries: `rtcd_raft::codec::decode` on arbitrary bytes (every
//! member decodes every committed entry, so a panic here takes a whole
//! cluster down). When bytes decode, re-encoding must give bytes that decode
//! to the same proposal.
//!
//! The codec is compiled from raft's own source file rather than through the
//! `rtcd-raft` crate: that crate links RocksDB (its log store), and the
//! instrumented fuzz build would compile RocksDB's C++ a second time. The
//! file needs only rtcd-proto, rtcd-store, prost and thiserror.

#[cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
// Formatting that file is its own crate's business (`cargo fmt -p rtcd-fuzz` must not touch it).
#[rustfmt::skip]
#[path = "../../raft/src/codec.rs"]
pub(crate) mod codec;

pub fn run(data: &[u8]) {
    let Ok(decoded) = codec::decode(data) else { return };
    let again = codec::encode(decoded.id, decoded.request.clone(), &decoded.caller);
    match codec::decode(&again) {
        Ok(back) => assert_eq!(back, decoded, "encode→decode changed the proposal"),
        Err(e) => panic!("re-encoded proposal does not decode: {e}; was {decoded:?}"),
    }
}
