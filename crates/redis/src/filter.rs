//! [`RedisBloom`]: a flat or blocked Bloom filter whose bits are Redis strings.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use bloomlab_filters::{BitPositions, Digest, Geometry, Key};
use redis::{Cmd, Value};

use crate::config::{Config, DEFAULT_SHARD_BITS, MAX_SHARD_BITS, Twin};
use crate::conn::Connection;
use crate::error::{RedisFilterError, Result};
use crate::keys::{check_name, config_key, redis_offset, shard_key};

/// Creates the config hash only if it does not exist, in one atomic step, so that two clients
/// creating the same filter at once cannot overwrite each other's parameters: returns 1 if it
/// created the hash, 0 if one was there.
const CREATE_IF_ABSENT: &str = "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end \
     redis.call('HSET', KEYS[1], unpack(ARGV)) return 1";

/// Creates a shard string of ARGV[1] + 1 zero bytes if the key does not exist.
const CREATE_SHARD: &str = "if redis.call('EXISTS', KEYS[1]) == 0 then \
     redis.call('SETRANGE', KEYS[1], ARGV[1], '\\0') end return 1";

/// Creates a fresh filter's config hash in one atomic step, only if no key of that name exists,
/// with an expiry of ARGV[1] milliseconds (none when 0): returns 1 if it created the hash, 0 if
/// the key was there (then nothing is written). KEYS[1] is the config key; ARGV[2..] the fields.
const CREATE_FRESH: &str = "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end \
     redis.call('HSET', KEYS[1], unpack(ARGV, 2)) \
     if tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return 1";

/// Creates a fresh filter's shard of ARGV[1] + 1 zero bytes with an expiry of ARGV[2]
/// milliseconds (none when 0), only if the key does not exist: 1 if created, 0 if it existed
/// (untouched: it may be another run's bits).
const CREATE_FRESH_SHARD: &str = "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end \
     redis.call('SETRANGE', KEYS[1], ARGV[1], '\\0') \
     if tonumber(ARGV[2]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 1";

/// How long [`RedisBloom::create_or_open_sharded`] waits for another client that is creating the
/// same filter to finish sizing its shards (about 0.3 s per 512 MiB shard on this project's
/// machine), before it reports them as lost.
pub const CREATOR_WAIT: Duration = Duration::from_secs(10);

/// A Bloom filter of in-memory variant `F` (a flat [`bloomlab_filters::Bloom`] or a
/// [`bloomlab_filters::Blocked512`]) whose bits live in Redis.
///
/// Guarantees:
/// - *The same bits as in memory.* Each key sets exactly the positions `F::insert_digest` sets
///   in an `F` of the same (n, p), and the bytes of the Redis strings, concatenated in shard
///   order, are the in-memory filter's bytes ([`bytes`](Self::bytes)). So answers, false positives
///   included, are the in-memory twin's, and the twin's theory ([`Self::geometry`]) applies.
/// - *No false negatives, also under concurrency.* After `insert(x)` returns `Ok`, `contains(x)`
///   from any client is true. Every key's bits are set by BITFIELD commands, which Redis executes
///   atomically and which only ever set bits, so clients racing on the same filter lose none.
/// - *No silent remap.* Opening an existing filter with other parameters, or as another layout,
///   hash or index scheme, is a [`RedisFilterError::ConfigMismatch`] naming the field.
/// - *No invented answers.* A failed command (server gone, memory refused) is an error naming the
///   address, the operation and the key; nothing is retried or guessed.
///
/// Methods take `&mut self` because the connection is a single socket; open one filter handle
/// per thread or client.
pub struct RedisBloom<F> {
    store: Store,
    /// (shard, Redis offset) of the current key's positions, reused between keys.
    scratch: Vec<(u64, u64)>,
    _variant: PhantomData<fn() -> F>,
}

/// The part of a [`RedisBloom`] that does not depend on its twin type: the connection, the keys,
/// the config and the expiry, and every command that does not compute positions. Written without
/// `F` so that it is compiled once rather than once per variant.
pub(crate) struct Store {
    conn: Connection,
    name: String,
    config: Config,
    config_key: String,
    shard_keys: Vec<String>,
    /// The expiry every key was given at creation ([`RedisBloom::create_new`]), re-armed as the
    /// filter is used, and when it was last re-armed.
    expiry: Option<(Duration, Instant)>,
}

impl<F> std::fmt::Debug for RedisBloom<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBloom")
            .field("url", &self.store.conn.url())
            .field("name", &self.store.name)
            .field("config", &self.store.config)
            .finish()
    }
}

/// Whether a command sets a key's bits or reads them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Insert,
    Lookup,
}

impl Op {
    fn label(self) -> &'static str {
        match self {
            Op::Insert => "insert",
            Op::Lookup => "lookup",
        }
    }
}

impl<F: BitPositions> RedisBloom<F> {
    fn with_store(store: Store) -> Self {
        Self {
            store,
            scratch: Vec::new(),
            _variant: PhantomData,
        }
    }

    /// Opens the filter `name` sized for `n` keys at rate `p` by `F`'s rule, creating it if it
    /// does not exist, with shards of [`DEFAULT_SHARD_BITS`] (2^32 - 4096 bits): a filter of up
    /// to about 4.29e9 bits is one Redis string. See [`Self::create_or_open_sharded`].
    pub fn create_or_open(conn: Connection, name: &str, n: u64, p: f64) -> Result<Self> {
        Self::create_or_open_sharded(conn, name, n, p, DEFAULT_SHARD_BITS)
    }

