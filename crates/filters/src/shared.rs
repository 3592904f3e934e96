//! Filling one filter from many threads at once, whatever its store.
//!
//! [`ConcurrentFill::shared`] borrows a filter mutably and returns an inserter that any number of
//! threads may call through a shared reference. It sets bits with atomic read-modify-writes
//! (`fetch_or`, relaxed) on the filter's own words, so the filter keeps its plain, fastest
//! representation for lookups, and no counter is shared between threads (unlike
//! [`crate::AtomicBits`], whose exact popcount is one contended cache line). The mutable borrow
//! guarantees that nothing else reads or writes the words while the inserter lives; once it is
//! dropped, the filter answers exactly as if every key had been inserted one after another (bits
//! are only ever set, and or-ing commutes).
//!
//! Implemented for the flat classic layout ([`Bloom`] over [`FlatBits`]), [`Blocked512`] and
//! [`SplitBlock`]: the layouts of the 10-billion-key run (the `bloomlab-scale` crate).

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::blocked::Blocked512;
use crate::classic::Bloom;
use crate::filter::Variant;
use crate::hash::{Digest, HashStrategy};
use crate::index::IndexScheme;
use crate::sbbf::SplitBlock;
use crate::store::FlatBits;

/// A filter that can be filled from many threads at once (see the module docs).
pub trait ConcurrentFill: Variant {
    /// The inserter [`shared`](Self::shared) returns.
    type Shared<'a>: SharedInsert
    where
        Self: 'a;

    /// An inserter over this filter's words, usable from any number of threads; the filter is
    /// borrowed until it is dropped.
    fn shared(&mut self) -> Self::Shared<'_>;

    /// The memory holding the filter's bits, as a raw region (start, bytes), for operating-system
    /// hints such as huge pages. Nothing may be read or written through it.
    fn bits_region(&self) -> (*const u8, usize);

    /// Where in the filter the key of digest `d` is written and read, as a fraction of its size
    /// in 2^-64ths (monotone in the address, whatever the size), for layouts that keep a key in
    /// one block; `None` when a key's bits spread over the whole filter. A bulk pass over many
    /// digests can group them by it so that consecutive accesses fall in one part of memory.
    #[inline(always)]
    fn locality(_d: Digest) -> Option<u64> {
        None
    }
}

/// Inserts through a shared reference; see [`ConcurrentFill`].
pub trait SharedInsert: Sync {
    /// The filter's digest of key bytes.
    fn digest(&self, bytes: &[u8]) -> Digest;
    /// Inserts a precomputed digest.
    fn insert_digest(&self, d: Digest);
    /// Asks the CPU to start loading the memory `insert_digest(d)` will write (a hint).
    fn prefetch_digest(&self, d: Digest);
    /// Inserts the key whose canonical bytes are `bytes`.
    #[inline]
    fn insert_bytes(&self, bytes: &[u8]) {
        self.insert_digest(self.digest(bytes));
    }
    /// Calls `visit` with every bit `insert_digest(d)` sets, as its position in the filter's
    /// 64-bit words (word * 64 + bit): a bulk pass can group many keys' positions by where they
    /// fall and set them with [`set_position`](Self::set_position) in that order.
    fn positions(&self, d: Digest, visit: impl FnMut(u64));
    /// Every position [`positions`](Self::positions) gives is below this: the filter's bit
    /// count, or less for an index scheme whose positions come from a narrower domain
    /// ([`crate::IndexScheme::POSITION_DOMAIN`]: Guava's 32-bit scheme never passes 2^31 - 1).
    fn position_span(&self) -> u64;
    /// Sets the bit at `position` (word `position / 64`, bit `position % 64`).
    fn set_position(&self, position: u64);
    /// Asks the CPU to start loading the word holding `position` (a hint).
    fn prefetch_position(&self, position: u64);
    /// Whether the bit at `position` is set: a bulk check can read a key's
    /// [`positions`](Self::positions) in the order it sets them, and the key is present
    /// exactly when all of them are set.
    fn position_is_set(&self, position: u64) -> bool;
    /// The filter's block count, for a layout that keeps each key's bits in one block
    /// ([`block`](Self::block)); `None` when a key's bits spread over the whole filter.
    #[inline(always)]
    fn blocks(&self) -> Option<u64> {
        None
    }
    /// The block `insert_digest(d)` writes, below [`blocks`](Self::blocks) (0 for a layout
    /// without blocks).
    #[inline(always)]
    fn block(&self, _d: Digest) -> u64 {
        0
    }
    /// Inserts `d` as [`insert_digest`](Self::insert_digest) does, with plain writes in place of
    /// atomic ones (no locked instruction per word): for a bulk fill in which every block is
    /// written by one thread only. A layout without blocks inserts atomically.
    ///
    /// # Safety
    /// While this runs, no other thread may read or write block [`block(d)`](Self::block) of a
    /// layout with [`blocks`](Self::blocks) (through this inserter or any other way).
    #[inline(always)]
    unsafe fn insert_digest_unshared(&self, d: Digest) {
        self.insert_digest(d);
    }
    /// Whether every bit `insert_digest(d)` sets is set: the filter's answer for `d`, read
    /// through the inserter.
    #[inline]
    fn all_positions_set(&self, d: Digest) -> bool {
        let mut all = true;
        self.positions(d, |p| all &= self.position_is_set(p));
        all
    }
}

