//! The loops every clause shares: insert a family's keys, count positive answers, in batches,
//! stopping between batches once the run's deadline has passed.
//!
//! **The deadline.** [`super::run_with`] sets [`Plan::deadline_at`](super::Plan::deadline_at)
//! from [`Plan::deadline`](super::Plan::deadline) when the run starts. [`fill_and_query`] reads it
//! from the plan it is given, and [`insert`] and [`count_positive`] from the [`Buffers`] they are
//! given ([`Buffers::for_plan`]), so a clause that measures through this module with the plan
//! `run_with` handed it stops within one batch of the deadline: [`fill_and_query`] returns the
//! non-member count so far flagged [`Filled::cut`], and every other stop is
//! [`CandidateError::DeadlinePassed`] with the counts so far, which [`is_crash`] never calls a
//! crash (a clause meeting it is undecided, never broken by our own deadline).

use std::time::Instant;

use crate::candidate::{CandidateError, Instance, KeyBatch};
use crate::keys::Family;

/// Reused buffers for batched calls (no allocation per batch once grown), and the instant the
/// loops that use them stop at.
#[derive(Default)]
pub struct Buffers {
    /// The keys of the current batch.
    pub keys: KeyBatch,
    /// The answers to the current batch.
    pub answers: Vec<bool>,
    /// [`insert`] and [`count_positive`] stop before the first batch that would start at or after
    /// this instant (`None`: never; the default).
    pub stop_at: Option<Instant>,
}

impl Buffers {
    /// Empty buffers whose loops stop at `plan`'s deadline ([`super::Plan::deadline_at`]).
    pub fn for_plan(plan: &super::Plan) -> Self {
        Buffers {
            stop_at: plan.deadline_at,
            ..Buffers::default()
        }
    }
}

/// Whether `stop_at` has passed.
pub fn deadline_passed(stop_at: Option<Instant>) -> bool {
    stop_at.is_some_and(|t| Instant::now() >= t)
}

/// Inserts keys `range` of `family` under `seed`, `batch` at a time; stops before a batch once
/// `buf.stop_at` has passed ([`CandidateError::DeadlinePassed`] with the keys inserted so far).
pub fn insert(
    instance: &mut dyn Instance,
    family: Family,
    seed: u64,
    range: std::ops::Range<u64>,
    batch: usize,
    buf: &mut Buffers,
) -> Result<(), CandidateError> {
    let mut at = range.start;
    while at < range.end {
        if deadline_passed(buf.stop_at) {
            return Err(CandidateError::DeadlinePassed {
                operation: "insert".into(),
                done: at - range.start,
                of: range.end - range.start,
                present: None,
            });
        }
        let len = (range.end - at).min(batch as u64) as usize;
        family.fill(seed, at, len, &mut buf.keys);
        instance.insert(&buf.keys)?;
        at += len as u64;
    }
    Ok(())
}

/// A count of positive answers, possibly cut short by the deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    /// Keys queried (fewer than asked iff the deadline cut the count short).
    pub queried: u64,
    /// Those answering "maybe present".
    pub positive: u64,
    /// The index of the first key that answered "absent".
    pub first_absent: Option<u64>,
}

/// Queries keys `range` of `family` under `seed`, `batch` at a time: how many answered "maybe
/// present", and the index of the first that answered "absent" (for members: a false negative).
/// Stops before a batch once `buf.stop_at` has passed ([`CandidateError::DeadlinePassed`] with
/// the keys queried and the positive answers so far).
pub fn count_positive(
    instance: &mut dyn Instance,
    family: Family,
    seed: u64,
    range: std::ops::Range<u64>,
    batch: usize,
    buf: &mut Buffers,
) -> Result<(u64, Option<u64>), CandidateError> {
    let of = range.end - range.start;
    let c = count_until(instance, family, seed, range, batch, buf)?;
    if c.queried < of {
        return Err(CandidateError::DeadlinePassed {
            operation: "query".into(),
            done: c.queried,
            of,
            present: Some(c.positive),
        });
    }
    Ok((c.positive, c.first_absent))
}

