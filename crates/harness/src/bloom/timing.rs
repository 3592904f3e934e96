//! Indicative per-key timings of a filter and of a `std::collections::HashSet` holding the same
//! keys. Each figure is the median over several passes, each over its own slice of a
//! pre-generated batch ([`pass_range`]), with every result passed through `std::hint::black_box`. The criterion benches are the authority on speed;
//! these numbers put each sweep row in context.
//!
//! Who owns what: this module is the sweep's own, indicative timing (no criterion, so a sweep runs
//! anywhere), with its own `HashSet` baseline built from the row's key set. The criterion bench
//! (`benches/bloom_vs_hashset`) owns the authoritative timing and its own reference sets, each
//! called as its concrete type. Both draw their keys from [`crate::keys`], the one generator.

use std::collections::HashSet;
use std::hint::black_box;
use std::time::Instant;

use bloomlab_filters::Filter;

use crate::keys::{Batch, KeySet};
use crate::subject::MeasuredFilter;

/// The calling thread's heap bytes (allocated less freed, wrapping), as a counting global
/// allocator in the binary reports them ([`crate::memory::CountingAlloc::thread_bytes`]): their
/// change across building a set on one thread is the set's size, whatever other threads do.
pub type HeapBytes = fn() -> usize;

/// Longest timing batch: enough keys to spread over a large filter's memory, few enough to keep a
/// pass short.
pub const TIMING_BATCH: u64 = 1 << 16;

/// Present and absent key batches for one (key set, members) group.
#[derive(Debug, Clone)]
pub struct TimingBatches {
    /// The first members.
    pub present: Batch,
    /// The first non-members.
    pub absent: Batch,
}

impl TimingBatches {
    /// Up to [`TIMING_BATCH`] members and as many non-members (fewer if a key file runs out).
    pub fn new(keys: &KeySet, members: u64) -> Self {
        let len = members.min(TIMING_BATCH) as usize;
        let mut present = keys.new_batch();
        keys.fill(0, len, &mut present);
        let mut absent = keys.new_batch();
        keys.fill(members, len, &mut absent);
        Self { present, absent }
    }

    /// Up to [`TIMING_BATCH`] of the given members (by index) and as many never-inserted keys
    /// from index `absent_from` on: for workloads, whose members are not `0..members`.
    pub fn of_members(keys: &KeySet, members: &[u64], absent_from: u64) -> Self {
        let len = members.len().min(TIMING_BATCH as usize);
        let mut present = keys.new_batch();
        keys.fill_at(members[..len].iter().copied(), &mut present);
        let mut absent = keys.new_batch();
        keys.fill(absent_from, len, &mut absent);
        Self { present, absent }
    }
}

/// Median nanoseconds per key of one filter (see [`time_filter`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FilterTiming {
    /// Re-inserting the present batch into the filled filter.
    pub insert_ns: f64,
    /// Looking up the present batch in the filled filter.
    pub present_ns: f64,
    /// Looking up the absent batch in the filled filter.
    pub absent_ns: f64,
}

/// A filled filter kept for its row's timing phase, its concrete type erased.
///
/// The sweep visits the registry once per row ([`crate::bloom::trial::run`]): the visit runs the
/// statistics on the concrete filter type and hands the filled filter back as a
/// `Box<dyn TimeRow>`. The blanket implementation for every [`Filter`] is [`time_filter`]
/// monomorphised for that type, so timing a row costs one dynamic call and the timed loops none;
/// nothing is downcast and the registry is not visited again.
pub trait TimeRow: Send {
    /// Times the filter, which holds all of its row's members (see [`time_filter`]).
    fn time(&mut self, batches: &TimingBatches, passes: usize) -> FilterTiming;
}

impl<F: Filter> TimeRow for F {
    fn time(&mut self, batches: &TimingBatches, passes: usize) -> FilterTiming {
        time_filter(self, batches, passes)
    }
}

/// Fewest keys a timed pass walks: a batch shorter than `passes` times this is walked whole by
/// every pass.
pub const MIN_PASS_KEYS: usize = 2048;

/// The keys pass `i` of `passes` walks in a batch of `len` keys: consecutive, disjoint slices
/// covering the batch when it holds at least `passes` x [`MIN_PASS_KEYS`] keys, else the whole
/// batch. Disjoint slices mean no pass walks the cache lines an earlier pass loaded (a large
/// filter is timed against memory, not against the lines the previous pass left in cache), and
/// the timing phase walks each batch once in all rather than once per pass.
pub fn pass_range(i: usize, passes: usize, len: usize) -> std::ops::Range<usize> {
    let passes = passes.max(1);
    if len < passes * MIN_PASS_KEYS {
        return 0..len;
    }
    (i * len / passes)..((i + 1) * len / passes)
}

