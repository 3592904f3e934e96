//! HyperLogLog (Flajolet, Fusy, Gandouet and Meunier 2007) on a 64-bit hash.
//!
//! # What it promises
//!
//! With `m = 2^p` registers the relative standard error of the estimate is about
//! `1.04 / sqrt(m)` (Flajolet et al., section 4: `beta_m / sqrt(m)` with `beta_m` falling from
//! 1.106 at m = 16 to 1.039 as m grows), 0.81% at p = 14, once the cardinality is well above the
//! small range. Below about `2.5 m` the estimate is linear counting, whose error is smaller.
//!
//! # The estimator
//!
//! The *original* estimator of the paper, with its small-range correction and without its
//! large-range one:
//! - raw estimate `E = alpha_m m^2 / sum_j 2^-M[j]`, with `alpha_16 = 0.673`, `alpha_32 = 0.697`,
//!   `alpha_64 = 0.709` and `alpha_m = 0.7213 / (1 + 1.079 / m)` for m >= 128 (the paper's
//!   constants);
//! - small range: if `E <= 5/2 m` and `V > 0` registers are zero, linear counting
//!   `m ln(m / V)` (Whang et al. 1990) replaces `E`;
//! - large range: none. The paper's correction `-2^32 ln(1 - E / 2^32)` compensates for
//!   collisions of a *32-bit* hash near 2^32 distinct keys. Here each key's register index is
//!   the hash's top `p` bits and its rank is counted in the other `64 - p` bits, so collisions
//!   matter only near 2^64 keys and the correction would only add error.
//!
//! The switch at `5/2 m` leaves the known bias bump of this estimator between about `2.5 m` and
//! `5 m` (the raw estimate's bias has not yet died out there); HyperLogLog++ (Heule et al. 2013,
//! empirical bias tables) and Ertl's improved estimator (2017, used by Redis since 5.0) remove
//! it. The sketch sweep shows them side by side in that region.
//!
//! # Ertl's improved estimator ([`Estimator::Ertl`])
//!
//! The same registers read another way (Ertl, "New cardinality estimation algorithms for
//! HyperLogLog sketches", 2017, section 4, the "improved raw estimator"): with `q = 64 - p` and
//! `C_k` the number of registers holding `k` (`0 <= k <= q + 1`),
//! `E = m^2 / (2 ln 2 (m sigma(C_0 / m) + sum_{k=1}^{q} C_k 2^-k + m tau(1 - C_{q+1} / m) 2^-q))`,
//! where `sigma` and `tau` are the paper's series, which account for the empty and the saturated
//! registers exactly instead of switching estimators. It needs no empirical constants and no
//! threshold, so it has no transition. The sweep measures both on the same trials.
//!
//! Where its error is the stated one, measured (the committed `reports/sketches/summary.md`,
//! seed 1, 16 points per octave from n = 1 to 2^24; 4096 trials at p = 14, 1024 at p = 4, 10
//! and 18; p = 5..9, 11..13 and 15..17 are not measured):
//! - **p = 10, 14 and 18**: from `n = 5 m` up (187, 123 and 59 points) the RMS error is
//!   0.899..1.05, 0.918..1.01 and 0.936..1.03 times `1.04 / sqrt(m)`, never significantly above
//!   it (the report's one-sided test, family rate 0.01 per sketch, flags no point there), and the
//!   largest bias is 0.318%, 0.0204% and 0.0138% of n. Below `5 m`, from n = 32 up, the RMS error
//!   is smaller: 0.665..0.910, 0.664..0.918 and 0.514..0.926 times the stated one. Under n = 32
//!   it comes from keys landing in one register (an error of about `-1/n` in the trial where two
//!   do, which no estimator can see): rare, so one such trial sets a point's RMS, up to 1.18 times
//!   the stated error at p = 14 (n = 4) and 3.85 at p = 18 (n = 4: one trial in 1024). At n = 1
//!   and 2 (and 3 at p = 18) every trial's error is nearly the same small number, at most
//!   0.0972% of n (p = 10), 0.00547% (p = 14) and 7.34e-4% (p = 18): a real bias, which the
//!   report lists as a departure. (The figures below `5 m` are columns of `hll.csv` beside it.)
//! - **p = 4** (m = 16): it does **not** hold. From `5 m` up the RMS error is 1.06..1.22 times
//!   `1.04 / sqrt(m)` (26%), the stated error inside the RMS interval at 0 of 283 points, and the
//!   bias is up to 8.62% of n (nonzero at 334 of the 335 points). The original estimator at
//!   p = 4 stays within 0.954..1.11 of the stated error there, with a bias of up to 3.20%.
//!
//! # Cost of an estimate
//!
//! The sketch keeps the histogram `C_k` of its register values up to date on every insert that
//! raises a register (one decrement, one increment), so either estimate costs `O(64 - p)`, not
//! `O(m)`: the sweep reads it at hundreds of cardinalities per trial.
//!
//! # Registers
//!
//! `m` bytes, one per register; the rank `rho` (one plus the leading zeros of the `64 - p` bits
//! after the index) is at most `65 - p`, so a byte holds it. Merging takes the register-wise
//! maximum, which is exactly the sketch of the union of the two key streams.

