//! Redis's HyperLogLog through [`CardinalitySketch`] on one real server (`BLOOMLAB_REDIS_URL`):
//! pipelined PFADD batches count what single adds count, PFMERGE is the union, and the estimate
//! is a cardinality estimate. Its statistics are the sketch sweep's (`sweep --sketch hll --redis`).

use crate::common;

use bloomlab_redis::{Connection, RedisHll};
use bloomlab_sketches::CardinalitySketch;

fn hll(url: &str, test: &str) -> RedisHll {
    let conn = Connection::single(url).unwrap_or_else(|e| panic!("{test}: {e}"));
    RedisHll::new(conn, &common::unique_name(test))
}

#[test]
fn pfadd_batches_pfcount_and_pfmerge_is_the_union() {
    let test = "redis_hll_merge";
    let Some(url) = common::single_url(test) else {
        return;
    };
    let (mut a, mut b, mut union, mut one_by_one) = (
        hll(&url, test),
        hll(&url, test),
        hll(&url, test),
        hll(&url, test),
    );
    assert_eq!(a.name(), "redis/pfadd/p14");
    assert_eq!(a.precision(), 14);
    let left: Vec<u64> = (0..30_000u64).collect();
    let right: Vec<u64> = (20_000..60_000u64).collect();
    a.insert_batch(&left).unwrap();
    b.insert_batch(&right).unwrap();
    union.insert_batch(&left).unwrap();
    union.insert_batch(&right).unwrap();
    for k in left.iter().take(5000) {
        one_by_one.insert_batch(&[*k]).unwrap();
    }
    let mut batched = hll(&url, test);
    batched.insert_batch(&left[..5000]).unwrap();
    // The same registers, however the elements arrive: equal counts.
    assert_eq!(
        one_by_one.estimate().unwrap(),
        batched.estimate().unwrap(),
        "one PFADD per key vs pipelined batches"
    );
    let b_key = b.key().to_owned();
    a.merge_from(&[&b_key]).unwrap();
    let (merged, direct) = (a.estimate().unwrap(), union.estimate().unwrap());
    assert_eq!(
        merged, direct,
        "PFMERGE of two sketches vs one fed both streams"
    );
    // 60,000 distinct keys at p = 14 (standard error 0.81%): 10 standard errors is a gross-failure
    // check only; the statistics are the sweep's.
    assert!((direct / 60_000.0 - 1.0).abs() < 0.081, "PFCOUNT {direct}");
    assert!(union.memory_bytes().unwrap() > 0);
    for mut s in [a, b, union, one_by_one, batched] {
        s.delete().unwrap();
        assert_eq!(s.estimate().unwrap(), 0.0, "deleted key counts nothing");
    }
}

#[test]
fn a_sketch_with_an_expiry_carries_it_after_every_insert() {
    let test = "a_sketch_with_an_expiry_carries_it_after_every_insert";
    let Some(url) = common::single_url(test) else {
        return;
    };
    let mut h = hll(&url, test).with_expiry(std::time::Duration::from_secs(60));
    h.insert_batch(&(0..5000).collect::<Vec<u64>>()).unwrap();
    let mut raw = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let ttl: i64 = redis::cmd("PTTL").arg(h.key()).query(&mut raw).unwrap();
    assert!(ttl > 0 && ttl <= 60_000, "PTTL {ttl} ms");
    h.delete().unwrap();
}
