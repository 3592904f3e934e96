//! Fault tests of the outputs (issue 28, cases 2, 3 and 5): a report is never a mix of two runs,
//! never stale halves, never truncated. Each runs the built binaries on small inputs, in seconds:
//! SIGINT of `sweep`, two writers on one `--out`, a full disk (a file-size limit,
//! `RLIMIT_FSIZE`, in the child: writes past it fail with EFBIG as on a full disk), and the
//! revision taken at build time.

#![cfg(unix)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

#[allow(dead_code)] // each package's tests use some of the helpers
#[path = "support/outputs.rs"]
mod support;
use support::*;

const SWEEP: &str = env!("CARGO_BIN_EXE_sweep");

/// A sweep of one row, `seed` picking its keys: about 0.1 s, or seconds with `long`.
fn sweep_args<'a>(out: &'a str, seed: &'a str, precision: &'a str) -> Vec<&'a str> {
    vec![
        "--filters",
        "classic/xxh3/km/flat",
        "--n",
        "1e5",
        "--p",
        "1e-3",
        "--keys",
        "random-u64",
        "--no-timing",
        "--max-queries",
        "1e10",
        "--precision",
        precision,
        "--seed",
        seed,
        "--out",
        out,
    ]
}

/// A finished sweep's report in `dir`, as a fault test starts from.
fn old_sweep_report(dir: &Path) -> Vec<Entry> {
    let out = Command::new(SWEEP)
        .args(sweep_args(dir.to_str().unwrap(), "7", "0.1"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let snap = snapshot(dir);
    assert!(names(&snap).contains(&"summary.md"), "{:?}", names(&snap));
    snap
}

#[test]
fn sweep_interrupted_exits_130_and_leaves_the_previous_report_whole() {
    let dir = Dir::new("sweep-sigint");
    let before = old_sweep_report(&dir.0);
    // About 5e8 queries at this precision: far longer than the time to the interrupt.
    let mut child = spawn(SWEEP, &sweep_args(dir.0.to_str().unwrap(), "8", "0.002"));
    wait_for_lock(&mut child, &dir.0);
    std::thread::sleep(Duration::from_millis(300));
    sigint(&child);
    let out = finish(child);
    let what = text(&out);
    assert_eq!(out.status.code(), Some(130), "{what}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("this run wrote nothing"),
        "{what}"
    );
    assert_eq!(
        snapshot(&dir.0),
        before,
        "the previous report changed\n{what}"
    );
}

/// Two sweeps on one --out: the second is refused at once (exit 2, naming the directory and the
/// first run's pid), the first finishes, and the report is whole and from the first run alone.
#[test]
fn two_sweeps_on_one_out_one_runs_the_other_is_refused_naming_the_holder() {
    let dir = Dir::new("two-sweeps");
    let out_arg = dir.0.to_str().unwrap();
    let mut first = spawn(SWEEP, &sweep_args(out_arg, "11", "0.005"));
    wait_for_lock(&mut first, &dir.0);
    let second = Command::new(SWEEP)
        .args(sweep_args(out_arg, "12", "0.1"))
        .output()
        .unwrap();
    let first_pid = first.id();
    let first_out = finish(first);
    let what = format!("first: {}\nsecond: {}", text(&first_out), text(&second));
    assert!(first_out.status.success(), "{what}");
    assert_eq!(second.status.code(), Some(2), "{what}");
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.contains(out_arg) && err.contains("in use by another run"),
        "{what}"
    );
    assert!(err.contains(&format!("pid {first_pid} ")), "{what}");
    assert!(second.stdout.is_empty(), "the refused run measured\n{what}");
    assert_eq!(
        csv_column(&dir.0.join("sweep.csv"), "seed"),
        vec!["11"],
        "{what}"
    );
    let md = std::fs::read_to_string(dir.0.join("summary.md")).unwrap();
    assert!(md.contains("| seed | 11 |"), "{md}");
}

/// A disk that fills while the report is written: the new CSV fits, the pictures do not. The run
/// fails and the previous report stays whole, with no truncated file and nothing staged left.
#[test]
fn sweep_on_a_full_disk_leaves_the_previous_report_whole() {
    let dir = Dir::new("sweep-full");
    let before = old_sweep_report(&dir.0);
    let mut cmd = Command::new(SWEEP);
    cmd.args(sweep_args(dir.0.to_str().unwrap(), "9", "0.1"));
    // The CSV of one row is about 1 KB; every picture is larger than 32 KiB.
    let out = with_file_size_limit(cmd, 32 * 1024);
    let what = text(&out);
    assert_eq!(out.status.code(), Some(1), "{what}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nothing was written"),
        "{what}"
    );
    assert_eq!(
        snapshot(&dir.0),
        before,
        "the previous report changed\n{what}"
    );
}

