//! Ertl's estimator, the register histogram behind both estimators, and Count-Min's independent
//! rows. The statistical tests use fixed seeds; their bounds and false-alarm rates are stated.

use bloomlab_filters::hash::fmix64;
use bloomlab_filters::{Murmur3, Xxh3};
use bloomlab_sketches::cardinality::{build_group, group_names, parse_name};
use bloomlab_sketches::{CountMin, Estimator, HyperLogLog, Rows, build_ours};

/// Both estimators recomputed from a *separate* register array fed the same hashes, with the
/// textbook formulas summed term by term (no histogram, no Horner scheme).
fn reference(p: u32, hashes: &[u64]) -> (f64, f64) {
    let m = 1usize << p;
    let mut reg = vec![0u8; m];
    for &h in hashes {
        let idx = (h >> (64 - p)) as usize;
        let rest = h << p;
        let q = 64 - p;
        let rank = (rest.leading_zeros().min(q) + 1) as u8;
        reg[idx] = reg[idx].max(rank);
    }
    let mf = m as f64;
    // Flajolet et al., figure 3.
    let alpha = match m {
        16 => 0.673,
        32 => 0.697,
        64 => 0.709,
        _ => 0.7213 / (1.0 + 1.079 / mf),
    };
    let sum: f64 = reg.iter().map(|&r| 2f64.powi(-i32::from(r))).sum();
    let zeros = reg.iter().filter(|&&r| r == 0).count();
    let raw = alpha * mf * mf / sum;
    let original = if raw <= 2.5 * mf && zeros > 0 {
        mf * (mf / zeros as f64).ln()
    } else {
        raw
    };
    // Ertl 2017, eq. for the improved raw estimator, with sigma and tau as plain truncated series.
    let q = 64 - p as usize;
    let mut c = vec![0f64; q + 2];
    for &r in &reg {
        c[usize::from(r)] += 1.0;
    }
    let sigma = |x: f64| {
        let mut s = x;
        for k in 1..60 {
            s += x.powf(2f64.powi(k)) * 2f64.powi(k - 1);
        }
        s
    };
    let tau = |x: f64| {
        if x == 0.0 || x == 1.0 {
            return 0.0;
        }
        let mut s = 1.0 - x;
        for k in 1..60 {
            s -= (1.0 - x.powf(2f64.powi(-k))).powi(2) * 2f64.powi(-k);
        }
        s / 3.0
    };
    let mut z = mf * sigma(c[0] / mf);
    for (k, &ck) in c.iter().enumerate().take(q + 1).skip(1) {
        z += ck * 2f64.powi(-(k as i32));
    }
    z += mf * tau(1.0 - c[q + 1] / mf) * 2f64.powi(-(q as i32));
    (original, mf * mf / (2.0 * std::f64::consts::LN_2 * z))
}

#[test]
fn both_estimators_match_a_term_by_term_recomputation() {
    for p in [4u32, 10, 14] {
        let mut hll = HyperLogLog::<Xxh3>::new(p).unwrap();
        let mut hashes = Vec::new();
        for n in [0u64, 1, 7, 100, 3_000, 40_000, 200_000] {
            while (hashes.len() as u64) < n {
                let h = fmix64(hashes.len() as u64 ^ 0x5555);
                hashes.push(h);
                hll.insert_hash(h);
            }
            let (orig, ertl) = reference(p, &hashes);
            let got = (
                hll.estimate_with(Estimator::Original),
                hll.estimate_with(Estimator::Ertl),
            );
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            assert!(
                close(got.0, orig) && close(got.1, ertl),
                "p = {p}, n = {n}: got (original {}, ertl {}), reference ({orig}, {ertl})",
                got.0,
                got.1
            );
        }
    }
}

#[test]
fn histogram_follows_inserts_merges_and_clear() {
    let check = |h: &HyperLogLog<Murmur3>, what: &str| {
        let total: u64 = h.histogram().iter().map(|&c| u64::from(c)).sum();
        assert_eq!(total, h.registers() as u64, "{what}: histogram total");
    };
    let mut a = HyperLogLog::<Murmur3>::new(8).unwrap();
    let mut b = HyperLogLog::<Murmur3>::new(8).unwrap();
    let mut u = HyperLogLog::<Murmur3>::new(8).unwrap();
    for i in 0..5_000u64 {
        a.insert(&i);
        u.insert(&i);
        b.insert(&(i + 2_500));
        u.insert(&(i + 2_500));
    }
    check(&a, "after inserts");
    a.merge(&b).unwrap();
    check(&a, "after merge");
    assert_eq!(a.histogram(), u.histogram(), "merge vs union insert");
    assert_eq!(
        a.estimate_with(Estimator::Ertl),
        u.estimate_with(Estimator::Ertl)
    );
    a.clear();
    check(&a, "after clear");
    assert_eq!(a.histogram()[0], 256);
    assert_eq!(a.estimate_with(Estimator::Ertl), 0.0);
    assert_eq!(a.estimate_with(Estimator::Original), 0.0);
}

