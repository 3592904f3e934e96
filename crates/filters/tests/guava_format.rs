//! `GuavaBloom` against Guava 31.1's own output, and its reader against corrupt input.
//!
//! Exactness: every row of `tests/data/guava_bloom_words.txt` (written by Guava 31.1 through
//! `scripts/java/GuavaVectors.java`) must be reproduced byte for byte by `create` + `put` +
//! `to_bytes`, and read back by `from_bytes`. The wider cross-check against a live JVM is
//! `scripts/guava-crosscheck.sh`.
//!
//! Robustness: the reader is property-tested over random byte strings and over mutations
//! (byte flips, truncations, extensions, header rewrites) of valid files: it must never panic, and
//! whatever it accepts must be exactly a well-formed file (it re-serializes to the same bytes).

use bloomlab_filters::BloomError;
use bloomlab_filters::guava::{
    BytesFunnel, GuavaBloom, GuavaSizing, GuavaStrategy, LongFunnel, Utf8Funnel,
};
use proptest::prelude::*;
use std::io::Read;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex in the vector file"))
        .collect()
}

fn strategy(name: &str) -> GuavaStrategy {
    match name {
        "mitz64" => GuavaStrategy::Murmur128Mitz64,
        "mitz32" => GuavaStrategy::Murmur128Mitz32,
        other => panic!("unknown strategy {other} in the vector file"),
    }
}

#[test]
fn reproduces_guavas_write_to_bytes() {
    let text = include_str!("data/guava_bloom_words.txt");
    let mut rows = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (funnel, strat, n, p, keys, want) =
            (cols[0], cols[1], cols[2], cols[3], cols[4], cols[5]);
        let n: u64 = n.parse().unwrap();
        let p: f64 = p.parse().unwrap();
        let want = unhex(want);
        let s = strategy(strat);
        let got = match funnel {
            "long" => {
                let mut f =
                    GuavaBloom::<LongFunnel>::create_with(n, p, s, GuavaSizing::default()).unwrap();
                for k in keys.split(',') {
                    f.put(&k.parse::<i64>().unwrap());
                }
                let back = GuavaBloom::<LongFunnel>::from_bytes(&want).unwrap();
                for k in keys.split(',') {
                    assert!(back.might_contain(&k.parse::<i64>().unwrap()), "{line}");
                }
                f.to_bytes()
            }
            "string" => {
                let mut f =
                    GuavaBloom::<Utf8Funnel>::create_with(n, p, s, GuavaSizing::default()).unwrap();
                let keys: Vec<String> = keys
                    .split(',')
                    .map(|k| String::from_utf8(unhex(k)).unwrap())
                    .collect();
                for k in &keys {
                    f.put(k);
                }
                let back = GuavaBloom::<Utf8Funnel>::from_bytes(&want).unwrap();
                assert!(keys.iter().all(|k| back.might_contain(k)), "{line}");
                f.to_bytes()
            }
            other => panic!("unknown funnel {other}"),
        };
        assert!(
            got == want,
            "funnel {funnel}, strategy {strat}, n = {n}, p = {p}: our {} bytes differ from \
             Guava's {} bytes (first difference at byte {:?})",
            got.len(),
            want.len(),
            got.iter().zip(&want).position(|(a, b)| a != b)
        );
        rows += 1;
    }
    assert_eq!(rows, 12, "expected 12 vector rows");
}

fn sample(strategy: GuavaStrategy) -> GuavaBloom<LongFunnel> {
    let mut f =
        GuavaBloom::<LongFunnel>::create_with(100, 0.01, strategy, GuavaSizing::default()).unwrap();
    for k in 0..100 {
        f.put(&k);
    }
    f
}

fn corrupt_reason(bytes: &[u8]) -> String {
    match GuavaBloom::<LongFunnel>::from_bytes(bytes) {
        Err(BloomError::Corrupt { format, reason }) => {
            assert_eq!(format, "Guava BloomFilter");
            reason
        }
        other => panic!("{} bytes: want a Corrupt error, got {other:?}", bytes.len()),
    }
}

