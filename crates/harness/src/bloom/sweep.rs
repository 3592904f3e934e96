//! The sweep: a plan of rows (filters x key sets x n x p x overfill, possibly several such grids)
//! and a runner that executes them.
//!
//! Rows are grouped by (key set, members inserted). Within a group the statistical trials run in
//! parallel, reading the group's keys from one [`GroupKeys`] (each key generated once for all of
//! the group's rows, up to [`GROUP_KEY_BYTES`]); then the group's timings run, by default one row
//! at a time with nothing else running, so that concurrent rows do not distort each other's
//! timings (`timing_threads` times several at once), and the group's `HashSet` baseline, built
//! once beside the group's statistical trials, is timed with them and shared by its rows. Every
//! statistical column is a pure function of the configuration and the row's coordinates (the
//! only randomness is the key set, seeded from the run seed and the key set's name, so every
//! filter in a group sees the same keys): results do not depend on the thread count or on the
//! order rows run in. Timing columns vary from run to run.
//!
//! Each row visits the registry once ([`trial::run_in_group`]): the visit, monomorphised for the
//! row's variant, runs the statistics and hands back the filled filter as a
//! [`TimeRow`](crate::bloom::timing::TimeRow), whose one method times it with loops monomorphised for its
//! type. The group's timing phase calls it after every statistical trial of the group has
//! finished, so statistics never run beside a timed row.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bloomlab_filters::error::Compact;
use bloomlab_filters::{
    AtomicBits, Blocked512, Bloom, Counting4, Counting8, EnhancedDoubleHash, FlatBits, Fnv1a,
    GuavaMitz32, GuavaMitz64, KirschMitzenmacher, Lookup3, Murmur3, Scalable, SplitBlock,
    TextbookCountingFnv1aI32, TextbookFnv1aI32, TextbookScalable, Xxh3, Xxh3Wide, Xxh64,
};
use rayon::prelude::*;

use crate::bloom::row::SweepRow;
use crate::bloom::timing::{HashSetBaseline, HeapBytes, TimingBatches};
use crate::bloom::trial::{self, Lookup, Sampling, TrialSpec};
use crate::bloom::workload;
pub use crate::bloom::workload::WorkloadSettings;
use crate::error::HarnessError;
use crate::keys::group::{GROUP_KEY_BYTES, GroupKeys, Part};
use crate::keys::{KeySet, KeySetKind};
use crate::limits::{MAX_COUNT, MAX_OVERFILL, THREADS_PER_CORE, max_threads};
use crate::stats::check_confidence;
use crate::subject::{GROWABLE_PEER, Selection, Subject};

/// One cross product of coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// The subjects, or all that can run the workload.
    pub filters: Selection,
    /// Key sets.
    pub key_sets: Vec<KeySetKind>,
    /// Sized-for counts.
    pub n: Vec<u64>,
    /// Target false-positive rates.
    pub p: Vec<f64>,
    /// Inserted / n factors.
    pub overfill: Vec<f64>,
}

impl Grid {
    /// The grid's subjects, `all` expanded to every subject that can run `workload` (with the
    /// growing adapters, for grow).
    fn filters_expanded(&self, workload: &WorkloadSettings) -> Vec<Subject> {
        match &self.filters {
            Selection::All => workload::subjects_for(workload),
            Selection::Only(v) => v.clone(),
        }
    }
}

