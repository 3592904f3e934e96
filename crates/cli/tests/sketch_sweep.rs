//! `sweep sketch`: bad input exits 2 naming the value before anything is measured; a tiny run
//! writes its reports.

use std::process::Command;

const SWEEP: &str = env!("CARGO_BIN_EXE_sweep");

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(SWEEP).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_sketch_input_is_refused_naming_the_value() {
    let dir = std::env::temp_dir().join(format!("bloomlab-sketch-bad-{}", std::process::id()));
    let out = dir.to_str().unwrap();
    for (args, wanted) in [
        (
            vec!["sketch", "bloom"],
            "invalid value 'bloom' for '[KINDS]...'",
        ),
        (vec!["sketch", "hll,bloom"], "[possible values: hll, cms]"),
        (
            vec!["sketch", "hll", "--hll", "hll/xxh3/p19"],
            "precision p = 19 is invalid: it must be in 4..=18",
        ),
        (
            vec!["sketch", "hll", "--hll", "hll/sha1/p14"],
            "unknown hash \"sha1\"",
        ),
        (
            vec!["sketch", "cms", "--epsilon", "0"],
            "Count-Min epsilon = 0 is invalid: it must be a finite number in the open interval (0, 1)",
        ),
        (
            vec!["sketch", "cms", "--delta", "NaN"],
            "Count-Min delta = NaN is invalid",
        ),
        (
            vec!["sketch", "cms", "--exponents", "-1"],
            "Zipf exponent -1 is invalid",
        ),
        (
            vec!["sketch", "hll", "--trials", "1"],
            "--trials = 1 is invalid",
        ),
        (
            vec!["sketch", "hll", "--trials-at", "19=4096"],
            "--trials-at item \"19=4096\" is invalid: it must be P=COUNT with P in 4..=18",
        ),
        (
            vec!["sketch", "hll", "--points-per-octave", "65"],
            "--points-per-octave = 65 is invalid: it must be in 1..=64",
        ),
        (
            vec!["sketch", "hll", "--max-n", "1e10"],
            "--max-n = 10000000000 is invalid: it must be in 10..=4294967296",
        ),
        (
            vec!["sketch", "hll", "--hll", "hll/xxh3/p14/hll++"],
            "hll/xxh3/p14/hll++",
        ),
        (
            vec!["sketch", "hll", "--filters", "classic/xxh3/km/flat"],
            "unexpected argument '--filters'",
        ),
        (
            vec!["sketch", "cms", "--redis", "redis://127.0.0.1:1"],
            "include hll",
        ),
    ] {
        let mut all = args.clone();
        all.extend(["--out", out]);
        let (code, stdout, stderr) = run(&all);
        assert_eq!(code, Some(2), "{all:?}: {stderr}");
        assert!(
            stderr.contains(wanted),
            "{all:?}: {stderr}\nlacks {wanted:?}"
        );
        assert!(stdout.is_empty(), "{all:?}: {stdout}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tiny_sketch_run_writes_csvs_pictures_and_summary() {
    let dir = std::env::temp_dir().join(format!("bloomlab-sketch-tiny-{}", std::process::id()));
    let (code, stdout, stderr) = run(&[
        "sketch",
        "hll,cms",
        "--hll",
        "hll/xxh3/p10,peer/hyperloglogplus/murmur3/p10",
        "--trials",
        "4",
        "--max-n",
        "1e4",
        "--streams",
        "2",
        "--stream-len",
        "1e4",
        "--universe",
        "1000",
        "--cms-hashes",
        "xxh3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("hll/xxh3/p10"), "{stdout}");
    for f in [
        "hll.csv",
        "cms.csv",
        "hll_error_vs_n.png",
        "cms_violations.png",
        "summary.md",
    ] {
        let bytes = std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(bytes.len() > 100, "{f} is nearly empty");
    }
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("](hll_error_vs_n.png)") && md.contains("](cms_violations.png)"));
    assert!(md.contains("### peer/hyperloglogplus/murmur3/p10"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Our two estimators share one pass; the per-trial file holds every estimate, reproduces the
/// summary's bias, and is the same whatever the thread count.
#[test]
fn per_trial_estimates_are_written_whole_and_reproducible_across_threads() {
    let base = std::env::temp_dir().join(format!("bloomlab-sketch-trials-{}", std::process::id()));
    let run_with = |threads: &str| {
        let dir = base.join(threads);
        let (code, _, stderr) = run(&[
            "sketch",
            "hll",
            "--hll",
            "hll/xxh3/p8,hll/xxh3/p8/ertl",
            "--trials",
            "6",
            "--max-n",
            "5000",
            "--points-per-octave",
            "2",
            "--threads",
            threads,
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(0), "{stderr}");
        dir
    };
    let (one, two) = (run_with("1"), run_with("2"));
    let read = |d: &std::path::Path| {
        bloomlab_report::sketches::read_trials(&d.join("hll_trials.csv.gz")).unwrap()
    };
    let (a, b) = (read(&one), read(&two));
    assert_eq!(a, b, "1 thread vs 2 threads");
    let points = bloomlab_harness::sketch::octave_spaced(1, 5000, 2).len();
    assert_eq!(a.len(), 2 * 6 * points, "one row per sketch, trial and n");
    let rows: Vec<bloomlab_harness::sketch::HllRow> =
        bloomlab_report::sketches::read_rows(&one.join("hll.csv")).unwrap();
    for r in &rows {
        let errs: Vec<f64> = a
            .iter()
            .filter(|t| t.0 == r.sketch && t.2 == r.n)
            .map(|t| t.3 / r.n as f64 - 1.0)
            .collect();
        assert_eq!(errs.len(), 6, "{} n = {}", r.sketch, r.n);
        let mean = errs.iter().sum::<f64>() / 6.0;
        assert!(
            (mean - r.bias).abs() <= 1e-7,
            "{} n = {}: mean of the trials {mean} vs bias {}",
            r.sketch,
            r.n,
            r.bias
        );
    }
    assert!(one.join("hll_pitchfork_p8.png").exists());
    let md = std::fs::read_to_string(one.join("summary.md")).unwrap();
    assert!(md.contains("2 points per octave from 1 to 5000"), "{md}");
    assert!(
        md.contains("Finding: where the error leaves the stated one"),
        "{md}"
    );
    let _ = std::fs::remove_dir_all(&base);
}
