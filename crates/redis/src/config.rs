//! The config hash `{name}:config`: what a filter's bits mean, written once by its creator and
//! checked by every client that opens it.

use std::collections::HashMap;

use bloomlab_filters::{BitPositions, Layout, Params};

use crate::error::{RedisFilterError, Result};

/// The version of the layout this crate writes (keys, bit order, fields). A config with another
/// version is refused as corrupt rather than read with different rules.
pub const FORMAT_VERSION: u32 = 1;

/// The most bits one shard (one Redis string) holds: 2^32 bits = 512 MiB, Redis's limit for a
/// string (`proto-max-bulk-len`'s default, and the most SETBIT can address).
pub const MAX_SHARD_BITS: u64 = 1 << 32;

/// The shard size filters get unless another is asked for: the largest whose Redis string
/// takes 512 MiB of server memory. A string of exactly 2^32 bits (512 MiB) plus Redis's few header
/// bytes falls into jemalloc's next size class and takes 640 MiB (measured with Redis 7.0:
/// `used_memory` grows by 671,088,688 bytes for one such string, by 536,870,912 for one 512 bytes
/// shorter), so the default stays 4096 bits (512 bytes) below the limit.
pub const DEFAULT_SHARD_BITS: u64 = MAX_SHARD_BITS - 4096;

/// A shard size for filters on a cluster: 2^20 bits (128 KiB), small enough that a filter of a
/// few million bits spreads over every master (each shard's hash tag maps it to a slot), large
/// enough that a pipeline's keys still fall into few shards. Used by `sweep --redis` with a
/// cluster and by `redis-costs`.
pub const CLUSTER_SHARD_BITS: u64 = 1 << 20;

/// Shards are whole 512-bit blocks, so that a blocked filter's block never straddles two keys
/// (one key per lookup) and every shard starts on a byte (and 64-bit word) boundary.
pub const SHARD_UNIT: u64 = 512;

/// The most shards a filter may have (2^48 bits, 32 TiB, at the largest shard size): a bound on
/// the keys a client opens and checks, far above any Redis deployment's memory.
pub const MAX_SHARDS: u64 = 1 << 16;

/// The config hash's fields, in the order they are compared: the first that differs is the one a
/// [`RedisFilterError::ConfigMismatch`] names.
pub const FIELDS: [&str; 11] = [
    "format_version",
    "layout",
    "hash",
    "index",
    "n",
    "p",
    "bits",
    "hashes",
    "shard_bits",
    "shards",
    "checksum",
];

/// A Redis-backed filter's parameters: everything needed to compute its bit positions, plus the
/// (n, p) it was sized for.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The layout ([`Layout::Classic`] or [`Layout::Blocked512`]).
    pub layout: Layout,
    /// The hash strategy's ID (`xxh3`, `murmur3`, ...).
    pub hash: String,
    /// The index scheme's ID (`km`, `edh`, `mitz64`, `mitz32`; `slices9` for the blocked layout).
    pub index: String,
    /// The expected number of keys the filter was sized for.
    pub n: u64,
    /// The target false-positive rate it was sized for.
    pub p: f64,
    /// The true number of bits, after the layout's rounding.
    pub bits: u64,
    /// Probes per key (k).
    pub hashes: u32,
    /// Bits per shard (the last shard may be shorter).
    pub shard_bits: u64,
    /// Number of shards: `ceil(bits / shard_bits)`.
    pub shards: u64,
}

/// Checks a shard size: a multiple of [`SHARD_UNIT`] in `SHARD_UNIT..=MAX_SHARD_BITS`.
pub fn check_shard_bits(shard_bits: u64) -> Result<()> {
    if shard_bits == 0 || !shard_bits.is_multiple_of(SHARD_UNIT) || shard_bits > MAX_SHARD_BITS {
        return Err(RedisFilterError::OutOfRange {
            what: "shard size (bits)",
            value: shard_bits.to_string(),
            allowed: format!(
                "it must be a multiple of {SHARD_UNIT} in {SHARD_UNIT}..={MAX_SHARD_BITS} (2^32 bits, Redis's largest string)"
            ),
        });
    }
    Ok(())
}