/// [`SharedInsert::set_position`], [`SharedInsert::prefetch_position`] and
/// [`SharedInsert::position_is_set`], the same for every layout: on the inserter's `words`.
macro_rules! position_methods {
    () => {
        #[inline(always)]
        fn set_position(&self, position: u64) {
            self.words
                .or((position >> 6) as usize, 1 << (position & 63));
        }
        #[inline(always)]
        fn prefetch_position(&self, position: u64) {
            self.words.prefetch((position >> 6) as usize);
        }
        #[inline(always)]
        fn position_is_set(&self, position: u64) -> bool {
            self.words.get((position >> 6) as usize) & (1 << (position & 63)) != 0
        }
    };
}

/// Words of a mutably borrowed filter, set atomically from many threads.
struct Words<'a> {
    base: *mut u64,
    len: usize,
    _borrow: PhantomData<&'a mut [u64]>,
}

// SAFETY: `Words` is made from a unique borrow (`&'a mut`) of `len` initialised, 8-byte aligned
// u64 words, and every access through it is atomic (`AtomicU64::from_ptr`), so threads sharing it
// cannot race, except `or_unshared`, whose callers guarantee that no other thread touches the
// word meanwhile; the borrow keeps all other access out for `'a`.
unsafe impl Send for Words<'_> {}
// SAFETY: as above.
unsafe impl Sync for Words<'_> {}

impl<'a> Words<'a> {
    fn new(words: &'a mut [u64]) -> Self {
        Self {
            base: words.as_mut_ptr(),
            len: words.len(),
            _borrow: PhantomData,
        }
    }

    /// The bits the words hold.
    fn bits(&self) -> u64 {
        self.len as u64 * 64
    }

    /// Prefetch hint for word `w` (any `w`: nothing is read).
    #[inline(always)]
    fn prefetch(&self, w: usize) {
        crate::filter::prefetch_line(self.base.wrapping_add(w).cast_const());
    }

    /// Word `w` (bounds-checked), for atomic access.
    #[inline(always)]
    fn word(&self, w: usize) -> &AtomicU64 {
        assert!(w < self.len, "word {w} of {}", self.len);
        // SAFETY: w < len, so the pointer is in the borrowed, aligned slice, live for as long as
        // `self`; all access is atomic.
        unsafe { AtomicU64::from_ptr(self.base.add(w)) }
    }

    /// Word `w`'s bits (bounds-checked).
    #[inline(always)]
    fn get(&self, w: usize) -> u64 {
        self.word(w).load(Ordering::Relaxed)
    }

    /// Ors `mask` into word `w` (bounds-checked), skipping the write when its bits are already
    /// set: most probes of a filling filter find their bit set, and a read keeps the line shared.
    #[inline(always)]
    fn or(&self, w: usize, mask: u64) {
        let word = self.word(w);
        if word.load(Ordering::Relaxed) & mask != mask {
            // Relaxed: bits are only ever set; no reader needs ordering with other words.
            word.fetch_or(mask, Ordering::Relaxed);
        }
    }

    /// Ors `mask` into word `w` (bounds-checked) with a plain read and write, whether or not a
    /// bit is missing: no branch to mispredict (a key's block is written whole, so its line is
    /// dirty either way).
    ///
    /// # Safety
    /// No other thread may read or write word `w` while this runs.
    #[inline(always)]
    unsafe fn or_unshared(&self, w: usize, mask: u64) {
        assert!(w < self.len, "word {w} of {}", self.len);
        // SAFETY: w < len, so the pointer is in the borrowed, aligned slice, live for as long as
        // `self`; the caller guarantees that no other thread accesses the word meanwhile.
        unsafe { *self.base.add(w) |= mask };
    }
}

