//! Clause 1, no false negatives: every member answers "maybe present", on every key family, after
//! a serialization round trip where the candidate offers one, and after concurrent inserts where
//! it offers them.

use std::sync::Arc;

use super::Plan;
use super::measure::{self, Buffers, guard};
use super::rate::LONG_MEMBERS;
use crate::candidate::{Candidate, CandidateError, Instance, KeyBatch};
use crate::keys::Family;
use crate::verdict::{Clause, Outcome, RatePoint, Verdict};

/// One phase's finding.
enum Found {
    /// `missed` of `members` answered "absent"; `first` is the first such index (`None` for the
    /// empty key).
    Checked {
        what: String,
        members: u64,
        missed: u64,
        first: Option<u64>,
    },
    /// An optional phase the candidate declined, or a clean refusal: evidence only.
    Declined { what: String, why: String },
    /// The candidate crashed (panic, exit, hang, protocol violation): a break.
    Crashed { what: String, error: CandidateError },
    /// The run's deadline stopped the phase: the clause cannot hold, only break on what was seen.
    Cut { what: String, why: String },
}

/// What the clause has found so far.
#[derive(Default)]
struct Findings(Vec<Found>);

impl Findings {
    fn error(&mut self, what: String, e: CandidateError) {
        if let CandidateError::DeadlinePassed {
            done,
            present: Some(present),
            ..
        } = e
            && present < done
        {
            // Members missed before the deadline are false negatives, whatever stopped the count.
            self.checked(what.clone(), done, (present, None));
        }
        if let CandidateError::DeadlinePassed { .. } = e {
            self.0.push(Found::Cut {
                what,
                why: e.to_string(),
            });
        } else if measure::is_crash(&e) {
            self.0.push(Found::Crashed { what, error: e });
        } else {
            self.0.push(Found::Declined {
                what,
                why: e.to_string(),
            });
        }
    }

    fn checked(&mut self, what: String, members: u64, (found, first): (u64, Option<u64>)) {
        self.0.push(Found::Checked {
            what,
            members,
            missed: members - found,
            first,
        });
    }
}

/// Queries the empty key; `Some(true)` when it is answered present.
fn empty_key_present(inst: &mut dyn Instance, subject: &str) -> Result<bool, CandidateError> {
    let mut keys = KeyBatch::new();
    keys.push(b"");
    let mut answers = Vec::new();
    guard(subject, || inst.query(&keys, &mut answers))?;
    Ok(answers.first() == Some(&true))
}

/// Clause 1 ([`Clause::NoFalseNegatives`]): holds iff no member was missed in any phase and at
/// least one phase was measured; broken by any miss or crash, naming the family, the phase, the
/// number missed and the first missed index. A clean refusal (a library that rejects empty or
/// long keys, a serialization it declines) stops that phase and is listed as evidence: it
/// claims nothing about membership, so it cannot be a false negative. Undecided when nothing at
/// all could be checked.
pub(crate) fn check(candidate: &Arc<dyn Candidate>, plan: &Plan) -> (Verdict, Vec<RatePoint>) {
    let mut found = Findings::default();
    for family in Family::ALL {
        family_phases(candidate.as_ref(), plan, family, &mut found);
    }
    concurrent_phase(candidate.as_ref(), plan, &mut found);
    (conclude(plan, &found), Vec::new())
}

/// Fresh insert and query of `family`'s members (with the empty key among random-u64's), then
/// the same members after a serialization round trip when the candidate claims one.
fn family_phases(candidate: &dyn Candidate, plan: &Plan, family: Family, found: &mut Findings) {
    let about = candidate.about();
    let subject = about.name.as_str();
    let name = family.as_str();
    let members = match family {
        Family::Long => plan.n.min(LONG_MEMBERS),
        _ => plan.n,
    };
    let with_empty = family == Family::RandomU64;
    let mut buf = Buffers::for_plan(plan);
    let mut instance = match guard(subject, || candidate.build(plan.n, plan.p)) {
        Ok(i) => i,
        Err(e) => return found.error(format!("{name} (build)"), e),
    };
    let inst = instance.as_mut();
    let (seed, batch) = (plan.seed, plan.batch);
    // All inserts before the first query: a static filter is built at its first query.
    if let Err(e) = guard(subject, || {
        measure::insert(inst, family, seed, 0..members, batch, &mut buf)
    }) {
        return found.error(format!("{name} (fresh insert)"), e);
    }
    if with_empty {
        let mut empty = KeyBatch::new();
        empty.push(b"");
        if let Err(e) = guard(subject, || inst.insert(&empty)) {
            found.error("the empty key (insert)".into(), e);
        }
    }
    query_members(inst, plan, family, members, "fresh", subject, found);
    if with_empty {
        empty_phase(inst, "fresh", subject, found);
    }
    if !about.capabilities.serialize {
        return;
    }
    let bytes = match guard(subject, || inst.serialize()) {
        Ok(Some(b)) => b,
        Ok(None) => {
            return found.0.push(Found::Declined {
                what: format!("{name} (serialize)"),
                why: "declares serialize but gave no bytes".into(),
            });
        }
        Err(e) => return found.error(format!("{name} (serialize)"), e),
    };
    let mut back = match guard(subject, || candidate.deserialize(&bytes)) {
        Ok(i) => i,
        Err(e) => return found.error(format!("{name} (deserialize)"), e),
    };
    query_members(
        back.as_mut(),
        plan,
        family,
        members,
        "after round trip",
        subject,
        found,
    );
    if with_empty {
        empty_phase(back.as_mut(), "after round trip", subject, found);
    }
}

