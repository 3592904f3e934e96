//! The keys of `bloom_vs_hashset`, drawn the same way with the same seeds: the strings
//! `"article-content-hash-" + i` and the `random-u64` key set of `bloomlab_harness::keys`, i in
//! 0..n inserted, and a present batch of inserted keys at random positions (with repetition, in
//! random order) that the timed loops walk, so a sketch or a `HashMap` is probed at random and
//! never on one hot key.

use bloomlab_harness::keys::{Batch, KeySet, KeySetKind, StrBatch};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// The string prefix of every key (`bloom_vs_hashset`'s).
pub const PREFIX: &str = "article-content-hash-";

/// `bloom_vs_hashset`'s seeds, so both benches time the same keys.
const SEED_PRESENT: u64 = 0x5EED_0001;
const SEED_U64: u64 = 0x9E37_79B9_7F4A_7C15;

/// Keys per present batch at most (the batch wraps around after this many operations).
const MAX_BATCH: usize = 1 << 20;

fn present_indices(n: u64) -> Vec<u64> {
    let len = usize::try_from(n).map_or(MAX_BATCH, |n| n.min(MAX_BATCH));
    let mut rng = Pcg64Mcg::seed_from_u64(SEED_PRESENT);
    (0..len).map(|_| rng.random_range(0..n)).collect()
}

fn strings(indices: impl IntoIterator<Item = u64>) -> StrBatch {
    let mut batch = StrBatch::default();
    for i in indices {
        batch.push_indexed(PREFIX, i);
    }
    batch
}

/// The string workload for one n, stored back to back.
pub struct StrKeys {
    /// All n inserted keys, i in 0..n.
    pub inserted: StrBatch,
    /// Inserted keys at random positions, in random order.
    pub present: StrBatch,
}

impl StrKeys {
    pub fn new(n: u64) -> Self {
        Self {
            inserted: strings(0..n),
            present: strings(present_indices(n)),
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
    /// Keys 0..n of the `random-u64` key set.
    pub inserted: Vec<u64>,
    /// Inserted keys at random positions, in random order.
    pub present: Vec<u64>,
}

impl U64Keys {
    pub fn new(n: u64) -> Self {
        let set = KeySet::new(KeySetKind::RandomU64, SEED_U64)
            .expect("the random-u64 key set reads no file");
        Self {
            inserted: u64s(&set, 0..n),
            present: u64s(&set, present_indices(n)),
        }
    }
}
