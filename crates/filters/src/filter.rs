//! The `Filter` trait every variant implements, the `Variant` trait that makes it buildable by
//! name, and the two descriptions of a filter's shape: its [`Layout`] (an identity, printed in
//! reports) and its [`Geometry`] (the figures the theory needs).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{BloomError, Result};
use crate::hash::Digest;
use crate::key::Key;
use crate::sizing::Params;

/// Which layout family a filter belongs to: the first segment of its registry name, and the
/// `layout` column of the sweep's CSV.
///
/// `Display`, `FromStr` and serde all use the same lower-case names (`classic`, `blocked512`,
/// `sbbf`, `textbook`, `counting4`, `counting8`, `scalable`, `external`), so a row written by one
/// crate reads back as the same value in another. The
/// order of the variants is the order reports list the families in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// One flat bit array, k probes anywhere in it ([`crate::Bloom`], and Guava's format).
    Classic,
    /// 512-bit blocks, k probes inside one block ([`crate::Blocked512`]).
    Blocked512,
    /// Parquet's split-block filter: one bit in each of 8 words of one block ([`crate::SplitBlock`]).
    #[serde(rename = "sbbf")]
    SplitBlock,
    /// The textbook ports, flaws included ([`crate::TextbookFnv1aI32`],
    /// [`crate::TextbookCountingFnv1aI32`], [`crate::TextbookScalable`]).
    Textbook,
    /// A flat array of 4-bit counters, 16 per word ([`crate::Counting4`]).
    Counting4,
    /// A flat array of 8-bit counters, 8 per word ([`crate::Counting8`]).
    Counting8,
    /// A chain of growing stages of another layout ([`crate::Scalable`]).
    Scalable,
    /// A filter bloomlab does not build, measured through an adapter (a third-party structure,
    /// or one added from outside): its shape and theory are what its adapter reports.
    External,
}

impl Layout {
    /// Every layout, in report order.
    pub const ALL: [Layout; 8] = [
        Layout::Classic,
        Layout::Blocked512,
        Layout::SplitBlock,
        Layout::Textbook,
        Layout::Counting4,
        Layout::Counting8,
        Layout::Scalable,
        Layout::External,
    ];

