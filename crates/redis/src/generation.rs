//! Generational filters: rebuild a live Redis filter under a new name and switch every reader to it
//! at once, so no reader ever sees a half-built filter (issue 29's `swap`).
//!
//! # What is stored
//!
//! A generational filter `NAME` is
//! - the *pointer* `{NAME}:current` ([`pointer_key`]): a string holding the name of the current
//!   generation, `NAME@<16 hex digits>` ([`generation_name`], a fresh [`keys::run_id`] per swap),
//!   or `NAME` itself for a plain filter adopted as the first generation ([`adopt`]);
//! - the *list* `{NAME}:generations` ([`list_key`]): a set of every generation a swap started, so
//!   they can be listed with their expiries ([`generations`]) without scanning a cluster's nodes;
//! - each generation: an ordinary [`RedisBloom`] filter of that name (config hash and shards).
//!
//! # Readers
//!
//! A [`Reader`] resolves the pointer (one GET), opens that generation and answers batches of
//! lookups from it. It reads the pointer again after every batch: one GET per batch rather than
//! per key (a batch of a few hundred keys costs a few pipelined round trips, so the GET adds well
//! under one round trip per hundred keys) and rather than per N ms (a timer would let a batch be
//! answered by a generation that was replaced while it ran, with nothing to tell). A batch's
//! answers are given only if the pointer named the same generation before and after it; if it
//! moved, the batch is asked again of the new generation. Since a swap never reuses a name (each
//! generation's id is 64 random bits) and the current generation's keys never carry an expiry,
//! "the same name before and after" means that generation was current, whole and persistent for
//! the whole batch: the answers are those of a complete filter, however short the grace period.
//!
//! A reader that resolved the old generation just before a switch keeps reading it until its batch
//! ends: the old generation is therefore never deleted at the switch, only given an expiry of the
//! grace period (PEXPIRE on each of its keys). The grace saves such readers the repeated batch; it
//! is not what makes them correct.
//!
//! # Swap
//!
//! [`swap`] builds and switches in this order:
//! 1. reads the pointer (the *expected old* value; none for a first generation, and none when
//!    adopting a plain filter `NAME`, which is then the generation replaced);
//! 2. adds the new generation's name to the list, and creates it fresh
//!    ([`RedisBloom::create_new`], refusing any existing key) with a *build expiry* on every key,
//!    re-armed while the build runs, so a killed build disappears by itself;
//! 3. fills it from the key source, pipelined; a key source that fails (an unreadable file) or
//!    holds no key stops the swap, deletes the half-built generation, and switches nothing; so
//!    does an interrupt ([`SwapOptions::interrupt`], Ctrl-C), checked after every key read and
//!    between the steps up to the switch;
//! 4. verifies it: its stored config is the requested one, every shard is present at its length,
//!    and a sample of the keys it was given (the first and the last [`VERIFY_SAMPLE`] / 2) are
//!    all found;
//! 5. makes its keys persistent (PERSIST) and checks every key now has no expiry;
//! 6. switches the pointer with one compare-and-set script on the pointer key alone: it sets the
//!    new name only if the pointer still holds the expected old value. A concurrent swap that
//!    switched first makes this one fail with [`GenerationError::Conflict`] (its generation is
//!    deleted; the other swap's generation stays current, never lost);
//! 7. gives the old generation's keys an expiry of the grace period.
//!
//! [`swap_from_file`] replaces steps 2 to 5 by a load of an exported filter file
//! ([`dump::import`]: checked before the server is touched, visible only once complete and its
//! checksum matched, removed on failure, expiring if killed) and a check that each of its keys is
//! present and persistent.
//!
//! A swap killed between steps 5 and 6 leaves a persistent generation that is not current: it is
//! listed by [`generations`] (not current, no expiry) for an operator to drop. The other order
//! (switch, then persist) could leave the *current* generation expiring, which is worse.
//!
//! # Measuring a swap
//!
//! [`swap_under_readers`] runs R reader threads, each looking up a fixed set of keys that are
//! members of both generations, batch after batch, while one swap runs; it returns per reader the
//! lookups, the false negatives (0 is the guarantee), the generation changes and the batches asked
//! again. The control test points readers at a generation before it is filled and sees the false
//! negatives counted, so the zero is not an artefact of the counting.
//!
//! # Why one SET is atomic for readers, also on a cluster
//!
//! On a cluster the pointer (slot of `NAME`) and a generation's keys (slots of `NAME@id` and
//! `NAME@id:i`) live on different nodes, and no command spans them. None needs to: readers learn
//! which generation to read from the pointer alone, and the pointer is one key, changed by one
//! script that its node runs atomically, so every GET returns the old name or the new one, whole.
//! Every write to the new generation was acknowledged by its node before the switch was sent, so
//! a reader that sees the new name finds every bit set (reads go to the masters, which hold every
//! acknowledged write; a client reading from asynchronous replicas could see the pointer before
//! the bits, and this module never reads from replicas).

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bloomlab_filters::{BitPositions, Key};
use redis::Value;
use thiserror::Error;

use crate::admin;
use crate::config::Config;
use crate::conn::Connection;
use crate::dump;
use crate::error::RedisFilterError;
use crate::filter::RedisBloom;
use crate::keys::{self, MAX_NAME_BYTES, check_name, config_key};

/// Bytes a generation's name adds to its filter's name: `@` and 16 hex digits.
const SUFFIX_BYTES: usize = 17;

/// The longest generational filter name: a generation's name must still be a valid filter name
/// ([`keys::MAX_NAME_BYTES`]).
pub const MAX_BASE_NAME_BYTES: usize = MAX_NAME_BYTES - SUFFIX_BYTES;

/// Keys whose membership [`swap`] checks in the new generation before switching to it (half from
/// the start of the key source, half from its end).
pub const VERIFY_SAMPLE: usize = 1024;

/// How many keys [`swap`] reads from its source before sending them (pipelined, `per_round_trip`
/// keys per round trip): bounds the memory a build takes whatever the source's size.
pub const BUILD_CHUNK: usize = 16_384;

/// How often one [`Reader`] batch may be asked again because the pointer moved while it ran,
/// before the reader reports that swaps happen faster than it can read.
pub const MAX_REASKS: u32 = 16;

/// The longest grace period accepted (30 days): an old generation kept longer is a forgotten one.
pub const MAX_GRACE: Duration = Duration::from_secs(30 * 24 * 3600);

/// Compare-and-set of the pointer KEYS[1]: sets ARGV[2] if the pointer holds ARGV[1] (the empty
/// string standing for "absent"; generation names are never empty). Returns {1, old} when set,
/// {0, current} when the pointer held something else, {-1, type} when the key is not a string.
const SWITCH: &str = "local t = redis.call('TYPE', KEYS[1])['ok'] \
     if t ~= 'none' and t ~= 'string' then return {-1, t} end \
     local cur = redis.call('GET', KEYS[1]) or '' \
     if cur ~= ARGV[1] then return {0, cur} end \
     redis.call('SET', KEYS[1], ARGV[2]) return {1, cur}";

/// Adopts a plain filter: sets the pointer KEYS[1] to ARGV[1] and adds ARGV[1] to the list
/// KEYS[2] only if the pointer does not exist (both keys share the hash tag, hence the slot).
/// Returns 1 if adopted, 0 if a pointer was there.
const ADOPT: &str = "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end \
     redis.call('SET', KEYS[1], ARGV[1]) redis.call('SADD', KEYS[2], ARGV[1]) return 1";

