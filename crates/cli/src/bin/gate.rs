//! `gate`: fails CI when a filter's false-positive rate drifts from theory or from the baseline.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use bloomlab_cli::parse_count_named;
use bloomlab_harness::Workload;
use bloomlab_harness::gate::{self, BaselinePoint, GatePolicy, PointOutcome};
use bloomlab_harness::preflight::{self, MemoryBudget};
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
/// passes, 1 when any fails, 2 on bad input (found before any point runs: the baseline's values,
/// with file, line and column; the flags; the report and baseline paths, a report directory in
/// use by another run; the memory the points need at once, see --memory-limit); 130 interrupted
/// (Ctrl-C).
#[derive(Parser, Debug)]
#[command(name = "gate", version, about, long_about)]
struct Args {
    /// The baseline CSV: one row per point (filter, key_set, n, p, seed, queries, false_positives).
    #[arg(long, default_value = "reports/baseline/gate.csv")]
    baseline: PathBuf,
    /// Also write the result table as Markdown to this file.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Re-measure every point and REWRITE the baseline (after an intended change). Points come
    /// from the existing baseline, or the built-in list when there is none; query counts are
    /// re-planned for the current --alpha, --detect and --power.
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
    /// (one family of its own at the same --alpha; see `bloomlab_harness::sketch_gate`).
    /// --update rewrites it too.
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
    eprintln!(
        "UPDATING THE BASELINE {}: {} points are re-measured and the file is rewritten.",
        args.baseline.display(),
        points.len()
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
    gate::write_baseline(&args.baseline, &fresh)?;
    eprintln!(
        "BASELINE REWRITTEN: {}. Review the diff and commit it with the change that caused it.",
        args.baseline.display()
    );
    sketches::update(&args.sketch_baseline, policy.family_alpha)?;
    Ok(ExitCode::SUCCESS)
}

fn run(args: &Args) -> Result<ExitCode> {
    let policy = policy(args);
    if args.update_sketches {
        sketches::update(&args.sketch_baseline, policy.family_alpha)?;
        return Ok(ExitCode::SUCCESS);
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
    let (sketch_md, sketch_failed) = sketches::check(&args.sketch_baseline, policy.family_alpha)?;
    println!("{sketch_md}");
    let failed = failed + sketch_failed;
    if let (Some(path), Some(dir)) = (&args.report, &report_dir) {
        let md = format!("# FPR gate\n\n{summary}\n\n{text}\n\n{sketch_md}\n");
        let staged = dir
            .staging()
            .map(|s| s.join(path.file_name().unwrap_or_default()))?;
        std::fs::write(&staged, md)
            .map_err(anyhow::Error::from)
            .and_then(|()| Ok(dir.commit()?))
            .with_context(|| {
                format!(
                    "writing the report {} (an earlier report there is as it was)",
                    path.display()
                )
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
    use bloomlab_harness::sketch_gate::{self, Outcome};
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

    /// Runs the sketch points; returns the Markdown section and the number of failed points.
    pub fn check(path: &Path, alpha: f64) -> Result<(String, usize)> {
        let points = sketch_gate::read_points(path).map_err(|e| {
            anyhow::anyhow!(
                "{e}\n(run `cargo run --release --bin gate -- --update` to create a baseline)"
            )
        })?;
        let tests = sketch_gate::family_tests(&points);
        eprintln!(
            "gate: {} sketch points, {tests} tests, family-wise alpha {alpha:.0e} -> {:.2e} per test",
            points.len(),
            alpha / tests as f64
        );
        let started = Instant::now();
        let outcomes = sketch_gate::check_all(&points, alpha)?;
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

    /// Re-measures the sketch points (the baseline's, or the built-in ones) and rewrites the file.
    pub fn update(path: &Path, alpha: f64) -> Result<()> {
        let points = if path.exists() {
            sketch_gate::read_points(path).map_err(anyhow::Error::msg)?
        } else {
            sketch_gate::default_points()
        };
        let outcomes =
            sketch_gate::check_all(&points, alpha).context("re-measuring sketch points")?;
        for o in outcomes.iter().filter(|o| !o.passed()) {
            eprintln!(
                "warning: {} fails against theory at the new baseline",
                o.point.label()
            );
        }
        let fresh: Vec<_> = outcomes.into_iter().map(|o| o.measured).collect();
        sketch_gate::write_points(path, &fresh).map_err(anyhow::Error::msg)?;
        eprintln!("SKETCH BASELINE REWRITTEN: {}", path.display());
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
