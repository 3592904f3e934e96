//! The counting layout (Fan, Cao, Almeida & Broder 2000): the classic flat layout with a small
//! counter in place of each bit, so that keys can be removed. Counters are `BITS` wide (4 or 8),
//! packed `64 / BITS` to a `u64` word.

use std::marker::PhantomData;

use crate::capability::Removable;
use crate::error::Result;
use crate::filter::{Filter, Geometry, Layout, Variant, forward_filter_methods, keyed_methods};
use crate::hash::{Digest, HashStrategy};
use crate::index::IndexScheme;
use crate::key::Key;
use crate::sizing::{Params, round_up};
use crate::store::try_vec;

/// A counting Bloom filter of `BITS`-bit counters (4 or 8; see [`Counting4`], [`Counting8`]) with
/// hash strategy `H` and index scheme `I`.
///
/// Sized exactly like the classic filter ([`crate::Bloom`]) with the same `H` and `I`: m counters
/// in place of m bits (rounded up to a multiple of 64, as there), the same k, the same positions. A counter above
/// 0 is a set bit, so membership and false-positive rate are the classic filter's
/// ([`Filter::geometry`] is [`Geometry::Flat`] with `bits` = the counter count, and
/// [`Filter::bits`] is the counter count too); [`Filter::memory_bytes`] counts the counter bytes,
/// `BITS` times the classic filter's.
///
/// An insert increments each of its k counters unless it is saturated (at `2^BITS - 1`); a
/// saturated counter sticks: it is never incremented or decremented again, so it can only cost
/// false positives, never a false negative ([`Removable`] has the guarantee).
pub struct Counting<H, I: IndexScheme, const BITS: u32> {
    words: Vec<u64>,
    /// The counter count, a multiple of 64.
    counters: u64,
    /// The index scheme's precomputed form of the counter count.
    range: I::Range,
    hashes: u32,
    _axes: PhantomData<fn() -> (H, I)>,
}

/// 4-bit counters, 16 per word: saturate at 15 (Fan et al.'s choice).
pub type Counting4<H, I> = Counting<H, I, 4>;
/// 8-bit counters, 8 per word: saturate at 255.
pub type Counting8<H, I> = Counting<H, I, 8>;

impl<H, I: IndexScheme, const BITS: u32> std::fmt::Debug for Counting<H, I, BITS> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counting")
            .field("counter_bits", &BITS)
            .field("counters", &self.counters)
            .field("hashes", &self.hashes)
            .finish()
    }
}

impl<H: HashStrategy, I: IndexScheme, const BITS: u32> Counting<H, I, BITS> {
    /// Refuses, at compile time, counter widths other than 4 and 8.
    const WIDTH_OK: () = assert!(BITS == 4 || BITS == 8, "counters are 4 or 8 bits wide");
    /// Counters per 64-bit word.
    const PER_WORD: u64 = 64 / BITS as u64;
    /// log2 of [`Self::PER_WORD`].
    const LOG_PER_WORD: u32 = Self::PER_WORD.trailing_zeros();
    /// The saturation value, `2^BITS - 1`.
    pub const MAX: u64 = (1 << BITS) - 1;
    /// Bit 0 of every counter of a word.
    const LOW_BITS: u64 = u64::MAX / Self::MAX;

    /// A filter of at least `params.bits` counters and `params.hashes` probes per key. The count is
    /// rounded up to a multiple of 64, as the classic filter rounds its bits, so that the two have
    /// the same m and therefore the same positions for every key.
    pub fn with_params(params: Params) -> Result<Self> {
        let (counters, hashes) = Self::shape(params)?;
        let words = try_vec(counters / Self::PER_WORD, || 0)?;
        Ok(Self {
            words,
            counters,
            range: I::range(counters),
            hashes,
            _axes: PhantomData,
        })
    }

    /// The counters and k of [`with_params(params)`](Self::with_params), or its error.
    fn shape(params: Params) -> Result<(u64, u32)> {
        let () = Self::WIDTH_OK;
        let params = Params::explicit(params.bits, params.hashes)?;
        Ok((round_up(params.bits, 64), params.hashes))
    }

    /// A filter for `n` keys at rate `p`, sized by the index scheme's rule, as the classic filter.
    pub fn new(n: u64, p: f64) -> Result<Self> {
        Self::with_params(I::sizing(n, p)?)
    }

