//! The conformance report (`reports/conformance/`, `bloomlab conform --out DIR`): from the
//! suite's [`Conformance`] values, `conformance.json` (the data, [`ConformanceReport`]), a
//! `README.md` summary table (library x clause), and one page per library with its two plots
//! ([`plot`]). Everything is rendered from the JSON read back, and written through an
//! [`OutputDir`]: the whole report or nothing.

pub mod plot;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use bloomlab_conform::{Clause, Conformance, Outcome, Plan};
use serde::{Deserialize, Serialize};

use crate::output::OutputDir;
use crate::{ReportError, markdown};

/// File name of the data inside the output directory.
pub const JSON_NAME: &str = "conformance.json";
/// File name of the summary inside the output directory.
pub const README_NAME: &str = "README.md";

/// The machine a run measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// `uname -m` (`x86_64`, `aarch64`).
    pub arch: String,
    /// Cores available to the run.
    pub cores: usize,
    /// Physical memory in bytes, when known.
    pub memory_bytes: Option<u64>,
}

/// How, when and where a run was made: the head of the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The plan every subject was held to (per-subject changes, such as the scale clause left out
    /// for external subjects, show in each verdict list).
    pub plan: Plan,
    /// Start of the run, Unix seconds.
    pub date_unix: u64,
    /// The machine.
    pub machine: Machine,
    /// The build's revision (`git describe`).
    pub revision: String,
    /// The command line of the run.
    pub command: String,
}

/// `conformance.json`: the run and every subject's conformance. The one schema the writer and
/// every reader share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConformanceReport {
    /// The run.
    pub run: RunInfo,
    /// One per subject, in run order.
    pub results: Vec<Conformance>,
}

/// The files of one library's page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageNames {
    /// `<stem>.md`.
    pub page: String,
    /// `<stem>_fpr_vs_inserted.png`.
    pub fpr_vs_inserted: String,
    /// `<stem>_fpr_by_family.png`.
    pub fpr_by_family: String,
}

/// The file stem of a subject's page: its name with `/` (and any character but ASCII letters,
/// digits, `-`, `.` and `_`) replaced by `_`, so a name an adapter declares cannot reach outside
/// the output directory.
pub fn stem(subject: &str) -> String {
    let s: String = subject
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match s.trim_start_matches('.') {
        "" => "subject".to_owned(),
        t => t.to_owned(),
    }
}

/// Page and picture names of every result, in order: stems made unique (`_2`, `_3`, ...) when
/// two subjects share a name.
pub fn page_names(results: &[Conformance]) -> Vec<PageNames> {
    let mut seen: Vec<String> = Vec::new();
    results
        .iter()
        .map(|c| {
            let base = stem(&c.subject.name);
            let mut s = base.clone();
            let mut i = 2;
            while seen.contains(&s) || s.eq_ignore_ascii_case("README") {
                s = format!("{base}_{i}");
                i += 1;
            }
            seen.push(s.clone());
            PageNames {
                page: format!("{s}.md"),
                fpr_vs_inserted: format!("{s}_fpr_vs_inserted.png"),
                fpr_by_family: format!("{s}_fpr_by_family.png"),
            }
        })
        .collect()
}

/// Writes the whole report into `out`: `conformance.json`, then, from the JSON read back,
/// `README.md`, a page per library and its two pictures, all committed together (nothing is
/// placed if any part fails). Returns the final paths, sorted by name.
pub fn write(out: &OutputDir, report: &ConformanceReport) -> Result<Vec<PathBuf>, ReportError> {
    out.publish(|staging| {
        let json_path = staging.join(JSON_NAME);
        let json = serde_json::to_vec_pretty(report).map_err(|e| ReportError::Io {
            action: "serializing",
            path: json_path.clone(),
            cause: std::io::Error::other(e),
        })?;
        std::fs::write(&json_path, json).map_err(|cause| ReportError::Io {
            action: "writing",
            path: json_path.clone(),
            cause,
        })?;
        // Everything below is drawn from the file, so the pages show only what the data holds.
        let report = read(&json_path)?;
        let names = page_names(&report.results);
        let mut written = vec![json_path];
        for (c, n) in report.results.iter().zip(&names) {
            let confidence = 1.0 - report.run.plan.alpha;
            written.push(plot::fpr_vs_inserted(
                c,
                confidence,
                &staging.join(&n.fpr_vs_inserted),
            )?);
            written.push(plot::fpr_by_family(
                c,
                confidence,
                &staging.join(&n.fpr_by_family),
            )?);
            written.push(write_text(
                &staging.join(&n.page),
                &render_page(c, n, &report.run),
            )?);
        }
        written.push(write_text(
            &staging.join(README_NAME),
            &render_summary(&report),
        )?);
        Ok(written)
    })
    .map(|staged| {
        let mut placed: Vec<PathBuf> = staged.iter().map(|p| out.placed(p)).collect();
        placed.sort();
        placed
    })
}