/// Why a generational filter could not be read, swapped or listed.
#[derive(Debug, Error)]
pub enum GenerationError {
    /// A Redis failure, a bad parameter or a damaged filter, as the store reports it.
    #[error(transparent)]
    Redis(#[from] RedisFilterError),
    /// Loading the new generation from a filter file failed ([`swap_from_file`]); nothing was
    /// switched and what the load wrote was deleted.
    #[error("{0}; nothing was switched")]
    Import(Box<dump::DumpError>),
    /// The pointer key holds something no swap writes: another type, or a value that names no
    /// generation of this filter.
    #[error(
        "Redis at {url}: {key:?} is not a generational filter's pointer: {reason} (a pointer is a string holding NAME or NAME@<16 hex digits>); nothing was changed"
    )]
    BadPointer {
        /// The URL(s), credentials redacted.
        url: String,
        /// The pointer key.
        key: String,
        /// What it holds instead.
        reason: String,
    },
    /// There is no pointer: the name is not (yet) a generational filter.
    #[error(
        "no generational filter {name:?} at {url} (no pointer key {key:?}); create its first generation with swap, or adopt a plain filter"
    )]
    NoPointer {
        /// The URL(s), credentials redacted.
        url: String,
        /// The generational filter's name.
        name: String,
        /// The pointer key that is missing.
        key: String,
    },
    /// The pointer names a generation whose filter does not exist (expired or deleted).
    #[error(
        "generational filter {name:?} at {url}: its pointer {key:?} names generation {generation:?}, which does not exist (deleted, or expired); readers cannot answer. To start over: DEL {key} and swap in a first generation"
    )]
    MissingGeneration {
        /// The URL(s), credentials redacted.
        url: String,
        /// The generational filter's name.
        name: String,
        /// The pointer key.
        key: String,
        /// The generation it names.
        generation: String,
    },
    /// Another swap switched the pointer while this one was building: this swap is refused and
    /// its generation deleted; the other's stays current.
    #[error(
        "generational filter {name:?}: the pointer moved from {expected} to {found} while this swap built {built:?}; refused (the other swap's generation stays current) and {built:?} was deleted; run the swap again to replace {found}"
    )]
    Conflict {
        /// The generational filter's name.
        name: String,
        /// What the pointer held when this swap started (`(none)` if absent).
        expected: String,
        /// What it held at the switch.
        found: String,
        /// The generation this swap built and deleted.
        built: String,
    },
    /// The key source failed: nothing was switched and the half-built generation was deleted.
    #[error(
        "reading the keys for generation {generation:?} failed after {keys_read} keys: {source}; nothing was switched and the half-built generation was deleted"
    )]
    Keys {
        /// The generation being built (deleted).
        generation: String,
        /// Keys read before the failure.
        keys_read: u64,
        /// The reader's error.
        source: io::Error,
    },
    /// The key source held no key: a generation answering "absent" to everything would replace
    /// the current one.
    #[error(
        "the key source for generation {generation:?} holds no key; an empty generation would answer 'absent' to every key, so nothing was switched and it was deleted"
    )]
    NoKeys {
        /// The generation being built (deleted).
        generation: String,
    },
    /// The built generation failed its check before the switch (deleted, nothing switched).
    #[error(
        "generation {generation:?} failed its check before the switch: {reason}; nothing was switched and it was deleted"
    )]
    Verify {
        /// The generation checked (deleted).
        generation: String,
        /// What was wrong.
        reason: String,
    },
    /// A first generation was asked for while a plain filter of the same name exists: its readers
    /// would not follow the pointer.
    #[error(
        "a plain filter {name:?} exists at {url} and no pointer {key:?}: adopt it as the generation the swap replaces (`filter swap --adopt`; it then expires after the grace period), or choose another name"
    )]
    PlainExists {
        /// The URL(s), credentials redacted.
        url: String,
        /// The name.
        name: String,
        /// The pointer key that is missing.
        key: String,
    },
    /// [`adopt`] on a name that already has a pointer.
    #[error(
        "{name:?} at {url} is already a generational filter (pointer {key:?} holds {current:?}); nothing was changed"
    )]
    AlreadyGenerational {
        /// The URL(s), credentials redacted.
        url: String,
        /// The name.
        name: String,
        /// The pointer key.
        key: String,
        /// What it holds.
        current: String,
    },
    /// The swap was asked to stop ([`SwapOptions::interrupt`]: Ctrl-C) before its switch: nothing
    /// was switched, and the half-built generation was deleted and taken off the list.
    #[error("interrupted while building generation {generation:?}: nothing was switched; {left}")]
    Interrupted {
        /// The generation being built.
        generation: String,
        /// What became of it: deleted and unlisted, or what could not be done and when its keys
        /// expire.
        left: String,
    },
    /// One reader batch was asked again [`MAX_REASKS`] times: swaps come faster than a batch.
    #[error(
        "generational filter {name:?}: the pointer moved during each of {MAX_REASKS} attempts at one batch of lookups; swaps come faster than a batch can be read"
    )]
    Unstable {
        /// The generational filter's name.
        name: String,
    },
}

/// The result type of this module.
pub type Result<T> = std::result::Result<T, GenerationError>;

impl GenerationError {
    /// Whether a server failed rather than the request ([`RedisFilterError::is_server_failure`]).
    pub fn is_server_failure(&self) -> bool {
        match self {
            Self::Redis(e) => e.is_server_failure(),
            Self::Import(e) => e.is_server_failure(),
            _ => false,
        }
    }
}

impl From<dump::DumpError> for GenerationError {
    fn from(e: dump::DumpError) -> Self {
        // Boxed: a dump error is large, and every result of this module would carry its size.
        Self::Import(Box::new(e))
    }
}

/// The pointer of generational filter `name`: `{name}:current`, a string naming its current
/// generation.
pub fn pointer_key(name: &str) -> String {
    format!("{{{name}}}:current")
}

/// The set of generations swaps of `name` started: `{name}:generations` (the pointer's slot).
pub fn list_key(name: &str) -> String {
    format!("{{{name}}}:generations")
}

/// The name of generation `id` of `name`: `name@id`.
pub fn generation_name(name: &str, id: &str) -> String {
    format!("{name}@{id}")
}

/// Checks a generational filter's name: a valid filter name ([`keys::check_name`]) of at most
/// [`MAX_BASE_NAME_BYTES`] bytes, so that its generations' names are valid too.
pub fn check_base_name(name: &str) -> Result<()> {
    check_name(name)?;
    if name.len() > MAX_BASE_NAME_BYTES {
        return Err(RedisFilterError::OutOfRange {
            what: "generational filter name",
            value: format!(
                "{} ({} bytes)",
                bloomlab_harness::keys::quote_prefix(name.as_bytes()),
                name.len()
            ),
            allowed: format!(
                "at most {MAX_BASE_NAME_BYTES} bytes: a generation's name adds {SUFFIX_BYTES} ('@' and 16 hex digits) and a filter name has at most {MAX_NAME_BYTES}"
            ),
        }
        .into());
    }
    Ok(())
}

/// Whether `value` is a name a pointer of `name` may hold: `name`, or `name@` and 16 lower-case
/// hex digits.
fn is_generation_of(name: &str, value: &str) -> bool {
    value == name
        || value
            .strip_prefix(name)
            .and_then(|s| s.strip_prefix('@'))
            .is_some_and(|id| {
                id.len() == 16
                    && id
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            })
}

