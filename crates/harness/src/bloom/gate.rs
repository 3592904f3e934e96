//! The FPR gate: re-runs fixed trials and fails when a filter's false-positive rate drifts.
//!
//! Each baseline point fixes a trial (filter, key set, n, p, seed, queries) and the false-positive
//! count it gave. The gate re-runs it with the same seed and applies four checks:
//! 1. **no false negatives**: every inserted member is found (no statistics: any miss fails);
//! 2. **theory**: the count is consistent with the layout-correct theoretical FPR
//!    ([`bloomlab_filters::Geometry::fpr`]), by an exact two-sided binomial test; a filter much
//!    *better* than theory fails too (its size or its theory is wrong);
//! 3. **drift**: the count is consistent with the baseline's, by the conditional test of equal rates
//!    ([`crate::stats::hypothesis::rate_ratio_test`]);
//! 4. **fill** (every filter of flat geometry, [`Geometry::Flat`]: the classic layout and the
//!    textbook port): the number of set bits is consistent with k n independent uniform probes into
//!    m bits (occupancy mean and variance, normal approximation). This catches a filter that sets
//!    fewer bits than it claims, which barely moves the FPR near the optimal k.
//!
//! A point visits the registry once and builds its filter once: the trial fills and queries the
//! filter the visit built, and `--update` plans a point's queries from that same filter's
//! theoretical FPR before filling it.
//!
//! **Churn and grow points** run their workload ([`crate::bloom::workload`]) with the point's seed and
//! judge the last round or growth step: any false negative in any round or step fails outright;
//! the count is tested against theory and against the baseline as above; a grow point's count must
//! also not lie significantly above the target p (a one-sided exact binomial test: a scalable
//! filter promises p whatever the growth). No fill check (the occupancy model is that of one
//! filling). Static and workload points are two families, each with the whole `family_alpha`
//! (Bonferroni over 3 tests per static point, 4 per workload point), so adding workload points
//! changes nothing for the static ones.
//!
//! **Error rates.** The three statistical checks of every point share a family-wise false-alarm
//! rate `family_alpha` (default 1e-4) by Bonferroni: each test runs at
//! `family_alpha / (3 x points)`. Each point's query count is the smallest for which the drift test
//! at that level detects a `detect_rel` (default +10%) change of the point's theoretical FPR with
//! probability at least `power` (default 0.99), computed exactly ([`crate::stats::hypothesis::drift_power`]).
//! An unchanged filter reproduces the baseline's count exactly (same seed, same keys), so the drift
//! test then cannot fire; the false-alarm rate matters for changes that keep the FPR (a different
//! but equally good hash), which draw a fresh sample.

use std::path::Path;
use std::str::FromStr;

use bloomlab_filters::error::Compact;
use bloomlab_filters::{
    AtomicBits, Blocked512, Bloom, BloomError, Counting4, Counting8, EnhancedDoubleHash, Filter,
    FlatBits, Fnv1a, Geometry, GuavaMitz64, KirschMitzenmacher, Murmur3, Scalable, Spec,
    SplitBlock, Variant, VariantVisitor, Xxh3, Xxh3Wide, Xxh64,
};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

use crate::bloom::row::{SweepRow, Workload};
use crate::bloom::trial::{self, Sampling, TrialSpec};
use crate::bloom::workload::{self, Churn, Grow, WorkloadSettings};
use crate::error::HarnessError;
use crate::keys::{KeySet, KeySetKind};
use crate::limits::MAX_COUNT;
use crate::stats::hypothesis::{
    binomial_sf_inclusive, binomial_test, drift_power, drift_queries_estimate, queries_for_drift,
    rate_ratio_test,
};
use crate::subject::Subject;

fn one() -> f64 {
    1.0
}

/// One committed baseline point: a trial's coordinates and the count it gave.
///
/// A static point (the default; a baseline written before the workloads existed reads as static
/// points) fills the filter once. A churn point runs `rounds` rounds replacing `churn` of the
/// members held (`round(n x overfill)`); a grow point inserts up to n x `growth` keys. Their
/// counts are those of the last round or growth step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselinePoint {
    /// What is measured (its name in the CSV).
    pub filter: Subject,
    /// Key set name (`random-u64`, `article`, `url`, `hex`).
    pub key_set: String,
    /// Expected count the filter is sized for; all n keys are inserted.
    pub n: u64,
    /// Target false-positive rate.
    pub p: f64,
    /// Seed of the key set.
    pub seed: u64,
    /// Non-member queries.
    pub queries: u64,
    /// False positives the baseline run observed.
    pub false_positives: u64,
    /// `static`, `churn` or `grow`.
    #[serde(default)]
    pub workload: Workload,
    /// Churn: rounds.
    #[serde(default)]
    pub rounds: u64,
    /// Churn: fraction of the members each round replaces.
    #[serde(default)]
    pub churn: f64,
    /// Churn: members held / n (1 when absent).
    #[serde(default = "one")]
    pub overfill: f64,
    /// Grow: the largest growth factor.
    #[serde(default)]
    pub growth: u64,
}

impl BaselinePoint {
    /// A static point with no queries planned yet (`--update` plans them).
    pub fn new(filter: Subject, key_set: &str, n: u64, p: f64, seed: u64) -> Self {
        Self {
            filter,
            key_set: key_set.into(),
            n,
            p,
            seed,
            queries: 0,
            false_positives: 0,
            workload: Workload::Static,
            rounds: 0,
            churn: 0.0,
            overfill: 1.0,
            growth: 0,
        }
    }

