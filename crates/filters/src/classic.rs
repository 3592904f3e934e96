//! The classic layout: one flat bit array, k probes anywhere in it.

use std::marker::PhantomData;

use crate::error::{BloomError, Result};
use crate::filter::{
    Filter, Geometry, LOOKAHEAD, Layout, PENDING_POSITIONS, Pending, Variant,
    contains_all_pipelined, forward_filter_methods, insert_pipelined, keyed_methods,
};
use crate::hash::{Digest, HashStrategy};
use crate::index::IndexScheme;
use crate::key::Key;
use crate::sizing::{MAX_HASHES, Params};
use crate::store::{BitStore, ConcurrentBitStore};

/// A Bloom filter over a flat bit array: hash strategy `H`, index scheme `I`, bit store `S`.
///
/// `Bloom<Murmur3, GuavaMitz64, FlatBits>` is Guava's layout; with [`crate::AtomicBits`] it is
/// Guava's lock-free one and can be filled from many threads at once through
/// [`insert_shared`](Self::insert_shared).
pub struct Bloom<H, I: IndexScheme, S> {
    store: S,
    /// The index scheme's precomputed form of the store's bit count.
    range: I::Range,
    hashes: u32,
    _axes: PhantomData<fn() -> (H, I)>,
}

impl<H, I: IndexScheme, S: std::fmt::Debug> std::fmt::Debug for Bloom<H, I, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bloom")
            .field("hashes", &self.hashes)
            .field("store", &self.store)
            .finish()
    }
}

impl<H: HashStrategy, I: IndexScheme, S: BitStore> Bloom<H, I, S> {
    /// A filter of at least `params.bits` bits (rounded up to whole 64-bit words, which is the
    /// modulus the index scheme then uses) and `params.hashes` probes.
    pub fn with_params(params: Params) -> Result<Self> {
        let params = Params::explicit(params.bits, params.hashes)?;
        let store = S::zeroed(params.bits)?;
        Ok(Self {
            range: I::range(store.len_bits()),
            store,
            hashes: params.hashes,
            _axes: PhantomData,
        })
    }

    /// A filter for `n` keys at rate `p`, sized by the index scheme's rule ([`IndexScheme::sizing`]).
    pub fn new(n: u64, p: f64) -> Result<Self> {
        Self::with_params(I::sizing(n, p)?)
    }

    /// Reassembles a filter from a store and k (as a deserializer does); errors for an empty store or
    /// an invalid k.
    pub fn from_parts(store: S, hashes: u32) -> Result<Self> {
        // An empty store would make every probe's modulus zero.
        Params::explicit(store.len_bits(), hashes)?;
        Ok(Self {
            range: I::range(store.len_bits()),
            store,
            hashes,
            _axes: PhantomData,
        })
    }

    /// The bit store, e.g. to serialize its words.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Ors `other`'s bits into this filter, which then holds both filters' keys. Errors when the
    /// two differ in bit count or k (their positions would not line up).
    pub fn union(&mut self, other: &Self) -> Result<()> {
        if self.store.len_bits() != other.store.len_bits() || self.hashes != other.hashes {
            return Err(BloomError::Incompatible {
                reason: format!(
                    "bit count and k must match: {} bits, k = {} vs {} bits, k = {}",
                    self.store.len_bits(),
                    self.hashes,
                    other.store.len_bits(),
                    other.hashes
                ),
            });
        }
        self.store.union_words(&other.store);
        Ok(())
    }

    /// Inserts a precomputed digest.
    #[inline]
    pub fn insert_digest(&mut self, d: Digest) {
        let store = &mut self.store;
        I::probe_in(d, self.hashes, self.range, |i| {
            store.set(i);
            true
        });
    }

    /// Looks up a precomputed digest: all k bits are read, without a branch per probe.
    #[inline]
    pub fn contains_digest(&self, d: Digest) -> bool {
        // Stopping at the first clear bit mispredicts on absent keys (the first clear probe is
        // random); reading all k bits costs k loads that overlap, and measured faster: classic
        // xxh3 absent lookups at 1M went from 22 to 14 ns, present ones from 13.7 to 14.5 ns.
        let mut all = true;
        I::probe_in(d, self.hashes, self.range, |i| {
            all &= self.store.get(i);
            true
        });
        all
    }

    /// Looks up a precomputed digest, stopping at the first clear bit: the answer of
    /// [`contains_digest`](Self::contains_digest), reading fewer words on an absent key (see
    /// [`Filter::contains_digest_early_exit`]).
    #[inline]
    pub fn contains_digest_early_exit(&self, d: Digest) -> bool {
        I::probe_in(d, self.hashes, self.range, |i| self.store.get(i))
    }