/// Everything a sweep needs.
#[derive(Debug, Clone)]
pub struct SweepConfig {
    /// The grids; rows that occur in several grids run once.
    pub grids: Vec<Grid>,
    /// Sampling settings and row labels (seed, confidence, precision, query cap, revision).
    pub sampling: Sampling,
    /// Worker threads for the statistical trials (0: one per core).
    pub threads: usize,
    /// Whether to time rows (the timing columns are 0 otherwise).
    pub timing: bool,
    /// Timing passes per figure (the median is reported).
    pub timing_passes: usize,
    /// Rows timed at once: 1 (the default) times each row with nothing else running; 0 times as
    /// many rows at once as `threads`. Timing rows side by side on this project's 2-core machine
    /// made the figures 8% to 22% slower (median over the default sweep's rows, two runs) and
    /// saved about 10 s of its minute.
    pub timing_threads: usize,
    /// Live heap bytes, for measuring the `HashSet` baseline's memory (0 in rows when absent).
    pub heap_bytes: Option<HeapBytes>,
    /// The workload (static by default). Churn and grow rows are not timed.
    pub workload: WorkloadSettings,
    /// The lookup the false-positive engine counts non-members with (the same statistics either
    /// way; `queries_per_s_core` shows the difference).
    pub lookup: Lookup,
}

/// The filters of the default run: every layout, every hash, every index scheme and both stores
/// at least once, Guava's layout (`classic/murmur3/mitz64/flat`) and the textbook port.
pub fn default_filters() -> Vec<Subject> {
    vec![
        Subject::of::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>(),
        Subject::of::<Bloom<Xxh3, EnhancedDoubleHash, FlatBits>>(),
        Subject::of::<Bloom<Murmur3, GuavaMitz64, FlatBits>>(),
        Subject::of::<Bloom<Murmur3, GuavaMitz32, FlatBits>>(),
        Subject::of::<Bloom<Xxh64, KirschMitzenmacher, AtomicBits>>(),
        Subject::of::<Bloom<Fnv1a, KirschMitzenmacher, FlatBits>>(),
        Subject::of::<Bloom<Lookup3, KirschMitzenmacher, FlatBits>>(),
        Subject::of::<Blocked512<Xxh3>>(),
        Subject::of::<SplitBlock<Xxh3>>(),
        Subject::of::<SplitBlock<Xxh3Wide>>(),
        Subject::of::<TextbookFnv1aI32>(),
    ]
}

impl SweepConfig {
    /// Default settings around the given grids: seed 1, 95% confidence, +-10% precision, at most
    /// 2e7 queries per row, all cores, timing on with 5 passes one row at a time, no heap counter.
    pub fn with_grids(grids: Vec<Grid>) -> Self {
        Self {
            grids,
            sampling: Sampling::default(),
            threads: 0,
            timing: true,
            timing_passes: 5,
            timing_threads: 1,
            heap_bytes: None,
            workload: WorkloadSettings::Static,
            lookup: Lookup::default(),
        }
    }

    /// The default run: [`default_filters`] on every key set but files, n = 1e4..1e6 at
    /// p = 1e-1..1e-4; n = 1e7 at p = 1e-2 and 1e-4 on `random-u64`; and an overfill series
    /// (0.5x..3x) at n = 1e5, p = 1e-2 on `random-u64` and `article`.
    pub fn default_grids() -> Vec<Grid> {
        use KeySetKind::*;
        vec![
            Grid {
                filters: Selection::Only(default_filters()),
                key_sets: vec![RandomU64, Article, Url, Hex],
                n: vec![10_000, 100_000, 1_000_000],
                p: vec![0.1, 0.01, 0.001, 0.0001],
                overfill: vec![1.0],
            },
            Grid {
                filters: Selection::Only(default_filters()),
                key_sets: vec![RandomU64],
                n: vec![10_000_000],
                p: vec![0.01, 0.0001],
                overfill: vec![1.0],
            },
            Grid {
                filters: Selection::Only(default_filters()),
                key_sets: vec![RandomU64, Article],
                n: vec![100_000],
                p: vec![0.01],
                overfill: vec![0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0],
            },
        ]
    }

