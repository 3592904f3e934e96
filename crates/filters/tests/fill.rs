//! `bloomlab_filters::fill` on real in-memory filters of the three bit layouts
//! (`classic/xxh3/km/flat`, `blocked512/xxh3`, `sbbf/xxh3`): the count estimate and its interval
//! over many independently keyed filters, the implied rate bit for bit against
//! `Geometry::fpr_given_bytes` however the bytes are chunked, the keys left to a rate or a fill
//! against an in-memory twin, and every edge and bad input.
//!
//! Keys: member i of trial t is `splitmix(seed_t, i)` (a bijection of i, so the n keys are
//! distinct). False-alarm rates are stated per test.

use bloomlab_filters::fill::{FillCounter, FillStat, RateSource};
use bloomlab_filters::{
    Blocked512, Bloom, BloomError, Filter, FilterExt, FlatBits, Geometry, KirschMitzenmacher,
    SplitBlock, Variant, Xxh3,
};
use rand::{RngExt as _, SeedableRng};
use statrs::distribution::{ChiSquared, ContinuousCDF, Normal};

mod common;
use common::acceptance;

/// A filter whose bit array can be copied out as the in-memory layout's bytes (little-endian
/// words, blocks in order): what a copy in Redis or a file holds.
trait Bytes: Filter + Variant {
    fn bytes(&self) -> Vec<u8>;
}

impl Bytes for Bloom<Xxh3, KirschMitzenmacher, FlatBits> {
    fn bytes(&self) -> Vec<u8> {
        self.store()
            .words()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect()
    }
}

