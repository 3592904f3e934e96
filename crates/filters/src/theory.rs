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
    let (lo, hi) = poisson_range(lambda);
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

/// `f(i) = E[(X/B)^k]` for i = 0..=max_load: the FPR of one B-bit block holding i keys, each of which
/// set k uniform positions with repetition, for a query testing k uniform positions. X's
/// distribution is built one ball at a time:
/// `P_t(x) = P_(t-1)(x) x/B + P_(t-1)(x-1) (B - x + 1)/B` (all terms positive, no cancellation).
pub fn block_load_fpr(block_bits: u32, hashes: u32, max_load: u64) -> Vec<f64> {
    let b = block_bits as usize;
    let query: Vec<f64> = (0..=b)
        .map(|x| (x as f64 / b as f64).powi(hashes as i32))
        .collect();
    let mut dist = vec![0.0; b + 1];
    dist[0] = 1.0;
    let mut table = Vec::with_capacity(max_load as usize + 1);
    table.push(0.0);
    for _ in 1..=max_load {
        for _ in 0..hashes {
            for x in (1..=b).rev() {
                dist[x] =
                    dist[x] * x as f64 / b as f64 + dist[x - 1] * (b - x + 1) as f64 / b as f64;
            }
            dist[0] = 0.0;
        }
        table.push(dist.iter().zip(&query).map(|(p, q)| p * q).sum());
    }
    table
}

/// The loads [lo, hi] the Poisson mixture sums over: 40 standard deviations (plus 40) either side of
/// the mean, far beyond where any term can matter.
fn poisson_range(lambda: f64) -> (u64, u64) {
    let spread = 40.0 * lambda.sqrt() + 40.0;
    (
        (lambda - spread).max(0.0).floor() as u64,
        (lambda + spread).ceil() as u64,
    )
}

/// Blocked layout: `sum_i Pois(i; n/blocks) f(i)`, where a block holding i keys has received k i
/// uniform probes (with repetition) among its B bits, and `f(i) = E[(X/B)^k]` is the chance that a
/// query's k uniform positions are all among the X bits set.
///
/// Putze, Sanders & Singler (2007) approximate f(i) by `(1 - (1 - 1/B)^(k i))^k`, i.e. by
/// `E[X/B]^k`. In a 512-bit block X varies enough that `E[(X/B)^k]` is measurably larger (Jensen):
/// about +1.2% at k = 7 and +2.7% at k = 10, which the sweep resolved. So f(i) is computed exactly
/// ([`block_load_fpr`]).
pub fn blocked(blocks: u64, block_bits: u32, hashes: u32, n: u64) -> f64 {
    let lambda = n as f64 / blocks as f64;
    let b = block_bits as usize;
    let (_, hi) = poisson_range(lambda);
    // Beyond this many probes per block the exact table costs more than it can change: a block
    // that full answers yes to nearly everything, and the approximation is as good.
    if hi as f64 * f64::from(hashes) * b as f64 > 5e8 {
        let k = f64::from(hashes);
        let ln_keep = (-1.0 / f64::from(block_bits)).ln_1p();
        return poisson_mixture(lambda, |i| (-(k * i * ln_keep).exp_m1()).powf(k));
    }
    let table = block_load_fpr(block_bits, hashes, hi);
    poisson_mixture(lambda, |i| table[i as usize])
}

/// Split-block layout: each key sets one bit in each of w words of b bits; a query tests one bit per
/// word: `sum_i Pois(i; n/blocks) (1 - (1 - 1/b)^i)^w`.
pub fn split_block(blocks: u64, words: u32, word_bits: u32, n: u64) -> f64 {
    let ln_keep = (-1.0 / f64::from(word_bits)).ln_1p();
    poisson_mixture(n as f64 / blocks as f64, |i| {
        (-(i * ln_keep).exp_m1()).powi(words as i32)
    })
}

impl Geometry {
    /// The layout-correct theoretical FPR after `n` distinct keys.
    pub fn fpr(&self, n: u64) -> f64 {
        match *self {
            Geometry::Flat { bits, hashes } => flat(bits, hashes, n),
            Geometry::Blocked {
                blocks,
                block_bits,
                hashes,
            } => blocked(blocks, block_bits, hashes, n),
            Geometry::SplitBlock {
                blocks,
                words,
                word_bits,
            } => split_block(blocks, words, word_bits, n),
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
            Geometry::Blocked {
                blocks, block_bits, ..
            } => blocks * u64::from(block_bits),
            Geometry::SplitBlock {
                blocks,
                words,
                word_bits,
            } => blocks * u64::from(words * word_bits),
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
            assert!(
                (mean / lambda - 1.0).abs() < 1e-9,
                "lambda {lambda}: mean {mean}"
            );
        }
    }

    #[test]
    fn block_load_fpr_matches_brute_force_enumeration() {
        // Every placement of i keys x k probes and of the query's k probes in a B-bit block,
        // counted: the exact f(i) with no model at all.
        let (b, k) = (4u32, 2u32);
        let table = block_load_fpr(b, k, 3);
        assert_eq!(table[0], 0.0);
        // Two balls into 4 bins: X = 1 w.p. 1/4, X = 2 w.p. 3/4, so f(1) = 13/64.
        assert!((table[1] - 13.0 / 64.0).abs() < 1e-15, "{}", table[1]);
        for i in 1..=3u32 {
            let balls = i * k;
            let (mut hits, mut total) = (0u64, 0u64);
            for placement in 0..b.pow(balls) {
                let mut set = [false; 4];
                let mut code = placement;
                for _ in 0..balls {
                    set[(code % b) as usize] = true;
                    code /= b;
                }
                for q in 0..b.pow(k) {
                    total += 1;
                    hits += u64::from(set[(q % b) as usize] && set[(q / b) as usize]);
                }
            }
            let exact = hits as f64 / total as f64;
            assert!(
                (table[i as usize] - exact).abs() < 1e-12,
                "i = {i}: {} vs {exact}",
                table[i as usize]
            );
        }
    }

    #[test]
    fn blocked_exceeds_the_putze_approximation_by_the_jensen_gap() {
        // 1M keys, 9.59 bits per key: k = 7 in 512-bit blocks.
        let (blocks, n) = (18_721, 1_000_000);
        let ln_keep = (-1.0f64 / 512.0).ln_1p();
        let approx = poisson_mixture(n as f64 / blocks as f64, |i| {
            (-(7.0 * i * ln_keep).exp_m1()).powi(7)
        });
        let exact = blocked(blocks, 512, 7, n);
        let gap = exact / approx - 1.0;
        assert!(
            gap > 0.005 && gap < 0.03,
            "exact {exact}, approximation {approx}"
        );
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
        for (bits_per_value, fpp) in [
            (6.0, 0.1),
            (10.5, 0.01),
            (16.9, 0.001),
            (26.4, 0.0001),
            (41.0, 0.00001),
        ] {
            let blocks = (n as f64 * bits_per_value / 256.0).round() as u64;
            let got = split_block(blocks, 8, 32, n);
            assert!(
                (got / fpp - 1.0).abs() < 0.1,
                "{bits_per_value} bits/value: {got}, spec {fpp}"
            );
        }
    }
}
