//! A cache-penetration guard: a filter of the valid ids in front of a cache and the database.
//!
//! **The claim.** A Bloom filter of the valid ids "eliminates more than 99% of queries for
//! non-existent keys". Requests for ids that never existed miss every cache (there is nothing to
//! cache) and reach the database; a filter answers "certainly absent" for all but a share of them
//! equal to its false-positive rate.
//!
//! **The workload.** [`PenetrationConfig::valid_ids`] rows in the database (`id`, `payload`),
//! ids spread over the 64-bit range by a bijective mixer. [`PenetrationConfig::requests`]
//! requests, seeded, the same stream in every mode: a share [`PenetrationConfig::attack_share`]
//! asks for an id that never existed (each attack id distinct: the mixer's images of indices past
//! the valid ones, so disjoint from them by construction); the rest ask for valid ids, half of
//! them among a hot 1% (so the cache has something to do).
//!
//! **Modes.** `unguarded`: cache, then the database; a found row is cached, a miss is not (there
//! is nothing to cache: this is the penetration). `guarded` (one per `p`): the filter first; a
//! negative is answered "not found" at once; a positive goes on to the cache and the database.
//! The cache is a bounded map ([`CACHE_CAPACITY`] entries, oldest evicted first), emptied before
//! each mode.
//!
//! **Measured.** The share of attack requests that reached the database, with its exact
//! (Clopper-Pearson, 95%) interval, next to the filter's own rate given its bits and the target
//! p; every request's latency (p50, p99) and the database's load (queries per request), guarded
//! and unguarded. The claim is checked per p: it holds when the whole interval of the eliminated
//! share lies above 99%, fails when the whole interval lies at or below it, and is undecided
//! otherwise.
//!
//! **Checks.** Every valid request must return its row's payload (a filter false negative or a
//! lost row is an error), every attack request must return nothing, and the table must hold
//! exactly the rows written (`COUNT(*)`, `COUNT(DISTINCT id)`).

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use bloomlab_filters::{Filter, FilterExt, Spec, VariantId, registry};
use bloomlab_harness::keys::derive_seed;
use bloomlab_harness::stats::clopper_pearson;
use rand::{RngExt as _, SeedableRng};
use rand_pcg::Pcg64Mcg;

pub use bloomlab_report::scenario::penetration::{
    CSV_NAME, Interruption, ModeRow, PNG_NAME, PenetrationOutcome, PenetrationSettings,
    SUMMARY_NAME,
};

use crate::db::{ColType, Db, DbUrl, Param, TableSpec, Value};
use crate::error::{Result, ScenarioError};
use crate::latency::Histogram;
use crate::{Progress, check_count, check_p, check_share, is_database_failure};

/// The scenario's table.
pub const TABLE: TableSpec = TableSpec {
    name: "bloomlab_penetration_items",
    columns: &[("id", ColType::Int), ("payload", ColType::Text)],
};

/// Default share of requests for never-existing ids.
pub const DEFAULT_ATTACK_SHARE: f64 = 0.5;
/// Entries the cache holds.
pub const CACHE_CAPACITY: usize = 10_000;
/// Confidence of the intervals.
pub const CONFIDENCE: f64 = 0.95;

/// The settings of a run.
#[derive(Debug, Clone)]
pub struct PenetrationConfig {
    /// The database of record.
    pub db: DbUrl,
    /// Registry name of the filter.
    pub filter: VariantId,
    /// Target rates, one guarded mode each.
    pub ps: Vec<f64>,
    /// Rows (valid ids) in the database.
    pub valid_ids: u64,
    /// Requests per mode.
    pub requests: u64,
    /// Share of requests for never-existing ids, in (0, 1).
    pub attack_share: f64,
    /// Seed of ids and requests.
    pub seed: u64,
}

impl PenetrationConfig {
    /// 100,000 valid ids, 200,000 requests per mode, half of them attacks.
    pub fn new(db: DbUrl, filter: VariantId, ps: Vec<f64>) -> Self {
        PenetrationConfig {
            db,
            filter: filter.to_owned(),
            ps,
            valid_ids: 100_000,
            requests: 200_000,
            attack_share: DEFAULT_ATTACK_SHARE,
            seed: 2024,
        }
    }

    /// Checks every setting and that each filter can be built.
    pub fn check(&self) -> Result<()> {
        if self.ps.is_empty() {
            return Err(ScenarioError::BadInput("--p lists no rate".into()));
        }
        for &p in &self.ps {
            check_p(p)?;
            registry::sized_bytes(self.filter.name(), self.valid_ids, p)?;
        }
        check_count("--valid-ids", self.valid_ids, 1, 100_000_000)?;
        check_count("--requests", self.requests, 1, 1_000_000_000)?;
        check_share("--attack-share", self.attack_share)
    }