    /// `filter key_set n p` (and the workload's settings), for tables and messages.
    pub fn label(&self) -> String {
        let base = format!("{} {} n={} p={}", self.filter, self.key_set, self.n, self.p);
        match self.workload {
            Workload::Static => base,
            Workload::Churn => format!(
                "{base} churn {}x{} x{}",
                self.rounds, self.churn, self.overfill
            ),
            Workload::Grow => format!("{base} grow x{}", self.growth),
        }
    }

    /// The same coordinates (filter, key set, n, p, seed, workload and its settings), whatever the
    /// counts: how `--update` tells a new built-in point from one the baseline has.
    pub fn same_point(&self, other: &BaselinePoint) -> bool {
        let strip = |p: &BaselinePoint| BaselinePoint {
            queries: 0,
            false_positives: 0,
            ..p.clone()
        };
        strip(self) == strip(other)
    }

    /// The workload settings the point runs (`None` for a static point).
    fn settings(&self) -> Option<WorkloadSettings> {
        match self.workload {
            Workload::Static => None,
            Workload::Churn => Some(WorkloadSettings::Churn(Churn {
                rounds: self.rounds,
                fraction: self.churn,
                hostile: 0.0,
            })),
            Workload::Grow => Some(WorkloadSettings::Grow(Grow {
                max_growth: self.growth,
            })),
        }
    }
}

/// How many of `points` share `point`'s error budget: static points form one family, churn and
/// grow points another (each family has the whole `family_alpha`, so adding workload points
/// leaves the static points' query counts and counts unchanged).
pub fn family_size(points: &[BaselinePoint], point: &BaselinePoint) -> usize {
    let dynamic = |p: &BaselinePoint| p.workload != Workload::Static;
    points
        .iter()
        .filter(|p| dynamic(p) == dynamic(point))
        .count()
}

/// The gate's error budget and sensitivity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GatePolicy {
    /// Probability that an unchanged-in-distribution filter fails the whole gate, at most.
    pub family_alpha: f64,
    /// Relative FPR change each point must detect (0.10 = +10%).
    pub detect_rel: f64,
    /// Probability of detecting that change at each point, at least.
    pub power: f64,
}

impl Default for GatePolicy {
    fn default() -> Self {
        Self {
            family_alpha: 1e-4,
            detect_rel: 0.10,
            power: 0.99,
        }
    }
}

/// Statistical checks per static point that share the family-wise budget.
pub const TESTS_PER_POINT: usize = 3;

/// Statistical checks per churn or grow point: theory, drift and the target rate.
pub const TESTS_PER_WORKLOAD_POINT: usize = 4;

impl GatePolicy {
    /// The level of each individual test for a gate of `points` static points (Bonferroni).
    pub fn per_test_alpha(&self, points: usize) -> f64 {
        self.family_alpha / (TESTS_PER_POINT * points.max(1)) as f64
    }

    /// The level of each test of `point`, whose family in `points` has [`family_size`] members.
    pub fn alpha_for(&self, points: &[BaselinePoint], point: &BaselinePoint) -> f64 {
        let family = family_size(points, point);
        match point.workload {
            Workload::Static => self.per_test_alpha(family),
            _ => self.family_alpha / (TESTS_PER_WORKLOAD_POINT * family.max(1)) as f64,
        }
    }

    /// Queries a point needs when its theoretical FPR is `fpr` in a gate of `points` points.
    pub fn queries_for(&self, fpr: f64, points: usize) -> u64 {
        queries_for_drift(
            fpr,
            self.detect_rel,
            self.per_test_alpha(points),
            self.power,
        )
    }
}

/// One check's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// `false-negatives`, `theory`, `drift`, `fill` or `power`.
    pub name: &'static str,
    /// The test's p-value, when it is a statistical test.
    pub p_value: Option<f64>,
    /// Whether it passed.
    pub passed: bool,
    /// What was compared, in words and figures.
    pub detail: String,
}

/// A point's measurement and verdict.
#[derive(Debug, Clone)]
pub struct PointOutcome {
    /// The baseline point.
    pub point: BaselinePoint,
    /// The re-run trial's row, unless the trial itself failed.
    pub row: Option<SweepRow>,
    /// Every check made.
    pub checks: Vec<Check>,
}

impl PointOutcome {
    /// Whether every check passed.
    pub fn passed(&self) -> bool {
        self.row.is_some() && self.checks.iter().all(|c| c.passed)
    }

    /// The p-value of a named check, if it ran.
    pub fn p_value(&self, name: &str) -> Option<f64> {
        self.checks
            .iter()
            .find(|c| c.name == name)
            .and_then(|c| c.p_value)
    }
}

/// Expected set bits and their standard deviation after `balls` uniform probes into `m` bits
/// (the occupancy problem): with q = 1 - 1/m, E = m (1 - q^T) and
/// Var = m (m-1) (1 - 2/m)^T + m q^T - m^2 q^(2T).
pub fn occupancy(m: u64, balls: u64) -> (f64, f64) {
    let (mf, t) = (m as f64, balls as f64);
    let q_t = (t * (-1.0 / mf).ln_1p()).exp();
    let q2_t = (t * (-2.0 / mf).ln_1p()).exp();
    let mean = mf * (1.0 - q_t);
    let var = mf * (mf - 1.0) * q2_t + mf * q_t - mf * mf * q_t * q_t;
    (mean, var.max(0.0).sqrt())
}

