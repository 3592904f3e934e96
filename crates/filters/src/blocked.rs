//! The blocked layout (Putze, Sanders & Singler 2007): each key touches one 512-bit, cache-line
//! aligned block, so a lookup costs one cache miss instead of k.

use std::marker::PhantomData;

use crate::error::Result;
use crate::filter::{Filter, Geometry, Layout, Variant, forward_filter_methods, keyed_methods};
use crate::hash::{Digest, HashStrategy, fmix64};
use crate::index::fast_range;
use crate::sizing::{Params, round_up};
use crate::store::try_zeroed;

/// Bits in one block: one 64-byte cache line.
pub const BLOCK_BITS: u32 = 512;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C, align(64))]
struct Line([u64; 8]);

// SAFETY: `repr(C)` over eight u64s: the zero pattern is the all-clear line.
unsafe impl crate::store::Zeroable for Line {}

/// A blocked Bloom filter with 512-bit cache-line blocks and hash strategy `H`.
///
/// The block is chosen from `h1` by multiply-shift; inside it, the k positions are independent
/// 9-bit slices of `h2` (see `for_each_slice`). For the
/// same m and k its FPR is higher than the flat layout's, because block loads vary (Poisson): the
/// harness's theory accounts for that.
pub struct Blocked512<H> {
    lines: Vec<Line>,
    hashes: u32,
    _hash: PhantomData<fn() -> H>,
}

impl<H> std::fmt::Debug for Blocked512<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blocked512")
            .field("blocks", &self.lines.len())
            .field("hashes", &self.hashes)
            .finish()
    }
}

/// Calls `visit` with the k in-block positions of a digest, each in `[0, 512)`.
///
/// Each position is its own 9-bit slice of `h2` (7 slices per 64-bit word); past 7 probes, further
/// words come from `fmix64(h2 ^ round * golden)`. Slices of a good hash are independent and uniform,
/// which is what the blocked theory assumes. (Double hashing `a + i*s` inside a 512-bit block is not:
/// keys whose (a, s) nearly agree share most of their bits, and the measured FPR was 5% above theory
/// at p = 1% and 38% above at p = 0.1%.)
#[inline(always)]
pub(crate) fn for_each_slice(h2: u64, k: u32, mut visit: impl FnMut(usize, u64)) {
    // The first word's seven slices are visited in a loop of fixed length (a slice past k visits
    // bit mask 0, which sets and tests nothing), so the common k <= 7 compiles to straight-line
    // code. Fewer instructions per lookup let the core keep more lookups' cache misses in flight,
    // which is what a large filter's lookup speed depends on.
    for j in 0..SLICES_PER_WORD {
        let bit = (h2 >> (9 * j)) & 511;
        let live = u64::from(j < k);
        visit((bit >> 6) as usize, live << (bit & 63));
    }
    let mut left = k.saturating_sub(SLICES_PER_WORD);
    let mut round = 0u64;
    while left > 0 {
        round += 1;
        let word = extra_word(h2, round);
        let take = left.min(SLICES_PER_WORD);
        for j in 0..take {
            let bit = (word >> (9 * j)) & 511;
            visit((bit >> 6) as usize, 1 << (bit & 63));
        }
        left -= take;
    }
}

/// Whole 9-bit slices in a 64-bit word.
const SLICES_PER_WORD: u32 = 7;

/// The hash word that supplies probes 7*round+1 ..= 7*round+7 (round >= 1), for k > 7.
#[inline(always)]
fn extra_word(h2: u64, round: u64) -> u64 {
    fmix64(h2 ^ round.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Whether every in-block position of `h2` is set in `line`: each bit tested where it lies, without
/// a branch. (Assembling an 8-word mask first needs read-modify-writes at computed indices, through
/// the stack, or 8 compare-selects per probe; both measured slower.)
#[cfg_attr(
    all(target_arch = "x86_64", target_feature = "avx512f", not(test)),
    allow(
        dead_code,
        reason = "the AVX-512 path replaces it; tests compare the two"
    )
)]
#[inline(always)]
fn line_has_all_scalar(line: &Line, h2: u64, k: u32) -> bool {
    let mut missing = 0;
    for_each_slice(h2, k, |w, bit| missing |= bit & !line.0[w]);
    missing == 0
}

