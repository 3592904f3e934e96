//! The churn and grow workloads: correct designs keep their promises, the textbook ports break
//! them where the issue says, the gate catches them, and bad settings are clear errors.
//!
//! Every run is seeded. Statistical assertions are exact binomial tests at a stated false-alarm
//! rate of 1e-6 each (for a correct filter and a correct theory, each assertion fails by chance
//! with probability at most 1e-6).

use bloomlab_harness::bloom::gate::{self, BaselinePoint, GatePolicy};
use bloomlab_harness::bloom::sweep::WorkloadSettings;
use bloomlab_harness::bloom::workload::{self, Churn, Grow, HOSTILE_BASE};
use bloomlab_harness::stats::hypothesis::{binomial_sf_inclusive, binomial_test};
use bloomlab_harness::subject::Selection;
use bloomlab_harness::{
    Grid, HarnessError, KeySet, KeySetKind, Sampling, SweepConfig, SweepRow, TrialSpec, Workload,
};

/// False-alarm rate of each statistical assertion.
const ALPHA: f64 = 1e-6;

fn sampling(seed: u64, queries: u64) -> Sampling {
    Sampling {
        // Precision 0 is never met: every round makes exactly `queries` queries.
        precision: 0.0,
        max_queries: queries,
        seed,
        ..Sampling::default()
    }
}

/// `workload::run_named` without timing, for the statistics tests.
fn run_named(
    filter: &str,
    n: u64,
    p: f64,
    overfill: f64,
    keys: &KeySet,
    sampling: &Sampling,
    settings: &WorkloadSettings,
) -> Result<Vec<SweepRow>, HarnessError> {
    let spec = TrialSpec {
        filter: filter.parse().unwrap(),
        n,
        p,
        overfill,
    };
    let run = workload::NamedRun {
        spec: &spec,
        keys,
        sampling,
        timing_passes: 0,
    };
    workload::run_named(&run, settings)
}

fn churn_rows(filter: &str, key_set: KeySetKind, n: u64, p: f64, overfill: f64) -> Vec<SweepRow> {
    churn_rows_at(filter, key_set, n, p, overfill, 0.2)
}

fn churn_rows_at(
    filter: &str,
    key_set: KeySetKind,
    n: u64,
    p: f64,
    overfill: f64,
    fraction: f64,
) -> Vec<SweepRow> {
    let seed = 7;
    let keys = KeySet::new(key_set, seed).unwrap();
    let settings = WorkloadSettings::Churn(Churn {
        rounds: 5,
        fraction,
        hostile: 0.0,
    });
    run_named(
        filter,
        n,
        p,
        overfill,
        &keys,
        &sampling(seed, 100_000),
        &settings,
    )
    .unwrap()
}

fn grow_rows(filter: &str, n0: u64, p: f64, max_growth: u64, queries: u64) -> Vec<SweepRow> {
    let seed = 11;
    let keys = KeySet::new(KeySetKind::RandomU64, seed).unwrap();
    let settings = WorkloadSettings::Grow(Grow { max_growth });
    run_named(
        filter,
        n0,
        p,
        1.0,
        &keys,
        &sampling(seed, queries),
        &settings,
    )
    .unwrap()
}

/// Asserts the row's false-positive count is consistent with its theory (two-sided, ALPHA).
fn assert_matches_theory(r: &SweepRow) {
    let pv = binomial_test(r.false_positives, r.queries, r.fpr_theory);
    assert!(
        pv >= ALPHA,
        "{} {} n={} p={} round {} G {} seed {}: {} of {} = {:.4e} vs theory {:.4e} (p-value {pv:.2e} < {ALPHA})",
        r.filter,
        r.key_set,
        r.n,
        r.p,
        r.round,
        r.growth,
        r.seed,
        r.false_positives,
        r.queries,
        r.fpr,
        r.fpr_theory
    );
}

