//! Statistics as documented (issue 63, item 6) and the run's deadline (item 7), end to end through
//! [`run`]: clauses 2 and 4 judge one count, the long-key budget lets a filter at exactly p hold,
//! and a slow candidate under a deadline gets undecided verdicts that name what was measured.
//!
//! Every candidate here is a seeded coin: a member is always present, a non-member present with
//! probability exactly p, decided by SipHash (fixed keys) of the key, so each run is the same.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bloomlab_conform::{
    About, Candidate, CandidateError, Clause, Conformance, Instance, KeyBatch, Outcome, Plan, run,
};

/// An ideal filter at exactly p (see the module docs).
struct Coin {
    /// Sleeps this long per insert or query batch (a slow adapter).
    sleep: Duration,
    /// Each build draws a fresh salt for its coin (as xorf's fuse filters draw their own seeds),
    /// so two builds give two different counts.
    salted: bool,
    builds: AtomicU64,
}

struct CoinInstance {
    members: HashSet<u64>,
    p: f64,
    salt: u64,
    sleep: Duration,
}

fn digest(salt: u64, key: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    salt.hash(&mut h);
    key.hash(&mut h);
    h.finish()
}

impl Instance for CoinInstance {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        std::thread::sleep(self.sleep);
        self.members
            .extend(keys.iter().map(|k| digest(self.salt, k)));
        Ok(())
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        std::thread::sleep(self.sleep);
        out.clear();
        out.extend(keys.iter().map(|k| {
            let d = digest(self.salt, k);
            self.members.contains(&d) || (digest(!self.salt, k) as f64) < self.p * 2f64.powi(64)
        }));
        Ok(())
    }
}

impl Candidate for Coin {
    fn about(&self) -> About {
        About::rust("coin", "test")
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        if n == 0 || !(p > 0.0 && p < 1.0) {
            return Err(CandidateError::Refused {
                subject: "coin".into(),
                message: format!("n = {n}, p = {p}: need n >= 1 and p in (0, 1)"),
            });
        }
        let build = self.builds.fetch_add(1, Ordering::Relaxed);
        Ok(Box::new(CoinInstance {
            members: HashSet::new(),
            p,
            salt: if self.salted { build } else { 0 },
            sleep: self.sleep,
        }))
    }
}

fn coin(sleep: Duration, salted: bool) -> Arc<dyn Candidate> {
    Arc::new(Coin {
        sleep,
        salted,
        builds: AtomicU64::new(0),
    })
}

fn verdict(c: &Conformance, clause: Clause) -> &bloomlab_conform::Verdict {
    c.verdict(clause)
        .unwrap_or_else(|| panic!("{clause} did not run:\n{c}"))
}

#[test]
fn clauses_2_and_4_judge_one_random_key_count_even_when_each_build_differs() {
    // Every build salts its coin anew, so two measurements would differ (400,000 queries at 1%:
    // two independent counts agree with probability ~0.5%, and the test would then pass by
    // chance only if the suite re-measured). One shared measurement gives one count.
    let c = run(
        coin(Duration::ZERO, true),
        &Plan {
            clauses: vec![Clause::PromisedRate, Clause::KeyFamilies],
            ..Plan::quick()
        },
    );
    let promised = verdict(&c, Clause::PromisedRate);
    let families = verdict(&c, Clause::KeyFamilies);
    let count = promised
        .figure
        .split(['(', ')'])
        .nth(1)
        .expect("the figure ends with (x/q)")
        .replace('/', " of ");
    assert!(
        families.evidence[0].starts_with(&format!("random-u64: {count} (")),
        "promised-rate counted {count}; key-families says {}",
        families.evidence[0]
    );
}

