//! `summary.md`: run parameters, the pictures, what departs from theory, and the key table.

use std::path::{Path, PathBuf};

use bloomlab_harness::{SweepRow, Workload};

use crate::select::{FloatKey, main_key_set, main_n, main_p, overfill_slice, sized_rows};
use crate::{ReportError, fmt, markdown};

/// At most this many rows are listed under "what departs from theory"; the rest are counted.
const DEPARTURES_LISTED: usize = 25;

/// Writes the summary of `rows` to `path`, linking `csv` and `pngs` relative to `path`'s directory
/// (pictures in the order of [`crate::PNG_NAMES`]).
pub fn write_summary(
    rows: &[SweepRow],
    csv: &Path,
    pngs: &[PathBuf],
    path: &Path,
) -> Result<(), ReportError> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let link = |p: &Path| match p.strip_prefix(dir) {
        Ok(rel) => rel.display().to_string(),
        Err(_) => p.display().to_string(),
    };
    let png_links: Vec<String> = pngs.iter().map(|p| link(p)).collect();
    let text = render_summary(rows, &link(csv), &png_links);
    std::fs::write(path, text).map_err(|source| ReportError::Io {
        action: "writing",
        path: path.to_path_buf(),
        cause: source,
    })
}

/// The summary as Markdown. `csv_link` and `png_links` (in the order of [`crate::PNG_NAMES`]) are
/// used as given, so pass paths relative to where the Markdown will live.
pub fn render_summary(rows: &[SweepRow], csv_link: &str, png_links: &[String]) -> String {
    let statics: Vec<SweepRow> = rows
        .iter()
        .filter(|r| r.workload == Workload::Static)
        .cloned()
        .collect();
    let mut out = String::from("# Sweep summary\n\n");
    out.push_str(&markdown::dirty_warning(
        rows.iter().map(|r| r.revision.as_str()),
    ));
    out.push_str(&format!(
        "Generated from [`{csv_link}`]({csv_link}) ({} rows) by bloomlab-report: regenerate it, never edit it. \
         Every figure below is a column of the CSV.\n\n",
        rows.len()
    ));
    out.push_str("## Run parameters\n\n");
    out.push_str(&parameters(rows));
    let link = |name: &str| png_links.iter().find(|l| l.ends_with(name)).cloned();
    if !statics.is_empty() {
        let static_links: Vec<String> = crate::PNG_NAMES.iter().filter_map(|n| link(n)).collect();
        out.push_str("\n## Pictures\n\n");
        out.push_str(&pictures(&statics, &static_links));
        out.push_str("\n## What departs from theory\n\n");
        out.push_str(&departures(&statics));
        out.push_str("\n## Key table\n\n");
        out.push_str(&key_table(&statics));
    }
    let churn: Vec<&SweepRow> = rows
        .iter()
        .filter(|r| r.workload == Workload::Churn)
        .collect();
    if !churn.is_empty() {
        out.push_str("\n## Churn\n\n");
        out.push_str(&churn_section(&churn, link(crate::CHURN_PNG)));
    }
    let grow: Vec<&SweepRow> = rows
        .iter()
        .filter(|r| r.workload == Workload::Grow)
        .collect();
    if !grow.is_empty() {
        out.push_str("\n## Growth\n\n");
        out.push_str(&grow_section(&grow, link(crate::GROW_PNG)));
    }
    out
}

fn picture_line(title: &str, link: Option<String>) -> String {
    match link {
        Some(l) => format!("**{title}**: [`{l}`]({l})\n\n![{title}]({l})\n\n"),
        None => String::new(),
    }
}

fn false_negatives(r: &SweepRow) -> String {
    format!(
        "{} of {} [{}, {}]",
        r.false_negatives,
        r.members_checked,
        fmt::sig(r.fn_ci_low, 3),
        fmt::sig(r.fn_ci_high, 3)
    )
}