    /// The word and the shift of counter `i`.
    #[inline(always)]
    fn slot(i: u64) -> (usize, u32) {
        (
            (i >> Self::LOG_PER_WORD) as usize,
            (i & (Self::PER_WORD - 1)) as u32 * BITS,
        )
    }

    /// The value of counter `i` (`i < counters`).
    #[inline(always)]
    pub fn counter(&self, i: u64) -> u64 {
        let (w, s) = Self::slot(i);
        (self.words[w] >> s) & Self::MAX
    }

    /// The number of counters.
    pub fn counters(&self) -> u64 {
        self.counters
    }

    /// Inserts a precomputed digest: each of the k counters goes up by one unless saturated.
    #[inline]
    pub fn insert_digest(&mut self, d: Digest) {
        let words = &mut self.words;
        I::probe_in(d, self.hashes, self.range, |i| {
            let (w, s) = Self::slot(i);
            let below_max = ((words[w] >> s) & Self::MAX) < Self::MAX;
            words[w] += u64::from(below_max) << s;
            true
        });
    }

    /// Looks up a precomputed digest: all k counters are read, without a branch per probe.
    #[inline]
    pub fn contains_digest(&self, d: Digest) -> bool {
        let mut all = true;
        I::probe_in(d, self.hashes, self.range, |i| {
            all &= self.counter(i) != 0;
            true
        });
        all
    }

    /// Removes a precomputed digest: when all k counters are non-zero, decrements each that is not
    /// saturated and returns true; otherwise changes nothing and returns false.
    ///
    /// A key whose probes repeat a position decrements that counter once per probe, as its insert
    /// incremented it. Removing a key that was never inserted is a caller error (see
    /// [`Removable`]); even then a counter never goes below 0.
    #[inline]
    pub fn remove_digest(&mut self, d: Digest) -> bool {
        if !self.contains_digest(d) {
            return false;
        }
        let words = &mut self.words;
        I::probe_in(d, self.hashes, self.range, |i| {
            let (w, s) = Self::slot(i);
            let c = (words[w] >> s) & Self::MAX;
            // c = 0 only for a repeated position of a key that was never inserted.
            words[w] -= u64::from(c != 0 && c != Self::MAX) << s;
            true
        });
        true
    }

    /// Counters at the saturation value [`Self::MAX`].
    pub fn saturated_counters(&self) -> u64 {
        self.words
            .iter()
            .map(|&x| {
                // Bit 0 of each counter becomes the AND of all its bits.
                let mut all = x;
                for s in 1..BITS {
                    all &= x >> s;
                }
                u64::from((all & Self::LOW_BITS).count_ones())
            })
            .sum()
    }

    /// Counters above 0 (the classic filter's set bits).
    pub fn nonzero_counters(&self) -> u64 {
        self.words
            .iter()
            .map(|&x| {
                let mut any = x;
                for s in 1..BITS {
                    any |= x >> s;
                }
                u64::from((any & Self::LOW_BITS).count_ones())
            })
            .sum()
    }

    /// Prefetches the k words a lookup of `d` reads (as the classic filter does).
    #[inline]
    pub fn prefetch_digest(&self, d: Digest) {
        I::probe_in(d, self.hashes, self.range, |i| {
            crate::filter::prefetch_line(self.words.as_ptr().wrapping_add(Self::slot(i).0));
            true
        });
    }

    /// Removes `key`; see [`Self::remove_digest`].
    #[inline]
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        key.with_bytes(|b| self.remove_digest(H::digest(b)))
    }

    keyed_methods!(H::digest);
}

impl<H: HashStrategy, I: IndexScheme, const BITS: u32> Filter for Counting<H, I, BITS> {
    forward_filter_methods!(H::digest);
    fn bits(&self) -> u64 {
        self.counters
    }
    fn hashes(&self) -> u32 {
        self.hashes
    }
    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.words.capacity() * 8
    }
    fn set_bits(&self) -> u64 {
        self.nonzero_counters()
    }
    fn geometry(&self) -> Geometry {
        Geometry::Flat {
            bits: self.counters,
            hashes: self.hashes,
        }
    }
}

