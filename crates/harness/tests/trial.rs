//! Trials: intervals consistent with their counts, an ideal random filter as a control, no false
//! negatives allowed.

use std::collections::HashSet;

use bloomlab_filters::{Digest, Filter, Geometry, HashStrategy, Layout, Params, Xxh3};
use bloomlab_harness::HarnessError;
use bloomlab_harness::bloom::trial::{self, Sampling, TrialSpec};
use bloomlab_harness::keys::{KeySet, KeySetKind};
use bloomlab_harness::stats::clopper_pearson;
use bloomlab_harness::subject::control;

/// An ideal random filter: a member is always found; a non-member is reported present by a
/// seeded coin with probability exactly `p`, fixed per key (so asking twice gives one answer).
struct IdealRandom {
    members: HashSet<u64>,
    p: f64,
    seed: u64,
    bits: u64,
    hashes: u32,
    /// When set, the filter "forgets" members, to test the false-negative check.
    forget: bool,
}

impl IdealRandom {
    fn new(n: u64, p: f64, seed: u64) -> Self {
        let params = Params::optimal(n, p).unwrap();
        Self {
            members: HashSet::new(),
            p,
            seed,
            bits: params.bits,
            hashes: params.hashes,
            forget: false,
        }
    }
}

fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Filter for IdealRandom {
    fn name(&self) -> String {
        "ideal-random".into()
    }
    fn digest(&self, bytes: &[u8]) -> Digest {
        Xxh3::digest(bytes)
    }
    fn insert_digest(&mut self, d: Digest) {
        if !self.forget {
            self.members.insert(d.h1);
        }
    }
    fn contains_digest(&self, d: Digest) -> bool {
        let coin = (mix64(d.h1 ^ self.seed) >> 11) as f64 / (1u64 << 53) as f64;
        self.members.contains(&d.h1) || coin < self.p
    }
    fn bits(&self) -> u64 {
        self.bits
    }
    fn hashes(&self) -> u32 {
        self.hashes
    }
    fn memory_bytes(&self) -> usize {
        self.members.capacity() * 8
    }
    fn set_bits(&self) -> u64 {
        0
    }
    fn geometry(&self) -> Geometry {
        Geometry::Flat {
            bits: self.bits,
            hashes: self.hashes,
        }
    }
    /// Its rate is that of a classic filter of its size.
    fn layout(&self) -> Layout {
        Layout::Classic
    }
}

#[test]
fn ideal_random_filter_rate_lies_inside_the_reported_interval() {
    // Confidence 1 - 1e-6: each assertion below is a false alarm with probability about 1e-6
    // (Clopper-Pearson covers at least its level; the adaptive stop perturbs that only slightly).
    let confidence = 1.0 - 1e-6;
    for (kind, p, n, seed) in [
        (KeySetKind::RandomU64, 0.01, 10_000u64, 11u64),
        (KeySetKind::Article, 0.05, 20_000, 12),
        (KeySetKind::Url, 0.002, 5_000, 13),
    ] {
        let keys = KeySet::new(kind.clone(), seed).unwrap();
        let sampling = Sampling {
            confidence,
            precision: 0.1,
            seed,
            ..Sampling::default()
        };
        let spec = TrialSpec {
            filter: control("ideal-random").unwrap(),
            n,
            p,
            overfill: 1.0,
        };
        let (row, _) =
            trial::run_with(&spec, &keys, &sampling, || Ok(IdealRandom::new(n, p, seed))).unwrap();
        assert!(
            row.ci_low <= p && p <= row.ci_high,
            "ideal filter, key set {kind}, n={n}, p={p}, seed={seed}: observed {} of {} = {}, \
             interval [{}, {}] at confidence {confidence} misses the true rate",
            row.false_positives,
            row.queries,
            row.fpr,
            row.ci_low,
            row.ci_high
        );
        assert!(!row.capped, "{kind}: capped at {} queries", row.queries);
    }
}

