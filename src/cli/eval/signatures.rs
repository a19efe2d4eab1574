//! `eval --signatures FILE`: every document's fingerprint, sketch and weak bits as JSON
//! lines, for analyses outside simstore (`scripts/sketch_bands.py` simulates candidate
//! generators on them).

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::json;
use simstore::tools::eval::Signature;

use crate::cli::outfile::OutFile;

/// Writes one line per fingerprinted document, in id order: `{"id", "fp" (hex), "sketch"
/// (128 hex digits, or null), "weak": [[bit, margin], ...] (least certain first)}`.
pub(super) fn write(path: &Path, fps: &HashMap<String, Option<Signature>>) -> Result<()> {
    let mut ids: Vec<&String> = fps.keys().collect();
    ids.sort();
    let mut out = BufWriter::new(OutFile::create(path)?);
    for id in ids {
        let Some(sig) = &fps[id] else { continue };
        let sketch = sig.sketch.map(|s| crate::cli::output::hex(&s.0));
        let weak: Vec<[u32; 2]> = sig
            .weak_bits
            .map(|w| w.iter().map(|(b, m)| [b, u32::from(m)]).collect())
            .unwrap_or_default();
        let line = json!({"id": id, "fp": sig.fp.to_string(), "sketch": sketch, "weak": weak});
        writeln!(out, "{line}").with_context(|| format!("cannot write {}", path.display()))?;
    }
    out.into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("cannot write {}", path.display()))?
        .finish()
}
