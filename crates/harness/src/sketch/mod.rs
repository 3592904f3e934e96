//! The sketch sweep: HyperLogLog accuracy against its standard error, Count-Min overcounts against
//! its `epsilon N` bound, with the same seeded key sets and exact intervals as the Bloom sweep.
//!
//! # HyperLogLog
//!
//! A *trial* is one seeded sequence of distinct keys (`fmix64(i ^ salt)`, a bijection of `i`, so
//! the cardinality is exact) fed to a fresh sketch in batches; the estimate is read at every
//! checkpoint cardinality on the way (10 to 10^7, log-spaced), so one pass gives every point.
//! Points of one trial are correlated; trials are independent, and every statistic of a row is
//! over trials. Every sketch sees the same key sequence in trial `t` (paired comparisons).
//!
//! Per (sketch, n): the relative errors `e_t = estimate_t / n - 1` give
//! - the bias `mean(e)`, with a Student-t interval;
//! - the RMS `sqrt(mean(e^2))`, with the chi-square interval `RMS sqrt(T / chi2_{T, 1-a/2})` ..
//!   `RMS sqrt(T / chi2_{T, a/2})` (exact when `e` is normal with mean zero, the asymptotic
//!   law of the estimate; the theory is `1.04 / sqrt(m)`);
//! - the share of trials with `|e| <= k 1.04 / sqrt(m)` for k = 1, 2, 3, with Clopper-Pearson
//!   intervals against the normal law's 68.27%, 95.45% and 99.73%.
//!
//! # Count-Min
//!
//! A trial is one stream of `N` draws from a Zipf law of exponent `s` over a universe of `U`
//! items (exponent 0 is the uniform stream), each item a seeded distinct label; every sketch
//! variant sees the same stream. After the stream, *every* universe item's estimate is compared
//! with its true count: an estimate below it is an undercount (the contract says never: the sweep
//! fails), above `true + epsilon N` a violation. A row pools the items of all its trials:
//! `violations / items` with its Clopper-Pearson interval against `delta`. Items of one sketch
//! share its counters, so that interval is nominal; the test with a stated false-alarm rate is
//! per trial ([`violation_bound_p`]), where each trial's share is one independent observation.

pub mod bench;
pub mod gate;

use std::sync::atomic::{AtomicU64, Ordering};

use bloomlab_filters::hash::fmix64;
use bloomlab_filters::{Fnv1a, HashStrategy, Lookup3, Murmur3, Xxh3, Xxh3Wide, Xxh64};
use bloomlab_sketches::cms::dimensions;
use bloomlab_sketches::{CardinalitySketch, CountMin, Rows, SketchError};
use rand::SeedableRng;
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ChiSquared, ContinuousCDF, StudentsT};

use crate::stats::clopper_pearson;

/// The normal law's mass within 1, 2 and 3 standard deviations.
pub const NORMAL_WITHIN: [f64; 3] = [
    0.682_689_492_137_086,
    0.954_499_736_103_642,
    0.997_300_203_936_74,
];

/// Keys per batch handed to a sketch (one round trip for a server's sketch).
pub const BATCH: usize = 4096;

/// Log-spaced cardinalities from `min` to `max` inclusive, `per_decade` per factor of ten,
/// rounded and without repeats.
pub fn log_spaced(min: u64, max: u64, per_decade: u32) -> Vec<u64> {
    let (lo, hi) = ((min.max(1)) as f64, (max.max(min.max(1))) as f64);
    let steps = ((hi / lo).log10() * f64::from(per_decade)).round() as u32;
    let mut out: Vec<u64> = (0..=steps)
        .map(|i| (lo * 10f64.powf(f64::from(i) / f64::from(per_decade))).round() as u64)
        .collect();
    out.dedup();
    if out.last() != Some(&max) && max >= min {
        out.push(max);
    }
    out
}

/// Cardinalities `round(2^(k / per_octave))` for k = 0, 1, ... from `min` up to `max` inclusive,
/// without repeats (the small ones coincide after rounding), `max` always last: the grid of
/// Apache DataSketches' characterization plots (16 points per octave there).
pub fn octave_spaced(min: u64, max: u64, per_octave: u32) -> Vec<u64> {
    let (lo, hi) = (min.max(1), max.max(min.max(1)));
    let per = f64::from(per_octave.max(1));
    let mut out = Vec::new();
    let mut k = ((lo as f64).log2() * per).floor() as i64;
    loop {
        let n = 2f64.powf(k as f64 / per).round() as u64;
        if n > hi {
            break;
        }
        if n >= lo && out.last() != Some(&n) {
            out.push(n);
        }
        k += 1;
    }
    if out.last() != Some(&hi) {
        out.push(hi);
    }
    out
}

/// The salt of trial `trial` of a run seeded `seed`.
fn salt(seed: u64, trial: u64) -> u64 {
    fmix64(fmix64(seed ^ 0x6a09_e667_f3bc_c908).wrapping_add(trial))
}

/// Key `i` of trial `trial`: distinct for distinct `i` (`fmix64` and xor are bijections).
#[inline]
pub fn trial_key(salt: u64, i: u64) -> u64 {
    fmix64(i ^ salt)
}

