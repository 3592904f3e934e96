//! Sketches beside the filters, sold by contracts the sketch sweep checks:
//! - [`HyperLogLog`] (precision 4..=18): relative standard error about `1.04 / sqrt(2^p)`;
//!   module [`hll`] says which estimators read its registers ([`Estimator`]: the original one,
//!   with linear counting in the small range and no large-range correction on a 64-bit hash,
//!   and Ertl's improved estimator, which has no transition bias) and why;
//! - [`CountMin`] (`w = ceil(e / epsilon)`, `d = ceil(ln(1 / delta))`, optionally conservative
//!   update): never undercounts, and overcounts by more than `epsilon N` with probability at most
//!   `delta` ([`cms`]); rows by double hashing `h1 + i h2` or independent ([`Rows`]).
//!
//! Both use the filters' hash axis ([`bloomlab_filters::HashStrategy`]: xxh3, murmur3, fnv1a,
//! ...) and key encodings ([`bloomlab_filters::Key`]); both merge, and refuse to merge sketches
//! of other shapes or hashes with an error naming both. [`CardinalitySketch`] is the interface
//! the sweep drives; besides ours it has an adapter for the crates.io `hyperloglogplus`
//! ([`PeerHll`]) here and one for Redis's PFADD/PFCOUNT in `bloomlab-redis`.
//!
//! ```
//! use bloomlab_sketches::{CountMin, HyperLogLog};
//! use bloomlab_filters::Xxh3;
//! let mut hll = HyperLogLog::<Xxh3>::new(14)?;
//! for i in 0..100_000u64 {
//!     hll.insert(&i);
//! }
//! assert!((hll.estimate() / 100_000.0 - 1.0).abs() < 0.05);
//!
//! let mut cms = CountMin::<Xxh3>::new(0.001, 0.01)?; // 2719 x 5
//! cms.add("page-1", 3);
//! assert!(cms.estimate("page-1") >= 3);
//! assert!(HyperLogLog::<Xxh3>::new(19).is_err()); // "precision p = 19 is invalid: it must be in 4..=18"
//! # Ok::<(), bloomlab_sketches::SketchError>(())
//! ```

#![warn(missing_docs)]

pub mod cardinality;
pub mod cms;
pub mod error;
pub mod hll;

pub use cardinality::{
    CardinalitySketch, DynSketch, HllEstimators, PeerHll, build_ours, build_peer,
};
pub use cms::{CountMin, Rows};
pub use error::SketchError;
pub use hll::{Estimator, HyperLogLog};