    /// The layout's name, as in registry names and CSV files.
    pub const fn as_str(self) -> &'static str {
        match self {
            Layout::Classic => "classic",
            Layout::Blocked512 => "blocked512",
            Layout::SplitBlock => "sbbf",
            Layout::Textbook => "textbook",
            Layout::Counting4 => "counting4",
            Layout::Counting8 => "counting8",
            Layout::Scalable => "scalable",
            Layout::External => "external",
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Layout {
    type Err = BloomError;

    /// Parses a layout name exactly as [`Layout::as_str`] writes it; anything else is an error
    /// listing the known names.
    fn from_str(s: &str) -> Result<Self> {
        Layout::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| BloomError::OutOfRange {
                what: "layout",
                value: format!("{s:?}"),
                allowed: format!(
                    "it must be one of {}",
                    Layout::ALL.map(Layout::as_str).join(", ")
                ),
            })
    }
}

// The shape of a bit array lives with the rate theory of each shape (bloomlab-theory), which the
// conformance suite needs without the filters.
pub use bloomlab_theory::Geometry;

/// A Bloom filter: insert keys, ask whether a key may have been inserted.
///
/// Guarantee: after `insert(x)` returns, `contains(x)` is true (no false negatives). A key never
/// inserted is reported present with a probability the harness measures.
///
/// The trait is object-safe (`Box<dyn Filter>` is what the registry builds); the key-generic
/// `insert`/`contains` come from [`FilterExt`]. Concrete types also have inherent, inlined versions
/// of these methods, which is what the benches call.
pub trait Filter: Send + Sync {
    /// The registry name, derived from the variant's type parameters.
    fn name(&self) -> String;
    /// Hashes key bytes with this filter's hash strategy.
    fn digest(&self, bytes: &[u8]) -> Digest;
    /// Inserts a precomputed digest.
    fn insert_digest(&mut self, d: Digest);
    /// Looks up a precomputed digest.
    fn contains_digest(&self, d: Digest) -> bool;
    /// Asks the CPU to start loading the memory `contains_digest(d)` will read, without waiting for
    /// it (a prefetch hint: no effect on results, never faults). Layouts without a prefetching
    /// path do nothing.
    #[inline]
    fn prefetch_digest(&self, d: Digest) {
        let _ = d;
    }
    /// Looks up a precomputed digest, stopping at the first probe that finds a clear bit: always
    /// the answer of [`contains_digest`](Self::contains_digest). Layouts whose lookup reads one
    /// cache line (blocked, split-block) have nothing to stop early and keep the default, their
    /// `contains_digest`. The flat layout reads all k bits without a branch in `contains_digest`
    /// (fastest for one lookup at a time, which pays a mispredicted branch on each absent key if
    /// it stops early) and stops at the first clear bit here: a non-member of a half-full array
    /// reads about 2 of the k words instead of k, which is what the sweep's false-positive engine
    /// queries by the hundred million.
    #[inline]
    fn contains_digest_early_exit(&self, d: Digest) -> bool {
        self.contains_digest(d)
    }
    /// Asks the CPU to start loading the memory the first probes of
    /// [`contains_digest_early_exit`](Self::contains_digest_early_exit) read: what most
    /// non-member lookups need before they stop. By default
    /// [`prefetch_digest`](Self::prefetch_digest); the flat layout prefetches its first probe's
    /// word only (all k words would cost k transfers where about 2 are read).
    #[inline]
    fn prefetch_digest_early_exit(&self, d: Digest) {
        self.prefetch_digest(d);
    }
    /// How many of `digests` this filter reports present: always the number of them for which
    /// [`contains_digest`](Self::contains_digest) is true, in whatever order and probe by probe as
    /// the layout finds fastest. It is the false-positive engine's inner loop (a chunk of
    /// non-members' digests at a time). By default one
    /// [`contains_digest_early_exit`](Self::contains_digest_early_exit) after another, with the
    /// memory of the digest [`LOOKAHEAD`] places on prefetched ([`count_pipelined`]); the flat
    /// layout tests one probe of every remaining digest per round instead (see
    /// [`crate::Bloom::count_present`]).
    #[inline]
    fn count_present(&self, digests: &[Digest]) -> u64 {
        count_pipelined(
            digests,
            |d| self.prefetch_digest_early_exit(d),
            |d| self.contains_digest_early_exit(d),
        )
    }
    /// Inserts every digest of `digests`, in order: what one
    /// [`insert_digest`](Self::insert_digest) after another does. By default with the memory of
    /// the digest [`LOOKAHEAD`] places on prefetched ([`insert_pipelined`]); the flat layout
    /// computes each probe's position once where its index scheme says that pays
    /// ([`crate::IndexScheme::POSITIONS_ONCE`], [`crate::Bloom::insert_digests`]).
    #[inline]
    fn insert_digests(&mut self, digests: &[Digest]) {
        insert_pipelined(self, digests);
    }
    /// Whether [`contains_digest`](Self::contains_digest) is true for every digest of `digests`:
    /// the check that a filter holds its members. By default one `contains_digest` after another
    /// with the memory of the digest [`LOOKAHEAD`] places on prefetched
    /// ([`contains_all_pipelined`]); the flat layout reads
    /// every probe's bit from positions computed once where its index scheme says that pays
    /// ([`crate::Bloom::contains_all_digests`]).
    #[inline]
    fn contains_all_digests(&self, digests: &[Digest]) -> bool {
        contains_all_pipelined(self, digests)
    }
    /// Whether a batched lookup ([`FilterExt::contains_batch`]) keeps, from the request of a
    /// key's memory to its test, what the request computed ([`pipelined_pending`] with
    /// [`prefetch_pending`](Self::prefetch_pending) and [`contains_pending`](Self::contains_pending))
    /// instead of computing it again ([`pipelined`] with
    /// [`prefetch_digest`](Self::prefetch_digest) and [`contains_digest`](Self::contains_digest)).
    /// False by default; the flat layout keeps its positions when k is at most
    /// [`PENDING_POSITIONS`].
    #[inline]
    fn batch_keeps_positions(&self) -> bool {
        false
    }
    /// Requests the memory [`contains_pending`](Self::contains_pending) will read for `d` and
    /// keeps in `pending` what it needs: by default the digest, then
    /// [`prefetch_digest`](Self::prefetch_digest).
    #[inline]
    fn prefetch_pending(&self, d: Digest, pending: &mut Pending) {
        pending.digest = d;
        self.prefetch_digest(d);
    }
    /// `contains_digest(d)` for the `pending` that
    /// [`prefetch_pending`](Self::prefetch_pending)`(d, pending)` filled.
    #[inline]
    fn contains_pending(&self, pending: &Pending) -> bool {
        self.contains_digest(pending.digest)
    }
    /// The true number of bits, after the layout's rounding.
    fn bits(&self) -> u64;
    /// Probes per key.
    fn hashes(&self) -> u32;
    /// Bytes the filter holds, heap and inline.
    fn memory_bytes(&self) -> usize;
    /// Number of bits set.
    fn set_bits(&self) -> u64;
    /// The shape of the bit array.
    fn geometry(&self) -> Geometry;
    /// The layout family (for a registered variant, its [`Variant::LAYOUT`]).
    fn layout(&self) -> Layout;

