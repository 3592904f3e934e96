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
        "false-positive rate p = {} is invalid: it must be a finite number in the open interval (0, 1)",
        Compact(*.p)
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
    #[error(
        "{what} needs {} bits, more than {variant} can address (at most {max} bits)",
        Compact(*.needed)
    )]
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

/// Displays a float compactly for messages: as Rust's shortest round-trip decimal between 1e-4 and
/// 1e16 (`0.01`, `1.5`, `1000000`), in scientific notation outside (`1e-300`, `2.5e20`) where the
/// plain form would run to hundreds of digits. The value reads back exactly either way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Compact(pub f64);

impl std::fmt::Display for Compact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let a = self.0.abs();
        if a == 0.0 || !a.is_finite() || (1e-4..1e16).contains(&a) {
            write!(f, "{}", self.0)
        } else {
            write!(f, "{:e}", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_floats_are_short_and_read_back_exactly() {
        for (x, text) in [
            (0.01, "0.01"),
            (1.5, "1.5"),
            (1e6, "1000000"),
            (0.0, "0"),
            (1e-300, "1e-300"),
            (2.5e20, "2.5e20"),
            (-3e-7, "-3e-7"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
        ] {
            let shown = Compact(x).to_string();
            assert_eq!(shown, text);
            if x.is_finite() {
                assert_eq!(shown.parse::<f64>().unwrap(), x);
            }
        }
        let msg = BloomError::InvalidRate { p: 1e-300 }.to_string();
        assert!(msg.contains("p = 1e-300 ") && msg.len() < 120, "{msg}");
    }
}