    /// A small grid that finishes in seconds: four filters (flat, blocked, split-block and the
    /// textbook port) on `random-u64` and `article`, n = 1e4 and 1e5, p = 0.1, 0.01 and 0.001, and
    /// overfill 0.5, 1 and 2 at n = 1e4, p = 0.01.
    pub fn quick_grids() -> Vec<Grid> {
        use KeySetKind::*;
        let filters = Selection::from([
            Subject::of::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>(),
            Subject::of::<Blocked512<Xxh3>>(),
            Subject::of::<SplitBlock<Xxh3>>(),
            Subject::of::<TextbookFnv1aI32>(),
        ]);
        vec![
            Grid {
                filters: filters.clone(),
                key_sets: vec![RandomU64, Article],
                n: vec![10_000, 100_000],
                p: vec![0.1, 0.01, 0.001],
                overfill: vec![1.0],
            },
            Grid {
                filters,
                key_sets: vec![RandomU64, Article],
                n: vec![10_000],
                p: vec![0.01],
                overfill: vec![0.5, 1.0, 2.0],
            },
        ]
    }

    /// The default grid of `--workload churn`: the counting layouts (4- and 8-bit counters) and the
    /// textbook counting port on `random-u64` and `article`, n = 1e5 (1e4 when `quick`),
    /// p = 0.01, as sized; and the chapter's overloaded filter (sized for n = 1e4 at p = 0.1 and
    /// holding 12n `article` keys), whose counters saturate.
    pub fn churn_grids(quick: bool) -> Vec<Grid> {
        let filters = Selection::from([
            Subject::of::<Counting4<Xxh3, KirschMitzenmacher>>(),
            Subject::of::<Counting8<Xxh3, KirschMitzenmacher>>(),
            Subject::of::<TextbookCountingFnv1aI32>(),
        ]);
        vec![
            Grid {
                filters: filters.clone(),
                key_sets: vec![KeySetKind::RandomU64, KeySetKind::Article],
                n: vec![if quick { 10_000 } else { 100_000 }],
                p: vec![0.01],
                overfill: vec![1.0],
            },
            Grid {
                filters,
                key_sets: vec![KeySetKind::Article],
                n: vec![if quick { 1_000 } else { 10_000 }],
                p: vec![0.1],
                overfill: vec![12.0],
            },
        ]
    }

    /// The default grid of `--workload grow`: the scalable filter over each layout family, the
    /// textbook scalable port, the `growable-bloom-filter` peer and one static classic filter (to
    /// show its blow-up), on `random-u64`, n0 = 1e4 (1e3 when `quick`), p = 0.01.
    pub fn grow_grids(quick: bool) -> Vec<Grid> {
        vec![Grid {
            filters: Selection::from([
                Subject::of::<Scalable<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>>(),
                Subject::of::<Scalable<Blocked512<Xxh3>>>(),
                Subject::of::<Scalable<SplitBlock<Xxh3>>>(),
                Subject::of::<Scalable<Counting4<Xxh3, KirschMitzenmacher>>>(),
                Subject::of::<TextbookScalable>(),
                GROWABLE_PEER,
                Subject::of::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>(),
            ]),
            key_sets: vec![KeySetKind::RandomU64],
            n: vec![if quick { 1_000 } else { 10_000 }],
            p: vec![0.01],
            overfill: vec![1.0],
        }]
    }

    /// Checks every setting; the error names the value and its allowed range.
    pub fn validate(&self) -> Result<(), HarnessError> {
        self.check_sampling()?;
        self.check_threads()?;
        if self.grids.is_empty() {
            return Err(HarnessError::invalid(
                "grids",
                "none",
                "at least one grid is needed",
            ));
        }
        match &self.workload {
            WorkloadSettings::Static => {}
            WorkloadSettings::Churn(c) => c.validate()?,
            WorkloadSettings::Grow(g) => {
                for grid in &self.grids {
                    for &n in &grid.n {
                        g.validate(n)?;
                    }
                }
            }
        }
        for g in &self.grids {
            self.check_grid(g)?;
        }
        Ok(())
    }

