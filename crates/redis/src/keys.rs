//! Where a filter's bits are: key names (with cluster hash tags) and the mapping from a global bit
//! position to a shard and a Redis bit offset.

use crate::error::{RedisFilterError, Result};

/// The longest filter name accepted (keys stay short; Redis itself allows far longer).
pub const MAX_NAME_BYTES: usize = 200;

/// Checks a filter name: 1 to [`MAX_NAME_BYTES`] bytes, printable ASCII without spaces and
/// without `{` or `}` (which would change the keys' cluster hash tags).
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'{' && b != b'}');
    if ok {
        Ok(())
    } else {
        Err(RedisFilterError::OutOfRange {
            what: "filter name",
            // At most its first bytes: a name of megabytes would otherwise fill the message.
            value: bloomlab_harness::keys::quote_prefix(name.as_bytes()),
            allowed: format!(
                "1 to {MAX_NAME_BYTES} printable ASCII characters, without spaces, '{{' or '}}'"
            ),
        })
    }
}

/// The prefix of every Redis key bloomlab's own runs create (`{bloomlab-...`): the pattern
/// `scripts/redis-local.sh clean` SCANs for (`{bloomlab-*`), so that cleaning never touches a key
/// another program made.
pub const RUN_KEY_PREFIX: &str = "bloomlab-";

/// A run's random id: 16 hex digits (64 bits) from the operating system's random source, so that
/// two runs' names do not collide, even with the same pid (containers) or at the same instant.
/// Two runs share an id with probability about r^2 / 2^65 among r runs.
pub fn run_id() -> Result<String> {
    let v = getrandom::u64().map_err(|e| RedisFilterError::OutOfRange {
        what: "run id",
        value: "(none)".into(),
        allowed: format!("random bytes from the operating system, which failed: {e}"),
    })?;
    Ok(format!("{v:016x}"))
}

/// The config hash of filter `name`: `{name}:config` (hash tag `name`).
pub fn config_key(name: &str) -> String {
    format!("{{{name}}}:config")
}

/// The string holding shard `i` of filter `name`: `{name:i}:bits`. Each shard has its own hash
/// tag, so a cluster places shards by their own slots and a filter of several shards spreads
/// over the nodes.
pub fn shard_key(name: &str, i: u64) -> String {
    format!("{{{name}:{i}}}:bits")
}

/// The SETBIT/GETBIT/BITFIELD offset of bit `j` of a shard, such that the Redis string's bytes
/// equal the in-memory filter's bytes.
///
/// In memory, position `j` is bit `j % 64` of a little-endian `u64` word, i.e. bit `j % 8`
/// (least significant first) of byte `j / 8`. Redis numbers the bits of each byte from the most
/// significant one: offset `o` is bit `7 - o % 8` of byte `o / 8`. So the byte stays and the bit
/// within it is mirrored.
#[inline]
pub const fn redis_offset(j: u64) -> u64 {
    (j & !7) | (7 - (j & 7))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_mirror_bits_within_each_byte() {
        assert_eq!(redis_offset(0), 7);
        assert_eq!(redis_offset(7), 0);
        assert_eq!(redis_offset(8), 15);
        assert_eq!(redis_offset(63), 56);
        assert_eq!(redis_offset((1 << 32) - 1), (1 << 32) - 8);
        // An involution that keeps the byte.
        for j in 0..4096 {
            assert_eq!(redis_offset(redis_offset(j)), j);
            assert_eq!(redis_offset(j) / 8, j / 8);
        }
    }

    #[test]
    fn keys_carry_their_hash_tags_and_names_are_checked() {
        assert_eq!(config_key("seen-urls"), "{seen-urls}:config");
        assert_eq!(shard_key("seen-urls", 3), "{seen-urls:3}:bits");
        for bad in ["", "a b", "a{b", "b}", "é", &"x".repeat(MAX_NAME_BYTES + 1)] {
            let e = check_name(bad).unwrap_err().to_string();
            assert!(e.contains("filter name"), "{bad:?}: {e}");
        }
        check_name("crawler:seen/urls-2026").unwrap();
        let huge = check_name(&"x".repeat(10_000)).unwrap_err().to_string();
        assert!(
            huge.contains("10000 bytes in all") && !huge.contains(&"x".repeat(61)),
            "{huge}"
        );
    }

    #[test]
    fn run_ids_are_16_hex_digits_and_differ() {
        let a = run_id().unwrap();
        let b = run_id().unwrap();
        assert!(
            a.len() == 16 && a.bytes().all(|c| c.is_ascii_hexdigit()),
            "{a}"
        );
        // Equal with probability 2^-64.
        assert_ne!(a, b);
    }
}
