//! The dynamic workloads: `churn` (remove and replace members in rounds) and `grow` (keep
//! inserting past the sized-for count). Each emits one row per round or growth step, in the
//! sweep's schema ([`SweepRow`], workload columns filled).
//!
//! **Key bookkeeping.** A key set is an indexed sequence ([`KeySet`]), so key sets of members are
//! sets of indices. A churn row for (n, rounds, fraction) uses indices `0..E` for every key that is
//! ever a member (`E` = n plus the fresh keys of all rounds: a removed member's index is never
//! reused), samples the false-positive rate on the never-inserted indices `E..`, and draws the
//! never-inserted keys of hostile removals from `HOSTILE_BASE..` (disjoint from both). A removed
//! member therefore never enters the false-positive sample, where it would bias the rate upward
//! (its counters may still be set). Which members a round removes is a seeded partial
//! Fisher-Yates shuffle of the current members (seed: the run seed and the row's coordinates).
//! A grow row inserts indices `0..n0 x G_max` in order and samples indices from `n0 x G_max` on.
//! Each round or step samples its own never-inserted indices (step i from `E + i x max_queries`,
//! or `n0 x G_max + i x max_queries`), so rows are independent measurements; on a key file, whose
//! keys run out, they share the remainder.
//!
//! **Timing** (when a run asks for timing passes). A counting or scalable filter changes its state
//! when a key is inserted twice (a counter goes up; a stage counts one more key), so the static
//! rows' re-insert timing would corrupt the workload. Instead:
//! - `lookup_present_ns` / `lookup_absent_ns`: the median over the passes of one pass over up to
//!   [`TIMING_BATCH`] current members and as many never-inserted keys
//!   (lookups change nothing);
//! - `insert_ns`: the wall time per key of the inserts the step itself made (a grow step's new
//!   keys, stage growth included; a churn round's fresh keys; round 0's initial fill), one pass,
//!   key generation excluded.
//!
//! The rows of a workload run in parallel (one per core), so these figures are taken while another
//! row may run on the other core: indicative, like every sweep timing; the criterion bench's
//! counting and scalable series are the authority.

use bloomlab_filters::registry::{self, GrowableVisitor, RemovableVisitor};
use bloomlab_filters::{
    BloomError, Filter, Growable, Layout, Params, Removable, Spec, Variant, VariantVisitor,
};
use rand::{RngExt as _, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::bloom::row::{SweepRow, Workload};
use crate::bloom::timing::{FilterTiming, TIMING_BATCH, TimingBatches, time_lookups};
use crate::bloom::trial::{
    Sampling, Shape, TrialSpec, overflow_p, registry_error, row_from, sample_adaptively,
};
use crate::error::HarnessError;
use crate::keys::{Batch, KeySet, derive_seed};
use crate::limits::GEN_BATCH;
use crate::stats::clopper_pearson;
use crate::subject::{MeasuredFilter, Subject};

/// First index of the never-inserted keys hostile removals draw from (integer and generated string
/// key sets have 2^64 indices; a churn row never reaches 2^63 members).
pub const HOSTILE_BASE: u64 = 1 << 63;

/// The churn workload's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Churn {
    /// Rounds after the initial fill, at least 1.
    pub rounds: u64,
    /// Fraction of the members each round removes, in (0, 1].
    pub fraction: f64,
    /// Fraction of each round's removals that remove a never-inserted key testing positive, in
    /// [0, 1].
    pub hostile: f64,
}

impl Default for Churn {
    /// 10 rounds of 10% each, no hostile removals.
    fn default() -> Self {
        Self {
            rounds: 10,
            fraction: 0.1,
            hostile: 0.0,
        }
    }
}

impl Churn {
    /// Checks the settings; errors name the value and the allowed range.
    pub fn validate(&self) -> Result<(), HarnessError> {
        if self.rounds == 0 {
            return Err(HarnessError::invalid("rounds", 0, "must be at least 1"));
        }
        if !(self.fraction > 0.0 && self.fraction <= 1.0) {
            return Err(HarnessError::invalid(
                "churn",
                self.fraction,
                "must be in (0, 1] (the fraction of members each round replaces)",
            ));
        }
        if !(0.0..=1.0).contains(&self.hostile) {
            return Err(HarnessError::invalid(
                "hostile-removes",
                self.hostile,
                "must be in [0, 1] (the fraction of removals aimed at never-inserted keys)",
            ));
        }
        Ok(())
    }

    /// Removals per round for n members: `round(n x fraction)`; an error when that is 0.
    pub fn per_round(&self, n: u64) -> Result<u64, HarnessError> {
        let k = (n as f64 * self.fraction).round() as u64;
        if k == 0 {
            return Err(HarnessError::invalid(
                "churn",
                self.fraction,
                &format!("must make round(n * churn) at least 1 (n = {n})"),
            ));
        }
        Ok(k.min(n))
    }

