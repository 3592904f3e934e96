//! Tests on synthetic criterion output: every figure here is made up for the test. The files are
//! written as JSON text, in the spellings earlier runs of the bench wrote, so these tests also
//! check that old results still read.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use bloomlab_harness::schema::bench::{
    BenchLog, Family, Group, Growth, KeyKind, LOG_FILE, Mode, Operation, PairedRecord, Series,
};

use super::input::{self, BenchKey};
use super::render;
use super::{Error, Machine, write_report};

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "bench-table-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes a criterion result as criterion does: `<group>/<safe label>/<n>/new/{benchmark,estimates}.json`.
fn write_estimate(dir: &Path, group: &str, label: &str, n: u64, median: f64) {
    let safe = label.replace(['/', '<', '>'], "_");
    let new = dir.join(group).join(safe).join(n.to_string()).join("new");
    std::fs::create_dir_all(&new).unwrap();
    let bench = serde_json::json!({
        "group_id": group, "function_id": label, "value_str": n.to_string(),
        "throughput": {"Elements": 1}, "full_id": format!("{group}/{label}/{n}"),
    });
    std::fs::write(new.join("benchmark.json"), bench.to_string()).unwrap();
    let ci = serde_json::json!({"confidence_level": 0.95, "lower_bound": median * 0.9, "upper_bound": median * 1.1});
    let est = serde_json::json!({
        "mean": {"confidence_interval": ci, "point_estimate": median * 1.05, "standard_error": 1.0},
        "median": {"confidence_interval": ci, "point_estimate": median, "standard_error": 1.0},
    });
    std::fs::write(new.join("estimates.json"), est.to_string()).unwrap();
}

fn record(
    label: &str,
    structure: &str,
    family: &str,
    p: Option<f64>,
    n: u64,
    heap: u64,
) -> serde_json::Value {
    serde_json::json!({
        "keys": "str", "label": label, "structure": structure, "family": family, "p": p, "n": n,
        "heap_bytes": heap, "build_ns_per_key": 50.0, "observed_fpr": p.unwrap_or(0.0),
        "absent_batch": 1000,
    })
}

const N: u64 = 1_000_000;

/// A synthetic run: std HashSet 100/40 ns, sbbf 20/10 ns (5x, 4x), blocked 30/5 ns (3.33x, 8x),
/// classic xxh3 50/20 ns (2x, 2x), fastbloom 25/25 ns.
fn synthetic(dir: &Path) {
    let records = vec![
        record(
            "std HashSet<String>",
            "std HashSet<String>",
            "hashset",
            None,
            N,
            80_000_000,
        ),
        record(
            "sbbf/xxh3 p=1%",
            "sbbf/xxh3",
            "bloomlab",
            Some(0.01),
            N,
            1_250_000,
        ),
        record(
            "blocked512/xxh3 p=1%",
            "blocked512/xxh3",
            "bloomlab",
            Some(0.01),
            N,
            1_200_000,
        ),
        record(
            "classic/xxh3/km/flat p=1%",
            "classic/xxh3/km/flat",
            "bloomlab",
            Some(0.01),
            N,
            1_000_000,
        ),
        record(
            "fastbloom p=1%",
            "fastbloom",
            "crate",
            Some(0.01),
            N,
            1_000_000,
        ),
    ];
    // Paired rounds: HashSet 100 ns per round; the structure's ns per round.
    let paired = |group: &str, label: &str, structure_ns: &[f64]| {
        serde_json::json!({
            "group": group, "label": label, "n": N, "reference": "std HashSet<String>",
            "reference_ns": vec![100.0; structure_ns.len()], "structure_ns": structure_ns,
        })
    };
    let paired = vec![
        // ratios 4, 5, 10: median 5.
        paired("lookup-present-str", "sbbf/xxh3 p=1%", &[25.0, 20.0, 10.0]),
        // ratios 2, 2.5, 5: median 2.5, below the 4x target.
        paired("lookup-absent-str", "sbbf/xxh3 p=1%", &[50.0, 40.0, 20.0]),
        paired(
            "lookup-present-str",
            "blocked512/xxh3 p=1%",
            &[20.0, 20.0, 20.0],
        ),
        paired(
            "lookup-absent-str",
            "blocked512/xxh3 p=1%",
            &[10.0, 10.0, 10.0],
        ),
        paired("lookup-present-str", "fastbloom p=1%", &[50.0, 50.0, 50.0]),
        paired("lookup-absent-str", "fastbloom p=1%", &[50.0, 50.0, 50.0]),
        paired("lookup-batch-absent-str", "sbbf/xxh3 p=1%", &[12.5, 12.5]),
    ];
    let log = serde_json::json!({
        "started_unix": 0, "updated_unix": 86_400 + 3_660, "mode": "full", "records": records,
        "paired": paired,
    });
    std::fs::write(dir.join(LOG_FILE), log.to_string()).unwrap();
    for (label, present, absent) in [
        ("std HashSet<String>", 100.0, 40.0),
        ("sbbf/xxh3 p=1%", 20.0, 10.0),
        ("blocked512/xxh3 p=1%", 30.0, 5.0),
        ("classic/xxh3/km/flat p=1%", 50.0, 20.0),
        ("fastbloom p=1%", 25.0, 25.0),
    ] {
        write_estimate(dir, "lookup-present-str", label, N, present);
        write_estimate(dir, "lookup-absent-str", label, N, absent);
    }
    write_estimate(dir, "lookup-batch-present-str", "sbbf/xxh3 p=1%", N, 12.5);
    write_estimate(dir, "lookup-batch-absent-str", "sbbf/xxh3 p=1%", N, 8.0);
    write_estimate(dir, "insert-str", "sbbf/xxh3 p=1%", N, 7.5);
    write_estimate(dir, "hash-str", "digest xxh3", N, 3.25);
}

