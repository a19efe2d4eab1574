//! `simstore explain A B`: why two documents are (or are not) near duplicates, under the
//! rule a query of the store would apply (`verdict`); also what `fingerprint --explain`
//! prints for one text.

mod verdict;

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Value, json};
use simstore::index::near::is_partial;
use simstore::index::page::{self, analyze_page};
use simstore::text::explain::{Explanation, explain};
use simstore::text::shingles::ShingleSets;
use simstore::{Analysis, Fingerprint, Fingerprinter, MatchRule, Rule, Sketch, Store, WeakBits};

use super::input::{self, FieldArgs};
use super::{Code, open_for_reading, output, rule};
use verdict::Judge;

/// Arguments of `simstore explain`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
A and B are ids of documents in the store (--db); with --files, files (text or HTML, or a
JSONL file holding one record, read as `import` reads it: its title, text or fp; gzip'd or
not); with --text, the texts themselves; --title-a and --title-b give them titles, weighed
as when stored. A store keeps no texts: for ids, only the fingerprints, the Hamming
distance, the sketches' Jaccard estimate and the verdict are shown; give the texts
(--files, --text) to see their lines and features.

The verdict is the store's, given no --k or --verify: its quality mode's rule (see
`simstore init --quality`), with the part of it that decided — within k_max, or within 12
bits in a span of the store's tables, with sketches at least 0.3 similar (Chinese: 0.25 +
0.025 a bit of distance; 0.8 for texts of fewer than 16 shingles, 24 in Chinese); or rejected:
beyond the reach, in no common span (neither the tables nor B's probes, when B is a
text, bring one to a check of the other), sketches that
differ, a side without a sketch. Without a store (--files, --text and no store at --db):
within k = 3.

Exit status: 0 near duplicates, 1 not, 2 error.")]
pub struct Args {
    /// A and B are files.
    #[arg(long, conflicts_with = "text")]
    files: bool,
    /// A and B are texts.
    #[arg(long)]
    text: bool,
    /// The title of A (with --files or --text), weighed as when stored (2x per word, at
    /// most a fifth of the body); over a file's own title.
    #[arg(long, value_name = "TEXT")]
    title_a: Option<String>,
    /// The title of B, as --title-a.
    #[arg(long, value_name = "TEXT")]
    title_b: Option<String>,
    /// The verdict within K bits ("distance <= K"), not by the store's quality mode
    /// [default: the store's mode; without a store, 3].
    #[arg(long, short, value_parser = clap::value_parser!(u32).range(0..=64))]
    k: Option<u32>,
    /// The verdict within --k (default: the store's k_max, or 3) and sketch similarity at
    /// least T (0..1), as `query --verify T`; a side without a sketch never matches.
    #[arg(long, value_name = "T")]
    verify: Option<f64>,
    /// Features listed per document (and per side of the difference).
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// The first document.
    a: String,
    /// The second document.
    b: String,
}

/// One side: its name, fingerprint, sketch and (when its text is known) explanation and
/// its shingles, cleaned and whole (what a dedup of files compares texts by).
struct Side {
    name: String,
    fp: Fingerprint,
    /// As a store keeps it: of a web page with much left out, its whole visible text's.
    sketch: Option<Sketch>,
    /// Then, its main text's, which a store compares too ([`simstore::index::page`]).
    main_sketch: Option<Sketch>,
    explained: Option<Explanation>,
    shingles: Option<ShingleSets>,
    /// The fingerprint's least certain bits, which a check of a text probes (not stored).
    weak_bits: Option<WeakBits>,
}

