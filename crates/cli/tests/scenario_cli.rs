//! `scenario` on bad input: exit status 2 and a message naming the value, before anything is
//! measured (each case is refused before a row is written).

use std::process::Command;

const SCENARIO: &str = env!("CARGO_BIN_EXE_scenario");

fn refused(args: &[&str], needles: &[&str]) {
    let out_dir =
        std::env::temp_dir().join(format!("bloomlab-scenario-cli-{}", std::process::id()));
    let out = Command::new(SCENARIO)
        .args(args)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{args:?}: {n:?} missing from {stderr}");
    }
    assert!(
        !out_dir.join("summary.md").exists(),
        "{args:?} wrote a report"
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn bad_flags_exit_2_naming_the_value() {
    refused(&["dedup", "--p", "1.5"], &["--p 1.5", "(0, 1)"]);
    refused(&["dedup", "--p", "abc"], &["abc", "(0, 1)"]);
    refused(&["dedup", "--days", "0"], &["--days 0", "1 to 3650"]);
    refused(&["swap", "--threads", "0"], &["--threads 0", "1 to 64"]);
    refused(&["dedup", "--filter", "nope/x"], &["nope/x"]);
    refused(
        &["swap", "--filter", "blocked512/xxh3"],
        &["blocked512/xxh3", "atomic"],
    );
    refused(
        &["penetration", "--attack-share", "0"],
        &["--attack-share 0", "(0, 1)"],
    );
    refused(
        &["dedup", "--db", "mysql://h/db"],
        &["mysql://h/db", "sqlite:PATH"],
    );
    refused(
        &["dedup", "--db", "postgres://bloomlab@127.0.0.1:1/postgres"],
        &["PostgreSQL", "127.0.0.1:1"],
    );
}
