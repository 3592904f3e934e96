//! `sweep`: measure every chosen filter's false-positive rate (with exact confidence intervals),
//! theory, memory and speed over a grid, and write the CSV, four PNGs and a Markdown summary.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use bloomlab_cli::{
    CountingAlloc, git_revision, parse_count, parse_count_named, parse_f64, parse_list,
};
use bloomlab_harness::{Selection, Subject};
use bloomlab_harness::bloom::preflight::{self, MemoryBudget};
use bloomlab_harness::stats::median;
use bloomlab_harness::bloom::sweep::WorkloadSettings;
use bloomlab_harness::bloom::workload::{Churn, Grow};
use bloomlab_harness::{Grid, KeySetKind, Plan, SweepConfig, SweepRow, Workload, bloom::sweep};
use bloomlab_report::output::OutputDir;
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Measure Bloom filters: observed false-positive rate with exact (Clopper-Pearson) confidence
/// intervals against layout-correct theory, memory, and lookup speed against std's HashSet.
///
/// Every row is one (filter, key set, n, p, overfill): the filter is sized for n keys at target
/// rate p, round(n * overfill) member keys are inserted and all checked (a miss is a false
/// negative and fails the run), then non-member keys are queried until the interval's relative
/// half-width reaches --precision or --max-queries is hit.
///
/// Outputs in --out: sweep.csv (one row per trial; every figure is a column: fpr, ci_low/ci_high,
/// wilson_low/high, fpr_theory, fpr_textbook, theory_in_interval, fpr_given_bits (this filter's
/// own rate from its bits, which the interval tests without the filter-to-filter spread the theory
/// averages over), given_bits_in_interval, capped, bits_per_key,
/// bound_bits_per_key = log2(1/p), space_overhead, memory, fill ratio, estimated count, insert and
/// lookup ns/key and the HashSet's, queries_per_s_core: non-member queries per second on one core
/// while sampling, keys generated once per key set and member count not counted), four PNGs drawn from the CSV (observed FPR vs target p,
/// FPR vs bits per key, lookup ns vs n, FPR vs overfill) and summary.md.
///
/// With no grid flags, runs the default grid: 10 representative filters (every layout, hash,
/// index scheme and store; Guava's layout; the textbook port) on all four built-in key sets,
/// n = 1e4..1e6 x p = 1e-1..1e-4, plus n = 1e7 on random-u64 and an overfill series.
/// Use --filters all for all registered variants. Timings are indicative medians (the criterion
/// benches are the authority on speed); they are taken one row at a time after each group's
/// statistics, which run in parallel.
///
/// Before anything is measured, the settings are checked (counts up to 2^53, --overfill up to 64,
/// --threads up to 4 per core), every row's filter is sized, --out is probed for writing, and the
/// memory the plan holds at once is compared with what the machine has available (see
/// --memory-limit), and --out is locked: a second run on the same directory is refused at once,
/// naming the run that holds it. Every output is written to a staging directory inside --out and
/// moved into place only when the whole run succeeded, so a report is never a mix of two runs and
/// a failed or interrupted run leaves the previous report whole.
///
/// Exit status: 0 on success; 1 when a measurement fails (a false negative; the report is
/// written) or the report cannot be written after measuring; 2 on bad input or a --out in use by
/// another run (nothing measured); 130 interrupted (Ctrl-C: nothing is written).
#[derive(Debug, Parser)]
#[command(name = "sweep", version)]
struct Args {
    /// Print the registered filter names, one per line with its capabilities (remove, grow),
    /// then the third-party peers, and exit.
    #[arg(long)]
    list: bool,
    /// What each filter goes through: static (fill once, query; the default), churn (insert n,
    /// then --rounds rounds that each remove --churn of the members and insert as many fresh
    /// keys, checking every member and the FPR after each; filters that can remove only), or grow
    /// (insert n x G keys for G = 1, 2, 4, ... up to --max-growth into a filter built for n,
    /// measuring at each G). Without grid flags each workload has its own default grid.
    #[arg(long, default_value = "static", value_name = "WORKLOAD")]
    workload: String,
    /// Churn: rounds after the initial fill (at least 1).
    #[arg(long, default_value_t = 10)]
    rounds: u64,
    /// Churn: fraction of the members each round removes and replaces, in (0, 1].
    #[arg(long, default_value_t = 0.1, allow_hyphen_values = true)]
    churn: f64,
    /// Churn: fraction of each round's removals that instead remove a never-inserted key testing
    /// positive (a caller error no filter can detect), in [0, 1]; false negatives are then
    /// reported, not failures.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    hostile_removes: f64,
    /// Grow: the largest growth factor G (at least 1; n x G at most 2^53).
    #[arg(
        long,
        default_value = "1024",
        value_name = "G",
        allow_hyphen_values = true
    )]
    max_growth: String,
    /// Comma-separated filter names (see --list), or `all`.
    #[arg(long, value_name = "NAMES")]
    filters: Option<String>,
    /// Run the filters in the Redis server at URL (e.g. redis://127.0.0.1:6379), or in the
    /// cluster whose nodes are the comma-separated URLs given (shards of 2^20 bits, spread over
    /// the masters): every --filters
    /// name must then be a Redis one (redis/classic/HASH/INDEX, redis/blocked512/HASH;
    /// see --list). Each row's filter is created fresh under a name with a random run id
    /// (bloomlab-sweep:RUNID:ROW), every key expiring after 10 min unless the run keeps using it,
    /// and deleted afterwards; if a key of that name exists the run stops with exit 2 naming it
    /// (remove bloomlab's leftovers with `scripts/redis-local.sh clean URL`). Rows run one at a
    /// time, 4096 keys per round trip, static workload only. The statistical columns equal the
    /// in-memory twin's (classic/HASH/INDEX/flat, blocked512/HASH) bit for bit; memory_bytes is
    /// the bytes held on the server; the timing columns are 0. A server lost mid-run is exit 1
    /// (a measured failure), its address named (credentials never shown), no report written.
    /// On a cluster, a refused command is retried for at most BLOOMLAB_REDIS_RETRY_SECS seconds
    /// (default 3; 0 to 600), then the error names the nodes that are down.
    #[arg(long, value_name = "URL[,URL...]")]
    redis: Option<String>,
    /// Comma-separated expected counts the filters are sized for; scientific notation allowed
    /// (e.g. 1e4,1e5).
    #[arg(long, value_name = "COUNTS", allow_hyphen_values = true)]
    n: Option<String>,
    /// Comma-separated target false-positive rates, each in (0, 1) (e.g. 0.01,1e-3).
    #[arg(long, value_name = "RATES", allow_hyphen_values = true)]
    p: Option<String>,
    /// Comma-separated key sets: random-u64, article ("article-" + i, the textbook workload),
    /// url, hex (64-char content hashes), file:PATH (one UTF-8 key per line, each at most 1048576
    /// bytes; the first members are inserted, the rest are queried; blank lines skipped,
    /// duplicates removed and counted).
    #[arg(long, value_name = "SETS")]
    keys: Option<String>,
    /// Comma-separated factors: insert round(n * factor) keys into a filter sized for n, to show
    /// how the rate degrades when n is underestimated (e.g. 0.5,1,2).
    #[arg(long, value_name = "FACTORS", allow_hyphen_values = true)]
    overfill: Option<String>,
    /// Run seed: key sets derive from it, so a run is reproducible to the bit.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Confidence level of the Clopper-Pearson and Wilson intervals, in (0, 1).
    #[arg(long, default_value_t = 0.95)]
    confidence: f64,
    /// Target relative half-width of the interval, (high - low) / 2 / fpr; must be > 0.
    #[arg(long, default_value_t = 0.10)]
    precision: f64,
    /// Most non-member queries per row (scientific notation allowed); rows that stop here are
    /// marked capped.
    #[arg(long, default_value = "2e7", value_name = "COUNT")]
    max_queries: String,
    /// Worker threads for the statistics (0 = one per core), at most 4 per core: the trials are
    /// CPU-bound, so more threads only take turns. Results do not depend on it.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Memory the run may hold at once, in bytes (scientific notation allowed, e.g. 8e9). The
    /// plan's peak (the largest group's filters, sized without allocating, plus its key batches
    /// and HashSet baseline) is compared with it before anything is allocated. Default: the
    /// MemAvailable figure of /proc/meminfo (on systems without it the check is skipped unless
    /// this is given). Raise it to run a plan the check refuses.
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true)]
    memory_limit: Option<String>,
    /// A small grid that finishes in well under a minute (grid flags given still override it).
    #[arg(long)]
    quick: bool,
    /// Skip the timing columns, queries_per_s_core included (they are written as 0).
    #[arg(long)]
    no_timing: bool,
    /// Rows timed at once after each group's statistics: 1 times each row with nothing else
    /// running; 0 = as many as --threads, which saves about a sixth of the default sweep's time on
    /// 2 cores but made the timings 8% to 22% slower there (rows share the cache and memory).
    #[arg(long, default_value_t = 1, value_name = "THREADS")]
    timing_threads: usize,
    /// The lookup that counts false positives: early-exit (stop at the first clear bit; the
    /// default) or branch-free (read all k bits, as the timing columns do). Both give the same
    /// answers, so only queries_per_s_core changes: the way to measure one against the other.
    #[arg(long, default_value = "early-exit", value_name = "LOOKUP")]
    lookup: String,
    /// Output directory for sweep.csv, the PNGs and summary.md (default: reports/sweep for the
    /// static workload, reports/churn and reports/grow for the others, reports/sketches with
    /// --sketch, so that one run never overwrites another's report).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The sketch sweep (--sketch and its flags).
    #[command(flatten)]
    sketch: bloomlab_cli::sketch_sweep::SketchArgs,
}

