//! Clause 7, bad input: what a candidate does with n = 0 and p at and beyond the edges of (0, 1)
//! (and, when it runs in a child process that bloomlab can kill, n = u64::MAX and p = 1e-300,
//! which may allocate without bound).
//!
//! Each case builds on a watchdog thread: the build (and, when accepted, 100 inserts and 1,100
//! lookups) runs under `catch_unwind`, and the caller waits `plan.build_timeout` for each of the
//! two phases. A thread that does not answer in time is reported as a hang and **left behind**: Rust
//! cannot stop a thread, so it keeps whatever it holds (and, if it spins, a core) until the process
//! ends. For a process candidate that thread is only waiting on a child, which the candidate's own
//! request timeout kills. An abort in process would still end the caller: that is what
//! [`super::run_with`]'s isolated candidate is for.
//!
//! Broken: any case that panicked, crashed, hung, or was accepted and then missed one of its own
//! members (silently wrong); accepting p < 0 or NaN (not a probability) without an error; and
//! accepting p = 0 (no false positive at all) and then answering a non-member present (a promise
//! broken without a word). Accepting p = 0 and answering none of the 1,000 non-members present
//! is what an exact set does, and fine (1,000 non-members cannot tell a small rate from 0, so a
//! filter that quietly rounds p = 0 up to a small rate may pass here too). Accepting n = 0 or
//! p >= 1 is fine when no member is missed.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use bloomlab_theory::Compact;

use super::Plan;
use super::measure::{self, Buffers};
use super::scale::panic_message;
use crate::candidate::{Candidate, CandidateError, Instance};
use crate::keys::{Family, derive_seed};
use crate::verdict::{Clause, Outcome, RatePoint, Verdict};

/// Members inserted into a filter built from bad input, then queried back.
const MEMBERS: u64 = 100;
/// Non-members queried in such a filter (their positive fraction is recorded).
const NON_MEMBERS: u64 = 1000;

/// One bad input.
#[derive(Debug, Clone, Copy)]
struct Case {
    n: u64,
    p: f64,
}

impl Case {
    /// The short label of the figure: the parameter that is bad.
    fn label(self, plan: &Plan) -> String {
        if self.n != plan.n {
            if self.n == u64::MAX {
                "n=u64::MAX".into()
            } else {
                format!("n={}", self.n)
            }
        } else {
            format!("p={}", Compact(self.p))
        }
    }
}

/// The cases for `plan`, the unbounded ones only when `isolated`.
fn cases(plan: &Plan, isolated: bool) -> Vec<Case> {
    let (n, p) = (plan.n, plan.p);
    let mut v = vec![Case { n: 0, p }];
    v.extend(
        [0.0, -0.01, 1.0, 1.5, f64::NAN, f64::INFINITY]
            .into_iter()
            .map(|p| Case { n, p }),
    );
    if isolated {
        v.push(Case { n: u64::MAX, p });
        v.push(Case { n, p: 1e-300 });
    }
    v
}

/// What a case came to.
#[derive(Debug, Clone, PartialEq)]
enum Behaviour {
    /// An error naming the problem: the right answer.
    Refused(String),
    /// A Rust panic, in process or reported by an adapter.
    Panicked(String),
    /// The adapter process died or broke the protocol.
    Crashed(String),
    /// No answer within the time limit, in the phase named.
    Hung(String),
    /// Built: members found of [`MEMBERS`] (first missing index) and non-members answered present.
    Accepted {
        found: u64,
        first_missed: Option<u64>,
        positive: u64,
    },
    /// The watchdog could not run the case (no thread): nothing measured.
    NotRun(String),
}

impl Behaviour {
    fn from_error(e: CandidateError, phase: &str) -> Self {
        match e {
            CandidateError::Refused { message, .. } => Behaviour::Refused(message),
            CandidateError::Unsupported { .. } => Behaviour::Refused(e.to_string()),
            CandidateError::Panicked { message, .. } => Behaviour::Panicked(message),
            CandidateError::Timeout { .. } => Behaviour::Hung(format!("{phase}: {e}")),
            CandidateError::Exited { .. }
            | CandidateError::Protocol { .. }
            | CandidateError::Io { .. } => Behaviour::Crashed(format!("{phase}: {e}")),
            CandidateError::DeadlinePassed { .. } => Behaviour::NotRun(format!("{phase}: {e}")),
        }
    }

