//! `qfilter`: `Filter::new(n, p)`, a rank-select quotient filter of 2^q slots holding r-bit
//! remainders, r = ceil(log2(1/p)) (p clamped by the crate to [its minimum, 0.5]): declared
//! [`Declared::Quotient`] with `slots_log2 = q`, read as the fingerprint size minus r, and r read
//! from `max_error_ratio() = 2^-r`. It holds at most 95% of its slots: an insert past that is the
//! library's `CapacityExceeded`, reported as a refusal (the over-fill clause shows it). Memory from
//! `memory_usage()`. Bad input: p = 0 (and p below 2^-64 with the quotient bits) is refused
//! (`NotEnoughFingerprintBits`); NaN and p > 0.5 are silently taken as 0.5 (one remainder bit);
//! n = 0 gives the 64-slot minimum, full after 61 keys. Serialization: the crate's serde support (enabled for this crate), as JSON;
//! its deserializer checks the buffer length against the declared geometry.

use qfilter::Filter;

use super::{Adapted, Ops, refused};
use bloomlab_conform::candidate::{
    About, Candidate, CandidateError, Capabilities, Declared, Instance, Stats,
};

/// qfilter's version (pinned exactly).
pub const VERSION: &str = "0.3.1";

const NAME: &str = "rust/qfilter";

/// `(slots_log2, remainder_bits)` of `f`.
fn quotient(f: &Filter) -> (u32, u32) {
    let r = (-f.max_error_ratio().log2()).round() as u32;
    (u32::from(f.fingerprint_size()).saturating_sub(r), r)
}

static OPS: Ops<Filter> = Ops {
    name: NAME,
    insert: |f, k| f.insert(k).map(|_| ()).map_err(|e| e.to_string()),
    contains: |f, k| f.contains(k),
    stats: |f| {
        let (slots_log2, remainder_bits) = quotient(f);
        Stats {
            memory_bytes: Some(f.memory_usage() as u64),
            layout: Some(Declared::Quotient {
                slots_log2,
                remainder_bits,
            }),
        }
    },
    serialize: Some(|f| serde_json::to_vec(f).expect("a qfilter Filter serializes to JSON")),
};

/// `rust/qfilter`.
pub struct QFilter;

impl Candidate for QFilter {
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
        let f = Filter::new(n, p).map_err(|e| refused(NAME, e.to_string()))?;
        Ok(Adapted::boxed(f, &OPS))
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
        let f: Filter = serde_json::from_slice(bytes)
            .map_err(|e| refused(NAME, format!("serialized filter: {e}")))?;
        Ok(Adapted::boxed(f, &OPS))
    }
}