#[test]
fn counting_filters_keep_every_member_through_churn_at_the_classic_rate() {
    for filter in ["counting4/xxh3/km", "counting8/murmur3/edh"] {
        let rows = churn_rows(filter, KeySetKind::RandomU64, 20_000, 0.01, 1.0);
        assert_eq!(rows.len(), 6, "{filter}: round 0 and 5 rounds");
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(r.workload, Workload::Churn);
            assert_eq!(r.round, i as u64);
            assert_eq!(r.removed, 4_000 * i as u64, "{filter} round {i}");
            assert_eq!(r.members_checked, 20_000);
            assert_eq!(
                (r.false_negatives, r.fn_failure),
                (0, false),
                "{filter} round {i}: a false negative"
            );
            assert!(
                r.fn_ci_high > 0.0 && r.fn_ci_high < 1e-3,
                "{}",
                r.fn_ci_high
            );
            assert_matches_theory(r);
        }
    }
}

#[test]
fn a_churn_run_is_reproducible_from_its_seed() {
    let a = churn_rows("counting4/xxh3/km", KeySetKind::Article, 5_000, 0.01, 1.0);
    let b = churn_rows("counting4/xxh3/km", KeySetKind::Article, 5_000, 0.01, 1.0);
    assert_eq!(a, b);
}

#[test]
fn the_textbook_counting_port_loses_members_where_saturated_counters_stick() {
    // The chapter's overloaded filter: sized for 1000 keys at 10%, holding 12000, half of them
    // replaced per round. Counters reach 15 (expected load k n / m ~ 7.5 per counter, more while
    // the fresh keys are in and the leaving ones not yet out); the correct layouts keep them
    // stuck, the port decrements them and loses members.
    let chapter = |filter| churn_rows_at(filter, KeySetKind::Article, 1_000, 0.1, 12.0, 0.5);
    let textbook = chapter("textbook-counting-fnv1a-i32");
    let lost: u64 = textbook.iter().map(|r| r.false_negatives).sum();
    assert!(lost > 0, "the port lost no member: {textbook:?}");
    assert!(
        textbook.iter().all(|r| !r.fn_failure),
        "the textbook port promises nothing: its false negatives are reported, not failures"
    );
    // No hostile removal took place, so the ledger must put every loss on saturated decrements.
    for r in &textbook {
        assert_eq!(
            (
                r.fn_saturated_decrement,
                r.fn_removed_false_positive,
                r.fn_both_causes,
                r.fn_unexplained
            ),
            (r.false_negatives, 0, 0, 0),
            "round {}: causes of {} false negatives",
            r.round,
            r.false_negatives
        );
    }
    for filter in ["counting4/xxh3/km", "counting4/fnv1a/km"] {
        let rows = chapter(filter);
        assert!(
            rows.iter().any(|r| r.saturated_counters > 0),
            "{filter}: the load must saturate counters for this test to mean anything"
        );
        assert!(
            rows.iter().all(|r| r.false_negatives == 0),
            "{filter} lost members: {:?}",
            rows.iter().map(|r| r.false_negatives).collect::<Vec<_>>()
        );
        let q = rows[0]
            .counter_overflow_p
            .expect("a counting layout has the column");
        assert!(q > 0.5, "{filter}: overflow probability {q} at this load");
    }
}

#[test]
fn hostile_removes_cost_every_design_members_without_failing_the_run() {
    let seed = 3;
    let keys = KeySet::new(KeySetKind::RandomU64, seed).unwrap();
    let settings = WorkloadSettings::Churn(Churn {
        rounds: 3,
        fraction: 0.1,
        hostile: 0.5,
    });
    let rows = run_named(
        "counting4/xxh3/km",
        10_000,
        0.05,
        1.0,
        &keys,
        &sampling(seed, 50_000),
        &settings,
    )
    .unwrap();
    let last = rows.last().unwrap();
    assert!(
        last.hostile_removed > 0 && last.false_negatives > 0,
        "{last:?}"
    );
    assert!(rows.iter().all(|r| !r.fn_failure));
    // At this load no counter saturates, so every loss is a removed false positive's.
    for r in &rows {
        assert_eq!(r.saturated_counters, 0, "round {}", r.round);
        assert_eq!(
            (
                r.fn_removed_false_positive,
                r.fn_saturated_decrement,
                r.fn_both_causes,
                r.fn_unexplained
            ),
            (r.false_negatives, 0, 0, 0),
            "round {}: causes of {} false negatives",
            r.round,
            r.false_negatives
        );
    }
}