/// One trial of a cardinality sketch: feeds keys `0..max(checkpoints)` of trial `trial` in
/// batches and returns the estimate at each checkpoint (ascending), the sketch's first output.
pub fn hll_trial<S: CardinalitySketch + ?Sized>(
    sketch: &mut S,
    seed: u64,
    trial: u64,
    checkpoints: &[u64],
) -> Result<Vec<f64>, S::Error> {
    let outputs = sketch.outputs().len();
    let all = hll_trial_outputs(sketch, seed, trial, checkpoints)?;
    Ok(all.chunks(outputs).map(|c| c[0]).collect())
}

/// One trial as [`hll_trial`], every output of the sketch read at each checkpoint: the result
/// holds `checkpoints.len()` groups of `sketch.outputs().len()` estimates.
pub fn hll_trial_outputs<S: CardinalitySketch + ?Sized>(
    sketch: &mut S,
    seed: u64,
    trial: u64,
    checkpoints: &[u64],
) -> Result<Vec<f64>, S::Error> {
    let salt = salt(seed, trial);
    let mut out = Vec::with_capacity(checkpoints.len() * sketch.outputs().len());
    let mut batch = Vec::with_capacity(BATCH);
    let mut next = 0u64;
    for &n in checkpoints {
        while next < n {
            batch.clear();
            let end = n.min(next + BATCH as u64);
            batch.extend((next..end).map(|i| trial_key(salt, i)));
            sketch.insert_batch(&batch)?;
            next = end;
        }
        sketch.estimate_into(&mut out)?;
    }
    Ok(out)
}

/// Settings shared by the HyperLogLog rows of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct HllPlan {
    /// Checkpoint cardinalities, ascending.
    pub cardinalities: Vec<u64>,
    /// Trials per sketch.
    pub trials: u64,
    /// Run seed.
    pub seed: u64,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// Revision the rows were measured at.
    pub revision: String,
}

/// One (sketch, n) of the HyperLogLog sweep: every figure is a column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HllRow {
    /// Sketch name (`hll/xxh3/p14`, `peer/hyperloglogplus/xxh3/p14`, `redis/pfadd/p14`).
    pub sketch: String,
    /// Estimator label (see `bloomlab_sketches::cardinality::estimator`).
    pub estimator: String,
    /// Precision p.
    pub precision: u8,
    /// Register count m = 2^p.
    pub registers: u64,
    /// Register memory in bytes where the sketch lives (after the largest n).
    pub memory_bytes: u64,
    /// True distinct count.
    pub n: u64,
    /// Independent trials.
    pub trials: u64,
    /// `1.04 / sqrt(m)`.
    pub std_error_theory: f64,
    /// Mean relative error.
    pub bias: f64,
    /// Lower end of the two-sided Student-t interval of the bias at `confidence` (NaN with
    /// fewer than two trials).
    pub bias_low: f64,
    /// Upper end of the two-sided Student-t interval of the bias at `confidence` (NaN with
    /// fewer than two trials).
    pub bias_high: f64,
    /// Standard deviation of the relative error (divisor T - 1).
    pub sd: f64,
    /// Root mean square relative error.
    pub rms: f64,
    /// Lower end of the chi-square interval of the RMS at `confidence`,
    /// `rms sqrt(T / chi2_{T, 1-a/2})`, as a fraction of the true count.
    pub rms_low: f64,
    /// Upper end of the chi-square interval of the RMS at `confidence`,
    /// `rms sqrt(T / chi2_{T, a/2})`, as a fraction of the true count.
    pub rms_high: f64,
    /// `rms / std_error_theory`.
    pub rms_over_theory: f64,
    /// Whether the theory lies inside the RMS interval.
    pub theory_in_rms_interval: bool,
    /// Trials with `|e| <= std_error_theory` (the normal law puts 68.27% there).
    pub within1: u64,
    /// Trials with `|e| <= 2 std_error_theory` (the normal law puts 95.45% there).
    pub within2: u64,
    /// Trials with `|e| <= 3 std_error_theory` (the normal law puts 99.73% there).
    pub within3: u64,
    /// `within1 / trials`, in [0, 1]; compare with [`NORMAL_WITHIN`]`[0]`.
    pub share1: f64,
    /// Lower end of the Clopper-Pearson interval of `share1` at `confidence`.
    pub share1_low: f64,
    /// Upper end of the Clopper-Pearson interval of `share1` at `confidence`.
    pub share1_high: f64,
    /// `within2 / trials`, in [0, 1]; compare with [`NORMAL_WITHIN`]`[1]`.
    pub share2: f64,
    /// Lower end of the Clopper-Pearson interval of `share2` at `confidence`.
    pub share2_low: f64,
    /// Upper end of the Clopper-Pearson interval of `share2` at `confidence`.
    pub share2_high: f64,
    /// `within3 / trials`, in [0, 1]; compare with [`NORMAL_WITHIN`]`[2]`.
    pub share3: f64,
    /// Lower end of the Clopper-Pearson interval of `share3` at `confidence`.
    pub share3_low: f64,
    /// Upper end of the Clopper-Pearson interval of `share3` at `confidence`.
    pub share3_high: f64,
    /// Smallest relative error over the trials, as a fraction of the true count.
    pub min_error: f64,
    /// Largest relative error over the trials, as a fraction of the true count.
    pub max_error: f64,
    /// Empirical quantiles of the relative error at the normal law's -3, -2, -1, 0, +1, +2, +3
    /// sigma levels (0.135%, 2.275%, 15.866%, 50%, 84.134%, 97.725%, 99.865%; type 7, linear
    /// between order statistics): the contours of the pitchfork pictures. This one is the
    /// -3 sigma level, 0.135%.
    pub q_m3: f64,
    /// Relative error quantile at the -2 sigma level, 2.275%.
    pub q_m2: f64,
    /// Relative error quantile at the -1 sigma level, 15.866%.
    pub q_m1: f64,
    /// Median relative error (the 50% level).
    pub q_median: f64,
    /// Relative error quantile at the +1 sigma level, 84.134%.
    pub q_p1: f64,
    /// Relative error quantile at the +2 sigma level, 97.725%.
    pub q_p2: f64,
    /// Relative error quantile at the +3 sigma level, 99.865%.
    pub q_p3: f64,
    /// Run seed the trials' keys derive from: the same seed gives the same key sequences.
    pub seed: u64,
    /// Confidence level of the row's intervals, in (0, 1).
    pub confidence: f64,
    /// Revision measured.
    pub revision: String,
}