    /// (member removals, hostile removals) per round for n members.
    pub fn split(&self, n: u64) -> Result<(u64, u64), HarnessError> {
        let k = self.per_round(n)?;
        let hostile = ((k as f64) * self.hostile).round() as u64;
        Ok((k - hostile, hostile))
    }

    /// Indices ever used by members: n plus the fresh keys of every round.
    pub fn member_indices(&self, n: u64) -> Result<u64, HarnessError> {
        let (members, _) = self.split(n)?;
        members
            .checked_mul(self.rounds)
            .and_then(|f| f.checked_add(n))
            .filter(|&e| e < HOSTILE_BASE)
            .ok_or_else(|| {
                HarnessError::invalid(
                    "rounds",
                    self.rounds,
                    &format!("n + rounds x removals per round must stay below 2^63 (n = {n})"),
                )
            })
    }
}

/// The grow workload's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grow {
    /// Largest growth factor G; rows are measured at G = 1, 2, 4, ... up to it (and at it).
    pub max_growth: u64,
}

impl Default for Grow {
    /// Up to 1024 x the initial capacity.
    fn default() -> Self {
        Self { max_growth: 1024 }
    }
}

impl Grow {
    /// Checks the settings against the initial capacity `n0`: G_max >= 1 and n0 x G_max fits in
    /// 2^53 (the largest count the sweep accepts).
    pub fn validate(&self, n0: u64) -> Result<(), HarnessError> {
        if self.max_growth == 0 {
            return Err(HarnessError::invalid("max-growth", 0, "must be at least 1"));
        }
        match n0.checked_mul(self.max_growth) {
            Some(total) if total <= 1 << 53 => Ok(()),
            _ => Err(HarnessError::invalid(
                "max-growth",
                self.max_growth,
                &format!("n x max-growth must be at most 2^53 (n = {n0})"),
            )),
        }
    }

    /// The growth factors measured: powers of two up to `max_growth`, and `max_growth` itself.
    pub fn factors(&self) -> Vec<u64> {
        let mut out = Vec::new();
        let mut g = 1u64;
        while g < self.max_growth {
            out.push(g);
            g *= 2;
        }
        out.push(self.max_growth);
        out
    }
}

/// A [`MeasuredFilter`] that can remove keys.
pub trait RemovableSubject: MeasuredFilter {
    /// Removes the key; true if the filter decremented its counters.
    fn remove(&mut self, b: &[u8]) -> bool;
    /// Calls `visit(index, value)` for each counter the key maps to (see
    /// [`Removable::visit_counters`]).
    fn visit_counters(&self, b: &[u8], visit: &mut dyn FnMut(u64, u64));
    /// The value at which a counter's increment stops.
    fn counter_max(&self) -> u64;
}

/// The batch operations the churn and grow drivers run on a filter. Each call covers a whole
/// batch (or the timing of one), compiled for the filter's type, so that the drivers
/// ([`run_churn`], [`run_grow`]) are compiled once and reach the filter through one dynamic call
/// per batch, never one per key (compiled once per registered variant, the drivers and their
/// sampling and row code were a large share of the harness crate's build). Every
/// [`MeasuredFilter`] has them.
pub trait BatchSubject: MeasuredFilter {
    /// Inserts the keys of `batch`, in order.
    fn insert_batch(&mut self, batch: &Batch);
    /// How many keys of `batch` the filter reports present (branch-free: an overfilled fixed
    /// filter of the grow workload answers present for most non-members).
    fn count_found(&self, batch: &Batch) -> u64;
    /// Calls `each(position, key)`, in order, for every key of `batch` whose lookup answers
    /// `found`.
    fn each_answering(&self, batch: &Batch, found: bool, each: &mut dyn FnMut(usize, &[u8]));
    /// The median ns per lookup of the present and the absent batch ([`time_lookups`]), the
    /// timed loop compiled for the filter's type.
    fn time_batches(&self, batches: &TimingBatches, passes: usize) -> (f64, f64);
}

impl<S: MeasuredFilter> BatchSubject for S {
    fn insert_batch(&mut self, batch: &Batch) {
        batch.for_each_bytes(|b| self.insert(b));
    }
    fn count_found(&self, batch: &Batch) -> u64 {
        batch.count(|b| self.contains(b))
    }
    fn each_answering(&self, batch: &Batch, found: bool, each: &mut dyn FnMut(usize, &[u8])) {
        let mut i = 0;
        batch.for_each_bytes(|b| {
            if self.contains(b) == found {
                each(i, b);
            }
            i += 1;
        });
    }
    fn time_batches(&self, batches: &TimingBatches, passes: usize) -> (f64, f64) {
        time_lookups(self, batches, passes, |s, b| s.contains(b))
    }
}

/// [`BatchSubject`] with removals, for the churn driver. Every [`RemovableSubject`] has it.
pub trait RemovableBatch: BatchSubject + RemovableSubject {
    /// Removes the keys of `batch`, in order.
    fn remove_batch(&mut self, batch: &Batch);
}

