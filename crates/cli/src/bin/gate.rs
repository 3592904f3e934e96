//! `gate`: fails CI when a filter's false-positive rate drifts from theory or from the baseline.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use bloomlab_cli::parse_count_named;
use bloomlab_harness::Workload;
use bloomlab_harness::bloom::gate::{self, BaselinePoint, GatePolicy, PointOutcome};
use bloomlab_harness::bloom::preflight::{self, MemoryBudget};
use bloomlab_harness::sketch::gate as sketch_gate;
use bloomlab_report::markdown;
use bloomlab_report::output::OutputDir;
use clap::Parser;

/// Re-runs the committed baseline's trials with their seeds and checks, for every point: no false
/// negatives; the false-positive count against the layout-correct theory (exact two-sided binomial
/// test); the count against the baseline's (conditional test of equal rates); for flat layouts, the
/// number of set bits against k*n uniform probes. Churn and grow points (workload column) re-run
/// their workload: any false negative in any round fails, the last round's count is tested against
/// theory and the baseline, and a grow point's count against its target p. Static points and
/// workload points are two families, each sharing a family-wise false-alarm rate (--alpha,
/// Bonferroni); every point's query count detects a --detect change of its FPR with probability
/// --power. --update appends built-in points the baseline lacks. The --report file's directory is
/// locked from before the first point until the report is written whole (temporary file, fsync,
/// rename): a second run writing there is refused at once, naming the holder, and a failed or
/// interrupted gate leaves an earlier report as it was. Exit status: 0 when every point
/// passes, 1 when any fails, 2 on bad input (found before any point runs: both baselines' values,
/// with file, line and column, and repeated points, naming both lines; the flags; the report and
/// baseline paths, a report directory in use by another run; the memory the points need at once,
/// see --memory-limit); 130 interrupted (Ctrl-C).
#[derive(Parser, Debug)]
#[command(name = "gate", version, about, long_about)]
struct Args {
    /// The baseline CSV: one row per point (filter, key_set, n, p, seed, queries, false_positives).
    #[arg(long, default_value = "reports/baseline/gate.csv")]
    baseline: PathBuf,
    /// Also write the result table as Markdown to this file.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Re-measure every point and REWRITE both baselines, --baseline and --sketch-baseline (after
    /// an intended change). Points come from the existing baselines, or the built-in lists when
    /// there are none; query counts are re-planned for the current --alpha, --detect and --power.
    /// Both files are read and checked writable before anything is measured, and written
    /// together (each staged beside its target, flushed, then renamed) or not at all.
    #[arg(long)]
    update: bool,
    /// Family-wise false-alarm rate of the whole gate, in (0, 1) and at least 3 x points x 2^-52
    /// (each test's level must stay at least 2^-52, where 1 - level/2 is still a double below 1).
    #[arg(long, default_value_t = 1e-4)]
    alpha: f64,
    /// Relative FPR change every point must detect, in (0, 10].
    #[arg(long, default_value_t = 0.10)]
    detect: f64,
    /// Probability of detecting that change at each point, in (0, 1).
    #[arg(long, default_value_t = 0.99)]
    power: f64,
    /// Memory the points may hold at once, in bytes (scientific notation allowed). Default: the
    /// MemAvailable figure of /proc/meminfo (the check is skipped where there is none). The points
    /// run in parallel, so the largest filters that run together are compared with it before
    /// any is built.
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true)]
    memory_limit: Option<String>,
    /// The sketches' baseline: HyperLogLog bias, RMS and drift, Count-Min undercounts and bound
    /// (one family of its own at the same --alpha; see `bloomlab_harness::sketch::gate`).
    /// Read and checked before any point runs; --update rewrites it together with --baseline.
    #[arg(long, default_value = "reports/baseline/sketches.csv")]
    sketch_baseline: PathBuf,
    /// Re-measure and REWRITE only the sketch baseline (--sketch-baseline), leaving the filters'
    /// baseline alone; starts from the built-in sketch points when the file is missing.
    #[arg(long)]
    update_sketches: bool,
}

