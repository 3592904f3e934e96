//! The timed loops and the run configuration. One criterion iteration is one lookup (or insert) of
//! the next key of a pre-generated batch, so criterion's per-iteration estimate is ns per
//! operation and `Throughput::Elements(1)` gives operations per second.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};

/// How long and at which sizes to measure.
#[derive(Debug, Clone)]
pub struct Config {
    /// `"full"`, `"quick"` or `"test"` (criterion's test mode, under `cargo test --benches`).
    pub mode: &'static str,
    pub sizes: Vec<u64>,
    pub warm_up: Duration,
    pub measurement: Duration,
    pub sample_size: usize,
    /// Run the 0.1% rate and u64 keys for every bloomlab variant, not only the representative set.
    pub all_variants_everywhere: bool,
    /// Only structures whose label contains this text (or one of its `|`-separated parts) are
    /// built and measured.
    pub only: Option<String>,
}

fn env_secs(name: &str, default: f64) -> Duration {
    let secs = std::env::var(name)
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(default);
    Duration::from_secs_f64(secs)
}

impl Config {
    /// From the environment: `BLOOMLAB_BENCH_QUICK=1` measures 1M keys only with short times;
    /// `BLOOMLAB_BENCH_WARMUP_SECS` / `BLOOMLAB_BENCH_MEASURE_SECS` override the times;
    /// `BLOOMLAB_BENCH_ALL=1` runs every variant at 0.1% and on u64 keys too;
    /// `BLOOMLAB_BENCH_ONLY=text` restricts to labels containing `text` (or any
    /// of `a|b|c`);
    /// `BLOOMLAB_BENCH_SIZES=1000000,10000000` sets the key counts of a full run.
    /// Without `--bench` (i.e. `cargo test --benches`) every benchmark runs once on 10k keys.
    pub fn from_env() -> Self {
        let flag = |name: &str| std::env::var(name).is_ok_and(|v| v == "1" || v == "true");
        let bench = std::env::args().any(|a| a == "--bench");
        let test = !bench || std::env::args().any(|a| a == "--test");
        let only = std::env::var("BLOOMLAB_BENCH_ONLY")
            .ok()
            .filter(|s| !s.is_empty());
        let all_variants_everywhere = flag("BLOOMLAB_BENCH_ALL");
        if test {
            return Self {
                mode: "test",
                sizes: vec![10_000],
                warm_up: Duration::from_millis(10),
                measurement: Duration::from_millis(10),
                sample_size: 10,
                all_variants_everywhere,
                only,
            };
        }
        if flag("BLOOMLAB_BENCH_QUICK") {
            return Self {
                mode: "quick",
                sizes: vec![1_000_000],
                warm_up: env_secs("BLOOMLAB_BENCH_WARMUP_SECS", 0.1),
                measurement: env_secs("BLOOMLAB_BENCH_MEASURE_SECS", 0.3),
                sample_size: 10,
                all_variants_everywhere,
                only,
            };
        }
        let sizes = std::env::var("BLOOMLAB_BENCH_SIZES")
            .ok()
            .and_then(|v| {
                v.split(',')
                    .map(|x| x.trim().parse().ok())
                    .collect::<Option<Vec<u64>>>()
            })
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| vec![1_000_000, 10_000_000]);
        Self {
            mode: "full",
            sizes,
            warm_up: env_secs("BLOOMLAB_BENCH_WARMUP_SECS", 0.5),
            measurement: env_secs("BLOOMLAB_BENCH_MEASURE_SECS", 2.0),
            sample_size: 20,
            all_variants_everywhere,
            only,
        }
    }

    /// Whether the structure labelled `label` is selected.
    pub fn wants(&self, label: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|o| o.split('|').any(|part| label.contains(part)))
    }
}