/// The normal law's CDF at -3 .. +3 sigma, the levels of [`HllRow`]'s quantile columns.
pub const SIGMA_LEVELS: [f64; 7] = [
    0.001_349_898_031_630_1,
    0.022_750_131_948_179_2,
    0.158_655_253_931_457,
    0.5,
    0.841_344_746_068_543,
    0.977_249_868_051_821,
    0.998_650_101_968_37,
];

/// The quantile at level `q` in [0, 1] of sorted values (type 7: linear between the order
/// statistics at `(T - 1) q`). NaN for no values.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let (lo, frac) = (h.floor() as usize, h - h.floor());
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + frac * (sorted[hi] - sorted[lo])
}

/// Mean and standard deviation (divisor T - 1; 0 for fewer than two values) of `values`,
/// computed about the first value: values that are all equal give exactly that value and a
/// standard deviation of exactly 0. Summing them as they are would not: the rounding of
/// `sum / T` leaves a mean a few ulps off the common value, and a standard deviation of about
/// 1e-16 that a test would read as a (tiny) spread.
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    let Some(&first) = values.first() else {
        return (f64::NAN, f64::NAN);
    };
    let t = values.len() as f64;
    let shift = values.iter().map(|v| v - first).sum::<f64>() / t;
    let ss = values
        .iter()
        .map(|v| (v - first - shift).powi(2))
        .sum::<f64>();
    (first + shift, (ss / (t - 1.0).max(1.0)).sqrt())
}

/// Whether every trial of a point gave the same estimate (at least two trials): its error is
/// then a fixed number, not a sample, and a test of its mean or RMS has nothing to estimate
/// ([`bias_test`], [`rms_test`]). Linear counting at n = 1 is such a point (one register set,
/// `m ln(m / (m - 1))` whichever it is); Ertl's estimator there is not (the set register's value
/// enters its sum, so trials differ by about 1e-9 of n at p = 14).
pub fn deterministic(r: &HllRow) -> bool {
    r.trials >= 2 && r.min_error == r.max_error
}

/// Mean, Student-t interval of the mean, RMS and its chi-square interval of relative errors.
pub fn error_stats(errors: &[f64], confidence: f64) -> (f64, (f64, f64), f64, (f64, f64)) {
    let t = errors.len() as f64;
    let (mean, sd) = mean_sd(errors);
    let ms = errors.iter().map(|e| e * e).sum::<f64>() / t;
    let rms = ms.sqrt();
    let alpha = 1.0 - confidence;
    let var = sd * sd;
    let bias_ci = if errors.len() > 1 {
        let q = StudentsT::new(0.0, 1.0, t - 1.0)
            .map(|d| d.inverse_cdf(1.0 - alpha / 2.0))
            .unwrap_or(f64::NAN);
        let half = q * (var / t).sqrt();
        (mean - half, mean + half)
    } else {
        (f64::NAN, f64::NAN)
    };
    let rms_ci = match ChiSquared::new(t) {
        Ok(chi) => (
            rms * (t / chi.inverse_cdf(1.0 - alpha / 2.0)).sqrt(),
            rms * (t / chi.inverse_cdf(alpha / 2.0)).sqrt(),
        ),
        Err(_) => (f64::NAN, f64::NAN),
    };
    (mean, bias_ci, rms, rms_ci)
}