    /// Whether it breaks the clause for `case`.
    fn breaks(&self, case: Case) -> bool {
        match self {
            Behaviour::Refused(_) | Behaviour::NotRun(_) => false,
            Behaviour::Panicked(_) | Behaviour::Crashed(_) | Behaviour::Hung(_) => true,
            Behaviour::Accepted {
                first_missed,
                positive,
                ..
            } => {
                first_missed.is_some()
                    || not_a_probability(case.p)
                    || (case.p == 0.0 && *positive > 0)
            }
        }
    }

    /// The figure's word for it.
    fn word(&self, case: Case) -> &'static str {
        match self {
            Behaviour::Refused(_) => "refused",
            Behaviour::Panicked(_) => "panics",
            Behaviour::Crashed(_) => "crashes",
            Behaviour::Hung(_) => "hangs",
            Behaviour::NotRun(_) => "not run",
            Behaviour::Accepted {
                first_missed: Some(_),
                ..
            } => "silently wrong",
            Behaviour::Accepted { .. } if self.breaks(case) => "accepted silently",
            Behaviour::Accepted { .. } => "accepted",
        }
    }

    /// The evidence line's detail.
    fn detail(&self, case: Case) -> String {
        match self {
            Behaviour::Refused(m) => format!("refused: {m}"),
            Behaviour::Panicked(m) => format!("panicked: {m}"),
            Behaviour::Crashed(m) => format!("crashed: {m}"),
            Behaviour::Hung(m) => format!("hung: {m}"),
            Behaviour::NotRun(m) => format!("not run: {m}"),
            Behaviour::Accepted {
                found,
                first_missed,
                positive,
            } => {
                let mut s = format!(
                    "accepted; {found} of {MEMBERS} members found; {positive} of {NON_MEMBERS} \
                     non-members positive ({:.1}%)",
                    100.0 * *positive as f64 / NON_MEMBERS as f64
                );
                if let Some(i) = first_missed {
                    s += &format!(
                        "; SILENTLY WRONG: member {i} ({} key index) answered absent",
                        Family::RandomU64.as_str()
                    );
                } else if not_a_probability(case.p) {
                    s += &format!(
                        "; p = {} is not a probability: accepted without an error",
                        Compact(case.p)
                    );
                } else if case.p == 0.0 && *positive > 0 {
                    s += "; p = 0 promises no false positive: accepted without an error, \
                          then non-members answered present";
                } else if case.p == 0.0 {
                    s += "; as p = 0 asks, no non-member answered present";
                }
                s
            }
        }
    }
}

/// Whether `p` is no probability at all (below 0, or NaN): accepting it is broken whatever the
/// filter then answers.
fn not_a_probability(p: f64) -> bool {
    p.is_nan() || p < 0.0
}

/// A message from the watchdog thread.
enum Message {
    /// The build returned an instance; the checks run next.
    Built,
    /// The case's outcome.
    Done(Behaviour),
}

/// Runs the bad-input clause on `candidate` (the isolated one, when the caller has it).
pub(crate) fn check(candidate: &Arc<dyn Candidate>, plan: &Plan) -> (Verdict, Vec<RatePoint>) {
    let cases = cases(plan, candidate.isolated());
    let seed = derive_seed(plan.seed, "bad-input");
    let results: Vec<(Case, Behaviour)> = cases
        .into_iter()
        .map(|case| (case, run_case(candidate, case, seed, plan.build_timeout)))
        .collect();
    let broken = results.iter().any(|(c, b)| b.breaks(*c));
    let not_run = results
        .iter()
        .any(|(_, b)| matches!(b, Behaviour::NotRun(_)));
    let outcome = if broken {
        Outcome::Broken
    } else if not_run {
        Outcome::Undecided
    } else {
        Outcome::Holds
    };
    let figure = results
        .iter()
        .map(|(c, b)| format!("{} {}", c.label(plan), b.word(*c)))
        .collect::<Vec<_>>()
        .join("; ");
    let evidence = results
        .iter()
        .map(|(c, b)| format!("n = {}, p = {}: {}", c.n, Compact(c.p), b.detail(*c)))
        .collect();
    let verdict = super::verdict(plan, Clause::BadInput, outcome, figure, evidence);
    (verdict, Vec::new())
}

