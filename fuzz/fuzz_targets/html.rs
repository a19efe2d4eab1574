//! See `simstore_fuzz::html`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| simstore_fuzz::html(data));