/// [`Bloom`] over [`FlatBits`], filled from many threads.
pub struct SharedBloom<'a, H, I: IndexScheme> {
    words: Words<'a>,
    range: I::Range,
    hashes: u32,
    _axes: PhantomData<fn() -> H>,
}

impl<H: HashStrategy, I: IndexScheme> SharedInsert for SharedBloom<'_, H, I> {
    #[inline(always)]
    fn digest(&self, bytes: &[u8]) -> Digest {
        H::digest(bytes)
    }
    #[inline(always)]
    fn insert_digest(&self, d: Digest) {
        I::probe_in(d, self.hashes, self.range, |i| {
            self.words.or((i >> 6) as usize, 1 << (i & 63));
            true
        });
    }
    #[inline(always)]
    fn prefetch_digest(&self, d: Digest) {
        I::probe_in(d, self.hashes, self.range, |i| {
            self.words.prefetch((i >> 6) as usize);
            true
        });
    }
    #[inline(always)]
    fn positions(&self, d: Digest, mut visit: impl FnMut(u64)) {
        I::probe_in(d, self.hashes, self.range, |i| {
            visit(i);
            true
        });
    }
    fn position_span(&self) -> u64 {
        let bits = self.words.bits();
        match I::POSITION_DOMAIN {
            0 => bits,
            domain => bits.min(domain),
        }
    }
    position_methods!();
}

impl<H: HashStrategy, I: IndexScheme> ConcurrentFill for Bloom<H, I, FlatBits> {
    type Shared<'a> = SharedBloom<'a, H, I>;
    fn shared(&mut self) -> SharedBloom<'_, H, I> {
        let (range, hashes) = (self.range(), self.hashes_per_key());
        SharedBloom {
            words: Words::new(self.store_words_mut()),
            range,
            hashes,
            _axes: PhantomData,
        }
    }
    fn bits_region(&self) -> (*const u8, usize) {
        let words = self.store().words();
        (words.as_ptr().cast(), std::mem::size_of_val(words))
    }
}

/// [`Blocked512`], filled from many threads.
pub struct SharedBlocked<'a, H> {
    words: Words<'a>,
    hashes: u32,
    _hash: PhantomData<fn() -> H>,
}

impl<H: HashStrategy> SharedBlocked<'_, H> {
    /// The first word of `d`'s block and the bits `d` sets in each of its eight words: what the
    /// atomic and the owned inserts write.
    #[inline(always)]
    fn masks(&self, d: Digest) -> (usize, [u64; 8]) {
        let block = Blocked512::<H>::block_index(d, self.words.len as u64 / 8);
        let mut mask = [0u64; 8];
        crate::blocked::for_each_slice(d.h2, self.hashes, |w, bit| mask[w] |= bit);
        (block * 8, mask)
    }
}

impl<H: HashStrategy> SharedInsert for SharedBlocked<'_, H> {
    #[inline(always)]
    fn digest(&self, bytes: &[u8]) -> Digest {
        H::digest(bytes)
    }
    #[inline(always)]
    fn insert_digest(&self, d: Digest) {
        let (first, masks) = self.masks(d);
        for (w, m) in masks.into_iter().enumerate() {
            self.words.or(first + w, m);
        }
    }
    #[inline(always)]
    fn prefetch_digest(&self, d: Digest) {
        self.words
            .prefetch(Blocked512::<H>::block_index(d, self.words.len as u64 / 8) * 8);
    }
    #[inline(always)]
    fn blocks(&self) -> Option<u64> {
        Some(self.words.len as u64 / 8)
    }
    #[inline(always)]
    fn block(&self, d: Digest) -> u64 {
        Blocked512::<H>::block_index(d, self.words.len as u64 / 8) as u64
    }
    #[inline(always)]
    unsafe fn insert_digest_unshared(&self, d: Digest) {
        let (first, masks) = self.masks(d);
        for (w, m) in masks.into_iter().enumerate() {
            // SAFETY: word `first + w` is in block `block(d)`, which the caller's contract keeps
            // to this thread.
            unsafe { self.words.or_unshared(first + w, m) };
        }
    }
    #[inline(always)]
    fn positions(&self, d: Digest, mut visit: impl FnMut(u64)) {
        let block = Blocked512::<H>::block_index(d, self.words.len as u64 / 8) as u64;
        crate::blocked::for_each_slice(d.h2, self.hashes, |w, bit| {
            if bit != 0 {
                visit((block * 8 + w as u64) * 64 + u64::from(bit.trailing_zeros()));
            }
        });
    }
    fn position_span(&self) -> u64 {
        self.words.bits()
    }
    position_methods!();
}

