//! The JSON gateway's streamed request bodies (`/v3/watch`,
//! `/v3/lease/keepalive`): where each value ends, found by the server's
//! `gateway::framer::Framer` as the body arrives in pieces. The body was
//! once parsed again on every piece (a 1 MiB watch request sent a byte at
//! a time cost 90 s of CPU); the framer looks at each byte once.
//!
//! Input: one byte for the size of the pieces, then the body.
//!
//! Properties: nothing panics; cut into pieces of any size, the body's
//! values end where they end with the body whole; each value found ends
//! where serde_json's stream reader ends it, for every value that reader
//! reads (what it refuses, the decoder refuses later anyway); finding them
//! looks at each byte at most once per value it belongs to.
//!
//! The server file is compiled here from its source rather than through
//! `rtcd-server`, which links RocksDB.

#[cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
// Formatting that file is its own crate's business (`cargo fmt -p rtcd-fuzz` must not touch it).
#[rustfmt::skip]
#[path = "../../server/src/gateway/framer.rs"]
mod framer;

use framer::Framer;

pub fn run(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else { return };
    let whole = ends(body, body.len().max(1));
    let pieces = ends(body, usize::from(selector % 64).max(1));
    assert_eq!(pieces, whole, "the values end elsewhere when the body comes in pieces");
    let mut reader = serde_json::Deserializer::from_slice(body).into_iter::<serde_json::Value>();
    let mut read = Vec::new();
    while let Some(Ok(_)) = reader.next() {
        read.push(reader.byte_offset());
    }
    for (found, expected) in whole.iter().zip(&read) {
        assert_eq!(found, expected, "a value framed where serde_json does not end it: {whole:?} vs {read:?}");
    }
    // Only a last bare scalar (`... 42`) waits for the body's end.
    assert!(whole.len() + 1 >= read.len(), "values missed: {whole:?} vs {read:?}");
}

/// The values' ends in `body` (offsets into it), found as the gateway
/// finds them: the body arriving `piece` bytes at a time, each value taken
/// out of the buffer once found, a fresh framer for the next.
fn ends(body: &[u8], piece: usize) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut buffer = Vec::new();
    let mut taken = 0;
    let mut framer = Framer::default();
    for chunk in body.chunks(piece) {
        buffer.extend_from_slice(chunk);
        while let Some(end) = framer.scan(&buffer) {
            assert!(end > 0, "an empty value");
            taken += end;
            ends.push(taken);
            buffer.drain(..end);
            framer = Framer::default();
        }
    }
    ends
}
