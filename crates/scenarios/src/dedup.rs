//! De-duplicating ingestion, the chapter's workload run for real.
//!
//! **The claim.** "At 50,000 articles a day with 70% duplicates, checking the filter first (82 ns)
//! and confirming positives in the database (2 ms) cuts dedup query time from 100 seconds to
//! about 705 ms": 50,000 filter checks at 82 ns plus 350 false positives at 2 ms, against 50,000
//! database lookups at 2 ms.
//!
//! **The workload.** Every day, [`DedupConfig::per_day`] articles arrive; a share
//! [`DedupConfig::duplicate_share`] of them repeats an article seen before (uniformly chosen among
//! all distinct articles so far, the same day included), the rest are new. An article is a
//! generated title and body (a few hundred bytes, seeded), keyed by SHA-256 of
//! `title + "\n" + body`. The stream is the same, article for article, in both modes.
//!
//! **Two modes**, each on an emptied table:
//! - `no-filter`: every article is looked up in the database by hash
//!   (`SELECT 1 ... WHERE hash = $1`, a prepared statement on the primary key); a new one is
//!   inserted.
//! - `filter`: the filter is asked first. A negative is certainly new: it is inserted without a
//!   lookup. A positive is confirmed in the database: a duplicate (found) is dropped, a false
//!   positive (not found) is inserted. Nothing is lost, and this is where the chapter's arithmetic
//!   stops short: every duplicate is a positive, so at 70% duplicates the filter avoids only the
//!   lookups of the new articles; the chapter's model counts only the false positives' lookups.
//!
//! Each day is one transaction (lookups and inserts), so an interrupted run leaves whole days.
//! When the database fails after at least one day was measured (the server stops, the disk
//! fills), [`run`] still returns the days measured, with [`DedupOutcome::interrupted`] saying
//! where and why it stopped; [`write_report`] marks such a report (and every CSV row) as an
//! interrupted run, never as a complete one. A failure before any day was measured is an error.
//!
//! **Measured per day**: database lookups made and avoided, false positives, every lookup's and
//! insert's latency (histograms), the filter's time per check (a separate tight pass over the
//! day's hashes after the day, median of 3 passes, so that clock reads do not inflate an 80 ns
//! figure), wall time and time per article, the filter's fill ratio and its own FPR given its bits.
//! A fill-ratio monitor alerts on the first day that ends past [`DedupConfig::fill_alert`]: the
//! filter is sized for [`DedupConfig::capacity`] distinct articles, fewer than the run brings, so
//! the run shows the alert and what happens to the false positives after it.
//!
//! **End state** (each mode): `SELECT COUNT(*), COUNT(DISTINCT hash)` must both equal the number
//! of distinct articles generated, every row's hash must be the SHA-256 of its stored title and
//! body, and the set of stored hashes must be exactly the generated distinct ones. Anything else
//! is [`ScenarioError::Verification`].

use std::collections::HashSet;
use std::time::Instant;

use bloomlab_filters::{Filter, FilterExt, Spec, registry};
use bloomlab_harness::keys::derive_seed;
use rand::{RngExt as _, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::Serialize;
use sha2::{Digest as _, Sha256};

use crate::db::{ColType, Db, DbUrl, Param, TableSpec};
use crate::error::{Result, ScenarioError};
use crate::latency::Histogram;
use crate::{Progress, check_count, check_p, check_share, is_database_failure};

/// The scenario's table.
pub const TABLE: TableSpec = TableSpec {
    name: "bloomlab_dedup_articles",
    columns: &[
        ("hash", ColType::Bytes),
        ("title", ColType::Text),
        ("body", ColType::Text),
        ("day", ColType::Int),
    ],
};

/// Days in the default run: 500,000 articles per mode, about a minute on SQLite.
pub const DEFAULT_DAYS: u64 = 10;
/// Distinct articles the default filter is sized for: fewer than the 150,000 the default run
/// brings (15,000 a day), so the fill-ratio monitor fires during the run (about day 7).
pub const DEFAULT_CAPACITY: u64 = 100_000;
/// The chapter's figures, shown next to the measurements.
pub const CHAPTER_FILTER_NS: f64 = 82.0;
/// The chapter's database confirmation latency (2 ms).
pub const CHAPTER_DB_NS: f64 = 2e6;

/// The settings of a run.
#[derive(Debug, Clone)]
pub struct DedupConfig {
    /// The database of record.
    pub db: DbUrl,
    /// Registry name of the filter.
    pub filter: String,
    /// Target false-positive rate the filter is sized for.
    pub p: f64,
    /// Days of ingestion (1 to 3,650).
    pub days: u64,
    /// Articles per day (1 to 10^7); the chapter's 50,000 by default.
    pub per_day: u64,
    /// Share of each day's articles that repeat an earlier article, in (0, 1); 0.7 by default.
    pub duplicate_share: f64,
    /// Distinct articles the filter is sized for.
    pub capacity: u64,
    /// Fill ratio past which the monitor calls for a rebuild, in (0, 1); 0.5 by default.
    pub fill_alert: f64,
    /// Seed of the article stream.
    pub seed: u64,
}

impl DedupConfig {
    /// The chapter's workload on `db` with the given filter and rate, for [`DEFAULT_DAYS`].
    pub fn new(db: DbUrl, filter: &str, p: f64) -> Self {
        DedupConfig {
            db,
            filter: filter.to_owned(),
            p,
            days: DEFAULT_DAYS,
            per_day: 50_000,
            duplicate_share: 0.7,
            capacity: DEFAULT_CAPACITY,
            fill_alert: 0.5,
            seed: 2024,
        }
    }

    /// Checks every setting and that the filter can be built; names the value and its range.
    pub fn check(&self) -> Result<()> {
        check_p(self.p)?;
        check_count("--days", self.days, 1, 3650)?;
        check_count("--per-day", self.per_day, 1, 10_000_000)?;
        check_count("--capacity", self.capacity, 1, 1 << 40)?;
        check_share("--duplicate-share", self.duplicate_share)?;
        check_share("--fill-alert", self.fill_alert)?;
        registry::sized_bytes(&self.filter, self.capacity, self.p)?;
        Ok(())
    }

    fn new_per_day(&self) -> u64 {
        let dup = (self.per_day as f64 * self.duplicate_share).round() as u64;
        (self.per_day - dup.min(self.per_day)).max(1)
    }
}

/// How duplicates are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Every article is looked up in the database.
    NoFilter,
    /// The filter first; positives confirmed in the database.
    Filter,
}

