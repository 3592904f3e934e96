//! Bit positions without a bit array: what a filter's bits are, for code that keeps them
//! elsewhere (a Redis string, a file, another process).
//!
//! [`BitPositions`] gives, from a filter's shape (m, k) alone, the global bit positions
//! `insert_digest` sets for a digest, and reads the in-memory filter's bit array word by word, so
//! that another store can be checked against it bit for bit. Positions use one numbering for
//! every layout: position `i` is bit `i % 64` of word `i / 64`, the numbering of
//! [`crate::BitStore::word`]; as bytes, the words are little-endian, so position
//! `i` is bit `i % 8` (least significant first) of byte `i / 8`.
//!
//! Implemented for the flat layout ([`Bloom`], every hash, index scheme and store) and the
//! blocked one ([`Blocked512`], every hash).

use crate::blocked::{BLOCK_BITS, Blocked512, for_each_slice};
use crate::classic::Bloom;
use crate::error::{BloomError, Result};
use crate::filter::{Geometry, Variant};
use crate::hash::{Digest, HashStrategy};
use crate::index::{IndexScheme, fast_range};
use crate::sizing::{MAX_BITS, Params};
use crate::store::BitStore;

/// A layout whose bit positions can be computed from its shape alone, without allocation.
///
/// Guarantee (tested for every implementing layout and axis): for a filter `f` of this type,
/// [`for_each_position`](Self::for_each_position)`(f.bits(), f.hashes(), d, ..)` visits exactly
/// the positions `f.insert_digest(d)` sets (with repetitions when probes coincide), all below
/// `f.bits()`, and [`sized_params`](Self::sized_params)`(n, p)` is the `(f.bits(), f.hashes())` of
/// `Self::sized_for(n, p)`.
pub trait BitPositions: Variant {
    /// The hash strategy's [`HashStrategy::ID`].
    const HASH_ID: &'static str;
    /// The index scheme's [`IndexScheme::ID`]; for the blocked layout, whose in-block positions are
    /// fixed 9-bit slices of the hash, `"slices9"`.
    const INDEX_ID: &'static str;
    /// The unit the layout rounds its bit count up to (64 for a word array, 512 for blocks).
    const BIT_UNIT: u64;

    /// Hashes key bytes as the filter does ([`crate::Filter::digest`], without a filter).
    fn digest_of(bytes: &[u8]) -> Digest;

    /// The (m, k) a filter built with `params` has, m rounded up to [`Self::BIT_UNIT`]; errors
    /// for an invalid (m, k) or an m whose rounding passes [`MAX_BITS`]. Allocates nothing.
    fn rounded_params(params: Params) -> Result<Params> {
        let params = Params::explicit(params.bits, params.hashes)?;
        let bits = params
            .bits
            .div_ceil(Self::BIT_UNIT)
            .checked_mul(Self::BIT_UNIT)
            .filter(|&b| b <= MAX_BITS)
            .ok_or_else(|| BloomError::InvalidBits {
                bits: params.bits,
                max: MAX_BITS - MAX_BITS % Self::BIT_UNIT,
                variant: Self::variant_name(),
            })?;
        Ok(Params {
            bits,
            hashes: params.hashes,
        })
    }

    /// The (m, k) of `Self::sized_for(n, p)`, computed without allocating; the same errors.
    fn sized_params(n: u64, p: f64) -> Result<Params>;

    /// Calls `visit` with every position `insert_digest(d)` sets in a filter of this type with
    /// `bits` bits and `hashes` probes, in probe order. `bits` must be a size this type builds
    /// (a [`Self::rounded_params`] result, or [`crate::Filter::bits`] of a filter); every position
    /// is then below `bits`.
    fn for_each_position(bits: u64, hashes: u32, d: Digest, visit: impl FnMut(u64));

    /// The [`Geometry`] of a filter of this type with `bits` bits and `hashes` probes (what the
    /// harness's theory reads).
    fn geometry_of(bits: u64, hashes: u32) -> Geometry;

    /// The theoretical FPR of a filter of this type with `bits` bits and `hashes` probes after
    /// `members` keys: what [`crate::Filter::fpr_theory`] of such a filter returns (the layout's
    /// theory, with the hash-width term of its index scheme).
    fn theory_of(bits: u64, hashes: u32, members: u64) -> f64 {
        Self::geometry_of(bits, hashes).fpr(members)
    }

    /// Word `w` of this filter's bit array (positions 64w..64w+63, position 64w + j in bit j).
    /// Panics if `w` is not below `bits() / 64`.
    fn bit_word(&self, w: u64) -> u64;
}

impl<H: HashStrategy, I: IndexScheme, S: BitStore> BitPositions for Bloom<H, I, S> {
    const HASH_ID: &'static str = H::ID;
    const INDEX_ID: &'static str = I::ID;
    const BIT_UNIT: u64 = 64;

    #[inline]
    fn digest_of(bytes: &[u8]) -> Digest {
        H::digest(bytes)
    }

    fn sized_params(n: u64, p: f64) -> Result<Params> {
        Self::rounded_params(I::sizing(n, p)?)
    }

    #[inline]
    fn for_each_position(bits: u64, hashes: u32, d: Digest, mut visit: impl FnMut(u64)) {
        I::probe(d, hashes, bits, |i| {
            visit(i);
            true
        });
    }

    fn geometry_of(bits: u64, hashes: u32) -> Geometry {
        Geometry::Flat { bits, hashes }
    }

    fn theory_of(bits: u64, hashes: u32, members: u64) -> f64 {
        crate::classic::flat_theory::<I>(bits, hashes, members)
    }