/// The same test with AVX-512: the whole line is one register, and each 64-bit lane takes one
/// slice of a hash word.
#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
mod wide {
    use super::{Line, SLICES_PER_WORD};
    use std::arch::x86_64::{
        __m512i, _mm512_and_si512, _mm512_mask_testn_epi64_mask, _mm512_permutexvar_epi64,
        _mm512_rolv_epi64, _mm512_set_epi64, _mm512_set1_epi64, _mm512_srli_epi64,
        _mm512_srlv_epi64,
    };

    /// Lanes where a slice of `word` (the first `take` of its 9-bit slices, lane j = bits
    /// 9j..9j+9) is clear in `line`, as a bit mask.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn clear_slices(line: __m512i, word: u64, take: u32) -> u8 {
        // Lane j: bit = (word >> 9j) & 511; the line's word bit / 64 brought to lane j by a lane
        // permutation (which reads the low 3 bits of each index); 1 << (bit % 64) as a rotate,
        // which takes its count modulo 64, so no mask is needed.
        let shifts = _mm512_set_epi64(63, 54, 45, 36, 27, 18, 9, 0);
        let bits = _mm512_and_si512(
            _mm512_srlv_epi64(_mm512_set1_epi64(word as i64), shifts),
            _mm512_set1_epi64(511),
        );
        let words = _mm512_permutexvar_epi64(_mm512_srli_epi64::<6>(bits), line);
        let probes = _mm512_rolv_epi64(_mm512_set1_epi64(1), bits);
        let live = ((1u16 << take) - 1) as u8;
        _mm512_mask_testn_epi64_mask(live, words, probes)
    }

    /// Whether every in-block position of `h2` is set in `line`: the positions of
    /// `super::for_each_slice`, seven per hash word.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn line_has_all(line: &Line, h2: u64, k: u32) -> bool {
        // SAFETY: `Line` is 64 bytes, 64-byte aligned and `repr(C)`: exactly one `__m512i`, and
        // every bit pattern of either type is valid.
        let line: __m512i = unsafe { std::mem::transmute::<Line, __m512i>(*line) };
        let mut missing = clear_slices(line, h2, k.min(SLICES_PER_WORD));
        let mut left = k.saturating_sub(SLICES_PER_WORD);
        let mut round = 0u64;
        while left > 0 {
            round += 1;
            let take = left.min(SLICES_PER_WORD);
            missing |= clear_slices(line, super::extra_word(h2, round), take);
            left -= take;
        }
        missing == 0
    }
}

/// The k in-block positions of a digest as an 8-word mask.
#[cfg(test)]
fn block_mask(h2: u64, k: u32) -> [u64; 8] {
    let mut mask = [0u64; 8];
    for_each_slice(h2, k, |w, bit| mask[w] |= bit);
    mask
}

impl<H: HashStrategy> Blocked512<H> {
    /// A filter of at least `params.bits` bits, rounded up to whole 512-bit blocks.
    pub fn with_params(params: Params) -> Result<Self> {
        let (blocks, hashes) = Self::shape(params)?;
        Ok(Self {
            lines: try_zeroed(blocks)?,
            hashes,
            _hash: PhantomData,
        })
    }

    /// The blocks and k of [`with_params(params)`](Self::with_params), or its error.
    fn shape(params: Params) -> Result<(u64, u32)> {
        let params = Params::explicit(params.bits, params.hashes)?;
        let blocks = round_up(params.bits, u64::from(BLOCK_BITS)) / u64::from(BLOCK_BITS);
        Ok((blocks, params.hashes))
    }

    /// A filter for `n` keys at rate `p` with the textbook (m, k), rounded up to whole blocks.
    pub fn new(n: u64, p: f64) -> Result<Self> {
        Self::with_params(Params::optimal(n, p)?)
    }

    #[inline(always)]
    fn block_of(&self, d: Digest) -> usize {
        fast_range(d.h1, self.lines.len() as u64) as usize
    }

    /// Inserts a precomputed digest.
    #[inline]
    pub fn insert_digest(&mut self, d: Digest) {
        let b = self.block_of(d);
        let line = &mut self.lines[b].0;
        for_each_slice(d.h2, self.hashes, |w, bit| line[w] |= bit);
    }

