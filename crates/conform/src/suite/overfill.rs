//! Clause 6, over-fill: the rate at multiples of the promised n (0.5x to 4x by default), and
//! that members still answer present; or how construction fails. A growable candidate
//! (`capabilities.growable`) is also filled to 8x, 16x, 32x and 64x and held to its p at each.

use std::sync::Arc;

use super::Plan;
use super::decide::{self, pct};
use super::hunt;
use super::measure;
use super::rate;
use crate::candidate::{Candidate, CandidateError};
use crate::keys::Family;
use crate::verdict::{Clause, Outcome, RatePoint, Verdict};

/// Clause 6 ([`Clause::OverFill`]): for each multiple f of `plan.over_fill`, a filter built for
/// (n, p) holding round(f n) random-u64 members, queried on them and on `plan.queries / 4`
/// non-members (one filter filled from multiple to multiple: [`measure::fill_in_steps`]). Broken iff a member is missed or the candidate crashes; a clean refusal (a static
/// filter that cannot be built that full, a filter that is full) is evidence. Rates above the
/// promise past 1x are expected and reported, not judged, unless the candidate is growable: then
/// the multiples run to at least 64x ([`hunt::GROWTH`]) and each rate is held to `p (1 + margin)`
/// as clause 2 holds the promised one, at level `alpha / multiples` (Bonferroni: the clause calls
/// a growable filter that keeps p broken with probability at most `alpha`).
pub(crate) fn check(candidate: &Arc<dyn Candidate>, plan: &Plan) -> (Verdict, Vec<RatePoint>) {
    let clause = Clause::OverFill;
    let queries = (plan.queries / 4).max(1);
    let growable = candidate.about().capabilities.growable;
    let mut multiples = plan.over_fill.clone();
    if growable {
        multiples.extend(hunt::GROWTH.iter().filter(|f| !plan.over_fill.contains(f)));
        multiples.sort_by(f64::total_cmp);
    }
    let level = plan.alpha / multiples.len().max(1) as f64;
    let ceiling = plan.p * (1.0 + plan.margin);
    let mut evidence = Vec::new();
    let mut cells = Vec::new();
    let mut points = Vec::new();
    let mut broken: Option<String> = None;
    let mut measured = 0;
    let mut cut = 0;
    // Plan::validate bounds f, so the product fits comfortably.
    let steps: Vec<u64> = multiples
        .iter()
        .map(|f| (f * plan.n as f64).round() as u64)
        .collect();
    let fills = measure::fill_in_steps(
        candidate.as_ref(),
        plan,
        (Family::RandomU64, plan.n),
        &steps,
        queries,
        true,
    );
    for ((&f, &inserted), filled) in multiples.iter().zip(&steps).zip(fills) {
        let at = format!("{f}x");
        match filled {
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
                if growable {
                    let c = decide::against_ceiling(
                        filled.false_positives,
                        filled.queries,
                        ceiling,
                        level,
                    );
                    evidence.push(format!(
                        "{at}: growable, held to p (1 + margin) = {}: one-sided bounds at \
                         1 - {level:.3e}: [{}, {}]: {}",
                        pct(ceiling),
                        pct(c.lower),
                        pct(c.upper),
                        c.outcome
                    ));
                    if c.outcome == Outcome::Broken && broken.is_none() {
                        broken = Some(format!(
                            "{at}: grows without keeping p: {} observed vs {} promised ({}/{})",
                            pct(observed),
                            pct(plan.p),
                            filled.false_positives,
                            filled.queries
                        ));
                    }
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
