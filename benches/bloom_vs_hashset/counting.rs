//! The counting series: insert, remove and lookups (present and absent) of the counting filters,
//! beside the static filter of the same hash and index scheme (its *twin*, whose lookups and
//! insert it is compared with) and std `HashSet<String>` (insert, remove and lookups). Same keys,
//! batches and conventions as the main series; criterion groups `counting-<operation>-str`.
//!
//! Removes and inserts run in a [`Cycle`] over a batch of distinct member keys: one remove
//! iteration removes one member key, one insert iteration inserts one key that was removed
//! (untimed) [`WINDOW`](crate::timing::WINDOW) keys earlier; the undoing operation runs untimed
//! between timed chunks, so every iteration works on the same state. A twin cannot remove, so its
//! insert re-inserts the same member keys (setting bits that are set already is the same work as
//! setting them anew, and leaves it unchanged).

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use bloomlab_filters::registry::{self, RemovableVisitor, VariantVisitor};
use bloomlab_filters::{
    Bloom, Counting4, Counting8, FlatBits, KirschMitzenmacher, Removable, TextbookCountingFnv1aI32,
    TextbookFnv1aI32, Variant, VariantId, Xxh3,
};
use bloomlab_harness::schema::bench::{Family, KeyKind, Mode, Operation, Series, label};

use crate::keys::distinct_members;
use crate::memory::measure_build;
use crate::suite::{Batches, Meta, RATES, Suite, Workload};
use crate::timing::{Cycle, Timed, WINDOW, bench, count_hits};

/// The counting variants measured, each with its static twin. The textbook port hashes and
/// probes as the textbook Bloom filter does, which is therefore its twin.
pub fn counting() -> [(&'static str, &'static str); 3] {
    let classic = VariantId::of::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>().name();
    [
        (
            VariantId::of::<Counting4<Xxh3, KirschMitzenmacher>>().name(),
            classic,
        ),
        (
            VariantId::of::<Counting8<Xxh3, KirschMitzenmacher>>().name(),
            classic,
        ),
        (
            VariantId::of::<TextbookCountingFnv1aI32>().name(),
            VariantId::of::<TextbookFnv1aI32>().name(),
        ),
    ]
}

/// A structure of the counting series (`p` `None` for the exact set).
fn meta(structure: &str, family: Family, p: Option<f64>, n: u64) -> Meta {
    Meta {
        series: Series::Counting,
        ..Meta::main(KeyKind::Str, structure, family, p, n)
    }
}

/// A `HashSet<String>` in a cycle: the strings taken out, oldest first. A removed `String` is kept
/// here rather than freed, and an insert moves the oldest back, so the timed operations are the
/// table's work alone, with no allocation or free (the deque's room is reserved up front).
struct Taken<'s> {
    set: &'s mut HashSet<String>,
    out: VecDeque<String>,
}

impl Suite<'_> {
    /// The counting series for the string keys of one n: std `HashSet` (already built, with its
    /// build's heap and time; it ends holding the same keys), each twin once, each counting
    /// variant. Nothing is built when `BLOOMLAB_BENCH_ONLY` selects none of them.
    pub fn counting(
        &mut self,
        b: &Batches,
        std_set: &mut HashSet<String>,
        std_built: (usize, Duration),
        n: u64,
    ) {
        let p = RATES[0];
        let hs = meta(KeyKind::Str.reference(), Family::HashSet, None, n);
        let mut twins: Vec<&str> = counting().iter().map(|&(_, twin)| twin).collect();
        twins.sort_unstable();
        twins.dedup();
        let twins: Vec<Meta> = twins
            .into_iter()
            .map(|t| meta(t, Family::Bloomlab, Some(p), n))
            .filter(|m| self.cfg.wants(&m.selector()))
            .collect();
        let counted: Vec<Meta> = counting()
            .iter()
            .map(|&(name, twin)| Meta {
                twin: Some(label(twin, Some(p))),
                ..meta(name, Family::Bloomlab, Some(p), n)
            })
            .filter(|m| self.cfg.wants(&m.selector()))
            .collect();
        let with_set = self.cfg.wants(&hs.selector());
        if !with_set && twins.is_empty() && counted.is_empty() {
            return;
        }
        let members_batch = distinct_members(n);
        let members: Vec<&str> = members_batch.iter().collect();

        if with_set {
            let capacity = std_set.capacity();
            let mut taken = Taken {
                set: std_set,
                out: VecDeque::with_capacity(2 * WINDOW),
            };
            self.cycles(
                &hs,
                &members,
                &mut taken,
                &mut |s: &mut Taken, k: &str| match s.set.take(k) {
                    Some(x) => {
                        s.out.push_back(x);
                        true
                    }
                    None => false,
                },
                // The oldest string taken is this key (the cycle's order): moved back, not copied.
                &mut |s: &mut Taken, _: &str| s.out.pop_front().is_some_and(|x| s.set.insert(x)),
            );
            // `capacity()` is the keys held plus the free room, which a tombstone (a removed
            // slot not yet reused) lowers; only a resize, which would have allocated in a timed
            // insert, raises it.
            assert!(
                std_set.len() as u64 == n && std_set.capacity() <= capacity,
                "the counting series' HashSet should end with its {n} keys without a resize: it \
                 holds {} keys, capacity {} (was {capacity})",
                std_set.len(),
                std_set.capacity()
            );
        }
        let std_set: &HashSet<String> = std_set;
        let w = b.workload(std_set);
        if with_set {
            self.lookups(&hs, std_built, &w, |k: &str| std_set.contains(k));
        }
        for m in twins {
            let name = m.structure.clone();
            let visit = Twin {
                suite: self,
                meta: m,
                inserted: b.inserted,
                members: &members,
                w: &w,
            };
            registry::visit(&name, visit)
                .unwrap_or_else(|e| panic!("counting series, static twin {name}: {e}"));
        }
        for m in counted {
            let name = m.structure.clone();
            let visit = Counted {
                suite: self,
                meta: m,
                inserted: b.inserted,
                members: &members,
                w: &w,
            };
            registry::visit_removable(&name, visit)
                .unwrap_or_else(|e| panic!("counting series, {name}: {e}"));
        }
    }

    /// Benchmarks inserts, then removes, of `members` (distinct members of `state`) in a [`Cycle`]
    /// each, groups `counting-insert-str` and `counting-remove-str`; panics if any operation found
    /// its key in the wrong state (which would make the iterations unequal).
    fn cycles<K: Copy, S: ?Sized>(
        &mut self,
        meta: &Meta,
        members: &[K],
        state: &mut S,
        remove: &mut impl FnMut(&mut S, K) -> bool,
        insert: &mut impl FnMut(&mut S, K) -> bool,
    ) {
        let label = meta.label();
        for (op, timed) in [
            (Operation::Insert, Timed::Insert),
            (Operation::Remove, Timed::Remove),
        ] {
            let mut cycle = Cycle::start(members, timed, state, remove);
            bench(self.c, self.cfg, meta.group(op), &label, meta.n, |iters| {
                cycle.time(iters, state, remove, insert)
            });
            if self.cfg.mode == Mode::Test {
                // Criterion's test mode runs one iteration: go twice round the cycle and some, so
                // the smoke run checks its wrapping too (the checks below must still hold).
                cycle.time(2 * members.len() as u64 + 7, state, remove, insert);
            }
            let failures = cycle.finish(state, insert);
            assert_eq!(
                failures,
                0,
                "{label}, n = {}: {failures} operations of the {op} cycle over {} distinct members \
                 did not find their key as expected (a remove of a non-member, or an insert of a \
                 member)",
                meta.n,
                members.len()
            );
        }
    }
}

