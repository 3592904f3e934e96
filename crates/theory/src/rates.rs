//! Theoretical false-positive rates, per layout: what a filter of a given [`Geometry`] should show
//! after `n` distinct keys, if its hash and index scheme behave like independent uniform choices.
//! The harness compares measurements with these; a filter that departs from them has a flaw.
//!
//! Also: the compound rate of a scalable filter's stages ([`compound`], [`scalable_limit`]) and
//! the chance that a counting filter's counters saturate ([`counter_saturation_any`] and its
//! relatives).

/// The shape of a filter's bit array, from which bloomlab derives the layout-correct theory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Geometry {
    /// One array of `bits` bits; each key sets `hashes` positions anywhere in it.
    Flat {
        /// Bits in the array.
        bits: u64,
        /// Positions set per key.
        hashes: u32,
    },
    /// `blocks` blocks of `block_bits` bits; each key picks one block and sets `hashes` positions
    /// (with repetition) inside it.
    Blocked {
        /// Number of blocks.
        blocks: u64,
        /// Bits per block.
        block_bits: u32,
        /// Positions set per key inside its block.
        hashes: u32,
    },
    /// `blocks` blocks of `words` words of `word_bits` bits; each key picks one block and sets one
    /// bit in every word (Parquet's split-block filter: 8 words of 32 bits).
    SplitBlock {
        /// Number of blocks.
        blocks: u64,
        /// Words per block (one bit set in each).
        words: u32,
        /// Bits per word.
        word_bits: u32,
    },
}

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
    if n == 0 {
        // (Also where m = 1 would make it 0 x ln(0).)
        return 0.0;
    }
    let k = f64::from(hashes);
    let ln_zero = k * n as f64 * (-1.0 / bits as f64).ln_1p();
    (-ln_zero.exp_m1()).powf(k)
}

