//! Dataset dedup (`simstore dedup FILE --output KEPT`) against a brute-force leader
//! clustering: every pair within k (and, with `--verify T`, whose sketches are at least T
//! similar) is a pair of duplicates, and each record in input order joins the nearest
//! earlier kept record it duplicates or is kept itself; with `--transitive`, against the
//! brute-force keep-first of the connected components (a chain is one cluster). The kept
//! lines must be the input lines, byte for byte.

use std::io::{Read, Write};

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use rand::Rng;
use simstore::Fingerprinter;
use simstore::index::cluster::UnionFind;
use simstore::index::near::{EXACT_MARGIN, is_partial};

use crate::dedup_parquet::jsonl_ids;
use crate::util::{TestCommand, brute_leaders, clustered, code, flip, gen_text, rng, stderr};

/// The brute-force leader clustering: the indices of the records kept, given the distance
/// of records `i < j` when they count as a pair.
fn keep_leaders(n: usize, pair: impl Fn(usize, usize) -> Option<u32>) -> Vec<usize> {
    let leader = brute_leaders(n, pair);
    (0..n).filter(|&i| leader[i] == i).collect()
}

/// "Distance ≤ k" of `fps[i]` and `fps[j]`, as a pair's distance.
fn within(fps: &[u64], k: u32) -> impl Fn(usize, usize) -> Option<u32> + '_ {
    move |i, j| {
        let d = (fps[i] ^ fps[j]).count_ones();
        (d <= k).then_some(d)
    }
}