/// Nanoseconds per key of `pass` over the keys of its range ([`pass_range`]), median over
/// `passes` runs (0 for an empty batch).
fn per_key(passes: usize, keys: usize, mut pass: impl FnMut(std::ops::Range<usize>)) -> f64 {
    if keys == 0 {
        return 0.0;
    }
    let passes = passes.max(1);
    // A plain loop into a Vec, then the median of a Vec: this function is compiled once per
    // timed loop (every variant's insert, present and absent pass), and a median over a lazy
    // iterator carrying `pass` compiled its sort and filter into each of them as well.
    let mut times = Vec::with_capacity(passes);
    for i in 0..passes {
        let range = pass_range(i, passes, keys);
        let walked = range.len();
        let t = Instant::now();
        pass(range);
        times.push(t.elapsed().as_nanos() as f64 / walked as f64);
    }
    crate::stats::median_of(times)
}

/// Times `filled`, a filter already holding all members.
///
/// Inserts are timed by re-inserting the present batch into `filled`: the same hashing and the
/// same memory writes as a first insert, at the filter's real size, but without the first-touch
/// page faults a freshly allocated array takes (those are an allocator effect, not the filter's).
/// Re-inserting members leaves the filter unchanged.
pub fn time_filter<F: Filter>(
    filled: &mut F,
    batches: &TimingBatches,
    passes: usize,
) -> FilterTiming {
    time_with(
        filled,
        batches,
        passes,
        |f, b| f.insert_bytes(b),
        |f, b| f.contains_bytes(b),
    )
}

/// [`time_filter`] for a filter measured through [`MeasuredFilter`] (an adapter's: one dynamic
/// call per key, which its timing includes).
pub fn time_measured(
    filled: &mut dyn MeasuredFilter,
    batches: &TimingBatches,
    passes: usize,
) -> FilterTiming {
    time_with(
        filled,
        batches,
        passes,
        |f, b| f.insert(b),
        |f, b| f.contains(b),
    )
}

/// The re-insert and lookup timings of `filled` through `insert` and `contains`, monomorphised
/// for the caller's type.
fn time_with<T: ?Sized>(
    filled: &mut T,
    batches: &TimingBatches,
    passes: usize,
    insert: impl Fn(&mut T, &[u8]),
    contains: impl Fn(&T, &[u8]) -> bool,
) -> FilterTiming {
    let insert_ns = per_key(passes, batches.present.len(), |range| {
        batches
            .present
            .for_each_bytes_in(range, |b| insert(filled, black_box(b)));
        black_box(&*filled);
    });
    let (present_ns, absent_ns) = time_lookups(&*filled, batches, passes, contains);
    FilterTiming {
        insert_ns,
        present_ns,
        absent_ns,
    }
}

/// Median ns per lookup of the present and the absent batch in `target`, through `contains`
/// (monomorphised for the caller's type: no dynamic call in the timed loop). For structures whose
/// inserts change their state on a repeated key (a counting or scalable filter), which is why
/// [`time_filter`]'s re-insert timing cannot be used on them.
pub fn time_lookups<T: ?Sized>(
    target: &T,
    batches: &TimingBatches,
    passes: usize,
    contains: impl Fn(&T, &[u8]) -> bool,
) -> (f64, f64) {
    let lookup = |batch: &Batch| {
        per_key(passes, batch.len(), |range| {
            black_box(batch.count_in(range, |b| black_box(contains(target, black_box(b)))));
        })
    };
    (lookup(&batches.present), lookup(&batches.absent))
}

/// A `HashSet` of a group's members: `HashSet<u64>` for integer keys, `HashSet<String>` else.
#[derive(Debug)]
pub enum HashSetBaseline {
    /// Integer keys.
    U64(HashSet<u64>),
    /// String keys.
    Str(HashSet<String>),
}