fn query_members(
    inst: &mut dyn Instance,
    plan: &Plan,
    family: Family,
    members: u64,
    phase: &str,
    subject: &str,
    found: &mut Findings,
) {
    let what = format!("{} ({phase})", family.as_str());
    let mut buf = Buffers::for_plan(plan);
    match guard(subject, || {
        measure::count_positive(inst, family, plan.seed, 0..members, plan.batch, &mut buf)
    }) {
        Ok(r) => found.checked(what, members, r),
        Err(e) => found.error(what, e),
    }
}

fn empty_phase(inst: &mut dyn Instance, phase: &str, subject: &str, found: &mut Findings) {
    let what = format!("the empty key ({phase})");
    match empty_key_present(inst, subject) {
        Ok(present) => found.checked(what, 1, (u64::from(present), None)),
        Err(e) => found.error(what, e),
    }
}

/// A fresh filter filled with random-u64 members `0..n` from `plan.threads` threads through
/// [`Instance::shared`] (disjoint ranges), then every member queried.
fn concurrent_phase(candidate: &dyn Candidate, plan: &Plan, found: &mut Findings) {
    let about = candidate.about();
    let subject = about.name.as_str();
    let what = format!("random-u64 (concurrent, {} threads)", plan.threads);
    let mut instance = match guard(subject, || candidate.build(plan.n, plan.p)) {
        Ok(i) => i,
        Err(e) => return found.error(format!("{what} build"), e),
    };
    let Some(shared) = instance.shared() else {
        if about.capabilities.concurrent {
            found.0.push(Found::Declined {
                what,
                why: "declares concurrent inserts but its instance offers none".into(),
            });
        }
        return;
    };
    let (n, threads) = (plan.n, plan.threads as u64);
    let (seed, batch) = (plan.seed, plan.batch);
    let joined: Vec<Result<(), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let range = (n * t / threads)..(n * (t + 1) / threads);
                s.spawn(move || {
                    let mut keys = KeyBatch::new();
                    let mut at = range.start;
                    while at < range.end {
                        let len = (range.end - at).min(batch as u64) as usize;
                        Family::RandomU64.fill(seed, at, len, &mut keys);
                        keys.iter().for_each(|k| shared.insert_shared(k));
                        at += len as u64;
                    }
                })
            })
            .collect();
        // Joined here, not by the scope, so a panicking thread is evidence, not a panic of ours.
        handles
            .into_iter()
            .map(|h| h.join().map_err(|p| measure::panic_message(p.as_ref())))
            .collect()
    });
    if let Some(Err(message)) = joined.into_iter().find(Result::is_err) {
        let error = CandidateError::Panicked {
            subject: subject.to_owned(),
            message,
        };
        return found.0.push(Found::Crashed {
            what: format!("{what} insert"),
            error,
        });
    }
    let mut buf = Buffers::for_plan(plan);
    let inst = instance.as_mut();
    match guard(subject, || {
        measure::count_positive(inst, Family::RandomU64, seed, 0..n, batch, &mut buf)
    }) {
        Ok(r) => found.checked(what, n, r),
        Err(e) => found.error(what, e),
    }
}

/// The verdict from every phase's finding.
fn conclude(plan: &Plan, found: &Findings) -> Verdict {
    let mut evidence = Vec::new();
    let mut broken: Option<String> = None;
    let (mut checked, mut total, mut cut) = (0usize, 0u64, 0usize);
    for f in &found.0 {
        match f {
            Found::Checked {
                what,
                members,
                missed,
                first,
            } => {
                checked += 1;
                total += members;
                let at = first.map(|i| format!(", first missed index {i}"));
                let line = format!(
                    "{what}: {missed} of {members} missed{}",
                    at.unwrap_or_default()
                );
                if *missed > 0 && broken.is_none() {
                    broken = Some(line.clone());
                }
                evidence.push(line);
            }
            Found::Declined { what, why } => {
                evidence.push(format!("{what}: {why} (evidence only)"))
            }
            Found::Crashed { what, error } => {
                let line = format!("{what}: {error}");
                if broken.is_none() {
                    broken = Some(line.clone());
                }
                evidence.push(line);
            }
            Found::Cut { what, why } => {
                cut += 1;
                evidence.push(format!("{what}: {why}"));
            }
        }
    }
    let (outcome, figure) = match broken {
        Some(line) => (Outcome::Broken, line),
        None if cut > 0 => (
            Outcome::Undecided,
            format!(
                "deadline passed: {checked} checks done, 0 of {total} members \
                 missed; the plan's remaining checks would decide"
            ),
        ),
        None if checked == 0 => (Outcome::Undecided, "nothing measured".into()),
        None => (
            Outcome::Holds,
            format!("0 of {total} members missed ({checked} checks)"),
        ),
    };
    super::verdict(plan, Clause::NoFalseNegatives, outcome, figure, evidence)
}
