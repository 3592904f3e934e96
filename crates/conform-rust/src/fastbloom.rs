//! `fastbloom`: `BloomFilter`, `AtomicBloomFilter` (concurrent inserts through `&self`), and the
//! same `BloomFilter` in 0.15.0, the last release before the fix of upstream issue #22.
//!
//! Layout (read from the 0.15.0 and 0.17.0 sources): one flat array of `num_bits()` bits; a key's
//! 64-bit SipHash-1-3 source hash `h` picks its first bit, and `k - 1` more come from the double
//! hasher (`h = rotl(h, 5) + h2`, `h2 = h * 0x517c_c1b7_2722_0a95`), each reduced to `0..num_bits`
//! anywhere in the array: [`Declared::Classic`] with `num_bits()` and `num_hashes()`. It is not
//! blocked (no probe is confined to a block of the first), so [`Declared::Blocked`] would be wrong.
//!
//! Bad input (all three): p <= 0 or NaN panics (`assertion failed: fp > 0.0`); p >= 1 is accepted
//! and gives the 64-bit minimum with k = 1; n = 0 is taken as n = 1 (64 bits, k = 44).
//!
//! Issue #22 ("thousands of false positives at p = 1e-12 and 500M items", reported on 0.15.0): in
//! 0.15.0 the reduction is `((h >> 32) * num_bits) >> 32` in 64-bit arithmetic, which wraps once
//! `num_bits` passes 2^32: every index lands below 2^32, so no bit at or beyond 2^32 is ever set
//! and the probes crowd unevenly into the first 2^32 bits; a filter past 2^32 bits behaves like one
//! of 2^32 bits at best. 0.16.0 reduces with a 128-bit product (`(h as u128 * num_bits as u128) >>
//! 64`). `tests/third_party.rs` reproduces it (an `#[ignore]`d test, five minutes, 1.05 GB), and
//! the quick plan's scale clause (its boundary test) finds it in seconds.

// portable-atomic (fastbloom 0.17) re-exports the std `Ordering`.
use std::sync::atomic::Ordering;

use fastbloom::AtomicBloomFilter;

use super::{Adapted, HASH_SEED, Ops, refused, split_u32, usize_n};
use bloomlab_conform::candidate::{
    About, Candidate, CandidateError, Capabilities, Declared, Instance, KeyBatch, SharedInsert,
    Stats,
};

/// fastbloom's version (the workspace pin).
pub const VERSION: &str = "0.17.0";
/// The release before issue #22's fix.
pub const PRE22_VERSION: &str = "0.15.0";

const SEED: u128 = HASH_SEED as u128;

fn capabilities(concurrent: bool) -> Capabilities {
    Capabilities {
        serialize: true,
        stats: true,
        concurrent,
        static_build: false,
        large: true,
        growable: false,
    }
}

/// Bytes of a fastbloom filter: `k` (u32 LE), then its 64-bit words (LE), as `as_slice` gives them.
fn to_bytes(hashes: u32, words: impl Iterator<Item = u64>) -> Vec<u8> {
    let mut out = hashes.to_le_bytes().to_vec();
    words.for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    out
}

/// The inverse of [`to_bytes`]: `(k, words)`, or a refusal saying what is malformed.
fn from_bytes(subject: &str, bytes: &[u8]) -> Result<(u32, Vec<u64>), CandidateError> {
    let (hashes, rest) = split_u32(subject, bytes)?;
    if hashes == 0 || rest.is_empty() || rest.len() % 8 != 0 {
        return Err(refused(
            subject,
            format!(
                "serialized filter: k = {hashes} (must be >= 1) and {} bit bytes (must be a \
                 positive multiple of 8)",
                rest.len()
            ),
        ));
    }
    let words = rest
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")))
        .collect();
    Ok((hashes, words))
}

