//! Issue 26's test of the catalogue: a new kind of subject is added in one place (one `impl
//! Adapter` and one `register` call, below) and then runs through the sweep, the gate and the
//! report like any registered variant, by name.
//!
//! The subject is an exact set used as a "filter": it never answers yes for a key it does not
//! hold, so its theory, observed rate and every interval's lower end are exactly 0.

use std::collections::HashSet;
use std::sync::Arc;

use bloomlab_filters::Layout;
use bloomlab_harness::bloom::gate::{self, BaselinePoint, GatePolicy};
use bloomlab_harness::subject::{self, Adapter, MeasuredFilter, Shape};
use bloomlab_harness::{
    Grid, HarnessError, KeySetKind, Selection, Subject, SweepConfig, bloom::sweep,
};

/// The one place the new subject is defined.
struct ExactSetAdapter;

impl Adapter for ExactSetAdapter {
    fn name(&self) -> &str {
        "ext/exact-set"
    }
    fn theory(&self) -> String {
        "0: an exact set holds every key it answers yes for".into()
    }
    fn sized_bytes(&self, n: u64, _: f64) -> Result<u64, HarnessError> {
        Ok(n.saturating_mul(16))
    }
    fn build(&self, n: u64, _: f64) -> Result<Box<dyn MeasuredFilter>, HarnessError> {
        Ok(Box::new(ExactSet(HashSet::with_capacity(n as usize))))
    }
}

struct ExactSet(HashSet<Vec<u8>>);

impl MeasuredFilter for ExactSet {
    fn insert(&mut self, b: &[u8]) {
        self.0.insert(b.to_vec());
    }
    fn contains(&self, b: &[u8]) -> bool {
        self.0.contains(b)
    }
    fn shape(&self, _members: u64) -> Shape {
        Shape {
            layout: Layout::External,
            bits: 0,
            hashes: 0,
            memory_bytes: self.0.iter().map(|k| k.len() as u64).sum(),
            fill_ratio: f64::NAN,
            estimated_count: self.0.len() as f64,
            fpr_theory: 0.0,
            fpr_textbook: 0.0,
            fpr_given_bits: f64::NAN,
            counter_overflow_p: None,
        }
    }
}

#[test]
fn an_exact_set_added_in_one_place_runs_through_sweep_gate_and_report() {
    let exact = subject::register(Arc::new(ExactSetAdapter)).unwrap();
    assert_eq!(exact.layout(), Layout::External);

    // The sweep: named as a user would (`--filters ext/exact-set,sbbf/xxh3`), timed like any row.
    let filters = Selection::parse_list("ext/exact-set,sbbf/xxh3").unwrap();
    let mut config = SweepConfig::with_grids(vec![Grid {
        filters,
        key_sets: vec![KeySetKind::RandomU64, KeySetKind::Article],
        n: vec![2_000],
        p: vec![0.01],
        overfill: vec![1.0],
    }]);
    config.timing_passes = 1;
    config.sampling.max_queries = 200_000;
    let plan = config.plan().unwrap();
    let rows = sweep::run(&config, &plan, &|_| {}).unwrap();
    assert_eq!(rows.len(), 4);
    let mine: Vec<_> = rows.iter().filter(|r| r.filter == exact).collect();
    assert_eq!(mine.len(), 2);
    for r in &mine {
        // Every member found (a miss would have been an error), no false positive in all the
        // queries the cap allows (precision is never met at 0 false positives).
        assert_eq!(r.n_inserted, 2_000);
        assert_eq!(r.queries, 200_000, "{r:?}");
        assert_eq!(r.false_positives, 0, "{r:?}");
        assert_eq!((r.fpr, r.fpr_theory, r.ci_low), (0.0, 0.0, 0.0));
        assert!(r.theory_in_interval && r.capped, "{r:?}");
        assert_eq!(r.layout, Layout::External);
        assert!(r.lookup_absent_ns > 0.0, "timed like any row: {r:?}");
    }
    let sbbf: Subject = "sbbf/xxh3".parse().unwrap();
    assert!(
        rows.iter()
            .any(|r| r.filter == sbbf && r.false_positives > 0)
    );

    // The gate: a baseline point for it, re-run and judged.
    let point = BaselinePoint {
        queries: 50_000,
        ..BaselinePoint::new(exact, "random-u64", 2_000, 0.01, 9)
    };
    let outcome = gate::check_registered(&point, 1e-6, &GatePolicy::default());
    assert!(outcome.passed(), "{:?}", outcome.checks);
    assert_eq!(outcome.row.as_ref().unwrap().false_positives, 0);
    // A baseline that claims false positives the subject cannot make is drift, and fails.
    let drifted = BaselinePoint {
        false_positives: 500,
        ..point
    };
    let outcome = gate::check_registered(&drifted, 1e-6, &GatePolicy::default());
    assert!(!outcome.passed(), "{:?}", outcome.checks);

    // The report: the CSV names it, reads back as the same subject, and the summary lists it.
    let dir = tempfile::tempdir().unwrap();
    bloomlab_report::write_reports(&rows, dir.path()).unwrap();
    let back = bloomlab_report::read_csv(&dir.path().join(bloomlab_report::CSV_NAME)).unwrap();
    assert_eq!(back.iter().filter(|r| r.filter == exact).count(), 2);
    let csv = std::fs::read_to_string(dir.path().join(bloomlab_report::CSV_NAME)).unwrap();
    assert!(csv.contains("\next/exact-set,external,"), "{csv}");
    let summary = std::fs::read_to_string(dir.path().join(bloomlab_report::SUMMARY_NAME)).unwrap();
    assert!(summary.contains("ext/exact-set"), "{summary}");
}