/// Applies the statistical checks to a re-run `row` of `point`, each at level `alpha`; `geometry`
/// is the re-run filter's, and selects the fill check (flat geometries only).
pub fn judge(
    point: &BaselinePoint,
    row: &SweepRow,
    geometry: Option<Geometry>,
    alpha: f64,
) -> Vec<Check> {
    let mut checks = vec![Check {
        name: "false-negatives",
        p_value: None,
        passed: true,
        detail: format!("all {} members found", row.n_inserted),
    }];

    let p_theory = binomial_test(row.false_positives, row.queries, row.fpr_theory);
    checks.push(Check {
        name: "theory",
        p_value: Some(p_theory),
        passed: p_theory >= alpha,
        detail: format!(
            "{} of {} = {:.4e} vs theory {:.4e} (x{:.3})",
            row.false_positives,
            row.queries,
            row.fpr,
            row.fpr_theory,
            row.fpr / row.fpr_theory
        ),
    });

    if point.queries == row.queries {
        let p_drift = rate_ratio_test(
            point.false_positives,
            point.queries,
            row.false_positives,
            row.queries,
        );
        checks.push(Check {
            name: "drift",
            p_value: Some(p_drift),
            passed: p_drift >= alpha,
            detail: format!(
                "{} now vs {} in the baseline (x{:.3})",
                row.false_positives,
                point.false_positives,
                row.false_positives as f64 / point.false_positives.max(1) as f64
            ),
        });
    } else {
        checks.push(Check {
            name: "drift",
            p_value: None,
            passed: false,
            detail: format!(
                "ran {} queries but the baseline has {}",
                row.queries, point.queries
            ),
        });
    }

    // The occupancy model is that of independent uniform probes into one array: blocked and
    // split-block layouts confine a key's probes to one block, so they have no such check.
    if let Some(Geometry::Flat { bits, hashes }) = geometry {
        let (mean, sd) = occupancy(bits, row.n_inserted * u64::from(hashes));
        let set = row.fill_ratio * bits as f64;
        let z = (set - mean) / sd;
        let p_fill = 2.0 * Normal::standard().cdf(-z.abs());
        checks.push(Check {
            name: "fill",
            p_value: Some(p_fill),
            passed: p_fill >= alpha,
            detail: format!("{set:.0} bits set vs {mean:.0} +- {sd:.0} expected (z = {z:.2})"),
        });
    }

    checks
}

/// Whether the point's query count still gives the drift test the policy's power at level `alpha`
/// for a filter whose theoretical FPR is `fpr_theory` (it may not after the policy or the number of
/// points changed: then the baseline must be re-planned with `--update`).
pub fn power_check(
    point: &BaselinePoint,
    fpr_theory: f64,
    alpha: f64,
    policy: &GatePolicy,
) -> Check {
    if fpr_theory == 0.0 {
        // An exact structure: a relative change of 0 is 0, and the theory test already fails it
        // on its first false positive.
        return Check {
            name: "power",
            p_value: None,
            passed: true,
            detail: "theory 0: any false positive fails the theory test".into(),
        };
    }
    if fpr_theory * (1.0 + policy.detect_rel) >= 1.0 {
        // No rate can rise that much: there is no change to detect.
        return Check {
            name: "power",
            p_value: None,
            passed: true,
            detail: format!(
                "theory {fpr_theory:.4} cannot rise by {:+.0}%",
                policy.detect_rel * 100.0
            ),
        };
    }
    let power = drift_power(point.queries, fpr_theory, policy.detect_rel, alpha);
    Check {
        name: "power",
        p_value: None,
        passed: power >= policy.power,
        detail: format!(
            "{} queries detect a {:+.0}% change with probability {power:.4} (need {})",
            point.queries,
            policy.detect_rel * 100.0,
            policy.power
        ),
    }
}

fn trial_parts(
    point: &BaselinePoint,
    queries: u64,
    alpha: f64,
) -> Result<(TrialSpec, KeySet, Sampling), HarnessError> {
    let kind = KeySetKind::from_str(&point.key_set)?;
    let keys = KeySet::new(kind, point.seed)?;
    let spec = TrialSpec {
        filter: point.filter,
        n: point.n,
        p: point.p,
        overfill: 1.0,
    };
    // Precision 0 is never met, so the trial makes exactly `queries` queries.
    let sampling = Sampling {
        confidence: 1.0 - alpha,
        precision: 0.0,
        max_queries: queries,
        seed: point.seed,
        revision: String::new(),
    };
    Ok((spec, keys, sampling))
}

/// Re-runs `point` on the filter that `build` makes (a registered variant, or a planted one in
/// tests), making exactly `point.queries` queries, and judges it.
pub fn check_with<F: Filter>(
    point: &BaselinePoint,
    alpha: f64,
    build: impl FnOnce() -> Result<F, BloomError>,
) -> PointOutcome {
    let run = trial_parts(point, point.queries, alpha)
        .and_then(|(spec, keys, sampling)| trial::run_with(&spec, &keys, &sampling, build))
        .map(|(row, filter)| (row, Some(filter.geometry())));
    outcome(point, run, alpha)
}

/// The outcome of a point's re-run: its checks, or the run's error as a failed check.
fn outcome(
    point: &BaselinePoint,
    run: Result<(SweepRow, Option<Geometry>), HarnessError>,
    alpha: f64,
) -> PointOutcome {
    match run {
        Ok((row, geometry)) => {
            let checks = judge(point, &row, geometry, alpha);
            PointOutcome {
                point: point.clone(),
                row: Some(row),
                checks,
            }
        }
        Err(e) => PointOutcome {
            point: point.clone(),
            row: None,
            checks: vec![Check {
                name: if matches!(e, HarnessError::FalseNegative { .. }) {
                    "false-negatives"
                } else {
                    "run"
                },
                p_value: None,
                passed: false,
                detail: e.to_string(),
            }],
        },
    }
}

