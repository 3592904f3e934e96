//! The one error type of the sketches: every bad input is named with its allowed range.

use bloomlab_filters::error::Compact;
use thiserror::Error;

/// Why a sketch could not be built or merged.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SketchError {
    /// A HyperLogLog precision outside what the estimator is defined for.
    #[error("HyperLogLog precision p = {p} is invalid: it must be in {min}..={max}")]
    InvalidPrecision { p: u32, min: u8, max: u8 },
    /// A Count-Min epsilon or delta that is not a finite number in (0, 1).
    #[error(
        "Count-Min {what} = {} is invalid: it must be a finite number in the open interval (0, 1)",
        Compact(*.value)
    )]
    InvalidRate { what: &'static str, value: f64 },
    /// A Count-Min width or depth of zero, or a table too large to address.
    #[error("Count-Min {what} = {value} is invalid: it must be in 1..={max}")]
    InvalidDimension {
        what: &'static str,
        value: f64,
        max: u64,
    },
    /// Two sketches of different shapes or hashes cannot be merged: their registers or counters
    /// mean different things.
    #[error("cannot merge {left} with {right}: {reason}")]
    Mismatch {
        left: String,
        right: String,
        reason: &'static str,
    },
    /// No hash strategy has this name.
    #[error("unknown hash {name:?}; known hashes: {known}")]
    UnknownHash { name: String, known: String },
    /// No sketch has this name.
    #[error("unknown sketch name {name:?}; names are {known}")]
    UnknownSketch { name: String, known: String },
    /// A third-party sketch refused an operation.
    #[error("{sketch}: {reason}")]
    Peer { sketch: String, reason: String },
}
