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
//! where and why it stopped; the report ([`write_report`], rendered by
//! [`bloomlab_report::scenario::dedup`]) marks such a run (and every CSV row) as interrupted,
//! never as a complete one. A failure before any day was measured is an error.
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

use bloomlab_filters::{
    Bloom, Filter, FilterExt, FlatBits, KirschMitzenmacher, Spec, VariantId, Xxh3, registry,
};
use bloomlab_harness::keys::derive_seed;
use rand::{RngExt as _, SeedableRng};
use rand_pcg::Pcg64Mcg;
use sha2::{Digest as _, Sha256};

pub use bloomlab_report::scenario::dedup::{
    CHAPTER_DB_NS, CHAPTER_FILTER_NS, CSV_NAME, DayRow, DedupOutcome, DedupSettings, Interruption,
    Mode, PNG_NAME, SUMMARY_NAME, Verified,
};

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

/// The filter the `scenario` binary uses when none is named (dedup and penetration):
/// `classic/xxh3/km/flat`.
pub fn default_filter() -> VariantId {
    VariantId::of::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>()
}
/// Days in the default run: 500,000 articles per mode, about a minute on SQLite.
pub const DEFAULT_DAYS: u64 = 10;
/// Distinct articles the default filter is sized for: fewer than the 150,000 the default run
/// brings (15,000 a day), so the fill-ratio monitor fires during the run (about day 7).
pub const DEFAULT_CAPACITY: u64 = 100_000;

/// The settings of a run.
#[derive(Debug, Clone)]
pub struct DedupConfig {
    /// The database of record.
    pub db: DbUrl,
    /// Registry name of the filter.
    pub filter: VariantId,
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
    pub fn new(db: DbUrl, filter: VariantId, p: f64) -> Self {
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
        registry::sized_bytes(self.filter.name(), self.capacity, self.p)?;
        Ok(())
    }

    /// The settings as the report prints them (the database by backend and address, never a
    /// password).
    pub fn settings(&self) -> DedupSettings {
        DedupSettings {
            backend: self.db.backend().to_owned(),
            database: self.db.to_string(),
            filter: self.filter.to_string(),
            p: self.p,
            days: self.days,
            per_day: self.per_day,
            duplicate_share: self.duplicate_share,
            capacity: self.capacity,
            fill_alert: self.fill_alert,
            seed: self.seed,
        }
    }

