//! `sweep --redis`: the rows of Redis-backed filters equal their in-memory twins' rows in every
//! statistical column, bit for bit, against a real server (`BLOOMLAB_REDIS_URL`; skipped with a
//! message when it is not set, a failure when `BLOOMLAB_REQUIRE_SERVICES=1`).

use std::io::Write;

use bloomlab_harness::{Grid, KeySetKind, Selection, Subject, SweepConfig, bloom::sweep};
use bloomlab_redis::sweep as redis_sweep;

/// The URL(s) in `var`; None (the test skipped, said on stderr) when unset, a failure when
/// BLOOMLAB_REQUIRE_SERVICES=1.
fn url(test: &str, var: &str, how: &str) -> Option<String> {
    let url = std::env::var(var).ok().filter(|u| !u.trim().is_empty());
    if url.is_none() {
        let how = format!("export {var}=$(scripts/redis-local.sh {how})");
        if std::env::var("BLOOMLAB_REQUIRE_SERVICES").is_ok_and(|v| v == "1") {
            panic!(
                "bloomlab-cli test {test} cannot run: {var} is not set, and BLOOMLAB_REQUIRE_SERVICES=1 makes a missing service a failure. Start it: {how}"
            );
        }
        // Straight to stderr: the harness captures eprintln! of passing tests.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED bloomlab-cli test {test}: {var} is not set. To run it: {how}"
        );
    }
    url
}

#[test]
fn redis_rows_equal_the_in_memory_twins_rows_bit_for_bit() {
    let test = "redis_rows_equal_the_in_memory_twins_rows_bit_for_bit";
    if let Some(url) = url(test, "BLOOMLAB_REDIS_URL", "start") {
        rows_equal_twins(&url);
    }
}

#[test]
fn redis_cluster_rows_equal_the_in_memory_twins_rows_bit_for_bit() {
    let test = "redis_cluster_rows_equal_the_in_memory_twins_rows_bit_for_bit";
    if let Some(urls) = url(test, "BLOOMLAB_REDIS_CLUSTER_URLS", "cluster") {
        assert!(urls.contains(','), "{urls}: a cluster's node URLs");
        rows_equal_twins(&urls);
    }
}

/// Runs one plan in memory and in Redis at `url` and compares every row.
fn rows_equal_twins(url: &str) {
    let redis_names = [
        "redis/classic/xxh3/km",
        "redis/classic/murmur3/mitz64",
        "redis/classic/fnv1a/edh",
        "redis/blocked512/xxh3",
    ];
    let subjects: Vec<Subject> = redis_names.iter().map(|r| r.parse().unwrap()).collect();
    let twins: Vec<String> = subjects
        .iter()
        .map(|s| s.variant().unwrap().to_string())
        .collect();
    assert_eq!(
        twins,
        [
            "classic/xxh3/km/flat",
            "classic/murmur3/mitz64/flat",
            "classic/fnv1a/edh/flat",
            "blocked512/xxh3"
        ]
    );
    let mut config = SweepConfig::with_grids(vec![Grid {
        filters: Selection::Only(subjects),
        key_sets: vec![KeySetKind::RandomU64, KeySetKind::Url],
        n: vec![20_000],
        p: vec![0.01, 0.001],
        overfill: vec![1.0],
    }]);
    config.sampling.precision = 0.25;
    config.timing = false;
    config.threads = 1;
    let plan = config.plan().unwrap();
    let in_memory = redis_sweep::twins(&config);
    let memory = sweep::run(&in_memory, &in_memory.plan().unwrap(), &|_| {}).unwrap();
    let in_redis = redis_sweep::run(&config, &plan, url, &|_| {}).unwrap();
    assert_eq!(memory.len(), in_redis.len());
    assert_eq!(memory.len(), 4 * 2 * 2);
    for (m, r) in memory.iter().zip(&in_redis) {
        assert_eq!(r.filter.variant(), m.filter.variant(), "row order");
        assert_eq!(
            r.filter.to_string(),
            format!("redis/{}", m.filter).replace("/flat", "")
        );
        assert!(r.queries > 0 && r.false_positives > 0, "{r:?}");
        // Everything but the name and the memory held (here the bits alone, on the server) is
        // the twin's: compared through Debug, which prints every f64 exactly (NaN included).
        assert_eq!(r.memory_bytes, r.bits / 8, "{r:?}");
        let same = redis_sweep::as_twin(r, m);
        assert_eq!(
            format!("{same:?}"),
            format!("{m:?}"),
            "{} vs {}",
            r.filter,
            m.filter
        );
    }
}

/// Issue 28, case 1: a killed sweep's filter left on a persistent server was opened by a later
/// sweep that reused the name (same pid) and measured as new: FPR 1.0, exit 0. Now a run creates
/// its filters fresh: a saturated filter planted under the name the run will use makes it stop
/// before measuring, with a refusal (the sweep's exit 2) naming the key.
#[test]
fn a_planted_filter_under_a_runs_name_is_refused_not_measured() {
    let test = "a_planted_filter_under_a_runs_name_is_refused_not_measured";
    let Some(url) = url(test, "BLOOMLAB_REDIS_URL", "start") else {
        return;
    };
    type Km = bloomlab_filters::Bloom<
        bloomlab_filters::Xxh3,
        bloomlab_filters::KirschMitzenmacher,
        bloomlab_filters::FlatBits,
    >;
    let mut config = SweepConfig::with_grids(vec![Grid {
        filters: Selection::Only(vec!["redis/classic/xxh3/km".parse().unwrap()]),
        key_sets: vec![KeySetKind::Url],
        n: vec![10_000],
        p: vec![0.01],
        overfill: vec![1.0],
    }]);
    config.timing = false;
    let plan = config.plan().unwrap();
    let run_id = bloomlab_redis::keys::run_id().unwrap();
    let name = redis_sweep::filter_name(&run_id, 0);
    // The leftover: the same filter, over-filled ten times (fill 1 - e^-7.3, above 99.9%).
    let conn = bloomlab_redis::Connection::single(&url).unwrap();
    let shard_bits = conn.default_shard_bits();
    let mut planted = bloomlab_redis::RedisBloom::<Km>::create_or_open_sharded(
        conn, &name, 10_000, 0.01, shard_bits,
    )
    .unwrap();
    let keys: Vec<String> = (0..100_000).map(|i| format!("saturating-{i}")).collect();
    planted.insert_batch(&keys, 4096).unwrap();
    assert!(planted.set_bits().unwrap() * 100 > planted.config().bits * 99);

    let e = redis_sweep::run_as(&config, &plan, &url, &run_id, &|_| {}).unwrap_err();
    assert!(redis_sweep::is_refusal(&e), "{e:#}");
    let e = anyhow::Error::from(e);
    let key = bloomlab_redis::keys::config_key(&name);
    assert!(format!("{e:#}").contains(&key), "{e:#}");
    // Left as found.
    assert!(planted.set_bits().unwrap() * 100 > planted.config().bits * 99);
    planted.destroy().unwrap();
}
