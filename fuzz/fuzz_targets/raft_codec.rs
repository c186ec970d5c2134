//! libFuzzer entry point; the target itself is `rtcd_fuzz::raft_codec`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rtcd_fuzz::raft_codec::run(data));
