//! A faithful port of the counting Bloom filter found in Java textbooks and tutorials, flaws
//! included: the hashing and probing of the textbook Bloom filter ([`crate::TextbookFnv1aI32`]:
//! FNV-1a 64 split into two `int`s, `((h1 + i*h2) & Integer.MAX_VALUE) % m`), with 4-bit counters
//! packed two per byte in place of bits.
//!
//! Its two flaws, each of which produces **false negatives**:
//! - *saturated decrement*: an increment stops at 15, but a decrement happens whenever a counter is
//!   above 0, so a counter that saturated (true count above 15) is decremented below its true count
//!   and reaches 0 while keys still use it;
//! - *removed false positive*: `remove` is guarded only by `mightContain`, so a key that was never
//!   inserted but tests positive is "removed", decrementing counters that belong to other keys.
//!
//! The harness exists to show those; this type does not fix them.

use crate::capability::Removable;
use crate::error::{BloomError, Result};
use crate::filter::{Filter, Geometry, Layout, Variant, forward_filter_methods, keyed_methods};
use crate::hash::Digest;
use crate::key::Key;
use crate::sizing::Params;
use crate::store::try_vec;
use crate::textbook::{digest, probe};

/// The textbook Java counting filter: `byte[] counters` holding two 4-bit counters each (counter
/// `i` in the low nibble of byte `i / 2` when `i` is even, the high nibble when odd), `int` size.
#[derive(Debug, Clone)]
pub struct TextbookCountingFnv1aI32 {
    counters: Vec<u8>,
    num_counters: i32,
    k: i32,
}

/// The value at which the Java increment stops.
const MAX: u8 = 15;

/// Counter `i`: the low nibble of byte `i / 2` for even `i`, the high nibble for odd.
#[inline(always)]
fn get_counter(counters: &[u8], i: usize) -> u8 {
    (counters[i / 2] >> (4 * (i & 1))) & 0x0F
}

/// Sets counter `i` to `v` (`v <= 15`), leaving the other nibble of its byte.
#[inline(always)]
fn set_counter(counters: &mut [u8], i: usize, v: u8) {
    let shift = 4 * (i & 1);
    let b = &mut counters[i / 2];
    *b = (*b & !(0x0F << shift)) | (v << shift);
}

impl TextbookCountingFnv1aI32 {
    /// A filter of exactly `params.bits` counters (the Java `int`, no rounding).
    ///
    /// Errors when m exceeds `i32::MAX`, the Java original's limit, or k exceeds the crate limit.
    pub fn with_params(params: Params) -> Result<Self> {
        let params = Params::explicit(params.bits, params.hashes)?;
        let num_counters = java_int_counters(params.bits)?;
        Ok(Self {
            counters: try_vec(params.bits.div_ceil(2), || 0)?,
            num_counters,
            k: params.hashes as i32,
        })
    }

    /// A filter for `n` keys at rate `p`: the textbook Bloom filter's m and k, in counters.
    pub fn new(n: u64, p: f64) -> Result<Self> {
        Self::with_params(Params::optimal(n, p)?)
    }

    /// The value of counter `i`.
    #[inline(always)]
    pub fn counter(&self, i: usize) -> u8 {
        get_counter(&self.counters, i)
    }

    /// Inserts a precomputed digest: `if (c < 15) c++` on each of the k counters.
    #[inline]
    pub fn insert_digest(&mut self, d: Digest) {
        let counters = &mut self.counters;
        probe(d.h1, self.k, self.num_counters, |i| {
            let c = get_counter(counters, i);
            if c < MAX {
                set_counter(counters, i, c + 1);
            }
            true
        });
    }

    /// `mightContain`: every counter above 0 (stops at the first zero, as the Java loop returns).
    #[inline]
    pub fn contains_digest(&self, d: Digest) -> bool {
        probe(d.h1, self.k, self.num_counters, |i| self.counter(i) > 0)
    }

