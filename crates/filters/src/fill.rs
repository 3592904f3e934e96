//! What a filter's bits say about it: how many bits are set, how many distinct keys that implies
//! (with an interval), the false-positive rate those bits give, and how many more keys reach a
//! rate or a fill. Pure functions of a [`Geometry`] and the bytes (or only the set-bit count), for
//! filters held anywhere: in memory, in Redis, in a file.
//!
//! [`FillCounter`] streams the bytes in chunks (memory O(1), so a multi-gigabyte filter is read a
//! few MiB at a time); [`FillStat`] holds the result.
//!
//! # The model
//!
//! Every layout is treated as its theory treats it: each distinct key picks its block uniformly and
//! its positions inside uniformly and independently (with repetition), independently of every
//! other key. Then a given bit stays clear after one key with the same probability `1 - r` for
//! every bit ([`Geometry::key_bit_probability`]):
//!
//! | layout | r, the chance one key sets a given bit |
//! | --- | --- |
//! | flat, m bits, k probes | `1 - (1 - 1/m)^k` |
//! | blocked, `nb` blocks of B bits, k probes in the block | `(1 - (1 - 1/B)^k) / nb` |
//! | split-block, `nb` blocks of w words of b bits | `1 / (nb b)` |
//!
//! and, keys being independent, the expected fill after n keys is exactly `1 - (1 - r)^n`
//! ([`Geometry::expected_fill`]).
//!
//! **Estimate.** [`FillStat::estimated_count`] solves `expected_fill(n) = X/m` for the observed X
//! set bits: `n = ln(1 - X/m) / ln(1 - r)`. For the flat layout this is Swamidass & Baldi's
//! `-(m/k) ln(1 - X/m)` (J. Chem. Inf. Model. 47, 2007) up to a relative `1/(2m)` (their form uses
//! `ln(1 - 1/m) ~ -1/m`); for the split-block layout it is theirs with m = bits, k = w, to the same
//! order. For the blocked layout the plain formula is biased low by about `(k - 1)/(2B)` (0.6% at
//! k = 7 in 512-bit blocks: a key's k probes into one block collide more often than k probes into
//! the whole array): one standard deviation of the estimate at 2,000 keys, eleven at 10^6, where
//! it put a Redis `blocked512/xxh3` filter holding 10^6 keys at 993,862 (this estimate: 999,700,
//! 95% interval 999,175 to 1,000,226). So the layout's own r is used;
//! [`FillStat::swamidass_baldi`] keeps the plain formula for comparison.
//!
//! **Variance.** [`Geometry::set_bits_variance`] is the exact variance of X under the model, from
//! the joint probability that two given bits both stay clear, `s^n` with `s = 1 - 2r + P(one key
//! sets both)`. Bit pairs fall into at most three classes (same block and word, same block, other
//! blocks), each with its own `P(one key sets both)`, so
//! `Var X = m a (1 - a) + a^2 sum_c N_c ((s_c / (1 - r)^2)^n - 1)`, `a = (1 - r)^n`, `N_c` the
//! ordered pairs of the class, each term computed through `ln_1p`/`expm1` so nothing cancels
//! catastrophically. For the flat layout it is the classic occupancy variance of k n throws into m
//! bins.
//!
//! A model where block loads are independent Poisson(n / nb) variables (with the law of total
//! variance over the per-block occupancy) overstates the blocked layout's variance many times: the
//! loads of all blocks sum to exactly n, so the part of X's spread that is linear in the loads
//! cancels between blocks and only the curvature remains. At 2,000 keys in 38 blocks of 512 bits
//! (k = 7) the Poisson model's variance is about 15 times the exact one (its interval 3.9 times
//! as wide). The exact form is what the coverage tests in `tests/fill.rs` confirm.
//!
//! **Interval.** [`FillStat::count_interval`] is the delta method around the estimate:
//! `[g(X - 1/2) - z sd, g(X + 1/2) + z sd]`, g the estimate as a function of the set-bit count,
//! `sd = sqrt(Var X) / (d E[X] / dn)` at `n = n_hat`, z the normal quantile of the confidence. Both
//! ends are at least `ceil(X / k)`: a key sets at most k bits, so fewer keys are impossible. With a
//! few dozen keys the spread of X is a bit or two and one collision of two probes moves the
//! estimate below the true count by more than z sd; the floor brings the true count back inside
//! (the estimate itself can then lie below the floor, so outside the interval). The half bits are
//! the continuity correction of a count, which keeps the coverage up at a few hundred keys. The
//! interval assumes X close to normal and the estimate close to linear in X over a few standard
//! deviations; `tests/fill.rs` checks the coverage at fills 0.5 and 0.88 of 19,200-bit filters,
//! and that it is at least the confidence from 1 to 300 keys. No bit set means no key (the
//! interval is `[0, 0]`, exactly). Every bit set gives an estimate of
//! infinity and the interval `[lo, inf)`, where lo is the count at which "no clear bit left" has
//! probability `(1 - confidence)/2` if the clear bits are Poisson with mean `m (1 - r)^n`.
//!
//! **What the model leaves out.** Real hashes are not independent uniform choices: the harness
//! measures how close they come. The split-block layout picks its block from 32 hash bits, so with
//! a block count that is not a power of two blocks differ in load by `nb / 2^32` relative
//! (negligible below a few hundred million blocks, see [`crate::theory::split_block`]). A flat
//! index scheme that keeps fewer than 64 hash bits (Guava's MITZ_32) does not reach every position
//! of a filter past 2^31 bits. Counting filters have counters, not bits: this module is not for
//! them.

