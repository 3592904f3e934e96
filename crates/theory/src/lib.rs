//! What bloomlab measures filters against, with no dependencies: the theoretical false-positive
//! rate of each layout ([`rates`], [`Geometry`]), exact binomial intervals and tests ([`stats`])
//! and the special functions under them ([`special`]).
//!
//! The filters, the harness and the conformance suite all use these, so every figure they print
//! is computed once, one way. The conformance suite (`bloomlab-conform`, a dev-dependency of any
//! filter's crate) depends on this crate and not on the filters or the harness, which keeps its
//! build small.

#![warn(missing_docs)]

pub mod host;
pub mod rates;
pub mod special;
pub mod stats;

pub use rates::Geometry;

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
    }
}