/// Runs `op` on `iters` consecutive batch keys, wrapping around, starting at `*cursor`; returns
/// the elapsed time. Every key goes through `black_box`, and the results are summed and
/// black-boxed, so neither the key nor the work can be hoisted out of the loop.
#[inline]
fn run<K: Copy, R: Into<u64>>(
    iters: u64,
    batch: &[K],
    cursor: &mut usize,
    op: &mut impl FnMut(K) -> R,
) -> Duration {
    let mut i = *cursor;
    let mut acc = 0u64;
    let start = Instant::now();
    for _ in 0..iters {
        acc = acc.wrapping_add(op(black_box(batch[i])).into());
        i += 1;
        if i == batch.len() {
            i = 0;
        }
    }
    let elapsed = start.elapsed();
    black_box(acc);
    *cursor = i;
    elapsed
}

/// Which operation a group measures, named `<op>-<keys>` (e.g. `lookup-present-str`).
pub fn group_name(op: &str, keys: &str) -> String {
    format!("{op}-{keys}")
}

/// Benchmarks `op` over `batch` as `<group>/<label>/<n>`.
pub fn bench<K: Copy, R: Into<u64>>(
    c: &mut Criterion,
    cfg: &Config,
    group: &str,
    label: &str,
    n: u64,
    batch: &[K],
    mut op: impl FnMut(K) -> R,
) {
    let mut cursor = 0;
    measure(c, cfg, group, label, n, |iters| {
        run(iters, batch, &mut cursor, &mut op)
    });
}

/// One benchmark `<group>/<label>/<n>` with the run's times, one element per iteration, timed by
/// `time(iters)`.
fn measure(
    c: &mut Criterion,
    cfg: &Config,
    group: &str,
    label: &str,
    n: u64,
    mut time: impl FnMut(u64) -> Duration,
) {
    let mut g = c.benchmark_group(group);
    g.warm_up_time(cfg.warm_up)
        .measurement_time(cfg.measurement)
        .sample_size(cfg.sample_size)
        .throughput(Throughput::Elements(1));
    g.bench_function(BenchmarkId::new(label, n), |b| b.iter_custom(&mut time));
    g.finish();
}

/// Keys per call of a batched lookup in the timed loop (each call refills the lookahead pipeline
/// once, a cost spread over this many keys).
pub const CHUNK: usize = 1024;

/// Like [`run`], for an operation on a slice of keys that returns how many it found: `iters`
/// keys in calls of up to [`CHUNK`] consecutive batch keys, wrapping around.
#[inline]
fn run_chunks<K>(
    iters: u64,
    batch: &[K],
    cursor: &mut usize,
    op: &mut impl FnMut(&[K]) -> u64,
) -> Duration {
    let mut i = *cursor;
    let mut left = iters;
    let mut acc = 0u64;
    let start = Instant::now();
    while left > 0 {
        let len = (batch.len() - i)
            .min(CHUNK)
            .min(usize::try_from(left).unwrap_or(usize::MAX));
        acc = acc.wrapping_add(op(black_box(&batch[i..i + len])));
        i += len;
        left -= len as u64;
        if i == batch.len() {
            i = 0;
        }
    }
    let elapsed = start.elapsed();
    black_box(acc);
    *cursor = i;
    elapsed
}

/// Benchmarks a batched lookup `op` over `batch` as `<group>/<label>/<n>`; one criterion
/// iteration is still one key, so the estimate is ns per key, comparable with [`bench`]'s.
pub fn bench_chunks<K>(
    c: &mut Criterion,
    cfg: &Config,
    group: &str,
    label: &str,
    n: u64,
    batch: &[K],
    mut op: impl FnMut(&[K]) -> u64,
) {
    let mut cursor = 0;
    measure(c, cfg, group, label, n, |iters| {
        run_chunks(iters, batch, &mut cursor, &mut op)
    });
}

/// How many keys of `batch` `op` reports present.
pub fn count_hits<K: Copy>(batch: &[K], mut op: impl FnMut(K) -> bool) -> u64 {
    batch.iter().map(|&k| u64::from(op(k))).sum()
}
