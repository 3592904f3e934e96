//! The corpus through the process protocol: a Python filter (`scripts/conform/corpus/toy_bloom.py`)
//! that refuses n < 8, and one whose serialization drops the last `m % 8` bits, each caught by the
//! quick plan's hunt on the right clause with a minimized (n, p), while the same filter without
//! the defect holds. No statistics decide these (a refusal, a missed member): no false alarm.
//!
//! Without `python3` the tests print `skipped: ...` and pass, unless
//! `BLOOMLAB_REQUIRE_SERVICES=1` (CI), where they fail naming it.

use std::path::PathBuf;
use std::sync::Arc;

use bloomlab_conform::process::{Command, ProcessCandidate};
use bloomlab_conform::{Clause, Conformance, Outcome, Plan, run};

fn toy(mode: &str) -> Option<Arc<ProcessCandidate>> {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/conform/corpus/toy_bloom.py");
    // The interpreter itself, not a version manager's shim (pyenv's is a bash script, which
    // would add its own start-up to each of the hunt's few hundred adapter processes).
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let Some(python) = python else {
        let require = std::env::var("BLOOMLAB_REQUIRE_SERVICES").is_ok_and(|v| v == "1");
        assert!(
            !require,
            "python3 is not on PATH (BLOOMLAB_REQUIRE_SERVICES=1)"
        );
        eprintln!("skipped: python3 is not on PATH");
        return None;
    };
    let command = Command::new([python.into(), script.into_os_string(), mode.into()]);
    Some(Arc::new(
        ProcessCandidate::connect(command).expect("the toy adapter starts"),
    ))
}

fn quick_on(mode: &str, clause: Clause) -> Option<Conformance> {
    let c = run(
        toy(mode)?,
        &Plan {
            clauses: vec![clause],
            ..Plan::quick()
        },
    );
    eprintln!("{c}");
    Some(c)
}

#[test]
fn a_python_filter_that_refuses_n_below_8_breaks_accepts_valid_input_at_n_1() {
    let Some(c) = quick_on("throws-below-8", Clause::AcceptsValidInput) else {
        return;
    };
    let v = c.verdict(Clause::AcceptsValidInput).unwrap();
    assert_eq!(v.outcome, Outcome::Broken, "{c}");
    assert!(
        v.figure
            .starts_with("at n = 1, p = 0.01: build failed on a valid request"),
        "{c}"
    );
    assert!(v.figure.contains("RecursionError"), "{c}");
    let Some(twin) = quick_on("ok", Clause::AcceptsValidInput) else {
        return;
    };
    assert_eq!(
        twin.verdict(Clause::AcceptsValidInput).unwrap().outcome,
        Outcome::Holds,
        "{twin}"
    );
}

#[test]
fn a_python_filter_that_drops_its_tail_bits_loses_members_after_a_round_trip() {
    let Some(c) = quick_on("loses-tail-bits", Clause::NoFalseNegatives) else {
        return;
    };
    let v = c.verdict(Clause::NoFalseNegatives).unwrap();
    assert_eq!(v.outcome, Outcome::Broken, "{c}");
    assert!(v.figure.contains("after a serialization round trip"), "{c}");
    let n: u64 = v
        .figure
        .strip_prefix("at n = ")
        .and_then(|r| r.split_once(','))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no minimized n in {:?}", v.figure));
    assert!(n < 1000, "minimized to n = {n}");
    let Some(twin) = quick_on("ok", Clause::NoFalseNegatives) else {
        return;
    };
    assert_eq!(
        twin.verdict(Clause::NoFalseNegatives).unwrap().outcome,
        Outcome::Holds,
        "{twin}"
    );
}