impl Mode {
    /// The name in the CSV and the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::NoFilter => "no-filter",
            Mode::Filter => "filter",
        }
    }
}

/// One day of one mode: a CSV row.
#[derive(Debug, Clone, Serialize)]
pub struct DayRow {
    /// `SQLite` or `PostgreSQL`.
    pub backend: String,
    /// `no-filter` or `filter`.
    pub mode: Mode,
    /// The filter's registry name (also in `no-filter` rows, for grouping).
    pub filter: String,
    /// Target rate the filter was sized for.
    pub p: f64,
    /// Day, from 1.
    pub day: u64,
    /// Articles that arrived.
    pub articles: u64,
    /// Of which new (never seen before).
    pub new_articles: u64,
    /// Of which duplicates.
    pub duplicates: u64,
    /// Filter answers "maybe present" (0 without the filter).
    pub filter_positives: u64,
    /// Lookups sent to the database.
    pub db_lookups: u64,
    /// Lookups the filter made unnecessary (articles it answered "certainly new").
    pub db_lookups_avoided: u64,
    /// Filter positives the database did not confirm.
    pub false_positives: u64,
    /// False positives per new article: the filter's observed FPR this day.
    pub observed_fpr: f64,
    /// Rows inserted.
    pub inserts: u64,
    /// Mean database lookup latency, ns.
    pub lookup_ns_mean: f64,
    /// Median lookup latency, ns.
    pub lookup_ns_p50: u64,
    /// 99th percentile lookup latency, ns.
    pub lookup_ns_p99: u64,
    /// Mean latency of lookups that found the article (duplicates), ns.
    pub lookup_found_ns_mean: f64,
    /// Mean latency of lookups that did not (new articles, false positives), ns.
    pub lookup_missing_ns_mean: f64,
    /// Mean insert latency, ns.
    pub insert_ns_mean: f64,
    /// Commit of the day's transaction, ns.
    pub commit_ns: u64,
    /// The filter's time per check (tight pass, median of 3), ns; 0 without the filter.
    pub filter_ns: f64,
    /// Dedup query time: the filter's checks (filter_ns x articles) plus the measured lookups, s.
    pub dedup_query_s: f64,
    /// Wall time of the day (generation, hashing, checks, inserts, commit), s.
    pub wall_s: f64,
    /// Wall time per article, ns.
    pub ns_per_article: f64,
    /// Distinct articles in the database after the day (SQL count in the day's transaction, just
    /// before its commit).
    pub rows_in_db: u64,
    /// Fill ratio of the filter after the day (0 without the filter).
    pub fill_ratio: f64,
    /// The filter's own FPR given its bits after the day (0 without the filter).
    pub fpr_given_bits: f64,
    /// Whether the fill ratio is past the monitor's threshold after this day.
    pub fill_alert: bool,
    /// `complete`, or `interrupted` on every row of a run that stopped before its end (the
    /// summary says after which day and why).
    pub run_status: &'static str,
}

/// Where and why a run stopped before its end.
#[derive(Debug, Clone)]
pub struct Interruption {
    /// The mode that was running.
    pub mode: Mode,
    /// Days of that mode committed and measured: the database holds its days 1 to this, each
    /// whole (one transaction a day).
    pub committed_days: u64,
    /// What failed: `day D`, `the commit of day D` (the commit's fate is unknown: the database
    /// holds days 1 to D-1, or 1 to D if the commit reached it), `emptying the table` or `the
    /// end-state check`.
    pub during: String,
    /// Whether the failure was at a day's commit (see `during`).
    pub at_commit: bool,
    /// The database's error.
    pub cause: String,
}

/// What the end-state check found for one mode.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The mode.
    pub mode: Mode,
    /// Distinct articles generated.
    pub expected: u64,
    /// `COUNT(*)`.
    pub rows: u64,
    /// `COUNT(DISTINCT hash)`.
    pub distinct_hashes: u64,
}

/// A run's results.
#[derive(Debug, Clone)]
pub struct DedupOutcome {
    /// The settings.
    pub config: DedupConfig,
    /// The database's version string.
    pub db_version: String,
    /// One row per (mode, day).
    pub rows: Vec<DayRow>,
    /// The end state per mode (both passed, or the run would have failed).
    pub verified: Vec<Verified>,
    /// The first day the fill-ratio monitor alerted, if any.
    pub alert_day: Option<u64>,
    /// Set when the run stopped part-way: the rows are the days measured before that.
    pub interrupted: Option<Interruption>,
    /// The filter's bits, probes and bytes.
    pub filter_bits: u64,
    /// Probes per key.
    pub filter_hashes: u32,
    /// Bytes the filter holds.
    pub filter_bytes: usize,
}

