//! The rebuild-and-swap scenario's outcome and report: one row per filter generation (snapshot,
//! sizes, heap at the swap, reader answers and false negatives), reader lookup quantiles during
//! and outside rebuilds, and the `summary.md` and CSV drawn from them. No picture: the figures
//! are a handful of quantiles and sizes, which a table shows better.
//!
//! [`render`] is pure; [`write()`] puts `swap.csv` and `summary.md` into a directory, staged and
//! moved into place together ([`super::output`]).

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::output::{prepare_dir, write_csv, write_text};
use super::{Result, dur_ns, sig};
use crate::markdown::{dirty_warning, table};

/// The CSV.
pub const CSV_NAME: &str = "swap.csv";
/// The report.
pub const SUMMARY_NAME: &str = "summary.md";

/// The settings of a run, as the report prints them.
#[derive(Debug, Clone, PartialEq)]
pub struct SwapSettings {
    /// `SQLite` or `PostgreSQL`.
    pub backend: String,
    /// Registry name of the filter.
    pub filter: String,
    /// Target rate each generation is sized for.
    pub p: f64,
    /// Reader threads.
    pub threads: u64,
    /// Rows at the start.
    pub initial_ids: u64,
    /// Rebuilds (generations after the first).
    pub rebuilds: u64,
    /// Quiet time before each rebuild and after the last.
    pub quiet: Duration,
}

/// One generation: a CSV row.
#[derive(Debug, Clone, Serialize)]
pub struct GenRow {
    /// `SQLite` or `PostgreSQL`.
    pub backend: String,
    /// Generation, from 0.
    pub generation: u32,
    /// The log's last seq in its snapshot.
    pub snapshot_seq: i64,
    /// Rows in its snapshot.
    pub snapshot_rows: u64,
    /// Bits of its filter.
    pub filter_bits: u64,
    /// Bytes of its filter.
    pub filter_bytes: u64,
    /// Both generations' filter bytes at its swap (old + new; this one's alone for gen 0).
    pub both_generations_bytes: u64,
    /// Live heap just before the swap (0 if not counted).
    pub heap_before_swap: u64,
    /// Live heap after the old generation was freed (0 if not counted).
    pub heap_after_release: u64,
    /// Time from publishing the empty generation to the swap, ms.
    pub rebuild_ms: f64,
    /// Reader answers given by this generation.
    pub answers: u64,
    /// Of which negative.
    pub negatives: u64,
    /// Negatives for ids in this generation's snapshot (must be 0).
    pub false_negatives: u64,
    /// Ids present in both this and the previous generation's snapshot.
    pub ids_present_in_both: u64,
    /// Of which negative (must be 0).
    pub negatives_present_in_both: u64,
    /// Its fill ratio when it was replaced (or at the end).
    pub fill_ratio_at_end: f64,
}

/// Quantiles of a latency histogram.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct HistSummary {
    /// Lookups.
    pub count: u64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p999_ns: u64,
    /// Largest, ns.
    pub max_ns: u64,
}

/// A run's results: everything the report prints.
#[derive(Debug, Clone)]
pub struct SwapOutcome {
    /// The settings.
    pub settings: SwapSettings,
    /// The database's version.
    pub db_version: String,
    /// One row per generation.
    pub generations: Vec<GenRow>,
    /// Reader lookups outside rebuilds.
    pub outside: HistSummary,
    /// Reader lookups during rebuilds.
    pub during: HistSummary,
    /// Writer changes committed.
    pub changes: u64,
    /// Inserts among them.
    pub inserts: u64,
    /// Rows at the end (verified).
    pub rows_at_end: u64,
    /// Wall time of the concurrent phase, s.
    pub wall_s: f64,
}

/// Writes `swap.csv` (one row per generation) and `summary.md` into `dir` (prepared and locked
/// if it was not), the summary last, which moves both into place together.
pub fn write(o: &SwapOutcome, dir: &Path, revision: &str) -> Result<()> {
    prepare_dir(dir)?;
    write_csv(&dir.join(CSV_NAME), &o.generations)?;
    write_text(&dir.join(SUMMARY_NAME), &render(o, revision))
}