/// The verdict on `b` as a store holding `a` checks it: by their sketches, and where `b`'s
/// is of a web page's whole visible text, by its main text's too (the first that refuses
/// decides, as [`simstore::index::page::accepts`]) — unless both pages are compared whole
/// and agree by the rest of the pages ([`page::rest_agrees`]): then their whole pages
/// decide.
fn decision(judge: &Judge<'_>, a: &Side, b: &Side) -> verdict::Decision {
    let fps = (a.fp, b.fp);
    // A check probes as many of its weak bits as the rule does for its (whole page's) sketch.
    let weak = b
        .weak_bits
        .as_ref()
        .map(|w| (w, judge.rule.probes_for(b.sketch.as_ref())));
    let whole = verdict::decide_probed(judge, fps, (a.sketch.as_ref(), b.sketch.as_ref()), weak);
    let Some(main) = b.main_sketch.filter(|_| whole.accepted()) else {
        return whole;
    };
    let by_main = verdict::decide_probed(judge, fps, (a.sketch.as_ref(), Some(&main)), weak);
    let d = a.fp.distance(b.fp);
    match by_main.accepted() {
        false
            if page::rest_agrees(
                &judge.rule,
                d,
                (b.sketch.as_ref(), &main),
                a.sketch.as_ref(),
            ) =>
        {
            whole
        }
        _ => by_main,
    }
}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    if let Some(t) = args.verify
        && !rule::is_similarity(t)
    {
        anyhow::bail!("--verify {t}: the threshold is a similarity between 0 and 1");
    }
    let (a, b, store) = sides(db, &args)?;
    let judge = judge(store.as_ref(), &args);
    let distance = a.fp.distance(b.fp);
    let decision = decision(&judge, &a, &b);
    let jaccard = a.sketch.zip(b.sketch).map(|(x, y)| x.similarity(&y));
    let exact = (a.shingles.as_ref().zip(b.shingles.as_ref())).map(|(x, y)| x.similarity(y));
    let mut out = io::stdout().lock();
    if args.json {
        let mut v = json!({
            "a": side_json(&a, args.top), "b": side_json(&b, args.top),
            "differ": differ_json(&a, &b, args.top),
            "distance": distance, "jaccard": jaccard, "jaccard_exact": exact, "k": judge.rule.k,
            "near_duplicates": decision.accepted(),
        });
        if let (Some(v), Value::Object(more)) =
            (v.as_object_mut(), verdict::json(&judge, decision, distance))
        {
            v.extend(more);
        }
        writeln!(out, "{v}")?;
    } else {
        for (label, s) in [("A", &a), ("B", &b)] {
            write_side(&mut out, label, s, args.top)?;
        }
        write_differ(&mut out, &a, &b, args.top)?;
        writeln!(out, "Hamming distance: {distance} of 64 bits")?;
        match jaccard {
            Some(j) => writeln!(out, "Jaccard estimate (shingle sketches): {j:.3}")?,
            None => writeln!(
                out,
                "Jaccard estimate: - (a document without a sketch: imported as a fingerprint, or too short)"
            )?,
        }
        if let Some(j) = exact {
            writeln!(
                out,
                "Jaccard of the texts' shingles, exactly: {j:.3} (cleaned, or whole when lower: what a dedup of files decides a pair by near its threshold, or of a text the cleaner left much of out)"
            )?;
        }
        writeln!(out, "{}", verdict::line(&judge, decision, distance))?;
    }
    Ok(if decision.accepted() { 0 } else { 1 })
}

/// The two sides, and the store when there is one: needed for ids; for files and texts,
/// the store at `db` if one opens (its rule judges them).
fn sides(db: &Path, args: &Args) -> Result<(Side, Side, Option<Store>)> {
    if args.files || args.text {
        let f = Fingerprinter::new();
        let a = side(&f, &args.a, args.files, args.title_a.as_deref())?;
        let b = side(&f, &args.b, args.files, args.title_b.as_deref())?;
        return Ok((a, b, open_for_reading(db).ok()));
    }
    if args.title_a.is_some() || args.title_b.is_some() {
        anyhow::bail!(
            "--title-a and --title-b title the texts of --files or --text; a stored document's \
             fingerprint already holds its title"
        );
    }
    let store = open_for_reading(db)?;
    let get = |id: &str| -> Result<Side> {
        let d = store
            .get(id)?
            .with_context(|| format!("no document with id {id:?} in {}", db.display()))?;
        Ok(Side {
            name: d.id.clone(),
            fp: d.fingerprint(),
            sketch: d.sketch,
            main_sketch: None,
            explained: None,
            shingles: None,
            weak_bits: None,
        })
    };
    Ok((get(&args.a)?, get(&args.b)?, Some(store)))
}

/// The rule of the verdict: the store's for `--k`/`--verify` ([`Store::rule`]: its mode's
/// given neither); without a store, within `--k` (default 3), verified with `--verify`.
fn judge<'a>(store: Option<&'a Store>, args: &Args) -> Judge<'a> {
    let Some(store) = store else {
        let k = args.k.unwrap_or(3);
        let rule = match args.verify {
            Some(t) => MatchRule::verified(k, t),
            None => MatchRule::within(k),
        };
        return Judge {
            rule,
            mode: None,
            layout: None,
        };
    };
    let by_mode = args.k.is_none() && args.verify.is_none();
    Judge {
        rule: store.rule(Rule::options(args.k, args.verify)),
        mode: by_mode.then(|| store.quality()),
        layout: Some(store.layout()),
    }
}

/// A side from a file (`is_file`; a JSONL file's record read as `import` reads it) or a
/// text, titled `title` when given (over a file's own title).
fn side(f: &Fingerprinter, arg: &str, is_file: bool, title: Option<&str>) -> Result<Side> {
    if !is_file {
        return text_side(f, "(text)".into(), (title, arg), None);
    }
    let record = input::read_record(Path::new(arg), &FieldArgs::default().fields())?;
    if let Some(fp) = record.fp {
        // A precomputed fingerprint, stored as given.
        return Ok(Side {
            name: arg.to_owned(),
            fp,
            sketch: record.restore.and_then(|r| r.sketch),
            main_sketch: None,
            explained: None,
            shingles: None,
            weak_bits: None,
        });
    }
    let title = title.map(str::to_owned).or(record.title);
    let text = record.text.unwrap_or_default();
    text_side(
        f,
        arg.to_owned(),
        (title.as_deref(), &text),
        record.left_out.as_deref(),
    )
}