const WORDS: [&str; 32] = [
    "market",
    "river",
    "council",
    "energy",
    "report",
    "storm",
    "league",
    "vaccine",
    "budget",
    "election",
    "harbour",
    "festival",
    "research",
    "drought",
    "airline",
    "museum",
    "protest",
    "satellite",
    "factory",
    "treaty",
    "school",
    "wildfire",
    "merger",
    "orchestra",
    "glacier",
    "startup",
    "railway",
    "verdict",
    "harvest",
    "summit",
    "bridge",
    "archive",
];

/// Writes article `id`'s title and body (deterministic in `seed` and `id`).
fn article(seed: u64, id: u64, title: &mut String, body: &mut String) {
    use std::fmt::Write as _;
    let mut rng = Pcg64Mcg::seed_from_u64(
        derive_seed(seed, "article") ^ id.wrapping_mul(0x9e37_79b9_7f4a_7c15),
    );
    title.clear();
    body.clear();
    let _ = write!(title, "Article {id}:");
    for _ in 0..6 {
        title.push(' ');
        title.push_str(WORDS[rng.random_range(0..WORDS.len())]);
    }
    let words = rng.random_range(30..60);
    for i in 0..words {
        if i > 0 {
            body.push(' ');
        }
        body.push_str(WORDS[rng.random_range(0..WORDS.len())]);
    }
    let _ = write!(body, ". Reference {id}.");
}

/// SHA-256 of `title + "\n" + body`: the article's content key.
pub fn content_hash(title: &str, body: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(title.as_bytes());
    h.update(b"\n");
    h.update(body.as_bytes());
    h.finalize().into()
}

/// The ids of one day's articles, in arrival order: `new` fresh ids (from `next`) and the rest
/// duplicates, each of a uniformly chosen id among those seen before it.
fn day_stream(rng: &mut Pcg64Mcg, per_day: u64, new: u64, next: &mut u64) -> Vec<(u64, bool)> {
    let mut is_new: Vec<bool> = (0..per_day).map(|i| i < new).collect();
    for i in (1..is_new.len()).rev() {
        let j = rng.random_range(0..=i);
        is_new.swap(i, j);
    }
    if *next == 0 {
        // The very first article cannot repeat anything.
        if let Some(pos) = is_new.iter().position(|&n| n) {
            is_new.swap(0, pos);
        }
    }
    is_new
        .into_iter()
        .map(|n| {
            if n {
                *next += 1;
                (*next - 1, true)
            } else {
                (rng.random_range(0..*next), false)
            }
        })
        .collect()
}

const LOOKUP: &str = "SELECT 1 FROM bloomlab_dedup_articles WHERE hash = $1";
const INSERT: &str =
    "INSERT INTO bloomlab_dedup_articles (hash, title, body, day) VALUES ($1, $2, $3, $4)";

/// Runs both modes on `config.db` and checks each end state.
///
/// Errors: bad settings or an unusable database before anything was measured, a verification
/// failure, or a database failure before the first day was committed. A database failure after
/// that returns the days measured with [`DedupOutcome::interrupted`] set.
pub fn run(config: &DedupConfig, progress: Progress<'_>) -> Result<DedupOutcome> {
    config.check()?;
    let mut db = Db::connect(&config.db)?;
    db.ensure_table(&TABLE, &[])?;
    let db_version = db.version()?;
    let mut rows = Vec::new();
    let mut verified = Vec::new();
    let mut interrupted = None;
    // Built before the first mode, so the report can describe it even if the run stops before
    // the filter mode; it stays empty until that mode.
    let mut fresh_filter = Some(registry::build(
        &config.filter,
        Spec::Target {
            n: config.capacity,
            p: config.p,
        },
    )?);
    let filter_info = fresh_filter
        .as_ref()
        .map_or((0, 0, 0), |f| (f.bits(), f.hashes(), f.memory_bytes()));
    for mode in [Mode::NoFilter, Mode::Filter] {
        let mut filter = match mode {
            Mode::NoFilter => None,
            Mode::Filter => fresh_filter.take(),
        };
        let before = rows.len();
        let mut stage = Stage::Emptying;
        let result = db
            .batch("DELETE FROM bloomlab_dedup_articles")
            .and_then(|()| {
                run_mode(
                    config,
                    &mut db,
                    mode,
                    filter.as_deref_mut(),
                    progress,
                    &mut rows,
                    &mut stage,
                )
            })
            .and_then(|expected| {
                stage = Stage::Verifying;
                verify(&mut db, config, mode, expected)
            });
        match result {
            Ok(v) => verified.push(v),
            Err(e) if is_database_failure(&e) && !rows.is_empty() => {
                let committed_days = (rows.len() - before) as u64;
                let (during, at_commit) = match stage {
                    Stage::Emptying => ("emptying the table".to_owned(), false),
                    Stage::Day(d) => (format!("day {d}"), false),
                    Stage::Commit(d) => (format!("the commit of day {d}"), true),
                    Stage::Verifying => ("the end-state check".to_owned(), false),
                };
                interrupted = Some(Interruption {
                    mode,
                    committed_days,
                    during,
                    at_commit,
                    cause: e.to_string(),
                });
                for r in &mut rows {
                    r.run_status = "interrupted";
                }
                break;
            }
            Err(e) => return Err(e),
        }
    }
    let alert_day = rows
        .iter()
        .find(|r| r.mode == Mode::Filter && r.fill_alert)
        .map(|r| r.day);
    Ok(DedupOutcome {
        config: config.clone(),
        db_version,
        rows,
        verified,
        alert_day,
        interrupted,
        filter_bits: filter_info.0,
        filter_hashes: filter_info.1,
        filter_bytes: filter_info.2,
    })
}

