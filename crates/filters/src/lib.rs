//! Interchangeable Bloom filters, built from independent axes:
//! *hash strategy* ([`hash`]) x *index scheme* ([`index`]) x *bit store* ([`store`]), on a
//! *layout*: flat ([`Bloom`]), blocked ([`Blocked512`]), split-block ([`SplitBlock`]) or counting
//! ([`Counting4`], [`Counting8`]), plus the scalable chain of stages of any of them ([`Scalable`])
//! and faithful ports of the textbook Java filters ([`TextbookFnv1aI32`],
//! [`TextbookCountingFnv1aI32`], [`TextbookScalable`]).
//!
//! Removal and growth are capabilities beside [`Filter`] ([`Removable`], [`Growable`]): a layout
//! without counters has no `remove`, and the registry says which name has which
//! ([`registry::capabilities`]).
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
//!
//! # How this crate is tested
//!
//! `cargo test -p bloomlab-filters --release` runs these (in `crates/filters/tests/`), all seeded
//! and deterministic:
//!
//! | file | what it proves | reference |
//! | --- | --- | --- |
//! | `hash_vectors.rs` | FNV-1a 64, Murmur3 x64-128 (seed 0), XXH64, XXH3-64 and XXH3-128 give the published values; our Murmur3 `(h1, h2)` is Guava's `asBytes()` as two little-endian words | FNV reference suite, xxHash's sanity check, Guava's `Murmur3Hash128Test`, SMHasher's verification value, and outputs of Guava 31.1 itself (`tests/data/guava_murmur3_128.txt`) |
//! | `index_vectors.rs` | `Bloom<Murmur3, GuavaMitz64/GuavaMitz32, FlatBits>` sets exactly the bit words Guava's `writeTo` shows for the same (n, p) and keys | `tests/data/guava_bloom_words.txt` |
//! | `sbbf_vectors.rs` | `SplitBlock<Xxh64>` reproduces, byte for byte, bitsets written by parquet-mr and by DuckDB | `tests/data/duckdb_sbbf.txt` |
//! | `guava_format.rs` | Guava files: round trips, corrupt input rejected with a named reason | |
//! | `no_false_negatives.rs` | every registered variant, built every way, finds every inserted key (proptest) | |
//! | `concurrent_inserts.rs` | inserts from many threads at once into the atomic store and every atomic variant lose no bit (fails every time against a lossy load-then-store `set_shared`) | |
//! | `counting.rs` | counting filters lose no present key under interleaved inserts and removes, saturation included (proptest); the textbook counting port loses keys by each of its two flaws, shown separately | |
//! | `counter_theory.rs` | the counter-saturation probability against the exact binomial tail and a seeded simulation (exact tests, stated false-alarm rate), beside the Fan et al. bound | |
//! | `scalable.rs` | scalable filters match their compound theory after growth and stay at or below p at 1024x growth, while `textbook-scalable` exceeds p (exact tests, stated false-alarm rate) | |
//! | `large_filters.rs` | 2^33-bit classic, blocked and split-block filters address their top half; Guava's MITZ_32 never sets a bit at or above 2^31 | |
//! | `fpr_smoke.rs` | every variant at n = 1M, p = 1% matches its theoretical FPR, [`Filter::fpr_theory`] (exact two-sided binomial test, family false-alarm rate 1e-6) | |
//! | `fill.rs` | [`fill`]: the count estimate's 95% interval covers the true count, its width matches the estimates' spread and the estimate is unbiased, over 2,000 filters per layout at fills 0.5 and 0.88, and it covers at least 95% from 1 to 300 keys (exact binomial and chi-squared tests, family false-alarm rate 1e-3 each); 10^6 keys lie in their interval; the streamed implied rate equals `fpr_given_bytes` bit for bit under 24 chunkings; keys to a rate reach it on an in-memory twin; empty, full and bad input | Swamidass & Baldi 2007 |
//! | `bad_inputs.rs` | every bad (n, p, m, k), overflowing size and unknown name gives its typed [`BloomError`] naming the value; so do a scalable filter's bad growth s, tightening r and growth beyond `u64`, and removal or growth asked of a variant without it | |
//! | `counting.rs` | the counting layouts never lose a present key under interleaved inserts and removes, saturation included (proptest); the textbook counting port loses keys by each of its flaws (saturated decrement, removed false positive), shown separately | Fan et al. 2000 |
//! | `counter_theory.rs` | the counter saturation theory equals the binomial tail (statrs), is a tight lower bound on the exact multinomial probability, lies below Fan et al.'s bound, and matches a seeded simulation of `counting4` (exact binomial tests, alpha 1e-6 each) | |
//! | `scalable.rs` | the compound theory matches measurement at 64x growth for every growable variant; at 1024x, `textbook-scalable` exceeds p and `scalable/...` stays at or below it (exact binomial tests) | Almeida et al. 2007 |
//!
//! The data files are generated, not hand-written, by committed generators:
//!
//! ```sh
//! # Guava 31.1 vectors (Debian's libguava-java provides /usr/share/java/guava.jar; Java 17)
//! javac -d /tmp/guava-vectors -cp /usr/share/java/guava.jar scripts/java/GuavaVectors.java
//! java -cp /tmp/guava-vectors:/usr/share/java/guava.jar GuavaVectors crates/filters/tests/data
//! # Parquet split-block bitsets written by DuckDB
//! pip install --target /tmp/duckdb-py duckdb
//! PYTHONPATH=/tmp/duckdb-py python3 scripts/parquet/duckdb_sbbf_vectors.py crates/filters/tests/data/duckdb_sbbf.txt
//! ```
//! Neither Java nor DuckDB is needed to run the tests.

#![warn(missing_docs)]

pub mod blocked;
pub mod capability;
pub mod classic;
pub mod counting;
pub mod error;
pub mod fill;
pub mod filter;
pub mod guava;
pub mod hash;
pub mod index;
pub mod key;
pub mod positions;
pub mod registry;
pub mod sbbf;
pub mod scalable;
pub mod shared;
pub mod sizing;
pub mod store;
pub mod textbook;
pub mod textbook_counting;
// The rate theory of each layout lives in bloomlab-theory, which the conformance suite shares.
pub use bloomlab_theory::rates as theory;

pub use blocked::Blocked512;
pub use capability::{Growable, Removable, RemovableExt};
pub use classic::Bloom;
pub use counting::{Counting, Counting4, Counting8};
pub use error::{BloomError, Result};
pub use fill::{FillCounter, FillStat};
pub use filter::{Filter, FilterExt, Geometry, Layout, Variant};
pub use guava::{GuavaBloom, GuavaStrategy};
pub use hash::{Digest, Fnv1a, HashStrategy, Lookup3, Murmur3, Xxh3, Xxh3Wide, Xxh64};
pub use index::{EnhancedDoubleHash, GuavaMitz32, GuavaMitz64, IndexScheme, KirschMitzenmacher};
pub use key::{Key, KeyBytes};
pub use positions::BitPositions;
pub use registry::{
    Axes, Capabilities, GrowableVisitor, RemovableVisitor, Spec, VariantId, VariantInfo,
    VariantVisitor,
};
pub use sbbf::SplitBlock;
pub use scalable::{Scalable, TextbookScalable};
pub use shared::{ConcurrentFill, SharedInsert};
pub use sizing::Params;
pub use store::{AtomicBits, BitStore, ConcurrentBitStore, FlatBits};
pub use textbook::TextbookFnv1aI32;
pub use textbook_counting::TextbookCountingFnv1aI32;
