//! Hash strategies: the first axis. Each turns key bytes into a [`Digest`] of two 64-bit words.

/// The output of a hash strategy, consumed by an index scheme.
///
/// 128-bit hashes fill both words from their two halves (`h1` = the first 8 little-endian output
/// bytes, as Guava's `HashCode.asLong()` reads them). 64-bit hashes put their output in `h1` and
/// derive `h2` with [`Digest::from_u64`], so that schemes needing two words work with every hash.
/// Layouts that need only 64 bits (split-block, the textbook port) read `h1`, the raw hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest {
    /// The raw 64-bit hash, or the low half of a 128-bit one.
    pub h1: u64,
    /// The high half of a 128-bit hash, or a value derived from `h1`.
    pub h2: u64,
}

impl Digest {
    /// A digest from a 64-bit hash: `h2` is Murmur3's `fmix64` finaliser applied to `h1` xor the
    /// golden-ratio constant, a bijection, so distinct hashes keep distinct second words.
    #[inline]
    pub const fn from_u64(h: u64) -> Self {
        Self {
            h1: h,
            h2: fmix64(h ^ 0x9E37_79B9_7F4A_7C15),
        }
    }

    /// A digest from a 128-bit hash given as (low 64 bits, high 64 bits).
    #[inline]
    pub const fn from_halves(h1: u64, h2: u64) -> Self {
        Self { h1, h2 }
    }
}

/// Murmur3's 64-bit finaliser (Appleby, `MurmurHash3.cpp`): every input bit affects every output bit.
#[inline]
pub const fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// A hashing strategy: a pure function of the key bytes, no per-filter state or seed.
pub trait HashStrategy: Send + Sync + 'static {
    /// The name this strategy has in variant names and reports.
    const ID: &'static str;
    /// Width of the strategy's native output in bits (64 or 128).
    const OUTPUT_BITS: u32;
    /// Hashes `bytes`.
    fn digest(bytes: &[u8]) -> Digest;
}

/// FNV-1a, 64-bit (offset basis 0xcbf29ce484222325, prime 0x100000001b3). Fast on short keys and
/// weak in its high bits on keys that differ only in their last bytes: the harness shows what that
/// costs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fnv1a;

impl Fnv1a {
    /// The plain 64-bit FNV-1a hash of `bytes`.
    #[inline]
    pub fn hash64(bytes: &[u8]) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    }
}

impl HashStrategy for Fnv1a {
    const ID: &'static str = "fnv1a";
    const OUTPUT_BITS: u32 = 64;
    #[inline]
    fn digest(bytes: &[u8]) -> Digest {
        Digest::from_u64(Self::hash64(bytes))
    }
}

/// MurmurHash3 x64 128-bit with seed 0, the hash behind Guava's `Hashing.murmur3_128()`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Murmur3;

impl Murmur3 {
    /// The 128-bit hash as (h1, h2), the two words Appleby's reference writes out in that order.
    #[inline]
    pub fn hash128(bytes: &[u8]) -> (u64, u64) {
        let h = fastmurmur3::murmur3_x64_128(bytes, 0);
        (h as u64, (h >> 64) as u64)
    }
}

impl HashStrategy for Murmur3 {
    const ID: &'static str = "murmur3";
    const OUTPUT_BITS: u32 = 128;
    #[inline]
    fn digest(bytes: &[u8]) -> Digest {
        let (h1, h2) = Self::hash128(bytes);
        Digest::from_halves(h1, h2)
    }
}

/// XXH3, 64-bit output, seed 0.
#[derive(Debug, Clone, Copy, Default)]
pub struct Xxh3;

impl HashStrategy for Xxh3 {
    const ID: &'static str = "xxh3";
    const OUTPUT_BITS: u32 = 64;
    // Always inlined: left to itself LLVM keeps the whole length dispatch out of line, and the
    // call costs a measurable share of a short key's lookup.
    #[inline(always)]
    fn digest(bytes: &[u8]) -> Digest {
        Digest::from_u64(xxhash_rust::xxh3::xxh3_64(bytes))
    }
}

/// XXH3, 128-bit output, seed 0: both digest words come from the hash itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct Xxh3Wide;

impl HashStrategy for Xxh3Wide {
    const ID: &'static str = "xxh3-128";
    const OUTPUT_BITS: u32 = 128;
    #[inline]
    fn digest(bytes: &[u8]) -> Digest {
        let h = xxhash_rust::xxh3::xxh3_128(bytes);
        Digest::from_halves(h as u64, (h >> 64) as u64)
    }
}

/// XXH64 with seed 0: the hash the Apache Parquet split-block filter specifies.
#[derive(Debug, Clone, Copy, Default)]
pub struct Xxh64;

impl HashStrategy for Xxh64 {
    const ID: &'static str = "xxh64";
    const OUTPUT_BITS: u32 = 64;
    #[inline]
    fn digest(bytes: &[u8]) -> Digest {
        Digest::from_u64(xxhash_rust::xxh64::xxh64(bytes, 0))
    }
}