/// The current generation of `name`: `None` if there is no pointer. Errors if the pointer is not
/// a string or names no generation of `name` ([`GenerationError::BadPointer`]). One GET (and, if
/// that fails, one TYPE to explain why).
pub fn current(conn: &mut Connection, name: &str) -> Result<Option<String>> {
    let key = pointer_key(name);
    let value: Option<Vec<u8>> = match conn.query(redis::cmd("GET").arg(&key), "read pointer", &key)
    {
        Ok(v) => v,
        Err(e) => {
            let kind: String = conn.query(redis::cmd("TYPE").arg(&key), "read pointer", &key)?;
            if kind != "string" && kind != "none" {
                return Err(GenerationError::BadPointer {
                    url: conn.url().to_owned(),
                    key,
                    reason: format!("it is a {kind}, not a string"),
                });
            }
            return Err(e.into());
        }
    };
    let Some(bytes) = value else {
        return Ok(None);
    };
    match String::from_utf8(bytes) {
        Ok(s) if is_generation_of(name, &s) => Ok(Some(s)),
        Ok(s) => Err(GenerationError::BadPointer {
            url: conn.url().to_owned(),
            key,
            reason: format!("it holds {s:?}, which names no generation of {name:?}"),
        }),
        Err(e) => Err(GenerationError::BadPointer {
            url: conn.url().to_owned(),
            key,
            reason: format!("it holds {} bytes that are not UTF-8", e.as_bytes().len()),
        }),
    }
}

/// The config of filter `filter` (any variant, checked by [`admin::stored_config`]): `None` if
/// it has no config hash.
fn stored_config(conn: &mut Connection, filter: &str) -> Result<Option<Config>> {
    match admin::stored_config(conn, filter) {
        Ok(c) => Ok(Some(c)),
        Err(RedisFilterError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The current generation of `name` and its stored config. Errors: no pointer
/// ([`GenerationError::NoPointer`]), a bad pointer, a pointer naming a generation that does not
/// exist ([`GenerationError::MissingGeneration`]), a corrupt config.
pub fn resolve(conn: &mut Connection, name: &str) -> Result<(String, Config)> {
    let generation = current(conn, name)?.ok_or_else(|| GenerationError::NoPointer {
        url: conn.url().to_owned(),
        name: name.to_owned(),
        key: pointer_key(name),
    })?;
    match stored_config(conn, &generation)? {
        Some(config) => Ok((generation, config)),
        None => Err(missing(conn, name, generation)),
    }
}

fn missing(conn: &Connection, name: &str, generation: String) -> GenerationError {
    GenerationError::MissingGeneration {
        url: conn.url().to_owned(),
        name: name.to_owned(),
        key: pointer_key(name),
        generation,
    }
}

/// Whether a generation's keys will expire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// No expiry: the current generation, or one a swap left between persisting and switching.
    Persistent,
    /// Expires in this long: an old generation in its grace period, or one being built.
    Expiring(Duration),
    /// Its config hash is gone (expired or deleted).
    Gone,
}

/// One generation of a generational filter, as [`generations`] lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationInfo {
    /// The generation's filter name.
    pub name: String,
    /// Whether the pointer names it.
    pub current: bool,
    /// Its config hash's expiry (a swap gives every key of a generation the same one).
    pub lifetime: Lifetime,
    /// Its stored config, if present.
    pub config: Option<Config>,
}

/// Every generation of `name` a swap started (from the list) plus the current one, current
/// first, then by name; with their expiries and configs. Read-only.
pub fn generations(conn: &mut Connection, name: &str) -> Result<Vec<GenerationInfo>> {
    let current = current(conn, name)?;
    let list = list_key(name);
    let mut names: Vec<String> =
        conn.query(redis::cmd("SMEMBERS").arg(&list), "list generations", &list)?;
    if let Some(c) = &current
        && !names.contains(c)
    {
        names.push(c.clone());
    }
    names.sort_by_key(|g| (Some(g) != current.as_ref(), g.clone()));
    let mut out = Vec::with_capacity(names.len());
    for g in names {
        let key = config_key(&g);
        let ttl: i64 = conn.query(redis::cmd("PTTL").arg(&key), "list generations", &key)?;
        let lifetime = match ttl {
            -2 => Lifetime::Gone,
            -1 => Lifetime::Persistent,
            ms => Lifetime::Expiring(Duration::from_millis(ms.max(0) as u64)),
        };
        let config = if lifetime == Lifetime::Gone {
            None
        } else {
            stored_config(conn, &g)?
        };
        out.push(GenerationInfo {
            current: Some(&g) == current.as_ref(),
            name: g,
            lifetime,
            config,
        });
    }
    Ok(out)
}

/// Makes the existing plain filter `name` the first generation of generational filter `name`:
/// sets the pointer to `name` if there is none (atomically). Its readers by plain name keep
/// working; readers through the pointer read the same filter. Errors if `name` has no config
/// hash, or a pointer exists ([`GenerationError::AlreadyGenerational`]).
pub fn adopt(conn: &mut Connection, name: &str) -> Result<()> {
    check_base_name(name)?;
    if stored_config(conn, name)?.is_none() {
        return Err(RedisFilterError::NotFound {
            url: conn.url().to_owned(),
            name: name.to_owned(),
            key: config_key(name),
        }
        .into());
    }
    let (key, list) = (pointer_key(name), list_key(name));
    let mut eval = redis::cmd("EVAL");
    eval.arg(ADOPT).arg(2).arg(&key).arg(&list).arg(name);
    let adopted: i64 = conn.query(&eval, "adopt", &key)?;
    if adopted == 1 {
        return Ok(());
    }
    Err(match current(conn, name)? {
        Some(c) => GenerationError::AlreadyGenerational {
            url: conn.url().to_owned(),
            name: name.to_owned(),
            key,
            current: c,
        },
        None => GenerationError::Unstable {
            name: name.to_owned(),
        },
    })
}

/// One filter [`drop_all`] deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedFilter {
    /// Its name.
    pub name: String,
    /// What it was to the name dropped: `current generation`, `old generation`, `plain filter`
    /// (a filter of the name itself beside a pointer that does not name it) or `filter` (the
    /// name is not generational).
    pub role: &'static str,
    /// Keys deleted: its config hash and shards.
    pub keys: u64,
}

/// What [`drop_all`] deleted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dropped {
    /// The filters, current generation first.
    pub filters: Vec<DroppedFilter>,
    /// The pointer and the list of generations, those that existed.
    pub generational_keys: Vec<String>,
}

impl Dropped {
    /// Keys deleted in all.
    pub fn keys(&self) -> u64 {
        self.filters.iter().map(|f| f.keys).sum::<u64>() + self.generational_keys.len() as u64
    }
}