    /// Prefetches the word of the first probe of `d`, the one every lookup reads.
    #[inline]
    pub fn prefetch_digest_early_exit(&self, d: Digest) {
        I::probe_in(d, 1, self.range, |i| {
            self.store.prefetch(i);
            false
        });
    }

    /// How many of `digests` this filter reports present: the count of
    /// [`contains_digest`](Self::contains_digest) over them, computed a probe at a time. Round
    /// `j` tests probe `j` of every digest still standing and keeps those whose bit is set,
    /// without a branch (the digest is written to the next free slot, and the slot advances by
    /// the bit); the digests left after round `k - 1` are the ones present. A non-member of a
    /// half-full array is gone after about 2 rounds, as with an early exit, but no branch
    /// depends on a bit: one lookup at a time, the early exit mispredicts on most absent keys.
    /// Position `j` is recomputed from the digest with the index scheme (`j + 1` steps), which
    /// costs less than the memory traffic and mispredictions it saves. Each round computes every
    /// standing digest's position first, requesting its word as it goes, then tests them: the
    /// test loop is a few instructions per digest, so its loads (all independent) find their
    /// words on the way (each position is computed once here, not once to prefetch and once to
    /// test as in [`prefetch_digest`](Self::prefetch_digest)). Measured on the FPR engine (n = 1e6,
    /// p = 1e-4, u64 keys, one thread, fat LTO, quiet): 142M queries/s/core with one loop per
    /// round, 169M with the positions first, 193M with their prefetch (medians of 7 runs each,
    /// alternated).
    pub fn count_present(&self, digests: &[Digest]) -> u64 {
        /// Digests in flight: a stack buffer that stays in L1.
        const ROUND: usize = 256;
        let mut live = [Digest::from_halves(0, 0); ROUND];
        let mut at = [0u64; ROUND];
        let mut present = 0u64;
        for chunk in digests.chunks(ROUND) {
            live[..chunk.len()].copy_from_slice(chunk);
            let mut standing = chunk.len();
            for j in 0..self.hashes {
                if standing == 0 {
                    break;
                }
                for (slot, d) in at[..standing].iter_mut().zip(&live[..standing]) {
                    I::probe_in(*d, j + 1, self.range, |i| {
                        *slot = i;
                        true
                    });
                    self.store.prefetch(*slot);
                }
                // The loads: independent of each other; `live` is compacted without a branch.
                let mut kept = 0;
                for t in 0..standing {
                    live[kept] = live[t];
                    kept += usize::from(self.store.get(at[t]));
                }
                standing = kept;
            }
            present += standing as u64;
        }
        present
    }

    /// Inserts every digest of `digests`: the bits of one
    /// [`insert_digest`](Self::insert_digest) after another. With an index scheme whose positions
    /// are costly ([`IndexScheme::POSITIONS_ONCE`]) each position is computed once and kept in a
    /// ring from the prefetch of its word to its write; otherwise each
    /// digest's words are prefetched [`LOOKAHEAD`] digests ahead and its positions computed again
    /// to set them ([`insert_pipelined`]).
    #[inline]
    pub fn insert_digests(&mut self, digests: &[Digest]) {
        if !I::POSITIONS_ONCE {
            return insert_pipelined(self, digests);
        }
        let (hashes, range) = (self.hashes, self.range);
        each_position::<I, _>(
            &mut self.store,
            digests,
            hashes,
            range,
            |store, i| store.prefetch(i),
            |store, i| store.set(i),
        );
    }

    /// Whether every digest of `digests` is present ([`contains_digest`](Self::contains_digest)
    /// of each): the member check. Positions as in [`insert_digests`](Self::insert_digests).
    #[inline]
    pub fn contains_all_digests(&self, digests: &[Digest]) -> bool {
        if !I::POSITIONS_ONCE {
            return contains_all_pipelined(self, digests);
        }
        let mut all = true;
        each_position::<I, _>(
            &mut &self.store,
            digests,
            self.hashes,
            self.range,
            |store, i| store.prefetch(i),
            |store, i| all &= store.get(i),
        );
        all
    }

    /// Prefetches the k words a lookup of `d` reads. The positions are computed again by the
    /// insert or test that follows: cheaper, for every scheme, than the misses this overlaps
    /// (Guava's 64-bit scheme, batched, 1M string keys: 56.2 ns a lookup without it, 23.2 with;
    /// its 32-bit scheme's hardware division: see [`crate::GuavaMitz32`]).
    #[inline]
    pub fn prefetch_digest(&self, d: Digest) {
        I::probe_in(d, self.hashes, self.range, |i| {
            self.store.prefetch(i);
            true
        });
    }

