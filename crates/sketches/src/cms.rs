//! Count-Min (Cormode and Muthukrishnan 2005) on the filters' hash axis.
//!
//! # What it promises
//!
//! With width `w = ceil(e / epsilon)` and depth `d = ceil(ln(1 / delta))` (the paper's
//! constants), after a stream of total count `N` the estimate `a'` of any item with true count
//! `a` satisfies `a <= a'` always, and `a' <= a + epsilon N` except with probability at most
//! `delta`. The proof: in one row the other items' expected contribution is at most `N / w <=
//! epsilon N / e` (pairwise independent row hashes), so by Markov's inequality it exceeds
//! `epsilon N` with probability at most `1/e`; `d` independent rows all exceed it with
//! probability at most `e^-d <= delta`. Other libraries size with `2/epsilon` and `log2(1/delta)`,
//! a different (and for the same epsilon, delta a different-sized) table: the constants here are
//! the ones the bound is proved for.
//!
//! # Hashing
//!
//! A key is hashed once by `H` into a [`Digest`] `(h1, h2)`; each row's column is a 64-bit word
//! reduced to `[0, w)` by multiply-high (Lemire). Two row schemes ([`Rows`]):
//! - [`Rows::DoubleHash`] (the default): row `i` uses `g_i = h1 + i h2 (mod 2^64)`, the
//!   double-hashing scheme the flat filters use (Kirsch and Mitzenmacher 2006). The rows are
//!   *not* independent: two keys whose `h1` and `h2` are both close collide in every row
//!   together, so the tail of the overcount distribution is heavier than the proof assumes (an
//!   independent simulation found 1 to 3 items per 2e6 overcounted by more than `epsilon N` where
//!   independent rows gave 0). The contract itself (share at most `delta`) held in every run.
//! - [`Rows::Independent`]: row `i` uses `g_i = fmix64(h1 ^ fmix64(h2 ^ s_i))` with a distinct
//!   constant `s_i` per row: a separate pseudo-random function of the digest per row (as far as
//!   Murmur3's `fmix64` finaliser is one), so for keys with distinct digests the rows behave as
//!   the independent hash functions of the proof. Costs two finalisers per row.
//!
//! # Conservative update
//!
//! With [`CountMin::conservative`], an add of `c` raises each row's counter only to
//! `min_i(counter_i) + c` (Estan and Varghese 2002): estimates are never lower than the truth and
//! never higher than the standard update's, so the same bound holds. Merging sums counters, which
//! for the standard update is exactly the sketch of the union stream; for conservative sketches
//! the sum is still an upper bound with the same guarantee, but not what inserting the union
//! would give.

use std::marker::PhantomData;

use bloomlab_filters::hash::fmix64;
use bloomlab_filters::{Digest, HashStrategy, Key};

use crate::error::SketchError;

/// The most columns a table may have (2^32): beyond it a single row is 32 GiB of counters.
pub const MAX_WIDTH: u64 = 1 << 32;
/// The most rows: `delta = 1e-300` needs 691, far below this.
pub const MAX_DEPTH: u64 = 1 << 12;

fn check_rate(what: &'static str, value: f64) -> Result<f64, SketchError> {
    if value.is_finite() && value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(SketchError::InvalidRate { what, value })
    }
}

/// Width and depth for an error bound `epsilon` holding except with probability `delta`:
/// `(ceil(e / epsilon), ceil(ln(1 / delta)))`. Errors name the value at fault and its range.
pub fn dimensions(epsilon: f64, delta: f64) -> Result<(u64, u64), SketchError> {
    let epsilon = check_rate("epsilon", epsilon)?;
    let delta = check_rate("delta", delta)?;
    let width = (std::f64::consts::E / epsilon).ceil();
    let depth = (1.0 / delta).ln().ceil().max(1.0);
    if width > MAX_WIDTH as f64 {
        return Err(SketchError::InvalidDimension {
            what: "width ceil(e / epsilon)",
            value: width,
            max: MAX_WIDTH,
        });
    }
    Ok((width as u64, depth as u64))
}

/// How each row's column is derived from a key's digest (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Rows {
    /// `h1 + i h2`: one digest, rows correlated through it.
    #[default]
    DoubleHash,
    /// A separate `fmix64`-keyed function of the digest per row.
    Independent,
}

impl Rows {
    /// The suffix a sketch name carries: none for double hashing, `/ind` for independent rows.
    pub fn suffix(self) -> &'static str {
        match self {
            Rows::DoubleHash => "",
            Rows::Independent => "/ind",
        }
    }

    /// The label reports print: `h1+i*h2` or `independent`.
    pub fn label(self) -> &'static str {
        match self {
            Rows::DoubleHash => "h1+i*h2",
            Rows::Independent => "independent",
        }
    }
}

/// A Count-Min sketch of `u64` counters whose keys are hashed by `H`.
#[derive(Debug, Clone)]
pub struct CountMin<H> {
    width: u64,
    depth: u64,
    conservative: bool,
    rows: Rows,
    counters: Vec<u64>,
    total: u64,
    hash: PhantomData<fn() -> H>,
}

/// Equal when the shapes, update rules, counters and totals are (the hash is part of the type).
impl<H> PartialEq for CountMin<H> {
    fn eq(&self, other: &Self) -> bool {
        (
            self.width,
            self.depth,
            self.conservative,
            self.rows,
            self.total,
        ) == (
            other.width,
            other.depth,
            other.conservative,
            other.rows,
            other.total,
        ) && self.counters == other.counters
    }
}

impl<H> Eq for CountMin<H> {}