impl<S: RemovableSubject> RemovableBatch for S {
    fn remove_batch(&mut self, batch: &Batch) {
        batch.for_each_bytes(|b| {
            self.remove(b);
        });
    }
}

/// Why each false negative of a churn run happened, from a ledger of the two mechanisms that can
/// zero a member's counter while the member still uses it (the textbook port's two flaws):
/// - `lost`: counters that lost an increment because they were at their maximum (a later
///   decrement then takes them below their true count, unless the design keeps them stuck);
/// - `hostile`: counters an accepted removal of a never-inserted key decremented.
///
/// A missed member's zeroed counters are looked up in both. Keeping the ledger costs a pass over
/// each inserted key's counters before the insert (untimed), so it runs on every churn row.
#[derive(Debug, Default)]
struct CauseLedger {
    lost: std::collections::HashSet<u64>,
    hostile: std::collections::HashSet<u64>,
}

/// False negatives of one check, by cause (see [`CauseLedger`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Causes {
    saturated_decrement: u64,
    removed_false_positive: u64,
    both: u64,
    unexplained: u64,
}

impl CauseLedger {
    /// Records the increments a batch of inserts is about to lose: called before the batch is
    /// inserted, it follows each counter through the batch's own earlier increments (`pending`),
    /// so the result is exactly what key-by-key inserting does.
    fn before_inserts<S: RemovableSubject + ?Sized>(&mut self, s: &S, batch: &Batch) {
        let max = s.counter_max();
        let mut pending: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
        batch.for_each_bytes(|b| {
            s.visit_counters(b, &mut |i, value| {
                let seen = pending.entry(i).or_insert(0);
                if value + *seen >= max {
                    self.lost.insert(i);
                } else {
                    *seen += 1;
                }
            });
        });
    }

    /// Records a removal of a never-inserted key about to be made: if the filter will accept it
    /// (it tests positive), every non-zero counter it maps to is decremented by it.
    fn before_hostile_remove<S: RemovableSubject + ?Sized>(&mut self, s: &S, b: &[u8]) {
        if s.contains(b) {
            s.visit_counters(b, &mut |i, value| {
                if value > 0 {
                    self.hostile.insert(i);
                }
            });
        }
    }

    /// The cause of a missed member's false negative, from its zeroed counters.
    fn classify<S: RemovableSubject + ?Sized>(&self, s: &S, b: &[u8], causes: &mut Causes) {
        let (mut lost, mut hostile) = (false, false);
        s.visit_counters(b, &mut |i, value| {
            if value == 0 {
                lost |= self.lost.contains(&i);
                hostile |= self.hostile.contains(&i);
            }
        });
        match (lost, hostile) {
            (true, false) => causes.saturated_decrement += 1,
            (false, true) => causes.removed_false_positive += 1,
            (true, true) => causes.both += 1,
            (false, false) => causes.unexplained += 1,
        }
    }
}

/// Any registered filter as a [`MeasuredFilter`] without capabilities.
pub struct Plain<F>(pub F);

impl<F: Filter> MeasuredFilter for Plain<F> {
    fn insert(&mut self, b: &[u8]) {
        self.0.insert_bytes(b);
    }
    fn contains(&self, b: &[u8]) -> bool {
        self.0.contains_bytes(b)
    }
    fn shape(&self, members: u64) -> Shape {
        Shape::of(&self.0, members)
    }
}

/// The row's spec for `n` members held (overfill = members / n).
fn spec_at(filter: Subject, n: u64, p: f64, members: u64) -> TrialSpec {
    TrialSpec {
        filter,
        n,
        p,
        overfill: members as f64 / n as f64,
    }
}

/// Counts the members (by index) the filter does not find, by cause (see [`CauseLedger`]).
fn count_misses(
    s: &dyn RemovableBatch,
    keys: &KeySet,
    members: &[u64],
    ledger: &CauseLedger,
) -> Causes {
    let mut batch = keys.new_batch();
    let mut causes = Causes::default();
    for chunk in members.chunks(GEN_BATCH) {
        keys.fill_at(chunk.iter().copied(), &mut batch);
        s.each_answering(&batch, false, &mut |_, b| {
            ledger.classify(s, b, &mut causes)
        });
    }
    causes
}

