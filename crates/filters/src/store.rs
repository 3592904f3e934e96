//! Bit stores: the third axis. Where the bits of a flat layout live and how they are set.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{BloomError, Result};
use crate::sizing::round_up;

/// Allocates `len` elements made by `fill`, returning an error instead of aborting when the
/// allocator refuses or the size exceeds the address space.
pub(crate) fn try_vec<T>(len: u64, fill: impl FnMut() -> T) -> Result<Vec<T>> {
    let bytes = len.saturating_mul(std::mem::size_of::<T>() as u64);
    let n = usize::try_from(len).map_err(|_| BloomError::AllocationFailed { bytes })?;
    if bytes > isize::MAX as u64 {
        return Err(BloomError::AllocationFailed { bytes });
    }
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| BloomError::AllocationFailed { bytes })?;
    v.resize_with(n, fill);
    Ok(v)
}

/// Types whose all-zero bytes are a valid value (their `Default`): the element types of the bit
/// arrays, which [`try_zeroed`] allocates already zeroed.
///
/// # Safety
/// Implement only for plain integers and `repr(C)` arrays or structs of them, without padding
/// requirements on values: every all-zero bit pattern must be a valid, initialised value.
pub(crate) unsafe trait Zeroable: Sized {}

// SAFETY: an integer's zero bytes are the integer 0.
unsafe impl Zeroable for u64 {}

/// `len` zeroed elements, asked of the allocator as zeroed memory (`alloc_zeroed`). For a large
/// array the kernel hands over fresh pages that are zero already, so nothing is written and no page
/// is touched until it is used: a 12 GB filter costs no 12 GB memset, and its pages can still be
/// given huge-page backing before the first write. Errors as [`try_vec`].
pub(crate) fn try_zeroed<T: Zeroable>(len: u64) -> Result<Vec<T>> {
    let bytes = len.saturating_mul(std::mem::size_of::<T>() as u64);
    let failed = || BloomError::AllocationFailed { bytes };
    let n = usize::try_from(len).map_err(|_| failed())?;
    if bytes > isize::MAX as u64 {
        return Err(failed());
    }
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return try_vec(len, || {
            // SAFETY: `T: Zeroable`: the zero pattern is a valid value.
            unsafe { std::mem::zeroed() }
        });
    }
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| failed())?;
    // SAFETY: the layout has a non-zero size (n > 0 elements of non-zero size).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return Err(failed());
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of `n` `T`s, and its
    // zeroed bytes are `n` valid `T`s (`T: Zeroable`); the Vec takes ownership of it.
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// An array of bits addressed by `u64` positions, rounded up to whole 64-bit words.
pub trait BitStore: Send + Sync + Sized + 'static {
    /// The name this store has in variant names and reports.
    const ID: &'static str;
    /// At least `bits` zeroed bits (rounded up to a multiple of 64).
    fn zeroed(bits: u64) -> Result<Self>;
    /// [`len_bits`](Self::len_bits) of [`zeroed(bits)`](Self::zeroed), without allocating: `bits`
    /// rounded up to whole 64-bit words.
    fn len_bits_for(bits: u64) -> u64 {
        round_up(bits, 64)
    }
    /// Builds a store from its words, as a serialized filter holds them.
    fn from_words(words: Vec<u64>) -> Self;
    /// The true number of bits (a multiple of 64).
    fn len_bits(&self) -> u64;
    /// Sets bit `i`. Panics if `i >= len_bits()`: index schemes never produce such a position.
    fn set(&mut self, i: u64);
    /// Reads bit `i`. Panics if `i >= len_bits()`.
    fn get(&self, i: u64) -> bool;
    /// Prefetch hint for the word holding bit `i` (any `i` is allowed: nothing is read).
    fn prefetch(&self, i: u64);
    /// Number of bits set.
    fn count_ones(&self) -> u64;
    /// Heap and inline bytes held.
    fn memory_bytes(&self) -> usize;
    /// Word `w` (bits 64w..64w+63, bit j of the word is position 64w+j).
    fn word(&self, w: usize) -> u64;
    /// Ors `other`'s words into this store (same length required by the caller).
    fn union_words(&mut self, other: &Self);
}

/// A store that many threads may set bits in at once, through a shared reference.
pub trait ConcurrentBitStore: BitStore {
    /// Sets bit `i` atomically; returns whether it was clear before.
    fn set_shared(&self, i: u64) -> bool;
}

/// A plain `Vec<u64>` bitset: the fastest single-threaded store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatBits {
    words: Vec<u64>,
}

impl FlatBits {
    /// The words, bit j of word w being position 64w + j.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }
}

