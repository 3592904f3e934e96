//! `scalable_cuckoo_filter`: `ScalableCuckooFilter` built for `n` keys at rate `p`.
//!
//! Why this crate: it takes a false-positive probability (fingerprint width derived from it) and is
//! maintained (2024–2025 releases, rand 0.9); `cuckoofilter` 0.5.0 has fixed 8-bit fingerprints
//! (no rate to promise) and no release since 2020.
//!
//! It is a chain of cuckoo filters: the first holds `next_power_of_two(ceil(n / b))` buckets of
//! `b = 4` fingerprints of `f = ceil(log2(2 / p) + log2(2b))` bits (the crate's own formula, its
//! first filter at rate p/2); when an insert kicks an entry out for good, a filter twice as large
//! at half the rate is appended. The adapter declares [`Declared::Cuckoo`] while the chain is that
//! first filter (its bit count at the build equal to the formula's, a check that cannot drift
//! silently from the crate; and below twice that since: a few bits of kicked-out entries may be
//! added, a second filter is more than as large as the first), and nothing once it has grown.
//! Its kicks draw from a `StdRng` seeded with [`super::HASH_SEED`] (the crate's default, the thread
//! generator, is neither reproducible nor `Send`). Serialization: the crate's `serde_support`, as
//! JSON (the chain of filters; the hasher has fixed keys and the generator restarts from its seed,
//! which changes only where later inserts kick, not any answer). Its deserializer does not check
//! the bit arrays against the bucket counts. The builder asserts `0 < p <= 1` (p = 0, NaN, p > 1 panic). A tiny p is
//! accepted with a fingerprint wider than the 64-bit hash it comes from (1001 bits at p = 1e-300).

use rand_09::rngs::StdRng;
use rand_09::{RngCore, SeedableRng};
use scalable_cuckoo_filter::{DefaultHasher, ScalableCuckooFilter, ScalableCuckooFilterBuilder};

use super::{Adapted, HASH_SEED, Ops, refused, usize_n};
use bloomlab_conform::candidate::{
    About, Candidate, CandidateError, Capabilities, Declared, Instance, Stats,
};

/// scalable_cuckoo_filter's version (pinned exactly).
pub const VERSION: &str = "0.5.1";

const NAME: &str = "rust/scalable_cuckoo_filter";

/// Fingerprints per bucket (the crate's default).
const BUCKET_SIZE: usize = 4;

/// The generator of the kicks: a `StdRng` from [`HASH_SEED`], also as `Default` (which the crate's
/// deserializer needs for the generator it does not serialize).
struct Kicks(StdRng);

impl Default for Kicks {
    fn default() -> Self {
        Kicks(StdRng::seed_from_u64(HASH_SEED))
    }
}

impl RngCore for Kicks {
    fn next_u32(&mut self) -> u32 {
        self.0.next_u32()
    }

    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.0.fill_bytes(dst)
    }
}

type Chain = ScalableCuckooFilter<[u8], DefaultHasher, Kicks>;

/// The filter and its first filter's geometry, if it matches the crate's formula.
struct Cuckoo {
    filter: Chain,
    /// `(buckets, fingerprint bits, bits)` of the first filter.
    first: Option<(u64, u32, u64)>,
}

/// The first filter's fingerprint width at rate `p` (the crate's formula: its first filter at p/2).
fn fingerprint_bits(p: f64) -> u32 {
    ((2.0 / p).log2() + ((2 * BUCKET_SIZE) as f64).log2()).ceil() as u32
}

/// The first filter's `(buckets, fingerprint bits, bits)` for `(n, p)`, by the crate's formula.
fn first_filter(n: usize, p: f64) -> (u64, u32, u64) {
    let buckets = n.div_ceil(BUCKET_SIZE).next_power_of_two() as u64;
    let fingerprint_bits = fingerprint_bits(p);
    let bits = (buckets * BUCKET_SIZE as u64 * fingerprint_bits as u64).div_ceil(8) * 8;
    (buckets, fingerprint_bits, bits)
}

/// The first filter's geometry of a chain that still has one filter: the fingerprint width from
/// its rate (the crate's formula), the buckets the largest power of two whose fingerprints fit in
/// its bits (kicked-out entries add a few bits).
fn read_first(chain: &Chain) -> Option<(u64, u32, u64)> {
    let p = chain.false_positive_probability();
    let fingerprint_bits = fingerprint_bits(p);
    let per_bucket = BUCKET_SIZE as u64 * u64::from(fingerprint_bits);
    let fit = chain.bits() / per_bucket;
    (fit > 0).then(|| {
        let buckets = 1u64 << fit.ilog2();
        (
            buckets,
            fingerprint_bits,
            (buckets * per_bucket).div_ceil(8) * 8,
        )
    })
}

static OPS: Ops<Cuckoo> = Ops {
    name: NAME,
    insert: |c, k| {
        c.filter.insert(k);
        Ok(())
    },
    contains: |c, k| c.filter.contains(k),
    stats: |c| Stats {
        memory_bytes: Some(c.filter.bits() / 8),
        // One filter in the chain: the exceptional-item store may add a few bits, but a second
        // filter has twice the buckets and a wider fingerprint.
        layout: c
            .first
            .filter(|&(_, _, bits)| c.filter.bits() < 2 * bits)
            .map(|(buckets, fingerprint_bits, _)| Declared::Cuckoo {
                buckets,
                bucket_size: BUCKET_SIZE as u32,
                fingerprint_bits,
            }),
    },
    serialize: Some(|c| {
        serde_json::to_vec(&c.filter).expect("the filter chain serializes to JSON")
    }),
};

/// `rust/scalable_cuckoo_filter`.
pub struct ScalableCuckoo;

impl Candidate for ScalableCuckoo {
    fn about(&self) -> About {
        About::rust(NAME, VERSION).with(Capabilities {
            serialize: true,
            stats: true,
            concurrent: false,
            static_build: false,
            large: true,
            // The crate scales by adding filters as it fills and states one false-positive
            // probability for the whole chain: the promise the over-fill clause holds it to.
            growable: true,
        })
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let n = usize_n(NAME, n)?;
        let filter = ScalableCuckooFilterBuilder::new()
            .initial_capacity(n)
            .false_positive_probability(p)
            .entries_per_bucket(BUCKET_SIZE)
            .rng(Kicks::default())
            .finish::<[u8]>();
        let first = Some(first_filter(n, p)).filter(|&(_, _, bits)| filter.bits() == bits);
        Ok(Adapted::boxed(Cuckoo { filter, first }, &OPS))
    }

    /// The chain from its JSON; its first filter's geometry read back from its rate and bits.
    fn deserialize(&self, bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
        let filter: Chain = serde_json::from_slice(bytes)
            .map_err(|e| refused(NAME, format!("serialized filter: {e}")))?;
        let first = read_first(&filter);
        Ok(Adapted::boxed(Cuckoo { filter, first }, &OPS))
    }
}