/// Summarises one (sketch, n) from its trials' estimates.
#[allow(clippy::too_many_arguments)]
pub fn hll_row(
    sketch: &str,
    estimator: &str,
    precision: u8,
    memory_bytes: u64,
    n: u64,
    estimates: &[f64],
    plan: &HllPlan,
) -> HllRow {
    let m = 1u64 << precision;
    let se = bloomlab_sketches::hll::standard_error(precision);
    let errors: Vec<f64> = estimates.iter().map(|e| e / n as f64 - 1.0).collect();
    let (bias, (bias_low, bias_high), rms, (rms_low, rms_high)) =
        error_stats(&errors, plan.confidence);
    let within = |k: f64| errors.iter().filter(|e| e.abs() <= k * se).count() as u64;
    let mut sorted = errors.clone();
    sorted.sort_by(f64::total_cmp);
    let q = SIGMA_LEVELS.map(|l| quantile_sorted(&sorted, l));
    let sd = mean_sd(&errors).1;
    let trials = errors.len() as u64;
    let (w1, w2, w3) = (within(1.0), within(2.0), within(3.0));
    let ci = |x| clopper_pearson(x, trials, plan.confidence);
    let ((l1, h1), (l2, h2), (l3, h3)) = (ci(w1), ci(w2), ci(w3));
    let share = |x: u64| x as f64 / trials as f64;
    HllRow {
        sketch: sketch.to_owned(),
        estimator: estimator.to_owned(),
        precision,
        registers: m,
        memory_bytes,
        n,
        trials,
        std_error_theory: se,
        bias,
        bias_low,
        bias_high,
        sd,
        rms,
        rms_low,
        rms_high,
        rms_over_theory: rms / se,
        theory_in_rms_interval: rms_low <= se && se <= rms_high,
        within1: w1,
        within2: w2,
        within3: w3,
        share1: share(w1),
        share1_low: l1,
        share1_high: h1,
        share2: share(w2),
        share2_low: l2,
        share2_high: h2,
        share3: share(w3),
        share3_low: l3,
        share3_high: h3,
        min_error: errors.iter().copied().fold(f64::INFINITY, f64::min),
        max_error: errors.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        q_m3: q[0],
        q_m2: q[1],
        q_m1: q[2],
        q_median: q[3],
        q_p1: q[4],
        q_p2: q[5],
        q_p3: q[6],
        seed: plan.seed,
        confidence: plan.confidence,
        revision: plan.revision.clone(),
    }
}

/// Every estimate of a HyperLogLog run: for each output (sketch name), trial and checkpoint,
/// so any statistic can be recomputed.
#[derive(Debug, Clone, PartialEq)]
pub struct HllTrials {
    /// Output names, as in [`HllRow::sketch`].
    pub sketches: Vec<String>,
    /// Checkpoint cardinalities.
    pub cardinalities: Vec<u64>,
    /// `estimates[output][trial][checkpoint]`.
    pub estimates: Vec<Vec<Vec<f64>>>,
}

/// A HyperLogLog run: the summary rows and the per-trial estimates behind them.
#[derive(Debug, Clone, PartialEq)]
pub struct HllRun {
    /// One summary per (output, checkpoint): outputs in the sketch's order, checkpoints
    /// ascending within each.
    pub rows: Vec<HllRow>,
    /// Every trial's estimates the rows summarise.
    pub trials: HllTrials,
}