    /// The Java `remove`: `if (!mightContain(key)) return false;` then `if (c > 0) c--` on each of
    /// the k counters, saturated or not; returns true. Both flaws live here (module docs).
    #[inline]
    pub fn remove_digest(&mut self, d: Digest) -> bool {
        if !self.contains_digest(d) {
            return false;
        }
        let counters = &mut self.counters;
        probe(d.h1, self.k, self.num_counters, |i| {
            let c = get_counter(counters, i);
            if c > 0 {
                set_counter(counters, i, c - 1);
            }
            true
        });
        true
    }

    /// Removes `key`; see [`Self::remove_digest`].
    #[inline]
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        key.with_bytes(|b| self.remove_digest(digest(b)))
    }

    /// Does nothing: the port has no prefetching path.
    #[inline]
    pub fn prefetch_digest(&self, d: Digest) {
        let _ = d;
    }

    /// Counters at 15, where the increment stops.
    pub fn saturated_counters(&self) -> u64 {
        (0..self.num_counters as usize)
            .filter(|&i| self.counter(i) == MAX)
            .count() as u64
    }

    keyed_methods!(digest);
}

impl Filter for TextbookCountingFnv1aI32 {
    forward_filter_methods!(digest);
    fn bits(&self) -> u64 {
        self.num_counters as u64
    }
    fn hashes(&self) -> u32 {
        self.k as u32
    }
    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.counters.capacity()
    }
    fn set_bits(&self) -> u64 {
        (0..self.num_counters as usize)
            .filter(|&i| self.counter(i) > 0)
            .count() as u64
    }
    fn geometry(&self) -> Geometry {
        Geometry::Flat {
            bits: self.num_counters as u64,
            hashes: self.k as u32,
        }
    }
}

impl Removable for TextbookCountingFnv1aI32 {
    #[inline]
    fn remove_digest(&mut self, d: Digest) -> bool {
        Self::remove_digest(self, d)
    }
    fn saturated_counters(&self) -> u64 {
        Self::saturated_counters(self)
    }
    fn visit_counters(&self, d: Digest, visit: &mut dyn FnMut(u64, u64)) {
        probe(d.h1, self.k, self.num_counters, |i| {
            visit(i as u64, u64::from(self.counter(i)));
            true
        });
    }
    fn counter_max(&self) -> u64 {
        u64::from(MAX)
    }
}

/// The counter count as the Java `int` the port keeps it in, or the error naming the limit.
fn java_int_counters(bits: u64) -> Result<i32> {
    i32::try_from(bits).map_err(|_| BloomError::TooLarge {
        what: format!("m = {bits}"),
        needed: bits as f64,
        max: i32::MAX as u64,
        variant: "textbook-counting-fnv1a-i32 (its counter count is a Java int)".into(),
    })
}

impl Variant for TextbookCountingFnv1aI32 {
    const LAYOUT: Layout = Layout::Textbook;
    fn variant_name() -> String {
        format!("{}-counting-fnv1a-i32", Self::LAYOUT)
    }
    /// FNV-1a, the port's own hash (its index arithmetic is its own, not an index scheme here).
    fn axes() -> crate::registry::Axes {
        crate::registry::Axes {
            hash: Some(<crate::hash::Fnv1a as crate::hash::HashStrategy>::ID),
            ..Default::default()
        }
    }
    fn with_params(params: Params) -> Result<Self> {
        TextbookCountingFnv1aI32::with_params(params)
    }
    /// Two 4-bit counters per byte.
    fn sized_bytes(n: u64, p: f64) -> Result<u64> {
        let params = Params::optimal(n, p)?;
        let params = Params::explicit(params.bits, params.hashes)?;
        java_int_counters(params.bits)?;
        Ok(params.bits.div_ceil(2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TextbookFnv1aI32;

    #[test]
    fn nonzero_counters_are_the_textbook_filters_bits() {
        let params = Params::explicit(10_007, 5).unwrap();
        let mut c = TextbookCountingFnv1aI32::with_params(params).unwrap();
        let mut b = TextbookFnv1aI32::with_params(params).unwrap();
        for i in 0..2000u64 {
            c.insert(&i);
            b.insert(&i);
        }
        assert_eq!(c.set_bits(), b.set_bits());
        assert!((0..50_000u64).all(|i| c.contains(&i) == b.contains(&i)));
        assert_eq!(
            c.memory_bytes() - size_of::<TextbookCountingFnv1aI32>(),
            5004
        );
    }
}
