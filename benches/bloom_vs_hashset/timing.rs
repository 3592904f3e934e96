//! The timed loops and the run configuration. One criterion iteration is one lookup (or insert) of
//! the next key of a pre-generated batch, so criterion's per-iteration estimate is ns per
//! operation and `Throughput::Elements(1)` gives operations per second.
//!
//! This bench owns the authoritative timing (criterion, plus the paired rounds against std
//! `HashSet` on the same batch, every structure called as its concrete type). The sweep's
//! `bloomlab_harness::bloom::timing` is a separate, indicative figure per CSV row that needs no criterion;
//! what the two share is the keys (`bloomlab_harness::keys`, see [`crate::keys`]).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bloomlab_harness::schema::bench::{Group, Mode};
use criterion::{BenchmarkId, Criterion, Throughput};

/// How long and at which sizes to measure.
#[derive(Debug, Clone)]
pub struct Config {
    /// Full, quick, or test (criterion's test mode, under `cargo test --benches`).
    pub mode: Mode,
    pub sizes: Vec<u64>,
    pub warm_up: Duration,
    pub measurement: Duration,
    pub sample_size: usize,
    /// Rounds of the paired comparison with the reference after each lookup benchmark (0: none).
    pub paired_rounds: usize,
    /// Time of each timed part of a paired round (the structure's, then the reference's, or the
    /// other way round).
    pub paired_part: Duration,
    /// Run the 0.1% rate and u64 keys for every bloomlab variant, not only the representative set.
    pub all_variants_everywhere: bool,
    /// Only structures whose label contains this text (or one of its `|`-separated parts) are
    /// built and measured.
    pub only: Option<String>,
    /// Key counts of the regime series (u64 keys), from a filter in a core's L2 to DRAM.
    pub regime_sizes: Vec<u64>,
    /// Criterion's warm-up and measurement times and sample count for a structure that is not a
    /// headline one ([`headline`]): short, because there are some 80 variants. A headline
    /// structure gets `warm_up`, `measurement` and `sample_size` in every series, so that its
    /// figure does not depend on which series measured it. With `BLOOMLAB_BENCH_ALL=1` every
    /// structure gets the full times.
    pub short_times: (Duration, Duration, usize),
}

/// Whether `label` (`<structure>[ p=<rate>%]`, or a hashing label) is measured with the full
/// criterion times: the flagships ([`bloomlab_harness::schema::bench::flagships`]) and Guava's
/// layout at 1%, std and foldhash `HashSet`s, fastbloom, xorf, and the hashes alone (the floor's
/// parts). Everything else gets [`Config::short_times`] by default.
pub fn headline(label: &str) -> bool {
    const GUAVA: &str = "classic/murmur3/mitz64/flat";
    const PEERS: [&str; 3] = ["fastbloom", "xorf", "bloomfilter"];
    const HASHES: [&str; 5] = [
        "key fetch",
        "digest xxh3",
        "digest murmur3",
        "foldhash",
        "SipHash-1-3",
    ];
    let (structure, rate) = match label.split_once(" p=") {
        Some((s, r)) => (s, Some(r)),
        None => (label, None),
    };
    if structure.contains("HashSet") || HASHES.contains(&structure) {
        return true;
    }
    if PEERS.iter().any(|p| structure.starts_with(p)) {
        return rate.is_none_or(|r| r == "1%");
    }
    let flagship =
        bloomlab_harness::schema::bench::flagships().contains(&structure) || structure == GUAVA;
    flagship && rate == Some("1%")
}

fn env_secs(name: &str, default: f64) -> Duration {
    let secs = std::env::var(name)
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(default);
    Duration::from_secs_f64(secs)
}

/// A comma-separated list of key counts (`None` if unset, empty or not all integers).
fn env_sizes(name: &str) -> Option<Vec<u64>> {
    std::env::var(name)
        .ok()
        .and_then(|v| {
            v.split(',')
                .map(|x| x.trim().parse().ok())
                .collect::<Option<Vec<u64>>>()
        })
        .filter(|v| !v.is_empty())
}

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