use statrs::distribution::{ContinuousCDF, Normal};

use crate::error::{BloomError, Compact, Result};
use crate::filter::Geometry;

/// How a geometry's bytes divide: the whole array, and the unit a chunk must be a multiple of
/// (a 64-bit word for the flat layout, a block otherwise).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shape {
    total_bytes: u64,
    unit_bytes: usize,
}

/// Checks that `g` describes a bit array of whole bytes, with at least one bit and one probe, and
/// returns how its bytes divide.
fn shape(g: &Geometry) -> Result<Shape> {
    let bad = |allowed: &str| BloomError::OutOfRange {
        what: "filter geometry",
        value: format!("{g:?}"),
        allowed: allowed.to_string(),
    };
    let (bits, unit_bits) = match *g {
        Geometry::Flat { bits, hashes } => {
            if hashes == 0 {
                return Err(bad("it needs at least 1 probe per key"));
            }
            (Some(bits), 64)
        }
        Geometry::Blocked {
            blocks,
            block_bits,
            hashes,
        } => {
            if hashes == 0 {
                return Err(bad("it needs at least 1 probe per key"));
            }
            (blocks.checked_mul(u64::from(block_bits)), block_bits)
        }
        Geometry::SplitBlock {
            blocks,
            words,
            word_bits,
        } => {
            if word_bits == 0 || !word_bits.is_multiple_of(8) {
                return Err(bad("words must be a positive whole number of bytes"));
            }
            let block_bits = words.checked_mul(word_bits).unwrap_or(0);
            (blocks.checked_mul(u64::from(block_bits)), block_bits)
        }
    };
    let bits = bits.ok_or_else(|| bad("its bit count must fit in 64 bits"))?;
    if bits == 0 || !bits.is_multiple_of(8) || unit_bits == 0 || !unit_bits.is_multiple_of(8) {
        return Err(bad(
            "it must have at least 1 bit, and its bit count and block size must be whole bytes",
        ));
    }
    Ok(Shape {
        total_bytes: bits / 8,
        unit_bytes: unit_bits as usize / 8,
    })
}

