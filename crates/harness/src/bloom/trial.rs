//! One trial: build a filter, insert members, prove there are no false negatives, then query
//! non-members until the false-positive rate is known to the requested precision.
//!
//! [`run`] is the sweep's one registry visit per row: monomorphised for the row's variant, it
//! builds, fills and samples the filter, and returns the row with the filled filter as a
//! [`TimeRow`], ready for the row's timing phase without a second visit or a downcast.

use std::ops::Range;

use bloomlab_filters::filter::count_pipelined;
use bloomlab_filters::{BloomError, Digest, Filter, Layout, Spec, Variant, VariantVisitor};

use crate::bloom::row::{SweepRow, Workload};
use crate::bloom::timing::{FilterTiming, TimeRow, TimingBatches};
use crate::clock::CoreClock;
use crate::error::HarnessError;
use crate::keys::group::{GroupKeys, Part};
use crate::keys::{Batch, KeySet};
use crate::limits::GEN_BATCH;
use crate::stats::{clopper_pearson, wilson};
use crate::subject::{MeasuredFilter, Subject};

pub use crate::subject::Shape;

// Re-exported for the modules that still name it here; its home is `crate::limits`.
/// Smallest adaptive query step.
const MIN_STEP: u64 = 1 << 12;
/// Largest adaptive query step, so that a step never overshoots the target by much.
const MAX_STEP: u64 = 1 << 22;

/// Which lookup the false-positive engine counts non-members with. Both give the same answer for
/// every key, so a row's statistics do not depend on it (only its `queries_per_s_core`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lookup {
    /// [`Filter::count_present`]: each key's probes stop at the first clear bit (the default: on
    /// the flat layout a non-member reads about 2 of its k words, a probe of every key per round).
    #[default]
    EarlyExit,
    /// [`Filter::contains_digest`]: the branch-free lookup the timing columns measure.
    BranchFree,
}

impl Lookup {
    /// The names `--lookup` accepts.
    pub const ALLOWED: &'static str = "early-exit, branch-free";

    /// The name `--lookup` takes.
    pub const fn as_str(self) -> &'static str {
        match self {
            Lookup::EarlyExit => "early-exit",
            Lookup::BranchFree => "branch-free",
        }
    }
}

impl std::str::FromStr for Lookup {
    type Err = HarnessError;
    fn from_str(s: &str) -> Result<Self, HarnessError> {
        [Lookup::EarlyExit, Lookup::BranchFree]
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| {
                HarnessError::invalid(
                    "lookup",
                    format!("{s:?}"),
                    "must be early-exit or branch-free",
                )
            })
    }
}

/// Keys hashed before their lookups in [`count_found`]: a batch's digests are computed a chunk
/// at a time into a stack array that stays in L1, then counted together.
const CHUNK: usize = 256;

/// How many keys of `batch` `filter` reports present, through the lookup `lookup`: the count one
/// `contains_bytes` per key gives, computed a chunk of digests at a time. Early exit counts each
/// chunk with [`Filter::count_present`] (the layout's fastest way, probe by probe on the flat
/// layout); branch-free runs [`Filter::contains_digest`] on each digest with the memory of the
/// digest [`LOOKAHEAD`](bloomlab_filters::filter::LOOKAHEAD) places on prefetched. No allocation.
#[inline]
pub fn count_found<F: Filter + ?Sized>(filter: &F, batch: &Batch, lookup: Lookup) -> u64 {
    count_found_in(filter, batch, 0..batch.len(), lookup)
}

/// [`count_found`] over the keys at positions `range` of `batch`.
#[inline]
pub fn count_found_in<F: Filter + ?Sized>(
    filter: &F,
    batch: &Batch,
    range: Range<usize>,
    lookup: Lookup,
) -> u64 {
    let mut found = 0;
    match lookup {
        Lookup::EarlyExit => {
            each_chunk::<F, true>(filter, batch, range, |ds| found += filter.count_present(ds))
        }
        Lookup::BranchFree => each_chunk::<F, true>(filter, batch, range, |ds| {
            found += count_pipelined(
                ds,
                |d| filter.prefetch_digest(d),
                |d| filter.contains_digest(d),
            )
        }),
    }
    found
}