    /// The sampling settings: confidence in (0, 1), precision > 0, 1 to 2^53 queries.
    fn check_sampling(&self) -> Result<(), HarnessError> {
        let s = &self.sampling;
        check_confidence(s.confidence).map_err(|_| {
            HarnessError::invalid(
                "confidence",
                Compact(s.confidence),
                "must be in the open interval (0, 1)",
            )
        })?;
        if !(s.precision.is_finite() && s.precision > 0.0) {
            return Err(HarnessError::invalid(
                "precision",
                Compact(s.precision),
                "must be a finite number > 0 (relative half-width, e.g. 0.1 for +-10%)",
            ));
        }
        if !(1..=MAX_COUNT).contains(&s.max_queries) {
            return Err(HarnessError::invalid(
                "max-queries",
                s.max_queries,
                "must be a whole number, at least 1 and at most 2^53",
            ));
        }
        Ok(())
    }

    /// The thread counts (at most [`THREADS_PER_CORE`] per core) and timing passes (at least 1).
    fn check_threads(&self) -> Result<(), HarnessError> {
        let max_threads = max_threads();
        if self.threads > max_threads {
            return Err(HarnessError::invalid(
                "threads",
                self.threads,
                &format!(
                    "must be from 0 (one per core) to {max_threads} ({THREADS_PER_CORE} per core \
                     on this machine's {} cores; the trials are CPU-bound, so more threads only \
                     take turns)",
                    max_threads / THREADS_PER_CORE
                ),
            ));
        }
        if self.timing_threads > max_threads {
            return Err(HarnessError::invalid(
                "timing threads",
                self.timing_threads,
                &format!("must be from 0 (as many as the statistics) to {max_threads}"),
            ));
        }
        if self.timing_passes == 0 {
            return Err(HarnessError::invalid(
                "timing passes",
                0,
                "must be at least 1",
            ));
        }
        Ok(())
    }

