//! Operating on a filter by name, without knowing its type in advance: what an operator's tool
//! needs before it can open one ([`stored_config`]), what any key of bloomlab's is ([`describe`]),
//! what the server holds for a filter ([`server_figures`]), and removing it ([`drop_filter`]).
//!
//! A name is checked before anything is sent ([`crate::keys::check_name`]). Every key a function
//! here finds is checked for its type first (`TYPE`), so a key of another type, a foreign filter
//! (another library's config hash, a RedisBloom module key) or a name with no filter are each a
//! clear error naming the key, never a `WRONGTYPE` reply or a half-read filter.

use std::collections::HashMap;

use bloomlab_filters::{Geometry, Layout, VariantId};
use bloomlab_harness::Subject;

use crate::config::Config;
use crate::conn::Connection;
use crate::error::{RedisFilterError, Result};
use crate::keys::{check_name, config_key, shard_key};

/// The largest GETRANGE a streamed read asks for ([`crate::RedisBloom::read_chunks`] in export
/// and `stat`): 4 MiB, so memory stays bounded whatever the
/// filter's size (a 12 GB filter is read in about 3,000 round trips).
pub const CHUNK_BYTES: u64 = 4 << 20;

/// The `TYPE` of a key as Redis names it (`none` when absent).
pub fn key_type(conn: &mut Connection, key: &str) -> Result<String> {
    let t: String = conn.query(redis::cmd("TYPE").arg(key), "describe", key)?;
    Ok(t)
}

/// The stored config of filter `name`, checked: [`RedisFilterError::NotFound`] when there is no
/// config hash (saying whether a key named exactly `name` exists, e.g. a RedisBloom module
/// filter), [`RedisFilterError::Foreign`] when the config key is of another type or a hash of
/// another program (a Redisson `RBloomFilter`'s config has the same key name), and
/// [`RedisFilterError::Corrupt`] for a damaged or hand-edited bloomlab config.
pub fn stored_config(conn: &mut Connection, name: &str) -> Result<Config> {
    check_name(name)?;
    let key = config_key(name);
    match key_type(conn, &key)?.as_str() {
        "hash" => {}
        "none" => {
            let plain = key_type(conn, name)?;
            if plain != "none" {
                return Err(RedisFilterError::Foreign {
                    url: conn.url().to_owned(),
                    key: name.to_owned(),
                    what: format!(
                        "a key of type {plain:?} named {name:?}, but no bloomlab filter (whose config would be the hash {key:?})"
                    ),
                });
            }
            return Err(RedisFilterError::NotFound {
                url: conn.url().to_owned(),
                name: name.to_owned(),
                key,
            });
        }
        other => {
            return Err(RedisFilterError::Foreign {
                url: conn.url().to_owned(),
                key: key.clone(),
                what: format!(
                    "a key of type {other:?} where a bloomlab filter keeps its config hash"
                ),
            });
        }
    }
    let hash: HashMap<String, String> =
        conn.query(redis::cmd("HGETALL").arg(&key), "open", &key)?;
    if let Some(owner) = foreign_owner(&hash) {
        return Err(RedisFilterError::Foreign {
            url: conn.url().to_owned(),
            key,
            what: format!("{owner}'s filter config (fields {})", sorted_fields(&hash)),
        });
    }
    Config::parse(name, &key, &hash)
}

/// Which other program wrote a hash, judged by its fields: a Redisson `RBloomFilter` stores
/// `size`, `hashIterations`, `expectedInsertions` and `falseProbability` in `{name}:config`.
fn foreign_owner(hash: &HashMap<String, String>) -> Option<&'static str> {
    let has = |f: &str| hash.contains_key(f);
    if has("hashIterations") || has("expectedInsertions") || has("falseProbability") {
        return Some("Redisson");
    }
    if !has("format_version") && !has("checksum") {
        return Some("another program");
    }
    None
}

fn sorted_fields(hash: &HashMap<String, String>) -> String {
    let mut f: Vec<&str> = hash.keys().map(String::as_str).collect();
    f.sort_unstable();
    f.join(", ")
}

