//! The scale run's code path past 2^32 bits, at a size CI's memory holds: filters of 2^33 bits
//! (1 GiB each) holding 2 * 10^7 URL-shaped keys, filled from two threads. Every member is found,
//! and the measured rate agrees with the layout's theory, including the hash-width term that
//! makes Guava's legacy 32-bit strategy use only the first 2^31 bits.
//!
//! Each interval is exact (Clopper-Pearson) at confidence 1 - 1e-6, so a correct filter fails a
//! "theory in interval" assertion with probability at most 1e-6 (3e-6 for the file's three).

use std::sync::atomic::AtomicBool;

use bloomlab_filters::Params;
use bloomlab_harness::KeySetKind;
use bloomlab_scale::{ScaleConfig, ScaleRow, ScaleStatus, run};

const CONFIDENCE: f64 = 1.0 - 1e-6;

fn config(filter: &str, n: u64, geometry: Option<Params>) -> ScaleConfig {
    ScaleConfig {
        filter: filter.into(),
        n,
        p: 0.01,
        geometry,
        keys: KeySetKind::Url,
        seed: 7,
        threads: 2,
        check_members: n,
        precision: 0.1,
        confidence: CONFIDENCE,
        max_queries: 100_000_000,
        query_offset: 0,
        huge_pages: true,
        memory_limit: None,
        revision: "test".into(),
        command: "tests/scale.rs".into(),
    }
}

fn scale(config: &ScaleConfig) -> ScaleRow {
    run(config, &AtomicBool::new(false), &|_| {}).expect("settings are valid")
}

/// 2^33 bits, k probes, 2 * 10^7 keys, at most `max_queries` non-members.
fn big(filter: &str, hashes: u32, max_queries: u64) -> ScaleRow {
    let mut c = config(
        filter,
        20_000_000,
        Some(Params {
            bits: 1 << 33,
            hashes,
        }),
    );
    c.max_queries = max_queries;
    let row = scale(&c);
    assert_eq!(row.status, ScaleStatus::Done, "{row:?}");
    assert_eq!(row.bits, 1 << 33);
    assert_eq!(row.members_checked, 20_000_000);
    assert_eq!(row.false_negatives, 0, "{row:?}");
    row
}

#[test]
fn a_filter_of_2_pow_33_bits_finds_every_member_and_matches_its_theory() {
    // One probe per key keeps the rate (2.3e-3) measurable in a few million queries.
    let row = big("classic/xxh3/km/flat", 1, 100_000_000);
    assert!(row.theory_in_interval, "{row:?}");
    // Uniform positions: nothing to add for the hash width.
    assert_eq!(row.fpr_theory, row.fpr_theory_uniform);
    assert!(row.precision <= 0.1, "{row:?}");
}

#[test]
fn the_32_bit_strategy_uses_only_2_pow_31_bits_and_its_theory_says_so() {
    let row = big("classic/murmur3/mitz32/flat", 1, 100_000_000);
    assert!(row.theory_in_interval, "{row:?}");
    // Four times the keys per used bit: the rate is about 4 times the uniform theory, which the
    // interval excludes.
    assert!(row.fpr_theory > 3.5 * row.fpr_theory_uniform, "{row:?}");
    assert!(row.ci_low > row.fpr_theory_uniform, "{row:?}");
    // A quarter of the array is all it ever sets.
    let used = 1.0 - (-2e7 / 2f64.powi(31)).exp();
    assert!(
        (row.fill_ratio / (used / 4.0) - 1.0).abs() < 0.01,
        "{row:?}"
    );
}

#[test]
fn split_blocks_past_2_pow_32_bits_match_their_theory() {
    // 0.6 keys per block: a rate near 1e-12, so this checks members past 2^32 bits, and that
    // a million non-members find (almost) nothing, as the theory says.
    let row = big("sbbf/xxh3", 8, 1_000_000);
    assert!(row.theory_in_interval, "{row:?}");
}