/// Runs `plan.trials` trials of the sketches `make(trial)` builds, `parallel` on rayon's current
/// pool (or one after the other, for a sketch on a server), and returns one row per (output,
/// checkpoint) with every trial's estimates. Trial `t` always feeds the same keys whatever the
/// thread count, so the run is reproducible. `progress` is called with the trials done so far.
pub fn run_hll<S, E, F>(
    make: F,
    plan: &HllPlan,
    parallel: bool,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<HllRun, E>
where
    S: CardinalitySketch + ?Sized,
    E: From<S::Error> + Send,
    F: Fn(u64) -> Result<Box<S>, E> + Sync,
{
    type Meta = (Vec<(String, &'static str)>, u8, u64);
    let done = AtomicU64::new(0);
    let one = |t: u64| -> Result<(Vec<f64>, Meta), E> {
        let mut s = make(t)?;
        let est = hll_trial_outputs(s.as_mut(), plan.seed, t, &plan.cardinalities)?;
        let mem = s.memory_bytes()?;
        let meta = (s.outputs(), s.precision(), mem);
        s.discard()?;
        progress(done.fetch_add(1, Ordering::Relaxed) + 1);
        Ok((est, meta))
    };
    let results: Vec<_> = if parallel {
        (0..plan.trials)
            .into_par_iter()
            .map(one)
            .collect::<Result<_, E>>()?
    } else {
        (0..plan.trials).map(one).collect::<Result<_, E>>()?
    };
    let Some(first) = results.first() else {
        return Ok(HllRun {
            rows: Vec::new(),
            trials: HllTrials {
                sketches: Vec::new(),
                cardinalities: plan.cardinalities.clone(),
                estimates: Vec::new(),
            },
        });
    };
    let (outputs, precision) = (first.1.0.clone(), first.1.1);
    let k = outputs.len();
    let memory = results.iter().map(|r| r.1.2).max().unwrap_or(0);
    let estimates: Vec<Vec<Vec<f64>>> = (0..k)
        .map(|o| {
            results
                .iter()
                .map(|r| r.0.chunks(k).map(|c| c[o]).collect())
                .collect()
        })
        .collect();
    let mut rows = Vec::with_capacity(k * plan.cardinalities.len());
    for (o, (name, estimator)) in outputs.iter().enumerate() {
        for (i, &n) in plan.cardinalities.iter().enumerate() {
            let est: Vec<f64> = estimates[o].iter().map(|t| t[i]).collect();
            rows.push(hll_row(name, estimator, precision, memory, n, &est, plan));
        }
    }
    Ok(HllRun {
        rows,
        trials: HllTrials {
            sketches: outputs.into_iter().map(|o| o.0).collect(),
            cardinalities: plan.cardinalities.clone(),
            estimates,
        },
    })
}

/// A run of consecutive cardinalities of one sketch where its error leaves the stated one.
#[derive(Debug, Clone, PartialEq)]
pub struct Departure {
    /// Sketch name.
    pub sketch: String,
    /// `bias` (mean error significantly nonzero) or `rms` (RMS significantly above
    /// `1.04 / sqrt(m)`).
    pub what: &'static str,
    /// First n of the run (consecutive checkpoints that all depart).
    pub n_from: u64,
    /// Last n of the run, inclusive.
    pub n_to: u64,
    /// Length of the run in checkpoints (at least 1).
    pub points: usize,
    /// The n of the largest departure in the run: largest `|bias|` for `bias`, largest
    /// RMS / stated for `rms`.
    pub n_peak: u64,
    /// At `n_peak`: the bias (mean relative error, a fraction of n) for `bias`, or
    /// RMS / `stated` for `rms`.
    pub value: f64,
    /// Lower end of `value`'s interval at the per-test level `alpha`: the Student-t bound of
    /// the bias, or the one-sided chi-square lower bound of the RMS over `stated` (which
    /// exceeds 1 for an `rms` departure).
    pub low: f64,
    /// Upper end of `value`'s interval at the per-test level `alpha`, in the same unit as
    /// `low`.
    pub high: f64,
    /// Whether `n_peak` is a [`deterministic`] point: `value` is exact (`low = high = value`),
    /// read, not tested.
    pub exact: bool,
    /// Registers m, so n can be read as n / m.
    pub registers: u64,
    /// The stated error `1.04 / sqrt(m)`, so a bias can be read against it.
    pub stated: f64,
    /// Per-test level (the family's `alpha` over its tests, Bonferroni).
    pub alpha: f64,
}

/// One test of one point: whether it rejects, and the value with its interval at the test's
/// level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointTest {
    /// Whether the point departs (the test rejects at its level).
    pub flagged: bool,
    /// The bias (a fraction of n) or RMS / stated.
    pub value: f64,
    /// Lower end of `value`'s interval at the test's level.
    pub low: f64,
    /// Upper end of `value`'s interval at the test's level.
    pub high: f64,
    /// Whether the point is [`deterministic`]: `value` is then exact, `low = high = value`, and
    /// the point departs exactly when the value is beyond the stated one (a bias not 0, an RMS
    /// above `1.04 / sqrt(m)`).
    pub exact: bool,
}

/// The bias test of one point at level `alpha`: two-sided Student t of "mean error = 0" from the
/// row's `bias`, `sd` and `trials`; on a [`deterministic`] point the bias is exact and departs
/// when it is not 0. Not flagged, with a NaN interval, with fewer than two trials.
pub fn bias_test(r: &HllRow, alpha: f64) -> PointTest {
    if deterministic(r) {
        return PointTest {
            flagged: r.bias != 0.0,
            value: r.bias,
            low: r.bias,
            high: r.bias,
            exact: true,
        };
    }
    let t = r.trials as f64;
    let half = StudentsT::new(0.0, 1.0, t - 1.0)
        .map(|d| d.inverse_cdf(1.0 - alpha / 2.0) * r.sd / t.sqrt())
        .unwrap_or(f64::NAN);
    PointTest {
        flagged: r.bias - half > 0.0 || r.bias + half < 0.0,
        value: r.bias,
        low: r.bias - half,
        high: r.bias + half,
        exact: false,
    }
}

/// The RMS test of one point at level `alpha`: one-sided chi-square of "RMS <= 1.04 / sqrt(m)"
/// (as the gate's), the value RMS / stated with each end of its interval one-sided at `alpha`;
/// on a [`deterministic`] point the RMS is exact and departs when it is above the stated error.
pub fn rms_test(r: &HllRow, alpha: f64) -> PointTest {
    let se = r.std_error_theory;
    if deterministic(r) {
        let v = r.rms / se;
        return PointTest {
            flagged: v > 1.0,
            value: v,
            low: v,
            high: v,
            exact: true,
        };
    }
    let t = r.trials as f64;
    match ChiSquared::new(t) {
        Ok(chi) => {
            let lo = r.rms * (t / chi.inverse_cdf(1.0 - alpha)).sqrt();
            let hi = r.rms * (t / chi.inverse_cdf(alpha)).sqrt();
            PointTest {
                flagged: lo > se,
                value: r.rms / se,
                low: lo / se,
                high: hi / se,
                exact: false,
            }
        }
        Err(_) => PointTest {
            flagged: false,
            value: r.rms / se,
            low: f64::NAN,
            high: f64::NAN,
            exact: false,
        },
    }
}

/// Finds, per sketch, where its bias or RMS leaves its interval around the stated error: at
/// each n, two tests, [`bias_test`] and [`rms_test`], each at
/// `family_alpha / (2 x points of the sketch)` (Bonferroni), so a sketch that keeps its contract
/// at every n shows any departure with probability at most `family_alpha`. A
/// [`deterministic`] point (every trial the same estimate, whatever the estimator) is not
/// tested but read exactly: it departs when its error is not 0 (bias) or above the stated
/// error (RMS). Rejections at consecutive checkpoints are merged into one [`Departure`]. Rows
/// must carry `sd`, `trials` and the error range.
pub fn departures(rows: &[HllRow], family_alpha: f64) -> Vec<Departure> {
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.sketch.as_str()) {
            names.push(&r.sketch);
        }
    }
    let mut out = Vec::new();
    for name in names {
        let s: Vec<&HllRow> = rows.iter().filter(|r| r.sketch == name).collect();
        let alpha = family_alpha / (2 * s.len()).max(1) as f64;
        let flags: Vec<[PointTest; 2]> = s
            .iter()
            .map(|r| [bias_test(r, alpha), rms_test(r, alpha)])
            .collect();
        for (k, what) in ["bias", "rms"].into_iter().enumerate() {
            let mut i = 0;
            while i < s.len() {
                if !flags[i][k].flagged {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < s.len() && flags[i][k].flagged {
                    i += 1;
                }
                let peak = (start..i)
                    .max_by(|&a, &b| {
                        let f = |j: usize| {
                            if k == 0 {
                                flags[j][k].value.abs()
                            } else {
                                flags[j][k].value
                            }
                        };
                        f(a).total_cmp(&f(b))
                    })
                    .unwrap_or(start);
                out.push(Departure {
                    sketch: name.to_owned(),
                    what,
                    n_from: s[start].n,
                    n_to: s[i - 1].n,
                    points: i - start,
                    n_peak: s[peak].n,
                    value: flags[peak][k].value,
                    low: flags[peak][k].low,
                    high: flags[peak][k].high,
                    exact: flags[peak][k].exact,
                    registers: s[peak].registers,
                    stated: s[peak].std_error_theory,
                    alpha,
                });
            }
        }
    }
    out
}

/// Settings of the Count-Min rows of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct CmsPlan {
    /// Error bound as a fraction of the stream's total count.
    pub epsilon: f64,
    /// Probability the bound may fail for an item.
    pub delta: f64,
    /// Zipf exponents; 0 is the uniform stream.
    pub exponents: Vec<f64>,
    /// Items in the universe.
    pub universe: u64,
    /// Draws per stream (the total count N).
    pub stream: u64,
    /// Trials (streams) per exponent.
    pub trials: u64,
    /// Hashes the sketches are built on.
    pub hashes: Vec<String>,
    /// Run seed.
    pub seed: u64,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// Revision measured.
    pub revision: String,
}