/// Inserts the keys at positions `range` of `batch`, in order: the filter `insert_bytes` on each
/// would give, a chunk of digests at a time through [`Filter::insert_digests`] (which overlaps
/// the memory accesses of a filter larger than the cache).
pub fn insert_all<F: Filter + ?Sized>(filter: &mut F, batch: &Batch, range: Range<usize>) {
    let mut digests = [Digest::from_halves(0, 0); CHUNK];
    let mut filled = 0;
    batch.for_each_bytes_in(range, |b| {
        digests[filled] = filter.digest(b);
        filled += 1;
        if filled == CHUNK {
            filter.insert_digests(&digests);
            filled = 0;
        }
    });
    filter.insert_digests(&digests[..filled]);
}

/// Calls `each` with the digests of the keys at positions `range` of `batch`, [`CHUNK`] at a
/// time (the last chunk shorter), from a stack array that stays in L1; prefetching the keys
/// ahead when `AHEAD` holds ([`Batch::for_each_bytes_in_ahead`]): for the non-member sampling,
/// whose keys were stored before the row's member phase pushed them out of the cache. Measured
/// at n = 1e6, p = 1e-4 on one thread (measure build, medians of 11 runs): `sbbf/xxh3`
/// random-u64 296 -> 339M queries/s/core, `classic/xxh3/km/flat` 178 -> 185M, `sbbf/xxh3` url
/// 112 -> 131M, the default sweep's wall time unchanged. The member phases do not read ahead:
/// with it there too, the default sweep took about 1 s longer.
#[inline(always)]
fn each_chunk<F: Filter + ?Sized, const AHEAD: bool>(
    filter: &F,
    batch: &Batch,
    range: Range<usize>,
    mut each: impl FnMut(&[Digest]),
) {
    let mut digests = [Digest::from_halves(0, 0); CHUNK];
    let mut filled = 0;
    let visit = |b: &[u8]| {
        digests[filled] = filter.digest(b);
        filled += 1;
        if filled == CHUNK {
            each(&digests);
            filled = 0;
        }
    };
    if AHEAD {
        batch.for_each_bytes_in_ahead(range, visit);
    } else {
        batch.for_each_bytes_in(range, visit);
    }
    if filled > 0 {
        each(&digests[..filled]);
    }
}

/// How a trial samples and labels its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampling {
    /// Confidence level of both intervals, in (0, 1).
    pub confidence: f64,
    /// Target relative half-width of the Clopper-Pearson interval: `(high - low) / 2 / fpr`.
    pub precision: f64,
    /// Most non-member queries per trial.
    pub max_queries: u64,
    /// Run seed, recorded in every row.
    pub seed: u64,
    /// Build revision recorded in every row.
    pub revision: String,
}

impl Default for Sampling {
    fn default() -> Self {
        Self {
            confidence: 0.95,
            precision: 0.10,
            max_queries: 20_000_000,
            seed: 1,
            revision: "unknown".into(),
        }
    }
}

/// One row's coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialSpec {
    /// What is measured.
    pub filter: Subject,
    /// Sized-for count.
    pub n: u64,
    /// Target rate.
    pub p: f64,
    /// Inserted keys / n.
    pub overfill: f64,
}

impl TrialSpec {
    /// Members actually inserted: `round(n * overfill)`.
    pub fn n_inserted(&self) -> u64 {
        (self.n as f64 * self.overfill).round() as u64
    }
}

/// A finished trial: its row (timing columns zero) and the filled filter, whose timing runs
/// monomorphised for its concrete type behind one dynamic call (see [`TimeRow`]).
pub struct Trial {
    /// Every statistical column filled; timing columns are 0.
    pub row: SweepRow,
    /// The filter after inserting the members.
    pub filter: Box<dyn TimeRow>,
}