    fn bit_word(&self, w: u64) -> u64 {
        self.store()
            .word(usize::try_from(w).expect("word index fits in usize"))
    }
}

impl<H: HashStrategy> BitPositions for Blocked512<H> {
    const HASH_ID: &'static str = H::ID;
    const INDEX_ID: &'static str = "slices9";
    const BIT_UNIT: u64 = BLOCK_BITS as u64;

    #[inline]
    fn digest_of(bytes: &[u8]) -> Digest {
        H::digest(bytes)
    }

    fn sized_params(n: u64, p: f64) -> Result<Params> {
        Self::rounded_params(Params::optimal(n, p)?)
    }

    #[inline]
    fn for_each_position(bits: u64, hashes: u32, d: Digest, mut visit: impl FnMut(u64)) {
        let block_bits = u64::from(BLOCK_BITS);
        let base = fast_range(d.h1, bits / block_bits) * block_bits;
        // A slice past k comes with mask 0 (see `for_each_slice`): it sets nothing, so it has no
        // position.
        for_each_slice(d.h2, hashes, |w, mask| {
            if mask != 0 {
                visit(base + 64 * w as u64 + u64::from(mask.trailing_zeros()));
            }
        });
    }

    fn geometry_of(bits: u64, hashes: u32) -> Geometry {
        Geometry::Blocked {
            blocks: bits / u64::from(BLOCK_BITS),
            block_bits: BLOCK_BITS,
            hashes,
        }
    }

    fn bit_word(&self, w: u64) -> u64 {
        self.word(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::{Fnv1a, Lookup3, Murmur3, Xxh3, Xxh3Wide, Xxh64};
    use crate::index::{EnhancedDoubleHash, GuavaMitz32, GuavaMitz64, KirschMitzenmacher};
    use crate::store::{AtomicBits, FlatBits};

    /// Builds `F` for (n, p), inserts `keys` keys, and checks that the words rebuilt from
    /// `for_each_position` are the filter's words, and that `sized_params` is the built shape.
    fn positions_are_the_inserted_bits<F: BitPositions>(n: u64, p: f64, keys: u64) {
        let name = F::variant_name();
        let mut f = F::sized_for(n, p).unwrap();
        let params = F::sized_params(n, p).unwrap();
        assert_eq!(
            (params.bits, params.hashes),
            (f.bits(), f.hashes()),
            "{name} n={n} p={p}"
        );
        assert_eq!(F::geometry_of(f.bits(), f.hashes()), f.geometry(), "{name}");
        let mut words = vec![0u64; (f.bits() / 64) as usize];
        for key in 0..keys {
            let d = F::digest_of(&key.to_le_bytes());
            assert_eq!(d, f.digest(&key.to_le_bytes()), "{name}");
            f.insert_digest(d);
            let mut probes = 0;
            F::for_each_position(f.bits(), f.hashes(), d, |i| {
                assert!(i < f.bits(), "{name}: position {i} of {} bits", f.bits());
                words[(i / 64) as usize] |= 1 << (i % 64);
                probes += 1;
            });
            assert!(
                (1..=f.hashes()).contains(&probes),
                "{name}: {probes} positions for k = {}",
                f.hashes()
            );
        }
        for (w, &expected) in words.iter().enumerate() {
            assert_eq!(
                f.bit_word(w as u64),
                expected,
                "{name} n={n} p={p}: word {w} of {}",
                words.len()
            );
        }
        assert_eq!(
            f.set_bits(),
            words.iter().map(|w| u64::from(w.count_ones())).sum::<u64>(),
            "{name}"
        );
    }

    macro_rules! check_all {
        ($n:expr, $p:expr, $keys:expr) => {
            check_all!(@hashes $n, $p, $keys; Fnv1a, Murmur3, Xxh3, Xxh3Wide, Xxh64, Lookup3)
        };
        (@hashes $n:expr, $p:expr, $keys:expr; $($h:ty),*) => {$(
            positions_are_the_inserted_bits::<Blocked512<$h>>($n, $p, $keys);
            check_all!(@index $n, $p, $keys; $h; KirschMitzenmacher, EnhancedDoubleHash, GuavaMitz64, GuavaMitz32);
        )*};
        (@index $n:expr, $p:expr, $keys:expr; $h:ty; $($i:ty),*) => {$(
            positions_are_the_inserted_bits::<Bloom<$h, $i, FlatBits>>($n, $p, $keys);
            positions_are_the_inserted_bits::<Bloom<$h, $i, AtomicBits>>($n, $p, $keys);
        )*};
    }

    #[test]
    fn positions_are_exactly_the_bits_insert_sets_for_every_axis() {
        // k from 1 (p = 0.5) through 7 and 10 to 17 (past the blocked layout's 7 slices per
        // hash word); a sparse fill and an overfilled one.
        check_all!(1000, 0.5, 1000);
        check_all!(1000, 0.01, 1000);
        check_all!(3000, 1e-3, 1500);
        check_all!(500, 1e-5, 2000);
    }

    #[test]
    fn rounding_is_checked_and_reported() {
        type Flat = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;
        let p = Flat::rounded_params(Params::explicit(65, 3).unwrap()).unwrap();
        assert_eq!((p.bits, p.hashes), (128, 3));
        let p = Blocked512::<Xxh3>::rounded_params(Params::explicit(513, 3).unwrap()).unwrap();
        assert_eq!(p.bits, 1024);
        let e = Blocked512::<Xxh3>::rounded_params(Params::explicit(MAX_BITS, 3).unwrap());
        assert!(
            matches!(&e, Err(BloomError::InvalidBits { bits, .. }) if *bits == MAX_BITS),
            "{e:?}"
        );
    }
}