#[test]
fn the_scalable_filter_keeps_its_target_and_the_textbook_one_does_not() {
    let queries = 400_000;
    let scalable = grow_rows("scalable/classic/xxh3/km/flat", 1_000, 0.01, 64, queries);
    assert_eq!(
        scalable.iter().map(|r| r.growth).collect::<Vec<_>>(),
        [1, 2, 4, 8, 16, 32, 64]
    );
    for r in &scalable {
        assert_eq!(r.false_negatives, 0, "G = {}", r.growth);
        assert_matches_theory(r);
        assert!(
            r.fpr_theory <= r.p,
            "compound theory {} above p",
            r.fpr_theory
        );
    }
    assert!(scalable.last().unwrap().stages > 1);
    // The textbook schedule's compound rate tends to 2p: at 64x its count is far above p.
    let textbook = grow_rows("textbook-scalable", 1_000, 0.01, 64, queries);
    let last = textbook.last().unwrap();
    assert_matches_theory(last);
    let pv = binomial_sf_inclusive(last.false_positives, last.queries, last.p);
    assert!(
        pv < ALPHA,
        "textbook-scalable at 64x: {} of {} not significantly above p = {} (p-value {pv:.2e})",
        last.false_positives,
        last.queries,
        last.p
    );
}

#[test]
fn a_static_filter_and_the_peer_run_the_grow_workload_too() {
    let fixed = grow_rows("classic/xxh3/km/flat", 1_000, 0.01, 8, 50_000);
    assert!(
        fixed
            .iter()
            .all(|r| r.stages == 1 && r.false_negatives == 0)
    );
    assert!(
        fixed.last().unwrap().fpr > 0.5,
        "a static filter at 8x is nearly full"
    );
    let peer = grow_rows("peer/growable-bloom-filter", 1_000, 0.01, 32, 200_000);
    for r in &peer {
        assert_eq!(r.false_negatives, 0, "G = {}", r.growth);
        assert_matches_theory(r);
    }
    assert!(peer.last().unwrap().stages >= 5, "{:?}", peer.last());
    assert!(
        peer.iter()
            .all(|r| r.static_bits_per_key > 9.0 && r.static_bits_per_key < 10.0)
    );
}

#[test]
fn key_ranges_of_members_samples_and_hostile_keys_are_disjoint() {
    let churn = Churn {
        rounds: 10,
        fraction: 0.1,
        hostile: 0.2,
    };
    // 10 removals per round from 100 members: 8 of members, 2 hostile; 80 fresh keys in all.
    assert_eq!(churn.split(100).unwrap(), (8, 2));
    assert_eq!(churn.member_indices(100).unwrap(), 180);
    assert!(churn.member_indices(100).unwrap() < HOSTILE_BASE);
}

fn err_text(e: HarnessError) -> String {
    e.to_string()
}

