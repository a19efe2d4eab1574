//! The library without the binary: `simstore` as a dependency with
//! `default-features = false` pulls none of the command line's or the server's crates.
//! Checked on the resolved dependency graph (`cargo tree`, offline: the lock file and the
//! local registry cache suffice), so a new binary-only dependency that is not optional, or
//! a feature that turns one on for the library, fails here.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Crates only the binary (`cli`) or `serve` (`server`) needs.
const BINARY_ONLY: &[&str] = &[
    "anyhow",
    "arrow-array",
    "axum",
    "clap",
    "clap_complete",
    "clap_mangen",
    "hyper",
    "hyper-util",
    "indicatif",
    "parquet",
    "prometheus",
    "similar",
    "tokio",
];

/// The names of the packages in simstore's normal (not dev, not build) dependency graph,
/// with `features` passed to `cargo tree`.
fn normal_dependencies(features: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["-f", "{p}", "-p", "simstore", "--manifest-path"])
        .arg(&manifest)
        .args(features)
        .output()
        .expect("run cargo tree");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "cargo tree failed: {stderr}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_library_alone_pulls_no_binary_only_crate() {
    let lib = normal_dependencies(&["--no-default-features"]);
    // The graph is real: the engine's own dependencies are there.
    for engine in ["rocksdb", "jieba-rs", "serde_json"] {
        assert!(lib.contains(engine), "{engine} missing from {lib:?}");
    }
    // Nor any crate of an optional reader or backend.
    for (feature, crates) in OPTIONAL {
        for c in *crates {
            assert!(
                !lib.contains(*c),
                "the library alone pulls {c} (of `{feature}`)"
            );
        }
    }
    let pulled: Vec<&&str> = BINARY_ONLY.iter().filter(|c| lib.contains(**c)).collect();
    assert!(
        pulled.is_empty(),
        "simstore with default-features = false depends on {pulled:?}"
    );
}

/// The optional parts of the library and the crates each pulls.
const OPTIONAL: &[(&str, &[&str])] = &[
    ("redis", &["redis"]),
    (
        "html",
        &["scraper", "html5ever", "chardetng", "encoding_rs"],
    ),
    ("warc", &["warc", "httparse", "html5ever"]),
];

#[test]
fn each_optional_feature_pulls_its_crates_alone() {
    for (feature, crates) in OPTIONAL {
        let deps = normal_dependencies(&["--no-default-features", "--features", feature]);
        for c in *crates {
            assert!(deps.contains(*c), "`{feature}` does not pull {c}: {deps:?}");
        }
        let others = OPTIONAL
            .iter()
            .filter(|(f, _)| f != feature && *f != "html");
        for (other, theirs) in others {
            for c in theirs.iter().filter(|c| !crates.contains(c)) {
                assert!(!deps.contains(*c), "`{feature}` pulls {c} (of `{other}`)");
            }
        }
    }
}

/// Every combination of the optional features builds (`cargo check` of the library). In a
/// target directory of its own (the running `cargo test` holds its own), with the RocksDB
/// this test binary was linked with (`ROCKSDB_LIB_DIR`), so RocksDB is not compiled again.
#[test]
fn every_feature_combination_of_the_library_builds() {
    let release = std::env::current_exe().unwrap();
    let release = release.parent().and_then(Path::parent).unwrap();
    let rocksdb = std::fs::read_dir(release.join("build"))
        .unwrap()
        .map(|e| e.unwrap().path().join("out"))
        .find(|out| out.join("librocksdb.a").is_file())
        .expect("the RocksDB library this test was linked with");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for features in ["", "redis", "html", "warc", "internals", "redis,html,warc"] {
        let out = Command::new(&cargo)
            .args([
                "check",
                "--release",
                "--lib",
                "--offline",
                "--locked",
                "--quiet",
            ])
            .args(["--no-default-features", "--features", features])
            .arg("--manifest-path")
            .arg(root.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(root.join("target/features"))
            .env("ROCKSDB_LIB_DIR", &rocksdb)
            .env("ROCKSDB_STATIC", "1")
            .env("RUSTFLAGS", "-D warnings")
            .output()
            .expect("run cargo check");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "features [{features}] do not build:\n{stderr}"
        );
    }
}

#[test]
fn the_cli_feature_alone_pulls_no_server_crate() {
    let cli = normal_dependencies(&["--no-default-features", "--features", "cli"]);
    for needed in ["clap", "indicatif", "anyhow"] {
        assert!(cli.contains(needed), "{needed} missing from {cli:?}");
    }
    for server in ["axum", "tokio", "hyper", "hyper-util", "prometheus"] {
        assert!(!cli.contains(server), "the cli feature pulls {server}");
    }
}

#[test]
fn the_default_build_has_the_binary_and_the_server() {
    let all = normal_dependencies(&[]);
    for c in BINARY_ONLY {
        assert!(all.contains(*c), "{c} missing from the default build");
    }
}