/// What a mode was doing, for the interruption's message.
#[derive(Debug, Clone, Copy)]
enum Stage {
    Emptying,
    Day(u64),
    Commit(u64),
    Verifying,
}

/// Runs the days of one mode, pushing each day's row onto `rows` once its transaction has
/// committed (so on an error, `rows` holds exactly the committed days); returns the number of
/// distinct articles generated.
fn run_mode(
    config: &DedupConfig,
    db: &mut Db,
    mode: Mode,
    mut filter: Option<&mut (dyn Filter + '_)>,
    progress: Progress<'_>,
    rows: &mut Vec<DayRow>,
    stage: &mut Stage,
) -> Result<u64> {
    let mut rng = Pcg64Mcg::seed_from_u64(derive_seed(config.seed, "dedup-stream"));
    let new_per_day = config.new_per_day();
    let mut next = 0u64;
    let (mut title, mut body) = (String::new(), String::new());
    let label = format!("dedup {} ({})", mode.as_str(), config.db.backend());
    let total = config.days * config.per_day;
    for day in 1..=config.days {
        let stream = day_stream(&mut rng, config.per_day, new_per_day, &mut next);
        let mut lookups = Histogram::new();
        let (mut found_h, mut missing_h) = (Histogram::new(), Histogram::new());
        let mut inserts = Histogram::new();
        let (mut positives, mut false_pos, mut dups, mut new) = (0u64, 0u64, 0u64, 0u64);
        let mut hashes: Vec<[u8; 32]> = Vec::with_capacity(stream.len());
        *stage = Stage::Day(day);
        let start = Instant::now();
        db.begin()?;
        for (i, &(id, fresh)) in stream.iter().enumerate() {
            article(config.seed, id, &mut title, &mut body);
            let h = content_hash(&title, &body);
            hashes.push(h);
            if fresh {
                new += 1;
            } else {
                dups += 1;
            }
            let ask_db = match filter.as_deref() {
                None => true,
                Some(f) => {
                    let maybe = f.contains(&h);
                    positives += u64::from(maybe);
                    maybe
                }
            };
            let present = if ask_db {
                let t = Instant::now();
                let found = db.exists(LOOKUP, &[Param::Bytes(&h)])?;
                let took = t.elapsed();
                lookups.record(took);
                if found {
                    found_h.record(took);
                } else {
                    missing_h.record(took);
                }
                found
            } else {
                false
            };
            if present == fresh {
                return Err(ScenarioError::Verification(format!(
                    "day {day}: article {id} ({}) was {} in the database, but it is {}",
                    if ask_db {
                        "looked up"
                    } else {
                        "answered absent by the filter"
                    },
                    if present { "found" } else { "not found" },
                    if fresh { "new" } else { "a duplicate" }
                )));
            }
            if !present {
                if ask_db && filter.is_some() {
                    false_pos += 1;
                }
                let t = Instant::now();
                db.exec(
                    INSERT,
                    &[
                        Param::Bytes(&h),
                        Param::Text(&title),
                        Param::Text(&body),
                        Param::Int(day as i64),
                    ],
                )?;
                inserts.record(t.elapsed());
                if let Some(f) = filter.as_deref_mut() {
                    f.insert(&h);
                }
            }
            if i % 4096 == 0 {
                progress(&label, (day - 1) * config.per_day + i as u64, total);
            }
        }
        // Counted inside the day's transaction (this run is the table's only writer, so it is the
        // count after the commit), so that nothing can fail between the commit and the row:
        // the rows pushed are exactly the days committed. Its time is left out of the wall time.
        let count_start = Instant::now();
        let rows_in_db = db.int("SELECT COUNT(*) FROM bloomlab_dedup_articles", &[])? as u64;
        let count_time = count_start.elapsed();
        *stage = Stage::Commit(day);
        let t = Instant::now();
        db.commit()?;
        let commit_ns = t.elapsed().as_nanos() as u64;
        let wall = start.elapsed().saturating_sub(count_time).as_secs_f64();
        let (filter_ns, fill, given) = match filter.as_deref() {
            None => (0.0, 0.0, 0.0),
            Some(f) => (time_filter(f, &hashes), f.fill_ratio(), f.fpr_given_bits()),
        };
        let articles = stream.len() as u64;
        rows.push(DayRow {
            backend: config.db.backend().to_owned(),
            mode,
            filter: config.filter.clone(),
            p: config.p,
            day,
            articles,
            new_articles: new,
            duplicates: dups,
            filter_positives: positives,
            db_lookups: lookups.count(),
            db_lookups_avoided: articles - lookups.count(),
            false_positives: false_pos,
            observed_fpr: if filter.is_some() {
                false_pos as f64 / new.max(1) as f64
            } else {
                0.0
            },
            inserts: inserts.count(),
            lookup_ns_mean: lookups.mean_ns(),
            lookup_ns_p50: lookups.quantile_ns(0.5),
            lookup_ns_p99: lookups.quantile_ns(0.99),
            lookup_found_ns_mean: found_h.mean_ns(),
            lookup_missing_ns_mean: missing_h.mean_ns(),
            insert_ns_mean: inserts.mean_ns(),
            commit_ns,
            filter_ns,
            dedup_query_s: filter_ns * articles as f64 * 1e-9 + lookups.sum_s(),
            wall_s: wall,
            ns_per_article: wall * 1e9 / articles as f64,
            rows_in_db,
            fill_ratio: fill,
            fpr_given_bits: given,
            fill_alert: filter.is_some() && fill > config.fill_alert,
            run_status: "complete",
        });
    }
    progress(&label, total, total);
    Ok(next)
}

/// The filter's time per check over `hashes`: three tight passes, the median, per key.
fn time_filter(f: &dyn Filter, hashes: &[[u8; 32]]) -> f64 {
    let mut passes: Vec<f64> = (0..3)
        .map(|_| {
            let t = Instant::now();
            let mut hits = 0u64;
            for h in hashes {
                hits += u64::from(f.contains(std::hint::black_box(h)));
            }
            std::hint::black_box(hits);
            t.elapsed().as_nanos() as f64 / hashes.len().max(1) as f64
        })
        .collect();
    passes.sort_by(f64::total_cmp);
    passes[1]
}

fn verify(db: &mut Db, config: &DedupConfig, mode: Mode, expected: u64) -> Result<Verified> {
    let counts = db.rows(
        "SELECT COUNT(*), COUNT(DISTINCT hash) FROM bloomlab_dedup_articles",
        &[],
    )?;
    let (rows, distinct) = match counts.first().map(|r| (r[0].int(), r[1].int())) {
        Some((Some(a), Some(b))) => (a as u64, b as u64),
        other => {
            return Err(ScenarioError::Verification(format!(
                "{mode:?}: the count query returned {other:?}"
            )));
        }
    };
    let fail = |what: String| {
        ScenarioError::Verification(format!("{} on {}: {what}", mode.as_str(), config.db))
    };
    if rows != expected || distinct != expected {
        return Err(fail(format!(
            "the table holds {rows} rows with {distinct} distinct hashes; the run generated \
             {expected} distinct articles (lost: {}, stored twice: {})",
            expected.saturating_sub(distinct),
            rows.saturating_sub(distinct)
        )));
    }
    // Every stored row is the article its hash names, and the stored hashes are exactly the
    // generated distinct articles' (ids 0..expected).
    let (mut title, mut body) = (String::new(), String::new());
    let mut want: HashSet<[u8; 32]> = (0..expected)
        .map(|id| {
            article(config.seed, id, &mut title, &mut body);
            content_hash(&title, &body)
        })
        .collect();
    for row in db.rows("SELECT hash, title, body FROM bloomlab_dedup_articles", &[])? {
        let (crate::db::Value::Bytes(h), crate::db::Value::Text(t), crate::db::Value::Text(b)) =
            (&row[0], &row[1], &row[2])
        else {
            return Err(fail(format!("a row has unexpected types: {row:?}")));
        };
        let computed = content_hash(t, b);
        if h.as_slice() != computed {
            return Err(fail(format!(
                "the row titled {t:?} has a hash that is not SHA-256 of its title and body"
            )));
        }
        if !want.remove(&computed) {
            return Err(fail(format!(
                "the row titled {t:?} is not a generated article, or is stored twice"
            )));
        }
    }
    if !want.is_empty() {
        return Err(fail(format!(
            "{} generated articles are missing",
            want.len()
        )));
    }
    Ok(Verified {
        mode,
        expected,
        rows,
        distinct_hashes: distinct,
    })
}

/// File names in the output directory.
pub const CSV_NAME: &str = "dedup.csv";
/// The picture.
pub const PNG_NAME: &str = "dedup_days.png";
/// The report.
pub const SUMMARY_NAME: &str = "summary.md";

fn mean(rows: &[&DayRow], f: impl Fn(&DayRow) -> f64) -> f64 {
    rows.iter().map(|r| f(r)).sum::<f64>() / rows.len().max(1) as f64
}
fn sum(rows: &[&DayRow], f: impl Fn(&DayRow) -> u64) -> u64 {
    rows.iter().map(|r| f(r)).sum()
}

impl DedupOutcome {
    /// "interrupted after day D of N of the M mode": where an interrupted run stopped; `None` for
    /// a complete run.
    pub fn interruption_summary(&self) -> Option<String> {
        let i = self.interrupted.as_ref()?;
        let other = match i.mode {
            Mode::NoFilter => "the filter mode did not run".to_owned(),
            Mode::Filter => format!(
                "the no-filter mode ran all {} days and passed its end-state check",
                self.config.days
            ),
        };
        Some(if i.committed_days == 0 {
            format!(
                "interrupted in the {} mode before its first day was committed ({} failed; \
                 {other})",
                i.mode.as_str(),
                i.during
            )
        } else {
            format!(
                "interrupted after day {} of {} of the {} mode ({} failed; {other})",
                i.committed_days,
                self.config.days,
                i.mode.as_str(),
                i.during
            )
        })
    }

    /// What the database of record holds after an interrupted run, and how to get a whole run.
    pub fn resume_advice(&self) -> Option<String> {
        let i = self.interrupted.as_ref()?;
        let holds = if i.at_commit {
            format!(
                "days 1 to {} of the {} mode, each committed whole, and day {} too if its commit \
                 reached the database before it failed",
                i.committed_days,
                i.mode.as_str(),
                i.committed_days + 1
            )
        } else if i.committed_days == 0 {
            format!(
                "no day of the {} mode (each mode starts by emptying the table)",
                i.mode.as_str()
            )
        } else {
            format!(
                "days 1 to {} of the {} mode, each committed whole (one transaction a day)",
                i.committed_days,
                i.mode.as_str()
            )
        };
        Some(format!(
            "{} holds {holds}. To resume: bring the database back (restart the server, free the \
             disk) and run the same command again; each mode starts on an emptied table, so the \
             rerun measures all {} days of both modes.",
            self.config.db, self.config.days
        ))
    }
}

/// Writes `dedup.csv`, `dedup_days.png` and `summary.md` into `dir`. The report of an interrupted
/// run ([`DedupOutcome::interrupted`]) says so in its first lines, its picture's title and every
/// CSV row, and compares the two modes only over the days both measured.
pub fn write_report(o: &DedupOutcome, dir: &std::path::Path, revision: &str) -> Result<()> {
    use crate::output::{dur_ns, sig, write_csv, write_text};
    use bloomlab_report::markdown::table;
    let dirty = bloomlab_report::markdown::dirty_warning([revision]);
    crate::output::prepare_dir(dir)?;
    write_csv(&dir.join(CSV_NAME), &o.rows)?;
    let c = &o.config;
    let of = |m: Mode| o.rows.iter().filter(|r| r.mode == m).collect::<Vec<_>>();
    let (nf_all, wf_all) = (of(Mode::NoFilter), of(Mode::Filter));
    // The comparisons use the days both modes measured (all days of a complete run).
    let common = nf_all.len().min(wf_all.len());
    let (nf, wf) = (nf_all[..common].to_vec(), wf_all[..common].to_vec());
    let stopped = o.interruption_summary();

    // The picture: fill ratio, false-positive rate and dedup query time per day.
    let pts = |rows: &[&DayRow], f: &dyn Fn(&DayRow) -> f64| {
        rows.iter()
            .map(|r| (r.day as f64, f(r)))
            .collect::<Vec<_>>()
    };
    use crate::plot::{HLine, Panel, Series, draw};
    draw(
        &dir.join(PNG_NAME),
        &format!(
            "{}De-dup ingestion on {}: {} articles/day, {:.0}% duplicates, {} sized for {} at p = {}",
            o.interrupted.as_ref().map_or(String::new(), |i| format!(
                "INTERRUPTED after day {} of {} ({}): ",
                i.committed_days,
                c.days,
                i.mode.as_str()
            )),
            c.db.backend(),
            c.per_day,
            c.duplicate_share * 100.0,
            c.filter,
            c.capacity,
            c.p
        ),
        &[
            Panel {
                title: "Filter fill ratio after each day".into(),
                x_label: "day".into(),
                y_label: "fill ratio (share of bits set)".into(),
                log_y: false,
                series: vec![Series {
                    name: "fill ratio".into(),
                    points: pts(&wf_all, &|r| r.fill_ratio),
                    color: 0,
                }],
                hlines: vec![HLine {
                    name: format!("monitor alert ({})", c.fill_alert),
                    y: c.fill_alert,
                }],
            },
            Panel {
                title: "False positives among new articles".into(),
                x_label: "day".into(),
                y_label: "false-positive rate".into(),
                log_y: true,
                series: vec![
                    Series {
                        name: "observed (FPs / new articles)".into(),
                        points: pts(&wf_all, &|r| r.observed_fpr),
                        color: 1,
                    },
                    Series {
                        name: "filter's own rate given its bits".into(),
                        points: pts(&wf_all, &|r| r.fpr_given_bits),
                        color: 2,
                    },
                ],
                hlines: vec![HLine {
                    name: format!("target p = {}", c.p),
                    y: c.p,
                }],
            },
            Panel {
                title: "Dedup query time per day (filter + DB lookups)".into(),
                x_label: "day".into(),
                y_label: "seconds".into(),
                log_y: true,
                series: vec![
                    Series {
                        name: "without filter".into(),
                        points: pts(&nf_all, &|r| r.dedup_query_s),
                        color: 3,
                    },
                    Series {
                        name: "with filter".into(),
                        points: pts(&wf_all, &|r| r.dedup_query_s),
                        color: 0,
                    },
                ],
                hlines: vec![],
            },
        ],
    )?;

    let mut md = String::new();
    let per_day_articles = c.per_day as f64;
    md.push_str(&format!(
        "# De-dup ingestion against {}\n\n\
         {dirty}Generated by `scenario dedup` (revision {revision}); regenerate, do not edit.\n\n",
        c.db.backend(),
    ));
    if let (Some(what), Some(i)) = (&stopped, &o.interrupted) {
        md.push_str(&format!(
            "**Interrupted: not a complete run.** The run was {what}: {}\n\n\
             What follows covers only the days measured before it stopped (every CSV row says \
             `interrupted`); the two modes are compared over the days both measured. {}\n\n",
            i.cause,
            o.resume_advice().unwrap_or_default()
        ));
    }
    // The design point is the capacity the filter is sized for: past it, its rate exceeds p.
    let planned = c.new_per_day() * c.days;
    let last_fill = wf_all.last().map(|r| (r.day, r.fill_ratio, r.rows_in_db));
    let fill_sentence = match (&o.interrupted, last_fill) {
        (i, None) => format!(
            "The run was to bring {planned} distinct articles; the filter mode {}.",
            if i.as_ref().is_some_and(|i| i.mode == Mode::Filter) {
                "committed no day"
            } else {
                "did not run"
            }
        ),
        (Some(_), Some((d, f, stored))) => format!(
            "The run was to bring {planned} distinct articles; it stored {stored} before it \
             stopped ({} the {} the filter is sized for; fill ratio {f:.3} after day {d}).",
            if stored > c.capacity {
                "more than"
            } else {
                "no more than"
            },
            c.capacity
        ),
        (None, Some((_, f, _))) if planned > c.capacity => format!(
            "The run brings {planned} distinct articles, more than the {} the filter is sized \
             for, so the filter fills past its design point on purpose (fill ratio {f:.3} after \
             the last day).",
            c.capacity
        ),
        (None, Some((_, f, _))) => format!(
            "The run brings {planned} distinct articles, no more than the {} the filter is sized \
             for, so the filter stays within its design point (fill ratio {f:.3} after the last \
             day).",
            c.capacity
        ),
    };
    md.push_str(&format!(
        "- Database: {} ({}), one transaction per day, each mode on an emptied table.\n\
         - Workload: {} days x {} articles, {:.0}% duplicates of earlier articles, keyed by \
         SHA-256 of title + body (seed {}).\n\
         - Filter: `{}` sized for {} distinct articles at p = {}: {} bits, k = {}, {} bytes. \
         {fill_sentence}\n\n",
        o.db_version,
        c.db.backend(),
        c.days,
        c.per_day,
        c.duplicate_share * 100.0,
        c.seed,
        c.filter,
        c.capacity,
        c.p,
        o.filter_bits,
        o.filter_hashes,
        o.filter_bytes,
    ));

    md.push_str("## End state (checked with SQL after each mode)\n\n");
    let mut vrows: Vec<Vec<String>> = o
        .verified
        .iter()
        .map(|v| {
            vec![
                v.mode.as_str().to_owned(),
                v.expected.to_string(),
                v.rows.to_string(),
                v.distinct_hashes.to_string(),
                "yes".to_owned(),
            ]
        })
        .collect();
    if let Some(i) = &o.interrupted {
        vrows.push(vec![
            i.mode.as_str().to_owned(),
            if i.committed_days == 0 {
                "not checked: interrupted before its first day".to_owned()
            } else {
                format!("not checked: interrupted after day {}", i.committed_days)
            },
            String::new(),
            String::new(),
            String::new(),
        ]);
    }
    md.push_str(&table(
        &[
            "mode",
            "distinct articles generated",
            "COUNT(*)",
            "COUNT(DISTINCT hash)",
            "every row's hash = SHA-256(title, body), set equal",
        ],
        &vrows,
    ));
    md.push_str(if o.verified.is_empty() {
        "\nNo mode ran to its end, so no end state was checked.\n\n"
    } else if o.interrupted.is_some() {
        "\nNone lost, none stored twice in the mode checked (a difference would have failed the \
         run).\n\n"
    } else {
        "\nNone lost, none stored twice (a difference would have failed the run).\n\n"
    });
    if common == 0 {
        md.push_str(
            "No day was measured in both modes: there is nothing to compare. The days measured \
             are in the CSV.\n",
        );
        return write_text(&dir.join(SUMMARY_NAME), &md);
    }

    md.push_str(&if o.interrupted.is_some() {
        format!("## Totals over days 1 to {common} (measured in both modes)\n\n")
    } else {
        "## Totals over the run\n\n".to_owned()
    });
    let total_row = |name: &str, rows: &[&DayRow]| {
        let lookups = sum(rows, |r| r.db_lookups);
        let look_ns = rows
            .iter()
            .map(|r| r.lookup_ns_mean * r.db_lookups as f64)
            .sum::<f64>()
            / lookups.max(1) as f64;
        let wall: f64 = rows.iter().map(|r| r.wall_s).sum();
        let arts = sum(rows, |r| r.articles);
        vec![
            name.to_owned(),
            arts.to_string(),
            lookups.to_string(),
            sum(rows, |r| r.db_lookups_avoided).to_string(),
            sum(rows, |r| r.false_positives).to_string(),
            sum(rows, |r| r.inserts).to_string(),
            dur_ns(look_ns),
            dur_ns(mean(rows, |r| r.lookup_ns_p99 as f64)),
            format!(
                "{} s",
                sig(rows.iter().map(|r| r.dedup_query_s).sum::<f64>(), 3)
            ),
            format!("{} s", sig(wall, 3)),
            dur_ns(wall * 1e9 / arts.max(1) as f64),
        ]
    };
    md.push_str(&table(
        &[
            "mode",
            "articles",
            "DB lookups made",
            "lookups avoided",
            "false positives confirmed",
            "inserts",
            "mean lookup",
            "p99 lookup (mean of days)",
            "dedup query time",
            "wall time",
            "wall time per article",
        ],
        &[total_row("no-filter", &nf), total_row("filter", &wf)],
    ));

    // The chapter's model, per day, recomputed from this run's measured latencies.
    let filter_ns = mean(&wf, |r| r.filter_ns);
    let lookup_ns = {
        let all: Vec<&DayRow> = nf.iter().chain(wf.iter()).copied().collect();
        all.iter()
            .map(|r| r.lookup_ns_mean * r.db_lookups as f64)
            .sum::<f64>()
            / sum(&all, |r| r.db_lookups).max(1) as f64
    };
    let fps_day = mean(&wf, |r| r.false_positives as f64);
    let pos_day = mean(&wf, |r| r.filter_positives as f64);
    let measured_wf = mean(&wf, |r| r.dedup_query_s);
    let measured_nf = mean(&nf, |r| r.dedup_query_s);
    let chapter_wf = per_day_articles * CHAPTER_FILTER_NS * 1e-9 + 350.0 * CHAPTER_DB_NS * 1e-9;
    let chapter_nf = per_day_articles * CHAPTER_DB_NS * 1e-9;
    let model_fp = per_day_articles * filter_ns * 1e-9 + fps_day * lookup_ns * 1e-9;
    let model_full = per_day_articles * filter_ns * 1e-9 + pos_day * lookup_ns * 1e-9;
    let model_nf = per_day_articles * lookup_ns * 1e-9;
    // Lookups that find a row and lookups that do not cost differently (a hit reads the row;
    // a miss can stop in the index): priced by outcome, from the runs' own figures.
    let weighted = |f: &dyn Fn(&DayRow) -> (f64, f64)| {
        let (t, n) = nf
            .iter()
            .chain(wf.iter())
            .map(|r| f(r))
            .filter(|(_, n)| *n > 0.0)
            .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
        t / f64::max(n, 1.0)
    };
    let found_ns = weighted(&|r| {
        (
            r.lookup_found_ns_mean * r.duplicates as f64,
            r.duplicates as f64,
        )
    });
    let missing_ns = weighted(&|r| {
        let n = (r.db_lookups - r.duplicates) as f64;
        (r.lookup_missing_ns_mean * n, n)
    });
    let dups_day = mean(&wf, |r| r.duplicates as f64);
    let new_day = mean(&wf, |r| r.new_articles as f64);
    let model_split =
        per_day_articles * filter_ns * 1e-9 + (dups_day * found_ns + fps_day * missing_ns) * 1e-9;
    let model_split_nf = (dups_day * found_ns + new_day * missing_ns) * 1e-9;
    md.push_str(&format!(
        "\n## The chapter's model against the measurement (per day, mean of {} days)\n\n\
         Measured here: filter check {} (tight pass over each day's hashes), database lookup {} \
         (mean of every lookup of both modes; {} when it finds the article, {} when it does \
         not), {} false positives and {} filter positives a day.\n\n",
        common,
        dur_ns(filter_ns),
        dur_ns(lookup_ns),
        dur_ns(found_ns),
        dur_ns(missing_ns),
        sig(fps_day, 4),
        sig(pos_day, 5)
    ));
    let s = |x: f64| format!("{} s", sig(x, 3));
    md.push_str(&table(
        &["", "with filter", "without filter", "ratio"],
        &[
            vec![
                "chapter as stated (82 ns, 2 ms, 350 FPs)".to_owned(),
                s(chapter_wf),
                s(chapter_nf),
                format!("{}x", sig(chapter_nf / chapter_wf, 3)),
            ],
            vec![
                "chapter's model, measured latencies: filter ns x articles + FPs x lookup"
                    .to_owned(),
                s(model_fp),
                s(model_nf),
                format!("{}x", sig(model_nf / model_fp, 3)),
            ],
            vec![
                "full model: filter ns x articles + every positive (duplicates + FPs) x lookup"
                    .to_owned(),
                s(model_full),
                s(model_nf),
                format!("{}x", sig(model_nf / model_full, 3)),
            ],
            vec![
                "full model, lookups priced by outcome (found / not found)".to_owned(),
                s(model_split),
                s(model_split_nf),
                format!("{}x", sig(model_split_nf / model_split, 3)),
            ],
            vec![
                "measured dedup query time (filter checks + every lookup timed)".to_owned(),
                s(measured_wf),
                s(measured_nf),
                format!("{}x", sig(measured_nf / measured_wf, 3)),
            ],
        ],
    ));
    md.push_str(&format!(
        "\nThe chapter's model charges a database lookup only to false positives. But every \
         duplicate is a filter positive too, and confirming it needs the database: with {:.0}% \
         duplicates the filter can skip only the new articles' lookups, so the saving in lookups is \
         bounded by 1 / (duplicate share + p) = {}x; in time it is smaller still where a lookup \
         that finds its row costs more than one that does not, since the filter removes only \
         the cheaper misses. Skipping the confirmation \
         instead would drop every false positive's article as a duplicate: lost data.\n\n",
        c.duplicate_share * 100.0,
        sig(1.0 / (c.duplicate_share + c.p), 3)
    ));

    md.push_str("## Per day (with the filter)\n\n");
    let day_rows: Vec<Vec<String>> = wf
        .iter()
        .zip(nf.iter())
        .map(|(w, n)| {
            vec![
                w.day.to_string(),
                format!("{:.3}", w.fill_ratio),
                sig(w.fpr_given_bits, 3),
                w.false_positives.to_string(),
                sig(w.observed_fpr, 3),
                w.db_lookups.to_string(),
                w.db_lookups_avoided.to_string(),
                s(w.dedup_query_s),
                s(n.dedup_query_s),
                dur_ns(w.ns_per_article),
                dur_ns(n.ns_per_article),
                if w.fill_alert {
                    "ALERT".to_owned()
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    md.push_str(&table(
        &[
            "day",
            "fill ratio",
            "own FPR given bits",
            "FPs",
            "FPs / new",
            "lookups",
            "avoided",
            "query time (filter)",
            "query time (no filter)",
            "wall/article (filter)",
            "wall/article (no filter)",
            "monitor",
        ],
        &day_rows,
    ));
    md.push_str(&match o.alert_day {
        Some(d) => format!(
            "\nA fill-ratio monitor alerting past {} would call for a rebuild after day {d} \
             (the filter was sized for {} distinct articles; {} were stored by then).\n",
            c.fill_alert,
            c.capacity,
            wf.iter().find(|r| r.day == d).map_or(0, |r| r.rows_in_db)
        ),
        None => format!(
            "\nThe fill ratio stayed below {} for {}: no rebuild needed.\n",
            c.fill_alert,
            if o.interrupted.is_some() {
                "the days measured"
            } else {
                "the whole run"
            }
        ),
    });
    md.push_str(&format!(
        "\n![per day]({PNG_NAME})\n\n\
         ## How to read it\n\n\
         - *DB lookups made / avoided*: lookups sent to the database, and articles the filter \
         answered \"certainly new\" (inserted without a lookup).\n\
         - *False positives confirmed*: filter positives the database did not find; each cost a \
         lookup and was then inserted, so none was lost.\n\
         - *Dedup query time*: the filter's checks (its time per check x articles) plus every \
         database lookup, each timed; inserts and commits are outside it but inside *wall time*.\n\
         - *Own FPR given bits*: the rate this filter's bits imply (fill ratio^k for a flat \
         array) at the end of the day; *FPs / new* is the observed rate on the day's new \
         articles, over a day during which the filter kept filling, so it lies below.\n\
         - Data: [{CSV_NAME}]({CSV_NAME}) (one row per mode and day).\n"
    ));
    write_text(&dir.join(SUMMARY_NAME), &md)
}
