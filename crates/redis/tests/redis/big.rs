//! One filter of more than 2^32 bits on one real server (`BLOOMLAB_REDIS_URL` and
//! `BLOOMLAB_REDIS_BIG=1`; about 600 MB of server memory and as much in this process for the
//! in-memory twin): two shards, keys found, bits above 2^32 in the second shard, bytes as in memory.

use crate::common;

use std::io::Write;
use std::time::Instant;

use bloomlab_filters::{BitPositions, Bloom, FlatBits, KirschMitzenmacher, Xxh3};
use bloomlab_redis::config::MAX_SHARD_BITS;
use bloomlab_redis::keys::redis_offset;
use bloomlab_redis::{Connection, RedisBloom};

type Km = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;

#[test]
fn a_filter_beyond_2_pow_32_bits_spans_two_shards_on_one_server() {
    let test = "a_filter_beyond_2_pow_32_bits_spans_two_shards_on_one_server";
    let Some(url) = common::single_url(test) else {
        return;
    };
    if !common::big_enabled(test) {
        return;
    }
    // 460M keys at 1%: about 4.41e9 bits, past the 2^32 bits one Redis string can hold.
    let (n, p) = (460_000_000, 0.01);
    let name = common::unique_name("big");
    let start = Instant::now();
    let mut f =
        RedisBloom::<Km>::create_or_open(Connection::single(&url).unwrap(), &name, n, p).unwrap();
    let created = start.elapsed();
    let config = f.config().clone();
    assert!(config.bits > MAX_SHARD_BITS, "{config:?}");
    assert_eq!(config.shards, 2, "{config:?}");
    let mut twin = Km::new(n, p).unwrap();
    assert_eq!(config.bits, bloomlab_filters::Filter::bits(&twin));

    let members = common::keys("big-member", 300_000);
    for k in &members[..200] {
        f.insert(k).unwrap();
    }
    f.insert_batch(&members[200..], 4096).unwrap();
    for k in &members {
        twin.insert(k);
    }

    let mut missing = Vec::new();
    f.contains_batch(&members, 4096, |i, hit| {
        if !hit {
            missing.push(i);
        }
    })
    .unwrap();
    assert!(missing.is_empty(), "members not found: {missing:?}");

    // The positions past the first shard (which holds DEFAULT_SHARD_BITS, just under 2^32) are
    // set in the second shard, at their offset in it; some of them are at or above 2^32.
    let boundary = config.shard_bits;
    let mut high = Vec::new();
    for k in &members {
        let d = Km::digest_of(k.as_bytes());
        Km::for_each_position(config.bits, config.hashes, d, |g| {
            if g >= boundary {
                high.push(g - boundary);
            }
        });
    }
    let above_2_32 = high
        .iter()
        .filter(|&&j| j + boundary >= MAX_SHARD_BITS)
        .count();
    assert!(
        above_2_32 > 0,
        "no position at or above 2^32 among {} keys",
        members.len()
    );
    let mut raw = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let shard1 = f.shard_key(1).to_owned();
    for chunk in high.chunks(8192) {
        let mut pipe = redis::pipe();
        for &j in chunk {
            pipe.cmd("GETBIT").arg(&shard1).arg(redis_offset(j));
        }
        let bits: Vec<u8> = pipe.query(&mut raw).unwrap();
        assert!(
            bits.iter().all(|&b| b == 1),
            "a bit past the first shard is clear in {shard1}"
        );
    }

    // The second shard's bytes are the in-memory filter's bytes from the boundary on.
    let words = config.bits / 64;
    let expected: Vec<u8> = (boundary / 64..words)
        .flat_map(|w| twin.bit_word(w).to_le_bytes())
        .collect();
    assert_eq!(f.shard_bytes(1).unwrap(), expected, "bytes of {shard1}");
    assert_eq!(
        f.set_bits().unwrap(),
        bloomlab_filters::Filter::set_bits(&twin)
    );

    let others = common::keys("big-non-member", 100_000);
    let mut answers = Vec::new();
    f.contains_batch(&others, 4096, |_, hit| answers.push(hit))
        .unwrap();
    let expected: Vec<bool> = others.iter().map(|k| twin.contains(k)).collect();
    assert_eq!(answers, expected, "non-member answers");

    let info: String = redis::cmd("INFO").arg("memory").query(&mut raw).unwrap();
    let used = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory_human:"))
        .unwrap_or("?")
        .trim()
        .to_owned();
    let _ = writeln!(
        std::io::stderr(),
        "bloomlab-redis big filter: {} bits in {} shards ({} positions in the second shard checked, {above_2_32} of them at or above 2^32), created in {:.2?}, server used_memory {used}",
        config.bits,
        config.shards,
        high.len(),
        created
    );
    f.destroy().unwrap();
}
