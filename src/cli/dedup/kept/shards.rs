//! The Parquet shards `dedup --output` writes: one `.parquet` file, or a directory of
//! shards of a bounded number of rows, written beside the target and renamed at the end
//! (into an existing empty directory — a mount point, say, which cannot be replaced —
//! written in a partial directory inside it and moved into it at the end).

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression as Codec;
use parquet::file::properties::WriterProperties;

use super::super::shards::is_parquet;

/// About how many encoded bytes a row group of the output holds before it is written out:
/// the writer holds one row group in memory, and a shard of a million rows in one would
/// hold the kept texts of a whole shard.
const ROW_GROUP_BYTES: usize = 32 << 20;

/// Where pass 2 writes: `--output` a `.parquet` file (one shard), or a directory of shards
/// `part-00000.parquet`, ... of at most `shard_rows` rows.
pub(in crate::cli::dedup) struct Shards {
    /// The final path, and the directory the shards are written to before it is renamed.
    target: PathBuf,
    partial: PathBuf,
    single: bool,
    /// The target is an existing directory, filled from a partial one inside it.
    fill: bool,
    schema: SchemaRef,
    props: WriterProperties,
    shard_rows: usize,
    writer: Option<ArrowWriter<File>>,
    rows_in_shard: usize,
    shards: usize,
}

impl Shards {
    /// Checks that `output` can be written (a new or empty directory, or a `.parquet` file
    /// in an existing directory), before anything is read.
    pub(in crate::cli::dedup) fn check(output: &Path) -> Result<()> {
        if is_parquet(output) {
            // Written beside and renamed over: only a new or regular file may be there.
            if fs::metadata(output).is_ok_and(|m| !m.is_file()) {
                bail!(
                    "--output {}: not a regular file; Parquet output goes to a new or regular \
                     FILE.parquet, or a directory of shards",
                    output.display()
                );
            }
            return crate::cli::outfile::OutFile::check(output);
        }
        crate::cli::outfile::remove_stale(output);
        match fs::read_dir(output).map(|mut d| d.next().is_none()) {
            Ok(true) => Ok(()),
            Ok(false) => bail!(
                "--output {}: the directory is not empty; give a new (or empty) directory for \
                 the Parquet shards, or a FILE.parquet",
                output.display()
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let parent = output.parent().filter(|p| !p.as_os_str().is_empty());
                match parent.is_none_or(Path::is_dir) {
                    true => Ok(()),
                    false => bail!(
                        "--output {}: its directory does not exist",
                        output.display()
                    ),
                }
            }
            Err(_) => bail!(
                "--output {}: not a directory; give a new directory for the Parquet shards, or \
                 a FILE.parquet",
                output.display()
            ),
        }
    }
}

impl Shards {
    /// Starts writing kept rows of `schema` to `output` (see [`Shards::check`]), compressed
    /// by `compression`.
    pub(in crate::cli::dedup) fn create(
        output: &Path,
        schema: SchemaRef,
        compression: Codec,
        shard_rows: usize,
    ) -> Result<Self> {
        let single = is_parquet(output);
        // A link to a directory or file stays a link: what it names is replaced.
        let target = crate::cli::outfile::final_target(output)?;
        // Named as a partial output, so that one a killed run leaves is removed later.
        let fill = !single && target.is_dir();
        let partial = match (single, fill) {
            (true, _) => crate::cli::outfile::scratch_beside(&target)?
                .into_temp_path()
                .keep()
                .context("cannot create the output")?,
            (false, true) => {
                // What killed runs left beside it goes too, as when the shards go beside.
                target.parent().map(crate::cli::outfile::remove_stale);
                crate::cli::outfile::partial_dir_beside(&target.join("shards"))?
            }
            (false, false) => crate::cli::outfile::partial_dir_beside(&target)?,
        };
        Ok(Shards {
            target,
            partial,
            single,
            fill,
            schema,
            props: WriterProperties::builder()
                .set_compression(compression)
                .build(),
            shard_rows: shard_rows.max(1),
            writer: None,
            rows_in_shard: 0,
            shards: 0,
        })
    }

    /// Writes the rows of `batch` (of the output's schema).
    pub(in crate::cli::dedup) fn push(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut at = 0;
        while at < batch.num_rows() {
            if self.writer.is_none() || (!self.single && self.rows_in_shard >= self.shard_rows) {
                self.next_shard()?;
            }
            let room = match self.single {
                true => batch.num_rows() - at,
                false => (self.shard_rows - self.rows_in_shard).min(batch.num_rows() - at),
            };
            let w = self.writer.as_mut().expect("a shard is open");
            w.write(&batch.slice(at, room))
                .context("cannot write the output")?;
            if w.in_progress_size() >= ROW_GROUP_BYTES {
                w.flush().context("cannot write the output")?;
            }
            self.rows_in_shard += room;
            at += room;
        }
        Ok(())
    }

    /// Closes the open shard (if any) and opens the next.
    fn next_shard(&mut self) -> Result<()> {
        self.close_shard()?;
        let path = match self.single {
            true => self.partial.clone(),
            false => self
                .partial
                .join(format!("part-{:05}.parquet", self.shards)),
        };
        let file =
            File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        let w = ArrowWriter::try_new(file, self.schema.clone(), Some(self.props.clone()))
            .context("cannot start a Parquet shard")?;
        self.writer = Some(w);
        self.rows_in_shard = 0;
        self.shards += 1;
        Ok(())
    }

    fn close_shard(&mut self) -> Result<()> {
        if let Some(w) = self.writer.take() {
            let file = w.into_inner().context("cannot finish a Parquet shard")?;
            file.sync_all().context("cannot sync the output")?;
        }
        Ok(())
    }

    /// Ends the output: the last shard closed (an empty output still gets one shard, so
    /// its schema is kept), then put in place; returns the number of shards.
    pub(in crate::cli::dedup) fn finish(mut self) -> Result<usize> {
        if self.writer.is_none() {
            self.next_shard()?;
        }
        self.close_shard()?;
        match self.fill {
            true => self.move_into_target()?,
            false => fs::rename(&self.partial, &self.target)
                .with_context(|| format!("cannot write {}", self.target.display()))?,
        }
        self.partial = PathBuf::new();
        Ok(self.shards)
    }

    /// Moves the shards from the partial directory inside the target into it, in order,
    /// and removes the partial one.
    fn move_into_target(&self) -> Result<()> {
        let mut names: Vec<_> = fs::read_dir(&self.partial)?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<std::io::Result<_>>()?;
        names.sort();
        for name in names {
            let to = self.target.join(&name);
            fs::rename(self.partial.join(&name), &to)
                .with_context(|| format!("cannot write {}", to.display()))?;
        }
        File::open(&self.target)?.sync_all()?;
        fs::remove_dir(&self.partial)
            .with_context(|| format!("cannot remove {}", self.partial.display()))
    }
}

impl Drop for Shards {
    /// A run that failed leaves no partial output.
    fn drop(&mut self) {
        if self.partial.as_os_str().is_empty() {
            return;
        }
        let _ = match self.single {
            true => fs::remove_file(&self.partial),
            false => fs::remove_dir_all(&self.partial),
        };
    }
}
