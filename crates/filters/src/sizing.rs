//! Sizing: from the expected count n and the target rate p to a bit count m and a hash count k.
//!
//! The rule ([`Params::optimal`]): `m = ceil(-n ln p / (ln 2)^2)` and `k = max(1, round(m/n ln 2))`,
//! then each layout rounds m up to its unit (64-bit words, 512-bit or 256-bit blocks) and reports
//! the rounded size. The Guava index schemes use Guava 31.1's rule instead (m truncated, not rounded
//! up; see [`crate::guava`]), and the split-block layout always uses k = 8.

use crate::error::{BloomError, Result};

/// The most hash functions any variant accepts (Guava's file format stores k in one byte).
pub const MAX_HASHES: u32 = 255;

/// The largest bit count a `u64`-word array can hold: keeps `bits + 63` and the byte count in range.
pub const MAX_BITS: u64 = u64::MAX - 63;

/// A filter's size: m bits and k hash functions, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Number of bits requested (a layout may round it up; the filter reports its true size).
    pub bits: u64,
    /// Number of hash functions (probes per key).
    pub hashes: u32,
}

/// `n` as a count to size for: at least 1, else [`BloomError::InvalidCount`].
pub fn check_n(n: u64) -> Result<()> {
    if n == 0 {
        Err(BloomError::InvalidCount { n })
    } else {
        Ok(())
    }
}

/// `p` as a target rate: finite and in (0, 1), else [`BloomError::InvalidRate`].
pub fn check_p(p: f64) -> Result<()> {
    if p.is_finite() && p > 0.0 && p < 1.0 {
        Ok(())
    } else {
        Err(BloomError::InvalidRate { p })
    }
}

fn bits_from_f64(raw: f64, what: impl FnOnce() -> String) -> Result<u64> {
    // `MAX_BITS as f64` rounds up to 2^64, so compare against a bound that is exactly representable.
    if raw.is_nan() || raw >= 18_446_744_073_709_549_568.0 {
        return Err(BloomError::TooLarge {
            what: what(),
            needed: raw,
            max: MAX_BITS,
            variant: "a u64-word bit array".into(),
        });
    }
    Ok(raw as u64)
}

/// `k = max(1, round(m / n * ln 2))`, the optimum for a given bits-per-key ratio.
fn optimal_hashes(bits: f64, n: u64) -> Result<u32> {
    let k = (bits / n as f64 * std::f64::consts::LN_2).round().max(1.0);
    if k > f64::from(MAX_HASHES) {
        return Err(BloomError::InvalidHashes {
            k: k.min(u32::MAX as f64) as u32,
            min: 1,
            max: MAX_HASHES,
        });
    }
    Ok(k as u32)
}

impl Params {
    /// The textbook optimum: `m = ceil(-n ln p / (ln 2)^2)`, `k = max(1, round(m/n ln 2))`.
    ///
    /// Errors for n = 0, p outside (0, 1) or not finite, and sizes beyond [`MAX_BITS`].
    pub fn optimal(n: u64, p: f64) -> Result<Self> {
        let bits = Self::optimal_bits(n, p)?;
        let hashes = optimal_hashes(bits as f64, n)?;
        Self::explicit(bits, hashes)
    }

    /// The textbook optimum's m alone, `ceil(-n ln p / (ln 2)^2)`, for layouts whose k is fixed.
    pub fn optimal_bits(n: u64, p: f64) -> Result<u64> {
        check_n(n)?;
        check_p(p)?;
        let ln2 = std::f64::consts::LN_2;
        let raw = (-(n as f64) * p.ln() / (ln2 * ln2)).ceil();
        bits_from_f64(raw, || {
            format!("n = {n} at p = {}", crate::error::Compact(p))
        })
    }

