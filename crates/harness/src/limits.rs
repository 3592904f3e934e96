//! Bounds shared by the sweep, the gate, the preflight checks, the trial runner, the group key
//! store, the timing phase and the scale run. They live here, not in the first file that needed
//! them, so that those files import a leaf module instead of each other.

/// The largest count (n, members, queries, false positives) any input may give: 2^53. Counts go
/// through `f64` (scientific notation on the command line, `round(n * overfill)`, rates), and
/// 2^53 is the largest integer below which every integer is an exact `f64`.
pub const MAX_COUNT: u64 = 1 << 53;

/// The largest overfill factor. A filter sized for n at its optimal k (k = (m/n) ln 2) has a
/// fraction 2^-x of its bits still clear after x n inserts, so its theoretical FPR is
/// (1 - 2^-x)^k >= 1 - k 2^-x; with k <= 255 < 2^8, at x = 64 that is within 2^-56 of 1, which
/// rounds to exactly 1.0 in `f64` (whose spacing below 1 is 2^-53). Beyond it a row could only
/// confirm that every query hits, at the cost of 64 n inserts or more.
pub const MAX_OVERFILL: f64 = 64.0;

/// How many worker threads a sweep may start per core. The statistical trials are pure CPU work,
/// so threads beyond the cores only take turns on them (results never depend on the count); 4 per
/// core leaves room to try oversubscription, while `--threads 20000` (20000 stacks and a thread
/// start each, before any work) is refused instead of crawling for minutes.
pub const THREADS_PER_CORE: usize = 4;

/// The largest `threads` setting on this machine: [`THREADS_PER_CORE`] x the cores the process
/// may use (at least 1 core).
pub fn max_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    THREADS_PER_CORE * cores
}
/// Keys generated per batch: bounds a trial's key memory whatever its query count.
pub const GEN_BATCH: usize = 1 << 16;
