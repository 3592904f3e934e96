//! Index schemes: the second axis. A scheme turns one [`Digest`] into k bit positions in `[0, m)`.
//!
//! Schemes are called with a closure per position so that a lookup stops at the first clear bit and
//! nothing is allocated per key.

use crate::error::Result;
use crate::hash::Digest;
use crate::sizing::Params;

/// Maps a digest to k bit positions of a flat array of `bits` bits.
pub trait IndexScheme: Send + Sync + 'static {
    /// The name this scheme has in variant names and reports.
    const ID: &'static str;

    /// What a filter computes once from its bit count so that a probe needs no division: the bit
    /// count itself for the multiply-shift schemes, a strength-reduced divisor for Guava's `%`.
    type Range: Copy + Send + Sync + std::fmt::Debug;

    /// The [`Self::Range`] of a filter of `bits` bits (`bits > 0`).
    fn range(bits: u64) -> Self::Range;

    /// Calls `visit` with each of the `k` positions, all in `[0, bits)` for the `bits` that `range`
    /// was computed from, in order, stopping as soon as `visit` returns false. Returns true when
    /// every call returned true.
    fn probe_in(d: Digest, k: u32, range: Self::Range, visit: impl FnMut(u64) -> bool) -> bool;

    /// [`Self::probe_in`] for a filter of `bits` bits (`bits > 0`), computing its range first.
    #[inline]
    fn probe(d: Digest, k: u32, bits: u64, visit: impl FnMut(u64) -> bool) -> bool {
        Self::probe_in(d, k, Self::range(bits), visit)
    }

    /// Whether the flat layout's batched inserts and member checks compute each position once,
    /// keeping it in a ring from the prefetch of its word to the write or test
    /// ([`crate::Bloom::insert_digests`]), rather than twice. True where a position costs more
    /// than the ring's store and load: enhanced double hashing's dependent chain and Guava's
    /// remainders. Measured on the sweep's rows of 10^7 u64 keys at p = 1e-4 (a row's whole
    /// time: insert, member check and queries; one thread, fat LTO, two alternated runs, s):
    /// `edh` 1.20 / 1.17 -> 0.98 / 0.97, `mitz64` 1.14 / 1.07 -> 0.99 / 1.02, `mitz32` 1.42 /
    /// 1.35 -> 1.11 / 1.15; the multiply-shift scheme (one multiply and one add a position) was
    /// slower with the ring, 0.79 / 0.76 -> 0.85 / 0.83, and recomputes.
    const POSITIONS_ONCE: bool = false;

    /// The (m, k) this scheme's filters use for `n` keys at rate `p`. The default is the textbook
    /// optimum ([`Params::optimal`]); Guava's schemes use Guava's own rounding.
    fn sizing(n: u64, p: f64) -> Result<Params> {
        Params::optimal(n, p)
    }

    /// How many equally likely values this scheme reduces to a position, when that is fewer than
    /// 2^53 (a scheme of 31-bit `int` arithmetic: 2^31); 0 when positions come from a full 64-bit
    /// or 63-bit word, whose reduction to m positions is uniform to within m / 2^63. The theory
    /// then adds the hash-width term ([`crate::theory::flat_reduced`]): a filter of more bits than
    /// this domain uses only the first `POSITION_DOMAIN` of them.
    const POSITION_DOMAIN: u64 = 0;
}

/// Lemire's multiply-shift reduction: `x` scaled from `[0, 2^64)` to `[0, m)` without a division.
#[inline(always)]
pub const fn fast_range(x: u64, m: u64) -> u64 {
    ((x as u128 * m as u128) >> 64) as u64
}

/// Kirsch-Mitzenmacher double hashing in 64-bit arithmetic: position i is `h1 + i*h2 (mod 2^64)`,
/// reduced to `[0, m)` by [`fast_range`]. Kirsch & Mitzenmacher (2006) show two hashes lose
/// nothing asymptotically against k independent ones.
#[derive(Debug, Clone, Copy, Default)]
pub struct KirschMitzenmacher;

impl IndexScheme for KirschMitzenmacher {
    const ID: &'static str = "km";
    type Range = u64;
    #[inline(always)]
    fn range(bits: u64) -> u64 {
        bits
    }
    #[inline(always)]
    fn probe_in(d: Digest, k: u32, bits: u64, mut visit: impl FnMut(u64) -> bool) -> bool {
        let mut h = d.h1;
        for _ in 0..k {
            if !visit(fast_range(h, bits)) {
                return false;
            }
            h = h.wrapping_add(d.h2);
        }
        true
    }
}