#[test]
fn bad_workload_settings_are_errors_naming_the_value_and_range() {
    let bad = [
        (
            Churn {
                rounds: 0,
                ..Churn::default()
            },
            "rounds = 0",
        ),
        (
            Churn {
                fraction: 0.0,
                ..Churn::default()
            },
            "churn = 0",
        ),
        (
            Churn {
                fraction: 1.5,
                ..Churn::default()
            },
            "churn = 1.5",
        ),
        (
            Churn {
                fraction: f64::NAN,
                ..Churn::default()
            },
            "churn = NaN",
        ),
        (
            Churn {
                hostile: -0.1,
                ..Churn::default()
            },
            "hostile-removes = -0.1",
        ),
        (
            Churn {
                hostile: 2.0,
                ..Churn::default()
            },
            "hostile-removes = 2",
        ),
    ];
    for (c, needle) in bad {
        let msg = err_text(c.validate().unwrap_err());
        assert!(msg.contains(needle), "{needle}: {msg}");
    }
    assert!(err_text(Grow { max_growth: 0 }.validate(10).unwrap_err()).contains("max-growth = 0"));
    let msg = err_text(
        Grow {
            max_growth: u64::MAX,
        }
        .validate(10)
        .unwrap_err(),
    );
    assert!(msg.contains("2^53"), "{msg}");

    let config = |filters: &[&str], workload| {
        let mut c = SweepConfig::with_grids(vec![Grid {
            filters: Selection::parse_list(&filters.join(",")).unwrap(),
            key_sets: vec![KeySetKind::RandomU64],
            n: vec![1_000],
            p: vec![0.01],
            overfill: vec![1.0],
        }]);
        c.workload = workload;
        c
    };
    let msg = err_text(
        config(
            &["classic/xxh3/km/flat"],
            WorkloadSettings::Churn(Churn::default()),
        )
        .plan()
        .unwrap_err(),
    );
    assert!(
        msg.contains("classic/xxh3/km/flat") && msg.contains("counting4/xxh3/km"),
        "the error names the filter and the ones that can remove: {msg}"
    );
    // A peer runs every workload but churn: static rows measure it as sized, like any subject.
    let plan = config(&["peer/growable-bloom-filter"], WorkloadSettings::Static)
        .plan()
        .unwrap();
    assert_eq!(plan.rows.len(), 1);
    let msg = err_text(
        config(
            &["peer/growable-bloom-filter"],
            WorkloadSettings::Churn(Churn::default()),
        )
        .plan()
        .unwrap_err(),
    );
    assert!(msg.contains("cannot remove"), "{msg}");
    // `all` under churn means every filter that can remove.
    let plan = config(&["all"], WorkloadSettings::Churn(Churn::default()))
        .plan()
        .unwrap();
    assert!(
        plan.rows
            .iter()
            .any(|r| r.spec.filter.to_string() == "textbook-counting-fnv1a-i32")
    );
    assert!(
        plan.rows
            .iter()
            .all(|r| r.spec.filter.to_string().starts_with("counting")
                || r.spec.filter.to_string().starts_with("textbook-counting"))
    );
}

/// The gate fails the textbook ports on their own workloads: false negatives under churn, a rate
/// above the target at growth; the correct designs pass the same points.
#[test]
fn the_gate_catches_the_textbook_ports() {
    let policy = GatePolicy::default();
    let churn_point = |filter: &str| BaselinePoint {
        workload: Workload::Churn,
        rounds: 5,
        churn: 0.5,
        overfill: 12.0,
        queries: 100_000,
        ..BaselinePoint::new(filter.parse().unwrap(), "article", 1_000, 0.1, 7)
    };
    let grow_point = |filter: &str| BaselinePoint {
        workload: Workload::Grow,
        growth: 64,
        queries: 400_000,
        ..BaselinePoint::new(filter.parse().unwrap(), "random-u64", 1_000, 0.01, 11)
    };
    let points = [
        churn_point("textbook-counting-fnv1a-i32"),
        churn_point("counting4/xxh3/km"),
        grow_point("textbook-scalable"),
        grow_point("scalable/classic/xxh3/km/flat"),
    ];
    let failed = |p: &BaselinePoint| {
        // The baseline count is the re-run's own, so drift cannot fire: only the checks under
        // test can.
        let alpha = policy.alpha_for(&points, p);
        let first = gate::check_workload(p, alpha, &policy);
        let fp = first.row.as_ref().map_or(0, |r| r.false_positives);
        let again = BaselinePoint {
            false_positives: fp,
            ..p.clone()
        };
        let o = gate::check_workload(&again, alpha, &policy);
        let names: Vec<&str> = o
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.name)
            .collect();
        let details: Vec<String> = o
            .checks
            .iter()
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect();
        (names, details)
    };
    let (f, d) = failed(&points[0]);
    assert!(f.contains(&"false-negatives"), "textbook counting: {d:?}");
    let (f, d) = failed(&points[1]);
    assert!(!f.contains(&"false-negatives"), "counting4: {d:?}");
    let (f, d) = failed(&points[2]);
    assert!(f.contains(&"target"), "textbook-scalable: {d:?}");
    let (f, d) = failed(&points[3]);
    assert!(
        !f.contains(&"target") && !f.contains(&"theory") && !f.contains(&"false-negatives"),
        "scalable: {d:?}"
    );
}

