//! The keys of one group of sweep rows, generated once and shared by every row of the group.
//!
//! A sweep group is the rows of one key set holding the same number of members (the default run's
//! groups have 10 to 40 rows: every filter at every p). Every row inserts members `0..members`,
//! checks all of them and queries non-members from index `members` on, so without sharing each key
//! is generated once per row; for string key sets, building the key was more than half of a
//! query's time (a `url` key: 45% building it, 14% copying it, against 24% for the lookup). A
//! [`GroupKeys`] generates each chunk of [`GEN_BATCH`] keys the first time any row asks for it and
//! keeps it for the rest of the group, up to a byte budget; past the budget, a row generates the
//! keys it needs itself, as it did before.
//!
//! Which chunks are stored never changes a result: a stored chunk holds exactly the keys
//! [`KeySet::fill`] gives. It changes only the time a row spends, which is why the time spent
//! filling the store is returned to the caller, which excludes it from its per-core query rate.

use std::ops::Range;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::clock::CoreClock;
use crate::keys::{Batch, KeySet};
use crate::limits::GEN_BATCH;

/// The most bytes of keys one group stores: 512 MiB. The default sweep's largest group needs about
/// 250 MB (10^7 `random-u64` members and 2 x 10^7 non-members; or 10^6 `url` members and the 4 x
/// 10^6 non-members of its p = 10^-4 rows).
pub const GROUP_KEY_BYTES: u64 = 512 << 20;

/// The two runs of keys a row reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Members: key indices `0..members`.
    Members,
    /// Non-members, in the order rows query them: key indices `members..members + queries`.
    NonMembers,
}

/// One part's chunks: chunk `j` holds the part's keys `j * GEN_BATCH ..` (at most [`GEN_BATCH`]).
#[derive(Debug)]
struct Chunks {
    /// Key index of the part's first key.
    base: u64,
    /// Keys in the part.
    len: u64,
    /// `None` once decided not to store (over budget).
    slots: Vec<OnceLock<Option<Batch>>>,
}

/// The keys of one (key set, members) group: see the module docs.
#[derive(Debug)]
pub struct GroupKeys<'a> {
    keys: &'a KeySet,
    members: u64,
    parts: [Chunks; 2],
    budget: u64,
    stored: AtomicU64,
    full: AtomicBool,
}

impl<'a> GroupKeys<'a> {
    /// The keys of rows holding `members` keys of `keys` and querying at most `max_queries`
    /// non-members, storing at most `budget` bytes of them (0: store nothing, every row generates
    /// its own keys). Key files are read into memory already and are never stored twice.
    pub fn new(keys: &'a KeySet, members: u64, max_queries: u64, budget: u64) -> Self {
        let budget = if keys.file().is_some() { 0 } else { budget };
        let non_members = keys
            .available()
            .map_or(u64::MAX - members, |a| a.saturating_sub(members));
        let queries = max_queries.min(non_members);
        // Slots only for chunks that could fit: a key takes at least 8 bytes in a batch.
        let most_chunks = budget / 8 / GEN_BATCH as u64;
        let chunks = |base: u64, len: u64| Chunks {
            base,
            len,
            slots: (0..len.div_ceil(GEN_BATCH as u64).min(most_chunks))
                .map(|_| OnceLock::new())
                .collect(),
        };
        Self {
            keys,
            members,
            parts: [chunks(0, members), chunks(members, queries)],
            budget,
            stored: AtomicU64::new(0),
            full: AtomicBool::new(false),
        }
    }

