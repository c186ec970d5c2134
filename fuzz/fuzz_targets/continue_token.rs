//! libFuzzer entry point; the target itself is `rtcd_fuzz::continue_token`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rtcd_fuzz::continue_token::run(data));
