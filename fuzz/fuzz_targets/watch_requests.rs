//! libFuzzer entry point; the target itself is `rtcd_fuzz::watch_requests`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rtcd_fuzz::watch_requests::run(data));
