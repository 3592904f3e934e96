//! Contracts of the sketches that need no statistics: Count-Min never undercounts, merging equals
//! inserting the union, the peer sees our hash, bad input is an error naming the value.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use bloomlab_filters::{Fnv1a, HashStrategy, Murmur3, Xxh3};
use bloomlab_sketches::cardinality::{StrategyHasher, key_bytes};
use bloomlab_sketches::{CountMin, HyperLogLog, SketchError, build_ours};
use proptest::prelude::*;

fn stream() -> impl Strategy<Value = Vec<(u16, u8)>> {
    prop::collection::vec((any::<u16>(), 1u8..20), 0..400)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every item's estimate is at least its true count, for both update rules, on a table small
    /// enough that collisions are everywhere (width 7, depth 3).
    #[test]
    fn count_min_never_undercounts(items in stream(), conservative in any::<bool>()) {
        let mut cms = CountMin::<Xxh3>::with_dimensions(7, 3).unwrap();
        if conservative {
            cms = cms.conservative();
        }
        let mut truth: HashMap<u16, u64> = HashMap::new();
        for &(k, c) in &items {
            cms.add(&u32::from(k), u64::from(c));
            *truth.entry(k).or_default() += u64::from(c);
        }
        for (k, &t) in &truth {
            let e = cms.estimate(&u32::from(*k));
            prop_assert!(e >= t, "{}: item {k} true {t} estimated {e}", cms.name());
        }
        prop_assert_eq!(cms.total(), truth.values().sum::<u64>());
    }

    /// Merging two standard Count-Min sketches gives the counters of one fed both streams.
    #[test]
    fn count_min_merge_equals_union_insert(a in stream(), b in stream()) {
        let (mut left, mut right, mut union) = (
            CountMin::<Murmur3>::new(0.05, 0.1).unwrap(),
            CountMin::<Murmur3>::new(0.05, 0.1).unwrap(),
            CountMin::<Murmur3>::new(0.05, 0.1).unwrap(),
        );
        for &(k, c) in &a {
            left.add(&u32::from(k), u64::from(c));
            union.add(&u32::from(k), u64::from(c));
        }
        for &(k, c) in &b {
            right.add(&u32::from(k), u64::from(c));
            union.add(&u32::from(k), u64::from(c));
        }
        left.merge(&right).unwrap();
        prop_assert_eq!(left, union);
    }

    /// Merging two HyperLogLogs gives the registers (so the estimate) of one fed both streams.
    #[test]
    fn hll_merge_equals_union_insert(
        a in prop::collection::vec(any::<u64>(), 0..2000),
        b in prop::collection::vec(any::<u64>(), 0..2000),
        p in 4u32..=12,
    ) {
        let (mut left, mut right, mut union) = (
            HyperLogLog::<Fnv1a>::new(p).unwrap(),
            HyperLogLog::<Fnv1a>::new(p).unwrap(),
            HyperLogLog::<Fnv1a>::new(p).unwrap(),
        );
        for k in &a {
            left.insert(k);
            union.insert(k);
        }
        for k in &b {
            right.insert(k);
            union.insert(k);
        }
        left.merge(&right).unwrap();
        prop_assert_eq!(left.estimate().to_bits(), union.estimate().to_bits());
        prop_assert_eq!(left, union);
    }

    /// Inserting a key twice changes nothing: the sketch counts distinct keys.
    #[test]
    fn hll_ignores_duplicates(keys in prop::collection::vec(any::<u64>(), 1..500)) {
        let mut once = HyperLogLog::<Xxh3>::new(10).unwrap();
        let mut twice = HyperLogLog::<Xxh3>::new(10).unwrap();
        for k in &keys {
            once.insert(k);
            twice.insert(k);
            twice.insert(k);
        }
        prop_assert_eq!(once, twice);
    }
}

#[test]
fn count_min_uses_the_cormode_muthukrishnan_constants() {
    // e / 0.001 = 2718.28..., ln(1 / 0.01) = 4.605...
    let cms = CountMin::<Xxh3>::new(0.001, 0.01).unwrap();
    assert_eq!((cms.width(), cms.depth()), (2719, 5));
    assert_eq!(cms.memory_bytes(), 2719 * 5 * 8);
    let cms = CountMin::<Xxh3>::new(0.5, 0.9).unwrap();
    assert_eq!((cms.width(), cms.depth()), (6, 1));
}

