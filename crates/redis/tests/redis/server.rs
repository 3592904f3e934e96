//! Against one real Redis server (`BLOOMLAB_REDIS_URL`; see `common`): the Redis store has
//! the in-memory filter's bytes and answers on every hash and index axis, refuses other
//! parameters, detects damage, and loses nothing to racing clients.

use crate::common;

use std::io::Write;
use std::time::Instant;

use bloomlab_filters::{
    BitPositions, Blocked512, Bloom, EnhancedDoubleHash, FlatBits, KirschMitzenmacher, Murmur3,
    Xxh3,
};
use bloomlab_redis::{Connection, RedisBloom, RedisFilterError, RedisVisitor};

type Km = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;

/// Builds `F` in Redis and in memory for (n, p), feeds both the same members (some one per round
/// trip, the rest pipelined), and checks bytes, member answers and non-member answers.
struct SameAsTwin {
    url: String,
    n: u64,
    p: f64,
    shard_bits: u64,
}

impl RedisVisitor for SameAsTwin {
    type Output = ();
    fn visit<F: BitPositions>(self) {
        let redis_name = bloomlab_redis::redis_name::<F>();
        let label = format!(
            "{redis_name} n={} p={} shard_bits={}",
            self.n, self.p, self.shard_bits
        );
        let conn = Connection::single(&self.url).unwrap();
        let name = common::unique_name("same-as-twin");
        let mut r =
            RedisBloom::<F>::create_or_open_sharded(conn, &name, self.n, self.p, self.shard_bits)
                .unwrap_or_else(|e| panic!("{label}: {e}"));
        let mut twin = F::sized_for(self.n, self.p).unwrap();
        assert_eq!(
            (r.config().bits, r.config().hashes),
            (twin.bits(), twin.hashes()),
            "{label}"
        );
        assert_eq!(r.geometry(), twin.geometry(), "{label}");
        assert_eq!(r.fpr_theory(self.n), twin.fpr_theory(self.n), "{label}");

        let members = common::keys("member", self.n);
        let (one_by_one, batched) = members.split_at(100);
        for k in one_by_one {
            r.insert(k).unwrap();
        }
        r.insert_batch(batched, 256).unwrap();
        for k in &members {
            bloomlab_filters::FilterExt::insert(&mut twin, k);
        }
        assert_eq!(
            r.bytes().unwrap(),
            common::twin_bytes(&twin),
            "{label}: bytes"
        );
        assert_eq!(r.set_bits().unwrap(), twin.set_bits(), "{label}: set bits");

        let mut missing = Vec::new();
        r.contains_batch(&members, 100, |i, hit| {
            if !hit {
                missing.push(i);
            }
        })
        .unwrap();
        assert!(
            missing.is_empty(),
            "{label}: members not found: {missing:?}"
        );
        assert!(r.contains(&members[0]).unwrap(), "{label}");

        let others = common::keys("non-member", self.n);
        let mut answers = Vec::with_capacity(others.len());
        r.contains_batch(&others, 512, |_, hit| answers.push(hit))
            .unwrap();
        let expected: Vec<bool> = others
            .iter()
            .map(|k| bloomlab_filters::FilterExt::contains(&twin, k))
            .collect();
        assert_eq!(answers, expected, "{label}: non-member answers (pipelined)");
        for (k, &e) in others.iter().zip(&expected).take(200) {
            assert_eq!(
                r.contains(k).unwrap(),
                e,
                "{label}: {k} (one per round trip)"
            );
        }
        r.destroy().unwrap();
    }
}