    /// Looks up a precomputed digest: one cache line read, its k bits tested without a branch; in
    /// builds for CPUs with AVX-512F, the line is one vector register and seven bits are tested by
    /// one instruction (1M string keys, `blocked512/xxh3`: 11.0 -> 7.5 ns per lookup).
    #[inline]
    pub fn contains_digest(&self, d: Digest) -> bool {
        let line = &self.lines[self.block_of(d)];
        #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
        // SAFETY: this code is compiled only when the build's target features include AVX-512F
        // (`-C target-cpu` of a CPU that has it), so the program never runs where it is missing.
        unsafe {
            wide::line_has_all(line, d.h2, self.hashes)
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx512f")))]
        {
            line_has_all_scalar(line, d.h2, self.hashes)
        }
    }

    /// Prefetches the cache line a lookup of `d` reads.
    #[inline]
    pub fn prefetch_digest(&self, d: Digest) {
        crate::filter::prefetch_line(self.lines.as_ptr().wrapping_add(self.block_of(d)));
    }

    keyed_methods!(H::digest);
}

/// What [`crate::shared`]'s inserter needs from the filter.
impl<H> Blocked512<H> {
    /// The block of `d` among `blocks` blocks: the same choice as `block_of`.
    #[inline(always)]
    pub(crate) fn block_index(d: Digest, blocks: u64) -> usize {
        fast_range(d.h1, blocks) as usize
    }
    pub(crate) fn hashes_per_key(&self) -> u32 {
        self.hashes
    }
    /// The blocks as words, block b being words 8b..8b+8.
    pub fn words(&self) -> &[u64] {
        self.lines.as_flattened_words()
    }
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        self.lines.as_flattened_words_mut()
    }
    pub(crate) fn bytes_region(&self) -> (*const u8, usize) {
        (
            self.lines.as_ptr().cast(),
            std::mem::size_of_val(self.lines.as_slice()),
        )
    }
}

/// `Line`s seen as their words.
trait LineWords {
    fn as_flattened_words(&self) -> &[u64];
    fn as_flattened_words_mut(&mut self) -> &mut [u64];
}

impl LineWords for Vec<Line> {
    fn as_flattened_words(&self) -> &[u64] {
        // SAFETY: `Line` is `repr(C)` over `[u64; 8]` with no padding (64 bytes, align 64), so
        // `len` lines are `8 len` initialised, aligned words; the borrow is carried over.
        unsafe { std::slice::from_raw_parts(self.as_ptr().cast(), self.len() * 8) }
    }
    fn as_flattened_words_mut(&mut self) -> &mut [u64] {
        // SAFETY: as above, and the unique borrow is carried over.
        unsafe { std::slice::from_raw_parts_mut(self.as_mut_ptr().cast(), self.len() * 8) }
    }
}

impl<H: HashStrategy> Filter for Blocked512<H> {
    forward_filter_methods!(H::digest);
    fn bits(&self) -> u64 {
        self.lines.len() as u64 * u64::from(BLOCK_BITS)
    }
    fn hashes(&self) -> u32 {
        self.hashes
    }
    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.lines.capacity() * std::mem::size_of::<Line>()
    }
    fn set_bits(&self) -> u64 {
        self.lines
            .iter()
            .flat_map(|l| l.0)
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }
    /// The mean over blocks of `(set bits / 512)^k`: a query picks a block uniformly, then k
    /// uniform in-block positions.
    fn fpr_given_bits(&self) -> f64 {
        let k = self.hashes as i32;
        let total: f64 = self
            .lines
            .iter()
            .map(|l| {
                let set: u32 = l.0.iter().map(|w| w.count_ones()).sum();
                (f64::from(set) / f64::from(BLOCK_BITS)).powi(k)
            })
            .sum();
        total / self.lines.len() as f64
    }
    fn geometry(&self) -> Geometry {
        Geometry::Blocked {
            blocks: self.lines.len() as u64,
            block_bits: BLOCK_BITS,
            hashes: self.hashes,
        }
    }
}