/// The harness error for a registry visit or build that failed for the row `filter` sized for
/// (`n`, `p`): an unknown name, or the filter library's reason it cannot be built.
pub(crate) fn registry_error(filter: &str, n: u64, p: f64, e: BloomError) -> HarnessError {
    match e {
        BloomError::UnknownName { name, known } => HarnessError::UnknownFilter { name, known },
        source => HarnessError::Build {
            filter: filter.parse().unwrap(),
            n,
            p,
            source,
        },
    }
}

/// Runs the trial for the registered filter `spec.filter`, monomorphised for its concrete type.
pub fn run(spec: &TrialSpec, keys: &KeySet, sampling: &Sampling) -> Result<Trial, HarnessError> {
    run_lookup(spec, keys, sampling, Lookup::default())
}

/// [`run`], counting non-members through `lookup` (the same statistics either way).
pub fn run_lookup(
    spec: &TrialSpec,
    keys: &KeySet,
    sampling: &Sampling,
    lookup: Lookup,
) -> Result<Trial, HarnessError> {
    let own = GroupKeys::new(keys, spec.n_inserted(), sampling.max_queries, 0);
    run_in_group(spec, &own, sampling, lookup)
}

/// [`run_lookup`] for a row of a sweep group: the row's keys come from `group`, whose stored
/// chunks every row of the group reads (the statistics are those of [`run_lookup`], bit for bit).
///
/// Panics if `group` holds a number of members other than the row's `spec.n_inserted()`.
pub fn run_in_group(
    spec: &TrialSpec,
    group: &GroupKeys,
    sampling: &Sampling,
    lookup: Lookup,
) -> Result<Trial, HarnessError> {
    struct Run<'a, 'k>(&'a TrialSpec, &'a GroupKeys<'k>, &'a Sampling, Lookup);
    impl VariantVisitor for Run<'_, '_> {
        type Output = Result<Trial, HarnessError>;
        fn visit<F: Variant>(self) -> Self::Output {
            let Run(spec, group, sampling, lookup) = self;
            let build = || {
                Spec::Target {
                    n: spec.n,
                    p: spec.p,
                }
                .build::<F>()
            };
            let (row, filter) = run_grouped(spec, group, sampling, lookup, built(spec, build)?)?;
            Ok(Trial {
                row,
                filter: Box::new(filter),
            })
        }
    }
    match spec.filter {
        Subject::Variant(id) => id.visit(Run(spec, group, sampling, lookup)),
        Subject::Adapter(adapter) => {
            let mut filter = AdapterRun(adapter.get().build(spec.n, spec.p)?);
            let row = run_batched(spec, group.key_set(), sampling, &mut filter)?;
            Ok(Trial {
                row,
                filter: Box::new(filter),
            })
        }
        Subject::Redis(_) => Err(remote_error(spec)),
    }
}

/// The error for a Redis subject handed to an in-memory runner: `bloomlab-redis` runs those
/// (`sweep --redis URL`).
pub(crate) fn remote_error(spec: &TrialSpec) -> HarnessError {
    HarnessError::invalid(
        "filter",
        spec.filter,
        "keeps its bits in Redis: run it with --redis URL",
    )
}

/// [`run_batched`] for an adapter's filter ([`crate::subject::Adapter::build`]): the same
/// members, member check and sampling as every subject; the timing columns are 0.
pub fn run_adapter(
    spec: &TrialSpec,
    keys: &KeySet,
    sampling: &Sampling,
    filter: Box<dyn MeasuredFilter>,
) -> Result<SweepRow, HarnessError> {
    run_batched(spec, keys, sampling, &mut AdapterRun(filter))
}

/// An adapter's filter ([`crate::subject::Adapter`]) as a [`BatchMembership`] (one call per key;
/// its answers are those of one lookup per key) and a [`TimeRow`].
struct AdapterRun(Box<dyn MeasuredFilter>);

impl BatchMembership for AdapterRun {
    fn insert_batch(&mut self, keys: &Batch) -> Result<(), String> {
        keys.for_each_bytes(|b| self.0.insert(b));
        Ok(())
    }
    fn contains_batch(
        &mut self,
        keys: &Batch,
        found: &mut dyn FnMut(usize, bool),
    ) -> Result<(), String> {
        let mut i = 0;
        keys.for_each_bytes(|b| {
            found(i, self.0.contains(b));
            i += 1;
        });
        Ok(())
    }
    fn shape(&mut self, members: u64) -> Result<Shape, String> {
        Ok(self.0.shape(members))
    }
}