fn machine() -> Machine {
    Machine {
        cpu: "Test CPU".into(),
        cores: 2,
        rustc: "rustc 0.0.0".into(),
        features: "avx2".into(),
        generated: "today".into(),
    }
}

#[test]
fn reads_medians_not_means() {
    let dir = TempDir::new();
    synthetic(&dir.0);
    let medians = input::read_medians(&dir.0).unwrap();
    let key = BenchKey {
        group: Group::new(Operation::LookupPresent, KeyKind::Str),
        label: "sbbf/xxh3 p=1%".into(),
        n: N,
    };
    assert_eq!(medians.get(&key), Some(&20.0), "{medians:?}");
    assert_eq!(medians.len(), 14);
    // Another bench's group in the same directory is not this bench's: skipped.
    write_estimate(&dir.0, "lookup-sideways-str", "sbbf/xxh3 p=1%", N, 1.0);
    assert_eq!(input::read_medians(&dir.0).unwrap().len(), 14);
}

/// The log's identities read into their types, and write back with the spellings they were read
/// with (the bench rewrites a full run's earlier log when it re-measures part of it).
#[test]
fn a_log_of_an_earlier_run_reads_into_types_and_writes_back_the_same_text() {
    let dir = TempDir::new();
    synthetic(&dir.0);
    let text = std::fs::read_to_string(dir.0.join(LOG_FILE)).unwrap();
    let log: BenchLog = serde_json::from_str(&text).unwrap();
    assert_eq!(log.mode, Mode::Full);
    assert_eq!(
        log.records.iter().map(|r| r.family).collect::<Vec<_>>(),
        [
            Family::HashSet,
            Family::Bloomlab,
            Family::Bloomlab,
            Family::Bloomlab,
            Family::Crate
        ]
    );
    assert!(log.records.iter().all(|r| r.keys == KeyKind::Str));
    assert_eq!(
        log.paired.last().map(|r: &PairedRecord| r.group),
        Some(Group::new(Operation::LookupBatchAbsent, KeyKind::Str))
    );
    let written: serde_json::Value = serde_json::to_value(&log).unwrap();
    let read: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(written, read);
    // Logs older than the paired rounds have no `paired` field.
    let old: BenchLog = serde_json::from_str(
        r#"{"started_unix": 0, "updated_unix": 0, "mode": "quick", "records": []}"#,
    )
    .unwrap();
    assert_eq!((old.mode, old.paired.len()), (Mode::Quick, 0));
}