    /// Guava 31.1's sizing: `m = (long)(-n ln p / (ln 2)^2)` (truncated, not rounded up) and
    /// `k = max(1, round(m / n * ln 2))` from that m. Guava then rounds storage up to whole words.
    pub fn guava(n: u64, p: f64) -> Result<Self> {
        check_n(n)?;
        check_p(p)?;
        let ln2 = std::f64::consts::LN_2;
        let raw = (-(n as f64) * p.ln() / (ln2 * ln2)).trunc();
        let bits = bits_from_f64(raw, || {
            format!("n = {n} at p = {}", crate::error::Compact(p))
        })?;
        if bits == 0 {
            return Err(BloomError::InvalidBits {
                bits,
                max: MAX_BITS,
                variant: "Guava sizing".into(),
            });
        }
        let hashes = optimal_hashes(bits as f64, n)?;
        Self::explicit(bits, hashes)
    }

    /// An explicit (m, k): m in `1..=MAX_BITS`, k in `1..=MAX_HASHES`.
    pub fn explicit(bits: u64, hashes: u32) -> Result<Self> {
        if bits == 0 || bits > MAX_BITS {
            return Err(BloomError::InvalidBits {
                bits,
                max: MAX_BITS,
                variant: "any filter".into(),
            });
        }
        if hashes == 0 || hashes > MAX_HASHES {
            return Err(BloomError::InvalidHashes {
                k: hashes,
                min: 1,
                max: MAX_HASHES,
            });
        }
        Ok(Self { bits, hashes })
    }

    /// A fixed memory budget of m bits for n expected keys: k chosen as the optimum for m/n.
    pub fn for_bits_and_count(bits: u64, n: u64) -> Result<Self> {
        check_n(n)?;
        Self::explicit(bits, optimal_hashes(bits as f64, n)?)
    }

    /// Bits per expected key.
    pub fn bits_per_key(&self, n: u64) -> f64 {
        self.bits as f64 / n as f64
    }
}

/// Rounds `bits` up to a whole number of `unit`-bit words or blocks.
pub(crate) fn round_up(bits: u64, unit: u64) -> u64 {
    bits.div_ceil(unit) * unit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_table() {
        // The widely quoted table: bits per key and k for 1%, 0.1%, 0.01%, 0.001%.
        let n = 1_000_000;
        for (p, bpk, k) in [
            (1e-2, 9.59, 7),
            (1e-3, 14.38, 10),
            (1e-4, 19.17, 13),
            (1e-5, 23.96, 17),
        ] {
            let params = Params::optimal(n, p).unwrap();
            let got = params.bits_per_key(n);
            assert!(
                (got - bpk).abs() < 0.005,
                "p = {p}: {got} bits/key, want {bpk}"
            );
            assert_eq!(params.hashes, k, "p = {p}");
        }
    }

    #[test]
    fn guava_truncates_where_textbook_rounds_up() {
        let g = Params::guava(1000, 0.01).unwrap();
        let t = Params::optimal(1000, 0.01).unwrap();
        assert_eq!(g.bits, 9585);
        assert_eq!(t.bits, 9586);
        assert_eq!(g.hashes, 7);
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert_eq!(
            Params::optimal(0, 0.01),
            Err(BloomError::InvalidCount { n: 0 })
        );
        for p in [0.0, 1.0, -0.5, 1.5, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(Params::optimal(10, p), Err(BloomError::InvalidRate { p }));
        }
        assert!(
            matches!(Params::optimal(10, f64::NAN), Err(BloomError::InvalidRate { p }) if p.is_nan())
        );
        assert!(matches!(
            Params::optimal(u64::MAX, 1e-300),
            Err(BloomError::TooLarge { .. })
        ));
        assert!(matches!(
            Params::explicit(0, 3),
            Err(BloomError::InvalidBits { bits: 0, .. })
        ));
        assert!(matches!(
            Params::explicit(64, 0),
            Err(BloomError::InvalidHashes { k: 0, .. })
        ));
        assert!(matches!(
            Params::explicit(64, 256),
            Err(BloomError::InvalidHashes { k: 256, .. })
        ));
        assert!(matches!(
            Params::for_bits_and_count(64, 0),
            Err(BloomError::InvalidCount { n: 0 })
        ));
        let msg = Params::optimal(10, 1.5).unwrap_err().to_string();
        assert!(msg.contains("1.5") && msg.contains("(0, 1)"), "{msg}");
    }
}
