//! The corpus of the coverage-guided fuzz targets (`fuzz/`, run by `scripts/fuzz`), as
//! tests on stable Rust: every file of `tests/data/fuzz/<target>/` — inputs that found a
//! bug, and a few that reach the readers' rarer paths — goes through the same checks the
//! fuzz target runs (`fuzz/src/lib.rs`, included here).

use std::fs;
use std::path::Path;

#[path = "../fuzz/src/lib.rs"]
pub(crate) mod checks;

/// Runs every file of `tests/data/fuzz/<name>/` through `check`; the corpus may not be
/// empty, or the test would pass without testing anything.
fn run_corpus(name: &str, check: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fuzz")
        .join(name);
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus {} is empty", dir.display());
    for file in &files {
        let data = fs::read(file).expect("a corpus file");
        let run = std::panic::catch_unwind(|| check(&data));
        assert!(
            run.is_ok(),
            "fuzz target {name} fails on {}",
            file.display()
        );
    }
    files.len()
}

#[test]
fn every_target_has_a_corpus_and_passes_it() {
    for (name, check) in checks::TARGETS {
        let n = run_corpus(name, *check);
        println!("fuzz corpus {name}: {n} inputs");
    }
    // Every corpus folder is a target's: a misnamed one would never run.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz");
    for entry in fs::read_dir(&root).expect("tests/data/fuzz") {
        let name = entry.expect("a directory entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            checks::TARGETS.iter().any(|(t, _)| *t == name),
            "tests/data/fuzz/{name} is no fuzz target's corpus"
        );
    }
}
