//! `simstore dedup NEW --against STORE [--add]` against a brute-force model: records are
//! checked in input order, and a record within k of a stored document or of a record kept
//! before it is dropped; `--add` stores the kept ones, and nothing else changes the store.

use rand::Rng;

use crate::dedup_dataset::against_both_ways;
use crate::util::{TestCommand, clustered, code, flip, rng, stderr};

/// Stored fingerprints and a new dump: copies of stored ones, near copies among the new
/// records, and new records.
fn dumps(seed: u64) -> (Vec<u64>, Vec<u64>) {
    let mut r = rng(seed);
    let stored: Vec<u64> = clustered(&mut r, 30, 2, 5);
    let mut new: Vec<u64> = Vec::new();
    for i in 0..20 {
        let d = r.random_range(0..6);
        new.push(flip(&mut r, stored[i * 3], d));
    }
    new.extend(clustered(&mut r, 10, 3, 5));
    new.extend((0..20).map(|_| r.random::<u64>()));
    for i in (1..new.len()).rev() {
        new.swap(i, r.random_range(0..=i));
    }
    (stored, new)
}

/// The model: for every new record in order, whether it is kept (no stored fingerprint and
/// no earlier kept record within `k`).
fn model(stored: &[u64], new: &[u64], k: u32) -> Vec<bool> {
    let near = |a: u64, b: u64| (a ^ b).count_ones() <= k;
    let mut kept: Vec<u64> = Vec::new();
    new.iter()
        .map(|&fp| {
            let keep = !stored.iter().chain(&kept).any(|&s| near(s, fp));
            if keep {
                kept.push(fp);
            }
            keep
        })
        .collect()
}

fn lines(prefix: &str, fps: &[u64]) -> String {
    fps.iter()
        .enumerate()
        .map(|(i, fp)| format!("{{\"id\":\"{prefix}{i}\",\"fp\":\"{fp:016x}\",\"n\":{i}}}\n"))
        .collect()
}

