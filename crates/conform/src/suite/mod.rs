//! The suite: a [`Plan`] (promised n and p, queries, false-alarm rate, seed) run on one candidate.
//!
//! One module per clause (`members` 1, `rate` 2-4, `scale` 5, `overfill` 6, `bad_input` 7,
//! `speed` 8), the statistics they decide with in `decide`, the loops they share in [`measure`].
//!
//! How each clause decides (`alpha`, `margin` from the [`Plan`]; "crash" = a panic, exit, hang or
//! protocol violation, which breaks the clause it happens in; a clean refusal is evidence):
//! 1. **no-false-negatives**: members `0..n` of every key family (long keys: at most 20,000), the
//!    empty key, again after a serialization round trip where offered, and after inserts from
//!    `plan.threads` threads where offered. Holds iff no member is missed anywhere; no statistics.
//! 2. **promised-rate**: x false positives among `plan.queries` random-u64 non-members. Broken iff
//!    the one-sided exact lower bound at `1 - alpha` exceeds `p (1 + margin)`, holds iff the upper
//!    bound is within it, else undecided with the number of queries that would decide. A filter at
//!    `p (1 + margin)` or better is called broken with probability at most `alpha`.
//! 3. **theory**: the same count against the declared layout's rate t: holds iff the two-sided exact
//!    interval at `1 - alpha` is inside `[t / (1 + margin), t (1 + margin)]`, broken iff it is
//!    entirely outside (false-alarm rate `alpha`); n/a without a declared layout.
//! 4. **key-families**: sequential-u64, url, shared-prefix and long keys, each tolerated up to
//!    `(1 + margin) x max(random-key rate, p)` by a conditional rate-ratio test and an exact bound at
//!    `alpha / 4` each (Bonferroni: false-alarm rate `alpha`).
//! 5. **scale**, 7. **bad-input**: see their modules.
//! 6. **over-fill**: `round(f n)` members for each `f` of `plan.over_fill`; broken iff a member is
//!    missed or the candidate crashes; the rates are reported with the declared theory.
//! 8. **speed**: nanoseconds per key, for information (always n/a).

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::candidate::Candidate;
use crate::verdict::{Clause, Conformance, Outcome, Verdict};

mod bad_input;
mod decide;
pub mod measure;
mod members;
mod overfill;
mod rate;
mod scale;
mod speed;

/// The largest promised n and the most queries per rate a [`Plan`] allows: 2^40 (shown as such in
/// every message that names the limit).
pub const MAX_COUNT: u64 = 1 << 40;

/// What the suite measures and how hard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The promised number of keys the filter is built for.
    pub n: u64,
    /// The promised false-positive rate.
    pub p: f64,
    /// Seed of every key set.
    pub seed: u64,
    /// Non-member queries per measured rate.
    pub queries: u64,
    /// False-alarm rate of each statistical decision (a correct filter is called broken on one
    /// clause with at most this probability).
    pub alpha: f64,
    /// Relative margin of the rate clauses: a rate within `(1 + margin)` of its target is
    /// indistinguishable from it for the verdict ("holds" needs the interval inside it, "broken"
    /// needs the interval outside it).
    pub margin: f64,
    /// The clauses to run, in order.
    pub clauses: Vec<Clause>,
    /// Multiples of n the over-fill clause inserts.
    pub over_fill: Vec<f64>,
    /// Bits the scale clause's filter must exceed (2^32 in both shipped plans), or `None` to skip
    /// it.
    pub scale_bits: Option<u64>,
    /// How the scale clause checks `scale_bits`: filled to its promised n ([`ScaleMethod::Fill`],
    /// the full plan) or the cheap boundary test ([`ScaleMethod::Boundary`], the quick plan).
    #[serde(default)]
    pub scale_method: ScaleMethod,
    /// Keys per insert/query batch.
    pub batch: usize,
    /// How long a build may take in the bad-input clause before it is called a hang.
    pub build_timeout: Duration,
    /// Threads of the concurrent-insert check.
    pub threads: usize,
    /// The command that runs this plan on this candidate, which each verdict's `reproduce` extends
    /// with `--clause NAME` (the CLI sets it; a `#[test]` keeps the default, which names the API).
    pub reproduce: String,
}