    /// Opens the filter `name` sized for `n` keys at rate `p` in shards of `shard_bits` bits
    /// (a multiple of 512, at most 2^32), creating it if it does not exist.
    ///
    /// Creating writes the config hash (atomically, only if absent) and then sizes every shard to
    /// its full length with zero bits, so the memory is taken, or refused by the server's
    /// `maxmemory`, at once; a refused creation removes what it wrote. Opening an existing filter
    /// checks that every stored field equals the requested one
    /// ([`RedisFilterError::ConfigMismatch`] names the first that differs, with both values) and
    /// that every shard has its length ([`RedisFilterError::Corrupt`] otherwise).
    pub fn create_or_open_sharded(
        conn: Connection,
        name: &str,
        n: u64,
        p: f64,
        shard_bits: u64,
    ) -> Result<Self> {
        Store::create_or_open(conn, name, Twin::of::<F>(), n, p, shard_bits).map(Self::with_store)
    }

    /// Creates the filter `name` fresh, sized for `n` keys at rate `p` in shards of `shard_bits`
    /// bits, for a measuring run: a filter whose bits must start all zero.
    ///
    /// Guarantees:
    /// - *Never reuses or overwrites.* The config hash is created atomically only if its key is
    ///   absent, and each shard only if its key is absent; if any of the filter's keys exists
    ///   (a leftover of a killed run, another client's filter) the result is
    ///   [`RedisFilterError::Exists`] naming that key, and whatever this call created is deleted.
    /// - *Leftovers go away.* With `expiry = Some(t)`, every key gets that expiry (PEXPIRE, in
    ///   the same atomic step that creates it), so a run killed before [`Self::destroy`] leaves
    ///   nothing behind after `t`. While the filter is used, the expiry is re-armed on every key
    ///   whenever a quarter of `t` has passed since the last time (one pipelined PEXPIRE per
    ///   key, before the next command), so a live run's keys expire only if it sends nothing
    ///   for about 3/4 of `t`; a key found gone then is [`RedisFilterError::Expired`], never a
    ///   silently re-created empty shard. `t` must be at least 1 ms.
    pub fn create_new(
        conn: Connection,
        name: &str,
        n: u64,
        p: f64,
        shard_bits: u64,
        expiry: Option<Duration>,
    ) -> Result<Self> {
        Store::create_new(conn, name, Twin::of::<F>(), n, p, shard_bits, expiry)
            .map(Self::with_store)
    }

    /// The expiry given at creation by [`Self::create_new`], if any.
    pub fn expiry(&self) -> Option<Duration> {
        self.store.expiry.map(|(t, _)| t)
    }