#[test]
fn bytes_and_answers_equal_the_in_memory_twin_on_every_axis() {
    let Some(url) = common::single_url("bytes_and_answers_equal_the_in_memory_twin_on_every_axis")
    else {
        return;
    };
    for name in bloomlab_redis::names() {
        // One shard, and many small ones (a key's positions then span several keys).
        for shard_bits in [bloomlab_redis::config::MAX_SHARD_BITS, 4096] {
            bloomlab_redis::visit(
                &name,
                SameAsTwin {
                    url: url.clone(),
                    n: 3000,
                    p: 0.01,
                    shard_bits,
                },
            )
            .unwrap();
        }
    }
    // k past the blocked layout's 7 slices per hash word, and Guava's sizing.
    for name in ["redis/blocked512/xxh3", "redis/classic/murmur3/mitz64"] {
        bloomlab_redis::visit(
            name,
            SameAsTwin {
                url: url.clone(),
                n: 2000,
                p: 1e-5,
                shard_bits: 1024,
            },
        )
        .unwrap();
    }
}

#[test]
fn reopening_with_other_parameters_is_an_error_naming_the_field() {
    let test = "reopening_with_other_parameters_is_an_error_naming_the_field";
    let Some(url) = common::single_url(test) else {
        return;
    };
    let conn = || Connection::single(&url).unwrap();
    let name = common::unique_name("reopen");
    let mut f = RedisBloom::<Km>::create_or_open_sharded(conn(), &name, 1000, 0.01, 4096).unwrap();
    f.insert("kept").unwrap();

    let mut again =
        RedisBloom::<Km>::create_or_open_sharded(conn(), &name, 1000, 0.01, 4096).unwrap();
    assert!(again.contains("kept").unwrap());
    let mut opened = RedisBloom::<Km>::open(conn(), &name).unwrap();
    assert_eq!(opened.config(), f.config());
    assert!(opened.contains("kept").unwrap());

    let mismatch = |e: RedisFilterError| match e {
        RedisFilterError::ConfigMismatch {
            field,
            stored,
            requested,
            ..
        } => (field, stored, requested),
        other => panic!("expected a config mismatch, got {other}"),
    };
    let e = RedisBloom::<Km>::create_or_open_sharded(conn(), &name, 1000, 0.001, 4096).unwrap_err();
    let msg = e.to_string();
    assert_eq!(mismatch(e), ("p", "0.01".into(), "0.001".into()), "{msg}");
    assert!(
        msg.contains(&name) && msg.contains("p = 0.01") && msg.contains("0.001"),
        "{msg}"
    );
    let e = RedisBloom::<Km>::create_or_open_sharded(conn(), &name, 2000, 0.01, 4096).unwrap_err();
    assert_eq!(mismatch(e), ("n", "1000".into(), "2000".into()));
    let e = RedisBloom::<Km>::create_or_open(conn(), &name, 1000, 0.01).unwrap_err();
    assert_eq!(mismatch(e).0, "shard_bits");
    let e = RedisBloom::<Blocked512<Xxh3>>::create_or_open_sharded(conn(), &name, 1000, 0.01, 4096)
        .unwrap_err();
    assert_eq!(
        mismatch(e),
        ("layout", "classic".into(), "blocked512".into())
    );
    let e = RedisBloom::<Bloom<Murmur3, KirschMitzenmacher, FlatBits>>::create_or_open_sharded(
        conn(),
        &name,
        1000,
        0.01,
        4096,
    )
    .unwrap_err();
    assert_eq!(mismatch(e), ("hash", "xxh3".into(), "murmur3".into()));
    let e =
        RedisBloom::<Bloom<Xxh3, EnhancedDoubleHash, FlatBits>>::open(conn(), &name).unwrap_err();
    assert_eq!(mismatch(e), ("index", "km".into(), "edh".into()));

    let missing = common::unique_name("never-created");
    let e = RedisBloom::<Km>::open(conn(), &missing).unwrap_err();
    assert!(
        matches!(&e, RedisFilterError::NotFound { name, url: u, .. } if *name == missing && *u == url),
        "{e}"
    );
    f.destroy().unwrap();
}

