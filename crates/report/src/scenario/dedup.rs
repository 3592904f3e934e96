//! The de-dup ingestion scenario's outcome and report: what a run measured per mode and day, the
//! end state it verified, where an interrupted run stopped, and the `summary.md`, CSV and picture
//! drawn from it.
//!
//! [`render`] is pure (the outcome and the revision in, the Markdown out); [`write()`] puts
//! `dedup.csv`, `dedup_days.png` and `summary.md` into a directory, staged and moved into place
//! together ([`super::output`]).

use std::path::Path;

use serde::Serialize;

use super::output::{prepare_dir, write_csv, write_text};
use super::plot::{HLine, Panel, Series, draw};
use super::{Result, dur_ns, sig};
use crate::markdown::{dirty_warning, table};

/// The CSV in the output directory (one [`DayRow`] per mode and day).
pub const CSV_NAME: &str = "dedup.csv";
/// The picture.
pub const PNG_NAME: &str = "dedup_days.png";
/// The report.
pub const SUMMARY_NAME: &str = "summary.md";
/// The chapter's figures, shown next to the measurements: the filter's time per check (82 ns).
pub const CHAPTER_FILTER_NS: f64 = 82.0;
/// The chapter's database confirmation latency (2 ms).
pub const CHAPTER_DB_NS: f64 = 2e6;

/// The settings of a run, as the report prints them.
#[derive(Debug, Clone, PartialEq)]
pub struct DedupSettings {
    /// `SQLite` or `PostgreSQL`.
    pub backend: String,
    /// The database as messages name it (backend and address, never a password).
    pub database: String,
    /// Registry name of the filter.
    pub filter: String,
    /// Target false-positive rate the filter is sized for.
    pub p: f64,
    /// Days of ingestion.
    pub days: u64,
    /// Articles per day.
    pub per_day: u64,
    /// Share of each day's articles that repeat an earlier article, in (0, 1).
    pub duplicate_share: f64,
    /// Distinct articles the filter is sized for.
    pub capacity: u64,
    /// Fill ratio past which the monitor calls for a rebuild, in (0, 1).
    pub fill_alert: f64,
    /// Seed of the article stream.
    pub seed: u64,
}

impl DedupSettings {
    /// New (never seen) articles a day: `per_day` less the rounded duplicates, at least 1.
    pub fn new_per_day(&self) -> u64 {
        new_per_day(self.per_day, self.duplicate_share)
    }
}

/// New (never seen) articles among `per_day` of which a share `duplicate_share` repeats earlier
/// ones: `per_day` less the rounded duplicates, at least 1 (the first article is always new).
pub fn new_per_day(per_day: u64, duplicate_share: f64) -> u64 {
    let dup = (per_day as f64 * duplicate_share).round() as u64;
    (per_day - dup.min(per_day)).max(1)
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

/// A run's results: everything the report prints.
#[derive(Debug, Clone)]
pub struct DedupOutcome {
    /// The settings.
    pub settings: DedupSettings,
    /// The database's version string.
    pub db_version: String,
    /// One row per (mode, day), the no-filter mode's days first.
    pub rows: Vec<DayRow>,
    /// The end state per mode that ran to its end (each passed, or the run would have failed).
    pub verified: Vec<Verified>,
    /// The first day the fill-ratio monitor alerted, if any.
    pub alert_day: Option<u64>,
    /// Set when the run stopped part-way: the rows are the days measured before that.
    pub interrupted: Option<Interruption>,
    /// The filter's bits.
    pub filter_bits: u64,
    /// Probes per key.
    pub filter_hashes: u32,
    /// Bytes the filter holds.
    pub filter_bytes: usize,
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
                self.settings.days
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
                self.settings.days,
                i.mode.as_str(),
                i.during
            )
        })
    }

    /// What the database of record holds after an interrupted run, and how to get a whole run;
    /// `None` for a complete run.
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
            self.settings.database, self.settings.days
        ))
    }

    /// The rows of mode `m`, in day order.
    fn of(&self, m: Mode) -> Vec<&DayRow> {
        self.rows.iter().filter(|r| r.mode == m).collect()
    }
}

