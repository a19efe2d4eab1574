//! See `simstore_fuzz::warc`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| simstore_fuzz::warc(data));