/// The Markdown of `summary.md`: settings, correctness, reader lookups during and outside a
/// rebuild, the generations, peak memory and how to read it. Pure.
pub fn render(o: &SwapOutcome, revision: &str) -> String {
    let mut md = header(o, revision);
    md.push_str(&lookups(o));
    md.push_str(&generations(o));
    let peak = o
        .generations
        .iter()
        .map(|g| g.both_generations_bytes)
        .max()
        .unwrap_or(0);
    md.push_str(&format!(
        "\n**Peak filter memory with two generations alive: {peak} bytes** ({} MB): the old \
         generation's and the new one's `memory_bytes()` at the swap (exact sizes of the \
         structures). The heap columns are the process's live heap bytes from the counting \
         allocator the binary installs, read just before the swap and after the last reader let \
         go of the old generation; they include the readers' growing logs of negative answers \
         (kept for the check), so they rise over the run and show the process, not the filters.\n\n\
         ## How to read it\n\n\
         - A rebuild that misses a write (an id committed after its snapshot, not added to the \
         new generation) shows up as false negatives; the writer adds each insert to the current \
         and the pending generation after its commit, which closes that race.\n\
         - Deleted ids stay positive in the generation that had them until the next rebuild: \
         the rebuild is what removes them (the fill ratio drops back at each swap).\n\
         - Data: [{CSV_NAME}]({CSV_NAME}) (one row per generation).\n",
        sig(peak as f64 / 1e6, 3)
    ));
    md
}

/// Title, provenance, settings and the correctness section.
fn header(o: &SwapOutcome, revision: &str) -> String {
    let c = &o.settings;
    let dirty = dirty_warning([revision]);
    let negatives: u64 = o.generations.iter().map(|g| g.negatives).sum();
    let answers: u64 = o.generations.iter().map(|g| g.answers).sum();
    let fns: u64 = o.generations.iter().map(|g| g.false_negatives).sum();
    let both_neg: u64 = o
        .generations
        .iter()
        .map(|g| g.negatives_present_in_both)
        .sum();
    let stale = negatives - fns;
    format!(
        "# Rebuild-and-swap against {}\n\n\
         {dirty}Generated by `scenario swap` (revision {revision}); regenerate, do not edit.\n\n\
         - Database: {} ({}). {} initial rows; the writer committed {} changes ({} inserts, the \
         rest deletes) in transactions of 50, each logged in the same transaction; {} rows at \
         the end.\n\
         - Filter: `{}` at p = {}, each generation sized for 1.5x the ids allocated when its \
         rebuild began; {} rebuilds, {} s apart; {} reader threads; {} s in all.\n\n\
         ## Correctness (checked after the run)\n\n\
         - Reader answers: {answers}, of which {negatives} negative. **False negatives: {fns}** \
         (a negative for an id in the answering generation's snapshot, or one whose insert had \
         committed before the query started and that was not deleted by that generation's \
         snapshot).\n\
         - Negatives for ids present in both the answering generation's snapshot and the \
         previous one's: **{both_neg}**.\n\
         - {stale} negatives were for ids deleted by the answering generation's snapshot or \
         not yet committed when the query started: correct answers.\n\
         - Every generation's snapshot equals the change log replayed to its `seq` (SQL \
         `GROUP BY id HAVING SUM(op) > 0`); the final table equals the whole log replayed and the \
         writer's own record; every final row is in the final generation. A difference would have \
         failed the run.\n\n",
        c.backend,
        o.db_version,
        c.backend,
        c.initial_ids,
        o.changes,
        o.inserts,
        o.rows_at_end,
        c.filter,
        c.p,
        c.rebuilds,
        c.quiet.as_secs_f64(),
        c.threads,
        sig(o.wall_s, 3),
    )
}

/// Reader lookup quantiles, outside and during a rebuild.
fn lookups(o: &SwapOutcome) -> String {
    let mut md = String::from("## Reader lookups: during and outside a rebuild\n\n");
    let hrow = |name: &str, h: &HistSummary| {
        vec![
            name.to_owned(),
            h.count.to_string(),
            dur_ns(h.p50_ns as f64),
            dur_ns(h.p99_ns as f64),
            dur_ns(h.p999_ns as f64),
            dur_ns(h.max_ns as f64),
        ]
    };
    md.push_str(&table(
        &["", "lookups", "p50", "p99", "p99.9", "max"],
        &[
            hrow("outside a rebuild", &o.outside),
            hrow("during a rebuild", &o.during),
        ],
    ));
    md.push_str(
        "\nEach lookup is timed from before loading the current generation (`ArcSwap::load`) to \
         the answer, and counted as *during* when the rebuild job's flag was up (from publishing \
         the next generation to the swap). The tail reflects the 2-core machine shared with the \
         writer and the rebuild job, not the filter alone.\n\n",
    );
    md
}