    /// Every Redis key of the filter: its config hash, then its shards.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.store.keys()
    }

    /// Opens the existing filter `name` with its stored (n, p) and shard size. Errors if there is
    /// none ([`RedisFilterError::NotFound`]), if it was made with another layout, hash or index
    /// scheme than `F`'s ([`RedisFilterError::ConfigMismatch`]), or if its config or shards are
    /// damaged ([`RedisFilterError::Corrupt`]).
    pub fn open(conn: Connection, name: &str) -> Result<Self> {
        Store::open(conn, name, Twin::of::<F>()).map(Self::with_store)
    }

    /// Deletes the filter: its shards and its config hash.
    pub fn destroy(mut self) -> Result<()> {
        self.store.delete_keys()
    }

    /// The filter's name (its keys are [`crate::keys::config_key`] and [`crate::keys::shard_key`]).
    pub fn name(&self) -> &str {
        &self.store.name
    }

    /// The stored parameters.
    pub fn config(&self) -> &Config {
        &self.store.config
    }

    /// The connection's URL.
    pub fn url(&self) -> &str {
        self.store.conn.url()
    }

    /// The Redis key of shard `i` (`i < config().shards`).
    pub fn shard_key(&self, i: u64) -> &str {
        &self.store.shard_keys[i as usize]
    }

    /// The shape of the bit array: the in-memory twin's, since the positions are its positions
    /// and shards are contiguous ranges of them.
    pub fn geometry(&self) -> Geometry {
        F::geometry_of(self.store.config.bits, self.store.config.hashes)
    }

    /// The theoretical false-positive rate after `members` distinct keys, the twin's.
    pub fn fpr_theory(&self, members: u64) -> f64 {
        F::theory_of(self.store.config.bits, self.store.config.hashes, members)
    }

    /// Appends the commands for digest `d` (one BITFIELD per shard its positions fall in: one
    /// for the blocked layout and for a one-shard filter), and how many there are.
    fn push_commands(&mut self, op: Op, d: Digest, cmds: &mut Vec<Cmd>) -> usize {
        let c = &self.store.config;
        let (bits, hashes, shard_bits) = (c.bits, c.hashes, c.shard_bits);
        let scratch = &mut self.scratch;
        scratch.clear();
        F::for_each_position(bits, hashes, d, |g| {
            scratch.push((g / shard_bits, redis_offset(g % shard_bits)));
        });
        self.store.push_planned(op, &mut self.scratch, cmds)
    }

    /// The shard of the first position planned last (labels errors).
    fn planned_shard(&self) -> u64 {
        self.scratch.first().map_or(0, |&(shard, _)| shard)
    }

    /// Inserts a digest: one round trip (one BITFIELD command per shard touched).
    pub fn insert_digest(&mut self, d: Digest) -> Result<()> {
        let mut cmds = Vec::with_capacity(1);
        self.push_commands(Op::Insert, d, &mut cmds);
        self.store
            .send(Op::Insert, cmds, self.planned_shard())
            .map(drop)
    }

    /// Looks up a digest: one round trip.
    pub fn contains_digest(&mut self, d: Digest) -> Result<bool> {
        let mut cmds = Vec::with_capacity(1);
        self.push_commands(Op::Lookup, d, &mut cmds);
        let replies = self.store.send(Op::Lookup, cmds, self.planned_shard())?;
        let mut all = true;
        for r in &replies {
            all &= self.store.all_set(r)?;
        }
        Ok(all)
    }

    /// Inserts `key` (the bytes of [`bloomlab_filters::key`], hashed as `F` hashes them).
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<()> {
        let d = key.with_bytes(F::digest_of);
        self.insert_digest(d)
    }

    /// Whether `key` may have been inserted.
    pub fn contains<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool> {
        let d = key.with_bytes(F::digest_of);
        self.contains_digest(d)
    }

    /// Inserts every key of `keys`, `per_round_trip` keys per pipeline (one round trip each on a
    /// server). On an error, the keys of earlier pipelines are in; those of the failed one may be
    /// partly in.
    pub fn insert_batch<K: Key>(&mut self, keys: &[K], per_round_trip: usize) -> Result<()> {
        let digests: Vec<Digest> = keys.iter().map(|k| k.with_bytes(F::digest_of)).collect();
        self.insert_digests(&digests, per_round_trip)
    }

    /// [`Self::insert_batch`] for precomputed digests.
    pub fn insert_digests(&mut self, digests: &[Digest], per_round_trip: usize) -> Result<()> {
        check_batch(per_round_trip)?;
        for chunk in digests.chunks(per_round_trip) {
            let mut cmds = Vec::with_capacity(chunk.len());
            let mut first = None;
            for &d in chunk {
                self.push_commands(Op::Insert, d, &mut cmds);
                first.get_or_insert(self.planned_shard());
            }
            self.store.send(Op::Insert, cmds, first.unwrap_or(0))?;
        }
        Ok(())
    }

    /// Looks up every key of `keys`, `per_round_trip` keys per pipeline, calling
    /// `found(i, contains(&keys[i]))` in order: the same answers as one `contains` per key. On an
    /// error, the answers of earlier pipelines have been reported and no other.
    pub fn contains_batch<K: Key>(
        &mut self,
        keys: &[K],
        per_round_trip: usize,
        found: impl FnMut(usize, bool),
    ) -> Result<()> {
        let digests: Vec<Digest> = keys.iter().map(|k| k.with_bytes(F::digest_of)).collect();
        self.contains_digests(&digests, per_round_trip, found)
    }

    /// [`Self::contains_batch`] for precomputed digests.
    pub fn contains_digests(
        &mut self,
        digests: &[Digest],
        per_round_trip: usize,
        mut found: impl FnMut(usize, bool),
    ) -> Result<()> {
        check_batch(per_round_trip)?;
        let mut owners = Vec::with_capacity(per_round_trip.min(digests.len()));
        let mut answers = Vec::with_capacity(owners.capacity());
        for (c, chunk) in digests.chunks(per_round_trip).enumerate() {
            let mut cmds = Vec::with_capacity(chunk.len());
            owners.clear();
            let mut first = None;
            for &d in chunk {
                owners.push(self.push_commands(Op::Lookup, d, &mut cmds));
                first.get_or_insert(self.planned_shard());
            }
            let replies = self.store.send(Op::Lookup, cmds, first.unwrap_or(0))?;
            self.store.answers(&replies, &owners, &mut answers)?;
            // Reported only once the whole pipeline's replies were read and checked.
            for (j, &hit) in answers.iter().enumerate() {
                found(c * per_round_trip + j, hit);
            }
        }
        Ok(())
    }

    /// The bytes of shard `i` (GETRANGE of the whole string): bytes `i * shard_bits / 8`
    /// onwards of the in-memory filter's bit array.
    pub fn shard_bytes(&mut self, i: u64) -> Result<Vec<u8>> {
        self.store.shard_bytes(i)
    }

    /// The whole bit array: the shards' bytes in order, equal to the in-memory twin's words as
    /// little-endian bytes.
    pub fn bytes(&mut self) -> Result<Vec<u8>> {
        self.store.bytes()
    }

    /// Number of bits set (BITCOUNT over the shards).
    pub fn set_bits(&mut self) -> Result<u64> {
        self.store.set_bits()
    }

    /// Calls `each` with the whole bit array in order (the bytes of [`Self::bytes`]), in pieces of
    /// at most `chunk_bytes` bytes, each read with one GETRANGE, so memory stays bounded by the
    /// chunk size whatever the filter's size. A piece never straddles two shards, and with a
    /// `chunk_bytes` that is a multiple of 8 every piece is a whole number of 64-bit words (shards
    /// are whole 512-bit blocks, the last one whole words). `each` may modify the piece (it is
    /// the caller's copy). A shard that returns fewer bytes than its config says is
    /// [`RedisFilterError::Corrupt`]; the first error of `each` stops the reading and is returned.
    ///
    /// A filter that other clients insert into while it is read gives, per piece, the bits of
    /// some moment during the read: bits are only ever set, so every key inserted before the
    /// call began is in the result.
    pub fn read_chunks<E: From<RedisFilterError>>(
        &mut self,
        chunk_bytes: u64,
        each: impl FnMut(&mut [u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        self.store.read_chunks(chunk_bytes, each)
    }

    /// The server-side part, for the crate's code that needs no positions (export).
    pub(crate) fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    /// Starts loading the filter `name`, sized for `n` keys at rate `p` by `F`'s rule in shards of
    /// `shard_bits` bits, from bytes the caller writes ([`Loading::write`]): an import.
    ///
    /// Guarantees:
    /// - *Invisible until committed.* The shards are created (zeroed, at full length, so the
    ///   server's memory is taken or refused at once), but the config hash is written only by
    ///   [`Loading::commit`]: until then, opening `name` is [`RedisFilterError::NotFound`], never a
    ///   half-written filter whose missing bits would be false negatives.
    /// - *Never overwrites by accident.* Without `replace`, an existing config hash is
    ///   [`RedisFilterError::Exists`]; with it, the existing filter's keys (as its stored config
    ///   names them; a foreign key or a corrupt config is an error and nothing is deleted) are
    ///   deleted first, its config hash before its shards (clients that have it open then read
    ///   missing shards as zero bits: replacing a live filter is `swap`'s job). A shard key that
    ///   exists is `Exists` in both cases, and whatever this call created is deleted.
    /// - *Leftovers go away.* Every key carries `expiry` (at least 1 ms) until the commit, re-armed
    ///   while the load writes, so a loader killed mid-way leaves nothing after `expiry`.
    pub fn begin_load(
        conn: Connection,
        name: &str,
        n: u64,
        p: f64,
        shard_bits: u64,
        replace: bool,
        expiry: Duration,
    ) -> Result<Loading<F>> {
        let twin = Twin::of::<F>();
        let core = LoadCore::begin(conn, name, twin, n, p, shard_bits, replace, expiry)?;
        Ok(Loading {
            core,
            _variant: PhantomData,
        })
    }
}

fn check_batch(per_round_trip: usize) -> Result<()> {
    if per_round_trip == 0 {
        return Err(RedisFilterError::OutOfRange {
            what: "keys per round trip",
            value: "0".into(),
            allowed: "it must be at least 1".into(),
        });
    }
    Ok(())
}

impl Store {
    fn assemble(conn: Connection, name: &str, config: Config) -> Self {
        Self {
            shard_keys: (0..config.shards).map(|i| shard_key(name, i)).collect(),
            config_key: config_key(name),
            conn,
            name: name.to_owned(),
            config,
            expiry: None,
        }
    }

    /// [`RedisBloom::create_or_open_sharded`] for the twin `twin`.
    fn create_or_open(
        mut conn: Connection,
        name: &str,
        twin: Twin,
        n: u64,
        p: f64,
        shard_bits: u64,
    ) -> Result<Self> {
        check_name(name)?;
        let requested = Config::sized_as(twin, n, p, shard_bits)?;
        let key = config_key(name);
        let mut eval = redis::cmd("EVAL");
        eval.arg(CREATE_IF_ABSENT).arg(1).arg(&key);
        for (field, value) in requested.fields() {
            eval.arg(field).arg(value);
        }
        let created: i64 = conn.query(&eval, "create", &key)?;
        let mut filter = Self::assemble(conn, name, requested.clone());
        if created == 1 {
            if let Err(e) = filter.size_shards() {
                // Best effort: the error that matters is the sizing one.
                let _ = filter.delete_keys();
                return Err(e);
            }
        } else {
            let stored = filter.read_config()?;
            if let Some((field, stored, requested)) = stored.first_difference(&requested) {
                return Err(RedisFilterError::ConfigMismatch {
                    name: name.to_owned(),
                    field,
                    stored,
                    requested,
                });
            }
            // The creator writes the config first (atomically, so one client creates) and sizes
            // the shards after it: a client arriving in between sees them short. Wait for the
            // creator, for a bounded time, before calling the shards lost.
            let deadline = Instant::now() + CREATOR_WAIT;
            loop {
                match filter.check_shards() {
                    Err(RedisFilterError::Corrupt { .. }) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    other => return other.map(|()| filter),
                }
            }
        }
        filter.check_shards()?;
        Ok(filter)
    }

    /// [`RedisBloom::create_new`] for the twin `twin`.
    fn create_new(
        mut conn: Connection,
        name: &str,
        twin: Twin,
        n: u64,
        p: f64,
        shard_bits: u64,
        expiry: Option<Duration>,
    ) -> Result<Self> {
        check_name(name)?;
        let ttl_ms = match expiry {
            Some(t) if t.as_millis() == 0 => {
                return Err(RedisFilterError::OutOfRange {
                    what: "key expiry",
                    value: format!("{t:?}"),
                    allowed: "at least 1 ms, or none".into(),
                });
            }
            Some(t) => u64::try_from(t.as_millis()).unwrap_or(u64::MAX),
            None => 0,
        };
        let config = Config::sized_as(twin, n, p, shard_bits)?;
        let key = config_key(name);
        let mut eval = redis::cmd("EVAL");
        eval.arg(CREATE_FRESH).arg(1).arg(&key).arg(ttl_ms);
        for (field, value) in config.fields() {
            eval.arg(field).arg(value);
        }
        let created: i64 = conn.query(&eval, "create", &key)?;
        let exists = |conn: &Connection, key: &str| RedisFilterError::Exists {
            url: conn.url().to_owned(),
            name: name.to_owned(),
            key: key.to_owned(),
        };
        if created != 1 {
            return Err(exists(&conn, &key));
        }
        let mut filter = Self::assemble(conn, name, config);
        let cmds = filter.shard_scripts(CREATE_FRESH_SHARD, &[ttl_ms]);
        let first = filter.shard_keys[0].clone();
        let made = match filter.conn.pipeline(cmds, "create (size shards)", &first) {
            Ok(made) => made,
            Err(e) => {
                // Best effort: the error that matters is the creation one. Shards that existed
                // before are not this call's to delete, but a failed pipeline does not say which
                // ones it created, and a measuring run's name is its own.
                let _ = filter.delete_keys();
                return Err(e);
            }
        };
        if let Some(i) = made.iter().position(|v| !matches!(v, Value::Int(1))) {
            let taken = filter.shard_keys[i].clone();
            // Delete only what this call created: the config and the shards that answered 1.
            let mine: Vec<String> = made
                .iter()
                .zip(&filter.shard_keys)
                .filter(|(v, _)| matches!(v, Value::Int(1)))
                .map(|(_, k)| k.clone())
                .chain([filter.config_key.clone()])
                .collect();
            for k in mine {
                let _ = filter
                    .conn
                    .query::<i64>(redis::cmd("DEL").arg(&k), "create (undo)", &k);
            }
            return Err(exists(&filter.conn, &taken));
        }
        filter.expiry = expiry.map(|t| (t, Instant::now()));
        Ok(filter)
    }

    /// [`RedisBloom::open`] for the twin `twin`.
    fn open(conn: Connection, name: &str, twin: Twin) -> Result<Self> {
        check_name(name)?;
        let mut filter = Self::assemble(
            conn,
            name,
            Config {
                layout: twin.layout,
                hash: twin.hash.to_owned(),
                index: twin.index.to_owned(),
                n: 0,
                p: 0.0,
                bits: 0,
                hashes: 0,
                shard_bits: MAX_SHARD_BITS,
                shards: 0,
            },
        );
        let stored = filter.read_config()?;
        for (field, stored_value, requested) in [
            ("layout", stored.layout.to_string(), twin.layout.to_string()),
            ("hash", stored.hash.clone(), twin.hash.to_owned()),
            ("index", stored.index.clone(), twin.index.to_owned()),
        ] {
            if stored_value != requested {
                return Err(RedisFilterError::ConfigMismatch {
                    name: name.to_owned(),
                    field,
                    stored: stored_value,
                    requested,
                });
            }
        }
        let mut filter = Self::assemble(filter.conn, name, stored);
        filter.check_shards()?;
        Ok(filter)
    }

    /// Re-arms the expiry of every key of a filter made by [`RedisBloom::create_new`] with one,
    /// if a quarter of it has passed since the last time; nothing otherwise.
    fn keep_alive(&mut self) -> Result<()> {
        let Some((ttl, last)) = self.expiry else {
            return Ok(());
        };
        if last.elapsed() < ttl / 4 {
            return Ok(());
        }
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        let keys: Vec<String> = self.keys().map(str::to_owned).collect();
        self.on_every_key(&keys, "PEXPIRE", Some(ms), "re-arm expiry", ttl.as_secs())?;
        self.expiry = Some((ttl, Instant::now()));
        Ok(())
    }

    /// Sends `cmd KEY [arg]` for every key of `keys` in one pipeline (PEXPIRE, PERSIST): a reply
    /// other than 1 means the key is gone, [`RedisFilterError::Expired`] naming it.
    fn on_every_key(
        &mut self,
        keys: &[String],
        cmd: &str,
        arg: Option<u64>,
        operation: &'static str,
        ttl_secs: u64,
    ) -> Result<()> {
        let cmds = keys
            .iter()
            .map(|k| {
                let mut c = redis::cmd(cmd);
                c.arg(k);
                if let Some(a) = arg {
                    c.arg(a);
                }
                c
            })
            .collect();
        let replies = self.conn.pipeline(cmds, operation, &keys[0])?;
        if let Some(i) = replies.iter().position(|v| !matches!(v, Value::Int(1))) {
            return Err(RedisFilterError::Expired {
                url: self.conn.url().to_owned(),
                name: self.name.clone(),
                key: keys[i].clone(),
                ttl_secs,
            });
        }
        Ok(())
    }

    fn keys(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.config_key.as_str()).chain(self.shard_keys.iter().map(String::as_str))
    }

    /// Reads and checks the config hash.
    fn read_config(&mut self) -> Result<Config> {
        let key = self.config_key.clone();
        let hash: HashMap<String, String> =
            self.conn
                .query(redis::cmd("HGETALL").arg(&key), "open", &key)?;
        if hash.is_empty() {
            return Err(RedisFilterError::NotFound {
                url: self.conn.url().to_owned(),
                name: self.name.clone(),
                key,
            });
        }
        Config::parse(&self.name, &key, &hash)
    }

    /// Creates every shard at its full length, zeroed, without touching one that exists: a
    /// script creates the string with SETRANGE only if the key is absent, atomically, so it is
    /// safe while other clients insert (an unconditional SETRANGE of a zero byte could clear their
    /// bits). SETRANGE on a new key allocates exactly the length, where growing a string by
    /// SETBIT or BITFIELD preallocates up to 1 MiB (or double, below 1 MiB) more.
    fn size_shards(&mut self) -> Result<()> {
        let cmds = self.shard_scripts(CREATE_SHARD, &[]);
        let first = self.shard_keys[0].clone();
        self.conn.pipeline(cmds, "create (size shards)", &first)?;
        Ok(())
    }

    /// One `EVAL script 1 SHARD_KEY LAST_BYTE_OFFSET extra...` per shard, for the scripts that
    /// create a shard at its full length.
    fn shard_scripts(&self, script: &str, extra: &[u64]) -> Vec<redis::Cmd> {
        (0..self.config.shards)
            .map(|i| {
                let mut c = redis::cmd("EVAL");
                c.arg(script)
                    .arg(1)
                    .arg(&self.shard_keys[i as usize])
                    .arg(self.config.shard_bytes(i) - 1);
                for x in extra {
                    c.arg(*x);
                }
                c
            })
            .collect()
    }

    /// Checks that every shard string has the length the config gives.
    fn check_shards(&mut self) -> Result<()> {
        let cmds = self
            .shard_keys
            .iter()
            .map(|k| {
                let mut c = redis::cmd("STRLEN");
                c.arg(k);
                c
            })
            .collect();
        let first = self.shard_keys[0].clone();
        let lengths = self.conn.pipeline(cmds, "open (check shards)", &first)?;
        for (i, len) in lengths.iter().enumerate() {
            let expected = self.config.shard_bytes(i as u64);
            if !matches!(len, Value::Int(l) if *l as u64 == expected) {
                return Err(RedisFilterError::Corrupt {
                    name: self.name.clone(),
                    key: self.shard_keys[i].clone(),
                    reason: format!(
                        "the shard holds {len:?} bytes where the config says {expected}: its bits were lost (deleted, evicted, or a restart without persistence) or another program wrote it"
                    ),
                });
            }
        }
        Ok(())
    }

    fn delete_keys(&mut self) -> Result<()> {
        let keys: Vec<String> = self
            .shard_keys
            .iter()
            .chain([&self.config_key])
            .cloned()
            .collect();
        for key in keys {
            // One DEL per key: a cluster refuses multi-key commands across slots.
            self.conn
                .query::<i64>(redis::cmd("DEL").arg(&key), "destroy", &key)?;
        }
        Ok(())
    }

    /// Appends the commands for the positions planned in `scratch` ((shard, Redis offset) pairs
    /// in probe order; sorted here by shard): one BITFIELD per shard they fall in. Returns how
    /// many commands that is.
    fn push_planned(&self, op: Op, scratch: &mut [(u64, u64)], cmds: &mut Vec<Cmd>) -> usize {
        if self.config.shards > 1 {
            scratch.sort_unstable_by_key(|&(shard, _)| shard);
        }
        let mut count = 0;
        let mut i = 0;
        while i < scratch.len() {
            let shard = scratch[i].0;
            let mut c = redis::cmd(match op {
                Op::Insert => "BITFIELD",
                // The read-only form: also allowed on replicas.
                Op::Lookup => "BITFIELD_RO",
            });
            c.arg(&self.shard_keys[shard as usize]);
            while i < scratch.len() && scratch[i].0 == shard {
                let offset = scratch[i].1;
                match op {
                    Op::Insert => c.arg("SET").arg("u1").arg(offset).arg(1),
                    Op::Lookup => c.arg("GET").arg("u1").arg(offset),
                };
                i += 1;
            }
            cmds.push(c);
            count += 1;
        }
        count
    }

    /// Sends `cmds`: as one command when there is one, else as one pipeline. Errors are labelled
    /// with the key of shard `shard`.
    fn send(&mut self, op: Op, cmds: Vec<Cmd>, shard: u64) -> Result<Vec<Value>> {
        self.keep_alive()?;
        let key = self.shard_keys[shard as usize].clone();
        if cmds.len() == 1 {
            Ok(vec![self.conn.query::<Value>(
                &cmds[0],
                op.label(),
                &key,
            )?])
        } else {
            self.conn.pipeline(cmds, op.label(), &key)
        }
    }

    /// Replaces `answers` with one answer per key of a lookup pipeline: key `j` owns the next
    /// `owners[j]` replies, and is present if every bit they read is set.
    fn answers(&self, replies: &[Value], owners: &[usize], answers: &mut Vec<bool>) -> Result<()> {
        answers.clear();
        let mut replies = replies.iter();
        for &count in owners {
            let mut all = true;
            for _ in 0..count {
                let r = replies.next().ok_or_else(|| RedisFilterError::Reply {
                    url: self.conn.url().to_owned(),
                    operation: "lookup",
                    key: self.shard_keys[0].clone(),
                    reply: "fewer replies than commands".into(),
                })?;
                all &= self.all_set(r)?;
            }
            answers.push(all);
        }
        Ok(())
    }

    /// Whether a BITFIELD reply shows every bit it read set; an error for a reply of another
    /// shape.
    fn all_set(&self, reply: &Value) -> Result<bool> {
        match reply {
            Value::Array(bits) if !bits.is_empty() => {
                let mut all = true;
                for b in bits {
                    match b {
                        Value::Int(0) => all = false,
                        Value::Int(1) => {}
                        _ => return Err(self.bad_reply(reply)),
                    }
                }
                Ok(all)
            }
            _ => Err(self.bad_reply(reply)),
        }
    }

    fn bad_reply(&self, reply: &Value) -> RedisFilterError {
        RedisFilterError::Reply {
            url: self.conn.url().to_owned(),
            operation: "lookup",
            key: self.shard_keys[0].clone(),
            reply: format!("{reply:?}"),
        }
    }

    fn shard_bytes(&mut self, i: u64) -> Result<Vec<u8>> {
        let key = self.shard_keys[i as usize].clone();
        self.conn.query(
            redis::cmd("GETRANGE").arg(&key).arg(0).arg(-1),
            "read shard",
            &key,
        )
    }

    fn bytes(&mut self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        for i in 0..self.config.shards {
            out.extend(self.shard_bytes(i)?);
        }
        Ok(out)
    }

    fn set_bits(&mut self) -> Result<u64> {
        let mut total = 0;
        for key in self.shard_keys.clone() {
            let n: u64 = self
                .conn
                .query(redis::cmd("BITCOUNT").arg(&key), "count bits", &key)?;
            total += n;
        }
        Ok(total)
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// [`RedisBloom::read_chunks`]: a thin generic shell over [`Self::read_pieces`], which does
    /// the reading.
    pub(crate) fn read_chunks<E: From<RedisFilterError>>(
        &mut self,
        chunk_bytes: u64,
        mut each: impl FnMut(&mut [u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let mut failed = None;
        let read = self.read_pieces(chunk_bytes, &mut |piece| match each(piece) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                failed = Some(e);
                ControlFlow::Break(())
            }
        });
        match failed {
            Some(e) => Err(e),
            None => read.map_err(E::from),
        }
    }

    /// Calls `each` with the bit array's pieces in order, until it breaks (then `Ok`: the caller
    /// knows why it stopped).
    fn read_pieces(
        &mut self,
        chunk_bytes: u64,
        each: &mut dyn FnMut(&mut [u8]) -> ControlFlow<()>,
    ) -> Result<()> {
        if chunk_bytes == 0 || !chunk_bytes.is_multiple_of(8) {
            return Err(RedisFilterError::OutOfRange {
                what: "chunk size (bytes)",
                value: chunk_bytes.to_string(),
                allowed: "a positive multiple of 8".into(),
            });
        }
        for shard in 0..self.config.shards {
            let len = self.config.shard_bytes(shard);
            let key = self.shard_keys[shard as usize].clone();
            let mut at = 0;
            while at < len {
                let take = chunk_bytes.min(len - at);
                self.keep_alive()?;
                let mut piece: Vec<u8> = self.conn.query(
                    redis::cmd("GETRANGE").arg(&key).arg(at).arg(at + take - 1),
                    "read shard",
                    &key,
                )?;
                if piece.len() as u64 != take {
                    return Err(RedisFilterError::Corrupt {
                        name: self.name.clone(),
                        key,
                        reason: format!(
                            "bytes {at}..{} of the shard gave {} bytes where the config says the shard holds {len}: its bits were lost or another program wrote it",
                            at + take,
                            piece.len()
                        ),
                    });
                }
                if each(&mut piece).is_break() {
                    return Ok(());
                }
                at += take;
            }
        }
        Ok(())
    }
}

/// The shard pieces of the global byte range `offset..offset + len` of a filter with `config`:
/// (shard, offset inside the shard, length) in order; none straddles two shards.
fn shard_pieces(config: &Config, offset: u64, len: u64) -> impl Iterator<Item = (u64, u64, u64)> {
    let shard_bytes = config.shard_bits / 8;
    let end = offset + len;
    let mut at = offset;
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let shard = at / shard_bytes;
        let local = at % shard_bytes;
        let take = (shard_bytes - local).min(end - at);
        at += take;
        Some((shard, local, take))
    })
}