    /// The settings as the report prints them.
    pub fn settings(&self) -> PenetrationSettings {
        PenetrationSettings {
            backend: self.db.backend().to_owned(),
            database: self.db.to_string(),
            filter: self.filter.to_string(),
            valid_ids: self.valid_ids,
            requests: self.requests,
            attack_share: self.attack_share,
            seed: self.seed,
            cache_capacity: CACHE_CAPACITY,
        }
    }
}

fn mix64(mut x: u64) -> u64 {
    // A bijection of u64 (SplitMix64's finaliser): distinct indices give distinct ids.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The id of index `i` (valid for `i < valid_ids`, never-existing beyond), as a BIGINT: a
/// bijection of `i` (its bits reinterpreted), so valid and attack ids never coincide.
fn id_of(seed: u64, i: u64) -> i64 {
    mix64(i ^ derive_seed(seed, "penetration-ids")) as i64
}

/// A bounded map: oldest entry evicted first.
struct Cache {
    map: HashMap<i64, String>,
    order: VecDeque<i64>,
}

impl Cache {
    fn new() -> Self {
        Cache {
            map: HashMap::with_capacity(CACHE_CAPACITY),
            order: VecDeque::with_capacity(CACHE_CAPACITY),
        }
    }
    fn get(&self, id: i64) -> Option<&String> {
        self.map.get(&id)
    }
    fn put(&mut self, id: i64, v: String) {
        if self.map.len() >= CACHE_CAPACITY
            && let Some(old) = self.order.pop_front()
        {
            self.map.remove(&old);
        }
        if self.map.insert(id, v).is_none() {
            self.order.push_back(id);
        }
    }
}

const SELECT: &str = "SELECT payload FROM bloomlab_penetration_items WHERE id = $1";

fn payload(i: u64) -> String {
    format!("item-{i}")
}

/// Writes the valid rows (in one transaction, 500 per statement).
fn populate(db: &mut Db, config: &PenetrationConfig, progress: Progress<'_>) -> Result<()> {
    db.begin()?;
    db.batch("DELETE FROM bloomlab_penetration_items")?;
    const CHUNK: u64 = 500;
    let mut i = 0;
    while i < config.valid_ids {
        let n = CHUNK.min(config.valid_ids - i);
        let placeholders: Vec<String> = (0..n)
            .map(|j| format!("(${}, ${})", 2 * j + 1, 2 * j + 2))
            .collect();
        let sql = format!(
            "INSERT INTO bloomlab_penetration_items (id, payload) VALUES {}",
            placeholders.join(", ")
        );
        let payloads: Vec<String> = (i..i + n).map(payload).collect();
        let mut params = Vec::with_capacity(2 * n as usize);
        for (k, idx) in (i..i + n).enumerate() {
            params.push(Param::Int(id_of(config.seed, idx)));
            params.push(Param::Text(&payloads[k]));
        }
        db.exec(&sql, &params)?;
        i += n;
        progress("penetration: writing valid ids", i, config.valid_ids);
    }
    db.commit()
}

/// Runs the unguarded mode and one guarded mode per p; checks every answer and the table.
pub fn run(config: &PenetrationConfig, progress: Progress<'_>) -> Result<PenetrationOutcome> {
    config.check()?;
    let mut db = Db::connect(&config.db)?;
    db.ensure_table(&TABLE, &[])?;
    let db_version = db.version()?;
    populate(&mut db, config, progress)?;
    let counts = db.rows(
        "SELECT COUNT(*), COUNT(DISTINCT id) FROM bloomlab_penetration_items",
        &[],
    )?;
    let (rows_in_db, distinct) = (
        counts[0][0].int().unwrap_or(-1),
        counts[0][1].int().unwrap_or(-1),
    );
    if rows_in_db != config.valid_ids as i64 || distinct != rows_in_db {
        return Err(ScenarioError::Verification(format!(
            "after writing {} valid ids the table holds {rows_in_db} rows, {distinct} distinct ids",
            config.valid_ids
        )));
    }
    let mut rows = Vec::new();
    let modes: Vec<Option<f64>> = std::iter::once(None)
        .chain(config.ps.iter().map(|&p| Some(p)))
        .collect();
    let mut interrupted = None;
    let stop = |rows: &[ModeRow], during: String, e: &ScenarioError| Interruption {
        modes_done: rows.len(),
        modes: modes.len(),
        during,
        cause: e.to_string(),
    };
    for &p in &modes {
        match run_mode(config, &mut db, p, progress) {
            Ok(r) => rows.push(r),
            // A failure of the database after a mode was measured keeps the modes measured.
            Err(e) if is_database_failure(&e) && !rows.is_empty() => {
                let during = match p {
                    None => "the unguarded mode".to_owned(),
                    Some(p) => format!("the guarded mode at p = {p}"),
                };
                interrupted = Some(stop(&rows, during, &e));
                break;
            }
            Err(e) => return Err(e),
        }
    }
    let mut end = rows_in_db;
    if interrupted.is_none() {
        match db.int("SELECT COUNT(*) FROM bloomlab_penetration_items", &[]) {
            Ok(n) => end = n,
            Err(e) if is_database_failure(&e) => {
                interrupted = Some(stop(&rows, "the end check".to_owned(), &e));
            }
            Err(e) => return Err(e),
        }
    }
    if end != config.valid_ids as i64 {
        return Err(ScenarioError::Verification(format!(
            "the table holds {end} rows at the end; {} were written",
            config.valid_ids
        )));
    }
    if interrupted.is_some() {
        for r in &mut rows {
            r.run_status = "interrupted";
        }
    }
    Ok(PenetrationOutcome {
        settings: config.settings(),
        db_version,
        rows,
        rows_in_db: end as u64,
        interrupted,
    })
}

/// A mode's tallies while its requests are served.
struct ModeTally {
    all: Histogram,
    attack: Histogram,
    valid: Histogram,
    db_queries: Histogram,
    attacks: u64,
    reached: u64,
    hits: u64,
}

/// The filter of the valid ids a guarded mode at `p` asks first (`None`: unguarded).
fn guard(config: &PenetrationConfig, p: Option<f64>) -> Result<Option<Box<dyn Filter>>> {
    let Some(p) = p else {
        return Ok(None);
    };
    let mut f = registry::build(
        config.filter.name(),
        Spec::Target {
            n: config.valid_ids,
            p,
        },
    )?;
    for i in 0..config.valid_ids {
        f.insert(&id_of(config.seed, i));
    }
    Ok(Some(f))
}

fn run_mode(
    config: &PenetrationConfig,
    db: &mut Db,
    p: Option<f64>,
    progress: Progress<'_>,
) -> Result<ModeRow> {
    let filter = guard(config, p)?;
    let mut rng = Pcg64Mcg::seed_from_u64(derive_seed(config.seed, "penetration-requests"));
    let hot = (config.valid_ids / 100).max(1);
    let mut cache = Cache::new();
    let mut tally = ModeTally {
        all: Histogram::new(),
        attack: Histogram::new(),
        valid: Histogram::new(),
        db_queries: Histogram::new(),
        attacks: 0,
        reached: 0,
        hits: 0,
    };
    let mut next_attack = config.valid_ids;
    let label = match p {
        None => "penetration: unguarded".to_owned(),
        Some(p) => format!("penetration: guarded, p = {p}"),
    };
    let started = Instant::now();
    for r in 0..config.requests {
        let is_attack = rng.random_bool(config.attack_share);
        let index = if is_attack {
            next_attack += 1;
            next_attack - 1
        } else if rng.random_bool(0.5) {
            rng.random_range(0..hot)
        } else {
            rng.random_range(0..config.valid_ids)
        };
        let id = id_of(config.seed, index);
        let t = Instant::now();
        let (pass, answer, asked_db) = serve(filter.as_deref(), &mut cache, db, id, &mut tally)?;
        let took = t.elapsed();
        tally.all.record(took);
        if is_attack {
            tally.attacks += 1;
            tally.reached += u64::from(asked_db);
            tally.attack.record(took);
        } else {
            tally.valid.record(took);
        }
        check_answer(r, index, id, is_attack, pass, answer.as_deref())?;
        if r % 4096 == 0 {
            progress(&label, r, config.requests);
        }
    }
    let wall = started.elapsed().as_secs_f64();
    Ok(mode_row(config, p, filter.as_deref(), &tally, wall))
}

/// Serves a request for `id`: the filter (if any) first, then the cache, then the database
/// (a found row is cached). Returns whether the filter let it pass, the answer, and whether the
/// database was asked.
fn serve(
    filter: Option<&dyn Filter>,
    cache: &mut Cache,
    db: &mut Db,
    id: i64,
    tally: &mut ModeTally,
) -> Result<(bool, Option<String>, bool)> {
    let pass = filter.is_none_or(|f| f.contains(&id));
    let mut answer: Option<String> = None;
    let mut asked_db = false;
    if pass {
        if let Some(v) = cache.get(id) {
            tally.hits += 1;
            answer = Some(v.clone());
        } else {
            let q = Instant::now();
            let found = db.rows(SELECT, &[Param::Int(id)])?;
            tally.db_queries.record(q.elapsed());
            asked_db = true;
            if let Some(Value::Text(v)) = found.first().and_then(|r| r.first()) {
                cache.put(id, v.clone());
                answer = Some(v.clone());
            }
        }
    }
    Ok((pass, answer, asked_db))
}

/// Checks request `r`'s answer: nothing for an attack id, its row's payload for a valid one.
fn check_answer(
    r: u64,
    index: u64,
    id: i64,
    is_attack: bool,
    pass: bool,
    answer: Option<&str>,
) -> Result<()> {
    if is_attack {
        if answer.is_some() {
            return Err(ScenarioError::Verification(format!(
                "request {r}: id {id}, which never existed, returned a row"
            )));
        }
    } else {
        let want = payload(index);
        if answer != Some(want.as_str()) {
            return Err(ScenarioError::Verification(format!(
                "request {r}: valid id {id} returned {answer:?} instead of {want:?} ({})",
                if pass {
                    "lost in the database"
                } else {
                    "a filter false negative"
                }
            )));
        }
    }
    Ok(())
}

/// The CSV row of a mode: the attack share reaching the database with its exact interval and
/// the claim's verdict, latencies and load.
fn mode_row(
    config: &PenetrationConfig,
    p: Option<f64>,
    filter: Option<&dyn Filter>,
    t: &ModeTally,
    wall: f64,
) -> ModeRow {
    let share = t.reached as f64 / t.attacks.max(1) as f64;
    let (lo, hi) = if t.attacks > 0 {
        clopper_pearson(t.reached, t.attacks, CONFIDENCE)
    } else {
        (0.0, 1.0)
    };
    let claim = match p {
        None => String::new(),
        // Eliminated share = 1 - reached share; its interval is [1 - hi, 1 - lo].
        Some(_) if 1.0 - hi > 0.99 => "holds".into(),
        Some(_) if 1.0 - lo <= 0.99 => "fails".into(),
        Some(_) => "undecided".into(),
    };
    ModeRow {
        backend: config.db.backend().to_owned(),
        mode: if p.is_some() { "guarded" } else { "unguarded" }.to_owned(),
        filter: if p.is_some() {
            config.filter.to_string()
        } else {
            String::new()
        },
        p: p.unwrap_or(0.0),
        requests: config.requests,
        attack_requests: t.attacks,
        attack_reached_db: t.reached,
        attack_reached_share: share,
        ci_low: lo,
        ci_high: hi,
        fpr_given_bits: filter.map_or(0.0, |f| f.fpr_given_bits()),
        eliminated_share: 1.0 - share,
        claim_99: claim,
        db_queries: t.db_queries.count(),
        db_queries_per_request: t.db_queries.count() as f64 / config.requests as f64,
        cache_hits: t.hits,
        db_query_ns_mean: t.db_queries.mean_ns(),
        p50_ns: t.all.quantile_ns(0.5),
        p99_ns: t.all.quantile_ns(0.99),
        attack_p50_ns: t.attack.quantile_ns(0.5),
        attack_p99_ns: t.attack.quantile_ns(0.99),
        valid_p50_ns: t.valid.quantile_ns(0.5),
        valid_p99_ns: t.valid.quantile_ns(0.99),
        wall_s: wall,
        filter_bytes: filter.map_or(0, |f| f.memory_bytes() as u64),
        run_status: "complete",
    }
}

/// Writes `penetration.csv`, `penetration.png` and `summary.md` into `dir`
/// ([`bloomlab_report::scenario::penetration::write`]).
pub fn write_report(o: &PenetrationOutcome, dir: &std::path::Path, revision: &str) -> Result<()> {
    Ok(bloomlab_report::scenario::penetration::write(
        o, dir, revision,
    )?)
}

/// The error a run the database interrupted ends in, once its report is written at `summary`:
/// where and why it stopped and how to resume. `None` for a complete run.
pub fn interrupted_error(
    o: &PenetrationOutcome,
    summary: &std::path::Path,
) -> Option<ScenarioError> {
    let i = o.interrupted.as_ref()?;
    Some(ScenarioError::Interrupted(format!(
        "{}: {}\nTo resume: bring {} back and run the same command again (it rewrites the table \
         and measures every mode).\nThe modes measured are reported, marked interrupted: {}",
        i.summary(),
        i.cause,
        o.settings.database,
        summary.display()
    )))
}
