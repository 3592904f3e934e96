//! `growable-bloom-filter`: `GrowableBloom::new(p, n)`, a scalable Bloom filter (a chain of
//! partitioned filters, each larger and with a tighter rate than the last, growing as keys come).
//! It declares no layout: past its first filter it is not one of [`bloomlab_conform::Declared`]'s layouts,
//! and the crate does not expose the chain. It reports no memory (no API for it). Serialization:
//! the crate's serde support, as JSON. `new` asserts `0 < p < 1` (p = 0, NaN, p >= 1 panic); its
//! `n = 0` check is a `debug_assert!`, so a release build accepts n = 0 and the first insert
//! panics (`Option::unwrap()` on `None`).

use growable_bloom_filter::GrowableBloom;

use super::{Adapted, Ops, refused, usize_n};
use bloomlab_conform::candidate::{
    About, Candidate, CandidateError, Capabilities, Instance, Stats,
};

/// growable-bloom-filter's version (the workspace pin).
pub const VERSION: &str = "2.1.1";

const NAME: &str = "rust/growable-bloom-filter";

static OPS: Ops<GrowableBloom> = Ops {
    name: NAME,
    insert: |f, k| {
        f.insert(k);
        Ok(())
    },
    contains: |f, k| f.contains(k),
    stats: |_| Stats::default(),
    serialize: Some(|f| serde_json::to_vec(f).expect("a GrowableBloom serializes to JSON")),
};

/// `rust/growable-bloom-filter`.
pub struct Growable;

impl Candidate for Growable {
    fn about(&self) -> About {
        About::rust(NAME, VERSION).with(Capabilities {
            serialize: true,
            stats: false,
            concurrent: false,
            static_build: false,
            large: true,
            // Its point: a Bloom filter that grows past its n while keeping the error ratio it was
            // built with.
            growable: true,
        })
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let n = usize_n(NAME, n)?;
        Ok(Adapted::boxed(GrowableBloom::new(p, n), &OPS))
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
        let f: GrowableBloom = serde_json::from_slice(bytes)
            .map_err(|e| refused(NAME, format!("serialized filter: {e}")))?;
        Ok(Adapted::boxed(f, &OPS))
    }
}
