//! libFuzzer entry point; the target itself is `rtcd_fuzz::authority`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rtcd_fuzz::authority::run(data));