impl Config {
    /// From the environment: `BLOOMLAB_BENCH_QUICK=1` measures 1M keys only with short times;
    /// `BLOOMLAB_BENCH_WARMUP_SECS` / `BLOOMLAB_BENCH_MEASURE_SECS` override the times;
    /// `BLOOMLAB_BENCH_ALL=1` runs every variant at 0.1% and on u64 keys too;
    /// `BLOOMLAB_BENCH_ONLY=text` restricts to labels containing `text` (or any
    /// of `a|b|c`);
    /// `BLOOMLAB_BENCH_SIZES=1000000,10000000` sets the key counts of a full run;
    /// `BLOOMLAB_BENCH_PAIRED_ROUNDS` the rounds of each paired comparison (0 turns it off);
    /// `BLOOMLAB_BENCH_REGIME_SIZES` the key counts of the regime series (default 1e5, 1e6, 1e7,
    /// 1e8; quick: 1e5, 1e6); `BLOOMLAB_BENCH_SHORT_WARMUP_SECS` /
    /// `BLOOMLAB_BENCH_SHORT_MEASURE_SECS` the times of the structures that are not
    /// [`headline`] ones (default 0.1 s and 0.3 s; the headline ones get 0.3 s and 1 s).
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
                mode: Mode::Test,
                sizes: vec![10_000],
                warm_up: Duration::from_millis(10),
                measurement: Duration::from_millis(10),
                sample_size: 10,
                paired_rounds: 3,
                paired_part: Duration::from_millis(1),
                all_variants_everywhere,
                only,
                regime_sizes: vec![10_000],
                short_times: (Duration::from_millis(10), Duration::from_millis(10), 10),
            };
        }
        let short_times = |warm: f64, measure: f64| {
            (
                env_secs("BLOOMLAB_BENCH_SHORT_WARMUP_SECS", warm),
                env_secs("BLOOMLAB_BENCH_SHORT_MEASURE_SECS", measure),
                10,
            )
        };
        if flag("BLOOMLAB_BENCH_QUICK") {
            return Self {
                mode: Mode::Quick,
                sizes: vec![1_000_000],
                warm_up: env_secs("BLOOMLAB_BENCH_WARMUP_SECS", 0.1),
                measurement: env_secs("BLOOMLAB_BENCH_MEASURE_SECS", 0.3),
                sample_size: 10,
                paired_rounds: env_count("BLOOMLAB_BENCH_PAIRED_ROUNDS", 5),
                paired_part: Duration::from_millis(5),
                all_variants_everywhere,
                only,
                regime_sizes: env_sizes("BLOOMLAB_BENCH_REGIME_SIZES")
                    .unwrap_or_else(|| vec![100_000, 1_000_000]),
                short_times: short_times(0.05, 0.15),
            };
        }
        let sizes =
            env_sizes("BLOOMLAB_BENCH_SIZES").unwrap_or_else(|| vec![1_000_000, 10_000_000]);
        Self {
            mode: Mode::Full,
            sizes,
            warm_up: env_secs("BLOOMLAB_BENCH_WARMUP_SECS", 0.3),
            measurement: env_secs("BLOOMLAB_BENCH_MEASURE_SECS", 1.0),
            sample_size: 20,
            paired_rounds: env_count("BLOOMLAB_BENCH_PAIRED_ROUNDS", 5),
            paired_part: Duration::from_millis(10),
            all_variants_everywhere,
            only,
            regime_sizes: env_sizes("BLOOMLAB_BENCH_REGIME_SIZES")
                .unwrap_or_else(|| vec![100_000, 1_000_000, 10_000_000, 100_000_000]),
            short_times: short_times(0.1, 0.3),
        }
    }

    /// Criterion's (warm-up, measurement, samples) for the structure labelled `label`: the full
    /// times for a [`headline`] structure (or every structure with `BLOOMLAB_BENCH_ALL=1`), else
    /// [`Config::short_times`]. The same in every series, so a structure's figure never depends
    /// on which series measured it.
    pub fn times(&self, label: &str) -> (Duration, Duration, usize) {
        if self.all_variants_everywhere || headline(label) {
            (self.warm_up, self.measurement, self.sample_size)
        } else {
            self.short_times
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

/// One benchmark `<group>/<label>/<n>` with the run's times, one element per iteration, timed by
/// `time(iters)` (a [`timer`] or [`chunk_timer`]). The group's directory name is
/// [`Group::name`], which `bench-table` reads back.
pub fn bench(
    c: &mut Criterion,
    cfg: &Config,
    group: Group,
    label: &str,
    n: u64,
    mut time: impl FnMut(u64) -> Duration,
) {
    let (warm_up, measurement, sample_size) = cfg.times(label);
    let mut g = c.benchmark_group(group.name());
    g.warm_up_time(warm_up)
        .measurement_time(measurement)
        .sample_size(sample_size)
        .throughput(Throughput::Elements(1));
    g.bench_function(BenchmarkId::new(label, n), |b| b.iter_custom(&mut time));
    g.finish();
    BENCHMARKS_RUN.fetch_add(1, Ordering::Relaxed);
}

/// Benchmarks run so far in this process (for the progress lines).
static BENCHMARKS_RUN: AtomicU64 = AtomicU64::new(0);

/// The run's progress: one line on stderr as each step (one series at one n) starts, with the
/// steps done, the elapsed time, and the time left estimated from the elapsed time per step done
/// so far (the steps differ in length, so the estimate firms up as the run goes).
pub struct Progress {
    start: Instant,
    steps: usize,
    done: usize,
}

impl Progress {
    /// A run of `steps` steps, starting now.
    pub fn new(steps: usize) -> Self {
        Self {
            start: Instant::now(),
            steps,
            done: 0,
        }
    }

    /// The closing line: total elapsed time and benchmarks run.
    pub fn finish(&self) {
        eprintln!(
            "bloom_vs_hashset progress: done, {} steps, {} benchmarks in {:.0} s",
            self.steps,
            BENCHMARKS_RUN.load(Ordering::Relaxed),
            self.start.elapsed().as_secs_f64()
        );
    }

    /// Announces the next step, `name` (e.g. `strings n=1000000`).
    pub fn step(&mut self, name: &str) {
        self.done += 1;
        let elapsed = self.start.elapsed().as_secs_f64();
        let eta = if self.done > 1 {
            format!(
                "{:.0} s",
                elapsed / (self.done - 1) as f64 * (self.steps + 1 - self.done) as f64
            )
        } else {
            "-".to_owned()
        };
        eprintln!(
            "bloom_vs_hashset progress: {name} ({}/{}), elapsed {elapsed:.0} s, {} benchmarks \
             done, ETA {eta}",
            self.done,
            self.steps,
            BENCHMARKS_RUN.load(Ordering::Relaxed)
        );
    }
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

/// How many keys of `batch` `op` reports present.
pub fn count_hits<K: Copy>(batch: &[K], mut op: impl FnMut(K) -> bool) -> u64 {
    batch.iter().map(|&k| u64::from(op(k))).sum()
}

/// Times `op` on `keys` consecutive batch keys, wrapping around: [`run`] as a closure that keeps
/// its own place in `batch`.
pub fn timer<K: Copy, R: Into<u64>>(
    batch: &[K],
    mut op: impl FnMut(K) -> R,
) -> impl FnMut(u64) -> Duration {
    let mut cursor = 0;
    move |keys| run(keys, batch, &mut cursor, &mut op)
}

/// Like [`timer`], for a batched `op` ([`run_chunks`]).
pub fn chunk_timer<K>(batch: &[K], mut op: impl FnMut(&[K]) -> u64) -> impl FnMut(u64) -> Duration {
    let mut cursor = 0;
    move |keys| run_chunks(keys, batch, &mut cursor, &mut op)
}

/// Keys that take about `part` to time with `time`, estimated from one short calibration run.
fn keys_for(part: Duration, time: &mut impl FnMut(u64) -> Duration) -> u64 {
    const PROBE: u64 = 4096;
    time(PROBE);
    let per_key = time(PROBE).as_secs_f64() / PROBE as f64;
    let keys = part.as_secs_f64() / per_key.max(1e-10);
    (keys as u64).clamp(PROBE, 1 << 26)
}

/// One timed part of a paired round: an untimed pass over `keys` keys (which brings the part's own
/// data back into the caches the other part used), then `keys` keys timed; ns per key.
fn part(time: &mut impl FnMut(u64) -> Duration, keys: u64) -> f64 {
    time(keys);
    time(keys).as_secs_f64() * 1e9 / keys as f64
}

/// The paired comparison: `cfg.paired_rounds` rounds, each timing about `cfg.paired_part` of
/// `structure` and of `reference` back to back, their order alternating from round to round, each
/// part preceded by an equally long untimed pass (see [`part`]). Returns ns per key per round:
/// (reference, structure). Both parts of a round run within tens of milliseconds of each other, so
/// a window in which other tenants of a shared machine slow memory down reaches both, which it
/// does not for two criterion benchmarks taken minutes apart; and the spread over rounds shows how
/// steady the structure's time was.
///
/// `structure` and `reference` are generic, never `dyn`: called through a `dyn FnMut`, the
/// `HashSet<String>` loop measured twice as slow as criterion's for the same closure.
pub fn paired(
    cfg: &Config,
    mut reference: impl FnMut(u64) -> Duration,
    mut structure: impl FnMut(u64) -> Duration,
) -> (Vec<f64>, Vec<f64>) {
    let rounds = cfg.paired_rounds;
    if rounds == 0 {
        return (Vec::new(), Vec::new());
    }
    let ref_keys = keys_for(cfg.paired_part, &mut reference);
    let keys = keys_for(cfg.paired_part, &mut structure);
    let (mut ref_ns, mut ns) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for round in 0..rounds {
        if round % 2 == 0 {
            ref_ns.push(part(&mut reference, ref_keys));
            ns.push(part(&mut structure, keys));
        } else {
            ns.push(part(&mut structure, keys));
            ref_ns.push(part(&mut reference, ref_keys));
        }
    }
    (ref_ns, ns)
}

/// Which operation a [`Cycle`] times; the other one runs untimed, to keep the structure's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timed {
    /// One iteration removes one member key.
    Remove,
    /// One iteration inserts one key that is not a member (removed, untimed, a window earlier).
    Insert,
}

/// Keys out of the structure at any moment of a [`Cycle`], at most (half the cycle's keys if that
/// is fewer). An untimed operation reaches a key this many keys before or after the timed one, so
/// it has touched some `WINDOW x k` other cache lines in between (about 29 MB for k = 7), more than
/// a core's private caches hold: the untimed work cannot warm the lines the timed work then finds.
/// The price is that the structure holds n - `WINDOW` keys while it is timed (93% of 1M keys).
pub const WINDOW: usize = 1 << 16;

/// Remove and insert timed on a structure that must end where it started: a cycle over `keys`,
/// distinct members of the structure in random order, with a window of `w` consecutive keys (of
/// the cycle's order, wrapping around) out of the structure at any moment.
///
/// - Timing removes, the window trails the cursor: each step removes (timed) the next keys, then
///   re-inserts (untimed) as many of the window's oldest, so every key removed is a member and the
///   window moves on.
/// - Timing inserts, the window leads: each step inserts (timed) the next keys, which are the
///   window's oldest (removed untimed `w` keys earlier), then removes (untimed) as many keys just
///   ahead of the window.
///
/// Either way one iteration is one operation on one key, never repeated on a key before it was
/// undone, and [`Cycle::finish`] re-inserts the window, so a counting filter ends with the
/// counters it started with (a decrement and an increment of a counter below its maximum cancel,
/// and a saturated counter is touched by neither) and a `HashSet` with the same keys.
///
/// The operations are passed to every call rather than stored, because both mutate the one
/// `state`; they return whether they did their work (a remove found the key, an insert added
/// it), and [`Cycle::finish`] returns how many did not, which the bench requires to be none.
pub struct Cycle<'k, K> {
    keys: &'k [K],
    window: usize,
    /// The next key the timed operation takes.
    cursor: usize,
    timed: Timed,
    failures: u64,
}

impl<'k, K: Copy> Cycle<'k, K> {
    /// Starts a cycle timing `timed` over `keys` (at least two distinct members of `state`):
    /// removes the first window, untimed.
    pub fn start<S: ?Sized>(
        keys: &'k [K],
        timed: Timed,
        state: &mut S,
        remove: &mut impl FnMut(&mut S, K) -> bool,
    ) -> Self {
        assert!(keys.len() >= 2, "a cycle needs at least two keys");
        let window = WINDOW.min(keys.len() / 2);
        let mut cycle = Self {
            keys,
            window,
            cursor: 0,
            timed,
            failures: 0,
        };
        // The window trails the cursor (the cycle's last keys) when removes are timed, and leads it
        // (its first keys) when inserts are.
        let first = match timed {
            Timed::Remove => keys.len() - window,
            Timed::Insert => 0,
        };
        for &k in &keys[first..first + window] {
            cycle.failures += u64::from(!remove(state, k));
        }
        cycle
    }

    /// Times `iters` timed operations (see the type's docs), returning their time alone.
    pub fn time<S: ?Sized>(
        &mut self,
        iters: u64,
        state: &mut S,
        remove: &mut impl FnMut(&mut S, K) -> bool,
        insert: &mut impl FnMut(&mut S, K) -> bool,
    ) -> Duration {
        let (keys, w) = (self.keys, self.window);
        let mut left = iters;
        let mut total = Duration::ZERO;
        while left > 0 {
            let c = self.cursor;
            let len = (keys.len() - c)
                .min(w)
                .min(usize::try_from(left).unwrap_or(usize::MAX));
            let chunk = &keys[c..c + len];
            // One match per chunk, outside the timed loops.
            let (done, elapsed, back) = match self.timed {
                Timed::Remove => {
                    let (done, elapsed) = timed_pass(chunk, state, remove);
                    (done, elapsed, keys.len() - w)
                }
                Timed::Insert => {
                    let (done, elapsed) = timed_pass(chunk, state, insert);
                    (done, elapsed, w)
                }
            };
            total += elapsed;
            self.failures += len as u64 - done;
            // Untimed: move the window on by `len` keys (wrapping around the cycle).
            for j in 0..len {
                let k = keys[(c + back + j) % keys.len()];
                let ok = match self.timed {
                    Timed::Remove => insert(state, k),
                    Timed::Insert => remove(state, k),
                };
                self.failures += u64::from(!ok);
            }
            self.cursor = (c + len) % keys.len();
            left -= len as u64;
        }
        total
    }

    /// Re-inserts the window, so the structure holds every key again; returns the operations that
    /// failed over the whole cycle (0 unless a key was not a member when the cycle started).
    pub fn finish<S: ?Sized>(
        self,
        state: &mut S,
        insert: &mut impl FnMut(&mut S, K) -> bool,
    ) -> u64 {
        let n = self.keys.len();
        let first = match self.timed {
            Timed::Remove => self.cursor + n - self.window,
            Timed::Insert => self.cursor,
        };
        let mut failures = self.failures;
        for j in 0..self.window {
            failures += u64::from(!insert(state, self.keys[(first + j) % n]));
        }
        failures
    }
}

/// `op` on each key of `chunk` through `black_box`, timed: (how many returned true, time).
#[inline]
fn timed_pass<K: Copy, S: ?Sized>(
    chunk: &[K],
    state: &mut S,
    op: &mut impl FnMut(&mut S, K) -> bool,
) -> (u64, Duration) {
    let mut done = 0u64;
    let start = Instant::now();
    for &k in chunk {
        done += u64::from(op(state, black_box(k)));
    }
    let elapsed = start.elapsed();
    (black_box(done), elapsed)
}