    keyed_methods!(H::digest);
}

/// Positions [`each_position`] holds between computing one and using it (4 KiB on the stack):
/// [`LOOKAHEAD`] keys' positions ahead, fewer when k > 30 (still more than 256 positions ahead
/// for every k up to [`MAX_HASHES`]).
const RING: usize = 512;
const _: () = assert!(RING > 2 * MAX_HASHES as usize && RING.is_power_of_two());

/// Calls `each` on every probe position of `digests`, in order, computing each once: `prefetch`
/// is called on a position as it is computed, and `each` [`LOOKAHEAD`] keys' worth of positions
/// later (at most `RING - k`), from a ring on the stack. Both are handed `ctx` (the bit store).
#[inline(always)]
fn each_position<I: IndexScheme, C>(
    ctx: &mut C,
    digests: &[Digest],
    hashes: u32,
    range: I::Range,
    prefetch: impl Fn(&C, u64),
    mut each: impl FnMut(&mut C, u64),
) {
    let k = hashes as usize;
    let ahead = (LOOKAHEAD * k).min(RING - k);
    let mut ring = [0u64; RING];
    let (mut head, mut tail) = (0usize, 0usize);
    for d in digests {
        I::probe_in(*d, hashes, range, |i| {
            prefetch(ctx, i);
            ring[head % RING] = i;
            head += 1;
            true
        });
        while head - tail > ahead {
            each(ctx, ring[tail % RING]);
            tail += 1;
        }
    }
    while tail < head {
        each(ctx, ring[tail % RING]);
        tail += 1;
    }
}

impl<H: HashStrategy, I: IndexScheme, S: ConcurrentBitStore> Bloom<H, I, S> {
    /// Inserts `key` through a shared reference; safe from any number of threads at once.
    #[inline]
    pub fn insert_shared<K: Key + ?Sized>(&self, key: &K) {
        key.with_bytes(|b| self.insert_digest_shared(H::digest(b)));
    }

    /// Inserts a precomputed digest through a shared reference.
    #[inline]
    pub fn insert_digest_shared(&self, d: Digest) {
        I::probe_in(d, self.hashes, self.range, |i| {
            self.store.set_shared(i);
            true
        });
    }
}

/// What [`crate::shared`]'s inserter needs from the filter.
impl<H, I: IndexScheme> Bloom<H, I, crate::store::FlatBits> {
    pub(crate) fn range(&self) -> I::Range {
        self.range
    }
    pub(crate) fn hashes_per_key(&self) -> u32 {
        self.hashes
    }
    pub(crate) fn store_words_mut(&mut self) -> &mut [u64] {
        self.store.words_mut()
    }
}

