//! Clause 8, speed, for information: nanoseconds per key to insert n random-u64 members, to look
//! them up, and to look up n non-members, one pass each. Nothing is asserted on these figures.

use std::sync::Arc;
use std::time::Instant;

use super::Plan;
use super::measure::guard;
use crate::candidate::{Candidate, CandidateError, KeyBatch};
use crate::keys::Family;
use crate::verdict::{Clause, Outcome, Speed, Verdict};

/// The keys `range` of random-u64, generated before any timing starts, `batch` per batch.
fn batches(plan: &Plan, range: std::ops::Range<u64>) -> Vec<KeyBatch> {
    let mut out = Vec::new();
    let mut at = range.start;
    while at < range.end {
        let len = (range.end - at).min(plan.batch as u64) as usize;
        let mut keys = KeyBatch::new();
        Family::RandomU64.fill(plan.seed, at, len, &mut keys);
        out.push(keys);
        at += len as u64;
    }
    out
}

/// Clause 8 ([`Clause::Speed`]): always n/a (information, never a verdict); the figures when
/// every call succeeded, otherwise the error as evidence.
pub(crate) fn check(candidate: &Arc<dyn Candidate>, plan: &Plan) -> (Verdict, Option<Speed>) {
    let subject = candidate.about().name;
    match guard(&subject, || measure(candidate.as_ref(), plan)) {
        Ok(speed) => {
            let figure = format!(
                "insert {:.0} ns, present {:.0} ns, absent {:.0} ns per key (batches of {})",
                speed.insert_ns, speed.present_ns, speed.absent_ns, speed.batch
            );
            let evidence = vec![
                format!(
                    "one pass each over n = {} random-u64 members and n non-members, keys \
                     generated before timing; wall clock (std::time::Instant), for information only",
                    plan.n
                ),
                "a static filter is constructed at its first query, which the present figure \
                 includes"
                    .into(),
            ];
            (
                super::verdict(
                    plan,
                    Clause::Speed,
                    Outcome::NotApplicable,
                    figure,
                    evidence,
                ),
                Some(speed),
            )
        }
        Err(e) => (
            super::verdict(
                plan,
                Clause::Speed,
                Outcome::NotApplicable,
                "not measured".into(),
                vec![e.to_string()],
            ),
            None,
        ),
    }
}

fn measure(candidate: &dyn Candidate, plan: &Plan) -> Result<Speed, CandidateError> {
    let n = plan.n;
    let members = batches(plan, 0..n);
    let others = batches(plan, n..2 * n);
    let mut instance = candidate.build(n, plan.p)?;
    let mut answers = Vec::with_capacity(plan.batch);
    let per_key = |start: Instant| start.elapsed().as_nanos() as f64 / n.max(1) as f64;
    let start = Instant::now();
    for keys in &members {
        instance.insert(keys)?;
    }
    let insert_ns = per_key(start);
    let start = Instant::now();
    for keys in &members {
        instance.query(keys, &mut answers)?;
        std::hint::black_box(&answers);
    }
    let present_ns = per_key(start);
    let start = Instant::now();
    for keys in &others {
        instance.query(keys, &mut answers)?;
        std::hint::black_box(&answers);
    }
    let absent_ns = per_key(start);
    Ok(Speed {
        insert_ns,
        present_ns,
        absent_ns,
        batch: plan.batch,
    })
}