/// Set bits in `bytes` (whole 64-bit words counted at once, then the remaining bytes).
#[inline]
fn ones(bytes: &[u8]) -> u64 {
    let words = bytes.chunks_exact(8);
    let tail: u64 = words
        .remainder()
        .iter()
        .map(|b| u64::from(b.count_ones()))
        .sum();
    words
        .map(|w| u64::from(u64::from_ne_bytes(w.try_into().expect("8 bytes")).count_ones()))
        .sum::<u64>()
        + tail
}

/// Counts a filter's set bits and its implied false-positive rate from its bytes, fed in
/// consecutive chunks: memory O(1) whatever the filter's size.
///
/// Guarantee: after feeding a filter's bytes (the in-memory layout: little-endian words, blocks in
/// order) in any chunking, [`finish`](Self::finish) gives the set-bit count and an `implied_fpr`
/// bit-identical to [`Geometry::fpr_given_bytes`] of the whole array (same operations, same
/// order).
///
/// ```
/// use bloomlab_filters::{Geometry, fill::FillCounter};
/// let g = Geometry::Blocked { blocks: 4, block_bits: 512, hashes: 7 };
/// let bytes = vec![0x0fu8; 256];
/// let mut counter = FillCounter::new(g);
/// counter.feed(&bytes[..64])?; // one block
/// counter.feed(&bytes[64..])?; // three more
/// let stat = counter.finish()?;
/// assert_eq!(stat.set_bits, 1024);
/// assert_eq!(stat.implied_fpr, g.fpr_given_bytes(&bytes));
/// # Ok::<(), bloomlab_filters::BloomError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FillCounter {
    geometry: Geometry,
    shape: Result<Shape>,
    fed: u64,
    set_bits: u64,
    /// Blocked and split-block layouts: the sum, in block order, of each block's rate.
    rate_sum: f64,
}

impl FillCounter {
    /// A counter for a filter of geometry `geometry`, nothing fed yet. A geometry that describes no
    /// whole-byte bit array (no bits, no probes, a block of a fractional byte count, a size past
    /// `u64`) makes every later call an error naming it.
    pub fn new(geometry: Geometry) -> Self {
        Self {
            geometry,
            shape: shape(&geometry),
            fed: 0,
            set_bits: 0,
            rate_sum: 0.0,
        }
    }

    /// Bytes fed so far.
    pub fn bytes_fed(&self) -> u64 {
        self.fed
    }