/// What the Redis crate needs to know of an in-memory twin type beyond its positions: its IDs and
/// its sizing rule, as values. The code that talks to the server takes a `Twin` rather than the
/// type, so it is compiled once, not once per variant (30 of them); only the computation of
/// positions and digests stays generic.
#[derive(Clone, Copy)]
pub(crate) struct Twin {
    pub layout: Layout,
    pub hash: &'static str,
    pub index: &'static str,
    pub sized_params: fn(u64, f64) -> bloomlab_filters::Result<Params>,
}

impl Twin {
    pub fn of<F: BitPositions>() -> Self {
        Self {
            layout: F::LAYOUT,
            hash: F::HASH_ID,
            index: F::INDEX_ID,
            sized_params: F::sized_params,
        }
    }
}

impl Config {
    /// The config of a filter of variant `F` sized for `n` keys at rate `p` by `F`'s own rule
    /// (the same (m, k) as the in-memory `F::sized_for(n, p)`), in shards of `shard_bits` bits.
    /// Errors for an invalid (n, p), a bad shard size, or more than [`MAX_SHARDS`] shards.
    pub fn sized<F: BitPositions>(n: u64, p: f64, shard_bits: u64) -> Result<Self> {
        Self::sized_as(Twin::of::<F>(), n, p, shard_bits)
    }

    /// [`Self::sized`] for the twin described by `twin`.
    pub(crate) fn sized_as(twin: Twin, n: u64, p: f64, shard_bits: u64) -> Result<Self> {
        check_shard_bits(shard_bits)?;
        let params = (twin.sized_params)(n, p)?;
        let shards = params.bits.div_ceil(shard_bits);
        if shards > MAX_SHARDS {
            return Err(RedisFilterError::OutOfRange {
                what: "shard count",
                value: format!(
                    "{shards} ({} bits for n = {n}, p = {p}, in shards of {shard_bits} bits)",
                    params.bits
                ),
                allowed: format!("at most {MAX_SHARDS} shards per filter: use larger shards"),
            });
        }
        Ok(Self {
            layout: twin.layout,
            hash: twin.hash.to_owned(),
            index: twin.index.to_owned(),
            n,
            p,
            bits: params.bits,
            hashes: params.hashes,
            shard_bits,
            shards,
        })
    }

