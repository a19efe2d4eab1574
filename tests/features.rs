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
    "axum",
    "clap",
    "clap_complete",
    "clap_mangen",
    "hyper",
    "hyper-util",
    "indicatif",
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
    for engine in ["rocksdb", "jieba-rs", "serde_json", "redis"] {
        assert!(lib.contains(engine), "{engine} missing from {lib:?}");
    }
    let pulled: Vec<&&str> = BINARY_ONLY.iter().filter(|c| lib.contains(**c)).collect();
    assert!(
        pulled.is_empty(),
        "simstore with default-features = false depends on {pulled:?}"
    );
}

#[test]
fn the_cli_feature_alone_pulls_no_server_crate() {
    let cli = normal_dependencies(&["--no-default-features", "--features", "cli"]);
    for needed in ["clap", "indicatif", "anyhow"] {
        assert!(cli.contains(needed), "{needed} missing from {cli:?}");
    }
    for server in ["axum", "tokio", "hyper", "hyper-util"] {
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