/// Samples the FPR of round or step `step` on never-inserted indices; returns (queries, false
/// positives, met).
///
/// On a generated key set each step queries its own indices, `from + step x max_queries ..`, so
/// the rows of one run are independent measurements: with one shared query set, a single unlucky
/// draw would repeat in every later row (the stages a scalable filter has filled no longer change)
/// and look like a systematic departure. A key file has only its remainder after the members, so
/// its steps share `from..`.
fn sample_fpr<S: BatchSubject + ?Sized>(
    s: &S,
    keys: &KeySet,
    sampling: &Sampling,
    from: u64,
    step: u64,
) -> Result<(u64, u64, bool), HarnessError> {
    let from = match keys.available() {
        Some(_) => from,
        None => step
            .checked_mul(sampling.max_queries)
            .and_then(|offset| offset.checked_add(from))
            .filter(|start| {
                start
                    .checked_add(sampling.max_queries)
                    .is_some_and(|end| end <= HOSTILE_BASE)
            })
            .ok_or_else(|| {
                HarnessError::invalid(
                    "max-queries",
                    sampling.max_queries,
                    &format!(
                        "leaves no room for a separate query set per step: step {step}'s queries \
                         would run past index 2^63 (from {from})"
                    ),
                )
            })?,
    };
    let available = keys
        .available()
        .map_or(u64::MAX - from, |a| a.saturating_sub(from));
    let cap = sampling.max_queries.min(available);
    if cap == 0 {
        return Err(HarnessError::invalid(
            "key set",
            keys.kind(),
            &format!("has no never-inserted key left after the {from} keys the workload inserts"),
        ));
    }
    let mut batch = keys.new_batch();
    Ok(sample_adaptively(cap, sampling, |start, len| {
        let mut fp = 0;
        let mut done = 0;
        while done < len {
            let step = (len - done).min(GEN_BATCH as u64) as usize;
            keys.fill(from + start + done, step, &mut batch);
            fp += s.count_found(&batch);
            done += step as u64;
        }
        fp
    }))
}

/// The columns a churn or grow row adds to the static row.
struct Extra {
    workload: Workload,
    round: u64,
    growth: u64,
    churn: f64,
    hostile: f64,
    removed: u64,
    hostile_removed: u64,
    members: u64,
    false_negatives: u64,
    promises_no_fn: bool,
    /// Timings of the step, when timed (see the module docs).
    timing: Option<FilterTiming>,
    /// Churn: the false negatives by cause.
    causes: Causes,
}

fn row_with<S: MeasuredFilter + ?Sized>(
    s: &S,
    spec: &TrialSpec,
    keys: &KeySet,
    sampling: &Sampling,
    sample: (u64, u64, bool),
    x: Extra,
) -> SweepRow {
    let (queries, fp, met) = sample;
    let members = x.members;
    let shape = s.shape(members);
    let bits = shape.bits;
    let mut row = row_from(spec, keys, sampling, shape, queries, fp, !met);
    let (fn_ci_low, fn_ci_high) = if members == 0 {
        (0.0, 0.0)
    } else {
        clopper_pearson(x.false_negatives, members, sampling.confidence)
    };
    row.workload = x.workload;
    row.round = x.round;
    row.growth = x.growth;
    row.churn = x.churn;
    row.hostile = x.hostile;
    row.removed = x.removed;
    row.hostile_removed = x.hostile_removed;
    row.members_checked = members;
    row.false_negatives = x.false_negatives;
    row.fn_ci_low = fn_ci_low;
    row.fn_ci_high = fn_ci_high;
    row.fn_failure = x.false_negatives > 0 && x.promises_no_fn && x.hostile == 0.0;
    row.fn_saturated_decrement = x.causes.saturated_decrement;
    row.fn_removed_false_positive = x.causes.removed_false_positive;
    row.fn_both_causes = x.causes.both;
    row.fn_unexplained = x.causes.unexplained;
    row.stages = if x.workload == Workload::Grow {
        s.stages()
    } else {
        0
    };
    row.saturated_counters = s.saturated();
    row.counter_overflow_p = s.overflow_p(members);
    row.bits_per_member = bits as f64 / members as f64;
    if let Some(t) = x.timing {
        row.insert_ns = t.insert_ns;
        row.lookup_present_ns = t.present_ns;
        row.lookup_absent_ns = t.absent_ns;
    }
    row.static_bits_per_key = if x.workload == Workload::Grow {
        Params::optimal_bits(members, spec.p).map_or(f64::NAN, |m| m as f64 / members as f64)
    } else {
        0.0
    };
    row
}

/// One churn row's coordinates and settings.
#[derive(Debug, Clone, Copy)]
pub struct ChurnRun<'a> {
    /// What is measured (for the rows).
    pub name: Subject,
    /// Sized-for count.
    pub n: u64,
    /// Target rate.
    pub p: f64,
    /// Members held / n.
    pub overfill: f64,
    /// Key set.
    pub keys: &'a KeySet,
    /// Sampling settings.
    pub sampling: &'a Sampling,
    /// Rounds, fraction, hostile fraction.
    pub churn: &'a Churn,
    /// Whether a false negative (without hostile removals) fails the variant.
    pub promises_no_fn: bool,
    /// Timing passes per round (0: no timing); see the module docs.
    pub timing_passes: usize,
}

/// One grow row's coordinates and settings.
#[derive(Debug, Clone, Copy)]
pub struct GrowRun<'a> {
    /// What is measured (for the rows).
    pub name: Subject,
    /// Initial capacity.
    pub n0: u64,
    /// Target rate.
    pub p: f64,
    /// Key set.
    pub keys: &'a KeySet,
    /// Sampling settings.
    pub sampling: &'a Sampling,
    /// Largest growth factor.
    pub grow: &'a Grow,
    /// Whether a false negative fails the variant.
    pub promises_no_fn: bool,
    /// Timing passes per step (0: no timing); see the module docs.
    pub timing_passes: usize,
}

