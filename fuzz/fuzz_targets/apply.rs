//! libFuzzer entry point; the target itself is `rtcd_fuzz::apply`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rtcd_fuzz::apply::run(data));
