//! Interchangeable Bloom filters, built from independent axes:
//! *hash strategy* ([`hash`]) x *index scheme* ([`index`]) x *bit store* ([`store`]), on a
//! *layout*: flat ([`Bloom`]), blocked ([`Blocked512`]) or split-block ([`SplitBlock`]), plus a
//! faithful port of the textbook Java filter ([`TextbookFnv1aI32`]).
//!
//! Every filter implements [`Filter`]; every registered combination is built by name through
//! [`registry`]. Bit counts are `u64` throughout: filters beyond 2^32 bits work (the textbook port
//! keeps its Java `int` limit and says so in its error). Bad sizes are [`BloomError`]s, never
//! panics.
//!
//! ```
//! use bloomlab_filters::{registry, FilterExt, Spec};
//! // By name, boxed (one dynamic call per key, none per probe):
//! let mut f = registry::build("blocked512/xxh3", Spec::Target { n: 1_000_000, p: 0.01 })?;
//! f.insert("article-1");
//! assert!(f.contains("article-1"));
//!
//! // By type, fully inlined:
//! use bloomlab_filters::{Bloom, FlatBits, KirschMitzenmacher, Xxh3};
//! let mut g = Bloom::<Xxh3, KirschMitzenmacher, FlatBits>::new(1_000_000, 0.01)?;
//! g.insert(&42u64);
//! assert!(g.contains(&42u64));
//!
//! // The digest-level API times hashing and probing separately:
//! let d = f.digest(b"article-2");
//! f.insert_digest(d);
//! assert!(f.contains_digest(d));
//!
//! // Many keys at once: the same answers, with the next keys' memory prefetched while each is tested.
//! let keys = [41u64, 42, 43];
//! let mut found = [false; 3];
//! g.contains_batch(&keys, |i, hit| found[i] = hit);
//! assert!(found[1]);
//! # Ok::<(), bloomlab_filters::BloomError>(())
//! ```

pub mod blocked;
pub mod classic;
pub mod error;
pub mod filter;
pub mod guava;
pub mod hash;
pub mod index;
pub mod key;
pub mod registry;
pub mod sbbf;
pub mod sizing;
pub mod store;
pub mod textbook;
pub mod theory;

pub use blocked::Blocked512;
pub use classic::Bloom;
pub use error::{BloomError, Result};
pub use filter::{Filter, FilterExt, Geometry, Layout, Variant};
pub use guava::{GuavaBloom, GuavaStrategy};
pub use hash::{Digest, Fnv1a, HashStrategy, Murmur3, Xxh3, Xxh3Wide, Xxh64};
pub use index::{EnhancedDoubleHash, GuavaMitz32, GuavaMitz64, IndexScheme, KirschMitzenmacher};
pub use key::{Key, KeyBytes};
pub use registry::{Spec, VariantVisitor};
pub use sbbf::SplitBlock;
pub use sizing::Params;
pub use store::{AtomicBits, BitStore, ConcurrentBitStore, FlatBits};
pub use textbook::TextbookFnv1aI32;
