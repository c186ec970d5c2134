//! rtcd's fuzz targets. Each module is one target with `pub fn run(data: &[u8])`:
//! libFuzzer drives it through the thin wrappers in `fuzz_targets/`
//! (`scripts/fuzz.sh`), and `tests/corpus.rs` replays the committed seeds
//! (`corpus/<target>/`) through it on stable, so `cargo test` keeps the
//! targets compiling and the seeds passing.
//!
//! A target fails by panicking: either the code under test panicked on bad
//! input, or an `assert!` here found a broken property (a round trip that
//! does not round-trip, the store disagreeing with its reference model).

pub mod apiserver_decode;
pub mod apply;
pub mod authority;
pub mod continue_token;
pub mod crd_rules;
pub mod gateway_streams;
pub mod grpc_requests;
pub mod patch;
pub mod raft_codec;
pub mod seeds;
pub mod selectors;
pub mod store_model;
pub mod watch_requests;

/// Splits a target's input into its selector byte, the JSON object before
/// a NUL byte (which JSON text cannot contain; `{}` when there is none) and
/// the body after it. None for an empty input.
pub fn split_input(data: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&selector, rest) = data.split_first()?;
    Some(match rest.iter().position(|&b| b == 0) {
        Some(nul) => (selector, &rest[..nul], &rest[nul + 1..]),
        None => (selector, &b"{}"[..], rest),
    })
}

/// One fuzz target: its name (= its corpus directory and binary) and entry point.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, in the order `scripts/fuzz.sh` runs them.
pub const TARGETS: &[Target] = &[
    ("grpc_requests", grpc_requests::run),
    ("raft_codec", raft_codec::run),
    ("store_model", store_model::run),
    ("apiserver_decode", apiserver_decode::run),
    ("patch", patch::run),
    ("apply", apply::run),
    ("selectors", selectors::run),
    ("continue_token", continue_token::run),
    ("watch_requests", watch_requests::run),
    ("authority", authority::run),
    ("crd_rules", crd_rules::run),
    ("gateway_streams", gateway_streams::run),
];