fn policy(args: &Args) -> GatePolicy {
    GatePolicy {
        family_alpha: args.alpha,
        detect_rel: args.detect,
        power: args.power,
    }
}

/// Everything refused before a point runs, for `points`, `concurrent` of which run at once.
fn preflight(
    args: &Args,
    policy: &GatePolicy,
    points: &[BaselinePoint],
    concurrent: usize,
) -> Result<()> {
    policy.validate(points.len())?;
    if args.update {
        policy.check_plannable(points)?;
        preflight::check_output_file("baseline file (--baseline)", &args.baseline)?;
    }
    if let Some(path) = &args.report {
        preflight::check_output_file("report (--report)", path)?;
    }
    let limit = match &args.memory_limit {
        Some(s) => Some(parse_count_named("--memory-limit", 1, s).map_err(anyhow::Error::msg)?),
        None => None,
    };
    let budget = MemoryBudget::detect(limit);
    if let Some(note) = budget.skipped_note() {
        eprintln!("gate: {note}");
    }
    let need = preflight::points_need(points, concurrent)?;
    preflight::check_memory(&need, &budget, "--memory-limit")?;
    Ok(())
}

/// Locks the directory of the --report file for this run (held until the process ends).
fn lock_report_dir(path: &std::path::Path) -> Result<OutputDir> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    OutputDir::lock(dir).with_context(|| format!("--report {}", path.display()))
}

fn fmt_p(p: Option<f64>) -> String {
    p.map_or("-".into(), |p| format!("{p:.2e}"))
}

fn table(outcomes: &[PointOutcome]) -> String {
    let headers = [
        "point",
        "queries",
        "FP now",
        "FPR [interval]",
        "theory",
        "FP baseline",
        "p theory",
        "p drift",
        "p fill",
        "p target",
        "verdict",
    ];
    let rows: Vec<Vec<String>> = outcomes
        .iter()
        .map(|o| {
            let failed: Vec<&str> = o
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| c.name)
                .collect();
            let verdict = if o.passed() {
                "pass".to_string()
            } else {
                format!("FAIL ({})", failed.join(", "))
            };
            match &o.row {
                Some(r) => vec![
                    o.point.label(),
                    r.queries.to_string(),
                    r.false_positives.to_string(),
                    format!("{:.3e} [{:.3e}, {:.3e}]", r.fpr, r.ci_low, r.ci_high),
                    format!("{:.3e}", r.fpr_theory),
                    o.point.false_positives.to_string(),
                    fmt_p(o.p_value("theory")),
                    fmt_p(o.p_value("drift")),
                    fmt_p(o.p_value("fill")),
                    fmt_p(o.p_value("target")),
                    verdict,
                ],
                None => {
                    let mut v = vec![o.point.label(), o.point.queries.to_string()];
                    v.extend(std::iter::repeat_n("-".to_string(), 8));
                    v.push(verdict);
                    v
                }
            }
        })
        .collect();
    markdown::table(&headers, &rows)
}

