//! The shape of the source tree, checked: `crate::` imports form no cycle (between files
//! and between folders), only the RocksDB backend names `rocksdb::` (and only the Redis one
//! `redis::`), and no source file is
//! longer than a reader can hold (unit tests aside).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lines a source file may have before its unit tests.
const MAX_LINES: usize = 600;

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The library's modules (`store::rocks::open`, ...) and their source files: not the
/// binary's `cli/` and `main.rs`, not `lib.rs`.
fn modules() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts[0] == "cli" || parts == ["main"] || parts == ["lib"] {
            continue;
        }
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        out.insert(parts.join("::"), std::fs::read_to_string(&f).unwrap());
    }
    out
}

/// The code of a file without its unit tests and without comment lines.
fn code(text: &str) -> impl Iterator<Item = &str> {
    text.split("#[cfg(test)]")
        .next()
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
}

/// The modules `text` names through `crate::` paths (the longest prefix that is a module).
fn imports(me: &str, text: &str, mods: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in code(text) {
        for (i, _) in line.match_indices("crate::") {
            let path: Vec<&str> = line[i + 7..]
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap()
                .split("::")
                .collect();
            let found = (1..=path.len())
                .rev()
                .map(|n| path[..n].join("::"))
                .find(|p| mods.contains_key(p));
            if let Some(m) = found
                && m != me
                && !me.starts_with(&format!("{m}::"))
            {
                out.insert(m);
            }
        }
    }
    out
}

/// A cycle of `graph`, if it has one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        u: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(u.to_owned(), 1);
        stack.push(u.to_owned());
        for v in graph.get(u).into_iter().flatten() {
            match state.get(v) {
                Some(1) => {
                    let start = stack.iter().position(|s| s == v).unwrap();
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(v.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(v, graph, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(u.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for u in graph.keys() {
        if !state.contains_key(u)
            && let Some(c) = visit(u, graph, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

#[test]
fn module_imports_have_no_cycle() {
    let mods = modules();
    let files: BTreeMap<String, BTreeSet<String>> = mods
        .iter()
        .map(|(m, text)| (m.clone(), imports(m, text, &mods)))
        .collect();
    assert_eq!(find_cycle(&files), None, "a cycle among modules");
    let top = |m: &str| m.split("::").next().unwrap().to_owned();
    let mut folders: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, deps) in &files {
        let entry = folders.entry(top(m)).or_default();
        entry.extend(deps.iter().map(|d| top(d)).filter(|d| *d != top(m)));
    }
    assert_eq!(find_cycle(&folders), None, "a cycle among folders");
    // The pipeline's direction: leaf types and the text stage know nothing of storage.
    for leaf in ["types", "text", "index", "input"] {
        assert!(
            !folders[leaf].contains("store"),
            "{leaf} must not depend on store: {:?}",
            folders[leaf]
        );
    }
    assert!(folders["types"].iter().all(|d| d == "error"));
}

#[test]
fn only_each_backend_names_its_engine() {
    for (engine, backend) in [("rocksdb::", "store::rocks"), ("redis::", "store::redis")] {
        for (m, text) in modules() {
            if m == backend || m.starts_with(&format!("{backend}::")) {
                continue;
            }
            assert!(
                !code(&text).any(|l| names_crate(l, engine)),
                "{m} names {engine} outside its backend"
            );
        }
    }
}

/// Whether `line` names the crate `engine` (`redis::` at the start of a path, not the
/// module `super::redis::` or `codec::redis::`).
fn names_crate(line: &str, engine: &str) -> bool {
    line.match_indices(engine).any(|(i, _)| {
        line[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'))
    })
}

#[test]
fn source_files_stay_short() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let n = text.split("#[cfg(test)]").next().unwrap().lines().count();
        assert!(
            n <= MAX_LINES,
            "{} has {n} lines before its tests (at most {MAX_LINES})",
            f.display()
        );
    }
}

/// The checker itself finds a cycle, so a passing test means something.
#[test]
fn the_cycle_finder_finds_cycles() {
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(String::from).collect()))
    .collect();
    assert!(find_cycle(&g).is_some());
    let mut dag = g.clone();
    dag.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&dag), None);
}

/// The names of the functions in the block of `text` that starts with the line `head` and
/// ends at the next `}` in column 0.
fn block_fns(text: &str, head: &str) -> BTreeSet<String> {
    let start = text
        .find(&format!("\n{head}"))
        .unwrap_or_else(|| panic!("no {head:?}"));
    let block = &text[start + 1..];
    let block = &block[..block.find("\n}\n").expect("the block ends")];
    code(block)
        .filter_map(|l| l.trim_start().strip_prefix("fn "))
        .map(|l| l.split(['(', '<']).next().unwrap().to_owned())
        .collect()
}

/// The test backend that injects failures (`store/hooked.rs`) forwards every method of the
/// storage seam, the ones with a default too: a wrapper that let a default run would
/// silently test another backend than the one it wraps.
#[test]
fn the_test_wrapper_forwards_every_method_of_the_seam() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store");
    let seam = std::fs::read_to_string(src.join("backend.rs")).unwrap();
    let hooked = std::fs::read_to_string(src.join("hooked.rs")).unwrap();
    for (required, wrapper) in [
        (
            "pub trait Backend: Send + Sync {",
            "impl Backend for Hooked {",
        ),
        (
            "pub trait BulkIngest: Sync {",
            "impl BulkIngest for Hooked {",
        ),
        (
            "pub trait Snapshot: Sync {",
            "impl Snapshot for LiveView<'_> {",
        ),
    ] {
        let want = block_fns(&seam, required);
        let have = block_fns(&hooked, wrapper);
        assert!(want.len() > 3, "{want:?}");
        let missing: Vec<&String> = want.difference(&have).collect();
        assert!(missing.is_empty(), "{wrapper} does not forward {missing:?}");
    }
}
