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
    if let Some(input) = crate::cli::outfile::input_holding(path, &inputs) {
        anyhow::bail!(
            "{} is {input} or inside it, an input or the --output: write the clusters or the \
             report elsewhere",
            path.display()
        );
    }
    crate::cli::outfile::OutFile::check(path)
}
