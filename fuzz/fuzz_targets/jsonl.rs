//! See `simstore_fuzz::jsonl`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| simstore_fuzz::jsonl(data));
