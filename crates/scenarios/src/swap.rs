//! Rebuild-and-swap: readers query a filter on several threads while a writer changes the
//! database and a background job rebuilds the filter from the database and swaps it in.
//!
//! **The pattern.** Rather than deleting from a filter, rebuild it periodically from the database
//! of record and switch readers to the new one atomically (here `arc-swap`: readers load the
//! current generation without locks; the old one is freed when its last reader lets go).
//!
//! **Threads.**
//! - *Writer*: in transactions of 50 changes, inserts new ids (two thirds) and deletes live ones
//!   (one third), and logs every change in `bloomlab_swap_log` (`seq`, `id`, `op` = +1 or -1) in
//!   the same transaction. Before the commit it adds each inserted id to the generation being
//!   built (while a rebuild is under way) and to the current one, through `&self` (an atomic bit
//!   store: concurrent inserts and lookups are safe), holding a lock from its first insert to the
//!   commit that the rebuild takes to publish its next generation. Without the write to the next
//!   generation, an id committed after the rebuild's snapshot would be missing from it: the
//!   classic rebuild race, a false negative ([`SwapConfig::close_race`] off shows it).
//! - *Rebuild job*: [`SwapConfig::rebuilds`] times, after a quiet period: publishes an empty next
//!   generation (under the writer's lock, so between two transactions), reads a consistent snapshot of the table and the log's last `seq` in one
//!   transaction (`REPEATABLE READ` on PostgreSQL; a WAL read transaction on SQLite), inserts the
//!   snapshot's ids, swaps it in. It is sized for 1.5x the snapshot's rows (headroom for the
//!   writer's inserts until the next rebuild).
//! - *Readers* (`--threads`): query uniformly random ids among all ids ever allocated, as fast as
//!   they can, timing each lookup and recording it as *during a rebuild* or *outside* (by a flag
//!   the rebuild job raises from publishing the next generation until the swap).
//!
//! **Checks, afterwards.** Every negative answer is kept (id, generation, time; a positive cannot
//! be a false negative) and checked: it is a false negative if the id was in the snapshot the
//! answering generation was built from, or if its insert had committed before the query started
//! and it was not deleted by that generation's snapshot (deletes come from the log's `seq`). The snapshots themselves are checked against the database: each must
//! equal the log replayed up to its `seq` (SQL: `GROUP BY id HAVING SUM(op) > 0`), and the final
//! table must equal the whole log replayed and the writer's own record; every row at the end must
//! be in the final filter. The report counts separately the answers for ids present in both the
//! answering generation's snapshot and the previous one's ("present in both generations").
//!
//! **Memory.** At each swap, both generations are alive: the report gives their
//! `Filter::memory_bytes` (exact, from the structures) and, when the binary installed the counting
//! allocator, the process's live heap just before the swap and after the old generation was freed.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::{ArcSwap, ArcSwapOption};
use bloomlab_filters::{
    AtomicBits, Bloom, EnhancedDoubleHash, Filter, FilterExt, Fnv1a, GuavaMitz32, GuavaMitz64,
    HashStrategy, IndexScheme, KirschMitzenmacher, Lookup3, Murmur3, Variant, VariantId, Xxh3,
    Xxh3Wide, Xxh64, registry,
};
use bloomlab_harness::keys::derive_seed;
use rand::{RngExt as _, SeedableRng};
use rand_pcg::Pcg64Mcg;

use bloomlab_report::scenario::sig;
pub use bloomlab_report::scenario::swap::{
    CSV_NAME, GenRow, HistSummary, SUMMARY_NAME, SwapOutcome, SwapSettings,
};

use crate::db::{ColType, Db, DbUrl, Param, TableSpec};
use crate::error::{Result, ScenarioError};
use crate::latency::Histogram;
use crate::{Progress, check_count, check_p};

/// The table of record.
pub const ITEMS: TableSpec = TableSpec {
    name: "bloomlab_swap_items",
    columns: &[("id", ColType::Int)],
};
/// The change log, written in the same transactions.
pub const LOG: TableSpec = TableSpec {
    name: "bloomlab_swap_log",
    columns: &[
        ("seq", ColType::Int),
        ("id", ColType::Int),
        ("op", ColType::Int),
    ],
};

