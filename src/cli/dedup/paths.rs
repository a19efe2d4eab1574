//! Which paths a dedup of files may write: never an input, nor a file inside an input
//! directory (a dedup reads its inputs more than once, and the next run would read the
//! file as an input).

use std::path::Path;

use anyhow::Result;

use super::Args;

/// Refuses a `--clusters` or `--report` path that is an input or the `--output`, or cannot
/// be written (before anything is read).
pub(super) fn check_written(path: &Path, args: &Args) -> Result<()> {
    let output = args.output.iter().map(|o| o.to_string_lossy().into_owned());
    let inputs: Vec<String> = args.files.iter().cloned().chain(output).collect();
    if let Some(input) = input_holding(path, &inputs) {
        anyhow::bail!(
            "{} is {input} or inside it, an input or the --output: write the clusters or the \
             report elsewhere",
            path.display()
        );
    }
    crate::cli::outfile::OutFile::check(path)
}

/// The first of `inputs` that `path` (a file to be written) is, or is inside of (an input
/// directory, whose files a dedup reads): writing it would replace an input.
pub(super) fn input_holding<'a>(path: &Path, inputs: &'a [String]) -> Option<&'a str> {
    // A path that does not exist yet: its directory's canonical path and its name.
    let canonical = |p: &Path| {
        std::fs::canonicalize(p).ok().or_else(|| {
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
            Some(
                std::fs::canonicalize(parent.unwrap_or(Path::new(".")))
                    .ok()?
                    .join(p.file_name()?),
            )
        })
    };
    let target = canonical(path)?;
    inputs
        .iter()
        .map(String::as_str)
        .filter(|&f| f != "-")
        .find(|&f| {
            canonical(f.as_ref())
                .is_some_and(|c| c == target || (c.is_dir() && target.starts_with(&c)))
        })
}
