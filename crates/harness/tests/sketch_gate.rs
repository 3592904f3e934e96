//! The sketch gate's tests reject at their stated rate under the null and catch planted defects.
//! Every random draw is seeded; every bound below is an exact binomial quantile.

use bloomlab_filters::Xxh3;
use bloomlab_harness::sketch::gate::{self as sketch_gate, SketchPoint, hll_checks, hll_errors};
use bloomlab_harness::sketch::violation_bound_p;
use bloomlab_sketches::{CardinalitySketch, HyperLogLog, SketchError};
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use rand_pcg::Pcg64Mcg;
use statrs::distribution::{Binomial, DiscreteCDF};

/// The smallest k with P(X > k) < 1e-6 for X ~ Binomial(n, p): more rejections than this in n
/// replicates of a level-p test happens by chance with probability below 1e-6.
fn most_rejections(n: u64, p: f64) -> u64 {
    let b = Binomial::new(p, n).unwrap();
    (0..=n).find(|&k| 1.0 - b.cdf(k) < 1e-6).unwrap()
}

fn point(sketch: &str, n: u64, trials: u64) -> SketchPoint {
    let mut p = sketch_gate::default_points()
        .into_iter()
        .find(|p| p.kind == "hll")
        .unwrap();
    p.sketch = sketch.into();
    p.n = n;
    p.trials = trials;
    p
}

/// Under the null (errors normal with mean 0 and sd exactly 1.04/sqrt(m), the baseline an
/// independent sample of the same law) each HyperLogLog test rejects at most at its level.
#[test]
fn hll_tests_reject_at_their_level_under_the_null() {
    // The gate's former sample size and its new one (issue 31: 1024 trials per point).
    for trials in [200usize, 1024] {
        null_rejections(trials);
    }
}

fn null_rejections(trials: usize) {
    let (reps, level, precision) = (2000u64, 0.05, 12u8);
    let se = bloomlab_sketches::hll::standard_error(precision);
    let normal = Normal::new(0.0, se).unwrap();
    let mut rng = Pcg64Mcg::seed_from_u64(1717);
    let mut rejected = [0u64; 3];
    for _ in 0..reps {
        let base: Vec<f64> = (0..trials).map(|_| normal.sample(&mut rng)).collect();
        let now: Vec<f64> = (0..trials).map(|_| normal.sample(&mut rng)).collect();
        let mut p = point("hll/xxh3/p12", 100_000, trials as u64);
        let m = base.iter().sum::<f64>() / trials as f64;
        p.bias = m;
        p.sd = (base.iter().map(|e| (e - m).powi(2)).sum::<f64>() / (trials as f64 - 1.0)).sqrt();
        for (i, c) in hll_checks(&p, precision, &now, level).iter().enumerate() {
            rejected[i] += u64::from(!c.passed);
        }
    }
    let max = most_rejections(reps, level);
    for (name, r) in ["bias", "rms", "drift"].iter().zip(rejected) {
        assert!(
            r <= max,
            "{name}, T = {trials}: {r} of {reps} null replicates rejected at level {level}; at most {max} by chance (1e-6)"
        );
        // And the test is not vacuous: a level-0.05 test of an exact null rejects sometimes.
        assert!(
            r > 0,
            "{name}, T = {trials}: never rejected in {reps} null replicates"
        );
    }
}

/// Per-trial shares drawn so that each trial's expected share is exactly delta (the worst case
/// the contract allows): the Chernoff test rejects at most at its level.
#[test]
fn count_min_bound_test_is_conservative_at_delta() {
    let (reps, trials, level, delta) = (4000u64, 20usize, 0.05, 0.01);
    let mut rng = Pcg64Mcg::seed_from_u64(99);
    let mut rejected = 0u64;
    for _ in 0..reps {
        // A trial's share: 1 with probability delta, else 0 (the most variable law with mean delta).
        let shares: Vec<f64> = (0..trials)
            .map(|_| f64::from(u8::from(rand::RngExt::random_bool(&mut rng, delta))))
            .collect();
        rejected += u64::from(violation_bound_p(&shares, delta) < level);
    }
    let max = most_rejections(reps, level);
    assert!(
        rejected <= max,
        "{rejected} of {reps} rejected; at most {max} at level {level}"
    );
    assert_eq!(violation_bound_p(&[0.0; 20], delta), 1.0);
    // Mean share 0.2 over 20 trials: exp(-20 KL(0.2 || 0.01)) = 1.90e-4.
    let p = violation_bound_p(&[0.2; 20], delta);
    assert!((p / 1.90e-4 - 1.0).abs() < 0.01, "{p}");
}