fn store_len(t: &TestCommand) -> u64 {
    let o = t.run(&["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["docs"].as_u64().unwrap()
}

#[test]
fn a_dump_is_deduplicated_against_the_store_and_among_itself() {
    for seed in 0..3 {
        let t = TestCommand::new();
        let (stored, new) = dumps(seed);
        t.write("old.jsonl", lines("old", &stored).as_bytes());
        t.write("new.jsonl", lines("new", &new).as_bytes());
        let o = t.run(&["init", "--k-max", "4"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(code(&t.run(&["import", "old.jsonl"])), 0);
        for k in [2u32, 4] {
            let kept = model(&stored, &new, k);
            let dropped = kept.iter().filter(|&&x| !x).count();
            assert!(dropped > 5, "duplicates in the data: {dropped}");
            let want: String = lines("new", &new)
                .lines()
                .zip(&kept)
                .filter(|(_, k)| **k)
                .map(|(l, _)| format!("{l}\n"))
                .collect();
            let db = t.db();
            let db = db.to_str().unwrap();
            let k_arg = k.to_string();
            let args = ["dedup", "new.jsonl", "--against", db, "--k", &k_arg];
            let o = t.run(&[&args[..], &["-o", "kept.jsonl", "--clusters", "c.jsonl"]].concat());
            assert_eq!(code(&o), 0, "{}", stderr(&o));
            let got = std::fs::read_to_string(t.path("kept.jsonl")).unwrap();
            assert_eq!(got, want, "seed {seed}, k {k}: {}", stderr(&o));
            assert_eq!(
                store_len(&t),
                stored.len() as u64,
                "a run without --add stores nothing"
            );
            let rows = std::fs::read_to_string(t.path("c.jsonl")).unwrap();
            assert_eq!(rows.lines().count(), kept.iter().filter(|&&x| !x).count());
            for row in rows.lines() {
                let v: serde_json::Value = serde_json::from_str(row).unwrap();
                let i: usize = v["id"].as_str().unwrap()[3..].parse().unwrap();
                let of = v["representative"].as_str().unwrap();
                let fp = match of.strip_prefix("old") {
                    Some(j) => stored[j.parse::<usize>().unwrap()],
                    None => new[of[3..].parse::<usize>().unwrap()],
                };
                assert_eq!(v["distance"], (fp ^ new[i]).count_ones(), "{row}");
                assert!((fp ^ new[i]).count_ones() <= k, "{row}");
                assert_eq!(v["stored"], of.starts_with("old"), "{row}");
            }
        }
    }
}

#[test]
fn add_stores_the_kept_records_and_the_next_run_drops_them() {
    let t = TestCommand::new();
    let (stored, new) = dumps(7);
    t.write("old.jsonl", lines("old", &stored).as_bytes());
    t.write("new.jsonl", lines("new", &new).as_bytes());
    let db = t.path("fresh.db");
    let db = db.to_str().unwrap();
    // The first dump creates the store.
    let o = t.run(&["dedup", "old.jsonl", "--against", db, "--add", "--k", "3"]);
    let kept_old = model(&[], &stored, 3).iter().filter(|&&k| k).count();
    assert!(
        stderr(&o).contains(&format!("kept {kept_old} ({kept_old} stored)")),
        "{}",
        stderr(&o)
    );
    // Said, since a mistyped path would dedup against nothing.
    assert!(
        stderr(&o).contains("did not exist: created it"),
        "{}",
        stderr(&o)
    );
    let all: Vec<u64> = stored.clone();
    let kept = model(&all, &new, 3);
    let n = kept.iter().filter(|&&k| k).count();
    let o = t.run(&add_args("new.jsonl", db, "k.jsonl"));
    assert!(
        stderr(&o).contains(&format!("kept {n} ({n} stored)")),
        "{}",
        stderr(&o)
    );
    let o = t.run_on(t.path("fresh.db").as_path(), &["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["docs"].as_u64().unwrap(), (kept_old + n) as u64);
    let o = t.run(&[
        "dedup",
        "new.jsonl",
        "--against",
        db,
        "--k",
        "3",
        "-o",
        "again.jsonl",
    ]);
    assert_eq!(
        std::fs::read_to_string(t.path("again.jsonl")).unwrap(),
        "",
        "{}",
        stderr(&o)
    );
}

/// `--add` never replaces a stored document: a kept record whose id is stored already
/// (before the run, or by an earlier record of it) is kept in the output, not stored, and
/// said so; the store still holds what the earlier dump stored.
#[test]
fn add_never_replaces_a_stored_document() {
    let t = TestCommand::new();
    let (stored, new) = dumps(11);
    t.write("old.jsonl", lines("d", &stored).as_bytes());
    let (mut r, near) = (rng(12), |a: u64, b: u64| (a ^ b).count_ones() <= 3);
    let twice = [r.random::<u64>(), r.random::<u64>()];
    let extra = twice.map(|fp| format!("{{\"id\":\"twice\",\"fp\":\"{fp:016x}\"}}\n"));
    // The new dump's ids are the old one's: `d0`, `d1`...
    t.write("new.jsonl", (lines("d", &new) + &extra.concat()).as_bytes());
    let db = t.path("db");
    let db = db.to_str().unwrap();
    let o = t.run(&["dedup", "old.jsonl", "--against", db, "--add", "--k", "3"]);
    assert!(stderr(&o).contains("kept"), "{}", stderr(&o));
    let stored_first = model(&[], &stored, 3);
    // The model: every record kept is checked against; only those whose ids are free are
    // stored.
    let mut refs: Vec<u64> = (stored.iter().zip(&stored_first))
        .filter_map(|(&fp, &k)| k.then_some(fp))
        .collect();
    let all: Vec<(String, u64)> = (new.iter().enumerate())
        .map(|(i, &fp)| (format!("d{i}"), fp))
        .chain(twice.map(|fp| ("twice".to_owned(), fp)))
        .collect();
    let mut ids: std::collections::HashSet<String> = (0..stored.len())
        .filter(|&i| stored_first[i])
        .map(|i| format!("d{i}"))
        .collect();
    let (mut kept, mut not_stored) = (String::new(), 0);
    let text = lines("d", &new) + &extra.concat();
    for ((id, fp), line) in all.iter().zip(text.lines()) {
        if refs.iter().any(|&s| near(s, *fp)) {
            continue;
        }
        kept += &format!("{line}\n");
        // Kept, and a reference for the records after it, stored or not.
        refs.push(*fp);
        not_stored += usize::from(!ids.insert(id.clone()));
    }
    assert!(not_stored > 1, "the premise: ids taken");
    let o = t.run(&add_args("new.jsonl", db, "k.jsonl"));
    let err = stderr(&o);
    assert_eq!(
        std::fs::read_to_string(t.path("k.jsonl")).unwrap(),
        kept,
        "{err}"
    );
    assert_eq!(
        err.matches("is stored already").count(),
        not_stored,
        "{err}"
    );
    assert!(
        err.contains(&format!("{not_stored} of them not stored: their ids")),
        "{err}"
    );
    assert_eq!(store_len_at(&t, db), (refs.len() - not_stored) as u64);
    // The first dump's records are all still there: under other ids, each is dropped.
    t.write("again.jsonl", lines("z", &stored).as_bytes());
    let o = t.run(&[
        "dedup",
        "again.jsonl",
        "--against",
        db,
        "--k",
        "3",
        "-o",
        "a.jsonl",
    ]);
    assert_eq!(
        std::fs::read_to_string(t.path("a.jsonl")).unwrap(),
        "",
        "{}",
        stderr(&o)
    );
}

/// With `--add`, a record kept but not stored (its id was taken) still counts as kept: a
/// later copy of it is dropped, as without `--add`.
#[test]
fn add_checks_later_records_against_those_it_did_not_store() {
    let t = TestCommand::new();
    let line = |id: &str, text: &str| serde_json::json!({"id": id, "text": text}).to_string();
    let harbour = "The harbour authority approved a new ferry terminal on the east quay, with \
                   construction starting in May and the first sailings planned for summer.";
    t.write(
        "d1.jsonl",
        format!("{}\n", line("doc0", harbour)).as_bytes(),
    );
    let o = t.run(&[
        "dedup",
        "d1.jsonl",
        "--against",
        "db",
        "--add",
        "-o",
        "k1.jsonl",
    ]);
    assert_eq!(code(&o), 0, "nothing dropped, all written: {}", stderr(&o));
    let frog = "Scientists reported a new species of frog in the rainforest, its bright colours \
                warning predators of the poison in its skin, and a survey is planned.";
    let (taken, fresh) = (line("doc0", frog), line("fresh", frog));
    t.write("d2.jsonl", format!("{taken}\n{fresh}\n").as_bytes());
    let o = t.run(&[
        "dedup",
        "d2.jsonl",
        "--against",
        "db",
        "--add",
        "-o",
        "k2.jsonl",
    ]);
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(t.path("k2.jsonl")).unwrap(),
        format!("{taken}\n")
    );
    assert!(err.contains("1 of records kept"), "{err}");
    assert_eq!(store_len_at(&t, t.path("db").to_str().unwrap()), 1);
}

/// With `--add`, records without ids are checked as the others (against the store, the
/// records the run stored and those it kept without storing), as the model says, but never
/// stored: a line number is no key.
#[test]
fn add_checks_records_without_ids_but_never_stores_them() {
    for seed in 20..23 {
        let t = TestCommand::new();
        let (stored, new) = dumps(seed);
        t.write("s.jsonl", lines("s", &stored).as_bytes());
        assert_eq!(code(&t.run(&["import", "s.jsonl"])), 0);
        let mut r = rng(seed);
        let unnamed: Vec<bool> = new.iter().map(|_| r.random_bool(0.4)).collect();
        let dump: String = (new.iter().zip(&unnamed).enumerate())
            .map(|(i, (fp, &no_id))| match no_id {
                true => format!("{{\"fp\":\"{fp:016x}\",\"n\":{i}}}\n"),
                false => format!("{{\"id\":\"n{i}\",\"fp\":\"{fp:016x}\",\"n\":{i}}}\n"),
            })
            .collect();
        t.write("n.jsonl", dump.as_bytes());
        let db = t.db();
        let o = t.run(&add_args("n.jsonl", db.to_str().unwrap(), "kept.jsonl"));
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let keep = model(&stored, &new, 3);
        let want: String = (dump.lines().zip(&keep))
            .filter(|&(_, &k)| k)
            .map(|(l, _)| format!("{l}\n"))
            .collect();
        assert_eq!(std::fs::read_to_string(t.path("kept.jsonl")).unwrap(), want);
        let named_kept = keep
            .iter()
            .zip(&unnamed)
            .filter(|&(&k, &u)| k && !u)
            .count();
        let unnamed_kept = keep.iter().zip(&unnamed).filter(|&(&k, &u)| k && u).count();
        assert!(unnamed_kept > 0, "seed {seed}: the case is not tried");
        assert_eq!(store_len(&t), (stored.len() + named_kept) as u64);
        let says = format!("{unnamed_kept} of them not stored: they have no id");
        assert!(stderr(&o).contains(&says), "{}", stderr(&o));
    }
}

/// A run killed before it wrote its output stored what it kept; run again, those records
/// are the stored documents of their own ids: dropped, and said so; with `--resume`,
/// written out.
#[test]
fn resume_writes_out_what_a_killed_run_stored() {
    let t = TestCommand::new();
    let (stored, _) = dumps(13);
    t.write("d.jsonl", lines("d", &stored).as_bytes());
    let db = t.path("db");
    let db = db.to_str().unwrap();
    // The killed run, as far as the store sees it: everything kept is stored.
    let o = t.run(&["dedup", "d.jsonl", "--against", db, "--add", "--k", "3"]);
    assert!(stderr(&o).contains("kept"), "{}", stderr(&o));
    let kept: String = (lines("d", &stored).lines().zip(model(&[], &stored, 3)))
        .filter(|&(_, k)| k)
        .map(|(l, _)| format!("{l}\n"))
        .collect();
    let o = t.run(&add_args("d.jsonl", db, "again.jsonl"));
    assert_eq!(std::fs::read_to_string(t.path("again.jsonl")).unwrap(), "");
    let n = kept.lines().count();
    let note = format!("note: {n} records dropped as the stored document of their own id");
    assert!(stderr(&o).contains(&note), "{}", stderr(&o));
    let mut args = add_args("d.jsonl", db, "resumed.jsonl").to_vec();
    args.push("--resume");
    let o = t.run(&args);
    assert_eq!(
        std::fs::read_to_string(t.path("resumed.jsonl")).unwrap(),
        kept,
        "{}",
        stderr(&o)
    );
    let summary = format!("kept {n} (0 stored), {n} of them stored by the run taken up");
    assert!(stderr(&o).contains(&summary), "{}", stderr(&o));
    assert_eq!(store_len_at(&t, db), n as u64);
}

/// `dedup FILE --against DB --add --k 3 -o OUT`.
fn add_args<'a>(file: &'a str, db: &'a str, out: &'a str) -> [&'a str; 9] {
    [
        "dedup",
        file,
        "--against",
        db,
        "--add",
        "--k",
        "3",
        "-o",
        out,
    ]
}

fn store_len_at(t: &TestCommand, db: &str) -> u64 {
    let o = t.run_on(std::path::Path::new(db), &["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["docs"].as_u64().unwrap()
}

/// `--keep longest|newest:n|oldest:n` with `--against`: the model checks the records in the
/// policy's order (ties in input order) against the store and the records kept before it,
/// and the kept lines come out in input order, with and without `--add`.
#[test]
fn a_ranking_keep_policy_checks_the_records_in_its_order() {
    for seed in 0..2 {
        let (stored, new) = dumps(seed);
        let mut r = rng(seed + 100);
        let ns: Vec<u32> = new.iter().map(|_| r.random_range(0..20)).collect();
        let lens: Vec<usize> = new.iter().map(|_| r.random_range(1..30)).collect();
        let new_lines: Vec<String> = (0..new.len())
            .map(|i| {
                let text = "w ".repeat(lens[i]);
                let (fp, n) = (new[i], ns[i]);
                format!(
                    "{{\"id\":\"new{i}\",\"fp\":\"{fp:016x}\",\"n\":{n},\"text\":\"{text}\"}}\n"
                )
            })
            .collect();
        let t = TestCommand::new();
        t.write("old.jsonl", lines("old", &stored).as_bytes());
        t.write("new.jsonl", new_lines.concat().as_bytes());
        for (policy, key) in [
            (
                "newest:n",
                ns.iter().map(|&n| -i64::from(n)).collect::<Vec<_>>(),
            ),
            ("oldest:n", ns.iter().map(|&n| i64::from(n)).collect()),
            ("longest", lens.iter().map(|&l| -(l as i64 * 2)).collect()),
        ] {
            let mut order: Vec<usize> = (0..new.len()).collect();
            order.sort_by_key(|&i| key[i]);
            let (mut kept_fps, mut kept) = (Vec::new(), vec![false; new.len()]);
            for i in order {
                let near = |s: &u64| (s ^ new[i]).count_ones() <= 3;
                if !stored.iter().chain(&kept_fps).any(near) {
                    kept_fps.push(new[i]);
                    kept[i] = true;
                }
            }
            assert_ne!(kept, model(&stored, &new, 3), "{policy}: the order matters");
            let want: String = (0..new.len())
                .filter(|&i| kept[i])
                .map(|i| new_lines[i].as_str())
                .collect();
            for add in [false, true] {
                let _ = std::fs::remove_dir_all(t.db());
                assert_eq!(code(&t.run(&["init", "--k-max", "4"])), 0);
                assert_eq!(code(&t.run(&["import", "old.jsonl"])), 0);
                let db = t.db();
                let args = [
                    "dedup",
                    "new.jsonl",
                    "--against",
                    db.to_str().unwrap(),
                    "--k",
                    "3",
                ];
                let extra = [
                    &["--keep", policy, "-o", "kept.jsonl"][..],
                    if add { &["--add"] } else { &[] },
                ]
                .concat();
                let o = t.run(&[&args[..], &extra].concat());
                assert_eq!(code(&o), 0, "{}", stderr(&o));
                let got = std::fs::read_to_string(t.path("kept.jsonl")).unwrap();
                assert_eq!(got, want, "seed {seed}, {policy}, add {add}");
                let added = if add { kept_fps.len() } else { 0 };
                assert_eq!(store_len(&t), (stored.len() + added) as u64);
            }
        }
    }
}

#[test]
fn what_a_dedup_against_a_store_refuses() {
    let t = TestCommand::new();
    t.write(
        "a.jsonl",
        b"{\"text\":\"no id here, but enough words to fingerprint\"}\n",
    );
    let db = t.db();
    let db = db.to_str().unwrap();
    assert_eq!(code(&t.run(&["init"])), 0);
    for (args, says) in [
        (vec!["--keep", "none"], "does not apply with --against"),
        (vec!["--transitive"], "do not apply with --against"),
        (
            vec!["--report", "r.html"],
            "--report does not apply with --against",
        ),
        (vec!["--add", "--k", "99"], "99"),
    ] {
        let o = t.run(&[&["dedup", "a.jsonl", "--against", db][..], &args].concat());
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    // With --add a record without an id is checked and kept, but not stored, and named.
    let o = t.run(&["dedup", "a.jsonl", "--against", db, "--add"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("a.jsonl:1: no id"), "{}", stderr(&o));
    assert!(stderr(&o).contains("kept 1 (0 stored)"), "{}", stderr(&o));
    assert_eq!(store_len(&t), 0);
    let o = t.run(&[
        "dedup",
        "a.jsonl",
        "--against",
        t.path("none.db").to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

/// A number is an id with `--add` as in `import`: the records are stored under it, and a
/// second run drops them as what the store holds.
#[test]
fn add_takes_numbers_as_ids() {
    let t = TestCommand::new();
    t.write(
        "n.jsonl",
        b"{\"id\":7,\"text\":\"the harbour opened a new crane and workers say it lifts containers faster\"}\n\
          {\"id\":8,\"text\":\"a different page about compilers, register allocation and scheduling\"}\n",
    );
    let db = t.db();
    let db = db.to_str().unwrap();
    assert_eq!(code(&t.run(&["init"])), 0);
    // Exit 0: no duplicate found, every record stored.
    let o = t.run(&["dedup", "n.jsonl", "--against", db, "--add"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("kept 2 (2 stored)"), "{}", stderr(&o));
    assert_eq!(store_len_at(&t, db), 2);
    for id in ["7", "8"] {
        assert_eq!(code(&t.run(&["get", id])), 0, "{id} is stored");
    }
    let o = t.run(&["dedup", "n.jsonl", "--against", db, "--add"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("kept 0"), "{}", stderr(&o));
}

/// Random texts of `WORDS`, each distinct.
fn texts(seed: u64, n: usize) -> Vec<String> {
    let mut r = rng(seed);
    (0..n)
        .map(|_| {
            let n = r.random_range(12..30);
            let words =
                (0..n).map(|_| crate::util::WORDS[r.random_range(0..crate::util::WORDS.len())]);
            words.collect::<Vec<_>>().join(" ")
        })
        .collect()
}

/// Two shards of one corpus: shard `b` holds, at the same positions as in `a`, a near copy
/// (1 bit off) of each of `a`'s fingerprint records and an exact copy of each of its text
/// records, and records of its own.
fn shards(seed: u64, n: usize) -> (String, String) {
    let mut r = rng(seed);
    let texts = texts(seed, n / 4);
    let (mut a, mut b) = (String::new(), String::new());
    for i in 0..n {
        let own: u64 = r.random();
        if i % 4 == 0 {
            let t = &texts[i / 4];
            a += &format!("{{\"id\":\"a{i}\",\"text\":\"{t}\"}}\n");
            b += &format!("{{\"id\":\"b{i}\",\"text\":\"{t}\"}}\n");
        } else {
            let fp: u64 = r.random();
            let near = flip(&mut r, fp, 1);
            a += &format!("{{\"id\":\"a{i}\",\"fp\":\"{fp:016x}\"}}\n");
            b += &format!("{{\"id\":\"b{i}\",\"fp\":\"{near:016x}\"}}\n");
        }
        b += &format!("{{\"id\":\"o{i}\",\"fp\":\"{own:016x}\"}}\n");
    }
    (a, b)
}

/// Every document of the store at `url`: id and fingerprint.
fn stored_docs(url: &str) -> std::collections::HashMap<String, u64> {
    let store = simstore::StoreBuilder::new(url).open().unwrap();
    let mut docs = std::collections::HashMap::new();
    store
        .for_each_doc(|d| {
            docs.insert(d.id, d.fp);
            Ok(())
        })
        .unwrap();
    docs
}

/// Pairs of stored documents within `k` (by brute force).
fn near_pairs(docs: &std::collections::HashMap<String, u64>, k: u32) -> usize {
    let fps: Vec<u64> = docs.values().copied().collect();
    (0..fps.len())
        .flat_map(|i| (i + 1..fps.len()).map(move |j| (i, j)))
        .filter(|&(i, j)| (fps[i] ^ fps[j]).count_ones() <= k)
        .count()
}

/// Two worker processes dedup the two shards of a corpus against one store on a real Redis
/// Cluster at once (`--add`), beside one process deduplicating both shards in turn. The
/// guarantee: a record is dropped only for a document that is stored and within k of it
/// (no original is lost), and of exact copies (same content) exactly one is stored; near
/// copies that two workers check at the same moment may both be stored — the only way the
/// workers' store differs from the single run's, counted and printed here.
#[test]
fn workers_on_a_cluster_drop_only_what_a_stored_document_duplicates() {
    let Some(cluster) = crate::cluster_harness::Cluster::start() else {
        return;
    };
    const N: usize = 1200;
    let t = TestCommand::new();
    let (a, b) = shards(5, N);
    t.write("a.jsonl", a.as_bytes());
    t.write("b.jsonl", b.as_bytes());
    let (one, two) = (cluster.url("single"), cluster.url("workers"));
    for url in [&one, &two] {
        let o = t.run_on(
            url.as_ref(),
            &["init", "--k-max", "3", "--expected-docs", "10000"],
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    let o = t.run(&[
        "dedup",
        "a.jsonl",
        "b.jsonl",
        "--against",
        &one,
        "--add",
        "--k",
        "3",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let single = stored_docs(&one);
    assert_eq!(
        near_pairs(&single, 3),
        0,
        "one process stores no two near copies"
    );
    assert_eq!(single.len(), 2 * N, "a's records and b's own");
    let workers: Vec<_> = ["a", "b"]
        .iter()
        .map(|s| {
            let args = [
                "dedup",
                &format!("{s}.jsonl"),
                "--against",
                &two,
                "--add",
                "--k",
                "3",
            ];
            let clusters = format!("{s}-clusters.jsonl");
            t.command(&[&args[..], &["--clusters", &clusters]].concat())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for w in workers {
        let o = w.wait_with_output().unwrap();
        assert!(
            o.status.code().unwrap() <= 1,
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let stored = stored_docs(&two);
    for s in ["a", "b"] {
        let rows = std::fs::read_to_string(t.path(&format!("{s}-clusters.jsonl"))).unwrap();
        for row in rows.lines() {
            let v: serde_json::Value = serde_json::from_str(row).unwrap();
            let of = v["representative"].as_str().unwrap();
            assert!(
                stored.contains_key(of),
                "dropped for a document not stored: {row}"
            );
            assert!(v["distance"].as_u64().unwrap() <= 3, "{row}");
            assert!(!stored.contains_key(v["id"].as_str().unwrap()), "{row}");
        }
    }
    for i in (0..N).step_by(4) {
        let copies = [format!("a{i}"), format!("b{i}")];
        let n = copies.iter().filter(|id| stored.contains_key(*id)).count();
        assert_eq!(n, 1, "exact copies {copies:?}: {n} stored");
    }
    let raced = near_pairs(&stored, 3);
    assert_eq!(
        stored.len(),
        single.len() + raced,
        "the workers' store is the single run's plus raced near copies"
    );
    eprintln!(
        "two workers: {} stored, {raced} near copies of {} checked at once both stored",
        stored.len(),
        N - N / 4
    );
}

/// `import --dedup --output KEPT` writes the records it stores, the same lines as
/// `dedup --against DB --add --output KEPT` keeps (and stores).
#[test]
fn import_dedup_output_writes_what_dedup_against_add_keeps() {
    let t = TestCommand::new();
    let (stored, new) = dumps(11);
    t.write("old.jsonl", lines("old", &stored).as_bytes());
    t.write("new.jsonl", lines("new", &new).as_bytes());
    let (a, b) = (t.path("a.db"), t.path("b.db"));
    for db in [&a, &b] {
        assert_eq!(code(&t.run_on(db, &["init", "--k-max", "4"])), 0);
        assert_eq!(code(&t.run_on(db, &["import", "old.jsonl"])), 0);
    }
    let o = t.run_on(
        &a,
        &[
            "import",
            "--dedup",
            "--k",
            "3",
            "new.jsonl",
            "-o",
            "imported.jsonl",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let b_url = b.to_str().unwrap();
    let args = [
        "dedup",
        "new.jsonl",
        "--against",
        b_url,
        "--add",
        "--k",
        "3",
        "-o",
        "deduped.jsonl",
    ];
    assert_eq!(code(&t.run(&args)), 0);
    let imported = std::fs::read_to_string(t.path("imported.jsonl")).unwrap();
    let want: String = lines("new", &new)
        .lines()
        .zip(model(&stored, &new, 3))
        .filter(|(_, k)| *k)
        .map(|(l, _)| format!("{l}\n"))
        .collect();
    assert_eq!(imported, want, "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(t.path("deduped.jsonl")).unwrap(),
        want
    );
    // What --output refuses before reading: stdin, and an input as the output.
    let o = t.run_on(&a, &["import", "--dedup", "-", "-o", "x.jsonl"]);
    assert!(
        code(&o) == 2 && stderr(&o).contains("stdin cannot be read twice"),
        "{}",
        stderr(&o)
    );
    let o = t.run_on(&a, &["import", "--dedup", "new.jsonl", "-o", "new.jsonl"]);
    assert!(
        code(&o) == 2 && stderr(&o).contains("also an input"),
        "{}",
        stderr(&o)
    );
    let o = t.run_on(&a, &["import", "new.jsonl", "-o", "x.jsonl"]);
    assert_eq!(code(&o), 2, "--output needs --dedup: {}", stderr(&o));
}

/// `rows` (id, fp as hex, n) as a Parquet file at `path`.
fn write_fp_parquet(path: &std::path::Path, prefix: &str, fps: &[(usize, u64)]) {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            fps.iter().map(|(i, _)| format!("{prefix}{i}")),
        )),
        Arc::new(StringArray::from_iter_values(
            fps.iter().map(|(_, fp)| format!("{fp:016x}")),
        )),
        Arc::new(Int64Array::from_iter_values(
            fps.iter().map(|&(i, _)| i as i64),
        )),
    ];
    let batch = RecordBatch::try_from_iter(["id", "fp", "n"].into_iter().zip(cols)).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// Parquet shards deduplicated against a store keep the rows the model keeps, written as
/// Parquet with their columns; with `--add` the store gains exactly those.
#[test]
fn parquet_shards_are_deduplicated_against_the_store() {
    let t = TestCommand::new();
    let (stored, new) = dumps(11);
    t.write("old.jsonl", lines("old", &stored).as_bytes());
    assert_eq!(code(&t.run(&["init", "--k-max", "4"])), 0);
    assert_eq!(code(&t.run(&["import", "old.jsonl"])), 0);
    let numbered: Vec<(usize, u64)> = new.iter().copied().enumerate().collect();
    std::fs::create_dir(t.path("in")).unwrap();
    write_fp_parquet(&t.path("in/a.parquet"), "new", &numbered[..25]);
    write_fp_parquet(&t.path("in/b.parquet"), "new", &numbered[25..]);
    let kept = model(&stored, &new, 3);
    let want: Vec<String> = (0..new.len())
        .filter(|&i| kept[i])
        .map(|i| format!("new{i}"))
        .collect();
    assert!(want.len() < new.len() - 5, "duplicates in the data");
    let db = t.db();
    let db = db.to_str().unwrap();
    let against = |out: &str, add: &[&str]| {
        let args = ["dedup", "in", "--against", db, "--k", "3", "-o", out];
        t.run(&[&args[..], add].concat())
    };
    // Read only, the same records kept, written as JSON lines.
    let o = against("kept.jsonl", &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(t.path("kept.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let line_ids: Vec<&str> = lines.iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(line_ids, want, "{}", stderr(&o));
    assert_eq!(store_len(&t), stored.len() as u64, "nothing added");
    let o = against("kept", &["--add"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut shards: Vec<_> = std::fs::read_dir(t.path("kept"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    shards.sort();
    let mut ids = Vec::new();
    for shard in shards {
        let file = std::fs::File::open(shard).unwrap();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            assert_eq!(batch.num_columns(), 3, "every column kept");
            let col = batch.column(0);
            let col = col
                .as_any()
                .downcast_ref::<arrow_array::StringArray>()
                .unwrap();
            ids.extend(col.iter().map(|v| v.unwrap().to_owned()));
        }
    }
    assert_eq!(ids, want, "{}", stderr(&o));
    assert_eq!(store_len(&t), (stored.len() + want.len()) as u64);
}

/// Product listings of one template, other figures in each: the store's own rule (a
/// sketch threshold of 0.3) takes them for one another.
fn listings() -> Vec<(String, String)> {
    let colors = ["silver", "black", "blue", "red"];
    (0..12)
        .map(|i| {
            let text = format!(
                "Laptop Model X{}. Screen size: {} inches. RAM: {} GB. Storage: {} GB SSD. \
                 Battery life up to {} hours. Color: {}. Free shipping on orders over 50 \
                 dollars. 30-day return policy. Add to cart. Compare with similar products.",
                i * 7,
                13 + i % 5,
                4 * (1 + i % 4),
                128 * (1 + i % 3),
                8 + i % 6,
                colors[i % 4]
            );
            (format!("prod{i}"), text)
        })
        .collect()
}

/// Records checked against a store are judged as a dataset's: records that differ only
/// in their numbers are no exact duplicates, and records of one template with other
/// figures, which the store's own 0.3 takes for one another (its queries find them), are
/// kept by `dedup --against`, read only or with `--add`. Their exact copies are dropped.
#[test]
fn records_of_other_numbers_or_one_template_are_no_copies_of_each_other() {
    let t = TestCommand::new();
    let mut records = listings();
    records.push(("code-a".into(), "Your verification code is 482913".into()));
    records.push(("code-b".into(), "Your verification code is 100277".into()));
    records.push(("prod0-copy".into(), records[0].1.clone()));
    records.push((
        "code-a-copy".into(),
        "Your verification code is 482913".into(),
    ));
    let line = |(id, text): &(String, String)| serde_json::json!({"id": id, "text": text});
    let jsonl: String = records.iter().map(|r| format!("{}\n", line(r))).collect();
    t.write("new.jsonl", jsonl.as_bytes());
    let want: Vec<String> = records[..14].iter().map(|r| r.0.clone()).collect();
    against_both_ways(&t, "new.jsonl", &want);
    // The store's own queries take the listings for one another.
    let o = t.run(&["query", "--batch", "new.jsonl", "--exclude-self", "--json"]);
    let found = String::from_utf8_lossy(&o.stdout);
    let prod0 = found.lines().next().unwrap();
    assert!(prod0.contains("\"id\":\"prod"), "{prod0}");
}

/// `import --dedup --output` never stores a record over a stored id: a record reusing an
/// earlier record's id replaced it, so the store forgot that text and kept its next copy
/// too (a trial's x(A), x(B), y(A) wrote A twice). Now it writes what `dedup --against
/// --add` writes: y(A) dropped as x's copy, x(B) written out but not stored.
#[test]
fn import_dedup_output_never_stores_over_a_stored_id() {
    let t = TestCommand::new();
    let [a, b] = [0, 1].map(|seed| texts(40 + seed, 1).remove(0));
    let line =
        |id: &str, text: &str| serde_json::json!({"id": id, "text": text}).to_string() + "\n";
    let input = [line("x", &a), line("x", &b), line("y", &a)].concat();
    t.write("in.jsonl", input.as_bytes());
    let (imported, deduped) = (t.path("i.db"), t.path("d.db"));
    let o = t.run_on(
        &imported,
        &["import", "--dedup", "in.jsonl", "-o", "i.jsonl"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("id is stored already"),
        "{}",
        stderr(&o)
    );
    let o = t.run(&add_args("in.jsonl", deduped.to_str().unwrap(), "d.jsonl"));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let want = [line("x", &a), line("x", &b)].concat();
    assert_eq!(std::fs::read_to_string(t.path("i.jsonl")).unwrap(), want);
    assert_eq!(std::fs::read_to_string(t.path("d.jsonl")).unwrap(), want);
    // The store still holds x as A: A again under a new id is a duplicate of it.
    t.write("again.jsonl", line("z", &a).as_bytes());
    let o = t.run_on(&imported, &["import", "--dedup", "again.jsonl"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("\"duplicate_of\":\"x\""),
        "{}",
        stderr(&o)
    );
}