#[test]
fn the_report_is_written_where_asked_and_a_malformed_log_is_named() {
    let dir = TempDir::new();
    synthetic(&dir.0);
    let out = dir.0.join("nested").join("table.md");
    write_report(&dir.0, &out, &machine()).unwrap();
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(md.starts_with("# Bloom filters vs HashSet"), "{md}");
    std::fs::write(
        dir.0.join(LOG_FILE),
        r#"{"started_unix": 0, "updated_unix": 0, "mode": "full", "records": [{"keys": "u32"}]}"#,
    )
    .unwrap();
    let err = write_report(&dir.0, &out, &machine()).unwrap_err();
    assert!(matches!(err, Error::Malformed { .. }), "{err:?}");
    assert!(err.to_string().contains(LOG_FILE), "{err}");
}

#[test]
fn table_rows_carry_ratios_memory_and_bits_per_key() {
    let dir = TempDir::new();
    synthetic(&dir.0);
    let log = input::read_memory(&dir.0).unwrap();
    let md = render::render(&log, &input::read_medians(&dir.0).unwrap(), &machine());
    let sbbf_row = md
        .lines()
        .find(|l| l.starts_with("| `sbbf/xxh3` | 1% |"))
        .unwrap_or_else(|| panic!("no sbbf row in:\n{md}"));
    // present 100/20 = 5x (paired 5x, rounds 4x to 10x), absent 40/10 = 4x (paired 2.5x, rounds
    // 2x to 5x), insert 7.5 ns, 1.25 MB = 1.2 MiB = 10 bits/key, memory 80e6/1.25e6 = 1/64.
    assert_eq!(
        sbbf_row,
        "| `sbbf/xxh3` | 1% | 20.0 | 5.00x | 5.00x (4.00–10.0) | 10.0 | 4.00x | 2.50x (2.00–5.00) | \
         7.50 | 1.2 MiB | 10.00 | 1/64 | 1.000% | 50 |"
    );
    // Without paired rounds, a dash.
    let classic_row = md
        .lines()
        .find(|l| l.starts_with("| `classic/xxh3/km/flat` | 1% |"))
        .unwrap_or_else(|| panic!("no classic row in:\n{md}"));
    assert!(classic_row.starts_with("| `classic/xxh3/km/flat` | 1% | 50.0 | 2.00x | — |"));
    assert!(md.contains("| `digest xxh3` | 3.25 |"), "{md}");
    assert!(
        md.contains("Test CPU, 2 cores; rustc 0.0.0; compiled for this CPU"),
        "{md}"
    );
    assert!(md.contains("features used: avx2"), "{md}");
    assert!(
        md.contains("1970-01-01 00:00 UTC to 1970-01-02 01:01 UTC"),
        "{md}"
    );
    assert!(
        md.contains("string keys `\"article-content-hash-\" + i`, n = 1M"),
        "{md}"
    );
}

