//! Clause 8, speed, for information: nanoseconds per key to insert n random-u64 members, to look
//! them up, and to look up n non-members, one pass each. Nothing is asserted on these figures.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Plan;
use super::measure::guard;
use crate::candidate::{Candidate, CandidateError, KeyBatch};
use crate::keys::Family;
use crate::verdict::{Clause, Outcome, Speed, Verdict};

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
                     generated between the timed batches; wall clock (std::time::Instant), for information only",
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

/// One pass of `op` over keys `range` of random-u64, `plan.batch` at a time: nanoseconds per key.
/// Keys are generated between the timed calls (one clock read per batch, not per key), so memory
/// stays at one batch whatever n is.
fn per_key(
    plan: &Plan,
    range: std::ops::Range<u64>,
    mut op: impl FnMut(&KeyBatch) -> Result<(), CandidateError>,
) -> Result<f64, CandidateError> {
    let mut keys = KeyBatch::new();
    let mut spent = Duration::ZERO;
    let mut at = range.start;
    while at < range.end {
        let len = (range.end - at).min(plan.batch as u64) as usize;
        Family::RandomU64.fill(plan.seed, at, len, &mut keys);
        let start = Instant::now();
        op(&keys)?;
        spent += start.elapsed();
        at += len as u64;
    }
    Ok(spent.as_nanos() as f64 / (range.end - range.start).max(1) as f64)
}

fn measure(candidate: &dyn Candidate, plan: &Plan) -> Result<Speed, CandidateError> {
    let n = plan.n;
    let mut instance = candidate.build(n, plan.p)?;
    let mut answers = Vec::with_capacity(plan.batch);
    let insert_ns = per_key(plan, 0..n, |keys| instance.insert(keys))?;
    let mut query = |keys: &KeyBatch| {
        instance.query(keys, &mut answers)?;
        std::hint::black_box(&answers);
        Ok(())
    };
    let present_ns = per_key(plan, 0..n, &mut query)?;
    let absent_ns = per_key(plan, n..2 * n, &mut query)?;
    Ok(Speed {
        insert_ns,
        present_ns,
        absent_ns,
        batch: plan.batch,
    })
}