    /// The key set.
    pub fn key_set(&self) -> &'a KeySet {
        self.keys
    }

    /// Members every row of the group holds.
    pub fn members(&self) -> u64 {
        self.members
    }

    /// Bytes of keys stored so far.
    pub fn stored_bytes(&self) -> u64 {
        self.stored.load(Ordering::Relaxed)
    }

    /// Calls `visit(batch, range)` on keys `from..to` of `part` (positions within the part: 0 is
    /// its first key), in order, a stored chunk or a batch generated into `scratch` at a time:
    /// `range` is the positions in `batch` that hold them. `scratch` must be a batch of the key
    /// set's representation ([`KeySet::new_batch`]).
    ///
    /// Returns the core-seconds this call spent filling the store: keys every row of the group
    /// will read, which a row's own rate should not be charged with. Keys generated into
    /// `scratch` are the caller's own work and are not in the figure.
    pub fn visit(
        &self,
        part: Part,
        from: u64,
        to: u64,
        scratch: &mut Batch,
        mut visit: impl FnMut(&Batch, Range<usize>),
    ) -> f64 {
        let chunks = &self.parts[part as usize];
        debug_assert!(
            to <= chunks.len,
            "{part:?} {from}..{to} past {}",
            chunks.len
        );
        let g = GEN_BATCH as u64;
        let mut storing = 0.0;
        let mut at = from;
        while at < to {
            let j = at / g;
            let end = to.min((j + 1) * g);
            match self.stored_chunk(chunks, j, &mut storing) {
                Some(batch) => visit(batch, (at - j * g) as usize..(end - j * g) as usize),
                None => {
                    self.keys
                        .fill(chunks.base + at, (end - at) as usize, scratch);
                    visit(scratch, 0..scratch.len());
                }
            }
            at = end;
        }
        storing
    }

    /// Generates and stores, on the current rayon pool's threads at once, the chunks of `part`
    /// that hold its keys `0..to` and fit the budget: keys every row of the group reads, which
    /// would otherwise be generated one chunk at a time by whichever row asks first while the
    /// others wait for it. Returns the core-seconds spent (as [`visit`](Self::visit) does); the
    /// keys stored are those `visit` would store, so no result changes.
    pub fn prefill(&self, part: Part, to: u64) -> f64 {
        use rayon::prelude::*;
        let chunks = &self.parts[part as usize];
        let last = to.min(chunks.len).div_ceil(GEN_BATCH as u64) as usize;
        (0..last.min(chunks.slots.len()))
            .into_par_iter()
            .map(|j| {
                let mut storing = 0.0;
                self.stored_chunk(chunks, j as u64, &mut storing);
                storing
            })
            .sum()
    }

    /// Chunk `j` of `chunks` from the store, generating and storing it if this is its first use
    /// and the budget allows (adding the core-seconds spent to `storing`); `None` when it is not
    /// stored.
    fn stored_chunk<'s>(
        &'s self,
        chunks: &'s Chunks,
        j: u64,
        storing: &mut f64,
    ) -> Option<&'s Batch> {
        let slot = chunks.slots.get(j as usize)?;
        slot.get_or_init(|| {
            if self.full.load(Ordering::Relaxed) {
                return None;
            }
            let clock = CoreClock::start();
            let start = j * GEN_BATCH as u64;
            let len = (chunks.len - start).min(GEN_BATCH as u64) as usize;
            let mut batch = self.keys.new_batch();
            self.keys.fill(chunks.base + start, len, &mut batch);
            batch.shrink_to_fit();
            let bytes = batch.heap_bytes() as u64;
            let before = self.stored.fetch_add(bytes, Ordering::Relaxed);
            if before + bytes > self.budget {
                // Over budget: no chunk is stored from now on (this one's keys are dropped; the
                // caller generates the range it needs).
                self.stored.fetch_sub(bytes, Ordering::Relaxed);
                self.full.store(true, Ordering::Relaxed);
                return None;
            }
            *storing += clock.seconds();
            Some(batch)
        })
        .as_ref()
    }
}

