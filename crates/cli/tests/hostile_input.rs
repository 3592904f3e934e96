//! Hostile input to the binaries: every case must exit with status 2 and a message naming the
//! value, before anything is measured (no rows printed, no point re-run, in well under a second of
//! work). The `bloomlab` tool's cases are in crates/tool/tests/hostile_input.rs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[allow(dead_code)] // each package's tests use some of the helpers
#[path = "support/hostile.rs"]
mod support;
use support::*;

const SWEEP: &str = env!("CARGO_BIN_EXE_sweep");
const GATE: &str = env!("CARGO_BIN_EXE_gate");
const REDIS_COSTS: &str = env!("CARGO_BIN_EXE_redis-costs");

// ---------------------------------------------------------------- sweep

#[test]
fn sweep_refuses_an_overfill_beyond_64() {
    refused(
        SWEEP,
        &["--overfill", "1e300"],
        &["overfill = 1e300", "at most 64"],
    );
    refused(SWEEP, &["--overfill", "NaN"], &["overfill = NaN"]);
    refused(
        SWEEP,
        &["--overfill", "1e-300"],
        &["overfill = 1e-300", "n = 10000 gives 0"],
    );
}

#[test]
fn sweep_refuses_threads_beyond_4_per_core() {
    refused(
        SWEEP,
        &["--threads", "20000"],
        &["threads = 20000", "4 per core"],
    );
}

#[test]
fn sweep_refuses_bad_counts_and_rates_with_one_parser() {
    refused(SWEEP, &["--n", "-5"], &["n = \"-5\"", "1 to 2^53"]);
    refused(SWEEP, &["--n", "1e300"], &["n = \"1e300\"", "1 to 2^53"]);
    refused(SWEEP, &["--n", "9007199254740993"], &["2^53"]);
    refused(SWEEP, &["--max-queries", "0"], &["--max-queries = \"0\""]);
    refused(SWEEP, &["--p", "NaN"], &["p = NaN", "(0, 1)"]);
    refused(SWEEP, &["--p", "inf"], &["p = inf", "(0, 1)"]);
    refused(SWEEP, &["--confidence", "1"], &["confidence = 1"]);
    refused(SWEEP, &["--filters", ""], &["--filters", "at least one"]);
    refused(
        SWEEP,
        &["--memory-limit", "-1"],
        &["--memory-limit = \"-1\""],
    );
}

#[test]
fn sweep_shows_a_tiny_rate_compactly_and_the_cause_once() {
    let err = refused(
        SWEEP,
        &[
            "--filters",
            "classic/xxh3/km/flat",
            "--n",
            "1000",
            "--p",
            "1e-300",
        ],
        &["p = 1e-300", "k = 997", "1..=255"],
    );
    assert_eq!(err.matches("k = 997").count(), 1, "{err}");
    assert!(!err.contains("0.000000"), "{err}");
}

