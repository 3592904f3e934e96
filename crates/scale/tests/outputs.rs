//! Fault tests of the `scale` binary's outputs (issue 28, cases 2, 3 and 5): SIGINT keeps the
//! earlier rows and marks its own row interrupted, two runs on one `--out` (one is refused naming
//! the holder), a directory held by another run refused at once, the revision taken at build time,
//! and the exit codes in `--help`. The other binaries' cases: crates/cli/tests/outputs.rs and
//! crates/tool/tests/outputs.rs.

#![cfg(unix)]

use std::process::Command;
use std::time::Duration;

#[allow(dead_code)] // each package's tests use some of the helpers
#[path = "../../cli/tests/support/outputs.rs"]
mod support;
use support::*;

const SCALE: &str = env!("CARGO_BIN_EXE_scale");

#[test]
fn scale_interrupted_exits_130_with_its_row_marked_interrupted_and_earlier_rows_kept() {
    let dir = Dir::new("scale-sigint");
    let out_arg = dir.0.to_str().unwrap();
    let earlier = Command::new(SCALE)
        .args([
            "--n",
            "1e5",
            "--filters",
            "sbbf/xxh3",
            "--no-huge-pages",
            "--out",
            out_arg,
        ])
        .output()
        .unwrap();
    assert!(earlier.status.success(), "{}", text(&earlier));
    let earlier_csv = std::fs::read_to_string(dir.0.join("scale.csv")).unwrap();
    let earlier_row = earlier_csv.lines().nth(1).unwrap().to_owned();
    // Billions of queries at this precision: the interrupt lands long before the end.
    let mut child = spawn(
        SCALE,
        &[
            "--n",
            "1e6",
            "--filters",
            "classic/xxh3/km/flat",
            "--precision",
            "0.001",
            "--max-queries",
            "1e11",
            "--no-huge-pages",
            "--out",
            out_arg,
        ],
    );
    wait_for_lock(&mut child, &dir.0);
    std::thread::sleep(Duration::from_millis(1500));
    sigint(&child);
    let out = finish(child);
    let what = text(&out);
    assert_eq!(out.status.code(), Some(130), "{what}");
    let csv = std::fs::read_to_string(dir.0.join("scale.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert_eq!(rows[0], earlier_row, "the earlier row changed");
    assert!(
        rows[1].starts_with("classic/xxh3/km/flat,url,1000000,0.01,interrupted,stopped "),
        "{}",
        rows[1]
    );
    let md = std::fs::read_to_string(dir.0.join("report.md")).unwrap();
    assert!(md.contains("**interrupted**"), "{md}");
    assert!(
        !names(&snapshot(&dir.0))
            .iter()
            .any(|n| n.starts_with(".bloomlab-staging")),
        "staging left behind"
    );
}

#[test]
fn two_scales_on_one_out_one_runs_the_other_is_refused_naming_the_holder() {
    let dir = Dir::new("two-scales");
    let out_arg = dir.0.to_str().unwrap();
    let mut first = spawn(
        SCALE,
        &[
            "--n",
            "1e6",
            "--filters",
            "classic/xxh3/km/flat",
            "--precision",
            "0.003",
            "--no-huge-pages",
            "--seed",
            "21",
            "--out",
            out_arg,
        ],
    );
    wait_for_lock(&mut first, &dir.0);
    let second = Command::new(SCALE)
        .args([
            "--n",
            "1e4",
            "--filters",
            "sbbf/xxh3",
            "--seed",
            "22",
            "--out",
            out_arg,
        ])
        .output()
        .unwrap();
    let first_pid = first.id();
    let first_out = finish(first);
    let what = format!("first: {}\nsecond: {}", text(&first_out), text(&second));
    assert!(first_out.status.success(), "{what}");
    assert_eq!(second.status.code(), Some(2), "{what}");
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.contains(&format!("pid {first_pid} ")) && err.contains(out_arg),
        "{what}"
    );
    let csv = std::fs::read_to_string(dir.0.join("scale.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{csv}");
    assert!(
        rows[0].starts_with("classic/xxh3/km/flat,url,1000000,0.01,done,"),
        "{csv}"
    );
}

/// A run of a second or less, up to its `--out` value.
const SMALL_RUN: [&str; 6] = [
    "--n",
    "1e4",
    "--filters",
    "sbbf/xxh3",
    "--no-huge-pages",
    "--out",
];

/// The revision is the build's: `scale` never runs git at run time (a `git` first in PATH that
/// records being run is never run), and its row carries the revision bloomlab-cli's build script
/// recorded.
#[test]
fn the_revision_is_taken_at_build_time_not_from_the_current_directory() {
    let dir = Dir::new("scale-revision");
    let (path, marker) = fake_git(&dir.0);
    let out = Command::new(SCALE)
        .args(SMALL_RUN)
        .arg("out")
        .current_dir(&dir.0)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(!marker.exists(), "the binary ran git at run time");
    let revisions = csv_column(&dir.0.join("out/scale.csv"), "revision");
    assert!(
        !revisions[0].is_empty() && !revisions[0].contains("fake-revision"),
        "{revisions:?}"
    );
    assert_eq!(revisions, vec![bloomlab_cli::git_revision()]);
}

/// With stderr not a terminal (a log, CI), the bar is not drawn and a line says each phase as
/// it starts, with the keys of its total.
#[test]
fn a_scale_logged_to_a_file_says_each_phase_as_it_starts() {
    let dir = Dir::new("scale-log");
    let out = Command::new(SCALE)
        .args(SMALL_RUN)
        .arg(&dir.0)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    let phases: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("scale: "))
        .filter_map(|l| l.split(", ").last())
        .collect();
    assert_eq!(
        phases,
        [
            "sbbf/xxh3: insert",
            "sbbf/xxh3: members",
            "sbbf/xxh3: non-members"
        ],
        "{err}"
    );
    assert!(
        err.contains(" 0/10,000 keys (0%), sbbf/xxh3: insert"),
        "{err}"
    );
}

#[test]
fn scale_documents_its_exit_codes() {
    assert_exit_codes_documented(SCALE);
}

/// While another run holds the output directory (here this test process, through the lock every
/// writer takes, `sweep`'s included), `scale` refuses it at once, before measuring anything: exit
/// 2, naming the directory and the holder.
#[test]
fn scale_refuses_an_output_directory_in_use() {
    let dir = Dir::new("scale-busy");
    let held = bloomlab_report::output::OutputDir::lock(&dir.0).unwrap();
    std::fs::write(dir.0.join("old.md"), "old").unwrap();
    let out_arg = dir.0.to_str().unwrap().to_owned();
    let args: Vec<String> = ["--n", "1e4", "--filters", "sbbf/xxh3", "--out", &out_arg]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_refused_as_busy(SCALE, &args);
    assert!(!dir.0.join("scale.csv").exists());
    assert_eq!(
        names(&snapshot(&dir.0)),
        vec!["old.md"],
        "a refused run wrote"
    );
    drop(held);
}