    /// The theoretical false-positive rate after `members` distinct keys were inserted, under the
    /// layout's independence model: by default `self.geometry().fpr(members)`.
    ///
    /// A filter whose shape is not one [`Geometry`] overrides it: the scalable filter
    /// ([`crate::Scalable`]) returns the compound rate of its stages, where `members` is the total
    /// number inserted and each stage's count follows from the fill order (see
    /// [`crate::Scalable::fpr_theory`]). Reports should call this, not `geometry().fpr`.
    fn fpr_theory(&self, members: u64) -> f64 {
        self.geometry().fpr(members)
    }

    /// The false-positive rate of this very filter, given the bits it holds: the probability that
    /// a query whose probes are uniform and independent finds them all set. This is what an
    /// observed FPR estimates, so it is the reference for a test whose only randomness is the
    /// queries (a confidence interval over queries).
    ///
    /// [`fpr_theory`](Self::fpr_theory) is its mean over all filters built from random keys. The
    /// two differ by the filter-to-filter spread of how full the bits happen to be, which is
    /// negligible for a large flat array but not for a small blocked one: a blocked filter's rate
    /// is the mean over its blocks of a steep function of each block's load, and a few hundred
    /// blocks do not average out (the sweep saw one 10,000-key blocked filter 10% above its
    /// layout theory, exactly at this figure).
    ///
    /// By default `fill_ratio^k`, exact for a flat array probed with replacement; blocked layouts
    /// average their blocks, a scalable filter compounds its stages.
    fn fpr_given_bits(&self) -> f64 {
        self.fill_ratio().powi(self.hashes() as i32)
    }