/// The filter the `scenario` binary uses when none is named, `classic/xxh3/km/atomic`: swap needs
/// an atomic bit store.
pub fn default_filter() -> VariantId {
    VariantId::of::<Bloom<Xxh3, KirschMitzenmacher, AtomicBits>>()
}
/// Default reader threads.
pub const DEFAULT_THREADS: u64 = 2;

/// The settings of a run.
#[derive(Debug, Clone)]
pub struct SwapConfig {
    /// The database of record.
    pub db: DbUrl,
    /// Registry name of the filter: a `classic/<hash>/<index>/atomic` variant.
    pub filter: VariantId,
    /// Target rate each generation is sized for.
    pub p: f64,
    /// Reader threads, 1 to 64.
    pub threads: u64,
    /// Rows at the start.
    pub initial_ids: u64,
    /// Rebuilds (generations after the first).
    pub rebuilds: u64,
    /// Quiet time before each rebuild and after the last.
    pub quiet: Duration,
    /// Seed of the writer's and readers' choices.
    pub seed: u64,
    /// Live heap bytes of the process, when the binary counts them.
    pub heap_bytes: Option<fn() -> usize>,
    /// Whether the writer closes the rebuild race (true, always, in the binary): it adds each
    /// insert to the generation being built too, under a lock the rebuild takes to publish it.
    /// False only to show what the check catches without it (a test does).
    pub close_race: bool,
}

impl SwapConfig {
    /// 100,000 initial rows, 4 rebuilds 0.5 s apart.
    pub fn new(db: DbUrl, filter: VariantId, p: f64) -> Self {
        SwapConfig {
            db,
            filter: filter.to_owned(),
            p,
            threads: DEFAULT_THREADS,
            initial_ids: 100_000,
            rebuilds: 4,
            quiet: Duration::from_millis(500),
            seed: 2024,
            heap_bytes: None,
            close_race: true,
        }
    }

    /// Checks every setting and that the filter takes concurrent inserts.
    pub fn check(&self) -> Result<()> {
        check_p(self.p)?;
        check_count("--threads", self.threads, 1, 64)?;
        check_count("--initial-ids", self.initial_ids, 1, 10_000_000)?;
        check_count("--rebuilds", self.rebuilds, 1, 1000)?;
        build_shared(self.filter.name(), self.initial_ids, self.p).map(|_| ())
    }

    /// The settings as the report prints them.
    pub fn settings(&self) -> SwapSettings {
        SwapSettings {
            backend: self.db.backend().to_owned(),
            filter: self.filter.to_string(),
            p: self.p,
            threads: self.threads,
            initial_ids: self.initial_ids,
            rebuilds: self.rebuilds,
            quiet: self.quiet,
        }
    }

    /// The process's live heap bytes, when the binary counts them; else 0.
    fn heap(&self) -> u64 {
        self.heap_bytes.map_or(0, |f| f() as u64)
    }
}

/// A filter readers query while the writer inserts through `&self`.
pub trait SharedFilter: Filter {
    /// Inserts `id`; safe while other threads insert and query.
    fn insert_id(&self, id: i64);
    /// Whether `id` may be present.
    fn contains_id(&self, id: i64) -> bool;
}

impl<H: HashStrategy, I: IndexScheme> SharedFilter for Bloom<H, I, AtomicBits> {
    #[inline]
    fn insert_id(&self, id: i64) {
        self.insert_shared(&id);
    }
    #[inline]
    fn contains_id(&self, id: i64) -> bool {
        FilterExt::contains(self, &id)
    }
}

/// Builds the `classic/<hash>/<index>/atomic` filter named `name` for `n` keys at `p`. An unknown
/// name is the registry's error; a registered name without a concurrent store is an error saying
/// which names have one.
pub fn build_shared(name: &str, n: u64, p: f64) -> Result<Box<dyn SharedFilter>> {
    macro_rules! try_hashes {
        ($($h:ty),*) => {$( try_index!($h; KirschMitzenmacher, EnhancedDoubleHash, GuavaMitz64, GuavaMitz32); )*};
    }
    macro_rules! try_index {
        ($h:ty; $($i:ty),*) => {$(
            if name == <Bloom<$h, $i, AtomicBits> as Variant>::variant_name() {
                return Ok(Box::new(<Bloom<$h, $i, AtomicBits> as Variant>::sized_for(n, p)?));
            }
        )*};
    }
    try_hashes!(Fnv1a, Murmur3, Xxh3, Xxh3Wide, Xxh64, Lookup3);
    registry::capabilities(name)?;
    Err(ScenarioError::BadInput(format!(
        "--filter {name} cannot take inserts from the writer while readers query it: swap needs a \
         filter with an atomic bit store, classic/<hash>/<index>/atomic (e.g. classic/xxh3/km/atomic)"
    )))
}