fn mean(rows: &[&DayRow], f: impl Fn(&DayRow) -> f64) -> f64 {
    rows.iter().map(|r| f(r)).sum::<f64>() / rows.len().max(1) as f64
}

fn sum(rows: &[&DayRow], f: impl Fn(&DayRow) -> u64) -> u64 {
    rows.iter().map(|r| f(r)).sum()
}

/// Seconds with 3 significant digits, as the tables print them.
fn secs(x: f64) -> String {
    format!("{} s", sig(x, 3))
}

/// Writes `dedup.csv`, `dedup_days.png` and `summary.md` into `dir` (prepared and locked if it
/// was not), the summary last, which moves the three into place together. The report of an
/// interrupted run ([`DedupOutcome::interrupted`]) says so in its first lines, its picture's
/// title and every CSV row, and compares the two modes only over the days both measured.
pub fn write(o: &DedupOutcome, dir: &Path, revision: &str) -> Result<()> {
    prepare_dir(dir)?;
    write_csv(&dir.join(CSV_NAME), &o.rows)?;
    draw(&dir.join(PNG_NAME), &picture_title(o), &panels(o))?;
    write_text(&dir.join(SUMMARY_NAME), &render(o, revision))
}

/// The picture's title: the workload and the filter, led by `INTERRUPTED ...` for a run that
/// stopped part-way.
pub fn picture_title(o: &DedupOutcome) -> String {
    let c = &o.settings;
    format!(
        "{}De-dup ingestion on {}: {} articles/day, {:.0}% duplicates, {} sized for {} at p = {}",
        o.interrupted.as_ref().map_or(String::new(), |i| format!(
            "INTERRUPTED after day {} of {} ({}): ",
            i.committed_days,
            c.days,
            i.mode.as_str()
        )),
        c.backend,
        c.per_day,
        c.duplicate_share * 100.0,
        c.filter,
        c.capacity,
        c.p
    )
}

/// The picture's three panels, from every day measured: fill ratio, false-positive rate and
/// dedup query time per day.
pub fn panels(o: &DedupOutcome) -> Vec<Panel> {
    let c = &o.settings;
    let (nf_all, wf_all) = (o.of(Mode::NoFilter), o.of(Mode::Filter));
    let pts = |rows: &[&DayRow], f: &dyn Fn(&DayRow) -> f64| {
        rows.iter()
            .map(|r| (r.day as f64, f(r)))
            .collect::<Vec<_>>()
    };
    vec![
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
    ]
}

/// The Markdown of `summary.md`: header and settings, the end state, then (when some day was
/// measured in both modes) the totals, the chapter's model against the measurement, the days and
/// how to read it. Pure: the same outcome and revision give the same text.
pub fn render(o: &DedupOutcome, revision: &str) -> String {
    let mut md = header(o, revision);
    md.push_str(&end_state(o));
    let (nf_all, wf_all) = (o.of(Mode::NoFilter), o.of(Mode::Filter));
    // The comparisons use the days both modes measured (all days of a complete run).
    let common = nf_all.len().min(wf_all.len());
    if common == 0 {
        md.push_str(
            "No day was measured in both modes: there is nothing to compare. The days measured \
             are in the CSV.\n",
        );
        return md;
    }
    let (nf, wf) = (&nf_all[..common], &wf_all[..common]);
    md.push_str(&totals(o, nf, wf, common));
    md.push_str(&model(o, nf, wf, common));
    md.push_str(&per_day(o, nf, wf));
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
    md
}

/// Title, provenance, the interruption notice (if any) and the settings.
fn header(o: &DedupOutcome, revision: &str) -> String {
    let c = &o.settings;
    let dirty = dirty_warning([revision]);
    let mut md = format!(
        "# De-dup ingestion against {}\n\n\
         {dirty}Generated by `scenario dedup` (revision {revision}); regenerate, do not edit.\n\n",
        c.backend,
    );
    if let (Some(what), Some(i)) = (o.interruption_summary(), &o.interrupted) {
        md.push_str(&format!(
            "**Interrupted: not a complete run.** The run was {what}: {}\n\n\
             What follows covers only the days measured before it stopped (every CSV row says \
             `interrupted`); the two modes are compared over the days both measured. {}\n\n",
            i.cause,
            o.resume_advice().unwrap_or_default()
        ));
    }
    md.push_str(&format!(
        "- Database: {} ({}), one transaction per day, each mode on an emptied table.\n\
         - Workload: {} days x {} articles, {:.0}% duplicates of earlier articles, keyed by \
         SHA-256 of title + body (seed {}).\n\
         - Filter: `{}` sized for {} distinct articles at p = {}: {} bits, k = {}, {} bytes. \
         {}\n\n",
        o.db_version,
        c.backend,
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
        fill_sentence(o),
    ));
    md
}