/// How the scale clause (5) checks a filter past `scale_bits` bits (see the `scale` module).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScaleMethod {
    /// Fill one filter past `scale_bits` bits to its promised n at the plan's p and hold its rate
    /// to the promise (minutes and `scale_bits / 8 x 1.5` bytes: the committed report's method).
    #[default]
    Fill,
    /// The boundary test: two filters at p = 1/2, past `2 scale_bits` and past `scale_bits`
    /// bits, at the same small load; a filter whose indices stop at or below `scale_bits` has
    /// twice the rate in the larger one. Seconds and about `2 scale_bits / 8 x 1.05` bytes.
    Boundary,
}

impl Plan {
    /// A quick pass (CI, a library author's `#[test]`): n = 10,000 at p = 1%, 400,000 queries per
    /// rate, and the scale clause's boundary test past 2^32 bits ([`ScaleMethod::Boundary`]: about
    /// 1.1 GiB at its peak and a few seconds, for candidates that claim `large`). Seconds per
    /// in-process candidate.
    pub fn quick() -> Self {
        Plan {
            n: 10_000,
            p: 0.01,
            seed: 0x0b10_0c0f,
            queries: 400_000,
            alpha: 1e-4,
            margin: 0.15,
            clauses: Clause::ALL.to_vec(),
            over_fill: vec![0.5, 1.0, 2.0, 4.0],
            scale_bits: Some(1 << 32),
            scale_method: ScaleMethod::Boundary,
            batch: 4096,
            build_timeout: Duration::from_secs(10),
            threads: 4,
            reproduce: "bloomlab_conform::run(candidate, &Plan::quick())".into(),
        }
    }

    /// The committed report's plan: n = 1,000,000 at p = 1%, 4,000,000 queries per rate, the scale
    /// clause past 2^32 bits, and a 5% margin: at 4,000,000 queries the one-sided bound of a rate
    /// of exactly 1% lies within 2% of it (at alpha = 1e-4), so a filter that keeps its promise
    /// holds, and one 5% or more above it is told apart (the quick plan's 400,000 queries need the
    /// wider 15%).
    pub fn full() -> Self {
        Plan {
            n: 1_000_000,
            queries: 4_000_000,
            margin: 0.05,
            scale_method: ScaleMethod::Fill,
            reproduce: "bloomlab_conform::run(candidate, &Plan::full())".into(),
            ..Plan::quick()
        }
    }

    /// Checks every field the suite divides by, sizes with or hands to the statistics; the error
    /// names the field, its value and the allowed range.
    pub fn validate(&self) -> Result<(), String> {
        let bad = |field: &str, value: String, allowed: &str| {
            Err(format!(
                "plan {field} = {value} is invalid: allowed {allowed}"
            ))
        };
        if self.n == 0 || self.n > MAX_COUNT {
            return bad("n", self.n.to_string(), "1 to 2^40");
        }
        if !(self.p > 0.0 && self.p < 1.0) {
            return bad("p", self.p.to_string(), "the open interval (0, 1)");
        }
        if self.queries == 0 || self.queries > MAX_COUNT {
            return bad("queries", self.queries.to_string(), "1 to 2^40");
        }
        // One-sided bounds are the ends of a two-sided interval at 1 - 2 alpha.
        if !(self.alpha > 0.0 && self.alpha < 0.5) {
            return bad(
                "alpha",
                self.alpha.to_string(),
                "the open interval (0, 0.5)",
            );
        }
        if !(self.margin.is_finite() && self.margin >= 0.0) {
            return bad("margin", self.margin.to_string(), "a finite number >= 0");
        }
        if let Some(&f) = self
            .over_fill
            .iter()
            .find(|f| !(**f > 0.0 && **f <= 1000.0))
        {
            return bad("over_fill", f.to_string(), "multiples in (0, 1000]");
        }
        if self.batch == 0 || self.batch > 1 << 24 {
            return bad("batch", self.batch.to_string(), "1 to 2^24 keys");
        }
        if self.threads == 0 || self.threads > 1024 {
            return bad("threads", self.threads.to_string(), "1 to 1024");
        }
        Ok(())
    }
}