/// Enhanced double hashing (Dillinger & Manolios 2004): the step grows by i each probe, so two keys
/// that collide on two probes rarely collide on the rest. `x = h1`, `y = h2` reduced to `[0, m)` by
/// [`fast_range`], then the paper's arithmetic modulo m: `x = (x + y) mod m`, `y = (y + i) mod m`.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnhancedDoubleHash;

impl IndexScheme for EnhancedDoubleHash {
    const ID: &'static str = "edh";
    const POSITIONS_ONCE: bool = true;
    type Range = u64;
    #[inline(always)]
    fn range(bits: u64) -> u64 {
        bits
    }
    #[inline(always)]
    fn probe_in(d: Digest, k: u32, bits: u64, mut visit: impl FnMut(u64) -> bool) -> bool {
        // The growing step must be added in units of one bit: in the 2^64 domain that
        // `fast_range` scales down, adding i is lost below the output's resolution and the scheme
        // degenerates into Kirsch-Mitzenmacher (it set exactly the same bits for every key).
        let m = bits;
        let (mut x, mut y) = (fast_range(d.h1, m), fast_range(d.h2, m));
        for i in 0..k {
            if !visit(x) {
                return false;
            }
            // x, y < m, so one conditional subtraction reduces each sum, without overflow.
            x = if x >= m - y { x - (m - y) } else { x + y };
            // step < m except in filters of fewer than k bits: no division on the hot path.
            let step = u64::from(i) + 1;
            let step = if step < m { step } else { step % m };
            y = if y >= m - step {
                y - (m - step)
            } else {
                y + step
            };
        }
        true
    }
}

/// A filter's bit count as the divisor of [`GuavaMitz64`]'s `(x & Long.MAX_VALUE) % m`, with a
/// magic number computed once per filter: the same remainders as the hardware division, from
/// one multiplication of the high word, a shift, and one multiplication back (no correction
/// step, no division).
///
/// The division of a 63-bit dividend cost more than the rest of a lookup (1M string keys,
/// `classic/fnv1a/mitz64/flat` 59 -> 39 ns, `classic/murmur3/mitz64/flat` 25.0 -> 23.7 ns, with
/// a `floor((2^64 - 1) / m)` reciprocal and a conditional subtraction); the exact magic number
/// takes two instructions fewer per position than that reciprocal: batched lookups of
/// `classic/murmur3/mitz64/flat` at 1M string keys, positions computed twice as before
/// [`crate::Filter::batch_keeps_positions`], 26.4 / 26.1 -> 23.3 / 23.5 ns (absent / present,
/// one process, medians of 31 rounds); one lookup at a time, 23.5 / 23.2 ns either way.
#[derive(Debug, Clone, Copy)]
pub struct Modulus {
    m: u64,
    /// `floor(2^(63 + l) / m) + 1` with `l = ceil(log2 m)`: below 2^64 (see [`Modulus::new`]).
    magic: u64,
    /// `l - 1`: the quotient is the high word of `x * magic` shifted right by it.
    shift: u32,
    /// `Long.MAX_VALUE`, or 0 for `m = 1`, whose every remainder is 0 (no 64-bit magic number
    /// gives that quotient, `x` itself; a zero dividend and quotient do).
    low63: u64,
}

impl Modulus {
    /// The divisor `m`; `m > 0` (filters have at least one bit).
    ///
    /// Why the quotient is exact (the round-up method: Granlund & Montgomery, *Division by
    /// Invariant Integers using Multiplication*, 1994, theorem 4.2): for `m >= 2`, with
    /// `l = ceil(log2 m) >= 1`, `m > 2^(l-1)` makes `2^(63+l) / m < 2^64`, so `magic` fits in a
    /// word; and `e = magic * m - 2^(63+l)` lies in `(0, m]`, so for every `x < 2^63`
    /// `x * magic / 2^(63+l) = x/m + x*e / (m * 2^(63+l))`, whose second term is below `1/m`:
    /// too little to pass the next multiple of `1/m` above `x/m`, so the floor is `floor(x/m)`.
    #[inline]
    pub fn new(m: u64) -> Self {
        if m == 1 {
            return Self {
                m,
                magic: 0,
                shift: 0,
                low63: 0,
            };
        }
        let l = 64 - (m - 1).leading_zeros();
        Self {
            m,
            magic: ((1u128 << (63 + l)) / u128::from(m) + 1) as u64,
            shift: l - 1,
            low63: i64::MAX as u64,
        }
    }