impl TimeRow for AdapterRun {
    fn time(&mut self, batches: &TimingBatches, passes: usize) -> FilterTiming {
        crate::bloom::timing::time_measured(&mut *self.0, batches, passes)
    }
}

/// Runs a trial on any [`Filter`] made by `build` (the registry's variants, or a control such as
/// an ideal random filter). Returns the row (timing columns zero) and the filled filter.
///
/// Errors: the build's error, [`HarnessError::KeyFileTooSmall`] when a key file cannot supply the
/// members and a non-member, or [`HarnessError::FalseNegative`] naming the first inserted member
/// that the filled filter does not find.
pub fn run_with<F: Filter>(
    spec: &TrialSpec,
    keys: &KeySet,
    sampling: &Sampling,
    build: impl FnOnce() -> Result<F, BloomError>,
) -> Result<(SweepRow, F), HarnessError> {
    run_with_lookup(spec, keys, sampling, Lookup::default(), build)
}

/// [`run_with`], counting non-members through `lookup` (the same statistics either way).
pub fn run_with_lookup<F: Filter>(
    spec: &TrialSpec,
    keys: &KeySet,
    sampling: &Sampling,
    lookup: Lookup,
    build: impl FnOnce() -> Result<F, BloomError>,
) -> Result<(SweepRow, F), HarnessError> {
    let filter = built(spec, build)?;
    let own = GroupKeys::new(keys, spec.n_inserted(), sampling.max_queries, 0);
    run_grouped(spec, &own, sampling, lookup, filter)
}

/// The filter `build` makes for the row `spec`, or the harness error naming the row.
fn built<F: Filter>(
    spec: &TrialSpec,
    build: impl FnOnce() -> Result<F, BloomError>,
) -> Result<F, HarnessError> {
    build().map_err(|source| HarnessError::Build {
        filter: spec.filter.to_string(),
        n: spec.n,
        p: spec.p,
        source,
    })
}

/// The trial, its keys read from `group`. The row's `queries_per_s_core` divides its queries by
/// the core-seconds its sampling took, less the time it spent filling the group's store (keys
/// every row of the group reads; see [`GroupKeys::visit`]).
///
/// It takes the built `filter`, not a way to build it, so that it is compiled once per filter
/// type, whichever caller built it (the sweep's rows and the gate's points share it).
fn run_grouped<F: Filter>(
    spec: &TrialSpec,
    group: &GroupKeys,
    sampling: &Sampling,
    lookup: Lookup,
    mut filter: F,
) -> Result<(SweepRow, F), HarnessError> {
    let keys = group.key_set();
    let members = spec.n_inserted();
    assert_eq!(
        members,
        group.members(),
        "a row of {members} members in a group of {}",
        group.members()
    );
    if let Some(file) = keys.file() {
        file.check_members(members)?;
    }
    let mut scratch = keys.new_batch();
    group.visit(Part::Members, 0, members, &mut scratch, |batch, range| {
        insert_all(&mut filter, batch, range)
    });
    // Checked after every insert, so that a later insert clobbering earlier bits is caught too.
    // Through `contains_all_digests` (every probe read) whatever `lookup` is: a member reads all k
    // probes either way, and the flat layout's early-exit count recomputes probe j in round j
    // (k^2 / 2 index steps per member instead of k). A chunk with a miss is looked up again key by
    // key to name the first.
    let mut checked = 0u64;
    let mut miss = None;
    group.visit(Part::Members, 0, members, &mut scratch, |batch, range| {
        let len = range.len();
        let mut all = true;
        each_chunk::<F, false>(&filter, batch, range.clone(), |ds| {
            all &= filter.contains_all_digests(ds)
        });
        if miss.is_none() && !all {
            let mut at = checked;
            batch.for_each_bytes_in(range, |b| {
                if miss.is_none() && !filter.contains_bytes(b) {
                    miss = Some(at);
                }
                at += 1;
            });
        }
        checked += len as u64;
    });
    if let Some(index) = miss {
        return Err(false_negative(spec, keys, sampling, index));
    }

    let non_members = keys.available().map_or(u64::MAX - members, |a| a - members);
    let cap = sampling.max_queries.min(non_members);
    let started = CoreClock::start();
    let mut storing = 0.0;
    let (queries, false_positives, met) = sample_adaptively(cap, sampling, |from, len| {
        let mut fp = 0;
        storing += group.visit(
            Part::NonMembers,
            from,
            from + len,
            &mut scratch,
            |batch, range| fp += count_found_in(&filter, batch, range, lookup),
        );
        fp
    });
    let seconds = started.seconds() - storing;

    let mut row = make_row(
        spec,
        keys,
        sampling,
        &filter,
        queries,
        false_positives,
        !met,
    );
    row.queries_per_s_core = per_second(queries, seconds);
    Ok((row, filter))
}