/// A sketch that reports 3% too much: the bias test catches it at the gate's per-test level.
struct Inflated(HyperLogLog<Xxh3>);

impl CardinalitySketch for Inflated {
    type Error = SketchError;
    fn name(&self) -> String {
        "inflated".into()
    }
    fn precision(&self) -> u8 {
        self.0.precision()
    }
    fn insert_batch(&mut self, keys: &[u64]) -> Result<(), SketchError> {
        self.0.insert_batch(keys)
    }
    fn estimate(&mut self) -> Result<f64, SketchError> {
        Ok(self.0.estimate() * 1.03)
    }
    fn estimator(&self) -> &'static str {
        "planted"
    }
    fn memory_bytes(&mut self) -> Result<u64, SketchError> {
        Ok(0)
    }
}

const GATE_LEVEL: f64 = 1e-4 / 40.0;

#[test]
fn planted_bias_and_too_few_registers_fail_the_gate() {
    let points = [point("hll/xxh3/p12", 100_000, 200)];
    let refs: Vec<&SketchPoint> = points.iter().collect();
    let biased = hll_errors(|| Box::new(Inflated(HyperLogLog::new(12).unwrap())), &refs).unwrap();
    let checks = hll_checks(&points[0], 12, &biased[0], GATE_LEVEL);
    assert!(!checks[0].passed, "bias not caught: {:?}", checks[0]);
    assert!(
        checks[0].detail.contains("hll/xxh3/p12 n=100000 T=200"),
        "{}",
        checks[0].detail
    );

    // A sketch of 2^11 registers sold as 2^12: its error is sqrt(2) times the stated one.
    let small = hll_errors(|| Box::new(HyperLogLog::<Xxh3>::new(11).unwrap()), &refs).unwrap();
    let checks = hll_checks(&points[0], 12, &small[0], GATE_LEVEL);
    assert!(!checks[1].passed, "RMS not caught: {:?}", checks[1]);

    // The honest sketch passes the same tests with the same keys.
    let honest = hll_errors(|| Box::new(HyperLogLog::<Xxh3>::new(12).unwrap()), &refs).unwrap();
    let checks = hll_checks(&points[0], 12, &honest[0], GATE_LEVEL);
    assert!(checks[..2].iter().all(|c| c.passed), "{checks:?}");
}

#[test]
fn an_undersized_count_min_fails_its_contract() {
    let mut p = sketch_gate::default_points()
        .into_iter()
        .find(|p| p.kind == "cms" && p.exponent == 1.0)
        .unwrap();
    // 100 x 1 counters cannot give eps = 0.001 with delta = 0.01 (the contract needs 2719 x 5).
    p.sketch = "cms/xxh3/100x1".into();
    let o = sketch_gate::cms_outcome(&p, GATE_LEVEL).unwrap();
    let bound = o.checks.iter().find(|c| c.name == "bound").unwrap();
    assert!(!bound.passed, "{bound:?}");
    let under = o.checks.iter().find(|c| c.name == "undercount").unwrap();
    assert!(under.passed, "{under:?}");
    assert!(sketch_gate::parse_cms("cms/xxh3/2719").is_err());
}

const SKETCH_HEADER: &str = "kind,sketch,n,epsilon,delta,exponent,universe,stream,trials,seed,bias,sd,rms,violations,items\n";
const HLL_ROW: &str = "hll,hll/xxh3/p12,1000,0.0,0.0,0.0,0,0,200,17,-0.0009,0.0115,0.0116,0,0\n";
const CMS_ROW: &str =
    "cms,cms/xxh3/2719x5,0,0.001,0.01,1.0,10000,200000,20,17,0.0,0.0,0.0,3,200000\n";