#[test]
fn hand_edits_and_lost_shards_are_detected_on_open() {
    let Some(url) = common::single_url("hand_edits_and_lost_shards_are_detected_on_open") else {
        return;
    };
    let conn = || Connection::single(&url).unwrap();
    let mut raw = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let name = common::unique_name("damage");
    let f = RedisBloom::<Km>::create_or_open_sharded(conn(), &name, 1000, 0.01, 4096).unwrap();
    let config_key = bloomlab_redis::keys::config_key(&name);
    let bits = f.config().bits.to_string();

    let corrupt = |e: RedisFilterError| match e {
        RedisFilterError::Corrupt { key, reason, .. } => (key, reason),
        other => panic!("expected corrupt, got {other}"),
    };
    // A hand edit of the size (which would remap every key) fails the checksum.
    let _: () = redis::cmd("HSET")
        .arg(&config_key)
        .arg("bits")
        .arg(20_000)
        .query(&mut raw)
        .unwrap();
    let (key, reason) = corrupt(RedisBloom::<Km>::open(conn(), &name).unwrap_err());
    assert!(
        key == config_key && reason.contains("checksum"),
        "{key}: {reason}"
    );
    let (_, reason) = corrupt(
        RedisBloom::<Km>::create_or_open_sharded(conn(), &name, 1000, 0.01, 4096).unwrap_err(),
    );
    assert!(reason.contains("checksum"), "{reason}");
    let _: () = redis::cmd("HSET")
        .arg(&config_key)
        .arg("bits")
        .arg(&bits)
        .query(&mut raw)
        .unwrap();
    RedisBloom::<Km>::open(conn(), &name).unwrap();

    // A field removed is named.
    let hashes: String = redis::cmd("HGET")
        .arg(&config_key)
        .arg("hashes")
        .query(&mut raw)
        .unwrap();
    let _: () = redis::cmd("HDEL")
        .arg(&config_key)
        .arg("hashes")
        .query(&mut raw)
        .unwrap();
    let (_, reason) = corrupt(RedisBloom::<Km>::open(conn(), &name).unwrap_err());
    assert!(reason.contains("\"hashes\" is missing"), "{reason}");
    let _: () = redis::cmd("HSET")
        .arg(&config_key)
        .arg("hashes")
        .arg(&hashes)
        .query(&mut raw)
        .unwrap();

    // A shard deleted (or evicted, or lost in a restart) is named, not silently read as zeros.
    let shard = f.shard_key(1).to_owned();
    let _: () = redis::cmd("DEL").arg(&shard).query(&mut raw).unwrap();
    let (key, reason) = corrupt(RedisBloom::<Km>::open(conn(), &name).unwrap_err());
    assert!(
        key == shard && reason.contains("bits were lost"),
        "{key}: {reason}"
    );
    f.destroy().unwrap();
}

#[test]
fn racing_connections_lose_no_key() {
    let Some(url) = common::single_url("racing_connections_lose_no_key") else {
        return;
    };
    race::<Km>(&url);
    race::<Blocked512<Xxh3>>(&url);
}

/// Four connections create the same filter at once and insert overlapping key ranges (thread t:
/// keys 1000t .. 1000t + 2000 of 5000), one by one and in pipelines of different sizes.
fn race<F: BitPositions>(url: &str) {
    let name = common::unique_name("race");
    let (n, p, shard_bits) = (5000, 0.01, 8192);
    let all = common::keys("raced", n);
    std::thread::scope(|s| {
        for t in 0..4usize {
            let (all, name) = (&all, &name);
            s.spawn(move || {
                let conn = Connection::single(url).unwrap();
                let mut f =
                    RedisBloom::<F>::create_or_open_sharded(conn, name, n, p, shard_bits).unwrap();
                let mine = &all[1000 * t..(1000 * t + 2000).min(all.len())];
                let (single, piped) = mine.split_at(mine.len() / 2);
                for k in single {
                    f.insert(k).unwrap();
                }
                f.insert_batch(piped, 1 + 50 * t).unwrap();
            });
        }
    });
    let mut f = RedisBloom::<F>::open(Connection::single(url).unwrap(), &name).unwrap();
    let mut missing = Vec::new();
    f.contains_batch(&all, 1000, |i, hit| {
        if !hit {
            missing.push(i);
        }
    })
    .unwrap();
    let label = bloomlab_redis::redis_name::<F>();
    assert!(
        missing.is_empty(),
        "{label}: keys lost in the race: {missing:?}"
    );
    let mut twin = F::sized_for(n, p).unwrap();
    for k in &all {
        bloomlab_filters::FilterExt::insert(&mut twin, k);
    }
    assert_eq!(
        f.bytes().unwrap(),
        common::twin_bytes(&twin),
        "{label}: bytes after the race"
    );
    f.destroy().unwrap();
}

