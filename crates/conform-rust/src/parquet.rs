//! The `parquet` crate's split-block Bloom filter, `Sbbf::new_with_ndv_fpp(n, p)`: 256-bit blocks
//! of eight 32-bit words, one bit set in each word, the block chosen by the upper 32 bits of the
//! key's XXH64 (seed 0, as the Parquet format specifies): [`Declared::SplitBlock`].
//!
//! Sizing: the crate rounds the bit count up to a power of two and clamps it to [32 bytes,
//! 128 MiB], so it is never large, and past about 10^8 keys at p = 1% the clamp silently gives a
//! filter smaller than the promise needs. It refuses p outside [0, 1) and NaN with an error, but
//! p = 0, and any p below about 1e-130 (where 1 - p^(1/8) rounds to 1 in f64), size the filter by
//! `-8 n / ln(1) = -inf`, cast to 0 bytes and raised to the 32-byte minimum: a 256-bit filter,
//! silently (75% false positives after 100 keys). Serialization: the crate's own bytes (`write`:
//! Thrift header and bitset; `from_bytes`).

use parquet::bloom_filter::Sbbf as Split;

use super::{Adapted, Ops, refused};
use bloomlab_conform::candidate::{
    About, Candidate, CandidateError, Capabilities, Declared, Instance, Stats,
};

/// parquet's version (the workspace pin).
pub const VERSION: &str = "60.1.0";

const NAME: &str = "rust/parquet/Sbbf";

static OPS: Ops<Split> = Ops {
    name: NAME,
    insert: |f, k| {
        f.insert(k);
        Ok(())
    },
    contains: |f, k| f.check(k),
    stats: |f| Stats {
        memory_bytes: Some(f.num_blocks() as u64 * 32),
        layout: Some(Declared::SplitBlock {
            bits: f.num_blocks() as u64 * 256,
        }),
    },
    serialize: Some(|f| {
        let mut out = Vec::new();
        f.write(&mut out).expect("writing to a Vec cannot fail");
        out
    }),
};

/// `rust/parquet/Sbbf`.
pub struct Sbbf;

impl Candidate for Sbbf {
    fn about(&self) -> About {
        About::rust(NAME, VERSION).with(Capabilities {
            serialize: true,
            stats: true,
            concurrent: false,
            static_build: false,
            large: false,
            growable: false,
        })
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let f = Split::new_with_ndv_fpp(n, p).map_err(|e| refused(NAME, e.to_string()))?;
        Ok(Adapted::boxed(f, &OPS))
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
        let f = Split::from_bytes(bytes).map_err(|e| refused(NAME, e.to_string()))?;
        Ok(Adapted::boxed(f, &OPS))
    }
}