#[test]
fn headline_reports_the_worst_variant_against_each_target() {
    let dir = TempDir::new();
    synthetic(&dir.0);
    let log = input::read_memory(&dir.0).unwrap();
    let md = render::render(&log, &input::read_medians(&dir.0).unwrap(), &machine());
    // By medians sbbf meets 4x (5x, 4x); paired, its absent lookups do not (2.5x).
    assert!(
        md.contains(
            "- split-block (`sbbf/*`), former target 4x for every variant: criterion medians: \
             present 5.00x (`sbbf/xxh3`), absent 4.00x (`sbbf/xxh3`), reaches it; paired rounds: \
             present 5.00x (`sbbf/xxh3`), absent 2.50x (`sbbf/xxh3`), below it (best variant by \
             criterion medians `sbbf/xxh3`: present 5.00x, absent 4.00x)."
        ),
        "{md}"
    );
    // Blocked: medians 3.33x present (not met), paired 5x and 10x (met).
    assert!(
        md.contains(
            "- blocked (`blocked512/*`), former target 4x for every variant: criterion medians: \
             present 3.33x (`blocked512/xxh3`), absent 8.00x (`blocked512/xxh3`), below it; \
             paired rounds: present 5.00x (`blocked512/xxh3`), absent 10.0x (`blocked512/xxh3`), \
             reaches it"
        ),
        "{md}"
    );
    // Classic has no paired rounds.
    assert!(
        md.contains(
            "reaches it; paired rounds: not measured, below it (best variant by criterion \
             medians `classic/xxh3/km/flat`: present 2.00x, absent 2.00x)."
        ),
        "{md}"
    );
    // Medians: fastbloom 25/25 ns against classic 50/20, blocked 30/5, sbbf 20/10. Paired: fastbloom
    // 2x/2x against sbbf 5x/2.5x and blocked 5x/10x, none slower.
    assert!(
        md.contains(
            "- Slower than `fastbloom` at the same p (present or absent): criterion \
             medians: 2 of 6 comparisons (all: `classic/xxh3/km/flat` present 0.50x, \
             `blocked512/xxh3` present 0.83x); paired rounds: none of 4 comparisons."
        ),
        "{md}"
    );
}

#[test]
fn batched_lookups_are_compared_with_the_hashsets_one_by_one_lookups() {
    let dir = TempDir::new();
    synthetic(&dir.0);
    let log = input::read_memory(&dir.0).unwrap();
    let md = render::render(&log, &input::read_medians(&dir.0).unwrap(), &machine());
    // HashSet 100/40 ns one by one; sbbf batched 12.5/8 ns: 8x and 5x; paired absent 100/12.5.
    assert!(
        md.contains(
            "| `std HashSet<String>` | 1M | `sbbf/xxh3` | 1% | 20.0 | 12.5 | 8.00x | — | \
             10.0 | 8.00 | 5.00x | 8.00x (8.00–8.00) |"
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "worst variant: split-block present 8.00x (`sbbf/xxh3`), absent 5.00x (`sbbf/xxh3`) \
             (criterion medians), present not measured, absent 8.00x (`sbbf/xxh3`) (paired rounds)."
        ),
        "{md}"
    );
    // Structures without batched results get no row.
    assert!(
        !md.contains("| `std HashSet<String>` | 1M | `blocked512/xxh3`"),
        "{md}"
    );
}

#[test]
fn missing_results_say_to_run_cargo_bench() {
    let dir = TempDir::new();
    let err = input::read_memory(&dir.0).unwrap_err();
    assert!(
        format!("{err:#}").contains("cargo bench --bench bloom_vs_hashset"),
        "{err:#}"
    );
    std::fs::create_dir_all(dir.0.join("some-group")).unwrap();
    let err = input::read_medians(&dir.0).unwrap_err();
    assert!(
        format!("{err:#}").contains("cargo bench --bench bloom_vs_hashset"),
        "{err:#}"
    );
    let err = input::read_medians(&dir.0.join("absent")).unwrap_err();
    assert!(format!("{err:#}").contains("cannot list"), "{err:#}");
}

/// A record of a capability series, as the bench writes it (`series`, `twin`, `growth` spelled
/// out; the main series writes none of them).
fn series_record(
    series: &str,
    mut r: serde_json::Value,
    twin: Option<&str>,
    growth: Option<(u64, u64, u64)>,
) -> serde_json::Value {
    r["series"] = series.into();
    if let Some(twin) = twin {
        r["twin"] = twin.into();
    }
    if let Some((factor, initial_capacity, stages)) = growth {
        r["growth"] = serde_json::json!({
            "factor": factor, "initial_capacity": initial_capacity, "stages": stages,
        });
    }
    r
}