impl<H: HashStrategy> Variant for Blocked512<H> {
    const LAYOUT: Layout = Layout::Blocked512;
    fn variant_name() -> String {
        format!("{}/{}", Self::LAYOUT, H::ID)
    }
    fn axes() -> crate::registry::Axes {
        crate::registry::Axes {
            hash: Some(H::ID),
            ..Default::default()
        }
    }
    fn with_params(params: Params) -> Result<Self> {
        Blocked512::with_params(params)
    }
    fn theory_with_bits_for(bits: u64, n: u64) -> Option<Result<(u64, f64)>> {
        let shape = Params::for_bits_and_count(bits, n).and_then(Self::shape);
        Some(shape.map(|(blocks, hashes)| {
            let geometry = Geometry::Blocked {
                blocks,
                block_bits: BLOCK_BITS,
                hashes,
            };
            (geometry.bits(), geometry.fpr(n))
        }))
    }
}

/// Read access to the bit array, for code that must reproduce it elsewhere (see
/// [`crate::positions`]).
impl<H> Blocked512<H> {
    /// Word `w` of the bit array: bits 64w..64w+63 of the filter, bit j of the word being position
    /// 64w + j, blocks in order (the numbering of [`crate::BitStore::word`]). Panics if `w` is
    /// not below `bits() / 64`.
    pub fn word(&self, w: u64) -> u64 {
        let w = usize::try_from(w).expect("word index fits in usize");
        self.lines[w / 8].0[w % 8]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_has_at_most_k_bits_and_at_least_one() {
        for h in [0u64, 1, u64::MAX, 0x1234_5678_9abc_def0] {
            let ones: u32 = block_mask(h, 7).iter().map(|w| w.count_ones()).sum();
            assert!((1..=7).contains(&ones), "h2 = {h:#x}: {ones} bits");
        }
    }

    #[test]
    fn positions_are_the_hash_slices_for_every_k() {
        let h2 = 0x1234_5678_9abc_def0_u64;
        let slices = |word: u64, count: u32| (0..count).map(move |j| (word >> (9 * j)) & 511);
        for k in 1..=20u32 {
            let mut expected = [0u64; 8];
            let words = (0..).map(|round: u64| {
                if round == 0 {
                    h2
                } else {
                    fmix64(h2 ^ round.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                }
            });
            let mut left = k;
            for word in words {
                if left == 0 {
                    break;
                }
                for bit in slices(word, left.min(7)) {
                    expected[(bit >> 6) as usize] |= 1 << (bit & 63);
                }
                left -= left.min(7);
            }
            assert_eq!(block_mask(h2, k), expected, "k = {k}");
        }
    }

    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    #[test]
    fn the_avx512_test_answers_as_the_scalar_one() {
        // Lines from sparse to full, hash words from a fixed-seed generator, every k from 1 to 20:
        // both paths must agree, and each must agree with the slice definition (`block_mask`).
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            fmix64(state)
        };
        let mut hits = 0;
        for round in 0..20_000 {
            let density = round % 4; // AND of 3 - density words: 1/8 to all bits set
            let mut line = Line([u64::MAX; 8]);
            for w in &mut line.0 {
                for _ in 0..(3 - density) {
                    *w &= next();
                }
            }
            let h2 = next();
            for k in 1..=20 {
                let scalar = line_has_all_scalar(&line, h2, k);
                // SAFETY: this test is compiled only for builds with AVX-512F.
                let wide = unsafe { wide::line_has_all(&line, h2, k) };
                let mask = block_mask(h2, k);
                let by_mask = (0..8).all(|w| line.0[w] & mask[w] == mask[w]);
                assert_eq!(
                    (scalar, wide),
                    (by_mask, by_mask),
                    "h2 = {h2:#x}, k = {k}, line = {line:?}"
                );
                hits += usize::from(by_mask);
            }
        }
        // Both answers occur (a test that only ever saw `false` would prove little).
        assert!(
            hits > 20_000 && hits < 380_000,
            "{hits} positive answers of 400000"
        );
    }

    #[test]
    fn blocks_are_cache_line_aligned() {
        let f = Blocked512::<crate::Xxh3>::with_params(Params::explicit(5000, 7).unwrap()).unwrap();
        assert_eq!(f.bits(), 5120);
        assert_eq!(f.lines.as_ptr() as usize % 64, 0);
    }
}
