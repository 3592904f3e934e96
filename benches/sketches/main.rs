//! `cargo bench --bench sketches`: what the sketches of `bloomlab-sketches` cost against the exact
//! answer a Rust user would otherwise compute, on `bloom_vs_hashset`'s keys (the strings
//! `"article-content-hash-" + i` and random distinct u64s), at 1M and 10M keys:
//! - distinct count: our HyperLogLog (xxh3) at precisions 10, 14 and 18 and the crates.io
//!   `hyperloglogplus` (HyperLogLog++, fed the same xxh3 hash) at 14, against std `HashSet`
//!   (SipHash) and its length;
//! - frequency count: Count-Min at epsilon = 0.001, delta = 0.01 (2719 x 5 counters), plain and
//!   with conservative update, against std `HashMap` of counters.
//!
//! Timed per structure (criterion, one operation per iteration, so the median is ns per
//! operation): *insert* (one key of a batch of inserted keys drawn at random: a sketch's insert,
//! Count-Min's add 1, the `HashSet`'s insert-if-absent, the `HashMap`'s increment), *estimate*
//! (one distinct-count answer: HyperLogLog's estimate over all its registers, the `HashSet`'s
//! length) and *query* (one frequency point query of a present key). Memory is measured, not
//! estimated: the counting allocator's live heap bytes after one build from empty (a `HashSet`'s
//! table plus every `String`), as in `bloom_vs_hashset`.
//!
//! Criterion writes `target/criterion/sketch-<op>-<keys>/<structure>/<n>/`; this binary writes its
//! records to `target/criterion/sketches-memory.json`
//! ([`bloomlab_harness::sketch::bench::SketchLog`]); `cargo run --release --bin bench-table` then
//! renders `reports/sketches_bench.md`. A full run takes a few minutes on 2 cores.
//! `BLOOMLAB_BENCH_QUICK=1` measures 1M keys briefly; `BLOOMLAB_BENCH_SIZES` sets the key counts;
//! `BLOOMLAB_BENCH_MEASURE_SECS` / `BLOOMLAB_BENCH_WARMUP_SECS` criterion's times;
//! `BLOOMLAB_BENCH_HTML=1` criterion's HTML report too (`target/criterion/report/index.html`).
//! `cargo test --benches` runs every benchmark once on 10k keys and writes no log.
//!
//! Every structure is called as its concrete type through generic closures (no `dyn` call in a
//! timed loop), compiled with the workspace's release profile for the building CPU.

#[path = "../common.rs"]
mod common;
mod keys;

use std::borrow::Borrow;
use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bloomlab_filters::{HashStrategy, Key, Xxh3};
use bloomlab_harness::memory::CountingAlloc;
use bloomlab_harness::schema::bench::criterion_dir;
use bloomlab_harness::sketch::bench::{
    KeyKind, LOG_FILE, Mode, Question, SketchGroup, SketchLog, SketchOp, SketchRecord,
};
use bloomlab_sketches::cardinality::StrategyHasher;
use bloomlab_sketches::{CountMin, HyperLogLog};
use criterion::{BenchmarkId, Criterion, Throughput};
use hyperloglogplus::{HyperLogLog as _, HyperLogLogPlus};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// The Count-Min contract of issue 17 (2719 x 5 counters).
const EPSILON: f64 = 0.001;
const DELTA: f64 = 0.01;
/// HyperLogLog precisions timed: 14 is the contract's (16,384 registers, 0.81%); 10 and 18 bracket
/// it (the estimate's cost grows with 2^p, the insert's hardly).
const PRECISIONS: [u32; 3] = [10, 14, 18];