/// One (sketch, exponent) of the Count-Min sweep, pooled over its trials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CmsRow {
    /// Sketch name (`cms/xxh3/2719x5`, `/cu` for conservative update).
    pub sketch: String,
    /// Hash strategy.
    pub hash: String,
    /// `standard` or `conservative`.
    pub update: String,
    /// Row scheme: `h1+i*h2` or `independent` (see `bloomlab_sketches::cms::Rows`).
    pub rows: String,
    /// The contract's error bound, as a fraction of the stream's total count N, in (0, 1).
    pub epsilon: f64,
    /// The contract's per-item probability of exceeding `epsilon N`, in (0, 1).
    pub delta: f64,
    /// The failure probability the depth proves, `e^-depth` (at most `delta`).
    pub delta_proved: f64,
    /// Counters per row, `ceil(e / epsilon)`.
    pub width: u64,
    /// Rows of counters, `ceil(ln(1 / delta))` (at least 1).
    pub depth: u64,
    /// Counter memory in bytes.
    pub memory_bytes: u64,
    /// Zipf exponent (0 = uniform).
    pub exponent: f64,
    /// `uniform` or `zipf-<s>`.
    pub stream: String,
    /// Distinct items in the universe the stream draws from; each is compared after a stream.
    pub universe: u64,
    /// Draws per stream, N.
    pub total: u64,
    /// `epsilon N`.
    pub bound: f64,
    /// Independent streams pooled in the row.
    pub trials: u64,
    /// Items compared (universe x trials).
    pub items: u64,
    /// Items whose estimate was below their count (the contract: none).
    pub undercounts: u64,
    /// Items whose overcount exceeded `epsilon N`.
    pub violations: u64,
    /// `violations / items`, in [0, 1].
    pub share: f64,
    /// Lower end of the Clopper-Pearson interval of `share` at `confidence` (nominal: items
    /// share counters).
    pub share_low: f64,
    /// Upper end of the Clopper-Pearson interval of `share` at `confidence` (nominal: items
    /// share counters).
    pub share_high: f64,
    /// Whether the interval lies wholly at or below delta... (`share_high <= delta`).
    pub below_delta: bool,
    /// p-value of the per-trial test of "expected share <= delta" ([`violation_bound_p`]).
    pub bound_p: f64,
    /// Mean overcount over all compared items, as a fraction of `epsilon N` (above 1 means
    /// beyond the bound).
    pub mean_over_bound: f64,
    /// Largest overcount of any item in any trial, as a fraction of `epsilon N`.
    pub max_over_bound: f64,
    /// Items with a nonzero true count, summed over trials.
    pub present_items: u64,
    /// Run seed the streams derive from: the same seed gives the same streams and labels.
    pub seed: u64,
    /// Confidence level of the row's interval, in (0, 1).
    pub confidence: f64,
    /// Revision the row was measured at.
    pub revision: String,
}

/// The p-value bound for "each trial's expected violation share is at most `delta`" given the
/// trials' shares `s_t` in [0, 1]: `exp(-T KL(mean s || delta))` when `mean s > delta`, else 1.
///
/// Why it holds: for `s` in [0, 1] with mean `mu <= delta`, convexity gives
/// `E exp(l s) <= 1 - delta + delta e^l` for `l >= 0`, the Bernoulli(delta) moment generating
/// function, so the Chernoff bound of a Binomial(T, delta) sum bounds the sum of the shares'
/// upper tail. Rejecting when this is below `alpha` has false-alarm rate at most `alpha` for a
/// sketch that keeps its contract, whatever the dependence between items inside a trial.
pub fn violation_bound_p(shares: &[f64], delta: f64) -> f64 {
    let t = shares.len() as f64;
    if shares.is_empty() {
        return 1.0;
    }
    let a = shares.iter().sum::<f64>() / t;
    if a <= delta {
        return 1.0;
    }
    let kl = if a >= 1.0 {
        (1.0 / delta).ln()
    } else {
        a * (a / delta).ln() + (1.0 - a) * ((1.0 - a) / (1.0 - delta)).ln()
    };
    (-t * kl).exp()
}