/// One table row per generation.
fn generations(o: &SwapOutcome) -> String {
    let mut md = String::from("## Generations\n\n");
    let or_na = |v: u64| {
        if v > 0 { v.to_string() } else { "n/a".into() }
    };
    let rows: Vec<Vec<String>> = o
        .generations
        .iter()
        .map(|g| {
            vec![
                g.generation.to_string(),
                g.snapshot_seq.to_string(),
                g.snapshot_rows.to_string(),
                g.filter_bytes.to_string(),
                g.both_generations_bytes.to_string(),
                or_na(g.heap_before_swap),
                or_na(g.heap_after_release),
                format!("{} ms", sig(g.rebuild_ms, 3)),
                g.answers.to_string(),
                g.negatives.to_string(),
                g.false_negatives.to_string(),
                g.ids_present_in_both.to_string(),
                g.negatives_present_in_both.to_string(),
                format!("{:.3}", g.fill_ratio_at_end),
            ]
        })
        .collect();
    md.push_str(&table(
        &[
            "gen",
            "snapshot seq",
            "snapshot rows",
            "filter bytes",
            "both generations' bytes",
            "heap before swap",
            "heap after old freed",
            "rebuild",
            "answers",
            "negatives",
            "false negatives",
            "ids in both snapshots",
            "their negatives",
            "fill ratio when replaced",
        ],
        &rows,
    ));
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen_row(generation: u32, both: u64, heap: u64) -> GenRow {
        GenRow {
            backend: "SQLite".into(),
            generation,
            snapshot_seq: 1000 + i64::from(generation),
            snapshot_rows: 1000,
            filter_bits: 9600,
            filter_bytes: 1200,
            both_generations_bytes: both,
            heap_before_swap: heap,
            heap_after_release: heap,
            rebuild_ms: 12.5,
            answers: 500,
            negatives: 40,
            false_negatives: 0,
            ids_present_in_both: if generation > 0 { 990 } else { 0 },
            negatives_present_in_both: 0,
            fill_ratio_at_end: 0.4,
        }
    }

    fn outcome() -> SwapOutcome {
        let h = HistSummary {
            count: 1000,
            p50_ns: 40,
            p99_ns: 300,
            p999_ns: 2000,
            max_ns: 50_000,
        };
        SwapOutcome {
            settings: SwapSettings {
                backend: "SQLite".into(),
                filter: "classic/xxh3/km/atomic".into(),
                p: 0.01,
                threads: 2,
                initial_ids: 1000,
                rebuilds: 1,
                quiet: Duration::from_millis(500),
            },
            db_version: "SQLite 3".into(),
            generations: vec![gen_row(0, 1200, 0), gen_row(1, 2_400_000, 5_000_000)],
            outside: h,
            during: h,
            changes: 100,
            inserts: 66,
            rows_at_end: 1032,
            wall_s: 1.5,
        }
    }

    #[test]
    fn the_report_sums_the_generations_and_names_the_peak() {
        let md = render(&outcome(), "abc");
        assert!(
            md.contains("- Reader answers: 1000, of which 80 negative. **False negatives: 0**"),
            "{md}"
        );
        assert!(md.contains("- 80 negatives were for ids deleted"), "{md}");
        assert!(
            md.contains("1 rebuilds, 0.5 s apart; 2 reader threads; 1.50 s in all."),
            "{md}"
        );
        assert!(
            md.contains(
                "**Peak filter memory with two generations alive: 2400000 bytes** (2.40 MB)"
            ),
            "{md}"
        );
        // An uncounted heap is "n/a", not 0.
        assert!(
            md.contains("| 0 | 1000 | 1000 | 1200 | 1200 | n/a | n/a | 12.5 ms |"),
            "{md}"
        );
        assert!(
            md.contains("| outside a rebuild | 1000 | 40.0 ns | 300 ns | 2.00 µs | 50.0 µs |"),
            "{md}"
        );
    }
}