impl From<&Histogram> for HistSummary {
    fn from(h: &Histogram) -> Self {
        HistSummary {
            count: h.count(),
            p50_ns: h.quantile_ns(0.5),
            p99_ns: h.quantile_ns(0.99),
            p999_ns: h.quantile_ns(0.999),
            max_ns: h.max_ns(),
        }
    }
}

struct Generation {
    number: u32,
    filter: Box<dyn SharedFilter>,
}

/// What the rebuild job records per generation.
struct GenRecord {
    snapshot_seq: i64,
    members: Vec<bool>,
    filter_bits: u64,
    filter_bytes: u64,
    both_bytes: u64,
    heap_before: u64,
    heap_after: u64,
    rebuild_ms: f64,
    fill_at_end: f64,
}

/// The writer's record: (id, ns since the start when its insert's commit had returned) per
/// insert, (id, seq) per delete, the ids live at the end, and the changes committed.
type WriterLog = (Vec<(i64, u64)>, Vec<(i64, i64)>, Vec<i64>, u64);

/// A negative reader answer (`at`: ns since the start, before the generation was loaded).
#[derive(Clone, Copy)]
struct Negative {
    id: i64,
    generation: u32,
    at: u64,
}

fn ns_since(t0: Instant) -> u64 {
    t0.elapsed().as_nanos() as u64
}

fn snapshot(db: &mut Db, pg: bool) -> Result<(i64, Vec<i64>)> {
    db.batch(if pg {
        "BEGIN ISOLATION LEVEL REPEATABLE READ"
    } else {
        "BEGIN"
    })?;
    let seq = db.int("SELECT COALESCE(MAX(seq), 0) FROM bloomlab_swap_log", &[])?;
    let ids = db.ints("SELECT id FROM bloomlab_swap_items", &[])?;
    db.commit()?;
    Ok((seq, ids))
}

/// Membership of `ids` (non-negative), indexed by id.
fn bitset(ids: &[i64]) -> Vec<bool> {
    let len = ids.iter().copied().max().map_or(0, |m| m as usize + 1);
    let mut v = vec![false; len];
    for &i in ids {
        if let Some(slot) = usize::try_from(i).ok().and_then(|i| v.get_mut(i)) {
            *slot = true;
        }
    }
    v
}

/// Sets its flag when dropped: the writer's exit (an error included) stops the other threads.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// What the readers, the writer and the rebuild job share.
struct Shared<'a> {
    config: &'a SwapConfig,
    /// Whether the database is PostgreSQL (its snapshot needs `REPEATABLE READ`).
    pg: bool,
    /// The generation readers query.
    current: ArcSwap<Generation>,
    /// The generation being built, while a rebuild is under way.
    pending: ArcSwapOption<Generation>,
    /// Raised by the rebuild job from publishing the next generation until the swap.
    rebuilding: AtomicBool,
    stop: AtomicBool,
    /// Ids 0..published have been allocated (and, if live, added to the filter): what readers ask.
    published: AtomicI64,
    writer_log: Mutex<WriterLog>,
    /// Held by the writer from its first filter insert to its commit, and by the rebuild job to
    /// publish its next generation: the race the writer closes.
    race: Mutex<()>,
    started: Instant,
}

/// One reader thread's record: lookup times outside and during rebuilds, its negative answers,
/// and its answers per generation.
type ReaderLog = (Histogram, Histogram, Vec<Negative>, Vec<u64>);