/// [`count_positive`], returning the count so far (not an error) when `buf.stop_at` passes.
pub fn count_until(
    instance: &mut dyn Instance,
    family: Family,
    seed: u64,
    range: std::ops::Range<u64>,
    batch: usize,
    buf: &mut Buffers,
) -> Result<Counted, CandidateError> {
    let mut at = range.start;
    let mut positive = 0;
    let mut first_absent = None;
    while at < range.end {
        if deadline_passed(buf.stop_at) {
            break;
        }
        let len = (range.end - at).min(batch as u64) as usize;
        family.fill(seed, at, len, &mut buf.keys);
        instance.query(&buf.keys, &mut buf.answers)?;
        if buf.answers.len() != len {
            return Err(CandidateError::Protocol {
                subject: String::new(),
                operation: "query".into(),
                detail: format!("{} answers to {len} keys", buf.answers.len()),
            });
        }
        positive += buf.answers.iter().filter(|&&a| a).count() as u64;
        if first_absent.is_none()
            && let Some(i) = buf.answers.iter().position(|&a| !a)
        {
            first_absent = Some(at + i as u64);
        }
        at += len as u64;
    }
    Ok(Counted {
        queried: at - range.start,
        positive,
        first_absent,
    })
}

/// Runs `f`, turning a panic into [`CandidateError::Panicked`] naming `subject`, and a
/// [`CandidateError::Protocol`] without a subject (as [`count_positive`] makes one) into one
/// naming it: the suite never panics because the candidate did.
pub fn guard<T>(
    subject: &str,
    f: impl FnOnce() -> Result<T, CandidateError>,
) -> Result<T, CandidateError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Err(CandidateError::Protocol {
            subject: s,
            operation,
            detail,
        })) if s.is_empty() => Err(CandidateError::Protocol {
            subject: subject.to_owned(),
            operation,
            detail,
        }),
        Ok(r) => r,
        Err(payload) => Err(CandidateError::Panicked {
            subject: subject.to_owned(),
            message: panic_message(payload.as_ref()),
        }),
    }
}

/// The text of a panic payload (`&str` or `String`; anything else is named as such).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a panic payload that is not text)".into())
}

/// Whether an error is a crash (the candidate panicked, exited, hung or broke the protocol),
/// which breaks the clause it happened in, rather than a clean answer (refused, unsupported)
/// or a failure to reach it at all (I/O), which are evidence.
pub fn is_crash(e: &CandidateError) -> bool {
    matches!(
        e,
        CandidateError::Panicked { .. }
            | CandidateError::Exited { .. }
            | CandidateError::Timeout { .. }
            | CandidateError::Protocol { .. }
    )
}

/// One filter built, filled and queried: what the rate clauses measure.
#[derive(Debug, Clone)]
pub struct Filled {
    /// Members inserted (indices `0..inserted`).
    pub inserted: u64,
    /// Members that answered "absent", and the first such index, when members were queried.
    pub missed: Option<(u64, Option<u64>)>,
    /// Non-members queried (indices `inserted..inserted + queries`); fewer than planned when
    /// [`cut`](Self::cut).
    pub queries: u64,
    /// Those answering "maybe present".
    pub false_positives: u64,
    /// What the filter reported about itself after the queries (an error here is not a failure
    /// of the measurement).
    pub stats: Result<crate::candidate::Stats, CandidateError>,
    /// `Some` when the run's deadline stopped the non-member queries early: the count above is
    /// an honest count of the queries made, but not the plan's, so no clause decides on it.
    pub cut: Option<Cut>,
}

/// A non-member count the deadline cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// The queries the plan asked for ([`Filled::queries`] holds those made).
    pub planned: u64,
}