impl Drop for HashSetBaseline {
    /// Frees a string set's strings in the order of their addresses rather than in the table's
    /// (hash) order, in which every free touches a cold allocator header: the strings were
    /// allocated one after another, so in address order the frees walk memory forwards. The
    /// sweep drops a group's set between its timing and the next group, with one core idle: at
    /// 10^6 strings, 0.32-0.37 s per set in table order, 0.09-0.10 s in address order (default
    /// sweep, measure build, AMD EPYC family 25 model 17).
    fn drop(&mut self) {
        if let HashSetBaseline::Str(set) = self {
            let mut strings: Vec<String> = std::mem::take(set).into_iter().collect();
            strings.sort_unstable_by_key(|s| s.as_ptr() as usize);
        }
    }
}

impl HashSetBaseline {
    /// Builds the set of members `0..members` (sized up front, the usual practice) and returns it
    /// with the heap bytes it holds, measured as the change in `heap()` (the calling thread's
    /// count) across building it on this thread (table plus the strings' own bytes), or 0 when no
    /// counter is given. Other threads may allocate meanwhile: the sweep builds the set while
    /// the group's statistics run.
    pub fn build(keys: &KeySet, members: u64, heap: Option<HeapBytes>) -> (Self, u64) {
        let before = heap.map(|h| h());
        let set = {
            let mut batch = keys.new_batch();
            let mut set = match batch {
                Batch::U64(_) => HashSetBaseline::U64(HashSet::with_capacity(members as usize)),
                Batch::Str(_) => HashSetBaseline::Str(HashSet::with_capacity(members as usize)),
            };
            let mut start = 0;
            while start < members {
                let len = (members - start).min(crate::limits::GEN_BATCH as u64) as usize;
                keys.fill(start, len, &mut batch);
                match (&mut set, &batch) {
                    (HashSetBaseline::U64(s), Batch::U64(v)) => s.extend(v.iter().copied()),
                    (HashSetBaseline::Str(s), Batch::Str(v)) => {
                        s.extend(v.iter().map(String::from))
                    }
                    _ => unreachable!("a key set's batches all have one representation"),
                }
                start += len as u64;
            }
            set
            // The batch buffer is dropped here, before measuring.
        };
        let bytes = match (heap, before) {
            (Some(h), Some(b)) => h().wrapping_sub(b) as u64,
            _ => 0,
        };
        (set, bytes)
    }

    /// Median ns per key for the present and absent batches.
    pub fn time(&self, batches: &TimingBatches, passes: usize) -> (f64, f64) {
        let lookup = |batch: &Batch| {
            per_key(passes, batch.len(), |range| {
                let hits = match (self, batch) {
                    (HashSetBaseline::U64(s), Batch::U64(v)) => v[range]
                        .iter()
                        .filter(|k| s.contains(black_box(*k)))
                        .count(),
                    (HashSetBaseline::Str(s), Batch::Str(v)) => v
                        .iter_in(range)
                        .filter(|k| s.contains(black_box(*k)))
                        .count(),
                    _ => unreachable!("a key set's batches all have one representation"),
                };
                black_box(hits);
            })
        };
        (lookup(&batches.present), lookup(&batches.absent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_walk_disjoint_slices_covering_a_long_batch() {
        let len = 65_536 + 3;
        let ranges: Vec<_> = (0..5).map(|i| pass_range(i, 5, len)).collect();
        assert_eq!(ranges[0].start, 0);
        assert_eq!(ranges[4].end, len);
        for w in ranges.windows(2) {
            assert_eq!(w[0].end, w[1].start, "consecutive and disjoint: {ranges:?}");
        }
        assert!(ranges.iter().all(|r| r.len() >= MIN_PASS_KEYS));
    }

    #[test]
    fn a_short_batch_is_walked_whole_by_every_pass() {
        let len = 5 * MIN_PASS_KEYS - 1;
        assert!((0..5).all(|i| pass_range(i, 5, len) == (0..len)));
        assert_eq!(pass_range(0, 0, 10), 0..10);
    }

    #[test]
    fn a_range_of_string_keys_is_the_same_keys_as_the_whole_batch_there() {
        let keys = KeySet::new(crate::keys::KeySetKind::Url, 1).expect("url keys");
        let mut batch = keys.new_batch();
        keys.fill(0, 100, &mut batch);
        let Batch::Str(s) = &batch else {
            panic!("url keys are strings")
        };
        let whole: Vec<&str> = s.iter().collect();
        for range in [0..0, 0..1, 3..40, 99..100, 0..100] {
            let part: Vec<&str> = s.iter_in(range.clone()).collect();
            assert_eq!(part, whole[range.clone()], "range {range:?}");
            assert_eq!(batch.count_in(range.clone(), |_| true), range.len() as u64);
        }
    }
}
