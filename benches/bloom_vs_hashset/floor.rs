//! The floor of a filter's lookup: one loop that does what any filter of its layout must do per
//! key and nothing else. It fetches the key, hashes it with the filter's own digest
//! ([`bloomlab_filters::Filter::digest`]: the same hash, deriving the same digest words), and
//! loads what the layout reads from a buffer of the filter's size: one cache line chosen by the
//! hash for split-block and blocked512, `k` words at the Kirsch-Mitzenmacher positions
//! `h1 + i h2` for classic (Guava's layout included). The loaded words are summed, never tested.
//! Positions are reduced by multiply-shift, the cheapest reduction (the filters' own reductions
//! differ in detail, not in the loads they cause).
//!
//! For a flat layout whose format fixes a costlier reduction than multiply-shift (Guava's
//! `(combined & Long.MAX_VALUE) % m`), [`Floor::at_own_positions`] is the same floor at the
//! filter's own positions: what the filter costs beyond the positions its format fixes.
//!
//! The batched floor ([`Floor::batch`]) runs the same parts through the filter's own batched
//! driver: the next keys hashed and their lines prefetched ahead of the one loaded, as
//! `contains_batch` does ([`pipelined`]). Where the filter keeps each key's positions from the
//! prefetch to the test ([`bloomlab_filters::Filter::batch_keeps_positions`]: the classic layout
//! for k up to 16), the floor keeps its word indices too ([`pipelined_pending`]): it computes
//! each once, as the filter does, which made it 4-9% faster than computing them twice.

use bloomlab_filters::filter::{Pending, pipelined, pipelined_pending, prefetch_line};
use bloomlab_filters::{
    BitStore, Bloom, Digest, Filter, HashStrategy, IndexScheme, Key, Layout, Variant,
};

/// Words per 64-byte cache line.
const LINE_WORDS: usize = 8;

/// The floor of filter `F` (flagship layouts only: classic, blocked512, split-block).
pub struct Floor<'f, F> {
    filter: &'f F,
    words: Vec<u64>,
    lines: u64,
    bits: u64,
    k: u32,
}

impl<'f, F: Variant> Floor<'f, F> {
    /// The floor of `filter`, over a buffer of `bytes` bytes (whole cache lines, at least two).
    pub fn new(filter: &'f F, bytes: u64) -> Self {
        assert!(
            matches!(
                F::LAYOUT,
                Layout::Classic | Layout::Blocked512 | Layout::SplitBlock
            ),
            "a floor is defined for the classic, blocked512 and split-block layouts, not {:?}",
            F::LAYOUT
        );
        let lines = bytes.div_ceil(64).max(2);
        let len = usize::try_from(lines).expect("the filter fit in memory") * LINE_WORDS;
        Floor {
            filter,
            words: (0..len as u64).collect(),
            lines,
            bits: lines * 512,
            k: filter.hashes(),
        }
    }

    /// The word at the start of the line (or the bit's word, for classic) `h` reduces to.
    #[inline(always)]
    fn reduce(h: u64, range: u64) -> usize {
        ((u128::from(h) * u128::from(range)) >> 64) as usize
    }

    /// The loads of one lookup of digest `d`, summed. `F::LAYOUT` is a constant: the match is
    /// resolved when the function is compiled for `F`.
    #[inline(always)]
    fn load(&self, d: Digest) -> u64 {
        match F::LAYOUT {
            Layout::Classic => {
                let mut acc = 0u64;
                let mut h = d.h1;
                for _ in 0..self.k {
                    acc = acc.wrapping_add(self.words[Self::reduce(h, self.bits) / 64]);
                    h = h.wrapping_add(d.h2);
                }
                acc
            }
            // blocked512 cuts its in-block positions from the digest's second word: the floor
            // uses it too (left unused, the compiler would drop its derivation, about 0.8 ns per
            // key, and the floor would be one the filter cannot reach).
            Layout::Blocked512 => self.words[Self::reduce(d.h1, self.lines) * LINE_WORDS] ^ d.h2,
            // Split-block reads the first word alone (block and bit positions).
            _ => self.words[Self::reduce(d.h1, self.lines) * LINE_WORDS],
        }
    }

    /// Requests the memory [`Floor::load`] reads for `d`.
    #[inline(always)]
    fn prefetch(&self, d: Digest) {
        match F::LAYOUT {
            Layout::Classic => {
                let mut h = d.h1;
                for _ in 0..self.k {
                    prefetch_line(
                        self.words
                            .as_ptr()
                            .wrapping_add(Self::reduce(h, self.bits) / 64),
                    );
                    h = h.wrapping_add(d.h2);
                }
            }
            _ => prefetch_line(
                self.words
                    .as_ptr()
                    .wrapping_add(Self::reduce(d.h1, self.lines) * LINE_WORDS),
            ),
        }
    }

