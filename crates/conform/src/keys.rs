//! The key families the suite inserts and queries, each an indexed, seeded sequence of distinct
//! byte keys: members are indices `0..m`, non-members indices from `m` on, disjoint by
//! construction.
//!
//! SKELETON (issue 27): task SUITE implements `fill`.

use serde::{Deserialize, Serialize};

use crate::candidate::KeyBatch;

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
        let _ = (seed, start, len, out);
        todo!("task SUITE")
    }
}