/// Runs the scenario and checks every reader answer and the database.
pub fn run(config: &SwapConfig, progress: Progress<'_>) -> Result<SwapOutcome> {
    config.check()?;
    let pg = matches!(config.db, DbUrl::Postgres(_));
    let mut db = Db::connect(&config.db)?;
    db.ensure_table(&ITEMS, &[])?;
    db.ensure_table(&LOG, &[])?;
    let db_version = db.version()?;
    seed_table(&mut db, config, progress)?;
    let (first, record0) = first_generation(&mut db, config, pg)?;
    let shared = Shared {
        config,
        pg,
        current: ArcSwap::from_pointee(first),
        pending: ArcSwapOption::empty(),
        rebuilding: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        published: AtomicI64::new(config.initial_ids as i64),
        writer_log: Mutex::new(Default::default()),
        race: Mutex::new(()),
        started: Instant::now(),
    };
    let (readers, writer_result, rebuild_result) = spawn_and_join(&shared);
    let wall_s = shared.started.elapsed().as_secs_f64();
    // The database failing once readers, writer and rebuilds are running interrupts a run whose
    // figures only mean something whole: a measured failure, reported as such, not bad input.
    let interrupted = |e: ScenarioError| {
        if crate::is_database_failure(&e) {
            ScenarioError::Interrupted(format!(
                "swap interrupted by the database after {} s of the run: {e}\nNothing is \
                 reported: swap's figures (false negatives, lookups during and outside swaps) \
                 cover the whole run. The database holds whole writer transactions. To resume: \
                 bring {} back and run the same command again (it empties the tables first).",
                sig(wall_s, 3),
                config.db
            ))
        } else {
            e
        }
    };
    writer_result
        .map_err(|_| panicked("writer"))?
        .map_err(interrupted)?;
    let rebuilt = rebuild_result
        .map_err(|_| panicked("rebuild"))?
        .map_err(interrupted)?;
    let records = finish_records(record0, rebuilt, &shared.current);
    let (inserted, deleted, live, changes) =
        std::mem::take(&mut *shared.writer_log.lock().unwrap_or_else(|e| e.into_inner()));
    let inserts = inserted.len() as u64;
    let (outside, during, negatives, answers) = merge_readers(readers, records.len())?;

    verify_snapshots(&mut db, &records)?;
    let table = verify_end_state(&mut db, live)?;
    let rows = check_negatives(config, &records, &negatives, &answers, inserted, deleted)?;
    let last = shared.current.load();
    if let Some(&id) = table.iter().find(|&&id| !last.filter.contains_id(id)) {
        return Err(ScenarioError::Verification(format!(
            "id {id} is in the table at the end but not in the final generation {}",
            last.number
        )));
    }

    progress("swap: checked", 1, 1);
    Ok(SwapOutcome {
        settings: config.settings(),
        db_version,
        generations: rows,
        outside: (&outside).into(),
        during: (&during).into(),
        changes,
        inserts,
        rows_at_end: table.len() as u64,
        wall_s,
    })
}

fn panicked(who: &str) -> ScenarioError {
    ScenarioError::Verification(format!("the {who} thread panicked"))
}

/// Seed: empties both tables and writes the initial rows, each logged as an insert, in one
/// transaction.
fn seed_table(db: &mut Db, config: &SwapConfig, progress: Progress<'_>) -> Result<()> {
    db.begin()?;
    db.batch("DELETE FROM bloomlab_swap_items; DELETE FROM bloomlab_swap_log")?;
    let mut i = 0;
    while i < config.initial_ids {
        let n = 400.min(config.initial_ids - i);
        let items: Vec<String> = (0..n).map(|j| format!("(${})", j + 1)).collect();
        let logs: Vec<String> = (0..n)
            .map(|j| format!("(${}, ${}, 1)", 2 * j + 1, 2 * j + 2))
            .collect();
        let ids: Vec<Param> = (i..i + n).map(|x| Param::Int(x as i64)).collect();
        let mut log_params = Vec::with_capacity(2 * n as usize);
        for x in i..i + n {
            log_params.push(Param::Int(x as i64 + 1));
            log_params.push(Param::Int(x as i64));
        }
        db.exec(
            &format!(
                "INSERT INTO bloomlab_swap_items (id) VALUES {}",
                items.join(", ")
            ),
            &ids,
        )?;
        db.exec(
            &format!(
                "INSERT INTO bloomlab_swap_log (seq, id, op) VALUES {}",
                logs.join(", ")
            ),
            &log_params,
        )?;
        i += n;
        progress("swap: writing the initial rows", i, config.initial_ids);
    }
    db.commit()
}

