//! `bloomfilter`: `Bloom::new_for_fp_rate_with_seed(n, p, seed)` (v3 returns a `Result`; it
//! asserts `n > 0` and `0 < p < 1`, so n = 0, p = 0, NaN and p >= 1 all panic). A flat array of `len()` bits probed
//! `number_of_hash_functions()` times from two SipHash-1-3 hashes, each `% bits`:
//! [`Declared::Classic`].

use bloomfilter::Bloom;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::{Adapted, HASH_SEED, Ops, refused, usize_n};
use bloomlab_conform::candidate::{
    About, Candidate, CandidateError, Capabilities, Declared, Instance, Stats,
};

/// bloomfilter's version (the workspace pin).
pub const VERSION: &str = "3.0.2";

const NAME: &str = "rust/bloomfilter";

/// The 32-byte seed: four distinct words drawn from [`HASH_SEED`]. Its halves key the crate's two
/// SipHash instances, whose outputs are the double hash's h1 and h2 (probe i at h1 + i h2): equal
/// halves would make h1 = h2, putting probes 0 and 1 on one bit (3.8% instead of 1% at p = 1%).
fn seed() -> [u8; 32] {
    let mut s = [0u8; 32];
    for (i, c) in s.chunks_mut(8).enumerate() {
        let word = xxh3_64_with_seed(&HASH_SEED.to_le_bytes(), i as u64);
        c.copy_from_slice(&word.to_le_bytes());
    }
    s
}

static OPS: Ops<Bloom<[u8]>> = Ops {
    name: NAME,
    insert: |f, k| {
        f.set(k);
        Ok(())
    },
    contains: |f, k| f.check(k),
    stats: |f| Stats {
        memory_bytes: Some(f.as_slice().len() as u64),
        layout: Some(Declared::Classic {
            bits: f.len(),
            hashes: f.number_of_hash_functions(),
        }),
    },
    serialize: Some(|f| f.to_bytes()),
};

/// `rust/bloomfilter`.
pub struct Bloomfilter;

impl Candidate for Bloomfilter {
    fn about(&self) -> About {
        About::rust(NAME, VERSION).with(Capabilities {
            serialize: true,
            stats: true,
            concurrent: false,
            static_build: false,
            large: true,
            growable: false,
        })
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let n = usize_n(NAME, n)?;
        let f = Bloom::new_for_fp_rate_with_seed(n, p, &seed()).map_err(|e| refused(NAME, e))?;
        Ok(Adapted::boxed(f, &OPS))
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
        let f = Bloom::from_bytes(bytes.to_vec()).map_err(|e| refused(NAME, e))?;
        Ok(Adapted::boxed(f, &OPS))
    }
}