struct Config {
    mode: Mode,
    sizes: Vec<u64>,
    warm_up: Duration,
    measurement: Duration,
    sample_size: usize,
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
    fn from_env() -> Self {
        let bench = std::env::args().any(|a| a == "--bench");
        if !bench || std::env::args().any(|a| a == "--test") {
            return Self {
                mode: Mode::Test,
                sizes: vec![10_000],
                warm_up: Duration::from_millis(10),
                measurement: Duration::from_millis(10),
                sample_size: 10,
            };
        }
        if std::env::var("BLOOMLAB_BENCH_QUICK").is_ok_and(|v| v == "1" || v == "true") {
            return Self {
                mode: Mode::Quick,
                sizes: vec![1_000_000],
                warm_up: env_secs("BLOOMLAB_BENCH_WARMUP_SECS", 0.1),
                measurement: env_secs("BLOOMLAB_BENCH_MEASURE_SECS", 0.3),
                sample_size: 10,
            };
        }
        let sizes = std::env::var("BLOOMLAB_BENCH_SIZES")
            .ok()
            .and_then(|v| {
                v.split(',')
                    .map(|x| x.trim().parse().ok())
                    .collect::<Option<Vec<u64>>>()
            })
            .filter(|v| !v.is_empty() && !v.contains(&0))
            .unwrap_or_else(|| vec![1_000_000, 10_000_000]);
        Self {
            mode: Mode::Full,
            sizes,
            warm_up: env_secs("BLOOMLAB_BENCH_WARMUP_SECS", 0.3),
            measurement: env_secs("BLOOMLAB_BENCH_MEASURE_SECS", 1.0),
            sample_size: 20,
        }
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The run's records, rewritten after each one so an interrupted run keeps what it measured
/// (never in test mode, so `cargo test --benches` leaves a real run's file alone).
struct Log {
    log: SketchLog,
    write: bool,
}

impl Log {
    fn push(&mut self, record: SketchRecord) {
        self.log.records.push(record);
        self.log.updated_unix = unix_now();
        if self.write {
            let path = criterion_dir().join(LOG_FILE);
            if let Err(e) = save(&path, &self.log) {
                eprintln!("warning: cannot write {}: {e}", path.display());
            }
        }
    }
}

fn save(path: &Path, log: &SketchLog) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let json = serde_json::to_string_pretty(log).map_err(std::io::Error::other)?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, json)?;
    std::fs::rename(&tmp, path)
}

/// Builds a structure, returning it with the heap bytes it holds afterwards and the build time.
/// Runs on the only thread that allocates (criterion is idle between benchmarks).
fn measure_build<T>(build: impl FnOnce() -> T) -> (T, u64, Duration) {
    let before = CountingAlloc::live_bytes();
    let start = Instant::now();
    let value = build();
    let elapsed = start.elapsed();
    let after = CountingAlloc::live_bytes();
    (value, after.saturating_sub(before) as u64, elapsed)
}

/// One structure on one key set: what it is and the operations the bench times, each called on
/// the concrete type.
struct Subject<S, New, Ins, Ans> {
    label: String,
    question: Question,
    exact: bool,
    new: New,
    insert: Ins,
    /// The whole-structure estimate ([`Question::Distinct`]) or a point query of a key
    /// ([`Question::Frequency`]).
    answer: Ans,
    _state: std::marker::PhantomData<fn() -> S>,
}

struct Bench<'a> {
    c: &'a mut Criterion,
    cfg: &'a Config,
    log: &'a mut Log,
}