/// Every workload's default and quick grids plan (peers included: their memory is sized without
/// the registry) and fit the memory model, before anything is measured.
#[test]
fn every_default_workload_grid_plans() {
    use bloomlab_harness::SweepConfig;
    for quick in [false, true] {
        for (what, grids, workload) in [
            (
                "churn",
                SweepConfig::churn_grids(quick),
                WorkloadSettings::Churn(Churn::default()),
            ),
            (
                "grow",
                SweepConfig::grow_grids(quick),
                WorkloadSettings::Grow(Grow { max_growth: 1024 }),
            ),
        ] {
            let mut config = SweepConfig::with_grids(grids);
            config.workload = workload;
            let plan = config
                .plan()
                .unwrap_or_else(|e| panic!("{what} (quick {quick}): {e}"));
            assert!(!plan.rows.is_empty(), "{what}");
            let need = plan.memory_need(&config).unwrap();
            assert!(need.bytes > 0, "{what}");
        }
    }
}

/// Timing a workload (lookups after each step, the step's own inserts) must not change what it
/// measures: the same rows with and without timing, but for the timing columns, which are filled
/// only when asked for. (Speed itself is the criterion bench's business, not asserted here.)
#[test]
fn timing_a_workload_fills_its_columns_and_changes_no_statistic() {
    let seed = 5;
    let keys = KeySet::new(KeySetKind::RandomU64, seed).unwrap();
    let sampling = sampling(seed, 20_000);
    let cases = [
        (
            "scalable/blocked512/xxh3",
            WorkloadSettings::Grow(Grow { max_growth: 16 }),
        ),
        (
            "counting4/xxh3/km",
            WorkloadSettings::Churn(Churn {
                rounds: 3,
                fraction: 0.2,
                hostile: 0.0,
            }),
        ),
    ];
    for (filter, settings) in cases {
        let spec = TrialSpec {
            filter: filter.parse().unwrap(),
            n: 2_000,
            p: 0.01,
            overfill: 1.0,
        };
        let rows_with = |timing_passes| {
            let run = workload::NamedRun {
                spec: &spec,
                keys: &keys,
                sampling: &sampling,
                timing_passes,
            };
            workload::run_named(&run, &settings).unwrap()
        };
        let (untimed, timed) = (rows_with(0), rows_with(3));
        assert_eq!(untimed.len(), timed.len(), "{filter}");
        for (u, t) in untimed.iter().zip(&timed) {
            let what = format!("{filter} round {} growth {}", u.round, u.growth);
            assert_eq!(
                (u.insert_ns, u.lookup_present_ns, u.lookup_absent_ns),
                (0.0, 0.0, 0.0),
                "{what}: untimed rows carry no timing"
            );
            for (column, ns) in [
                ("insert_ns", t.insert_ns),
                ("lookup_present_ns", t.lookup_present_ns),
                ("lookup_absent_ns", t.lookup_absent_ns),
            ] {
                assert!(ns.is_finite() && ns > 0.0, "{what}: {column} = {ns}");
            }
            let stats = |r: &SweepRow| {
                (
                    r.queries,
                    r.false_positives,
                    r.false_negatives,
                    r.stages,
                    r.bits,
                    r.saturated_counters,
                    r.removed,
                )
            };
            assert_eq!(stats(u), stats(t), "{what}: timing changed a statistic");
        }
    }
}
