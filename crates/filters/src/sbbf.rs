//! The split-block Bloom filter of the Apache Parquet format specification (`BloomFilter.md`):
//! 256-bit blocks of eight 32-bit words; a key sets one bit in each word.

use std::marker::PhantomData;

use crate::error::{BloomError, Result};
use crate::filter::{Filter, Geometry, Layout, Variant, forward_filter_methods, keyed_methods};
use crate::hash::{Digest, HashStrategy};
use crate::sizing::{Params, check_n, round_up};
use crate::store::try_zeroed;

/// Bits in one block.
pub const BLOCK_BITS: u64 = 256;

/// The most blocks the spec's block selection can address: it multiplies the upper 32 hash bits by
/// the block count and keeps the upper 32 bits of the product.
pub const MAX_BLOCKS: u64 = 1 << 32;

/// The eight odd constants of the Parquet spec, one per word.
pub const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C, align(32))]
struct Block([u32; 8]);

// SAFETY: `repr(C)` over eight u32s: the zero pattern is the empty block.
unsafe impl crate::store::Zeroable for Block {}

/// Parquet's split-block Bloom filter with hash strategy `H`; bit-exact with the spec with
/// [`crate::Xxh64`] (its hash is the raw 64-bit `h1`). Always 8 probes, one per word.
pub struct SplitBlock<H> {
    blocks: Vec<Block>,
    _hash: PhantomData<fn() -> H>,
}

impl<H> std::fmt::Debug for SplitBlock<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplitBlock")
            .field("blocks", &self.blocks.len())
            .finish()
    }
}

/// The digest split-block uses: the hash's first word (the spec's 64-bit hash), the second
/// zero. The layout reads nothing else, and a digest carrying a second word makes every lookup
/// pay for deriving it wherever digests are stored before their lookups (the sweep's chunks,
/// batched lookups): Murmur3's `fmix64` for a 64-bit hash, about 0.8 ns per key, a fifth of a
/// sampled query. The concurrent inserter ([`crate::shared`]) uses it too.
#[inline(always)]
pub(crate) fn spec_digest<H: HashStrategy>(bytes: &[u8]) -> Digest {
    Digest::from_halves(H::digest(bytes).h1, 0)
}

/// The spec's `mask(x)`: word i gets bit `(x * SALT[i]) >> 27`.
#[inline(always)]
pub(crate) fn mask(x: u32) -> [u32; 8] {
    let mut m = [0u32; 8];
    for i in 0..8 {
        m[i] = 1 << (x.wrapping_mul(SALT[i]) >> 27);
    }
    m
}

/// The shape of a split-block filter of `blocks` blocks: eight 32-bit words each.
fn geometry_of(blocks: u64) -> Geometry {
    Geometry::SplitBlock {
        blocks,
        words: 8,
        word_bits: 32,
    }
}

fn too_many_blocks(blocks: u64) -> BloomError {
    BloomError::TooLarge {
        what: format!("{blocks} split blocks"),
        needed: blocks as f64 * BLOCK_BITS as f64,
        max: MAX_BLOCKS * BLOCK_BITS,
        variant: "the Parquet split-block filter".into(),
    }
}

impl<H: HashStrategy> SplitBlock<H> {
    /// A filter of at least `bits` bits, rounded up to whole 256-bit blocks; at most 2^32 blocks.
    pub fn with_bits(bits: u64) -> Result<Self> {
        Ok(Self {
            blocks: try_zeroed(Self::blocks_for(bits)?)?,
            _hash: PhantomData,
        })
    }

    /// The blocks of [`with_bits(bits)`](Self::with_bits), or its error.
    fn blocks_for(bits: u64) -> Result<u64> {
        let bits = Params::explicit(bits, 8)?.bits;
        let blocks = round_up(bits, BLOCK_BITS) / BLOCK_BITS;
        if blocks > MAX_BLOCKS {
            return Err(too_many_blocks(blocks));
        }
        Ok(blocks)
    }