    fn new_per_day(&self) -> u64 {
        bloomlab_report::scenario::dedup::new_per_day(self.per_day, self.duplicate_share)
    }
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
        config.filter.name(),
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
                interrupted = Some(stage.interruption(mode, (rows.len() - before) as u64, &e));
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
        settings: config.settings(),
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

impl Stage {
    /// The interruption of `mode` by the database failing (`e`) at this stage, after
    /// `committed_days` of its days were committed.
    fn interruption(self, mode: Mode, committed_days: u64, e: &ScenarioError) -> Interruption {
        let (during, at_commit) = match self {
            Stage::Emptying => ("emptying the table".to_owned(), false),
            Stage::Day(d) => (format!("day {d}"), false),
            Stage::Commit(d) => (format!("the commit of day {d}"), true),
            Stage::Verifying => ("the end-state check".to_owned(), false),
        };
        Interruption {
            mode,
            committed_days,
            during,
            at_commit,
            cause: e.to_string(),
        }
    }
}

/// One day's tallies while its articles are served, then what its row needs from after the
/// commit.
struct DayTally {
    lookups: Histogram,
    found: Histogram,
    missing: Histogram,
    inserts: Histogram,
    positives: u64,
    false_pos: u64,
    dups: u64,
    new: u64,
    /// Every article's hash, for the filter's timing pass after the day.
    hashes: Vec<[u8; 32]>,
    /// Scratch space for the article being served (reused: no allocation per article).
    title: String,
    body: String,
    rows_in_db: u64,
    commit_ns: u64,
    wall_s: f64,
}

impl DayTally {
    fn new(articles: usize) -> Self {
        DayTally {
            lookups: Histogram::new(),
            found: Histogram::new(),
            missing: Histogram::new(),
            inserts: Histogram::new(),
            positives: 0,
            false_pos: 0,
            dups: 0,
            new: 0,
            hashes: Vec::with_capacity(articles),
            title: String::new(),
            body: String::new(),
            rows_in_db: 0,
            commit_ns: 0,
            wall_s: 0.0,
        }
    }
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
    let label = format!("dedup {} ({})", mode.as_str(), config.db.backend());
    let total = config.days * config.per_day;
    for day in 1..=config.days {
        let stream = day_stream(&mut rng, config.per_day, new_per_day, &mut next);
        let mut tally = DayTally::new(stream.len());
        *stage = Stage::Day(day);
        let start = Instant::now();
        db.begin()?;
        for (i, &article) in stream.iter().enumerate() {
            ingest(config, db, filter.as_deref_mut(), day, article, &mut tally)?;
            if i % 4096 == 0 {
                progress(&label, (day - 1) * config.per_day + i as u64, total);
            }
        }
        // Counted inside the day's transaction (this run is the table's only writer, so it is the
        // count after the commit), so that nothing can fail between the commit and the row:
        // the rows pushed are exactly the days committed. Its time is left out of the wall time.
        let count_start = Instant::now();
        tally.rows_in_db = db.int("SELECT COUNT(*) FROM bloomlab_dedup_articles", &[])? as u64;
        let count_time = count_start.elapsed();
        *stage = Stage::Commit(day);
        let t = Instant::now();
        db.commit()?;
        tally.commit_ns = t.elapsed().as_nanos() as u64;
        tally.wall_s = start.elapsed().saturating_sub(count_time).as_secs_f64();
        rows.push(day_row(config, mode, filter.as_deref(), day, &tally));
    }
    progress(&label, total, total);
    Ok(next)
}

/// Serves one article (`id`, and whether it is new): asks the filter (if any), then the
/// database when the filter says "maybe" (or there is none), inserts it when it is not found,
/// and checks the answer against what the stream knows.
fn ingest(
    config: &DedupConfig,
    db: &mut Db,
    filter: Option<&mut (dyn Filter + '_)>,
    day: u64,
    (id, fresh): (u64, bool),
    tally: &mut DayTally,
) -> Result<()> {
    article(config.seed, id, &mut tally.title, &mut tally.body);
    let h = content_hash(&tally.title, &tally.body);
    tally.hashes.push(h);
    if fresh {
        tally.new += 1;
    } else {
        tally.dups += 1;
    }
    let ask_db = match filter.as_deref() {
        None => true,
        Some(f) => {
            let maybe = f.contains(&h);
            tally.positives += u64::from(maybe);
            maybe
        }
    };
    let present = if ask_db {
        let t = Instant::now();
        let found = db.exists(LOOKUP, &[Param::Bytes(&h)])?;
        let took = t.elapsed();
        tally.lookups.record(took);
        if found {
            tally.found.record(took);
        } else {
            tally.missing.record(took);
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
            tally.false_pos += 1;
        }
        let t = Instant::now();
        db.exec(
            INSERT,
            &[
                Param::Bytes(&h),
                Param::Text(&tally.title),
                Param::Text(&tally.body),
                Param::Int(day as i64),
            ],
        )?;
        tally.inserts.record(t.elapsed());
        if let Some(f) = filter {
            f.insert(&h);
        }
    }
    Ok(())
}

/// The CSV row of a committed day: the tallies, the filter's timing pass and fill.
fn day_row(
    config: &DedupConfig,
    mode: Mode,
    filter: Option<&(dyn Filter + '_)>,
    day: u64,
    t: &DayTally,
) -> DayRow {
    let (filter_ns, fill, given) = match filter {
        None => (0.0, 0.0, 0.0),
        Some(f) => (
            time_filter(f, &t.hashes),
            f.fill_ratio(),
            f.fpr_given_bits(),
        ),
    };
    let articles = t.hashes.len() as u64;
    DayRow {
        backend: config.db.backend().to_owned(),
        mode,
        filter: config.filter.to_string(),
        p: config.p,
        day,
        articles,
        new_articles: t.new,
        duplicates: t.dups,
        filter_positives: t.positives,
        db_lookups: t.lookups.count(),
        db_lookups_avoided: articles - t.lookups.count(),
        false_positives: t.false_pos,
        observed_fpr: if filter.is_some() {
            t.false_pos as f64 / t.new.max(1) as f64
        } else {
            0.0
        },
        inserts: t.inserts.count(),
        lookup_ns_mean: t.lookups.mean_ns(),
        lookup_ns_p50: t.lookups.quantile_ns(0.5),
        lookup_ns_p99: t.lookups.quantile_ns(0.99),
        lookup_found_ns_mean: t.found.mean_ns(),
        lookup_missing_ns_mean: t.missing.mean_ns(),
        insert_ns_mean: t.inserts.mean_ns(),
        commit_ns: t.commit_ns,
        filter_ns,
        dedup_query_s: filter_ns * articles as f64 * 1e-9 + t.lookups.sum_s(),
        wall_s: t.wall_s,
        ns_per_article: t.wall_s * 1e9 / articles as f64,
        rows_in_db: t.rows_in_db,
        fill_ratio: fill,
        fpr_given_bits: given,
        fill_alert: filter.is_some() && fill > config.fill_alert,
        run_status: "complete",
    }
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

/// Writes `dedup.csv`, `dedup_days.png` and `summary.md` into `dir`
/// ([`bloomlab_report::scenario::dedup::write`]). The report of an interrupted run
/// ([`DedupOutcome::interrupted`]) says so in its first lines, its picture's title and every CSV
/// row, and compares the two modes only over the days both measured.
pub fn write_report(o: &DedupOutcome, dir: &std::path::Path, revision: &str) -> Result<()> {
    Ok(bloomlab_report::scenario::dedup::write(o, dir, revision)?)
}

/// The error a run the database interrupted ends in, once its report is written at `summary`:
/// where and why it stopped, what the database holds and how to resume. `None` for a complete run.
pub fn interrupted_error(o: &DedupOutcome, summary: &std::path::Path) -> Option<ScenarioError> {
    let (what, i) = (o.interruption_summary()?, o.interrupted.as_ref()?);
    Some(ScenarioError::Interrupted(format!(
        "{what}: {}\n{}\nThe days measured are reported, marked interrupted: {}",
        i.cause,
        o.resume_advice().unwrap_or_default(),
        summary.display()
    )))
}