/// A filter being loaded by [`RedisBloom::begin_load`]: shards created and written piece by
/// piece, each with an expiry, and no config hash yet. Finish with [`Loading::commit`] or
/// [`Loading::abort`]; a `Loading` dropped without either leaves its shards to expire.
pub struct Loading<F> {
    core: LoadCore,
    _variant: PhantomData<fn() -> F>,
}

impl<F> std::fmt::Debug for Loading<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.core.store;
        f.debug_struct("Loading")
            .field("url", &s.conn.url())
            .field("name", &s.name)
            .field("config", &s.config)
            .finish()
    }
}

impl<F: BitPositions> Loading<F> {
    /// The config the filter gets at the commit.
    pub fn config(&self) -> &Config {
        &self.core.store.config
    }

    /// The filter's shard keys, in order.
    pub fn shard_keys(&self) -> impl Iterator<Item = &str> {
        self.core.store.shard_keys.iter().map(String::as_str)
    }

    /// Writes `bytes` at byte `offset` of the bit array (the in-memory layout's bytes, whatever
    /// the shard size): one SETRANGE per shard the range touches. A range past the end of the
    /// array is [`RedisFilterError::OutOfRange`] and writes nothing.
    pub fn write(&mut self, offset: u64, bytes: &[u8]) -> Result<()> {
        self.core.write(offset, bytes)
    }