    /// Inserts the key whose canonical bytes are `bytes`.
    #[inline]
    fn insert_bytes(&mut self, bytes: &[u8]) {
        let d = self.digest(bytes);
        self.insert_digest(d);
    }
    /// Looks up the key whose canonical bytes are `bytes`.
    #[inline]
    fn contains_bytes(&self, bytes: &[u8]) -> bool {
        self.contains_digest(self.digest(bytes))
    }
    /// Fraction of bits set.
    fn fill_ratio(&self) -> f64 {
        self.set_bits() as f64 / self.bits() as f64
    }
    /// Estimated number of distinct keys inserted, from the fill: `-(m/k) ln(1 - X/m)`
    /// (Swamidass & Baldi 2007). Infinite when every bit is set.
    fn estimated_len(&self) -> f64 {
        let m = self.bits() as f64;
        -(m / f64::from(self.hashes())) * (-self.fill_ratio()).ln_1p()
    }
}

/// Key-generic insert and lookup for every [`Filter`], including `dyn Filter`.
pub trait FilterExt: Filter {
    /// Inserts `key` (see [`crate::key`] for how keys become bytes).
    #[inline]
    fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        key.with_bytes(|b| self.insert_bytes(b));
    }
    /// Whether `key` may have been inserted.
    #[inline]
    fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        key.with_bytes(|b| self.contains_bytes(b))
    }
    /// Looks up every key of `keys`, calling `found(i, contains(&keys[i]))` in order: the same
    /// answers as one `contains` per key, faster on large filters: the next [`LOOKAHEAD`] keys
    /// are hashed and their memory requested ahead of the key tested ([`pipelined`], or
    /// [`pipelined_pending`] where the layout keeps what it computed for the request,
    /// [`Filter::batch_keeps_positions`]).
    #[inline]
    fn contains_batch<K: Key>(&self, keys: &[K], found: impl FnMut(usize, bool)) {
        if self.batch_keeps_positions() {
            pipelined_pending(
                keys,
                |b| self.digest(b),
                |d, pending| self.prefetch_pending(d, pending),
                |pending| self.contains_pending(pending),
                found,
            );
        } else {
            pipelined(
                keys,
                |b| self.digest(b),
                |d| self.prefetch_digest(d),
                |d| self.contains_digest(d),
                found,
            );
        }
    }
}

impl<F: Filter + ?Sized> FilterExt for F {}

/// How many keys a batched lookup hashes and prefetches ahead of the key it tests.
///
/// A lookup in a filter larger than the cache waits for memory; one `contains` after another
/// overlaps only as many of those waits as the core's instruction window holds lookups (a few).
/// With the digests of the next `LOOKAHEAD` keys computed and their cache lines requested first,
/// each test finds its line already on the way. 16 keys at a few ns each cover the ~100 ns of a
/// DRAM access, and the ring of digests (256 bytes) stays in L1; the value was not tuned further.
pub const LOOKAHEAD: usize = 16;

/// The batched lookup every layout's `contains_batch` runs: hash key `i + LOOKAHEAD` and prefetch
/// its memory, then test key `i` from its saved digest and report `found(i, answer)`. No
/// allocation (the ring of digests is on the stack); the answers are exactly those of `test`.
#[inline(always)]
pub fn pipelined<K: Key>(
    keys: &[K],
    digest: impl Fn(&[u8]) -> Digest,
    prefetch: impl Fn(Digest),
    test: impl Fn(Digest) -> bool,
    mut found: impl FnMut(usize, bool),
) {
    let mut ring = [Digest::from_halves(0, 0); LOOKAHEAD];
    for (slot, key) in ring.iter_mut().zip(keys) {
        *slot = key.with_bytes(&digest);
        prefetch(*slot);
    }
    for i in 0..keys.len() {
        let slot = i % LOOKAHEAD;
        let d = ring[slot];
        if let Some(ahead) = keys.get(i + LOOKAHEAD) {
            ring[slot] = ahead.with_bytes(&digest);
            prefetch(ring[slot]);
        }
        found(i, test(d));
    }
}

/// Positions a [`Pending`] key holds: every k of Guava's sizing down to p = 1e-4 (k = 13), and of
/// the textbook one down to about 1.5e-5.
pub const PENDING_POSITIONS: usize = 16;