fn update(args: &Args, policy: &GatePolicy) -> Result<ExitCode> {
    let points = if args.baseline.exists() || args.baseline.is_symlink() {
        // Built-in points the baseline lacks (new workload points) are measured and appended.
        let mut points = gate::read_baseline(&args.baseline)?;
        for new in gate::default_points() {
            if !points.iter().any(|p| p.same_point(&new)) {
                eprintln!("adding the built-in point {}", new.label());
                points.push(new);
            }
        }
        points
    } else {
        eprintln!(
            "no baseline at {}: starting from the built-in points",
            args.baseline.display()
        );
        gate::default_points()
    };
    // Points are re-measured one at a time.
    preflight(args, policy, &points, 1)?;
    // Both baselines are read and both outputs checked before anything is measured, so a bad or
    // unwritable sketch baseline cannot leave the filters' baseline rewritten alone.
    let sketch_points = sketches::points_to_update(&args.sketch_baseline)?;
    eprintln!(
        "UPDATING THE BASELINES {} and {}: {} points and {} sketch points are re-measured and \
         both files are rewritten together (or neither, on any error).",
        args.baseline.display(),
        args.sketch_baseline.display(),
        points.len(),
        sketch_points.len()
    );
    let mut fresh = Vec::with_capacity(points.len());
    for p in &points {
        let new = gate::remeasure(p, gate::family_size(&points, p), policy)
            .with_context(|| format!("re-measuring {}", p.label()))?;
        eprintln!(
            "  {}: {} queries, {} false positives (was {} of {})",
            new.label(),
            new.queries,
            new.false_positives,
            p.false_positives,
            p.queries
        );
        fresh.push(new);
    }
    let sketch_fresh = sketches::remeasure(&sketch_points, policy.family_alpha)?;
    let filters_csv = gate::baseline_csv(&fresh)?;
    let sketches_csv = sketch_gate::points_csv(&sketch_fresh).map_err(anyhow::Error::msg)?;
    staged::write_together(&[
        (args.baseline.as_path(), &filters_csv),
        (args.sketch_baseline.as_path(), &sketches_csv),
    ])?;
    eprintln!(
        "BASELINES REWRITTEN: {} and {}. Review the diff and commit it with the change that \
         caused it.",
        args.baseline.display(),
        args.sketch_baseline.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `--update-sketches`: re-measures the sketch points alone and rewrites their baseline whole.
fn update_sketches(args: &Args, policy: &GatePolicy) -> Result<ExitCode> {
    let points = sketches::points_to_update(&args.sketch_baseline)?;
    policy.validate(points.len())?;
    let fresh = sketches::remeasure(&points, policy.family_alpha)?;
    let csv = sketch_gate::points_csv(&fresh).map_err(anyhow::Error::msg)?;
    staged::write_together(&[(args.sketch_baseline.as_path(), &csv)])?;
    eprintln!(
        "SKETCH BASELINE REWRITTEN: {}",
        args.sketch_baseline.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn run(args: &Args) -> Result<ExitCode> {
    let policy = policy(args);
    if args.update_sketches {
        return update_sketches(args, &policy);
    }
    if args.update {
        return update(args, &policy);
    }
    let points: Vec<BaselinePoint> = gate::read_baseline(&args.baseline).map_err(|e| {
        let hint = if args.baseline.exists() {
            "fix the file, or re-create it with `cargo run --release --bin gate -- --update`"
        } else {
            "run `cargo run --release --bin gate -- --update` to create a baseline"
        };
        anyhow::anyhow!("{e}\n({hint})")
    })?;
    preflight(args, &policy, &points, gate::parallel_points())?;
    // Read and checked now, as --help promises: a bad sketch baseline is bad input found before
    // any point runs, not after all of them.
    let sketch_points = sketches::read(&args.sketch_baseline)?;
    let report_dir = args.report.as_deref().map(lock_report_dir).transpose()?;
    let statics: Vec<BaselinePoint> = points
        .iter()
        .filter(|p| p.workload == Workload::Static)
        .cloned()
        .collect();
    let alpha = policy.per_test_alpha(statics.len());
    eprintln!(
        "gate: {} points ({} churn or grow points, their own family), family-wise alpha {:.0e} -> {:.2e} per static test; each point detects {:+.0}% FPR change with power >= {}",
        points.len(),
        points.len() - statics.len(),
        policy.family_alpha,
        alpha,
        policy.detect_rel * 100.0,
        policy.power
    );
    let started = Instant::now();
    let outcomes = gate::check_all(&points, &policy, |o| {
        eprintln!(
            "  {} {}",
            if o.passed() { "pass" } else { "FAIL" },
            o.point.label()
        );
    });
    let text = table(&outcomes);
    println!("{text}");
    for o in outcomes.iter().filter(|o| !o.passed()) {
        for c in o.checks.iter().filter(|c| !c.passed) {
            println!("FAIL {} [{}]: {}", o.point.label(), c.name, c.detail);
        }
    }
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    let summary = format!(
        "gate: {} of {} points passed in {:.1} s (family-wise alpha {:.0e}, per-test {:.2e}, power >= {} for {:+.0}%)",
        outcomes.len() - failed,
        outcomes.len(),
        started.elapsed().as_secs_f64(),
        policy.family_alpha,
        alpha,
        policy.power,
        policy.detect_rel * 100.0
    );
    println!("{summary}");
    let (sketch_md, sketch_failed) = sketches::check(&sketch_points, policy.family_alpha)?;
    println!("{sketch_md}");
    let failed = failed + sketch_failed;
    if let (Some(path), Some(dir)) = (&args.report, &report_dir) {
        let md = format!("# FPR gate\n\n{summary}\n\n{text}\n\n{sketch_md}\n");
        dir.publish(|staging| -> Result<()> {
            let staged = staging.join(path.file_name().unwrap_or_default());
            std::fs::write(&staged, md).with_context(|| {
                format!(
                    "writing the report {} (an earlier report there is as it was)",
                    path.display()
                )
            })
        })?;
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The sketches' family of the gate (HyperLogLog and Count-Min points).
mod sketches {
    use std::path::Path;
    use std::time::Instant;

    use anyhow::{Context, Result};
    use bloomlab_harness::bloom::preflight;
    use bloomlab_harness::sketch::gate::{self as sketch_gate, Outcome, SketchPoint};
    use bloomlab_report::markdown;

    fn table(outcomes: &[Outcome]) -> String {
        let rows: Vec<Vec<String>> = outcomes
            .iter()
            .map(|o| {
                let m = &o.measured;
                let measured = if m.kind == "hll" {
                    format!(
                        "bias {:+.3}%, RMS {:.3}% (baseline {:+.3}%, {:.3}%)",
                        m.bias * 100.0,
                        m.rms * 100.0,
                        o.point.bias * 100.0,
                        o.point.rms * 100.0
                    )
                } else {
                    format!(
                        "{} violations / {} items (baseline {})",
                        m.violations, m.items, o.point.violations
                    )
                };
                let ps: Vec<String> = o
                    .checks
                    .iter()
                    .map(|c| match c.p_value {
                        Some(p) => format!("{} {p:.2e}", c.name),
                        None => format!("{} {}", c.name, if c.passed { "ok" } else { "FAIL" }),
                    })
                    .collect();
                let failed: Vec<&str> = o
                    .checks
                    .iter()
                    .filter(|c| !c.passed)
                    .map(|c| c.name)
                    .collect();
                vec![
                    o.point.label(),
                    measured,
                    ps.join(", "),
                    if failed.is_empty() {
                        "pass".into()
                    } else {
                        format!("FAIL ({})", failed.join(", "))
                    },
                ]
            })
            .collect();
        markdown::table(&["sketch point", "measured", "p-values", "verdict"], &rows)
    }

    /// Reads and checks the sketch baseline (every point, before any runs).
    pub fn read(path: &Path) -> Result<Vec<SketchPoint>> {
        sketch_gate::read_points(path).map_err(|e| {
            let hint = if path.exists() {
                "fix the file, or re-create it with `cargo run --release --bin gate -- --update-sketches`"
            } else {
                "run `cargo run --release --bin gate -- --update` to create a baseline"
            };
            anyhow::anyhow!("{e}\n({hint})")
        })
    }

    /// The points `--update` re-measures: the baseline's (read and checked), or the built-in ones
    /// when there is no file; the file is also checked to be writable, before anything runs.
    pub fn points_to_update(path: &Path) -> Result<Vec<SketchPoint>> {
        let points = if path.exists() || path.is_symlink() {
            sketch_gate::read_points(path).map_err(anyhow::Error::msg)?
        } else {
            eprintln!(
                "no sketch baseline at {}: starting from the built-in sketch points",
                path.display()
            );
            sketch_gate::default_points()
        };
        preflight::check_output_file("sketch baseline file (--sketch-baseline)", path)?;
        Ok(points)
    }

    /// Runs the sketch points; returns the Markdown section and the number of failed points.
    pub fn check(points: &[SketchPoint], alpha: f64) -> Result<(String, usize)> {
        let tests = sketch_gate::family_tests(points);
        eprintln!(
            "gate: {} sketch points, {tests} tests, family-wise alpha {alpha:.0e} -> {:.2e} per test",
            points.len(),
            alpha / tests as f64
        );
        let started = Instant::now();
        let outcomes = sketch_gate::check_all(points, alpha)?;
        for o in outcomes.iter().filter(|o| !o.passed()) {
            for c in o.checks.iter().filter(|c| !c.passed) {
                println!("FAIL {} [{}]: {}", o.point.label(), c.name, c.detail);
            }
        }
        let failed = outcomes.iter().filter(|o| !o.passed()).count();
        let md = format!(
            "## Sketches\n\ngate: {} of {} sketch points passed in {:.1} s (family-wise alpha {alpha:.0e} over {tests} tests, per-test {:.2e})\n\n{}",
            outcomes.len() - failed,
            outcomes.len(),
            started.elapsed().as_secs_f64(),
            alpha / tests as f64,
            table(&outcomes)
        );
        Ok((md, failed))
    }

    /// Re-measures the sketch points for a new baseline (nothing is written here).
    pub fn remeasure(points: &[SketchPoint], alpha: f64) -> Result<Vec<SketchPoint>> {
        let outcomes =
            sketch_gate::check_all(points, alpha).context("re-measuring sketch points")?;
        for o in outcomes.iter().filter(|o| !o.passed()) {
            eprintln!(
                "warning: {} fails against theory at the new baseline",
                o.point.label()
            );
        }
        Ok(outcomes.into_iter().map(|o| o.measured).collect())
    }
}

/// Writing several files whole, together.
mod staged {
    use std::io::Write;
    use std::path::Path;

    use anyhow::{Context, Result};

    /// Writes every `(path, bytes)` whole, or none of them: each is written to a temporary file in
    /// its own directory and flushed to disk (fsync), and only when every one is staged are they
    /// renamed into place, one after the other. An error before the renames leaves every path as
    /// it was (the temporary files are removed). A rename within one directory fails only in
    /// exceptional cases; should one fail after another succeeded, the error names the file
    /// already replaced. A replaced file keeps its permissions; a new one gets 0644.
    pub fn write_together(files: &[(&Path, &[u8])]) -> Result<()> {
        let mut temps = Vec::with_capacity(files.len());
        for &(path, bytes) in files {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let stage = || -> std::io::Result<tempfile::NamedTempFile> {
                std::fs::create_dir_all(dir)?;
                let mut tmp = tempfile::Builder::new()
                    .prefix(".bloomlab-staged-")
                    .tempfile_in(dir)?;
                tmp.write_all(bytes)?;
                let permissions = match std::fs::metadata(path) {
                    Ok(m) => m.permissions(),
                    Err(_) => std::os::unix::fs::PermissionsExt::from_mode(0o644),
                };
                tmp.as_file().set_permissions(permissions)?;
                tmp.as_file().sync_all()?;
                Ok(tmp)
            };
            let tmp = stage().with_context(|| {
                format!(
                    "cannot write {} (nothing was written: every file is left as it was)",
                    path.display()
                )
            })?;
            temps.push((tmp, path, dir));
        }
        let mut done: Vec<&Path> = Vec::new();
        for (tmp, path, dir) in temps {
            tmp.persist(path).map_err(|e| {
                anyhow::anyhow!(
                    "cannot rename a staged copy onto {}: {}{}",
                    path.display(),
                    e.error,
                    if done.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " (already replaced: {})",
                            done.iter()
                                .map(|p| p.display().to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
                )
            })?;
            // The rename is durable once the directory entry is.
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
            done.push(path);
        }
        Ok(())
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("gate: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::staged::write_together;

    /// Two files written together; when the second cannot be staged, neither changes and no
    /// temporary file is left.
    #[test]
    fn files_are_written_together_or_not_at_all() {
        let dir = std::env::temp_dir().join(format!("bloomlab-staged-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.csv"), dir.join("b.csv"));
        std::fs::write(&a, "old a").unwrap();
        write_together(&[(a.as_path(), b"new a"), (b.as_path(), b"new b")]).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "new b");

        // The second target's directory would be a regular file: staging it fails.
        let below = a.join("c.csv");
        let err = write_together(&[(b.as_path(), b"newer b"), (below.as_path(), b"c")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("nothing was written"), "{err}");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "new b");
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(names.len(), 2, "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
