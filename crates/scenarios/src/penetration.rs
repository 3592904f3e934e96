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

use bloomlab_filters::{FilterExt, Spec, registry};
use bloomlab_harness::keys::derive_seed;
use bloomlab_harness::stats::clopper_pearson;
use rand::{RngExt as _, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::Serialize;

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
    pub filter: String,
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
    pub fn new(db: DbUrl, filter: &str, ps: Vec<f64>) -> Self {
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
            registry::sized_bytes(&self.filter, self.valid_ids, p)?;
        }
        check_count("--valid-ids", self.valid_ids, 1, 100_000_000)?;
        check_count("--requests", self.requests, 1, 1_000_000_000)?;
        check_share("--attack-share", self.attack_share)
    }
}

/// One mode: a CSV row.
#[derive(Debug, Clone, Serialize)]
pub struct ModeRow {
    /// `SQLite` or `PostgreSQL`.
    pub backend: String,
    /// `unguarded` or `guarded`.
    pub mode: String,
    /// The filter (empty when unguarded).
    pub filter: String,
    /// Target rate (0 when unguarded).
    pub p: f64,
    /// Requests served.
    pub requests: u64,
    /// Of which for never-existing ids.
    pub attack_requests: u64,
    /// Attack requests that reached the database.
    pub attack_reached_db: u64,
    /// Their share.
    pub attack_reached_share: f64,
    /// Its exact interval, lower end.
    pub ci_low: f64,
    /// Upper end.
    pub ci_high: f64,
    /// The filter's own FPR given its bits (0 when unguarded).
    pub fpr_given_bits: f64,
    /// Share of attack requests eliminated before the database.
    pub eliminated_share: f64,
    /// `holds`, `fails` or `undecided` for "> 99% eliminated" (empty when unguarded).
    pub claim_99: String,
    /// Database queries made.
    pub db_queries: u64,
    /// Database queries per request.
    pub db_queries_per_request: f64,
    /// Cache hits.
    pub cache_hits: u64,
    /// Mean database query latency, ns.
    pub db_query_ns_mean: f64,
    /// Median request latency, ns (all requests).
    pub p50_ns: u64,
    /// 99th percentile request latency, ns.
    pub p99_ns: u64,
    /// Median latency of attack requests, ns.
    pub attack_p50_ns: u64,
    /// 99th percentile latency of attack requests, ns.
    pub attack_p99_ns: u64,
    /// Median latency of valid requests, ns.
    pub valid_p50_ns: u64,
    /// 99th percentile latency of valid requests, ns.
    pub valid_p99_ns: u64,
    /// Wall time of the mode, s.
    pub wall_s: f64,
    /// Filter bytes (0 when unguarded).
    pub filter_bytes: u64,
    /// `complete`, or `interrupted` on every row of a run that stopped before its last mode (the
    /// summary says where and why).
    pub run_status: &'static str,
}

/// Where and why a run stopped before its last mode.
#[derive(Debug, Clone)]
pub struct Interruption {
    /// Modes measured whole before the failure (the rows).
    pub modes_done: usize,
    /// Modes the run was to measure (unguarded + one per p).
    pub modes: usize,
    /// The mode that failed (`the guarded mode at p = 0.001`) or `the end check`.
    pub during: String,
    /// The database's error.
    pub cause: String,
}

impl Interruption {
    /// "interrupted after N of M modes (MODE failed)".
    pub fn summary(&self) -> String {
        format!(
            "interrupted after {} of {} modes ({} failed)",
            self.modes_done, self.modes, self.during
        )
    }
}

/// A run's results.
#[derive(Debug, Clone)]
pub struct PenetrationOutcome {
    /// The settings.
    pub config: PenetrationConfig,
    /// The database's version.
    pub db_version: String,
    /// The unguarded mode, then one guarded mode per p.
    pub rows: Vec<ModeRow>,
    /// Rows in the table at the end (`COUNT(*)`, verified; the count after writing them when
    /// the run was interrupted).
    pub rows_in_db: u64,
    /// Set when the database failed after at least one mode was measured: the rows are the
    /// modes measured before that.
    pub interrupted: Option<Interruption>,
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
        config: config.clone(),
        db_version,
        rows,
        rows_in_db: end as u64,
        interrupted,
    })
}

