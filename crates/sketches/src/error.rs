//! The one error type of the sketches: every bad input is named with its allowed range.

use bloomlab_filters::error::Compact;
use thiserror::Error;

/// Why a sketch could not be built or merged.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SketchError {
    /// A HyperLogLog precision outside what the estimator is defined for.
    #[error("HyperLogLog precision p = {p} is invalid: it must be in {min}..={max}")]
    InvalidPrecision {
        /// The precision given.
        p: u32,
        /// The smallest precision allowed.
        min: u8,
        /// The largest precision allowed.
        max: u8,
    },
    /// A Count-Min epsilon or delta that is not a finite number in (0, 1).
    #[error(
        "Count-Min {what} = {} is invalid: it must be a finite number in the open interval (0, 1)",
        Compact(*.value)
    )]
    InvalidRate {
        /// Which parameter (`"epsilon"` or `"delta"`).
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// A Count-Min width or depth of zero, or a table too large to address.
    #[error("Count-Min {what} = {value} is invalid: it must be in 1..={max}")]
    InvalidDimension {
        /// Which dimension (width or depth, or the table's cells).
        what: &'static str,
        /// The value asked for (a float: it may exceed `u64`).
        value: f64,
        /// The largest value allowed.
        max: u64,
    },
    /// Two sketches of different shapes or hashes cannot be merged: their registers or counters
    /// mean different things.
    #[error("cannot merge {left} with {right}: {reason}")]
    Mismatch {
        /// The sketch merged into, described.
        left: String,
        /// The sketch merged from, described.
        right: String,
        /// What differs.
        reason: &'static str,
    },
    /// No hash strategy has this name.
    #[error("unknown hash {name:?}; known hashes: {known}")]
    UnknownHash {
        /// The name given.
        name: String,
        /// Every hash name, comma-separated.
        known: String,
    },
    /// No sketch has this name.
    #[error("unknown sketch name {name:?}; names are {known}")]
    UnknownSketch {
        /// The name given.
        name: String,
        /// What a name (or group of names) must be.
        known: String,
    },
    /// A third-party sketch refused an operation.
    #[error("{sketch}: {reason}")]
    Peer {
        /// The peer sketch's name.
        sketch: String,
        /// Its refusal, as it said it.
        reason: String,
    },
}