    /// Makes the loaded filter visible and permanent: writes the config hash (atomically, only if
    /// no client created one of this name during the load: else [`RedisFilterError::Exists`], and
    /// the shards are left to expire, since that client may be using them), removes every key's
    /// expiry (PERSIST), and checks every shard's length, as [`RedisBloom::open`] does; if a shard
    /// was lost, the config and shards are deleted again and the error returned.
    pub fn commit(self) -> Result<RedisBloom<F>> {
        self.core.commit().map(RedisBloom::with_store)
    }

    /// Deletes the shards written so far (the config hash was never written): the server is as
    /// before the load (with `replace`, the replaced filter stays deleted).
    pub fn abort(self) -> Result<()> {
        self.core.abort()
    }
}

/// The part of a [`Loading`] that does not depend on its twin type.
pub(crate) struct LoadCore {
    store: Store,
    ttl_ms: u64,
    /// When the shards' expiry was last set.
    armed: Instant,
}

impl LoadCore {
    /// [`RedisBloom::begin_load`] for the twin `twin`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn begin(
        mut conn: Connection,
        name: &str,
        twin: Twin,
        n: u64,
        p: f64,
        shard_bits: u64,
        replace: bool,
        expiry: Duration,
    ) -> Result<Self> {
        check_name(name)?;
        let ttl_ms = u64::try_from(expiry.as_millis()).unwrap_or(u64::MAX);
        if ttl_ms == 0 {
            return Err(RedisFilterError::OutOfRange {
                what: "load expiry",
                value: format!("{expiry:?}"),
                allowed: "at least 1 ms".into(),
            });
        }
        let config = Config::sized_as(twin, n, p, shard_bits)?;
        let key = config_key(name);
        let exists: i64 = conn.query(redis::cmd("EXISTS").arg(&key), "load", &key)?;
        if exists == 1 {
            if !replace {
                return Err(RedisFilterError::Exists {
                    url: conn.url().to_owned(),
                    name: name.to_owned(),
                    key,
                });
            }
            // A foreign key or a damaged config under the name is an error, and nothing is
            // deleted.
            let stored = crate::admin::stored_config(&mut conn, name)?;
            let mut old = Store::assemble(conn, name, stored);
            // The config first: a client opening the name from now on gets NotFound rather than
            // a filter with missing shards.
            let keys: Vec<String> = old.keys().map(str::to_owned).collect();
            for k in keys {
                old.conn
                    .query::<i64>(redis::cmd("DEL").arg(&k), "load (replace)", &k)?;
            }
            conn = old.conn;
        }
        let mut loading = Self {
            store: Store::assemble(conn, name, config),
            ttl_ms,
            armed: Instant::now(),
        };
        loading.create_shards()?;
        Ok(loading)
    }

    fn create_shards(&mut self) -> Result<()> {
        let f = &mut self.store;
        let cmds = f.shard_scripts(CREATE_FRESH_SHARD, &[self.ttl_ms]);
        let first = f.shard_keys[0].clone();
        let made = match f.conn.pipeline(cmds, "load (create shards)", &first) {
            Ok(made) => made,
            Err(e) => {
                // A failed pipeline does not say which shards it created; the name's shards are
                // this load's (no config hash names them), so all are deleted, best effort.
                let _ = self.delete_shards(None);
                return Err(e);
            }
        };
        if let Some(i) = made.iter().position(|v| !matches!(v, Value::Int(1))) {
            let taken = f.shard_keys[i].clone();
            let mine: Vec<bool> = made.iter().map(|v| matches!(v, Value::Int(1))).collect();
            let _ = self.delete_shards(Some(&mine));
            return Err(RedisFilterError::Exists {
                url: self.store.conn.url().to_owned(),
                name: self.store.name.clone(),
                key: taken,
            });
        }
        self.armed = Instant::now();
        Ok(())
    }

    /// Deletes the shards (those marked `true` in `which`, or all).
    fn delete_shards(&mut self, which: Option<&[bool]>) -> Result<()> {
        let f = &mut self.store;
        let mut first = None;
        for (i, key) in f.shard_keys.iter().enumerate() {
            if which.is_none_or(|w| w.get(i).copied().unwrap_or(false)) {
                let r = f
                    .conn
                    .query::<i64>(redis::cmd("DEL").arg(key), "load (undo)", key);
                if let Err(e) = r {
                    first.get_or_insert(e);
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Re-sets the shards' expiry when a quarter of it has passed; a shard found gone is
    /// [`RedisFilterError::Expired`].
    fn keep_alive(&mut self) -> Result<()> {
        if (self.armed.elapsed().as_millis() as u64) < self.ttl_ms / 4 {
            return Ok(());
        }
        let keys = self.store.shard_keys.clone();
        let (ms, secs) = (self.ttl_ms, self.ttl_ms / 1000);
        self.store
            .on_every_key(&keys, "PEXPIRE", Some(ms), "load (re-arm expiry)", secs)?;
        self.armed = Instant::now();
        Ok(())
    }

    /// [`Loading::write`].
    pub(crate) fn write(&mut self, offset: u64, bytes: &[u8]) -> Result<()> {
        let total = self.store.config.bits / 8;
        let end = offset.checked_add(bytes.len() as u64);
        if end.is_none_or(|e| e > total) {
            return Err(RedisFilterError::OutOfRange {
                what: "load range (bytes)",
                value: format!("{offset}..{offset}+{}", bytes.len()),
                allowed: format!("within the filter's {total} bytes"),
            });
        }
        self.keep_alive()?;
        let mut done = 0usize;
        for (shard, local, len) in shard_pieces(&self.store.config, offset, bytes.len() as u64) {
            let key = &self.store.shard_keys[shard as usize];
            let piece = &bytes[done..done + len as usize];
            self.store.conn.query::<i64>(
                redis::cmd("SETRANGE").arg(key).arg(local).arg(piece),
                "load (write)",
                key,
            )?;
            done += len as usize;
        }
        Ok(())
    }

    /// [`Loading::commit`].
    pub(crate) fn commit(mut self) -> Result<Store> {
        let f = &mut self.store;
        let key = f.config_key.clone();
        let mut eval = redis::cmd("EVAL");
        eval.arg(CREATE_FRESH).arg(1).arg(&key).arg(self.ttl_ms);
        for (field, value) in f.config.fields() {
            eval.arg(field).arg(value);
        }
        let created: i64 = f.conn.query(&eval, "load (commit)", &key)?;
        if created != 1 {
            return Err(RedisFilterError::Exists {
                url: f.conn.url().to_owned(),
                name: f.name.clone(),
                key,
            });
        }
        if let Err(e) = Self::persist(f, self.ttl_ms) {
            // The config is this call's: a filter with a lost shard must not stay visible.
            let _ = f.delete_keys();
            return Err(e);
        }
        Ok(self.store)
    }

    /// Removes every key's expiry and checks the shards' lengths. A key that no longer had an
    /// expiry (it expired during a stall and was re-created short by a write, or vanished) is
    /// [`RedisFilterError::Expired`].
    fn persist(f: &mut Store, ttl_ms: u64) -> Result<()> {
        let keys: Vec<String> = f.keys().map(str::to_owned).collect();
        f.on_every_key(&keys, "PERSIST", None, "load (persist)", ttl_ms / 1000)?;
        f.check_shards()
    }

    /// [`Loading::abort`].
    pub(crate) fn abort(mut self) -> Result<()> {
        self.delete_shards(None)
    }
}