#[test]
fn reader_names_each_corruption() {
    let good = sample(GuavaStrategy::Murmur128Mitz64).to_bytes();
    // k = 7, 959 bits -> 15 words: 6 + 120 bytes.
    assert_eq!(good.len(), 126);
    let with = |i: usize, b: u8| {
        let mut v = good.clone();
        v[i] = b;
        v
    };
    let with_words = |w: i32| {
        let mut v = good.clone();
        v[2..6].copy_from_slice(&w.to_be_bytes());
        v
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty", vec![], "header alone is 6 bytes"),
        ("3 bytes", good[..3].to_vec(), "truncated: 3 bytes"),
        ("ordinal 2", with(0, 2), "unknown strategy ordinal 2"),
        ("ordinal -1", with(0, 0xff), "unknown strategy ordinal -1"),
        ("k = 0", with(1, 0), "k = 0"),
        ("0 words", with_words(0), "word count 0"),
        ("-1 words", with_words(-1), "word count -1"),
        (
            "absurd words",
            with_words(i32::MAX),
            "promises 2147483647 words",
        ),
        (
            "truncated body",
            good[..good.len() - 1].to_vec(),
            "only 119 bytes follow",
        ),
        (
            "trailing",
            [good.clone(), vec![0, 0]].concat(),
            "2 trailing bytes",
        ),
    ];
    for (what, bytes, want) in cases {
        let reason = corrupt_reason(&bytes);
        assert!(
            reason.contains(want),
            "{what}: reason {reason:?} lacks {want:?}"
        );
    }
}

#[test]
fn stream_reader_stops_after_the_filter_like_guava() {
    let f = sample(GuavaStrategy::Murmur128Mitz32);
    let mut bytes = f.to_bytes();
    let len = bytes.len();
    bytes.extend_from_slice(b"next");
    let mut cursor = std::io::Cursor::new(&bytes);
    let g = GuavaBloom::<LongFunnel>::read_from(&mut cursor).unwrap();
    assert_eq!(
        cursor.position(),
        len as u64,
        "must stop right after the last word"
    );
    assert_eq!(g.to_bytes(), f.to_bytes());
    // A forged word count reads what is there and reports the shortfall (no 16 GiB allocation).
    let mut forged = f.to_bytes();
    forged[2..6].copy_from_slice(&i32::MAX.to_be_bytes());
    let err = GuavaBloom::<LongFunnel>::read_from(&forged[..]).unwrap_err();
    assert!(err.to_string().contains("stream ended after"), "{err}");
}

/// Issue 28, case 8: a whole file is read only as far as its header implies plus one byte, so an
/// endless input is refused at once.
#[test]
fn whole_file_reader_stops_one_byte_past_the_promised_words() {
    let good = sample(GuavaStrategy::Murmur128Mitz64).to_bytes();
    let f = GuavaBloom::<LongFunnel>::read_whole(&good[..]).unwrap();
    assert_eq!(f.to_bytes(), good);
    // An endless run of zeros: k = 0 in the header.
    let err = GuavaBloom::<LongFunnel>::read_whole(std::io::repeat(0)).unwrap_err();
    assert!(err.to_string().contains("k = 0"), "{err}");
    // A valid header and words, then endless bytes: refused after one byte too many.
    let mut counted = Counted(good.as_slice().chain(std::io::repeat(7)), 0);
    let err = GuavaBloom::<LongFunnel>::read_whole(&mut counted).unwrap_err();
    assert!(
        err.to_string()
            .contains("trailing bytes after the 15 words")
            && err.to_string().contains("after byte 126"),
        "{err}"
    );
    assert_eq!(counted.1, 127, "read past the promised words plus one");
}

/// A reader that counts the bytes it hands out.
struct Counted<R>(R, u64);

impl<R: std::io::Read> std::io::Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        self.1 += n as u64;
        Ok(n)
    }
}

#[test]
fn round_trip_keeps_strategy_k_bits_and_answers() {
    for s in [
        GuavaStrategy::Murmur128Mitz32,
        GuavaStrategy::Murmur128Mitz64,
    ] {
        let f = sample(s);
        let g = GuavaBloom::<LongFunnel>::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(
            (g.strategy(), g.hashes(), g.bit_size(), g.bit_count()),
            (f.strategy(), f.hashes(), f.bit_size(), f.bit_count())
        );
        for k in -1000..1000 {
            assert_eq!(g.might_contain(&k), f.might_contain(&k), "key {k}, {s}");
        }
        assert_eq!(g.to_bytes()[0], s.ordinal());
    }
}

#[test]
fn put_reports_whether_bits_changed() {
    let mut f = GuavaBloom::<Utf8Funnel>::create(1000, 0.01).unwrap();
    assert!(f.put("a"));
    assert!(!f.put("a"), "a second put of the same key changes nothing");
}