/// Generation 0, built from a snapshot before the readers start, with its record.
fn first_generation(db: &mut Db, config: &SwapConfig, pg: bool) -> Result<(Generation, GenRecord)> {
    let (seq0, ids0) = snapshot(db, pg)?;
    let f0 = build_shared(
        config.filter.name(),
        (ids0.len() as u64 * 3 / 2).max(1),
        config.p,
    )?;
    for &id in &ids0 {
        f0.insert_id(id);
    }
    let record = GenRecord {
        snapshot_seq: seq0,
        members: bitset(&ids0),
        filter_bits: f0.bits(),
        filter_bytes: f0.memory_bytes() as u64,
        both_bytes: f0.memory_bytes() as u64,
        heap_before: config.heap(),
        heap_after: config.heap(),
        rebuild_ms: 0.0,
        fill_at_end: 0.0,
    };
    Ok((
        Generation {
            number: 0,
            filter: f0,
        },
        record,
    ))
}

/// Spawn: the readers, the writer and the rebuild job, on scoped threads; returns each one's
/// result once all have stopped (the rebuild job stops everyone after its last quiet period, the
/// writer on an error).
#[allow(clippy::type_complexity)]
fn spawn_and_join(
    shared: &Shared<'_>,
) -> (
    Vec<std::thread::Result<ReaderLog>>,
    std::thread::Result<Result<()>>,
    std::thread::Result<Result<Vec<GenRecord>>>,
) {
    std::thread::scope(|s| {
        let readers: Vec<_> = (0..shared.config.threads)
            .map(|t| s.spawn(move || read(shared, t)))
            .collect();
        let writer = s.spawn(|| write(shared));
        let rebuilder = s.spawn(|| rebuild(shared));
        let writer_result = writer.join();
        let rebuild_result = rebuilder.join();
        shared.stop.store(true, Ordering::SeqCst);
        let readers: Vec<_> = readers.into_iter().map(|r| r.join()).collect();
        (readers, writer_result, rebuild_result)
    })
}

/// Reader `t`: queries uniformly random allocated ids until stopped, timing each lookup.
fn read(sh: &Shared<'_>, t: u64) -> ReaderLog {
    let mut rng = Pcg64Mcg::seed_from_u64(derive_seed(sh.config.seed, &format!("swap-reader-{t}")));
    let (mut outside, mut during) = (Histogram::new(), Histogram::new());
    let mut negatives = Vec::new();
    let mut answers: Vec<u64> = Vec::new();
    while !sh.stop.load(Ordering::Relaxed) {
        for _ in 0..256 {
            let id = rng.random_range(0..sh.published.load(Ordering::Acquire));
            let in_rebuild = sh.rebuilding.load(Ordering::Relaxed);
            let t = Instant::now();
            let g = sh.current.load();
            let found = g.filter.contains_id(id);
            let took = t.elapsed();
            if in_rebuild {
                during.record(took)
            } else {
                outside.record(took)
            }
            let n = g.number as usize;
            if answers.len() <= n {
                answers.resize(n + 1, 0);
            }
            answers[n] += 1;
            if !found {
                let at = t.duration_since(sh.started).as_nanos() as u64;
                negatives.push(Negative {
                    id,
                    generation: g.number,
                    at,
                });
            }
        }
    }
    (outside, during, negatives, answers)
}

/// The writer's state between transactions.
struct Writer {
    rng: Pcg64Mcg,
    live: Vec<i64>,
    next: i64,
    seq: i64,
    inserted: Vec<(i64, u64)>,
    deleted: Vec<(i64, i64)>,
    changes: u64,
}