use std::marker::PhantomData;

use bloomlab_filters::{HashStrategy, Key};

use crate::error::SketchError;

/// The smallest precision: 16 registers, the smallest `m` the paper gives `alpha_m` for.
pub const MIN_PRECISION: u8 = 4;
/// The largest precision: 2^18 registers (256 KiB), where common implementations stop.
pub const MAX_PRECISION: u8 = 18;

/// The relative standard error the paper states, `1.04 / sqrt(2^p)`.
pub fn standard_error(precision: u8) -> f64 {
    1.04 / ((1u64 << precision) as f64).sqrt()
}

/// Checks a precision: `MIN_PRECISION..=MAX_PRECISION`, else an error naming it.
pub fn check_precision(p: u32) -> Result<u8, SketchError> {
    if (u32::from(MIN_PRECISION)..=u32::from(MAX_PRECISION)).contains(&p) {
        Ok(p as u8)
    } else {
        Err(SketchError::InvalidPrecision {
            p,
            min: MIN_PRECISION,
            max: MAX_PRECISION,
        })
    }
}

/// Which estimator reads the registers (the registers themselves are the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Estimator {
    /// Flajolet et al. 2007: raw estimate, linear counting below `5/2 m`.
    #[default]
    Original,
    /// Ertl 2017's improved raw estimator (see the module docs).
    Ertl,
}

impl Estimator {
    /// Both, in the order reports list them.
    pub const ALL: [Estimator; 2] = [Estimator::Original, Estimator::Ertl];

    /// The suffix a sketch name carries for this estimator: none for the original, `/ertl`.
    pub fn suffix(self) -> &'static str {
        match self {
            Estimator::Original => "",
            Estimator::Ertl => "/ertl",
        }
    }

    /// The label reports print (see `crate::cardinality::estimator`).
    pub fn label(self) -> &'static str {
        match self {
            Estimator::Original => crate::cardinality::estimator::ORIGINAL,
            Estimator::Ertl => crate::cardinality::estimator::ERTL,
        }
    }
}

/// Ertl's `sigma(x) = x + sum_{k >= 1} x^(2^k) 2^(k-1)` for `x` in [0, 1) (infinite at 1); the
/// terms shrink doubly exponentially, so the loop stops when adding one no longer changes the sum.
fn ertl_sigma(x: f64) -> f64 {
    if x >= 1.0 {
        return f64::INFINITY;
    }
    let (mut x, mut y, mut z) = (x, 1.0f64, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if z == before {
            return z;
        }
    }
}

/// Ertl's `tau(x) = (1 - x - sum_{k >= 1} (1 - x^(2^-k))^2 2^-k) / 3` for `x` in [0, 1] (zero at
/// both ends), summed until a term no longer changes the result.
fn ertl_tau(x: f64) -> f64 {
    if x <= 0.0 || x >= 1.0 {
        return 0.0;
    }
    let (mut x, mut y, mut z) = (x, 1.0f64, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if z == before {
            return z / 3.0;
        }
    }
}

/// The bias constant `alpha_m` of the raw estimate (Flajolet et al., figure 3).
fn alpha(m: usize) -> f64 {
    match m {
        16 => 0.673,
        32 => 0.697,
        64 => 0.709,
        _ => 0.7213 / (1.0 + 1.079 / m as f64),
    }
}

/// A HyperLogLog sketch of precision `p` whose keys are hashed by `H` (the same strategies and
/// key encodings as the filters). Not thread-safe for inserts (`&mut self`); `Clone`, `Send`.
#[derive(Debug, Clone)]
pub struct HyperLogLog<H> {
    precision: u8,
    estimator: Estimator,
    registers: Vec<u8>,
    /// `histogram[k]` = registers holding `k`, kept in step with `registers`.
    histogram: [u32; 66],
    hash: PhantomData<fn() -> H>,
}

/// Equal when the registers are (the hash is part of the type).
impl<H> PartialEq for HyperLogLog<H> {
    fn eq(&self, other: &Self) -> bool {
        self.precision == other.precision && self.registers == other.registers
    }
}

impl<H> Eq for HyperLogLog<H> {}

impl<H: HashStrategy> HyperLogLog<H> {
    /// An empty sketch of `2^precision` registers read by the original estimator. Errors unless
    /// `precision` is in [`MIN_PRECISION`]`..=`[`MAX_PRECISION`].
    pub fn new(precision: u32) -> Result<Self, SketchError> {
        let p = check_precision(precision)?;
        let mut histogram = [0u32; 66];
        histogram[0] = 1 << p;
        Ok(Self {
            precision: p,
            estimator: Estimator::Original,
            registers: vec![0; 1 << p],
            histogram,
            hash: PhantomData,
        })
    }