impl BitStore for FlatBits {
    const ID: &'static str = "flat";
    fn zeroed(bits: u64) -> Result<Self> {
        Ok(Self {
            words: try_zeroed(Self::len_bits_for(bits) / 64)?,
        })
    }
    fn from_words(words: Vec<u64>) -> Self {
        Self { words }
    }
    #[inline]
    fn len_bits(&self) -> u64 {
        self.words.len() as u64 * 64
    }
    #[inline(always)]
    fn set(&mut self, i: u64) {
        self.words[(i >> 6) as usize] |= 1 << (i & 63);
    }
    #[inline(always)]
    fn get(&self, i: u64) -> bool {
        self.words[(i >> 6) as usize] & (1 << (i & 63)) != 0
    }
    #[inline]
    fn prefetch(&self, i: u64) {
        crate::filter::prefetch_line(self.words.as_ptr().wrapping_add((i >> 6) as usize));
    }
    fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }
    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.words.capacity() * 8
    }
    fn word(&self, w: usize) -> u64 {
        self.words[w]
    }
    fn union_words(&mut self, other: &Self) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }
}

/// A lock-free array of `AtomicU64` words set with `fetch_or`, with a running count of set bits
/// (as Guava's `LockFreeBitArray` keeps). `Send + Sync`: any number of threads may insert at once;
/// a lookup concurrent with inserts sees each bit either before or after it is set, so a key whose
/// insert has returned is always found (no false negatives), and a key being inserted may or may not
/// be.
#[derive(Debug)]
pub struct AtomicBits {
    words: Vec<AtomicU64>,
    ones: AtomicU64,
}

impl BitStore for AtomicBits {
    const ID: &'static str = "atomic";
    fn zeroed(bits: u64) -> Result<Self> {
        Ok(Self {
            words: try_vec(Self::len_bits_for(bits) / 64, || AtomicU64::new(0))?,
            ones: AtomicU64::new(0),
        })
    }
    fn from_words(words: Vec<u64>) -> Self {
        let ones = words.iter().map(|w| u64::from(w.count_ones())).sum();
        Self {
            words: words.into_iter().map(AtomicU64::new).collect(),
            ones: AtomicU64::new(ones),
        }
    }
    #[inline]
    fn len_bits(&self) -> u64 {
        self.words.len() as u64 * 64
    }
    #[inline(always)]
    fn set(&mut self, i: u64) {
        let w = self.words[(i >> 6) as usize].get_mut();
        let mask = 1 << (i & 63);
        *self.ones.get_mut() += u64::from(*w & mask == 0);
        *w |= mask;
    }
    #[inline(always)]
    fn get(&self, i: u64) -> bool {
        self.words[(i >> 6) as usize].load(Ordering::Relaxed) & (1 << (i & 63)) != 0
    }
    #[inline]
    fn prefetch(&self, i: u64) {
        crate::filter::prefetch_line(self.words.as_ptr().wrapping_add((i >> 6) as usize));
    }
    fn count_ones(&self) -> u64 {
        self.ones.load(Ordering::Relaxed)
    }
    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.words.capacity() * 8
    }
    fn word(&self, w: usize) -> u64 {
        self.words[w].load(Ordering::Relaxed)
    }
    fn union_words(&mut self, other: &Self) {
        let mut ones = 0;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a.get_mut() |= b.load(Ordering::Relaxed);
            ones += u64::from(a.get_mut().count_ones());
        }
        *self.ones.get_mut() = ones;
    }
}

impl ConcurrentBitStore for AtomicBits {
    #[inline(always)]
    fn set_shared(&self, i: u64) -> bool {
        let mask = 1 << (i & 63);
        // Relaxed suffices: bits are only ever set, and a reader needs no ordering with other bits.
        let was_clear = self.words[(i >> 6) as usize].fetch_or(mask, Ordering::Relaxed) & mask == 0;
        if was_clear {
            self.ones.fetch_add(1, Ordering::Relaxed);
        }
        was_clear
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise<S: BitStore>() {
        let mut s = S::zeroed(100).unwrap();
        assert_eq!(s.len_bits(), 128);
        for i in [0, 63, 64, 127, 64] {
            s.set(i);
        }
        assert!(s.get(0) && s.get(63) && s.get(64) && s.get(127) && !s.get(1));
        assert_eq!(s.count_ones(), 4);
        assert_eq!(s.word(0), 1 | 1 << 63);
    }

    #[test]
    fn stores_agree() {
        exercise::<FlatBits>();
        exercise::<AtomicBits>();
    }

    #[test]
    fn atomic_counts_new_bits_once() {
        let s = AtomicBits::zeroed(64).unwrap();
        assert!(s.set_shared(5));
        assert!(!s.set_shared(5));
        assert_eq!(s.count_ones(), 1);
    }

    #[test]
    fn absurd_sizes_are_errors_not_aborts() {
        assert!(matches!(
            FlatBits::zeroed(u64::MAX - 63),
            Err(BloomError::AllocationFailed { .. })
        ));
    }
}