impl Config {
    /// The variant's name in the catalogue's Redis form (`redis/classic/xxh3/km`,
    /// `redis/blocked512/xxh3`), which [`crate::visit`] turns into the twin's type. An error for
    /// a hash or index scheme this build does not know.
    pub fn variant_name(&self) -> Result<String> {
        let twin = match self.layout {
            Layout::Classic => format!("classic/{}/{}/flat", self.hash, self.index),
            _ => format!("{}/{}", self.layout, self.hash),
        };
        let id = VariantId::parse(&twin).map_err(|_| RedisFilterError::OutOfRange {
            what: "stored variant",
            value: format!("{twin:?}"),
            allowed: format!(
                "a variant this build knows: {}",
                crate::variants::names().join(", ")
            ),
        })?;
        Ok(Subject::Redis(id).to_string())
    }

    /// The geometry the layout's theory needs: flat for classic, 512-bit blocks for blocked512.
    pub fn geometry(&self) -> Geometry {
        match self.layout {
            Layout::Blocked512 => Geometry::Blocked {
                blocks: self.bits / 512,
                block_bits: 512,
                hashes: self.hashes,
            },
            _ => Geometry::Flat {
                bits: self.bits,
                hashes: self.hashes,
            },
        }
    }
}

/// What the server holds for a filter, read with one command per key.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerFigures {
    /// Bytes of server memory the filter's keys take (`MEMORY USAGE` summed; `None` where the
    /// server does not answer it, e.g. the command is renamed or disabled).
    pub memory_bytes: Option<u64>,
    /// Milliseconds until the config hash expires, `None` when it has no expiry.
    pub ttl_ms: Option<u64>,
}

/// Reads the memory use and expiry of filter `name` with config `config`. (Its set bits come
/// from reading the bits themselves, which `stat` does anyway: see `bloomlab_filters::fill`.)
pub fn server_figures(conn: &mut Connection, name: &str, config: &Config) -> Result<ServerFigures> {
    let mut memory = Some(0u64);
    let ckey = config_key(name);
    memory = add_memory(conn, &ckey, memory);
    for i in 0..config.shards {
        memory = add_memory(conn, &shard_key(name, i), memory);
    }
    let ttl: i64 = conn.query(redis::cmd("PTTL").arg(&ckey), "describe", &ckey)?;
    Ok(ServerFigures {
        memory_bytes: memory,
        ttl_ms: u64::try_from(ttl).ok(),
    })
}

/// Adds a key's `MEMORY USAGE` (all samples) to `total`; `None` once any key has no answer.
fn add_memory(conn: &mut Connection, key: &str, total: Option<u64>) -> Option<u64> {
    let used: Option<u64> = conn
        .query(
            redis::cmd("MEMORY")
                .arg("USAGE")
                .arg(key)
                .arg("SAMPLES")
                .arg(0),
            "memory usage",
            key,
        )
        .ok()
        .flatten();
    Some(total? + used?)
}

/// Deletes filter `name` (its shards, then its config hash), after checking that it is a
/// bloomlab filter: a foreign or missing filter is an error and nothing is deleted. Returns the
/// number of keys deleted.
pub fn drop_filter(conn: &mut Connection, name: &str) -> Result<u64> {
    let config = stored_config(conn, name)?;
    let mut deleted = 0;
    let keys = (0..config.shards)
        .map(|i| shard_key(name, i))
        .chain([config_key(name)]);
    for key in keys {
        // One DEL per key: a cluster refuses multi-key commands across slots.
        let n: u64 = conn.query(redis::cmd("DEL").arg(&key), "drop", &key)?;
        deleted += n;
    }
    Ok(deleted)
}

/// What a Redis key is to bloomlab ([`describe`]).
#[derive(Debug, Clone, PartialEq)]
pub enum KeyRole {
    /// The name of a filter, or its config hash.
    Filter,
    /// Shard `index` of the filter.
    Shard {
        /// The shard's index.
        index: u64,
    },
}

