//! The in-process candidates of the conformance suite (`bloomlab-conform`): bloomlab's own filters
//! ([`own`], `bloomlab/<variant>`) and third-party Rust filter crates, each pinned in the
//! workspace (with `=x.y.z` where the crate is new to it; `Cargo.lock` holds the rest to one
//! version) and named `rust/<crate>[/<type>]` (a second, older version of a crate kept to
//! reproduce a known defect is `rust/<crate>@<version>`).
//!
//! | candidate | layout declared | large (> 2^32 bits) | serialization |
//! | --- | --- | --- | --- |
//! | `rust/fastbloom`, `rust/fastbloom/atomic`, `rust/fastbloom@0.15.0` | `Classic` | yes (usize bits) | own bytes (`as_slice` / `from_vec`) |
//! | `rust/bloomfilter` | `Classic` | yes (u64 bits) | own bytes (`to_bytes` / `from_bytes`) |
//! | `rust/xorf/Xor8`, `BinaryFuse8`, `BinaryFuse16` | `Xor` | no | own bytes (public fields / DMA descriptor) |
//! | `rust/growable-bloom-filter` | none (a chain of growing filters) | yes (usize) | serde (JSON) |
//! | `rust/qfilter` | `Quotient` | yes (u64 capacity) | serde (JSON) |
//! | `rust/scalable_cuckoo_filter` | `Cuckoo` until it grows | yes (usize) | serde (JSON) |
//! | `rust/parquet/Sbbf` | `SplitBlock` | no (capped at 128 MiB) | own bytes (Thrift header + bitset) |
//!
//! Every candidate is built reproducibly: where a library takes a hash seed or a random generator,
//! the adapter passes a fixed one ([`HASH_SEED`]), so two runs of the suite measure the same filter
//! (all but xorf's binary fuse filters, which fill their unused slots from the thread's generator).
//! Each adapter passes `n` and `p` to the library as given, so the bad-input clause sees what the
//! library itself does; only the xor/fuse adapters, whose libraries take no `p` at all, define
//! their own contract (see [`xorf`]).
//!
//! The crate versions in [`VERSIONS`] are checked against `Cargo.lock` by a test, so a version
//! bump cannot leave a stale version in the reports.
//!
//! A crate of their own, used by `bloomlab conform` (crates/tool): the suite (`bloomlab-conform`),
//! which an author adds as a dev-dependency and bloomlab-report renders, depends on no filter
//! library, so neither an author's build nor README's main command (`sweep`) compiles these.

#![warn(missing_docs)]

use std::sync::Arc;

use bloomlab_conform::candidate::{Candidate, CandidateError, Instance, KeyBatch, Stats};

pub mod bloomfilter;
pub mod cuckoo;
pub mod fastbloom;
pub mod growable;
pub mod own;
pub mod parquet;
pub mod qfilter;
pub mod xorf;

/// The seed every adapter gives a library that takes one: fixed, so runs are reproducible.
pub const HASH_SEED: u64 = 0x0b10_0c0f_2700_0001;

/// `(crate name as in Cargo.lock, version)` of every library adapted here.
pub const VERSIONS: &[(&str, &str)] = &[
    ("fastbloom", fastbloom::VERSION),
    ("fastbloom", fastbloom::PRE22_VERSION),
    ("bloomfilter", bloomfilter::VERSION),
    ("xorf", xorf::VERSION),
    ("growable-bloom-filter", growable::VERSION),
    ("qfilter", qfilter::VERSION),
    ("scalable_cuckoo_filter", cuckoo::VERSION),
    ("parquet", parquet::VERSION),
];

