//! The sketches report, `reports/sketches_bench.md`: what `cargo bench --bench sketches` measured
//! (criterion's medians of the `sketch-<op>-<keys>` groups and the bench's log,
//! [`bloomlab_harness::sketch::bench`]), one table per question, key kind and n, each sketch beside
//! the exact `HashSet` / `HashMap` on the same keys.
//!
//! It is a file of its own, not a section of `bloom_vs_hashset.md`: the two benches run separately
//! (this one in a few minutes, the Bloom bench in most of an hour), so each report is regenerated
//! from its own bench's results without needing the other's.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;
use std::path::Path;

use bloomlab_harness::sketch::bench::{
    KeyKind, LOG_FILE, Question, SketchGroup, SketchLog, SketchOp, SketchRecord,
};

use super::{Error, Machine};
use crate::date::date_utc;
use crate::markdown::table;

/// The report's file name, beside `bloom_vs_hashset.md`.
pub const REPORT: &str = "sketches_bench.md";

/// Criterion's medians (ns per operation) by (group, label, n).
pub type SketchMedians = HashMap<(SketchGroup, String, u64), f64>;

/// The sketch bench's log and medians from `criterion_dir`, or `None` when the bench has not run
/// there (no log).
pub fn read(criterion_dir: &Path) -> Result<Option<(SketchLog, SketchMedians)>, Error> {
    let path = criterion_dir.join(LOG_FILE);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let log: SketchLog =
        serde_json::from_str(&text).map_err(|source| Error::Malformed { path, source })?;
    let mut medians = SketchMedians::new();
    for group in SketchGroup::all() {
        let dir = criterion_dir.join(group.name());
        if !dir.is_dir() {
            continue;
        }
        for e in super::input::read_estimates(&dir)? {
            if let Ok(g) = e.group.parse::<SketchGroup>() {
                medians.insert((g, e.label, e.n), e.median_ns);
            }
        }
    }
    Ok(Some((log, medians)))
}

/// Writes the report to `out` (whole or not at all) when `criterion_dir` holds the sketch bench's
/// log; returns whether it did.
pub fn write_report(criterion_dir: &Path, out: &Path, machine: &Machine) -> Result<bool, Error> {
    let Some((log, medians)) = read(criterion_dir)? else {
        return Ok(false);
    };
    let text = render(&log, &medians, machine);
    super::write_whole(out, &text)?;
    Ok(true)
}

fn fmt_ns(ns: Option<f64>) -> String {
    match ns {
        Some(x) if x >= 1e6 => format!("{:.2} ms", x / 1e6),
        Some(x) if x >= 1e3 => format!("{:.1} µs", x / 1e3),
        Some(x) if x < 10.0 => format!("{x:.2} ns"),
        Some(x) => format!("{x:.1} ns"),
        None => "—".into(),
    }
}

fn fmt_ratio(r: Option<f64>) -> String {
    match r {
        Some(x) if !x.is_finite() => "—".into(),
        Some(x) if x < 0.1 => format!("1/{:.0}", 1.0 / x),
        Some(x) if x < 10.0 => format!("{x:.2}x"),
        Some(x) => format!("{x:.0}x"),
        None => "—".into(),
    }
}

fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