/// Times an insert pass over `batch` into `s` (ns in total).
fn timed_inserts<S: BatchSubject + ?Sized>(s: &mut S, batch: &crate::keys::Batch) -> f64 {
    let t = std::time::Instant::now();
    s.insert_batch(batch);
    t.elapsed().as_nanos() as f64
}

/// The step's timing, or `None` when `passes` is 0 (see the module docs).
fn step_timing<S: BatchSubject + ?Sized>(
    s: &S,
    keys: &KeySet,
    members: &[u64],
    absent_from: u64,
    passes: usize,
    insert_ns: f64,
) -> Option<FilterTiming> {
    (passes > 0).then(|| {
        let batches = TimingBatches::of_members(keys, members, absent_from);
        let (present_ns, absent_ns) = s.time_batches(&batches, passes);
        FilterTiming {
            insert_ns,
            present_ns,
            absent_ns,
        }
    })
}

/// A churn run's sizes, checked: the spec, members held, members each round replaces (and how many
/// hostile removals it tries), and the largest member index the run uses.
struct ChurnSizes {
    spec: TrialSpec,
    held: u64,
    per_round: u64,
    hostile_per_round: u64,
    ever: u64,
}

impl ChurnSizes {
    fn of(run: &ChurnRun) -> Result<Self, HarnessError> {
        let ChurnRun {
            name,
            n,
            p,
            overfill,
            keys,
            churn,
            ..
        } = *run;
        churn.validate()?;
        let spec = TrialSpec {
            overfill,
            ..spec_at(name, n, p, 0)
        };
        let held = spec.n_inserted();
        if held == 0 {
            return Err(HarnessError::invalid(
                "overfill",
                overfill,
                &format!("must make round(n * overfill) at least 1 (n = {n})"),
            ));
        }
        let (per_round, hostile_per_round) = churn.split(held)?;
        let ever = churn.member_indices(held)?;
        if let Some(file) = keys.file() {
            file.check_members(ever)?;
            if hostile_per_round > 0 {
                return Err(HarnessError::invalid(
                    "hostile-removes",
                    churn.hostile,
                    "must be 0 on a file key set (hostile keys come from generated indices)",
                ));
            }
        }
        Ok(Self {
            spec,
            held,
            per_round,
            hostile_per_round,
            ever,
        })
    }
}

/// Hostile removals: up to `wanted` never-inserted keys that test positive, found by scanning
/// generated indices from `*next` (at most `max_scan` of them), each removed from `s` (the ledger
/// told first). Returns how many removals `s` accepted; `*next` moves past the scanned indices.
fn remove_hostile(
    s: &mut dyn RemovableBatch,
    keys: &KeySet,
    max_scan: u64,
    wanted: u64,
    next: &mut u64,
    ledger: &mut CauseLedger,
) -> u64 {
    let mut batch = keys.new_batch();
    let (mut found, mut scanned, mut accepted) = (0u64, 0u64, 0u64);
    while found < wanted && scanned < max_scan {
        let step = GEN_BATCH.min((max_scan - scanned) as usize);
        keys.fill(*next, step, &mut batch);
        let mut positives = Vec::new();
        s.each_answering(&batch, true, &mut |i, _| positives.push(*next + i as u64));
        positives.truncate((wanted - found) as usize);
        *next += step as u64;
        scanned += step as u64;
        found += positives.len() as u64;
        let mut hb = keys.new_batch();
        keys.fill_at(positives, &mut hb);
        hb.for_each_bytes(|b| {
            ledger.before_hostile_remove(&*s, b);
            accepted += u64::from(s.remove(b));
        });
    }
    accepted
}