/// The transition region of the original estimator (raw estimate just above 5/2 m): at
/// n = 3.4 m the original estimator's mean error is positive, and Ertl's is not distinguishable
/// from zero. T = 2000 seeded trials at p = 10 (m = 1024, stated error 3.25%); each test is a
/// two-sided z test on the mean error at false-alarm rate 1e-6 (|z| > 4.89), the means being
/// averages of 2000 independent trials (normal to well within that level).
#[test]
fn ertl_removes_the_transition_bias_of_the_original() {
    let (p, trials) = (10u32, 2000u64);
    let n = 3_482u64; // 3.4 m
    let mut errs = [Vec::new(), Vec::new()];
    for t in 0..trials {
        let mut h = HyperLogLog::<Xxh3>::new(p).unwrap();
        let salt = fmix64(t ^ 0xabcdef);
        for i in 0..n {
            h.insert(&fmix64(i ^ salt));
        }
        for (k, e) in Estimator::ALL.iter().enumerate() {
            errs[k].push(h.estimate_with(*e) / n as f64 - 1.0);
        }
    }
    let z = |e: &[f64]| {
        let t = e.len() as f64;
        let mean = e.iter().sum::<f64>() / t;
        let sd = (e.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (t - 1.0)).sqrt();
        (mean, mean / (sd / t.sqrt()))
    };
    let (mo, zo) = z(&errs[0]);
    let (me, ze) = z(&errs[1]);
    assert!(
        zo > 4.89,
        "original at p = {p}, n = {n}, T = {trials}: mean error {mo:+.5} z = {zo:.2}, expected a positive bias (z > 4.89)"
    );
    assert!(
        ze.abs() <= 4.89,
        "ertl at p = {p}, n = {n}, T = {trials}: mean error {me:+.5} z = {ze:.2}, expected |z| <= 4.89"
    );
}

#[test]
fn names_parse_group_and_build() {
    let n = parse_name("hll/xxh3/p14/ertl").unwrap();
    assert_eq!(
        (n.ours, n.hash.as_str(), n.precision),
        (Some(Estimator::Ertl), "xxh3", 14)
    );
    assert!(parse_name("hll/xxh3/p14/hll++").is_err());
    let names: Vec<String> = [
        "hll/xxh3/p14",
        "peer/hyperloglogplus/xxh3/p14",
        "hll/xxh3/p14/ertl",
        "hll/murmur3/p14",
    ]
    .map(String::from)
    .to_vec();
    let groups = group_names(&names).unwrap();
    assert_eq!(
        groups,
        vec![
            vec!["hll/xxh3/p14".to_string(), "hll/xxh3/p14/ertl".to_string()],
            vec!["peer/hyperloglogplus/xxh3/p14".to_string()],
            vec!["hll/murmur3/p14".to_string()],
        ]
    );
    let mut g = build_group(&groups[0]).unwrap();
    let outs: Vec<String> = g.outputs().into_iter().map(|o| o.0).collect();
    assert_eq!(outs, groups[0]);
    g.insert_batch(&(0..50_000u64).collect::<Vec<_>>()).unwrap();
    let mut est = Vec::new();
    g.estimate_into(&mut est).unwrap();
    let mut alone = build_ours("xxh3", 14).unwrap();
    alone
        .insert_batch(&(0..50_000u64).collect::<Vec<_>>())
        .unwrap();
    assert_eq!(est[0], alone.estimate().unwrap());
    assert!(build_group(&["hll/xxh3/p14".into(), "hll/xxh3/p12".into()]).is_err());
}

#[test]
fn count_min_independent_rows_never_undercount_and_refuse_to_merge_with_double_hashing() {
    let mut ind = CountMin::<Xxh3>::with_dimensions(7, 4)
        .unwrap()
        .with_rows(Rows::Independent);
    let mut truth = std::collections::HashMap::new();
    for i in 0..3_000u64 {
        let k = fmix64(i) % 500;
        ind.add(&k, 1 + i % 3);
        *truth.entry(k).or_insert(0u64) += 1 + i % 3;
    }
    for (k, t) in &truth {
        assert!(ind.estimate(k) >= *t, "{}: key {k} true {t}", ind.name());
    }
    assert_eq!(ind.name(), "cms/xxh3/7x4/ind");
    let mut dh = CountMin::<Xxh3>::with_dimensions(7, 4).unwrap();
    let err = dh.merge(&ind).unwrap_err().to_string();
    assert!(err.contains("row schemes differ"), "{err}");
    // Rows of the independent scheme are not the double-hashing ones (else the variant would
    // measure nothing new): on 1,000 keys in a 2^16-wide, 3-row table, row 2's columns differ.
    let a = CountMin::<Xxh3>::with_dimensions(1 << 16, 3).unwrap();
    let b = a.clone().with_rows(Rows::Independent);
    let mut differ = 0;
    for k in 0..1_000u64 {
        let (mut x, mut y) = (a.clone(), b.clone());
        x.add(&k, 1);
        y.add(&k, 1);
        differ += usize::from(x != y.clone().with_rows(Rows::DoubleHash));
    }
    assert!(differ > 990, "only {differ} of 1000 keys land elsewhere");
}