/// A verdict on `clause` under `plan`, reproduced by `plan.reproduce --clause NAME`.
pub(crate) fn verdict(
    plan: &Plan,
    clause: Clause,
    outcome: Outcome,
    figure: String,
    evidence: Vec<String>,
) -> Verdict {
    Verdict {
        clause,
        outcome,
        figure,
        evidence,
        reproduce: format!("{} --clause {}", plan.reproduce, clause.as_str()),
    }
}

/// Runs `plan` on `candidate`: one verdict per clause in `plan.clauses`. Never panics because the
/// candidate did: a panic, refusal, timeout or exit becomes that clause's evidence.
pub fn run(candidate: Arc<dyn Candidate>, plan: &Plan) -> Conformance {
    run_with(candidate, plan, None)
}

/// [`run`], with the bad-input clause sent to `bad_input` instead when given: the same library
/// served from a child process (`bloomlab conform serve`), so an abort or a hang there cannot take
/// the caller down. In process, a build runs on a watchdog thread with `plan.build_timeout` and
/// panics are caught, but an abort would end the process.
///
/// Clauses run in `plan.clauses` order; clauses 2, 3 and 4 share one random-key measurement. A
/// plan that fails [`Plan::validate`] measures nothing: every clause is undecided, naming the
/// field.
pub fn run_with(
    candidate: Arc<dyn Candidate>,
    plan: &Plan,
    bad_input: Option<Arc<dyn Candidate>>,
) -> Conformance {
    let mut out = Conformance {
        subject: candidate.about(),
        n: plan.n,
        p: plan.p,
        seed: plan.seed,
        verdicts: Vec::new(),
        points: Vec::new(),
        speed: None,
    };
    if let Err(e) = plan.validate() {
        out.verdicts = plan
            .clauses
            .iter()
            .map(|&c| verdict(plan, c, Outcome::Undecided, e.clone(), vec![e.clone()]))
            .collect();
        return out;
    }
    let mut random = None;
    for &clause in &plan.clauses {
        let (v, points) = match clause {
            Clause::NoFalseNegatives => members::check(&candidate, plan),
            Clause::PromisedRate => rate::promised(
                random.get_or_insert_with(|| rate::measure(&candidate, plan)),
                plan,
            ),
            Clause::Theory => (
                rate::theory(
                    random.get_or_insert_with(|| rate::measure(&candidate, plan)),
                    plan,
                ),
                Vec::new(),
            ),
            Clause::KeyFamilies => rate::families(
                &candidate,
                plan,
                random.get_or_insert_with(|| rate::measure(&candidate, plan)),
            ),
            Clause::Scale => scale::check(&candidate, plan),
            Clause::OverFill => overfill::check(&candidate, plan),
            Clause::BadInput => bad_input::check(bad_input.as_ref().unwrap_or(&candidate), plan),
            Clause::Speed => {
                let (v, speed) = speed::check(&candidate, plan);
                out.speed = speed;
                (v, Vec::new())
            }
        };
        out.verdicts.push(v);
        out.points.extend(points);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_plans_are_valid_and_a_bad_field_is_named_with_its_range() {
        Plan::quick().validate().unwrap();
        Plan::full().validate().unwrap();
        let cases: [(Plan, &str); 6] = [
            (
                Plan {
                    n: 0,
                    ..Plan::quick()
                },
                "plan n = 0 is invalid: allowed 1 to 2^40",
            ),
            (
                Plan {
                    p: f64::NAN,
                    ..Plan::quick()
                },
                "plan p = NaN is invalid: allowed the open interval (0, 1)",
            ),
            (
                Plan {
                    p: 1.0,
                    ..Plan::quick()
                },
                "plan p = 1 is invalid: allowed the open interval (0, 1)",
            ),
            (
                Plan {
                    margin: -0.1,
                    ..Plan::quick()
                },
                "plan margin = -0.1 is invalid: allowed a finite number >= 0",
            ),
            (
                Plan {
                    over_fill: vec![1.0, -2.0],
                    ..Plan::quick()
                },
                "plan over_fill = -2 is invalid: allowed multiples in (0, 1000]",
            ),
            (
                Plan {
                    batch: 0,
                    ..Plan::quick()
                },
                "plan batch = 0 is invalid: allowed 1 to 2^24 keys",
            ),
        ];
        for (plan, want) in cases {
            assert_eq!(plan.validate().unwrap_err(), want);
        }
    }
}
