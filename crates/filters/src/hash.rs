//! Hash strategies: the first axis. Each turns key bytes into a [`Digest`] of two 64-bit words.
//!
//! Six strategies: [`Fnv1a`], [`Murmur3`], [`Xxh3`], [`Xxh3Wide`], [`Xxh64`] and [`Lookup3`].

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

/// Bob Jenkins' lookup3 (`lookup3.c`, May 2006, public domain), `hashlittle2` with both seeds 0:
/// the hash behind many C hash tables of its time, the "Jenkins hash" beside Murmur3 and FNV-1a.
///
/// Digest: one `hashlittle2` pass returns two 32-bit words, `c` (primary, `*pc`) and `b` (`*pb`).
/// `h1 = c | (b << 32)`, the 64-bit value `lookup3.c` itself recommends ("`*pc + (((uint64_t)*pb)
/// << 32)`"), so `h1 as u32` is `hashlittle(key, 0)`; `h2` comes from [`Digest::from_u64`], as for
/// the other 64-bit hashes. Why not a second pass with other seeds: the index schemes need `h2`
/// only to look independent of `h1` (Kirsch-Mitzenmacher's step, the blocked layout's 9-bit
/// slices), which a bijective finaliser of `h1` gives at no extra pass over the key; two keys then
/// share `h2` only if they share all 64 bits of `h1` (probability 2^-64 per pair, far below any
/// false-positive rate measured here). A second pass would double the hashing cost for bits the
/// statistics cannot see, and would treat lookup3 differently from XXH3 and XXH64.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lookup3;

/// lookup3's `mix(a, b, c)`: the reversible mix applied after every full 12-byte block.
#[inline(always)]
fn lookup3_mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

/// lookup3's `final(a, b, c)`: the irreversible mix of the last block into `c` (and `b`).
#[inline(always)]
fn lookup3_final(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(14));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(11));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(25));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(16));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(4));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(14));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(24));
}

/// Little-endian u32 at `i` of a 12-byte block.
#[inline(always)]
fn le32(block: &[u8; 12], i: usize) -> u32 {
    u32::from_le_bytes([block[i], block[i + 1], block[i + 2], block[i + 3]])
}

impl Lookup3 {
    /// `hashlittle2(key, length, &pc, &pb)` from `lookup3.c`: returns `(c, b)`, the values the C
    /// function writes back to `*pc` and `*pb`. `pc` is the primary seed (`hashlittle`'s
    /// `initval`), `pb` the secondary one.
    ///
    /// Matches the reference's byte-at-a-time little-endian path for every length, which is what
    /// its aligned fast paths also compute on a little-endian machine. As in C, the length enters
    /// the initial state as a `uint32_t` (so keys of 4 GiB or more wrap it, like the original).
    #[inline]
    pub fn hashlittle2(bytes: &[u8], pc: u32, pb: u32) -> (u32, u32) {
        let init = 0xdead_beef_u32
            .wrapping_add(bytes.len() as u32)
            .wrapping_add(pc);
        let (mut a, mut b, mut c) = (init, init, init.wrapping_add(pb));
        if bytes.is_empty() {
            // The reference returns before `final` for a zero-length key.
            return (c, b);
        }
        // Every 12-byte block but the last gets `mix`; the last (1..=12 bytes, zero-padded, which
        // is what the reference's tail `switch` adds) gets `final`.
        let full = (bytes.len() - 1) / 12;
        let (body, tail) = bytes.split_at(full * 12);
        for block in body.chunks_exact(12) {
            let block: &[u8; 12] = block.try_into().expect("chunks_exact yields 12 bytes");
            a = a.wrapping_add(le32(block, 0));
            b = b.wrapping_add(le32(block, 4));
            c = c.wrapping_add(le32(block, 8));
            lookup3_mix(&mut a, &mut b, &mut c);
        }
        let mut last = [0u8; 12];
        last[..tail.len()].copy_from_slice(tail);
        a = a.wrapping_add(le32(&last, 0));
        b = b.wrapping_add(le32(&last, 4));
        c = c.wrapping_add(le32(&last, 8));
        lookup3_final(&mut a, &mut b, &mut c);
        (c, b)
    }

    /// `hashlittle(key, length, initval)` from `lookup3.c`: the primary word of
    /// [`Lookup3::hashlittle2`] with `pc = initval`, `pb = 0`.
    #[inline]
    pub fn hashlittle(bytes: &[u8], initval: u32) -> u32 {
        Self::hashlittle2(bytes, initval, 0).0
    }

    /// The 64-bit value this strategy puts in `h1`: `c | (b << 32)` of `hashlittle2` with seeds
    /// (0, 0), as `lookup3.c` recommends for a 64-bit result.
    #[inline]
    pub fn hash64(bytes: &[u8]) -> u64 {
        let (c, b) = Self::hashlittle2(bytes, 0, 0);
        u64::from(c) | (u64::from(b) << 32)
    }
}

impl HashStrategy for Lookup3 {
    const ID: &'static str = "lookup3";
    const OUTPUT_BITS: u32 = 64;
    #[inline]
    fn digest(bytes: &[u8]) -> Digest {
        Digest::from_u64(Self::hash64(bytes))
    }
}