    /// A filter for `n` keys at rate `p`: the textbook m rounded up to whole blocks, k = 8.
    pub fn new(n: u64, p: f64) -> Result<Self> {
        Self::with_bits(Params::optimal_bits(n, p)?)
    }

    /// Reads a filter from the spec's byte layout: blocks in order, each word little-endian.
    pub fn from_le_bytes(bytes: &[u8]) -> Result<Self> {
        let corrupt = |reason: String| BloomError::Corrupt {
            format: "Parquet split-block filter",
            reason,
        };
        if bytes.is_empty() || !bytes.len().is_multiple_of(32) {
            return Err(corrupt(format!(
                "length {} is not a positive multiple of 32 bytes",
                bytes.len()
            )));
        }
        let blocks = bytes.len() as u64 / 32;
        if blocks > MAX_BLOCKS {
            return Err(too_many_blocks(blocks));
        }
        let blocks = bytes
            .chunks_exact(32)
            .map(|c| {
                Block(std::array::from_fn(|i| {
                    u32::from_le_bytes(c[4 * i..4 * i + 4].try_into().unwrap())
                }))
            })
            .collect();
        Ok(Self {
            blocks,
            _hash: PhantomData,
        })
    }

    /// The spec's byte layout: blocks in order, each word little-endian.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        self.blocks
            .iter()
            .flat_map(|b| b.0)
            .flat_map(u32::to_le_bytes)
            .collect()
    }

    #[inline(always)]
    fn block_of(&self, h: u64) -> usize {
        (((h >> 32) * self.blocks.len() as u64) >> 32) as usize
    }

    /// Inserts a precomputed digest (`h1` is the spec's 64-bit hash).
    #[inline]
    pub fn insert_digest(&mut self, d: Digest) {
        let m = mask(d.h1 as u32);
        let b = self.block_of(d.h1);
        let block = &mut self.blocks[b].0;
        // Indexed loops over the two arrays, not `zip`: without cross-crate LTO, `zip` over an
        // array's `IntoIter` left calls to its `size` in the loop (not inlined) and no vector
        // code: 2.9x the floor at 1e5 keys in the release build, against 1.2x with fat LTO.
        for i in 0..8 {
            block[i] |= m[i];
        }
    }

    /// Looks up a precomputed digest.
    #[inline]
    pub fn contains_digest(&self, d: Digest) -> bool {
        let m = mask(d.h1 as u32);
        let block = &self.blocks[self.block_of(d.h1)].0;
        // Indexed, for the reason given in `insert_digest`.
        let mut missing = 0;
        for i in 0..8 {
            missing |= m[i] & !block[i];
        }
        missing == 0
    }

    /// Prefetches the block a lookup of `d` reads.
    #[inline]
    pub fn prefetch_digest(&self, d: Digest) {
        crate::filter::prefetch_line(self.blocks.as_ptr().wrapping_add(self.block_of(d.h1)));
    }

    keyed_methods!(spec_digest::<H>);
}

/// What [`crate::shared`]'s inserter needs from the filter.
impl<H> SplitBlock<H> {
    /// The spec's block of hash `h` among `blocks` blocks: the same choice as `block_of`.
    #[inline(always)]
    pub(crate) fn block_index(h: u64, blocks: u64) -> usize {
        (((h >> 32) * blocks) >> 32) as usize
    }
    /// The blocks as 64-bit words in memory order (block b is words 4b..4b+4; each holds two of
    /// the spec's 32-bit words, in the machine's byte order).
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        // SAFETY: `Block` is `repr(C)` over `[u32; 8]` with no padding (32 bytes, align 32), so
        // `len` blocks are `4 len` initialised words aligned for u64; the unique borrow carries
        // over.
        unsafe {
            std::slice::from_raw_parts_mut(self.blocks.as_mut_ptr().cast(), self.blocks.len() * 4)
        }
    }
    pub(crate) fn bytes_region(&self) -> (*const u8, usize) {
        (
            self.blocks.as_ptr().cast(),
            std::mem::size_of_val(self.blocks.as_slice()),
        )
    }
}