/// The one registry visit of a point whose filter is registered by name: builds the filter once,
/// lets `plan` fix the point to re-run from the built, still empty filter's theoretical FPR at n
/// ([`Filter::fpr_theory`]), then fills,
/// queries and judges that same filter ([`check_with`]). Returns the outcome (its `point` is the
/// planned one), or why the filter could not be found or built.
fn check_planned(
    point: &BaselinePoint,
    alpha: f64,
    plan: &dyn Fn(f64) -> BaselinePoint,
) -> Result<PointOutcome, HarnessError> {
    // `plan` is a trait object (called once per point): one visit per variant, not one per caller.
    struct Visit<'a>(&'a BaselinePoint, f64, &'a dyn Fn(f64) -> BaselinePoint);
    impl VariantVisitor for Visit<'_> {
        type Output = Result<PointOutcome, BloomError>;
        fn visit<F: Variant>(self) -> Self::Output {
            let Visit(point, alpha, plan) = self;
            let filter = Spec::Target {
                n: point.n,
                p: point.p,
            }
            .build::<F>()?;
            let planned = plan(filter.fpr_theory(point.n));
            Ok(check_with(&planned, alpha, || Ok(filter)))
        }
    }
    match point.filter {
        Subject::Variant(id) => id
            .visit(Visit(point, alpha, plan))
            .map_err(|e| trial::registry_error(&point.filter.to_string(), point.n, point.p, e)),
        Subject::Adapter(adapter) => {
            let filter = adapter.get().build(point.n, point.p)?;
            let planned = plan(filter.shape(point.n).fpr_theory);
            Ok(check_adapter(&planned, alpha, filter))
        }
        Subject::Redis(_) => Err(HarnessError::invalid(
            "filter",
            point.filter,
            "keeps its bits in Redis; the gate re-runs in-memory filters",
        )),
    }
}

/// [`check_with`] for an adapter's filter: the same trial through
/// [`trial::run_adapter`], judged without the fill check (an adapter does not expose its bits).
fn check_adapter(
    point: &BaselinePoint,
    alpha: f64,
    filter: Box<dyn crate::subject::MeasuredFilter>,
) -> PointOutcome {
    let run = trial_parts(point, point.queries, alpha)
        .and_then(|(spec, keys, sampling)| trial::run_adapter(&spec, &keys, &sampling, filter));
    outcome(point, run.map(|row| (row, None)), alpha)
}
/// Re-runs a point whose filter is registered by name, and checks its query count still gives the
/// policy's power.
pub fn check_registered(point: &BaselinePoint, alpha: f64, policy: &GatePolicy) -> PointOutcome {
    if point.workload != Workload::Static {
        return check_workload(point, alpha, policy);
    }
    let mut outcome =
        check_planned(point, alpha, &|_| point.clone()).unwrap_or_else(|e| PointOutcome {
            point: point.clone(),
            row: None,
            checks: vec![Check {
                name: "run",
                p_value: None,
                passed: false,
                detail: e.to_string(),
            }],
        });
    if let Some(row) = &outcome.row {
        let power = power_check(point, row.fpr_theory, alpha, policy);
        outcome.checks.push(power);
    }
    outcome
}

/// Runs a churn or grow point's workload with exactly `point.queries` queries per round or step.
fn run_workload_point(point: &BaselinePoint, alpha: f64) -> Result<Vec<SweepRow>, HarnessError> {
    let settings = point.settings().ok_or_else(|| {
        HarnessError::invalid("workload", "static", "is not a churn or grow point")
    })?;
    let (_, keys, sampling) = trial_parts(point, point.queries, alpha)?;
    let spec = TrialSpec {
        filter: point.filter,
        n: point.n,
        p: point.p,
        overfill: point.overfill,
    };
    let run = workload::NamedRun {
        spec: &spec,
        keys: &keys,
        sampling: &sampling,
        timing_passes: 0,
    };
    workload::run_named(&run, &settings)
}

/// Judges a churn or grow point's rows: any false negative in any round or step fails outright
/// (no statistics); the last row's count is tested against its theory and the baseline's (as
/// [`judge`]); a grow point's last count must also not lie significantly above the target p
/// (one-sided exact binomial test), which is what a scalable filter promises.
pub fn judge_workload(point: &BaselinePoint, rows: &[SweepRow], alpha: f64) -> Vec<Check> {
    let Some(last) = rows.last() else {
        return vec![Check {
            name: "run",
            p_value: None,
            passed: false,
            detail: "the workload produced no rows".into(),
        }];
    };
    let missed: Vec<String> = rows
        .iter()
        .filter(|r| r.false_negatives > 0)
        .map(|r| {
            format!(
                "{} of {} members at {} {}",
                r.false_negatives,
                r.members_checked,
                if r.workload == Workload::Grow {
                    "G"
                } else {
                    "round"
                },
                if r.workload == Workload::Grow {
                    r.growth
                } else {
                    r.round
                }
            )
        })
        .collect();
    let mut checks = vec![Check {
        name: "false-negatives",
        p_value: None,
        passed: missed.is_empty(),
        detail: if missed.is_empty() {
            format!("every member found in all {} rows", rows.len())
        } else {
            format!("members not found: {}", missed.join(", "))
        },
    }];
    // The static checks on the last row; its fill check does not apply after churn or growth.
    checks.extend(
        judge(point, last, None, alpha)
            .into_iter()
            .filter(|c| c.name == "theory" || c.name == "drift"),
    );
    if point.workload == Workload::Grow {
        let p_target = binomial_sf_inclusive(last.false_positives, last.queries, point.p);
        checks.push(Check {
            name: "target",
            p_value: Some(p_target),
            passed: p_target >= alpha,
            detail: format!(
                "{} of {} = {:.4e} at G = {} vs target p = {} (x{:.3})",
                last.false_positives,
                last.queries,
                last.fpr,
                last.growth,
                point.p,
                last.fpr / point.p
            ),
        });
    }
    checks
}

