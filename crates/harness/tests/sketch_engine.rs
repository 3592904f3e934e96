//! The HyperLogLog trial engine: the checkpoint grid, reproducibility whatever the thread count,
//! several estimators per pass, the quantile columns and the automatic departure finding.

use bloomlab_harness::sketch::{
    self, HllPlan, SIGMA_LEVELS, departures, octave_spaced, quantile_sorted,
};
use bloomlab_sketches::cardinality::build_group;

#[test]
fn octave_grid_is_the_datasketches_grid() {
    let g = octave_spaced(1, 1 << 24, 16);
    assert_eq!(g.first(), Some(&1));
    assert_eq!(g.last(), Some(&(1 << 24)));
    assert!(g.windows(2).all(|w| w[0] < w[1]), "ascending, no repeats");
    // 24 octaves of 16 points, with the small ones merged by rounding.
    assert_eq!(g.iter().filter(|&&n| n >= 1024).count(), 14 * 16 + 1);
    for k in [0u32, 16, 160, 384] {
        let n = 2f64.powf(f64::from(k) / 16.0).round() as u64;
        assert!(g.contains(&n), "2^({k}/16) = {n} missing");
    }
    assert_eq!(octave_spaced(10, 100, 1), vec![16, 32, 64, 100]);
}

fn plan(trials: u64) -> HllPlan {
    HllPlan {
        cardinalities: octave_spaced(1, 50_000, 4),
        trials,
        seed: 9,
        confidence: 0.95,
        revision: "test".into(),
    }
}

#[test]
fn runs_are_reproducible_whatever_the_thread_count_and_share_one_pass() {
    let names = vec!["hll/xxh3/p10".to_string(), "hll/xxh3/p10/ertl".to_string()];
    let p = plan(12);
    let run_on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| sketch::run_hll(|_| build_group(&names), &p, true, &|_| {}))
            .unwrap()
    };
    let (one, two) = (run_on(1), run_on(2));
    assert_eq!(one, two, "1 thread vs 2 threads");
    assert_eq!(one.trials.sketches, names);
    assert_eq!(one.rows.len(), 2 * p.cardinalities.len());
    // The first output of the shared pass is exactly the original sketch run alone.
    let alone = sketch::run_hll(|_| build_group(&names[..1]), &p, false, &|_| {}).unwrap();
    assert_eq!(alone.trials.estimates[0], one.trials.estimates[0]);
    // Summary rows are recomputable from the per-trial estimates.
    let i = p.cardinalities.len() - 1;
    let n = p.cardinalities[i] as f64;
    let ertl = &one.trials.estimates[1];
    let mean = ertl.iter().map(|t| t[i] / n - 1.0).sum::<f64>() / ertl.len() as f64;
    let row = one
        .rows
        .iter()
        .find(|r| r.sketch == names[1] && r.n == p.cardinalities[i])
        .unwrap();
    assert!((row.bias - mean).abs() < 1e-15, "{} vs {mean}", row.bias);
    assert!(row.q_m3 <= row.q_m1 && row.q_m1 <= row.q_median && row.q_median <= row.q_p3);
}

#[test]
fn quantiles_interpolate_between_order_statistics() {
    let v: Vec<f64> = (0..=100).map(f64::from).collect();
    assert_eq!(quantile_sorted(&v, 0.5), 50.0);
    assert!((quantile_sorted(&v, SIGMA_LEVELS[0]) - 0.134_989_803_163_01).abs() < 1e-9);
    assert_eq!(quantile_sorted(&v, 1.0), 100.0);
    assert!(quantile_sorted(&[], 0.5).is_nan());
}

