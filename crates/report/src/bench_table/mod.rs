//! The Bloom-vs-HashSet report: criterion's estimates and the bench's log (the schema in
//! [`bloomlab_harness::schema::bench`], shared with the bench that writes it) -> the Markdown report
//! `reports/bloom_vs_hashset.md`. The `bench-table` binary only parses its flags and calls
//! [`write_report`].

pub mod input;
mod layouts;
// Issue 16: Guava on the JVM against its layout in bloomlab, from scripts/guava-timing.sh's JSON.
pub mod jvm;
mod machine;
mod regimes;
pub mod render;
mod targets;
// Issue 17: the sketch bench's report, a file of its own (see the module).
pub mod sketches;

use std::path::{Path, PathBuf};

pub use machine::Machine;

/// Why the report could not be made. Every variant names the file or directory concerned; those
/// that mean "no results yet" say to run the bench.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bench's log is missing or unreadable.
    #[error(
        "cannot read the memory records {}: run `cargo bench --bench bloom_vs_hashset` first \
         (looked in {})",
        path.display(),
        dir.display()
    )]
    NoLog {
        /// The log's path.
        path: PathBuf,
        /// The criterion directory it was looked for in.
        dir: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// The log holds no records.
    #[error(
        "{} holds no records: run `cargo bench --bench bloom_vs_hashset` first (looked in {})",
        path.display(),
        dir.display()
    )]
    EmptyLog {
        /// The log's path.
        path: PathBuf,
        /// The criterion directory it is in.
        dir: PathBuf,
    },
    /// A JSON file (the log, or one of criterion's) does not parse.
    #[error("malformed {}", path.display())]
    Malformed {
        /// The file's path.
        path: PathBuf,
        /// Where and why it does not parse.
        #[source]
        source: serde_json::Error,
    },
    /// The criterion directory cannot be listed.
    #[error("cannot list {}", dir.display())]
    List {
        /// The directory.
        dir: PathBuf,
        /// Why it cannot be listed.
        #[source]
        source: std::io::Error,
    },
    /// No criterion results in the directory.
    #[error(
        "no criterion estimates (new/estimates.json) found: run `cargo bench --bench \
         bloom_vs_hashset` first (looked in {})",
        dir.display()
    )]
    NoEstimates {
        /// The criterion directory searched.
        dir: PathBuf,
    },
    /// The report (or its directory) cannot be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file (or directory) that could not be written.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Whether the error only says the Bloom bench has not run (so another report may still be
    /// written from the same directory).
    pub fn is_missing_results(&self) -> bool {
        matches!(
            self,
            Error::NoLog { .. } | Error::EmptyLog { .. } | Error::NoEstimates { .. }
        )
    }
}

/// Reads the bench's results from `criterion_dir` and writes the report to `out` (creating its
/// directory; written whole or not at all), stamped with `machine`.
pub fn write_report(criterion_dir: &Path, out: &Path, machine: &Machine) -> Result<(), Error> {
    let log = input::read_memory(criterion_dir)?;
    let medians = input::read_medians(criterion_dir)?;
    let mut text = render::render(&log, &medians, machine);
    // Issue 16: the JVM section, when scripts/guava-timing.sh has written its data beside the report.
    if let Some(run) = jvm::read(out.parent().unwrap_or(Path::new(".")))? {
        text.push_str(&jvm::section(&run));
    }
    write_whole(out, &text)
}

/// Writes `text` to `out` whole or not at all (temporary file beside it, fsync, rename; its
/// directory created if missing): a failed write leaves an earlier report as it was.
pub(crate) fn write_whole(out: &Path, text: &str) -> Result<(), Error> {
    use crate::output::{OutputError, write_atomic};
    write_atomic(out, text.as_bytes()).map_err(|e| match e {
        OutputError::Io { path, cause, .. } => Error::Write {
            path,
            source: cause,
        },
        other => Error::Write {
            path: out.to_owned(),
            source: std::io::Error::other(other.to_string()),
        },
    })
}

#[cfg(test)]
mod tests;