#[test]
fn a_query_offset_queries_the_keys_past_it_and_no_others() {
    // The same filter (same seed), queried on keys n..n+2^21 at once and as two halves, the
    // second through the offset: the false positives add up exactly. A tiny precision target
    // keeps every run querying up to its maximum.
    let n = 100_000;
    let half = 1u64 << 20;
    let run_with = |offset: u64, max_queries: u64| {
        let mut c = config("classic/xxh3/km/flat", n, None);
        c.precision = 1e-9;
        c.max_queries = max_queries;
        c.query_offset = offset;
        let row = scale(&c);
        assert_eq!(row.status, ScaleStatus::Done, "{row:?}");
        assert_eq!((row.queries, row.query_offset), (max_queries, offset));
        row.false_positives
    };
    let whole = run_with(0, 2 * half);
    let (first, second) = (run_with(0, half), run_with(half, half));
    assert!(first > 0 && second > 0, "{first} {second}");
    assert_eq!(first + second, whole);
}

#[test]
fn a_key_file_is_queried_up_to_its_end_and_an_offset_past_it_is_refused() {
    let path = std::env::temp_dir().join(format!("bloomlab-scale-keys-{}.txt", std::process::id()));
    let lines: String = (0..1000).map(|i| format!("key-{i}\n")).collect();
    std::fs::write(&path, lines).expect("temp dir is writable");
    let mut c = config("classic/xxh3/km/flat", 100, None);
    c.keys = KeySetKind::File(path.clone());
    c.precision = 1e-9;
    c.query_offset = 500;
    // 1000 keys: members 0..100, queries from key 600 to the end of the file.
    let row = scale(&c);
    assert_eq!(
        (row.status, row.queries),
        (ScaleStatus::Done, 400),
        "{row:?}"
    );
    c.query_offset = 900;
    let e = run(&c, &AtomicBool::new(false), &|_| {})
        .unwrap_err()
        .to_string();
    std::fs::remove_file(&path).ok();
    assert!(
        e.contains("query-offset") && e.contains("900") && e.contains("below 900"),
        "{e}"
    );
}

#[test]
fn sizes_a_variant_cannot_address_and_memory_it_lacks_are_refused_before_allocating() {
    // The textbook port's bit count is a Java int: 10^10 keys at 1% need 9.6e10 bits.
    let row = scale(&config("textbook-fnv1a-i32", 10_000_000_000, None));
    assert_eq!(row.status, ScaleStatus::Refused);
    assert!(row.note.contains("2147483647"), "{}", row.note);
    assert_eq!(row.peak_rss_bytes, 0);
    // 12 GB asked of a 1 MB budget: the error names both figures.
    let mut c = config("sbbf/xxh3", 10_000_000_000, None);
    c.memory_limit = Some(1_000_000);
    let row = scale(&c);
    assert_eq!(row.status, ScaleStatus::Refused);
    assert!(
        row.note.contains("1000000") && row.note.contains("11981"),
        "{}",
        row.note
    );
    // A layout the scale run does not fill concurrently says which ones it does.
    let row = scale(&config("counting4/xxh3/km", 1000, None));
    assert_eq!(row.status, ScaleStatus::Refused);
    assert!(row.note.contains("sbbf/HASH"), "{}", row.note);
}

#[test]
fn bad_settings_and_unknown_names_are_errors() {
    let stop = AtomicBool::new(false);
    for (c, what) in [
        (config("sbbf/xxh3", 0, None), "n = 0"),
        (
            ScaleConfig {
                p: 1.0,
                ..config("sbbf/xxh3", 10, None)
            },
            "p = 1",
        ),
        (
            ScaleConfig {
                threads: 0,
                ..config("sbbf/xxh3", 10, None)
            },
            "threads = 0",
        ),
        (
            ScaleConfig {
                query_offset: u64::MAX - 5,
                ..config("sbbf/xxh3", 10, None)
            },
            "query-offset",
        ),
    ] {
        let e = run(&c, &stop, &|_| {}).unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
    }
    let e = run(&config("sbbf/nope", 10, None), &stop, &|_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("sbbf/nope"), "{e}");
}
