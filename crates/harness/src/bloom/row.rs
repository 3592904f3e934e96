//! One sweep result: the CSV schema that the report crate and the gate read back.
//!
//! Every derived figure is a column so that plots and gates read only the CSV.
//!
//! The workload columns (from `workload` on) come last and have serde defaults, so a CSV written
//! before they existed still reads (its rows are static rows), and a static row's earlier columns
//! are what they were before the workloads existed.

use std::fmt;
use std::str::FromStr;

use bloomlab_filters::Layout;
use serde::{Deserialize, Serialize};

use crate::error::HarnessError;
use crate::subject::Subject;

/// What a row's filter went through.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// Sized for n, filled once with round(n * overfill) keys, then queried.
    #[default]
    Static,
    /// Filled with n keys, then rounds that each remove a fraction of the members and insert as
    /// many fresh keys; one row per round (round 0: before any removal).
    Churn,
    /// Built for n0 keys, then filled with n0 x G keys for G = 1, 2, 4, ...; one row per G.
    Grow,
}

impl Workload {
    /// Every workload, in report order.
    pub const ALL: [Workload; 3] = [Workload::Static, Workload::Churn, Workload::Grow];

    /// The name used by `--workload` and the CSV.
    pub const fn as_str(self) -> &'static str {
        match self {
            Workload::Static => "static",
            Workload::Churn => "churn",
            Workload::Grow => "grow",
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Workload {
    type Err = HarnessError;
    fn from_str(s: &str) -> Result<Self, HarnessError> {
        Workload::ALL
            .into_iter()
            .find(|w| w.as_str() == s)
            .ok_or_else(|| {
                HarnessError::invalid(
                    "workload",
                    format!("{s:?}"),
                    "must be static, churn or grow",
                )
            })
    }
}

/// One trial: a filter built for `n` keys at target `p`, filled with `n_inserted` member keys of
/// `key_set`, then queried with `queries` non-member keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    /// What was measured, e.g. `classic/xxh3/km/flat` (the subject's name in the CSV).
    pub filter: Subject,
    /// Layout family, from the filter's type: `classic`, `blocked512`, `sbbf` or `textbook` in the
    /// CSV.
    pub layout: Layout,
    /// Key set name, e.g. `random-u64`, `article`, `url`, `hex`, `file:PATH`.
    pub key_set: String,
    /// Expected count the filter was sized for.
    pub n: u64,
    /// Target false-positive rate the filter was sized for.
    pub p: f64,
    /// Inserted keys / n (1.0 = as sized).
    pub overfill: f64,
    /// Member keys actually inserted.
    pub n_inserted: u64,
    /// True bit count after the layout's rounding.
    pub bits: u64,
    /// Probes per key.
    pub hashes: u32,
    /// bits / n.
    pub bits_per_key: f64,
    /// log2(1/p): the information-theoretic lower bound in bits per key for rate p.
    pub bound_bits_per_key: f64,
    /// bits_per_key / log2(1/observed FPR): 1.0 would be a perfect filter; Bloom filters sit near 1.44.
    pub space_overhead: f64,
    /// Bytes the filter holds.
    pub memory_bytes: u64,
    /// Fraction of bits set after inserting.
    pub fill_ratio: f64,
    /// Element count estimated from the fill, to compare with `n_inserted`.
    pub estimated_count: f64,
    /// Non-member queries made.
    pub queries: u64,
    /// Non-members reported present.
    pub false_positives: u64,
    /// false_positives / queries.
    pub fpr: f64,
    /// Clopper-Pearson exact interval at `confidence`.
    pub ci_low: f64,
    /// Upper end of the Clopper-Pearson interval.
    pub ci_high: f64,
    /// Wilson score interval at `confidence`.
    pub wilson_low: f64,
    /// Upper end of the Wilson interval.
    pub wilson_high: f64,
    /// Layout-correct theoretical FPR at `n_inserted` keys.
    pub fpr_theory: f64,
    /// Textbook (1 - e^(-kn/m))^k at `n_inserted` keys.
    pub fpr_textbook: f64,
    /// Whether `fpr_theory` lies inside [ci_low, ci_high].
    pub theory_in_interval: bool,
    /// This filter's own rate given the bits it holds, for uniform independent probes
    /// ([`bloomlab_filters::Filter::fpr_given_bits`]): what `fpr` estimates, without the
    /// filter-to-filter spread `fpr_theory` averages over. NaN when the structure does not expose
    /// its bits (a third-party peer); NaN when read from a CSV written before the column existed.
    #[serde(default = "nan")]
    pub fpr_given_bits: f64,
    /// Whether `fpr_given_bits` lies inside [ci_low, ci_high]: the test of the hash and index
    /// scheme alone (a filter whose probes are uniform fails it at the interval's error rate).
    #[serde(default)]
    pub given_bits_in_interval: bool,
    /// Whether the query cap stopped sampling before the precision target was met.
    pub capped: bool,
    /// Median insert time per key over the timing passes (indicative; criterion is the authority).
    pub insert_ns: f64,
    /// Median lookup time per present key.
    pub lookup_present_ns: f64,
    /// Median lookup time per absent key.
    pub lookup_absent_ns: f64,
    /// The same present-key lookups on a `std::collections::HashSet` of the same keys.
    pub hashset_present_ns: f64,
    /// The same absent-key lookups on the HashSet.
    pub hashset_absent_ns: f64,
    /// Bytes the HashSet holds (table plus owned key bytes), measured.
    pub hashset_memory_bytes: u64,
    /// Confidence level of both intervals.
    pub confidence: f64,
    /// Seed of the run (key sets and query order derive from it and the row's coordinates).
    pub seed: u64,
    /// `git describe --always --dirty` of the build, or `unknown`.
    pub revision: String,
    /// `static`, `churn` or `grow`. The columns below are neutral (0, false or empty) in static
    /// rows.
    #[serde(default)]
    pub workload: Workload,
    /// Churn: the round after which the row was measured (0: filled, nothing removed yet).
    #[serde(default)]
    pub round: u64,
    /// Grow: G, the members held as a multiple of the initial capacity `n` (then `overfill` = G
    /// too).
    #[serde(default)]
    pub growth: u64,
    /// Churn: the fraction of the members each round removes (and replaces by fresh keys).
    #[serde(default)]
    pub churn: f64,
    /// Churn: the fraction of each round's removals that instead remove a never-inserted key that
    /// tests positive (a caller error no filter can detect; it costs false negatives).
    #[serde(default)]
    pub hostile: f64,
    /// Churn: members removed so far (all rounds up to this one); members held stay `n_inserted`.
    #[serde(default)]
    pub removed: u64,
    /// Churn: never-inserted keys whose removal the filter accepted so far (`hostile` > 0 only).
    #[serde(default)]
    pub hostile_removed: u64,
    /// Churn and grow: members checked after this round or growth step (every current member).
    #[serde(default)]
    pub members_checked: u64,
    /// Members the filter did not find: false negatives, the error a Bloom filter promises never
    /// to make.
    #[serde(default)]
    pub false_negatives: u64,
    /// Clopper-Pearson interval of the false-negative rate at `confidence` (0, 0 when no member
    /// was checked).
    #[serde(default)]
    pub fn_ci_low: f64,
    /// Upper end of the false-negative interval.
    #[serde(default)]
    pub fn_ci_high: f64,
    /// Churn: false negatives whose zeroed counters had lost an increment at saturation and none
    /// was decremented by an accepted hostile removal (the *saturated decrement* mechanism). The
    /// four `fn_*` cause columns sum to `false_negatives` in churn rows.
    #[serde(default)]
    pub fn_saturated_decrement: u64,
    /// Churn: false negatives whose zeroed counters were decremented by an accepted removal of a
    /// never-inserted key and none had lost an increment (the *removed false positive* mechanism).
    #[serde(default)]
    pub fn_removed_false_positive: u64,
    /// Churn: false negatives with zeroed counters of both kinds.
    #[serde(default)]
    pub fn_both_causes: u64,
    /// Churn: false negatives with no zeroed counter of either kind: neither mechanism explains
    /// them, so a nonzero value points at a bug in the filter (or the audit).
    #[serde(default)]
    pub fn_unexplained: u64,
    /// Whether this row fails the run: a false negative from a variant that promises none, with
    /// no hostile removals (the textbook ports promise nothing; hostile removals make false
    /// negatives expected for every design).
    #[serde(default)]
    pub fn_failure: bool,
    /// Stages of a growable filter (1 for a filter that cannot grow; 0 in static and churn rows).
    #[serde(default)]
    pub stages: u64,
    /// Counters stuck at their maximum (churn rows of filters that can remove; 0 otherwise).
    #[serde(default)]
    pub saturated_counters: u64,
    /// Probability that at least one counter of a counting layout reaches its maximum at
    /// `n_inserted` members (`bloomlab_filters::theory::counter_saturation_any`: exact binomial
    /// tail); empty for layouts without counters.
    #[serde(default)]
    pub counter_overflow_p: Option<f64>,
    /// Grow: bits per member of a static classic filter sized for the members held at rate `p`
    /// (from sizing, `ceil(-members ln p / ln^2 2)`), to compare with `bits / n_inserted`.
    #[serde(default)]
    pub static_bits_per_key: f64,
    /// Churn and grow: bits / members held (`bits_per_key` divides by the sized-for `n`).
    #[serde(default)]
    pub bits_per_member: f64,
    /// Non-member queries per second of the row's false-positive sampling, on the one core that
    /// ran it: queries divided by the time the sampling thread spent on a core (Linux's account
    /// of the thread's CPU time; wall time elsewhere) reading, hashing and looking up the keys
    /// and counting the positives. In a sweep, the keys are generated once for all rows of a
    /// group ([`crate::keys::group`]) and that generation is not in the figure; keys past the
    /// group's store are generated by the row, and that is. A speed, not a statistic: it varies from run to run like the
    /// timing columns (on a shared machine the other work still competes for caches and memory).
    /// 0 where not measured (`--no-timing`, churn, grow and Redis rows, and rows of a CSV written
    /// before the column existed).
    #[serde(default)]
    pub queries_per_s_core: f64,
}

/// The default of a column missing from an older CSV: unknown.
fn nan() -> f64 {
    f64::NAN
}

/// The non-member queries per second per core of `rows` together: all their queries divided by
/// the time their false-positive sampling took (each row's `queries / queries_per_s_core`), so a
/// row weighs by its time, not one vote each. Rows without the figure (0) are left out; `None`
/// when none has it.
pub fn overall_queries_per_s_core<'a>(rows: impl IntoIterator<Item = &'a SweepRow>) -> Option<f64> {
    let (queries, seconds) = rows
        .into_iter()
        .filter(|r| r.queries_per_s_core > 0.0 && r.queries_per_s_core.is_finite())
        .fold((0.0, 0.0), |(q, s), r| {
            (
                q + r.queries as f64,
                s + r.queries as f64 / r.queries_per_s_core,
            )
        });
    (seconds > 0.0).then(|| queries / seconds)
}
