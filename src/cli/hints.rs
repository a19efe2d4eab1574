//! The command line's wording of the library's errors. The library says what is wrong and
//! which API mends it (`StoreBuilder::salvage`, `Store::relayout`); a user of the command
//! reads the subcommand to run instead (`simstore repair --salvage`, `simstore relayout`).

use std::fmt::Write as _;

use simstore::Error;

/// `e` and its context as `error: {e:#}` prints them (`context: cause`), where a library
/// error that names an API is worded for the command line instead.
pub(super) fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for (i, cause) in e.chain().enumerate() {
        if i > 0 {
            out.push_str(": ");
        }
        if let Some(e) = cause.downcast_ref::<Error>() {
            out.push_str(&for_the_command_line(e).unwrap_or_else(|| e.to_string()));
            // A library error's Display holds its whole story, its source's message
            // included (a backend's error): nothing follows it.
            break;
        }
        let _ = write!(out, "{cause}");
    }
    out
}

/// What a command-line user reads for `e`, where the library's message names an API: the
/// same facts, the subcommand to run. `None`: the library's message as it is.
fn for_the_command_line(e: &Error) -> Option<String> {
    Some(match e {
        Error::NotAStore { path, reason } => format!(
            "{} is not a simstore store ({reason}); give the path of a store (`--db`, \
             `dedup --against`), or create one with `simstore init`",
            path.display()
        ),
        Error::NoStore { path } => format!(
            "no store at {}; create one with `simstore init` (or `simstore import`, which \
             creates one)",
            path.display()
        ),
        Error::Corrupt(what) => {
            format!(
                "corrupt store: {}; run `simstore check` for a full report",
                commands(what)
            )
        }
        Error::KTooLarge { k, k_max } if *k > simstore::index::layout::MAX_K => format!(
            "k = {k} exceeds this store's k_max = {k_max}, and tables answer at most k = {}: \
             scan every document (`simstore query --exhaustive`)",
            simstore::index::layout::MAX_K
        ),
        Error::KTooLarge { k, k_max } => format!(
            "k = {k} exceeds this store's k_max = {k_max}: its tables only answer k <= {k_max} \
             exactly; rebuild them for k = {k} (`simstore relayout --k-max {k}`), or scan every \
             document (`simstore query --exhaustive`)"
        ),
        Error::BulkLoadFailed(why) => format!(
            "a bulk load failed midway ({why}); `simstore repair` recovers the store (so does \
             the next command that opens it for writing)"
        ),
        Error::FormatVersion {
            found, expected, ..
        } if found < expected => format!(
            "{e}; from the command line: `simstore --db NEW import FILES`, or `simstore export` \
             with the binary that wrote it, then `simstore --db NEW import` of its output"
        ),
        _ => {
            let text = e.to_string();
            let worded = commands(&text);
            return (worded != text).then_some(worded);
        }
    })
}

/// The APIs a library message may name, and the command that does the same.
const COMMANDS: [(&str, &str); 7] = [
    ("StoreBuilder::salvage", "`simstore repair --salvage`"),
    ("Store::check", "`simstore check`"),
    ("Store::repair", "`simstore repair`"),
    (
        "Store::backup makes one",
        "`simstore backup DEST` makes one",
    ),
    ("(list_backups(", "(`simstore backup "),
    (") lists them)", " --list` lists them)"),
    (
        "Store::for_each_doc into Store::insert_batch",
        "`simstore copy --to NEW`",
    ),
];

/// `text` with every API of [`COMMANDS`] it names replaced by its command.
fn commands(text: &str) -> String {
    (COMMANDS.iter()).fold(text.to_owned(), |t, (api, command)| t.replace(api, command))
}
