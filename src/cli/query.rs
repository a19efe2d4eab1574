//! `simstore query`: the near duplicates of a text or fingerprint (the store's quality
//! mode's rule, or within `--k`, or verified with `--verify`).

use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use rayon::prelude::*;
use serde_json::{Value, json};
use simstore::input::reader::{self, Fields, Record};
use simstore::{Fingerprint, Match, MatchRule, QueryKey, Rule, Sketch, Store};

use super::input::{self, FieldArgs, Inputs, Place, Raw};
use super::{Code, open_for_reading_with, output, rule};

/// Arguments of `simstore query`.
#[derive(Debug, clap::Args)]
#[command(
    group = clap::ArgGroup::new("what").required(true).args(["text", "file", "fp", "batch"]),
    after_help = "Exit status: 0 some match, 1 no match, 2 error.\n\
                  Batch lines: a JSONL record {\"id\"?, \"title\"?, \"text\"?, \"fp\"?} or a bare 16-hex-digit fingerprint;\n\
                  output: one line {\"query\": <id or line number>, \"matches\": [{\"id\", \"distance\", \"fp\", \"title\"?, \"url\"?, \"similarity\"?}]} per input line (\"similarity\": the sketch similarity the rule checked)."
)]
pub struct Args {
    /// Probe each query's tables on N threads at once (0: one after another). Default:
    /// automatic — one after another while the probes are fast (a warm page cache), on 8
    /// threads from the first probe that waits for the disk until a query's probes no
    /// longer read from it, so a cold query waits about one disk read instead of one per
    /// table.
    #[arg(long, value_name = "N", value_parser = crate::cli::probe_threads_arg)]
    probe_threads: Option<usize>,
    /// Largest Hamming distance to report (at most the store's k_max unless --exhaustive;
    /// at most 64). Without --k and --verify, the store's quality mode decides (see
    /// `simstore init --quality`): its tables' k_max exactly, and candidates within 12 bits
    /// (high: 14) in its tables' spans or sharing a band of the query's sketch, kept when
    /// their shingle sketches agree with the query text's (≥ 0.3; a query by --fp, or a
    /// stored document without text, matches within k_max only). With --k alone: every
    /// stored document within K, nothing else.
    #[arg(long = "k", short, value_name = "K", value_parser = clap::value_parser!(u32).range(0..=64))]
    k: Option<u32>,
    /// Two-stage query: keep only matches within --k (default: the store's k_max) whose
    /// shingle sketch is at least T similar to the query text's (estimated Jaccard, 0..1;
    /// 0.4 is a good start). Needs a text query (not --fp); best on a store made with a
    /// larger --k-max (e.g. `init --k-max 8`) queried with that --k. See docs/quality.md.
    /// Each match shows the similarity checked (a last column, or "similarity" in JSON),
    /// as it does under the quality mode's rule.
    #[arg(long, value_name = "T")]
    verify: Option<f64>,
    /// Print matches as JSON lines.
    #[arg(long)]
    json: bool,
    /// Report at most N matches per query (the nearest ones).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    limit: Option<u64>,
    /// Scan every stored document instead of the tables: exact for any k, but slow.
    #[arg(long)]
    exhaustive: bool,
    /// In batch mode, leave out the match whose id equals the query record's id.
    #[arg(long)]
    exclude_self: bool,
    /// Title of the query text (weighs 2x per word, at most a fifth of the body, as when stored).
    #[arg(long)]
    title: Option<String>,
    /// Query with this file: a text, or an HTML page (.html/.htm: title and main text); gzip'd or not.
    #[arg(long)]
    file: Option<PathBuf>,
    /// Query with a fingerprint (16 hex digits).
    #[arg(long)]
    fp: Option<String>,
    /// Query with every record of FILE ('-' = stdin): JSONL lines, or the pages of a WARC
    /// file, a directory, an HTML or text file (gzip'd or not); writes JSON lines.
    #[arg(long, value_name = "FILE")]
    batch: Option<String>,
    #[command(flatten)]
    fields: FieldArgs,
    /// Query with this text.
    text: Option<String>,
}

