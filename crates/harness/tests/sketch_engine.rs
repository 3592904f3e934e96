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
