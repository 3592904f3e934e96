//! The suite: a [`Plan`] (promised n and p, queries, false-alarm rate, seed) run on one candidate.
//!
//! SKELETON (issue 27): task SUITE fills in the clauses; the signatures here are what the CLI,
//! the report and the subjects code against.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::candidate::Candidate;
use crate::verdict::{Clause, Conformance};

// Called by `run_with` (task SUITE); dead code is allowed until that lands.
#[allow(dead_code)]
mod bad_input;
pub mod measure;
#[allow(dead_code)]
mod scale;

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
    /// Bits the scale clause's filter must exceed (2^32 by default), or `None` to skip it.
    pub scale_bits: Option<u64>,
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

impl Plan {
    /// A quick pass (CI, a library author's `#[test]`): n = 10,000 at p = 1%, 400,000 queries per
    /// rate, no scale clause. Seconds per in-process candidate.
    pub fn quick() -> Self {
        Plan {
            n: 10_000,
            p: 0.01,
            seed: 0x0b10_0c0f,
            queries: 400_000,
            alpha: 1e-4,
            margin: 0.15,
            clauses: Clause::ALL
                .into_iter()
                .filter(|&c| c != Clause::Scale)
                .collect(),
            over_fill: vec![0.5, 1.0, 2.0, 4.0],
            scale_bits: None,
            batch: 4096,
            build_timeout: Duration::from_secs(10),
            threads: 4,
            reproduce: "bloomlab_conform::run(candidate, &Plan::quick())".into(),
        }
    }

    /// The committed report's plan: n = 1,000,000 at p = 1%, 4,000,000 queries per rate, the scale
    /// clause past 2^32 bits.
    pub fn full() -> Self {
        Plan {
            n: 1_000_000,
            queries: 4_000_000,
            clauses: Clause::ALL.to_vec(),
            scale_bits: Some(1 << 32),
            reproduce: "bloomlab_conform::run(candidate, &Plan::full())".into(),
            ..Plan::quick()
        }
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
pub fn run_with(
    candidate: Arc<dyn Candidate>,
    plan: &Plan,
    bad_input: Option<Arc<dyn Candidate>>,
) -> Conformance {
    let _ = (candidate, plan, bad_input);
    todo!("task SUITE")
}