/// Deletes everything under `name`: the generation its pointer names, every generation its list
/// names (only names `name@<16 hex digits>`, or `name` itself: never another filter a hand-edited
/// list might name), a filter of the name itself (plain, or one written beside the pointer), the
/// list and the pointer. Readers of it fail from then on ([`GenerationError::NoPointer`]).
///
/// Everything is checked before anything is deleted: a bad pointer or a foreign key where a
/// filter's config would be is an error and nothing is deleted; a name with nothing under it is
/// [`RedisFilterError::NotFound`]. The pointer goes first (readers stop at once rather than read
/// a generation being deleted) and the list last, so a drop cut short is finished by running it
/// again.
pub fn drop_all(conn: &mut Connection, name: &str) -> Result<Dropped> {
    check_name(name)?;
    let pointer = pointer_key(name);
    let list = list_key(name);
    let current = current(conn, name)?;
    let mut listed: Vec<String> = conn.query(redis::cmd("SMEMBERS").arg(&list), "drop", &list)?;
    listed.retain(|g| is_generation_of(name, g) && Some(g) != current.as_ref());
    listed.sort();
    let generational = current.is_some() || !listed.is_empty();
    let mut found: Vec<(String, &'static str)> = Vec::new();
    if let Some(c) = &current {
        found.push((c.clone(), "current generation"));
    }
    found.extend(listed.into_iter().map(|g| (g, "old generation")));
    if !found.iter().any(|(g, _)| g == name) {
        found.push((
            name.to_owned(),
            if generational {
                "plain filter"
            } else {
                "filter"
            },
        ));
    }
    // Checked first, deleted after: a foreign key stops the drop before it changes anything.
    let mut filters = Vec::new();
    for (g, role) in found {
        if stored_config(conn, &g)?.is_some() {
            filters.push((g, role));
        }
    }
    let list_exists: i64 = conn.query(redis::cmd("EXISTS").arg(&list), "drop", &list)?;
    if filters.is_empty() && current.is_none() && list_exists == 0 {
        return Err(RedisFilterError::NotFound {
            url: conn.url().to_owned(),
            name: name.to_owned(),
            key: config_key(name),
        }
        .into());
    }
    let mut dropped = Dropped::default();
    let mut delete = |conn: &mut Connection, key: &str| -> Result<()> {
        let n: u64 = conn.query(redis::cmd("DEL").arg(key), "drop", key)?;
        if n > 0 {
            dropped.generational_keys.push(key.to_owned());
        }
        Ok(())
    };
    delete(conn, &pointer)?;
    let mut deleted = Vec::with_capacity(filters.len());
    for (g, role) in filters {
        let keys = admin::drop_filter(conn, &g)?;
        deleted.push(DroppedFilter {
            name: g,
            role,
            keys,
        });
    }
    delete(conn, &list)?;
    dropped.filters = deleted;
    Ok(dropped)
}

/// How [`swap`] builds and switches.
#[derive(Debug, Clone)]
pub struct SwapOptions {
    /// Expected number of keys of the new generation.
    pub n: u64,
    /// Target false-positive rate of the new generation.
    pub p: f64,
    /// Shard size in bits; `None`: [`Connection::default_shard_bits`].
    pub shard_bits: Option<u64>,
    /// How long the old generation stays readable after the switch (1 ms to [`MAX_GRACE`]).
    pub grace: Duration,
    /// The expiry of the new generation's keys while it is built (re-armed as it is filled), so
    /// that a killed build disappears after it.
    pub build_expiry: Duration,
    /// Keys per pipelined round trip while filling and verifying.
    pub per_round_trip: usize,
    /// If there is no pointer but a plain filter `NAME` exists: adopt it as the old generation
    /// (it then expires after the grace period) instead of refusing.
    pub adopt_plain: bool,
    /// Set (by a Ctrl-C handler) to stop the swap before its switch: checked after every key read
    /// and between the steps, it makes the swap delete the half-built generation, take it off the
    /// list and return [`GenerationError::Interrupted`]. Once the pointer is switched, the swap
    /// finishes. `None`: never interrupted.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl SwapOptions {
    /// Options for a generation of `n` keys at rate `p`: default shard size, a grace of 60 s, a
    /// build expiry of 120 s, 256 keys per round trip, no adoption.
    pub fn new(n: u64, p: f64) -> Self {
        Self {
            n,
            p,
            shard_bits: None,
            grace: Duration::from_secs(60),
            build_expiry: Duration::from_secs(120),
            per_round_trip: 256,
            adopt_plain: false,
            interrupt: None,
        }
    }

    /// Whether [`Self::interrupt`] was set.
    fn interrupted(&self) -> bool {
        self.interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }

    fn check(&self) -> Result<()> {
        if self.grace.is_zero() || self.grace > MAX_GRACE {
            return Err(RedisFilterError::OutOfRange {
                what: "grace period",
                value: format!("{:?}", self.grace),
                allowed: format!(
                    "1 ms to {} s (30 days): the old generation must stay readable a while, and not forever",
                    MAX_GRACE.as_secs()
                ),
            }
            .into());
        }
        if self.per_round_trip == 0 {
            return Err(RedisFilterError::OutOfRange {
                what: "keys per round trip",
                value: "0".into(),
                allowed: "it must be at least 1".into(),
            }
            .into());
        }
        Ok(())
    }
}

/// What a successful [`swap`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct SwapOutcome {
    /// The generational filter's name.
    pub name: String,
    /// The new, now current, generation.
    pub new_generation: String,
    /// The generation it replaced (now expiring after the grace period), if there was one.
    pub old_generation: Option<String>,
    /// The new generation's config.
    pub config: Config,
    /// Keys read from the source and inserted (duplicates counted each time).
    pub keys_inserted: u64,
    /// Keys whose membership was checked before the switch (all found).
    pub verified: u64,
    /// From creating the new generation to its verification and persistence (the switch itself
    /// is one round trip after this).
    pub build: Duration,
    /// The grace period given to the old generation's keys.
    pub grace: Duration,
}

/// Builds a new generation of `name` from `keys` and switches readers to it atomically; see the
/// module docs for the steps and guarantees. `urls` is one server's URL or a cluster's node URLs,
/// comma-separated (never shown unredacted). The new generation is of variant `F`, sized by
/// `options`.
///
/// Errors, each with nothing switched and the new generation deleted: a bad or dangling pointer,
/// a plain filter of that name without `adopt_plain`, a key source that fails or is empty, a
/// failed verification, a concurrent swap that switched first ([`GenerationError::Conflict`]),
/// any Redis failure before the switch. A failure to set the grace expiry after the switch is
/// reported too (the switch stands; the old generation then has no expiry).
pub fn swap<F, K, I>(urls: &str, name: &str, keys: I, options: &SwapOptions) -> Result<SwapOutcome>
where
    F: BitPositions,
    K: Key,
    I: IntoIterator<Item = io::Result<K>>,
{
    swap_built(urls, name, options, |generation, shard_bits| {
        build::<F, K, I>(urls, generation, keys, options, shard_bits)
    })
}