#[test]
fn interval_contains_its_own_rate_and_matches_an_independent_computation() {
    let keys = KeySet::new(KeySetKind::Article, 5).unwrap();
    for (filter, p, conf) in [
        ("classic/xxh3/km/flat", 0.01, 0.95),
        ("blocked512/xxh3", 0.05, 0.99),
        ("sbbf/xxh64", 0.02, 0.9),
        ("textbook-fnv1a-i32", 0.01, 0.95),
    ] {
        let sampling = Sampling {
            confidence: conf,
            seed: 5,
            ..Sampling::default()
        };
        let spec = TrialSpec {
            filter: filter.parse().unwrap(),
            n: 20_000,
            p,
            overfill: 1.0,
        };
        let row = trial::run(&spec, &keys, &sampling).unwrap().row;
        let (lo, hi) = clopper_pearson(row.false_positives, row.queries, conf);
        assert_eq!((row.ci_low, row.ci_high), (lo, hi), "{filter}");
        assert!(row.ci_low <= row.fpr && row.fpr <= row.ci_high, "{row:?}");
        assert!(
            row.wilson_low <= row.fpr && row.fpr <= row.wilson_high,
            "{row:?}"
        );
        assert_eq!(row.fpr, row.false_positives as f64 / row.queries as f64);
        // Not capped, so the precision target was met: relative half-width at most 0.1.
        assert!(!row.capped, "{row:?}");
        let rel = (row.ci_high - row.ci_low) / 2.0 / row.fpr;
        assert!(rel <= 0.1, "{filter}: relative half-width {rel} > 0.1");
        assert_eq!(row.n_inserted, 20_000);
        assert_eq!(row.bits_per_key, row.bits as f64 / 20_000.0);
        assert_eq!(
            row.theory_in_interval,
            lo <= row.fpr_theory && row.fpr_theory <= hi
        );
    }
}

#[test]
fn query_cap_is_recorded() {
    let keys = KeySet::new(KeySetKind::RandomU64, 9).unwrap();
    let sampling = Sampling {
        max_queries: 5_000,
        ..Sampling::default()
    };
    let spec = TrialSpec {
        filter: "classic/xxh3/km/flat".parse().unwrap(),
        n: 1_000,
        p: 1e-4,
        overfill: 1.0,
    };
    let row = trial::run(&spec, &keys, &sampling).unwrap().row;
    assert_eq!(row.queries, 5_000);
    assert!(row.capped, "{row:?}");
}

#[test]
fn overfill_inserts_rounded_multiple_of_n() {
    let keys = KeySet::new(KeySetKind::RandomU64, 9).unwrap();
    let spec = TrialSpec {
        filter: "sbbf/xxh3".parse().unwrap(),
        n: 1_001,
        p: 0.05,
        overfill: 2.5,
    };
    let row = trial::run(&spec, &keys, &Sampling::default()).unwrap().row;
    assert_eq!(row.n_inserted, 2_503); // round(2502.5) rounds half away from zero
    assert!(row.fpr_theory > 0.05, "{row:?}");
}

#[test]
fn a_forgotten_member_is_a_false_negative_error_naming_everything() {
    let keys = KeySet::new(KeySetKind::Hex, 4).unwrap();
    let spec = TrialSpec {
        filter: control("forgetful").unwrap(),
        n: 100,
        p: 1e-9,
        overfill: 1.0,
    };
    let sampling = Sampling {
        seed: 4,
        ..Sampling::default()
    };
    let err = trial::run_with(&spec, &keys, &sampling, || {
        let mut f = IdealRandom::new(100, 1e-9, 4);
        f.forget = true;
        Ok(f)
    })
    .map(|_| ())
    .unwrap_err();
    assert!(
        matches!(
            &err,
            HarnessError::FalseNegative {
                index: 0,
                n: 100,
                seed: 4,
                ..
            }
        ),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("forgetful") && msg.contains("hex") && msg.contains("#0"),
        "{msg}"
    );
}
