//! Hash strategies against vectors from authoritative sources: the FNV reference test suite, the
//! xxHash project's sanity-check table, Guava's published Murmur3 vectors and SMHasher's
//! verification value, Bob Jenkins' lookup3 self-test vectors, and Murmur3 outputs produced by Guava 31.1 itself
//! (`scripts/java/GuavaVectors.java` -> `tests/data/guava_murmur3_128.txt`).

use bloomlab_filters::{Fnv1a, HashStrategy, Lookup3, Murmur3, Xxh3, Xxh3Wide, Xxh64};

/// FNV-1a 64 values from the FNV reference test suite (`test_fnv.c`, `fnv1a_64_vector[]`,
/// FNV version 5.0.2 by Landon Curt Noll, isthe.com/chongo/tech/comp/fnv): the first 13 entries
/// of `fnv_test_str[]`; the 13th, `TEST0("")`, is the one-byte string "\0".
#[test]
fn fnv1a_matches_the_fnv_reference_suite() {
    let cases: [(&[u8], u64); 13] = [
        (b"", 0xcbf2_9ce4_8422_2325),
        (b"a", 0xaf63_dc4c_8601_ec8c),
        (b"b", 0xaf63_df4c_8601_f1a5),
        (b"c", 0xaf63_de4c_8601_eff2),
        (b"d", 0xaf63_d94c_8601_e773),
        (b"e", 0xaf63_d84c_8601_e5c0),
        (b"f", 0xaf63_db4c_8601_ead9),
        (b"fo", 0x0898_5907_b541_d342),
        (b"foo", 0xdcb2_7518_fed9_d577),
        (b"foob", 0xdd12_0e79_0c25_12af),
        (b"fooba", 0xcac1_65af_a2fe_f40a),
        (b"foobar", 0x8594_4171_f739_67e8),
        (b"\0", 0xaf63_bd4c_8601_b7df),
    ];
    for (input, want) in cases {
        let got = Fnv1a::hash64(input);
        assert_eq!(
            got, want,
            "FNV-1a 64 of {input:?}: got {got:#018x}, want {want:#018x}"
        );
        // The strategy puts the raw hash in h1.
        assert_eq!(Fnv1a::digest(input).h1, want);
    }
}

/// The xxHash sanity-check buffer (`XSUM_fillTestBuffer` in `cli/xsum_sanity_check.c` of
/// github.com/Cyan4973/xxHash): byte i is the top byte of PRIME32 * PRIME64^i (mod 2^64).
fn xxhash_sanity_buffer(len: usize) -> Vec<u8> {
    const PRIME32: u64 = 2_654_435_761;
    const PRIME64: u64 = 11_400_714_785_074_694_797;
    let mut byte_gen = PRIME32;
    (0..len)
        .map(|_| {
            let b = (byte_gen >> 56) as u8;
            byte_gen = byte_gen.wrapping_mul(PRIME64);
            b
        })
        .collect()
}