#[test]
fn an_ideal_filter_at_exactly_p_holds_on_long_keys_with_the_computed_budget() {
    // p = 5%, margin 5%, alpha 1e-4: the long family gets the fewest queries (~320,000) at which
    // a filter at exactly p holds with probability 0.99; the other families get 1,000,000, where
    // that probability is 1 - 1e-9. So a correct filter at exactly p fails this test (key-families
    // undecided) with probability about 1% over seeds, and is called broken with probability at
    // most alpha = 1e-4; the seed is fixed, so the outcome is the same every run.
    let plan = Plan {
        n: 10_000,
        p: 0.05,
        margin: 0.05,
        queries: 1_000_000,
        clauses: vec![Clause::KeyFamilies],
        deadline: None,
        ..Plan::quick()
    };
    let c = run(coin(Duration::ZERO, false), &plan);
    let v = verdict(&c, Clause::KeyFamilies);
    assert_eq!(v.outcome, Outcome::Holds, "{c}");
    let long = v
        .evidence
        .iter()
        .find(|e| e.starts_with("long: "))
        .expect("a long-key line");
    assert!(
        long.contains("a filter at exactly p holds on it with probability 0.99"),
        "{long}"
    );
    let queries: u64 = long["long: ".len()..]
        .split(" of ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .expect("long: x of q");
    // The normal approximation: ((4.06 + 2.33) sqrt(0.05 x 0.95) / 0.0025)^2 = 3.1e5; the exact
    // bound needs a little more.
    assert!((310_000..345_000).contains(&queries), "{queries}: {long}");
}

#[test]
fn a_slow_candidate_under_a_deadline_gets_undecided_verdicts_naming_the_counts() {
    // 40 ms per batch of 4,096: the 400,000 queries of the shared random-key measurement alone
    // take ~98 batches (~4 s), so a 1.5 s deadline stops them part way (after the 3 insert
    // batches), and the clauses after them cannot start.
    let plan = Plan {
        clauses: vec![
            Clause::PromisedRate,
            Clause::Theory,
            Clause::KeyFamilies,
            Clause::OverFill,
            Clause::Speed,
        ],
        deadline: Some(Duration::from_millis(1500)),
        ..Plan::quick()
    };
    let c = run(coin(Duration::from_millis(40), false), &plan);
    assert!(c.broken().is_empty(), "the deadline broke a clause:\n{c}");
    let promised = verdict(&c, Clause::PromisedRate);
    assert_eq!(promised.outcome, Outcome::Undecided, "{c}");
    assert!(
        promised.figure.starts_with("deadline passed after ")
            && promised.figure.contains(" of 400000 queries (")
            && promised.figure.contains("would decide"),
        "{}",
        promised.figure
    );
    assert!(
        promised
            .evidence
            .iter()
            .any(|e| e.contains("positive so far")),
        "{c}"
    );
    // No layout declared: theory has nothing to hold the rate to, deadline or not.
    assert_eq!(verdict(&c, Clause::Theory).outcome, Outcome::NotApplicable);
    let families = verdict(&c, Clause::KeyFamilies);
    assert_eq!(families.outcome, Outcome::Undecided, "{c}");
    assert!(
        families.figure.starts_with("deadline passed after "),
        "{}",
        families.figure
    );
    for clause in [Clause::OverFill, Clause::Speed] {
        let v = verdict(&c, clause);
        assert_eq!(v.outcome, Outcome::Undecided, "{c}");
        assert_eq!(v.figure, "deadline passed before this clause started");
    }
    // Display carries the same: every undecided verdict with its evidence.
    let shown = c.to_string();
    assert!(shown.contains("positive so far"), "{shown}");
}

#[test]
fn a_deadline_during_the_member_check_leaves_clause_1_undecided_not_holding() {
    // Five key families, each 3 insert and 3 query batches of 40 ms: ~1.2 s, cut at 0.5 s.
    let plan = Plan {
        clauses: vec![Clause::NoFalseNegatives, Clause::PromisedRate],
        deadline: Some(Duration::from_millis(500)),
        ..Plan::quick()
    };
    let c = run(coin(Duration::from_millis(40), false), &plan);
    let v = verdict(&c, Clause::NoFalseNegatives);
    assert_eq!(v.outcome, Outcome::Undecided, "{c}");
    assert!(
        v.figure.starts_with("deadline passed: ")
            && v.figure.contains("remaining checks would decide"),
        "{}",
        v.figure
    );
    assert!(
        v.evidence
            .iter()
            .any(|e| e.contains("the run's deadline passed")),
        "{c}"
    );
    assert_eq!(
        verdict(&c, Clause::PromisedRate).figure,
        "deadline passed before this clause started"
    );
}

#[test]
fn a_plan_with_a_zero_or_too_long_deadline_is_invalid_and_says_the_range() {
    for d in [Duration::ZERO, Duration::from_secs(86_401)] {
        let plan = Plan {
            deadline: Some(d),
            ..Plan::quick()
        };
        let e = plan.validate().unwrap_err();
        assert!(
            e.starts_with("plan deadline = ") && e.contains("at most 86400 s"),
            "{e}"
        );
    }
    assert_eq!(Plan::full().deadline, None);
    assert!(Plan::quick().deadline.is_some());
}

#[test]
fn an_undecided_key_family_verdict_names_the_undecided_family_and_what_would_decide() {
    // 2,000 queries at 1%: ~20 false positives per family, whose one-sided upper bound at
    // alpha / 4 (~2.4%) is far above 1.15% and far from significance against random keys:
    // every family is undecided whatever the seed (a family would need under ~4 false
    // positives to hold here: probability ~1e-5 at 20 expected).
    let c = run(
        coin(Duration::ZERO, false),
        &Plan {
            queries: 2_000,
            clauses: vec![Clause::KeyFamilies],
            ..Plan::quick()
        },
    );
    let v = verdict(&c, Clause::KeyFamilies);
    assert_eq!(v.outcome, Outcome::Undecided, "{c}");
    assert!(
        v.figure.starts_with("sequential-u64 ")
            && v.figure
                .contains("more sequential-u64 queries would decide at the observed rate")
            && v.figure
                .ends_with("(also undecided: url, shared-prefix, long)"),
        "{}",
        v.figure
    );
    assert!(c.to_string().contains(&v.figure), "{c}");
}
