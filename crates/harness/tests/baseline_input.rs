//! Hostile baselines and gate policies are bad input, named with file, line and column, before any
//! point is re-run.

use std::path::PathBuf;

use bloomlab_harness::HarnessError;
use bloomlab_harness::bloom::gate::{self, BaselinePoint, GatePolicy};

const HEADER: &str = "filter,key_set,n,p,seed,queries,false_positives\n";
const GOOD: &str = "classic/xxh3/km/flat,random-u64,100000,0.01,20261125,1028113,10452\n";

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("bloomlab-baseline-{}-{name}", std::process::id()))
}

/// Writes `body` to a file named `name`, reads it as a baseline, removes it.
fn read(name: &str, body: &[u8]) -> Result<Vec<BaselinePoint>, HarnessError> {
    let path = temp(name);
    std::fs::write(&path, body).unwrap();
    let out = gate::read_baseline(&path);
    std::fs::remove_file(&path).unwrap();
    out
}

#[test]
fn a_valid_baseline_reads_back() {
    let points = read("good.csv", format!("{HEADER}{GOOD}").as_bytes()).unwrap();
    assert_eq!(points.len(), 1);
    assert_eq!(points[0].false_positives, 10452);
}

#[test]
fn bad_values_are_named_with_line_and_column() {
    // (second row, what the error must say). Line 3 is the bad row; columns count characters.
    let cases: [(&str, &[&str]); 9] = [
        (
            "classic/xxh3/km/flat,random-u64,100000,0.01,1,0,0",
            &["line 3, column 47 (queries)", "\"0\"", "at least 1"],
        ),
        (
            "classic/xxh3/km/flat,random-u64,100000,0.01,1,1000,18446744073709551615",
            &[
                "line 3, column 52 (false_positives)",
                "18446744073709551615",
            ],
        ),
        (
            "classic/xxh3/km/flat,random-u64,100000,0.01,1,1000,1001",
            &[
                "column 52 (false_positives)",
                "more than the point's 1000 queries",
            ],
        ),
        (
            "classic/xxh3/km/flat,random-u64,100000,NaN,1,1000,10",
            &["line 3, column 40 (p)", "\"NaN\"", "(0, 1)"],
        ),
        (
            "classic/xxh3/km/flat,random-u64,0,0.01,1,1000,10",
            &["line 3, column 33 (n)", "\"0\"", "2^53"],
        ),
        (
            "classic/md5/km/flat,random-u64,100000,0.01,1,1000,10",
            &["line 3, column 1 (filter)", "classic/md5/km/flat", "--list"],
        ),
        (
            "classic/xxh3/km/flat,words,100000,0.01,1,1000,10",
            &["line 3, column 22 (key_set)", "\"words\"", "random-u64"],
        ),
        (
            "classic/xxh3/km/flat,random-u64,-5,0.01,1,1000,10",
            &["line 3, column 33 (n)", "\"-5\"", "whole number"],
        ),
        (
            "textbook-fnv1a-i32,random-u64,1000000000,0.001,1,1000,10",
            &[
                "line 3, column 42 (p)",
                "Java int",
                "cannot be built for n = 1000000000",
            ],
        ),
    ];
    for (i, (row, wanted)) in cases.into_iter().enumerate() {
        let body = format!("{HEADER}{GOOD}{row}\n");
        let err = read(&format!("bad{i}.csv"), body.as_bytes()).unwrap_err();
        assert!(
            matches!(err, HarnessError::BadField { .. }),
            "{row}: {err:?}"
        );
        let msg = err.to_string();
        assert!(msg.contains(&format!("bad{i}.csv")), "{msg}");
        for w in wanted {
            assert!(msg.contains(w), "{row}: {msg:?} lacks {w:?}");
        }
    }
}