#[test]
fn conservative_update_is_never_above_the_standard_one() {
    let mut std = CountMin::<Xxh3>::with_dimensions(50, 3).unwrap();
    let mut cu = CountMin::<Xxh3>::with_dimensions(50, 3)
        .unwrap()
        .conservative();
    for i in 0..5000u64 {
        let k = i % 700;
        std.add(&k, 1 + i % 3);
        cu.add(&k, 1 + i % 3);
    }
    let mut strictly_lower = 0;
    for k in 0..700u64 {
        let (s, c) = (std.estimate(&k), cu.estimate(&k));
        assert!(c <= s, "item {k}: conservative {c} above standard {s}");
        strictly_lower += usize::from(c < s);
    }
    assert!(
        strictly_lower > 0,
        "conservative update changed no estimate"
    );
}

#[test]
fn hll_counts_exactly_in_the_small_range_and_clears() {
    let mut h = HyperLogLog::<Murmur3>::new(14).unwrap();
    assert_eq!(h.estimate(), 0.0);
    for i in 0..10u64 {
        h.insert(&i);
    }
    // Ten keys in 16384 registers: linear counting, within a fraction of a key.
    assert!((h.estimate() - 10.0).abs() < 0.5, "{}", h.estimate());
    h.clear();
    assert_eq!(h.estimate(), 0.0);
    assert_eq!((h.registers(), h.memory_bytes()), (16384, 16384));
}

#[test]
fn rank_is_capped_at_65_minus_p() {
    // A hash whose bits after the index are all zero has the largest rank, 65 - p.
    let mut h = HyperLogLog::<Xxh3>::new(4).unwrap();
    h.insert_hash(0);
    let (raw, zeros) = h.raw_estimate();
    assert_eq!(zeros, 15);
    let m = 16.0f64;
    let sum = 15.0 + 1.0 / (1u64 << 61) as f64;
    assert!((raw - 0.673 * m * m / sum).abs() < 1e-9, "{raw}");
}

#[test]
fn peer_hasher_is_our_hash_of_the_key_encoding() {
    for k in [0u64, 1, 42, u64::MAX, 0x0123_4567_89ab_cdef] {
        let xxh3 = StrategyHasher::<Xxh3>::default().hash_one(k);
        assert_eq!(xxh3, Xxh3::digest(&key_bytes(k)).h1, "key {k}");
        let murmur3 = StrategyHasher::<Murmur3>::default().hash_one(k);
        assert_eq!(murmur3, Murmur3::digest(&k.to_le_bytes()).h1, "key {k}");
    }
    // Longer writes fold in 32-byte pieces: still deterministic and byte-sensitive.
    let long = |last: u8| {
        let mut s = StrategyHasher::<Xxh3>::default().build_hasher();
        let mut bytes = [7u8; 100];
        bytes[99] = last;
        s.write(&bytes);
        s.finish()
    };
    assert_eq!(long(1), long(1));
    assert_ne!(long(1), long(2));
}

#[test]
fn bad_input_names_the_value_and_range() {
    for p in [0u32, 3, 19, 64] {
        let e = HyperLogLog::<Xxh3>::new(p).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("HyperLogLog precision p = {p} is invalid: it must be in 4..=18")
        );
        assert!(build_ours("xxh3", p).is_err());
        assert!(bloomlab_sketches::build_peer("murmur3", p).is_err());
    }
    for (eps, delta, what, shown) in [
        (0.0, 0.01, "epsilon", "0"),
        (1.0, 0.01, "epsilon", "1"),
        (f64::NAN, 0.01, "epsilon", "NaN"),
        (-0.1, 0.01, "epsilon", "-0.1"),
        (0.001, 0.0, "delta", "0"),
        (0.001, 1.5, "delta", "1.5"),
        (0.001, f64::INFINITY, "delta", "inf"),
    ] {
        let e = CountMin::<Xxh3>::new(eps, delta).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "Count-Min {what} = {shown} is invalid: it must be a finite number in the open interval (0, 1)"
            )
        );
    }
    let e = CountMin::<Xxh3>::new(1e-12, 0.01).unwrap_err();
    assert!(matches!(e, SketchError::InvalidDimension { .. }), "{e}");
    assert!(e.to_string().contains("width"), "{e}");
    assert!(CountMin::<Xxh3>::with_dimensions(0, 5).is_err());
    assert!(CountMin::<Xxh3>::with_dimensions(5, 0).is_err());
    let e = build_ours("sha1", 14).err().unwrap();
    assert!(
        e.to_string().contains("\"sha1\"") && e.to_string().contains("xxh3"),
        "{e}"
    );
}