/// The writer: transactions of 50 changes until stopped; on an error, everyone stops.
fn write(sh: &Shared<'_>) -> Result<()> {
    // On an error, everyone stops: the run cannot be completed.
    let _stop_all = StopOnDrop(&sh.stop);
    let config = sh.config;
    let mut db = Db::connect(&config.db)?;
    let mut w = Writer {
        rng: Pcg64Mcg::seed_from_u64(derive_seed(config.seed, "swap-writer")),
        live: (0..config.initial_ids as i64).collect(),
        next: config.initial_ids as i64,
        seq: config.initial_ids as i64,
        inserted: Vec::new(),
        deleted: Vec::new(),
        changes: 0,
    };
    while !sh.stop.load(Ordering::Relaxed) {
        // Held from the first filter insert to the commit, so a rebuild publishes its
        // next generation either before (then this transaction adds to it) or after
        // (then the commit precedes its snapshot).
        let guard = config
            .close_race
            .then(|| sh.race.lock().unwrap_or_else(|e| e.into_inner()));
        db.begin()?;
        let batch = write_changes(sh, &mut db, &mut w)?;
        db.commit()?;
        drop(guard);
        let done = ns_since(sh.started);
        w.changes += 50;
        w.inserted.extend(batch.into_iter().map(|id| (id, done)));
        sh.published.store(w.next, Ordering::Release);
    }
    *sh.writer_log.lock().unwrap_or_else(|e| e.into_inner()) =
        (w.inserted, w.deleted, w.live, w.changes);
    Ok(())
}

/// One transaction's 50 changes (two thirds inserts, one third deletes), each logged; inserted
/// ids go into the filters before the commit. Returns the ids inserted.
fn write_changes(sh: &Shared<'_>, db: &mut Db, w: &mut Writer) -> Result<Vec<i64>> {
    let mut batch = Vec::new();
    for _ in 0..50 {
        w.seq += 1;
        if w.rng.random_range(0..3) < 2 || w.live.is_empty() {
            let id = w.next;
            w.next += 1;
            db.exec(
                "INSERT INTO bloomlab_swap_items (id) VALUES ($1)",
                &[Param::Int(id)],
            )?;
            db.exec(
                "INSERT INTO bloomlab_swap_log (seq, id, op) VALUES ($1, $2, 1)",
                &[Param::Int(w.seq), Param::Int(id)],
            )?;
            // Into the filters before the commit: once a reader can find the row in
            // the database, every generation it can load has the id. Pending first:
            // the rebuild swaps before it clears `pending`, so a cleared `pending`
            // means `current` is already the new generation.
            if sh.config.close_race
                && let Some(p) = sh.pending.load().as_ref()
            {
                p.filter.insert_id(id);
            }
            sh.current.load().filter.insert_id(id);
            w.live.push(id);
            batch.push(id);
        } else {
            let id = w.live.swap_remove(w.rng.random_range(0..w.live.len()));
            db.exec(
                "DELETE FROM bloomlab_swap_items WHERE id = $1",
                &[Param::Int(id)],
            )?;
            db.exec(
                "INSERT INTO bloomlab_swap_log (seq, id, op) VALUES ($1, $2, -1)",
                &[Param::Int(w.seq), Param::Int(id)],
            )?;
            w.deleted.push((id, w.seq));
        }
    }
    Ok(batch)
}

/// The rebuild job: [`SwapConfig::rebuilds`] generations, each after a quiet period, then a
/// last quiet period; stops everyone when done (or failed). Each record's fill ratio is that of
/// the generation it replaced, when replaced.
fn rebuild(sh: &Shared<'_>) -> Result<Vec<GenRecord>> {
    let config = sh.config;
    let mut db = Db::connect(&config.db)?;
    let result = (|| {
        let mut out = Vec::new();
        for g in 1..=config.rebuilds as u32 {
            std::thread::sleep(config.quiet);
            out.push(rebuild_one(sh, &mut db, g)?);
        }
        std::thread::sleep(config.quiet);
        Ok(out)
    })();
    sh.stop.store(true, Ordering::SeqCst);
    result
}