/// Re-runs a churn or grow point and judges it; the power check uses the last row's theory.
pub fn check_workload(point: &BaselinePoint, alpha: f64, policy: &GatePolicy) -> PointOutcome {
    match run_workload_point(point, alpha) {
        Ok(rows) => {
            let mut checks = judge_workload(point, &rows, alpha);
            let last = rows.last().cloned();
            if let Some(row) = &last {
                checks.push(power_check(point, row.fpr_theory, alpha, policy));
            }
            PointOutcome {
                point: point.clone(),
                row: last,
                checks,
            }
        }
        Err(e) => PointOutcome {
            point: point.clone(),
            row: None,
            checks: vec![Check {
                name: "run",
                p_value: None,
                passed: false,
                detail: e.to_string(),
            }],
        },
    }
}

/// Re-measures `point` for a new baseline: queries re-planned from the filter's theoretical FPR
/// (at the last round or growth step for a workload point) for a family of `points` points (see
/// [`family_size`]), false positives counted afresh.
pub fn remeasure(
    point: &BaselinePoint,
    points: usize,
    policy: &GatePolicy,
) -> Result<BaselinePoint, HarnessError> {
    if point.workload != Workload::Static {
        return remeasure_workload(point, points, policy);
    }
    let outcome = check_planned(point, policy.per_test_alpha(points), &|fpr_theory| {
        BaselinePoint {
            queries: policy.queries_for(fpr_theory, points),
            false_positives: 0,
            ..point.clone()
        }
    })?;
    match outcome.row {
        Some(row) => Ok(BaselinePoint {
            false_positives: row.false_positives,
            ..outcome.point
        }),
        None => Err(HarnessError::invalid(
            "baseline point",
            point.label(),
            &outcome
                .checks
                .iter()
                .map(|c| c.detail.clone())
                .collect::<Vec<_>>()
                .join("; "),
        )),
    }
}

fn remeasure_workload(
    point: &BaselinePoint,
    points: usize,
    policy: &GatePolicy,
) -> Result<BaselinePoint, HarnessError> {
    let family = vec![point.clone(); points.max(1)];
    let alpha = policy.alpha_for(&family, point);
    // A short run finds the theory at the last round or step, which plans the real one.
    let probe = BaselinePoint {
        queries: 1 << 12,
        ..point.clone()
    };
    let fail = |detail: String| HarnessError::invalid("baseline point", point.label(), &detail);
    let rows = run_workload_point(&probe, alpha)?;
    let theory = rows
        .last()
        .map(|r| r.fpr_theory)
        .ok_or_else(|| fail("no rows".into()))?;
    let planned = BaselinePoint {
        queries: queries_for_drift(theory, policy.detect_rel, alpha, policy.power),
        ..point.clone()
    };
    let rows = run_workload_point(&planned, alpha)?;
    let last = rows.last().ok_or_else(|| fail("no rows".into()))?;
    if rows.iter().any(|r| r.false_negatives > 0) {
        return Err(fail(format!(
            "false negatives: {}",
            rows.iter().map(|r| r.false_negatives).sum::<u64>()
        )));
    }
    Ok(BaselinePoint {
        false_positives: last.false_positives,
        ..planned
    })
}

/// The seed of the built-in points.
const SEED: u64 = 20_261_125;