impl Bytes for Blocked512<Xxh3> {
    fn bytes(&self) -> Vec<u8> {
        self.words().iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

impl Bytes for SplitBlock<Xxh3> {
    fn bytes(&self) -> Vec<u8> {
        self.to_le_bytes()
    }
}

/// Runs `check::<F>(name)` for each of the three layouts.
macro_rules! each_layout {
    ($check:ident) => {
        $check::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>("classic/xxh3/km/flat");
        $check::<Blocked512<Xxh3>>("blocked512/xxh3");
        $check::<SplitBlock<Xxh3>>("sbbf/xxh3");
    };
}

fn filled<F: Bytes>(n_design: u64, p: f64, seed: u64, keys: u64) -> F {
    let mut f = F::sized_for(n_design, p).unwrap();
    for i in 0..keys {
        f.insert(&common::key(seed, i));
    }
    f
}

/// Trials per layout and fill of the coverage test.
const TRIALS: u64 = 2000;
/// Assertions of the coverage test: 3 layouts x 2 fills x 3 checks.
const COVERAGE_ASSERTIONS: f64 = 18.0;
/// The coverage test's false-alarm rate for the whole test, Bonferroni-split over its assertions.
const COVERAGE_FAMILY_ALPHA: f64 = 1e-3;

/// For each layout, TRIALS independently keyed filters sized for 2,000 keys at p = 0.01 (about
/// 19,200 bits: 300 words, 38 blocks of 512 bits, 75 split blocks), measured after 2,000 keys
/// (fill about 0.5) and again after 6,000 (fill about 0.88). At each point:
///
/// - **coverage**: the 95% interval contains the true n in a number of trials inside the
///   two-sided exact acceptance region of Binomial(TRIALS, 0.95);
/// - **width**: the mean interval width, as a standard deviation `w / (2 z)`, against the
///   estimates' empirical standard deviation s: `(T - 1) s^2 / sd^2` inside the two-sided
///   acceptance region of chi-squared(T - 1) (the estimates are close to normal at these sizes).
///   This fails for an interval too wide as well as too narrow: the independent-Poisson-loads
///   model of the blocked variance gives intervals about 4 times too wide here;
/// - **bias**: the mean estimate within `z s / sqrt(T)` of n, plus the estimator's second-order
///   bias `Var X / (2 (m - E X)^2 |ln(1 - r)|)` (under a tenth of a key here).
///
/// Each assertion runs at alpha = 1e-3 / 18 (family false-alarm rate 1e-3).
#[test]
fn the_interval_covers_the_true_count_at_its_confidence() {
    fn check<F: Bytes>(name: &str) {
        let alpha = COVERAGE_FAMILY_ALPHA / COVERAGE_ASSERTIONS;
        let confidence = 0.95;
        let z95 = Normal::standard().inverse_cdf(0.975);
        let z_alpha = Normal::standard().inverse_cdf(1.0 - alpha / 2.0);
        let chi = ChiSquared::new((TRIALS - 1) as f64).unwrap();
        let (chi_lo, chi_hi) = (
            chi.inverse_cdf(alpha / 2.0),
            chi.inverse_cdf(1.0 - alpha / 2.0),
        );
        let (covered_lo, covered_hi) = acceptance(TRIALS, confidence, alpha);
        let checkpoints = [2_000u64, 6_000];
        // Per checkpoint: estimates, interval widths, covered count.
        let mut runs = vec![(Vec::new(), Vec::new(), 0u64); checkpoints.len()];
        let mut geometry = None;
        for t in 0..TRIALS {
            let seed = 0xF111_0000_0000 + t;
            let mut f = F::sized_for(2_000, 0.01).unwrap();
            let mut inserted = 0;
            for (c, &n) in checkpoints.iter().enumerate() {
                for i in inserted..n {
                    f.insert(&common::key(seed, i));
                }
                inserted = n;
                let stat = FillStat::from_bytes(f.geometry(), &f.bytes()).unwrap();
                let (lo, hi) = stat.count_interval(confidence).unwrap();
                let est = stat.estimated_count();
                assert!(lo <= est && est <= hi, "{name}: {lo} <= {est} <= {hi}");
                runs[c].0.push(est);
                runs[c].1.push(hi - lo);
                runs[c].2 += u64::from(lo <= n as f64 && n as f64 <= hi);
            }
            geometry = Some(f.geometry());
        }
        let g = geometry.unwrap();
        let m = g.bits() as f64;
        for (&n, (estimates, widths, covered)) in checkpoints.iter().zip(&runs) {
            let t = TRIALS as f64;
            let mean = estimates.iter().sum::<f64>() / t;
            let var = estimates.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (t - 1.0);
            let s = var.sqrt();
            let model_sd = widths.iter().sum::<f64>() / t / (2.0 * z95);
            let what = format!(
                "{name} ({g:?}), n = {n}, {TRIALS} filters, alpha {alpha:.1e}: mean estimate \
                 {mean:.2} (sd {s:.2}), mean interval sd {model_sd:.2}, {covered} covered"
            );
            eprintln!("{what}");
            assert!(
                (covered_lo..=covered_hi).contains(covered),
                "{what}: the {confidence} interval covered n in {covered} trials; \
                 Binomial({TRIALS}, {confidence}) accepts [{covered_lo}, {covered_hi}]"
            );
            let ratio = (t - 1.0) * var / (model_sd * model_sd);
            assert!(
                (chi_lo..=chi_hi).contains(&ratio),
                "{what}: (T - 1) s^2 / sd^2 = {ratio:.1}, chi-squared({}) accepts [{chi_lo:.1}, \
                 {chi_hi:.1}] (interval {:.3} times the spread)",
                TRIALS - 1,
                model_sd / s
            );
            let r = g.key_bit_probability();
            let second_order = g.set_bits_variance(n as f64)
                / (2.0 * (m * (1.0 - g.expected_fill(n as f64))).powi(2) * -(-r).ln_1p());
            let bound = z_alpha * s / t.sqrt() + second_order;
            assert!(
                (mean - n as f64).abs() <= bound,
                "{what}: |mean - n| = {:.3} > {bound:.3} (z {z_alpha:.2} x standard error {:.3} \
                 + second-order bias {second_order:.3})",
                (mean - n as f64).abs(),
                s / t.sqrt()
            );
        }
    }
    each_layout!(check);
}

/// At small counts the interval is conservative rather than short: for each layout and n = 1, 3,
/// 10, 30, 100 and 300 keys in a filter sized for 2,000 at 1%, over TRIALS independently keyed
/// filters the 95% interval covers n at least as often as the one-sided exact binomial test of
/// coverage 0.95 allows (alpha = 1e-3 / 18 each; family false-alarm rate 1e-3). Without the floor
/// `ceil(X / k)` on both ends and the continuity correction, one collision of two probes among 10
/// keys (an 11% event at k = 7 in 19,200 bits) left the true count outside: 1,731 of 2,000
/// covered for the flat layout, 1,741 for the split-block one, against at least 1,860.
#[test]
fn the_interval_is_conservative_at_small_counts() {
    fn check<F: Bytes>(name: &str) {
        let counts = [1u64, 3, 10, 30, 100, 300];
        let alpha = COVERAGE_FAMILY_ALPHA / (3 * counts.len()) as f64;
        // One-sided: the lower end of the two-sided region at twice the rate.
        let (at_least, _) = acceptance(TRIALS, 0.95, 2.0 * alpha);
        for n in counts {
            let mut covered = 0;
            for t in 0..TRIALS {
                let f = filled::<F>(2_000, 0.01, 0x5A11_0000 + t, n);
                let stat = FillStat::from_bytes(f.geometry(), &f.bytes()).unwrap();
                let (lo, hi) = stat.count_interval(0.95).unwrap();
                covered += u64::from(lo <= n as f64 && n as f64 <= hi);
            }
            assert!(
                covered >= at_least,
                "{name}, n = {n}: the 95% interval covered n in {covered} of {TRIALS} filters; \
                 coverage 0.95 gives at least {at_least} (one-sided, alpha {alpha:.1e})"
            );
        }
    }
    each_layout!(check);
}

/// The round trip at its size: 10^6 keys in a filter for 10^6 at 1%. The 99.99% interval
/// contains 10^6 for each layout (false-alarm rate 1e-4 each, 3e-4 for the test).
#[test]
fn a_million_keys_lie_in_their_interval() {
    fn check<F: Bytes>(name: &str) {
        let n = 1_000_000u64;
        let f = filled::<F>(n, 0.01, 0x1E6, n);
        let stat = FillStat::from_bytes(f.geometry(), &f.bytes()).unwrap();
        let (lo, hi) = stat.count_interval(0.9999).unwrap();
        assert!(
            lo <= n as f64 && n as f64 <= hi,
            "{name}: {n} keys, {} of {} bits set: estimate {:.1}, 99.99% interval \
             [{lo:.1}, {hi:.1}]",
            stat.set_bits,
            stat.bits(),
            stat.estimated_count()
        );
    }
    each_layout!(check);
}

/// The streamed figures equal the whole array's, bit for bit: `set_bits` is the filter's own
/// count and `implied_fpr` is `Geometry::fpr_given_bytes` (and, for the flat and blocked layouts,
/// the filter's `fpr_given_bits`) for one whole chunk, one unit at a time, 3 and 7 units at a
/// time, and 20 seeded random chunkings. Deterministic.
#[test]
fn the_implied_rate_is_bit_identical_however_the_bytes_are_chunked() {
    fn check<F: Bytes>(name: &str) {
        // 30,000 keys in a filter for 20,000 at 1%: blocks of very different loads, so a sum in
        // another order would round differently.
        let f = filled::<F>(20_000, 0.01, 0xC4_0000, 30_000);
        let (g, bytes) = (f.geometry(), f.bytes());
        let unit = match g {
            Geometry::Flat { .. } => 8,
            Geometry::Blocked { block_bits, .. } => block_bits as usize / 8,
            Geometry::SplitBlock {
                words, word_bits, ..
            } => (words * word_bits) as usize / 8,
        };
        let expected = g.fpr_given_bytes(&bytes);
        let own = f.fpr_given_bits();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(0xC4);
        let mut chunkings: Vec<(String, Vec<usize>)> = vec![
            ("whole".into(), vec![bytes.len()]),
            ("1 unit".into(), vec![unit; bytes.len() / unit]),
        ];
        for units in [3, 7] {
            let mut sizes = vec![units * unit; bytes.len() / (units * unit)];
            sizes.push(bytes.len() % (units * unit));
            chunkings.push((format!("{units} units"), sizes));
        }
        for c in 0..20 {
            let mut sizes = Vec::new();
            let mut left = bytes.len() / unit;
            while left > 0 {
                let take = rng.random_range(1..=left.min(97));
                sizes.push(take * unit);
                left -= take;
            }
            chunkings.push((format!("random {c}"), sizes));
        }
        for (what, sizes) in chunkings {
            let mut counter = FillCounter::new(g);
            let mut at = 0;
            for size in sizes {
                counter.feed(&bytes[at..at + size]).unwrap();
                at += size;
            }
            let stat = counter.finish().unwrap();
            assert_eq!(stat.set_bits, f.set_bits(), "{name}, {what}");
            assert_eq!(stat.source, RateSource::Bytes);
            assert_eq!(
                stat.implied_fpr.to_bits(),
                expected.to_bits(),
                "{name}, {what}: streamed {:e}, fpr_given_bytes {expected:e}",
                stat.implied_fpr
            );
            if !matches!(g, Geometry::SplitBlock { .. }) {
                assert_eq!(stat.implied_fpr.to_bits(), own.to_bits(), "{name}, {what}");
            }
        }
        // The plain Swamidass-Baldi figure is the filter's own `estimated_len`.
        let stat = FillStat::from_bytes(g, &bytes).unwrap();
        assert_eq!(
            stat.swamidass_baldi().to_bits(),
            f.estimated_len().to_bits(),
            "{name}"
        );
    }
    each_layout!(check);
}

/// From the set-bit count alone, the flat layout's implied rate is the bytes' rate bit for bit;
/// the other layouts give the layout theory at the estimated count and say so.
#[test]
fn from_set_bits_is_exact_for_the_flat_layout_and_the_theory_for_the_others() {
    fn check<F: Bytes>(name: &str) {
        let f = filled::<F>(10_000, 0.01, 0x5E7, 10_000);
        let g = f.geometry();
        let from_bytes = FillStat::from_bytes(g, &f.bytes()).unwrap();
        let from_count = FillStat::from_set_bits(g, f.set_bits()).unwrap();
        assert_eq!(from_count.source, RateSource::SetBitCount);
        assert_eq!(from_count.estimated_count(), from_bytes.estimated_count());
        assert_eq!(
            from_count.count_interval(0.9).unwrap(),
            from_bytes.count_interval(0.9).unwrap()
        );
        if matches!(g, Geometry::Flat { .. }) {
            assert_eq!(
                from_count.implied_fpr.to_bits(),
                from_bytes.implied_fpr.to_bits(),
                "{name}"
            );
        } else {
            let n = from_count.estimated_count().round() as u64;
            assert_eq!(from_count.implied_fpr, g.fpr(n), "{name}");
        }
    }
    each_layout!(check);
}

/// keys_to_rate against an in-memory twin: a filter for 10,000 keys at 1% holding 3,000 is
/// asked how many more keys reach 1%; a fresh filter of the same type and size given the
/// estimate plus that many keys has its theory `fpr_theory` at or past 1%, and one key fewer
/// below it. A filter holding 15,000 (past its design) needs 0 more. keys_to_fill likewise: the
/// expected fill at the estimate plus the answer is the fill asked for. Deterministic.
#[test]
fn keys_to_rate_and_fill_reach_the_twin_rate_and_fill() {
    fn check<F: Bytes>(name: &str) {
        let p = 0.01;
        let f = filled::<F>(10_000, p, 0x70_0001, 3_000);
        let stat = FillStat::from_bytes(f.geometry(), &f.bytes()).unwrap();
        let more = stat.keys_to_rate(p);
        let total = (stat.estimated_count() + more).round() as u64;
        assert!(more > 0.0 && (total as f64 - (stat.estimated_count() + more)).abs() < 1e-6);
        let twin = filled::<F>(10_000, p, 0x70_0002, total);
        let (at, before) = (twin.fpr_theory(total), twin.fpr_theory(total - 1));
        assert!(
            at >= p && before < p,
            "{name}: estimate {:.1} + {more:.1} = {total} keys; twin theory {at:e} there, \
             {before:e} one key before, target {p}",
            stat.estimated_count()
        );
        for target in [0.3, 0.5, 0.9] {
            let more = stat.keys_to_fill(target);
            let reached = f.geometry().expected_fill(stat.estimated_count() + more);
            assert!(
                (reached / target - 1.0).abs() < 1e-12,
                "{name}: fill {target}: {more} more keys give {reached}"
            );
        }
        let full = filled::<F>(10_000, p, 0x70_0003, 15_000);
        let stat = FillStat::from_bytes(full.geometry(), &full.bytes()).unwrap();
        assert_eq!(stat.keys_to_rate(p), 0.0, "{name}");
        assert_eq!(stat.keys_to_fill(stat.fill() / 2.0), 0.0, "{name}");
    }
    each_layout!(check);
}

/// No bit set: no key, exactly. Every bit set: an infinite estimate with a finite lower bound
/// (no fewer keys than m / k), a rate of 1 and nothing left to reach.
#[test]
fn empty_and_full_filters() {
    fn check<F: Bytes>(name: &str) {
        let f = F::sized_for(5_000, 0.01).unwrap();
        let g = f.geometry();
        let empty = FillStat::from_bytes(g, &f.bytes()).unwrap();
        assert_eq!(empty.set_bits, 0);
        assert_eq!(empty.implied_fpr, 0.0);
        assert_eq!(
            empty.estimated_count().to_bits(),
            0.0f64.to_bits(),
            "{name}"
        );
        assert_eq!(empty.count_sd(), 0.0);
        assert_eq!(empty.count_interval(0.99).unwrap(), (0.0, 0.0), "{name}");
        assert!(empty.keys_to_rate(0.01) > 1_000.0);

        let ones = vec![0xFFu8; f.bytes().len()];
        let full = FillStat::from_bytes(g, &ones).unwrap();
        assert_eq!(full.set_bits, g.bits());
        assert_eq!(full.implied_fpr, 1.0);
        assert_eq!(full.estimated_count(), f64::INFINITY);
        assert_eq!(full.swamidass_baldi(), f64::INFINITY);
        assert_eq!(full.count_sd(), f64::INFINITY);
        let (lo, hi) = full.count_interval(0.95).unwrap();
        let at_least = (g.bits() as f64 / f64::from(g.hashes())).ceil();
        assert!(
            lo.is_finite() && lo >= at_least && hi == f64::INFINITY,
            "{name}: [{lo}, {hi}]"
        );
        assert_eq!(full.keys_to_rate(0.5), 0.0);
        assert_eq!(full.keys_to_fill(0.99), 0.0);
        assert_eq!(
            FillStat::from_set_bits(g, g.bits()).unwrap().implied_fpr,
            1.0
        );
    }
    each_layout!(check);
}

/// The figures stay finite and consistent at production sizes (no allocation: from the count):
/// a 10-billion-key split-block filter (375M blocks) and a 2^36-bit flat one.
#[test]
fn large_filters_have_finite_intervals_around_the_count() {
    let cases = [
        (
            Geometry::SplitBlock {
                blocks: 375_000_000,
                words: 8,
                word_bits: 32,
            },
            1e10,
        ),
        (
            Geometry::Flat {
                bits: 1 << 36,
                hashes: 7,
            },
            7e9,
        ),
        (
            Geometry::Blocked {
                blocks: 1 << 27,
                block_bits: 512,
                hashes: 7,
            },
            7e9,
        ),
    ];
    for (g, n) in cases {
        let x = (g.bits() as f64 * g.expected_fill(n)).round() as u64;
        let stat = FillStat::from_set_bits(g, x).unwrap();
        let (lo, hi) = stat.count_interval(0.95).unwrap();
        let sd = stat.count_sd();
        assert!(
            sd > 0.0 && sd < 1e-4 * n && lo < n && n < hi,
            "{g:?}, n = {n}: estimate {} sd {sd} interval [{lo}, {hi}]",
            stat.estimated_count()
        );
        assert!(stat.implied_fpr > 0.0 && stat.implied_fpr < 1.0);
    }
}

fn out_of_range(e: BloomError, what: &str, mentions: &[&str]) {
    let msg = e.to_string();
    match &e {
        BloomError::OutOfRange { what: w, .. } => assert_eq!(*w, what, "{msg}"),
        other => panic!("expected OutOfRange({what}), got {other:?}"),
    }
    for m in mentions {
        assert!(msg.contains(m), "{msg:?} should mention {m:?}");
    }
}

/// A confidence outside (0, 1) and more set bits than the geometry has are errors naming the
/// value and the range. Rates and fills outside (0, 1) have exact answers (nothing to add, never
/// reached), and NaN gives NaN.
#[test]
fn bad_confidence_and_set_bits_are_named_errors_and_rates_and_fills_are_total() {
    let g = Geometry::Flat {
        bits: 6400,
        hashes: 4,
    };
    let stat = FillStat::from_set_bits(g, 1000).unwrap();
    for c in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        let e = stat.count_interval(c).unwrap_err();
        out_of_range(e, "confidence", &["confidence", "(0, 1)"]);
    }
    let e = FillStat::from_set_bits(g, 6401).unwrap_err();
    out_of_range(e, "set-bit count", &["6401", "0..=6400"]);

    for (x, keys) in [
        (0.0, 0.0),
        (-0.1, 0.0),
        (1.0, f64::INFINITY),
        (2.0, f64::INFINITY),
    ] {
        assert_eq!(stat.keys_to_rate(x), keys, "rate {x}");
        assert_eq!(stat.keys_to_fill(x), keys, "fill {x}");
    }
    assert!(stat.keys_to_rate(f64::NAN).is_nan());
    assert!(stat.keys_to_fill(f64::NAN).is_nan());
    // The largest rate below 1 is reached at a finite count.
    assert!(stat.keys_to_rate(1.0 - f64::EPSILON / 2.0).is_finite());
}

/// A chunk that is not whole units, bytes past the end, and too few bytes are errors naming the
/// length and the rule; a rejected chunk counts nothing, so the counter goes on correctly.
#[test]
fn bad_chunks_and_lengths_are_named_errors() {
    let blocked = Geometry::Blocked {
        blocks: 4,
        block_bits: 512,
        hashes: 7,
    };
    let split = Geometry::SplitBlock {
        blocks: 4,
        words: 8,
        word_bits: 32,
    };
    let flat = Geometry::Flat {
        bits: 256,
        hashes: 3,
    };
    for (g, bad, unit) in [
        (blocked, 63, "64-byte"),
        (split, 16, "32-byte"),
        (flat, 5, "8-byte"),
    ] {
        let bytes: Vec<u8> = (0..g.bits() / 8).map(|i| (i * 37 % 256) as u8).collect();
        let mut counter = FillCounter::new(g);
        let e = counter.feed(&bytes[..bad]).unwrap_err();
        out_of_range(e, "chunk length", &[&format!("{bad} bytes"), unit]);
        assert_eq!(counter.bytes_fed(), 0);
        counter.feed(&bytes).unwrap();
        let e = counter.feed(&bytes[..unit_len(g)]).unwrap_err();
        out_of_range(
            e,
            "filter bytes",
            &[&(bytes.len() + unit_len(g)).to_string()],
        );
        let stat = counter.finish().unwrap();
        assert_eq!(stat, FillStat::from_bytes(g, &bytes).unwrap());
        assert_eq!(
            stat.implied_fpr.to_bits(),
            g.fpr_given_bytes(&bytes).to_bits()
        );

        let short = &bytes[..bytes.len() - unit_len(g)];
        let e = FillStat::from_bytes(g, short).unwrap_err();
        out_of_range(
            e,
            "filter bytes",
            &[&short.len().to_string(), &bytes.len().to_string()],
        );
    }
    // A flat array of 72 bits: the last chunk may end mid-word, at the array's end only.
    let odd = Geometry::Flat {
        bits: 72,
        hashes: 2,
    };
    let mut counter = FillCounter::new(odd);
    counter.feed(&[0xFF; 8]).unwrap();
    counter.feed(&[0x01]).unwrap();
    assert_eq!(counter.finish().unwrap().set_bits, 65);
}

fn unit_len(g: Geometry) -> usize {
    match g {
        Geometry::Flat { .. } => 8,
        Geometry::Blocked { block_bits, .. } => block_bits as usize / 8,
        Geometry::SplitBlock {
            words, word_bits, ..
        } => (words * word_bits) as usize / 8,
    }
}

#[test]
fn geometries_without_a_byte_array_are_named_errors() {
    for g in [
        Geometry::Flat { bits: 0, hashes: 3 },
        Geometry::Flat {
            bits: 64,
            hashes: 0,
        },
        Geometry::Flat {
            bits: 63,
            hashes: 3,
        },
        Geometry::Blocked {
            blocks: 2,
            block_bits: 12,
            hashes: 3,
        },
        Geometry::Blocked {
            blocks: u64::MAX,
            block_bits: 512,
            hashes: 3,
        },
        Geometry::SplitBlock {
            blocks: 4,
            words: 8,
            word_bits: 0,
        },
        Geometry::SplitBlock {
            blocks: 0,
            words: 8,
            word_bits: 32,
        },
    ] {
        let mut counter = FillCounter::new(g);
        let e = counter.feed(&[0; 64]).unwrap_err();
        out_of_range(e, "filter geometry", &[&format!("{g:?}")]);
        out_of_range(counter.finish().unwrap_err(), "filter geometry", &[]);
        out_of_range(
            FillStat::from_set_bits(g, 0).unwrap_err(),
            "filter geometry",
            &[],
        );
    }
}
