//! Writing a scenario's files: the output dir, CSV rows from serde structs, Markdown text.
//!
//! A report is never a mix of two runs nor cut short: [`prepare_dir`] locks the output directory
//! for the rest of the process (a second run on it is refused at once, naming the holder), every
//! file written into a prepared directory ([`write_csv`], the PNG of [`super::plot::draw`]) is
//! staged beside it, and [`write_text`], which writes the summary last, moves every staged file
//! into place. A run that fails before then leaves the previous report as it was. Files outside a
//! prepared directory are written whole or not at all (temporary file, fsync, rename).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use super::{Result, ScenarioOutputError, write_err};
use crate::output::{OutputDir, OutputError, write_atomic, write_atomic_with};

/// An output directory this process holds, with its canonical path for lookups.
struct Held {
    canonical: PathBuf,
    dir: OutputDir,
}

/// The output directories this process has prepared; each stays locked until the process ends.
static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<Held>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

fn canonical(dir: &Path) -> PathBuf {
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
}

/// Runs `f` on the held directory `path` is in, if any.
fn with_held<T>(path: &Path, f: impl FnOnce(&OutputDir) -> T) -> Option<T> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let parent = canonical(parent);
    held()
        .iter()
        .find(|h| h.canonical == parent)
        .map(|h| f(&h.dir))
}

/// Where the file `path` is written: the staging twin of `path` when its directory was prepared,
/// else `None`.
pub(crate) fn staged_path(path: &Path) -> Result<Option<PathBuf>> {
    let Some(staging) = with_held(path, OutputDir::staging) else {
        return Ok(None);
    };
    let staging = staging.map_err(|e| write_err(path, e))?;
    Ok(Some(staging.join(path.file_name().unwrap_or_default())))
}

/// Removes what was staged for `path`'s directory (after a failed write).
pub(crate) fn discard(path: &Path) {
    with_held(path, OutputDir::discard);
}

/// Creates `dir` (and parents), checks that a file can be written in it and locks it for the rest
/// of the process, before anything is measured. A directory another process holds, or a path that
/// is a file, is [`ScenarioOutputError::BadOut`] naming `--out` (and the holder); preparing a
/// directory this process already holds again is a no-op.
pub fn prepare_dir(dir: &Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(ScenarioOutputError::BadOut(format!(
            "--out {}: it exists and is not a directory; give a directory for the report",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
    let key = canonical(dir);
    let mut held = held();
    if held.iter().any(|h| h.canonical == key) {
        return Ok(());
    }
    let out = OutputDir::lock(dir).map_err(|e| match e {
        OutputError::Busy { .. } => ScenarioOutputError::BadOut(format!("--out: {e}")),
        other => write_err(dir, other),
    })?;
    held.push(Held {
        canonical: key,
        dir: out,
    });
    Ok(())
}

fn csv_bytes<T: Serialize>(path: &Path, rows: &[T]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r).map_err(|e| write_err(path, e))?;
    }
    w.into_inner().map_err(|e| write_err(path, e.error()))
}

/// Writes `rows` as CSV with a header from the struct's fields: staged in a prepared directory,
/// else whole or not at all.
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    let bytes = csv_bytes(path, rows)?;
    match staged_path(path)? {
        Some(staged) => std::fs::write(&staged, bytes).map_err(|e| {
            discard(path);
            write_err(path, e)
        }),
        None => write_atomic_with(path, |w| std::io::Write::write_all(w, &bytes))
            .map_err(|e| write_err(path, e)),
    }
}

/// Writes text; in a prepared directory, then moves every file staged there into place (so it is
/// called last, for the summary that links the others). Elsewhere, whole or not at all.
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    match staged_path(path)? {
        Some(staged) => {
            let committed = std::fs::write(&staged, text)
                .map_err(|e| write_err(path, e))
                .and_then(|()| {
                    with_held(path, OutputDir::commit)
                        .unwrap_or(Ok(Vec::new()))
                        .map_err(|e| write_err(path, e))
                });
            if committed.is_err() {
                discard(path);
            }
            committed.map(|_| ())
        }
        None => write_atomic(path, text.as_bytes()).map_err(|e| write_err(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prepared_directory_shows_staged_files_only_when_the_summary_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        prepare_dir(&dir).unwrap();
        // Preparing again in the same process is a no-op.
        prepare_dir(&dir).unwrap();
        write_csv(&dir.join("rows.csv"), &[(1u32, "a"), (2, "b")]).unwrap();
        assert!(
            !dir.join("rows.csv").exists(),
            "the CSV appeared before the summary"
        );
        write_text(&dir.join("summary.md"), "# done\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("rows.csv")).unwrap(),
            "1,a\n2,b\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("summary.md")).unwrap(),
            "# done\n"
        );
    }

    #[test]
    fn a_file_as_the_output_directory_is_bad_input_naming_out() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        let err = prepare_dir(&file).unwrap_err();
        assert!(
            matches!(&err, ScenarioOutputError::BadOut(m) if m.starts_with("--out ") && m.contains("is not a directory")),
            "{err:?}"
        );
    }

    #[test]
    fn outside_a_prepared_directory_files_are_written_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("loose.md");
        write_text(&path, "old").unwrap();
        write_text(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    }
}