/// Builds generation `g` from a snapshot and swaps it in; waits for the readers to let go of
/// the old one and measures the heap.
fn rebuild_one(sh: &Shared<'_>, db: &mut Db, g: u32) -> Result<GenRecord> {
    let config = sh.config;
    let t = Instant::now();
    sh.rebuilding.store(true, Ordering::SeqCst);
    // The size is fixed before the snapshot: the current row count from the last
    // generation's snapshot plus the writer's net growth since (estimated by
    // `published`), with 1.5x headroom.
    let n = (sh.published.load(Ordering::Acquire) as u64 * 3 / 2).max(1);
    let next = Arc::new(Generation {
        number: g,
        filter: build_shared(config.filter.name(), n, config.p)?,
    });
    {
        let _writer_between_transactions = sh.race.lock().unwrap_or_else(|e| e.into_inner());
        sh.pending.store(Some(next.clone()));
    }
    let (seq, ids) = snapshot(db, sh.pg)?;
    for &id in &ids {
        next.filter.insert_id(id);
    }
    let old_bytes = sh.current.load().filter.memory_bytes() as u64;
    let heap_before = config.heap();
    let old = sh.current.swap(next.clone());
    sh.pending.store(None);
    sh.rebuilding.store(false, Ordering::SeqCst);
    let rebuild_ms = t.elapsed().as_secs_f64() * 1e3;
    let old_fill = old.filter.fill_ratio();
    // Wait for readers to let go of the old generation, then measure the heap.
    let mut old = Some(old);
    while let Some(o) = old.take() {
        match Arc::try_unwrap(o) {
            Ok(g) => drop(g),
            Err(o) => {
                old = Some(o);
                std::thread::yield_now();
            }
        }
    }
    Ok(GenRecord {
        snapshot_seq: seq,
        members: bitset(&ids),
        filter_bits: next.filter.bits(),
        filter_bytes: next.filter.memory_bytes() as u64,
        both_bytes: old_bytes + next.filter.memory_bytes() as u64,
        heap_before,
        heap_after: config.heap(),
        rebuild_ms,
        fill_at_end: old_fill,
    })
}

/// Every generation's record, each with its fill ratio when it was replaced (the rebuild that
/// replaced it measured it) or, for the last, now.
fn finish_records(
    first: GenRecord,
    rebuilt: Vec<GenRecord>,
    current: &ArcSwap<Generation>,
) -> Vec<GenRecord> {
    let mut fills: Vec<f64> = rebuilt.iter().map(|r| r.fill_at_end).collect();
    fills.push(current.load().filter.fill_ratio());
    let mut records = vec![first];
    records.extend(rebuilt);
    for (r, f) in records.iter_mut().zip(fills) {
        r.fill_at_end = f;
    }
    records
}

/// The readers' records merged: lookup times outside and during rebuilds, every negative
/// answer, and the answers per generation (`generations` of them).
fn merge_readers(
    readers: Vec<std::thread::Result<ReaderLog>>,
    generations: usize,
) -> Result<ReaderLog> {
    let (mut outside, mut during) = (Histogram::new(), Histogram::new());
    let mut negatives = Vec::new();
    let mut answers = vec![0u64; generations];
    for r in readers {
        let (o, d, n, a) = r.map_err(|_| panicked("reader"))?;
        outside.merge(&o);
        during.merge(&d);
        negatives.extend(n);
        for (i, c) in a.into_iter().enumerate() {
            if let Some(slot) = answers.get_mut(i) {
                *slot += c;
            }
        }
    }
    Ok((outside, during, negatives, answers))
}

/// Verify: each generation's snapshot equals the change log replayed to its `seq`.
fn verify_snapshots(db: &mut Db, records: &[GenRecord]) -> Result<()> {
    for (g, r) in records.iter().enumerate() {
        let mut replayed = db.ints(
            "SELECT id FROM bloomlab_swap_log WHERE seq <= $1 GROUP BY id HAVING SUM(op) > 0",
            &[Param::Int(r.snapshot_seq)],
        )?;
        replayed.sort_unstable();
        let snap: Vec<i64> = (0..r.members.len() as i64)
            .filter(|&i| r.members[i as usize])
            .collect();
        if replayed != snap {
            let only_log: Vec<i64> = replayed
                .iter()
                .filter(|i| snap.binary_search(i).is_err())
                .take(5)
                .copied()
                .collect();
            let only_snap: Vec<i64> = snap
                .iter()
                .filter(|i| replayed.binary_search(i).is_err())
                .take(5)
                .copied()
                .collect();
            return Err(ScenarioError::Verification(format!(
                "generation {g}: ids only in the log replay {only_log:?}, only in the snapshot {only_snap:?}; \
                 its snapshot ({} rows at seq {}) differs from the log replayed to \
                 that seq ({} rows): the snapshot was not consistent",
                snap.len(),
                r.snapshot_seq,
                replayed.len()
            )));
        }
    }
    Ok(())
}