impl Args {
    /// `--out`, or the workload's own directory under `reports/`.
    fn out_dir(&self) -> PathBuf {
        self.out.clone().unwrap_or_else(|| {
            let dir = match self.workload.trim() {
                "churn" => "churn",
                "grow" => "grow",
                _ => "sweep",
            };
            PathBuf::from("reports").join(dir)
        })
    }
}

/// Why the sweep stopped: bad input is found before anything runs (exit 2); a measurement can
/// fail after (exit 1).
enum Stop {
    BadInput(anyhow::Error),
    Failed(anyhow::Error),
}

fn main() -> ExitCode {
    let (code, e) = match run(Args::parse()) {
        Ok(()) => return ExitCode::SUCCESS,
        Err(Stop::BadInput(e)) => (2, e),
        Err(Stop::Failed(e)) => (1, e),
    };
    eprintln!("sweep: error: {e:#}");
    ExitCode::from(code)
}

fn workload(args: &Args) -> Result<WorkloadSettings> {
    let w: Workload = args.workload.parse().map_err(anyhow::Error::from)?;
    Ok(match w {
        Workload::Static => WorkloadSettings::Static,
        Workload::Churn => {
            let c = Churn {
                rounds: args.rounds,
                fraction: args.churn,
                hostile: args.hostile_removes,
            };
            c.validate()?;
            WorkloadSettings::Churn(c)
        }
        Workload::Grow => {
            let max_growth = e(parse_count_named("--max-growth", 1, &args.max_growth))?;
            let g = Grow { max_growth };
            g.validate(1)?;
            WorkloadSettings::Grow(g)
        }
    })
}