/// Whether the run brings more distinct articles than the filter is sized for (its design
/// point), and its fill ratio at the end.
fn fill_sentence(o: &DedupOutcome) -> String {
    let c = &o.settings;
    let planned = c.new_per_day() * c.days;
    let last_fill = o
        .of(Mode::Filter)
        .last()
        .map(|r| (r.day, r.fill_ratio, r.rows_in_db));
    match (&o.interrupted, last_fill) {
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
    }
}

/// The end-state table: one row per mode checked, one for the mode interrupted.
fn end_state(o: &DedupOutcome) -> String {
    let mut md = String::from("## End state (checked with SQL after each mode)\n\n");
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
    md
}

/// The totals of each mode over the `common` days both measured.
fn totals(o: &DedupOutcome, nf: &[&DayRow], wf: &[&DayRow], common: usize) -> String {
    let mut md = if o.interrupted.is_some() {
        format!("## Totals over days 1 to {common} (measured in both modes)\n\n")
    } else {
        "## Totals over the run\n\n".to_owned()
    };
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
            secs(rows.iter().map(|r| r.dedup_query_s).sum::<f64>()),
            secs(wall),
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
        &[total_row("no-filter", nf), total_row("filter", wf)],
    ));
    md
}

/// Per-day figures of the chapter's model and its refinements, priced with this run's
/// measured latencies.
struct Model {
    filter_ns: f64,
    lookup_ns: f64,
    found_ns: f64,
    missing_ns: f64,
    fps_day: f64,
    pos_day: f64,
    /// (label, with filter s, without filter s) per table row.
    rows: Vec<(&'static str, f64, f64)>,
}

impl Model {
    fn new(o: &DedupOutcome, nf: &[&DayRow], wf: &[&DayRow]) -> Self {
        let per_day_articles = o.settings.per_day as f64;
        let both = || nf.iter().chain(wf.iter());
        let filter_ns = mean(wf, |r| r.filter_ns);
        let lookup_ns = both()
            .map(|r| r.lookup_ns_mean * r.db_lookups as f64)
            .sum::<f64>()
            / both().map(|r| r.db_lookups).sum::<u64>().max(1) as f64;
        let fps_day = mean(wf, |r| r.false_positives as f64);
        let pos_day = mean(wf, |r| r.filter_positives as f64);
        // Lookups that find a row and lookups that do not cost differently (a hit reads the row;
        // a miss can stop in the index): priced by outcome, from the runs' own figures.
        let weighted = |f: &dyn Fn(&DayRow) -> (f64, f64)| {
            let (t, n) = both()
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
        let dups_day = mean(wf, |r| r.duplicates as f64);
        let new_day = mean(wf, |r| r.new_articles as f64);
        let checks = per_day_articles * filter_ns * 1e-9;
        let model_nf = per_day_articles * lookup_ns * 1e-9;
        let rows = vec![
            (
                "chapter as stated (82 ns, 2 ms, 350 FPs)",
                per_day_articles * CHAPTER_FILTER_NS * 1e-9 + 350.0 * CHAPTER_DB_NS * 1e-9,
                per_day_articles * CHAPTER_DB_NS * 1e-9,
            ),
            (
                "chapter's model, measured latencies: filter ns x articles + FPs x lookup",
                checks + fps_day * lookup_ns * 1e-9,
                model_nf,
            ),
            (
                "full model: filter ns x articles + every positive (duplicates + FPs) x lookup",
                checks + pos_day * lookup_ns * 1e-9,
                model_nf,
            ),
            (
                "full model, lookups priced by outcome (found / not found)",
                checks + (dups_day * found_ns + fps_day * missing_ns) * 1e-9,
                (dups_day * found_ns + new_day * missing_ns) * 1e-9,
            ),
            (
                "measured dedup query time (filter checks + every lookup timed)",
                mean(wf, |r| r.dedup_query_s),
                mean(nf, |r| r.dedup_query_s),
            ),
        ];
        Model {
            filter_ns,
            lookup_ns,
            found_ns,
            missing_ns,
            fps_day,
            pos_day,
            rows,
        }
    }
}

/// The chapter's model against the measurement, per day over the `common` days.
fn model(o: &DedupOutcome, nf: &[&DayRow], wf: &[&DayRow], common: usize) -> String {
    let c = &o.settings;
    let m = Model::new(o, nf, wf);
    let mut md = format!(
        "\n## The chapter's model against the measurement (per day, mean of {} days)\n\n\
         Measured here: filter check {} (tight pass over each day's hashes), database lookup {} \
         (mean of every lookup of both modes; {} when it finds the article, {} when it does \
         not), {} false positives and {} filter positives a day.\n\n",
        common,
        dur_ns(m.filter_ns),
        dur_ns(m.lookup_ns),
        dur_ns(m.found_ns),
        dur_ns(m.missing_ns),
        sig(m.fps_day, 4),
        sig(m.pos_day, 5)
    );
    let rows: Vec<Vec<String>> = m
        .rows
        .iter()
        .map(|&(label, with, without)| {
            vec![
                label.to_owned(),
                secs(with),
                secs(without),
                format!("{}x", sig(without / with, 3)),
            ]
        })
        .collect();
    md.push_str(&table(
        &["", "with filter", "without filter", "ratio"],
        &rows,
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
    md
}

/// One row per day with the filter beside the same day without, and the monitor's verdict.
fn per_day(o: &DedupOutcome, nf: &[&DayRow], wf: &[&DayRow]) -> String {
    let c = &o.settings;
    let mut md = String::from("## Per day (with the filter)\n\n");
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
                secs(w.dedup_query_s),
                secs(n.dedup_query_s),
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
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(days: u64, capacity: u64) -> DedupSettings {
        DedupSettings {
            backend: "SQLite".into(),
            database: "SQLite /tmp/db.sqlite".into(),
            filter: "classic/xxh3/km/flat".into(),
            p: 0.01,
            days,
            per_day: 5000,
            duplicate_share: 0.7,
            capacity,
            fill_alert: 0.5,
            seed: 7,
        }
    }

    /// A day of `mode` with 1500 new articles and 3500 duplicates; timings are fixed figures.
    fn day(mode: Mode, day: u64, fill_ratio: f64) -> DayRow {
        let filter = mode == Mode::Filter;
        DayRow {
            backend: "SQLite".into(),
            mode,
            filter: "classic/xxh3/km/flat".into(),
            p: 0.01,
            day,
            articles: 5000,
            new_articles: 1500,
            duplicates: 3500,
            filter_positives: if filter { 3515 } else { 0 },
            db_lookups: if filter { 3515 } else { 5000 },
            db_lookups_avoided: if filter { 1485 } else { 0 },
            false_positives: if filter { 15 } else { 0 },
            observed_fpr: if filter { 0.01 } else { 0.0 },
            inserts: 1500,
            lookup_ns_mean: 2000.0,
            lookup_ns_p50: 1900,
            lookup_ns_p99: 5000,
            lookup_found_ns_mean: 2100.0,
            lookup_missing_ns_mean: 1800.0,
            insert_ns_mean: 3000.0,
            commit_ns: 100_000,
            filter_ns: if filter { 80.0 } else { 0.0 },
            dedup_query_s: 0.01,
            wall_s: 0.05,
            ns_per_article: 10_000.0,
            rows_in_db: 1500 * day,
            fill_ratio,
            fpr_given_bits: fill_ratio.powi(7),
            fill_alert: filter && fill_ratio > 0.5,
            run_status: "complete",
        }
    }

    fn outcome(days: u64, capacity: u64, fill: f64) -> DedupOutcome {
        let rows = [Mode::NoFilter, Mode::Filter]
            .into_iter()
            .flat_map(|m| {
                (1..=days).map(move |d| day(m, d, if m == Mode::Filter { fill } else { 0.0 }))
            })
            .collect();
        DedupOutcome {
            settings: settings(days, capacity),
            db_version: "SQLite 3".into(),
            rows,
            verified: vec![],
            alert_day: None,
            interrupted: None,
            filter_bits: 57_511,
            filter_hashes: 7,
            filter_bytes: 7_192,
        }
    }

    fn filter_line(md: &str) -> &str {
        md.lines().find(|l| l.starts_with("- Filter:")).unwrap()
    }

    #[test]
    fn the_fill_sentence_says_whether_the_run_passes_the_design_point() {
        // 2 days x 1500 new = 3000 distinct, within 6000; 5 days = 7500, past it.
        let within = render(&outcome(2, 6000, 0.2), "abc");
        let line = filter_line(&within);
        assert!(line.contains("brings 3000 distinct articles"), "{line}");
        assert!(line.contains("stays within its design point"), "{line}");
        assert!(
            line.contains("fill ratio 0.200 after the last day"),
            "{line}"
        );
        let past = render(&outcome(5, 6000, 0.6), "abc");
        let line = filter_line(&past);
        assert!(line.contains("brings 7500 distinct articles"), "{line}");
        assert!(
            line.contains("fills past its design point on purpose"),
            "{line}"
        );
        assert!(!past.contains("Interrupted"), "{past}");
    }

    #[test]
    fn an_interrupted_run_says_so_first_and_compares_only_common_days() {
        let mut o = outcome(3, 6000, 0.3);
        // The filter mode committed its first day only.
        o.rows.retain(|r| r.mode == Mode::NoFilter || r.day == 1);
        o.interrupted = Some(Interruption {
            mode: Mode::Filter,
            committed_days: 1,
            during: "day 2".into(),
            at_commit: false,
            cause: "disk full".into(),
        });
        let md = render(&o, "abc");
        let what = o.interruption_summary().unwrap();
        assert_eq!(
            what,
            "interrupted after day 1 of 3 of the filter mode (day 2 failed; the no-filter mode \
             ran all 3 days and passed its end-state check)"
        );
        assert!(
            md.contains(&format!(
                "**Interrupted: not a complete run.** The run was {what}: disk full"
            )),
            "{md}"
        );
        assert!(
            md.contains("## Totals over days 1 to 1 (measured in both modes)"),
            "{md}"
        );
        assert!(md.contains("not checked: interrupted after day 1"), "{md}");
        assert!(md.contains("it stored 1500 before it stopped"), "{md}");
        assert!(picture_title(&o).starts_with("INTERRUPTED after day 1 of 3 (filter): "));
        assert!(
            o.resume_advice()
                .unwrap()
                .starts_with("SQLite /tmp/db.sqlite holds days 1 to 1 of the filter mode")
        );
    }

    #[test]
    fn no_common_day_means_nothing_to_compare() {
        let mut o = outcome(2, 6000, 0.3);
        o.rows.retain(|r| r.mode == Mode::NoFilter && r.day == 1);
        o.interrupted = Some(Interruption {
            mode: Mode::NoFilter,
            committed_days: 1,
            during: "the commit of day 2".into(),
            at_commit: true,
            cause: "connection lost".into(),
        });
        let md = render(&o, "abc");
        assert!(
            md.ends_with(
                "No day was measured in both modes: there is nothing to compare. The days measured \
             are in the CSV.\n"
            ),
            "{md}"
        );
        assert!(md.contains("the filter mode did not run"), "{md}");
        assert!(
            o.resume_advice()
                .unwrap()
                .contains("and day 2 too if its commit reached")
        );
    }

    #[test]
    fn the_model_table_prices_the_chapter_as_stated() {
        let md = render(&outcome(2, 6000, 0.2), "abc");
        // 5000 x 82 ns + 350 x 2 ms = 0.70041 s; 5000 x 2 ms = 10 s; ratio 14.3.
        let line = md
            .lines()
            .find(|l| l.starts_with("| chapter as stated"))
            .unwrap();
        assert!(line.contains("| 0.700 s | 10.0 s | 14.3x |"), "{line}");
        assert!(
            md.contains("bounded by 1 / (duplicate share + p) = 1.41x"),
            "{md}"
        );
    }
}
