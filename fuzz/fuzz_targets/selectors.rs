//! libFuzzer entry point; the target itself is `rtcd_fuzz::selectors`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rtcd_fuzz::selectors::run(data));