/// A Count-Min variant: hash, update rule and row scheme.
#[derive(Debug, Clone, PartialEq)]
pub struct CmsVariant {
    /// Hash strategy name: `xxh3`, `murmur3`, `fnv1a`, `xxh3-128`, `xxh64` or
    /// `lookup3`.
    pub hash: String,
    /// Whether adds use conservative update (each counter raised only to the row minimum plus
    /// the count); otherwise every row's counter is incremented.
    pub conservative: bool,
    /// How each row's column is derived from a key's digest.
    pub rows: Rows,
}

/// What one (variant, trial) measured.
#[derive(Debug, Clone, Copy, Default)]
struct CmsTrial {
    items: u64,
    present: u64,
    undercounts: u64,
    violations: u64,
    over_sum: f64,
    over_max: f64,
}

/// Feeds a stream to a fresh sketch of `H` and compares every item.
#[allow(clippy::too_many_arguments)]
fn cms_trial_for<H: HashStrategy>(
    width: u64,
    depth: u64,
    conservative: bool,
    rows: Rows,
    labels: &[u64],
    counts: &[u64],
    stream: &[u32],
    bound: f64,
) -> Result<CmsTrial, SketchError> {
    let mut cms = CountMin::<H>::with_dimensions(width, depth)?.with_rows(rows);
    if conservative {
        cms = cms.conservative();
    }
    for &i in stream {
        cms.add(&labels[i as usize], 1);
    }
    let mut r = CmsTrial::default();
    for (label, &truth) in labels.iter().zip(counts) {
        let est = cms.estimate(label);
        r.items += 1;
        r.present += u64::from(truth > 0);
        if est < truth {
            r.undercounts += 1;
            continue;
        }
        let over = (est - truth) as f64;
        r.violations += u64::from(over > bound);
        r.over_sum += over / bound;
        r.over_max = r.over_max.max(over / bound);
    }
    Ok(r)
}

fn cms_trial(
    v: &CmsVariant,
    width: u64,
    depth: u64,
    labels: &[u64],
    counts: &[u64],
    stream: &[u32],
    bound: f64,
) -> Result<CmsTrial, SketchError> {
    let (c, r) = (v.conservative, v.rows);
    match v.hash.as_str() {
        "xxh3" => cms_trial_for::<Xxh3>(width, depth, c, r, labels, counts, stream, bound),
        "murmur3" => cms_trial_for::<Murmur3>(width, depth, c, r, labels, counts, stream, bound),
        "fnv1a" => cms_trial_for::<Fnv1a>(width, depth, c, r, labels, counts, stream, bound),
        "xxh3-128" => cms_trial_for::<Xxh3Wide>(width, depth, c, r, labels, counts, stream, bound),
        "xxh64" => cms_trial_for::<Xxh64>(width, depth, c, r, labels, counts, stream, bound),
        "lookup3" => cms_trial_for::<Lookup3>(width, depth, c, r, labels, counts, stream, bound),
        other => Err(SketchError::UnknownHash {
            name: other.to_owned(),
            known: bloomlab_sketches::cardinality::HASHES.join(", "),
        }),
    }
}

/// The stream of trial `trial` at exponent `s`: item labels, true counts and the draws.
fn make_stream(plan: &CmsPlan, s: f64, trial: u64) -> (Vec<u64>, Vec<u64>, Vec<u32>) {
    let salt = salt(plan.seed ^ s.to_bits(), trial);
    let labels: Vec<u64> = (0..plan.universe).map(|i| trial_key(salt, i)).collect();
    let mut rng = Pcg64Mcg::seed_from_u64(salt);
    let zipf = Zipf::new(plan.universe as f64, s).expect("checked by CmsPlan::validate");
    let mut counts = vec![0u64; plan.universe as usize];
    let stream: Vec<u32> = (0..plan.stream)
        .map(|_| {
            let i = (zipf.sample(&mut rng) as u64 - 1).min(plan.universe - 1) as u32;
            counts[i as usize] += 1;
            i
        })
        .collect();
    (labels, counts, stream)
}

impl CmsPlan {
    /// Checks the settings: epsilon and delta in (0, 1), exponents finite and >= 0, universe in
    /// 1..=2^32, stream and trials at least 1.
    pub fn validate(&self) -> Result<(u64, u64), String> {
        let dims = dimensions(self.epsilon, self.delta).map_err(|e| e.to_string())?;
        for &s in &self.exponents {
            if !(s.is_finite() && s >= 0.0) {
                return Err(format!(
                    "Zipf exponent {s} is invalid: it must be a finite number >= 0 (0 is uniform)"
                ));
            }
        }
        if !(1..=1u64 << 32).contains(&self.universe) {
            return Err(format!(
                "universe = {} is invalid: it must be in 1..=4294967296",
                self.universe
            ));
        }
        if self.stream == 0 || self.trials == 0 {
            return Err(format!(
                "stream = {} and trials = {} are invalid: both must be at least 1",
                self.stream, self.trials
            ));
        }
        if self.hashes.is_empty() {
            return Err("no hash given for the Count-Min sketches".into());
        }
        Ok(dims)
    }
}

