//! The one error type of the filter library: every bad input is named with its allowed range.

use thiserror::Error;

/// Why a filter could not be built, found or read.
///
/// Every variant carries the offending value so that a message like
/// "false-positive rate p = 1.5 is outside (0, 1)" can be shown to a user as it is.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum BloomError {
    /// The expected number of elements was zero.
    #[error("expected element count n = {n} is invalid: it must be at least 1")]
    InvalidCount { n: u64 },
    /// The target false-positive rate was not a finite number strictly between 0 and 1.
    #[error(
        "false-positive rate p = {p} is invalid: it must be a finite number in the open interval (0, 1)"
    )]
    InvalidRate { p: f64 },
    /// The number of hash functions was outside what this variant supports.
    #[error("hash function count k = {k} is invalid: it must be in {min}..={max}")]
    InvalidHashes { k: u32, min: u32, max: u32 },
    /// The number of bits was zero or beyond what this variant can address.
    #[error("bit count m = {bits} is invalid for {variant}: it must be in 1..={max}")]
    InvalidBits {
        bits: u64,
        max: u64,
        variant: String,
    },
    /// The requested size does not fit the variant's index type or the address space.
    #[error("{what} needs {needed} bits, more than {variant} can address (at most {max} bits)")]
    TooLarge {
        what: String,
        needed: f64,
        max: u64,
        variant: String,
    },
    /// The allocator refused the bit array.
    #[error("could not allocate {bytes} bytes for the bit array")]
    AllocationFailed { bytes: u64 },
    /// No registered variant has this name.
    #[error("unknown filter name {name:?}; known names: {known}")]
    UnknownName { name: String, known: String },
    /// A registered variant lacks a capability (removal, growth) the caller asked for.
    #[error("filter {name:?} cannot {capability}; variants that can: {which}")]
    Unsupported {
        name: String,
        capability: &'static str,
        which: String,
    },
    /// A value outside the range a foreign format or API can represent (e.g. a Java `long`).
    #[error("{what} = {value} is invalid: {allowed}")]
    OutOfRange {
        what: &'static str,
        value: String,
        allowed: String,
    },
    /// Two filters cannot be combined: they differ in k, size, strategy or key encoding.
    #[error("cannot combine these filters: {reason}")]
    Incompatible { reason: String },
    /// Serialized bytes were not a valid filter of the expected format.
    #[error("corrupt {format} data: {reason}")]
    Corrupt {
        format: &'static str,
        reason: String,
    },
}

/// Shorthand used across the crate.
pub type Result<T, E = BloomError> = std::result::Result<T, E>;