/// [`swap`] with a new generation loaded from a filter file exported by
/// [`dump::export`] (or a Guava file), instead of built from keys: the file
/// is loaded by [`dump::import`] under the new generation's name (checked
/// before the server is touched, visible only once complete and its checksum matched, removed on
/// any failure, its keys expiring if the importer is killed), then every key of it is checked
/// present and persistent, and the pointer switched as by [`swap`]. The layout, n and p are the
/// file's (`import.expected` states what they must be); `options.n`, `options.p` and
/// `options.build_expiry` are not used, `options.shard_bits` overrides `import.shard_bits` when
/// set. `keys_inserted` and `verified` of the outcome are 0: the file holds bits, not keys.
pub fn swap_from_file(
    urls: &str,
    name: &str,
    path: &std::path::Path,
    import: &dump::ImportOptions,
    options: &SwapOptions,
) -> Result<SwapOutcome> {
    let mut import = import.clone();
    import.replace = false;
    if let Some(s) = options.shard_bits {
        import.shard_bits = Some(s);
    }
    swap_built(urls, name, options, |generation, _| {
        let loaded = dump::import(
            Connection::open(urls)?,
            generation,
            path,
            &import,
            &mut |_, _| {
                if options.interrupted() {
                    std::ops::ControlFlow::Break(())
                } else {
                    std::ops::ControlFlow::Continue(())
                }
            },
        )
        .map_err(|e| match e {
            dump::DumpError::Interrupted => GenerationError::Interrupted {
                generation: generation.to_owned(),
                left: format!(
                    "what the load wrote was deleted (a key the deletion missed expires within {} s)",
                    dump::LOAD_EXPIRY.as_secs()
                ),
            },
            e => e.into(),
        })?;
        // Persisted keys no longer expire: whatever fails from here deletes them.
        let made = (|| {
            if options.interrupted() {
                return Err(interrupted(generation));
            }
            persist(urls, generation, &loaded.config)
        })();
        if let Err(e) = made {
            let mut conn = Connection::open(urls)?;
            return Err(discarded(&mut conn, generation, &loaded.config, e));
        }
        Ok((loaded.config, 0, 0))
    })
}

/// Steps 1, 6 and 7 around `build` (steps 2 to 5), which makes generation `generation` with
/// shards of the given bits, complete and persistent, or deletes what it made and errs.
fn swap_built(
    urls: &str,
    name: &str,
    options: &SwapOptions,
    build: impl FnOnce(&str, u64) -> Result<(Config, u64, u64)>,
) -> Result<SwapOutcome> {
    check_base_name(name)?;
    options.check()?;
    let mut conn = Connection::open(urls)?;
    let (expected, old) = old_generation(&mut conn, name, options.adopt_plain)?;
    let generation = generation_name(name, &keys::run_id()?);
    let list = list_key(name);
    conn.query::<i64>(
        redis::cmd("SADD").arg(&list).arg(&generation),
        "swap (list generation)",
        &list,
    )?;
    let shard_bits = options
        .shard_bits
        .unwrap_or_else(|| conn.default_shard_bits());
    let started = Instant::now();
    let (config, keys_inserted, verified) = match build(&generation, shard_bits) {
        Ok(x) => x,
        Err(e) => return Err(unlisted(&mut conn, &list, &generation, e)),
    };
    if options.interrupted() {
        // The last moment a Ctrl-C stops the swap: the built generation is complete and
        // persistent, but nobody reads it yet.
        let e = discarded(&mut conn, &generation, &config, interrupted(&generation));
        return Err(unlisted(&mut conn, &list, &generation, e));
    }
    let build = started.elapsed();
    switch(&mut conn, name, expected.as_deref(), &generation, &config)?;
    if let Some(old) = &old {
        if expected.is_none() {
            // An adopted plain filter: listed like any generation while it expires.
            conn.query::<i64>(
                redis::cmd("SADD").arg(&list).arg(old),
                "swap (list generation)",
                &list,
            )?;
        }
        expire_generation(&mut conn, old, options.grace)?;
    }
    prune_list(&mut conn, &list)?;
    Ok(SwapOutcome {
        name: name.to_owned(),
        new_generation: generation,
        old_generation: old,
        config,
        keys_inserted,
        verified,
        build,
        grace: options.grace,
    })
}

/// Step 1: what the pointer holds now (the compare-and-set's expected value) and the generation
/// this swap replaces. A plain filter without a pointer is refused, or with `adopt_plain` becomes
/// the replaced generation: the pointer is then expected absent, so nothing changes unless the
/// swap reaches its switch. A pointer naming a missing generation is refused.
fn old_generation(
    conn: &mut Connection,
    name: &str,
    adopt_plain: bool,
) -> Result<(Option<String>, Option<String>)> {
    match current(conn, name)? {
        Some(g) => {
            if stored_config(conn, &g)?.is_none() {
                return Err(missing(conn, name, g));
            }
            Ok((Some(g.clone()), Some(g)))
        }
        None if stored_config(conn, name)?.is_some() => {
            if !adopt_plain {
                return Err(GenerationError::PlainExists {
                    url: conn.url().to_owned(),
                    name: name.to_owned(),
                    key: pointer_key(name),
                });
            }
            Ok((None, Some(name.to_owned())))
        }
        None => Ok((None, None)),
    }
}

/// Removes a generation that will never be switched to from the list (its keys are deleted by
/// whoever fails, or expire). The caller decides whether a failure matters more than the error
/// it is reporting.
fn forget(conn: &mut Connection, list: &str, generation: &str) -> Result<()> {
    conn.query::<i64>(
        redis::cmd("SREM").arg(list).arg(generation),
        "swap (forget generation)",
        list,
    )?;
    Ok(())
}

/// [`forget`] after `error` stopped a swap; an interruption's message says whether the
/// generation left the list.
fn unlisted(
    conn: &mut Connection,
    list: &str,
    generation: &str,
    error: GenerationError,
) -> GenerationError {
    let forgot = forget(conn, list, generation);
    match error {
        GenerationError::Interrupted { generation, left } => {
            let left = match forgot {
                Ok(()) => format!("{left}, and it was taken off {list}"),
                Err(e) => format!("{left}; taking it off {list} failed ({e})"),
            };
            GenerationError::Interrupted { generation, left }
        }
        other => other,
    }
}

/// [`GenerationError::Interrupted`] for `generation`, what became of it still to be said.
fn interrupted(generation: &str) -> GenerationError {
    GenerationError::Interrupted {
        generation: generation.to_owned(),
        left: String::new(),
    }
}

/// Deletes every key of generation `generation` (config `config`), which `error` stopped before
/// the switch; an interruption's message says whether they went.
fn discarded(
    conn: &mut Connection,
    generation: &str,
    config: &Config,
    error: GenerationError,
) -> GenerationError {
    let failed = delete_generation(conn, generation, config, "swap (discard)")
        .map(|e| format!("{e}; its keys may be left: `bloomlab filter drop --redis URL --name {generation}` removes them"));
    with_deletion(error, failed)
}

/// Deletes every key of a generation never switched to (no reader can have it); the first error,
/// if any key could not be deleted (the others are still tried).
fn delete_generation(
    conn: &mut Connection,
    generation: &str,
    config: &Config,
    what: &'static str,
) -> Option<RedisFilterError> {
    let mut failed = None;
    for k in generation_keys(config, generation) {
        if let Err(e) = conn.query::<i64>(redis::cmd("DEL").arg(&k), what, &k) {
            failed.get_or_insert(e);
        }
    }
    failed
}

/// `error`, with what became of the half-built generation when it is an interruption: deleted,
/// or `failed` (why not, and what removes its keys).
fn with_deletion(error: GenerationError, failed: Option<String>) -> GenerationError {
    match error {
        GenerationError::Interrupted { generation, .. } => GenerationError::Interrupted {
            left: match failed {
                None => format!("the half-built generation {generation:?} was deleted"),
                Some(why) => {
                    format!("deleting the half-built generation {generation:?} failed ({why})")
                }
            },
            generation,
        },
        other => other,
    }
}

