//! The key sets: the strings `"article-content-hash-" + i` of the well-known Java table, and random
//! distinct u64s. Lookup batches are drawn at random positions of the key space and stored
//! contiguously, so a timed loop reads its keys sequentially while the structure is probed at
//! random, never on one hot key.
//!
//! The keys come from `bloomlab_harness::keys`, which owns key generation for the sweep and this
//! bench alike: the strings from its writer of `prefix + i` keys (the sweep's `article` set uses it
//! with the prefix `article-`), the u64s are its `random-u64` key set (one bijective mixer, so the
//! absent keys, at indices n..2n, are never inserted ones). This module only chooses which indices
//! each batch holds.

use bloomlab_harness::keys::{Batch, KeySet, KeySetKind, StrBatch};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// The string prefix of every key.
pub const PREFIX: &str = "article-content-hash-";

/// Seeds: fixed, so every run and every structure sees the same keys and batches.
const SEED_PRESENT: u64 = 0x5EED_0001;
const SEED_ABSENT: u64 = 0x5EED_0002;
const SEED_U64: u64 = 0x9E37_79B9_7F4A_7C15;
const SEED_MEMBERS: u64 = 0x5EED_0003;

/// Keys per lookup batch at most: large enough that the batch's probes spread over the whole
/// structure (the batch wraps around after this many lookups).
pub const MAX_BATCH: usize = 1 << 20;

fn batch_len(n: u64) -> usize {
    usize::try_from(n).map_or(MAX_BATCH, |n| n.min(MAX_BATCH))
}

/// The indices of a present batch (inserted keys, 0..n, with repetition, in random order) and of
/// an absent batch (never-inserted keys, n..2n): the same for both key kinds.
fn batch_indices(n: u64) -> (Vec<u64>, Vec<u64>) {
    let mut rng = Pcg64Mcg::seed_from_u64(SEED_PRESENT);
    let present = (0..batch_len(n)).map(|_| rng.random_range(0..n)).collect();
    let mut rng = Pcg64Mcg::seed_from_u64(SEED_ABSENT);
    let absent = (0..batch_len(n))
        .map(|_| n + rng.random_range(0..n))
        .collect();
    (present, absent)
}

/// Distinct inserted keys (i in 0..n), as many as a lookup batch holds, in random order: what
/// the counting series removes and inserts ([`crate::timing::Cycle`]). Unlike the present batch it
/// has no repetition, because a key may only be removed while it is a member.
pub fn distinct_members(n: u64) -> StrBatch {
    let mut rng = Pcg64Mcg::seed_from_u64(SEED_MEMBERS);
    let n_usize = usize::try_from(n).expect("n keys fit in memory, so n fits in usize");
    let indices = rand::seq::index::sample(&mut rng, n_usize, batch_len(n));
    strings(indices.into_iter().map(|i| i as u64))
}

fn strings(indices: impl IntoIterator<Item = u64>) -> StrBatch {
    let mut batch = StrBatch::default();
    for i in indices {
        batch.push_indexed(PREFIX, i);
    }
    batch
}

/// The string workload for one n, stored back to back (no allocation per key).
pub struct StrKeys {
    /// All n inserted keys, i in 0..n.
    pub inserted: StrBatch,
    /// Inserted keys at random positions (with repetition), in random order.
    pub present: StrBatch,
    /// Keys with i in n..2n (never inserted), at random positions.
    pub absent: StrBatch,
}

impl StrKeys {
    pub fn new(n: u64) -> Self {
        let (present, absent) = batch_indices(n);
        Self {
            inserted: strings(0..n),
            present: strings(present),
            absent: strings(absent),
        }
    }
}

fn u64s(set: &KeySet, indices: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let mut batch = Batch::U64(Vec::new());
    set.fill_at(indices, &mut batch);
    match batch {
        Batch::U64(keys) => keys,
        Batch::Str(_) => unreachable!("fill_at keeps a batch's representation"),
    }
}

/// The u64 workload for one n.
pub struct U64Keys {
    /// The n inserted keys, keys 0..n of the `random-u64` key set.
    pub inserted: Vec<u64>,
    /// Inserted keys at random positions, in random order.
    pub present: Vec<u64>,
    /// Keys at random indices in n..2n: never inserted.
    pub absent: Vec<u64>,
}

impl U64Keys {
    pub fn new(n: u64) -> Self {
        let set = KeySet::new(KeySetKind::RandomU64, SEED_U64)
            .expect("the random-u64 key set reads no file");
        let (present, absent) = batch_indices(n);
        Self {
            inserted: u64s(&set, 0..n),
            present: u64s(&set, present),
            absent: u64s(&set, absent),
        }
    }
}

/// Seed of the mixed batches' choice of present positions.
const SEED_MIX: u64 = 0x5EED_0004;

/// A batch with `percent`% present keys: position j holds the present batch's key j or the absent
/// batch's, with exactly `len x percent / 100` (rounded down) present positions chosen at random,
/// so a branch on the answer cannot be predicted. Returns the batch and its number of present
/// keys. 0 gives the absent batch, 100 the present one.
pub fn mixed<K: Copy>(present: &[K], absent: &[K], percent: u8) -> (Vec<K>, u64) {
    let len = present.len().min(absent.len());
    let wanted = len * usize::from(percent.min(100)) / 100;
    let mut rng = Pcg64Mcg::seed_from_u64(SEED_MIX ^ u64::from(percent));
    let mut is_present = vec![false; len];
    for j in rand::seq::index::sample(&mut rng, len, wanted) {
        is_present[j] = true;
    }
    let batch = (0..len)
        .map(|j| if is_present[j] { present[j] } else { absent[j] })
        .collect();
    (batch, wanted as u64)
}

/// The keys of a lookup batch each in its own heap allocation, as an application holding its
/// keys as `Vec<String>` has them: allocated in sorted order, which is unrelated to the batch's
/// random lookup order, so fetching the next key to look up is a random access into some
/// 2^20 x 48 bytes of heap (the allocator places small strings of one size class next to each
/// other in the order they were allocated) instead of the next bytes of one buffer.
pub struct Scattered {
    /// The keys in allocation order.
    owned: Vec<String>,
    /// For each lookup position, the index in `owned` of its key.
    at: Vec<usize>,
}

impl Scattered {
    /// Copies `batch` (keys in lookup order) into one allocation per key; checks that
    /// [`Scattered::keys`] gives the batch back, key for key.
    pub fn new(batch: &[&str]) -> Self {
        let mut order: Vec<usize> = (0..batch.len()).collect();
        order.sort_by_key(|&j| batch[j]);
        let owned: Vec<String> = order.iter().map(|&j| batch[j].to_owned()).collect();
        let mut at = vec![0; batch.len()];
        for (slot, &j) in order.iter().enumerate() {
            at[j] = slot;
        }
        let scattered = Self { owned, at };
        assert!(
            scattered.keys() == batch,
            "the scattered copy of a {}-key batch differs from it",
            batch.len()
        );
        scattered
    }

    /// The keys in lookup order, each a slice of its own allocation.
    pub fn keys(&self) -> Vec<&str> {
        self.at.iter().map(|&i| self.owned[i].as_str()).collect()
    }
}