impl<H: HashStrategy> CountMin<H> {
    /// A sketch sized by [`dimensions`] for `epsilon` and `delta`, standard update.
    pub fn new(epsilon: f64, delta: f64) -> Result<Self, SketchError> {
        let (w, d) = dimensions(epsilon, delta)?;
        Self::with_dimensions(w, d)
    }

    /// A sketch of exactly `width` columns and `depth` rows (for comparing sizing rules).
    pub fn with_dimensions(width: u64, depth: u64) -> Result<Self, SketchError> {
        if !(1..=MAX_WIDTH).contains(&width) {
            return Err(SketchError::InvalidDimension {
                what: "width",
                value: width as f64,
                max: MAX_WIDTH,
            });
        }
        if !(1..=MAX_DEPTH).contains(&depth) {
            return Err(SketchError::InvalidDimension {
                what: "depth",
                value: depth as f64,
                max: MAX_DEPTH,
            });
        }
        let cells = width.checked_mul(depth).filter(|&c| c <= MAX_WIDTH).ok_or(
            SketchError::InvalidDimension {
                what: "width x depth",
                value: width as f64 * depth as f64,
                max: MAX_WIDTH,
            },
        )?;
        Ok(Self {
            width,
            depth,
            conservative: false,
            rows: Rows::DoubleHash,
            counters: vec![0; cells as usize],
            total: 0,
            hash: PhantomData,
        })
    }

    /// The same sketch with conservative update switched on (see the module docs).
    pub fn conservative(mut self) -> Self {
        self.conservative = true;
        self
    }

    /// The same sketch with the row scheme `rows` (see the module docs).
    pub fn with_rows(mut self, rows: Rows) -> Self {
        self.rows = rows;
        self
    }

    /// The row scheme.
    pub fn rows(&self) -> Rows {
        self.rows
    }

    /// The name reports print: `cms/<hash>/<w>x<d>`, with `/ind` for independent rows and `/cu`
    /// for conservative update.
    pub fn name(&self) -> String {
        format!(
            "cms/{}/{}x{}{}{}",
            H::ID,
            self.width,
            self.depth,
            self.rows.suffix(),
            if self.conservative { "/cu" } else { "" }
        )
    }

    /// Columns `w`.
    pub fn width(&self) -> u64 {
        self.width
    }

    /// Rows `d`.
    pub fn depth(&self) -> u64 {
        self.depth
    }

    /// Whether adds use conservative update.
    pub fn is_conservative(&self) -> bool {
        self.conservative
    }

    /// The total count `N` added so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes of counter memory (`8 w d`).
    pub fn memory_bytes(&self) -> usize {
        self.counters.len() * 8
    }

    #[inline]
    fn cell(&self, row: u64, d: Digest) -> usize {
        let g = match self.rows {
            Rows::DoubleHash => d.h1.wrapping_add(row.wrapping_mul(d.h2)),
            // The row constant: the golden-ratio increment times the row number plus one (odd
            // multiples, so distinct for every row below 2^64).
            Rows::Independent => fmix64(
                d.h1 ^ fmix64(d.h2 ^ row.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            ),
        };
        let col = ((u128::from(g) * u128::from(self.width)) >> 64) as u64;
        (row * self.width + col) as usize
    }

    /// Adds `count` occurrences of `key`.
    #[inline]
    pub fn add<K: Key + ?Sized>(&mut self, key: &K, count: u64) {
        let d = key.with_bytes(H::digest);
        self.add_digest(d, count);
    }

    /// Adds `count` occurrences of the key whose digest is `d`.
    #[inline]
    pub fn add_digest(&mut self, d: Digest, count: u64) {
        self.total = self.total.saturating_add(count);
        if self.conservative {
            let target = self.estimate_digest(d).saturating_add(count);
            for row in 0..self.depth {
                let i = self.cell(row, d);
                let c = &mut self.counters[i];
                if *c < target {
                    *c = target;
                }
            }
        } else {
            for row in 0..self.depth {
                let i = self.cell(row, d);
                // Saturation keeps the estimate an upper bound.
                self.counters[i] = self.counters[i].saturating_add(count);
            }
        }
    }

    /// The estimated count of `key`: never below its true count.
    #[inline]
    pub fn estimate<K: Key + ?Sized>(&self, key: &K) -> u64 {
        let d = key.with_bytes(H::digest);
        self.estimate_digest(d)
    }

    /// The estimated count of the key whose digest is `d`.
    #[inline]
    pub fn estimate_digest(&self, d: Digest) -> u64 {
        (0..self.depth)
            .map(|row| self.counters[self.cell(row, d)])
            .min()
            .unwrap_or(0)
    }

    /// Adds the other sketch's counters to this one's (see the module docs for what that means
    /// under conservative update). Errors, naming both sketches, when the shapes, hashes or
    /// update rules differ.
    pub fn merge<H2: HashStrategy>(&mut self, other: &CountMin<H2>) -> Result<(), SketchError> {
        let mismatch = |reason| SketchError::Mismatch {
            left: self.name(),
            right: other.name(),
            reason,
        };
        if H::ID != H2::ID {
            return Err(mismatch(
                "their hashes differ, so columns index different keys",
            ));
        }
        if (self.width, self.depth) != (other.width, other.depth) {
            return Err(mismatch("their widths or depths differ"));
        }
        if self.rows != other.rows {
            return Err(mismatch("their row schemes differ"));
        }
        if self.conservative != other.conservative {
            return Err(mismatch(
                "one uses conservative update and the other does not",
            ));
        }
        for (a, &b) in self.counters.iter_mut().zip(&other.counters) {
            *a = a.saturating_add(b);
        }
        self.total = self.total.saturating_add(other.total);
        Ok(())
    }
}
