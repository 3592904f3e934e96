//! Redis's own HyperLogLog (PFADD, PFCOUNT, PFMERGE) behind [`CardinalitySketch`], so the sketch
//! sweep drives it exactly as it drives ours.
//!
//! What Redis does (its `hyperloglog.c`): precision 14 is fixed at compile time (16,384 6-bit
//! registers, 12 KiB dense), elements are hashed with MurmurHash64A (seed `0xadc83b19`), small
//! sketches use a sparse encoding, and since Redis 5.0 PFCOUNT uses Ertl's improved estimator
//! ("New cardinality estimation algorithms for HyperLogLog sketches", 2017) with no empirical bias
//! tables. PFCOUNT of one key caches its result in the key until the next change.
//!
//! Keys are sent as their 8 little-endian bytes (the filters' [`bloomlab_filters::Key`]
//! encoding of a `u64`), [`RedisHll::DEFAULT_BATCH`] per PFADD, every PFADD of a batch in one
//! pipeline (one round trip).

use bloomlab_sketches::CardinalitySketch;
use bloomlab_sketches::cardinality::key_bytes;

use crate::conn::Connection;
use crate::error::{RedisFilterError, Result};

/// Redis's fixed HyperLogLog precision (`HLL_P` in `hyperloglog.c`).
pub const REDIS_HLL_PRECISION: u8 = 14;

/// A HyperLogLog stored under one Redis key.
#[derive(Debug)]
pub struct RedisHll {
    conn: Connection,
    key: String,
    batch: usize,
    /// The expiry every PFADD pipeline re-arms, in milliseconds (none: 0).
    expiry_ms: u64,
}

impl RedisHll {
    /// Elements per PFADD command.
    pub const DEFAULT_BATCH: usize = 1024;

    /// The sketch under `key` (created by the first PFADD; an existing one is reused, so callers
    /// that want an empty sketch pass a fresh key or call [`RedisHll::delete`] first).
    pub fn new(conn: Connection, key: &str) -> Self {
        Self {
            conn,
            key: key.to_owned(),
            batch: Self::DEFAULT_BATCH,
            expiry_ms: 0,
        }
    }

    /// The sketch with an expiry: every PFADD pipeline ends with a PEXPIRE of `expiry`, so the
    /// key of a run killed before [`RedisHll::delete`] disappears `expiry` after its last insert.
    /// A zero expiry means none.
    pub fn with_expiry(mut self, expiry: std::time::Duration) -> Self {
        self.expiry_ms = u64::try_from(expiry.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// The Redis key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Merges the sketches under `sources` into this one (PFMERGE: register-wise maximum, the
    /// sketch of the union).
    pub fn merge_from(&mut self, sources: &[&str]) -> Result<()> {
        let mut cmd = redis::cmd("PFMERGE");
        cmd.arg(&self.key);
        for s in sources {
            cmd.arg(*s);
        }
        self.conn
            .query::<redis::Value>(&cmd, "pfmerge", &self.key)
            .map(|_| ())
    }

    /// Deletes the key.
    pub fn delete(&mut self) -> Result<()> {
        self.conn
            .query::<i64>(redis::cmd("DEL").arg(&self.key), "delete", &self.key)
            .map(|_| ())
    }

    /// Bytes the server holds for the key's value (`MEMORY USAGE`), or 0 if it does not exist.
    pub fn memory_bytes(&mut self) -> Result<u64> {
        let v: Option<u64> = self.conn.query(
            redis::cmd("MEMORY").arg("USAGE").arg(&self.key),
            "memory usage",
            &self.key,
        )?;
        Ok(v.unwrap_or(0))
    }
}

impl CardinalitySketch for RedisHll {
    type Error = RedisFilterError;

    fn name(&self) -> String {
        format!("redis/pfadd/p{REDIS_HLL_PRECISION}")
    }

    fn precision(&self) -> u8 {
        REDIS_HLL_PRECISION
    }

    fn insert_batch(&mut self, keys: &[u64]) -> Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut cmds: Vec<redis::Cmd> = keys
            .chunks(self.batch)
            .map(|chunk| {
                let mut cmd = redis::cmd("PFADD");
                cmd.arg(&self.key);
                for &k in chunk {
                    cmd.arg(&key_bytes(k)[..]);
                }
                cmd
            })
            .collect();
        if self.expiry_ms > 0 {
            let mut cmd = redis::cmd("PEXPIRE");
            cmd.arg(&self.key).arg(self.expiry_ms);
            cmds.push(cmd);
        }
        self.conn.pipeline(cmds, "pfadd", &self.key).map(|_| ())
    }

    fn estimator(&self) -> &'static str {
        bloomlab_sketches::cardinality::estimator::ERTL
    }

    fn memory_bytes(&mut self) -> Result<u64> {
        RedisHll::memory_bytes(self)
    }

    fn discard(&mut self) -> Result<()> {
        self.delete()
    }

    fn estimate(&mut self) -> Result<f64> {
        let n: u64 = self
            .conn
            .query(redis::cmd("PFCOUNT").arg(&self.key), "pfcount", &self.key)?;
        Ok(n as f64)
    }
}