    /// `(x & Long.MAX_VALUE) % m`: the remainder of `x`'s low 63 bits, exact for every `x`.
    #[inline(always)]
    pub fn rem_low63(self, x: u64) -> u64 {
        let x = x & self.low63;
        let q = ((u128::from(x) * u128::from(self.magic)) >> 64) as u64 >> self.shift;
        x - q * self.m
    }
}

/// Guava's `BloomFilterStrategies.MURMUR128_MITZ_64` (ordinal 1): `combined = h1`; each probe sets
/// `(combined & Long.MAX_VALUE) % m`, then `combined += h2`. Uses Guava 31.1's sizing.
///
/// Its remainders come from a [`Modulus`] (a magic number, not a division); batched inserts and
/// member checks compute each position once ([`IndexScheme::POSITIONS_ONCE`]), as the flat
/// layout's batched lookups do for every scheme.
#[derive(Debug, Clone, Copy, Default)]
pub struct GuavaMitz64;

impl IndexScheme for GuavaMitz64 {
    const ID: &'static str = "mitz64";
    const POSITIONS_ONCE: bool = true;
    type Range = Modulus;
    #[inline(always)]
    fn range(bits: u64) -> Modulus {
        Modulus::new(bits)
    }
    #[inline(always)]
    fn probe_in(d: Digest, k: u32, bits: Modulus, mut visit: impl FnMut(u64) -> bool) -> bool {
        let mut combined = d.h1;
        for _ in 0..k {
            if !visit(bits.rem_low63(combined)) {
                return false;
            }
            combined = combined.wrapping_add(d.h2);
        }
        true
    }
    fn sizing(n: u64, p: f64) -> Result<Params> {
        Params::guava(n, p)
    }
}

/// Guava's legacy `MURMUR128_MITZ_32` (ordinal 0): 32-bit halves of the low 64 hash bits,
/// `combined = h1 + i*h2` for i in 1..=k in wrapping `int` arithmetic, negative values flipped with
/// `~`, then `% m`. Positions never exceed 2^31 - 1, so in a filter of more than 2^31 bits the rest
/// of the array is never used: kept to read old files and to measure that bias.
#[derive(Debug, Clone, Copy, Default)]
pub struct GuavaMitz32;

impl IndexScheme for GuavaMitz32 {
    const ID: &'static str = "mitz32";
    const POSITIONS_ONCE: bool = true;
    // The hardware division stays: its dividends are below 2^31, which the divider finishes
    // quickly, and the reciprocal measured slower here (1M string keys, xxh3: 18.5 -> 23.7 ns).
    // Its positions are computed once in the flat layout's batched lookups, inserts and member
    // checks (`POSITIONS_ONCE`), and twice in `insert_pipelined` (once to prefetch): the
    // divisions cost less than the misses the prefetch overlaps (the sweep's row of 10^7 u64 keys at p = 1e-4,
    // inserting and checking every member: 3.4 s without the prefetch, 1.2 s with; Lemire's
    // direct 32-bit remainder in place of the division: the same 1.2 s).
    type Range = u64;
    #[inline(always)]
    fn range(bits: u64) -> u64 {
        bits
    }
    #[inline(always)]
    fn probe_in(d: Digest, k: u32, bits: u64, mut visit: impl FnMut(u64) -> bool) -> bool {
        let h1 = d.h1 as i32;
        let h2 = (d.h1 >> 32) as i32;
        for i in 1..=k as i32 {
            let mut combined = h1.wrapping_add(i.wrapping_mul(h2));
            if combined < 0 {
                combined = !combined;
            }
            if !visit(combined as u64 % bits) {
                return false;
            }
        }
        true
    }
    fn sizing(n: u64, p: f64) -> Result<Params> {
        Params::guava(n, p)
    }
    /// `combined` is a non-negative `int`: 2^31 values (each twice, as x and as `~x`).
    const POSITION_DOMAIN: u64 = 1 << 31;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions<I: IndexScheme>(d: Digest, k: u32, m: u64) -> Vec<u64> {
        let mut out = Vec::new();
        I::probe(d, k, m, |i| {
            out.push(i);
            true
        });
        out
    }

