//! The harness's one error type: every message names the offending value and what was allowed.

use std::path::PathBuf;

use bloomlab_filters::BloomError;
use bloomlab_filters::error::Compact;
use thiserror::Error;

/// Why a sweep could not be planned or run.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum HarnessError {
    /// A configuration value is outside its allowed range.
    #[error("{what} = {value} is invalid: {allowed}")]
    InvalidConfig {
        /// Which setting, e.g. `confidence`.
        what: String,
        /// The value given, as text.
        value: String,
        /// The allowed range, in words.
        allowed: String,
    },
    /// No registered filter has this name.
    #[error("unknown filter {name:?}; known filters: {known}")]
    UnknownFilter {
        /// The name given.
        name: String,
        /// Every registered name, comma-separated.
        known: String,
    },
    /// No key set has this name.
    #[error("unknown key set {name:?}; allowed: random-u64, article, url, hex, file:PATH")]
    UnknownKeySet {
        /// The name given.
        name: String,
    },
    /// A key file could not be read.
    #[error("cannot read key file {path:?}: {reason}")]
    KeyFile {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// A key file has too few distinct lines for the members and at least one non-member.
    #[error(
        "key file {path:?} has {distinct} distinct non-blank lines ({lines} non-blank lines, \
         {duplicates} duplicates removed), but {needed} are needed: {members} members plus at \
         least one non-member"
    )]
    KeyFileTooSmall {
        /// The file.
        path: PathBuf,
        /// Non-blank lines read.
        lines: u64,
        /// Distinct lines after removing duplicates.
        distinct: u64,
        /// Lines removed as repeats of an earlier line.
        duplicates: u64,
        /// Members the trial inserts.
        members: u64,
        /// Distinct lines needed.
        needed: u64,
    },
    /// A filter could not be built. The reason is the error's `source` (not repeated in this
    /// message, so that a chain printer such as anyhow's `{:#}` shows it once).
    #[error("building {filter} for n = {n}, p = {}", Compact(*.p))]
    Build {
        /// Registry name.
        filter: String,
        /// Sized-for count.
        n: u64,
        /// Target rate.
        p: f64,
        /// The filter library's reason.
        source: BloomError,
    },
    /// A filter kept outside this process (a Redis-backed one, see
    /// [`crate::bloom::trial::run_batched`]) failed; the reason names where and what.
    #[error("{filter} (n = {n}, p = {}): {reason}", Compact(*.p))]
    External {
        /// The filter's name.
        filter: String,
        /// Sized-for count.
        n: u64,
        /// Target rate.
        p: f64,
        /// The store's error, as text (it names the address and the operation).
        reason: String,
    },
    /// An inserted key was reported absent: the filter is broken.
    #[error(
        "false negative: {filter} on key set {key_set} (n = {n}, p = {}, overfill = {}, \
         seed = {seed}) does not find inserted member key #{index}",
        Compact(*.p),
        Compact(*.overfill)
    )]
    FalseNegative {
        /// Registry name.
        filter: String,
        /// Key set name.
        key_set: String,
        /// Sized-for count.
        n: u64,
        /// Target rate.
        p: f64,
        /// Inserted / n.
        overfill: f64,
        /// Run seed.
        seed: u64,
        /// Index of the missed member in the key set.
        index: u64,
    },
    /// A field of a data file (a gate baseline) is missing, malformed or out of range.
    #[error("{path}, line {line}, column {column} ({field}): {value} is invalid: {allowed}", path = .path.display())]
    BadField {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// 1-based column (character) where the field starts.
        column: u64,
        /// The column's header name.
        field: String,
        /// The text found, quoted.
        value: String,
        /// What is allowed there, in words.
        allowed: String,
    },
    /// An output file or directory cannot be written; found before anything is measured.
    #[error("cannot write {what} {path}: {reason}", path = .path.display())]
    Unwritable {
        /// `report`, `output directory`, `baseline file`, ...
        what: String,
        /// The path given.
        path: PathBuf,
        /// Why (the operating system's reason, or "it is a directory").
        reason: String,
    },
    /// The plan needs more memory at once than is available.
    #[error(
        "the plan needs {} at once ({needed} bytes: {detail}), but only {} ({available} bytes) \
         {source_of_available}; use fewer or smaller rows, or {override_hint}",
        human_bytes(*.needed),
        human_bytes(*.available)
    )]
    OutOfMemory {
        /// Bytes the plan holds at its peak.
        needed: u64,
        /// Bytes available.
        available: u64,
        /// Where the peak is (which group, what it holds).
        detail: String,
        /// Where `available` came from, e.g. "are available (MemAvailable in /proc/meminfo)".
        source_of_available: String,
        /// The flag that overrides the check.
        override_hint: String,
    },
}

/// `bytes` in binary units with three significant digits, e.g. `17.2 GiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut x = bytes as f64;
    let mut unit = 0;
    while x >= 1024.0 && unit + 1 < UNITS.len() {
        x /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{x:.3} {}", UNITS[unit])
    }
}

impl HarnessError {
    /// Shorthand for [`HarnessError::InvalidConfig`].
    pub fn invalid(what: &str, value: impl ToString, allowed: &str) -> Self {
        HarnessError::InvalidConfig {
            what: what.to_owned(),
            value: value.to_string(),
            allowed: allowed.to_owned(),
        }
    }
}