/// Steps 2 to 5: creates, fills, verifies and persists generation `generation`; on any error
/// deletes what was built. Returns its config, the keys inserted and the keys verified.
fn build<F, K, I>(
    urls: &str,
    generation: &str,
    keys: I,
    options: &SwapOptions,
    shard_bits: u64,
) -> Result<(Config, u64, u64)>
where
    F: BitPositions,
    K: Key,
    I: IntoIterator<Item = io::Result<K>>,
{
    let mut filter = RedisBloom::<F>::create_new(
        Connection::open(urls)?,
        generation,
        options.n,
        options.p,
        shard_bits,
        Some(options.build_expiry),
    )?;
    let requested = filter.config().clone();
    let stop = || {
        if options.interrupted() {
            Err(interrupted(generation))
        } else {
            Ok(())
        }
    };
    let filled = fill(&mut filter, generation, keys, options);
    let result = filled.and_then(|(count, sample)| {
        stop()?;
        verify(
            &mut filter,
            urls,
            generation,
            &requested,
            &sample,
            options.per_round_trip,
        )?;
        stop()?;
        persist(urls, generation, &requested)?;
        Ok((requested.clone(), count, sample.len() as u64))
    });
    let Err(e) = result else {
        return result;
    };
    // A generation never switched to is nobody's. Should the delete fail, its build expiry
    // removes the keys (persist, the last step, failed or was not reached).
    let failed = filter.destroy().err().map(|d| {
        format!(
            "{d}; its keys expire within {} s",
            options.build_expiry.as_secs()
        )
    });
    Err(with_deletion(e, failed))
}

/// Step 3: inserts every key of the source, [`BUILD_CHUNK`] at a time; returns how many, and the
/// sample to verify (the first and the last [`VERIFY_SAMPLE`] / 2 keys, as their bytes). Stops
/// with [`GenerationError::Interrupted`] as soon as a key read finds the interrupt set.
fn fill<F, K, I>(
    filter: &mut RedisBloom<F>,
    generation: &str,
    keys: I,
    options: &SwapOptions,
) -> Result<(u64, Vec<Vec<u8>>)>
where
    F: BitPositions,
    K: Key,
    I: IntoIterator<Item = io::Result<K>>,
{
    let half = VERIFY_SAMPLE / 2;
    let mut head: Vec<Vec<u8>> = Vec::with_capacity(half);
    let mut tail: std::collections::VecDeque<Vec<u8>> =
        std::collections::VecDeque::with_capacity(half);
    let mut chunk: Vec<K> = Vec::with_capacity(BUILD_CHUNK);
    let mut count: u64 = 0;
    let mut source = keys.into_iter();
    loop {
        let next = source.next();
        // Before the key is used: a source cut short by the interrupt (a producer killed by the
        // same Ctrl-C, a read given up) must not pass for the whole source.
        if options.interrupted() {
            return Err(interrupted(generation));
        }
        let done = next.is_none();
        if let Some(key) = next {
            let key = key.map_err(|source| GenerationError::Keys {
                generation: generation.to_owned(),
                keys_read: count,
                source,
            })?;
            let bytes = key.with_bytes(<[u8]>::to_vec);
            if head.len() < half {
                head.push(bytes);
            } else {
                if tail.len() == half {
                    tail.pop_front();
                }
                tail.push_back(bytes);
            }
            chunk.push(key);
            count += 1;
        }
        if chunk.len() == BUILD_CHUNK || (done && !chunk.is_empty()) {
            filter.insert_batch(&chunk, options.per_round_trip)?;
            chunk.clear();
        }
        if done {
            break;
        }
    }
    if count == 0 {
        return Err(GenerationError::NoKeys {
            generation: generation.to_owned(),
        });
    }
    head.extend(tail);
    Ok((count, head))
}

/// Step 4: every sampled key is found, and a fresh [`RedisBloom::open`] (which checks the stored
/// layout, hash and index scheme, and every shard's length) finds the requested config.
fn verify<F: BitPositions>(
    filter: &mut RedisBloom<F>,
    urls: &str,
    generation: &str,
    requested: &Config,
    sample: &[Vec<u8>],
    per_round_trip: usize,
) -> Result<()> {
    let failed = |reason: String| GenerationError::Verify {
        generation: generation.to_owned(),
        reason,
    };
    // Through the builder's own handle: its use re-arms the build expiry.
    let mut missing = 0u64;
    filter.contains_batch(sample, per_round_trip, |_, hit| missing += u64::from(!hit))?;
    if missing > 0 {
        return Err(failed(format!(
            "{missing} of the {} sampled keys it was given are not found",
            sample.len()
        )));
    }
    let opened = match RedisBloom::<F>::open(Connection::open(urls)?, generation) {
        Ok(f) => f,
        Err(e @ RedisFilterError::Command { .. }) | Err(e @ RedisFilterError::Connect { .. }) => {
            return Err(e.into());
        }
        Err(e) => return Err(failed(e.to_string())),
    };
    match opened.config().first_difference(requested) {
        None => Ok(()),
        Some((field, stored, asked)) => Err(failed(format!(
            "its stored config has {field} = {stored} where {asked} was requested"
        ))),
    }
}

/// Step 5: removes the build expiry from every key of the generation, then checks that every key
/// is present without an expiry.
fn persist(urls: &str, generation: &str, config: &Config) -> Result<()> {
    let mut conn = Connection::open(urls)?;
    let keys = generation_keys(config, generation);
    let cmds = keys
        .iter()
        .map(|k| {
            let mut c = redis::cmd("PERSIST");
            c.arg(k);
            c
        })
        .collect();
    conn.pipeline(cmds, "swap (persist)", &keys[0])?;
    let cmds = keys
        .iter()
        .map(|k| {
            let mut c = redis::cmd("PTTL");
            c.arg(k);
            c
        })
        .collect();
    let ttls = conn.pipeline(cmds, "swap (check persist)", &keys[0])?;
    if let Some(i) = ttls.iter().position(|v| !matches!(v, Value::Int(-1))) {
        return Err(GenerationError::Verify {
            generation: generation.to_owned(),
            reason: format!(
                "key {:?} has PTTL {:?} after PERSIST (-1 expected: present, no expiry)",
                keys[i], ttls[i]
            ),
        });
    }
    Ok(())
}

/// Every key of filter `generation` with config `config`: the config hash, then the shards.
fn generation_keys(config: &Config, generation: &str) -> Vec<String> {
    std::iter::once(config_key(generation))
        .chain((0..config.shards).map(|i| keys::shard_key(generation, i)))
        .collect()
}

/// Step 6: the compare-and-set of the pointer. On a conflict, deletes the generation built.
fn switch(
    conn: &mut Connection,
    name: &str,
    old: Option<&str>,
    generation: &str,
    config: &Config,
) -> Result<()> {
    let key = pointer_key(name);
    let mut eval = redis::cmd("EVAL");
    eval.arg(SWITCH)
        .arg(1)
        .arg(&key)
        .arg(old.unwrap_or(""))
        .arg(generation);
    let (status, found): (i64, String) = conn.query(&eval, "swap (switch pointer)", &key)?;
    if status == 1 {
        return Ok(());
    }
    // Never switched to: no reader can have it, so its keys go at once (best effort: the error
    // reported below is the one that matters).
    let _ = delete_generation(conn, generation, config, "swap (undo)");
    let _ = forget(conn, &list_key(name), generation);
    if status == -1 {
        return Err(GenerationError::BadPointer {
            url: conn.url().to_owned(),
            key,
            reason: format!("it became a {found} during the swap"),
        });
    }
    let shown = |s: &str| {
        if s.is_empty() {
            "(none)".to_owned()
        } else {
            format!("{s:?}")
        }
    };
    Err(GenerationError::Conflict {
        name: name.to_owned(),
        expected: shown(old.unwrap_or("")),
        found: shown(&found),
        built: generation.to_owned(),
    })
}