/// Upper bound on the bytes [`GroupKeys`] stores for a group of `members` members querying at
/// most `queries` non-members, `batch_bytes(len)` bounding a batch of `len` keys (the memory
/// pre-check's model).
pub fn group_key_bytes(members: u64, queries: u64, batch_bytes: impl Fn(u64) -> u64) -> u64 {
    let g = GEN_BATCH as u64;
    let chunked = |len: u64| {
        let full = len / g;
        full.saturating_mul(batch_bytes(g))
            .saturating_add(batch_bytes(len % g))
    };
    chunked(members)
        .saturating_add(chunked(queries))
        .min(GROUP_KEY_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeySetKind;

    fn collect(group: &GroupKeys, part: Part, from: u64, to: u64) -> Vec<Vec<u8>> {
        let mut scratch = group.key_set().new_batch();
        let mut out = Vec::new();
        group.visit(part, from, to, &mut scratch, |b, r| {
            b.for_each_bytes_in(r, |k| out.push(k.to_vec()))
        });
        out
    }

    fn expected(keys: &KeySet, start: u64, len: u64) -> Vec<Vec<u8>> {
        let mut b = keys.new_batch();
        keys.fill(start, len as usize, &mut b);
        let mut out = Vec::new();
        b.for_each_bytes(|k| out.push(k.to_vec()));
        out
    }

    /// Every range of either part gives the keys `KeySet::fill` gives at those indices, whether
    /// the chunks are stored (large budget), partly stored (a budget of a few chunks) or not
    /// (budget 0), over ranges that start and end inside chunks and span several.
    #[test]
    fn visited_keys_are_the_key_sets_keys_whatever_is_stored() {
        let g = GEN_BATCH as u64;
        let members = 2 * g + 1000;
        for kind in [KeySetKind::RandomU64, KeySetKind::Url] {
            let keys = KeySet::new(kind.clone(), 9).unwrap();
            // A budget of about two chunks of either representation stores some chunks only.
            let partial = if keys.is_u64() { 1 << 20 } else { 6 << 20 };
            for budget in [0, partial, GROUP_KEY_BYTES] {
                let group = GroupKeys::new(&keys, members, 3 * g, budget);
                for (from, to) in [(0, 10), (g - 5, g + 5), (100, 2 * g + 900), (0, 0)] {
                    assert_eq!(
                        collect(&group, Part::Members, from, to),
                        expected(&keys, from, to - from),
                        "{kind} budget {budget} members {from}..{to}"
                    );
                    assert_eq!(
                        collect(&group, Part::NonMembers, from, to),
                        expected(&keys, members + from, to - from),
                        "{kind} budget {budget} non-members {from}..{to}"
                    );
                }
                assert!(group.stored_bytes() <= budget, "{kind} {budget}");
                if budget == 0 {
                    assert_eq!(group.stored_bytes(), 0);
                } else {
                    assert!(group.stored_bytes() > 0, "{kind} {budget}");
                }
            }
        }
    }

    /// Prefilling a part in parallel stores the keys `visit` gives (those of `KeySet::fill`), and
    /// no more than the budget, whatever the budget.
    #[test]
    fn prefilled_keys_are_the_key_sets_keys() {
        let g = GEN_BATCH as u64;
        let members = 3 * g + 11;
        for kind in [KeySetKind::RandomU64, KeySetKind::Url] {
            let keys = KeySet::new(kind.clone(), 5).unwrap();
            for budget in [0, 1 << 20, GROUP_KEY_BYTES] {
                let group = GroupKeys::new(&keys, members, 2 * g, budget);
                group.prefill(Part::Members, members);
                group.prefill(Part::NonMembers, g + 1);
                let stored = group.stored_bytes();
                assert!(stored <= budget, "{kind} budget {budget}: {stored}");
                if budget == GROUP_KEY_BYTES {
                    assert!(stored > 0, "{kind}: nothing stored");
                }
                assert_eq!(
                    collect(&group, Part::Members, 0, members),
                    expected(&keys, 0, members),
                    "{kind} budget {budget} members"
                );
                assert_eq!(
                    collect(&group, Part::NonMembers, 5, 2 * g),
                    expected(&keys, members + 5, 2 * g - 5),
                    "{kind} budget {budget} non-members"
                );
            }
        }
    }

    /// The memory model bounds what is stored, and the budget bounds the model.
    #[test]
    fn the_model_bounds_the_store() {
        let keys = KeySet::new(KeySetKind::RandomU64, 1).unwrap();
        let g = GEN_BATCH as u64;
        let group = GroupKeys::new(&keys, g + 7, 2 * g, GROUP_KEY_BYTES);
        let members = collect(&group, Part::Members, 0, g + 7).len();
        let queried = collect(&group, Part::NonMembers, 0, 2 * g).len();
        assert_eq!((members as u64, queried as u64), (g + 7, 2 * g));
        assert_eq!(
            group.stored_bytes(),
            group_key_bytes(g + 7, 2 * g, |len| len * 8)
        );
        assert_eq!(
            group_key_bytes(u64::MAX / 2, u64::MAX / 2, |len| len * 8),
            GROUP_KEY_BYTES
        );
    }
}