impl<H: HashStrategy> ConcurrentFill for Blocked512<H> {
    type Shared<'a> = SharedBlocked<'a, H>;
    fn shared(&mut self) -> SharedBlocked<'_, H> {
        let hashes = self.hashes_per_key();
        SharedBlocked {
            words: Words::new(self.words_mut()),
            hashes,
            _hash: PhantomData,
        }
    }
    fn bits_region(&self) -> (*const u8, usize) {
        self.bytes_region()
    }
    #[inline(always)]
    fn locality(d: Digest) -> Option<u64> {
        // The block is `h1 * blocks / 2^64` (`block_index`): h1 is its place.
        Some(d.h1)
    }
}

/// [`SplitBlock`], filled from many threads: each block's eight 32-bit words are set as four
/// 64-bit ones, in memory order (word 2j first).
pub struct SharedSplitBlock<'a, H> {
    words: Words<'a>,
    _hash: PhantomData<fn() -> H>,
}

impl<H: HashStrategy> SharedSplitBlock<'_, H> {
    /// The first word of `d`'s block and the bits `d` sets in each of its four 64-bit words:
    /// what the atomic and the owned inserts write.
    #[inline(always)]
    fn masks(&self, d: Digest) -> (usize, [u64; 4]) {
        let block = SplitBlock::<H>::block_index(d.h1, self.words.len as u64 / 4);
        let m = crate::sbbf::mask(d.h1 as u32);
        (block * 4, std::array::from_fn(|j| pair(&m, j)))
    }
}

impl<H: HashStrategy> SharedInsert for SharedSplitBlock<'_, H> {
    #[inline(always)]
    fn digest(&self, bytes: &[u8]) -> Digest {
        crate::sbbf::spec_digest::<H>(bytes)
    }
    #[inline(always)]
    fn insert_digest(&self, d: Digest) {
        let (first, masks) = self.masks(d);
        for (j, m) in masks.into_iter().enumerate() {
            self.words.or(first + j, m);
        }
    }
    #[inline(always)]
    fn prefetch_digest(&self, d: Digest) {
        self.words
            .prefetch(SplitBlock::<H>::block_index(d.h1, self.words.len as u64 / 4) * 4);
    }
    #[inline(always)]
    fn blocks(&self) -> Option<u64> {
        Some(self.words.len as u64 / 4)
    }
    #[inline(always)]
    fn block(&self, d: Digest) -> u64 {
        SplitBlock::<H>::block_index(d.h1, self.words.len as u64 / 4) as u64
    }
    #[inline(always)]
    unsafe fn insert_digest_unshared(&self, d: Digest) {
        let (first, masks) = self.masks(d);
        for (j, m) in masks.into_iter().enumerate() {
            // SAFETY: word `first + j` is in block `block(d)`, which the caller's contract keeps
            // to this thread.
            unsafe { self.words.or_unshared(first + j, m) };
        }
    }
    #[inline(always)]
    fn positions(&self, d: Digest, mut visit: impl FnMut(u64)) {
        let block = SplitBlock::<H>::block_index(d.h1, self.words.len as u64 / 4) as u64;
        let m = crate::sbbf::mask(d.h1 as u32);
        for j in 0..4 {
            let mut bits = pair(&m, j);
            while bits != 0 {
                visit((block * 4 + j as u64) * 64 + u64::from(bits.trailing_zeros()));
                bits &= bits - 1;
            }
        }
    }
    fn position_span(&self) -> u64 {
        self.words.bits()
    }
    position_methods!();
}

/// Mask words `2j` and `2j + 1` of a split block as the one 64-bit word they are in memory.
#[inline(always)]
fn pair(m: &[u32; 8], j: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&m[2 * j].to_ne_bytes());
    bytes[4..].copy_from_slice(&m[2 * j + 1].to_ne_bytes());
    u64::from_ne_bytes(bytes)
}