    /// Counts the next `chunk` of the filter's bytes.
    ///
    /// Errors, counting nothing, when the chunk is not a whole number of units (8 bytes for the
    /// flat layout, whose last chunk may also end at the array's end; a block otherwise: 64 bytes
    /// for 512-bit blocks, 32 for Parquet's split blocks), or when it would run past the array's
    /// `bits / 8` bytes.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<()> {
        let shape = self.shape.as_ref().map_err(Clone::clone)?;
        let left = shape.total_bytes - self.fed;
        let len = chunk.len() as u64;
        if len > left {
            return Err(BloomError::OutOfRange {
                what: "filter bytes",
                value: format!("{} (a chunk of {len} after {})", self.fed + len, self.fed),
                allowed: format!(
                    "a filter of {:?} has exactly {} bytes (bits / 8)",
                    self.geometry, shape.total_bytes
                ),
            });
        }
        let flat_tail = matches!(self.geometry, Geometry::Flat { .. }) && len == left;
        if !chunk.len().is_multiple_of(shape.unit_bytes) && !flat_tail {
            return Err(BloomError::OutOfRange {
                what: "chunk length",
                value: format!("{len} bytes"),
                allowed: format!(
                    "a whole number of {}-byte {} of {:?}",
                    shape.unit_bytes,
                    match self.geometry {
                        Geometry::Flat { .. } => "words",
                        _ => "blocks",
                    },
                    self.geometry
                ),
            });
        }
        match self.geometry {
            Geometry::Flat { .. } => self.set_bits += ones(chunk),
            Geometry::Blocked {
                block_bits, hashes, ..
            } => {
                for block in chunk.chunks_exact(shape.unit_bytes) {
                    let set = ones(block);
                    self.set_bits += set;
                    // As in `fpr_given_bytes`: (set / B)^k, summed in block order.
                    self.rate_sum += (set as f64 / f64::from(block_bits)).powi(hashes as i32);
                }
            }
            Geometry::SplitBlock { word_bits, .. } => {
                let word_bytes = word_bits as usize / 8;
                for block in chunk.chunks_exact(shape.unit_bytes) {
                    // As in `fpr_given_bytes`: the product over words from 1.0, in word order.
                    let mut rate = 1.0;
                    for word in block.chunks_exact(word_bytes) {
                        // Parquet's 32-bit words counted whole, not byte by byte (256 MiB
                        // streamed: 1.2 -> 2.0 GB/s).
                        let set = match <[u8; 4]>::try_from(word) {
                            Ok(w) => u64::from(u32::from_ne_bytes(w).count_ones()),
                            Err(_) => ones(word),
                        };
                        self.set_bits += set;
                        rate *= set as f64 / f64::from(word_bits);
                    }
                    self.rate_sum += rate;
                }
            }
        }
        self.fed += len;
        Ok(())
    }

    /// The statistics of the bytes fed. Errors when they were not exactly the array's `bits / 8`
    /// bytes (a truncated copy has no rate).
    pub fn finish(self) -> Result<FillStat> {
        let shape = self.shape?;
        if self.fed != shape.total_bytes {
            return Err(BloomError::OutOfRange {
                what: "filter bytes",
                value: self.fed.to_string(),
                allowed: format!(
                    "a filter of {:?} has exactly {} bytes (bits / 8)",
                    self.geometry, shape.total_bytes
                ),
            });
        }
        let implied_fpr = match self.geometry {
            Geometry::Flat { bits, hashes } => {
                (self.set_bits as f64 / bits as f64).powi(hashes as i32)
            }
            Geometry::Blocked { blocks, .. } | Geometry::SplitBlock { blocks, .. } => {
                self.rate_sum / blocks as f64
            }
        };
        Ok(FillStat {
            geometry: self.geometry,
            set_bits: self.set_bits,
            implied_fpr,
            source: RateSource::Bytes,
        })
    }
}

/// What [`FillStat::implied_fpr`] was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateSource {
    /// The bytes themselves: exactly [`Geometry::fpr_given_bytes`], the rate of this very filter.
    Bytes,
    /// Only the set-bit count (a Redis `BITCOUNT`). For the flat layout still exact,
    /// `(X/m)^k`. For the blocked and split-block layouts, whose rate depends on how the set bits
    /// spread over blocks, it is the layout theory [`Geometry::fpr`] at the estimated count
    /// (rounded): the mean rate of filters of that many keys, not this filter's own.
    SetBitCount,
}

/// What a filter's bits say: the set-bit count, the false-positive rate the bits imply, and
/// (through its methods) the fill, the estimated number of distinct keys inserted with its
/// interval, and the keys left until a rate or a fill. See the [module documentation](self) for
/// the model.
#[derive(Debug, Clone, PartialEq)]
pub struct FillStat {
    /// The filter's geometry.
    pub geometry: Geometry,
    /// Bits set, X.
    pub set_bits: u64,
    /// The probability that a query whose probes are uniform and independent finds them all set,
    /// given these bits (see [`source`](Self::source) for how exact it is).
    pub implied_fpr: f64,
    /// What `implied_fpr` was computed from.
    pub source: RateSource,
}

impl FillStat {
    /// The statistics of a filter's whole bit array (the in-memory layout's bytes): [`FillCounter`]
    /// fed once. Errors as [`FillCounter::feed`] and [`FillCounter::finish`] do.
    pub fn from_bytes(geometry: Geometry, bytes: &[u8]) -> Result<Self> {
        let mut counter = FillCounter::new(geometry);
        counter.feed(bytes)?;
        counter.finish()
    }

