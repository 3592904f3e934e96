//! `sweep`'s modes are subcommands (issue 26): each takes only its own flags, so a flag of another
//! mode is refused by the parser (exit 2, naming it) before anything is measured; typed flags name
//! the flag, the value and what is allowed; plain `sweep` is `sweep static`.

use std::path::PathBuf;
use std::process::{Command, Output};

const SWEEP: &str = env!("CARGO_BIN_EXE_sweep");

fn sweep(args: &[&str]) -> Output {
    Command::new(SWEEP).args(args).output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A scratch directory for one test, removed first if a previous run left it.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bloomlab-modes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Asserts exit 2, nothing on stdout, and every `wanted` text in stderr.
fn refused(args: &[&str], wanted: &[&str]) {
    let out = sweep(args);
    let what = format!("sweep {args:?}: {}", text(&out));
    assert_eq!(out.status.code(), Some(2), "{what}");
    assert!(out.stdout.is_empty(), "{what}");
    let err = String::from_utf8_lossy(&out.stderr);
    for w in wanted {
        assert!(err.contains(w), "{what}\nlacks {w:?}");
    }
}

#[test]
fn a_flag_of_another_mode_is_refused_by_the_structure() {
    let dir = scratch("exclusions");
    let out = dir.to_str().unwrap();
    for (args, flag) in [
        (&["churn", "--max-growth", "4"][..], "--max-growth"),
        (&["grow", "--rounds", "3"], "--rounds"),
        (&["grow", "--overfill", "2"], "--overfill"),
        (&["static", "--hostile-removes", "0.5"], "--hostile-removes"),
        (&["--churn", "0.5"], "--churn"),
        (&["churn", "--redis", "redis://127.0.0.1:1"], "--redis"),
        (&["grow", "--lookup", "branch-free"], "--lookup"),
        (&["churn", "--timing-threads", "2"], "--timing-threads"),
        (&["sketch", "--n", "1e4"], "--n"),
        (&["sketch", "--keys", "url"], "--keys"),
        (&["static", "--epsilon", "0.01"], "--epsilon"),
        // The old spellings of the modes.
        (&["--workload", "churn"], "--workload"),
        (&["--sketch", "hll,cms"], "--sketch"),
    ] {
        let mut all = args.to_vec();
        all.extend(["--out", out]);
        refused(&all, &[&format!("unexpected argument '{flag}'")]);
    }
    // Flags before a mode belong to plain `sweep` (the static mode): not combined with another.
    refused(
        &["--quick", "churn", "--out", out],
        &["'churn' cannot be used with", "--quick"],
    );
    // --list stands alone.
    refused(&["--list", "--quick"], &["'--list' cannot be used with"]);
    // The sketch sweep's own --sketch flag is replaced by the kinds argument.
    refused(
        &["sketch", "--sketch", "hll", "--out", out],
        &["--sketch", "sweep sketch hll,cms"],
    );
    // --redis runs named Redis filters: without --filters there is nothing to run.
    refused(
        &["static", "--redis", "redis://127.0.0.1:1", "--out", out],
        &["required arguments were not provided", "--filters"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn typed_flags_name_the_flag_the_value_and_what_is_allowed() {
    let dir = scratch("typed");
    let out = dir.to_str().unwrap();
    for (args, wanted) in [
        (
            &["--lookup", "fast"][..],
            &[
                "invalid value 'fast' for '--lookup <LOOKUP>'",
                "[possible values: early-exit, branch-free]",
            ][..],
        ),
        (
            &["--keys", "url,uuid"],
            &[
                "--keys <SETS>",
                "unknown key set \"uuid\"",
                "random-u64, article, url, hex, file:PATH",
            ],
        ),
        (
            &["static", "--n", "1e4,0"],
            &["--n <COUNTS>", "n = \"0\"", "whole number from 1 to 2^53"],
        ),
        (
            &["churn", "--p", "0.01,x"],
            &["--p <RATES>", "p = \"x\" is not a number"],
        ),
        (
            &["static", "--overfill", "two"],
            &["--overfill <FACTORS>", "overfill = \"two\" is not a number"],
        ),
        (
            &["--filters", "sbbf/xxh3,,blocked512/xxh3"],
            &["--filters <NAMES>", "at least one name"],
        ),
        (
            &["grow", "--max-growth", "1.5"],
            &["--max-growth = \"1.5\"", "whole number from 1 to 2^53"],
        ),
        (&["--max-queries", "-1"], &["--max-queries = \"-1\""]),
        (
            &["sketch", "hll,bloom"],
            &["invalid value 'bloom'", "[possible values: hll, cms]"],
        ),
    ] {
        let mut all = args.to_vec();
        all.extend(["--out", out]);
        refused(&all, wanted);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The top level is a map of the modes; each mode's help says what it measures and writes, and
/// lists only its own flags.
#[test]
fn help_lists_the_modes_and_each_mode_says_what_it_writes() {
    let top = sweep(&["--help"]);
    assert!(top.status.success(), "{}", text(&top));
    let top = String::from_utf8_lossy(&top.stdout);
    for mode in ["static", "churn", "grow", "sketch"] {
        assert!(top.contains(&format!("\n  {mode} ")), "{mode}: {top}");
    }
    assert!(top.contains("--list"), "{top}");
    assert!(!top.contains("--filters"), "{top}");
    for (mode, writes, own, foreign) in [
        ("static", "reports/sweep", "--lookup", "--rounds"),
        (
            "churn",
            "reports/churn",
            "--hostile-removes",
            "--max-growth",
        ),
        ("grow", "reports/grow", "--max-growth", "--overfill"),
        ("sketch", "reports/sketches", "--cms-hashes", "--filters"),
    ] {
        let out = sweep(&[mode, "--help"]);
        assert!(out.status.success(), "{mode}: {}", text(&out));
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("Outputs in --out"), "{mode}: {help}");
        assert!(help.contains(writes), "{mode}: {help}");
        assert!(help.contains("Exit status:"), "{mode}: {help}");
        assert!(help.contains(own), "{mode}: {help}");
        assert!(!help.contains(foreign), "{mode}: {help}");
    }
}

/// Plain `sweep FLAGS` runs the static mode: the same rows, byte for byte, as `sweep static FLAGS`.
#[test]
fn plain_sweep_is_the_static_mode() {
    let dir = scratch("plain");
    let run = |mode: Option<&str>, sub: &str| {
        let out = dir.join(sub);
        let mut args: Vec<&str> = mode.into_iter().collect();
        args.extend([
            "--filters",
            "sbbf/xxh3,classic/xxh3/km/flat",
            "--n",
            "2e3",
            "--p",
            "0.05",
            "--keys",
            "random-u64",
            "--overfill",
            "1,2",
            "--no-timing",
            "--seed",
            "7",
            "--out",
            out.to_str().unwrap(),
        ]);
        let o = sweep(&args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        std::fs::read_to_string(out.join("sweep.csv")).unwrap()
    };
    let plain = run(None, "plain");
    let named = run(Some("static"), "static");
    assert_eq!(plain.lines().count(), 1 + 2 * 2, "{plain}");
    assert_eq!(plain, named);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--list` prints the whole catalogue, one subject per line with what it can do: every
/// registered variant, the adapters and the Redis subjects.
#[test]
fn list_prints_every_subject_of_the_catalogue_with_its_capabilities() {
    let out = sweep(&["--list"]);
    assert!(out.status.success(), "{}", text(&out));
    let listing = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(
        lines.len(),
        bloomlab_harness::Subject::all().len(),
        "{listing}"
    );
    let line = |name: &str| {
        lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} not listed:\n{listing}"))
            .split_whitespace()
            .skip(1)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(line("counting4/xxh3/km"), "remove");
    assert_eq!(
        line("classic/murmur3/mitz64/flat"),
        "concurrent serializable"
    );
    assert_eq!(line("classic/xxh3/km/atomic"), "concurrent");
    assert_eq!(line("textbook-fnv1a-i32"), "");
    assert_eq!(line("scalable/sbbf/xxh3"), "grow");
    assert_eq!(line("peer/growable-bloom-filter"), "grow (adapter)");
    assert_eq!(line("redis/classic/xxh3/km"), "remote (with --redis URL)");
}