fn e<T>(r: Result<T, String>) -> Result<T> {
    r.map_err(anyhow::Error::msg)
}

fn config(args: &Args) -> Result<SweepConfig> {
    let workload = workload(args)?;
    if args.redis.is_some() {
        if args.filters.is_none() {
            bail!(
                "--redis needs --filters with Redis names (redis/classic/<hash>/<index>, redis/blocked512/<hash>; see --list)"
            );
        }
        if workload != WorkloadSettings::Static {
            bail!("--redis runs the static workload only");
        }
        // A bad BLOOMLAB_REDIS_RETRY_SECS is bad input, found before any row runs.
        bloomlab_redis::conn::retry_time_from_env()?;
    }
    let base = match workload {
        WorkloadSettings::Static if args.quick => SweepConfig::quick_grids(),
        WorkloadSettings::Static => SweepConfig::default_grids(),
        WorkloadSettings::Churn(_) => SweepConfig::churn_grids(args.quick),
        WorkloadSettings::Grow(_) => SweepConfig::grow_grids(args.quick),
    };
    let custom = args.filters.is_some()
        || args.n.is_some()
        || args.p.is_some()
        || args.keys.is_some()
        || args.overfill.is_some();
    let grids = if custom {
        let d = &base[0];
        vec![Grid {
            filters: match &args.filters {
                Some(s) => Selection::parse_list(s).map_err(|e| anyhow::anyhow!("--filters: {e}"))?,
                None => d.filters.clone(),
            },
            key_sets: match &args.keys {
                Some(s) => e(parse_list("keys", s, |x| {
                    x.parse::<KeySetKind>().map_err(|e| e.to_string())
                }))?,
                None => d.key_sets.clone(),
            },
            n: match &args.n {
                Some(s) => e(parse_list("n", s, parse_count))?,
                None => d.n.clone(),
            },
            p: match &args.p {
                Some(s) => e(parse_list("p", s, |x| parse_f64("p", x)))?,
                None => d.p.clone(),
            },
            overfill: match &args.overfill {
                Some(s) => e(parse_list("overfill", s, |x| parse_f64("overfill", x)))?,
                None => d.overfill.clone(),
            },
        }]
    } else {
        base
    };
    bloomlab_cli::redis_sweep::check_subjects(&grids, args.redis.is_some())?;
    let mut c = SweepConfig::with_grids(grids);
    c.sampling.seed = args.seed;
    c.sampling.confidence = args.confidence;
    c.sampling.precision = args.precision;
    c.sampling.max_queries = e(parse_count_named("--max-queries", 1, &args.max_queries))?;
    c.sampling.revision = git_revision();
    c.threads = args.threads;
    c.timing = !args.no_timing;
    c.timing_threads = args.timing_threads;
    c.heap_bytes = Some(CountingAlloc::live_bytes);
    c.workload = workload;
    c.lookup = args
        .lookup
        .parse()
        .map_err(|e: bloomlab_harness::HarnessError| anyhow::anyhow!("--lookup: {e}"))?;
    Ok(c)
}

