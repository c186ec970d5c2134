//! libFuzzer entry point; the target itself is `rtcd_fuzz::apiserver_decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rtcd_fuzz::apiserver_decode::run(data));