#[test]
fn round_trips_cost_falls_with_batch_size_and_answers_do_not_change() {
    let Some(conn) =
        common::single("round_trips_cost_falls_with_batch_size_and_answers_do_not_change")
    else {
        return;
    };
    let name = common::unique_name("round-trips");
    let mut f = RedisBloom::<Km>::create_or_open(conn, &name, 100_000, 0.01).unwrap();
    let members = common::keys("timed", 8192);
    f.insert_batch(&members, 4096).unwrap();
    let probes: Vec<String> = common::keys("timed", 16_384);
    let mut reference: Option<Vec<bool>> = None;
    let mut line = String::from("bloomlab-redis lookups, ns per key by keys per round trip:");
    for batch in [1, 16, 256, 4096] {
        let mut answers = Vec::with_capacity(probes.len());
        let start = Instant::now();
        f.contains_batch(&probes, batch, |_, hit| answers.push(hit))
            .unwrap();
        let ns = start.elapsed().as_nanos() / probes.len() as u128;
        line += &format!(" {batch}: {ns}");
        assert!(
            answers[..8192].iter().all(|&h| h),
            "batch {batch}: a member was not found"
        );
        match &reference {
            None => reference = Some(answers),
            Some(r) => assert_eq!(&answers, r, "batch {batch} answers differ from batch 1"),
        }
    }
    let _ = writeln!(std::io::stderr(), "{line}");
    f.destroy().unwrap();
}

#[test]
fn a_server_that_is_not_there_is_an_error_naming_its_url() {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    let url = "redis://127.0.0.1:1";
    let e = Connection::single(url).unwrap_err();
    assert!(
        matches!(&e, RedisFilterError::Connect { url: u, .. } if u == url),
        "{e}"
    );
    assert!(e.to_string().contains(url), "{e}");
    let e = Connection::single("http://127.0.0.1:1").unwrap_err();
    assert!(e.to_string().contains("http://127.0.0.1:1"), "{e}");
    let urls = ["redis://127.0.0.1:1", "redis://127.0.0.1:2"];
    let e = Connection::cluster(&urls).unwrap_err();
    assert!(
        e.to_string()
            .contains("redis://127.0.0.1:1,redis://127.0.0.1:2"),
        "{e}"
    );
}

#[test]
fn bad_names_and_sizes_are_refused_before_anything_is_written() {
    let Some(url) =
        common::single_url("bad_names_and_sizes_are_refused_before_anything_is_written")
    else {
        return;
    };
    let conn = || Connection::single(&url).unwrap();
    let e = RedisBloom::<Km>::create_or_open(conn(), "has{brace}", 1000, 0.01).unwrap_err();
    assert!(e.to_string().contains("filter name"), "{e}");
    let name = common::unique_name("bad-size");
    let e =
        RedisBloom::<Km>::create_or_open_sharded(conn(), &name, 1000, 0.01, 1 << 33).unwrap_err();
    assert!(e.to_string().contains("8589934592"), "{e}");
    let e = RedisBloom::<Km>::create_or_open(conn(), &name, 1000, 1.5).unwrap_err();
    assert!(matches!(e, RedisFilterError::Sizing(_)), "{e}");
    let e = RedisBloom::<Km>::open(conn(), &name).unwrap_err();
    assert!(
        matches!(e, RedisFilterError::NotFound { .. }),
        "nothing was written: {e}"
    );
    let mut f = RedisBloom::<Km>::create_or_open(conn(), &name, 1000, 0.01).unwrap();
    let e = f.insert_batch(&["a"], 0).unwrap_err();
    assert!(e.to_string().contains("keys per round trip"), "{e}");
    f.destroy().unwrap();
}