/// Runs one case on a watchdog thread, waiting `timeout` for the build and again for the checks.
fn run_case(candidate: &Arc<dyn Candidate>, case: Case, seed: u64, timeout: Duration) -> Behaviour {
    let (tx, rx) = mpsc::channel();
    let c = Arc::clone(candidate);
    let spawned = std::thread::Builder::new()
        .name(format!("bad-input n={} p={}", case.n, Compact(case.p)))
        .spawn(move || {
            let built = catch_unwind(AssertUnwindSafe(|| c.build(case.n, case.p)));
            let mut instance = match built {
                Ok(Ok(i)) => i,
                Ok(Err(e)) => {
                    let _ = tx.send(Message::Done(Behaviour::from_error(e, "build")));
                    return;
                }
                Err(panic) => {
                    let _ = tx.send(Message::Done(Behaviour::Panicked(panic_message(&*panic))));
                    return;
                }
            };
            let _ = tx.send(Message::Built);
            let checked = catch_unwind(AssertUnwindSafe(|| probe(&mut *instance, seed)));
            let behaviour = match checked {
                Ok(b) => b,
                Err(panic) => Behaviour::Panicked(format!(
                    "after the build was accepted: {}",
                    panic_message(&*panic)
                )),
            };
            let _ = tx.send(Message::Done(behaviour));
            // The instance drops here (a process candidate closes its child) after the answer
            // is sent, so a slow close cannot turn into a reported hang.
        });
    if let Err(e) = spawned {
        return Behaviour::NotRun(format!("could not start a watchdog thread: {e}"));
    }
    let secs = timeout.as_secs_f64();
    match rx.recv_timeout(timeout) {
        Ok(Message::Done(b)) => b,
        Ok(Message::Built) => match rx.recv_timeout(timeout) {
            Ok(Message::Done(b)) => b,
            Ok(Message::Built) => unreachable!("the watchdog thread sends Built once"),
            Err(RecvTimeoutError::Timeout) => Behaviour::Hung(format!(
                "built, but {MEMBERS} inserts and {} lookups did not finish within {secs} s \
                 (thread left behind)",
                MEMBERS + NON_MEMBERS
            )),
            Err(RecvTimeoutError::Disconnected) => {
                Behaviour::Panicked("the watchdog thread ended without an answer".into())
            }
        },
        Err(RecvTimeoutError::Timeout) => Behaviour::Hung(format!(
            "build did not return within {secs} s (thread left behind)"
        )),
        Err(RecvTimeoutError::Disconnected) => {
            Behaviour::Panicked("the watchdog thread ended without an answer".into())
        }
    }
}