    /// One grid: no empty list, every subject able to run the workload, and n, p and overfill in
    /// range (with the members they make).
    fn check_grid(&self, g: &Grid) -> Result<(), HarnessError> {
        for (what, empty) in [
            ("filters", g.filters.is_empty()),
            ("key sets", g.key_sets.is_empty()),
            ("n", g.n.is_empty()),
            ("p", g.p.is_empty()),
            ("overfill", g.overfill.is_empty()),
        ] {
            if empty {
                return Err(HarnessError::invalid(
                    what,
                    "an empty list",
                    "give at least one value",
                ));
            }
        }
        if let Selection::Only(subjects) = &g.filters {
            for &f in subjects {
                workload::check_capable(f, &self.workload)?;
            }
        }
        if let WorkloadSettings::Churn(c) = &self.workload {
            for &n in &g.n {
                for &o in &g.overfill {
                    let held = (n as f64 * o).round() as u64;
                    c.member_indices(held.max(1))?;
                }
            }
        }
        for &n in &g.n {
            if !(1..=MAX_COUNT).contains(&n) {
                return Err(HarnessError::invalid(
                    "n",
                    n,
                    "must be a whole number, at least 1 and at most 2^53",
                ));
            }
        }
        for &p in &g.p {
            if !(p.is_finite() && p > 0.0 && p < 1.0) {
                return Err(HarnessError::invalid(
                    "p",
                    Compact(p),
                    "must be in the open interval (0, 1)",
                ));
            }
        }
        for &o in &g.overfill {
            if !(o.is_finite() && o > 0.0 && o <= MAX_OVERFILL) {
                return Err(HarnessError::invalid(
                    "overfill",
                    Compact(o),
                    "must be > 0 and at most 64 (at 64x its n, a filter at its optimal k \
                     has a theoretical FPR of exactly 1.0 in double precision)",
                ));
            }
            for &n in &g.n {
                let members = (n as f64 * o).round();
                if !(1.0..=MAX_COUNT as f64).contains(&members) {
                    return Err(HarnessError::invalid(
                        "overfill",
                        Compact(o),
                        &format!(
                            "must make round(n * overfill) a whole number from 1 to 2^53 \
                             (n = {n} gives {})",
                            Compact(members)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Validates, reads key files, and lists the rows in grid order without duplicates.
    pub fn plan(&self) -> Result<Plan, HarnessError> {
        self.validate()?;
        let mut rows: Vec<PlannedRow> = Vec::new();
        let mut key_sets: HashMap<KeySetKind, KeySet> = HashMap::new();
        for g in &self.grids {
            for ks in &g.key_sets {
                if !key_sets.contains_key(ks) {
                    key_sets.insert(ks.clone(), KeySet::new(ks.clone(), self.sampling.seed)?);
                }
            }
            // Grow rows fix their own member counts: overfill does not apply.
            let overfills = match self.workload {
                WorkloadSettings::Grow(_) => vec![1.0],
                _ => g.overfill.clone(),
            };
            for filter in g.filters_expanded(&self.workload) {
                for ks in &g.key_sets {
                    for &n in &g.n {
                        for &p in &g.p {
                            for &overfill in &overfills {
                                let spec = TrialSpec {
                                    filter,
                                    n,
                                    p,
                                    overfill,
                                };
                                if let Some(file) = key_sets[ks].file() {
                                    file.check_members(spec.n_inserted())?;
                                }
                                // Refused sizes (k > 255, a Java-int bit count, ...) fail here,
                                // before any row runs; nothing is allocated.
                                spec.filter.sized_bytes(spec.n, spec.p)?;
                                let row = PlannedRow {
                                    spec,
                                    key_set: ks.clone(),
                                };
                                if !rows.contains(&row) {
                                    rows.push(row);
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(Plan { rows, key_sets })
    }
}

/// One planned row.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedRow {
    /// Filter, n, p, overfill.
    pub spec: TrialSpec,
    /// Key set.
    pub key_set: KeySetKind,
}

impl PlannedRow {
    /// A one-line label for progress displays.
    pub fn label(&self) -> String {
        format!(
            "{} {} n={} p={} x{}",
            self.spec.filter, self.key_set, self.spec.n, self.spec.p, self.spec.overfill
        )
    }
}

/// The rows of a sweep and their key sets.
#[derive(Debug)]
pub struct Plan {
    /// Rows in output order.
    pub rows: Vec<PlannedRow>,
    key_sets: HashMap<KeySetKind, KeySet>,
}

impl Plan {
    /// The key set of `kind`, if the plan uses it.
    pub fn key_set(&self, kind: &KeySetKind) -> Option<&KeySet> {
        self.key_sets.get(kind)
    }
}

/// Progress of a running sweep.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Rows finished (statistics and timing).
    pub done: usize,
    /// Rows planned.
    pub total: usize,
    /// What is running: a group's phase (`statistics: ...`, `timing: ...`) or the row just
    /// finished.
    pub current: String,
}

/// Runs the plan. `progress` is called when a group's statistics or timing phase starts and after
/// each row finishes (possibly from worker threads).
///
/// Returns the rows in plan order, or the first error (a false negative, a filter that cannot be
/// built at a size).
pub fn run(
    config: &SweepConfig,
    plan: &Plan,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Vec<SweepRow>, HarnessError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads)
        .build()
        .map_err(|e| HarnessError::invalid("threads", config.threads, &e.to_string()))?;
    let timing_pool = rayon::ThreadPoolBuilder::new()
        .num_threads(match config.timing_threads {
            0 => pool.current_num_threads(),
            t => t,
        })
        .build()
        .map_err(|e| {
            HarnessError::invalid("timing threads", config.timing_threads, &e.to_string())
        })?;
    let total = plan.rows.len();
    if config.workload != WorkloadSettings::Static {
        return run_workload(config, plan, &pool, progress);
    }
    let done = AtomicUsize::new(0);
    let report = |row: &PlannedRow| {
        let d = done.fetch_add(1, Ordering::Relaxed) + 1;
        progress(&Progress {
            done: d,
            total,
            current: row.label(),
        });
    };

    // Groups of row indices sharing (key set, members), in order of first appearance.
    let mut groups: Vec<((KeySetKind, u64), Vec<usize>)> = Vec::new();
    for (i, r) in plan.rows.iter().enumerate() {
        let key = (r.key_set.clone(), r.spec.n_inserted());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(i),
            None => groups.push((key, vec![i])),
        }
    }

    let mut out: Vec<Option<SweepRow>> = vec![None; total];
    for ((ks, members), indices) in groups {
        let keys = &plan.key_sets[&ks];
        let announce = |phase: &str| {
            progress(&Progress {
                done: done.load(Ordering::Relaxed),
                total,
                current: format!("{phase}: {ks}, {members} keys, {} rows", indices.len()),
            });
        };
        announce("statistics");
        let GroupStatistics { baseline, trials } =
            group_statistics(config, plan, &indices, keys, members, &pool, &|row| {
                if !config.timing {
                    report(row)
                }
            })?;
        if config.timing {
            announce("timing");
            let batches = TimingBatches::new(keys, members);
            let (set, set_bytes) = baseline.expect("the baseline is built when timing");
            let passes = config.timing_passes;
            let (mut filters, mut rows): (Vec<_>, Vec<_>) =
                trials.into_iter().map(|t| (t.filter, t.row)).unzip();
            // The baseline and the rows, `timing_threads` at a time (the baseline first).
            let ((hs_present, hs_absent), timings) = timing_pool.install(|| {
                rayon::join(
                    || set.time(&batches, passes),
                    || {
                        filters
                            .par_iter_mut()
                            .map(|f| f.time(&batches, passes))
                            .collect::<Vec<_>>()
                    },
                )
            });
            drop((set, filters));
            for ((&i, mut row), timing) in indices.iter().zip(rows.drain(..)).zip(timings) {
                row.insert_ns = timing.insert_ns;
                row.lookup_present_ns = timing.present_ns;
                row.lookup_absent_ns = timing.absent_ns;
                row.hashset_present_ns = hs_present;
                row.hashset_absent_ns = hs_absent;
                row.hashset_memory_bytes = set_bytes;
                out[i] = Some(row);
                report(&plan.rows[i]);
            }
        } else {
            for (&i, t) in indices.iter().zip(trials) {
                let mut row = t.row;
                // A speed, like the timing columns: without timing every column is a pure
                // function of the configuration.
                row.queries_per_s_core = 0.0;
                out[i] = Some(row);
            }
        }
    }
    Ok(out
        .into_iter()
        .map(|r| r.expect("every planned row ran"))
        .collect())
}

/// A group's statistics phase: every row's trial (its statistics and its filled filter, in the
/// group's row order) and, when timing, the group's `HashSet` baseline.
///
/// The group's keys are generated once for all of its rows ([`GroupKeys`]): the members, which
/// every row reads first, and the non-members the longest row expects to query, on every thread
/// at once, rather than a chunk at a time by whichever row asks first while the others wait.
/// Then each thread of `pool` takes the next job from one list until none is left: the baseline
/// first (one of the longest jobs: building a `HashSet` of the members, which no row waits for),
/// then the rows, longest first by their expected work, so that the group does not end with one
/// long row running while the other threads idle. A list taken in order schedules longest first
/// as written (a parallel iterator splits the list in halves, one per thread). Each result goes
/// back to its row's place, so the order changes no output. `finished` is called after each row.
fn group_statistics(
    config: &SweepConfig,
    plan: &Plan,
    indices: &[usize],
    keys: &KeySet,
    members: u64,
    pool: &rayon::ThreadPool,
    finished: &(dyn Fn(&PlannedRow) + Sync),
) -> Result<GroupStatistics, HarnessError> {
    enum Job {
        Baseline,
        Row(usize),
    }
    let group = GroupKeys::new(keys, members, config.sampling.max_queries, GROUP_KEY_BYTES);
    let spec = |j: usize| &plan.rows[indices[j]].spec;
    let cost: Vec<f64> = (0..indices.len())
        .map(|j| expected_work(spec(j), &config.sampling))
        .collect();
    let most_queries = (0..indices.len())
        .map(|j| expected_queries(spec(j), &config.sampling))
        .fold(0.0, f64::max) as u64;
    let mut order: Vec<usize> = (0..indices.len()).collect();
    order.sort_by(|&a, &b| cost[b].total_cmp(&cost[a]));
    let jobs: Vec<Job> = config
        .timing
        .then_some(Job::Baseline)
        .into_iter()
        .chain(order.into_iter().map(Job::Row))
        .collect();
    pool.install(|| {
        group.prefill(Part::Members, members);
        group.prefill(Part::NonMembers, most_queries);
    });
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    // Each thread's share: the baseline if it built it, and its rows' trials by row.
    let per_thread = pool.broadcast(|_| {
        let mut baseline = None;
        let mut done = Vec::new();
        while !failed.load(Ordering::Relaxed) {
            let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) else {
                break;
            };
            match *job {
                Job::Baseline => {
                    baseline = Some(HashSetBaseline::build(keys, members, config.heap_bytes))
                }
                Job::Row(j) => {
                    let row = &plan.rows[indices[j]];
                    match trial::run_in_group(&row.spec, &group, &config.sampling, config.lookup) {
                        Ok(t) => {
                            finished(row);
                            done.push((j, t));
                        }
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                    }
                }
            }
        }
        Ok((baseline, done))
    });
    let mut baseline = None;
    let mut placed: Vec<Option<trial::Trial>> = (0..indices.len()).map(|_| None).collect();
    for share in per_thread {
        let (built, done) = share?;
        baseline = baseline.or(built);
        for (j, t) in done {
            placed[j] = Some(t);
        }
    }
    let trials = placed
        .into_iter()
        .map(|t| t.expect("every row of the group ran"))
        .collect();
    Ok(GroupStatistics { baseline, trials })
}

/// What [`group_statistics`] gives back.
struct GroupStatistics {
    /// The group's `HashSet` baseline and its heap bytes (when timing).
    baseline: Option<(HashSetBaseline, u64)>,
    /// Every row's trial, in the group's row order.
    trials: Vec<trial::Trial>,
}

/// A row's expected work, in keys handled, for ordering a group's rows (it changes no result):
/// its members, inserted and checked, and the non-members its sampling expects to query before
/// the interval reaches the requested precision at the target rate (the normal approximation
/// [`trial::sample_adaptively`] steps by), at most the query cap.
fn expected_work(spec: &TrialSpec, sampling: &Sampling) -> f64 {
    2.0 * spec.n_inserted() as f64 + expected_queries(spec, sampling)
}

/// The non-members a row's sampling expects to query: the normal approximation of the queries
/// that bring the interval to the requested precision at the target rate, at most the query cap.
fn expected_queries(spec: &TrialSpec, sampling: &Sampling) -> f64 {
    let z = crate::stats::two_sided_z(sampling.confidence);
    crate::stats::normal_queries(z, spec.p.clamp(1e-300, 1.0), sampling.precision)
        .min(sampling.max_queries as f64)
}

/// Runs a churn or grow plan: every planned row in parallel, each giving its rows (one per round or
/// growth step), concatenated in plan order. Timed inside each row when `config.timing` holds
/// (lookups after each round or step; see [`workload`]'s module docs).
fn run_workload(
    config: &SweepConfig,
    plan: &Plan,
    pool: &rayon::ThreadPool,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Vec<SweepRow>, HarnessError> {
    let total = plan.rows.len();
    let done = AtomicUsize::new(0);
    let per_row: Vec<Vec<SweepRow>> = pool.install(|| {
        plan.rows
            .par_iter()
            .map(|row| {
                let keys = &plan.key_sets[&row.key_set];
                let run = workload::NamedRun {
                    spec: &row.spec,
                    keys,
                    sampling: &config.sampling,
                    timing_passes: if config.timing {
                        config.timing_passes
                    } else {
                        0
                    },
                };
                let rows = workload::run_named(&run, &config.workload);
                let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(&Progress {
                    done: d,
                    total,
                    current: row.label(),
                });
                rows
            })
            .collect::<Result<_, _>>()
    })?;
    Ok(per_row.into_iter().flatten().collect())
}