/// Writes `body` as a sketch baseline named `name`, reads it, removes it.
fn read_sketches(name: &str, body: &str) -> Result<Vec<SketchPoint>, String> {
    let path = std::env::temp_dir().join(format!(
        "bloomlab-sketch-baseline-{}-{name}",
        std::process::id()
    ));
    std::fs::write(&path, body).unwrap();
    let out = sketch_gate::read_points(&path);
    std::fs::remove_file(&path).unwrap();
    out
}

/// Issue 28, case 9 (sketch baseline): a repeated point used to be accepted silently, and
/// measured statistics that are not numbers passed the file check and failed at run time. Both are
/// refused when the file is read, naming the line (and column).
#[test]
fn a_sketch_baseline_refuses_repeats_and_values_out_of_range() {
    let good = format!("{SKETCH_HEADER}{HLL_ROW}{CMS_ROW}");
    assert_eq!(read_sketches("good.csv", &good).unwrap().len(), 2);

    let other_counts = HLL_ROW.replace("-0.0009,0.0115,0.0116", "0.001,0.02,0.02");
    let err = read_sketches(
        "dup.csv",
        &format!("{SKETCH_HEADER}{HLL_ROW}{CMS_ROW}{other_counts}"),
    )
    .unwrap_err();
    assert!(
        err.contains("dup.csv") && err.contains("line 4 repeats the point of line 2"),
        "{err}"
    );

    let cases = [
        (
            HLL_ROW.replace(",0.0115,", ",NaN,"),
            "line 2, column 54 (sd)",
        ),
        (HLL_ROW.replace(",200,17,", ",1,17,"), "(trials)"),
        (
            HLL_ROW.replace("p12,1000,", "p12,18446744073709551615,"),
            "line 2, column 18 (n)",
        ),
        (
            CMS_ROW.replace(",3,200000", ",200001,200000"),
            "(violations)",
        ),
    ];
    for (i, (row, wanted)) in cases.into_iter().enumerate() {
        let name = format!("bad{i}.csv");
        let err = read_sketches(&name, &format!("{SKETCH_HEADER}{row}")).unwrap_err();
        assert!(err.contains(&name) && err.contains(wanted), "{row}: {err}");
    }
}

/// The committed sketch baseline passes the reader's checks (no repeats, every value in range).
#[test]
fn the_committed_sketch_baseline_reads() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/baseline/sketches.csv");
    let points = sketch_gate::read_points(&path).unwrap();
    assert_eq!(points.len(), sketch_gate::default_points().len());
}

/// Why the gate tests our original estimator only away from its transition, and Ertl's there:
/// at n = 3.4 m (p = 12) with the gate's 1024 trials, the original's bias check fails (its real
/// bias, about +1.5% at p = 12, is many standard errors of the mean) and Ertl's passes, each at
/// the gate's per-test level for the default family (seeded; a correct sketch fails with
/// probability at most that level).
#[test]
fn at_the_transition_the_bias_check_fails_the_original_and_passes_ertl() {
    let points = sketch_gate::default_points();
    let alpha = 0.01 / sketch_gate::family_tests(&points) as f64;
    let n = 13_926; // 3.4 x 4096
    let ertl = point("hll/xxh3/p12/ertl", n, 1024);
    let orig = point("hll/xxh3/p12", n, 1024);
    for (p, should_pass) in [(&ertl, true), (&orig, false)] {
        let errors = hll_errors(
            || bloomlab_sketches::cardinality::build_by_name(&p.sketch).unwrap(),
            &[p],
        )
        .unwrap()
        .remove(0);
        let checks = hll_checks(p, 12, &errors, alpha);
        let bias = checks.iter().find(|c| c.name == "bias").unwrap();
        assert_eq!(bias.passed, should_pass, "{}: {}", p.sketch, bias.detail);
    }
    assert!(
        points
            .iter()
            .any(|p| p.sketch == "hll/xxh3/p12/ertl" && p.n == n),
        "the default points test Ertl at the transition"
    );
    assert!(
        points
            .iter()
            .filter(|p| p.kind == "hll")
            .all(|p| p.trials >= 1024),
        "the default HyperLogLog points use 1024 trials or more"
    );
}