/// What a batched lookup that keeps positions ([`pipelined_pending`]) holds of one key from the
/// request of its memory to its test: the digest, and the positions the layout computed on the
/// way ([`Filter::prefetch_pending`] fills it, [`Filter::contains_pending`] reads it).
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    /// The key's digest.
    pub digest: Digest,
    /// Positions the layout computed for the prefetch, to test without computing them again.
    pub positions: [u64; PENDING_POSITIONS],
}

impl Pending {
    /// A key not filled in yet.
    pub const EMPTY: Pending = Pending {
        digest: Digest::from_halves(0, 0),
        positions: [0; PENDING_POSITIONS],
    };
}

/// [`pipelined`] for the layouts whose batched lookup keeps what it computed for the prefetch
/// ([`Filter::batch_keeps_positions`]): hash key `i + LOOKAHEAD`, test key `i` from its
/// [`Pending`] slot, `prefetch` key `i + LOOKAHEAD`'s memory into that slot (overwriting it),
/// and report `found(i, answer)`. No allocation (the ring, 2.3 KiB, is on the stack); the
/// answers are exactly those of `test`. The hash comes before the test so that its work overlaps
/// the test's loads: test first, then hash and prefetch, Guava's layout took 20.8 / 22.0 ns a key
/// against 17.9 / 17.8 ns (1M string keys, absent / present, two builds of one scratch program).
///
/// The other layouts keep [`pipelined`]: keeping a [`Pending`] per key (its zeroing and its
/// stride) made split-block's batched lookups 2-4% slower, for nothing it reads.
#[inline(always)]
pub fn pipelined_pending<K: Key>(
    keys: &[K],
    digest: impl Fn(&[u8]) -> Digest,
    prefetch: impl Fn(Digest, &mut Pending),
    test: impl Fn(&Pending) -> bool,
    mut found: impl FnMut(usize, bool),
) {
    let mut ring = [Pending::EMPTY; LOOKAHEAD];
    for (slot, key) in ring.iter_mut().zip(keys) {
        prefetch(key.with_bytes(&digest), slot);
    }
    for i in 0..keys.len() {
        let slot = &mut ring[i % LOOKAHEAD];
        let ahead = keys.get(i + LOOKAHEAD).map(|key| key.with_bytes(&digest));
        let answer = test(slot);
        if let Some(d) = ahead {
            prefetch(d, slot);
        }
        found(i, answer);
    }
}

/// How many of `digests` pass `test`, with `prefetch` called on the digest [`LOOKAHEAD`] places
/// ahead of the one tested (and on the first `LOOKAHEAD` before any test), so that on a filter
/// larger than the cache the memory accesses overlap. The count is exactly that of `test` over
/// every digest.
#[inline(always)]
pub fn count_pipelined(
    digests: &[Digest],
    prefetch: impl Fn(Digest),
    test: impl Fn(Digest) -> bool,
) -> u64 {
    for d in digests.iter().take(LOOKAHEAD) {
        prefetch(*d);
    }
    let mut found = 0u64;
    for (i, d) in digests.iter().enumerate() {
        if let Some(ahead) = digests.get(i + LOOKAHEAD) {
            prefetch(*ahead);
        }
        found += u64::from(test(*d));
    }
    found
}

/// One [`Filter::insert_digest`] per digest, in order, with [`Filter::prefetch_digest`] called on
/// the digest [`LOOKAHEAD`] places ahead of the one inserted (and on the first `LOOKAHEAD` before
/// any insert): the bits of one insert after another, with the memory accesses overlapped.
#[inline(always)]
pub fn insert_pipelined<F: Filter + ?Sized>(filter: &mut F, digests: &[Digest]) {
    for d in digests.iter().take(LOOKAHEAD) {
        filter.prefetch_digest(*d);
    }
    for (i, d) in digests.iter().enumerate() {
        if let Some(ahead) = digests.get(i + LOOKAHEAD) {
            filter.prefetch_digest(*ahead);
        }
        filter.insert_digest(*d);
    }
}