    /// The fields as stored, in [`FIELDS`] order, the checksum last. Numbers are written in
    /// Rust's shortest round-trip form, so reading them back gives the same values.
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        let mut out = self.fields_without_checksum();
        let sum = checksum(&out);
        out.push(("checksum", sum));
        out
    }

    fn fields_without_checksum(&self) -> Vec<(&'static str, String)> {
        vec![
            ("format_version", FORMAT_VERSION.to_string()),
            ("layout", self.layout.to_string()),
            ("hash", self.hash.clone()),
            ("index", self.index.clone()),
            ("n", self.n.to_string()),
            ("p", self.p.to_string()),
            ("bits", self.bits.to_string()),
            ("hashes", self.hashes.to_string()),
            ("shard_bits", self.shard_bits.to_string()),
            ("shards", self.shards.to_string()),
        ]
    }

    /// Reads a config hash as `HGETALL` returns it. Every field must be present, readable and
    /// consistent with the others, and the checksum must match: anything else is
    /// [`RedisFilterError::Corrupt`] naming the field (`name` and `key` only label the error).
    pub fn parse(name: &str, key: &str, hash: &HashMap<String, String>) -> Result<Self> {
        let corrupt = |reason: String| RedisFilterError::Corrupt {
            name: name.to_owned(),
            key: key.to_owned(),
            reason,
        };
        if let Some(extra) = hash.keys().find(|f| !FIELDS.contains(&f.as_str())) {
            return Err(corrupt(format!(
                "unknown field {extra:?} (the fields are {})",
                FIELDS.join(", ")
            )));
        }
        let get = |field: &str| {
            hash.get(field)
                .ok_or_else(|| corrupt(format!("field {field:?} is missing")))
        };
        fn number<T: std::str::FromStr>(
            field: &str,
            text: &str,
            corrupt: &dyn Fn(String) -> RedisFilterError,
        ) -> Result<T> {
            text.parse()
                .map_err(|_| corrupt(format!("field {field:?} = {text:?} is not a valid number")))
        }
        let version: u32 = number("format_version", get("format_version")?, &corrupt)?;
        if version != FORMAT_VERSION {
            return Err(corrupt(format!(
                "format_version = {version}: this build reads version {FORMAT_VERSION} only"
            )));
        }
        let layout_text = get("layout")?;
        let layout: Layout = layout_text
            .parse()
            .map_err(|e| corrupt(format!("field \"layout\": {e}")))?;
        if !matches!(layout, Layout::Classic | Layout::Blocked512) {
            return Err(corrupt(format!(
                "layout = {layout}: the Redis store holds only the classic and blocked512 layouts"
            )));
        }
        let config = Self {
            layout,
            hash: get("hash")?.clone(),
            index: get("index")?.clone(),
            n: number("n", get("n")?, &corrupt)?,
            p: number("p", get("p")?, &corrupt)?,
            bits: number("bits", get("bits")?, &corrupt)?,
            hashes: number("hashes", get("hashes")?, &corrupt)?,
            shard_bits: number("shard_bits", get("shard_bits")?, &corrupt)?,
            shards: number("shards", get("shards")?, &corrupt)?,
        };
        let stored_sum = get("checksum")?;
        let expected = checksum(&config.fields_without_checksum());
        if *stored_sum != expected {
            return Err(corrupt(format!(
                "checksum = {stored_sum:?}, but the other fields give {expected:?}: the hash was edited by hand or damaged"
            )));
        }
        check_shard_bits(config.shard_bits).map_err(|e| corrupt(e.to_string()))?;
        // A checksum covers what was written, not whether it made sense: a config whose n or p no
        // filter can be sized for is corrupt here, where the file or key is named, rather than
        // an unexplained "p = NaN is invalid" wherever it is first used (issue 64).
        if config.n == 0 {
            return Err(corrupt(
                "n = 0: a filter is sized for at least 1 key".to_owned(),
            ));
        }
        if !(config.p > 0.0 && config.p < 1.0) {
            return Err(corrupt(format!(
                "p = {}: a false-positive rate must be in the open interval (0, 1)",
                config.p
            )));
        }
        if config.bits == 0
            || !config.bits.is_multiple_of(64)
            || config.hashes == 0
            || config.shards != config.bits.div_ceil(config.shard_bits)
        {
            return Err(corrupt(format!(
                "bits = {}, hashes = {}, shard_bits = {}, shards = {} contradict each other",
                config.bits, config.hashes, config.shard_bits, config.shards
            )));
        }
        Ok(config)
    }

    /// The first field (in [`FIELDS`] order) whose value differs from `requested`'s, with this
    /// config's value and the requested one.
    pub fn first_difference(&self, requested: &Config) -> Option<(&'static str, String, String)> {
        self.fields_without_checksum()
            .into_iter()
            .zip(requested.fields_without_checksum())
            .find(|((_, a), (_, b))| a != b)
            .map(|((field, a), (_, b))| (field, a, b))
    }

    /// Bytes of shard `i`'s Redis string: `shard_bits / 8`, or less for the last shard.
    pub fn shard_bytes(&self, i: u64) -> u64 {
        let start = i * self.shard_bits;
        (self.bits - start).min(self.shard_bits) / 8
    }
}

