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
//! it. The sketch sweep shows the three side by side in that region.
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
    registers: Vec<u8>,
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
    /// An empty sketch of `2^precision` registers. Errors unless `precision` is in
    /// [`MIN_PRECISION`]`..=`[`MAX_PRECISION`].
    pub fn new(precision: u32) -> Result<Self, SketchError> {
        let p = check_precision(precision)?;
        Ok(Self {
            precision: p,
            registers: vec![0; 1 << p],
            hash: PhantomData,
        })
    }

    /// The name reports print: `hll/<hash>/p<precision>`.
    pub fn name(&self) -> String {
        format!("hll/{}/p{}", H::ID, self.precision)
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
            *r = rank;
        }
    }

    /// The raw estimate `alpha_m m^2 / sum 2^-M[j]` and the number of zero registers.
    pub fn raw_estimate(&self) -> (f64, usize) {
        let mut sum = 0.0f64;
        let mut zeros = 0usize;
        for &r in &self.registers {
            // r <= 61, so the power of two is exact.
            sum += 1.0 / (1u64 << r) as f64;
            zeros += usize::from(r == 0);
        }
        let m = self.registers.len() as f64;
        (alpha(self.registers.len()) * m * m / sum, zeros)
    }

    /// The estimated number of distinct keys inserted (see the module docs for the estimator).
    pub fn estimate(&self) -> f64 {
        let (raw, zeros) = self.raw_estimate();
        let m = self.registers.len() as f64;
        if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln()
        } else {
            raw
        }
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
            *a = (*a).max(b);
        }
        Ok(())
    }

    /// Empties the sketch, keeping its registers' memory.
    pub fn clear(&mut self) {
        self.registers.fill(0);
    }
}