/// The mean of `f(i)` over a Poisson(lambda) number i of keys per block (Putze, Sanders & Singler
/// 2007): block loads are Poisson with mean n / blocks. Terms are summed in log space around the
/// mean, out to 40 standard deviations, so nothing underflows for heavy blocks.
///
/// Total, accurate and bounded in cost for every lambda (a saturated filter's estimated count can
/// be 2^64): while the loads start below [`STIRLING_FROM`] (a mean under about 2,300 keys a block,
/// which covers every filter near its design) it sums every term exactly as above. Beyond, a
/// running sum of ln(i!) would drift (by 1e-8 at 10^5 keys a block), so each term comes from
/// Stirling's series on its own (`ln_poisson_pmf_stirling`); and past [`EXACT_TERMS`] loads (a
/// mean over 2.7 million) it sums [`EXACT_TERMS`] equal runs of loads, each as its middle load's
/// term times its length. A run then spans under 1/200 of a standard deviation, so the midpoint
/// rule's relative error is below 1e-5 for a smooth `f`. `f(lambda)` beyond 1e28 (where the
/// spread is under 4e-13 of the mean) and when lambda is infinite; NaN gives NaN.
pub fn poisson_mixture(lambda: f64, f: impl Fn(f64) -> f64) -> f64 {
    if lambda.is_nan() {
        return f64::NAN;
    }
    if lambda <= 0.0 {
        return f(0.0);
    }
    if lambda > POINT_MASS {
        return f(lambda);
    }
    let (lo, hi) = poisson_range(lambda);
    if lo >= STIRLING_FROM {
        return poisson_mixture_in_runs(lambda, f);
    }
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

/// Beyond this mean a Poisson load lies within 40 standard deviations, 4e-13 of lambda, of its
/// mean, a difference a smooth `f` cannot show, and [`poisson_mixture`] is `f(lambda)`: the
/// spacing of `f64`s near lambda is then within two orders of the spread, too coarse to sum runs
/// over. (A count of keys below 2^64 over one block or more never gets there.)
const POINT_MASS: f64 = 1e28;

/// The most terms [`poisson_mixture`] sums one by one, and the runs it sums beyond that.
pub const EXACT_TERMS: u64 = 1 << 17;

/// The lowest load from which [`poisson_mixture`] takes each term from Stirling's series.
pub const STIRLING_FROM: u64 = 1 << 10;

/// [`poisson_mixture`] over the loads within 40 standard deviations (plus 40) of a large mean, one
/// by one, or in [`EXACT_TERMS`] runs of equal length when there are more, each weighted by its
/// middle load's probability times its length. In `f64`, so that a range past `u64::MAX` (a mean
/// near 2^64) keeps its upper half.
fn poisson_mixture_in_runs(lambda: f64, f: impl Fn(f64) -> f64) -> f64 {
    let spread = 40.0 * lambda.sqrt() + 40.0;
    let lo = (lambda - spread).max(0.0).floor();
    let count = (lambda + spread).ceil() - lo + 1.0;
    let runs = count.min(EXACT_TERMS as f64);
    let width = count / runs;
    (0..runs as u64)
        .map(|j| {
            let mid = lo + (j as f64 + 0.5) * width - 0.5;
            ln_poisson_pmf_stirling(lambda, mid).exp() * width * f(mid)
        })
        .sum()
}

/// `ln P(X = i)` for X ~ Poisson(lambda), with `ln i!` from Stirling's series and the rest written
/// around the mean so that no two large numbers cancel: with `x = (i - lambda) / lambda`,
/// `ln P = -lambda h(x) - ln(2 pi i)/2 - 1/(12 i) + 1/(360 i^3)`, `h(x) = (1 + x) ln(1 + x) - x`.
/// The series' next term is `-1/(1260 i^5)`: below 1e-18 from i = 1024, where [`poisson_mixture`]
/// starts using it.
fn ln_poisson_pmf_stirling(lambda: f64, i: f64) -> f64 {
    let x = (i - lambda) / lambda;
    -lambda * excess(x) - 0.5 * (std::f64::consts::TAU * i).ln() - 1.0 / (12.0 * i)
        + 1.0 / (360.0 * i * i * i)
}

/// `(1 + x) ln(1 + x) - x`, by its series `x^2/2 - x^3/6 + x^4/12 - x^5/20` (the next term is below
/// 1e-13 of the sum) where the closed form would cancel.
fn excess(x: f64) -> f64 {
    if x.abs() < 1e-3 {
        x * x * (0.5 - x * (1.0 / 6.0 - x * (1.0 / 12.0 - x / 20.0)))
    } else {
        (1.0 + x) * x.ln_1p() - x
    }
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
    // that full answers yes to nearly everything, and the approximation is as good. The table
    // takes hi k B steps; past 5e7 (tens of ms) a 512-bit block's mean load is over 190 probes a
    // bit, where both give 1 - e^-190, which is 1 in f64. (Beyond EXACT_TERMS keys a block the
    // table would also be read at the mixture's fractional run midpoints.)
    if hi >= EXACT_TERMS || hi as f64 * f64::from(hashes) * b as f64 > 5e7 {
        let k = f64::from(hashes);
        let ln_keep = (-1.0 / f64::from(block_bits)).ln_1p();
        return poisson_mixture(lambda, |i| (-(k * i * ln_keep).exp_m1()).powf(k)).min(1.0);
    }
    let table = block_load_fpr(block_bits, hashes, hi);
    // A rate: the mixture's mass sums to 1 only to rounding, which near saturation lifted the
    // rate past 1 (by 2e-10 at 15,000 keys in one block).
    poisson_mixture(lambda, |i| table[i as usize]).min(1.0)
}

/// Split-block layout: each key sets one bit in each of w words of b bits; a query tests one bit per
/// word: `sum_i Pois(i; n/blocks) (1 - (1 - 1/b)^i)^w` when every block is equally likely.
///
/// They are not quite: the Parquet spec picks the block from the upper 32 bits of the hash,
/// `((h >> 32) * blocks) >> 32`, so of the 2^32 values `2^32 mod blocks` blocks receive one more
/// than the others (`floor(2^32 / blocks)`). This hash-width term is nothing at the sizes a sweep
/// runs (a block count that is a power of two, or over 10^4 values per block), but at the
/// 10-billion-key size (375 million blocks, 11 or 12 values each) a block's load differs by
/// 9% between the two kinds, and since a query lands on the heavier blocks more often, the rate
/// is that of [`split_block_selection`]: the mean over the two kinds, each weighted by its share of
/// the hash values, of the Poisson mixture at its own load.
pub fn split_block(blocks: u64, words: u32, word_bits: u32, n: u64) -> f64 {
    split_block_selection(blocks, words, word_bits, n, 32)
}

/// [`split_block`] for a block chosen by multiply-shift from `index_bits` uniform hash bits:
/// `r = 2^index_bits mod blocks` blocks get `q + 1` of the values and the rest `q`
/// (`q = floor(2^index_bits / blocks)`). The rate is `sum over kinds of (share of values) x
/// sum_i Pois(i; n x values / 2^index_bits) (1 - (1 - 1/b)^i)^w`. With `blocks` dividing
/// `2^index_bits`, or more blocks than values (where the `blocks - 2^index_bits` blocks no value
/// reaches stay empty), it reduces to the same two-kind sum.
pub fn split_block_selection(
    blocks: u64,
    words: u32,
    word_bits: u32,
    n: u64,
    index_bits: u32,
) -> f64 {
    let ln_keep = (-1.0 / f64::from(word_bits)).ln_1p();
    let at_load =
        |lambda: f64| poisson_mixture(lambda, |i| (-(i * ln_keep).exp_m1()).powi(words as i32));
    let values = 1u128 << index_bits;
    let blocks_wide = u128::from(blocks.max(1));
    let q = values / blocks_wide;
    let r = values % blocks_wide;
    let total = values as f64;
    // (blocks of the kind, values per block of the kind)
    let kinds = [(r, q + 1), (blocks_wide - r, q)];
    kinds
        .iter()
        .filter(|&&(count, per)| count > 0 && per > 0)
        .map(|&(count, per)| {
            let share = (count * per) as f64 / total;
            share * at_load(n as f64 * per as f64 / total)
        })
        .sum::<f64>()
        .min(1.0)
}

/// Flat layout whose positions come from a reduction of `domain` equally likely values to the
/// array (`x % bits`, x uniform in `[0, domain)`), the hash-width term of a scheme that keeps fewer
/// than 64 bits: Guava's legacy `MURMUR128_MITZ_32` and the textbook port keep 31
/// (`domain = 2^31`).
///
/// When `domain <= bits`, only the first `domain` positions are ever used (a filter of more than
/// 2^31 bits behaves as one of 2^31 bits, however large it is); otherwise `domain mod bits`
/// positions receive one more value than the rest. Each kind of position is set with its own
/// probability after the `k n` probes, and a query's probe lands on each kind in proportion to its
/// values: `(sum over kinds of count x q x (1 - (1 - q)^(k n)))^k`, q the chance one probe hits one
/// position of the kind. With `domain` a multiple of `bits` this is [`flat`].
pub fn flat_reduced(bits: u64, hashes: u32, n: u64, domain: u64) -> f64 {
    let probes = f64::from(hashes) * n as f64;
    let kinds = reduced_kinds(bits, domain);
    let hit: f64 = kinds
        .iter()
        .map(|&(count, q)| {
            if q == 0.0 {
                0.0
            } else {
                count as f64 * q * -(probes * (-q).ln_1p()).exp_m1()
            }
        })
        .sum();
    hit.powi(hashes as i32)
}

/// The kinds of positions of a `% bits` reduction of `domain` uniform values, as (positions,
/// probability that one probe hits one given position of the kind), the first kind being the
/// lowest positions: `[0, domain mod bits)` (or `[0, domain)` when `domain <= bits`).
pub fn reduced_kinds(bits: u64, domain: u64) -> [(u64, f64); 2] {
    let d = domain as f64;
    if domain <= bits {
        [(domain, 1.0 / d), (bits - domain, 0.0)]
    } else {
        let (q, r) = (domain / bits, domain % bits);
        [(r, (q + 1) as f64 / d), (bits - r, q as f64 / d)]
    }
}

/// The compound false-positive rate of independent filters consulted together (a scalable filter's
/// stages): `1 - prod(1 - f_i)`, summed in log space (`ln_1p`/`exp_m1`) so that many tiny rates
/// lose nothing to rounding.
pub fn compound(rates: impl IntoIterator<Item = f64>) -> f64 {
    let ln_all_negative: f64 = rates.into_iter().map(|f| (-f).ln_1p()).sum();
    -ln_all_negative.exp_m1()
}

/// The bound on a scalable filter's compound rate whose stage i runs at `first * tightening^i`
/// (Almeida, Baquero, Preguica & Hutchison 2007): `1 - prod(1 - first r^i) <= sum first r^i =
/// first / (1 - r)`, whatever the number of stages. With `first = p (1 - r)` it is p; the textbook
/// schedule's `first = p`, `r = 1/2` gives 2p.
pub fn scalable_limit(first: f64, tightening: f64) -> f64 {
    first / (1.0 - tightening)
}

/// The saturation value of a `counter_bits`-bit counter, `2^counter_bits - 1`: the count at which a
/// counting filter's counter sticks (see bloomlab-filters' `Counting`).
pub fn saturation_value(counter_bits: u32) -> u64 {
    (1u64 << counter_bits) - 1
}

/// The exact probability that one counter of a counting filter reaches its saturation value
/// `t = 2^counter_bits - 1` after `n` keys of `hashes` probes each into `counters` counters, under
/// the usual model of independent uniform probes: the counter's load is X ~ Binomial(n k, 1/m) and
/// the result is `P(X >= t)`.
///
/// Summed exactly from the probability mass function (its logarithm built incrementally from
/// `ln C(N, t)`, so no factorial overflows): upward from t when t lies above the mean, where the
/// terms fall off geometrically; otherwise as `1 - P(X < t)`, a sum of t terms.
pub fn counter_saturation_one(counters: u64, hashes: u32, n: u64, counter_bits: u32) -> f64 {
    let t = saturation_value(counter_bits);
    let trials = n as f64 * f64::from(hashes);
    let q = 1.0 / counters as f64;
    if trials < t as f64 {
        return 0.0;
    }
    let ln_q = q.ln();
    let ln_keep = (-q).ln_1p();
    // ln P(X = x) for x = 0..: ln C(N, x) + x ln q + (N - x) ln(1 - q).
    let ln_pmf = |x: u64| -> f64 {
        let ln_choose: f64 = (0..x)
            .map(|j| (trials - j as f64).ln() - ((j + 1) as f64).ln())
            .sum();
        ln_choose + x as f64 * ln_q + (trials - x as f64) * ln_keep
    };
    let mean = trials * q;
    if (t as f64) > mean {
        let mut ln_term = ln_pmf(t);
        let mut total = 0.0;
        let mut x = t as f64;
        while x <= trials {
            let term = ln_term.exp();
            total += term;
            if term <= total * 1e-18 {
                break;
            }
            // P(x + 1) / P(x) = (N - x) / (x + 1) * q / (1 - q).
            ln_term += (trials - x).ln() - (x + 1.0).ln() + ln_q - ln_keep;
            x += 1.0;
        }
        total.min(1.0)
    } else {
        let below: f64 = (0..t).map(|x| ln_pmf(x).exp()).sum();
        (1.0 - below).max(0.0)
    }
}

/// The exact probability, under the independence model, that *any* of `counters` counters of
/// `counter_bits` bits reaches its saturation value after `n` keys of `hashes` probes:
/// `1 - (1 - q)^m` with q from [`counter_saturation_one`], computed as `-expm1(m ln_1p(-q))`, which
/// keeps its precision when q is far below 1/m.
///
/// The m loads are not independent (they sum to n k); they are negatively associated (Dubhashi &
/// Ranjan 1998), which makes this independence product a *lower* bound on the exact multinomial
/// probability. It is a close one: `tests/counter_theory.rs` computes the exact value and finds
/// them equal to 7 digits at 10 counters per key (m = 1000, k = 7, n = 100: 1.643e-12) and within
/// 1% at 6 keys per counter (m = 64); Fan et al.'s bound is 21 times too high at the former.
pub fn counter_saturation_any(counters: u64, hashes: u32, n: u64, counter_bits: u32) -> f64 {
    let q = counter_saturation_one(counters, hashes, n, counter_bits);
    -(counters as f64 * (-q).ln_1p()).exp_m1()
}

/// The expected number of saturated counters, `m q` (exact by linearity, no independence needed
/// between counters).
pub fn expected_saturated_counters(counters: u64, hashes: u32, n: u64, counter_bits: u32) -> f64 {
    counters as f64 * counter_saturation_one(counters, hashes, n, counter_bits)
}

/// Fan, Cao, Almeida & Broder's (2000) union bound on the same event, for comparison:
/// `P(max load >= t) <= m C(n k, t) / m^t <= m (e n k / (t m))^t`, capped at 1. At the optimal
/// `k = (m/n) ln 2` and 4-bit counters (t = 15) it is `m (e ln 2 / 15)^15`, about `3.1e-14 m`
/// (Fan et al. quote `1.37e-15 m` for a count of 16, the first value 4 bits cannot hold; here the
/// event is reaching 15, where the counter sticks).
pub fn counter_saturation_fan_bound(counters: u64, hashes: u32, n: u64, counter_bits: u32) -> f64 {
    let t = saturation_value(counter_bits) as f64;
    let m = counters as f64;
    let base = std::f64::consts::E * n as f64 * f64::from(hashes) / (t * m);
    (m.ln() + t * base.ln()).exp().min(1.0)
}

impl Geometry {
    /// `Filter::fpr_given_bits` (bloomlab-filters) of a filter of this geometry whose bit array is `bytes`
    /// (the in-memory layout's bytes: little-endian words, blocks in order), computed with the same
    /// operations in the same order, so a copy of a filter's bits held elsewhere (a Redis string)
    /// gives the in-memory filter's figure bit for bit. NaN when `bytes` is not `bits() / 8` long.
    pub fn fpr_given_bytes(&self, bytes: &[u8]) -> f64 {
        if bytes.len() as u64 * 8 != self.bits() {
            return f64::NAN;
        }
        let ones = |b: &[u8]| b.iter().map(|x| x.count_ones()).sum::<u32>();
        match *self {
            Geometry::Flat { bits, hashes } => {
                let set: u64 = bytes.iter().map(|x| u64::from(x.count_ones())).sum();
                (set as f64 / bits as f64).powi(hashes as i32)
            }
            Geometry::Blocked {
                blocks,
                block_bits,
                hashes,
            } => {
                let total: f64 = bytes
                    .chunks(block_bits as usize / 8)
                    .map(|b| (f64::from(ones(b)) / f64::from(block_bits)).powi(hashes as i32))
                    .sum();
                total / blocks as f64
            }
            Geometry::SplitBlock {
                blocks,
                words,
                word_bits,
            } => {
                let word_bytes = word_bits as usize / 8;
                let total: f64 = bytes
                    .chunks(words as usize * word_bytes)
                    .map(|b| {
                        b.chunks(word_bytes)
                            .map(|w| f64::from(ones(w)) / f64::from(word_bits))
                            .product::<f64>()
                    })
                    .sum();
                total / blocks as f64
            }
        }
    }

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

/// The fill theory of each layout: what a filter's share of set bits says about its keys (used by
/// bloomlab-filters' `fill` estimates).
impl Geometry {
    /// The probability r that one distinct key sets a given bit, the same for every bit of the
    /// layout under its theory's model: flat `1 - (1 - 1/m)^k`; blocked `(1 - (1 - 1/B)^k) / nb`;
    /// split-block `1 / (nb b)` (see bloomlab-filters' `fill` module).
    pub fn key_bit_probability(&self) -> f64 {
        match *self {
            Geometry::Flat { bits, hashes } => {
                -(f64::from(hashes) * (-1.0 / bits as f64).ln_1p()).exp_m1()
            }
            Geometry::Blocked {
                blocks,
                block_bits,
                hashes,
            } => {
                let in_block =
                    -(f64::from(hashes) * (-1.0 / f64::from(block_bits)).ln_1p()).exp_m1();
                in_block / blocks as f64
            }
            Geometry::SplitBlock {
                blocks, word_bits, ..
            } => 1.0 / (blocks as f64 * f64::from(word_bits)),
        }
    }

    /// The exact mean fill after `n` distinct keys under the layout's model, `1 - (1 - r)^n`
    /// (r from [`key_bit_probability`](Self::key_bit_probability)); `n` may be fractional.
    pub fn expected_fill(&self, n: f64) -> f64 {
        -(n * (-self.key_bit_probability()).ln_1p()).exp_m1()
    }

    /// The exact variance of the number of set bits after `n` distinct keys under the layout's
    /// model (see bloomlab-filters' `fill` module): the classic occupancy variance for the flat layout,
    /// and for the blocked and split-block ones the same sum over pairs of bits with the pair
    /// classes of the layout (block loads multinomial, not independent). Never negative.
    pub fn set_bits_variance(&self, n: f64) -> f64 {
        let m = self.bits() as f64;
        let r = self.key_bit_probability();
        let ln_keep = (-r).ln_1p();
        let a = (n * ln_keep).exp();
        let one_minus_a = -(n * ln_keep).exp_m1();
        let keep2 = (1.0 - r) * (1.0 - r);
        let pairs: f64 = self
            .pair_classes(r)
            .iter()
            .filter(|&&(count, _)| count > 0.0)
            .map(|&(count, delta)| count * (n * (delta / keep2).ln_1p()).exp_m1())
            .sum();
        (m * a * one_minus_a + a * a * pairs).max(0.0)
    }

    /// The ordered pairs of distinct bits by class, as (number of pairs, `P(one key sets both) -
    /// r^2`): the chance that one key leaves both clear is `(1 - r)^2` plus this.
    fn pair_classes(&self, r: f64) -> [(f64, f64); 3] {
        let m = self.bits() as f64;
        match *self {
            Geometry::Flat { hashes, .. } => {
                // (1 - 2/m)^k - (1 - 1/m)^(2k), with (1 - 2/m) / (1 - 1/m)^2 = 1 - 1/(m - 1)^2.
                let k = f64::from(hashes);
                let delta = (1.0 - r).powi(2) * (k * (-1.0 / (m - 1.0).powi(2)).ln_1p()).exp_m1();
                [(m * (m - 1.0), delta), (0.0, 0.0), (0.0, 0.0)]
            }
            Geometry::Blocked {
                blocks,
                block_bits,
                hashes,
            } => {
                let (nb, b, k) = (blocks as f64, f64::from(block_bits), f64::from(hashes));
                // Inside its block a key sets a given bit with q = 1 - x, x = (1 - 1/B)^k, and
                // both of two given bits with t = 1 - 2x + (1 - 2/B)^k
                // = q^2 + x^2 ((1 - 1/(B - 1)^2)^k - 1).
                let x = (k * (-1.0 / b).ln_1p()).exp();
                let q = -(k * (-1.0 / b).ln_1p()).exp_m1();
                let t = q * q + x * x * (k * (-1.0 / (b - 1.0).powi(2)).ln_1p()).exp_m1();
                [
                    (m * (b - 1.0), t / nb - r * r),
                    (m * (m - b), -r * r),
                    (0.0, 0.0),
                ]
            }
            Geometry::SplitBlock {
                words, word_bits, ..
            } => {
                let (w, b) = (f64::from(words), f64::from(word_bits));
                // One bit per word: two bits of one word are never both set by one key; bits of
                // two words of its block both are with chance 1/b^2 given the block.
                [
                    (m * (b - 1.0), -r * r),
                    (m * b * (w - 1.0), r / b - r * r),
                    (m * (m - w * b), -r * r),
                ]
            }
        }
    }

    /// The n at which the expected fill is `fill`: `ln(1 - fill) / ln(1 - r)` (+inf at 1).
    pub fn count_at_fill(&self, fill: f64) -> f64 {
        (-fill).ln_1p() / (-self.key_bit_probability()).ln_1p() + 0.0
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

    /// Means from empty to past any count of keys, across both ways of summing and the point mass.
    const MEANS: [f64; 14] = [
        1e-300, 0.5, 7.0, 5000.0, 1.2e5, 1.4e5, 2.6e6, 2.8e6, 1e9, 1e15, 1.9e19, 1e27, 1e29, 1e300,
    ];

    #[test]
    fn poisson_mixture_is_a_bounded_distribution_at_every_mean() {
        for lambda in MEANS {
            let calls = std::cell::Cell::new(0u64);
            let mass = poisson_mixture(lambda, |_| {
                calls.set(calls.get() + 1);
                1.0
            });
            let mean = poisson_mixture(lambda, |i| i);
            // Past 2^17 loads the sum is in runs (midpoint rule): 1e-6.
            let tolerance = if lambda > 2e6 { 1e-6 } else { 1e-9 };
            assert!(
                (mass - 1.0).abs() < tolerance && (mean / lambda - 1.0).abs() < tolerance,
                "lambda {lambda}: mass {mass}, mean {mean}"
            );
            assert!(
                calls.get() <= EXACT_TERMS,
                "lambda {lambda}: {} evaluations of f",
                calls.get()
            );
        }
        assert!(poisson_mixture(f64::NAN, |_| 1.0).is_nan());
        assert_eq!(poisson_mixture(f64::INFINITY, |_| 0.25), 0.25);
        assert_eq!(poisson_mixture(0.0, |i| i + 0.5), 0.5);
    }

    #[test]
    fn stirling_terms_match_the_exact_sum_where_the_two_ways_meet() {
        // At a mean of 1.25e5 keys a block both forms can be computed: Stirling's
        // log-pmf agrees with the direct one to 1e-9 (relative, on the probabilities). The
        // reference sums ln(i!) with Kahan's compensation: plainly summed, 1.3e5 logarithms
        // near 12 drift by up to 2e-9 themselves.
        let lambda: f64 = 1.25e5;
        let ln_fact = |i: u64| {
            let (mut sum, mut carry) = (0.0f64, 0.0f64);
            for j in 2..=i {
                let y = (j as f64).ln() - carry;
                let t = sum + y;
                carry = (t - sum) - y;
                sum = t;
            }
            sum
        };
        for i in [124_000u64, 125_000, 126_500] {
            let exact = -lambda + i as f64 * lambda.ln() - ln_fact(i);
            let stirling = ln_poisson_pmf_stirling(lambda, i as f64);
            assert!(
                (exact - stirling).abs() < 1e-9,
                "i = {i}: {exact} vs {stirling}"
            );
        }
    }

    /// Every layout's theory, at every count of keys to 2^64 - 1 (a saturated filter's estimate):
    /// it returns (issue 64: the blocked theory summed ln(i!) for i up to n / blocks, and `stat`
    /// on a saturated blocked filter never came back), stays a rate, never falls as keys are
    /// added, and reaches 1 when the filter is hopelessly full.
    #[test]
    fn every_layout_theory_is_a_rising_rate_at_every_count() {
        let geometries = [
            Geometry::Flat { bits: 1, hashes: 1 },
            Geometry::Flat {
                bits: 9_585_059,
                hashes: 7,
            },
            Geometry::Blocked {
                blocks: 1,
                block_bits: 512,
                hashes: 7,
            },
            Geometry::Blocked {
                blocks: 19,
                block_bits: 512,
                hashes: 7,
            },
            Geometry::Blocked {
                blocks: 18_721,
                block_bits: 512,
                hashes: 10,
            },
            Geometry::SplitBlock {
                blocks: 1,
                words: 8,
                word_bits: 32,
            },
            Geometry::SplitBlock {
                blocks: 37_443,
                words: 8,
                word_bits: 32,
            },
        ];
        let mut counts: Vec<u64> = (0..64).map(|e| 1u64 << e).collect();
        counts.extend([
            0,
            3,
            1000,
            15_000,
            20_000,
            u64::MAX / 3,
            u64::MAX - 1,
            u64::MAX,
        ]);
        counts.sort_unstable();
        // Past 2^17 keys a block the mixture is summed in runs, whose documented relative error
        // (1e-5 at most; a few 1e-9 seen, from rounding the run midpoints to the f64 spacing
        // near 2^53 and beyond) is what a rate near 1 may dip by.
        let runs = 1e-5;
        for g in geometries {
            let mut last = 0.0;
            for &n in &counts {
                let rate = g.fpr(n);
                assert!(
                    (0.0..=1.0).contains(&rate) && rate >= last - runs,
                    "{g:?} at n = {n}: {rate} after {last}"
                );
                last = rate;
            }
            assert!(last > 1.0 - runs, "{g:?} at n = 2^64 - 1: {last}");
        }
        for blocks in [1, 2, 1 << 20] {
            assert!(split_block_selection(blocks, 8, 32, u64::MAX, 64) > 1.0 - runs);
        }
        assert!(flat_reduced(1 << 20, 7, u64::MAX, 1 << 31) > 1.0 - runs);
    }

    #[test]
    fn counter_saturation_is_a_probability_at_every_count() {
        for n in [0, 1, 1000, 1 << 32, 1 << 53, u64::MAX] {
            for bits in [4, 8] {
                let one = counter_saturation_one(1 << 20, 7, n, bits);
                let any = counter_saturation_any(1 << 20, 7, n, bits);
                assert!(
                    (0.0..=1.0).contains(&one) && (0.0..=1.0).contains(&any) && any >= one,
                    "n = {n}, {bits}-bit counters: one {one}, any {any}"
                );
            }
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

    #[test]
    fn a_reduced_domain_that_divides_the_bits_is_the_flat_theory() {
        // 2^31 values onto 2^20 positions: every position gets 2^11 of them.
        let (a, b) = (
            flat_reduced(1 << 20, 7, 100_000, 1 << 31),
            flat(1 << 20, 7, 100_000),
        );
        assert!((a / b - 1.0).abs() < 1e-9, "{a} vs {b}");
    }

    #[test]
    fn a_filter_larger_than_its_domain_behaves_as_one_of_the_domain_size() {
        // 2^33 bits but positions below 2^31 only: the rate of a 2^31-bit filter, far above the
        // rate of the 2^33 bits.
        let (m, k, n) = (1u64 << 33, 2, 200_000_000);
        let reduced = flat_reduced(m, k, n, 1 << 31);
        let small = flat(1 << 31, k, n);
        assert!((reduced / small - 1.0).abs() < 1e-9, "{reduced} vs {small}");
        assert!(reduced > 10.0 * flat(m, k, n));
    }

    #[test]
    fn modulo_bias_raises_the_rate_near_the_domain() {
        // 1.5e9 positions from 2^31 values: the lowest 647M positions get two values each.
        let (m, k, n) = (1_500_000_000, 7, 150_000_000);
        let [(first, q1), (rest, q2)] = reduced_kinds(m, 1 << 31);
        assert_eq!(first, (1u64 << 31) - m);
        assert_eq!(first + rest, m);
        assert!((first as f64 * q1 + rest as f64 * q2 - 1.0).abs() < 1e-12);
        assert!(flat_reduced(m, k, n, 1 << 31) > 1.05 * flat(m, k, n));
    }

    #[test]
    fn split_block_selection_is_the_uniform_mixture_when_blocks_divide_the_values() {
        let ln_keep = (-1.0f64 / 32.0).ln_1p();
        let uniform = |blocks: u64, n: u64| {
            poisson_mixture(n as f64 / blocks as f64, |i| {
                (-(i * ln_keep).exp_m1()).powi(8)
            })
        };
        let (a, b) = (
            split_block(1 << 12, 8, 32, 40_000),
            uniform(1 << 12, 40_000),
        );
        assert!((a / b - 1.0).abs() < 1e-12, "{a} vs {b}");
        // Many values per block: the two kinds differ by 1 in 10^5, and so does nothing else.
        let (a, b) = (
            split_block(37_443, 8, 32, 1_000_000),
            uniform(37_443, 1_000_000),
        );
        assert!((a / b - 1.0).abs() < 1e-6, "{a} vs {b}");
        // 11 or 12 values per block (the 10-billion-key size): the heavier blocks are queried
        // more often, and the rate is above the uniform one.
        let blocks = 375_000_000;
        let n = 10_000_000_000;
        assert!(split_block(blocks, 8, 32, n) > 1.001 * uniform(blocks, n));
    }
}
