//! Helpers shared by the statistical test binaries (`mod common;`): seeded distinct keys and the
//! exact two-sided binomial acceptance region.

use statrs::distribution::{Binomial, DiscreteCDF};

/// SplitMix64 (Steele, Lea & Flood 2014): a bijection of the index, so distinct indices give
/// distinct keys.
pub fn key(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The two-sided exact acceptance region `[lo, hi]` of Binomial(trials, p0) at level alpha:
/// `P(X < lo) <= alpha/2` and `P(X > hi) <= alpha/2`, each as large as allowed.
pub fn acceptance(trials: u64, p0: f64, alpha: f64) -> (u64, u64) {
    let b = Binomial::new(p0, trials).unwrap();
    // lo: smallest x with P(X <= x) > alpha/2, so any count below lo has P(X <= count) <= alpha/2.
    let (mut a, mut z) = (0u64, trials);
    while a < z {
        let mid = a + (z - a) / 2;
        if b.cdf(mid) > alpha / 2.0 {
            z = mid
        } else {
            a = mid + 1
        }
    }
    let lo = a;
    // hi: largest x with P(X >= x) > alpha/2; P(X >= x) = sf(x - 1).
    let (mut a, mut z) = (lo, trials);
    while a < z {
        let mid = a + (z - a).div_ceil(2);
        if b.sf(mid - 1) > alpha / 2.0 {
            a = mid
        } else {
            z = mid - 1
        }
    }
    (lo, a)
}