impl<H: HashStrategy, I: IndexScheme, S: BitStore> Filter for Bloom<H, I, S> {
    forward_filter_methods!(H::digest);
    #[inline]
    fn contains_digest_early_exit(&self, d: Digest) -> bool {
        Self::contains_digest_early_exit(self, d)
    }
    #[inline]
    fn prefetch_digest_early_exit(&self, d: Digest) {
        Self::prefetch_digest_early_exit(self, d);
    }
    fn insert_digests(&mut self, digests: &[Digest]) {
        Self::insert_digests(self, digests);
    }
    fn contains_all_digests(&self, digests: &[Digest]) -> bool {
        Self::contains_all_digests(self, digests)
    }
    /// A batched lookup with k up to [`PENDING_POSITIONS`] computes each position once, as its
    /// word is requested, and tests it [`LOOKAHEAD`] keys later ([`Filter::prefetch_pending`]);
    /// with a larger k it computes the positions again for the test, as one lookup does. Unlike
    /// [`IndexScheme::POSITIONS_ONCE`] (inserts and member checks, where the multiply-shift
    /// scheme measured slower with its ring of positions), this pays for every scheme: 1M string
    /// keys, absent / present, one process, medians of 31 rounds, `classic/xxh3/km/flat` 12.5 /
    /// 14.1 -> 11.2 / 11.6 ns, `classic/murmur3/mitz64/flat` 23.3 / 23.5 -> 17.5 / 18.0 ns (with
    /// [`crate::index::Modulus`]; 26.4 / 26.1 ns before both).
    #[inline]
    fn batch_keeps_positions(&self) -> bool {
        self.hashes as usize <= PENDING_POSITIONS
    }
    #[inline]
    fn prefetch_pending(&self, d: Digest, pending: &mut Pending) {
        if !self.batch_keeps_positions() {
            pending.digest = d;
            return self.prefetch_digest(d);
        }
        let mut at = 0;
        I::probe_in(d, self.hashes, self.range, |i| {
            self.store.prefetch(i);
            pending.positions[at] = i;
            at += 1;
            true
        });
    }
    #[inline]
    fn contains_pending(&self, pending: &Pending) -> bool {
        if !self.batch_keeps_positions() {
            return self.contains_digest(pending.digest);
        }
        let mut all = true;
        for &i in &pending.positions[..self.hashes as usize] {
            all &= self.store.get(i);
        }
        all
    }
    fn count_present(&self, digests: &[Digest]) -> u64 {
        Self::count_present(self, digests)
    }
    fn bits(&self) -> u64 {
        self.store.len_bits()
    }
    fn hashes(&self) -> u32 {
        self.hashes
    }
    fn memory_bytes(&self) -> usize {
        self.store.memory_bytes() + std::mem::size_of::<u32>()
    }
    fn set_bits(&self) -> u64 {
        self.store.count_ones()
    }
    fn geometry(&self) -> Geometry {
        Geometry::Flat {
            bits: self.store.len_bits(),
            hashes: self.hashes,
        }
    }
    /// The flat theory, with the hash-width term of a scheme whose positions come from fewer than
    /// 2^53 values ([`IndexScheme::POSITION_DOMAIN`], [`crate::theory::flat_reduced`]).
    fn fpr_theory(&self, members: u64) -> f64 {
        flat_theory::<I>(self.store.len_bits(), self.hashes, members)
    }
    /// `fill^k`, or for a reduced-domain scheme the chance a probe finds its bit set given the
    /// bits of each kind of position ([`crate::theory::reduced_kinds`]).
    fn fpr_given_bits(&self) -> f64 {
        match I::POSITION_DOMAIN {
            0 => self.fill_ratio().powi(self.hashes as i32),
            domain => reduced_given_bits(self.store.len_bits(), self.hashes, domain, |w| {
                self.store.word(w)
            }),
        }
    }
}

/// The flat theory for index scheme `I`: [`crate::theory::flat`], or with a reduced position
/// domain [`crate::theory::flat_reduced`].
pub(crate) fn flat_theory<I: IndexScheme>(bits: u64, hashes: u32, members: u64) -> f64 {
    match I::POSITION_DOMAIN {
        0 => crate::theory::flat(bits, hashes, members),
        domain => crate::theory::flat_reduced(bits, hashes, members, domain),
    }
}

/// The false-positive rate given the bits of a flat array of `bits` bits (word `w` read by
/// `word`) probed `hashes` times through a `% bits` reduction of `domain` values: the set bits of
/// each kind of position weighted by that kind's per-position probability, to the k-th power.
pub(crate) fn reduced_given_bits(
    bits: u64,
    hashes: u32,
    domain: u64,
    word: impl Fn(usize) -> u64,
) -> f64 {
    let [(first, q_first), (_, q_rest)] = crate::theory::reduced_kinds(bits, domain);
    let words = bits.div_ceil(64) as usize;
    let (mut ones_first, mut ones_rest) = (0u64, 0u64);
    for w in 0..words {
        let x = word(w);
        let start = w as u64 * 64;
        // The low `below` bits of this word lie in the first kind.
        let below = first.saturating_sub(start).min(64) as u32;
        let low_mask = if below == 64 {
            u64::MAX
        } else {
            (1u64 << below) - 1
        };
        ones_first += u64::from((x & low_mask).count_ones());
        ones_rest += u64::from((x & !low_mask).count_ones());
    }
    (ones_first as f64 * q_first + ones_rest as f64 * q_rest).powi(hashes as i32)
}

