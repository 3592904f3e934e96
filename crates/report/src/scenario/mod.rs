//! The database scenarios' reports: their outcome types (the schema both the measuring crate,
//! `bloomlab-scenarios`, and the renderers read), pure Markdown renderers, the pictures, and the
//! staged writing of a report directory.
//!
//! Each scenario module ([`dedup`], [`penetration`], [`swap`]) holds the typed outcome of a run
//! (settings, counts, latencies, verdicts, and where an interrupted run stopped), a pure
//! `render(&Outcome, revision) -> String` for its `summary.md`, and a `write` that puts the CSV,
//! the picture (if any) and the summary into an output directory together ([`output`]): a
//! report is never a mix of two runs nor cut short.
//!
//! The types live here rather than in `bloomlab-scenarios` because that crate depends on this
//! one: the producer (a run) and the consumer (the renderers) share one schema this way, with
//! dependencies pointing one way.

pub mod dedup;
mod fmt;
pub mod output;
pub mod penetration;
pub mod plot;
pub mod swap;

pub use fmt::{dur_ns, sig};

/// Why a scenario's report could not be written. Every variant names the directory or file.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioOutputError {
    /// The output directory cannot be used (it is a file, or another run holds it): bad input
    /// naming `--out`, found before anything is measured.
    #[error("{0}")]
    BadOut(String),
    /// A file could not be created, staged, drawn or moved into place.
    #[error("cannot write {path}: {cause}")]
    Write {
        /// The file (or directory) the user asked for.
        path: String,
        /// The cause.
        cause: String,
    },
}

/// Shorthand for results of the scenario reports.
pub type Result<T, E = ScenarioOutputError> = std::result::Result<T, E>;

pub(crate) fn write_err(path: &std::path::Path, e: impl std::fmt::Display) -> ScenarioOutputError {
    ScenarioOutputError::Write {
        path: path.display().to_string(),
        cause: e.to_string(),
    }
}
