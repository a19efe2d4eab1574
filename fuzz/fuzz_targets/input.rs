//! See `simstore_fuzz::input`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| simstore_fuzz::input(data));