fn churn_section(rows: &[&SweepRow], link: Option<String>) -> String {
    let failures = rows.iter().filter(|r| r.fn_failure).count();
    let mut out = format!(
        "Each row is one round: `removed` members removed so far (each replaced by a fresh key), every \
         current member checked (false negatives with their Clopper-Pearson interval), the FPR sampled on \
         never-inserted keys (removed keys are never sampled) against theory at the members held. Round 0 is \
         the filled filter. Hostile removes remove never-inserted keys that test positive (`hostile removed`: \
         removals the filter accepted); with none, every false negative comes from the design itself \
         (for a counting filter: decrementing a counter that had saturated). `caused by` names the mechanism \
         behind each false negative, from a ledger the run keeps of counters that lost an increment at \
         their maximum and counters an accepted hostile removal decremented: a missed member's zeroed \
         counters are looked up in both (*saturated decrement*, *removed false positive*, *both*; \
         *unexplained* would point at a bug). {failures} rows are failures \
         (a false negative from a variant that promises none, without hostile removes).\n\n"
    );
    out.push_str(&picture_line(
        "FPR and false negatives per churn round",
        link,
    ));
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.filter.to_string(),
                r.key_set.clone(),
                r.n.to_string(),
                fmt::tick(r.p),
                fmt::percent(r.hostile),
                r.round.to_string(),
                r.removed.to_string(),
                r.hostile_removed.to_string(),
                false_negatives(r),
                fn_causes(r),
                observed(r),
                fmt::sig(r.fpr_theory, 3),
                if r.theory_in_interval {
                    "yes"
                } else {
                    "**no**"
                }
                .to_string(),
                given_bits(r),
                r.saturated_counters.to_string(),
                r.counter_overflow_p
                    .map_or("-".to_string(), |q| fmt::sig(q, 3)),
                if r.fn_failure { "**FAIL**" } else { "ok" }.to_string(),
            ]
        })
        .collect();
    out.push_str(&markdown::table(
        &[
            "filter",
            "key set",
            "n",
            "p",
            "hostile",
            "round",
            "removed",
            "hostile removed",
            "false negatives [interval]",
            "caused by",
            "observed FPR [interval]",
            "theory",
            "in",
            "given bits",
            "saturated counters",
            "P(counter overflow)",
            "verdict",
        ],
        &table_rows,
    ));
    out
}

/// Whether the measured rate keeps the target p: `yes` when the interval's upper end is at or below
/// p, `**above**` when its lower end is above p, else `not shown` (the sample cannot tell).
fn keeps_target(r: &SweepRow) -> &'static str {
    if r.ci_high <= r.p {
        "yes"
    } else if r.ci_low > r.p {
        "**above**"
    } else {
        "not shown"
    }
}

fn grow_section(rows: &[&SweepRow], link: Option<String>) -> String {
    let mut out = String::from(
        "Each row is one growth factor G: the filter was built for n0 = `n` keys at target `p` and now \
         holds n0 x G members. `keeps p` is `yes` when the interval's upper end is at or below p, \
         `**above**` when its lower end exceeds p, `not shown` when the sample cannot tell. Memory is bits \
         per member held, against a static classic filter sized for the members held at p (from sizing). \
         Lookup times are indicative medians taken after each step (`-` when the run was not timed): \
         they show how a lookup's cost grows with the stages it consults; the criterion bench is the \
         authority on speed.\n\n",
    );
    out.push_str(&picture_line("FPR and memory against growth", link));
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.filter.to_string(),
                r.key_set.clone(),
                r.n.to_string(),
                fmt::tick(r.p),
                r.growth.to_string(),
                r.stages.to_string(),
                observed(r),
                fmt::sig(r.fpr_theory, 3),
                given_bits(r),
                keeps_target(r).to_string(),
                format!(
                    "{} / {}",
                    fmt::sig(r.bits_per_member, 3),
                    fmt::sig(r.static_bits_per_key, 3)
                ),
                lookup_pair(r),
                false_negatives(r),
            ]
        })
        .collect();
    out.push_str(&markdown::table(
        &[
            "filter",
            "key set",
            "n0",
            "p",
            "G",
            "stages",
            "observed FPR [interval]",
            "theory",
            "given bits",
            "keeps p",
            "bits/member (static)",
            "lookup ns present / absent",
            "false negatives [interval]",
        ],
        &table_rows,
    ));
    out
}

