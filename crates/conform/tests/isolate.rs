//! Crash isolation of `run()` in a `#[test]`: a candidate that aborts (`std::process::abort`, a
//! huge allocation), overflows its stack or hangs breaks the clause it does it in, naming the
//! signal and the call, and the later clauses still get verdicts; the test binary survives. A
//! correct candidate's verdicts are the same isolated and in process. And what a library author's
//! `#[test]` looks like with nothing but `bloomlab-conform` and std: it passes for a correct filter
//! and fails readably (a normal test failure, exit 101, not a dead binary's 134) for an aborting one.
//!
//! The statistical verdicts compared come from fixed seeds (the plans' own), so a run is
//! reproducible; the only assertions on them are equality between the two ways of running, and
//! that the correct filter's quick plan breaks no clause (each rate decision's false-alarm rate is
//! the plan's alpha = 1e-4).

use std::hint::black_box;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use bloomlab_conform::suite::run_with;
use bloomlab_conform::{
    About, Candidate, CandidateError, Clause, Conformance, Instance, KeyBatch, Outcome, Plan, run,
};

/// A textbook Bloom filter in std alone (what an author's own filter stands for here): m bits for
/// n keys at rate p (`m = n ln(1/p) / ln(2)^2`), `k = round(ln 2 m / n)` probes by double hashing
/// of a 64-bit FNV-1a digest through two splitmix64 finalizers.
struct Bloom {
    bits: Vec<u64>,
    m: u64,
    k: u64,
    /// Keys inserted, for the defective twins' triggers.
    inserted: u64,
    n: u64,
    defect: Defect,
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Bloom {
    fn new(n: u64, p: f64, defect: Defect) -> Result<Bloom, CandidateError> {
        if !(p > 0.0 && p < 1.0) {
            return Err(CandidateError::Refused {
                subject: defect.name().into(),
                message: format!("p = {p} is outside (0, 1)"),
            });
        }
        let ln2 = std::f64::consts::LN_2;
        let m = ((n.max(1) as f64) * (1.0 / p).ln() / (ln2 * ln2))
            .ceil()
            .max(64.0);
        if m > (1u64 << 36) as f64 {
            return Err(CandidateError::Refused {
                subject: defect.name().into(),
                message: format!("n = {n} at p = {p} needs {m} bits, over 2^36"),
            });
        }
        let m = m as u64;
        let k = ((m as f64 / n.max(1) as f64) * ln2)
            .round()
            .clamp(1.0, 32.0) as u64;
        Ok(Bloom {
            bits: vec![0; m.div_ceil(64) as usize],
            m,
            k,
            inserted: 0,
            n,
            defect,
        })
    }

    fn probes(&self, key: &[u8]) -> impl Iterator<Item = u64> + use<> {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for &b in key {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        let (h1, h2) = (mix(h), mix(h ^ 0x9e37_79b9_7f4a_7c15) | 1);
        let (m, k) = (self.m, self.k);
        (0..k).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % m)
    }
}

impl Instance for Bloom {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        for key in keys.iter() {
            self.inserted += 1;
            // n = 0 (bad input) aside: the defect is in growing past a real promise.
            if self.n > 0 && self.inserted > 2 * self.n {
                match self.defect {
                    // What a filter that grows its table by a wrapped size computation does.
                    Defect::HugeAllocPast2n => {
                        black_box(vec![0u8; 1 << 61]);
                    }
                    Defect::HangPast2n => loop {
                        std::thread::sleep(Duration::from_secs(1));
                    },
                    _ => {}
                }
            }
            if key.is_empty() && self.defect == Defect::OverflowOnEmptyKey {
                black_box(recurse(black_box(1)));
            }
            for i in self.probes(key) {
                self.bits[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
        Ok(())
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        out.clear();
        out.extend(keys.iter().map(|key| {
            self.probes(key)
                .all(|i| self.bits[(i / 64) as usize] & (1 << (i % 64)) != 0)
        }));
        Ok(())
    }
}

/// Unbounded recursion with a frame the optimizer cannot drop: a stack overflow (on purpose).
#[allow(unconditional_recursion)]
fn recurse(depth: u64) -> u64 {
    let frame = black_box([depth; 64]);
    recurse(depth + 1).wrapping_add(frame[(depth % 64) as usize])
}

/// What a defective twin does wrong (`None`: the correct filter).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Defect {
    None,
    AbortOnBuildOfZero,
    HugeAllocPast2n,
    OverflowOnEmptyKey,
    HangPast2n,
}

impl Defect {
    fn name(self) -> &'static str {
        match self {
            Defect::None => "test/std-bloom",
            Defect::AbortOnBuildOfZero => "test/aborts-on-n-0",
            Defect::HugeAllocPast2n => "test/huge-alloc-past-2n",
            Defect::OverflowOnEmptyKey => "test/stack-overflow-on-empty-key",
            Defect::HangPast2n => "test/hangs-past-2n",
        }
    }
}

impl Candidate for Defect {
    fn about(&self) -> About {
        About::rust(self.name(), "0")
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        if n == 0 && *self == Defect::AbortOnBuildOfZero {
            std::process::abort();
        }
        Ok(Box::new(Bloom::new(n, p, *self)?))
    }
}

/// The quick plan with fewer queries (the rate verdicts are not what these tests are about) and,
/// for the hang, a 1 s build timeout: a child silent for 6 s is hung.
fn plan() -> Plan {
    Plan {
        queries: 100_000,
        build_timeout: Duration::from_secs(1),
        ..Plan::quick()
    }
}

fn verdict(c: &Conformance, clause: Clause) -> &bloomlab_conform::Verdict {
    c.verdict(clause)
        .unwrap_or_else(|| panic!("{clause} has no verdict:\n{c}"))
}

/// `crashed` broke with a figure starting `figure`; every clause of the plan has a verdict, in
/// order, and none but `crashed` is broken (the twin is correct elsewhere).
fn assert_broken_alone(c: &Conformance, plan: &Plan, crashed: Clause, figure: &str) {
    let clauses: Vec<_> = c.verdicts.iter().map(|v| v.clause).collect();
    assert_eq!(clauses, plan.clauses, "{c}");
    assert_eq!(c.broken(), vec![crashed], "{c}");
    let v = verdict(c, crashed);
    assert!(
        v.figure.starts_with(figure),
        "{crashed}: {:?}, wanted {figure:?}\n{c}",
        v.figure
    );
    assert!(
        v.evidence.iter().any(|e| e.contains("child process")),
        "{v:?}"
    );
    for v in &c.verdicts {
        assert!(
            !v.evidence.iter().any(|e| e.contains("not isolated")),
            "{v:?}"
        );
    }
}

#[test]
fn an_abort_on_build_breaks_that_clause_and_the_later_ones_still_run() {
    let plan = plan();
    let c = run(Arc::new(Defect::AbortOnBuildOfZero), &plan);
    eprintln!("{c}");
    assert_broken_alone(
        &c,
        &plan,
        Clause::BadInput,
        "killed by SIGABRT during build(n = 0, p = 0.01)",
    );
    assert!(c.speed.is_some(), "the speed clause after it ran:\n{c}");
}

#[test]
fn a_failed_huge_allocation_breaks_over_fill_with_the_allocators_message() {
    let plan = plan();
    let c = run(Arc::new(Defect::HugeAllocPast2n), &plan);
    eprintln!("{c}");
    assert_broken_alone(
        &c,
        &plan,
        Clause::OverFill,
        "killed by SIGABRT during insert(",
    );
    let v = verdict(&c, Clause::OverFill);
    assert!(
        v.evidence
            .iter()
            .any(|e| e.contains("memory allocation of 2305843009213693952 bytes failed")),
        "{v:?}"
    );
    assert_ne!(verdict(&c, Clause::BadInput).outcome, Outcome::Broken);
    assert!(c.speed.is_some(), "{c}");
}

#[test]
fn a_stack_overflow_breaks_no_false_negatives_and_every_later_clause_runs() {
    let plan = plan();
    let c = run(Arc::new(Defect::OverflowOnEmptyKey), &plan);
    eprintln!("{c}");
    assert_broken_alone(
        &c,
        &plan,
        Clause::NoFalseNegatives,
        "killed by SIGABRT during insert(1 keys)",
    );
    let v = verdict(&c, Clause::NoFalseNegatives);
    assert!(
        v.evidence
            .iter()
            .any(|e| e.contains("overflowed its stack")),
        "{v:?}"
    );
    assert_eq!(verdict(&c, Clause::OverFill).outcome, Outcome::Holds, "{c}");
}

#[test]
fn a_hang_in_insert_is_killed_after_six_build_timeouts_and_over_fill_breaks() {
    let plan = plan();
    let c = run(Arc::new(Defect::HangPast2n), &plan);
    eprintln!("{c}");
    assert_broken_alone(&c, &plan, Clause::OverFill, "hung during insert(");
    let v = verdict(&c, Clause::OverFill);
    assert!(v.figure.contains("silent for 6 s, killed"), "{v:?}");
    assert!(c.speed.is_some(), "{c}");
}

/// Isolated (`run` in a test) and in process (`run_with`) with the same seed: the same verdicts
/// and points, but for the speed clause's timings.
#[test]
fn a_correct_filters_verdicts_are_the_same_isolated_and_in_process() {
    let plan = plan();
    let isolated = run(Arc::new(Defect::None), &plan);
    let in_process = run_with(Arc::new(Defect::None), &plan, None);
    let no_speed = |c: &Conformance| -> Vec<_> {
        c.verdicts
            .iter()
            .filter(|v| v.clause != Clause::Speed)
            .cloned()
            .collect()
    };
    assert_eq!(no_speed(&isolated), no_speed(&in_process));
    assert_eq!(isolated.points, in_process.points);
    assert!(isolated.speed.is_some() && in_process.speed.is_some());
    assert!(isolated.broken().is_empty(), "{isolated}");
}

/// Off a test's thread (here a thread of the test's own) there is no test to re-run: the run is in
/// process and every verdict says so.
#[test]
fn a_run_off_the_test_thread_is_in_process_and_says_so() {
    let plan = Plan {
        clauses: vec![Clause::NoFalseNegatives],
        ..plan()
    };
    let c = std::thread::spawn(move || run(Arc::new(Defect::None), &plan))
        .join()
        .unwrap();
    let v = verdict(&c, Clause::NoFalseNegatives);
    assert_eq!(v.outcome, Outcome::Holds, "{c}");
    assert!(
        v.evidence.iter().any(|e| e.starts_with(
            "not isolated: run() was called on thread None, not on a libtest test's thread"
        )),
        "{v:?}"
    );
}

/// A test that calls `run()` twice: the child re-running it for the second call gets the first
/// call's result replayed (not measured again), and the second's crash is isolated as usual.
#[test]
fn a_later_call_in_the_same_test_is_isolated_after_the_earlier_ones() {
    let plan = Plan {
        clauses: vec![Clause::NoFalseNegatives, Clause::BadInput],
        ..plan()
    };
    let first = run(Arc::new(Defect::None), &plan);
    assert!(first.broken().is_empty(), "{first}");
    let second = run(Arc::new(Defect::AbortOnBuildOfZero), &plan);
    assert_broken_alone(
        &second,
        &plan,
        Clause::BadInput,
        "killed by SIGABRT during build(n = 0, p = 0.01)",
    );
}

/// A plan that differs between the test and its re-run (here by the process id) cannot be
/// re-run: the child says so, and the run is in process with that reason in every verdict.
#[test]
fn a_call_the_re_run_test_does_not_repeat_is_run_in_process_and_says_why() {
    let plan = Plan {
        clauses: vec![Clause::NoFalseNegatives],
        seed: u64::from(std::process::id()),
        ..plan()
    };
    let c = run(Arc::new(Defect::None), &plan);
    let v = verdict(&c, Clause::NoFalseNegatives);
    assert_eq!(v.outcome, Outcome::Holds, "{c}");
    assert!(
        v.evidence.iter().any(|e| e.starts_with(
            "not isolated: the re-run test's run() call 1 has subject \"test/std-bloom\" and plan"
        )),
        "{v:?}"
    );
}

// What an author writes in their crate's tests, with `bloomlab-conform` as the only
// dev-dependency. The second fails on purpose (the filter aborts when over-filled): both are
// ignored and run by the test below it, which checks how they end.

#[test]
#[ignore = "an author's test, run by authors_tests_pass_or_fail_readably_without_the_binary_dying"]
fn authors_test_of_a_correct_filter() {
    run(Arc::new(Defect::None), &Plan::quick()).assert_conforms();
}

#[test]
#[ignore = "fails on purpose: run by authors_tests_pass_or_fail_readably_without_the_binary_dying"]
fn authors_test_of_an_aborting_filter() {
    run(Arc::new(Defect::HugeAllocPast2n), &Plan::quick()).assert_conforms();
}

/// Runs one ignored test of this binary as `cargo test` would; its exit code and output.
fn run_test(name: &str) -> (Option<i32>, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--include-ignored", "--test-threads=1"])
        .env_remove("BLOOMLAB_CONFORM_CHILD")
        .env_remove("BLOOMLAB_CONFORM_ISOLATE")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

#[test]
fn authors_tests_pass_or_fail_readably_without_the_binary_dying() {
    let (code, text) = run_test("authors_test_of_a_correct_filter");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("test result: ok. 1 passed"), "{text}");

    // 101: libtest's "a test failed", not 134 (SIGABRT ended the binary) or a signal.
    let (code, text) = run_test("authors_test_of_an_aborting_filter");
    assert_eq!(code, Some(101), "{text}");
    for want in [
        "conformance of test/huge-alloc-past-2n",
        "BROKEN: over-fill",
        "killed by SIGABRT during insert(",
        "memory allocation of 2305843009213693952 bytes failed",
        "test result: FAILED. 0 passed; 1 failed",
    ] {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
}