/// Verify the end state: the table equals the whole log replayed and the writer's record of
/// live ids. Returns the table's ids, sorted.
fn verify_end_state(db: &mut Db, mut live: Vec<i64>) -> Result<Vec<i64>> {
    let mut table = db.ints("SELECT id FROM bloomlab_swap_items", &[])?;
    table.sort_unstable();
    let mut replayed = db.ints(
        "SELECT id FROM bloomlab_swap_log GROUP BY id HAVING SUM(op) > 0",
        &[],
    )?;
    replayed.sort_unstable();
    live.sort_unstable();
    if table != replayed || table != live {
        return Err(ScenarioError::Verification(format!(
            "the table holds {} rows, the log replays to {}, the writer committed {}",
            table.len(),
            replayed.len(),
            live.len()
        )));
    }
    Ok(table)
}

/// Verify every negative reader answer against the generation that gave it, and build the
/// generations' rows. A false negative is an error naming the first.
fn check_negatives(
    config: &SwapConfig,
    records: &[GenRecord],
    negatives: &[Negative],
    answers: &[u64],
    inserted: Vec<(i64, u64)>,
    deleted: Vec<(i64, i64)>,
) -> Result<Vec<GenRow>> {
    let committed: std::collections::HashMap<i64, u64> = inserted.into_iter().collect();
    let deleted_seq: std::collections::HashMap<i64, i64> = deleted.into_iter().collect();
    let mut rows: Vec<GenRow> = records
        .iter()
        .enumerate()
        .map(|(g, r)| gen_row(config, g, r, answers.get(g).copied().unwrap_or(0)))
        .collect();
    let member = |g: usize, id: i64| {
        records[g]
            .members
            .get(id as usize)
            .copied()
            .unwrap_or(false)
    };
    let mut first_fn = None;
    for n in negatives {
        let g = n.generation as usize;
        rows[g].negatives += 1;
        let in_snapshot = member(g, n.id);
        // Present for this generation: committed before the query started (initial rows: at
        // the start), and not deleted by the generation's snapshot (a later delete does not
        // remove it from this generation).
        let committed_before = n.id < config.initial_ids as i64
            || committed.get(&n.id).is_some_and(|&done| done < n.at);
        let deleted_by_snapshot = deleted_seq
            .get(&n.id)
            .is_some_and(|&d| d <= records[g].snapshot_seq);
        if in_snapshot || (committed_before && !deleted_by_snapshot) {
            rows[g].false_negatives += 1;
            first_fn.get_or_insert((n.id, g, in_snapshot));
        }
        if g > 0 && in_snapshot && member(g - 1, n.id) {
            rows[g].negatives_present_in_both += 1;
        }
    }
    for g in 1..records.len() {
        rows[g].ids_present_in_both = records[g]
            .members
            .iter()
            .zip(&records[g - 1].members)
            .filter(|(a, b)| **a && **b)
            .count() as u64;
    }
    if let Some((id, g, in_snapshot)) = first_fn {
        let total: u64 = rows.iter().map(|r| r.false_negatives).sum();
        return Err(ScenarioError::Verification(format!(
            "{total} false negatives; the first: id {id} answered absent by generation {g}, though {}",
            if in_snapshot {
                "it was in that generation's snapshot"
            } else {
                "the writer had added it to that generation before the query"
            }
        )));
    }
    Ok(rows)
}

/// Generation `g`'s row before its negatives are counted.
fn gen_row(config: &SwapConfig, g: usize, r: &GenRecord, answers: u64) -> GenRow {
    GenRow {
        backend: config.db.backend().to_owned(),
        generation: g as u32,
        snapshot_seq: r.snapshot_seq,
        snapshot_rows: r.members.iter().filter(|&&m| m).count() as u64,
        filter_bits: r.filter_bits,
        filter_bytes: r.filter_bytes,
        both_generations_bytes: r.both_bytes,
        heap_before_swap: r.heap_before,
        heap_after_release: r.heap_after,
        rebuild_ms: r.rebuild_ms,
        answers,
        negatives: 0,
        false_negatives: 0,
        ids_present_in_both: 0,
        negatives_present_in_both: 0,
        fill_ratio_at_end: r.fill_at_end,
    }
}

/// Writes `swap.csv` (one row per generation) and `summary.md` into `dir`
/// ([`bloomlab_report::scenario::swap::write`]).
pub fn write_report(o: &SwapOutcome, dir: &std::path::Path, revision: &str) -> Result<()> {
    Ok(bloomlab_report::scenario::swap::write(o, dir, revision)?)
}
