//! libFuzzer entry point; the target itself is `rtcd_fuzz::crd_rules`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rtcd_fuzz::crd_rules::run(data));
