//! The split-block filter against the Apache Parquet format.
//!
//! 1. A bit pattern written by parquet-mr: the 32-byte (one block) bitset that arrow-rs keeps as a
//!    fixture in `parquet/src/bloom_filter/mod.rs` (`test_with_fixture`, "bloom filter produced by
//!    parquet-mr/spark" for the strings "a0".."a9"). Parquet hashes a BYTE_ARRAY's plain-encoded
//!    bytes without the length prefix, i.e. the UTF-8 bytes, with XXH64 seed 0.
//! 2. Multi-block bit patterns written by another implementation: DuckDB's Parquet writer, for three
//!    dictionary-encoded columns (BYTE_ARRAY, INT64, INT32) of 2000 known distinct values each, in
//!    4096-byte (128-block) filters, extracted by `scripts/parquet/duckdb_sbbf_vectors.py` into
//!    `tests/data/duckdb_sbbf.txt`. (parquet-testing's `bloom_filter.xxhash.bin`, written by
//!    parquet-mr, is binary and was not readable here.) Values are hashed in their plain encoding:
//!    UTF-8 bytes without a length prefix, INT64 as 8 and INT32 as 4 little-endian bytes.
//! 3. A second, independent implementation written from the spec text (`BloomFilter.md`) inside this
//!    test, as a check on odd block counts the two sources above do not cover.

use bloomlab_filters::{Filter, SplitBlock, Xxh64};

/// The fixture bytes from arrow-rs (`parquet/src/bloom_filter/mod.rs`, `test_with_fixture`).
const PARQUET_MR_A0_TO_A9: [u8; 32] = [
    200, 1, 80, 20, 64, 68, 8, 109, 6, 37, 4, 67, 144, 80, 96, 32, 8, 132, 43, 33, 0, 5, 99, 65, 2,
    0, 224, 44, 64, 78, 96, 4,
];

#[test]
fn reproduces_parquet_mr_bitset_for_a0_to_a9() {
    let mut ours = SplitBlock::<Xxh64>::with_bits(256).unwrap();
    for i in 0..10 {
        ours.insert_bytes(format!("a{i}").as_bytes());
    }
    assert_eq!(ours.to_le_bytes(), PARQUET_MR_A0_TO_A9.to_vec());
    let read = SplitBlock::<Xxh64>::from_le_bytes(&PARQUET_MR_A0_TO_A9).unwrap();
    for i in 0..10 {
        assert!(read.contains(&format!("a{i}")), "a{i} missing");
    }
    assert_eq!(read.to_le_bytes(), PARQUET_MR_A0_TO_A9.to_vec());
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn reproduces_duckdb_multi_block_bitsets() {
    let text = include_str!("data/duckdb_sbbf.txt");
    let mut kinds = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 3);
        let want = unhex(cols[2]);
        let mut ours = SplitBlock::<Xxh64>::with_bits(want.len() as u64 * 8).unwrap();
        let plain: Vec<Vec<u8>> = cols[1]
            .split(',')
            .map(|v| match cols[0] {
                "BYTE_ARRAY" => unhex(v),
                "INT64" => v.parse::<i64>().unwrap().to_le_bytes().to_vec(),
                "INT32" => v.parse::<i32>().unwrap().to_le_bytes().to_vec(),
                other => panic!("unknown physical type {other}"),
            })
            .collect();
        for v in &plain {
            ours.insert_bytes(v);
        }
        let got = ours.to_le_bytes();
        assert_eq!(got.len(), want.len(), "{}: byte length", cols[0]);
        let first_diff = got.iter().zip(&want).position(|(a, b)| a != b);
        assert_eq!(
            first_diff,
            None,
            "{}: {} values into {} blocks: first differing byte",
            cols[0],
            plain.len(),
            want.len() / 32
        );
        assert!(want.len() / 32 >= 64, "the vector should span many blocks");
        kinds.push(cols[0]);
    }
    assert_eq!(kinds, ["BYTE_ARRAY", "INT64", "INT32"]);
}

/// An independent split-block filter written from the Parquet spec (`BloomFilter.md`): a block is
/// eight u32 words; `mask(x)` sets bit `(x * salt[i]) >> 27` of word i; the block index of hash h
/// is `((h >> 32) * z) >> 32` for z blocks; the key's 32 low bits feed `mask`. The salts are
/// re-typed from the spec, not taken from the library.
struct SpecSbbf {
    words: Vec<u32>,
}

impl SpecSbbf {
    const SALT: [u32; 8] = [
        0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947,
        0x5c6bfb31,
    ];

    fn insert(&mut self, h: u64) {
        let z = (self.words.len() / 8) as u64;
        let block = (((h >> 32) * z) >> 32) as usize;
        let x = h as u32;
        for (i, salt) in Self::SALT.iter().enumerate() {
            let bit = x.wrapping_mul(*salt) >> 27;
            self.words[block * 8 + i] |= 1u32 << bit;
        }
    }

    fn le_bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

#[test]
fn agrees_with_a_from_the_spec_implementation_on_odd_block_counts() {
    for blocks in [1u64, 3, 7, 129, 1000, 4099] {
        let mut ours = SplitBlock::<Xxh64>::with_bits(blocks * 256).unwrap();
        let mut spec = SpecSbbf {
            words: vec![0; blocks as usize * 8],
        };
        for i in 0..(blocks * 3) {
            let key = format!("key-{i}");
            ours.insert_bytes(key.as_bytes());
            spec.insert(xxhash_rust::xxh64::xxh64(key.as_bytes(), 0));
        }
        assert_eq!(ours.bits(), blocks * 256);
        assert_eq!(ours.to_le_bytes(), spec.le_bytes(), "{blocks} blocks");
    }
}