/// A bloomlab key explained: the filter it belongs to, its role, and the filter's stored config.
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    /// The filter's name.
    pub name: String,
    /// What the key asked about is.
    pub role: KeyRole,
    /// The filter's stored config (checked).
    pub config: Config,
}

/// Explains `key_or_name`: a filter name, a config key `{NAME}:config` or a shard key
/// `{NAME:i}:bits`. Anything else is [`RedisFilterError::Foreign`] naming its type, or
/// [`RedisFilterError::NotFound`].
pub fn describe(conn: &mut Connection, key_or_name: &str) -> Result<Description> {
    let (name, role) = parse_key(key_or_name);
    let config = stored_config(conn, &name)?;
    if let KeyRole::Shard { index } = role
        && index >= config.shards
    {
        return Err(RedisFilterError::Foreign {
            url: conn.url().to_owned(),
            key: key_or_name.to_owned(),
            what: format!(
                "shard {index} of filter {name:?}, which has {} shards",
                config.shards
            ),
        });
    }
    Ok(Description { name, role, config })
}

/// Splits a bloomlab key into its filter's name and role; anything else is taken as a name.
fn parse_key(key: &str) -> (String, KeyRole) {
    if let Some(inner) = key
        .strip_prefix('{')
        .and_then(|k| k.strip_suffix("}:config"))
    {
        return (inner.to_owned(), KeyRole::Filter);
    }
    if let Some(inner) = key.strip_prefix('{').and_then(|k| k.strip_suffix("}:bits"))
        && let Some((name, i)) = inner.rsplit_once(':')
        && let Ok(index) = i.parse()
    {
        return (name.to_owned(), KeyRole::Shard { index });
    }
    (key.to_owned(), KeyRole::Filter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomlab_filters::{Blocked512, Bloom, FlatBits, KirschMitzenmacher, Xxh3};

    #[test]
    fn keys_are_read_back_to_their_filter_and_role() {
        assert_eq!(parse_key("{seen}:config"), ("seen".into(), KeyRole::Filter));
        assert_eq!(
            parse_key("{a:b:12}:bits"),
            ("a:b".into(), KeyRole::Shard { index: 12 })
        );
        assert_eq!(parse_key("seen"), ("seen".into(), KeyRole::Filter));
        assert_eq!(parse_key("{x}:bits"), ("{x}:bits".into(), KeyRole::Filter));
    }

    #[test]
    fn a_config_names_its_variant_and_geometry() {
        let c = Config::sized::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>(1000, 0.01, 1 << 20)
            .unwrap();
        assert_eq!(c.variant_name().unwrap(), "redis/classic/xxh3/km");
        assert_eq!(
            c.geometry(),
            Geometry::Flat {
                bits: c.bits,
                hashes: c.hashes
            }
        );
        let b = Config::sized::<Blocked512<Xxh3>>(1000, 0.01, 1 << 20).unwrap();
        assert_eq!(b.variant_name().unwrap(), "redis/blocked512/xxh3");
        assert!(
            matches!(b.geometry(), Geometry::Blocked { blocks, block_bits: 512, .. } if blocks * 512 == b.bits)
        );
        let mut odd = c.clone();
        odd.hash = "crc32".into();
        assert!(
            odd.variant_name()
                .unwrap_err()
                .to_string()
                .contains("crc32")
        );
    }

    #[test]
    fn foreign_hashes_are_recognised() {
        let h = |fields: &[&str]| -> HashMap<String, String> {
            fields.iter().map(|f| (f.to_string(), "1".into())).collect()
        };
        assert_eq!(
            foreign_owner(&h(&[
                "size",
                "hashIterations",
                "expectedInsertions",
                "falseProbability"
            ])),
            Some("Redisson")
        );
        assert_eq!(foreign_owner(&h(&["a", "b"])), Some("another program"));
        assert_eq!(
            foreign_owner(&h(&["format_version", "checksum", "bits"])),
            None
        );
    }
}