impl<H: HashStrategy> Filter for SplitBlock<H> {
    forward_filter_methods!(spec_digest::<H>);
    fn bits(&self) -> u64 {
        self.blocks.len() as u64 * BLOCK_BITS
    }
    fn hashes(&self) -> u32 {
        8
    }
    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.blocks.capacity() * std::mem::size_of::<Block>()
    }
    fn set_bits(&self) -> u64 {
        self.blocks
            .iter()
            .flat_map(|b| b.0)
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }
    /// The mean over blocks of the product over the 8 words of `(set bits / 32)`, each block
    /// weighted by its share of the 2^32 values of the upper hash word that select it (equal
    /// shares when the block count is a power of two; see [`crate::theory::split_block`]).
    fn fpr_given_bits(&self) -> f64 {
        let blocks = self.blocks.len() as u128;
        // Values x with floor(x * blocks / 2^32) = b: [ceil(b 2^32 / blocks), ceil((b+1) ...)).
        let first_value = |b: u128| (b << 32).div_ceil(blocks);
        let total: f64 = self
            .blocks
            .iter()
            .enumerate()
            .map(|(b, block)| {
                let b = b as u128;
                let values = first_value(b + 1) - first_value(b);
                values as f64
                    * block
                        .0
                        .iter()
                        .map(|w| f64::from(w.count_ones()) / 32.0)
                        .product::<f64>()
            })
            .sum();
        total / (1u64 << 32) as f64
    }
    fn geometry(&self) -> Geometry {
        geometry_of(self.blocks.len() as u64)
    }
}

impl<H: HashStrategy> Variant for SplitBlock<H> {
    const LAYOUT: Layout = Layout::SplitBlock;
    fn variant_name() -> String {
        format!("{}/{}", Self::LAYOUT, H::ID)
    }
    fn axes() -> crate::registry::Axes {
        crate::registry::Axes {
            hash: Some(H::ID),
            ..Default::default()
        }
    }
    /// k is fixed at 8 by the layout: any other k is an error.
    fn with_params(params: Params) -> Result<Self> {
        if params.hashes != 8 {
            return Err(BloomError::InvalidHashes {
                k: params.hashes,
                min: 8,
                max: 8,
            });
        }
        Self::with_bits(params.bits)
    }
    fn sized_for(n: u64, p: f64) -> Result<Self> {
        Self::new(n, p)
    }
    fn sized_bytes(n: u64, p: f64) -> Result<u64> {
        let bits = Params::explicit(Params::optimal_bits(n, p)?, 8)?.bits;
        let blocks = bits.div_ceil(BLOCK_BITS);
        if blocks > MAX_BLOCKS {
            return Err(too_many_blocks(blocks));
        }
        Ok(blocks * (BLOCK_BITS / 8))
    }
    fn with_bits_for(bits: u64, n: u64) -> Result<Self> {
        check_n(n)?;
        Self::with_bits(bits)
    }
    fn theory_with_bits_for(bits: u64, n: u64) -> Option<Result<(u64, f64)>> {
        let geometry = check_n(n).and_then(|()| Self::blocks_for(bits).map(geometry_of));
        Some(geometry.map(|g| (g.bits(), g.fpr(n))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Xxh64;

    #[test]
    fn tight_rates_are_sized_without_the_flat_k_limit() {
        // The flat optimum would need k = 266 here; the split-block layout always uses 8.
        let f = SplitBlock::<Xxh64>::new(1000, 1e-80).unwrap();
        assert_eq!(f.hashes(), 8);
        assert!(f.bits() >= Params::optimal_bits(1000, 1e-80).unwrap());
    }
}