/// The two capability series, made up: written after `synthetic` (whose records it keeps) or
/// alone (`with_main` false: a run restricted to the series).
///
/// Counting: HashSet insert/remove/present/absent 60/50/100/40 ns; the classic twin 10/-/25/12;
/// `counting4/xxh3/km` 20/25/50/16 at 4x the twin's heap; the textbook port 30/40/30/20, whose
/// twin was not measured. Scalable: HashSet 100/40; `sbbf/xxh3` static 20/10; the scalable sbbf at
/// G = 1 (1 stage) 25/12.5 and at G = 1024 (11 stages) 80/50; the peer at G = 16 (5 stages) 40/30
/// and at G = 1024 (10 stages) 125/80.
fn synthetic_series(dir: &Path, with_main: bool) {
    let std = "std HashSet<String>";
    let classic = "classic/xxh3/km/flat p=1%";
    let records = vec![
        series_record(
            "counting",
            record(std, std, "hashset", None, N, 80_000_000),
            None,
            None,
        ),
        series_record(
            "counting",
            record(
                classic,
                "classic/xxh3/km/flat",
                "bloomlab",
                Some(0.01),
                N,
                1_200_000,
            ),
            None,
            None,
        ),
        series_record(
            "counting",
            record(
                "counting4/xxh3/km p=1%",
                "counting4/xxh3/km",
                "bloomlab",
                Some(0.01),
                N,
                4_800_000,
            ),
            Some(classic),
            None,
        ),
        series_record(
            "counting",
            record(
                "textbook-counting-fnv1a-i32 p=1%",
                "textbook-counting-fnv1a-i32",
                "bloomlab",
                Some(0.01),
                N,
                4_800_000,
            ),
            Some("textbook-fnv1a-i32 p=1%"),
            None,
        ),
        series_record(
            "scalable",
            record(std, std, "hashset", None, N, 80_000_000),
            None,
            None,
        ),
        series_record(
            "scalable",
            record(
                "sbbf/xxh3 p=1%",
                "sbbf/xxh3",
                "bloomlab",
                Some(0.01),
                N,
                1_250_000,
            ),
            None,
            None,
        ),
        series_record(
            "scalable",
            record(
                "scalable/sbbf/xxh3 p=1% G=1024",
                "scalable/sbbf/xxh3",
                "bloomlab",
                Some(0.01),
                N,
                3_000_000,
            ),
            Some("sbbf/xxh3 p=1%"),
            Some((1024, 976, 11)),
        ),
        series_record(
            "scalable",
            record(
                "scalable/sbbf/xxh3 p=1% G=1",
                "scalable/sbbf/xxh3",
                "bloomlab",
                Some(0.01),
                N,
                2_500_000,
            ),
            Some("sbbf/xxh3 p=1%"),
            Some((1, 1_000_000, 1)),
        ),
        series_record(
            "scalable",
            record(
                "peer/growable-bloom-filter p=1% G=16",
                "peer/growable-bloom-filter",
                "crate",
                Some(0.01),
                N,
                2_000_000,
            ),
            None,
            Some((16, 62_500, 5)),
        ),
        series_record(
            "scalable",
            record(
                "peer/growable-bloom-filter p=1% G=1024",
                "peer/growable-bloom-filter",
                "crate",
                Some(0.01),
                N,
                2_500_000,
            ),
            None,
            Some((1024, 976, 10)),
        ),
    ];
    let mut log: serde_json::Value = if with_main {
        serde_json::from_str(&std::fs::read_to_string(dir.join(LOG_FILE)).unwrap()).unwrap()
    } else {
        serde_json::json!({"started_unix": 0, "updated_unix": 60, "mode": "quick", "records": []})
    };
    log["records"].as_array_mut().unwrap().extend(records);
    std::fs::write(dir.join(LOG_FILE), log.to_string()).unwrap();
    for (label, insert, remove, present, absent) in [
        (std, Some(60.0), Some(50.0), 100.0, 40.0),
        (classic, Some(10.0), None, 25.0, 12.0),
        ("counting4/xxh3/km p=1%", Some(20.0), Some(25.0), 50.0, 16.0),
        (
            "textbook-counting-fnv1a-i32 p=1%",
            Some(30.0),
            Some(40.0),
            30.0,
            20.0,
        ),
    ] {
        if let Some(ns) = insert {
            write_estimate(dir, "counting-insert-str", label, N, ns);
        }
        if let Some(ns) = remove {
            write_estimate(dir, "counting-remove-str", label, N, ns);
        }
        write_estimate(dir, "counting-lookup-present-str", label, N, present);
        write_estimate(dir, "counting-lookup-absent-str", label, N, absent);
    }
    for (label, present, absent) in [
        (std, 100.0, 40.0),
        ("sbbf/xxh3 p=1%", 20.0, 10.0),
        ("scalable/sbbf/xxh3 p=1% G=1", 25.0, 12.5),
        ("scalable/sbbf/xxh3 p=1% G=1024", 80.0, 50.0),
        ("peer/growable-bloom-filter p=1% G=16", 40.0, 30.0),
        ("peer/growable-bloom-filter p=1% G=1024", 125.0, 80.0),
    ] {
        write_estimate(dir, "scalable-lookup-present-str", label, N, present);
        write_estimate(dir, "scalable-lookup-absent-str", label, N, absent);
    }
}