impl<H: HashStrategy> ConcurrentFill for SplitBlock<H> {
    type Shared<'a> = SharedSplitBlock<'a, H>;
    fn shared(&mut self) -> SharedSplitBlock<'_, H> {
        SharedSplitBlock {
            words: Words::new(self.words_mut()),
            _hash: PhantomData,
        }
    }
    fn bits_region(&self) -> (*const u8, usize) {
        self.bytes_region()
    }
    #[inline(always)]
    fn locality(d: Digest) -> Option<u64> {
        // The block is `(h1 >> 32) * blocks / 2^32` (`block_index`): the high half is its place.
        Some(d.h1 & !0xFFFF_FFFF)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Filter;
    use crate::hash::{Murmur3, Xxh3};
    use crate::index::{GuavaMitz32, KirschMitzenmacher};

    /// Inserting through the shared inserter, from two threads, leaves exactly the bits that
    /// one-by-one inserts leave.
    fn same_bits_as_sequential<F: ConcurrentFill + Filter>(bytes_of: impl Fn(&F) -> Vec<u64>) {
        let keys: Vec<u64> = (0..20_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9))
            .collect();
        let mut one = F::sized_for(10_000, 0.01).unwrap();
        for k in &keys {
            one.insert_bytes(&k.to_le_bytes());
        }
        let mut many = F::sized_for(10_000, 0.01).unwrap();
        {
            let shared = many.shared();
            std::thread::scope(|s| {
                for part in keys.chunks(keys.len() / 2) {
                    let shared = &shared;
                    s.spawn(move || {
                        for k in part {
                            shared.insert_bytes(&k.to_le_bytes());
                        }
                    });
                }
            });
        }
        assert_eq!(bytes_of(&one), bytes_of(&many));
        assert_eq!(one.set_bits(), many.set_bits());
        // The same bits through the positions of every key, set in reverse order.
        let mut by_position = F::sized_for(10_000, 0.01).unwrap();
        {
            let shared = by_position.shared();
            let mut all = Vec::new();
            for k in &keys {
                shared.positions(shared.digest(&k.to_le_bytes()), |p| all.push(p));
            }
            for &p in all.iter().rev() {
                shared.prefetch_position(p);
                shared.set_position(p);
            }
        }
        assert_eq!(bytes_of(&one), bytes_of(&by_position));
        // The same bits with plain writes, each of two threads inserting the keys of its own
        // half of the blocks (a layout without blocks inserts atomically, whatever the split).
        let mut owned = F::sized_for(10_000, 0.01).unwrap();
        {
            let shared = owned.shared();
            let blocks = shared.blocks();
            std::thread::scope(|s| {
                for half in 0..2u64 {
                    let (shared, keys) = (&shared, &keys);
                    s.spawn(move || {
                        for k in keys {
                            let d = shared.digest(&k.to_le_bytes());
                            let mine =
                                blocks.is_none_or(|b| (shared.block(d) < b / 2) == (half == 0));
                            if mine && (blocks.is_some() || k % 2 == half) {
                                // SAFETY: each block is in one half, written by one thread.
                                unsafe { shared.insert_digest_unshared(d) };
                            }
                        }
                    });
                }
            });
        }
        assert_eq!(bytes_of(&one), bytes_of(&owned));
        // A key's positions are all set exactly when the filter answers present: every member,
        // and the non-members it calls present (about 1% of them) but no others.
        let shared = by_position.shared();
        let mut positives = 0;
        for i in 0..2 * keys.len() as u64 {
            let k = i.wrapping_mul(0x9E37_79B9);
            let d = shared.digest(&k.to_le_bytes());
            let all_set = shared.all_positions_set(d);
            assert_eq!(all_set, one.contains_digest(d), "key {k}");
            // Keys 0..20_000 are the members.
            assert!(all_set || i >= keys.len() as u64, "member {k}");
            positives += usize::from(all_set && i >= keys.len() as u64);
        }
        assert!(positives > 0, "no non-member tested present");
        let (_, len) = many.bits_region();
        assert_eq!(len as u64 * 8, many.bits());
    }

    #[test]
    fn classic_shared_inserts_equal_sequential_ones() {
        same_bits_as_sequential::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>(|f| {
            f.store().words().to_vec()
        });
        same_bits_as_sequential::<Bloom<Murmur3, GuavaMitz32, FlatBits>>(|f| {
            f.store().words().to_vec()
        });
    }

    /// Positions stay below the span: the bit count, or 2^31 for Guava's 32-bit scheme in a
    /// filter past it (allocated, never touched).
    #[test]
    fn positions_stay_below_the_span() {
        let params = crate::Params::explicit((1 << 32) + 640, 7).unwrap();
        let mut narrow = Bloom::<Murmur3, GuavaMitz32, FlatBits>::with_params(params).unwrap();
        let mut wide = Bloom::<Xxh3, KirschMitzenmacher, FlatBits>::with_params(params).unwrap();
        assert_eq!(narrow.shared().position_span(), 1 << 31);
        let shared = wide.shared();
        assert_eq!(shared.position_span(), (1 << 32) + 640);
        for i in 0..1000u64 {
            shared.positions(shared.digest(&i.to_le_bytes()), |p| {
                assert!(p < (1 << 32) + 640)
            });
        }
        let shared = narrow.shared();
        for i in 0..1000u64 {
            shared.positions(shared.digest(&i.to_le_bytes()), |p| assert!(p < 1 << 31));
        }
    }

    #[test]
    fn blocked_shared_inserts_equal_sequential_ones() {
        same_bits_as_sequential::<Blocked512<Xxh3>>(|f| f.words().to_vec());
    }

    #[test]
    fn split_block_shared_inserts_equal_sequential_ones() {
        same_bits_as_sequential::<SplitBlock<Xxh3>>(|f| {
            f.to_le_bytes()
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect()
        });
    }

    /// `block(d)` is the one block `insert_digest(d)` writes: a key inserted alone into an empty
    /// filter sets bits in that block's words only.
    fn insert_stays_in_its_block<F: ConcurrentFill + Filter>(
        words_per_block: usize,
        words_of: impl Fn(&F) -> Vec<u64>,
    ) {
        for bits in [4096, 1 << 20, (1 << 20) + 3 * 512] {
            let params = crate::Params::explicit(bits, 8).unwrap();
            for i in 0..200u64 {
                let mut f = F::with_params(params).unwrap();
                let block = {
                    let shared = f.shared();
                    let blocks = shared.blocks().unwrap();
                    assert_eq!(blocks * words_per_block as u64 * 64, shared.position_span());
                    let d = shared.digest(&i.to_le_bytes());
                    shared.insert_digest(d);
                    assert!(shared.block(d) < blocks);
                    shared.block(d) as usize
                };
                for (w, word) in words_of(&f).into_iter().enumerate() {
                    assert!(
                        word == 0 || w / words_per_block == block,
                        "key {i}, word {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn block_layouts_name_the_block_an_insert_writes() {
        insert_stays_in_its_block::<Blocked512<Xxh3>>(8, |f| f.words().to_vec());
        insert_stays_in_its_block::<SplitBlock<Xxh3>>(4, |f| {
            f.to_le_bytes()
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect()
        });
        let mut classic =
            Bloom::<Xxh3, KirschMitzenmacher, FlatBits>::sized_for(1000, 0.01).unwrap();
        assert_eq!(classic.shared().blocks(), None);
    }

    /// Digests in increasing `locality` fall in non-decreasing blocks, at every size (the scale
    /// run groups its digests by it and relies on no more than that order): the split-block and
    /// 512-bit layouts report it, the classic one, whose probes spread, does not.
    #[test]
    fn locality_orders_digests_by_the_block_they_touch() {
        let mut x = 0x1234_5678_9ABC_DEF0u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut ds: Vec<Digest> = (0..4096)
            .map(|_| Digest {
                h1: next(),
                h2: next(),
            })
            .collect();
        ds.extend([0, 1, u64::MAX, 0xFFFF_FFFF, 1 << 32].map(|h1| Digest { h1, h2: h1 }));
        for blocks in [1u64, 2, 3, 1000, 1 << 20, 374_416_344, 3 << 30] {
            let mut by = ds.clone();
            by.sort_by_key(|&d| SplitBlock::<Xxh3>::locality(d));
            let order: Vec<usize> = by
                .iter()
                .map(|d| SplitBlock::<Xxh3>::block_index(d.h1, blocks))
                .collect();
            assert!(order.is_sorted(), "split-block, {blocks} blocks");
            by.sort_by_key(|&d| Blocked512::<Xxh3>::locality(d));
            let order: Vec<usize> = by
                .iter()
                .map(|&d| Blocked512::<Xxh3>::block_index(d, blocks))
                .collect();
            assert!(order.is_sorted(), "512-bit blocks, {blocks} blocks");
        }
        assert_eq!(
            Bloom::<Xxh3, KirschMitzenmacher, FlatBits>::locality(ds[0]),
            None
        );
    }
}