/// Everything that can be refused before a row runs: the settings, the rows (key files read,
/// every filter sized), the output directory (locked for this run) and the plan's memory.
fn prepare(args: &Args) -> Result<(SweepConfig, Plan, OutputDir)> {
    let config = config(args)?;
    let limit = match &args.memory_limit {
        Some(s) => Some(e(parse_count_named("--memory-limit", 1, s))?),
        None => None,
    };
    let plan = config.plan()?;
    let budget = MemoryBudget::detect(limit);
    if let Some(note) = budget.skipped_note() {
        eprintln!("sweep: {note}");
    }
    let need = plan.memory_need(&config)?;
    preflight::check_memory(&need, &budget, "--memory-limit")?;
    let out = args.out_dir();
    preflight::check_output_dir("output directory (--out)", &out)?;
    let mut outputs = vec![bloomlab_report::CSV_NAME, bloomlab_report::SUMMARY_NAME];
    outputs.extend(bloomlab_report::PNG_NAMES);
    outputs.extend([bloomlab_report::CHURN_PNG, bloomlab_report::GROW_PNG]);
    for name in outputs {
        preflight::check_output_file("output file", &out.join(name))?;
    }
    let out = OutputDir::lock(&out)?;
    Ok((config, plan, out))
}

/// `--list`: the registered names with their capabilities, the peers, the Redis variants. Written
/// at once; a reader that stops early (`sweep --list | head`) ends the listing, not the process.
fn print_list() -> anyhow::Result<()> {
    use std::fmt::Write as _;
    let subjects = Subject::all();
    let width = subjects
        .iter()
        .map(|s| s.to_string().len())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for s in subjects {
        writeln!(text, "{}", s.list_line(width))?;
    }
    match std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn run(args: Args) -> Result<(), Stop> {
    if args.list {
        return print_list().map_err(Stop::Failed);
    }
    if args.sketch.sketch.is_some() {
        return sketch_sweep(&args);
    }
    let (config, plan, out) = prepare(&args).map_err(Stop::BadInput)?;
    bloomlab_cli::exit_130_on_interrupt("sweep", &out);
    measure(&config, &plan, &out, args.redis.as_deref()).map_err(|e| {
        // A Redis key of the run already there: refused before measuring that row (exit 2).
        if bloomlab_cli::redis_sweep::is_refusal(&e) {
            Stop::BadInput(e)
        } else {
            Stop::Failed(e)
        }
    })
}

/// `--sketch`: the sketch sweep, which takes the shared flags (--seed, --confidence, --threads,
/// --quick, --out, --redis) and refuses the Bloom sweep's grid and workload flags.
fn sketch_sweep(args: &Args) -> Result<(), Stop> {
    use bloomlab_cli::sketch_sweep::{self, Shared};
    let bloom_only = [
        ("--filters", args.filters.is_some()),
        ("--n", args.n.is_some()),
        ("--p", args.p.is_some()),
        ("--keys", args.keys.is_some()),
        ("--overfill", args.overfill.is_some()),
        ("--workload", args.workload.trim() != "static"),
    ];
    if let Some((flag, _)) = bloom_only.iter().find(|(_, set)| *set) {
        return Err(Stop::BadInput(anyhow::anyhow!(
            "{flag} is a Bloom sweep flag and cannot be combined with --sketch (see the sketch flags in --help)"
        )));
    }
    let shared = Shared {
        seed: args.seed,
        confidence: args.confidence,
        threads: args.threads,
        quick: args.quick,
        out: args.out.clone(),
        redis: args.redis.clone(),
    };
    let plan = sketch_sweep::plan(&args.sketch, &shared).map_err(Stop::BadInput)?;
    let out = OutputDir::lock(&plan.out).map_err(|e| Stop::BadInput(e.into()))?;
    bloomlab_cli::exit_130_on_interrupt("sweep", &out);
    let command: Vec<String> = std::env::args().skip(1).collect();
    sketch_sweep::run(&plan, &out, &format!("sweep {}", command.join(" "))).map_err(Stop::Failed)
}

fn measure(config: &SweepConfig, plan: &Plan, out: &OutputDir, redis: Option<&str>) -> Result<()> {
    let bar = ProgressBar::new(plan.rows.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} rows  {wide_msg}")
            .context("progress bar template")?
            .progress_chars("=> "),
    );
    let started = Instant::now();
    let show = |p: &sweep::Progress| {
        bar.set_position(p.done as u64);
        bar.set_message(p.current.clone());
    };
    let rows = match redis {
        Some(url) => bloomlab_cli::redis_sweep::run(config, plan, url, &show),
        None => sweep::run(config, plan, &show),
    };
    bar.finish_and_clear();
    let rows = rows?;
    let elapsed = started.elapsed();
    let staged = out.publish(|dir| {
        bloomlab_report::write_reports(&rows, dir).with_context(|| {
            format!(
                "writing reports to {} (nothing was written; the previous report there is as it was)",
                out.dir().display()
            )
        })
    })?;
    let files = bloomlab_report::ReportFiles {
        csv: out.placed(&staged.csv),
        pngs: staged.pngs.iter().map(|p| out.placed(p)).collect(),
        summary: out.placed(&staged.summary),
    };
    print_headlines(&rows);
    let rate = bloomlab_harness::bloom::row::overall_queries_per_s_core(&rows)
        .map_or("-".to_string(), |q| format!("{:.1}M", q / 1e6));
    println!(
        "\n{} rows in {:.1} s (seed {}, {} threads); non-member queries per second per core: {rate}",
        rows.len(),
        elapsed.as_secs_f64(),
        config.sampling.seed,
        if config.threads == 0 {
            "all".to_string()
        } else {
            config.threads.to_string()
        }
    );
    println!("CSV:     {}", files.csv.display());
    for png in &files.pngs {
        println!("PNG:     {}", png.display());
    }
    println!("Summary: {}", files.summary.display());
    if rows.iter().any(|r| r.fpr.is_nan()) {
        bail!("a row has no queries");
    }
    let failures: Vec<String> = rows
        .iter()
        .filter(|r| r.fn_failure)
        .map(|r| {
            format!(
                "{} {} n={} p={} round {} growth {}: {} false negatives among {} members",
                r.filter,
                r.key_set,
                r.n,
                r.p,
                r.round,
                r.growth,
                r.false_negatives,
                r.members_checked
            )
        })
        .collect();
    if !failures.is_empty() {
        bail!(
            "false negatives from variants that promise none (reports written):\n  {}",
            failures.join("\n  ")
        );
    }
    Ok(())
}