/// A 64-bit XXH3 of the fields as `name=value` lines, in hex: detects a hand edit of any field.
fn checksum(fields: &[(&'static str, String)]) -> String {
    let text: String = fields.iter().map(|(f, v)| format!("{f}={v}\n")).collect();
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomlab_filters::{Blocked512, Bloom, FlatBits, GuavaMitz64, Murmur3, Xxh3};

    type Guava = Bloom<Murmur3, GuavaMitz64, FlatBits>;

    fn as_hash(c: &Config) -> HashMap<String, String> {
        c.fields()
            .into_iter()
            .map(|(f, v)| (f.to_owned(), v))
            .collect()
    }

    #[test]
    fn a_config_reads_back_as_written() {
        for c in [
            Config::sized::<Guava>(1_000_000, 0.01, MAX_SHARD_BITS).unwrap(),
            Config::sized::<Blocked512<Xxh3>>(123_457, 1e-5, 1 << 16).unwrap(),
        ] {
            assert_eq!(Config::parse("f", "{f}:config", &as_hash(&c)).unwrap(), c);
        }
        let c = Config::sized::<Guava>(1000, 0.01, 1024).unwrap();
        let built = Guava::new(1000, 0.01).unwrap();
        assert_eq!(
            (c.bits, c.hashes),
            (
                bloomlab_filters::Filter::bits(&built),
                bloomlab_filters::Filter::hashes(&built)
            )
        );
        assert_eq!(c.shards, c.bits.div_ceil(1024));
        let total: u64 = (0..c.shards).map(|i| c.shard_bytes(i)).sum();
        assert_eq!(total * 8, c.bits);
    }

    #[test]
    fn hand_edits_and_damage_are_corrupt_naming_the_field() {
        let c = Config::sized::<Guava>(1000, 0.01, 1024).unwrap();
        let cases: [(&str, Option<&str>, &str); 6] = [
            ("bits", Some("19200"), "checksum"),
            ("p", Some("abc"), "\"p\" = \"abc\" is not a valid number"),
            ("hashes", None, "field \"hashes\" is missing"),
            ("layout", Some("sbbf"), "only the classic and blocked512"),
            ("format_version", Some("2"), "format_version = 2"),
            ("extra", Some("1"), "unknown field \"extra\""),
        ];
        for (field, value, expected) in cases {
            let mut h = as_hash(&c);
            match value {
                Some(v) => h.insert(field.to_owned(), v.to_owned()),
                None => h.remove(field),
            };
            let e = Config::parse("f", "{f}:config", &h).unwrap_err();
            assert!(
                matches!(e, RedisFilterError::Corrupt { .. }) && e.to_string().contains(expected),
                "{field} = {value:?}: {e}"
            );
        }
    }

    #[test]
    fn the_first_difference_is_named_with_both_values() {
        let a = Config::sized::<Guava>(1000, 0.01, 1024).unwrap();
        let b = Config::sized::<Guava>(1000, 0.001, 1024).unwrap();
        assert_eq!(
            a.first_difference(&b),
            Some(("p", "0.01".to_owned(), "0.001".to_owned()))
        );
        let c = Config::sized::<Blocked512<Xxh3>>(1000, 0.01, 1024).unwrap();
        assert_eq!(a.first_difference(&c).unwrap().0, "layout");
        assert_eq!(a.first_difference(&a.clone()), None);
    }

    #[test]
    fn shard_sizes_and_counts_beyond_limits_are_errors() {
        for bad in [0, 511, 1000, MAX_SHARD_BITS + 512] {
            let e = Config::sized::<Guava>(1000, 0.01, bad).unwrap_err();
            assert!(
                matches!(&e, RedisFilterError::OutOfRange { value, .. } if *value == bad.to_string()),
                "{bad}: {e}"
            );
        }
        let e = Config::sized::<Blocked512<Xxh3>>(100_000_000, 0.01, 512).unwrap_err();
        assert!(e.to_string().contains("at most 65536 shards"), "{e}");
        let e = Config::sized::<Guava>(0, 0.01, 1024).unwrap_err();
        assert!(matches!(e, RedisFilterError::Sizing(_)), "{e}");
    }
}