#[test]
fn sweep_refuses_an_output_directory_that_is_a_file_before_measuring() {
    let dir = scratch("sweep-out");
    let file = dir.join("a-file");
    std::fs::write(&file, "keep").unwrap();
    refused(
        SWEEP,
        &["--quick", "--out", s(&file)],
        &[s(&file), "not a directory"],
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
    // An output file that is a directory, and a directory below a regular file.
    let out = dir.join("out");
    std::fs::create_dir_all(out.join("sweep.csv")).unwrap();
    refused(
        SWEEP,
        &["--quick", "--out", s(&out)],
        &["sweep.csv", "is a directory"],
    );
    let below = file.join("sub");
    refused(SWEEP, &["--quick", "--out", s(&below)], &[s(&below)]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sweep_refuses_a_plan_larger_than_the_memory_limit() {
    // Two filters for n = 1e10 at p = 1e-3 (18 GB each) would be held at once.
    let err = refused(
        SWEEP,
        &[
            "--filters",
            "classic/xxh3/km/flat,sbbf/xxh3",
            "--keys",
            "random-u64",
            "--n",
            "1e10",
            "--p",
            "1e-3",
            "--no-timing",
            "--memory-limit",
            "24e9",
        ],
        &["24000000000 bytes", "--memory-limit", "2 filter(s)"],
    );
    // The needed figure is the two filters' bytes plus two threads' key batches at most, plus
    // the keys the group shares: 10^10 members and 2e7 queries of 8 bytes are past its budget,
    // so the whole budget.
    let needed: u64 = err
        .split(" bytes: ")
        .next()
        .and_then(|head| head.rsplit('(').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no byte count in {err}"));
    let shared = bloomlab_harness::keys::group::GROUP_KEY_BYTES;
    assert!(
        (35_900_000_000..36_000_000_000).contains(&(needed - shared)),
        "{err}"
    );
}

#[test]
fn sweep_names_the_line_of_a_non_utf8_key_file() {
    let dir = scratch("sweep-keys");
    let keys = dir.join("keys.txt");
    std::fs::write(&keys, b"one\ntwo\nth\xe9ree\n").unwrap();
    let arg = format!("file:{}", s(&keys));
    refused(
        SWEEP,
        &["--keys", &arg],
        &["keys.txt", "line 3, column 3", "0xe9"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------- gate

const HEADER: &str = "filter,key_set,n,p,seed,queries,false_positives\n";
const GOOD: &str = "classic/xxh3/km/flat,random-u64,100000,0.01,20261125,1028113,10452\n";

/// Writes a baseline whose third line is `row` and returns its path.
fn baseline(dir: &Path, name: &str, row: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("{HEADER}{GOOD}{row}\n")).unwrap();
    path
}

/// Writes a one-point baseline `good.csv` and returns its path.
fn good_baseline(dir: &Path) -> PathBuf {
    let path = dir.join("good.csv");
    std::fs::write(&path, format!("{HEADER}{GOOD}")).unwrap();
    path
}

#[test]
fn gate_refuses_bad_baseline_rows_with_file_line_and_column() {
    let dir = scratch("gate-rows");
    let cases = [
        (
            "queries0.csv",
            "classic/xxh3/km/flat,random-u64,100000,0.01,1,0,0",
            "column 47 (queries)",
        ),
        (
            "fpmax.csv",
            "classic/xxh3/km/flat,random-u64,100000,0.01,1,1000,18446744073709551615",
            "column 52 (false_positives)",
        ),
        (
            "fpover.csv",
            "classic/xxh3/km/flat,random-u64,100000,0.01,1,1000,1001",
            "column 52 (false_positives)",
        ),
        (
            "pnan.csv",
            "classic/xxh3/km/flat,random-u64,100000,NaN,1,1000,1",
            "column 40 (p)",
        ),
        (
            "n0.csv",
            "classic/xxh3/km/flat,random-u64,0,0.01,1,1000,1",
            "column 33 (n)",
        ),
        (
            "filter.csv",
            "classic/md5/km/flat,random-u64,100000,0.01,1,1000,1",
            "column 1 (filter)",
        ),
        (
            "keys.csv",
            "classic/xxh3/km/flat,words,100000,0.01,1,1000,1",
            "column 22 (key_set)",
        ),
    ];
    for (name, row, column) in cases {
        let path = baseline(&dir, name, row);
        let err = refused(GATE, &["--baseline", s(&path)], &[name, "line 3", column]);
        assert!(!err.contains(" pass ") && !err.contains("FAIL"), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The committed baseline (12 points).
fn committed() -> String {
    format!(
        "{}/../../reports/baseline/gate.csv",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn gate_refuses_an_alpha_below_its_derived_floor() {
    let committed = committed();
    let with = |flags: &[&'static str]| -> Vec<&str> {
        let mut v = vec!["--baseline", committed.as_str()];
        v.extend_from_slice(flags);
        v
    };
    refused(
        GATE,
        &with(&["--alpha", "1e-20"]),
        &["--alpha = 1e-20", "2^-52", "[9.993e-15, 1)"],
    );
    refused(GATE, &with(&["--alpha", "NaN"]), &["--alpha = NaN"]);
    refused(GATE, &with(&["--power", "1"]), &["--power = 1"]);
    refused(
        GATE,
        &with(&["--detect", "0"]),
        &["--detect = 0", "(0, 10]"],
    );
}

#[test]
fn gate_says_a_baseline_directory_is_a_directory() {
    let dir = scratch("gate-dir");
    refused(GATE, &["--baseline", s(&dir)], &[s(&dir), "is a directory"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gate_refuses_an_unwritable_report_before_measuring() {
    let dir = scratch("gate-report");
    let good = good_baseline(&dir);
    refused(
        GATE,
        &["--baseline", s(&good), "--report", s(&dir)],
        &["--report", "is a directory"],
    );
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let below = file.join("report.md");
    refused(
        GATE,
        &["--baseline", s(&good), "--report", s(&below)],
        &["--report", "cannot create its directory"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gate_update_refuses_an_unplannable_change_and_an_unwritable_baseline() {
    let dir = scratch("gate-update");
    let good = good_baseline(&dir);
    refused(
        GATE,
        &["--baseline", s(&good), "--update", "--detect", "1e-300"],
        &["--detect = 1e-300", "2^53"],
    );
    // A missing baseline below a regular file cannot be created: refused before re-measuring.
    let below = good.join("gate.csv");
    refused(
        GATE,
        &["--baseline", s(&below), "--update"],
        &["--baseline", "cannot create its directory"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

const SKETCH_HEADER: &str = "kind,sketch,n,epsilon,delta,exponent,universe,stream,trials,seed,bias,sd,rms,violations,items\n";
const SKETCH_ROW: &str = "hll,hll/xxh3/p12,1000,0.0,0.0,0.0,0,0,2,17,0.0,0.01,0.01,0,0\n";

/// Issue 28, case 4: in check mode a bad --sketch-baseline was found only after every filter
/// point ran (table on stdout, then exit 2). It is bad input found before any point runs.
#[test]
fn gate_reads_the_sketch_baseline_before_any_point_runs() {
    let dir = scratch("gate-sketch-check");
    let good = good_baseline(&dir);
    let bad = dir.join("sketches.csv");
    std::fs::write(&bad, format!("{SKETCH_HEADER}{SKETCH_ROW}{SKETCH_ROW}")).unwrap();
    refused(
        GATE,
        &["--baseline", s(&good), "--sketch-baseline", s(&bad)],
        &["sketches.csv", "line 3 repeats the point of line 2"],
    );
    refused(
        GATE,
        &["--baseline", s(&good), "--sketch-baseline", s(&dir)],
        &["sketch baseline", "is a directory"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 28, case 4: `--update` rewrote the filter baseline, then failed on a bad or unwritable
/// sketch baseline, leaving one file updated. Both are checked first; neither file changes.
#[test]
fn gate_update_changes_neither_baseline_when_the_sketch_baseline_is_bad() {
    let dir = scratch("gate-sketch-update");
    let good = good_baseline(&dir);
    let before = std::fs::read(&good).unwrap();
    let bad = dir.join("sketches.csv");
    let bad_text = format!("{SKETCH_HEADER}{}", SKETCH_ROW.replace("hll,", "hyper,"));
    std::fs::write(&bad, &bad_text).unwrap();
    refused(
        GATE,
        &[
            "--baseline",
            s(&good),
            "--sketch-baseline",
            s(&bad),
            "--update",
        ],
        &["sketches.csv", "(kind)", "hll or cms"],
    );
    // A sketch baseline that cannot be written (its directory would be a regular file).
    let below = good.join("sketches.csv");
    refused(
        GATE,
        &[
            "--baseline",
            s(&good),
            "--sketch-baseline",
            s(&below),
            "--update",
        ],
        &["--sketch-baseline", "cannot create its directory"],
    );
    assert_eq!(
        std::fs::read(&good).unwrap(),
        before,
        "the filter baseline changed"
    );
    assert_eq!(std::fs::read_to_string(&bad).unwrap(), bad_text);
    // Nothing staged was left behind.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["good.csv", "sketches.csv"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--update-sketches` rewrites the sketch baseline whole (a staged copy renamed into place),
/// keeping the file's permissions and leaving no temporary file.
#[test]
fn gate_update_sketches_rewrites_the_file_whole() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("gate-sketch-rewrite");
    let path = dir.join("sketches.csv");
    std::fs::write(&path, format!("{SKETCH_HEADER}{SKETCH_ROW}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let r = run(GATE, &["--sketch-baseline", s(&path), "--update-sketches"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let text = std::fs::read_to_string(&path).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert_eq!(rows[0], SKETCH_HEADER.trim_end());
    // The two trials' measured error replaced the row's placeholder figures.
    assert!(rows[1].starts_with("hll,hll/xxh3/p12,1000,"), "{text}");
    assert_ne!(rows[1], SKETCH_ROW.trim_end(), "{text}");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 28, case 9: a churn point with no rounds failed at run time ("FAIL (run)", exit 1, read
/// as drift); a repeated point was re-run twice. Both are bad input now (exit 2).
#[test]
fn gate_refuses_bad_workload_rows_and_repeated_points() {
    let dir = scratch("gate-workload-rows");
    let wide =
        "filter,key_set,n,p,seed,queries,false_positives,workload,rounds,churn,overfill,growth\n";
    let path = dir.join("rounds0.csv");
    std::fs::write(
        &path,
        format!("{wide}counting4/xxh3/km,random-u64,1000,0.01,1,1000,10,churn,0,0.1,1.0,0\n"),
    )
    .unwrap();
    refused(
        GATE,
        &["--baseline", s(&path)],
        &["rounds0.csv", "line 2, column 56 (rounds)", "at least 1"],
    );
    let dup = baseline(&dir, "dup.csv", GOOD.trim_end());
    refused(
        GATE,
        &["--baseline", s(&dup)],
        &["dup.csv", "line 3 repeats the point of line 2"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gate_refuses_points_larger_than_the_memory_limit() {
    let dir = scratch("gate-memory");
    let good = good_baseline(&dir);
    refused(
        GATE,
        &["--baseline", s(&good), "--memory-limit", "1e3"],
        &["1000 bytes", "--memory-limit"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn redis_costs_refuses_bad_flags_and_a_missing_server_before_connecting() {
    // An address nothing listens on: the flags are checked before any connection is tried.
    let url = "redis://127.0.0.1:1";
    refused(
        REDIS_COSTS,
        &["--redis", url, "--batches", "1,0,16"],
        &["--batches", "\"0\"", "from 1"],
    );
    refused(
        REDIS_COSTS,
        &["--redis", url, "--keys", "0"],
        &["--keys = \"0\"", "from 1 to 2^53"],
    );
    refused(
        REDIS_COSTS,
        &["--redis", url, "--reps", "0"],
        &["--reps = \"0\"", "from 1 to 2^53"],
    );
    let out = Command::new(REDIS_COSTS)
        .env_remove("BLOOMLAB_REDIS_URL")
        .env_remove("BLOOMLAB_REDIS_CLUSTER_URLS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("BLOOMLAB_REDIS_URL") && stderr.contains("scripts/redis-local.sh start"),
        "{stderr}"
    );
    // A server that is not there: exit 1, the error names the address. With an --out of its own:
    // the default (reports/redis) is relative to the test's directory, crates/cli, and a lock
    // file left there changed the source tree the binaries' build script watches.
    let dir = scratch("redis-costs-out");
    let out = dir.to_str().unwrap();
    let args = ["--redis", url, "--keys", "1", "--reps", "1", "--out", out];
    let r = run(REDIS_COSTS, &args);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("127.0.0.1:1"), "{}", r.stderr);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 28, case 7: `redis-costs --keys 18446744073709551615` panicked ("capacity overflow") and
/// `--keys 2e8` aborted on allocation. Every count flag is now parsed as the sweep's (1 to 2^53)
/// and the run's peak memory is compared with --memory-limit before anything is allocated or a
/// server contacted (the address here has no server): exit 2, naming the flag and the value.
#[test]
fn redis_costs_bounds_every_count_and_checks_memory_before_allocating() {
    let url = "redis://127.0.0.1:1";
    for (flag, value) in [
        ("--keys", "18446744073709551615"),
        ("--keys", "-1"),
        ("--keys", "1.5"),
        ("--keys", "NaN"),
        ("--big-members", "1e300"),
        ("--big-members", "0"),
    ] {
        refused(
            REDIS_COSTS,
            &["--redis", url, flag, value],
            &[&format!("{flag} = {value:?}"), "from 1 to 2^53"],
        );
    }
    refused(
        REDIS_COSTS,
        &["--redis", url, "--reps", "5e9"],
        &["--reps = \"5e9\"", "from 1 to 4294967295"],
    );
    // Counts in range whose memory is not there: refused before allocating, naming the flag's
    // value, the figure and the limit. 2e8 keys alone hold 200,000,000 strings (over 10 GB).
    for args in [
        vec!["--keys", "2e8", "--reps", "1", "--skip-big", "--skip-sweep"],
        vec!["--keys", "2e8"],
        vec!["--big-members", "1e9", "--skip-sweep"],
    ] {
        let mut all = vec!["--redis", url, "--memory-limit", "1e9"];
        all.extend(&args);
        let named = if args[0] == "--keys" {
            "--keys 200000000"
        } else {
            "--big-members 1000000000"
        };
        refused(
            REDIS_COSTS,
            &all,
            &["allowed by --memory-limit", "1000000000 bytes", named],
        );
    }
    refused(
        REDIS_COSTS,
        &["--redis", url, "--memory-limit", "0"],
        &["--memory-limit = \"0\""],
    );
}

/// The cluster retry time (issue 28, case 6) is bad input when out of range, before connecting.
#[test]
fn a_bad_redis_retry_time_is_refused_naming_the_variable_and_range() {
    for bin in [SWEEP, REDIS_COSTS] {
        for value in ["601", "-1", "2.5", "soon"] {
            let mut args = vec!["--redis", "redis://127.0.0.1:1"];
            if bin == SWEEP {
                args.extend(["--filters", "redis/classic/xxh3/km"]);
            }
            let start = Instant::now();
            let out = Command::new(bin)
                .args(&args)
                .env("BLOOMLAB_REDIS_RETRY_SECS", value)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{bin} {value}: {stderr}");
            assert!(
                stderr.contains(&format!("BLOOMLAB_REDIS_RETRY_SECS = {value:?}"))
                    && stderr.contains("0 (no retry) to 600"),
                "{bin} {value}: {stderr}"
            );
            assert!(start.elapsed() < PREFLIGHT_TIME);
        }
    }
}

// ---------------------------------------------------------------- issue 28: bounded reads

/// The longest key line (bytes), as `bloomlab_harness::keys::MAX_KEY_BYTES` states it.
const MAX_KEY: &str = "1048576";

/// Most stderr any refusal below may print: a message quotes at most a short prefix of bad input.
const SHORT_STDERR: usize = 2000;

/// A sparse file of `len` bytes starting with `head` (the rest reads as zeros; no disk is used).
/// Issue 28, case 8: `sweep --keys file:/dev/zero` read until out of memory.
#[test]
fn sweep_refuses_a_key_file_without_line_breaks_after_a_bounded_read() {
    let dir = scratch("sweep-dev-zero");
    let err = refused(
        SWEEP,
        &["--keys", "file:/dev/zero", "--n", "100", "--out", s(&dir)],
        &["/dev/zero", "line 1", MAX_KEY, "longest key"],
    );
    assert!(err.len() < SHORT_STDERR, "{} bytes: {err:.3000}", err.len());
    let r = run(SWEEP, &["static", "--help"]);
    assert!(r.stdout.contains(MAX_KEY), "{}", r.stdout);
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------- issue 28: flags name themselves

/// Issue 28, case 13: count flags' errors said `n = "0"` whatever the flag (e.g. `sweep
/// --max-growth 0` said `value = "0"`). Each names its own flag and the expected form (`scale`'s
/// flags: crates/scale/tests/hostile_input.rs).
#[test]
fn count_flags_name_themselves_in_their_errors() {
    let dir = scratch("flag-names");
    let err = refused(
        SWEEP,
        &["grow", "--max-growth", "0", "--out", s(&dir)],
        &["--max-growth = \"0\"", "whole number from 1 to 2^53"],
    );
    assert!(!err.contains("value = "), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