/// Reads `conformance.json` at `path`; errors name the file.
pub fn read(path: &Path) -> Result<ConformanceReport, ReportError> {
    let bytes = std::fs::read(path).map_err(|cause| ReportError::Io {
        action: "reading",
        path: path.to_path_buf(),
        cause,
    })?;
    serde_json::from_slice(&bytes).map_err(|e| ReportError::Io {
        action: "parsing",
        path: path.to_path_buf(),
        cause: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
    })
}

fn write_text(path: &Path, text: &str) -> Result<PathBuf, ReportError> {
    std::fs::write(path, text).map_err(|cause| ReportError::Io {
        action: "writing",
        path: path.to_path_buf(),
        cause,
    })?;
    Ok(path.to_path_buf())
}

/// A summary cell: the outcome, then the figure behind it.
fn cell(c: &Conformance, clause: Clause) -> String {
    match c.verdict(clause) {
        None => "not run".into(),
        Some(v) if v.figure.is_empty() => outcome_word(v.outcome),
        Some(v) => format!("{}: {}", outcome_word(v.outcome), v.figure),
    }
}

/// Outcomes in the table: broken in bold so it stands out in a rendered table.
fn outcome_word(o: Outcome) -> String {
    match o {
        Outcome::Broken => "**broken**".into(),
        o => o.as_str().into(),
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// The plan and the run, as the head of the summary and of each page.
fn run_lines(run: &RunInfo) -> String {
    let p = &run.plan;
    let m = &run.machine;
    let clauses: Vec<&str> = p.clauses.iter().map(|c| c.as_str()).collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "- Plan: promised n = {}, p = {}; {} non-member queries per rate; false-alarm rate {} per \
         decision, margin {}; over-fill at {:?} x n; seed {}; {}; clauses: {}.",
        p.n,
        p.p,
        p.queries,
        p.alpha,
        p.margin,
        p.over_fill,
        p.seed,
        p.deadline.map_or_else(
            || "no deadline".to_owned(),
            |d| format!("deadline {} s per library", d.as_secs_f64())
        ),
        clauses.join(", ")
    );
    let _ = writeln!(
        s,
        "- Run: {} on {} ({} cores, {}), revision `{}`.",
        crate::date::date_utc(run.date_unix),
        m.arch,
        m.cores,
        m.memory_bytes.map_or("memory unknown".into(), gib),
        run.revision
    );
    let _ = writeln!(s, "- Command: `{}`", run.command);
    s
}

/// `README.md`: the run, how to read a verdict, the library x clause table (each library linked
/// to its page), and the null adapter's protocol cost when it ran.
pub fn render_summary(report: &ConformanceReport) -> String {
    let names = page_names(&report.results);
    let mut s = String::from("# Conformance of approximate-membership filters\n\n");
    s.push_str(&run_lines(&report.run));
    s.push_str(
        "\n## How to read a verdict\n\n\
         Each clause is **holds** (the evidence shows it at the stated false-alarm rate), \
         **broken** (the evidence shows it does not), **n/a** (it does not apply: no declared \
         layout, no filter past 2^32 bits) or **undecided** (more queries would decide, and the \
         figure says how many; or the plan's deadline passed first, and the figure gives the \
         counts so far). The figure after it is the one number behind it; the \
         library's page lists the evidence and the command that reproduces each verdict. \
         Speed is for information only and never broken.\n\n\
         Clauses: 1 no-false-negatives, 2 promised-rate (one-sided exact test), 3 theory (the \
         declared layout's rate, two-sided; the same random-key count as 2), 4 key-families \
         (structured keys against that count; an undecided or broken figure names the family \
         that decided it), 5 scale (past 2^32 bits), 6 over-fill (0.5x to 4x n; to 64x, held \
         to p, for a growable filter), accepts-valid-input (every build, insert and query at a \
         valid (n, p) succeeds), 7 bad-input (n = 0, p at its edges, NaN), 8 speed (ns per \
         key).\n\n\
         Clauses 1, 2, 6 and accepts-valid-input were also checked at some 200 other (n, p) \
         points (every n from 1 to 64, a dense sweep of n at rates from 0.5 to 1e-6, the n of \
         power-of-two bit counts, seeded random points): a break found there is shown at the \
         smallest (n, p) that shows it, with the command that reproduces it (`--no-hunt` at \
         that point).\n\n## Summary\n\n",
    );
    let mut headers: Vec<String> = vec!["library".into()];
    headers.extend(Clause::ALL.iter().map(|c| c.as_str().to_owned()));
    let rows: Vec<Vec<String>> = report
        .results
        .iter()
        .zip(&names)
        .map(|(c, n)| {
            let mut row = vec![format!(
                "[{}]({}) {} ({})",
                c.subject.name, n.page, c.subject.version, c.subject.language
            )];
            row.extend(Clause::ALL.iter().map(|&cl| cell(c, cl)));
            row
        })
        .collect();
    s.push_str(&markdown::table(&headers, &rows));
    if let Some(null) = report
        .results
        .iter()
        // `null`, or a language's null adapter (`python/null`).
        .find(|c| c.subject.name == "null" || c.subject.name.ends_with("/null"))
        .and_then(|c| c.speed.as_ref())
    {
        let _ = write!(
            s,
            "\nThe protocol's own cost, measured with the null adapter (it answers without \
             storing anything), at {} keys per batch: {:.1} ns per key inserted, {:.1} ns per \
             member and {:.1} ns per non-member looked up. A process adapter's speed includes \
             this cost.\n",
            null.batch, null.insert_ns, null.present_ns, null.absent_ns
        );
    }
    s
}

/// One library's page: who it is, the verdict table, each verdict's evidence and reproduce
/// command, its speed, and its two pictures.
pub fn render_page(c: &Conformance, names: &PageNames, run: &RunInfo) -> String {
    let a = &c.subject;
    let caps = a.capabilities;
    let mut s = format!(
        "# {} {} ({})\n\n[Back to the summary]({README_NAME})\n\n",
        a.name, a.version, a.language
    );
    let offered: Vec<&str> = [
        (caps.serialize, "serialize"),
        (caps.stats, "stats"),
        (caps.concurrent, "concurrent insert"),
        (caps.static_build, "static build"),
        (caps.large, "more than 2^32 bits"),
        (caps.growable, "grows past n keeping p"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    let supports = a
        .supports
        .map(|r| format!(" Declares it supports {r}."))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "Held to n = {}, p = {}, seed {}. Capabilities: {}.{supports}\n",
        c.n,
        c.p,
        c.seed,
        if offered.is_empty() {
            "none beyond insert and query".into()
        } else {
            offered.join(", ")
        }
    );
    s.push_str(&run_lines(run));
    let broken = c.broken();
    let _ = writeln!(
        s,
        "\n**{}**\n",
        if broken.is_empty() {
            "No clause broken.".to_owned()
        } else {
            let list: Vec<&str> = broken.iter().map(|b| b.as_str()).collect();
            format!("Broken: {}.", list.join(", "))
        }
    );
    let rows: Vec<Vec<String>> = c
        .verdicts
        .iter()
        .map(|v| {
            vec![
                v.clause.as_str().to_owned(),
                outcome_word(v.outcome),
                v.figure.clone(),
            ]
        })
        .collect();
    s.push_str(&markdown::table(&["clause", "verdict", "figure"], &rows));
    let _ = write!(
        s,
        "\n![FPR against keys inserted]({})\n\n![FPR by key family]({})\n",
        names.fpr_vs_inserted, names.fpr_by_family
    );
    if let Some(sp) = &c.speed {
        let _ = write!(
            s,
            "\nSpeed (for information), {} keys per batch: {:.1} ns per key inserted, {:.1} ns \
             per member looked up, {:.1} ns per non-member.\n",
            sp.batch, sp.insert_ns, sp.present_ns, sp.absent_ns
        );
    }
    s.push_str("\n## Verdicts\n");
    for v in &c.verdicts {
        let _ = write!(
            s,
            "\n### {}: {}\n\n{}\n\n",
            v.clause,
            outcome_word(v.outcome),
            if v.figure.is_empty() {
                "(no figure)"
            } else {
                &v.figure
            }
        );
        for e in &v.evidence {
            let _ = writeln!(s, "- {e}");
        }
        let _ = write!(s, "\nReproduce:\n\n```\n{}\n```\n", v.reproduce);
    }
    s
}

#[cfg(test)]
mod tests;