impl<H: HashStrategy, I: IndexScheme, const BITS: u32> Removable for Counting<H, I, BITS> {
    #[inline]
    fn remove_digest(&mut self, d: Digest) -> bool {
        Self::remove_digest(self, d)
    }
    fn saturated_counters(&self) -> u64 {
        Self::saturated_counters(self)
    }
    fn visit_counters(&self, d: Digest, visit: &mut dyn FnMut(u64, u64)) {
        I::probe_in(d, self.hashes, self.range, |i| {
            visit(i, self.counter(i));
            true
        });
    }
    fn counter_max(&self) -> u64 {
        Self::MAX
    }
}

impl<H: HashStrategy, I: IndexScheme, const BITS: u32> Variant for Counting<H, I, BITS> {
    const LAYOUT: Layout = if BITS == 4 {
        Layout::Counting4
    } else {
        Layout::Counting8
    };
    fn variant_name() -> String {
        format!("{}/{}/{}", Self::LAYOUT, H::ID, I::ID)
    }
    fn axes() -> crate::registry::Axes {
        crate::registry::Axes {
            hash: Some(H::ID),
            index: Some(I::ID),
            store: None,
        }
    }
    fn with_params(params: Params) -> Result<Self> {
        Counting::with_params(params)
    }
    fn sized_for(n: u64, p: f64) -> Result<Self> {
        Counting::new(n, p)
    }
    /// `BITS` bits per counter, the counter count rounded up to 64 as [`Counting::with_params`]
    /// does.
    fn sized_bytes(n: u64, p: f64) -> Result<u64> {
        let params = I::sizing(n, p)?;
        let params = Params::explicit(params.bits, params.hashes)?;
        Ok(round_up(params.bits, 64) / 8 * u64::from(BITS))
    }
    fn theory_with_bits_for(bits: u64, n: u64) -> Option<Result<(u64, f64)>> {
        let shape = Params::for_bits_and_count(bits, n).and_then(Self::shape);
        Some(shape.map(|(counters, hashes)| {
            let geometry = Geometry::Flat {
                bits: counters,
                hashes,
            };
            (geometry.bits(), geometry.fpr(n))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Bloom, FlatBits, KirschMitzenmacher, Xxh3};

    type C4 = Counting4<Xxh3, KirschMitzenmacher>;

    #[test]
    fn sized_and_probed_like_the_classic_filter() {
        let mut c = C4::new(10_000, 0.01).unwrap();
        let mut b = Bloom::<Xxh3, KirschMitzenmacher, FlatBits>::new(10_000, 0.01).unwrap();
        assert_eq!((c.bits(), c.hashes()), (b.bits(), b.hashes()));
        assert_eq!(c.geometry(), b.geometry());
        for i in 0..10_000u64 {
            c.insert(&i);
            b.insert(&i);
        }
        assert_eq!(c.set_bits(), b.set_bits());
        for i in 0..100_000u64 {
            assert_eq!(c.contains(&i), b.contains(&i), "key {i}");
        }
        // 4 bits per counter: 4x the classic filter's bit array.
        assert_eq!(c.memory_bytes() - size_of::<C4>(), b.bits() as usize / 2);
    }

    fn saturate_then_remove<const B: u32>() {
        let max = (1u64 << B) - 1;
        let mut f =
            Counting::<Xxh3, KirschMitzenmacher, B>::with_params(Params::explicit(64, 1).unwrap())
                .unwrap();
        let d = Digest::from_halves(0, 0); // the one probe lands on counter 0
        for _ in 0..max + 5 {
            f.insert_digest(d);
        }
        assert_eq!(
            (f.counter(0), f.saturated_counters()),
            (max, 1),
            "width {B}"
        );
        for _ in 0..max + 5 {
            assert!(
                f.remove_digest(d),
                "width {B}: a saturated counter stays positive"
            );
        }
        assert_eq!(f.counter(0), max, "width {B}: saturated counters stick");
        assert_eq!(f.counter(1), 0, "width {B}: the neighbour is untouched");
    }

    #[test]
    fn counters_saturate_stick_and_never_underflow() {
        saturate_then_remove::<4>();
        saturate_then_remove::<8>();
        // Below saturation, insert then remove restores zero; a further remove is refused.
        let mut f = C4::with_params(Params::explicit(64, 3).unwrap()).unwrap();
        f.insert(&7u64);
        assert!(f.remove(&7u64));
        assert_eq!(f.set_bits(), 0);
        assert!(!f.remove(&7u64));
        assert_eq!(f.set_bits(), 0);
    }
}