impl Bench<'_> {
    /// One criterion benchmark `sketch-<op>-<keys>/<label>/<n>`, one operation per iteration.
    fn time(
        &mut self,
        op: SketchOp,
        keys: KeyKind,
        label: &str,
        n: u64,
        mut time: impl FnMut(u64) -> Duration,
    ) {
        let mut g = self.c.benchmark_group(SketchGroup { op, keys }.name());
        g.warm_up_time(self.cfg.warm_up)
            .measurement_time(self.cfg.measurement)
            .sample_size(self.cfg.sample_size)
            .throughput(Throughput::Elements(1));
        g.bench_function(BenchmarkId::new(label, n), |b| b.iter_custom(&mut time));
        g.finish();
    }

    /// Builds a distinct-count structure from `inserted`, records it, and times its insert (over
    /// `present`) and its estimate.
    fn distinct<K: Copy, S>(
        &mut self,
        keys: KeyKind,
        inserted: &[K],
        present: &[K],
        s: Subject<S, impl FnOnce() -> S, impl FnMut(&mut S, K), impl FnMut(&mut S) -> f64>,
    ) {
        let Subject {
            label,
            question,
            exact,
            new,
            mut insert,
            answer: mut estimate,
            ..
        } = s;
        let n = inserted.len() as u64;
        let (mut state, heap, build) = measure_build(|| {
            let mut state = new();
            for &k in inserted {
                insert(&mut state, k);
            }
            state
        });
        let answer = estimate(&mut state);
        self.record(keys, question, &label, exact, n, heap, build, answer);
        let mut cursor = 0;
        self.time(SketchOp::Insert, keys, &label, n, |iters| {
            let mut i = cursor;
            let start = Instant::now();
            for _ in 0..iters {
                insert(&mut state, black_box(present[i]));
                i += 1;
                if i == present.len() {
                    i = 0;
                }
            }
            let elapsed = start.elapsed();
            cursor = i;
            elapsed
        });
        self.time(SketchOp::Estimate, keys, &label, n, |iters| {
            let mut acc = 0.0;
            let start = Instant::now();
            for _ in 0..iters {
                acc += estimate(black_box(&mut state));
            }
            let elapsed = start.elapsed();
            black_box(acc);
            elapsed
        });
    }

    /// Builds a frequency structure from `inserted` (every key added once), records it with the
    /// mean answer over `present` (exact: 1), and times its add-1 and its point query (both over
    /// `present`).
    fn frequency<K: Copy, S>(
        &mut self,
        keys: KeyKind,
        inserted: &[K],
        present: &[K],
        s: Subject<S, impl FnOnce() -> S, impl FnMut(&mut S, K), impl FnMut(&S, K) -> u64>,
    ) {
        let Subject {
            label,
            question,
            exact,
            new,
            mut insert,
            answer: mut query,
            ..
        } = s;
        let n = inserted.len() as u64;
        let (mut state, heap, build) = measure_build(|| {
            let mut state = new();
            for &k in inserted {
                insert(&mut state, k);
            }
            state
        });
        let total: u64 = present.iter().map(|&k| query(&state, k)).sum();
        let mean = total as f64 / present.len() as f64;
        self.record(keys, question, &label, exact, n, heap, build, mean);
        let mut cursor = 0;
        self.time(SketchOp::Query, keys, &label, n, |iters| {
            let mut i = cursor;
            let mut acc = 0u64;
            let start = Instant::now();
            for _ in 0..iters {
                acc = acc.wrapping_add(query(&state, black_box(present[i])));
                i += 1;
                if i == present.len() {
                    i = 0;
                }
            }
            let elapsed = start.elapsed();
            black_box(acc);
            cursor = i;
            elapsed
        });
        // Inserts last: they raise the counters the query above read.
        let mut cursor = 0;
        self.time(SketchOp::Insert, keys, &label, n, |iters| {
            let mut i = cursor;
            let start = Instant::now();
            for _ in 0..iters {
                insert(&mut state, black_box(present[i]));
                i += 1;
                if i == present.len() {
                    i = 0;
                }
            }
            let elapsed = start.elapsed();
            cursor = i;
            elapsed
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        keys: KeyKind,
        question: Question,
        label: &str,
        exact: bool,
        n: u64,
        heap_bytes: u64,
        build: Duration,
        answer: f64,
    ) {
        self.log.push(SketchRecord {
            keys,
            question,
            label: label.to_owned(),
            exact,
            n,
            heap_bytes,
            build_ns_per_key: build.as_secs_f64() * 1e9 / n as f64,
            answer,
        });
    }
}

fn subject<S, New, Ins, Ans>(
    label: impl Into<String>,
    question: Question,
    exact: bool,
    new: New,
    insert: Ins,
    answer: Ans,
) -> Subject<S, New, Ins, Ans> {
    Subject {
        label: label.into(),
        question,
        exact,
        new,
        insert,
        answer,
        _state: std::marker::PhantomData,
    }
}

/// A key kind of the bench as the structures take it: borrowed (`&str`, `u64`) for sketches and
/// lookups, owned (`String`, `u64`) where an exact structure stores it.
trait BenchKey: Copy {
    /// What the structures hash: `str` or `u64`.
    type Ref: ?Sized + Key + Hash + Eq;
    /// What an exact structure stores.
    type Owned: Borrow<Self::Ref> + Hash + Eq;
    const KIND: KeyKind;
    fn get(&self) -> &Self::Ref;
    /// Made only when a key is new to the exact structure (never in the timed loops, whose keys
    /// are all present).
    fn owned(self) -> Self::Owned;
}

impl BenchKey for &str {
    type Ref = str;
    type Owned = String;
    const KIND: KeyKind = KeyKind::Str;
    fn get(&self) -> &str {
        self
    }
    fn owned(self) -> String {
        self.to_owned()
    }
}

impl BenchKey for u64 {
    type Ref = u64;
    type Owned = u64;
    const KIND: KeyKind = KeyKind::U64;
    fn get(&self) -> &u64 {
        self
    }
    fn owned(self) -> u64 {
        self
    }
}

/// Every structure on one key set.
fn run_keys<K: BenchKey>(b: &mut Bench, inserted: &[K], present: &[K]) {
    let keys = K::KIND;
    let distinct = Question::Distinct;
    for p in PRECISIONS {
        let new = move || HyperLogLog::<Xxh3>::new(p).expect("precisions 10..=18 are valid");
        let label = new().name();
        let s = subject(
            label,
            distinct,
            false,
            new,
            |h: &mut HyperLogLog<Xxh3>, k: K| h.insert(k.get()),
            |h: &mut HyperLogLog<Xxh3>| h.estimate(),
        );
        b.distinct(keys, inserted, present, s);
    }
    // The crates.io HyperLogLog++ on the same xxh3 hash (`bloomlab_sketches::PeerHll`'s hasher).
    type Peer<R> = HyperLogLogPlus<R, StrategyHasher<Xxh3>>;
    let s = subject(
        format!("peer/hyperloglogplus/{}/p14", Xxh3::ID),
        distinct,
        false,
        || Peer::<K::Ref>::new(14, StrategyHasher::default()).expect("precision 14 is valid"),
        |h: &mut Peer<K::Ref>, k: K| h.insert(k.get()),
        |h: &mut Peer<K::Ref>| h.count(),
    );
    b.distinct(keys, inserted, present, s);
    let s = subject(
        distinct.reference(keys),
        distinct,
        true,
        HashSet::<K::Owned>::new,
        |set: &mut HashSet<K::Owned>, k: K| {
            if !set.contains(k.get()) {
                set.insert(k.owned());
            }
        },
        |set: &mut HashSet<K::Owned>| set.len() as f64,
    );
    b.distinct(keys, inserted, present, s);

    let frequency = Question::Frequency;
    for conservative in [false, true] {
        let new = move || {
            let cms = CountMin::<Xxh3>::new(EPSILON, DELTA).expect("the contract's shape is valid");
            if conservative {
                cms.conservative()
            } else {
                cms
            }
        };
        let s = subject(
            new().name(),
            frequency,
            false,
            new,
            |cms: &mut CountMin<Xxh3>, k: K| cms.add(k.get(), 1),
            |cms: &CountMin<Xxh3>, k: K| cms.estimate(k.get()),
        );
        b.frequency(keys, inserted, present, s);
    }
    let s = subject(
        frequency.reference(keys),
        frequency,
        true,
        HashMap::<K::Owned, u64>::new,
        |map: &mut HashMap<K::Owned, u64>, k: K| match map.get_mut(k.get()) {
            Some(c) => *c += 1,
            None => {
                map.insert(k.owned(), 1);
            }
        },
        |map: &HashMap<K::Owned, u64>, k: K| map.get(k.get()).copied().unwrap_or(0),
    );
    b.frequency(keys, inserted, present, s);
}

fn main() {
    let cfg = Config::from_env();
    let mut c = common::criterion("sketches");
    let mut log = Log {
        log: SketchLog {
            started_unix: unix_now(),
            updated_unix: unix_now(),
            mode: cfg.mode,
            records: Vec::new(),
        },
        write: cfg.mode != Mode::Test,
    };
    eprintln!(
        "sketches: mode {}, n in {:?}, warm-up {:?}, measurement {:?}",
        cfg.mode, cfg.sizes, cfg.warm_up, cfg.measurement
    );
    for &n in &cfg.sizes {
        let mut b = Bench {
            c: &mut c,
            cfg: &cfg,
            log: &mut log,
        };
        {
            let k = keys::StrKeys::new(n);
            let inserted: Vec<&str> = k.inserted.iter().collect();
            let present: Vec<&str> = k.present.iter().collect();
            run_keys(&mut b, &inserted, &present);
        }
        let k = keys::U64Keys::new(n);
        run_keys(&mut b, &k.inserted, &k.present);
    }
    c.final_summary();
}