/// `count / seconds`, or 0 when no time was measured.
pub(crate) fn per_second(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// A filter driven a batch of keys at a time through calls that can fail, such as one whose bits
/// live on a server ([`run_batched`]). Its answers must be those of one lookup per key.
pub trait BatchMembership {
    /// Inserts every key of `keys`; an error says why (it becomes [`HarnessError::External`]).
    fn insert_batch(&mut self, keys: &Batch) -> Result<(), String>;
    /// Calls `found(i, answer)` for every key `i` of `keys`, in order.
    fn contains_batch(
        &mut self,
        keys: &Batch,
        found: &mut dyn FnMut(usize, bool),
    ) -> Result<(), String>;
    /// The filter's shape holding `members` keys (the row's shape columns).
    fn shape(&mut self, members: u64) -> Result<Shape, String>;
}

/// [`run_with`] for a [`BatchMembership`] filter: the same members, the same member check and the
/// same adaptive sampling over the same non-members, a batch of up to [`GEN_BATCH`] keys per call.
/// A filter whose answers equal an in-memory filter's therefore gets that filter's statistical
/// columns bit for bit (queries, false positives, intervals, theory). The timing columns are 0.
///
/// Errors: [`HarnessError::External`] for a failed call (no answer is assumed for the keys it
/// covered), [`HarnessError::KeyFileTooSmall`], or [`HarnessError::FalseNegative`] naming the
/// first inserted member not found.
pub fn run_batched<M: BatchMembership + ?Sized>(
    spec: &TrialSpec,
    keys: &KeySet,
    sampling: &Sampling,
    filter: &mut M,
) -> Result<SweepRow, HarnessError> {
    let external = |reason: String| HarnessError::External {
        filter: spec.filter.to_string(),
        n: spec.n,
        p: spec.p,
        reason,
    };
    let members = spec.n_inserted();
    if let Some(file) = keys.file() {
        file.check_members(members)?;
    }
    let mut batch = keys.new_batch();
    let mut start = 0;
    while start < members {
        let len = (members - start).min(GEN_BATCH as u64) as usize;
        keys.fill(start, len, &mut batch);
        filter.insert_batch(&batch).map_err(external)?;
        start += len as u64;
    }
    let mut start = 0;
    while start < members {
        let len = (members - start).min(GEN_BATCH as u64) as usize;
        keys.fill(start, len, &mut batch);
        let mut miss = None;
        filter
            .contains_batch(&batch, &mut |i, hit| {
                if !hit && miss.is_none() {
                    miss = Some(i);
                }
            })
            .map_err(external)?;
        if let Some(miss) = miss {
            return Err(false_negative(spec, keys, sampling, start + miss as u64));
        }
        start += len as u64;
    }

    let non_members = keys.available().map_or(u64::MAX - members, |a| a - members);
    let cap = sampling.max_queries.min(non_members);
    let mut failure = None;
    let (queries, false_positives, met) = sample_adaptively(cap, sampling, |from, len| {
        // After a failure the remaining steps query nothing; the error is returned below.
        if failure.is_some() {
            return 0;
        }
        let mut fp = 0;
        let mut done = 0;
        while done < len {
            let step = (len - done).min(GEN_BATCH as u64) as usize;
            keys.fill(members + from + done, step, &mut batch);
            if let Err(e) = filter.contains_batch(&batch, &mut |_, hit| fp += u64::from(hit)) {
                failure = Some(e);
                return 0;
            }
            done += step as u64;
        }
        fp
    });
    if let Some(e) = failure {
        return Err(external(e));
    }
    let shape = filter.shape(members).map_err(external)?;
    Ok(row_from(
        spec,
        keys,
        sampling,
        shape,
        queries,
        false_positives,
        !met,
    ))
}

/// The error for member `index` not found: a false negative, with every coordinate to reproduce it.
fn false_negative(
    spec: &TrialSpec,
    keys: &KeySet,
    sampling: &Sampling,
    index: u64,
) -> HarnessError {
    HarnessError::FalseNegative {
        filter: spec.filter.to_string(),
        key_set: keys.kind().to_string(),
        n: spec.n,
        p: spec.p,
        overfill: spec.overfill,
        seed: sampling.seed,
        index,
    }
}

/// Queries in steps until the Clopper-Pearson interval's relative half-width reaches
/// `sampling.precision`, or `cap` queries were made. `query(from, len)` queries non-members
/// `from..from + len` and returns the false positives among them.
///
/// Returns (queries, false positives, whether the precision target was met). The step sizes
/// depend only on the counts so far, so a trial is deterministic.
pub(crate) fn sample_adaptively(
    cap: u64,
    sampling: &Sampling,
    mut query: impl FnMut(u64, u64) -> u64,
) -> (u64, u64, bool) {
    let z = crate::stats::two_sided_z(sampling.confidence);
    let prec = sampling.precision;
    let (mut q, mut fp) = (0u64, 0u64);
    while q < cap {
        let step = if fp == 0 {
            q.max(MIN_STEP)
        } else {
            let f = fp as f64 / q as f64;
            let need = crate::stats::normal_queries(z, f, prec) * 1.02;
            (need.min(u64::MAX as f64 / 2.0) as u64)
                .saturating_sub(q)
                .clamp(MIN_STEP, MAX_STEP)
        };
        let step = step.min(cap - q);
        fp += query(q, step);
        q += step;
        if fp > 0 {
            let f = fp as f64 / q as f64;
            // Skip the exact interval while the approximation says the target is far off.
            if z * ((1.0 - f) / (f * q as f64)).sqrt() <= prec * 1.25
                && relative_half_width(fp, q, sampling.confidence) <= prec
            {
                return (q, fp, true);
            }
        }
    }
    (q, fp, false)
}

/// `(high - low) / 2 / fpr` of the Clopper-Pearson interval (infinite when nothing was seen).
pub fn relative_half_width(false_positives: u64, queries: u64, confidence: f64) -> f64 {
    if false_positives == 0 {
        return f64::INFINITY;
    }
    let (lo, hi) = clopper_pearson(false_positives, queries, confidence);
    (hi - lo) / 2.0 / (false_positives as f64 / queries as f64)
}

/// The theoretical FPR of `filter` holding `members` keys ([`Filter::fpr_theory`]: the layout's
/// theory, or a scalable filter's compound rate): the one place the harness asks for it.
pub(crate) fn fpr_theory<F: Filter + ?Sized>(filter: &F, members: u64) -> f64 {
    filter.fpr_theory(members)
}

/// Probability that any counter of a counting filter with `counter_bits`-bit counters reached its
/// maximum at `members` keys ([`bloomlab_filters::theory::counter_saturation_any`]: exact binomial
/// tail per counter, independence across counters).
pub(crate) fn overflow_p<F: Filter + ?Sized>(filter: &F, members: u64, counter_bits: u32) -> f64 {
    bloomlab_filters::theory::counter_saturation_any(
        filter.bits(),
        filter.hashes(),
        members,
        counter_bits,
    )
}

impl Shape {
    /// The shape of a registered filter holding `members` keys.
    pub fn of<F: Filter>(filter: &F, members: u64) -> Self {
        Self {
            layout: filter.layout(),
            bits: filter.bits(),
            hashes: filter.hashes(),
            memory_bytes: filter.memory_bytes() as u64,
            fill_ratio: filter.fill_ratio(),
            estimated_count: filter.estimated_len(),
            fpr_theory: fpr_theory(filter, members),
            fpr_textbook: filter.geometry().textbook_fpr(members),
            fpr_given_bits: filter.fpr_given_bits(),
            counter_overflow_p: match filter.layout() {
                Layout::Counting4 => Some(overflow_p(filter, members, 4)),
                Layout::Counting8 => Some(overflow_p(filter, members, 8)),
                _ => None,
            },
        }
    }
}

fn make_row<F: Filter>(
    spec: &TrialSpec,
    keys: &KeySet,
    sampling: &Sampling,
    filter: &F,
    queries: u64,
    false_positives: u64,
    capped: bool,
) -> SweepRow {
    let shape = Shape::of(filter, spec.n_inserted());
    row_from(
        spec,
        keys,
        sampling,
        shape,
        queries,
        false_positives,
        capped,
    )
}

/// A static row from a filter's shape and its sample; the workload columns are neutral.
pub(crate) fn row_from(
    spec: &TrialSpec,
    keys: &KeySet,
    sampling: &Sampling,
    shape: Shape,
    queries: u64,
    false_positives: u64,
    capped: bool,
) -> SweepRow {
    let members = spec.n_inserted();
    let (ci_low, ci_high) = clopper_pearson(false_positives, queries, sampling.confidence);
    let (wilson_low, wilson_high) = wilson(false_positives, queries, sampling.confidence);
    let fpr = false_positives as f64 / queries as f64;
    let fpr_theory = shape.fpr_theory;
    let counter_overflow_p = shape.counter_overflow_p;
    let bits = shape.bits;
    let bits_per_key = bits as f64 / spec.n as f64;
    SweepRow {
        filter: spec.filter,
        layout: shape.layout,
        key_set: keys.kind().to_string(),
        n: spec.n,
        p: spec.p,
        overfill: spec.overfill,
        n_inserted: members,
        bits,
        hashes: shape.hashes,
        bits_per_key,
        bound_bits_per_key: (1.0 / spec.p).log2(),
        space_overhead: if false_positives == 0 {
            f64::NAN
        } else {
            bits_per_key / (1.0 / fpr).log2()
        },
        memory_bytes: shape.memory_bytes,
        fill_ratio: shape.fill_ratio,
        estimated_count: shape.estimated_count,
        queries,
        false_positives,
        fpr,
        ci_low,
        ci_high,
        wilson_low,
        wilson_high,
        fpr_theory,
        fpr_textbook: shape.fpr_textbook,
        theory_in_interval: ci_low <= fpr_theory && fpr_theory <= ci_high,
        fpr_given_bits: shape.fpr_given_bits,
        given_bits_in_interval: ci_low <= shape.fpr_given_bits && shape.fpr_given_bits <= ci_high,
        capped,
        insert_ns: 0.0,
        lookup_present_ns: 0.0,
        lookup_absent_ns: 0.0,
        hashset_present_ns: 0.0,
        hashset_absent_ns: 0.0,
        hashset_memory_bytes: 0,
        confidence: sampling.confidence,
        seed: sampling.seed,
        revision: sampling.revision.clone(),
        workload: Workload::Static,
        round: 0,
        growth: 0,
        churn: 0.0,
        hostile: 0.0,
        removed: 0,
        hostile_removed: 0,
        members_checked: 0,
        false_negatives: 0,
        fn_ci_low: 0.0,
        fn_ci_high: 0.0,
        fn_saturated_decrement: 0,
        fn_removed_false_positive: 0,
        fn_both_causes: 0,
        fn_unexplained: 0,
        fn_failure: false,
        stages: 0,
        saturated_counters: 0,
        counter_overflow_p,
        static_bits_per_key: 0.0,
        bits_per_member: 0.0,
        queries_per_s_core: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeySetKind;

    /// Every layout family, index scheme and store, and the textbook, counting and scalable
    /// filters: the variants whose batched paths the tests below compare with key-by-key ones.
    const LAYOUT_SAMPLE: [&str; 10] = [
        "classic/xxh3/km/flat",
        "classic/xxh3/edh/flat",
        "classic/murmur3/mitz64/flat",
        "classic/murmur3/mitz32/flat",
        "classic/xxh64/km/atomic",
        "blocked512/xxh3",
        "sbbf/xxh3",
        "textbook-fnv1a-i32",
        "counting4/xxh3/km",
        "scalable/classic/xxh3/km/flat",
    ];

    /// Both lookups of the false-positive engine count what one `contains_bytes` per key counts,
    /// for integer and string batches, on filters of every layout family from nearly empty to
    /// overfull, on batch lengths that are and are not multiples of the chunk.
    #[test]
    fn batched_counts_equal_one_by_one_counts() {
        for kind in [KeySetKind::RandomU64, KeySetKind::Url] {
            let keys = KeySet::new(kind.clone(), 5).unwrap();
            for name in LAYOUT_SAMPLE {
                for members in [20u64, 2_000, 12_000] {
                    let mut f =
                        bloomlab_filters::registry::build(name, Spec::Target { n: 2_000, p: 0.01 })
                            .unwrap();
                    let mut batch = keys.new_batch();
                    keys.fill(0, members as usize, &mut batch);
                    batch.for_each_bytes(|b| f.insert_bytes(b));
                    for len in [0, 1, CHUNK - 1, CHUNK, 3 * CHUNK + 17] {
                        // Members first, then non-members: both answers occur in every batch.
                        keys.fill(members - members.min(len as u64 / 3), len, &mut batch);
                        let one_by_one = batch.count(|b| f.contains_bytes(b));
                        for lookup in [Lookup::EarlyExit, Lookup::BranchFree] {
                            assert_eq!(
                                count_found(f.as_ref(), &batch, lookup),
                                one_by_one,
                                "{name} {kind} {members} members, {len} keys, {lookup:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Inserting a batch through `insert_all` (digests a chunk at a time, memory prefetched)
    /// leaves every sampled filter answering exactly as one `insert_bytes` per key does:
    /// the same bits set and the same answer for every key looked up, members and non-members,
    /// over ranges that start and end inside the batch.
    #[test]
    fn inserting_a_batch_equals_inserting_key_by_key() {
        for kind in [KeySetKind::RandomU64, KeySetKind::Url] {
            let keys = KeySet::new(kind.clone(), 8).unwrap();
            let mut batch = keys.new_batch();
            keys.fill(0, 3 * CHUNK + 40, &mut batch);
            let mut probe = keys.new_batch();
            keys.fill(0, 20_000, &mut probe);
            for name in LAYOUT_SAMPLE {
                for range in [0..batch.len(), 5..2 * CHUNK + 3, 0..0] {
                    let spec = Spec::Target { n: 500, p: 0.01 };
                    let mut one = bloomlab_filters::registry::build(name, spec).unwrap();
                    let mut all = bloomlab_filters::registry::build(name, spec).unwrap();
                    batch.for_each_bytes_in(range.clone(), |b| one.insert_bytes(b));
                    insert_all(all.as_mut(), &batch, range.clone());
                    assert_eq!(one.set_bits(), all.set_bits(), "{name} {kind} {range:?}");
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    probe.for_each_bytes(|k| {
                        a.push(one.contains_bytes(k));
                        b.push(all.contains_bytes(k));
                    });
                    assert!(a == b, "{name} {kind} {range:?}: answers differ");
                    // The probe keys include the inserted ones.
                    assert!(
                        a.iter().filter(|&&x| x).count() >= range.len(),
                        "{name} {kind} {range:?}: members found"
                    );
                }
            }
        }
    }

    #[test]
    fn lookup_names_round_trip_and_others_are_refused() {
        for l in [Lookup::EarlyExit, Lookup::BranchFree] {
            assert_eq!(l.as_str().parse::<Lookup>().unwrap(), l);
        }
        let err = "fast".parse::<Lookup>().unwrap_err().to_string();
        assert!(
            err.contains("\"fast\"") && err.contains("early-exit"),
            "{err}"
        );
    }
}
