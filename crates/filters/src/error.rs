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
    InvalidCount {
        /// The count given.
        n: u64,
    },
    /// The target false-positive rate was not a finite number strictly between 0 and 1.
    #[error(
        "false-positive rate p = {} is invalid: it must be a finite number in the open interval (0, 1)",
        Compact(*.p)
    )]
    InvalidRate {
        /// The rate given.
        p: f64,
    },
    /// The number of hash functions was outside what this variant supports.
    #[error("hash function count k = {k} is invalid: it must be in {min}..={max}")]
    InvalidHashes {
        /// The count given.
        k: u32,
        /// The smallest count allowed.
        min: u32,
        /// The largest count allowed.
        max: u32,
    },
    /// The number of bits was zero or beyond what this variant can address.
    #[error("bit count m = {bits} is invalid for {variant}: it must be in 1..={max}")]
    InvalidBits {
        /// The bit count given.
        bits: u64,
        /// The largest bit count the variant can address.
        max: u64,
        /// The variant's name.
        variant: String,
    },
    /// The requested size does not fit the variant's index type or the address space.
    #[error(
        "{what} needs {} bits, more than {variant} can address (at most {max} bits)",
        Compact(*.needed)
    )]
    TooLarge {
        /// What was being sized (the request, in words).
        what: String,
        /// The bits it needs (a float: it may exceed `u64`).
        needed: f64,
        /// The most bits the variant can address.
        max: u64,
        /// The variant's name.
        variant: String,
    },
    /// [`Spec::Promise`](crate::registry::Spec::Promise) found no size within its bound whose
    /// layout theory keeps the rate.
    #[error(
        "{variant} cannot keep p = {p:e} at n = {n} within {factor}x the classic rule's {bits} bits \
         (its theory at that size: {rate:.3e}); use a layout whose k grows with the bits (classic, \
         blocked512) or a larger p"
    )]
    PromiseUnreachable {
        /// The variant's name.
        variant: String,
        /// Keys.
        n: u64,
        /// The rate asked for.
        p: f64,
        /// The classic rule's bits.
        bits: u64,
        /// How far beyond them the search looked.
        factor: u64,
        /// The layout's theory at the largest size searched.
        rate: f64,
    },
    /// The allocator refused the bit array.
    #[error("could not allocate {bytes} bytes for the bit array")]
    AllocationFailed {
        /// The bytes asked for.
        bytes: u64,
    },
    /// No registered variant has this name.
    #[error("unknown filter name {name:?}; known names: {known}")]
    UnknownName {
        /// The name given.
        name: String,
        /// Every registered name, comma-separated.
        known: String,
    },
    /// A registered variant lacks a capability (removal, growth) the caller asked for.
    #[error("filter {name:?} cannot {capability}; variants that can: {which}")]
    Unsupported {
        /// The variant's name.
        name: String,
        /// What it cannot do, as a verb phrase (`"remove keys"`).
        capability: &'static str,
        /// The names of the variants that can, comma-separated.
        which: String,
    },
    /// A value outside the range a foreign format or API can represent (e.g. a Java `long`).
    #[error("{what} = {value} is invalid: {allowed}")]
    OutOfRange {
        /// The quantity (flag, field or parameter name).
        what: &'static str,
        /// The value given, as text.
        value: String,
        /// The allowed range, in words.
        allowed: String,
    },
    /// Two filters cannot be combined: they differ in k, size, strategy or key encoding.
    #[error("cannot combine these filters: {reason}")]
    Incompatible {
        /// How they differ.
        reason: String,
    },
    /// Serialized bytes were not a valid filter of the expected format.
    #[error("corrupt {format} data: {reason}")]
    Corrupt {
        /// The format expected (e.g. `"Parquet split-block filter"`).
        format: &'static str,
        /// What is wrong with the bytes.
        reason: String,
    },
}

/// Shorthand used across the crate.
pub type Result<T, E = BloomError> = std::result::Result<T, E>;

pub use bloomlab_theory::Compact;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_rate_is_shown_compactly() {
        let msg = BloomError::InvalidRate { p: 1e-300 }.to_string();
        assert!(msg.contains("p = 1e-300 ") && msg.len() < 120, "{msg}");
    }
}