/// Step 7: every key of generation `generation` expires after `grace` (one PEXPIRE per key: on a
/// cluster its keys are on several slots). A generation whose config is already gone is left.
fn expire_generation(conn: &mut Connection, generation: &str, grace: Duration) -> Result<()> {
    let Some(config) = stored_config(conn, generation)? else {
        return Ok(());
    };
    let ms = u64::try_from(grace.as_millis()).unwrap_or(u64::MAX);
    let keys = generation_keys(&config, generation);
    let cmds = keys
        .iter()
        .map(|k| {
            let mut c = redis::cmd("PEXPIRE");
            c.arg(k).arg(ms);
            c
        })
        .collect();
    conn.pipeline(cmds, "swap (expire old generation)", &keys[0])?;
    Ok(())
}

/// Removes generations whose config is gone from the list (they expired or were dropped).
fn prune_list(conn: &mut Connection, list: &str) -> Result<()> {
    let names: Vec<String> = conn.query(redis::cmd("SMEMBERS").arg(list), "swap (prune)", list)?;
    for g in names {
        let key = config_key(&g);
        let exists: i64 = conn.query(redis::cmd("EXISTS").arg(&key), "swap (prune)", &key)?;
        if exists == 0 {
            // Best effort: a stale entry is pruned again by the next swap.
            let _ = forget(conn, list, &g);
        }
    }
    Ok(())
}

/// A reader of generational filter `name` that always answers from a whole generation: the one
/// the pointer named both before and after each batch (see the module docs).
///
/// Not shared between threads: open one per thread, like [`RedisBloom`]. A swap to a generation of
/// another layout, hash or index scheme makes the next batch fail with
/// [`RedisFilterError::ConfigMismatch`] rather than probe the wrong bits.
pub struct Reader<F> {
    /// The URL(s) as given, to open a connection to each new generation. Never shown.
    urls: String,
    name: String,
    pointer_key: String,
    pointer: Connection,
    generation: String,
    filter: RedisBloom<F>,
    changes: u64,
    reasked: u64,
    answers: Vec<bool>,
}

impl<F> std::fmt::Debug for Reader<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("url", &self.pointer.url())
            .field("name", &self.name)
            .field("generation", &self.generation)
            .finish()
    }
}

impl<F: BitPositions> Reader<F> {
    /// Resolves the pointer of `name` and opens its current generation, as variant `F` (a
    /// generation of another layout, hash or index scheme is a
    /// [`RedisFilterError::ConfigMismatch`]).
    pub fn open(urls: &str, name: &str) -> Result<Self> {
        check_base_name(name)?;
        let mut pointer = Connection::open(urls)?;
        let (generation, filter) = open_current::<F>(urls, &mut pointer, name)?;
        Ok(Self {
            urls: urls.to_owned(),
            name: name.to_owned(),
            pointer_key: pointer_key(name),
            pointer,
            generation,
            filter,
            changes: 0,
            reasked: 0,
            answers: Vec::new(),
        })
    }

    /// The generation the last batch was answered from.
    pub fn generation(&self) -> &str {
        &self.generation
    }

    /// How many times this reader moved to a new generation.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// How many batches were asked again because the pointer moved while they ran.
    pub fn reasked(&self) -> u64 {
        self.reasked
    }

    /// Looks up every key of `keys` (`per_round_trip` per pipelined round trip), then reads the
    /// pointer once: if it still names the generation asked, calls `found(i, hit)` for each key
    /// in order; if it moved, opens the new generation and asks the whole batch again (at most
    /// [`MAX_REASKS`] times). The answers given are therefore all from one generation that was
    /// current from before the batch until after it.
    pub fn contains_batch<K: Key>(
        &mut self,
        keys: &[K],
        per_round_trip: usize,
        mut found: impl FnMut(usize, bool),
    ) -> Result<()> {
        for _ in 0..MAX_REASKS {
            let answers = &mut self.answers;
            answers.clear();
            self.filter
                .contains_batch(keys, per_round_trip, |_, hit| answers.push(hit))?;
            let now = current(&mut self.pointer, &self.name)?.ok_or_else(|| {
                GenerationError::NoPointer {
                    url: self.pointer.url().to_owned(),
                    name: self.name.clone(),
                    key: self.pointer_key.clone(),
                }
            })?;
            if now == self.generation {
                for (i, &hit) in self.answers.iter().enumerate() {
                    found(i, hit);
                }
                return Ok(());
            }
            self.reasked += 1;
            self.follow()?;
        }
        Err(GenerationError::Unstable {
            name: self.name.clone(),
        })
    }

    /// Opens the generation the pointer names now.
    fn follow(&mut self) -> Result<()> {
        let (generation, filter) = open_current::<F>(&self.urls, &mut self.pointer, &self.name)?;
        if generation != self.generation {
            self.changes += 1;
        }
        self.generation = generation;
        self.filter = filter;
        Ok(())
    }
}

