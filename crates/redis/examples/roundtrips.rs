//! What a round trip costs: inserts and lookups per second by keys per round trip (1, 16, 256,
//! 4096), with p50 and p99 latency per round trip, on one server, on a cluster, and in memory.
//!
//! ```sh
//! export BLOOMLAB_REDIS_URL=$(scripts/redis-local.sh start)
//! export BLOOMLAB_REDIS_CLUSTER_URLS=$(scripts/redis-local.sh cluster)   # optional
//! cargo run --release -p bloomlab-redis --example roundtrips > /tmp/roundtrips.md
//! scripts/redis-local.sh stop
//! ```
//!
//! Prints a Markdown table. The filter is `classic/xxh3/km` for 1M keys at 1% (on the cluster in
//! shards of 2^20 bits, so its keys spread over the nodes); 16,384 distinct keys are inserted and
//! then looked up (all present) at each batch size, into a fresh filter each time. Figures are
//! indicative: one client thread on a shared machine, server and client on the same host.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use bloomlab_filters::{Bloom, FlatBits, KirschMitzenmacher, Xxh3};
use bloomlab_redis::{Connection, RedisBloom, RedisFilterError};

type Km = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;

const N: u64 = 1_000_000;
const P: f64 = 0.01;
const KEYS: usize = 16_384;
const BATCHES: [usize; 4] = [1, 16, 256, 4096];

struct Line {
    target: String,
    op: &'static str,
    batch: String,
    per_second: f64,
    p50_us: f64,
    p99_us: f64,
}

/// Per-round-trip latencies (sorted) and the total time, for `KEYS` keys in rounds of `batch`.
fn timed(batch: usize, mut round: impl FnMut(std::ops::Range<usize>)) -> (Vec<Duration>, Duration) {
    let mut lat = Vec::with_capacity(KEYS / batch + 1);
    let start = Instant::now();
    let mut i = 0;
    while i < KEYS {
        let end = (i + batch).min(KEYS);
        let t = Instant::now();
        round(i..end);
        lat.push(t.elapsed());
        i = end;
    }
    let total = start.elapsed();
    lat.sort();
    (lat, total)
}

fn line(
    target: &str,
    op: &'static str,
    batch: String,
    (lat, total): (Vec<Duration>, Duration),
) -> Line {
    let pick = |q: f64| lat[((lat.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e6;
    Line {
        target: target.to_owned(),
        op,
        batch,
        per_second: KEYS as f64 / total.as_secs_f64(),
        p50_us: pick(0.5),
        p99_us: pick(0.99),
    }
}

fn measure(
    target: &str,
    connect: &dyn Fn() -> Result<Connection, RedisFilterError>,
    shard_bits: u64,
    keys: &[String],
    out: &mut Vec<Line>,
) -> Result<(), RedisFilterError> {
    for batch in BATCHES {
        let name = format!("bloomlab-roundtrips:{}:{batch}", std::process::id());
        let mut f = RedisBloom::<Km>::create_or_open_sharded(connect()?, &name, N, P, shard_bits)?;
        let mut err = None;
        let ins = timed(batch, |r| {
            if let Err(e) = f.insert_batch(&keys[r], batch) {
                err.get_or_insert(e);
            }
        });
        let mut missing = 0;
        let look = timed(batch, |r| {
            if let Err(e) = f.contains_batch(&keys[r], batch, |_, hit| missing += usize::from(!hit))
            {
                err.get_or_insert(e);
            }
        });
        f.destroy()?;
        if let Some(e) = err {
            return Err(e);
        }
        assert_eq!(missing, 0, "{target}: inserted keys not found");
        out.push(line(target, "insert", batch.to_string(), ins));
        out.push(line(target, "lookup", batch.to_string(), look));
    }
    Ok(())
}

fn main() -> ExitCode {
    let Ok(url) = std::env::var("BLOOMLAB_REDIS_URL") else {
        eprintln!(
            "BLOOMLAB_REDIS_URL is not set: export BLOOMLAB_REDIS_URL=$(scripts/redis-local.sh start)"
        );
        return ExitCode::from(2);
    };
    let keys: Vec<String> = (0..KEYS).map(|i| format!("roundtrip-key-{i:08}")).collect();
    let mut out = Vec::new();

    // In memory there is no round trip: one timed pass over all keys (p50 = p99 = that pass).
    let mut mem = Km::new(N, P).expect("sizing of a constant filter");
    let ins = timed(KEYS, |r| keys[r].iter().for_each(|k| mem.insert(k)));
    let look = timed(KEYS, |r| {
        keys[r]
            .iter()
            .for_each(|k| assert!(std::hint::black_box(mem.contains(k))));
    });
    out.push(line(
        "in memory",
        "insert",
        "all (no round trip)".into(),
        ins,
    ));
    out.push(line(
        "in memory",
        "lookup",
        "all (no round trip)".into(),
        look,
    ));

    let single = || Connection::single(&url);
    if let Err(e) = measure(
        "one server",
        &single,
        bloomlab_redis::config::DEFAULT_SHARD_BITS,
        &keys,
        &mut out,
    ) {
        eprintln!("{e}");
        return ExitCode::FAILURE;
    }
    if let Ok(urls) = std::env::var("BLOOMLAB_REDIS_CLUSTER_URLS") {
        let urls: Vec<String> = urls.split(',').map(str::to_owned).collect();
        let cluster = || Connection::cluster(&urls);
        if let Err(e) = measure("3-master cluster", &cluster, 1 << 20, &keys, &mut out) {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    } else {
        eprintln!("BLOOMLAB_REDIS_CLUSTER_URLS is not set: no cluster rows");
    }

    println!(
        "| target | operation | keys per round trip | keys per second | p50 per round trip (us) | p99 per round trip (us) |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: |");
    for l in &out {
        println!(
            "| {} | {} | {} | {:.0} | {:.1} | {:.1} |",
            l.target, l.op, l.batch, l.per_second, l.p50_us, l.p99_us
        );
    }
    ExitCode::SUCCESS
}