/// Runs the Count-Min plan (trials in parallel on rayon's current pool) and returns one row per
/// (exponent, hash, update rule). `progress` is called with the streams done so far.
pub fn run_cms(plan: &CmsPlan, progress: &(dyn Fn(u64) + Sync)) -> Result<Vec<CmsRow>, String> {
    let (width, depth) = plan.validate()?;
    let variants: Vec<CmsVariant> = plan
        .hashes
        .iter()
        .flat_map(|h| {
            [Rows::DoubleHash, Rows::Independent]
                .into_iter()
                .flat_map(move |r| {
                    [false, true].map(|c| CmsVariant {
                        hash: h.clone(),
                        conservative: c,
                        rows: r,
                    })
                })
        })
        .collect();
    let bound = plan.epsilon * plan.stream as f64;
    let done = AtomicU64::new(0);
    let tasks: Vec<(usize, u64)> = (0..plan.exponents.len())
        .flat_map(|e| (0..plan.trials).map(move |t| (e, t)))
        .collect();
    let results: Vec<Vec<CmsTrial>> = tasks
        .par_iter()
        .map(|&(e, t)| {
            let (labels, counts, stream) = make_stream(plan, plan.exponents[e], t);
            let r = variants
                .iter()
                .map(|v| cms_trial(v, width, depth, &labels, &counts, &stream, bound))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string());
            progress(done.fetch_add(1, Ordering::Relaxed) + 1);
            r
        })
        .collect::<Result<_, _>>()?;
    let mut rows = Vec::new();
    for (e, &s) in plan.exponents.iter().enumerate() {
        for (vi, v) in variants.iter().enumerate() {
            let trials: Vec<CmsTrial> = tasks
                .iter()
                .zip(&results)
                .filter(|((te, _), _)| *te == e)
                .map(|(_, r)| r[vi])
                .collect();
            let items: u64 = trials.iter().map(|t| t.items).sum();
            let violations: u64 = trials.iter().map(|t| t.violations).sum();
            let (lo, hi) = clopper_pearson(violations, items, plan.confidence);
            let shares: Vec<f64> = trials
                .iter()
                .map(|t| t.violations as f64 / t.items as f64)
                .collect();
            let name = format!(
                "cms/{}/{width}x{depth}{}{}",
                v.hash,
                v.rows.suffix(),
                if v.conservative { "/cu" } else { "" }
            );
            rows.push(CmsRow {
                sketch: name,
                hash: v.hash.clone(),
                update: if v.conservative {
                    "conservative"
                } else {
                    "standard"
                }
                .into(),
                rows: v.rows.label().into(),
                epsilon: plan.epsilon,
                delta: plan.delta,
                delta_proved: (-(depth as f64)).exp(),
                width,
                depth,
                memory_bytes: width * depth * 8,
                exponent: s,
                stream: stream_name(s),
                universe: plan.universe,
                total: plan.stream,
                bound,
                trials: trials.len() as u64,
                items,
                undercounts: trials.iter().map(|t| t.undercounts).sum(),
                violations,
                share: violations as f64 / items as f64,
                share_low: lo,
                share_high: hi,
                below_delta: hi <= plan.delta,
                bound_p: violation_bound_p(&shares, plan.delta),
                mean_over_bound: trials.iter().map(|t| t.over_sum).sum::<f64>() / items as f64,
                max_over_bound: trials.iter().map(|t| t.over_max).fold(0.0, f64::max),
                present_items: trials.iter().map(|t| t.present).sum(),
                seed: plan.seed,
                confidence: plan.confidence,
                revision: plan.revision.clone(),
            });
        }
    }
    Ok(rows)
}

/// One Count-Min variant over the plan's first exponent, trials in parallel: (undercounts, each
/// trial's violation share, violations, items compared), for the gate.
pub fn cms_point(
    plan: &CmsPlan,
    hash: &str,
    width: u64,
    depth: u64,
    conservative: bool,
    rows: Rows,
) -> Result<(u64, Vec<f64>, u64, u64), SketchError> {
    let v = CmsVariant {
        hash: hash.to_owned(),
        conservative,
        rows,
    };
    let bound = plan.epsilon * plan.stream as f64;
    let s = plan.exponents[0];
    let trials: Vec<CmsTrial> = (0..plan.trials)
        .into_par_iter()
        .map(|t| {
            let (labels, counts, stream) = make_stream(plan, s, t);
            cms_trial(&v, width, depth, &labels, &counts, &stream, bound)
        })
        .collect::<Result<_, _>>()?;
    Ok((
        trials.iter().map(|t| t.undercounts).sum(),
        trials
            .iter()
            .map(|t| t.violations as f64 / t.items as f64)
            .collect(),
        trials.iter().map(|t| t.violations).sum(),
        trials.iter().map(|t| t.items).sum(),
    ))
}

/// `uniform` for exponent 0, else `zipf-<s>`.
pub fn stream_name(s: f64) -> String {
    if s == 0.0 {
        "uniform".into()
    } else {
        format!("zipf-{s}")
    }
}