#[test]
fn merging_other_shapes_or_hashes_names_both() {
    let mut a = HyperLogLog::<Xxh3>::new(14).unwrap();
    let e = a.merge(&HyperLogLog::<Xxh3>::new(12).unwrap()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot merge hll/xxh3/p14 with hll/xxh3/p12: their precisions differ (register counts 2^p are not the same)"
    );
    let e = a
        .merge(&HyperLogLog::<Fnv1a>::new(14).unwrap())
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("cannot merge hll/xxh3/p14 with hll/fnv1a/p14: their hashes differ"),
        "{e}"
    );

    let mut c = CountMin::<Xxh3>::new(0.001, 0.01).unwrap();
    let e = c
        .merge(&CountMin::<Xxh3>::new(0.01, 0.01).unwrap())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot merge cms/xxh3/2719x5 with cms/xxh3/272x5: their widths or depths differ"
    );
    let e = c
        .merge(&CountMin::<Murmur3>::new(0.001, 0.01).unwrap())
        .unwrap_err();
    assert!(
        e.to_string().contains("cms/murmur3/2719x5") && e.to_string().contains("hashes differ"),
        "{e}"
    );
    let e = c
        .merge(&CountMin::<Xxh3>::new(0.001, 0.01).unwrap().conservative())
        .unwrap_err();
    assert!(e.to_string().contains("cms/xxh3/2719x5/cu"), "{e}");
}

#[test]
fn adapters_agree_on_names_and_estimate_through_the_trait() {
    // Mixed keys: FNV-1a on sequential integers leaves the top bits (the register index) nearly
    // constant, which `fnv1a_on_sequential_keys_fills_few_registers` shows on its own.
    let keys: Vec<u64> = (0..50_000u64)
        .map(|i| bloomlab_filters::hash::fmix64(i ^ 0x5eed))
        .collect();
    for hash in ["xxh3", "murmur3", "fnv1a"] {
        let mut ours = build_ours(hash, 12).unwrap();
        let mut peer = bloomlab_sketches::build_peer(hash, 12).unwrap();
        assert_eq!(ours.name(), format!("hll/{hash}/p12"));
        assert_eq!(peer.name(), format!("peer/hyperloglogplus/{hash}/p12"));
        for chunk in keys.chunks(4096) {
            ours.insert_batch(chunk).unwrap();
            peer.insert_batch(chunk).unwrap();
        }
        // 12 standard errors (1.04 / 64 = 1.6% each): a gross-failure check only; the statistics
        // are the sweep's and the gate's.
        for s in [&mut ours, &mut peer] {
            let e = s.estimate().unwrap();
            assert!((e / 50_000.0 - 1.0).abs() < 0.2, "{}: {e}", s.name());
        }
    }
}

/// FNV-1a's weak high bits (see `bloomlab_filters::Fnv1a`) cost a HyperLogLog dearly on keys that
/// differ only in their low bytes: sequential integers reach few registers, and the estimate is
/// far below the truth where xxh3's is not. Deterministic: fixed keys, no randomness.
#[test]
fn fnv1a_on_sequential_keys_fills_few_registers() {
    let (mut fnv, mut xxh) = (
        HyperLogLog::<Fnv1a>::new(12).unwrap(),
        HyperLogLog::<Xxh3>::new(12).unwrap(),
    );
    for i in 0..50_000u64 {
        fnv.insert(&i);
        xxh.insert(&i);
    }
    let (f, x) = (fnv.estimate(), xxh.estimate());
    assert!(f < 0.6 * 50_000.0, "fnv1a estimate {f}");
    assert!((x / 50_000.0 - 1.0).abs() < 0.2, "xxh3 estimate {x}");
}