/// Runs the query; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    if args.batch.is_none()
        && let Some(flag) = args.fields.given()
    {
        anyhow::bail!("{flag} applies to the JSONL records of --batch");
    }
    let store = open_for_reading_with(db, args.probe_threads)?;
    let rule = store.rule(Rule::options(args.k, args.verify));
    if !args.exhaustive && rule.k > store.layout().k_max() {
        // Fail before reading any input, with the library's message.
        store.layout().tables_for_k(rule.k)?;
    }
    if let Some(t) = args.verify {
        if !rule::is_similarity(t) {
            anyhow::bail!("--verify {t}: the threshold is a similarity between 0 and 1");
        }
        if args.fp.is_some() {
            anyhow::bail!(
                "--verify compares texts: give the query as a text, --file or --batch, not --fp"
            );
        }
    }
    let ask = Ask { args: &args, rule };
    if let Some(batch) = &args.batch {
        return run_batch(&store, batch, &ask);
    }
    let f = store.fingerprinter();
    // The sketch only when the rule verifies, from the same analysis as the fingerprint.
    // A page read from a file keeps what its reader left out, as `import` stores it.
    let analyze = |mut record: Record| -> Result<QueryKey> {
        record.title = args.title.clone().or(record.title);
        Ok(match rule.min_similarity {
            Some(_) => record.query_key(f)?,
            None => QueryKey::from(record.fingerprint(f)?),
        })
    };
    let key = match (&args.fp, &args.file, &args.text) {
        (Some(hex), _, _) => QueryKey::from(hex.parse::<Fingerprint>()?),
        (_, Some(file), _) => analyze(input::read_page(file)?)?,
        (_, _, Some(text)) => analyze(Record::of_text("", text.as_str()))?,
        _ => unreachable!("clap requires one of text, --file, --fp, --batch"),
    };
    let matches = refine(accepted(&store, &key, &ask)?, key.sketch, &ask, None);
    print_matches(&matches, &ask, key.sketch.is_some())?;
    if !args.json && matches.is_empty() {
        eprintln!("{}", nothing_found(&rule, key.fp, key.sketch.is_some()));
    }
    Ok(if matches.is_empty() { 1 } else { 0 })
}

/// How every query of a run is answered: the rule, and the options applied after it.
struct Ask<'a> {
    args: &'a Args,
    rule: MatchRule,
}

/// Prints the matches of one query: JSON lines, or tab-separated lines (under a header on
/// a terminal) ending with the similarity checked when the rule verified a query with a
/// sketch ("-" for a match that could not be verified).
fn print_matches(matches: &[Verified], ask: &Ask, sketched: bool) -> Result<()> {
    let stdout = io::stdout();
    let similarity = sketched && ask.rule.min_similarity.is_some();
    let mut out = BufWriter::new(stdout.lock());
    if !ask.args.json && !matches.is_empty() && stdout.is_terminal() {
        let column = if similarity { "\tsimilarity" } else { "" };
        writeln!(out, "{}{column}", output::MATCH_HEADER)?;
    }
    for (m, s) in matches {
        if ask.args.json {
            writeln!(out, "{}", verified_json(m, *s))?;
        } else if similarity {
            let s = s.map_or_else(|| "-".to_owned(), |s| format!("{s:.3}"));
            writeln!(out, "{}\t{s}", output::match_line(m))?;
        } else {
            writeln!(out, "{}", output::match_line(m))?;
        }
    }
    Ok(out.flush()?)
}

/// What a query that found nothing says on stderr, naming the rule it applied.
fn nothing_found(rule: &MatchRule, fp: Fingerprint, sketched: bool) -> String {
    let applied = if sketched {
        Some(*rule)
    } else {
        rule.without_sketch()
    };
    match applied {
        Some(r) if r.min_similarity.is_none() => {
            format!("no stored document within distance {} of {fp}", r.k)
        }
        Some(r) => format!("no near duplicate of {fp} ({})", rule::describe(&r)),
        None => format!("no near duplicate of {fp}: the query has no words for a sketch"),
    }
}

/// A match and, when the rule verified it, the similarity of its sketch to the query's.
type Verified = (Match, Option<f64>);

/// A match as JSON, with its `"similarity"` when verified.
fn verified_json(m: &Match, similarity: Option<f64>) -> Value {
    let mut v = output::match_json(m);
    if let Some(s) = similarity {
        v["similarity"] = json!(s);
    }
    v
}

/// The matches of `key` that the rule accepts: from the tables (and the rule's probes), or
/// with `--exhaustive` from every stored document within the rule's reach.
fn accepted(store: &Store, key: &QueryKey, ask: &Ask) -> simstore::Result<Vec<Match>> {
    let rule = &ask.rule;
    if !ask.args.exhaustive {
        return store.query(*key, rule);
    }
    let mut all = store.query(key.fp, Rule::Exhaustive(rule.reach.max(rule.k)))?;
    let sketch = key.sketch.as_ref();
    all.retain(|m| rule.accepts(m.distance, sketch, m.doc.sketch.as_ref()));
    Ok(all)
}

/// The similarity the rule checked, `--exclude-self` and `--limit` applied to a query's
/// accepted matches.
fn refine(
    matches: Vec<Match>,
    sketch: Option<Sketch>,
    ask: &Ask,
    self_id: Option<&str>,
) -> Vec<Verified> {
    let mut matches: Vec<Verified> = matches
        .into_iter()
        .filter(|m| self_id != Some(m.doc.id.as_str()))
        .map(|m| {
            let s = rule::similarity(&ask.rule, sketch.as_ref(), m.doc.sketch.as_ref());
            (m, s)
        })
        .collect();
    if let Some(limit) = ask.args.limit {
        matches.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    }
    matches
}

/// One batch item's query: its name in the output, its id, and its fingerprint with (for
/// texts) its sketch and weak bits.
type Item = (Value, Option<String>, QueryKey);