    /// The floor of one `contains(key)`.
    #[inline(always)]
    pub fn one<K: Key + ?Sized>(&self, key: &K) -> u64 {
        key.with_bytes(|b| self.load(self.filter.digest(b)))
    }

    /// The word indices of classic's `k` loads for `d`, kept in `pending` as they are
    /// prefetched.
    #[inline(always)]
    fn prefetch_kept(&self, d: Digest, pending: &mut Pending) {
        let mut h = d.h1;
        for at in &mut pending.positions[..self.k as usize] {
            *at = (Self::reduce(h, self.bits) / 64) as u64;
            prefetch_line(self.words.as_ptr().wrapping_add(*at as usize));
            h = h.wrapping_add(d.h2);
        }
    }

    /// Classic's `k` loads from the word indices [`Floor::prefetch_kept`] kept, summed.
    #[inline(always)]
    fn load_kept(&self, pending: &Pending) -> u64 {
        let mut acc = 0u64;
        for &at in &pending.positions[..self.k as usize] {
            acc = acc.wrapping_add(self.words[at as usize]);
        }
        acc
    }

    /// The floor of one `contains_batch(keys)`: the filter's batched driver over the floor's
    /// parts. Returns the number of keys whose loaded sum is odd (a count, so that every load is
    /// used).
    #[inline(always)]
    pub fn batch<K: Key>(&self, keys: &[K]) -> u64 {
        if self.filter.batch_keeps_positions() {
            assert_eq!(
                F::LAYOUT,
                Layout::Classic,
                "only the flat layout keeps positions"
            );
            return self.batch_kept(keys, |d, pending| self.prefetch_kept(d, pending));
        }
        let mut odd = 0u64;
        pipelined(
            keys,
            |b| self.filter.digest(b),
            |d| self.prefetch(d),
            |d| self.load(d) & 1 == 1,
            |_, found| odd += u64::from(found),
        );
        odd
    }

    /// The batched floor of a filter that keeps each key's positions from prefetch to test:
    /// `prefetch` computes a digest's word indices into its slot and requests them, then
    /// [`Floor::load_kept`] loads them. Returns the number of keys whose loaded sum is odd.
    #[inline(always)]
    fn batch_kept<K: Key>(&self, keys: &[K], prefetch: impl Fn(Digest, &mut Pending)) -> u64 {
        let mut odd = 0u64;
        pipelined_pending(
            keys,
            |b| self.filter.digest(b),
            prefetch,
            |pending| self.load_kept(pending) & 1 == 1,
            |_, found| odd += u64::from(found),
        );
        odd
    }
}

impl<'f, H: HashStrategy, I: IndexScheme, S: BitStore> Floor<'f, Bloom<H, I, S>> {
    /// This floor at the flat filter's own positions, its index scheme's range (for Guava's, a
    /// [`bloomlab_filters::index::Modulus`]) computed once, as the filter holds it.
    pub fn at_own_positions(&self) -> OwnPositions<'_, 'f, H, I, S> {
        OwnPositions {
            floor: self,
            range: I::range(self.filter.bits()),
        }
    }
}

/// [`Floor`] with its loads at the positions a flat filter's own index scheme gives
/// ([`Floor::at_own_positions`]): the words a lookup in a file of its format must load.
pub struct OwnPositions<'a, 'f, H, I: IndexScheme, S> {
    floor: &'a Floor<'f, Bloom<H, I, S>>,
    range: I::Range,
}

impl<H: HashStrategy, I: IndexScheme, S: BitStore> OwnPositions<'_, '_, H, I, S> {
    /// The loads of one lookup of `d` at the filter's own positions, summed.
    #[inline(always)]
    fn load(&self, d: Digest) -> u64 {
        let mut acc = 0u64;
        I::probe_in(d, self.floor.k, self.range, |i| {
            acc = acc.wrapping_add(self.floor.words[(i / 64) as usize]);
            true
        });
        acc
    }

    /// [`Floor::one`] with the loads at the filter's own positions.
    #[inline(always)]
    pub fn one<K: Key + ?Sized>(&self, key: &K) -> u64 {
        key.with_bytes(|b| self.load(self.floor.filter.digest(b)))
    }

    /// [`Floor::batch`] with the loads at the filter's own positions, each computed once and
    /// kept from its prefetch to its load as the flat layout's batched lookup keeps its own (k up
    /// to 16, [`bloomlab_filters::Filter::batch_keeps_positions`]).
    #[inline(always)]
    pub fn batch<K: Key>(&self, keys: &[K]) -> u64 {
        let floor = self.floor;
        assert!(
            floor.filter.batch_keeps_positions(),
            "the floor at the filter's own positions follows a batched lookup that keeps them"
        );
        floor.batch_kept(keys, |d, pending| {
            let mut at = 0;
            I::probe_in(d, floor.k, self.range, |i| {
                pending.positions[at] = i / 64;
                prefetch_line(floor.words.as_ptr().wrapping_add((i / 64) as usize));
                at += 1;
                true
            });
        })
    }
}