    /// The same sketch read by `estimator` from now on ([`estimate`](Self::estimate)).
    pub fn with_estimator(mut self, estimator: Estimator) -> Self {
        self.estimator = estimator;
        self
    }

    /// The estimator [`estimate`](Self::estimate) uses.
    pub fn estimator(&self) -> Estimator {
        self.estimator
    }

    /// The name reports print: `hll/<hash>/p<precision>`, with `/ertl` for Ertl's estimator.
    pub fn name(&self) -> String {
        format!(
            "hll/{}/p{}{}",
            H::ID,
            self.precision,
            self.estimator.suffix()
        )
    }

    /// The precision `p`.
    pub fn precision(&self) -> u8 {
        self.precision
    }

    /// The register count `m = 2^p`.
    pub fn registers(&self) -> usize {
        self.registers.len()
    }

    /// Bytes of register memory (`m`).
    pub fn memory_bytes(&self) -> usize {
        self.registers.len()
    }

    /// Adds a key (hashed by `H` over its canonical bytes, see [`Key`]).
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        let h = key.with_bytes(H::digest).h1;
        self.insert_hash(h);
    }

    /// Adds a key by its 64-bit hash: the top `p` bits choose the register, the rank is counted
    /// in the rest.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        let p = u32::from(self.precision);
        let index = (hash >> (64 - p)) as usize;
        // A sentinel bit just below the remaining 64 - p bits caps the rank at 65 - p.
        let rest = (hash << p) | (1u64 << (p - 1));
        let rank = rest.leading_zeros() as u8 + 1;
        let r = &mut self.registers[index];
        if rank > *r {
            self.histogram[usize::from(*r)] -= 1;
            self.histogram[usize::from(rank)] += 1;
            *r = rank;
        }
    }

    /// The histogram of register values: entry `k` counts the registers holding `k`
    /// (`0..=65 - p`; the rest are zero).
    pub fn histogram(&self) -> &[u32; 66] {
        &self.histogram
    }

    /// The raw estimate `alpha_m m^2 / sum 2^-M[j]` and the number of zero registers.
    pub fn raw_estimate(&self) -> (f64, usize) {
        // Summed from the largest value down, so the small terms are not lost.
        let sum = self
            .histogram
            .iter()
            .enumerate()
            .rev()
            .fold(0.0f64, |acc, (k, &c)| {
                acc + f64::from(c) / (1u64 << k) as f64
            });
        let m = self.registers.len() as f64;
        (
            alpha(self.registers.len()) * m * m / sum,
            self.histogram[0] as usize,
        )
    }

    /// The estimated number of distinct keys inserted, by the sketch's estimator (see the module
    /// docs).
    pub fn estimate(&self) -> f64 {
        self.estimate_with(self.estimator)
    }

    /// The estimate `estimator` gives from these registers.
    pub fn estimate_with(&self, estimator: Estimator) -> f64 {
        match estimator {
            Estimator::Original => self.original_estimate(),
            Estimator::Ertl => self.ertl_estimate(),
        }
    }

    fn original_estimate(&self) -> f64 {
        let (raw, zeros) = self.raw_estimate();
        let m = self.registers.len() as f64;
        if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln()
        } else {
            raw
        }
    }

    fn ertl_estimate(&self) -> f64 {
        let m = self.registers.len() as f64;
        let q = 64 - usize::from(self.precision);
        let c = &self.histogram;
        // Horner's scheme over k = q .. 1 of C_k 2^-k, started from the saturated registers' term.
        let mut z = m * ertl_tau(1.0 - f64::from(c[q + 1]) / m);
        for k in (1..=q).rev() {
            z = 0.5 * (z + f64::from(c[k]));
        }
        z += m * ertl_sigma(f64::from(c[0]) / m);
        m * m / (2.0 * std::f64::consts::LN_2 * z)
    }

    /// Makes this sketch that of the union of both streams (register-wise maximum). Errors,
    /// naming both sketches, when the precisions or hashes differ.
    pub fn merge<H2: HashStrategy>(&mut self, other: &HyperLogLog<H2>) -> Result<(), SketchError> {
        let mismatch = |reason| SketchError::Mismatch {
            left: self.name(),
            right: other.name(),
            reason,
        };
        if H::ID != H2::ID {
            return Err(mismatch(
                "their hashes differ, so registers index different keys",
            ));
        }
        if self.precision != other.precision {
            return Err(mismatch(
                "their precisions differ (register counts 2^p are not the same)",
            ));
        }
        for (a, &b) in self.registers.iter_mut().zip(&other.registers) {
            if b > *a {
                self.histogram[usize::from(*a)] -= 1;
                self.histogram[usize::from(b)] += 1;
                *a = b;
            }
        }
        Ok(())
    }

    /// Empties the sketch, keeping its registers' memory.
    pub fn clear(&mut self) {
        self.registers.fill(0);
        self.histogram = [0; 66];
        self.histogram[0] = self.registers.len() as u32;
    }
}