/// A twin of a counting variant, sized for n keys at the headline rate, run as its concrete type.
struct Twin<'s, 'a, 'w> {
    suite: &'s mut Suite<'a>,
    meta: Meta,
    inserted: &'s [&'s str],
    members: &'s [&'s str],
    w: &'s Workload<'w, &'w str, HashSet<String>>,
}

impl VariantVisitor for Twin<'_, '_, '_> {
    type Output = ();
    fn visit<F: Variant>(self) {
        let (n, p) = (self.meta.n, self.meta.p.expect("filters have a rate"));
        let (mut f, bytes, t) = measure_build(|| {
            let mut f = F::sized_for(n, p)
                .unwrap_or_else(|e| panic!("{} for n = {n}, p = {p}: {e}", self.meta.structure));
            for k in self.inserted {
                f.insert_bytes(k.as_bytes());
            }
            f
        });
        self.suite
            .lookups(&self.meta, (bytes, t), self.w, |k: &str| {
                f.contains_bytes(k.as_bytes())
            });
        self.suite.inserts(&self.meta, self.members, |k: &str| {
            f.insert_bytes(k.as_bytes());
        });
    }
}

/// A counting variant, sized for n keys at the headline rate, run as its concrete type.
struct Counted<'s, 'a, 'w> {
    suite: &'s mut Suite<'a>,
    meta: Meta,
    inserted: &'s [&'s str],
    members: &'s [&'s str],
    w: &'s Workload<'w, &'w str, HashSet<String>>,
}

impl RemovableVisitor for Counted<'_, '_, '_> {
    type Output = ();
    fn visit<F: Variant + Removable>(self) {
        let (n, p) = (self.meta.n, self.meta.p.expect("filters have a rate"));
        let (mut f, bytes, t) = measure_build(|| {
            let mut f = F::sized_for(n, p)
                .unwrap_or_else(|e| panic!("{} for n = {n}, p = {p}: {e}", self.meta.structure));
            for k in self.inserted {
                f.insert_bytes(k.as_bytes());
            }
            f
        });
        // `lookups` checks that every present key is found and records the memory and FPR.
        self.suite
            .lookups(&self.meta, (bytes, t), self.w, |k: &str| {
                f.contains_bytes(k.as_bytes())
            });
        let before = (
            f.saturated_counters(),
            count_hits(self.w.absent, |k| f.contains_bytes(k.as_bytes())),
        );
        self.suite.cycles(
            &self.meta,
            self.members,
            &mut f,
            &mut |f: &mut F, k: &str| f.remove_bytes(k.as_bytes()),
            &mut |f: &mut F, k: &str| {
                f.insert_bytes(k.as_bytes());
                true
            },
        );
        // The cycles undo every operation they time: the filter must answer as before.
        let after = (
            f.saturated_counters(),
            count_hits(self.w.absent, |k| f.contains_bytes(k.as_bytes())),
        );
        let found = count_hits(self.w.present, |k| f.contains_bytes(k.as_bytes()));
        assert!(
            before == after && found == self.w.present.len() as u64,
            "{}, n = {n}: after the insert and remove cycles, (saturated counters, absent keys \
             reported present) went from {before:?} to {after:?} and {found} of {} present keys \
             are found",
            self.meta.label(),
            self.w.present.len()
        );
    }
}
