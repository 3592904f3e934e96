//! Writing a scenario's files: the output dir, CSV rows from serde structs, Markdown text.

use std::path::Path;

use serde::Serialize;

use crate::error::{Result, ScenarioError};

fn write_err(path: &Path, e: impl std::fmt::Display) -> ScenarioError {
    ScenarioError::Write {
        path: path.display().to_string(),
        cause: e.to_string(),
    }
}

/// Creates `dir` (and parents) and checks that a file can be written in it, before anything is
/// measured.
pub fn prepare_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
    let probe = dir.join(".bloomlab-write-probe");
    std::fs::write(&probe, b"probe").map_err(|e| write_err(dir, e))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Writes `rows` as CSV with a header from the struct's fields.
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    let mut w = csv::Writer::from_path(path).map_err(|e| write_err(path, e))?;
    for r in rows {
        w.serialize(r).map_err(|e| write_err(path, e))?;
    }
    w.flush().map_err(|e| write_err(path, e))?;
    Ok(())
}

/// Writes text.
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| write_err(path, e))
}

/// `x` with a fixed number of significant digits for tables.
pub fn sig(x: f64, digits: usize) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-4..6).contains(&mag) {
        return format!("{x:.*e}", digits.saturating_sub(1));
    }
    let decimals = (digits as i32 - 1 - mag).max(0) as usize;
    format!("{x:.decimals$}")
}

/// Nanoseconds shown in the unit that keeps them readable.
pub fn dur_ns(ns: f64) -> String {
    if !ns.is_finite() {
        "n/a".into()
    } else if ns < 1e3 {
        format!("{} ns", sig(ns, 3))
    } else if ns < 1e6 {
        format!("{} µs", sig(ns / 1e3, 3))
    } else if ns < 1e9 {
        format!("{} ms", sig(ns / 1e6, 3))
    } else {
        format!("{} s", sig(ns / 1e9, 3))
    }
}