impl<H: HashStrategy, I: IndexScheme, S: BitStore> Variant for Bloom<H, I, S> {
    const LAYOUT: Layout = Layout::Classic;
    fn variant_name() -> String {
        format!("{}/{}/{}/{}", Self::LAYOUT, H::ID, I::ID, S::ID)
    }
    fn axes() -> crate::registry::Axes {
        crate::registry::Axes {
            hash: Some(H::ID),
            index: Some(I::ID),
            store: Some(S::ID),
        }
    }
    fn with_params(params: Params) -> Result<Self> {
        Bloom::with_params(params)
    }
    fn sized_for(n: u64, p: f64) -> Result<Self> {
        Bloom::new(n, p)
    }
    fn sized_bytes(n: u64, p: f64) -> Result<u64> {
        let params = I::sizing(n, p)?;
        let params = Params::explicit(params.bits, params.hashes)?;
        Ok(crate::filter::array_bytes(params.bits, 64))
    }
    fn theory_with_bits_for(bits: u64, n: u64) -> Option<Result<(u64, f64)>> {
        let params = Params::for_bits_and_count(bits, n)
            .and_then(|params| Params::explicit(params.bits, params.hashes));
        Some(params.map(|params| {
            let bits = S::len_bits_for(params.bits);
            (bits, flat_theory::<I>(bits, params.hashes, n))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        EnhancedDoubleHash, FlatBits, GuavaMitz32, GuavaMitz64, KirschMitzenmacher, Murmur3, Xxh3,
    };

    type Guava = Bloom<Murmur3, GuavaMitz64, FlatBits>;

    #[test]
    fn union_holds_both_key_sets_and_refuses_other_shapes() {
        let mut a = Guava::new(1000, 0.01).unwrap();
        let mut b = Guava::new(1000, 0.01).unwrap();
        (0..500u64).for_each(|i| a.insert(&i));
        (500..1000u64).for_each(|i| b.insert(&i));
        a.union(&b).unwrap();
        assert!((0..1000u64).all(|i| a.contains(&i)));

        let other_size = Guava::new(2000, 0.01).unwrap();
        let err = a.union(&other_size).unwrap_err().to_string();
        assert!(err.contains("bit count and k must match"), "{err}");
        let other_k = Guava::with_params(Params::explicit(a.bits(), 3).unwrap()).unwrap();
        assert!(a.union(&other_k).is_err());
    }

    /// The batched insert sets exactly the words one `insert_digest` per digest sets, and the
    /// batched member check and batched lookup answer as `contains_digest` does, for every index
    /// scheme (positions computed once or twice) and k from 1 to the largest allowed (the ring's
    /// capacity), on both sides of the k up to which a batched lookup keeps its positions.
    fn batched_as_one_by_one<I: IndexScheme>() {
        for (bits, hashes) in [
            (64, 1),
            (1000, 3),
            (100_003, 13),
            (50_000, PENDING_POSITIONS as u32),
            (50_000, PENDING_POSITIONS as u32 + 1),
            (1 << 20, 40),
            (4096, 255),
        ] {
            let params = Params::explicit(bits, hashes).expect("valid params");
            let mut one = Bloom::<Xxh3, I, FlatBits>::with_params(params).expect("builds");
            let mut batched = Bloom::<Xxh3, I, FlatBits>::with_params(params).expect("builds");
            let digests: Vec<Digest> = (0..3_000u64)
                .map(|i| Xxh3::digest(&i.to_le_bytes()))
                .collect();
            let (members, others) = digests.split_at(2_000);
            for &d in members {
                one.insert_digest(d);
            }
            for c in members.chunks(333) {
                batched.insert_digests(c);
            }
            assert_eq!(
                batched.store().words(),
                one.store().words(),
                "{} m={bits} k={hashes}",
                I::ID
            );
            assert!(
                batched.contains_all_digests(members),
                "{} k={hashes}",
                I::ID
            );
            for c in others.chunks(7) {
                assert_eq!(
                    batched.contains_all_digests(c),
                    c.iter().all(|&d| one.contains_digest(d)),
                    "{} m={bits} k={hashes}",
                    I::ID
                );
            }
            // Members and non-members, in batches shorter and longer than the lookahead.
            let keys: Vec<u64> = (0..3_000u64).collect();
            assert_eq!(
                batched.batch_keeps_positions(),
                hashes as usize <= PENDING_POSITIONS
            );
            for c in keys.chunks(1 + LOOKAHEAD / 2).chain(keys.chunks(1_000)) {
                let mut answers = vec![None; c.len()];
                batched.contains_batch(c, |i, found| answers[i] = Some(found));
                let expected: Vec<Option<bool>> = c.iter().map(|k| Some(one.contains(k))).collect();
                assert_eq!(answers, expected, "{} m={bits} k={hashes}", I::ID);
            }
        }
    }

    #[test]
    fn batched_inserts_member_checks_and_lookups_match_one_by_one_for_every_scheme() {
        batched_as_one_by_one::<KirschMitzenmacher>();
        batched_as_one_by_one::<EnhancedDoubleHash>();
        batched_as_one_by_one::<GuavaMitz64>();
        batched_as_one_by_one::<GuavaMitz32>();
    }
}