/// Runs the churn workload on `s`, built for `n` keys at rate `p`: fills it with
/// `held = round(n x overfill)` members, then runs `churn.rounds` rounds that each replace
/// `round(held x churn.fraction)` of them: the fresh keys are inserted first, then the leaving
/// members and the hostile keys are removed, then every member is checked. Returns one row per round, round 0 (filled, nothing
/// removed) first. (An overfilled filter loads its counters beyond the sized-for count: the way to
/// saturate counters and see what each design does with them.)
///
/// `promises_no_fn`: whether a false negative (without hostile removals) is a failure of the
/// variant (its rows get `fn_failure`). Errors: bad settings, or a key file too small for the
/// members ever inserted plus one never-inserted key, or hostile removals on a key file.
pub fn run_churn(
    s: &mut dyn RemovableBatch,
    run: &ChurnRun,
) -> Result<Vec<SweepRow>, HarnessError> {
    let ChurnRun {
        name,
        n,
        p,
        overfill,
        keys,
        sampling,
        churn,
        promises_no_fn,
        timing_passes,
    } = *run;
    let ChurnSizes {
        spec,
        held,
        per_round,
        hostile_per_round,
        ever,
    } = ChurnSizes::of(run)?;
    let mut rng = Pcg64Mcg::seed_from_u64(derive_seed(
        sampling.seed,
        &format!("churn {name} {} n={n} p={p} x{overfill}", keys.kind()),
    ));
    let mut members: Vec<u64> = (0..held).collect();
    let mut batch = keys.new_batch();
    let mut ledger = CauseLedger::default();
    let mut insert_total_ns = 0.0;
    for chunk in members.chunks(GEN_BATCH) {
        keys.fill_at(chunk.iter().copied(), &mut batch);
        ledger.before_inserts(&*s, &batch);
        insert_total_ns += timed_inserts(s, &batch);
    }
    let mut inserted_in_step = held;
    let mut next_fresh = held;
    let mut next_hostile = HOSTILE_BASE;
    let (mut removed, mut hostile_removed) = (0u64, 0u64);
    let mut rows = Vec::with_capacity(churn.rounds as usize + 1);
    for round in 0..=churn.rounds {
        if round > 0 {
            // The members that leave this round: a seeded partial Fisher-Yates shuffle.
            for j in 0..per_round as usize {
                let r = rng.random_range(j..members.len());
                members.swap(j, r);
            }
            let leaving: Vec<u64> = members[..per_round as usize].to_vec();
            // New keys arrive before the old ones leave, as in a sliding window: the filter holds
            // held + per_round keys at its peak, and a counter that saturated then is decremented
            // by the leaving keys (a correct design keeps it stuck).
            for slot in &mut members[..per_round as usize] {
                *slot = next_fresh;
                next_fresh += 1;
            }
            keys.fill_at(members[..per_round as usize].iter().copied(), &mut batch);
            ledger.before_inserts(&*s, &batch);
            insert_total_ns = timed_inserts(s, &batch);
            inserted_in_step = per_round;
            keys.fill_at(leaving, &mut batch);
            s.remove_batch(&batch);
            removed += per_round;
            hostile_removed += remove_hostile(
                s,
                keys,
                sampling.max_queries,
                hostile_per_round,
                &mut next_hostile,
                &mut ledger,
            );
        }
        let causes = count_misses(&*s, keys, &members, &ledger);
        let false_negatives = causes.saturated_decrement
            + causes.removed_false_positive
            + causes.both
            + causes.unexplained;
        let sample = sample_fpr(&*s, keys, sampling, ever, round)?;
        let timing = step_timing(
            &*s,
            keys,
            &members,
            ever,
            timing_passes,
            insert_total_ns / inserted_in_step.max(1) as f64,
        );
        rows.push(row_with(
            &*s,
            &spec,
            keys,
            sampling,
            sample,
            Extra {
                workload: Workload::Churn,
                round,
                growth: 0,
                churn: churn.fraction,
                hostile: churn.hostile,
                removed,
                hostile_removed,
                members: held,
                false_negatives,
                promises_no_fn,
                timing,
                causes,
            },
        ));
    }
    Ok(rows)
}

/// Runs the grow workload on `s`, built for an initial `n0` keys at target `p`: inserts
/// n0 x G keys for each G of [`Grow::factors`], measuring at each. Returns one row per G.
///
/// Every member inserted so far is checked at each G (`false_negatives`; a failure for variants
/// that promise none).
pub fn run_grow(s: &mut dyn BatchSubject, run: &GrowRun) -> Result<Vec<SweepRow>, HarnessError> {
    let GrowRun {
        name,
        n0,
        p,
        keys,
        sampling,
        grow,
        promises_no_fn,
        timing_passes,
    } = *run;
    grow.validate(n0)?;
    let total = n0 * grow.max_growth;
    if let Some(file) = keys.file() {
        file.check_members(total)?;
    }
    let mut batch = keys.new_batch();
    let mut inserted = 0u64;
    let mut rows = Vec::new();
    for (step, g) in (0u64..).zip(grow.factors()) {
        let members = n0 * g;
        let step_start = inserted;
        let mut insert_total_ns = 0.0;
        while inserted < members {
            let len = (members - inserted).min(GEN_BATCH as u64) as usize;
            keys.fill(inserted, len, &mut batch);
            insert_total_ns += timed_inserts(s, &batch);
            inserted += len as u64;
        }
        let mut misses = 0;
        let mut start = 0;
        while start < members {
            let len = (members - start).min(GEN_BATCH as u64) as usize;
            keys.fill(start, len, &mut batch);
            misses += len as u64 - s.count_found(&batch);
            start += len as u64;
        }
        let sample = sample_fpr(&*s, keys, sampling, total, step)?;
        let timing = (timing_passes > 0).then(|| {
            let present: Vec<u64> = (0..members.min(TIMING_BATCH)).collect();
            step_timing(
                &*s,
                keys,
                &present,
                total,
                timing_passes,
                insert_total_ns / (members - step_start).max(1) as f64,
            )
        });
        let spec = spec_at(name, n0, p, members);
        rows.push(row_with(
            &*s,
            &spec,
            keys,
            sampling,
            sample,
            Extra {
                workload: Workload::Grow,
                round: 0,
                growth: g,
                churn: 0.0,
                hostile: 0.0,
                removed: 0,
                hostile_removed: 0,
                members,
                false_negatives: misses,
                promises_no_fn,
                timing: timing.flatten(),
                causes: Causes::default(),
            },
        ));
    }
    Ok(rows)
}

