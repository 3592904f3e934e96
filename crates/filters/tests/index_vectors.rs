//! Index schemes against Guava 31.1: the bit words of Guava `BloomFilter`s (from `writeTo`) after
//! putting known keys, produced by `scripts/java/GuavaVectors.java` into
//! `tests/data/guava_bloom_words.txt`, must equal our `Bloom<Murmur3, GuavaMitz64|GuavaMitz32,
//! FlatBits>` built for the same (n, p) after inserting the same keys (u64 keys as 8 little-endian
//! bytes = `Funnels.longFunnel()`, strings as UTF-8 = `Funnels.stringFunnel(UTF_8)`).

use bloomlab_filters::{
    BitStore, Bloom, Digest, FlatBits, GuavaMitz32, GuavaMitz64, IndexScheme, Murmur3,
};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Guava's `BloomFilter.writeTo` layout: strategy ordinal (1 byte), k (1 byte, unsigned), the
/// number of longs (big-endian int), then the longs (big-endian).
struct GuavaDump {
    strategy: u8,
    hashes: u32,
    words: Vec<u64>,
}

fn parse_dump(bytes: &[u8]) -> GuavaDump {
    let longs = u32::from_be_bytes(bytes[2..6].try_into().unwrap()) as usize;
    assert_eq!(bytes.len(), 6 + 8 * longs, "writeTo length");
    GuavaDump {
        strategy: bytes[0],
        hashes: u32::from(bytes[1]),
        words: bytes[6..]
            .chunks_exact(8)
            .map(|c| u64::from_be_bytes(c.try_into().unwrap()))
            .collect(),
    }
}

enum Keys {
    Longs(Vec<i64>),
    Strings(Vec<String>),
}

struct Case {
    line: usize,
    strategy: String,
    n: u64,
    p: f64,
    keys: Keys,
    dump: GuavaDump,
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/guava_bloom_words.txt");
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#'))
        .map(|(i, line)| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), 6, "line {}", i + 1);
            let keys = match cols[0] {
                "long" => Keys::Longs(cols[4].split(',').map(|k| k.parse().unwrap()).collect()),
                "string" => Keys::Strings(
                    cols[4]
                        .split(',')
                        .map(|k| String::from_utf8(unhex(k)).unwrap())
                        .collect(),
                ),
                other => panic!("line {}: unknown funnel {other}", i + 1),
            };
            Case {
                line: i + 1,
                strategy: cols[1].to_owned(),
                n: cols[2].parse().unwrap(),
                p: cols[3].parse().unwrap(),
                keys,
                dump: parse_dump(&unhex(cols[5])),
            }
        })
        .collect()
}

fn check<I: IndexScheme>(case: &Case, ordinal: u8) {
    let mut ours = Bloom::<Murmur3, I, FlatBits>::new(case.n, case.p).unwrap();
    match &case.keys {
        Keys::Longs(ks) => ks.iter().for_each(|k| ours.insert(k)),
        Keys::Strings(ks) => ks.iter().for_each(|k| ours.insert(k)),
    }
    let what = format!(
        "line {} ({} n = {} p = {})",
        case.line, case.strategy, case.n, case.p
    );
    assert_eq!(case.dump.strategy, ordinal, "{what}: strategy ordinal");
    assert_eq!(
        ours.store().len_bits(),
        case.dump.words.len() as u64 * 64,
        "{what}: bit count"
    );
    assert_eq!(
        bloomlab_filters::Filter::hashes(&ours),
        case.dump.hashes,
        "{what}: k"
    );
    let ones: u32 = case.dump.words.iter().map(|w| w.count_ones()).sum();
    assert!(ones > 0, "{what}: Guava's filter is empty");
    for (w, &want) in case.dump.words.iter().enumerate() {
        let got = ours.store().word(w);
        assert_eq!(
            got, want,
            "{what}: word {w}: ours {got:#018x}, Guava {want:#018x}"
        );
    }
}

#[test]
fn mitz64_words_equal_guava_create() {
    let cases = cases();
    let mitz64: Vec<_> = cases.iter().filter(|c| c.strategy == "mitz64").collect();
    assert_eq!(mitz64.len(), 6);
    for c in mitz64 {
        check::<GuavaMitz64>(c, 1);
    }
}

#[test]
fn mitz32_words_equal_guava_mitz32_filters() {
    let cases = cases();
    let mitz32: Vec<_> = cases.iter().filter(|c| c.strategy == "mitz32").collect();
    assert_eq!(mitz32.len(), 6);
    for c in mitz32 {
        check::<GuavaMitz32>(c, 0);
    }
}

fn positions<I: IndexScheme>(d: Digest, k: u32, m: u64) -> Vec<u64> {
    let mut out = Vec::new();
    I::probe(d, k, m, |i| {
        out.push(i);
        true
    });
    out
}

/// Hand-computed from Guava's published `BloomFilterStrategies.MURMUR128_MITZ_32.put`:
/// `hash64 = asLong()`, `hash1 = (int) hash64`, `hash2 = (int) (hash64 >>> 32)`, for i in 1..=k
/// `combined = hash1 + i * hash2` (int arithmetic), `if (combined < 0) combined = ~combined`,
/// bit `combined % bitSize`. Only the low 64 hash bits are used, and positions stay below 2^31
/// whatever the bit count.
#[test]
fn mitz32_hand_computed_positions() {
    // hash1 = 5, hash2 = 3: 8, 11, 14 (mod 10: 8, 1, 4).
    let d = Digest::from_halves(0x0000_0003_0000_0005, 0xdead_beef);
    assert_eq!(positions::<GuavaMitz32>(d, 3, 10), vec![8, 1, 4]);
    // hash1 = i32::MAX, hash2 = 1: i = 1 wraps to i32::MIN, flipped by ~ to i32::MAX;
    // i = 2 wraps to i32::MIN + 1, flipped to i32::MAX - 1. Bit count 2^40 leaves them unreduced.
    let d = Digest::from_halves(0x0000_0001_7fff_ffff, 0);
    assert_eq!(
        positions::<GuavaMitz32>(d, 2, 1 << 40),
        vec![i32::MAX as u64, i32::MAX as u64 - 1]
    );
    // hash1 = -7 (0xfffffff9), hash2 = -2: -9 -> 8, -11 -> 10, -13 -> 12.
    let d = Digest::from_halves(0xffff_fffe_ffff_fff9, 0);
    assert_eq!(positions::<GuavaMitz32>(d, 3, 1000), vec![8, 10, 12]);
}

/// Enhanced double hashing must set other bits than plain Kirsch-Mitzenmacher: an earlier version
/// added the growing step in the 2^64 domain, where `fast_range` dropped it, and the two schemes set
/// identical bits for every key.
#[test]
fn edh_and_km_set_different_bits() {
    use bloomlab_filters::{EnhancedDoubleHash, KirschMitzenmacher, Xxh3};
    let mut edh = Bloom::<Xxh3, EnhancedDoubleHash, FlatBits>::new(10_000, 0.01).unwrap();
    let mut km = Bloom::<Xxh3, KirschMitzenmacher, FlatBits>::new(10_000, 0.01).unwrap();
    for key in 0..10_000u64 {
        edh.insert(&key);
        km.insert(&key);
    }
    let words = edh.store().len_bits() / 64;
    let differing = (0..words as usize)
        .filter(|&w| edh.store().word(w) != km.store().word(w))
        .count();
    // With independent-looking positions nearly every word differs; identical words mean the step
    // growth is lost again.
    assert!(
        differing as u64 > words / 2,
        "only {differing} of {words} words differ between edh and km"
    );
}