#[test]
fn expected_fpp_and_element_count_follow_guavas_definitions() {
    let mut f = GuavaBloom::<LongFunnel>::create(1000, 0.01).unwrap();
    assert_eq!(f.expected_fpp(), 0.0);
    assert_eq!(f.approximate_element_count(), Some(0));
    for k in 0..1000 {
        f.put(&k);
    }
    let (m, x, k) = (
        f.bit_size() as f64,
        f.bit_count() as f64,
        f64::from(f.hashes()),
    );
    assert_eq!(f.expected_fpp(), (x / m).powf(k));
    let estimate = -(-x / m).ln_1p() * m / k;
    assert_eq!(f.approximate_element_count(), Some(estimate.round() as u64));
    // 1000 distinct keys: the estimate is within a few percent (Guava's own test uses 1%-ish).
    let est = f.approximate_element_count().unwrap();
    assert!((950..=1050).contains(&est), "estimate {est} for 1000 keys");
    // Saturated: every bit set, where Guava's roundToLong throws.
    let mut full = GuavaBloom::<LongFunnel>::create(1, 0.5).unwrap();
    for k in 0..10_000 {
        full.put(&k);
    }
    assert_eq!(full.bit_count(), full.bit_size());
    assert_eq!(full.expected_fpp(), 1.0);
    assert_eq!(full.approximate_element_count(), None);
}

#[test]
fn put_all_is_guavas_union_and_refuses_incompatible_filters() {
    let make = |keys: std::ops::Range<i64>| {
        let mut f = GuavaBloom::<LongFunnel>::create(1000, 0.01).unwrap();
        keys.for_each(|k| {
            f.put(&k);
        });
        f
    };
    let mut a = make(0..300);
    a.put_all(&make(300..600)).unwrap();
    assert_eq!(a.to_bytes(), make(0..600).to_bytes());

    let reason = |r: Result<(), BloomError>| match r {
        Err(BloomError::Incompatible { reason }) => reason,
        other => panic!("want Incompatible, got {other:?}"),
    };
    let other_k = GuavaBloom::<LongFunnel>::with_params(
        bloomlab_filters::Params::explicit(9600, 6).unwrap(),
        GuavaStrategy::Murmur128Mitz64,
    )
    .unwrap();
    let r = reason(a.put_all(&other_k));
    assert!(r.contains("hash functions (7 != 6)"), "{r}");
    let other_size = GuavaBloom::<LongFunnel>::create(2000, 0.01).unwrap();
    let r = reason(a.put_all(&other_size));
    assert!(r.contains("bit size (9600 != 19200)"), "{r}");
    let other_strategy = GuavaBloom::<LongFunnel>::create_with(
        1000,
        0.01,
        GuavaStrategy::Murmur128Mitz32,
        GuavaSizing::default(),
    )
    .unwrap();
    let r = reason(a.put_all(&other_strategy));
    assert!(
        r.contains("strategy") && r.contains("MURMUR128_MITZ_32"),
        "{r}"
    );
}

#[test]
fn k_rules_differ_only_in_k() {
    let old = GuavaBloom::<BytesFunnel>::create_with(
        1,
        0.01,
        GuavaStrategy::Murmur128Mitz64,
        GuavaSizing::FromBitsPerKey,
    )
    .unwrap();
    let new = GuavaBloom::<BytesFunnel>::create_with(
        1,
        0.01,
        GuavaStrategy::Murmur128Mitz64,
        GuavaSizing::FromFpp,
    )
    .unwrap();
    assert_eq!((old.bit_size(), old.hashes()), (64, 6));
    assert_eq!((new.bit_size(), new.hashes()), (64, 7));
}

/// Valid files of both strategies, various sizes and fills.
fn valid_file() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<bool>(),
        1u64..3000,
        1u32..200,
        prop::collection::vec(any::<i64>(), 0..50),
    )
        .prop_map(|(mitz32, n, p_milli, keys)| {
            let s = if mitz32 {
                GuavaStrategy::Murmur128Mitz32
            } else {
                GuavaStrategy::Murmur128Mitz64
            };
            let p = f64::from(p_milli) / 1000.0;
            let mut f =
                GuavaBloom::<LongFunnel>::create_with(n, p, s, GuavaSizing::default()).unwrap();
            for k in &keys {
                f.put(k);
            }
            f.to_bytes()
        })
}

/// A mutation of a byte string: flip, truncate, extend, or rewrite a header field.
#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Truncate(usize),
    Extend(Vec<u8>),
    Words(i32),
    Ordinal(u8),
    Hashes(u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        prop::collection::vec(any::<u8>(), 1..20).prop_map(Mutation::Extend),
        any::<i32>().prop_map(Mutation::Words),
        any::<u8>().prop_map(Mutation::Ordinal),
        any::<u8>().prop_map(Mutation::Hashes),
    ]
}