    /// The statistics when only the set-bit count is known; `implied_fpr` as
    /// [`RateSource::SetBitCount`] says. Errors for an invalid geometry or more set bits than it
    /// has.
    pub fn from_set_bits(geometry: Geometry, set_bits: u64) -> Result<Self> {
        shape(&geometry)?;
        let bits = geometry.bits();
        if set_bits > bits {
            return Err(BloomError::OutOfRange {
                what: "set-bit count",
                value: set_bits.to_string(),
                allowed: format!("a filter of {geometry:?} has 0..={bits} bits"),
            });
        }
        let mut stat = Self {
            geometry,
            set_bits,
            implied_fpr: 0.0,
            source: RateSource::SetBitCount,
        };
        stat.implied_fpr = match geometry {
            Geometry::Flat { bits, hashes } => (set_bits as f64 / bits as f64).powi(hashes as i32),
            _ if set_bits == bits => 1.0,
            // Finite below a full array; `as` saturates.
            _ => geometry.fpr(stat.estimated_count().round() as u64),
        };
        Ok(stat)
    }

    /// Total bits, m.
    pub fn bits(&self) -> u64 {
        self.geometry.bits()
    }

    /// Bits a key sets at most, k (the split-block layout's words per block).
    pub fn hashes(&self) -> u32 {
        self.geometry.hashes()
    }

    /// The fraction of bits set, X/m.
    pub fn fill(&self) -> f64 {
        self.set_bits as f64 / self.bits() as f64
    }

    /// The number of distinct keys whose expected fill is this filter's fill,
    /// `ln(1 - X/m) / ln(1 - r)`: 0 when no bit is set, +inf when every bit is. Swamidass & Baldi's
    /// estimate with the layout's own r (see the [module documentation](self)).
    pub fn estimated_count(&self) -> f64 {
        if self.set_bits == 0 {
            return 0.0;
        }
        self.geometry.count_at_fill(self.fill())
    }

    /// Swamidass & Baldi's formula as usually quoted, `-(m/k) ln(1 - X/m)`, with the geometry's m
    /// and k: +inf when every bit is set. Biased low for the blocked layout (by about
    /// `(k - 1)/(2B)`); [`estimated_count`](Self::estimated_count) is not.
    pub fn swamidass_baldi(&self) -> f64 {
        let (m, k) = (self.bits() as f64, f64::from(self.hashes()));
        -(m / k) * (-self.fill()).ln_1p() + 0.0
    }

    /// The standard deviation of [`estimated_count`](Self::estimated_count) by the delta method:
    /// `sqrt(Var X) / (d E[X] / dn)` at the estimate. 0 when no bit is set (then no key was), +inf
    /// when every bit is.
    pub fn count_sd(&self) -> f64 {
        let m = self.bits();
        if self.set_bits == 0 {
            return 0.0;
        }
        if self.set_bits == m {
            return f64::INFINITY;
        }
        let n = self.estimated_count();
        // E[X] = m (1 - (1 - r)^n), so dE[X]/dn = -m (1 - r)^n ln(1 - r), and at the estimate
        // m (1 - r)^n is the observed count of clear bits.
        let slope = -((m - self.set_bits) as f64) * (-self.geometry.key_bit_probability()).ln_1p();
        self.geometry.set_bits_variance(n).sqrt() / slope
    }

