//! libFuzzer entry point; the target itself is `rtcd_fuzz::store_model`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rtcd_fuzz::store_model::run(data));