fn apply(mut bytes: Vec<u8>, m: &Mutation) -> Vec<u8> {
    match m {
        Mutation::Flip(i, b) => {
            let i = i % bytes.len();
            bytes[i] ^= b;
        }
        Mutation::Truncate(i) => bytes.truncate(i % bytes.len()),
        Mutation::Extend(more) => bytes.extend_from_slice(more),
        // Header rewrites need a header: on shorter (already truncated) input they do nothing.
        Mutation::Words(w) if bytes.len() >= 6 => bytes[2..6].copy_from_slice(&w.to_be_bytes()),
        Mutation::Ordinal(o) => bytes[0] = *o,
        Mutation::Hashes(k) if bytes.len() >= 2 => bytes[1] = *k,
        Mutation::Words(_) | Mutation::Hashes(_) => {}
    }
    bytes
}

/// What a well-formed file is: the reader must accept exactly these.
fn well_formed(bytes: &[u8]) -> bool {
    bytes.len() >= 6 && bytes[0] <= 1 && bytes[1] >= 1 && {
        let w = i32::from_be_bytes(bytes[2..6].try_into().unwrap());
        w >= 1 && bytes.len() as u64 == 6 + 8 * w as u64
    }
}

fn check_reader(bytes: &[u8]) -> Result<(), TestCaseError> {
    match GuavaBloom::<Utf8Funnel>::from_bytes(bytes) {
        Ok(f) => {
            prop_assert!(
                well_formed(bytes),
                "accepted a malformed file: {bytes:02x?}"
            );
            prop_assert_eq!(f.to_bytes(), bytes.to_vec());
        }
        Err(BloomError::Corrupt { .. }) => {
            prop_assert!(
                !well_formed(bytes),
                "rejected a well-formed file: {bytes:02x?}"
            );
        }
        Err(other) => prop_assert!(false, "non-Corrupt error {other:?}"),
    }
    // The bounded whole-file reader accepts exactly what `from_bytes` accepts.
    match (
        GuavaBloom::<Utf8Funnel>::read_whole(bytes),
        GuavaBloom::<Utf8Funnel>::from_bytes(bytes),
    ) {
        (Ok(a), Ok(b)) => prop_assert_eq!(a.to_bytes(), b.to_bytes()),
        (Err(BloomError::Corrupt { .. }), Err(_)) => {}
        (a, b) => prop_assert!(false, "read_whole {a:?} but from_bytes {b:?}"),
    }
    // The stream reader agrees on everything but trailing bytes, which it leaves unread.
    let mut cursor = std::io::Cursor::new(bytes);
    if let Ok(f) = GuavaBloom::<Utf8Funnel>::read_from(&mut cursor) {
        let used = cursor.position() as usize;
        prop_assert_eq!(f.to_bytes(), bytes[..used].to_vec());
    }
    Ok(())
}

proptest! {
    // A fixed seed makes every run check the same inputs; no failure files in the source tree.
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x67_7561_7661),
        ..ProptestConfig::default()
    })]

    #[test]
    fn reader_never_panics_on_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        check_reader(&bytes)?;
    }

    #[test]
    fn reader_never_panics_on_random_headers(
        ordinal in 0u8..3, k in 0u8..4, words in -2i32..6,
        body in prop::collection::vec(any::<u8>(), 0..60),
    ) {
        let mut bytes = vec![ordinal, k];
        bytes.extend_from_slice(&words.to_be_bytes());
        bytes.extend_from_slice(&body);
        check_reader(&bytes)?;
    }

    #[test]
    fn reader_never_panics_on_mutated_files(
        file in valid_file(), mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        check_reader(&file)?;
        let mut bytes = file;
        for m in &mutations {
            if bytes.is_empty() {
                break;
            }
            bytes = apply(bytes, m);
        }
        check_reader(&bytes)?;
    }

    #[test]
    fn no_false_negatives(
        keys in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 1..300),
        mitz32 in any::<bool>(), p_milli in 1u32..500,
    ) {
        let s = if mitz32 { GuavaStrategy::Murmur128Mitz32 } else { GuavaStrategy::Murmur128Mitz64 };
        let p = f64::from(p_milli) / 1000.0;
        let mut f = GuavaBloom::<BytesFunnel>::create_with(
            keys.len() as u64, p, s, GuavaSizing::default()).unwrap();
        for k in &keys {
            f.put(k);
        }
        for k in &keys {
            prop_assert!(f.might_contain(k), "key {:02x?} lost; n = {}, p = {}, {}", k, keys.len(), p, s);
        }
    }
}
