//! A faithful port of the Bloom filter found in Java textbooks and tutorials, flaws included.
//!
//! One 64-bit FNV-1a hash is split into `int h1 = (int) h` and `int h2 = (int) (h >>> 32)`; probe i
//! (0-based) sets `((h1 + i*h2) & Integer.MAX_VALUE) % numBits` in wrapping 32-bit arithmetic, with
//! an `int` bit count. What it costs: FNV-1a's halves are correlated on similar keys, `h2` can be 0
//! or share factors with `numBits` (all probes land on few bits), masking the sign bit folds two
//! values onto one, and no filter can exceed 2^31 - 1 bits. The harness exists to show those costs;
//! this type does not fix them.

use crate::error::{BloomError, Result};
use crate::filter::{Filter, Geometry, Layout, Variant, forward_filter_methods, keyed_methods};
use crate::hash::{Digest, Fnv1a};
use crate::sizing::{Params, round_up};
use crate::store::try_vec;

/// The textbook Java Bloom filter: FNV-1a 64 split into two `int`s, `int` arithmetic and size.
#[derive(Debug, Clone)]
pub struct TextbookFnv1aI32 {
    words: Vec<u64>,
    num_bits: i32,
    k: i32,
}

/// The port's digest: the FNV-1a hash in `h1`; `h2` is never read, so it is not computed.
#[inline(always)]
pub(crate) fn digest(bytes: &[u8]) -> Digest {
    Digest::from_halves(Fnv1a::hash64(bytes), 0)
}

/// The Java loop: `for (int i = 0; i < k; i++) set(((h1 + i * h2) & Integer.MAX_VALUE) % numBits)`.
#[inline(always)]
pub(crate) fn probe(h: u64, k: i32, num_bits: i32, mut visit: impl FnMut(usize) -> bool) -> bool {
    let h1 = h as i32;
    let h2 = (h >> 32) as i32;
    for i in 0..k {
        let combined = h1.wrapping_add(i.wrapping_mul(h2));
        if !visit(((combined & i32::MAX) % num_bits) as usize) {
            return false;
        }
    }
    true
}

impl TextbookFnv1aI32 {
    /// A filter of exactly `params.bits` bits (the Java `int numBits`, no rounding).
    ///
    /// Errors when m exceeds `i32::MAX`, the Java original's limit, or k exceeds the crate limit.
    pub fn with_params(params: Params) -> Result<Self> {
        let params = Params::explicit(params.bits, params.hashes)?;
        let num_bits = java_int_bits(params.bits)?;
        let words = try_vec(round_up(params.bits, 64) / 64, || 0)?;
        Ok(Self {
            words,
            num_bits,
            k: params.hashes as i32,
        })
    }

    /// A filter for `n` keys at rate `p`: `numBits = (int) ceil(-n ln p / (ln 2)^2)`, k rounded.
    pub fn new(n: u64, p: f64) -> Result<Self> {
        Self::with_params(Params::optimal(n, p)?)
    }

    /// Inserts a precomputed digest (`h1` is the FNV-1a hash).
    #[inline]
    pub fn insert_digest(&mut self, d: Digest) {
        let words = &mut self.words;
        probe(d.h1, self.k, self.num_bits, |i| {
            words[i >> 6] |= 1 << (i & 63);
            true
        });
    }

    /// Looks up a precomputed digest.
    #[inline]
    pub fn contains_digest(&self, d: Digest) -> bool {
        probe(d.h1, self.k, self.num_bits, |i| {
            self.words[i >> 6] & (1 << (i & 63)) != 0
        })
    }

    /// Does nothing: the port stays as the textbook wrote it, without a prefetching path, so its
    /// batched lookups are one plain lookup after another.
    #[inline]
    pub fn prefetch_digest(&self, d: Digest) {
        let _ = d;
    }

    keyed_methods!(digest);
}

impl Filter for TextbookFnv1aI32 {
    forward_filter_methods!(digest);
    fn bits(&self) -> u64 {
        self.num_bits as u64
    }
    fn hashes(&self) -> u32 {
        self.k as u32
    }
    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.words.capacity() * 8
    }
    fn set_bits(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }
    fn geometry(&self) -> Geometry {
        Geometry::Flat {
            bits: self.num_bits as u64,
            hashes: self.k as u32,
        }
    }
    /// The flat theory with the hash-width term of `(combined & Integer.MAX_VALUE) % numBits`:
    /// 2^31 values reduced to numBits positions ([`crate::theory::flat_reduced`]); near the
    /// largest `int` size, the lowest `2^31 - numBits` positions are hit twice as often.
    fn fpr_theory(&self, members: u64) -> f64 {
        crate::theory::flat_reduced(self.num_bits as u64, self.k as u32, members, 1 << 31)
    }
    fn fpr_given_bits(&self) -> f64 {
        crate::classic::reduced_given_bits(self.num_bits as u64, self.k as u32, 1 << 31, |w| {
            self.words[w]
        })
    }
}

/// The bit count as the Java `int` the textbook filter keeps it in.
fn java_int_bits(bits: u64) -> Result<i32> {
    i32::try_from(bits).map_err(|_| BloomError::TooLarge {
        what: format!("m = {bits}"),
        needed: bits as f64,
        max: i32::MAX as u64,
        variant: "textbook-fnv1a-i32 (its bit count is a Java int)".into(),
    })
}

impl Variant for TextbookFnv1aI32 {
    const LAYOUT: Layout = Layout::Textbook;
    fn variant_name() -> String {
        format!("{}-fnv1a-i32", Self::LAYOUT)
    }
    /// FNV-1a, the port's own hash (its index arithmetic is its own, not an index scheme here).
    fn axes() -> crate::registry::Axes {
        crate::registry::Axes {
            hash: Some(<crate::hash::Fnv1a as crate::hash::HashStrategy>::ID),
            ..Default::default()
        }
    }
    fn with_params(params: Params) -> Result<Self> {
        TextbookFnv1aI32::with_params(params)
    }
    fn sized_bytes(n: u64, p: f64) -> Result<u64> {
        let bits = Params::optimal(n, p)?.bits;
        java_int_bits(bits)?;
        Ok(crate::filter::array_bytes(bits, 64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_limit_is_an_error_naming_the_variant() {
        let err = TextbookFnv1aI32::new(1_000_000_000, 1e-3).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("textbook-fnv1a-i32") && msg.contains("2147483647"),
            "{msg}"
        );
    }

    #[test]
    fn h2_zero_puts_every_probe_on_one_bit() {
        // A hash whose upper 32 bits are 0: all k probes hit h1 & MAX % m, one bit.
        let mut f = TextbookFnv1aI32::with_params(Params::explicit(1000, 7).unwrap()).unwrap();
        f.insert_digest(Digest::from_halves(0x0000_0000_0000_1234, 0));
        assert_eq!(f.set_bits(), 1);
    }
}