/// The points a new baseline starts from: every layout, hash, index scheme and store at least once,
/// every key set, and rates from 10% to 0.01%; then churn points for both counting layouts and a
/// grow point for the scalable filter at 1024x (workload points are their own error family, see
/// [`family_size`]).
pub fn default_points() -> Vec<BaselinePoint> {
    let point = |filter: Subject, key_set: &str, n: u64, p: f64| {
        BaselinePoint::new(filter, key_set, n, p, SEED)
    };
    let churn = |filter: Subject, key_set: &str, n: u64, p: f64| BaselinePoint {
        workload: Workload::Churn,
        rounds: 10,
        churn: 0.1,
        ..point(filter, key_set, n, p)
    };
    let grow = |filter: Subject, n: u64, p: f64, growth: u64| BaselinePoint {
        workload: Workload::Grow,
        growth,
        ..point(filter, "random-u64", n, p)
    };
    vec![
        point(
            Subject::of::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>(),
            "random-u64",
            100_000,
            0.01,
        ),
        point(
            Subject::of::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>(),
            "random-u64",
            1_000_000,
            0.0001,
        ),
        point(
            Subject::of::<Bloom<Xxh3, EnhancedDoubleHash, FlatBits>>(),
            "article",
            100_000,
            0.01,
        ),
        point(
            Subject::of::<Bloom<Murmur3, GuavaMitz64, FlatBits>>(),
            "url",
            100_000,
            0.01,
        ),
        point(
            Subject::of::<Bloom<Murmur3, KirschMitzenmacher, AtomicBits>>(),
            "hex",
            100_000,
            0.01,
        ),
        point(
            Subject::of::<Bloom<Fnv1a, KirschMitzenmacher, FlatBits>>(),
            "random-u64",
            100_000,
            0.01,
        ),
        point(
            Subject::of::<Bloom<Xxh3Wide, EnhancedDoubleHash, AtomicBits>>(),
            "article",
            100_000,
            0.001,
        ),
        point(
            Subject::of::<Bloom<Xxh64, KirschMitzenmacher, FlatBits>>(),
            "url",
            100_000,
            0.1,
        ),
        point(
            Subject::of::<Blocked512<Xxh3>>(),
            "random-u64",
            100_000,
            0.01,
        ),
        point(
            Subject::of::<Blocked512<Murmur3>>(),
            "article",
            100_000,
            0.001,
        ),
        point(
            Subject::of::<SplitBlock<Xxh64>>(),
            "random-u64",
            100_000,
            0.01,
        ),
        point(Subject::of::<SplitBlock<Xxh3>>(), "url", 100_000, 0.001),
        churn(
            Subject::of::<Counting4<Xxh3, KirschMitzenmacher>>(),
            "random-u64",
            100_000,
            0.01,
        ),
        churn(
            Subject::of::<Counting8<Murmur3, EnhancedDoubleHash>>(),
            "article",
            100_000,
            0.001,
        ),
        grow(
            Subject::of::<Scalable<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>>(),
            1_000,
            0.01,
            1024,
        ),
    ]
}

/// The columns of a baseline CSV, in the order [`baseline_csv`] writes them.
pub const BASELINE_COLUMNS: [&str; 7] = [
    "filter",
    "key_set",
    "n",
    "p",
    "seed",
    "queries",
    "false_positives",
];

/// The smallest level an individual test may have: 2^-52 (`f64::EPSILON`). A point's trial computes
/// its interval at confidence `1 - level`, and the query plan takes the normal quantile at
/// `1 - level / 2`; below 2^-52 the latter, and far below it the former, round to exactly 1 in
/// double precision, where the quantile is infinite and the interval undefined.
pub const MIN_TEST_ALPHA: f64 = f64::EPSILON;

impl GatePolicy {
    /// Checks the policy for a gate of `points` points: `family_alpha` in (0, 1) and large enough
    /// that each of the `3 x points` tests keeps a level of at least [`MIN_TEST_ALPHA`];
    /// `detect_rel` in (0, 10]; `power` in (0, 1). Errors name the flag, the value and the range.
    pub fn validate(&self, points: usize) -> Result<(), HarnessError> {
        let tests = TESTS_PER_POINT * points.max(1);
        // Shown rounded up to 4 significant digits, so the figure shown is itself accepted.
        let min_alpha = {
            let x = MIN_TEST_ALPHA * tests as f64;
            let unit = 10f64.powi(x.log10().floor() as i32 - 3);
            format!("{:.3e}", (x / unit).ceil() * unit)
        };
        if !(self.family_alpha > 0.0 && self.family_alpha < 1.0) {
            return Err(HarnessError::invalid(
                "--alpha",
                Compact(self.family_alpha),
                &format!(
                    "it must be in [{min_alpha}, 1) (the open interval (0, 1), and at least \
                     2^-52 per test for the {tests} tests of {points} points)"
                ),
            ));
        }
        if self.per_test_alpha(points) < MIN_TEST_ALPHA {
            return Err(HarnessError::invalid(
                "--alpha",
                Compact(self.family_alpha),
                &format!(
                    "with {points} points each of the {tests} tests would run at level {:.3e}, \
                     below 2^-52 = {MIN_TEST_ALPHA:.3e} (the smallest level whose confidence \
                     1 - level/2 is a double below 1); --alpha must be in [{min_alpha}, 1)",
                    self.per_test_alpha(points)
                ),
            ));
        }
        if !(self.detect_rel > 0.0 && self.detect_rel <= 10.0) {
            return Err(HarnessError::invalid(
                "--detect",
                Compact(self.detect_rel),
                "it must be in (0, 10]",
            ));
        }
        if !(self.power > 0.0 && self.power < 1.0) {
            return Err(HarnessError::invalid(
                "--power",
                Compact(self.power),
                "it must be in the open interval (0, 1)",
            ));
        }
        Ok(())
    }