/// The revision is the build's: no binary runs git at run time (a `git` first in PATH that
/// records being run is never run), and the CSV carries the revision recorded by build.rs.
#[test]
fn the_revision_is_taken_at_build_time_not_from_the_current_directory() {
    let dir = Dir::new("revision");
    let (path, marker) = fake_git(&dir.0);
    let out = Command::new(SWEEP)
        .args(sweep_args("out", "3", "0.1"))
        .current_dir(&dir.0)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(!marker.exists(), "the binary ran git at run time");
    let csv = std::fs::read_to_string(dir.0.join("out/sweep.csv")).unwrap();
    let revision = env!("BLOOMLAB_REVISION");
    assert!(!revision.is_empty());
    assert!(
        csv.contains(&format!(",{revision},")),
        "sweep.csv lacks the build's revision {revision}:\n{csv}"
    );
}

/// Every binary of this package documents the exit codes in its --help, 130 included (the
/// `bloomlab` tool's and `scenario`'s: crates/tool/tests/outputs.rs; `scale`'s:
/// crates/scale/tests/outputs.rs).
#[test]
fn every_binary_documents_its_exit_codes() {
    for bin in [
        SWEEP,
        env!("CARGO_BIN_EXE_gate"),
        env!("CARGO_BIN_EXE_redis-costs"),
        env!("CARGO_BIN_EXE_bench-table"),
    ] {
        assert_exit_codes_documented(bin);
    }
}

/// While another run holds an output directory, every writer refuses it at once, before measuring
/// anything: exit 2, naming the directory and the holder (here this test process). (`scenario`'s
/// case: crates/tool/tests/outputs.rs; `scale`'s: crates/scale/tests/outputs.rs.)
#[test]
fn every_writer_refuses_an_output_directory_in_use() {
    let dir = Dir::new("busy");
    let held = bloomlab_report::output::OutputDir::lock(&dir.0).unwrap();
    std::fs::write(dir.0.join("old.md"), "old").unwrap();
    let out_arg = dir.0.to_str().unwrap().to_owned();
    let report = dir.0.join("gate.md");
    let table = dir.0.join("table.md");
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            SWEEP,
            sweep_args(&out_arg, "1", "0.1")
                .iter()
                .map(|s| s.to_string())
                .collect(),
        ),
        (
            SWEEP,
            vec![
                "sketch".into(),
                "hll".into(),
                "--quick".into(),
                "--out".into(),
                out_arg.clone(),
            ],
        ),
        (
            env!("CARGO_BIN_EXE_gate"),
            vec![
                "--baseline".into(),
                format!(
                    "{}/../../reports/baseline/gate.csv",
                    env!("CARGO_MANIFEST_DIR")
                ),
                "--sketch-baseline".into(),
                format!(
                    "{}/../../reports/baseline/sketches.csv",
                    env!("CARGO_MANIFEST_DIR")
                ),
                "--report".into(),
                report.display().to_string(),
            ],
        ),
        (
            env!("CARGO_BIN_EXE_redis-costs"),
            // The lock is taken before the server is reached: no server is needed here.
            vec![
                "--redis".into(),
                "redis://127.0.0.1:1".into(),
                "--out".into(),
                out_arg.clone(),
            ],
        ),
        (
            env!("CARGO_BIN_EXE_bench-table"),
            vec![
                "--criterion-dir".into(),
                out_arg.clone(),
                "--out".into(),
                table.display().to_string(),
            ],
        ),
    ];
    for (bin, args) in cases {
        assert_refused_as_busy(bin, &args);
    }
    assert_eq!(
        names(&snapshot(&dir.0)),
        vec!["old.md"],
        "a refused run wrote"
    );
    drop(held);
}

/// `bench-table --out FILE` writes only FILE: a `sketches_bench.md` beside it is not touched
/// (it used to be overwritten), and with no flag the reports go to `reports/` under the current
/// directory (the default used to be an absolute path fixed at build time).
#[test]
fn bench_table_writes_only_what_was_asked_relative_to_the_current_directory() {
    let dir = Dir::new("bench-table");
    let crit = dir.0.join("criterion");
    std::fs::create_dir_all(&crit).unwrap();
    // A finished sketch bench with no records: enough for its report.
    std::fs::write(
        crit.join("sketches-memory.json"),
        r#"{"started_unix":0,"updated_unix":0,"mode":"full","records":[]}"#,
    )
    .unwrap();
    let mine = dir.0.join("sketches_bench.md");
    std::fs::write(&mine, "not bench-table's").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_bench-table"))
        .arg("--criterion-dir")
        .arg(&crit)
        .arg("--out")
        .arg(dir.0.join("bloom.md"))
        .output()
        .unwrap();
    // No Bloom bench results: the one report asked for cannot be written.
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "not bench-table's");
    assert!(!dir.0.join("bloom.md").exists());

    let cwd = dir.0.join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_bench-table"))
        .arg("--criterion-dir")
        .arg(&crit)
        .current_dir(&cwd)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let written = cwd.join("reports").join("sketches_bench.md");
    assert!(written.is_file(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("wrote reports/sketches_bench.md"));
}