macro_rules! plain_bloom {
    ($(#[$doc:meta])* $candidate:ident, $krate:ident, $name:literal, $version:expr, $ops:ident) => {
        $(#[$doc])*
        pub struct $candidate;

        static $ops: Ops<$krate::BloomFilter> = Ops {
            name: $name,
            insert: |f, k| {
                f.insert(k);
                Ok(())
            },
            contains: |f, k| f.contains(k),
            stats: |f| Stats {
                memory_bytes: Some(f.num_bits() as u64 / 8),
                layout: Some(Declared::Classic {
                    bits: f.num_bits() as u64,
                    hashes: f.num_hashes(),
                }),
            },
            serialize: Some(|f| to_bytes(f.num_hashes(), f.as_slice().iter().copied())),
        };

        impl Candidate for $candidate {
            fn about(&self) -> About {
                About::rust($name, $version).with(capabilities(false))
            }

            fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
                let n = usize_n($name, n)?;
                let f = $krate::BloomFilter::with_false_pos(p)
                    .seed(&SEED)
                    .expected_items(n);
                Ok(Adapted::boxed(f, &$ops))
            }

            fn deserialize(&self, bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
                let (hashes, words) = from_bytes($name, bytes)?;
                let f = $krate::BloomFilter::from_vec(words).seed(&SEED).hashes(hashes);
                Ok(Adapted::boxed(f, &$ops))
            }
        }
    };
}

plain_bloom!(
    /// `rust/fastbloom`: `BloomFilter::with_false_pos(p).expected_items(n)`, seeded.
    FastBloom,
    fastbloom,
    "rust/fastbloom",
    VERSION,
    FAST_OPS
);

plain_bloom!(
    /// `rust/fastbloom@0.15.0`: the same filter in the release issue #22 was reported on.
    FastBloomPre22,
    fastbloom_pre22,
    "rust/fastbloom@0.15.0",
    PRE22_VERSION,
    PRE22_OPS
);

const ATOMIC: &str = "rust/fastbloom/atomic";

/// `rust/fastbloom/atomic`: `AtomicBloomFilter`, inserts through `&self` from many threads.
pub struct FastBloomAtomic;

/// An `AtomicBloomFilter` as an instance that also offers [`SharedInsert`].
struct Atomic(AtomicBloomFilter);

impl SharedInsert for Atomic {
    fn insert_shared(&self, key: &[u8]) {
        self.0.insert(key);
    }
}

impl Instance for Atomic {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        keys.iter().for_each(|k| {
            self.0.insert(k);
        });
        Ok(())
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        out.clear();
        out.extend(keys.iter().map(|k| self.0.contains(k)));
        Ok(())
    }

    fn stats(&mut self) -> Result<Stats, CandidateError> {
        Ok(Stats {
            memory_bytes: Some(self.0.num_bits() as u64 / 8),
            layout: Some(Declared::Classic {
                bits: self.0.num_bits() as u64,
                hashes: self.0.num_hashes(),
            }),
        })
    }

    fn serialize(&mut self) -> Result<Option<Vec<u8>>, CandidateError> {
        let words = self.0.as_slice().iter().map(|w| w.load(Ordering::Relaxed));
        Ok(Some(to_bytes(self.0.num_hashes(), words)))
    }

    fn shared(&self) -> Option<&dyn SharedInsert> {
        Some(self)
    }
}

impl Candidate for FastBloomAtomic {
    fn about(&self) -> About {
        About::rust(ATOMIC, VERSION).with(capabilities(true))
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let n = usize_n(ATOMIC, n)?;
        let f = AtomicBloomFilter::with_false_pos(p)
            .seed(&SEED)
            .expected_items(n);
        Ok(Box::new(Atomic(f)))
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
        let (hashes, words) = from_bytes(ATOMIC, bytes)?;
        let f = AtomicBloomFilter::from_vec(words)
            .seed(&SEED)
            .hashes(hashes);
        Ok(Box::new(Atomic(f)))
    }
}
