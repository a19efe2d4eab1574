//! See `simstore_fuzz::gzip`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| simstore_fuzz::gzip(data));
