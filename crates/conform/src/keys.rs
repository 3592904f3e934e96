//! The key families the suite inserts and queries, each an indexed, seeded sequence of distinct
//! byte keys: members are indices `0..m`, non-members indices from `m` on, disjoint by
//! construction.

use std::io::Write as _;

use bloomlab_harness::keys::{Batch, KeySet, KeySetKind, derive_seed};
use serde::{Deserialize, Serialize};

use crate::candidate::KeyBatch;

/// The shared prefix of [`Family::SharedPrefix`]: 64 bytes, as a crawler's keys under one site
/// section share theirs.
pub const SHARED_PREFIX: &[u8; 64] =
    b"https://www.example.com/catalogue/products/category/subsection/?";

/// Bytes of a [`Family::Long`] key.
pub const LONG_KEY_BYTES: usize = 4096;

/// A key family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Seeded bijective mix of the index, 8 little-endian bytes.
    RandomU64,
    /// The index itself, 8 little-endian bytes (0, 1, 2, ...).
    SequentialU64,
    /// URL-like strings (bloomlab's `url` key set).
    Url,
    /// A 64-byte shared prefix, then the decimal index.
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
            Family::SequentialU64 => (start..end).for_each(|i| out.push(&i.to_le_bytes())),
            Family::SharedPrefix => {
                let mut key = SHARED_PREFIX.to_vec();
                for i in start..end {
                    key.truncate(SHARED_PREFIX.len());
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
            [&SHARED_PREFIX[..], b"1234"].concat().as_slice()
        );
        let mut long = KeyBatch::new();
        Family::Long.fill(1, 5, 1, &mut long);
        assert_eq!(long.get(0).len(), LONG_KEY_BYTES);
    }
}
