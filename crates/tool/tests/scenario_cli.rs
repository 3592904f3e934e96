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

#[test]
fn out_must_be_a_directory_and_the_message_says_so() {
    // Issue 28 case 13: a file given as --out used to fail as "File exists (os error 17)".
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"keep me").unwrap();
    for (out, needle) in [
        (file.clone(), format!("{} is a file", file.display())),
        (
            file.join("sub"),
            format!("because {} is a file", file.display()),
        ),
    ] {
        let o = Command::new(SCENARIO)
            .args(["dedup", "--days", "1", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("--out must be a directory") && stderr.contains(&needle),
            "{stderr}"
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"keep me");
}

#[test]
fn help_documents_every_exit_status() {
    let o = Command::new(SCENARIO).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "0 success",
        "1 a measured failure",
        "2 bad input",
        "130 interrupted",
    ] {
        assert!(
            help.contains(needle),
            "{needle:?} missing from --help:\n{help}"
        );
    }
}