    /// A two-sided interval for the number of distinct keys inserted, at `confidence` (in (0, 1)),
    /// by the delta method (see the [module documentation](self) for the model and where it is
    /// approximate): `[0, 0]` when no bit is set, `[lo, inf)` when every bit is.
    pub fn count_interval(&self, confidence: f64) -> Result<(f64, f64)> {
        if !(confidence > 0.0 && confidence < 1.0) {
            return Err(BloomError::OutOfRange {
                what: "confidence",
                value: Compact(confidence).to_string(),
                allowed: "it must be a number in the open interval (0, 1)".to_string(),
            });
        }
        let m = self.bits();
        if self.set_bits == 0 {
            return Ok((0.0, 0.0));
        }
        // A key sets at most k bits.
        let floor = (self.set_bits as f64 / f64::from(self.hashes())).ceil();
        let tail = (1.0 - confidence) / 2.0;
        if self.set_bits == m {
            // P(no clear bit) = exp(-m (1 - r)^n) under a Poisson count of clear bits; it reaches
            // the tail probability where m (1 - r)^n = -ln(tail).
            let ln_a = (-tail.ln() / m as f64).ln();
            let lo = ln_a / (-self.geometry.key_bit_probability()).ln_1p();
            return Ok((lo.max(floor), f64::INFINITY));
        }
        let z = Normal::standard().inverse_cdf(1.0 - tail);
        let sd = self.count_sd();
        // X is a count: the interval is that of X -+ 1/2 (continuity correction), which matters
        // only while the spread is a few bits (a few hundred keys).
        let m = m as f64;
        let at = |x: f64| self.geometry.count_at_fill(x / m);
        let x = self.set_bits as f64;
        Ok((
            (at(x - 0.5) - z * sd).max(floor),
            (at(x + 0.5) + z * sd).max(floor),
        ))
    }