/// Seed-0 rows of `XSUM_XXH64_testdata`, `XSUM_XXH3_testdata` and `XSUM_XXH128_testdata` in
/// xxHash's `cli/xsum_sanity_check.c` (the table `xxhsum -b` checks itself against).
#[test]
fn xxhash_family_matches_the_xxhash_sanity_table() {
    let buf = xxhash_sanity_buffer(2367);
    let xxh64: [(usize, u64); 5] = [
        (0, 0xEF46_DB37_51D8_E999),
        (1, 0xE934_A84A_DB05_2768),
        (4, 0x9136_A0DC_A574_57EE),
        (14, 0x8282_DCC4_994E_35C8),
        (222, 0xB641_AE8C_B691_C174),
    ];
    for (len, want) in xxh64 {
        let got = Xxh64::digest(&buf[..len]).h1;
        assert_eq!(
            got, want,
            "XXH64 len {len}: got {got:#018x}, want {want:#018x}"
        );
    }
    let xxh3: [(usize, u64); 13] = [
        (0, 0x2D06_8005_38D3_94C2),
        (1, 0xC44B_DFF4_074E_ECDB),
        (6, 0x27B5_6A84_CD2D_7325),
        (12, 0xA713_DAF0_DFBB_77E7),
        (24, 0xA3FE_70BF_9D35_10EB),
        (48, 0x397D_A259_ECBA_1F11),
        (80, 0xBCDE_FBBB_2C47_C90A),
        (195, 0xCD94_217E_E362_EC3A),
        (403, 0xCDEB_804D_65C6_DEA4),
        (512, 0x617E_4959_9013_CB6B),
        (2048, 0xDD59_E2C3_A5F0_38E0),
        (2240, 0x6E73_A905_39CF_2948),
        (2367, 0xCB37_AEB9_E5D3_61ED),
    ];
    for (len, want) in xxh3 {
        let got = Xxh3::digest(&buf[..len]).h1;
        assert_eq!(
            got, want,
            "XXH3-64 len {len}: got {got:#018x}, want {want:#018x}"
        );
    }
    // (len, low64, high64): our digest's h1 is the low half, h2 the high half.
    let xxh128: [(usize, u64, u64); 13] = [
        (0, 0x6001_C324_468D_497F, 0x99AA_06D3_0147_98D8),
        (1, 0xC44B_DFF4_074E_ECDB, 0xA6CD_5E93_9200_0F6A),
        (6, 0x3E70_39BD_DA43_CFC6, 0x082A_FE0B_8162_D12A),
        (12, 0x061A_1927_13F6_9AD9, 0x6E3E_FD8F_C780_2B18),
        (24, 0x1E70_44D2_8B1B_901D, 0x0CE9_66E4_678D_3761),
        (48, 0xF942_219A_ED80_F67B, 0xA002_AC4E_5478_227E),
        (81, 0x5E8B_AFB9_F95F_B803, 0x4952_F581_81AB_0042),
        (222, 0xF1AE_BD59_7CEC_6B3A, 0x337E_0964_1B94_8717),
        (403, 0xCDEB_804D_65C6_DEA4, 0x1B6D_E21E_332D_D73D),
        (512, 0x617E_4959_9013_CB6B, 0x18D2_D110_DCC9_BCA1),
        (2048, 0xDD59_E2C3_A5F0_38E0, 0xF736_557F_D470_73A5),
        (2240, 0x6E73_A905_39CF_2948, 0xCCB1_34FB_FA7C_E49D),
        (2367, 0xCB37_AEB9_E5D3_61ED, 0xE89C_0F6F_F369_B427),
    ];
    for (len, lo, hi) in xxh128 {
        let d = Xxh3Wide::digest(&buf[..len]);
        assert_eq!(
            (d.h1, d.h2),
            (lo, hi),
            "XXH3-128 len {len}: got ({:#018x}, {:#018x}), want ({lo:#018x}, {hi:#018x})",
            d.h1,
            d.h2
        );
    }
}

/// Seed-0 known values from Guava's `Murmur3Hash128Test.testKnownValues` (guava-tests,
/// com.google.common.hash): (h1, h2) are the two little-endian longs of `asBytes()`.
#[test]
fn murmur3_matches_guavas_published_seed0_values() {
    let cases: [(&str, u64, u64); 3] = [
        ("hell", 0x6299_4269_3e10_f867, 0x92db_0b82_baeb_5347),
        (
            "The quick brown fox jumps over the lazy dog",
            0xe34b_bc7b_bc07_1b6c,
            0x7a43_3ca9_c49a_9347,
        ),
        (
            "The quick brown fox jumps over the lazy cog",
            0x658c_a970_ff85_269a,
            0x43fe_e3ea_a68e_5c3e,
        ),
    ];
    for (input, h1, h2) in cases {
        let got = Murmur3::hash128(input.as_bytes());
        assert_eq!(got, (h1, h2), "murmur3_128({input:?})");
        let d = Murmur3::digest(input.as_bytes());
        assert_eq!((d.h1, d.h2), (h1, h2));
    }
}

/// SMHasher's `VerificationTest` (Appleby, `main.cpp`/`KeysetTest.cpp`): hash the keys
/// {}, {0}, {0,1}, ..., {0..254} with seeds 256, 255, ..., 1, hash the concatenated 16-byte
/// results with seed 0, and read the first 4 bytes little-endian. The published value for
/// MurmurHash3_x64_128 is 0x6384BA69 (also checked by Guava's `Murmur3Hash128Test.testParanoid`).
/// This checks the seeded core that [`Murmur3`] calls with seed 0.
#[test]
fn murmur3_core_passes_smhasher_verification() {
    let key: Vec<u8> = (0..=255u8).collect();
    let mut all = Vec::with_capacity(256 * 16);
    for i in 0..256usize {
        let h = fastmurmur3::murmur3_x64_128(&key[..i], (256 - i) as u64);
        all.extend_from_slice(&h.to_le_bytes());
    }
    let fin = fastmurmur3::murmur3_x64_128(&all, 0).to_le_bytes();
    let verification = u32::from_le_bytes(fin[..4].try_into().unwrap());
    assert_eq!(verification, 0x6384_BA69, "got {verification:#010x}");
}

fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length in {s:?}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Guava 31.1's `Hashing.murmur3_128().hashBytes(input).asBytes()` for every tail length 0..=47,
/// all-0x00 and all-0xff inputs, random inputs up to 4096 bytes, UTF-8 strings and `hashLong`
/// inputs. `asBytes()` is h1 little-endian then h2 little-endian, so our (h1, h2) word order must
/// reproduce it byte for byte.
#[test]
fn murmur3_matches_guava_output_file() {
    let text = include_str!("data/guava_murmur3_128.txt");
    let mut checked = 0;
    let mut tails = [false; 16];
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut cols = line.split('\t');
        let input = unhex(cols.next().unwrap());
        let want = unhex(cols.next().unwrap());
        let note = cols.next().unwrap_or("");
        let (h1, h2) = Murmur3::hash128(&input);
        let mut got = h1.to_le_bytes().to_vec();
        got.extend_from_slice(&h2.to_le_bytes());
        assert_eq!(
            got,
            want,
            "murmur3_128 of {} bytes ({note}): got h1 {h1:#018x} h2 {h2:#018x}",
            input.len()
        );
        tails[input.len() % 16] = true;
        checked += 1;
    }
    // The generator writes 48 ramps + 16 constant fills + 9 random + 8 strings + 6 longs.
    assert_eq!(checked, 87, "vectors read from the data file");
    assert!(
        tails.iter().all(|&t| t),
        "not every tail length covered: {tails:?}"
    );
}

/// Every vector `driver5()` prints in Bob Jenkins' `lookup3.c` (May 2006, public domain,
/// burtleburtle.net/bob/c/lookup3.c), each written there as a comment beside its `printf`:
/// `hashlittle2(key, len, &c, &b)` with the seeds (c, b) before the call and the pair (c, b) after,
/// then `hashlittle(key, 30, initval)`.
#[test]
fn lookup3_matches_jenkins_driver5() {
    const FOUR: &[u8] = b"Four score and seven years ago";
    assert_eq!(FOUR.len(), 30);
    // (key, c before, b before, c after, b after)
    let pairs: [(&[u8], u32, u32, u32, u32); 6] = [
        (b"", 0, 0, 0xdead_beef, 0xdead_beef),
        (b"", 0, 0xdead_beef, 0xbd5b_7dde, 0xdead_beef),
        (b"", 0xdead_beef, 0xdead_beef, 0x9c09_3ccd, 0xbd5b_7dde),
        (FOUR, 0, 0, 0x1777_0551, 0xce72_26e6),
        (FOUR, 0, 1, 0xe360_7cae, 0xbd37_1de4),
        (FOUR, 1, 0, 0xcd62_8161, 0x6cbe_a4b3),
    ];
    for (key, pc, pb, want_c, want_b) in pairs {
        let (c, b) = Lookup3::hashlittle2(key, pc, pb);
        assert_eq!(
            (c, b),
            (want_c, want_b),
            "hashlittle2({:?}, c = {pc:#x}, b = {pb:#x}): got ({c:#010x}, {b:#010x}), want \
             ({want_c:#010x}, {want_b:#010x})",
            String::from_utf8_lossy(key)
        );
    }
    for (initval, want) in [(0, 0x1777_0551), (1, 0xcd62_8161)] {
        let got = Lookup3::hashlittle(FOUR, initval);
        assert_eq!(
            got, want,
            "hashlittle(FOUR, {initval}): got {got:#010x}, want {want:#010x}"
        );
    }
    // The strategy's h1 is `c | b << 32` with seeds (0, 0), the 64-bit form lookup3.c recommends.
    assert_eq!(Lookup3::hash64(FOUR), 0xce72_26e6_1777_0551);
    assert_eq!(Lookup3::digest(FOUR).h1, 0xce72_26e6_1777_0551);
    assert_eq!(Lookup3::digest(b"").h1, 0xdead_beef_dead_beef);
}

/// Every byte of every key of 13..=40 bytes is hashed: the tail (0..12 bytes past the last full
/// block, handled in lookup3.c by a `switch` on the remaining length) and the body. Changing any
/// one byte (to each of three other values) changes both 32-bit words of `hashlittle2`, and keys
/// that differ only by a trailing zero byte (the zero padding of the last block) hash apart,
/// because the length enters the initial state. Deterministic keys; a miss is a dropped byte, not
/// bad luck (two random 32-bit words both collide with probability 2^-64 per pair).
#[test]
fn lookup3_consumes_every_byte_of_every_tail_length() {
    let mut key = [0u8; 41];
    for (i, b) in key.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(37).wrapping_add(11);
    }
    for len in 0..=40usize {
        let base = Lookup3::hashlittle2(&key[..len], 0, 0);
        for i in 0..len {
            for delta in [1u8, 0x80, 0xff] {
                let mut k = key;
                k[i] ^= delta;
                let got = Lookup3::hashlittle2(&k[..len], 0, 0);
                assert!(
                    got.0 != base.0 && got.1 != base.1,
                    "len {len}: byte {i} ^ {delta:#x} left a word unchanged: {base:08x?} vs {got:08x?}"
                );
            }
        }
        // A zero byte appended is not the zero padding: the length is hashed.
        let mut padded = key;
        padded[len] = 0;
        let longer = Lookup3::hashlittle2(&padded[..=len], 0, 0);
        assert_ne!(longer, base, "len {len} vs the same key plus a zero byte");
    }
}