/// Resolves the pointer and opens that generation. A generation that vanished between the GET and
/// the open (replaced and expired meanwhile) is retried with the pointer's new value; one the
/// pointer still names is [`GenerationError::MissingGeneration`].
fn open_current<F: BitPositions>(
    urls: &str,
    pointer: &mut Connection,
    name: &str,
) -> Result<(String, RedisBloom<F>)> {
    for _ in 0..MAX_REASKS {
        let (generation, _) = resolve(pointer, name)?;
        match RedisBloom::<F>::open(Connection::open(urls)?, &generation) {
            Ok(filter) => return Ok((generation, filter)),
            Err(RedisFilterError::NotFound { .. }) => {
                if current(pointer, name)?.as_deref() == Some(&generation) {
                    return Err(missing(pointer, name, generation));
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(GenerationError::Unstable {
        name: name.to_owned(),
    })
}

/// How [`swap_under_readers`] reads while the swap runs.
#[derive(Debug, Clone, Copy)]
pub struct ReaderPlan {
    /// Reader threads, each with its own connections (1 to [`MAX_READERS`]).
    pub readers: usize,
    /// Keys per batch (one pointer read per batch).
    pub batch: usize,
    /// Keys per pipelined round trip within a batch.
    pub per_round_trip: usize,
    /// Batches each reader completes on the new generation before it stops.
    pub batches_after: u64,
    /// How long readers may take to start, and to reach the new generation after the switch,
    /// before the measurement stops them (a reader stopped early is reported as such, never
    /// counted as having seen the new generation).
    pub deadline: Duration,
}

/// The most reader threads [`swap_under_readers`] starts.
pub const MAX_READERS: usize = 256;

impl ReaderPlan {
    /// `readers` threads, 256 keys per batch and per round trip, 2 batches on the new
    /// generation, 60 s deadline.
    pub fn new(readers: usize) -> Self {
        Self {
            readers,
            batch: 256,
            per_round_trip: 256,
            batches_after: 2,
            deadline: Duration::from_secs(60),
        }
    }

    fn check(&self) -> Result<()> {
        let bad = |what: &'static str, value: usize, allowed: String| {
            Err(RedisFilterError::OutOfRange {
                what,
                value: value.to_string(),
                allowed,
            }
            .into())
        };
        if self.readers == 0 || self.readers > MAX_READERS {
            return bad(
                "reader threads",
                self.readers,
                format!("1 to {MAX_READERS}"),
            );
        }
        if self.batch == 0 || self.per_round_trip == 0 {
            return bad(
                "keys per batch / per round trip",
                self.batch.min(self.per_round_trip),
                "at least 1".into(),
            );
        }
        Ok(())
    }
}

/// What one reader saw during [`swap_under_readers`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderCount {
    /// Lookups answered (each probe key once per batch it was in).
    pub queries: u64,
    /// Lookups of a probe key (a member of both generations) answered "absent".
    pub false_negatives: u64,
    /// Batches answered.
    pub batches: u64,
    /// Moves to a new generation.
    pub generation_changes: u64,
    /// Batches asked again because the pointer moved while they ran.
    pub reasked_batches: u64,
    /// The generation of the reader's first batch.
    pub first_generation: String,
    /// The generation of its last batch.
    pub last_generation: String,
}

/// The outcome of [`swap_under_readers`]: the swap's, and each reader's counts.
#[derive(Debug, Clone, PartialEq)]
pub struct SwapUnderReaders {
    /// What the swap did.
    pub swap: SwapOutcome,
    /// One entry per reader thread.
    pub readers: Vec<ReaderCount>,
}

impl SwapUnderReaders {
    /// Lookups answered, over all readers.
    pub fn queries(&self) -> u64 {
        self.readers.iter().map(|r| r.queries).sum()
    }

    /// False negatives, over all readers (0 is the guarantee).
    pub fn false_negatives(&self) -> u64 {
        self.readers.iter().map(|r| r.false_negatives).sum()
    }

    /// Readers whose last batch was answered by the new generation.
    pub fn readers_on_new(&self) -> usize {
        self.readers
            .iter()
            .filter(|r| r.last_generation == self.swap.new_generation)
            .count()
    }
}

/// Shared state of the reader threads.
struct Board {
    ready: AtomicUsize,
    finished: AtomicUsize,
    stop: AtomicBool,
    switched: OnceLock<String>,
    failure: Mutex<Option<GenerationError>>,
}

/// Measures a swap under readers: `plan.readers` threads each open a [`Reader`] of `name` and look
/// up `probes` (keys that are members of both the old and the new generation) batch after batch;
/// once every reader has answered a batch, `run_swap` runs (typically [`swap`]); after it returns,
/// each reader goes on until it has answered `plan.batches_after` batches from the new generation
/// (or the deadline passes). Returns every reader's counts: queries, false negatives, generation
/// changes, repeated batches.
///
/// Errors: a reader's or the swap's error (the readers are stopped), a plan out of range, no probe.
pub fn swap_under_readers<F, K>(
    urls: &str,
    name: &str,
    probes: &[K],
    plan: &ReaderPlan,
    run_swap: impl FnOnce() -> Result<SwapOutcome>,
) -> Result<SwapUnderReaders>
where
    F: BitPositions,
    K: Key + Sync,
{
    plan.check()?;
    if probes.is_empty() {
        return Err(RedisFilterError::OutOfRange {
            what: "probe keys",
            value: "0".into(),
            allowed: "at least 1 key, a member of both generations".into(),
        }
        .into());
    }
    let board = Board {
        ready: AtomicUsize::new(0),
        finished: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        switched: OnceLock::new(),
        failure: Mutex::new(None),
    };
    let (swapped, counts) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..plan.readers)
            .map(|_| scope.spawn(|| read_until_done::<F, K>(urls, name, probes, plan, &board)))
            .collect();
        let swapped = drive(plan, &board, run_swap);
        let counts: Vec<Option<ReaderCount>> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or(None))
            .collect();
        (swapped, counts)
    });
    if let Some(e) = board.failure.lock().map_or(None, |mut f| f.take()) {
        return Err(e);
    }
    // Without a recorded failure, the swap ran (it is skipped only after a reader's failure) and
    // every reader returned its counts.
    let unexplained = || GenerationError::Unstable {
        name: name.to_owned(),
    };
    let swap = swapped.ok_or_else(unexplained)??;
    let readers = counts
        .into_iter()
        .map(|c| c.ok_or_else(unexplained))
        .collect::<Result<Vec<_>>>()?;
    Ok(SwapUnderReaders { swap, readers })
}

/// The measurement's main thread: waits for every reader to answer a batch, swaps, then waits
/// for every reader to finish (or the deadline) and stops them. `None` if a reader failed before
/// the swap (nothing was swapped).
fn drive(
    plan: &ReaderPlan,
    board: &Board,
    run_swap: impl FnOnce() -> Result<SwapOutcome>,
) -> Option<Result<SwapOutcome>> {
    let wait_for = |count: &AtomicUsize| {
        let deadline = Instant::now() + plan.deadline;
        while count.load(Ordering::Acquire) < plan.readers
            && Instant::now() < deadline
            && !board.stop.load(Ordering::Acquire)
        {
            std::thread::sleep(Duration::from_millis(2));
        }
    };
    wait_for(&board.ready);
    if board.stop.load(Ordering::Acquire) {
        // A reader failed before the swap (its error is on the board): nothing is swapped.
        return None;
    }
    let swapped = run_swap();
    if let Ok(s) = &swapped {
        let _ = board.switched.set(s.new_generation.clone());
        wait_for(&board.finished);
    }
    board.stop.store(true, Ordering::Release);
    Some(swapped)
}

/// One reader thread: batches of `probes` until stopped, or until it has answered
/// `plan.batches_after` batches from the generation the swap switched to. `None` after an error
/// (recorded on the board, which stops every reader).
fn read_until_done<F: BitPositions, K: Key>(
    urls: &str,
    name: &str,
    probes: &[K],
    plan: &ReaderPlan,
    board: &Board,
) -> Option<ReaderCount> {
    let fail = |e: GenerationError| {
        if let Ok(mut f) = board.failure.lock() {
            f.get_or_insert(e);
        }
        board.stop.store(true, Ordering::Release);
        None
    };
    let mut reader = match Reader::<F>::open(urls, name) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let mut count = ReaderCount {
        queries: 0,
        false_negatives: 0,
        batches: 0,
        generation_changes: 0,
        reasked_batches: 0,
        first_generation: reader.generation().to_owned(),
        last_generation: String::new(),
    };
    let mut on_new = 0u64;
    'outer: loop {
        for batch in probes.chunks(plan.batch) {
            let (q, fnr) = (&mut count.queries, &mut count.false_negatives);
            if let Err(e) = reader.contains_batch(batch, plan.per_round_trip, |_, hit| {
                *q += 1;
                *fnr += u64::from(!hit);
            }) {
                return fail(e);
            }
            count.batches += 1;
            if count.batches == 1 {
                board.ready.fetch_add(1, Ordering::AcqRel);
            }
            if board
                .switched
                .get()
                .is_some_and(|g| g == reader.generation())
            {
                on_new += 1;
                if on_new == plan.batches_after.max(1) {
                    board.finished.fetch_add(1, Ordering::AcqRel);
                    break 'outer;
                }
            }
            if board.stop.load(Ordering::Acquire) {
                break 'outer;
            }
        }
    }
    count.generation_changes = reader.changes();
    count.reasked_batches = reader.reasked();
    count.last_generation = reader.generation().to_owned();
    Some(count)
}