fn fmt_n(n: u64) -> String {
    match n {
        n if n >= 1_000_000 && n.is_multiple_of(1_000_000) => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n.is_multiple_of(1_000) => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

struct View<'a> {
    log: &'a SketchLog,
    medians: &'a SketchMedians,
}

impl View<'_> {
    fn rows(&self, q: Question, keys: KeyKind, n: u64) -> Vec<&SketchRecord> {
        let mut rows: Vec<&SketchRecord> = self
            .log
            .records
            .iter()
            .filter(|r| r.question == q && r.keys == keys && r.n == n)
            .collect();
        // Sketches in the bench's order, the exact structure last.
        rows.sort_by_key(|r| r.exact);
        rows
    }

    fn exact(&self, q: Question, keys: KeyKind, n: u64) -> Option<&SketchRecord> {
        self.rows(q, keys, n).into_iter().find(|r| r.exact)
    }

    fn ns(&self, op: SketchOp, r: &SketchRecord) -> Option<f64> {
        let g = SketchGroup { op, keys: r.keys };
        self.medians.get(&(g, r.label.clone(), r.n)).copied()
    }

    /// The exact structure's time over this one's: above 1x the sketch is faster.
    fn speedup(&self, op: SketchOp, r: &SketchRecord) -> Option<f64> {
        let e = self.exact(r.question, r.keys, r.n)?;
        Some(self.ns(op, e)? / self.ns(op, r)?)
    }

    fn heap_share(&self, r: &SketchRecord) -> Option<f64> {
        let e = self.exact(r.question, r.keys, r.n)?;
        (e.heap_bytes > 0).then(|| r.heap_bytes as f64 / e.heap_bytes as f64)
    }
}

fn distinct_table(out: &mut String, v: &View, keys: KeyKind, n: u64) {
    let reference = Question::Distinct.reference(keys);
    let _ = writeln!(
        out,
        "### Distinct count, {} keys, n = {}\n",
        keys.as_str(),
        fmt_n(n)
    );
    let headers = [
        "structure".to_owned(),
        "heap".into(),
        format!("heap vs `{reference}`"),
        "build ns/key".into(),
        "insert".into(),
        "insert vs exact".into(),
        "estimate".into(),
        "answer after n keys".into(),
        "error".into(),
    ];
    let rows: Vec<Vec<String>> = v
        .rows(Question::Distinct, keys, n)
        .into_iter()
        .map(|r| {
            vec![
                format!("`{}`", r.label),
                fmt_bytes(r.heap_bytes),
                fmt_ratio(v.heap_share(r)),
                format!("{:.1}", r.build_ns_per_key),
                fmt_ns(v.ns(SketchOp::Insert, r)),
                fmt_ratio(v.speedup(SketchOp::Insert, r)),
                fmt_ns(v.ns(SketchOp::Estimate, r)),
                format!("{:.0}", r.answer),
                format!("{:+.2}%", (r.answer / r.n as f64 - 1.0) * 100.0),
            ]
        })
        .collect();
    out.push_str(&table(&headers, &rows));
    out.push('\n');
}

fn frequency_table(out: &mut String, v: &View, keys: KeyKind, n: u64) {
    let reference = Question::Frequency.reference(keys);
    let _ = writeln!(
        out,
        "### Frequency count, {} keys, n = {}\n",
        keys.as_str(),
        fmt_n(n)
    );
    let headers = [
        "structure".to_owned(),
        "heap".into(),
        format!("heap vs `{reference}`"),
        "build ns/key".into(),
        "add 1".into(),
        "add vs exact".into(),
        "point query".into(),
        "query vs exact".into(),
        "mean answer for a key added once".into(),
    ];
    let rows: Vec<Vec<String>> = v
        .rows(Question::Frequency, keys, n)
        .into_iter()
        .map(|r| {
            vec![
                format!("`{}`", r.label),
                fmt_bytes(r.heap_bytes),
                fmt_ratio(v.heap_share(r)),
                format!("{:.1}", r.build_ns_per_key),
                fmt_ns(v.ns(SketchOp::Insert, r)),
                fmt_ratio(v.speedup(SketchOp::Insert, r)),
                fmt_ns(v.ns(SketchOp::Query, r)),
                fmt_ratio(v.speedup(SketchOp::Query, r)),
                format!("{:.1}", r.answer),
            ]
        })
        .collect();
    out.push_str(&table(&headers, &rows));
    out.push('\n');
}

