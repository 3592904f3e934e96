//! Filters of 2^33 bits (1 GiB) insert and find keys, and really use positions above 2^32; Guava's
//! legacy MITZ_32 scheme, as documented, never reaches bit 2^31 however large the filter.
//!
//! Each test allocates up to 1 GiB; a lock keeps to one such filter at a time even though the test
//! harness runs tests on several threads.

use std::sync::Mutex;

use bloomlab_filters::{
    BitStore, Blocked512, Bloom, Digest, Filter, FlatBits, GuavaMitz32, GuavaMitz64,
    KirschMitzenmacher, Murmur3, Params, SplitBlock, Xxh3, Xxh64,
};
use rand::{RngExt as _, SeedableRng};

static ONE_BIG_FILTER_AT_A_TIME: Mutex<()> = Mutex::new(());

const BITS_2_33: u64 = 1 << 33;
const KEYS: usize = 1_000_000;

fn keys(seed: u64) -> Vec<u64> {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    (0..KEYS).map(|_| rng.random()).collect()
}

/// Set bits in words `[from, to)` of a flat store.
fn ones_in(store: &FlatBits, from: u64, to: u64) -> u64 {
    (from / 64..to / 64)
        .map(|w| u64::from(store.word(w as usize).count_ones()))
        .sum()
}

#[test]
fn classic_xxh3_km_flat_of_2_pow_33_bits_uses_the_top_half() {
    let _guard = ONE_BIG_FILTER_AT_A_TIME.lock().unwrap();
    let mut f = Bloom::<Xxh3, KirschMitzenmacher, FlatBits>::with_params(
        Params::explicit(BITS_2_33, 7).unwrap(),
    )
    .unwrap();
    assert_eq!(f.bits(), BITS_2_33);
    let keys = keys(1);
    keys.iter().for_each(|k| f.insert(k));
    let lost = keys.iter().filter(|k| !f.contains(*k)).count();
    assert_eq!(lost, 0, "{lost} of {KEYS} keys lost in a 2^33-bit filter");
    let low = ones_in(f.store(), 0, 1 << 32);
    let high = ones_in(f.store(), 1 << 32, BITS_2_33);
    assert_eq!(low + high, f.set_bits());
    // Uniform positions put half the bits in each half; a 32-bit truncation would put none above.
    // 7M probes: the top half's share is 0.5 +- 0.0002 (sd); 0.45 is 250 sd away.
    let share = high as f64 / f.set_bits() as f64;
    assert!(
        share > 0.45,
        "only {high} of {} set bits lie at or above 2^32 (share {share})",
        f.set_bits()
    );
}

/// For a layout with `blocks` blocks whose block index is the top bits of `h1` (multiply-shift by a
/// power of two), an `h1` that selects block `b`.
fn h1_for_block(b: u64, blocks: u64) -> u64 {
    assert!(blocks.is_power_of_two());
    b << (64 - blocks.trailing_zeros())
}

#[test]
fn blocked512_of_2_pow_33_bits_addresses_blocks_above_2_pow_32() {
    let _guard = ONE_BIG_FILTER_AT_A_TIME.lock().unwrap();
    let mut f = Blocked512::<Xxh3>::with_params(Params::explicit(BITS_2_33, 8).unwrap()).unwrap();
    assert_eq!(f.bits(), BITS_2_33);
    let blocks = BITS_2_33 / 512;
    // The last block starts at bit 2^33 - 512; a position truncated to 32 bits would alias it to
    // block `top - 2^23`.
    let top = blocks - 1;
    let alias = top - (1 << 23);
    let h2 = 0x0123_4567_89ab_cdef;
    let at = |b: u64| Digest::from_halves(h1_for_block(b, blocks), h2);
    f.insert_digest(at(top));
    assert!(f.set_bits() >= 1);
    assert!(f.contains_digest(at(top)));
    // Another h1 inside the same top block finds the same bits.
    assert!(f.contains_digest(Digest::from_halves(h1_for_block(top, blocks) | 0xffff, h2)));
    assert!(
        !f.contains_digest(at(alias)),
        "the top block aliases block {alias}"
    );
    assert!(!f.contains_digest(at(0)));
    let keys = keys(2);
    keys.iter().for_each(|k| f.insert(k));
    let lost = keys.iter().filter(|k| !f.contains(*k)).count();
    assert_eq!(
        lost, 0,
        "{lost} of {KEYS} keys lost in a 2^33-bit blocked filter"
    );
}

#[test]
fn sbbf_of_2_pow_33_bits_addresses_blocks_above_2_pow_32() {
    let _guard = ONE_BIG_FILTER_AT_A_TIME.lock().unwrap();
    let mut f = SplitBlock::<Xxh64>::with_bits(BITS_2_33).unwrap();
    assert_eq!(f.bits(), BITS_2_33);
    let blocks = BITS_2_33 / 256;
    let top = blocks - 1;
    let alias = top - (1 << 24); // 2^32 bits = 2^24 blocks of 256
    // The spec takes the block from the upper 32 hash bits and the mask from the lower 32.
    let at = |b: u64| Digest::from_u64(h1_for_block(b, blocks) | 0x9abc_def1);
    f.insert_digest(at(top));
    assert_eq!(f.set_bits(), 8);
    assert!(f.contains_digest(at(top)));
    assert!(
        !f.contains_digest(at(alias)),
        "the top block aliases block {alias}"
    );
    let keys = keys(3);
    keys.iter().for_each(|k| f.insert(k));
    let lost = keys.iter().filter(|k| !f.contains(*k)).count();
    assert_eq!(
        lost, 0,
        "{lost} of {KEYS} keys lost in a 2^33-bit split-block filter"
    );
}

/// Guava's MITZ_32 reduces `int` combinations made non-negative, so no position reaches 2^31: in a
/// 2^32-bit filter the upper half stays empty (its documented bias), while MITZ_64 on the same
/// geometry and keys fills it.
#[test]
fn mitz32_never_sets_a_bit_at_or_above_2_pow_31() {
    let _guard = ONE_BIG_FILTER_AT_A_TIME.lock().unwrap();
    let bits = 1u64 << 32;
    let keys = keys(4);
    {
        let mut f = Bloom::<Murmur3, GuavaMitz32, FlatBits>::with_params(
            Params::explicit(bits, 7).unwrap(),
        )
        .unwrap();
        keys.iter().for_each(|k| f.insert(k));
        let lost = keys.iter().filter(|k| !f.contains(*k)).count();
        assert_eq!(lost, 0, "mitz32: {lost} of {KEYS} keys lost");
        let above = ones_in(f.store(), 1 << 31, bits);
        assert_eq!(
            above, 0,
            "mitz32 set {above} bits at or above 2^31 in a 2^32-bit filter"
        );
        assert!(f.set_bits() > 0);
    }
    let mut g =
        Bloom::<Murmur3, GuavaMitz64, FlatBits>::with_params(Params::explicit(bits, 7).unwrap())
            .unwrap();
    keys.iter().for_each(|k| g.insert(k));
    let above = ones_in(g.store(), 1 << 31, bits);
    let share = above as f64 / g.set_bits() as f64;
    // Same binomial argument as above: 0.5 +- 0.0002 expected.
    assert!(
        share > 0.45,
        "mitz64 on the same geometry: share above 2^31 is {share}"
    );
}