/// The rendered report of `dir`.
fn report(dir: &Path) -> String {
    let log = input::read_memory(dir).unwrap();
    render::render(&log, &input::read_medians(dir).unwrap(), &machine())
}

/// The lines of `md` between the heading starting with `heading` and the next `## ` heading.
fn part<'m>(md: &'m str, heading: &str) -> Vec<&'m str> {
    md.lines()
        .skip_while(|l| !l.starts_with(heading))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| `"))
        .collect()
}

#[test]
fn series_records_read_into_their_types_and_keep_their_spelling() {
    let dir = TempDir::new();
    synthetic(&dir.0);
    synthetic_series(&dir.0, true);
    let text = std::fs::read_to_string(dir.0.join(LOG_FILE)).unwrap();
    let log: BenchLog = serde_json::from_str(&text).unwrap();
    let series: Vec<Series> = log.records.iter().map(|r| r.series).collect();
    assert_eq!(series.iter().filter(|s| **s == Series::Main).count(), 5);
    assert_eq!(series.iter().filter(|s| **s == Series::Counting).count(), 4);
    assert_eq!(series.iter().filter(|s| **s == Series::Scalable).count(), 6);
    let grown = log
        .records
        .iter()
        .find(|r| r.label == "scalable/sbbf/xxh3 p=1% G=1024")
        .unwrap();
    assert_eq!(
        grown.growth,
        Some(Growth {
            factor: 1024,
            initial_capacity: 976,
            stages: 11
        })
    );
    assert_eq!(grown.twin.as_deref(), Some("sbbf/xxh3 p=1%"));
    // Written back, the main series' records still have no series, twin or growth field.
    let written: serde_json::Value = serde_json::to_value(&log).unwrap();
    let read: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(written, read);
    let medians = input::read_medians(&dir.0).unwrap();
    let key = BenchKey {
        group: Group::in_series(Series::Counting, Operation::Remove, KeyKind::Str),
        label: "counting4/xxh3/km p=1%".into(),
        n: N,
    };
    assert_eq!(medians.get(&key), Some(&25.0));
}

#[test]
fn counting_rows_compare_with_the_twin_and_the_hashset_of_their_series() {
    let dir = TempDir::new();
    synthetic(&dir.0);
    synthetic_series(&dir.0, true);
    let md = report(&dir.0);
    let rows = part(&md, "## Counting filters");
    // HashSet first, then the classic twin with its counting filter, then the port whose twin was
    // not measured. counting4: insert 10/20, present 25/50, absent 12/16 against the twin;
    // 60/20, 50/25, 100/50, 40/16 against the HashSet; 4.8 MB = 4.6 MiB, 4x the twin's.
    assert_eq!(
        rows,
        [
            "| `std HashSet<String>` | — | 60.0 | 50.0 | 100 | 40.0 | — | — | — | 1.00x | 1.00x | \
             1.00x | 1.00x | 76.3 MiB | — | 0.000% |",
            "| `classic/xxh3/km/flat` | — | 10.0 | — | 25.0 | 12.0 | — | — | — | 6.00x | — | \
             4.00x | 3.33x | 1.1 MiB | — | 1.000% |",
            "| `counting4/xxh3/km` | `classic/xxh3/km/flat` | 20.0 | 25.0 | 50.0 | 16.0 | 0.50x | \
             0.50x | 0.75x | 3.00x | 2.00x | 2.00x | 2.50x | 4.6 MiB | 4.00x | 1.000% |",
            "| `textbook-counting-fnv1a-i32` | — | 30.0 | 40.0 | 30.0 | 20.0 | — | — | — | 2.00x | \
             1.25x | 3.33x | 2.00x | 4.6 MiB | — | 1.000% |",
        ],
        "{md}"
    );
    assert!(
        md.contains("### Counting series, string keys, n = 1M"),
        "{md}"
    );
    // The series' records stay out of the main tables: one HashSet row there, no counting row.
    let main = part(&md, "## How to read the tables");
    assert_eq!(
        main.iter()
            .filter(|l| l.starts_with("| `std HashSet<String>` | exact |"))
            .count(),
        1,
        "{md}"
    );
    assert!(!main.iter().any(|l| l.starts_with("| `counting4")), "{md}");
}