/// One headline line per question at the largest n on string keys: the contract's sketch
/// (HyperLogLog p = 14, Count-Min 2719 x 5) against the exact structure.
fn headline(out: &mut String, v: &View, n: u64) {
    let keys = KeyKind::Str;
    let find = |q: Question, prefix: &str| {
        v.rows(q, keys, n)
            .into_iter()
            .find(|r| r.label.starts_with(prefix) && (!r.label.ends_with("/cu")))
    };
    let _ = writeln!(out, "## Headline (string keys, n = {})\n", fmt_n(n));
    for (q, prefix, query) in [
        (Question::Distinct, "hll/xxh3/p14", SketchOp::Estimate),
        (Question::Frequency, "cms/xxh3/", SketchOp::Query),
    ] {
        let (Some(r), Some(e)) = (find(q, prefix), v.exact(q, keys, n)) else {
            continue;
        };
        let _ = writeln!(
            out,
            "- `{}` holds {} against `{}`'s {} ({}); {} takes {} against {} ({} faster); \
             a{} {} takes {} against {}.",
            r.label,
            fmt_bytes(r.heap_bytes),
            e.label,
            fmt_bytes(e.heap_bytes),
            fmt_ratio(v.heap_share(r)),
            if query == SketchOp::Estimate {
                "an insert"
            } else {
                "an add of 1"
            },
            fmt_ns(v.ns(SketchOp::Insert, r)),
            fmt_ns(v.ns(SketchOp::Insert, e)),
            fmt_ratio(v.speedup(SketchOp::Insert, r)),
            if query == SketchOp::Estimate { "n" } else { "" },
            if query == SketchOp::Estimate {
                "estimate"
            } else {
                "point query"
            },
            fmt_ns(v.ns(query, r)),
            fmt_ns(v.ns(query, e)),
        );
    }
    out.push('\n');
}