/// Inserts [`MEMBERS`] random keys, queries them back and [`NON_MEMBERS`] others.
fn probe(instance: &mut dyn Instance, seed: u64) -> Behaviour {
    let family = Family::RandomU64;
    let mut buf = Buffers::default();
    let batch = NON_MEMBERS as usize;
    if let Err(e) = measure::insert(instance, family, seed, 0..MEMBERS, batch, &mut buf) {
        return Behaviour::from_error(e, "insert");
    }
    let (found, first_missed) =
        match measure::count_positive(instance, family, seed, 0..MEMBERS, batch, &mut buf) {
            Ok(r) => r,
            Err(e) => return Behaviour::from_error(e, "query"),
        };
    let range = MEMBERS..MEMBERS + NON_MEMBERS;
    match measure::count_positive(instance, family, seed, range, batch, &mut buf) {
        Ok((positive, _)) => Behaviour::Accepted {
            found,
            first_missed,
            positive,
        },
        Err(e) => Behaviour::from_error(e, "query"),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::candidate::{About, PerKey};
    use crate::subjects::own::Own;

    fn plan() -> Plan {
        Plan {
            build_timeout: Duration::from_secs(2),
            ..Plan::quick()
        }
    }

    /// An exact set that does whatever `misbehave` says for a given (n, p) first.
    struct Planted {
        misbehave: fn(u64, f64) -> Option<Result<(), CandidateError>>,
        lossy: bool,
        /// Answers every key present (members found, every non-member a false positive).
        all_present: bool,
    }

    impl Candidate for Planted {
        fn about(&self) -> About {
            About::rust("planted", "0")
        }
        fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
            if let Some(r) = (self.misbehave)(n, p) {
                r?;
            }
            let insert: fn(&mut HashSet<Vec<u8>>, &[u8]) = if self.lossy {
                |s, k| {
                    // Loses every key on a tiny filter: as a filter of 0 bits would.
                    let _ = (s, k);
                }
            } else {
                |s, k| {
                    s.insert(k.to_vec());
                }
            };
            let contains: fn(&HashSet<Vec<u8>>, &[u8]) -> bool = if self.all_present {
                |_, _| true
            } else {
                |s, k| s.contains(k)
            };
            Ok(Box::new(PerKey::new(HashSet::new(), insert, contains)))
        }
    }

    fn verdict(misbehave: fn(u64, f64) -> Option<Result<(), CandidateError>>) -> Verdict {
        let c: Arc<dyn Candidate> = Arc::new(Planted {
            misbehave,
            lossy: false,
            all_present: false,
        });
        check(&c, &plan()).0
    }

    fn refuse_all_bad(n: u64, p: f64) -> Option<Result<(), CandidateError>> {
        (n == 0 || !(p > 0.0 && p < 1.0)).then(|| {
            Err(CandidateError::Refused {
                subject: "planted".into(),
                message: format!("bad n = {n} or p = {p}"),
            })
        })
    }

    #[test]
    fn refusing_every_bad_input_holds_and_each_case_is_listed() {
        let v = verdict(refuse_all_bad);
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert_eq!(
            v.figure,
            "n=0 refused; p=0 refused; p=-0.01 refused; p=1 refused; p=1.5 refused; \
             p=NaN refused; p=inf refused"
        );
        assert_eq!(v.evidence.len(), 7);
        assert!(v.evidence[5].contains("bad n = 10000 or p = NaN"), "{v:#?}");
    }

    /// An exact set keeps p = 0 (no non-member answered present), so accepting it is no fault;
    /// p = -0.01 and NaN are no probability at all, and accepting them is.
    #[test]
    fn an_exact_set_accepting_everything_is_broken_for_negative_and_nan_p_only() {
        let v = verdict(|_, _| None);
        assert_eq!(v.outcome, Outcome::Broken, "{v:#?}");
        assert!(
            v.figure
                .starts_with("n=0 accepted; p=0 accepted; p=-0.01 accepted silently; "),
            "{}",
            v.figure
        );
        assert!(
            v.figure.contains("p=NaN accepted silently; p=inf accepted"),
            "{}",
            v.figure
        );
        assert!(
            v.evidence[0].contains("100 of 100 members found; 0 of 1000 non-members"),
            "{v:#?}"
        );
        assert!(
            v.evidence[1].ends_with(
                "0 of 1000 non-members positive (0.0%); as p = 0 asks, no non-member answered \
                 present"
            ),
            "{v:#?}"
        );
        assert!(
            v.evidence[2].ends_with("; p = -0.01 is not a probability: accepted without an error"),
            "{v:#?}"
        );
        assert!(
            v.evidence[5].ends_with("; p = NaN is not a probability: accepted without an error"),
            "{v:#?}"
        );
    }

    /// Accepting p = 0 and then answering non-members present breaks the promise of no false
    /// positive, and the evidence says so with the count.
    #[test]
    fn accepting_p_zero_and_answering_non_members_present_is_broken() {
        let c: Arc<dyn Candidate> = Arc::new(Planted {
            misbehave: |n, p| if p == 0.0 { None } else { refuse_all_bad(n, p) },
            lossy: false,
            all_present: true,
        });
        let v = check(&c, &plan()).0;
        assert_eq!(v.outcome, Outcome::Broken, "{v:#?}");
        assert!(
            v.figure
                .starts_with("n=0 refused; p=0 accepted silently; p=-0.01 refused"),
            "{}",
            v.figure
        );
        assert!(
            v.evidence[1].ends_with(
                "1000 of 1000 non-members positive (100.0%); p = 0 promises no false positive: \
                 accepted without an error, then non-members answered present"
            ),
            "{v:#?}"
        );
    }

    #[test]
    fn a_panic_is_caught_and_named() {
        let v = verdict(|n, p| {
            if p.is_nan() {
                panic!("p must not be NaN (n = {n})");
            }
            refuse_all_bad(n, p)
        });
        assert_eq!(v.outcome, Outcome::Broken);
        assert!(v.figure.contains("p=NaN panics"), "{}", v.figure);
        assert!(
            v.evidence[5].contains("panicked: p must not be NaN (n = 10000)"),
            "{v:#?}"
        );
    }

    #[test]
    fn a_hang_on_n_zero_is_reported_within_the_build_timeout() {
        let start = std::time::Instant::now();
        let v = verdict(|n, p| {
            if n == 0 {
                loop {
                    // Parked, not spinning: the thread left behind costs no CPU.
                    std::thread::park();
                }
            }
            refuse_all_bad(n, p)
        });
        assert_eq!(v.outcome, Outcome::Broken);
        assert!(
            v.figure.starts_with("n=0 hangs; p=0 refused"),
            "{}",
            v.figure
        );
        assert!(
            v.evidence[0].contains("hung: build did not return within 2 s"),
            "{v:#?}"
        );
        // One 2 s wait, plus the other cases' microseconds.
        assert!(
            start.elapsed() < Duration::from_secs(6),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn losing_members_after_accepting_is_silently_wrong() {
        let c: Arc<dyn Candidate> = Arc::new(Planted {
            misbehave: |n, p| if n == 0 { None } else { refuse_all_bad(n, p) },
            lossy: true,
            all_present: false,
        });
        let v = check(&c, &plan()).0;
        assert_eq!(v.outcome, Outcome::Broken);
        assert!(v.figure.starts_with("n=0 silently wrong;"), "{}", v.figure);
        assert!(
            v.evidence[0].contains("SILENTLY WRONG: member 0 (random-u64 key index)"),
            "{v:#?}"
        );
    }

    #[test]
    fn process_errors_map_to_crashes_and_hangs() {
        let exited = CandidateError::Exited {
            subject: "x".into(),
            operation: "CREATE".into(),
            status: "signal 6".into(),
            stderr: "abort".into(),
        };
        assert!(matches!(
            Behaviour::from_error(exited, "build"),
            Behaviour::Crashed(m) if m.contains("signal 6")
        ));
        let timeout = CandidateError::Timeout {
            subject: "x".into(),
            operation: "CREATE".into(),
            seconds: 2.0,
            stderr: String::new(),
        };
        assert!(matches!(
            Behaviour::from_error(timeout, "build"),
            Behaviour::Hung(_)
        ));
    }

    #[test]
    fn isolated_candidates_also_get_the_unbounded_cases() {
        let p = plan();
        let labels = |iso| {
            cases(&p, iso)
                .into_iter()
                .map(|c| c.label(&p))
                .collect::<Vec<_>>()
        };
        assert_eq!(labels(false).len(), 7);
        assert_eq!(labels(true)[7..], ["n=u64::MAX", "p=1e-300"]);
    }

    #[test]
    fn bloomlabs_own_flagship_refuses_every_bad_input() {
        let c: Arc<dyn Candidate> = Arc::new(Own::new("classic/xxh3/km/flat").unwrap());
        let v = check(&c, &plan()).0;
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(v.evidence[5].contains("p = NaN is invalid"), "{v:#?}");
    }
}