/// Whether [`Filter::contains_digest`] is true for every digest of `digests`, one after another
/// with [`Filter::prefetch_digest`] called on the digest [`LOOKAHEAD`] places ahead
/// ([`count_pipelined`]).
#[inline(always)]
pub fn contains_all_pipelined<F: Filter + ?Sized>(filter: &F, digests: &[Digest]) -> bool {
    count_pipelined(
        digests,
        |d| filter.prefetch_digest(d),
        |d| filter.contains_digest(d),
    ) == digests.len() as u64
}

/// A prefetch hint for the cache line holding `*p`: starts the load and returns at once. The
/// pointer is never dereferenced, so any address is allowed. Public for the bench's floor loops,
/// which prefetch as the layouts do.
#[inline(always)]
pub fn prefetch_line<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint that performs no access the program can observe; it cannot
    // fault, even on an invalid address, and `p` is not dereferenced.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A concrete filter type the registry can name and build.
pub trait Variant: Filter + Sized + 'static {
    /// The layout family; the registry name starts with it and [`Filter::layout`] returns it.
    const LAYOUT: Layout;
    /// The registry name, composed from [`Self::LAYOUT`] and the type parameters' `ID`s.
    fn variant_name() -> String;
    /// A filter with an explicit (m, k); m is rounded up to the layout's unit.
    fn with_params(params: Params) -> Result<Self>;
    /// A filter sized for `n` keys at target rate `p` by this variant's sizing rule.
    fn sized_for(n: u64, p: f64) -> Result<Self> {
        Self::with_params(Params::optimal(n, p)?)
    }
    /// A filter of `bits` bits for `n` keys, with the optimal k for that ratio.
    fn with_bits_for(bits: u64, n: u64) -> Result<Self> {
        Self::with_params(Params::for_bits_and_count(bits, n)?)
    }
    /// The bit count and the layout theory at `n` keys of [`with_bits_for(bits, n)`]
    /// (Self::with_bits_for), `(f.bits(), f.fpr_theory(n))`, and the same error for a size it
    /// refuses (an allocation failure aside), computed without allocating: what a search for the
    /// bits that meet a rate needs, so that it builds only the filter it returns (see
    /// [`crate::Scalable`]). `None` for a variant that does not compute it: such a search then
    /// builds every candidate.
    fn theory_with_bits_for(bits: u64, n: u64) -> Option<Result<(u64, f64)>> {
        let _ = (bits, n);
        None
    }
    /// Heap bytes of the bit array [`sized_for(n, p)`](Self::sized_for) allocates, computed
    /// without allocating, and the same error for a size `sized_for` refuses (an allocation
    /// failure aside): what a memory pre-check needs before it builds anything.
    ///
    /// The default follows the default `sized_for` (the textbook (m, k) of [`Params::optimal`]) and
    /// rounds m up to whole 512-bit blocks, the coarsest unit of any layout, so it is exact for
    /// the blocked layout and at most 56 bytes high for a 64-bit-word one. Variants with their
    /// own sizing override it.
    fn sized_bytes(n: u64, p: f64) -> Result<u64> {
        Ok(array_bytes(Params::optimal(n, p)?.bits, 512))
    }
    /// The hash, index scheme and bit store the type is built from, by their `ID`s (none by
    /// default: a port that fixes its own hashing overrides what it has).
    fn axes() -> crate::registry::Axes {
        crate::registry::Axes::default()
    }
}

/// Bytes of an array of `bits` bits rounded up to whole `unit`-bit words or blocks (`unit` a
/// multiple of 8), without overflow for any `bits`.
pub(crate) fn array_bytes(bits: u64, unit: u64) -> u64 {
    bits.div_ceil(unit) * (unit / 8)
}

impl std::fmt::Debug for dyn Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter")
            .field("name", &self.name())
            .field("bits", &self.bits())
            .field("hashes", &self.hashes())
            .finish()
    }
}