/// Builds `candidate` for (`design_n`, `plan.p`), inserts members `0..inserted` of `family`,
/// queries them back when `check_members`, then queries `queries` non-members, `plan.batch` keys
/// at a time under `plan.seed`; every call guarded ([`guard`]).
///
/// Stops at `plan.deadline_at`: before the build, the inserts or the member check it is
/// [`CandidateError::DeadlinePassed`] (with the counts so far); during the non-member queries it
/// is `Ok` with the count so far and [`Filled::cut`] set.
pub fn fill_and_query(
    candidate: &dyn crate::candidate::Candidate,
    plan: &super::Plan,
    family: Family,
    design_n: u64,
    (inserted, queries): (u64, u64),
    check_members: bool,
) -> Result<Filled, CandidateError> {
    let one = fill_in_steps(
        candidate,
        plan,
        (family, design_n),
        &[inserted],
        queries,
        check_members,
    );
    one.into_iter()
        .next()
        .expect("fill_in_steps answers each step it is given")
}

/// [`fill_and_query`] at several member counts on one filter: for each count of `steps`, the
/// members up to it are inserted into the filter the previous step left (only those past the
/// previous count), checked when `check_members` (all of them), and `queries` non-members past
/// them are asked. Queries change no filter, so a candidate whose state depends only on the keys
/// inserted, in order, gives exactly the counts of a fresh filter per step, for the inserts of
/// the largest step alone instead of their sum (the over-fill clause's 0.5x to 64x: 64 n inserts,
/// not 127.5 n). A fresh filter is built instead for a static-build candidate (it takes no insert
/// after its first query), for a step below the one before it, and after a step that failed
/// (the filter's state is then unknown).
pub fn fill_in_steps(
    candidate: &dyn crate::candidate::Candidate,
    plan: &super::Plan,
    (family, design_n): (Family, u64),
    steps: &[u64],
    queries: u64,
    check_members: bool,
) -> Vec<Result<Filled, CandidateError>> {
    let reuse = !candidate.about().capabilities.static_build;
    let mut buf = Buffers::for_plan(plan);
    let fill = Fill {
        candidate,
        plan,
        family,
        design_n,
        check_members,
    };
    let mut kept: Option<(Box<dyn Instance>, u64)> = None;
    steps
        .iter()
        .map(|&inserted| {
            let from = kept.take().filter(|&(_, at)| reuse && at <= inserted);
            fill.to(from, (inserted, queries), &mut buf)
                .map(|(filled, instance)| {
                    kept = Some((instance, inserted));
                    filled
                })
        })
        .collect()
}

/// What [`fill_and_query`] and [`fill_in_steps`] fill.
struct Fill<'a> {
    candidate: &'a dyn crate::candidate::Candidate,
    plan: &'a super::Plan,
    family: Family,
    design_n: u64,
    check_members: bool,
}

