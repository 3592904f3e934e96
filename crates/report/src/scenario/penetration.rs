//! The cache-penetration scenario's outcome and report: one row per mode (unguarded, then one
//! guarded mode per target rate) with the share of attack requests that reached the database,
//! its exact interval and the "> 99% eliminated" verdict, latencies and database load; the
//! `summary.md`, CSV and picture drawn from them.
//!
//! [`render`] is pure; [`write()`] puts `penetration.csv`, `penetration.png` and `summary.md` into
//! a directory, staged and moved into place together ([`super::output`]).

use std::path::Path;

use serde::Serialize;

use super::output::{prepare_dir, write_csv, write_text};
use super::plot::{HLine, Panel, Series, draw};
use super::{Result, dur_ns, sig};
use crate::markdown::{dirty_warning, table};

/// The CSV.
pub const CSV_NAME: &str = "penetration.csv";
/// The picture.
pub const PNG_NAME: &str = "penetration.png";
/// The report.
pub const SUMMARY_NAME: &str = "summary.md";

/// The settings of a run, as the report prints them.
#[derive(Debug, Clone, PartialEq)]
pub struct PenetrationSettings {
    /// `SQLite` or `PostgreSQL`.
    pub backend: String,
    /// The database as messages name it (backend and address, never a password).
    pub database: String,
    /// Registry name of the filter.
    pub filter: String,
    /// Rows (valid ids) in the database.
    pub valid_ids: u64,
    /// Requests per mode.
    pub requests: u64,
    /// Share of requests for never-existing ids, in (0, 1).
    pub attack_share: f64,
    /// Seed of ids and requests.
    pub seed: u64,
    /// Entries the cache holds.
    pub cache_capacity: usize,
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

impl ModeRow {
    /// The mode as the tables name it: `unguarded` or `guarded, p = P`.
    fn label(&self) -> String {
        if self.mode == "guarded" {
            format!("guarded, p = {}", self.p)
        } else {
            "unguarded".into()
        }
    }
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

/// A run's results: everything the report prints.
#[derive(Debug, Clone)]
pub struct PenetrationOutcome {
    /// The settings.
    pub settings: PenetrationSettings,
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

/// Writes `penetration.csv`, `penetration.png` and `summary.md` into `dir` (prepared and locked
/// if it was not), the summary last, which moves the three into place together.
pub fn write(o: &PenetrationOutcome, dir: &Path, revision: &str) -> Result<()> {
    prepare_dir(dir)?;
    write_csv(&dir.join(CSV_NAME), &o.rows)?;
    draw(&dir.join(PNG_NAME), &picture_title(o), &panels(o))?;
    write_text(&dir.join(SUMMARY_NAME), &render(o, revision))
}

/// The picture's title, led by `INTERRUPTED (N of M modes)` for a run that stopped part-way.
pub fn picture_title(o: &PenetrationOutcome) -> String {
    let c = &o.settings;
    format!(
        "{}Cache penetration on {}: {} valid ids, {:.0}% attack requests, {}",
        o.interrupted.as_ref().map_or(String::new(), |i| format!(
            "INTERRUPTED ({} of {} modes): ",
            i.modes_done, i.modes
        )),
        c.backend,
        c.valid_ids,
        c.attack_share * 100.0,
        c.filter
    )
}

/// The picture's two panels against the target p: the attack share reaching the database (with
/// its interval, the filter's own rate and the 1% line) and the request latency quantiles (the
/// unguarded mode's as reference lines).
pub fn panels(o: &PenetrationOutcome) -> Vec<Panel> {
    let guarded: Vec<&ModeRow> = o.rows.iter().filter(|r| r.mode == "guarded").collect();
    let unguarded = o.rows.iter().find(|r| r.mode == "unguarded");
    let by_p =
        |f: &dyn Fn(&ModeRow) -> f64| guarded.iter().map(|r| (r.p, f(r))).collect::<Vec<_>>();
    vec![
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
    ]
}

/// The Markdown of `summary.md`: header and settings, the attack traffic reaching the database
/// with the claim's verdict per p, latency and database load, and how to read it. Pure.
pub fn render(o: &PenetrationOutcome, revision: &str) -> String {
    let mut md = header(o, revision);
    md.push_str(&attack_traffic(o));
    md.push_str(&latency(o));
    md.push_str(&format!(
        "\n![attack share and latency]({PNG_NAME})\n\n\
         ## How to read it\n\n\
         - Latencies are per request, measured around the whole serving path (filter, cache, \
         database), recorded in histograms (quantiles within 0.8%).\n\
         - *DB queries / request* is the database load; unguarded, every attack request is a \
         query, since a miss cannot be cached.\n\
         - Data: [{CSV_NAME}]({CSV_NAME}) (one row per mode).\n"
    ));
    md
}

/// Title, provenance, the interruption notice (if any) and the settings.
fn header(o: &PenetrationOutcome, revision: &str) -> String {
    let c = &o.settings;
    let dirty = dirty_warning([revision]);
    let mut md = format!(
        "# Cache penetration against {}\n\n\
         {dirty}Generated by `scenario penetration` (revision {revision}); regenerate, do not edit.\n\n",
        c.backend,
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
        c.backend,
        c.valid_ids,
        if o.interrupted.is_some() {
            "after writing them (the end check did not run: interrupted)"
        } else {
            "before and after"
        },
        c.requests,
        c.seed,
        c.attack_share * 100.0,
        c.cache_capacity,
        c.filter
    ));
    md
}

/// The attack traffic reaching the database per mode, with its interval and the verdict.
fn attack_traffic(o: &PenetrationOutcome) -> String {
    let mut md = String::from("## Attack traffic reaching the database\n\n");
    let rows: Vec<Vec<String>> = o
        .rows
        .iter()
        .map(|r| {
            vec![
                r.label(),
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
    md
}

/// Latency quantiles and database load per mode.
fn latency(o: &PenetrationOutcome) -> String {
    let mut md = String::from("## Latency and database load\n\n");
    let rows: Vec<Vec<String>> = o
        .rows
        .iter()
        .map(|r| {
            vec![
                r.label(),
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
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(p: Option<f64>, reached: u64) -> ModeRow {
        ModeRow {
            backend: "SQLite".into(),
            mode: if p.is_some() { "guarded" } else { "unguarded" }.into(),
            filter: "classic/xxh3/km/flat".into(),
            p: p.unwrap_or(0.0),
            requests: 2000,
            attack_requests: 1000,
            attack_reached_db: reached,
            attack_reached_share: reached as f64 / 1000.0,
            ci_low: 0.005,
            ci_high: 0.02,
            fpr_given_bits: p.unwrap_or(0.0),
            eliminated_share: 1.0 - reached as f64 / 1000.0,
            claim_99: if p.is_some() { "undecided" } else { "" }.into(),
            db_queries: 1000 + reached,
            db_queries_per_request: 0.5,
            cache_hits: 10,
            db_query_ns_mean: 2500.0,
            p50_ns: 900,
            p99_ns: 12_000,
            attack_p50_ns: 100,
            attack_p99_ns: 1500,
            valid_p50_ns: 1200,
            valid_p99_ns: 15_000,
            wall_s: 1.25,
            filter_bytes: 1200,
            run_status: "complete",
        }
    }

    fn outcome() -> PenetrationOutcome {
        PenetrationOutcome {
            settings: PenetrationSettings {
                backend: "PostgreSQL".into(),
                database: "PostgreSQL 127.0.0.1:5432/postgres".into(),
                filter: "classic/xxh3/km/flat".into(),
                valid_ids: 1000,
                requests: 2000,
                attack_share: 0.5,
                seed: 7,
                cache_capacity: 10_000,
            },
            db_version: "PostgreSQL 15".into(),
            rows: vec![row(None, 1000), row(Some(0.01), 11)],
            rows_in_db: 1000,
            interrupted: None,
        }
    }

    #[test]
    fn each_mode_has_its_row_in_both_tables() {
        let md = render(&outcome(), "abc");
        assert!(
            md.starts_with("# Cache penetration against PostgreSQL\n\n"),
            "{md}"
        );
        assert!(md.contains("| guarded, p = 0.01 | 1000 | 11 | 0.01100 | [0.00500, 0.0200] | 0.0100 | 98.900% | undecided |"), "{md}");
        assert!(md.contains("| unguarded | 900 ns | 12.0 µs |"), "{md}");
        assert!(
            md.contains("`COUNT(DISTINCT id)` before and after."),
            "{md}"
        );
        assert!(!md.contains("Interrupted"), "{md}");
    }

    #[test]
    fn an_interrupted_run_says_where_it_stopped() {
        let mut o = outcome();
        o.rows.truncate(1);
        o.interrupted = Some(Interruption {
            modes_done: 1,
            modes: 3,
            during: "the guarded mode at p = 0.01".into(),
            cause: "server closed the connection".into(),
        });
        let md = render(&o, "abc");
        assert!(
            md.contains(
                "**Interrupted: not a complete run.** The run was interrupted after 1 of 3 modes \
             (the guarded mode at p = 0.01 failed): server closed the connection"
            ),
            "{md}"
        );
        assert!(
            md.contains("after writing them (the end check did not run: interrupted)"),
            "{md}"
        );
        assert!(
            picture_title(&o)
                .starts_with("INTERRUPTED (1 of 3 modes): Cache penetration on PostgreSQL")
        );
    }
}