/// The shingles a dedup of files compares a text by: as the sketch sees them, and its
/// whole text's too (with what a page's reader `left_out`) when the fingerprint misses
/// much of it ([`is_partial`], by the text's analysis `a`).
fn shingles_of(
    f: &Fingerprinter,
    (title, text): (Option<&str>, &str),
    left_out: Option<&str>,
    a: Option<&Analysis>,
) -> ShingleSets {
    let partial = a.is_some_and(|a| is_partial(f, a, left_out));
    f.shingle_sets(title, text, partial.then(|| left_out.unwrap_or("")))
}

/// A side named `name` from its title and text (and what a page's reader left out of it).
fn text_side(
    f: &Fingerprinter,
    name: String,
    (title, text): (Option<&str>, &str),
    left_out: Option<&str>,
) -> Result<Side> {
    let explained =
        explain(f, title, text).with_context(|| format!("cannot fingerprint {name}"))?;
    // One analysis for the sketches a store keeps and for whether the text is partial.
    let page = analyze_page(f, title, text, left_out).ok();
    let shingles = shingles_of(f, (title, text), left_out, page.as_ref());
    Ok(Side {
        name,
        fp: explained.fingerprint,
        sketch: page.as_ref().and_then(|a| a.sketch),
        main_sketch: page.as_ref().and_then(|a| a.main_sketch),
        weak_bits: page.and_then(|a| a.weak_bits),
        explained: Some(explained),
        shingles: Some(shingles),
    })
}

/// Prints what drove one text's fingerprint (`fingerprint --explain`).
pub fn print_one(out: &mut impl Write, e: &Explanation, top: usize) -> io::Result<()> {
    let s = Side {
        name: "(text)".into(),
        fp: e.fingerprint,
        sketch: None,
        main_sketch: None,
        explained: Some(e.clone()),
        shingles: None,
        weak_bits: None,
    };
    write_side(out, "fingerprint", &s, top)
}

fn write_side(out: &mut impl Write, label: &str, s: &Side, top: usize) -> io::Result<()> {
    writeln!(
        out,
        "{label}: {} fp {}",
        output::escape_field(&s.name),
        s.fp
    )?;
    let Some(e) = &s.explained else {
        return writeln!(
            out,
            "  (text not stored: give it with --files or --text for its lines and features)"
        );
    };
    if let Some(t) = &e.title {
        writeln!(out, "  title: {}", output::escape_field(t))?;
    }
    let kept = e.lines.iter().filter(|(_, w)| *w > 0.0).count();
    writeln!(
        out,
        "  lines ({kept} of {} kept; weight, line):",
        e.lines.len()
    )?;
    for (line, w) in &e.lines {
        let mark = if *w > 0.0 {
            format!("{w:.2}")
        } else {
            "drop".into()
        };
        writeln!(out, "    {mark:>4}  {}", output::escape_field(line))?;
    }
    writeln!(
        out,
        "  top features ({top} of {}; share of the votes, token):",
        e.features.len()
    )?;
    for f in e.features.iter().take(top) {
        writeln!(out, "    {:5.1}%  {}", f.share * 100.0, f.token)?;
    }
    Ok(())
}

/// The features of `a` not in `b`, heaviest first, at most `top`.
fn only_in<'a>(
    a: &'a Explanation,
    b: &Explanation,
    top: usize,
) -> Vec<&'a simstore::text::explain::ExplainedFeature> {
    let theirs: HashSet<u64> = b.features.iter().map(|f| f.hash).collect();
    a.features
        .iter()
        .filter(|f| !theirs.contains(&f.hash))
        .take(top)
        .collect()
}

fn write_differ(out: &mut impl Write, a: &Side, b: &Side, top: usize) -> io::Result<()> {
    let (Some(x), Some(y)) = (&a.explained, &b.explained) else {
        return Ok(());
    };
    for (label, from, other) in [("A", x, y), ("B", y, x)] {
        let only = only_in(from, other, top);
        let list: Vec<String> = only
            .iter()
            .map(|f| format!("{} ({:.1}%)", f.token, f.share * 100.0))
            .collect();
        writeln!(
            out,
            "features only in {label}: {}",
            if list.is_empty() {
                "none".into()
            } else {
                list.join(", ")
            }
        )?;
    }
    Ok(())
}

fn side_json(s: &Side, top: usize) -> Value {
    let mut v = json!({ "name": s.name, "fp": s.fp.to_string() });
    if let Some(e) = &s.explained {
        v["title"] = json!(e.title);
        v["lines"] = e
            .lines
            .iter()
            .map(|(l, w)| json!({ "line": l, "weight": w }))
            .collect();
        v["features"] = e
            .features
            .iter()
            .take(top)
            .map(|f| json!({ "token": f.token, "share": f.share, "vote": f.vote }))
            .collect();
    }
    v
}

fn differ_json(a: &Side, b: &Side, top: usize) -> Value {
    let (Some(x), Some(y)) = (&a.explained, &b.explained) else {
        return Value::Null;
    };
    let tokens = |fs: Vec<&simstore::text::explain::ExplainedFeature>| -> Vec<String> {
        fs.iter().map(|f| f.token.clone()).collect()
    };
    json!({ "only_in_a": tokens(only_in(x, y, top)), "only_in_b": tokens(only_in(y, x, top)) })
}
