//! Command-line parsing, dispatch and the exit-code policy.
//!
//! Exit codes follow ripgrep: 0 = success (for `query`: some match), 1 = nothing found
//! (or, for `import`, some records failed), 2 = error. A closed stdout (broken pipe) is
//! not an error.

mod backup;
mod bench;
mod check;
mod compact;
mod complete;
mod copy;
mod dedup;
mod delete;
mod eval;
mod expire;
mod explain;
mod export;
mod fingerprint;
mod get;
mod hints;
mod import;
mod init;
mod input;
mod man;
mod outfile;
mod output;
mod parquet_out;
mod query;
mod relayout;
mod repair;
mod restore;
mod retention;
mod rule;
#[cfg(feature = "server")]
mod serve;
mod stats;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use simstore::index::layout::MAX_K;
use simstore::{Store, StoreBuilder};

const EXAMPLES: &str = "\
Examples:
  simstore import data/sample.jsonl            import documents (creates ./simstore.db)
  simstore query --k 3 \"some text to look up\"   near-duplicates of a text
  simstore query --fp 0f3a5c7e9b1d2f40 --json  near-duplicates of a fingerprint, as JSON
  simstore query --batch queries.jsonl         one JSON line of matches per input line
  simstore import --dedup pages.jsonl          store only new pages; print the duplicates
  simstore dedup --k 3 pages.jsonl             near-duplicate clusters of files (no store)
  simstore dedup corpus.jsonl.gz --text-field content -o kept.jsonl.gz   keep one record per cluster
  simstore fingerprint --file page.txt         print a text's fingerprint
  simstore explain --files a.html b.html       why two pages are (not) near duplicates
  simstore --db /data/pages.db stats           what a store holds and how it is laid out
  simstore export --format csv -o docs.csv     every stored document (id, fp, title, url, ...)
  simstore completions bash > simstore.bash    shell completions (also zsh, fish)
  simstore man | man -l -                      the manual page";

/// `serve`'s line of the examples, in a build with the `server` feature only.
const SERVE_EXAMPLE: &str = "
  simstore serve --port 7171                   HTTP JSON API for crawlers (prints its address)";

/// Colour and the environment, under `--help`.
const ENVIRONMENT: &str = "
Environment:
  SIMSTORE_DB        the store, when --db is not given
  NO_COLOR=1         no styling in help and error messages (on a terminal they are styled;
                     simstore's own output is never coloured)
  CLICOLOR_FORCE=1   styled help and errors even when not on a terminal";

/// The text under `--help`: the examples, then the environment.
fn after_help() -> String {
    format!("{}\n{ENVIRONMENT}", examples())
}

/// The examples of `--help` (and of the man page).
fn examples() -> String {
    let serve = if cfg!(feature = "server") {
        SERVE_EXAMPLE
    } else {
        ""
    };
    format!("{EXAMPLES}{serve}")
}

/// simstore: a persistent store of 64-bit SimHash fingerprints for near-duplicate detection.
#[derive(Debug, Parser)]
#[command(name = "simstore", version, about, after_help = after_help())]
pub struct Cli {
    /// The store directory.
    #[arg(
        long,
        global = true,
        env = "SIMSTORE_DB",
        default_value = "simstore.db"
    )]
    db: PathBuf,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create an empty store (import creates a default one too).
    Init(init::Args),
    /// Import documents or precomputed fingerprints (JSONL or text files).
    Import(import::Args),
    /// Find the near duplicates of a text or fingerprint (by the store's quality mode, or within --k).
    Query(query::Args),
    /// Print fingerprints of texts without storing them.
    Fingerprint(fingerprint::Args),
    /// Show a stored document.
    Get(get::Args),
    /// Why two documents are (or are not) near duplicates: lines, features, distance.
    Explain(explain::Args),
    /// Write every stored document (JSONL or CSV), in seq or id order; resumable.
    Export(export::Args),
    /// Write every stored id, one per line (`export --ids-only`).
    Ids(export::Args),
    /// Delete documents by id.
    Delete(delete::Args),
    /// Delete the documents stored (or last seen) before a time, in atomic batches.
    Expire(expire::Args),
    /// Show or change the retention policy: automatic expiry, last-seen tracking.
    Retention(retention::Args),
    /// Back the store up while it is in use (incremental, into a backup directory).
    Backup(backup::Args),
    /// Restore a backup as a new store.
    Restore(restore::Args),
    /// Give back the disk space deletes, replacements and expiries left behind.
    Compact(compact::Args),
    /// Show what a store holds and how it is laid out.
    Stats(stats::Args),
    /// Verify that every document is in every table and nothing else is.
    Check(check::Args),
    /// All near-duplicate pairs (of the store or of input files), clustered without chaining.
    Dedup(dedup::Args),
    /// Rebuild tables and ids from the documents.
    Repair(repair::Args),
    /// Copy the documents into another store (a local one or a cluster), rebuilding tables.
    Copy(copy::Args),
    /// Rebuild the tables under a layout chosen for the store's size (or given).
    Relayout(relayout::Args),
    /// Detection quality on labelled pairs: precision, recall and F1 for k = 0..8, or of the
    /// quality modes (--quality, --modes).
    Eval(eval::Args),
    /// Macro benchmark: import, latency, throughput and recall against two baselines.
    Bench(bench::Args),
    /// Print a shell completion script (bash, zsh or fish) to stdout.
    Completions(complete::Args),
    /// Print the manual page (roff) to stdout: `simstore man | man -l -`.
    Man(man::Args),
    /// Serve the store over HTTP (JSON API for crawlers in other processes).
    #[cfg(feature = "server")]
    Serve(serve::Args),
}