    #[test]
    fn km_steps_by_h2_and_scales() {
        let d = Digest::from_halves(0, 1 << 62);
        assert_eq!(
            positions::<KirschMitzenmacher>(d, 4, 1000),
            vec![0, 250, 500, 750]
        );
    }

    #[test]
    fn edh_adds_a_growing_step() {
        // x = 0, y = 2^60 scaled to m = 16 is 1: x = 0, 0+1, 1+2, 3+4 (y = 1, 2, 4, 7).
        let d = Digest::from_halves(0, 1 << 60);
        assert_eq!(positions::<EnhancedDoubleHash>(d, 4, 16), vec![0, 1, 3, 7]);
        // Sums wrap modulo m: x = 8, y = 15; x: 8, 23-16 = 7, 7+0, 7+2, 9+5; y: 15, 0, 2, 5, 9.
        let d = Digest::from_halves(8 << 60, 15 << 60);
        assert_eq!(
            positions::<EnhancedDoubleHash>(d, 5, 16),
            vec![8, 7, 7, 9, 14]
        );
        // The growing step makes it differ from Kirsch-Mitzenmacher at the resolution of m.
        let d = Digest::from_halves(0x1234_5678_9abc_def0, 0x0fed_cba9_8765_4321);
        assert_ne!(
            positions::<EnhancedDoubleHash>(d, 7, 1_000_003),
            positions::<KirschMitzenmacher>(d, 7, 1_000_003)
        );
    }

    #[test]
    fn modulus_gives_the_remainder_of_the_low_63_bits() {
        const LOW63: u64 = i64::MAX as u64;
        let mut x = 0x0123_4567_89ab_cdef_u64;
        let mut random = move || {
            x = crate::hash::fmix64(x.wrapping_add(0x9E37_79B9_7F4A_7C15));
            x
        };
        // Divisors: the smallest, every power of two and its neighbours (where l = ceil(log2 m)
        // changes and the magic number is largest), a filter's sizes, the largest, and random
        // ones of every width.
        let mut divisors = vec![1, 2, 3, 5, 7, 64, 9_585_088, LOW63, 1 << 63, u64::MAX - 63];
        for b in 1..64 {
            divisors.extend([(1u64 << b) - 1, 1 << b, (1 << b) + 1]);
        }
        for _ in 0..1000 {
            let r = random();
            divisors.push((r >> (r % 64)).max(1));
        }
        for &m in &divisors {
            let r = Modulus::new(m);
            let top = LOW63 - LOW63 % m;
            // Dividends at the edges of the 63-bit domain and of the multiples of m, with and
            // without the sign bit Guava masks, then random ones of every width.
            let mut dividends = vec![0, 1, m - 1, m, m.wrapping_add(1), LOW63, u64::MAX, 1 << 63];
            dividends.extend([top, top.wrapping_sub(1), top | 1 << 63, (m - 1) | 1 << 63]);
            for _ in 0..300 {
                let v = random();
                dividends.extend([v, v >> (v % 64)]);
            }
            for v in dividends {
                assert_eq!(r.rem_low63(v), (v & LOW63) % m, "({v} & MAX) % {m}");
            }
        }
    }

    #[test]
    fn mitz64_masks_the_sign_bit_before_modulo() {
        let d = Digest::from_halves(u64::MAX, 1);
        // combined = -1, 0, 1: (-1 & MAX) % 10 = (2^63 - 1) % 10 = 7.
        assert_eq!(positions::<GuavaMitz64>(d, 3, 10), vec![7, 0, 1]);
    }

    #[test]
    fn mitz32_flips_negative_combinations() {
        // h1 = -1 (low word), h2 = 1: i=1 -> 0, i=2 -> 1, i=3 -> 2.
        let d = Digest::from_halves(0x0000_0001_ffff_ffff, 0);
        assert_eq!(positions::<GuavaMitz32>(d, 3, 1 << 40), vec![0, 1, 2]);
        // h1 = 0, h2 = i32::MAX: i=2 wraps to -2, flipped to 1.
        let d = Digest::from_halves(0x7fff_ffff_0000_0000, 0);
        assert_eq!(
            positions::<GuavaMitz32>(d, 2, 1 << 40),
            vec![i32::MAX as u64, 1]
        );
    }

    #[test]
    fn early_exit_stops_probing() {
        let mut calls = 0;
        let all = KirschMitzenmacher::probe(Digest::from_u64(5), 7, 100, |_| {
            calls += 1;
            calls < 3
        });
        assert!(!all);
        assert_eq!(calls, 3);
    }
}
