//! Bloom filters whose bits live in Redis, for filters several services share (a cache-penetration
//! guard, a crawler's seen-URL set): the flat ([`bloomlab_filters::Bloom`]) and blocked
//! ([`bloomlab_filters::Blocked512`]) layouts on every hash and index scheme, the same bits as in
//! memory, sharded past Redis's 512 MiB string limit, pipelined, on one server or a cluster.
//!
//! ```no_run
//! use bloomlab_filters::{Bloom, FlatBits, KirschMitzenmacher, Xxh3};
//! use bloomlab_redis::{Connection, RedisBloom};
//! let conn = Connection::single("redis://127.0.0.1:6379")?;
//! let mut seen = RedisBloom::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>::create_or_open(
//!     conn, "crawler:seen", 10_000_000, 0.001)?;
//! seen.insert("https://example.invalid/")?;                 // one round trip
//! assert!(seen.contains("https://example.invalid/")?);
//! let urls: Vec<String> = (0..10_000).map(|i| format!("https://example.invalid/{i}")).collect();
//! seen.insert_batch(&urls, 256)?;                            // 256 keys per round trip
//! seen.contains_batch(&urls, 256, |i, hit| assert!(hit, "{}", urls[i]))?;
//! # Ok::<(), bloomlab_redis::RedisFilterError>(())
//! ```
//!
//! # What is stored where
//!
//! A filter named `NAME` (printable ASCII, no spaces or braces) is:
//! - the hash `{NAME}:config`: `format_version`, `layout`, `hash`, `index`, `n`, `p`, `bits`,
//!   `hashes`, `shard_bits`, `shards` and a `checksum` of the others ([`config`]);
//! - the strings `{NAME:0}:bits` ... `{NAME:S-1}:bits`, the shards, each holding `shard_bits`
//!   bits (the last one the rest): at most 2^32 bits = 512 MiB each, by default
//!   [`config::DEFAULT_SHARD_BITS`] = 2^32 - 4096, the largest that takes 512 MiB of server memory
//!   rather than 640 ([`keys`], [`config`]).
//!
//! **Opening checks the config.** A client that opens `NAME` with other (n, p), another shard size,
//! layout, hash or index scheme gets [`RedisFilterError::ConfigMismatch`] naming the field, the
//! stored value and the requested one: never a filter that silently probes other bits. A hash
//! edited by hand fails its checksum, a missing or unreadable field is named, and a shard whose
//! length is not the config's (deleted, evicted, lost in a restart without persistence) is
//! [`RedisFilterError::Corrupt`].
//!
//! **The bytes are the in-memory filter's bytes.** Bit position `i` of the in-memory filter is
//! bit `i % 8` (least significant first) of byte `i / 8` of its little-endian words; Redis's
//! SETBIT/BITFIELD number bits from the most significant one, so the store writes position `i`
//! at offset `(i & !7) | (7 - i % 8)` ([`keys::redis_offset`]). `GETRANGE` of the shards,
//! concatenated, is byte for byte the in-memory twin's bit array (tested).
//!
//! # Sharding, and why the theory still holds
//!
//! Shards are contiguous ranges of the *same* global bit index: position `g` of a filter of m
//! bits is bit `g % shard_bits` of shard `g / shard_bits`. Positions are computed exactly as in
//! memory ([`bloomlab_filters::BitPositions`]) over the whole m, so the set of bits a key sets,
//! the fill, and therefore the false-positive rate are the twin's, and the twin's theory
//! ([`RedisBloom::geometry`], [`RedisBloom::fpr_theory`]) applies unchanged; splitting the array
//! only decides which Redis key holds a bit. (A design that picked a shard per key and then
//! probed inside it would be a blocked layout with huge blocks, with its own theory.) Shard sizes
//! are multiples of 512 bits, so a blocked filter's block never straddles two shards.
//!
//! Redis caps a string at 512 MiB (`proto-max-bulk-len`, and SETBIT's 2^32-bit offset limit), which
//! is why common clients cap a filter at 2^32 bits; here a larger filter simply has more shards.
//!
//! # Round trips
//!
//! Each key costs one BITFIELD command per shard its k positions fall in (`SET u1 <offset> 1`
//! for inserts, `BITFIELD_RO ... GET u1 <offset>` for lookups): one command for the blocked
//! layout or a one-shard filter, sent as one round trip ([`RedisBloom::insert`],
//! [`RedisBloom::contains`]). [`RedisBloom::insert_batch`] and [`RedisBloom::contains_batch`]
//! pipeline many keys' commands per round trip, with the same answers.
//!
//! # Concurrency
//!
//! Redis executes each BITFIELD atomically and the store only ever sets bits, so any number of
//! clients inserting into the same filter lose nothing: every key whose insert returned is found
//! by every client, and the bits are those of one in-memory filter fed the union of their keys
//! (tested with racing connections). Creation is atomic too: the config is written only if
//! absent, then shards are grown with a command that changes no bit.
//!
//! # Cluster
//!
//! Each shard has its own hash tag (`{NAME:i}`), so a filter of several shards spreads over the
//! cluster's nodes by slot; the config sits on its own slot. [`Connection::cluster`] routes each
//! command to the node owning its key, and a pipeline goes to every node involved at once. The
//! answers and bytes are the single server's (tested on a 3-master cluster).
//!
//! # Through the sweep
//!
//! `sweep --redis redis://HOST:PORT --filters redis/classic/xxh3/km,redis/blocked512/xxh3 ...`
//! runs the static sweep's rows in Redis ([`names`] lists every Redis variant; `sweep --list`
//! prints them): each row's filter is created fresh ([`RedisBloom::create_new`]) under a name
//! with a random run id ([`keys::run_id`]), filled and sampled 4096 keys per round trip by the
//! same trial code as in memory, and deleted. Its statistical columns equal the in-memory twin's
//! row bit for bit ([`sweep`]; tested in `crates/cli/tests/redis_sweep.rs`).
//!
//! # Export and import
//!
//! [`dump`] copies a filter to a file and back, bit-exact, streamed in 4 MiB chunks whatever its
//! size, in bloomlab's checksummed format or Guava's `writeTo` format; an import appears on the
//! server only whole (`bloomlab filter export` / `import`).
//!
//! # What it costs
//!
//! [`costs`] measures a Redis filter against its in-memory twin: round trips by batch size on a
//! server and a cluster, one filter of more than 2^32 bits, and the sweep's Redis rows against
//! the twins' rows; it returns a typed [`costs::Outcome`] that the `redis-costs` binary renders
//! through `bloomlab_report::redis_costs`.
//!
//! # Measuring runs: fresh filters, expiry, leftovers
//!
//! [`RedisBloom::create_or_open`] is for a filter several clients share. A measuring run needs
//! all-zero bits, so it uses [`RedisBloom::create_new`]: the config and each shard are created
//! only if absent (each in one atomic script), any existing key is [`RedisFilterError::Exists`]
//! naming it (never opened, never overwritten), and every key can carry an expiry that use
//! re-arms, so a killed run's keys disappear by themselves. `scripts/redis-local.sh clean URL`
//! deletes bloomlab's leftovers at once: it SCANs for `{bloomlab-*` and `bloomlab-*` only.
//!
//! # Rebuild and swap under readers
//!
//! [`generation`]: a *generational* filter is a pointer key naming its current generation (an
//! ordinary filter). [`generation::swap`] builds a new generation from keys (or
//! [`generation::swap_from_file`] loads an exported file), verifies it, and switches the pointer
//! with one compare-and-set, so readers ([`generation::Reader`]) never see a half-built filter;
//! the old generation expires after a grace period. [`generation::swap_under_readers`] counts
//! what concurrent readers saw (false negatives: 0, tested on a server and a cluster).
//!
//! # Errors
//!
//! [`RedisFilterError`]: connection failure naming the URL; a failed command naming the URL, the
//! operation and the key (a server that stops mid-run, memory refused by `maxmemory`); config
//! mismatch; corrupt config or shard; a size beyond the limits (shard size, shard count, name).
//! URLs are always shown with their user and password replaced by `***` ([`redact()`]). On a
//! cluster, a refused command is retried for a bounded time ([`conn::RETRY_VAR`], 3 s by
//! default) and the error then names the nodes that are down or unreachable, or that the URLs
//! are of a server not in cluster mode ([`conn::diagnose_cluster`]).
//! Run servers with `--maxmemory-policy noeviction`: an evicting server drops shards, which the
//! next open reports, but keys inserted before that are lost.
//!
//! # Tests and servers
//!
//! The tests that need a server read `BLOOMLAB_REDIS_URL` (one server) and
//! `BLOOMLAB_REDIS_CLUSTER_URLS` (comma-separated cluster node URLs); the > 2^32-bit test also
//! needs `BLOOMLAB_REDIS_BIG=1` (about 600 MB of server memory). Without them the tests say they
//! were skipped and how to enable them; with `BLOOMLAB_REQUIRE_SERVICES=1` (CI) a missing server
//! fails them. `scripts/redis-local.sh` starts throwaway servers on loopback:
//!
//! ```sh
//! export BLOOMLAB_REDIS_URL=$(scripts/redis-local.sh start)
//! export BLOOMLAB_REDIS_CLUSTER_URLS=$(scripts/redis-local.sh cluster)
//! BLOOMLAB_REDIS_BIG=1 cargo test --release -p bloomlab-redis
//! scripts/redis-local.sh stop
//! ```

#![warn(missing_docs)]

pub mod admin;
pub mod config;
pub mod conn;
pub mod costs;
pub mod dump;
pub mod error;
pub mod filter;
pub mod generation;
pub mod hll;
pub mod keys;
pub mod redact;
pub mod sweep;
pub mod variants;

pub use config::Config;
pub use conn::Connection;
pub use error::{RedisFilterError, Result};
pub use filter::{Loading, RedisBloom};
pub use hll::RedisHll;
pub use redact::{redact, redact_words};
pub use variants::{RedisVisitor, names, redis_name, visit};