/// The inherent key-generic `insert`/`contains` of a layout, over its inherent
/// `insert_digest`/`contains_digest`, hashing key bytes with the function `$digest`. Expands inside
/// an inherent `impl` block; the concrete types' own methods are what the benches call, so they stay
/// inherent and inlined rather than going through [`FilterExt`].
macro_rules! keyed_methods {
    ($digest:path) => {
        /// Inserts `key` (see [`crate::key`] for how keys become bytes).
        #[inline]
        pub fn insert<K: $crate::key::Key + ?Sized>(&mut self, key: &K) {
            key.with_bytes(|b| self.insert_digest($digest(b)));
        }

        /// Whether `key` may have been inserted.
        #[inline]
        pub fn contains<K: $crate::key::Key + ?Sized>(&self, key: &K) -> bool {
            key.with_bytes(|b| self.contains_digest($digest(b)))
        }

        /// Looks up every key of `keys`, calling `found(i, self.contains(&keys[i]))` in order:
        /// the same answers as one `contains` per key, with the next
        /// [`LOOKAHEAD`]($crate::filter::LOOKAHEAD) keys hashed and their memory prefetched
        /// first, so that on a filter larger than the cache the memory accesses overlap
        /// ([`FilterExt::contains_batch`]($crate::filter::FilterExt::contains_batch)).
        #[inline]
        pub fn contains_batch<K: $crate::key::Key>(
            &self,
            keys: &[K],
            found: impl FnMut(usize, bool),
        ) {
            $crate::filter::FilterExt::contains_batch(self, keys, found);
        }
    };
}
pub(crate) use keyed_methods;

/// The [`Filter`] methods every layout forwards unchanged: the registry name and layout, hashing
/// with `$digest`, and the digest-level insert and lookup (to the inherent methods). Expands inside
/// an `impl Filter for ...` block.
macro_rules! forward_filter_methods {
    ($digest:path) => {
        fn name(&self) -> String {
            <Self as $crate::filter::Variant>::variant_name()
        }
        fn layout(&self) -> $crate::filter::Layout {
            <Self as $crate::filter::Variant>::LAYOUT
        }
        #[inline]
        fn digest(&self, bytes: &[u8]) -> $crate::hash::Digest {
            $digest(bytes)
        }
        #[inline]
        fn insert_digest(&mut self, d: $crate::hash::Digest) {
            Self::insert_digest(self, d);
        }
        #[inline]
        fn contains_digest(&self, d: $crate::hash::Digest) -> bool {
            Self::contains_digest(self, d)
        }
        #[inline]
        fn prefetch_digest(&self, d: $crate::hash::Digest) {
            Self::prefetch_digest(self, d);
        }
    };
}
pub(crate) use forward_filter_methods;

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::IntoDeserializer;
    use serde::de::value::{Error as ValueError, StrDeserializer};

    #[test]
    fn layout_names_round_trip_through_display_from_str_and_serde() {
        let expected = [
            "classic",
            "blocked512",
            "sbbf",
            "textbook",
            "counting4",
            "counting8",
            "scalable",
            "external",
        ];
        for (layout, name) in Layout::ALL.into_iter().zip(expected) {
            assert_eq!(layout.to_string(), name);
            assert_eq!(name.parse::<Layout>(), Ok(layout));
            let de: StrDeserializer<'_, ValueError> = name.into_deserializer();
            assert_eq!(Layout::deserialize(de), Ok(layout), "serde reads {name:?}");
        }
    }

    #[test]
    fn an_unknown_layout_is_an_error_listing_the_known_ones() {
        let err = "flat".parse::<Layout>().unwrap_err().to_string();
        assert!(
            err.contains("\"flat\"")
                && err.contains(
                    "classic, blocked512, sbbf, textbook, counting4, counting8, scalable, \
                     external"
                ),
            "{err}"
        );
        let de: StrDeserializer<'_, ValueError> = "split-block".into_deserializer();
        assert!(Layout::deserialize(de).is_err());
    }
}
