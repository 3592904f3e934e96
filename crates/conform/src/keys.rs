//! The key families the suite inserts and queries, each an indexed, seeded sequence of distinct
//! byte keys: members are indices `0..m`, non-members indices from `m` on, disjoint by
//! construction. Every family follows the seed: two seeds give different keys, one seed the same.

use std::io::Write as _;

use bloomlab_harness::keys::{Batch, KeySet, KeySetKind, derive_seed};
use serde::{Deserialize, Serialize};

use crate::candidate::KeyBatch;

/// Bytes of [`Family::SharedPrefix`]'s prefix ([`shared_prefix`]).
pub const SHARED_PREFIX_BYTES: usize = 64;

/// The shared prefix of [`Family::SharedPrefix`] under `seed`: 64 bytes, as a crawler's keys
/// under one site section share theirs, with a section name of 16 hex digits drawn from the seed
/// (`https://www.example.com/catalogue/<16 hex>/products/sub?`).
pub fn shared_prefix(seed: u64) -> Vec<u8> {
    let section = derive_seed(seed, "shared-prefix");
    let prefix = format!("https://www.example.com/catalogue/{section:016x}/products/sub?");
    debug_assert_eq!(prefix.len(), SHARED_PREFIX_BYTES);
    prefix.into_bytes()
}

/// The first key of [`Family::SequentialU64`] under `seed`: below 2^32, so the keys stay small
/// integers (their high bytes zero), as counters and row ids are.
pub fn sequential_start(seed: u64) -> u64 {
    derive_seed(seed, "sequential-u64") >> 32
}

/// Bytes of a [`Family::Long`] key.
pub const LONG_KEY_BYTES: usize = 4096;

/// A key family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Seeded bijective mix of the index, 8 little-endian bytes.
    RandomU64,
    /// Consecutive integers from a seeded start below 2^32 ([`sequential_start`]), 8
    /// little-endian bytes.
    SequentialU64,
    /// URL-like strings (bloomlab's `url` key set).
    Url,
    /// A seeded 64-byte shared prefix ([`shared_prefix`]), then the decimal index.
    SharedPrefix,
    /// Long keys (4 KiB of seeded bytes carrying the index).
    Long,
}

impl Family {
    /// Every family, in report order.
    pub const ALL: [Family; 5] = [
        Family::RandomU64,
        Family::SequentialU64,
        Family::Url,
        Family::SharedPrefix,
        Family::Long,
    ];

    /// Its kebab-case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Family::RandomU64 => "random-u64",
            Family::SequentialU64 => "sequential-u64",
            Family::Url => "url",
            Family::SharedPrefix => "shared-prefix",
            Family::Long => "long",
        }
    }

    /// Clears `out` and fills it with keys `start..start + len` of this family under `seed`.
    pub fn fill(self, seed: u64, start: u64, len: usize, out: &mut KeyBatch) {
        out.clear();
        let end = start + len as u64;
        match self {
            Family::RandomU64 | Family::Url => {
                let kind = if self == Family::Url {
                    KeySetKind::Url
                } else {
                    KeySetKind::RandomU64
                };
                let set = KeySet::new(kind, seed).expect("generated key sets read no file");
                let mut batch = set.new_batch();
                set.fill(start, len, &mut batch);
                match &batch {
                    Batch::U64(v) => v.iter().for_each(|k| out.push(&k.to_le_bytes())),
                    Batch::Str(s) => s.iter().for_each(|k| out.push(k.as_bytes())),
                }
            }
            Family::SequentialU64 => {
                // Indices stay far below 2^63, so the sum never wraps and keys stay distinct.
                let first = sequential_start(seed);
                (start..end).for_each(|i| out.push(&(first + i).to_le_bytes()));
            }
            Family::SharedPrefix => {
                let mut key = shared_prefix(seed);
                for i in start..end {
                    key.truncate(SHARED_PREFIX_BYTES);
                    // Written in place: no String per key.
                    write!(key, "{i}").expect("writing to a Vec cannot fail");
                    out.push(&key);
                }
            }
            Family::Long => {
                // Seeded noise, the same for every key, with the index in the first and last 8
                // bytes: distinct keys that differ only at their ends, where a hash that reads a
                // prefix or samples the middle would miss the difference.
                let mut key = vec![0u8; LONG_KEY_BYTES];
                let mut x = derive_seed(seed, "long");
                for chunk in key.chunks_mut(8) {
                    x = x
                        .wrapping_mul(0x5851_f42d_4c95_7f2d)
                        .wrapping_add(1442695040888963407);
                    chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
                }
                for i in start..end {
                    key[..8].copy_from_slice(&i.to_le_bytes());
                    key[LONG_KEY_BYTES - 8..].copy_from_slice(&i.to_le_bytes());
                    out.push(&key);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn every_family_gives_distinct_reproducible_keys_members_disjoint_from_non_members() {
        for family in Family::ALL {
            let mut a = KeyBatch::new();
            let mut b = KeyBatch::new();
            family.fill(7, 0, 2000, &mut a);
            family.fill(7, 2000, 2000, &mut b);
            let mut again = KeyBatch::new();
            family.fill(7, 2000, 2000, &mut again);
            assert_eq!(b, again, "{family:?} is not reproducible");
            let all: HashSet<&[u8]> = a.iter().chain(b.iter()).collect();
            assert_eq!(all.len(), 4000, "{family:?} repeats a key");
        }
        let mut shared = KeyBatch::new();
        Family::SharedPrefix.fill(7, 1234, 1, &mut shared);
        assert_eq!(
            shared.get(0),
            [&shared_prefix(7)[..], b"1234"].concat().as_slice()
        );
        assert_eq!(shared_prefix(7).len(), SHARED_PREFIX_BYTES);
        let mut sequential = KeyBatch::new();
        Family::SequentialU64.fill(7, 5, 2, &mut sequential);
        let first = sequential_start(7);
        assert!(first < 1 << 32);
        assert_eq!(sequential.get(0), (first + 5).to_le_bytes());
        assert_eq!(sequential.get(1), (first + 6).to_le_bytes());
        let mut long = KeyBatch::new();
        Family::Long.fill(1, 5, 1, &mut long);
        assert_eq!(long.get(0).len(), LONG_KEY_BYTES);
    }

    #[test]
    fn every_family_follows_the_seed() {
        // Seeds 1 and 2 (and 0 and u64::MAX) give different keys at the same indices in every
        // family, and the same seed the same keys: members and non-members alike, so `--seed`
        // changes the whole run and reproduces it.
        for family in Family::ALL {
            for (a, b) in [(1, 2), (0, u64::MAX)] {
                let (mut x, mut y, mut again) = (KeyBatch::new(), KeyBatch::new(), KeyBatch::new());
                family.fill(a, 100, 50, &mut x);
                family.fill(b, 100, 50, &mut y);
                family.fill(a, 100, 50, &mut again);
                assert_eq!(x, again, "{family:?}: seed {a} twice gave different keys");
                let same = x.iter().zip(y.iter()).filter(|(k, l)| k == l).count();
                assert_eq!(
                    same, 0,
                    "{family:?}: seeds {a} and {b} share {same} of 50 keys"
                );
            }
        }
    }
}