/// The brute-force keep-first of connected components (`--transitive`): the indices of the
/// records kept, given whether records `i < j` count as a pair.
fn keep_first(n: usize, pair: impl Fn(usize, usize) -> bool) -> Vec<usize> {
    let mut uf = UnionFind::new(n).unwrap();
    for i in 0..n {
        for j in i + 1..n {
            if pair(i, j) {
                uf.union(i as u32, j as u32);
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    (0..n).filter(|&i| seen.insert(uf.find(i as u32))).collect()
}

/// Fingerprints in clusters, chains (each member within 2 of the next, not of the first)
/// and singletons, shuffled.
fn fingerprints(seed: u64) -> Vec<u64> {
    let mut r = rng(seed);
    let mut fps = clustered(&mut r, 12, 4, 4);
    for _ in 0..4 {
        let mut fp: u64 = r.random();
        for _ in 0..4 {
            fps.push(fp);
            fp = flip(&mut r, fp, 2);
        }
    }
    fps.extend((0..40).map(|_| r.random::<u64>()));
    fps.extend([0, 0, 1]);
    for i in (1..fps.len()).rev() {
        fps.swap(i, r.random_range(0..=i));
    }
    fps
}

/// A JSONL line for record `i` with fingerprint `fp`, written the way no serializer would
/// (spacing, key order, escapes, a float, nested data), so that any re-encoding shows.
fn odd_line(i: usize, fp: u64) -> String {
    match i % 4 {
        0 => format!(r#"{{"id":"r{i}","fp":"{fp:016x}"}}"#),
        1 => format!(
            r#"{{ "z": 1.50e3,  "fp" : "{fp:016x}", "id": "r{i}", "note": "caf\u00e9 \"q\"" }}"#
        ),
        2 => format!(r#"{{"meta":{{"b":[1, 2,3],"a":null}},"id":"r{i}","fp":"{fp:016X}"}}"#),
        _ => format!("{{\"id\":\"r{i}\",\"fp\":\"{fp:016x}\",\"text\":\"été 北京\"}}\t"),
    }
}

fn read_gz(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    MultiGzDecoder::new(bytes).read_to_end(&mut out).unwrap();
    out
}

pub(crate) fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn dataset_dedup_keeps_the_leaders_byte_for_byte() {
    let t = TestCommand::new();
    for seed in 0..3 {
        let fps = fingerprints(seed);
        let lines: Vec<String> = fps
            .iter()
            .enumerate()
            .map(|(i, &f)| odd_line(i, f))
            .collect();
        // A blank line and CRLF endings: not records, and not part of one.
        let mut input = lines[..3].join("\r\n") + "\r\n\n";
        input += &lines[3..].join("\n");
        t.write("in.jsonl", input.as_bytes());
        for (k, transitive) in (0..=4u32).flat_map(|k| [(k, false), (k, true)]) {
            let k_arg = k.to_string();
            let mut args = vec!["dedup", "in.jsonl", "--k", &k_arg, "-o", "kept.jsonl"];
            let kept = match transitive {
                true => {
                    args.push("--transitive");
                    keep_first(fps.len(), |i, j| within(&fps, k)(i, j).is_some())
                }
                false => keep_leaders(fps.len(), within(&fps, k)),
            };
            let o = t.run(&args);
            let clustered = fps.len() - kept.len();
            assert!(
                k < 2 || clustered > 15,
                "clusters in the data: {clustered} dropped"
            );
            let want: String = kept.iter().map(|&i| format!("{}\n", lines[i])).collect();
            let got = std::fs::read(t.path("kept.jsonl")).unwrap();
            assert_eq!(
                String::from_utf8(got).unwrap(),
                want,
                "seed {seed}, {args:?}"
            );
            let dropped = fps.len() - kept.len();
            assert_eq!(code(&o), if dropped > 0 { 0 } else { 1 }, "{}", stderr(&o));
            assert!(
                stderr(&o).contains(&format!("kept {}, dropped {dropped}", kept.len())),
                "{}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn gzip_in_and_out_and_plain_out() {
    let t = TestCommand::new();
    let fps = fingerprints(7);
    let lines: Vec<String> = fps
        .iter()
        .enumerate()
        .map(|(i, &f)| odd_line(i, f))
        .collect();
    let plain = lines.join("\n") + "\n";
    t.write("in.jsonl.gz", &gz(plain.as_bytes()));
    // The default rule: fingerprints only (no sketches), so "distance ≤ 3".
    let kept = keep_leaders(fps.len(), within(&fps, 3));
    let want: String = kept.iter().map(|&i| format!("{}\n", lines[i])).collect();
    let o = t.run(&["dedup", "in.jsonl.gz", "-o", "kept.jsonl.gz"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = std::fs::read(t.path("kept.jsonl.gz")).unwrap();
    assert_eq!(
        &out[..2],
        [0x1f, 0x8b],
        "gzip'd because the name ends in .gz"
    );
    assert_eq!(String::from_utf8(read_gz(&out)).unwrap(), want);
    let o = t.run(&["dedup", "in.jsonl.gz", "--output", "kept.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(t.path("kept.jsonl")).unwrap(), want);
}

#[test]
fn text_and_id_fields_ids_optional_or_numeric() {
    let t = TestCommand::new();
    let a = "the river market opened early today and the students went to see the lanterns";
    let b = "a completely different story about football coaches and the winter season results";
    let lines = [
        format!(r#"{{"url":"u1","content":"{a}","title":"not read"}}"#),
        format!(r#"{{"content":"{b}","extra":{{"k":[1,2]}}}}"#),
        String::new(),
        format!(r#"{{"url":42,"content":"{a}"}}"#),
        format!(r#"{{"url":null,"content":"{b}","fp":"not a fingerprint: not read"}}"#),
        format!(r#"{{"url":"u5","body":"{a}"}}"#),
    ];
    t.write("c.jsonl", (lines.join("\n") + "\n").as_bytes());
    let fields = ["--text-field", "content", "--id-field", "url"];
    let o = t.run(&[&["dedup", "c.jsonl", "--json"][..], &fields].concat());
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    // Ids: "u1", the line number 2 (no url), 42 as written, line 5 (url null).
    assert_eq!(
        out,
        "{\"cluster\":0,\"ids\":[\"2\",\"5\"]}\n{\"cluster\":1,\"ids\":[\"42\",\"u1\"]}\n"
    );
    // The record without the text field fails, saying which field and option.
    assert!(
        stderr(&o).contains("c.jsonl:6: field \"content\" (--text-field) is missing"),
        "{}",
        stderr(&o)
    );
    assert_eq!(code(&o), 1, "a record failed");
    // Written out, it is kept as it is: a dedup drops a record only for a duplicate.
    let o = t.run(&[&["dedup", "c.jsonl", "-o", "kept.jsonl"][..], &fields].concat());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let kept = std::fs::read_to_string(t.path("kept.jsonl")).unwrap();
    assert_eq!(kept, format!("{}\n{}\n{}\n", lines[0], lines[1], lines[5]));
    let o = t.run(&[
        "dedup",
        "c.jsonl",
        "--text-field",
        "content",
        "--id-field",
        "extra",
    ]);
    assert!(
        stderr(&o).contains("field \"extra\" (--id-field) must be a string or a number"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn verify_unlinks_pairs_whose_texts_differ() {
    let t = TestCommand::new();
    let mut r = rng(3);
    let mut recent = Vec::new();
    let texts: Vec<String> = (0..120).map(|_| gen_text(&mut r, &mut recent)).collect();
    let f = Fingerprinter::new();
    let analyses: Vec<_> = texts.iter().map(|x| f.analyze(None, x).unwrap()).collect();
    let lines: Vec<String> = texts
        .iter()
        .enumerate()
        .map(|(i, x)| serde_json::json!({"id": i, "text": x, "n": i}).to_string())
        .collect();
    t.write("v.jsonl", (lines.join("\n") + "\n").as_bytes());
    let (k, threshold) = (8u32, 0.7);
    let near = |i: usize, j: usize| {
        let d = (analyses[i].fingerprint.0 ^ analyses[j].fingerprint.0).count_ones();
        (d <= k).then_some(d)
    };
    // A pair whose estimate is near the threshold, or above it for a record the cleaner
    // left much of out, is decided by the texts' shingles, cleaned and whole.
    let partial = |i: usize| is_partial(&f, &analyses[i], None);
    let shingles: Vec<_> = (texts.iter().enumerate())
        .map(|(i, x)| f.shingle_sets(None, x, partial(i).then_some("")))
        .collect();
    let similar = |i: usize, j: usize| match (&analyses[i].sketch, &analyses[j].sketch) {
        (Some(x), Some(y))
            if (x.similarity(y) - threshold).abs() <= EXACT_MARGIN
                || (x.similarity(y) > threshold && (partial(i) || partial(j))) =>
        {
            shingles[i].similarity(&shingles[j]) >= threshold
        }
        (Some(x), Some(y)) => x.similarity(y) >= threshold,
        _ => false,
    };
    let plain = keep_leaders(texts.len(), near);
    let verified = keep_leaders(texts.len(), |i, j| near(i, j).filter(|_| similar(i, j)));
    assert!(
        verified.len() > plain.len(),
        "--verify must matter on this data"
    );
    assert!(verified.len() < texts.len(), "and leave some pairs");
    for (want, extra) in [(plain, vec![]), (verified, vec!["--verify", "0.7"])] {
        let args = [
            &["dedup", "v.jsonl", "--k", "8", "-o", "kept.jsonl"][..],
            &extra,
        ]
        .concat();
        let o = t.run(&args);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let want: String = want.iter().map(|&i| format!("{}\n", lines[i])).collect();
        assert_eq!(std::fs::read_to_string(t.path("kept.jsonl")).unwrap(), want);
    }
}

/// A source file of short lines under one long licence line: the cleaner keeps the licence
/// line alone (the code lines are a "footer" of short lines), so every such file has one
/// sketch. A dataset dedup decides their pairs by the whole texts: two different files are
/// both kept; a copy of one with a line changed is still dropped.
#[test]
fn records_the_cleaner_left_much_of_out_are_compared_whole() {
    let licence = "# Licensed under the Apache License, Version 2.0; you may not use this file \
                   except in compliance with the License, which you may obtain from the \
                   project's website, and the software is distributed on an as is basis.";
    let source = |name: &str, body: &[&str]| {
        let mut lines = vec![licence.to_owned(), format!("def {name}(values, limit):")];
        lines.extend(body.iter().map(|l| format!("    {l}")));
        lines.join("\n")
    };
    let a = source(
        "total",
        &[
            "acc = 0",
            "for v in values:",
            "    if v > limit:",
            "        break",
            "    acc += v",
            "return acc",
        ],
    );
    let b = source(
        "render",
        &[
            "out = []",
            "for row in values[:limit]:",
            "    out += [str(row)]",
            "sep = ', '",
            "text = sep.join(out) or ''",
            "return text",
        ],
    );
    let a_copy = a.replace("acc += v", "acc = acc + v");
    let f = Fingerprinter::new();
    let (fa, fb) = (f.analyze(None, &a).unwrap(), f.analyze(None, &b).unwrap());
    // The premise: one sketch for both files, most of each left out by the cleaner.
    assert_eq!(fa.sketch, fb.sketch);
    assert!(is_partial(&f, &fa, None) && is_partial(&f, &fb, None));
    let (sa, sb) = (
        f.shingle_sets(None, &a, Some("")),
        f.shingle_sets(None, &b, Some("")),
    );
    assert_eq!(sa.cleaned, sb.cleaned);
    assert!(sa.similarity(&sb) < 0.6);
    assert!(sa.similarity(&f.shingle_sets(None, &a_copy, Some(""))) >= 0.6);
    // Two more pairs of the kind, from an adversarial trial: rows of digits under one
    // text (few bytes, many tokens), and link lists under one caption (URLs, which the
    // sketch does not see, are the whole difference).
    let prose = "The internationalization of telecommunications infrastructure requires the \
                 institutionalization of comprehensive interoperability standards.";
    let rows = |a: &str, b: &str| format!("{prose}\n{a}\n{b}");
    let caption = "My reading list for this week:";
    let links = |urls: &[&str]| format!("{caption}\n{}", urls.join("\n"));
    let others = [
        rows("2 2 3 0 1 2 8 9 1 6", "1 4 3 3 6 1 4 3 6 4"),
        rows("5 0 3 0 6 0 6 7 2 0", "3 6 1 9 0 1 9 3 3 5"),
        links(&[
            "https://arxiv.org/abs/2401.00001",
            "https://arxiv.org/abs/2401.00002",
        ]),
        links(&[
            "https://github.com/rust-lang/rust/issues/1",
            "https://en.wikipedia.org/wiki/SimHash",
        ]),
    ];
    assert_eq!(f.sketch(None, &others[0]), f.sketch(None, &others[1]));
    assert_eq!(f.sketch(None, &others[2]), f.sketch(None, &others[3]));
    let t = TestCommand::new();
    let texts = [&a, &b, &a_copy].into_iter().chain(&others);
    let lines: Vec<String> = texts
        .enumerate()
        .map(|(i, x)| serde_json::json!({"id": i, "text": x}).to_string())
        .collect();
    t.write("code.jsonl", (lines.join("\n") + "\n").as_bytes());
    let o = t.run(&["dedup", "code.jsonl", "-o", "kept.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let want: String = [0, 1, 3, 4, 5, 6]
        .map(|i| format!("{}\n", lines[i]))
        .concat();
    assert_eq!(std::fs::read_to_string(t.path("kept.jsonl")).unwrap(), want);
    // Without --output, the same pairs.
    let o = t.run(&["dedup", "code.jsonl", "--pairs"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let pairs = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        pairs.contains("\"0\"") && pairs.contains("\"2\""),
        "{pairs}"
    );
    assert!(!pairs.contains("\"1\""), "{pairs}");
}

/// A page of one site's template: its title and heading, `body`, then an unmarked list of
/// `links` (which the HTML reader leaves out as a link list) and the template's menu.
fn site_page(title: &str, body: &str, links: &[String]) -> String {
    let items: String = (links.iter().enumerate())
        .map(|(i, l)| format!("<li><a href=\"/p/{i}\">{l}</a></li>"))
        .collect();
    format!(
        "<html><head><title>{title}</title></head><body><nav><a href=\"/\">Home</a> \
         <a href=\"/about\">About us</a></nav><h1>{title}</h1>{body}<ul>{items}</ul>\
         <footer>All rights reserved</footer></body></html>"
    )
}

#[test]
fn pages_whose_reader_left_their_links_out_are_compared_whole() {
    // Listing pages of one site: one heading and intro, each with its own links. The
    // reader keeps the heading and intro alone: one fingerprint and sketch for all.
    let intro = "<p>Every guide we have published about planting, pruning and watering the \
                 trees of a small garden through the four seasons of the year.</p>";
    let words = [
        "apple", "cherry", "walnut", "maple", "willow", "birch", "cedar", "plum",
    ];
    let link = |page: usize, i: usize| {
        let w = |j: usize| words[(page * 7 + i * 3 + j) % words.len()];
        format!("How to grow a {} {} tree {page}-{i}", w(0), w(1))
    };
    let listings: Vec<String> = (0..4)
        .map(|p| {
            site_page(
                "Garden guides",
                intro,
                &(0..12).map(|i| link(p, i)).collect::<Vec<_>>(),
            )
        })
        .collect();
    let f = Fingerprinter::new();
    let read = |html: &str| simstore::read::parse_html(html);
    let (p0, p1) = (read(&listings[0]), read(&listings[1]));
    assert_eq!((&p0.text, &p0.title), (&p1.text, &p1.title), "the premise");
    assert!(p0.left_out.contains("apple") && p0.left_out != p1.left_out);
    let a0 = f.analyze(p0.title.as_deref(), &p0.text).unwrap();
    assert!(!is_partial(&f, &a0, None) && is_partial(&f, &a0, Some(&p0.left_out)));
    // An article, and its copy on the same template with other related links: a copy.
    let story = "<p>The council approved the budget for the city's parks and libraries on \
                 Tuesday evening, after a long debate about the cost of the new swimming \
                 pool, the repairs to the old library roof and the wages of the gardeners \
                 who look after the rose beds by the river.</p>";
    let related = |p: usize| (0..2).map(|i| link(p, i)).collect::<Vec<_>>();
    let article = site_page("Budget approved", story, &related(5));
    let copy = site_page("Budget approved", story, &related(6));
    // A copy on a template whose menu is an unmarked list before the story: its menu.
    let menu: String = (0..20)
        .map(|i| format!("<a href=\"/s/{i}\">Section {i}</a> "))
        .collect();
    let menu_copy = format!(
        "<html><head><title>Budget approved</title></head><body><div>{menu}</div>\
         <h1>Budget approved</h1>{story}</body></html>"
    );
    let t = TestCommand::new();
    let pages = listings.iter().chain([&article, &copy, &menu_copy]);
    let lines: Vec<String> = pages
        .enumerate()
        .map(|(i, html)| serde_json::json!({"id": i, "html": html}).to_string())
        .collect();
    t.write("pages.jsonl", (lines.join("\n") + "\n").as_bytes());
    let o = t.run(&["dedup", "pages.jsonl", "-o", "kept.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let want: String = (0..5).map(|i| format!("{}\n", lines[i])).collect();
    assert_eq!(std::fs::read_to_string(t.path("kept.jsonl")).unwrap(), want);
}

#[test]
fn what_dataset_dedup_refuses() {
    let t = TestCommand::new();
    let line = b"{\"id\":\"a\",\"text\":\"some words to read\"}\n";
    t.write("in.jsonl", line);
    let refused = |o: &std::process::Output, says: &str| {
        assert_eq!(code(o), 2, "{}", stderr(o));
        assert!(stderr(o).contains(says), "{}", stderr(o));
    };
    // A bad output is refused before stdin is read (and copied: --output reads it twice).
    let stdin = std::fs::File::open(t.path("in.jsonl")).unwrap();
    let o = t
        .command(&["dedup", "-", "-o", "no/such/dir/kept.jsonl"])
        .stdin(stdin)
        .output()
        .unwrap();
    refused(&o, "does not exist");
    let o = t.run(&["dedup", "in.jsonl", "-o", "in.jsonl"]);
    refused(&o, "is the input in.jsonl or inside it");
    assert_eq!(
        std::fs::read(t.path("in.jsonl")).unwrap(),
        line,
        "input intact"
    );
    // A file of an input directory, or one written into it, is an input too.
    std::fs::create_dir(t.path("dir")).unwrap();
    t.write("dir/in.jsonl", line);
    for args in [
        &["dedup", "dir", "-o", "dir/in.jsonl"][..],
        &["dedup", "dir", "-o", "dir/new.jsonl"],
        &["dedup", "dir", "--clusters", "dir/in.jsonl"],
        &["dedup", "dir", "-o", "k.jsonl", "--report", "dir/r.html"],
    ] {
        refused(&t.run(args), "dir or inside it");
        assert_eq!(std::fs::read(t.path("dir/in.jsonl")).unwrap(), line);
        assert!(!t.path("dir/new.jsonl").exists() && !t.path("dir/r.html").exists());
    }
    t.write("page.txt", b"a plain text document");
    let o = t.run(&["dedup", "page.txt", "-o", "kept.jsonl"]);
    refused(&o, "this input is not JSONL");
    assert!(
        !t.path("kept.jsonl").exists(),
        "no output after a failed run"
    );
    let o = t.run(&["dedup", "--text-field", "body"]);
    refused(&o, "--text-field applies to a dedup of FILEs");
    let o = t.run(&["dedup", "in.jsonl", "--verify", "1.5"]);
    refused(&o, "between 0 and 1");
    let o = t.run(&["dedup", "in.jsonl", "--pairs", "-o", "kept.jsonl"]);
    refused(&o, "cannot be used with");
    // An output that cannot be written is refused before any input is read (the input
    // here cannot be read either: that error would come first if it were read first).
    let o = t.run(&["dedup", "missing.jsonl", "-o", "no/such/dir/kept.jsonl"]);
    refused(&o, "kept.jsonl");
    assert!(!stderr(&o).contains("missing.jsonl"), "{}", stderr(&o));
    // A directory is where Parquet shards go: one that holds files is refused.
    std::fs::create_dir(t.path("out")).unwrap();
    t.write("out/x", b"x");
    let o = t.run(&["dedup", "missing.jsonl", "-o", "out"]);
    refused(&o, "the directory is not empty");
    assert_eq!(stderr(&o).matches("not empty").count(), 1, "{}", stderr(&o));
}

/// `gz` with a byte of its deflate data flipped such that the decoder still gives out at
/// least `min_out` bytes, `min_lines` of them whole JSON lines, before it fails on
/// something else than the input's end (a checksum, or invalid deflate data).
pub(crate) fn damaged(gz: &[u8], min_out: usize, min_lines: usize) -> Vec<u8> {
    for at in (gz.len() / 2..gz.len() - 8).rev().step_by(61) {
        let mut bad = gz.to_vec();
        bad[at] ^= 0x5a;
        let mut out = Vec::new();
        let read = flate2::read::GzDecoder::new(&bad[..]).read_to_end(&mut out);
        let records = out
            .split(|&b| b == b'\n')
            .filter(|l| serde_json::from_slice::<serde_json::Value>(l).is_ok())
            .count();
        let damage = read.is_err_and(|e| e.kind() != std::io::ErrorKind::UnexpectedEof);
        if damage && out.len() >= min_out && records >= min_lines {
            return bad;
        }
    }
    panic!("no damage that still decodes {min_lines} records");
}

/// `n` fingerprint records `{prefix}{i}`, random fingerprints (no two near).
pub(crate) fn fp_records(prefix: &str, n: usize, seed: u64) -> String {
    let mut r = rng(seed);
    (0..n)
        .map(|i| {
            format!(
                "{{\"id\":\"{prefix}{i}\",\"fp\":\"{:016x}\"}}\n",
                r.random::<u64>()
            )
        })
        .collect()
}

/// Regression: the records decoded from a damaged gzip member before its checksum failed
/// were kept in the output (deflate turns damaged data into text copied from elsewhere).
/// A member of up to 8 MiB gives none of its records; a larger one (streamed) gives them
/// before its damage is found, and they are then left out of the output, reported.
#[test]
fn records_of_a_damaged_gzip_member_are_left_out() {
    let t = TestCommand::new();
    let good = fp_records("g", 300, 1);
    t.write("good.jsonl", good.as_bytes());
    let small = fp_records("s", 2000, 2);
    t.write("small.jsonl.gz", &damaged(&gz(small.as_bytes()), 1000, 10));
    // 10 MB of records in one member, after a small member that is intact.
    let big = fp_records("b", 240_000, 3);
    let first = fp_records("f", 50, 4);
    let mut two = gz(first.as_bytes());
    two.extend(damaged(&gz(big.as_bytes()), (8 << 20) + 1, 100));
    t.write("big.jsonl.gz", &two);
    let o = t.run(&[
        "dedup",
        "good.jsonl",
        "small.jsonl.gz",
        "big.jsonl.gz",
        "-o",
        "kept.jsonl",
    ]);
    assert_eq!(code(&o), 1, "records failed: {}", stderr(&o));
    let kept = std::fs::read_to_string(t.path("kept.jsonl")).unwrap();
    assert_eq!(kept, good.clone() + &first, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("error: small.jsonl.gz:1: cannot decompress"),
        "{err}"
    );
    let line = err
        .lines()
        .find(|l| l.starts_with("error: big.jsonl.gz: lines 51–"))
        .unwrap_or_else(|| panic!("the damaged member's records named: {err}"));
    assert!(
        line.contains(" read from a damaged gzip member before its damage was found; they may be wrong and are left out"),
        "{line}"
    );
    // The summary counts them as failed.
    let summary = err.lines().last().unwrap();
    assert!(summary.starts_with("350 documents: "), "{summary}");
}

/// Writes `bytes` into the FIFO `path` once a reader opens it; false if `child` exits
/// first (so that a test never hangs on a FIFO nobody reads).
fn feed_fifo(path: &std::path::Path, bytes: &[u8], child: &mut std::process::Child) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    loop {
        let probe = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path);
        if probe.is_ok() {
            // A reader is there: a blocking open returns at once.
            let mut w = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            w.write_all(bytes).unwrap();
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

fn mkfifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.unwrap().success());
}

/// The temporary output files in the test's directory.
fn partial_files(t: &TestCommand) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(t.path("."))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".simstore-partial-") || n.starts_with(".simstore-dedup-"))
        .collect();
    names.sort();
    names
}

/// `dedup in.jsonl -o kept.jsonl` of a named pipe `in.jsonl` that this test writes `first`
/// for pass 1, then `second` once pass 2 has created its output (a write before would
/// still reach pass 1); the run's output, and whether pass 2 read the pipe.
fn dedup_of_a_pipe_written_twice(
    t: &TestCommand,
    first: &str,
    second: &str,
) -> (std::process::Output, bool) {
    let input = t.path("in.jsonl");
    mkfifo(&input);
    let mut child = t
        .command(&["dedup", "in.jsonl", "-o", "kept.jsonl"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        feed_fifo(&input, first.as_bytes(), &mut child),
        "pass 1 reads"
    );
    while partial_files(t).is_empty() && child.try_wait().unwrap().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Times apart, as a writer's second write is.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let read_again = feed_fifo(&input, second.as_bytes(), &mut child);
    (
        crate::util::checked(child.wait_with_output().unwrap()),
        read_again,
    )
}

/// Regression: an in-place edit of the input between the two passes that kept its line
/// count went unnoticed: an invalid JSON line was copied into the output (exit 0). The
/// input is a FIFO here, so that the test gives pass 1 and pass 2 different bytes (the
/// same lines, one of them broken) at the right moments.
#[test]
fn an_input_changed_between_the_passes_fails_the_run() {
    let t = TestCommand::new();
    let before = fp_records("r", 100, 5);
    let after = before.replacen("{\"id\":\"r7\"", "{\"id\":'r7'", 1);
    assert_eq!(
        (before.len(), before.lines().count()),
        (after.len(), after.lines().count())
    );
    let (o, read_again) = dedup_of_a_pipe_written_twice(&t, &before, &after);
    assert!(read_again, "pass 2 reads: {}", stderr(&o));
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the input in.jsonl changed between the two passes of dedup --output"),
        "{}",
        stderr(&o)
    );
    assert!(!t.path("kept.jsonl").exists(), "no output");
    assert_eq!(
        partial_files(&t),
        Vec::<String>::new(),
        "no partial output left"
    );
}

/// A named pipe whose writer writes the same bytes for both passes (as docs/cli.md says to)
/// is read twice: its times move with each write, its bytes tell. Before: "changed between
/// the two passes" always.
#[test]
fn a_named_pipe_written_twice_alike_is_deduplicated() {
    let t = TestCommand::new();
    let records = fp_records("r", 100, 5);
    let (o, read_again) = dedup_of_a_pipe_written_twice(&t, &records, &records);
    assert!(read_again, "pass 2 reads: {}", stderr(&o));
    assert!(code(&o) < 2, "{}", stderr(&o));
    std::fs::remove_file(t.path("in.jsonl")).unwrap();
    t.write("in.jsonl", records.as_bytes());
    t.run(&["dedup", "in.jsonl", "-o", "file.jsonl"]);
    assert_eq!(
        std::fs::read_to_string(t.path("kept.jsonl")).unwrap(),
        std::fs::read_to_string(t.path("file.jsonl")).unwrap()
    );
}

/// Regression: a kill -9 in the second pass left a hidden `.simstore-dedup-XXXXXX` file
/// beside the output, forever. Now it is named after the output and the pid that wrote it
/// (`.kept.jsonl.simstore-partial-PID-XXXXXX`), and the next write into the directory
/// removes it once that process is gone. The run is held in pass 2 by its input, a FIFO
/// that the test does not write a second time.
#[test]
fn a_partial_output_of_a_killed_run_is_removed_by_the_next_run() {
    let t = TestCommand::new();
    let records = fp_records("r", 100, 6);
    let input = t.path("in.jsonl");
    mkfifo(&input);
    let mut child = t
        .command(&["dedup", "in.jsonl", "-o", "kept.jsonl"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        feed_fifo(&input, records.as_bytes(), &mut child),
        "pass 1 reads"
    );
    // Pass 2 creates its output, then waits to open the input again.
    while partial_files(&t).is_empty() {
        assert!(child.try_wait().unwrap().is_none(), "dedup ended in pass 2");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let left = partial_files(&t);
    let name = format!(".kept.jsonl.simstore-partial-{}-", child.id());
    assert!(
        left.len() == 1 && left[0].starts_with(&name),
        "{left:?}: named after the output and the writer's pid"
    );
    // Another run's temporary file, of a process still running (this one), stays.
    let alive = format!(
        ".other.jsonl.simstore-partial-{}-abc123",
        std::process::id()
    );
    t.write(&alive, b"partial");
    std::fs::remove_file(&input).unwrap();
    t.write("in.jsonl", records.as_bytes());
    let o = t.run(&["dedup", "in.jsonl", "-o", "kept.jsonl"]);
    assert_eq!(code(&o), 0, "no pairs, all written: {}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(t.path("kept.jsonl")).unwrap(),
        records
    );
    assert_eq!(partial_files(&t), [alive]);
}

/// A record's rank under a keep policy, as the model sees it: `--keep longest` by the text's
/// length (descending), `newest:ts` / `oldest:ts` by `ts` (a record without it last).
#[derive(Clone)]
struct Ranked {
    len: usize,
    ts: Option<String>,
}

/// The records in the order `policy` prefers them (ties in input order): the model's
/// reading of `--keep`.
fn policy_order(policy: &str, recs: &[Ranked]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..recs.len()).collect();
    match policy {
        "longest" => order.sort_by_key(|&i| std::cmp::Reverse(recs[i].len)),
        "newest:ts" => {
            order.sort_by_key(|&i| (recs[i].ts.is_none(), std::cmp::Reverse(recs[i].ts.clone())))
        }
        "oldest:ts" => order.sort_by_key(|&i| (recs[i].ts.is_none(), recs[i].ts.clone())),
        _ => {}
    }
    order
}

/// The model of `dedup --keep policy [--transitive]` within `k`: for every record, the
/// record its cluster formed around (itself when kept or alone), and whether it is kept.
fn keep_model(
    fps: &[u64],
    recs: &[Ranked],
    policy: &str,
    k: u32,
    transitive: bool,
) -> (Vec<usize>, Vec<bool>) {
    let order = policy_order(policy, recs);
    let pair = |a: usize, b: usize| within(fps, k)(order[a], order[b]);
    let n = fps.len();
    let rep_pos: Vec<usize> = if transitive {
        let mut uf = UnionFind::new(n).unwrap();
        for (i, j) in (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))) {
            if pair(i, j).is_some() {
                uf.union(i as u32, j as u32);
            }
        }
        let mut first = std::collections::HashMap::new();
        (0..n)
            .map(|p| *first.entry(uf.find(p as u32)).or_insert(p))
            .collect()
    } else {
        brute_leaders(n, pair)
    };
    let mut rep = vec![0; n];
    let mut size = vec![0; n];
    for (p, &r) in rep_pos.iter().enumerate() {
        rep[order[p]] = order[r];
        size[order[r]] += 1;
    }
    let kept = (0..n)
        .map(|i| match policy {
            "none" => size[rep[i]] < 2,
            _ => rep[i] == i,
        })
        .collect();
    (rep, kept)
}

#[test]
fn every_keep_policy_keeps_what_the_model_keeps_and_says_why() {
    let t = TestCommand::new();
    for seed in 0..2 {
        let fps = fingerprints(seed);
        let mut r = rng(seed + 100);
        let recs: Vec<Ranked> = (0..fps.len())
            .map(|_| Ranked {
                len: r.random_range(0..6),
                ts: (r.random_range(0..4) > 0).then(|| format!("2024-0{}", r.random_range(1..5))),
            })
            .collect();
        let lines: Vec<String> = (0..fps.len())
            .map(|i| {
                let ts = recs[i]
                    .ts
                    .as_ref()
                    .map(|s| format!(r#","ts":"{s}""#))
                    .unwrap_or_default();
                let text = "é".repeat(recs[i].len);
                format!(
                    r#"{{"id":"r{i}","fp":"{:016x}","text":"{text}"{ts}}}"#,
                    fps[i]
                )
            })
            .collect();
        t.write("in.jsonl", (lines.join("\n") + "\n").as_bytes());
        // The policies disagree on this data, so a policy ignored would show.
        let kept_by = |p| keep_model(&fps, &recs, p, 3, false).1;
        let policies = ["first", "longest", "newest:ts", "oldest:ts", "none"];
        for (i, a) in policies.iter().enumerate() {
            for b in &policies[i + 1..] {
                assert_ne!(kept_by(a), kept_by(b), "{a} and {b} keep the same");
            }
        }
        for policy in policies {
            for (k, transitive) in [(2, false), (3, false), (3, true)] {
                let (rep, kept) = keep_model(&fps, &recs, policy, k, transitive);
                let k_arg = k.to_string();
                let mut args = vec!["dedup", "in.jsonl", "--k", &k_arg, "--keep", policy];
                args.extend(["-o", "kept.jsonl", "--clusters", "clusters.jsonl"]);
                if transitive {
                    args.push("--transitive");
                }
                let o = t.run(&args);
                let ctx = format!("seed {seed}, {args:?}: {}", stderr(&o));
                let want: String = (0..fps.len())
                    .filter(|&i| kept[i])
                    .map(|i| format!("{}\n", lines[i]))
                    .collect();
                assert_eq!(
                    std::fs::read_to_string(t.path("kept.jsonl")).unwrap(),
                    want,
                    "{ctx}"
                );
                let rows = std::fs::read_to_string(t.path("clusters.jsonl")).unwrap();
                let in_clusters =
                    (0..fps.len()).filter(|&i| rep.iter().filter(|&&x| x == rep[i]).count() >= 2);
                assert_eq!(rows.lines().count(), in_clusters.count(), "{ctx}");
                for row in rows.lines() {
                    let v: serde_json::Value = serde_json::from_str(row).unwrap();
                    let i: usize = v["id"].as_str().unwrap()[1..].parse().unwrap();
                    assert_eq!(v["representative"], format!("r{}", rep[i]), "{ctx}: {row}");
                    assert_eq!(v["kept"], kept[i], "{ctx}: {row}");
                    assert_eq!(v["line"], i + 1, "{ctx}: {row}");
                    let d = (fps[i] ^ fps[rep[i]]).count_ones();
                    assert_eq!(v["distance"], d, "{ctx}: {row}");
                }
            }
        }
    }
}

#[test]
fn keep_and_clusters_refuse_what_does_not_apply() {
    let t = TestCommand::new();
    t.write("in.jsonl", br#"{"id":"a","text":"x"}"#);
    for (args, says) in [
        (
            vec!["dedup", "in.jsonl", "--keep", "last"],
            "expected first, longest",
        ),
        (
            vec!["dedup", "in.jsonl", "--keep", "newest:"],
            "name the field",
        ),
        (
            vec!["dedup", "--keep", "longest"],
            "--keep applies to a dedup of FILEs",
        ),
        (
            vec!["dedup", "in.jsonl", "--clusters", "in.jsonl"],
            "an input or the --output",
        ),
        (
            vec![
                "dedup",
                "in.jsonl",
                "-o",
                "k.jsonl",
                "--clusters",
                "k.jsonl",
            ],
            "is k.jsonl or inside it, an input or the --output",
        ),
        (
            vec!["dedup", "in.jsonl", "--clusters", "/nonexistent/c.jsonl"],
            "does not exist",
        ),
    ] {
        let o = t.run(&args);
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    assert!(!t.path("k.jsonl").exists());
}

/// A `--keep` field that no record has (a misspelt name) is warned about, not silently
/// read as "input order".
#[test]
fn a_keep_field_no_record_has_is_warned_about() {
    let t = TestCommand::new();
    t.write(
        "in.jsonl",
        b"{\"id\":\"a\",\"ts\":1,\"text\":\"some words to read here\"}\n\
          {\"id\":\"b\",\"ts\":2,\"text\":\"some words to read here\"}\n",
    );
    let o = t.run(&["dedup", "in.jsonl", "--json", "--keep", "newest:timestamp"]);
    assert!(
        stderr(&o).contains("no record has the field \"timestamp\""),
        "{}",
        stderr(&o)
    );
    let o = t.run(&["dedup", "in.jsonl", "--json", "--keep", "newest:ts"]);
    assert!(!stderr(&o).contains("no record has"), "{}", stderr(&o));
}

/// A record that cannot be fingerprinted (its text null, missing, empty, blank, a number,
/// a list, or all punctuation) duplicates nothing that can be told: `--output` keeps it as
/// it is, in no cluster, with a warning naming it — JSONL and Parquet alike, as Python's
/// `simstore.dedup` keeps it. A line that is not a record (not JSON) is an error, left out.
#[test]
fn records_that_cannot_be_fingerprinted_are_kept_as_they_are() {
    let t = TestCommand::new();
    let a = "the river market opened early today and the students went to see the lanterns";
    let lines = [
        format!(r#"{{"id":"a","text":"{a}"}}"#),
        format!(r#"{{"id":"a-copy","text":"{a}"}}"#),
        r#"{"id":"null","text":null}"#.to_owned(),
        r#"{"id":"missing"}"#.to_owned(),
        r#"{"id":"empty","text":""}"#.to_owned(),
        r#"{"id":"blank","text":"   "}"#.to_owned(),
        r#"{"id":"number","text":12}"#.to_owned(),
        r#"{"id":"list","text":["a","b"]}"#.to_owned(),
        r#"{"id":"dots","text":"... !!! ???"}"#.to_owned(),
        "not json at all".to_owned(),
    ];
    t.write("c.jsonl", (lines.join("\n") + "\n").as_bytes());
    let o = t.run(&[
        "dedup",
        "c.jsonl",
        "--text-field",
        "text",
        "-o",
        "kept.jsonl",
    ]);
    assert_eq!(code(&o), 1, "the line that is not JSON: {}", stderr(&o));
    let kept: Vec<String> = std::fs::read_to_string(t.path("kept.jsonl"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let mut want: Vec<String> = lines[..9].to_vec();
    want.remove(1);
    assert_eq!(kept, want, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("c.jsonl:3:"), "{err}");
    assert_eq!(
        err.matches("kept as it is, in no cluster").count(),
        7,
        "{err}"
    );
    assert!(err.contains("c.jsonl:10: invalid JSON"), "{err}");
    assert!(err.contains("kept 8, 7 of them not fingerprinted"), "{err}");
    // Against a store, read only or with --add: the same records kept, those 7 not stored.
    assert_eq!(code(&t.run(&["init"])), 0);
    let db = t.db().to_str().unwrap().to_owned();
    for add in [false, true] {
        let mut args = vec!["dedup", "c.jsonl", "--against", &db, "-o", "kept.jsonl"];
        args.extend(add.then_some("--add"));
        let o = t.run(&args);
        assert_eq!(code(&o), 1, "the line that is not JSON: {}", stderr(&o));
        let kept = std::fs::read_to_string(t.path("kept.jsonl")).unwrap();
        assert_eq!(kept, want.join("\n") + "\n", "--add {add}: {}", stderr(&o));
        let err = stderr(&o);
        let says = "kept as it is, unchecked and not stored";
        assert_eq!(err.matches(says).count(), 7, "{err}");
        let counted = match add {
            true => "kept 8 (1 stored), 7 of them not fingerprinted and not stored",
            false => "kept 8, 7 of them not fingerprinted (see above)",
        };
        assert!(err.contains(counted), "{err}");
    }
    let o = t.run(&["stats", "--json"]);
    let stats: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        stats["docs"], 1,
        "only the record with words is stored: {stats}"
    );
    // A Parquet row whose text is null or empty: kept as well.
    let texts = arrow_array::StringArray::from(vec![Some(a), Some(a), None, Some("")]);
    let ids = arrow_array::StringArray::from(vec!["a", "a-copy", "null", "empty"]);
    crate::dedup_parquet::write_columns(
        &t.path("p.parquet"),
        vec![
            ("id", std::sync::Arc::new(ids)),
            ("text", std::sync::Arc::new(texts)),
        ],
    );
    let o = t.run(&[
        "dedup",
        "p.parquet",
        "--text-field",
        "text",
        "-o",
        "kept.ndjson",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let kept = std::fs::read_to_string(t.path("kept.ndjson")).unwrap();
    let ids: Vec<String> = kept
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].to_string())
        .collect();
    assert_eq!(ids, ["\"a\"", "\"null\"", "\"empty\""], "{}", stderr(&o));
    // No record fingerprinted at all is a mistake (a --text-field that names no field),
    // not a dataset to copy: refused, nothing written.
    let o = t.run(&[
        "dedup",
        "c.jsonl",
        "--text-field",
        "body",
        "-o",
        "none.jsonl",
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("none of the 9 records could be fingerprinted"),
        "{}",
        stderr(&o)
    );
    // Every id unusable: the message names the id field as well as the text field.
    let bad_ids = (0..3).map(|i| format!("{{\"id\":[{i}],\"text\":\"a b c d e f\"}}\n"));
    t.write("ids.jsonl", bad_ids.collect::<String>().as_bytes());
    let o = t.run(&["dedup", "ids.jsonl", "-o", "none.jsonl"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("found an array") && err.contains("--id-field (each"),
        "{err}"
    );
    assert!(!t.path("none.jsonl").exists());
}

/// A dataset's ids name records beside their file and line, so a fraction or an exponent
/// is one too (pandas writes an integer column with gaps as `1.0`) and its records are
/// compared; where an id is a key (`import`), it must read as written and is refused.
#[test]
fn fractional_ids_of_a_dataset_name_their_records() {
    let t = TestCommand::new();
    let text = "the river market opened early today and the students went to see the lanterns";
    let line = |id: &str| format!("{{\"id\":{id},\"text\":\"{text}\"}}\n");
    let lines: String = ["1.0", "2.0", "null", "2.5e3"].map(line).concat();
    t.write("p.jsonl", lines.as_bytes());
    let o = t.run(&[
        "dedup",
        "p.jsonl",
        "-o",
        "kept.jsonl",
        "--clusters",
        "c.jsonl",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let kept = std::fs::read_to_string(t.path("kept.jsonl")).unwrap();
    assert_eq!(kept, line("1.0"));
    assert_eq!(jsonl_ids(&t.path("c.jsonl")), ["1.0", "2.0", "3", "2500.0"]);
    let o = t.run(&["import", "p.jsonl"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let says = "p.jsonl:1: field \"id\" (--id-field) must be a string or a whole number, found a fraction or an exponent";
    assert!(stderr(&o).contains(says), "{}", stderr(&o));
}

/// `dedup FILE --against` a new store (`init`), read only and then with `--add`: each run
/// keeps the records `want` (ids, in order).
pub(crate) fn against_both_ways(t: &TestCommand, file: &str, want: &[impl AsRef<str>]) {
    assert_eq!(code(&t.run(&["init"])), 0);
    let db = t.db().to_str().unwrap().to_owned();
    let want: Vec<&str> = want.iter().map(AsRef::as_ref).collect();
    for add in [false, true] {
        let mut args = vec!["dedup", file, "--against", &db, "-o", "kept.jsonl"];
        args.extend(add.then_some("--add"));
        let o = t.run(&args);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(
            jsonl_ids(&t.path("kept.jsonl")),
            want,
            "--add {add}: {}",
            stderr(&o)
        );
    }
}

/// A record's short text (fewer shingles than a sketch can tell apart from another's)
/// repeated is a copy: dropped by a dataset dedup, from JSONL and from Parquet, and against
/// a store, read only or with `--add`. A short text that differs by a word is kept.
#[test]
fn short_texts_repeated_are_copies() {
    let t = TestCommand::new();
    let records = [
        ("a", "Click here"),
        ("b", "Read more"),
        ("c", "Click here"),
        ("d", "Click there"),
        ("e", "Read more about it"),
        ("f", "点击这里"),
        ("g", "Read more"),
        ("h", "点击这里"),
        ("i", "Click here"),
    ];
    let want = ["a", "b", "d", "e", "f"];
    let lines: String = (records.iter())
        .map(|(id, text)| format!("{}\n", serde_json::json!({"id": id, "text": text})))
        .collect();
    t.write("short.jsonl", lines.as_bytes());
    let o = t.run(&["dedup", "short.jsonl", "-o", "kept.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(jsonl_ids(&t.path("kept.jsonl")), want, "{}", stderr(&o));
    let column = |i: usize| records.iter().map(move |r| [r.0, r.1][i]);
    crate::dedup_parquet::write_columns(
        &t.path("short.parquet"),
        vec![
            (
                "id",
                std::sync::Arc::new(arrow_array::StringArray::from_iter_values(column(0))),
            ),
            (
                "text",
                std::sync::Arc::new(arrow_array::StringArray::from_iter_values(column(1))),
            ),
        ],
    );
    let o = t.run(&["dedup", "short.parquet", "-o", "kept.ndjson"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(jsonl_ids(&t.path("kept.ndjson")), want, "{}", stderr(&o));
    against_both_ways(&t, "short.jsonl", &want);
    let db = t.db().to_str().unwrap().to_owned();
    // The next dump against what was added: every record is a copy of a stored one.
    let o = t.run(&[
        "dedup",
        "short.jsonl",
        "--against",
        &db,
        "-o",
        "again.jsonl",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        jsonl_ids(&t.path("again.jsonl")).is_empty(),
        "{}",
        stderr(&o)
    );
    // `import --dedup` into a new store, by the store's own check: the same records, its
    // exact copies found by their content hash.
    let fresh = t.path("fresh.db");
    let args = ["import", "--dedup", "short.jsonl", "-o", "imported.jsonl"];
    let o = t.run_on(&fresh, &args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(jsonl_ids(&t.path("imported.jsonl")), want, "{}", stderr(&o));
}
