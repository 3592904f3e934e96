//! Clause 6, over-fill: the rate at multiples of the promised n (0.5x to 4x by default), and
//! that members still answer present; or how construction fails.

use std::sync::Arc;

use super::Plan;
use super::decide::pct;
use super::measure;
use super::rate;
use crate::candidate::{Candidate, CandidateError};
use crate::keys::Family;
use crate::verdict::{Clause, Outcome, RatePoint, Verdict};

/// Clause 6 ([`Clause::OverFill`]): for each multiple f of `plan.over_fill`, a filter built for
/// (n, p) holding round(f n) random-u64 members, queried on them and on `plan.queries / 4`
/// non-members. Broken iff a member is missed or the candidate crashes; a clean refusal (a static
/// filter that cannot be built that full, a filter that is full) is evidence. Rates above the
/// promise past 1x are expected and reported, not judged.
pub(crate) fn check(candidate: &Arc<dyn Candidate>, plan: &Plan) -> (Verdict, Vec<RatePoint>) {
    let clause = Clause::OverFill;
    let queries = (plan.queries / 4).max(1);
    let mut evidence = Vec::new();
    let mut cells = Vec::new();
    let mut points = Vec::new();
    let mut broken: Option<String> = None;
    let mut measured = 0;
    let mut cut = 0;
    for &f in &plan.over_fill {
        // Plan::validate bounds f, so the product fits comfortably.
        let inserted = (f * plan.n as f64).round() as u64;
        let at = format!("{f}x");
        match measure::fill_and_query(
            candidate.as_ref(),
            plan,
            Family::RandomU64,
            plan.n,
            (inserted, queries),
            true,
        ) {
            Ok(filled) if filled.cut.is_some() || filled.queries == 0 => {
                // The members all checked, the rate cut short: reported, not counted as measured.
                cut += 1;
                let (missed, first) = filled.missed.unwrap_or((0, None));
                evidence.push(format!(
                    "{at}: {inserted} members, {missed} missed; the run's deadline passed after \
                     {} of {queries} non-member queries ({} present)",
                    filled.queries, filled.false_positives
                ));
                cells.push(format!("{at} cut by the deadline"));
                if missed > 0 && broken.is_none() {
                    let first = first.map(|i| format!(", first missed index {i}"));
                    broken = Some(format!(
                        "{at}: {missed} of {inserted} members missed{}",
                        first.unwrap_or_default()
                    ));
                }
            }
            Err(e @ CandidateError::DeadlinePassed { .. }) => {
                cut += 1;
                evidence.push(format!("{at}: {e}"));
                cells.push(format!("{at} cut by the deadline"));
                if let CandidateError::DeadlinePassed {
                    done,
                    present: Some(found),
                    ..
                } = e
                    && found < done
                    && broken.is_none()
                {
                    // Members that answered absent before the deadline are false negatives.
                    broken = Some(format!(
                        "{at}: {} of the first {done} members missed",
                        done - found
                    ));
                }
            }
            Ok(filled) => {
                measured += 1;
                let (missed, first) = filled.missed.unwrap_or((0, None));
                let point = rate::point(clause, Family::RandomU64, plan.n, &filled, plan);
                let observed = filled.false_positives as f64 / filled.queries as f64;
                let theory = point
                    .theory
                    .map(|t| format!(", theory {}", pct(t)))
                    .unwrap_or_default();
                evidence.push(format!(
                    "{at}: {inserted} members, {missed} missed; {} of {queries} non-members \
                     present ({}{theory})",
                    filled.false_positives,
                    pct(observed)
                ));
                if missed > 0 && broken.is_none() {
                    let first = first.map(|i| format!(", first missed index {i}"));
                    broken = Some(format!(
                        "{at}: {missed} of {inserted} members missed{}",
                        first.unwrap_or_default()
                    ));
                }
                cells.push(format!("{at} {}", pct(observed)));
                points.push(point);
            }
            Err(e) if measure::is_crash(&e) => {
                evidence.push(format!("{at}: {e}"));
                cells.push(format!("{at} crashed"));
                if broken.is_none() {
                    broken = Some(format!("{at}: {e}"));
                }
            }
            Err(e) => {
                evidence.push(format!("{at}: refused cleanly (evidence only): {e}"));
                cells.push(format!("{at} refused"));
            }
        }
    }
    let (outcome, figure) = match broken {
        Some(why) => (Outcome::Broken, why),
        None if cells.is_empty() => (Outcome::NotApplicable, "no multiple of n planned".into()),
        None if cut > 0 => (
            Outcome::Undecided,
            format!(
                "deadline passed; the plan's remaining multiples would decide: {}",
                cells.join(", ")
            ),
        ),
        None if measured == 0 => (
            Outcome::Undecided,
            format!("nothing measured: {}", cells.join(", ")),
        ),
        None => (Outcome::Holds, cells.join(", ")),
    };
    (
        super::verdict(plan, clause, outcome, figure, evidence),
        points,
    )
}