fn run_mode(
    config: &PenetrationConfig,
    db: &mut Db,
    p: Option<f64>,
    progress: Progress<'_>,
) -> Result<ModeRow> {
    let filter = match p {
        None => None,
        Some(p) => {
            let mut f = registry::build(
                &config.filter,
                Spec::Target {
                    n: config.valid_ids,
                    p,
                },
            )?;
            for i in 0..config.valid_ids {
                f.insert(&id_of(config.seed, i));
            }
            Some(f)
        }
    };
    let mut rng = Pcg64Mcg::seed_from_u64(derive_seed(config.seed, "penetration-requests"));
    let hot = (config.valid_ids / 100).max(1);
    let mut cache = Cache::new();
    let (mut all, mut attack_h, mut valid_h, mut dbq) = (
        Histogram::new(),
        Histogram::new(),
        Histogram::new(),
        Histogram::new(),
    );
    let (mut attacks, mut reached, mut hits) = (0u64, 0u64, 0u64);
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
        let pass = filter.as_ref().is_none_or(|f| f.contains(&id));
        let mut answer: Option<String> = None;
        let mut asked_db = false;
        if pass {
            if let Some(v) = cache.get(id) {
                hits += 1;
                answer = Some(v.clone());
            } else {
                let q = Instant::now();
                let found = db.rows(SELECT, &[Param::Int(id)])?;
                dbq.record(q.elapsed());
                asked_db = true;
                if let Some(Value::Text(v)) = found.first().and_then(|r| r.first()) {
                    cache.put(id, v.clone());
                    answer = Some(v.clone());
                }
            }
        }
        let took = t.elapsed();
        all.record(took);
        if is_attack {
            attacks += 1;
            reached += u64::from(asked_db);
            attack_h.record(took);
            if answer.is_some() {
                return Err(ScenarioError::Verification(format!(
                    "request {r}: id {id}, which never existed, returned a row"
                )));
            }
        } else {
            valid_h.record(took);
            let want = payload(index);
            if answer.as_deref() != Some(want.as_str()) {
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
        if r % 4096 == 0 {
            progress(&label, r, config.requests);
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let share = reached as f64 / attacks.max(1) as f64;
    let (lo, hi) = if attacks > 0 {
        clopper_pearson(reached, attacks, CONFIDENCE)
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
    Ok(ModeRow {
        backend: config.db.backend().to_owned(),
        mode: if p.is_some() { "guarded" } else { "unguarded" }.to_owned(),
        filter: if p.is_some() {
            config.filter.clone()
        } else {
            String::new()
        },
        p: p.unwrap_or(0.0),
        requests: config.requests,
        attack_requests: attacks,
        attack_reached_db: reached,
        attack_reached_share: share,
        ci_low: lo,
        ci_high: hi,
        fpr_given_bits: filter.as_ref().map_or(0.0, |f| f.fpr_given_bits()),
        eliminated_share: 1.0 - share,
        claim_99: claim,
        db_queries: dbq.count(),
        db_queries_per_request: dbq.count() as f64 / config.requests as f64,
        cache_hits: hits,
        db_query_ns_mean: dbq.mean_ns(),
        p50_ns: all.quantile_ns(0.5),
        p99_ns: all.quantile_ns(0.99),
        attack_p50_ns: attack_h.quantile_ns(0.5),
        attack_p99_ns: attack_h.quantile_ns(0.99),
        valid_p50_ns: valid_h.quantile_ns(0.5),
        valid_p99_ns: valid_h.quantile_ns(0.99),
        wall_s: wall,
        filter_bytes: filter.as_ref().map_or(0, |f| f.memory_bytes() as u64),
        run_status: "complete",
    })
}

/// The CSV.
pub const CSV_NAME: &str = "penetration.csv";
/// The picture.
pub const PNG_NAME: &str = "penetration.png";
/// The report.
pub const SUMMARY_NAME: &str = "summary.md";

/// Writes `penetration.csv`, `penetration.png` and `summary.md` into `dir`.
pub fn write_report(o: &PenetrationOutcome, dir: &std::path::Path, revision: &str) -> Result<()> {
    use crate::output::{dur_ns, sig, write_csv, write_text};
    use crate::plot::{HLine, Panel, Series, draw};
    use bloomlab_report::markdown::table;
    let dirty = bloomlab_report::markdown::dirty_warning([revision]);
    crate::output::prepare_dir(dir)?;
    write_csv(&dir.join(CSV_NAME), &o.rows)?;
    let c = &o.config;
    let guarded: Vec<&ModeRow> = o.rows.iter().filter(|r| r.mode == "guarded").collect();
    let unguarded = o.rows.iter().find(|r| r.mode == "unguarded");
    let by_p =
        |f: &dyn Fn(&ModeRow) -> f64| guarded.iter().map(|r| (r.p, f(r))).collect::<Vec<_>>();
    draw(
        &dir.join(PNG_NAME),
        &format!(
            "{}Cache penetration on {}: {} valid ids, {:.0}% attack requests, {}",
            o.interrupted.as_ref().map_or(String::new(), |i| format!(
                "INTERRUPTED ({} of {} modes): ",
                i.modes_done, i.modes
            )),
            c.db.backend(),
            c.valid_ids,
            c.attack_share * 100.0,
            c.filter
        ),
        &[
            Panel {
                title: "Attack requests reaching the database (x = target p)".into(),
                x_label: "target p".into(),
                y_label: "share of attack requests".into(),
                log_y: true,
                series: vec![
                    Series {
                        name: "observed share".into(),
                        points: by_p(&|r| r.attack_reached_share),
                        color: 1,
                    },
                    Series {
                        name: "95% interval, high".into(),
                        points: by_p(&|r| r.ci_high),
                        color: 5,
                    },
                    Series {
                        name: "95% interval, low".into(),
                        points: by_p(&|r| r.ci_low),
                        color: 5,
                    },
                    Series {
                        name: "filter's own rate given its bits".into(),
                        points: by_p(&|r| r.fpr_given_bits),
                        color: 2,
                    },
                    Series {
                        name: "target p".into(),
                        points: by_p(&|r| r.p),
                        color: 4,
                    },
                ],
                hlines: vec![
                    HLine {
                        name: "1%: the \"> 99% eliminated\" line".into(),
                        y: 0.01,
                    },
                    HLine {
                        name: "unguarded (every attack request)".into(),
                        y: unguarded.map_or(1.0, |u| u.attack_reached_share),
                    },
                ],
            },
            Panel {
                title: "Request latency (x = target p; unguarded dashed)".into(),
                x_label: "target p".into(),
                y_label: "ns".into(),
                log_y: true,
                series: vec![
                    Series {
                        name: "p50, guarded".into(),
                        points: by_p(&|r| r.p50_ns as f64),
                        color: 0,
                    },
                    Series {
                        name: "p99, guarded".into(),
                        points: by_p(&|r| r.p99_ns as f64),
                        color: 1,
                    },
                ],
                hlines: unguarded
                    .map(|u| {
                        vec![
                            HLine {
                                name: format!("p50 unguarded ({})", dur_ns(u.p50_ns as f64)),
                                y: u.p50_ns as f64,
                            },
                            HLine {
                                name: format!("p99 unguarded ({})", dur_ns(u.p99_ns as f64)),
                                y: u.p99_ns as f64,
                            },
                        ]
                    })
                    .unwrap_or_default(),
            },
        ],
    )?;

    let mut md = format!(
        "# Cache penetration against {}\n\n\
         {dirty}Generated by `scenario penetration` (revision {revision}); regenerate, do not edit.\n\n",
        c.db.backend(),
    );
    if let Some(i) = &o.interrupted {
        md.push_str(&format!(
            "**Interrupted: not a complete run.** The run was {}: {}\n\n\
             What follows covers only the modes measured before it stopped (every CSV row says \
             `interrupted`). To resume: bring the database back and run the same command again \
             (it rewrites the table and measures every mode).\n\n",
            i.summary(),
            i.cause
        ));
    }
    md.push_str(&format!(
        "- Database: {} ({}); {} valid ids (rows), verified with `COUNT(*)` and \
         `COUNT(DISTINCT id)` {}.\n\
         - Requests: {} per mode (seed {}), {:.0}% for ids that never existed (each distinct), the \
         rest for valid ids (half of them among a hot 1%).\n\
         - Serving: cache ({} entries, oldest evicted first, emptied per mode) then the database; \
         guarded modes ask the filter `{}` (sized for the valid ids at p) first.\n\
         - Every valid request returned its row and every attack request nothing (checked per \
         request; a miss would have failed the run).\n\n",
        o.db_version,
        c.db.backend(),
        c.valid_ids,
        if o.interrupted.is_some() {
            "after writing them (the end check did not run: interrupted)"
        } else {
            "before and after"
        },
        c.requests,
        c.seed,
        c.attack_share * 100.0,
        CACHE_CAPACITY,
        c.filter
    ));
    md.push_str("## Attack traffic reaching the database\n\n");
    let rows: Vec<Vec<String>> = o
        .rows
        .iter()
        .map(|r| {
            vec![
                if r.mode == "guarded" {
                    format!("guarded, p = {}", r.p)
                } else {
                    "unguarded".into()
                },
                r.attack_requests.to_string(),
                r.attack_reached_db.to_string(),
                sig(r.attack_reached_share, 4),
                format!("[{}, {}]", sig(r.ci_low, 3), sig(r.ci_high, 3)),
                if r.mode == "guarded" {
                    sig(r.fpr_given_bits, 3)
                } else {
                    String::new()
                },
                format!("{}%", sig(r.eliminated_share * 100.0, 5)),
                r.claim_99.clone(),
            ]
        })
        .collect();
    md.push_str(&table(
        &[
            "mode",
            "attack requests",
            "reached the DB",
            "share",
            "95% interval (Clopper-Pearson)",
            "filter's own FPR given bits",
            "eliminated",
            "\"> 99% eliminated\"",
        ],
        &rows,
    ));
    md.push_str(
        "\nThe claim *holds* when the whole interval of the eliminated share lies above 99%, \
         *fails* when it lies at or below 99%, and is *undecided* otherwise. The share reaching \
         the database is the filter's false-positive rate on never-seen ids, so it should lie \
         near the filter's own rate given its bits, not exactly at the target p.\n\n",
    );
    md.push_str("## Latency and database load\n\n");
    let rows: Vec<Vec<String>> = o
        .rows
        .iter()
        .map(|r| {
            vec![
                if r.mode == "guarded" {
                    format!("guarded, p = {}", r.p)
                } else {
                    "unguarded".into()
                },
                dur_ns(r.p50_ns as f64),
                dur_ns(r.p99_ns as f64),
                dur_ns(r.attack_p50_ns as f64),
                dur_ns(r.attack_p99_ns as f64),
                dur_ns(r.valid_p50_ns as f64),
                dur_ns(r.valid_p99_ns as f64),
                r.db_queries.to_string(),
                sig(r.db_queries_per_request, 3),
                dur_ns(r.db_query_ns_mean),
                r.cache_hits.to_string(),
                format!("{} s", sig(r.wall_s, 3)),
            ]
        })
        .collect();
    md.push_str(&table(
        &[
            "mode",
            "p50 all",
            "p99 all",
            "p50 attack",
            "p99 attack",
            "p50 valid",
            "p99 valid",
            "DB queries",
            "DB queries / request",
            "mean DB query",
            "cache hits",
            "wall",
        ],
        &rows,
    ));
    md.push_str(&format!(
        "\n![attack share and latency]({PNG_NAME})\n\n\
         ## How to read it\n\n\
         - Latencies are per request, measured around the whole serving path (filter, cache, \
         database), recorded in histograms (quantiles within 0.8%).\n\
         - *DB queries / request* is the database load; unguarded, every attack request is a \
         query, since a miss cannot be cached.\n\
         - Data: [{CSV_NAME}]({CSV_NAME}) (one row per mode).\n"
    ));
    write_text(&dir.join(SUMMARY_NAME), &md)
}
