//! Fresh filters for measuring runs (issue 28, case 1): a planted filter under the name is refused
//! (never opened and measured), every key carries an expiry that use re-arms, a key that expired
//! is an error; and cluster URLs given for a plain server say so (case 13).

use crate::common;

use std::time::Duration;

use bloomlab_filters::{Bloom, FlatBits, KirschMitzenmacher, Xxh3};
use bloomlab_redis::keys::{config_key, shard_key};
use bloomlab_redis::{Connection, RedisBloom, RedisFilterError};

type Km = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;

fn raw(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

/// Milliseconds to expiry of `key`: -2 absent, -1 no expiry.
fn pttl(con: &mut redis::Connection, key: &str) -> i64 {
    redis::cmd("PTTL").arg(key).query(con).unwrap()
}

fn exists(con: &mut redis::Connection, key: &str) -> bool {
    redis::cmd("EXISTS").arg(key).query::<i64>(con).unwrap() == 1
}

#[test]
fn a_fresh_filter_refuses_a_planted_saturated_filter_naming_the_key() {
    let test = "a_fresh_filter_refuses_a_planted_saturated_filter_naming_the_key";
    let Some(url) = common::single_url(test) else {
        return;
    };
    let mut con = raw(&url);
    let (n, p, shard_bits) = (10_000, 0.01, 1 << 16);

    // A killed run's filter, saturated: every bit set. Opening it would answer "yes" to every
    // query (the FPR 1.0 of issue 28).
    let name = common::unique_name("planted");
    let mut planted = RedisBloom::<Km>::create_or_open_sharded(
        Connection::single(&url).unwrap(),
        &name,
        n,
        p,
        shard_bits,
    )
    .unwrap();
    for i in 0..planted.config().shards {
        let bytes = planted.config().shard_bytes(i) as usize;
        let key = planted.shard_key(i).to_owned();
        let () = redis::cmd("SET")
            .arg(&key)
            .arg(vec![0xffu8; bytes])
            .query(&mut con)
            .unwrap();
    }
    assert!(
        planted.contains("never inserted").unwrap(),
        "the plant is saturated"
    );
    let e = RedisBloom::<Km>::create_new(
        Connection::single(&url).unwrap(),
        &name,
        n,
        p,
        shard_bits,
        Some(Duration::from_secs(60)),
    )
    .unwrap_err();
    let key = config_key(&name);
    assert!(
        matches!(&e, RedisFilterError::Exists { key: k, .. } if *k == key)
            && e.to_string().contains(&key),
        "{e}"
    );
    // Untouched: still there, still without expiry (it is not this run's to change).
    assert_eq!(pttl(&mut con, &key), -1);
    planted.destroy().unwrap();

    // Only a shard left behind (its config deleted or expired first): refused too, naming the
    // shard, and the config this attempt wrote is removed again.
    let name = common::unique_name("planted-shard");
    let shard = shard_key(&name, 0);
    let () = redis::cmd("SET")
        .arg(&shard)
        .arg(vec![0xffu8; 8])
        .query(&mut con)
        .unwrap();
    let e = RedisBloom::<Km>::create_new(
        Connection::single(&url).unwrap(),
        &name,
        n,
        p,
        shard_bits,
        Some(Duration::from_secs(60)),
    )
    .unwrap_err();
    assert!(
        matches!(&e, RedisFilterError::Exists { key: k, .. } if *k == shard),
        "{e}"
    );
    assert!(
        !exists(&mut con, &config_key(&name)),
        "the attempt's config was left behind"
    );
    assert!(exists(&mut con, &shard), "the planted shard was deleted");
    let _: i64 = redis::cmd("DEL").arg(&shard).query(&mut con).unwrap();
}

#[test]
fn every_key_of_a_fresh_filter_expires_and_use_re_arms_it() {
    let test = "every_key_of_a_fresh_filter_expires_and_use_re_arms_it";
    let Some(url) = common::single_url(test) else {
        return;
    };
    let mut con = raw(&url);
    let name = common::unique_name("expiring");
    let ttl = Duration::from_secs(60);
    // Shards of 2^16 bits: a filter of about 96,000 bits has 2.
    let mut f = RedisBloom::<Km>::create_new(
        Connection::single(&url).unwrap(),
        &name,
        10_000,
        0.01,
        1 << 16,
        Some(ttl),
    )
    .unwrap();
    assert!(f.config().shards >= 2, "{:?}", f.config());
    let keys: Vec<String> = f.keys().map(str::to_owned).collect();
    assert_eq!(keys.len() as u64, f.config().shards + 1);
    for k in &keys {
        let left = pttl(&mut con, k);
        assert!(
            left > 0 && left <= 60_000,
            "{k}: PTTL {left} ms, expected (0, 60000]"
        );
    }
    f.insert("member").unwrap();
    assert!(f.contains("member").unwrap());
    f.destroy().unwrap();
    for k in &keys {
        assert!(!exists(&mut con, k), "{k} left after destroy");
    }

    // Re-armed by use once a quarter of the expiry has passed: 2 s, then 1 s idle, then an
    // insert; the keys' time left is back near 2 s (above the 1 s it would have otherwise).
    let name = common::unique_name("re-armed");
    let short = Duration::from_secs(2);
    let mut f = RedisBloom::<Km>::create_new(
        Connection::single(&url).unwrap(),
        &name,
        1000,
        0.01,
        1 << 16,
        Some(short),
    )
    .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    f.insert("kept").unwrap();
    let keys: Vec<String> = f.keys().map(str::to_owned).collect();
    for k in &keys {
        let left = pttl(&mut con, k);
        assert!(left > 1500, "{k}: PTTL {left} ms after use: not re-armed");
    }
    // Idle past the expiry: the keys are gone, and the next use is an error naming the key,
    // never an insert into a silently re-created empty shard.
    std::thread::sleep(Duration::from_millis(2500));
    let e = f.insert("late").unwrap_err();
    assert!(matches!(&e, RedisFilterError::Expired { .. }), "{e}");
    for k in &keys {
        assert!(!exists(&mut con, k), "{k} re-created after expiring");
    }
}

#[test]
fn cluster_urls_for_a_plain_server_say_it_is_not_a_cluster_node() {
    let test = "cluster_urls_for_a_plain_server_say_it_is_not_a_cluster_node";
    let Some(url) = common::single_url(test) else {
        return;
    };
    let addr = url
        .trim_start_matches("redis://")
        .trim_end_matches('/')
        .to_owned();
    let urls = format!("{url},{url}");
    let e = Connection::open(&urls).and_then(|c| {
        RedisBloom::<Km>::create_new(c, &common::unique_name("nc"), 1000, 0.01, 1 << 16, None)
            .map(drop)
    });
    let msg = e.unwrap_err().to_string();
    assert!(
        msg.contains(&format!(
            "{addr} is not a cluster node (cluster mode disabled)"
        )) && msg.contains("single-server URL"),
        "{msg}"
    );
}