fn distinct<T: Ord>(values: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = values.collect();
    v.sort();
    v.dedup();
    v
}

fn parameters(rows: &[SweepRow]) -> String {
    let join = |v: Vec<String>| v.join(", ");
    let seeds = join(
        distinct(rows.iter().map(|r| r.seed))
            .iter()
            .map(u64::to_string)
            .collect(),
    );
    let confidence = join(
        distinct(rows.iter().map(|r| FloatKey(r.confidence)))
            .iter()
            .map(|c| fmt::percent(c.0))
            .collect(),
    );
    let revisions = join(distinct(rows.iter().map(|r| r.revision.clone())));
    let filters = distinct(rows.iter().map(|r| r.filter.to_string()));
    let key_sets = join(distinct(rows.iter().map(|r| r.key_set.clone())));
    let ns = join(
        distinct(rows.iter().map(|r| r.n))
            .iter()
            .map(u64::to_string)
            .collect(),
    );
    let ps = join(
        distinct(rows.iter().map(|r| FloatKey(r.p)))
            .iter()
            .map(|p| fmt::tick(p.0))
            .collect(),
    );
    let overfill = join(
        distinct(rows.iter().map(|r| FloatKey(r.overfill)))
            .iter()
            .map(|o| fmt::tick(o.0))
            .collect(),
    );
    let queries: u64 = rows.iter().map(|r| r.queries).sum();
    let capped = rows.iter().filter(|r| r.capped).count();
    markdown::table(
        &["parameter", "value"],
        &[
            vec!["seed".to_string(), seeds],
            vec!["confidence level".to_string(), confidence],
            vec!["revision".to_string(), revisions],
            vec!["rows".to_string(), rows.len().to_string()],
            vec!["filters".to_string(), filters.len().to_string()],
            vec!["key sets".to_string(), key_sets],
            vec!["n (keys sized for)".to_string(), ns],
            vec!["target p".to_string(), ps],
            vec!["overfill factors".to_string(), overfill],
            vec![
                "non-member queries, all rows".to_string(),
                queries.to_string(),
            ],
            vec![
                "rows stopped by the query cap before the precision target".to_string(),
                capped.to_string(),
            ],
            vec![
                "non-member queries per second per core, all rows (queries / seconds of \
                 sampling; indicative)"
                    .to_string(),
                bloomlab_harness::bloom::row::overall_queries_per_s_core(rows)
                    .map_or("-".to_string(), mega),
            ],
        ],
    )
}

/// A rate in millions, 3 significant digits (`-` when not measured).
fn mega(rate: f64) -> String {
    if rate > 0.0 {
        format!("{}M", fmt::sig(rate / 1e6, 3))
    } else {
        "-".to_string()
    }
}

fn pictures(rows: &[SweepRow], png_links: &[String]) -> String {
    let key_set = main_key_set(rows).unwrap_or_default();
    let sized = sized_rows(rows, &key_set);
    let n = main_n(&sized).map_or("-".to_string(), |n| n.to_string());
    let p = main_p(&sized).map_or("-".to_string(), fmt::tick);
    let overfill = match overfill_slice(rows) {
        Some(s) => format!(
            "key set {}, sized for n = {} at p = {}",
            s.key_set,
            s.n,
            fmt::tick(s.p)
        ),
        None => {
            "no filter was run at several overfill factors, so the picture only says so".to_string()
        }
    };
    let captions = [
        (
            "Observed FPR vs target p",
            format!(
                "key set {key_set}, n = {n}, log-log; bars are the confidence intervals, the black line is y = x"
            ),
        ),
        (
            "Observed FPR vs bits per key",
            format!(
                "key set {key_set}, n = {n}; dashed: each layout's theory; black: the bound p = 2^(-bits per key)"
            ),
        ),
        (
            "Lookup ns vs n",
            format!(
                "key set {key_set}, p = {p}; present keys left, absent right; black: std HashSet (indicative timings)"
            ),
        ),
        ("FPR vs overfill factor", overfill),
    ];
    let mut out = String::from(
        "Series are coloured by layout family. A row with no false positive (observed rate 0) is drawn \
         as an open circle at its interval's upper end, never dropped.\n\n",
    );
    for ((title, caption), link) in captions.iter().zip(png_links) {
        out.push_str(&format!(
            "**{title}** ({caption}): [`{link}`]({link})\n\n![{title}]({link})\n\n"
        ));
    }
    out
}