impl Fill<'_> {
    /// Fills `from` (a filter holding the members below its count) or a fresh filter up to
    /// `inserted` members and measures it; the filter is handed back for the next step.
    fn to(
        &self,
        from: Option<(Box<dyn Instance>, u64)>,
        (inserted, queries): (u64, u64),
        buf: &mut Buffers,
    ) -> Result<(Filled, Box<dyn Instance>), CandidateError> {
        let subject = self.candidate.about().name;
        let (family, seed, batch) = (self.family, self.plan.seed, self.plan.batch);
        let (mut instance, held) = match from {
            Some(kept) => kept,
            None => {
                if deadline_passed(buf.stop_at) {
                    return Err(CandidateError::DeadlinePassed {
                        operation: "build".into(),
                        done: 0,
                        of: 0,
                        present: None,
                    });
                }
                let built = guard(&subject, || {
                    self.candidate.build(self.design_n, self.plan.p)
                })?;
                (built, 0)
            }
        };
        let inst = instance.as_mut();
        guard(&subject, || {
            insert(inst, family, seed, held..inserted, batch, buf)
        })?;
        let missed = if self.check_members {
            let (found, first) = guard(&subject, || {
                count_positive(inst, family, seed, 0..inserted, batch, buf)
            })?;
            Some((inserted - found, first))
        } else {
            None
        };
        let counted = guard(&subject, || {
            count_until(inst, family, seed, inserted..inserted + queries, batch, buf)
        })?;
        let stats = guard(&subject, || inst.stats());
        let filled = Filled {
            inserted,
            missed,
            queries: counted.queried,
            false_positives: counted.positive,
            stats,
            cut: (counted.queried < queries).then_some(Cut { planned: queries }),
        };
        Ok((filled, instance))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::{About, Candidate, Capabilities, PerKey};
    use std::collections::HashSet;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// 12 bits of a key.
    fn short(k: &[u8]) -> u16 {
        k.iter().fold(0u16, |h, &b| h.rotate_left(5) ^ b as u16) & 0xfff
    }

    /// A filter that keeps 12 bits of each key (its rate rises with the fill), counting builds.
    struct Coarse {
        builds: AtomicU32,
        static_build: bool,
    }

    impl Candidate for Coarse {
        fn about(&self) -> About {
            About::rust("coarse", "0").with(Capabilities {
                static_build: self.static_build,
                ..Capabilities::default()
            })
        }
        fn build(&self, _: u64, _: f64) -> Result<Box<dyn Instance>, CandidateError> {
            self.builds.fetch_add(1, Ordering::Relaxed);
            Ok(Box::new(PerKey::new(
                HashSet::<u16>::new(),
                |s, k| {
                    s.insert(short(k));
                },
                |s, k| s.contains(&short(k)),
            )))
        }
    }

    #[test]
    fn filling_in_steps_counts_what_fresh_fills_count_on_one_build_unless_static() {
        let plan = super::super::Plan {
            seed: 7,
            ..super::super::Plan::quick()
        };
        let steps = [100, 300, 300, 1200, 200];
        for static_build in [false, true] {
            let c = Coarse {
                builds: AtomicU32::new(0),
                static_build,
            };
            let stepped = fill_in_steps(&c, &plan, (Family::RandomU64, 100), &steps, 5000, true);
            let stepped_builds = c.builds.swap(0, Ordering::Relaxed);
            for (&inserted, got) in steps.iter().zip(&stepped) {
                let fresh =
                    fill_and_query(&c, &plan, Family::RandomU64, 100, (inserted, 5000), true)
                        .unwrap();
                let got = got.as_ref().unwrap();
                assert_eq!(
                    (got.inserted, got.missed, got.queries, got.false_positives),
                    (
                        fresh.inserted,
                        fresh.missed,
                        fresh.queries,
                        fresh.false_positives
                    ),
                    "static_build {static_build}, {inserted} members"
                );
                assert_eq!(got.missed, Some((0, None)));
            }
            // The rate rises with the fill, so the steps measured different filters.
            assert!(
                stepped[3].as_ref().unwrap().false_positives
                    > stepped[0].as_ref().unwrap().false_positives
            );
            // One build, and a second for the step below the one before it; static: one a step.
            assert_eq!(stepped_builds, if static_build { 5 } else { 2 });
        }
    }

    #[test]
    fn guard_turns_a_panic_into_an_error_naming_the_subject() {
        let e = guard::<()>("planted", || panic!("at key {}", 7)).unwrap_err();
        assert_eq!(
            e,
            CandidateError::Panicked {
                subject: "planted".into(),
                message: "at key 7".into()
            }
        );
        assert!(is_crash(&e));
        let e = guard::<()>("planted", || {
            Err(CandidateError::Protocol {
                subject: String::new(),
                operation: "query".into(),
                detail: "3 answers to 4 keys".into(),
            })
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "planted broke the conformance protocol during query: 3 answers to 4 keys"
        );
        let refused = CandidateError::Refused {
            subject: "planted".into(),
            message: "p = 0".into(),
        };
        assert!(!is_crash(&refused));
        assert_eq!(guard("planted", || Ok(5)), Ok(5));
    }
}