#[test]
fn unreadable_shapes_are_named() {
    let dir = temp("dir");
    std::fs::create_dir_all(&dir).unwrap();
    let err = gate::read_baseline(&dir).unwrap_err().to_string();
    std::fs::remove_dir(&dir).unwrap();
    assert!(err.contains("is a directory"), "{err}");

    let err = read("latin1.csv", b"filter,key_set\nabc,\xe9\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("line 2, column 5") && err.contains("0xe9"),
        "{err}"
    );

    let err = read("empty.csv", HEADER.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(err.contains("no points"), "{err}");
    let err = read("cols.csv", b"filter,n\nx,1\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("no column \"key_set\""), "{err}");
    let err = gate::read_baseline(&temp("missing.csv"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot read it"), "{err}");
}

#[test]
fn alpha_has_a_derived_lower_bound_per_test() {
    let policy = |family_alpha| GatePolicy {
        family_alpha,
        ..GatePolicy::default()
    };
    // 12 points: 36 tests, so --alpha must be at least 36 x 2^-52 = 7.99e-15.
    let err = policy(1e-20).validate(12).unwrap_err().to_string();
    assert!(
        err.contains("--alpha = 1e-20") && err.contains("2^-52") && err.contains("[7.994e-15, 1)"),
        "{err}"
    );
    // The bound is exact, and the figure shown (rounded up) is accepted.
    assert!(policy(36.0 * f64::EPSILON).validate(12).is_ok());
    assert!(policy(35.9 * f64::EPSILON).validate(12).is_err());
    assert!(policy(7.994e-15).validate(12).is_ok());
    assert!(policy(1e-4).validate(12).is_ok());
    for bad in [0.0, 1.0, f64::NAN, -1.0] {
        assert!(policy(bad).validate(12).is_err(), "{bad}");
    }
    let detect = GatePolicy {
        detect_rel: 1e-300,
        ..GatePolicy::default()
    };
    assert!(detect.validate(12).is_ok());
    let points = read("plan.csv", format!("{HEADER}{GOOD}").as_bytes()).unwrap();
    let err = detect.check_plannable(&points).unwrap_err().to_string();
    assert!(
        err.contains("--detect = 1e-300") && err.contains("2^53"),
        "{err}"
    );
    assert!(GatePolicy::default().check_plannable(&points).is_ok());
}

const WIDE: &str =
    "filter,key_set,n,p,seed,queries,false_positives,workload,rounds,churn,overfill,growth\n";
const CHURN: &str =
    "counting4/xxh3/km,random-u64,100000,0.01,20261125,961710,9755,churn,10,0.1,1.0,0\n";
const GROW: &str =
    "scalable/classic/xxh3/km/flat,random-u64,1000,0.01,20261125,983672,9885,grow,0,0.0,1.0,1024\n";

/// Issue 28, case 9: workload settings the workload itself would refuse used to pass the file
/// check and fail at run time as "FAIL (run)" (exit 1, read as drift). They are bad input now,
/// named with line, column and the allowed range.
#[test]
fn workload_settings_are_checked_when_the_baseline_is_read() {
    // The good rows read.
    let points = read("wide.csv", format!("{WIDE}{CHURN}{GROW}").as_bytes()).unwrap();
    assert_eq!(points.len(), 2);
    let cases: [(&str, &[&str]); 8] = [
        (
            "counting4/xxh3/km,random-u64,100000,0.01,1,1000,10,churn,0,0.1,1.0,0",
            &["line 3, column 58 (rounds)", "\"0\"", "at least 1"],
        ),
        (
            "counting4/xxh3/km,random-u64,100000,0.01,1,1000,10,churn,10,5.0,1.0,0",
            &["line 3, column 61 (churn)", "\"5.0\"", "(0, 1]"],
        ),
        (
            "counting4/xxh3/km,random-u64,100000,0.01,1,1000,10,churn,10,1e-9,1.0,0",
            &["line 3, column 61 (churn)", "is 0", "at least one"],
        ),
        (
            "counting4/xxh3/km,random-u64,100000,0.01,1,1000,10,churn,10,0.1,NaN,0",
            &["line 3, column 65 (overfill)", "\"NaN\"", "(0, 64]"],
        ),
        (
            "counting4/xxh3/km,random-u64,100000,0.01,1,1000,10,churn,1000000000000000000,1.0,1.0,0",
            &["(rounds)", "below 2^63"],
        ),
        (
            "classic/xxh3/km/flat,random-u64,100000,0.01,1,1000,10,churn,10,0.1,1.0,0",
            &["line 3, column 1 (filter)", "cannot remove keys"],
        ),
        (
            "scalable/classic/xxh3/km/flat,random-u64,1000,0.01,1,1000,10,grow,0,0.0,1.0,18446744073709551615",
            &[
                "(growth)",
                "\"18446744073709551615\"",
                "n x growth at most 2^53",
            ],
        ),
        (
            "scalable/classic/xxh3/km/flat,random-u64,1000,0.01,1,1000,10,grow,0,0.0,1.0,0",
            &["(growth)", "\"0\"", "at least 1"],
        ),
    ];
    for (i, (row, wanted)) in cases.into_iter().enumerate() {
        let body = format!("{WIDE}{CHURN}{row}\n");
        let err = read(&format!("wl{i}.csv"), body.as_bytes()).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, HarnessError::BadField { .. }), "{row}: {msg}");
        assert!(msg.contains(&format!("wl{i}.csv")), "{msg}");
        for w in wanted {
            assert!(msg.contains(w), "{row}: {msg:?} lacks {w:?}");
        }
    }
}

/// Issue 28, case 9: a repeated point used to be accepted silently (re-run twice, counted twice
/// in its family). Both lines are named; a repeat with other counts is the same point.
#[test]
fn a_repeated_point_is_refused_naming_both_lines() {
    let other_counts = "classic/xxh3/km/flat,random-u64,100000,0.01,20261125,5000,50\n";
    for (name, body, wanted) in [
        (
            "dup.csv",
            format!("{HEADER}{GOOD}{GOOD}"),
            "line 3 repeats the point of line 2",
        ),
        (
            "dup-counts.csv",
            format!("{HEADER}{GOOD}{other_counts}"),
            "line 3 repeats the point of line 2",
        ),
        (
            "dup-churn.csv",
            format!("{WIDE}{CHURN}{GROW}{CHURN}"),
            "line 4 repeats the point of line 2",
        ),
    ] {
        let msg = read(name, body.as_bytes()).unwrap_err().to_string();
        assert!(msg.contains(name) && msg.contains(wanted), "{msg}");
    }
    // Another seed is another point.
    let seed = "classic/xxh3/km/flat,random-u64,100000,0.01,7,1028113,10452\n";
    assert_eq!(
        read("seeds.csv", format!("{HEADER}{GOOD}{seed}").as_bytes())
            .unwrap()
            .len(),
        2
    );
}

/// Issue 28, case 8: a baseline is read up to a stated size, so `/dev/zero` is refused instead of
/// filling memory.
#[test]
fn an_endless_baseline_is_refused_after_a_bounded_read() {
    let err = gate::read_baseline(std::path::Path::new("/dev/zero"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("/dev/zero") && err.contains("MiB"), "{err}");
}
