//! Fault tests of the `bloomlab` tool's and `scenario`'s outputs (issue 28): a file or report is
//! never a mix of two runs and never truncated; a full disk (a file-size limit, `RLIMIT_FSIZE`, in
//! the child) keeps the previous file. The other binaries' cases: crates/cli/tests/outputs.rs.

#![cfg(unix)]

use std::process::{Command, Stdio};

#[allow(dead_code)] // each package's tests use some of the helpers
#[path = "../../cli/tests/support/outputs.rs"]
mod support;
use support::*;

const BLOOMLAB: &str = env!("CARGO_BIN_EXE_bloomlab");
const SCENARIO: &str = env!("CARGO_BIN_EXE_scenario");

/// Case 3: `guava build` (and `union`, the same writer) on a full disk used to truncate the
/// previous good file first; it must stay byte for byte as it was.
#[test]
fn guava_build_on_a_full_disk_keeps_the_previous_file() {
    let dir = Dir::new("guava-full");
    let keys = dir.0.join("keys.txt");
    let text_keys: String = (0..50_000).map(|i| format!("key-{i}\n")).collect();
    std::fs::write(&keys, text_keys).unwrap();
    let filter = dir.0.join("filter.bin");
    let build = |n: &str| {
        let mut cmd = Command::new(BLOOMLAB);
        cmd.args([
            "guava", "build", "--funnel", "utf8", "--p", "0.01", "--n", n,
        ])
        .arg("--keys")
        .arg(&keys)
        .arg("--out")
        .arg(&filter);
        cmd
    };
    let good = build("50000").output().unwrap();
    assert!(good.status.success(), "{}", text(&good));
    let before = std::fs::read(&filter).unwrap();
    assert!(before.len() > 50_000, "{} bytes", before.len());
    // A larger filter (about 240 KB) on a disk with room for 48 KiB.
    let out = with_file_size_limit(build("200000"), 48 * 1024);
    let what = text(&out);
    assert_eq!(out.status.code(), Some(2), "{what}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("filter.bin"),
        "{what}"
    );
    assert_eq!(
        std::fs::read(&filter).unwrap(),
        before,
        "the previous filter changed\n{what}"
    );
    assert_eq!(
        names(&snapshot(&dir.0)),
        vec!["filter.bin", "keys.txt"],
        "a temporary file was left\n{what}"
    );
}

/// Both binaries document the exit codes in their --help, 130 included.
#[test]
fn every_binary_documents_its_exit_codes() {
    for bin in [BLOOMLAB, SCENARIO] {
        assert_exit_codes_documented(bin);
    }
}

/// While another run holds an output directory, `scenario` refuses it at once, before measuring
/// anything: exit 2, naming the directory and the holder (here this test process).
#[test]
fn scenario_refuses_an_output_directory_in_use() {
    let dir = Dir::new("busy");
    let held = bloomlab_report::output::OutputDir::lock(&dir.0).unwrap();
    std::fs::write(dir.0.join("old.md"), "old").unwrap();
    let args: Vec<String> = ["dedup", "--days", "1", "--out", dir.0.to_str().unwrap()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_refused_as_busy(SCENARIO, &args);
    assert_eq!(
        names(&snapshot(&dir.0)),
        vec!["old.md"],
        "a refused run wrote"
    );
    drop(held);
}

/// The scenario writer stages its files and moves them into place together: after a run the
/// output directory holds the new CSV, picture and summary (replacing the old ones whole) and no
/// staging directory (a run refused for a busy directory: `scenario_refuses_...`).
#[test]
fn a_scenario_report_replaces_the_old_one_whole() {
    let dir = Dir::new("scenario");
    let out_arg = dir.0.to_str().unwrap();
    for name in ["dedup.csv", "dedup_days.png", "summary.md"] {
        std::fs::write(dir.0.join(name), "old").unwrap();
    }
    let out = Command::new(SCENARIO)
        .args(["dedup", "--days", "1", "--out", out_arg])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let snap = snapshot(&dir.0);
    assert_eq!(
        names(&snap),
        vec!["dedup.csv", "dedup_days.png", "summary.md"],
        "{}",
        text(&out)
    );
    for (name, len, _) in &snap {
        assert!(*len > 3, "{name} was not rewritten");
    }
    let png = std::fs::read(dir.0.join("dedup_days.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    let md = std::fs::read_to_string(dir.0.join("summary.md")).unwrap();
    assert!(md.contains("(dedup.csv)"), "{md}");
}