    /// Checks, before anything is measured, that re-planning `points` (`--update`) asks no point
    /// for more than 2^53 queries, by the normal approximation the plan starts from at the point's
    /// target rate ([`crate::stats::hypothesis::drift_queries_estimate`]); a tiny `--detect` would
    /// otherwise search for an astronomical count.
    pub fn check_plannable(&self, points: &[BaselinePoint]) -> Result<(), HarnessError> {
        let alpha = self.per_test_alpha(points.len());
        for point in points {
            let q = drift_queries_estimate(point.p, self.detect_rel, alpha, self.power);
            if q.is_nan() || q > MAX_COUNT as f64 {
                return Err(HarnessError::invalid(
                    "--detect",
                    Compact(self.detect_rel),
                    &format!(
                        "detecting a relative FPR change of {} at {} (level {alpha:.3e}, power {}) \
                         needs about {} queries, more than 2^53; ask for a larger change or less \
                         power",
                        Compact(self.detect_rel),
                        point.label(),
                        Compact(self.power),
                        if q.is_finite() {
                            format!("{q:.3e}")
                        } else {
                            "infinitely many".into()
                        }
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// How many points [`check_all`] re-runs at once (rayon's global pool), for the memory check.
pub fn parallel_points() -> usize {
    rayon::current_num_threads()
}

/// The 1-based character column where field `index` of a CSV `line` starts (quotes honoured).
pub(crate) fn column_of(line: &str, index: usize) -> u64 {
    if index == 0 {
        return 1;
    }
    let (mut field, mut quoted) = (0, false);
    for (col, c) in line.chars().enumerate() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                field += 1;
                if field == index {
                    return col as u64 + 2;
                }
            }
            _ => {}
        }
    }
    line.chars().count() as u64 + 1
}

/// What a baseline column holds, for error messages.
fn column_allows(name: &str) -> &'static str {
    match name {
        "filter" => "a subject's name (`sweep --list` prints them)",
        "key_set" => "a key set: random-u64, article, url, hex, file:PATH",
        "n" => "a whole number, at least 1 and at most 2^53",
        "p" => "a number in the open interval (0, 1)",
        "seed" => "a whole number from 0 to 2^64 - 1",
        "queries" => "a whole number, at least 1 and at most 2^53",
        "false_positives" => "a whole number from 0 to the point's queries",
        "workload" => "static, churn or grow",
        "rounds" => {
            "a whole number, at least 1, with round(n x overfill) + rounds x the members each \
             round replaces below 2^63 (churn points)"
        }
        "churn" => {
            "a fraction in (0, 1] that replaces at least one of the round(n x overfill) members \
             each round (churn points)"
        }
        "overfill" => "a number in (0, 64] with round(n x overfill) from 1 to 2^53",
        "growth" => "a whole number, at least 1, with n x growth at most 2^53 (grow points)",
        _ => "a value of the baseline schema",
    }
}

/// Reads a baseline CSV and checks every point before anything runs.
///
/// Everything wrong with the file is bad input, reported with the file, line and column: a
/// directory or unreadable path, bytes that are not UTF-8, a missing column, a malformed field,
/// an unknown filter or key set, n or queries outside 1..=2^53, p outside (0, 1), more false
/// positives than queries, a filter that cannot be built at its (n, p), a key file with too few
/// lines for the point's members and queries, or no points at all.
pub fn read_baseline(path: &Path) -> Result<Vec<BaselinePoint>, HarnessError> {
    let err = |reason: String| HarnessError::invalid("baseline file", path.display(), &reason);
    if path.is_dir() {
        return Err(err("it is a directory; give the baseline CSV file".into()));
    }
    let text = read_baseline_text(path).map_err(err)?;
    let lines: Vec<&str> = text.lines().collect();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| err(format!("line 1 is not a CSV header: {e}")))?
        .clone();
    for c in BASELINE_COLUMNS {
        if !headers.iter().any(|h| h == c) {
            return Err(err(format!(
                "line 1 has no column {c:?}; a baseline has the columns {}",
                BASELINE_COLUMNS.join(",")
            )));
        }
    }
    let mut points: Vec<BaselinePoint> = Vec::new();
    // The line each point was read from, to name both lines of a duplicate.
    let mut point_lines: Vec<u64> = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            err(format!("line {line}: {e}"))
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let raw = lines
            .get(line.saturating_sub(1) as usize)
            .copied()
            .unwrap_or("");
        let bad = |name: &str, allowed: String| {
            let index = headers.iter().position(|h| h == name).unwrap_or(0);
            HarnessError::BadField {
                path: path.to_owned(),
                line,
                column: column_of(raw, index),
                field: name.to_owned(),
                value: format!("{:?}", record.get(index).unwrap_or("")),
                allowed,
            }
        };
        // The subject first: serde's error for it would not say which column it came from.
        if let Some(i) = headers.iter().position(|h| h == "filter") {
            let name = record.get(i).unwrap_or("");
            if let Err(e) = name.parse::<Subject>() {
                let known = match e {
                    HarnessError::UnknownFilter { known, .. } => known,
                    e => e.to_string(),
                };
                return Err(bad(
                    "filter",
                    format!(
                        "no subject has this name; it must be {} (known: {known})",
                        column_allows("filter")
                    ),
                ));
            }
        }
        let point: BaselinePoint = record.deserialize(Some(&headers)).map_err(|e| {
            let (field, why) = match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => (err.field(), err.kind().to_string()),
                _ => (None, e.to_string()),
            };
            let name = field
                .and_then(|i| headers.get(i as usize))
                .unwrap_or("row")
                .to_owned();
            bad(&name, format!("{why}; it must be {}", column_allows(&name)))
        })?;
        check_point(&point, &bad)?;
        if let Some(i) = points.iter().position(|p| p.same_point(&point)) {
            // A repeated point would be re-run twice and counted twice in its family's
            // Bonferroni share; two different counts for one trial cannot both be the baseline.
            return Err(err(format!(
                "line {line} repeats the point of line {} ({}): each point may appear once",
                point_lines[i],
                point.label()
            )));
        }
        points.push(point);
        point_lines.push(line);
    }
    if points.is_empty() {
        return Err(err("it has no points (a header and no rows)".into()));
    }
    Ok(points)
}

/// The largest baseline file read, in bytes: 64 MiB, far above any real baseline (a row is about
/// 100 bytes), so that `--baseline /dev/zero` or a huge file is refused after reading at most this
/// much instead of filling memory.
pub const MAX_BASELINE_BYTES: u64 = 64 << 20;

