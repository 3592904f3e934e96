//! The harness's one error type: every message names the offending value and what was allowed.

use std::path::PathBuf;

use bloomlab_filters::BloomError;
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
    /// A filter could not be built.
    #[error("building {filter} for n = {n}, p = {p}: {source}")]
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
    /// An inserted key was reported absent: the filter is broken.
    #[error(
        "false negative: {filter} on key set {key_set} (n = {n}, p = {p}, overfill = {overfill}, \
         seed = {seed}) does not find inserted member key #{index}"
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