/// Which workload a sweep runs, with its settings.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum WorkloadSettings {
    /// Fill once, query: the default, one row per (filter, key set, n, p, overfill).
    #[default]
    Static,
    /// Remove and replace members in rounds (filters that can remove only); one row per round.
    Churn(Churn),
    /// Insert n x G keys for G = 1, 2, 4, ...; one row per G.
    Grow(Grow),
}

impl WorkloadSettings {
    /// The workload's name.
    pub fn workload(&self) -> crate::bloom::row::Workload {
        use crate::bloom::row::Workload;
        match self {
            WorkloadSettings::Static => Workload::Static,
            WorkloadSettings::Churn(_) => Workload::Churn,
            WorkloadSettings::Grow(_) => Workload::Grow,
        }
    }
}

/// The subjects `all` stands for under `workload`: every registered variant for static, those
/// that can remove for churn, every registered variant and every in-memory adapter that grows for
/// grow (a filter that cannot grow shows its blow-up).
pub fn subjects_for(workload: &WorkloadSettings) -> Vec<Subject> {
    let all = Subject::all();
    match workload {
        WorkloadSettings::Static => all
            .into_iter()
            .filter(|s| matches!(s, Subject::Variant(_)))
            .collect(),
        WorkloadSettings::Churn(_) => Subject::removable(),
        WorkloadSettings::Grow(_) => all
            .into_iter()
            .filter(|s| match s {
                Subject::Variant(_) => true,
                Subject::Adapter(_) => s.capabilities().grow,
                Subject::Redis(_) => false,
            })
            .collect(),
    }
}

/// Checks that `subject` can run `workload`: churn needs a registered variant that removes; Redis
/// subjects run the static workload only (through `bloomlab-redis`). The error names the
/// subjects that can.
pub fn check_capable(subject: Subject, workload: &WorkloadSettings) -> Result<(), HarnessError> {
    let names = |v: Vec<Subject>| {
        v.iter()
            .map(Subject::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (workload, subject) {
        (WorkloadSettings::Static, _) => Ok(()),
        (_, Subject::Redis(_)) => Err(HarnessError::invalid(
            "filter",
            subject,
            "keeps its bits in Redis, which runs the static workload only",
        )),
        (WorkloadSettings::Grow(_), _) => Ok(()),
        (WorkloadSettings::Churn(_), Subject::Variant(id)) if id.capabilities().remove => Ok(()),
        (WorkloadSettings::Churn(_), _) => Err(HarnessError::invalid(
            "filter",
            subject,
            &format!(
                "cannot remove keys, so it cannot run --workload churn; these can: {}",
                names(Subject::removable())
            ),
        )),
    }
}

/// Whether a variant promises no false negatives: all but the textbook ports, which are measured
/// with their flaws.
fn promises_no_fn(layout: Layout) -> bool {
    layout != Layout::Textbook
}

/// A registered removable filter as a [`RemovableSubject`].
struct Counted<F>(F);

impl<F: Filter + Removable> MeasuredFilter for Counted<F> {
    fn insert(&mut self, b: &[u8]) {
        self.0.insert_bytes(b);
    }
    fn contains(&self, b: &[u8]) -> bool {
        self.0.contains_bytes(b)
    }
    fn shape(&self, members: u64) -> Shape {
        Shape::of(&self.0, members)
    }
    fn saturated(&self) -> u64 {
        self.0.saturated_counters()
    }
    fn overflow_p(&self, members: u64) -> Option<f64> {
        match self.0.layout() {
            // The textbook counting port: 4-bit counters, two per byte.
            Layout::Textbook => Some(overflow_p(&self.0, members, 4)),
            _ => Shape::of(&self.0, members).counter_overflow_p,
        }
    }
}

impl<F: Filter + Removable> RemovableSubject for Counted<F> {
    fn remove(&mut self, b: &[u8]) -> bool {
        self.0.remove_bytes(b)
    }
    fn visit_counters(&self, b: &[u8], visit: &mut dyn FnMut(u64, u64)) {
        self.0.visit_counters(self.0.digest(b), visit);
    }
    fn counter_max(&self) -> u64 {
        self.0.counter_max()
    }
}

/// A registered growable filter as a [`MeasuredFilter`] with stages.
struct Staged<F>(F);

impl<F: Filter + Growable> MeasuredFilter for Staged<F> {
    fn insert(&mut self, b: &[u8]) {
        self.0.insert_bytes(b);
    }
    fn contains(&self, b: &[u8]) -> bool {
        self.0.contains_bytes(b)
    }
    fn shape(&self, members: u64) -> Shape {
        Shape::of(&self.0, members)
    }
    fn stages(&self) -> u64 {
        self.0.stages() as u64
    }
}

/// What [`run_named`] runs: the row's coordinates and how it is measured.
#[derive(Debug, Clone, Copy)]
pub struct NamedRun<'a> {
    /// The filter (registered or a peer), n (the initial capacity for grow), p and overfill
    /// (churn's members held / n; grow ignores it).
    pub spec: &'a TrialSpec,
    /// Key set.
    pub keys: &'a KeySet,
    /// Sampling settings.
    pub sampling: &'a Sampling,
    /// Timing passes per round or step (0: no timing; see the module docs).
    pub timing_passes: usize,
}

impl NamedRun<'_> {
    fn churn<'b>(&'b self, churn: &'b Churn, promises_no_fn: bool) -> ChurnRun<'b> {
        ChurnRun {
            name: self.spec.filter,
            n: self.spec.n,
            p: self.spec.p,
            overfill: self.spec.overfill,
            keys: self.keys,
            sampling: self.sampling,
            churn,
            promises_no_fn,
            timing_passes: self.timing_passes,
        }
    }

    fn grow<'b>(&'b self, grow: &'b Grow, promises_no_fn: bool) -> GrowRun<'b> {
        GrowRun {
            name: self.spec.filter,
            n0: self.spec.n,
            p: self.spec.p,
            keys: self.keys,
            sampling: self.sampling,
            grow,
            promises_no_fn,
            timing_passes: self.timing_passes,
        }
    }

    fn build<F: Variant>(&self) -> Result<F, HarnessError> {
        let TrialSpec { n, p, .. } = *self.spec;
        Spec::Target { n, p }
            .build::<F>()
            .map_err(|e| registry_error(&self.spec.filter.to_string(), n, p, e))
    }
}