/// A baseline file's text, read up to [`MAX_BASELINE_BYTES`] (plus one byte to tell a larger file),
/// checked to be UTF-8. The error (without the path) says why.
pub(crate) fn read_baseline_text(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_BASELINE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > MAX_BASELINE_BYTES {
        return Err(format!(
            "it is larger than {} MiB, the most a baseline may hold",
            MAX_BASELINE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        crate::keys::not_utf8(e.as_bytes(), e.utf8_error()).replace("keys are", "it is")
    })
}

/// Checks one baseline point's values; `bad(column, message)` makes the error.
fn check_point(
    point: &BaselinePoint,
    bad: &dyn Fn(&str, String) -> HarnessError,
) -> Result<(), HarnessError> {
    let out_of_range = |name: &str, why: &str| {
        Err(bad(
            name,
            format!("{why}; it must be {}", column_allows(name)),
        ))
    };
    let Ok(kind) = KeySetKind::from_str(&point.key_set) else {
        return out_of_range("key_set", "no key set has this name");
    };
    if !(1..=MAX_COUNT).contains(&point.n) {
        return out_of_range("n", "out of range");
    }
    if !(point.p.is_finite() && point.p > 0.0 && point.p < 1.0) {
        return out_of_range("p", "out of range");
    }
    if !(1..=MAX_COUNT).contains(&point.queries) {
        return out_of_range("queries", "out of range");
    }
    if point.false_positives > point.queries {
        return out_of_range(
            "false_positives",
            &format!("more than the point's {} queries", point.queries),
        );
    }
    check_workload_settings(point, bad)?;
    point.filter.sized_bytes(point.n, point.p).map_err(|e| {
        let why = match &e {
            HarnessError::Build { source, .. } => source.to_string(),
            e => e.to_string(),
        };
        bad(
            "p",
            format!(
                "{} cannot be built for n = {} at this p: {why}",
                point.filter, point.n
            ),
        )
    })?;
    if let KeySetKind::File(_) = kind {
        let keys = KeySet::new(kind, point.seed).map_err(|e| bad("key_set", e.to_string()))?;
        let distinct = keys.available().unwrap_or(u64::MAX);
        let needed = point.n.saturating_add(point.queries);
        if distinct < needed {
            return Err(bad(
                "queries",
                format!(
                    "the key file has {distinct} distinct lines, fewer than n + queries = {needed}"
                ),
            ));
        }
    }
    Ok(())
}

/// Checks a churn or grow point's settings with the limits the sweep applies to the same
/// workload, so that a row the workload would refuse is bad input here and never a failed point.
fn check_workload_settings(
    point: &BaselinePoint,
    bad: &dyn Fn(&str, String) -> HarnessError,
) -> Result<(), HarnessError> {
    let out_of_range = |name: &str, why: String| {
        Err(bad(
            name,
            format!("{why}; it must be {}", column_allows(name)),
        ))
    };
    let Some(settings) = point.settings() else {
        return Ok(());
    };
    crate::bloom::workload::check_capable(point.filter, &settings).map_err(|e| {
        bad(
            "filter",
            format!("{e}; the point's workload is {}", point.workload),
        )
    })?;
    match settings {
        WorkloadSettings::Static => Ok(()),
        WorkloadSettings::Churn(churn) => {
            let o = point.overfill;
            if !(o.is_finite() && o > 0.0 && o <= crate::limits::MAX_OVERFILL) {
                return out_of_range("overfill", "out of range".into());
            }
            let held = (point.n as f64 * o).round();
            if !(1.0..=MAX_COUNT as f64).contains(&held) {
                return out_of_range(
                    "overfill",
                    format!("n = {} gives round(n x overfill) = {held}", point.n),
                );
            }
            let held = held as u64;
            if point.rounds == 0 {
                return out_of_range("rounds", "no rounds".into());
            }
            if !(churn.fraction > 0.0 && churn.fraction <= 1.0) {
                return out_of_range("churn", "out of range".into());
            }
            if churn.per_round(held).is_err() {
                return out_of_range("churn", format!("round({held} members x churn) is 0"));
            }
            if churn.member_indices(held).is_err() {
                return out_of_range("rounds", "too many rounds".into());
            }
            Ok(())
        }
        WorkloadSettings::Grow(grow) => {
            if grow.validate(point.n).is_err() {
                return out_of_range(
                    "growth",
                    if point.growth == 0 {
                        "no growth".into()
                    } else {
                        format!("n x growth exceeds 2^53 (n = {})", point.n)
                    },
                );
            }
            Ok(())
        }
    }
}

/// A baseline CSV's bytes (header and one row per point), for the caller to write whole.
pub fn baseline_csv(points: &[BaselinePoint]) -> Result<Vec<u8>, HarnessError> {
    let err = |e: &dyn std::fmt::Display| {
        HarnessError::invalid("baseline", "CSV", &format!("cannot serialize it: {e}"))
    };
    let mut writer = csv::Writer::from_writer(Vec::new());
    for p in points {
        writer.serialize(p).map_err(|e| err(&e))?;
    }
    writer.into_inner().map_err(|e| err(&e))
}

/// Re-runs every point in parallel (results in input order); `on_done` is called as each finishes.
pub fn check_all(
    points: &[BaselinePoint],
    policy: &GatePolicy,
    on_done: impl Fn(&PointOutcome) + Sync,
) -> Vec<PointOutcome> {
    use rayon::prelude::*;
    points
        .par_iter()
        .map(|p| {
            let outcome = check_registered(p, policy.alpha_for(points, p), policy);
            on_done(&outcome);
            outcome
        })
        .collect()
}
