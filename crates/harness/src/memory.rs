//! Heap memory measured, not estimated: a counting global allocator, and the record schema the
//! criterion bench writes and `bench-table` reads.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

/// A global allocator that forwards to [`System`] and counts live requested heap bytes, so that a
/// binary can measure what a data structure holds (the sweep's `HashSet` baseline). Install it
/// with `#[global_allocator]` and read the count with [`CountingAlloc::live_bytes`].
pub struct CountingAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);

impl CountingAlloc {
    /// Bytes currently allocated through this allocator (requested sizes, not allocator
    /// overhead). Meaningful only in a binary that installed it.
    pub fn live_bytes() -> usize {
        LIVE.load(Ordering::Relaxed)
    }
}

// SAFETY: every call forwards to `System` with the caller's arguments unchanged; the counter is
// bookkeeping only.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            LIVE.fetch_add(new_size, Ordering::Relaxed);
        }
        p
    }
}

/// File name of the bench's memory log inside the criterion directory.
pub const BENCH_MEMORY_FILE: &str = "bloom_vs_hashset-memory.json";

/// One structure the `bloom_vs_hashset` bench built for one key set: what `bench-table` joins with
/// criterion's timings, by (`keys`, `label`, `n`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRecord {
    /// `"str"` or `"u64"`.
    pub keys: String,
    /// The criterion function id: structure name plus ` p=<percent>%` for filters.
    pub label: String,
    /// Structure name without the rate.
    pub structure: String,
    /// `"bloomlab"`, `"hashset"` or `"crate"`.
    pub family: String,
    /// Target false-positive rate; `None` for exact sets.
    pub p: Option<f64>,
    /// Keys inserted.
    pub n: u64,
    /// Live heap bytes held after the build (allocator's count, strings included).
    pub heap_bytes: u64,
    /// Wall time of the one build, divided by n (a single run, not a criterion estimate).
    pub build_ns_per_key: f64,
    /// Absent keys of the lookup batch reported present, over the batch size.
    pub observed_fpr: f64,
    /// Size of the absent batch the FPR was observed on.
    pub absent_batch: u64,
}

/// One paired comparison the `bloom_vs_hashset` bench makes right after criterion measures a
/// lookup: short timed runs of the structure and of the exact-set reference (std `HashSet` on the
/// same batch), alternated round by round, so both see the same state of a shared machine. Joined
/// with criterion's results by (`group`, `label`, `n`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedRecord {
    /// The criterion group of the measured lookup, e.g. `lookup-absent-str`.
    pub group: String,
    /// The structure's criterion function id.
    pub label: String,
    /// Keys inserted.
    pub n: u64,
    /// The reference's label (its own one-by-one lookups of the same kind of key).
    pub reference: String,
    /// Per round: the reference's ns per lookup.
    pub reference_ns: Vec<f64>,
    /// Per round: the structure's ns per lookup, timed next to `reference_ns` of the same round.
    pub structure_ns: Vec<f64>,
}

impl PairedRecord {
    /// Per round, `reference ns / structure ns` (rounds with a zero time left out).
    pub fn ratios(&self) -> impl Iterator<Item = f64> + '_ {
        self.reference_ns
            .iter()
            .zip(&self.structure_ns)
            .map(|(r, s)| r / s)
            .filter(|x| x.is_finite())
    }

    /// The median of [`ratios`](Self::ratios): how many times faster than the reference, each
    /// round's pair measured within milliseconds of each other. `None` without rounds.
    pub fn speedup(&self) -> Option<f64> {
        Some(crate::stats::median(self.ratios())).filter(|x| x.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_speedup_is_the_median_of_the_rounds_ratios() {
        let record = |reference_ns: Vec<f64>, structure_ns: Vec<f64>| PairedRecord {
            group: "lookup-absent-str".into(),
            label: "sbbf/xxh3 p=1%".into(),
            n: 1000,
            reference: "std HashSet<String>".into(),
            reference_ns,
            structure_ns,
        };
        // Ratios 2, 10, 4: the median is 4 (the ratio of the medians would be 100/20 = 5).
        let r = record(vec![100.0, 200.0, 80.0], vec![50.0, 20.0, 20.0]);
        assert_eq!(r.ratios().collect::<Vec<_>>(), vec![2.0, 10.0, 4.0]);
        assert_eq!(r.speedup(), Some(4.0));
        // A zero-length round is left out; no rounds, no speedup.
        assert_eq!(
            record(vec![10.0, 30.0], vec![0.0, 10.0]).speedup(),
            Some(3.0)
        );
        assert_eq!(record(Vec::new(), Vec::new()).speedup(), None);
    }
}
