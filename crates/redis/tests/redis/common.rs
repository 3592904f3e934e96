//! What the Redis tests share: finding the servers they need (or saying, visibly, that they were
//! skipped), unique filter names, and the in-memory twin's bytes.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use bloomlab_filters::BitPositions;
use bloomlab_redis::Connection;

/// One server's URL.
pub const URL_VAR: &str = "BLOOMLAB_REDIS_URL";
/// Comma-separated URLs of a cluster's nodes.
pub const CLUSTER_VAR: &str = "BLOOMLAB_REDIS_CLUSTER_URLS";
/// Opt-in for the test that needs about 600 MB of server memory.
pub const BIG_VAR: &str = "BLOOMLAB_REDIS_BIG";
/// When set to 1 (CI), a missing service fails the test instead of skipping it.
pub const REQUIRE_VAR: &str = "BLOOMLAB_REQUIRE_SERVICES";

fn required() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1")
}

/// Reports a skipped test on the terminal, or fails it when services are required.
///
/// Written to the process's stderr directly rather than with `eprintln!`, which the test harness
/// captures and shows only for failing tests: a skip must be visible in a passing run.
pub fn skip(test: &str, why: &str, how: &str) {
    if required() {
        panic!(
            "bloomlab-redis test {test} cannot run: {why}, and {REQUIRE_VAR}=1 makes a missing service a failure. Start it: {how}"
        );
    }
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED bloomlab-redis test {test}: {why}. To run it: {how}"
    );
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The single server's URL, or `None` after reporting the skip.
pub fn single_url(test: &str) -> Option<String> {
    let url = var(URL_VAR);
    if url.is_none() {
        skip(
            test,
            &format!("{URL_VAR} is not set"),
            &format!("export {URL_VAR}=$(scripts/redis-local.sh start)"),
        );
    }
    url
}

/// A connection to the single server, or `None` after reporting the skip. A URL that is set
/// but unreachable fails the test.
pub fn single(test: &str) -> Option<Connection> {
    let url = single_url(test)?;
    Some(Connection::single(&url).unwrap_or_else(|e| panic!("{test}: {e}")))
}

/// The cluster's node URLs, or `None` after reporting the skip.
pub fn cluster_urls(test: &str) -> Option<Vec<String>> {
    let urls = var(CLUSTER_VAR);
    if urls.is_none() {
        skip(
            test,
            &format!("{CLUSTER_VAR} is not set"),
            &format!("export {CLUSTER_VAR}=$(scripts/redis-local.sh cluster)"),
        );
    }
    urls.map(|u| u.split(',').map(|s| s.trim().to_owned()).collect())
}

/// Whether the opt-in big test should run (reports the skip when not).
pub fn big_enabled(test: &str) -> bool {
    let on = var(BIG_VAR).is_some_and(|v| v == "1");
    if !on {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED bloomlab-redis test {test}: it needs about 600 MB of Redis memory and runs only with {BIG_VAR}=1 (and {URL_VAR} set)"
        );
    }
    on
}

/// A filter name no other test (or earlier run) uses: test name, process id, a counter and the
/// time.
pub fn unique_name(test: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "bloomlab-test:{test}:{}:{}:{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The in-memory filter's bit array as little-endian bytes of its words.
pub fn twin_bytes<F: BitPositions>(f: &F) -> Vec<u8> {
    (0..f.bits() / 64)
        .flat_map(|w| f.bit_word(w).to_le_bytes())
        .collect()
}

/// Seeded distinct keys: `count` strings of a `family` (members and non-members use different
/// families, so they never overlap).
pub fn keys(family: &str, count: u64) -> Vec<String> {
    (0..count).map(|i| format!("{family}-{i:08}")).collect()
}