/// The whole report.
pub fn render(log: &SketchLog, medians: &SketchMedians, machine: &Machine) -> String {
    let v = View { log, medians };
    let mut out = String::new();
    out.push_str("# Sketches vs exact counts: inserts, estimates and memory\n\n");
    out.push_str(
        "Generated by `cargo run --release --bin bench-table` from criterion's median estimates \
         of `cargo bench --bench sketches` (groups `sketch-<op>-<keys>`) and the heap bytes the \
         bench's counting allocator measured (`target/criterion/sketches-memory.json`). Do not \
         edit by hand. The sketches' accuracy contracts are checked by the sketch sweep, in \
         [sketches/summary.md](sketches/summary.md); this report is about their cost.\n\n",
    );
    let _ = writeln!(
        out,
        "- Machine: {}, {} cores; {}; compiled for this CPU (features used: {}).\n- Bench run ({} \
         mode): {} to {}; report generated {}.\n",
        machine.cpu,
        machine.cores,
        machine.rustc,
        machine.features,
        log.mode,
        date_utc(log.started_unix),
        date_utc(log.updated_unix),
        machine.generated
    );
    let sizes: BTreeSet<u64> = log.records.iter().map(|r| r.n).collect();
    if let Some(&largest) = sizes.last() {
        headline(&mut out, &v, largest);
    }
    out.push_str(
        "## How to read the tables\n\n\
         - Keys: `bloom_vs_hashset`'s (the strings `\"article-content-hash-\" + i` and random \
         distinct u64s), n distinct keys each added once to build; every sketch hashes with xxh3. \
         `peer/hyperloglogplus` is the crates.io HyperLogLog++ fed the same xxh3 hash.\n\
         - *insert* / *add 1*: criterion's median time to add one key of a batch of up to 2^20 \
         inserted keys drawn at random (so the structure is probed at random): a HyperLogLog's \
         register update, a Count-Min's add of 1 to its 5 rows (`/cu`: conservative update, which \
         reads the 5 counters first), the `HashSet`'s insert-if-absent and the `HashMap`'s counter \
         increment (the keys are present, so neither allocates). *vs exact*: the exact \
         structure's median over this row's; above 1x the sketch is faster.\n\
         - *estimate*: one distinct-count answer: a HyperLogLog reads all its 2^p registers \
         (HyperLogLog++ likewise, once dense); a `HashSet` knows its length. *point query*: one \
         count of a present key.\n\
         - *heap*: live heap bytes after the build, from a counting global allocator (the exact \
         structures' tables plus every `String`; allocator overhead not included). *build ns/key*: \
         one build from empty timed with a wall clock, divided by n.\n\
         - *answer after n keys* / *error*: the estimate after the build against the true n (one \
         draw; the sweep measures the error's distribution). *mean answer for a key added once*: \
         the mean point estimate over the query batch, whose true value is 1: with N = n keys \
         each added once, Count-Min's overcount of each key is about N/w per row (its contract \
         bounds it by epsilon N = n/1000 with probability 1 - delta), which the minimum over rows \
         and conservative update reduce but do not remove; a stream of distinct keys is the worst \
         case for a frequency sketch.\n\n",
    );
    for q in Question::ALL {
        let _ = writeln!(
            out,
            "## {}\n",
            match q {
                Question::Distinct => "Distinct count: HyperLogLog against a HashSet",
                Question::Frequency => "Frequency count: Count-Min against a HashMap",
            }
        );
        for keys in KeyKind::ALL {
            for &n in &sizes {
                if v.rows(q, keys, n).is_empty() {
                    continue;
                }
                match q {
                    Question::Distinct => distinct_table(&mut out, &v, keys, n),
                    Question::Frequency => frequency_table(&mut out, &v, keys, n),
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomlab_harness::sketch::bench::Mode;

    fn record(question: Question, label: &str, exact: bool, heap: u64) -> SketchRecord {
        SketchRecord {
            keys: KeyKind::Str,
            question,
            label: label.into(),
            exact,
            n: 1_000_000,
            heap_bytes: heap,
            build_ns_per_key: 10.0,
            answer: if question == Question::Distinct {
                1_010_000.0
            } else {
                3.0
            },
        }
    }

    #[test]
    fn ratios_come_from_the_medians_and_the_heap_records() {
        let log = SketchLog {
            started_unix: 0,
            updated_unix: 60,
            mode: Mode::Full,
            records: vec![
                record(Question::Distinct, "std HashSet<String>", true, 80 << 20),
                record(Question::Distinct, "hll/xxh3/p14", false, 16 << 10),
                record(Question::Frequency, "cms/xxh3/2719x5", false, 108_760),
                record(
                    Question::Frequency,
                    "std HashMap<String, u64>",
                    true,
                    96 << 20,
                ),
            ],
        };
        let g = |op| SketchGroup {
            op,
            keys: KeyKind::Str,
        };
        let mut medians = SketchMedians::new();
        for (op, label, ns) in [
            (SketchOp::Insert, "std HashSet<String>", 500.0),
            (SketchOp::Insert, "hll/xxh3/p14", 20.0),
            (SketchOp::Estimate, "hll/xxh3/p14", 36_000.0),
            (SketchOp::Estimate, "std HashSet<String>", 1.5),
            (SketchOp::Query, "cms/xxh3/2719x5", 40.0),
            (SketchOp::Query, "std HashMap<String, u64>", 400.0),
        ] {
            medians.insert((g(op), label.to_owned(), 1_000_000), ns);
        }
        let machine = Machine {
            cpu: "cpu".into(),
            cores: 2,
            rustc: "rustc".into(),
            features: "avx2".into(),
            generated: "now".into(),
        };
        let text = render(&log, &medians, &machine);
        // 500 / 20 = 25x faster; 16 KiB of 80 MiB = 1/5120; estimate 36 µs.
        assert!(text.contains("| `hll/xxh3/p14` | 16.0 KiB | 1/5120 | 10.0 | 20.0 ns | 25x | 36.0 µs | 1010000 | +1.00% |"), "{text}");
        // The exact row is last and compares with itself; a missing median prints a dash.
        assert!(
            text.contains(
                "| `std HashSet<String>` | 80.0 MiB | 1.00x | 10.0 | 500.0 ns | 1.00x | 1.50 ns |"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "| `cms/xxh3/2719x5` | 106.2 KiB | 1/926 | 10.0 | — | — | 40.0 ns | 10x | 3.0 |"
            ),
            "{text}"
        );
        assert!(text.contains("## Headline (string keys, n = 1M)"), "{text}");
        assert!(text.contains("Frequency count, str keys, n = 1M"), "{text}");
    }
}
