//! Theoretical false-positive rates, per layout: what a filter of a given [`Geometry`] should show
//! after `n` distinct keys, if its hash and index scheme behave like independent uniform choices.
//! The harness compares measurements with these; a filter that departs from them has a flaw.

use crate::filter::Geometry;

/// The textbook approximation `(1 - e^(-kn/m))^k` (Bloom 1970, as usually quoted), with m the total
/// bits and k the probes per key, whatever the layout.
pub fn textbook(bits: u64, hashes: u32, n: u64) -> f64 {
    let k = f64::from(hashes);
    (-(-k * n as f64 / bits as f64).exp_m1()).powf(k)
}

/// The exact expectation for a flat array of m bits and k independent uniform probes per key:
/// `(1 - (1 - 1/m)^(kn))^k`. Computed through `ln_1p`/`exp_m1` so that it stays accurate for m
/// beyond 2^53 and for tiny rates.
pub fn flat(bits: u64, hashes: u32, n: u64) -> f64 {
    let k = f64::from(hashes);
    let ln_zero = k * n as f64 * (-1.0 / bits as f64).ln_1p();
    (-ln_zero.exp_m1()).powf(k)
}

/// The mean of `f(i)` over a Poisson(lambda) number i of keys per block (Putze, Sanders & Singler
/// 2007): block loads are Poisson with mean n / blocks. Terms are summed in log space around the
/// mean, out to 40 standard deviations, so nothing underflows for heavy blocks.
pub fn poisson_mixture(lambda: f64, f: impl Fn(f64) -> f64) -> f64 {
    if lambda <= 0.0 {
        return f(0.0);
    }
    let spread = 40.0 * lambda.sqrt() + 40.0;
    let lo = (lambda - spread).max(0.0).floor() as u64;
    let hi = (lambda + spread).ceil() as u64;
    // ln(lo!) by summation once; afterwards incrementally.
    let mut ln_fact: f64 = (2..=lo).map(|j| (j as f64).ln()).sum();
    let ln_lambda = lambda.ln();
    let mut total = 0.0;
    for i in lo..=hi {
        if i > 1 && i > lo {
            ln_fact += (i as f64).ln();
        }
        let ln_pmf = -lambda + i as f64 * ln_lambda - ln_fact;
        total += ln_pmf.exp() * f(i as f64);
    }
    total
}

/// Blocked layout: a query's block holds i keys, each of which set k uniform positions (with
/// repetition) among B bits, and the query tests k such positions:
/// `sum_i Pois(i; n/blocks) (1 - (1 - 1/B)^(k i))^k`.
pub fn blocked(blocks: u64, block_bits: u32, hashes: u32, n: u64) -> f64 {
    let k = f64::from(hashes);
    let ln_keep = (-1.0 / f64::from(block_bits)).ln_1p();
    poisson_mixture(n as f64 / blocks as f64, |i| (-(k * i * ln_keep).exp_m1()).powf(k))
}

/// Split-block layout: each key sets one bit in each of w words of b bits; a query tests one bit per
/// word: `sum_i Pois(i; n/blocks) (1 - (1 - 1/b)^i)^w`.
pub fn split_block(blocks: u64, words: u32, word_bits: u32, n: u64) -> f64 {
    let ln_keep = (-1.0 / f64::from(word_bits)).ln_1p();
    poisson_mixture(n as f64 / blocks as f64, |i| (-(i * ln_keep).exp_m1()).powi(words as i32))
}

impl Geometry {
    /// The layout-correct theoretical FPR after `n` distinct keys.
    pub fn fpr(&self, n: u64) -> f64 {
        match *self {
            Geometry::Flat { bits, hashes } => flat(bits, hashes, n),
            Geometry::Blocked { blocks, block_bits, hashes } => blocked(blocks, block_bits, hashes, n),
            Geometry::SplitBlock { blocks, words, word_bits } => split_block(blocks, words, word_bits, n),
        }
    }

    /// The textbook `(1 - e^(-kn/m))^k` for this geometry's total bits and probes per key.
    pub fn textbook_fpr(&self, n: u64) -> f64 {
        textbook(self.bits(), self.hashes(), n)
    }

    /// Total bits.
    pub fn bits(&self) -> u64 {
        match *self {
            Geometry::Flat { bits, .. } => bits,
            Geometry::Blocked { blocks, block_bits, .. } => blocks * u64::from(block_bits),
            Geometry::SplitBlock { blocks, words, word_bits } => blocks * u64::from(words * word_bits),
        }
    }

    /// Probes per key.
    pub fn hashes(&self) -> u32 {
        match *self {
            Geometry::Flat { hashes, .. } | Geometry::Blocked { hashes, .. } => hashes,
            Geometry::SplitBlock { words, .. } => words,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_matches_textbook_for_large_m() {
        let (m, k, n) = (9_585_059, 7, 1_000_000);
        let (a, b) = (flat(m, k, n), textbook(m, k, n));
        assert!((a / b - 1.0).abs() < 1e-6, "{a} vs {b}");
        assert!((a - 0.01).abs() < 0.0005, "{a}");
    }

    #[test]
    fn flat_is_exact_for_one_bit() {
        // m = 1: after any insert the single bit is set.
        assert_eq!(flat(1, 1, 1), 1.0);
        assert_eq!(flat(1000, 3, 0), 0.0);
    }

    #[test]
    fn poisson_mixture_is_a_distribution() {
        for lambda in [0.5, 7.0, 60.0, 5000.0] {
            let mass = poisson_mixture(lambda, |_| 1.0);
            let mean = poisson_mixture(lambda, |i| i);
            assert!((mass - 1.0).abs() < 1e-9, "lambda {lambda}: mass {mass}");
            assert!((mean / lambda - 1.0).abs() < 1e-9, "lambda {lambda}: mean {mean}");
        }
    }

    #[test]
    fn blocked_costs_more_than_flat_at_equal_memory() {
        let n = 1_000_000;
        let bits = 9_585_152; // 18721 blocks of 512 bits
        let flat_fpr = flat(bits, 7, n);
        let blocked_fpr = blocked(bits / 512, 512, 7, n);
        assert!(blocked_fpr > flat_fpr * 1.05, "{blocked_fpr} vs {flat_fpr}");
    }
}

#[cfg(test)]
mod parquet_table {
    use super::*;

    /// The Apache Parquet spec's table of bits per distinct value against false-positive rate for
    /// the split-block filter: 6.0 -> 10%, 10.5 -> 1%, 16.9 -> 0.1%, 26.4 -> 0.01%, 41 -> 0.001%.
    #[test]
    fn split_block_matches_the_spec_table() {
        let n = 1_000_000u64;
        for (bits_per_value, fpp) in [(6.0, 0.1), (10.5, 0.01), (16.9, 0.001), (26.4, 0.0001), (41.0, 0.00001)] {
            let blocks = (n as f64 * bits_per_value / 256.0).round() as u64;
            let got = split_block(blocks, 8, 32, n);
            assert!((got / fpp - 1.0).abs() < 0.1, "{bits_per_value} bits/value: {got}, spec {fpp}");
        }
    }
}