/// What a subcommand reports: 0 success, 1 nothing found / partial failure.
pub type Code = u8;

/// Parses the arguments, runs the subcommand and turns its outcome into an exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Init(a) => init::run(&cli.db, a),
        Command::Import(a) => import::run(&cli.db, a),
        Command::Query(a) => query::run(&cli.db, a),
        Command::Fingerprint(a) => fingerprint::run(a),
        Command::Get(a) => get::run(&cli.db, a),
        Command::Explain(a) => explain::run(&cli.db, a),
        Command::Export(a) => export::run(&cli.db, a),
        Command::Ids(a) => export::run_ids(&cli.db, a),
        Command::Delete(a) => delete::run(&cli.db, a),
        Command::Expire(a) => expire::run(&cli.db, a),
        Command::Retention(a) => retention::run(&cli.db, a),
        Command::Backup(a) => backup::run(&cli.db, a),
        Command::Restore(a) => restore::run(a),
        Command::Compact(a) => compact::run(&cli.db, a),
        Command::Stats(a) => stats::run(&cli.db, a),
        Command::Check(a) => check::run(&cli.db, a),
        Command::Dedup(a) => dedup::run(&cli.db, a),
        Command::Repair(a) => repair::run(&cli.db, a),
        Command::Bench(a) => bench::run(a),
        Command::Completions(a) => complete::run(a),
        Command::Man(a) => man::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Relayout(a) => relayout::run(&cli.db, a),
        Command::Copy(a) => copy::run(&cli.db, a),
        #[cfg(feature = "server")]
        Command::Serve(a) => serve::run(&cli.db, a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(io::stderr(), "error: {}", hints::message(&e));
            ExitCode::from(2)
        }
    }
}

/// Whether `e` comes from a write into a closed pipe (`| head`): an I/O error anywhere in
/// its chain, on its own or as the library's [`simstore::Error::Io`] (a callback's write
/// error, handed back through a store scan), whose kind is `BrokenPipe`. Every command
/// that writes to stdout returns such errors as they are, and [`main`] exits 0 on them
/// without a word.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    let broken = |io: &io::Error| io.kind() == io::ErrorKind::BrokenPipe;
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>().is_some_and(broken)
            || matches!(c.downcast_ref::<simstore::Error>(), Some(simstore::Error::Io(io)) if broken(io))
    })
}

/// The parser of `--k-max`: 1 to [`MAX_K`] (0 would find only identical fingerprints).
fn k_max_parser() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..=i64::from(MAX_K))
}

/// Opens an existing store for writing.
fn open_existing(db: &Path) -> Result<Store> {
    Store::builder(db)
        .create_if_missing(false)
        .open()
        .with_context(|| format!("cannot open {}", db.display()))
}

/// Opens an existing store for reading: always read-only, so a reader never takes the
/// writer's lock (a long `query --batch` does not keep `import` or `serve` out) and never
/// runs recovery work; it sees the store as of opening, a writer's log included.
fn open_for_reading(db: &Path) -> Result<Store> {
    open_for_reading_with(db, None)
}

/// [`open_for_reading`] with a query's probes on `probe_threads` threads at once (0: in
/// turn; `None`: the automatic default, `RocksOptions::probe_threads`).
fn open_for_reading_with(db: &Path, probe_threads: Option<usize>) -> Result<Store> {
    with_probe_threads(Store::builder(db).read_only(true), probe_threads)
        .open()
        .with_context(|| format!("cannot open {}", db.display()))
}

/// `--probe-threads N`'s value: at most `RocksOptions::MAX_PROBE_THREADS` (a query reads
/// fewer spans; a store starts no more threads than that).
fn probe_threads_arg(s: &str) -> std::result::Result<usize, String> {
    let max = simstore::RocksOptions::MAX_PROBE_THREADS;
    match s.parse::<usize>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!(
            "{s:?} is not a number of threads from 0 to {max} (0: one probe after another)"
        )),
    }
}

/// `builder` with `--probe-threads N` when given (else the store's automatic default).
fn with_probe_threads(builder: StoreBuilder, probe_threads: Option<usize>) -> StoreBuilder {
    match probe_threads {
        Some(n) => builder.rocksdb(simstore::RocksOptions::new().probe_threads(n)),
        None => builder,
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// `serve` is compiled, and offered, only with the `server` feature (run by
    /// `scripts/test` with `--no-default-features --features cli` too).
    #[test]
    fn serve_is_a_subcommand_exactly_when_the_server_feature_is_on() {
        let serve = super::Cli::command().find_subcommand("serve").is_some();
        assert_eq!(serve, cfg!(feature = "server"));
        let help = super::examples();
        assert_eq!(help.contains("simstore serve"), cfg!(feature = "server"));
    }
}