/// Whether a batch query's text gets a shingle sketch (only a verifying rule compares
/// sketches).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SketchMode {
    /// Sketch the text (a record given by its fingerprint alone has none).
    Compute,
    /// No sketch.
    Skip,
}

/// Parses batch line (or record) number `line`: a bare fingerprint is named by its line
/// number, a record by its id (a JSONL record read by `fields`).
fn parse_item(
    store: &Store,
    line: u64,
    raw: Raw,
    fields: &Fields,
    sketch: SketchMode,
) -> Result<Item, String> {
    if let Raw::Json(bytes) = &raw {
        let trimmed = bytes.trim_ascii();
        if !trimmed.starts_with(b"{") {
            let text = reader::as_text(trimmed).map_err(|e| e.to_string())?;
            return match text.parse::<Fingerprint>() {
                Ok(fp) => Ok((json!(line), None, QueryKey::from(fp))),
                Err(e) => Err(format!(
                    "neither a JSON record ({{\"id\", \"text\"...}}) nor a fingerprint: {e}"
                )),
            };
        }
    }
    let record = input::to_record_with(raw, fields, line)?;
    let f = store.fingerprinter();
    let key = match sketch {
        SketchMode::Compute => record.query_key(f),
        SketchMode::Skip => record.fingerprint(f).map(QueryKey::from),
    }
    .map_err(|e| e.to_string())?;
    Ok((json!(record.id), Some(record.id), key))
}

/// A batch item's answer: the query's name and its matches, or an error message.
type Answer = Result<(Value, Vec<Verified>), String>;

/// The answers to a chunk of batch items: the table queries all in one
/// [`Store::query_batch`] (one pipelined round trip per node on Redis Cluster), unless
/// `--exhaustive`: then one scan per item, in parallel.
fn answer_chunk(
    store: &Store,
    items: Vec<(Place, Result<Item, String>)>,
    ask: &Ask,
) -> Vec<(Place, Answer)> {
    let rule = &ask.rule;
    // `matches`: those the rule accepted.
    let answer = |item: Item, matches: Vec<Match>| {
        let (query, id, key) = item;
        let sketch = key.sketch;
        let self_id = id.as_deref().filter(|_| ask.args.exclude_self);
        (query, refine(matches, sketch, ask, self_id))
    };
    if ask.args.exhaustive {
        return items
            .into_par_iter()
            .map(|(place, item)| {
                let answer = item.and_then(|item| {
                    let matches = accepted(store, &item.2, ask);
                    Ok(answer(item, matches.map_err(|e| e.to_string())?))
                });
                (place, answer)
            })
            .collect();
    }
    let queries: Vec<QueryKey> = items
        .iter()
        .filter_map(|(_, item)| item.as_ref().ok().map(|i| i.2))
        .collect();
    let mut found = store
        .query_batch(queries.iter().copied(), rule)
        .map_err(|e| e.to_string())
        .map(Vec::into_iter);
    items
        .into_iter()
        .map(|(place, item)| {
            let answer = item.and_then(|item| match &mut found {
                Ok(all) => Ok(answer(item, all.next().unwrap_or_default())),
                Err(e) => Err(e.clone()),
            });
            (place, answer)
        })
        .collect()
}

fn run_batch(store: &Store, path: &str, ask: &Ask) -> Result<Code> {
    let fields = ask.args.fields.fields();
    let mut inputs = Inputs::batch(&[path.to_owned()]);
    let mut out = BufWriter::new(io::stdout().lock());
    let (mut any_match, mut errors) = (false, 0u64);
    let sketch_mode = if ask.rule.min_similarity.is_some() {
        SketchMode::Compute
    } else {
        SketchMode::Skip
    };
    loop {
        let chunk = inputs.next_chunk(1024)?;
        if chunk.is_empty() {
            break;
        }
        let items: Vec<(Place, Result<Item, String>)> = chunk
            .into_par_iter()
            .map(|(place, raw)| {
                let line = place.number();
                let item = raw.and_then(|raw| parse_item(store, line, raw, &fields, sketch_mode));
                (place, item)
            })
            .collect();
        let answers = answer_chunk(store, items, ask);
        for (place, answer) in answers {
            match answer {
                Ok((query, matches)) => {
                    any_match |= !matches.is_empty();
                    let matches: Vec<Value> =
                        matches.iter().map(|(m, s)| verified_json(m, *s)).collect();
                    writeln!(out, "{}", json!({ "query": query, "matches": matches }))?;
                }
                Err(e) => {
                    errors += 1;
                    let skipped = match place.skipped() {
                        "record" => "query",
                        other => other,
                    };
                    eprintln!("error: {place}: {e}; {skipped} skipped");
                    writeln!(out, "{}", json!({ "query": place.number(), "error": e }))?;
                }
            }
        }
    }
    out.flush()?;
    Ok(if errors > 0 {
        2
    } else if any_match {
        0
    } else {
        1
    })
}