/// Every third-party candidate, in report order.
pub fn all() -> Vec<Arc<dyn Candidate>> {
    vec![
        Arc::new(fastbloom::FastBloom),
        Arc::new(fastbloom::FastBloomAtomic),
        Arc::new(fastbloom::FastBloomPre22),
        Arc::new(bloomfilter::Bloomfilter),
        Arc::new(xorf::Static::<::xorf::Xor8>::default()),
        Arc::new(xorf::Static::<::xorf::BinaryFuse8>::default()),
        Arc::new(xorf::Static::<::xorf::BinaryFuse16>::default()),
        Arc::new(growable::Growable),
        Arc::new(qfilter::QFilter),
        Arc::new(cuckoo::ScalableCuckoo),
        Arc::new(parquet::Sbbf),
    ]
}

/// Every in-process candidate, in report order: the third-party crates, then bloomlab's own
/// ([`own::all`]).
pub fn catalogue() -> Vec<Arc<dyn Candidate>> {
    let mut v = all();
    v.extend(own::all());
    v
}

/// The in-process candidate named `name` (third-party or bloomlab's own); the error lists the
/// known names.
pub fn by_name(name: &str) -> Result<Arc<dyn Candidate>, String> {
    bloomlab_conform::subjects::find(catalogue(), name)
}

/// A library's refusal, as the suite reports it.
pub(crate) fn refused(subject: &str, message: impl Into<String>) -> CandidateError {
    CandidateError::Refused {
        subject: subject.into(),
        message: message.into(),
    }
}

/// What an adapter tells [`Adapted`] about one library type: plain function pointers, so a lookup
/// costs one indirect call per key and none per probe.
pub(crate) struct Ops<F: 'static> {
    /// The candidate's name (for errors).
    pub name: &'static str,
    /// Inserts one key; an error is the library's refusal (a full quotient filter).
    pub insert: fn(&mut F, &[u8]) -> Result<(), String>,
    /// Looks one key up.
    pub contains: fn(&F, &[u8]) -> bool,
    /// Memory and declared layout.
    pub stats: fn(&F) -> Stats,
    /// The library's own bytes, where it offers them.
    pub serialize: Option<fn(&F) -> Vec<u8>>,
}

/// An [`Instance`] over a library filter `F` and its [`Ops`].
pub(crate) struct Adapted<F: 'static> {
    filter: F,
    ops: &'static Ops<F>,
}

impl<F: Send + 'static> Adapted<F> {
    /// Boxes `filter` with `ops` as an instance.
    pub(crate) fn boxed(filter: F, ops: &'static Ops<F>) -> Box<dyn Instance> {
        Box::new(Adapted { filter, ops })
    }
}

impl<F: Send + 'static> Instance for Adapted<F> {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        for (i, k) in keys.iter().enumerate() {
            (self.ops.insert)(&mut self.filter, k).map_err(|e| {
                refused(
                    self.ops.name,
                    format!("insert of key {i} of a batch of {}: {e}", keys.len()),
                )
            })?;
        }
        Ok(())
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        out.clear();
        out.extend(keys.iter().map(|k| (self.ops.contains)(&self.filter, k)));
        Ok(())
    }

    fn stats(&mut self) -> Result<Stats, CandidateError> {
        Ok((self.ops.stats)(&self.filter))
    }

    fn serialize(&mut self) -> Result<Option<Vec<u8>>, CandidateError> {
        Ok(self.ops.serialize.map(|s| s(&self.filter)))
    }
}

/// Splits `bytes` into a little-endian `u32` header and the rest, or says what is missing.
pub(crate) fn split_u32<'a>(
    subject: &str,
    bytes: &'a [u8],
) -> Result<(u32, &'a [u8]), CandidateError> {
    match bytes.split_first_chunk::<4>() {
        Some((head, rest)) => Ok((u32::from_le_bytes(*head), rest)),
        None => Err(refused(
            subject,
            format!(
                "serialized filter of {} bytes has no 4-byte header",
                bytes.len()
            ),
        )),
    }
}

/// `n` as the library's `usize`, or a refusal naming it (only on targets narrower than 64 bits).
pub(crate) fn usize_n(subject: &str, n: u64) -> Result<usize, CandidateError> {
    usize::try_from(n).map_err(|_| refused(subject, format!("n = {n} exceeds usize")))
}