/// One line per filter: how often theory lay inside the interval, how far the observed rate
/// strays from theory (in either direction), and lookup speed against the HashSet.
fn print_headlines(rows: &[SweepRow]) {
    let mut filters: Vec<Subject> = rows.iter().map(|r| r.filter).collect();
    filters.dedup();
    let mut seen = std::collections::HashSet::new();
    filters.retain(|f| seen.insert(*f));
    println!(
        "{:<30} {:>5} {:>12} {:>10} {:>8} {:>15} {:>10} {:>11} {:>10}",
        "filter",
        "rows",
        "theory in CI",
        "own in CI",
        "obs/th",
        "obs/th range",
        "absent ns",
        "HashSet ns",
        "Mq/s/core"
    );
    for f in filters {
        let mine: Vec<&SweepRow> = rows.iter().filter(|r| r.filter == f).collect();
        let inside = mine.iter().filter(|r| r.theory_in_interval).count();
        let own = mine.iter().filter(|r| r.given_bits_in_interval).count();
        // A peer that does not expose its bits has no rate of its own to test.
        let own = if mine.iter().all(|r| r.fpr_given_bits.is_nan()) {
            "-".to_string()
        } else {
            format!("{own}/{}", mine.len())
        };
        let ratio: Vec<f64> = mine
            .iter()
            .map(|r| r.fpr / r.fpr_theory)
            .filter(|x| x.is_finite() && *x > 0.0)
            .collect();
        let lo = ratio.iter().copied().fold(f64::NAN, f64::min);
        let hi = ratio.iter().copied().fold(f64::NAN, f64::max);
        let rate = bloomlab_harness::bloom::row::overall_queries_per_s_core(mine.iter().copied())
            .map_or("-".to_string(), |q| format!("{:.1}", q / 1e6));
        println!(
            "{:<30} {:>5} {:>12} {:>10} {:>8.3} {:>15} {:>10.1} {:>11.1} {:>10}",
            f,
            mine.len(),
            format!("{inside}/{}", mine.len()),
            own,
            median(ratio),
            format!("{lo:.2}..{hi:.2}"),
            median(mine.iter().map(|r| r.lookup_absent_ns)),
            median(mine.iter().map(|r| r.hashset_absent_ns)),
            rate,
        );
    }
    println!(
        "(own in CI: rows whose filter's own rate, from its bits, lies in the interval; \
         obs/th: observed FPR / layout-correct theory, median and range over rows with a false \
         positive; ns: medians, indicative; Mq/s/core: millions of non-member queries per second \
         per core while sampling, all the filter's rows together)"
    );
}