#[test]
fn scalable_rows_show_growth_stages_memory_and_the_static_twin() {
    let dir = TempDir::new();
    synthetic(&dir.0);
    synthetic_series(&dir.0, true);
    let md = report(&dir.0);
    let rows = part(&md, "## Scalable filters");
    // The static twin before its grown filters (by G, not by the label's text), the peer (no
    // twin) last, its rows by G too. G = 1024: 20/80
    // and 10/50 of the static time, 100/80 and 40/50 of the HashSet's, 24 bits/key, 2.4x the
    // static heap.
    assert_eq!(
        rows,
        [
            "| `std HashSet<String>` | — | — | — | 100 | 40.0 | — | — | 1.00x | 1.00x | 640.00 | — \
             | 0.000% |",
            "| `sbbf/xxh3` | static | 1M | 1 | 20.0 | 10.0 | — | — | 5.00x | 4.00x | 10.00 | — | \
             1.000% |",
            "| `scalable/sbbf/xxh3` | 1 | 1M | 1 | 25.0 | 12.5 | 0.80x | 0.80x | 4.00x | 3.20x | \
             20.00 | 2.00x | 1.000% |",
            "| `scalable/sbbf/xxh3` | 1024 | 976 | 11 | 80.0 | 50.0 | 0.25x | 0.20x | 1.25x | \
             0.80x | 24.00 | 2.40x | 1.000% |",
            "| `peer/growable-bloom-filter` | 16 | 62500 | 5 | 40.0 | 30.0 | — | — | 2.50x | 1.33x \
             | 16.00 | — | 1.000% |",
            "| `peer/growable-bloom-filter` | 1024 | 976 | 10 | 125 | 80.0 | — | — | 0.80x | 0.50x \
             | 20.00 | — | 1.000% |",
        ],
        "{md}"
    );
}

#[test]
fn a_log_without_the_series_says_what_is_missing_and_one_with_only_them_still_renders() {
    let dir = TempDir::new();
    synthetic(&dir.0);
    let md = report(&dir.0);
    for series in ["counting", "scalable"] {
        assert!(
            md.contains(&format!(
                "Not in this run's log: it holds no record of the {series} series"
            )) && md.contains(&format!("`BLOOMLAB_BENCH_ONLY='{series}: '`")),
            "{md}"
        );
    }
    assert!(part(&md, "## Counting filters").is_empty(), "{md}");
    // A run restricted to the two series: no headline or main table, both series' tables.
    let dir = TempDir::new();
    synthetic_series(&dir.0, false);
    let md = report(&dir.0);
    assert!(!md.contains("## Headline"), "{md}");
    assert!(!md.contains("Not in this run's log"), "{md}");
    assert_eq!(part(&md, "## Counting filters").len(), 4, "{md}");
    assert_eq!(part(&md, "## Scalable filters").len(), 6, "{md}");
}