/// The finding on real trials: the original estimator's transition bias at p = 10 (about 3.4 m)
/// is found with 2000 trials, and Ertl's estimator on the same trials shows no departure between
/// m and 16 m, where the original's lies, at the family rate 0.01 (a sketch unbiased there is
/// flagged with probability at most 0.01; seeded). Ertl's estimator is not exactly unbiased at
/// n = 1 (about +0.05%, every trial alike, so the test sees it): any departure it shows must be
/// below a tenth of the stated error.
#[test]
fn the_transition_bias_is_found_for_the_original_and_not_for_ertl() {
    let names = vec!["hll/xxh3/p10".to_string(), "hll/xxh3/p10/ertl".to_string()];
    let p = HllPlan {
        cardinalities: octave_spaced(1, 1 << 14, 8),
        trials: 2000,
        seed: 3,
        confidence: 0.95,
        revision: "test".into(),
    };
    let run = sketch::run_hll(|_| build_group(&names), &p, true, &|_| {}).unwrap();
    let found = departures(&run.rows, 0.01);
    let orig: Vec<_> = found.iter().filter(|d| d.sketch == names[0]).collect();
    assert!(
        orig.iter().any(|d| d.what == "bias"
            && d.value > 0.0
            && (2 * 1024..=6 * 1024).contains(&d.n_peak)),
        "no positive bias found between 2 m and 6 m for the original: {found:#?}"
    );
    assert!(
        !found
            .iter()
            .any(|d| d.sketch == names[1] && d.n_to >= 1024 && d.n_from <= 16 * 1024),
        "Ertl flagged between m and 16 m: {found:#?}"
    );
    assert!(
        !found
            .iter()
            .any(|d| d.sketch == names[1] && d.what == "bias" && d.value.abs() > 0.1 * d.stated),
        "Ertl with a material bias: {found:#?}"
    );
}

/// A point where every trial gives the same estimate is a fixed error, not a sample: its mean
/// is that error exactly and its standard deviation exactly 0. Summed naively, 1024 copies of
/// linear counting's error at p = 4, n = 1 (16 ln(16/15) - 1, the committed report's point)
/// gave a mean a few ulps off and an sd of 5e-16, which the t test read as a spread while the
/// same point at p = 14 (sd exactly 0) was skipped.
#[test]
fn identical_estimates_give_their_error_exactly_and_no_spread() {
    let p = plan(1024);
    for precision in [4u8, 10, 14, 18] {
        let m = (1u64 << precision) as f64;
        let estimate = m * (m / (m - 1.0)).ln();
        let row = sketch::hll_row(
            "hll/xxh3/pX",
            "flajolet+linear-counting",
            precision,
            1 << precision,
            1,
            &vec![estimate; 1024],
            &p,
        );
        assert_eq!(
            row.bias,
            estimate - 1.0,
            "p = {precision}: mean of equal errors"
        );
        assert_eq!(row.sd, 0.0, "p = {precision}: sd of equal errors");
        assert_eq!((row.bias_low, row.bias_high), (row.bias, row.bias));
        assert!(sketch::deterministic(&row));
    }
}

/// Deterministic points are treated one way whatever the estimator: the original estimator's
/// n = 1 and 2 at p = 14 (linear counting: every trial the same estimate, 1/(2m) and 1/m above
/// n) and Ertl's (the set registers' values enter its sum, so trials differ by about 1e-9 of n
/// and the t test applies) both show their fixed positive bias as a departure; the original's
/// is marked exact with a zero-width interval. Before, the original's was skipped because its
/// sd was exactly 0 while Ertl's, of the same kind and size, was listed. 64 seeded trials; the
/// biases are fixed numbers, so the outcome does not depend on the seed.
#[test]
fn deterministic_points_depart_alike_for_both_estimators() {
    let names = vec!["hll/xxh3/p14".to_string(), "hll/xxh3/p14/ertl".to_string()];
    let p = HllPlan {
        cardinalities: vec![1, 2, 100, 1000],
        trials: 64,
        seed: 5,
        confidence: 0.95,
        revision: "test".into(),
    };
    let run = sketch::run_hll(|_| build_group(&names), &p, true, &|_| {}).unwrap();
    let found = departures(&run.rows, 0.01);
    for name in &names {
        let d = found
            .iter()
            .find(|d| &d.sketch == name && d.what == "bias" && d.n_from == 1)
            .unwrap_or_else(|| panic!("{name}: no bias departure from n = 1: {found:#?}"));
        assert_eq!(d.n_to, 2, "{name}: {d:#?}");
        assert!(d.value > 0.0 && d.value < 0.01 * d.stated, "{name}: {d:#?}");
    }
    let orig = found
        .iter()
        .find(|d| d.sketch == names[0] && d.what == "bias")
        .unwrap();
    assert!(
        orig.exact && orig.low == orig.value && orig.high == orig.value,
        "{orig:#?}"
    );
    let m = 16384f64;
    assert_eq!(
        orig.value,
        m * (m / (m - 2.0)).ln() / 2.0 - 1.0,
        "{orig:#?}"
    );
    let ertl_row = run
        .rows
        .iter()
        .find(|r| r.sketch == names[1] && r.n == 1)
        .unwrap();
    assert!(
        !sketch::deterministic(ertl_row) && ertl_row.sd > 0.0,
        "{ertl_row:#?}"
    );
}
