//! The key sets: the strings `"article-content-hash-" + i` of the well-known Java table, and random
//! distinct u64s. Lookup batches are drawn at random positions of the key space and stored
//! contiguously, so a timed loop reads its keys sequentially while the structure is probed at
//! random, never on one hot key.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// The string prefix of every key.
pub const PREFIX: &str = "article-content-hash-";

/// Seeds: fixed, so every run and every structure sees the same keys and batches.
const SEED_PRESENT: u64 = 0x5EED_0001;
const SEED_ABSENT: u64 = 0x5EED_0002;
const SEED_U64: u64 = 0x9E37_79B9_7F4A_7C15;

/// Keys per lookup batch at most: large enough that the batch's probes spread over the whole
/// structure (the batch wraps around after this many lookups).
pub const MAX_BATCH: usize = 1 << 20;

/// Strings stored back to back in one buffer, with slices into it.
pub struct Arena {
    text: String,
    ends: Vec<usize>,
}

impl Arena {
    fn from_indices(indices: impl Iterator<Item = u64>) -> Self {
        use std::fmt::Write;
        let mut text = String::new();
        let mut ends = Vec::new();
        for i in indices {
            text.push_str(PREFIX);
            write!(text, "{i}").expect("writing to a String cannot fail");
            ends.push(text.len());
        }
        Self { text, ends }
    }

    /// The strings, in order.
    pub fn slices(&self) -> Vec<&str> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let s = &self.text[start..end];
                start = end;
                s
            })
            .collect()
    }
}

/// The string workload for one n.
pub struct StrKeys {
    /// All n inserted keys, i in 0..n.
    pub inserted: Arena,
    /// Inserted keys at random positions (with repetition), in random order.
    pub present: Arena,
    /// Keys with i in n..2n (never inserted), at random positions.
    pub absent: Arena,
}

fn batch_len(n: u64) -> usize {
    usize::try_from(n).map_or(MAX_BATCH, |n| n.min(MAX_BATCH))
}

impl StrKeys {
    pub fn new(n: u64) -> Self {
        let mut rng = Pcg64Mcg::seed_from_u64(SEED_PRESENT);
        let present = Arena::from_indices((0..batch_len(n)).map(|_| rng.random_range(0..n)));
        let mut rng = Pcg64Mcg::seed_from_u64(SEED_ABSENT);
        let absent = Arena::from_indices((0..batch_len(n)).map(|_| n + rng.random_range(0..n)));
        Self {
            inserted: Arena::from_indices(0..n),
            present,
            absent,
        }
    }
}

/// A bijection on u64 (splitmix64's finaliser on a seeded counter): distinct inputs give distinct,
/// random-looking keys, so present and absent sets are disjoint by construction.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(SEED_U64).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^= z >> 31;
    z = z.wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 29)
}

/// The u64 workload for one n.
pub struct U64Keys {
    /// The n inserted keys, `mix(i)` for i in 0..n.
    pub inserted: Vec<u64>,
    /// Inserted keys at random positions, in random order.
    pub present: Vec<u64>,
    /// `mix(i)` for random i in n..2n: never inserted.
    pub absent: Vec<u64>,
}

impl U64Keys {
    pub fn new(n: u64) -> Self {
        let mut rng = Pcg64Mcg::seed_from_u64(SEED_PRESENT);
        let present = (0..batch_len(n))
            .map(|_| mix(rng.random_range(0..n)))
            .collect();
        let mut rng = Pcg64Mcg::seed_from_u64(SEED_ABSENT);
        let absent = (0..batch_len(n))
            .map(|_| mix(n + rng.random_range(0..n)))
            .collect();
        Self {
            inserted: (0..n).map(mix).collect(),
            present,
            absent,
        }
    }
}