    /// How many more distinct keys, beyond [`estimated_count`](Self::estimated_count), until the
    /// layout theory [`Geometry::fpr`] reaches `p`: `N - estimate` for the smallest integer N with
    /// `fpr(N) >= p`, found by bisection on the theory (the same function as an in-memory filter's
    /// `fpr_theory` for every layout whose index scheme keeps 64 hash bits). 0 when the theory at
    /// the rounded estimate is already at or past p, or every bit is set.
    ///
    /// Total over `f64`, each answer the exact one: `p <= 0` gives 0 (reached with no key),
    /// `p >= 1` gives +inf (the theory stays below 1 at every finite count; also when no count
    /// below 2^64 reaches p), NaN gives NaN. A caller taking p from a user checks it is in (0, 1)
    /// first and names the flag in its error.
    pub fn keys_to_rate(&self, p: f64) -> f64 {
        if p.is_nan() {
            return f64::NAN;
        }
        if p >= 1.0 {
            return f64::INFINITY;
        }
        if p <= 0.0 {
            return 0.0;
        }
        let now = self.estimated_count();
        if !now.is_finite() {
            return 0.0;
        }
        let reached = |n: u64| self.geometry.fpr(n) >= p;
        let base = now.round() as u64;
        if reached(base) {
            return 0.0;
        }
        // fpr is increasing in n: double the step until past p, then bisect, keeping
        // fpr(lo) < p <= fpr(hi).
        let (mut lo, mut step) = (base, 1u64);
        let mut hi = loop {
            let next = base.saturating_add(step);
            if reached(next) {
                break next;
            }
            if next == u64::MAX {
                return f64::INFINITY;
            }
            lo = next;
            step = step.saturating_mul(2);
        };
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if reached(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        (hi as f64 - now).max(0.0)
    }

    /// How many more distinct keys, beyond [`estimated_count`](Self::estimated_count), until the
    /// expected fill ([`Geometry::expected_fill`]) reaches `fill`: 0 when the filter is already
    /// that full.
    ///
    /// Total over `f64`, each answer the exact one: `fill <= 0` gives 0, `fill >= 1` gives +inf
    /// (the expected fill stays below 1 at every finite count), NaN gives NaN. A caller taking the
    /// fill from a user checks it is in (0, 1) first and names the flag in its error.
    pub fn keys_to_fill(&self, fill: f64) -> f64 {
        if fill.is_nan() {
            return f64::NAN;
        }
        if fill >= 1.0 {
            return f64::INFINITY;
        }
        if self.fill() >= fill {
            return 0.0;
        }
        (self.geometry.count_at_fill(fill) - self.estimated_count()).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every placement of every key, enumerated: the exact distribution of the set-bit count with
    /// no model at all, for tiny geometries. Each key's choices are `choices` equally likely
    /// outcomes, `place(choice)` giving the bits that outcome sets.
    fn enumerate(
        m: usize,
        n: u32,
        choices: usize,
        place: impl Fn(usize) -> Vec<usize>,
    ) -> (f64, f64) {
        let total = choices.pow(n);
        let (mut sum, mut sum2) = (0.0, 0.0);
        for code in 0..total {
            let mut set = vec![false; m];
            let mut c = code;
            for _ in 0..n {
                for bit in place(c % choices) {
                    set[bit] = true;
                }
                c /= choices;
            }
            let x = set.iter().filter(|&&s| s).count() as f64;
            sum += x;
            sum2 += x * x;
        }
        let mean = sum / total as f64;
        (mean, sum2 / total as f64 - mean * mean)
    }

    fn check(g: Geometry, n: u32, exact: (f64, f64)) {
        let m = g.bits() as f64;
        let (mean, var) = (
            m * g.expected_fill(f64::from(n)),
            g.set_bits_variance(f64::from(n)),
        );
        assert!(
            (mean - exact.0).abs() < 1e-12 && (var - exact.1).abs() < 1e-12,
            "{g:?}, n = {n}: mean {mean} variance {var}; enumerated {exact:?}"
        );
    }

    #[test]
    fn mean_and_variance_are_exact_on_enumerated_tiny_filters() {
        // Flat: 5 bits, k = 2, each probe uniform: 25 outcomes per key.
        for n in 1..=3 {
            let e = enumerate(5, n, 25, |c| vec![c % 5, c / 5]);
            check(Geometry::Flat { bits: 5, hashes: 2 }, n, e);
        }
        // Blocked: 2 blocks of 4 bits, k = 2: block, then two positions in it.
        for n in 1..=3 {
            let e = enumerate(8, n, 32, |c| {
                let base = 4 * (c / 16);
                vec![base + c % 4, base + (c / 4) % 4]
            });
            let g = Geometry::Blocked {
                blocks: 2,
                block_bits: 4,
                hashes: 2,
            };
            check(g, n, e);
        }
        // Split-block: 2 blocks of 2 words of 3 bits: block, then one bit per word.
        for n in 1..=3 {
            let e = enumerate(12, n, 18, |c| {
                let base = 6 * (c / 9);
                vec![base + c % 3, base + 3 + (c / 3) % 3]
            });
            let g = Geometry::SplitBlock {
                blocks: 2,
                words: 2,
                word_bits: 3,
            };
            check(g, n, e);
        }
    }

    #[test]
    fn one_block_is_a_flat_array_and_one_word_is_a_block_of_one_probe() {
        let flat = Geometry::Flat {
            bits: 512,
            hashes: 7,
        };
        let block = Geometry::Blocked {
            blocks: 1,
            block_bits: 512,
            hashes: 7,
        };
        let split = Geometry::SplitBlock {
            blocks: 40,
            words: 1,
            word_bits: 32,
        };
        let one_probe = Geometry::Blocked {
            blocks: 40,
            block_bits: 32,
            hashes: 1,
        };
        for n in [1.0, 30.0, 73.0, 400.0] {
            for (a, b) in [(flat, block), (split, one_probe)] {
                let (fa, fb) = (a.expected_fill(n), b.expected_fill(n));
                let (va, vb) = (a.set_bits_variance(n), b.set_bits_variance(n));
                assert!(
                    (fa / fb - 1.0).abs() < 1e-13,
                    "{a:?} vs {b:?}, n = {n}: fill {fa} vs {fb}"
                );
                assert!(
                    (va - vb).abs() <= 1e-9 * va.max(vb) + 1e-9,
                    "{a:?} vs {b:?}, n = {n}: variance {va} vs {vb}"
                );
            }
        }
    }

    /// One geometry of each layout, sized for 10^6 keys at about 1%.
    const LAYOUTS_AT_1M: [Geometry; 3] = [
        Geometry::Flat {
            bits: 9_585_088,
            hashes: 7,
        },
        Geometry::Blocked {
            blocks: 18_721,
            block_bits: 512,
            hashes: 7,
        },
        Geometry::SplitBlock {
            blocks: 37_443,
            words: 8,
            word_bits: 32,
        },
    ];

    #[test]
    fn the_estimate_inverts_the_expected_fill() {
        for g in LAYOUTS_AT_1M {
            let m = g.bits();
            for n in [1.0, 1e3, 1e6, 3e6] {
                let x = (m as f64 * g.expected_fill(n)).round() as u64;
                let stat = FillStat::from_set_bits(g, x).unwrap();
                // One set bit more or less moves the estimate by 1 / (dE[X]/dn).
                let step = 1.0 / (-((m - x) as f64) * (-g.key_bit_probability()).ln_1p());
                assert!(
                    (stat.estimated_count() - n).abs() <= step,
                    "{g:?}: n = {n}, X = {x}, estimate {}",
                    stat.estimated_count()
                );
            }
        }
    }

    #[test]
    fn swamidass_baldi_is_the_estimate_for_flat_and_split_block_and_low_for_blocked() {
        let n = 1e6;
        let cases = [
            (
                Geometry::Flat {
                    bits: 9_585_088,
                    hashes: 7,
                },
                0.0,
            ),
            (
                Geometry::SplitBlock {
                    blocks: 37_443,
                    words: 8,
                    word_bits: 32,
                },
                0.0,
            ),
            // (k - 1) / (2B) to first order.
            (
                Geometry::Blocked {
                    blocks: 18_721,
                    block_bits: 512,
                    hashes: 7,
                },
                -6.0 / 1024.0,
            ),
        ];
        for (g, bias) in cases {
            let x = (g.bits() as f64 * g.expected_fill(n)).round() as u64;
            let stat = FillStat::from_set_bits(g, x).unwrap();
            let rel = stat.swamidass_baldi() / stat.estimated_count() - 1.0;
            assert!(
                (rel - bias).abs() < 2e-4,
                "{g:?}: Swamidass-Baldi / estimate - 1 = {rel}, expected {bias}"
            );
        }
    }

    /// Every estimate from the bits, at every fill from empty to saturated (issue 64: `stat` of a
    /// saturated blocked filter never returned): each call returns, and says what its docs say
    /// for a full filter (an unbounded estimate and interval, no more keys to any rate).
    #[test]
    fn every_estimate_returns_at_every_fill_from_empty_to_saturated() {
        for g in LAYOUTS_AT_1M {
            let m = g.bits();
            for set in [0, 1, m / 2, m - m / 100, m - 2, m - 1, m] {
                let f = FillStat::from_set_bits(g, set).unwrap();
                let estimate = f.estimated_count();
                let (lo, hi) = f.count_interval(0.95).unwrap();
                let to_rate = f.keys_to_rate(0.01);
                let to_fill = f.keys_to_fill(0.5);
                let what = format!(
                    "{g:?}, {set} of {m} bits set: estimate {estimate}, interval {lo}..{hi}, to 1% {to_rate}, to fill 0.5 {to_fill}"
                );
                assert!(estimate >= 0.0 && lo <= hi && lo >= 0.0, "{what}");
                assert!(to_rate >= 0.0 && to_fill >= 0.0, "{what}");
                if set == m {
                    assert!(
                        estimate.is_infinite() && hi.is_infinite() && lo.is_finite(),
                        "{what}"
                    );
                    assert_eq!(to_rate, 0.0, "{what}");
                } else {
                    assert!(estimate.is_finite() && hi.is_finite(), "{what}");
                    let rate = g.fpr(estimate.round() as u64);
                    assert!((0.0..=1.0).contains(&rate), "{what}: theory {rate}");
                }
            }
        }
    }
}
