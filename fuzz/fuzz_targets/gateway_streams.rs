//! libFuzzer entry point; the target itself is `rtcd_fuzz::gateway_streams`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rtcd_fuzz::gateway_streams::run(data));