/// How far theory lies outside the interval, as a factor >= 1, and which side.
fn departure(r: &SweepRow) -> Option<(f64, &'static str)> {
    if r.theory_in_interval || r.fpr_theory.is_nan() || r.fpr_theory <= 0.0 {
        return None;
    }
    if r.fpr_theory < r.ci_low {
        Some((r.ci_low / r.fpr_theory, "observed above theory"))
    } else if r.fpr_theory > r.ci_high {
        Some((r.fpr_theory / r.ci_high, "observed below theory"))
    } else {
        None
    }
}

/// The filter's own rate given its bits and whether the interval holds it: `0.00512 (in)`,
/// `0.00512 (**out**)`, or `-` when unknown (a peer that does not expose its bits).
fn given_bits(r: &SweepRow) -> String {
    if r.fpr_given_bits.is_nan() {
        return "-".into();
    }
    let verdict = if r.given_bits_in_interval {
        "in"
    } else {
        "**out**"
    };
    format!("{} ({verdict})", fmt::sig(r.fpr_given_bits, 3))
}

/// A churn row's false negatives by mechanism (`-` when there are none).
fn fn_causes(r: &SweepRow) -> String {
    let parts: Vec<String> = [
        (r.fn_saturated_decrement, "saturated decrement"),
        (r.fn_removed_false_positive, "removed false positive"),
        (r.fn_both_causes, "both"),
        (r.fn_unexplained, "**unexplained**"),
    ]
    .iter()
    .filter(|(count, _)| *count > 0)
    .map(|(count, what)| format!("{count} {what}"))
    .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

/// Indicative lookup ns per key, present / absent, or `-` when the row was not timed.
fn lookup_pair(r: &SweepRow) -> String {
    if r.lookup_present_ns <= 0.0 && r.lookup_absent_ns <= 0.0 {
        return "-".into();
    }
    format!(
        "{} / {}",
        fmt::sig(r.lookup_present_ns, 3),
        fmt::sig(r.lookup_absent_ns, 3)
    )
}

fn observed(r: &SweepRow) -> String {
    format!(
        "{} [{}, {}]",
        fmt::sig(r.fpr, 3),
        fmt::sig(r.ci_low, 3),
        fmt::sig(r.ci_high, 3)
    )
}

fn departures(rows: &[SweepRow]) -> String {
    let mut outside: Vec<(f64, &'static str, &SweepRow)> = rows
        .iter()
        .filter_map(|r| departure(r).map(|(f, side)| (f, side, r)))
        .collect();
    outside.sort_by(|a, b| b.0.total_cmp(&a.0));
    let flagged = rows.iter().filter(|r| !r.theory_in_interval).count();
    let own_inside = rows
        .iter()
        .filter(|r| !r.theory_in_interval && r.given_bits_in_interval)
        .count();
    let expected: f64 = rows.iter().map(|r| 1.0 - r.confidence).sum();
    let mut out = format!(
        "Rows whose layout-correct theory lies outside the observed interval, worst first: ordered by how \
         far theory lies from the nearer end of the interval, as a factor. For a correct filter each row misses with \
         probability at most 1 - confidence, so about {} of these {} rows would be listed by chance alone; \
         {flagged} are.\n\n\
         The interval covers only the queries' randomness, while the layout theory is a mean over all \
         filters of that size: one filter's bits can make its own rate differ from it, by several percent \
         for a blocked filter of a few hundred blocks. `given bits` is that filter's own rate, computed from \
         its bits for uniform independent probes (`fpr_given_bits` in the CSV), and `in` or `**out**` of the \
         interval. `in`: the queries see exactly the bits this filter holds, so the departure lies in how \
         its members set those bits: a chance draw for a sound hash (a small blocked filter), or \
         systematic when the hash maps related members onto shared bits (then the fill ratio is off too). \
         `**out**`: the queries' probes are not uniform over the bits (a hash or index-scheme flaw on \
         the query side). Of the {flagged} rows, {own_inside} have their own rate inside the \
         interval.\n\n",
        fmt::sig(expected, 2),
        rows.len()
    );
    if outside.is_empty() {
        out.push_str("None: every row's theory lies inside its interval.\n");
        return out;
    }
    let table_rows: Vec<Vec<String>> = outside
        .iter()
        .take(DEPARTURES_LISTED)
        .map(|(factor, side, r)| {
            vec![
                r.filter.to_string(),
                r.key_set.clone(),
                r.n.to_string(),
                fmt::tick(r.p),
                fmt::tick(r.overfill),
                observed(r),
                fmt::sig(r.fpr_theory, 3),
                fmt::sig(r.fpr / r.fpr_theory, 3),
                format!("{}x ({side})", fmt::sig(*factor, 3)),
                given_bits(r),
            ]
        })
        .collect();
    out.push_str(&markdown::table(
        &[
            "filter",
            "key set",
            "n",
            "p",
            "overfill",
            "observed FPR [interval]",
            "theory",
            "observed / theory",
            "interval misses theory by",
            "given bits",
        ],
        &table_rows,
    ));
    if outside.len() > DEPARTURES_LISTED {
        out.push_str(&format!(
            "\n... and {} more rows (see the CSV, column `theory_in_interval`).\n",
            outside.len() - DEPARTURES_LISTED
        ));
    }
    out
}

fn key_table(rows: &[SweepRow]) -> String {
    let mut sized: Vec<&SweepRow> = rows.iter().filter(|r| crate::select::as_sized(r)).collect();
    sized.sort_by(|a, b| {
        a.key_set
            .cmp(&b.key_set)
            .then(a.n.cmp(&b.n))
            .then(b.p.total_cmp(&a.p))
            .then(a.filter.cmp(&b.filter))
    });
    let mut out = format!(
        "Every row filled as sized (overfill 1; {} rows; the other overfill factors are in the CSV and the \
         overfill picture). FPR is `observed [interval]` (an observed 0 means no false positive in the queries made; the \
         interval's upper end then bounds the rate); `in` says whether theory lies inside the interval. \
         Lookup times are ns per key, filter / HashSet on the same keys, indicative medians. Memory is \
         filter / HashSet. q/s/core is the row's non-member queries per second on one core during its \
         false-positive sampling (hashing and lookups of keys generated once for all rows of the same key \
         set and members; indicative).\n\n",
        sized.len()
    );
    let table_rows: Vec<Vec<String>> = sized
        .iter()
        .map(|r| {
            vec![
                r.filter.to_string(),
                r.key_set.clone(),
                r.n.to_string(),
                fmt::tick(r.p),
                fmt::sig(r.bits_per_key, 3),
                r.hashes.to_string(),
                observed(r),
                fmt::sig(r.fpr_theory, 3),
                if r.theory_in_interval {
                    "yes"
                } else {
                    "**no**"
                }
                .to_string(),
                format!(
                    "{} / {}",
                    fmt::sig(r.lookup_present_ns, 3),
                    fmt::sig(r.hashset_present_ns, 3)
                ),
                format!(
                    "{} / {}",
                    fmt::sig(r.lookup_absent_ns, 3),
                    fmt::sig(r.hashset_absent_ns, 3)
                ),
                format!(
                    "{} / {}",
                    fmt::bytes(r.memory_bytes),
                    fmt::bytes(r.hashset_memory_bytes)
                ),
                mega(r.queries_per_s_core),
            ]
        })
        .collect();
    out.push_str(&markdown::table(
        &[
            "filter",
            "key set",
            "n",
            "p",
            "bits/key",
            "k",
            "observed FPR [interval]",
            "theory",
            "in",
            "present ns (HashSet)",
            "absent ns (HashSet)",
            "memory (HashSet)",
            "q/s/core",
        ],
        &table_rows,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::synthetic_rows;

    #[test]
    fn a_dirty_revision_is_a_warning_in_the_header_and_a_clean_one_is_not() {
        let mut rows = synthetic_rows();
        let md = render_summary(&rows, "sweep.csv", &[]);
        assert!(
            md.starts_with(
                "# Sweep summary\n\n> **Warning: generated from uncommitted code (revision \
                 abc1234-dirty): not a committed baseline.**"
            ),
            "{md}"
        );
        for r in &mut rows {
            r.revision = "abc1234".into();
        }
        let md = render_summary(&rows, "sweep.csv", &[]);
        assert!(!md.contains("Warning"), "{md}");
    }

    #[test]
    fn summary_has_parameters_table_departures_and_links() {
        let rows = synthetic_rows();
        let links: Vec<String> = crate::PNG_NAMES.iter().map(|s| s.to_string()).collect();
        let md = render_summary(&rows, "sweep.csv", &links);
        for needle in [
            "| seed | 42 |",
            "| confidence level | 95.0% |",
            "abc1234-dirty",
        ] {
            assert!(md.contains(needle), "missing {needle:?} in\n{md}");
        }
        for link in &links {
            assert!(
                md.contains(&format!("]({link})")),
                "missing link {link} in\n{md}"
            );
        }
        assert!(
            md.contains("| filter | key set | n | p | bits/key | k | observed FPR [interval] |"),
            "key table header missing in\n{md}"
        );
        let sized = rows.iter().filter(|r| crate::select::as_sized(r)).count();
        let key_lines = md
            .lines()
            .skip_while(|l| !l.starts_with("## Key table"))
            .filter(|l| {
                l.starts_with("| ") && !l.starts_with("| filter") && !l.starts_with("| ---")
            })
            .count();
        assert_eq!(key_lines, sized, "one key-table line per as-sized row");
        // The synthetic textbook rows sit at three times theory: they must be listed as departures,
        // worst first.
        let departures: Vec<&str> = md
            .lines()
            .skip_while(|l| !l.starts_with("## What departs"))
            .take_while(|l| !l.starts_with("## Key table"))
            .filter(|l| l.starts_with("| textbook") || l.starts_with("| classic"))
            .collect();
        assert!(!departures.is_empty(), "no departures listed in\n{md}");
        assert!(
            departures[0].starts_with("| textbook-fnv1a-i32"),
            "{departures:?}"
        );
        assert!(
            departures[0].contains("observed above theory"),
            "{departures:?}"
        );
    }

    /// A departing row whose own rate (from its bits) lies in its interval is shown `in`, the
    /// others `**out**`, and the count of the former is stated.
    #[test]
    fn departures_show_each_filters_own_rate_and_count_those_inside() {
        let mut rows = synthetic_rows();
        let i = rows
            .iter()
            .position(|r| !r.theory_in_interval)
            .expect("the synthetic rows include departures");
        rows[i].fpr_given_bits = rows[i].fpr;
        rows[i].given_bits_in_interval = true;
        let md = departures(&rows);
        let flagged = rows.iter().filter(|r| !r.theory_in_interval).count();
        assert!(
            md.contains(&format!(
                "Of the {flagged} rows, 1 have their own rate inside the interval."
            )),
            "{md}"
        );
        let listed: Vec<&str> = md
            .lines()
            .filter(|l| {
                l.starts_with("| ") && !l.starts_with("| filter") && !l.starts_with("| ---")
            })
            .collect();
        assert_eq!(listed.len(), flagged.min(DEPARTURES_LISTED), "{md}");
        let inside = listed.iter().filter(|l| l.ends_with(" (in) |")).count();
        let outside = listed
            .iter()
            .filter(|l| l.ends_with(" (**out**) |"))
            .count();
        assert_eq!((inside, outside), (1, listed.len() - 1), "{md}");
    }
}