/// Runs `workload` (churn or grow) on the filter `run.spec.filter` (registered, or a peer), built
/// for `n` keys at rate `p`. Static settings are an error (the sweep runs static rows itself).
pub fn run_named(
    run: &NamedRun,
    workload: &WorkloadSettings,
) -> Result<Vec<SweepRow>, HarnessError> {
    let TrialSpec {
        filter: subject,
        n,
        p,
        ..
    } = *run.spec;
    check_capable(subject, workload)?;
    let name = &subject.to_string();
    let build_err = |e: BloomError| registry_error(name, n, p, e);
    match *workload {
        WorkloadSettings::Static => Err(HarnessError::invalid(
            "workload",
            "static",
            "run_named runs churn or grow; the sweep runs static rows",
        )),
        WorkloadSettings::Churn(churn) => {
            struct Visit<'a>(&'a NamedRun<'a>, Churn);
            impl RemovableVisitor for Visit<'_> {
                type Output = Result<Vec<SweepRow>, HarnessError>;
                fn visit<F: Variant + Removable>(self) -> Self::Output {
                    let Visit(run, churn) = self;
                    let f = run.build::<F>()?;
                    let promise = promises_no_fn(f.layout());
                    run_churn(&mut Counted(f), &run.churn(&churn, promise))
                }
            }
            registry::visit_removable(name, Visit(run, churn)).map_err(build_err)?
        }
        WorkloadSettings::Grow(grow) => {
            if let Subject::Adapter(adapter) = subject {
                let mut f = adapter.get().build(n, p)?;
                return run_grow(&mut f, &run.grow(&grow, true));
            }
            struct Grows<'a>(&'a NamedRun<'a>, Grow);
            impl GrowableVisitor for Grows<'_> {
                type Output = Result<Vec<SweepRow>, HarnessError>;
                fn visit<F: Variant + Growable>(self) -> Self::Output {
                    let Grows(run, grow) = self;
                    let f = run.build::<F>()?;
                    let promise = promises_no_fn(f.layout());
                    run_grow(&mut Staged(f), &run.grow(&grow, promise))
                }
            }
            struct Fixed<'a>(&'a NamedRun<'a>, Grow);
            impl VariantVisitor for Fixed<'_> {
                type Output = Result<Vec<SweepRow>, HarnessError>;
                fn visit<F: Variant>(self) -> Self::Output {
                    let Fixed(run, grow) = self;
                    let f = run.build::<F>()?;
                    let promise = promises_no_fn(f.layout());
                    run_grow(&mut Plain(f), &run.grow(&grow, promise))
                }
            }
            if registry::capabilities(name).map_err(build_err)?.grow {
                registry::visit_growable(name, Grows(run, grow)).map_err(build_err)?
            } else {
                registry::visit(name, Fixed(run, grow)).map_err(build_err)?
            }
        }
    }
}
