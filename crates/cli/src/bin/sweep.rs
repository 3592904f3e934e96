//! `sweep`: measure filters and sketches over a grid, with exact confidence intervals, and write
//! CSV, PNG and Markdown reports. Its modes are subcommands (`static`, the default; `churn`;
//! `grow`; `sketch`), each taking only its own flags.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use bloomlab_cli::progress::{Look, RunProgress};
use bloomlab_cli::sketch_sweep::SketchArgs;
use bloomlab_cli::{
    CountingAlloc, KeySetParser, LookupArg, SketchKind, count_parser, float_parser, git_revision,
    parse_count, parse_subject,
};
use bloomlab_harness::bloom::preflight::{self, MemoryBudget};
use bloomlab_harness::bloom::sweep::WorkloadSettings;
use bloomlab_harness::bloom::workload::{Churn, Grow};
use bloomlab_harness::stats::median;
use bloomlab_harness::{Grid, KeySetKind, Plan, SweepConfig, SweepRow, bloom::sweep};
use bloomlab_harness::{Selection, Subject};
use bloomlab_report::output::OutputDir;
use clap::{Args, Parser, Subcommand};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Measure Bloom filters and sketches: observed error rates with exact confidence intervals
/// against theory, memory, and speed; CSV, PNG and Markdown reports.
///
/// Each mode is a subcommand with its own --help saying what it measures and writes: static (the
/// default: plain `sweep` runs it and takes its flags, so `sweep --quick` is `sweep static
/// --quick`), churn, grow and sketch. `sweep --list` prints every filter name.
///
/// Before anything is measured, the settings are checked, every row is planned (key files read,
/// filters sized), the memory the plan holds at once is compared with what the machine has, and
/// --out is probed and locked: a second run on the same directory is refused at once, naming the
/// run that holds it. Every output is written to a staging directory inside --out and moved into
/// place only when the whole run succeeded, so a report is never a mix of two runs and a failed
/// or interrupted run leaves the previous report whole. Progress goes to stderr: a bar on a
/// terminal, otherwise (a log file, CI) a line every 10 s saying the rows done and what runs.
///
/// Exit status: 0 on success; 1 when a measurement fails (a false negative or a Count-Min
/// undercount: the report is written; a lost server) or the report cannot be written after
/// measuring; 2 on bad input or a --out in use by another run (nothing measured); 130 interrupted
/// (Ctrl-C: nothing is written).
#[derive(Debug, Parser)]
#[command(
    name = "sweep",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_value_name = "MODE",
    subcommand_help_heading = "Modes",
    mut_args(hide_static_flags)
)]
struct Cli {
    /// Print the registered filter names, one per line with its capabilities (remove, grow),
    /// then the third-party peers and the Redis variants, and exit.
    #[arg(long, exclusive = true)]
    list: bool,
    #[command(subcommand)]
    mode: Option<Mode>,
    /// Plain `sweep`: the static mode's flags.
    #[command(flatten)]
    plain: StaticArgs,
}

/// The top level accepts the static mode's flags (plain `sweep` is `sweep static`) without
/// listing them: `sweep static --help` does, and the top-level help stays a map of the modes.
fn hide_static_flags(a: clap::Arg) -> clap::Arg {
    if a.get_id() == "list" {
        a
    } else {
        a.hide(true)
    }
}

#[derive(Debug, Subcommand)]
enum Mode {
    /// Fill each filter once, then query it (the default mode): observed false-positive rate
    /// with exact (Clopper-Pearson) intervals against layout-correct theory, memory, and lookup
    /// speed against std's HashSet.
    ///
    /// Every row is one (filter, key set, n, p, overfill): the filter is sized for n keys at
    /// target rate p, round(n * overfill) member keys are inserted and all checked (a miss is a
    /// false negative and fails the run), then non-member keys are queried until the interval's
    /// relative half-width reaches --precision or --max-queries is hit.
    ///
    /// Outputs in --out (default reports/sweep): sweep.csv (one row per trial; every figure is a
    /// column: fpr, ci_low/ci_high, wilson_low/high, fpr_theory, fpr_textbook,
    /// theory_in_interval, fpr_given_bits (this filter's own rate from its bits, which the
    /// interval tests without the filter-to-filter spread the theory averages over),
    /// given_bits_in_interval, capped, bits_per_key, bound_bits_per_key = log2(1/p),
    /// space_overhead, memory, fill ratio, estimated count, insert and lookup ns/key and the
    /// HashSet's, queries_per_s_core: non-member queries per second on one core while sampling,
    /// keys generated once per key set and member count not counted), four PNGs drawn from the
    /// CSV (observed FPR vs target p, FPR vs bits per key, lookup ns vs n, FPR vs overfill) and
    /// summary.md.
    ///
    /// With no grid flags, runs the default grid: 10 representative filters (every layout, hash,
    /// index scheme and store; Guava's layout; the textbook port) on all four built-in key sets,
    /// n = 1e4..1e6 x p = 1e-1..1e-4, plus n = 1e7 on random-u64 and an overfill series. Use
    /// --filters all for all registered variants. Timings are indicative medians (the criterion
    /// benches are the authority on speed); they are taken one row at a time after each group's
    /// statistics, which run in parallel.
    ///
    /// Exit status: 0 ok; 1 a false negative (the report is written), a lost Redis server or a
    /// report that cannot be written; 2 bad input or --out in use (nothing measured); 130
    /// interrupted (nothing written).
    Static(StaticArgs),
    /// Remove and replace members in rounds (filters that can remove only), checking every
    /// member and the false-positive rate after each round.
    ///
    /// Each filter is sized for n at p and filled with n keys (round(n * overfill) with
    /// --overfill), then --rounds rounds each remove --churn of the members and insert as many
    /// fresh keys; one row per round (round 0: before any removal), naming the mechanism behind
    /// any false negative. With --hostile-removes, some removals hit keys that were never
    /// inserted but test positive: the false negatives they cause are reported, not failures.
    ///
    /// Outputs in --out (default reports/churn): sweep.csv (one row per round, with the static
    /// mode's columns; round, removals and false negatives filled in), churn_rounds.png and
    /// summary.md. Without
    /// grid flags: the counting layouts and the textbook counting port on random-u64 and
    /// article, n = 1e5 (1e4 with --quick), p = 0.01, and an overloaded filter whose counters
    /// saturate.
    ///
    /// Exit status: 0 ok; 1 a false negative a filter promised not to give (the report is
    /// written) or a report that cannot be written; 2 bad input or --out in use (nothing
    /// measured); 130 interrupted (nothing written).
    Churn(ChurnArgs),
    /// Keep inserting past the sized-for count: a filter built for n takes n x G keys for G = 1,
    /// 2, 4, ... up to --max-growth, measured at each G.
    ///
    /// One row per (filter, key set, n, p, G): members all checked, FPR with its interval, memory.
    /// Scalable filters grow; fixed ones show their blow-up.
    ///
    /// Outputs in --out (default reports/grow): sweep.csv (one row per G, with the static mode's
    /// columns), fpr_vs_growth.png and summary.md. Without grid flags: the scalable filter over each layout family, the textbook
    /// scalable port, the growable-bloom-filter peer and one fixed classic filter on random-u64,
    /// n = 1e4 (1e3 with --quick), p = 0.01.
    ///
    /// Exit status: 0 ok; 1 a false negative (the report is written) or a report that cannot be
    /// written; 2 bad input or --out in use (nothing measured); 130 interrupted (nothing
    /// written).
    Grow(GrowArgs),
    /// HyperLogLog and Count-Min against their stated errors: `sweep sketch` runs both, `sweep
    /// sketch hll` or `sweep sketch cms` one.
    ///
    /// hll: each sketch's relative error over seeded trials at octave-spaced cardinalities from
    /// 1 to --max-n, against 1.04/sqrt(m) (RMS with its interval), beside the crates.io
    /// hyperloglogplus and, with --redis URL, Redis's own PFADD/PFCOUNT (p = 14). cms: the share
    /// of items overcounted by more than epsilon N in Zipf streams, against delta.
    ///
    /// Outputs in --out (default reports/sketches): hll.csv, hll_trials.csv.gz (every trial's
    /// estimate at every n), cms.csv, hll_error_vs_n.png, one pitchfork picture per precision
    /// (hll_pitchfork_p14.png, ...), cms_violations.png and summary.md (which records the
    /// command).
    ///
    /// Exit status: 0 ok; 1 a measurement failed (a Count-Min undercount, a server error); 2 bad
    /// input or --out in use (nothing measured); 130 interrupted (nothing written).
    Sketch(SketchCmd),
}

/// The help heading of the grid flags (the default grid is replaced when any is given).
const GRID: &str = "Grid (any given replaces the default grid)";

/// The flags every mode takes.
#[derive(Debug, Args)]
struct Common {
    /// Run seed: key sets derive from it, so a run is reproducible to the bit.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Confidence level of the intervals, in (0, 1).
    #[arg(long, default_value_t = 0.95)]
    confidence: f64,
    /// Worker threads for the statistics (0 = one per core), at most 4 per core: the trials are
    /// CPU-bound, so more threads only take turns. Results do not depend on it.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// A small run that finishes in well under a minute (flags given still override it).
    #[arg(long)]
    quick: bool,
    /// Output directory (default: the mode's own directory under reports/, so that one mode's
    /// run never overwrites another's report).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// The grid and sampling flags of the Bloom modes (static, churn, grow). A grid flag given
/// replaces the mode's default grid; the grid flags not given take the first default grid's
/// values.
#[derive(Debug, Args)]
struct BloomArgs {
    /// Comma-separated filter names (see --list), or `all`.
    #[arg(long, value_name = "NAMES", value_delimiter = ',', value_parser = parse_subject,
          help_heading = GRID)]
    filters: Option<Vec<Selection>>,
    /// Comma-separated expected counts the filters are sized for; scientific notation allowed
    /// (e.g. 1e4,1e5).
    #[arg(long, value_name = "COUNTS", value_delimiter = ',', value_parser = parse_count,
          allow_hyphen_values = true, help_heading = GRID)]
    n: Option<Vec<u64>>,
    /// Comma-separated target false-positive rates, each in (0, 1) (e.g. 0.01,1e-3).
    #[arg(long, value_name = "RATES", value_delimiter = ',', value_parser = float_parser("p"),
          allow_hyphen_values = true, help_heading = GRID)]
    p: Option<Vec<f64>>,
    /// Comma-separated key sets (e.g. url,file:urls.txt).
    #[arg(long, value_name = "SETS", value_delimiter = ',', value_parser = KeySetParser,
          help_heading = GRID)]
    keys: Option<Vec<KeySetKind>>,
    #[command(flatten)]
    common: Common,
    /// Target relative half-width of the interval, (high - low) / 2 / fpr; must be > 0.
    #[arg(long, default_value_t = 0.10)]
    precision: f64,
    /// Most non-member queries per row (scientific notation allowed); rows that stop here are
    /// marked capped.
    #[arg(long, default_value = "2e7", value_name = "COUNT", allow_hyphen_values = true,
          value_parser = count_parser("--max-queries", 1))]
    max_queries: u64,
    /// Memory the run may hold at once, in bytes (scientific notation allowed, e.g. 8e9). The
    /// plan's peak (the largest group's filters, sized without allocating, plus its key batches
    /// and HashSet baseline) is compared with it before anything is allocated. Default: the
    /// MemAvailable figure of /proc/meminfo (on systems without it the check is skipped unless
    /// this is given). Raise it to run a plan the check refuses.
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true,
          value_parser = count_parser("--memory-limit", 1))]
    memory_limit: Option<u64>,
    /// Skip the timing columns, queries_per_s_core included (they are written as 0).
    #[arg(long)]
    no_timing: bool,
}

/// `--overfill`, which the static and churn modes take (grow fixes its own member counts).
#[derive(Debug, Args)]
struct OverfillArg {
    /// Comma-separated factors: insert round(n * factor) keys into a filter sized for n, to show
    /// how the rate degrades when n is underestimated (e.g. 0.5,1,2).
    #[arg(long, value_name = "FACTORS", value_delimiter = ',',
          value_parser = float_parser("overfill"), allow_hyphen_values = true,
          help_heading = GRID)]
    overfill: Option<Vec<f64>>,
}

/// `sweep static` (and plain `sweep`).
#[derive(Debug, Args)]
struct StaticArgs {
    #[command(flatten)]
    bloom: BloomArgs,
    #[command(flatten)]
    overfill: OverfillArg,
    /// Rows timed at once after each group's statistics: 1 times each row with nothing else
    /// running; 0 = as many as --threads, which saves about a sixth of the default sweep's time on
    /// 2 cores but made the timings 8% to 22% slower there (rows share the cache and memory).
    #[arg(long, default_value_t = 1, value_name = "THREADS")]
    timing_threads: usize,
    /// The lookup that counts false positives. Both give the same answers, so only
    /// queries_per_s_core changes: the way to measure one against the other.
    #[arg(long, value_enum, default_value_t = LookupArg::EarlyExit, value_name = "LOOKUP")]
    lookup: LookupArg,
    /// Run the filters in the Redis server at URL (e.g. redis://127.0.0.1:6379), or in the
    /// cluster whose nodes are the comma-separated URLs given (shards of 2^20 bits, spread over
    /// the masters): every --filters name must then be a Redis one (redis/classic/HASH/INDEX,
    /// redis/blocked512/HASH; see --list). Each row's filter is created fresh under a name with a
    /// random run id (bloomlab-sweep:RUNID:ROW), every key expiring after 10 min unless the run
    /// keeps using it, and deleted afterwards; if a key of that name exists the run stops with
    /// exit 2 naming it (remove bloomlab's leftovers with `scripts/redis-local.sh clean URL`).
    /// Rows run one at a time, 4096 keys per round trip. The statistical columns equal the
    /// in-memory twin's (classic/HASH/INDEX/flat, blocked512/HASH) bit for bit; memory_bytes is
    /// the bytes held on the server; the timing columns are 0. A server lost mid-run is exit 1
    /// (a measured failure), its address named (credentials never shown), no report written.
    /// On a cluster, a refused command is retried for at most BLOOMLAB_REDIS_RETRY_SECS seconds
    /// (default 3; 0 to 600), then the error names the nodes that are down.
    #[arg(long, value_name = "URL[,URL...]", requires = "filters")]
    redis: Option<String>,
}

/// `sweep churn`.
#[derive(Debug, Args)]
struct ChurnArgs {
    #[command(flatten)]
    bloom: BloomArgs,
    #[command(flatten)]
    overfill: OverfillArg,
    /// Rounds after the initial fill (at least 1).
    #[arg(long, default_value_t = 10)]
    rounds: u64,
    /// Fraction of the members each round removes and replaces, in (0, 1].
    #[arg(long, default_value_t = 0.1, allow_hyphen_values = true)]
    churn: f64,
    /// Fraction of each round's removals that instead remove a never-inserted key testing
    /// positive (a caller error no filter can detect), in [0, 1]; false negatives are then
    /// reported, not failures.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    hostile_removes: f64,
}

/// `sweep grow`.
#[derive(Debug, Args)]
struct GrowArgs {
    #[command(flatten)]
    bloom: BloomArgs,
    /// The largest growth factor G (at least 1; n x G at most 2^53).
    #[arg(long, default_value = "1024", value_name = "G", allow_hyphen_values = true,
          value_parser = count_parser("--max-growth", 1))]
    max_growth: u64,
}

/// `sweep sketch`: the kinds, the shared flags and the sketch sweep's own
/// ([`SketchArgs`], whose `--sketch` the kinds replace).
#[derive(Debug, Args)]
#[command(
    mut_arg("sketch", |a| a.hide(true).value_parser(replaced_sketch_flag)),
    mut_args(|a| match a.get_help_heading() {
        // SketchArgs' own heading names the old flag; its flags are this mode's.
        Some(_) => a.help_heading("Sketch options"),
        None => a,
    })
)]
struct SketchCmd {
    /// Which sketches: hll, cms or hll,cms.
    #[arg(value_name = "KINDS", value_enum, value_delimiter = ',',
          default_values_t = [SketchKind::Hll, SketchKind::Cms])]
    kinds: Vec<SketchKind>,
    #[command(flatten)]
    common: Common,
    /// Also measure Redis's own HyperLogLog (PFADD/PFCOUNT, p = 14) in the server at URL, beside
    /// ours (needs hll among the kinds). Every key gets a random run id and an expiry.
    #[arg(long, value_name = "URL")]
    redis: Option<String>,
    #[command(flatten)]
    flags: SketchArgs,
}

/// The old `--sketch KINDS` flag that [`SketchArgs`] still declares: refused, pointing at the
/// subcommand's argument (the value parser of the hidden flag).
fn replaced_sketch_flag(_: &str) -> Result<String, String> {
    Err("the sketch kinds are the subcommand's argument: sweep sketch hll,cms".into())
}

/// Why the sweep stopped: bad input is found before anything runs (exit 2); a measurement can
/// fail after (exit 1).
enum Stop {
    BadInput(anyhow::Error),
    Failed(anyhow::Error),
}

fn main() -> ExitCode {
    let (code, e) = match run(Cli::parse()) {
        Ok(()) => return ExitCode::SUCCESS,
        Err(Stop::BadInput(e)) => (2, e),
        Err(Stop::Failed(e)) => (1, e),
    };
    eprintln!("sweep: error: {e:#}");
    ExitCode::from(code)
}

fn run(cli: Cli) -> Result<(), Stop> {
    if cli.list {
        return print_list().map_err(Stop::Failed);
    }
    let job = match cli.mode.unwrap_or(Mode::Static(cli.plain)) {
        Mode::Sketch(s) => return sketch_sweep(s),
        Mode::Static(a) => static_job(a),
        Mode::Churn(a) => churn_job(a),
        Mode::Grow(a) => grow_job(a),
    };
    let (job, plan, out) = job.and_then(prepare).map_err(Stop::BadInput)?;
    bloomlab_cli::exit_130_on_interrupt("sweep", &out);
    measure(&job.config, &plan, &out, job.redis.as_deref()).map_err(|e| {
        // A Redis key of the run already there: refused before measuring that row (exit 2).
        if e.downcast_ref::<bloomlab_harness::HarnessError>()
            .is_some_and(bloomlab_redis::sweep::is_refusal)
        {
            Stop::BadInput(e)
        } else {
            Stop::Failed(e)
        }
    })
}

/// A Bloom mode's run, checked flag by flag but not yet planned.
struct BloomJob {
    config: SweepConfig,
    memory_limit: Option<u64>,
    out: PathBuf,
    /// The Redis server or cluster the rows run in (static mode only).
    redis: Option<String>,
}

fn static_job(a: StaticArgs) -> Result<BloomJob> {
    if a.redis.is_some() {
        // A bad BLOOMLAB_REDIS_RETRY_SECS is bad input, found before any row runs.
        bloomlab_redis::conn::retry_time_from_env()?;
    }
    let base = if a.bloom.common.quick {
        SweepConfig::quick_grids()
    } else {
        SweepConfig::default_grids()
    };
    let grids = grids(&a.bloom, a.overfill.overfill, base, a.redis.is_some())?;
    let mut job = bloom_job(a.bloom, grids, WorkloadSettings::Static, "sweep");
    job.config.timing_threads = a.timing_threads;
    job.config.lookup = a.lookup.into();
    job.redis = a.redis;
    Ok(job)
}

fn churn_job(a: ChurnArgs) -> Result<BloomJob> {
    let churn = Churn {
        rounds: a.rounds,
        fraction: a.churn,
        hostile: a.hostile_removes,
    };
    churn.validate()?;
    let base = SweepConfig::churn_grids(a.bloom.common.quick);
    let grids = grids(&a.bloom, a.overfill.overfill, base, false)?;
    Ok(bloom_job(
        a.bloom,
        grids,
        WorkloadSettings::Churn(churn),
        "churn",
    ))
}

fn grow_job(a: GrowArgs) -> Result<BloomJob> {
    let grow = Grow {
        max_growth: a.max_growth,
    };
    grow.validate(1)?;
    let base = SweepConfig::grow_grids(a.bloom.common.quick);
    let grids = grids(&a.bloom, None, base, false)?;
    Ok(bloom_job(
        a.bloom,
        grids,
        WorkloadSettings::Grow(grow),
        "grow",
    ))
}

/// The grids to run: the mode's defaults (`base`), or, when any grid flag is given, one grid of
/// the flags given and the first default grid's values for the rest. With `redis`, every subject
/// must keep its bits in Redis (`redis/...`), and without it none may.
fn grids(
    a: &BloomArgs,
    overfill: Option<Vec<f64>>,
    base: Vec<Grid>,
    redis: bool,
) -> Result<Vec<Grid>> {
    let custom = a.filters.is_some()
        || a.n.is_some()
        || a.p.is_some()
        || a.keys.is_some()
        || overfill.is_some();
    if !custom {
        return Ok(base);
    }
    let d = &base[0];
    let filters = match &a.filters {
        Some(items) => bloomlab_cli::joined(items.clone()),
        None => d.filters.clone(),
    };
    let grids = vec![Grid {
        filters,
        key_sets: a.keys.clone().unwrap_or_else(|| d.key_sets.clone()),
        n: a.n.clone().unwrap_or_else(|| d.n.clone()),
        p: a.p.clone().unwrap_or_else(|| d.p.clone()),
        overfill: overfill.unwrap_or_else(|| d.overfill.clone()),
    }];
    bloomlab_redis::sweep::check_subjects(&grids, redis)?;
    Ok(grids)
}

/// The settings every Bloom mode shares, around `grids`; `dir` names the default output
/// directory under reports/.
fn bloom_job(a: BloomArgs, grids: Vec<Grid>, workload: WorkloadSettings, dir: &str) -> BloomJob {
    let mut c = SweepConfig::with_grids(grids);
    c.sampling.seed = a.common.seed;
    c.sampling.confidence = a.common.confidence;
    c.sampling.precision = a.precision;
    c.sampling.max_queries = a.max_queries;
    c.sampling.revision = git_revision();
    c.threads = a.common.threads;
    c.timing = !a.no_timing;
    c.heap_bytes = Some(CountingAlloc::thread_bytes);
    c.workload = workload;
    BloomJob {
        config: c,
        memory_limit: a.memory_limit,
        out: a
            .common
            .out
            .unwrap_or_else(|| PathBuf::from("reports").join(dir)),
        redis: None,
    }
}

/// Everything that can be refused before a row runs: the rows (key files read, every filter
/// sized, the settings validated), the plan's memory and the output directory (locked for this
/// run).
fn prepare(job: BloomJob) -> Result<(BloomJob, Plan, OutputDir)> {
    let plan = job.config.plan()?;
    let budget = MemoryBudget::detect(job.memory_limit);
    if let Some(note) = budget.skipped_note() {
        eprintln!("sweep: {note}");
    }
    let need = plan.memory_need(&job.config)?;
    preflight::check_memory(&need, &budget, "--memory-limit")?;
    preflight::check_output_dir("output directory (--out)", &job.out)?;
    let mut outputs = vec![bloomlab_report::CSV_NAME, bloomlab_report::SUMMARY_NAME];
    outputs.extend(bloomlab_report::PNG_NAMES);
    outputs.extend([bloomlab_report::CHURN_PNG, bloomlab_report::GROW_PNG]);
    for name in outputs {
        preflight::check_output_file("output file", &job.out.join(name))?;
    }
    let out = OutputDir::lock(&job.out)?;
    Ok((job, plan, out))
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

/// `sweep sketch`: plans (bad input: exit 2), locks --out, measures and reports (exit 1 on a
/// failed measurement).
fn sketch_sweep(cmd: SketchCmd) -> Result<(), Stop> {
    use bloomlab_cli::sketch_sweep::{self, Shared};
    let SketchCmd {
        kinds,
        common,
        redis,
        mut flags,
    } = cmd;
    let kinds: Vec<&str> = kinds.into_iter().map(SketchKind::name).collect();
    flags.sketch = Some(kinds.join(","));
    let shared = Shared {
        seed: common.seed,
        confidence: common.confidence,
        threads: common.threads,
        quick: common.quick,
        out: common.out,
        redis,
    };
    let plan = sketch_sweep::plan(&flags, &shared).map_err(Stop::BadInput)?;
    let out = OutputDir::lock(&plan.out).map_err(|e| Stop::BadInput(e.into()))?;
    bloomlab_cli::exit_130_on_interrupt("sweep", &out);
    let command: Vec<String> = std::env::args().skip(1).collect();
    sketch_sweep::run(&plan, &out, &format!("sweep {}", command.join(" "))).map_err(Stop::Failed)
}

fn measure(config: &SweepConfig, plan: &Plan, out: &OutputDir, redis: Option<&str>) -> Result<()> {
    let bar = RunProgress::new(
        plan.rows.len() as u64,
        &Look {
            program: "sweep",
            unit: "rows",
            template: "{elapsed_precise} [{bar:30}] {pos}/{len} rows  {wide_msg}",
            rate: false,
        },
    );
    let started = Instant::now();
    let show = |p: &sweep::Progress| {
        bar.set_position(p.done as u64);
        bar.set_message(p.current.clone());
    };
    let rows = match redis {
        Some(url) => bloomlab_redis::sweep::run(config, plan, url, &show),
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
    // The whole process's rate: every non-member query of the run over its wall time (key
    // generation, inserts, member checks, timing phases and all threads included).
    let queries: u64 = rows.iter().map(|r| r.queries).sum();
    let wall = elapsed.as_secs_f64();
    let wall_rate = if wall > 0.0 {
        format!("{:.1}M", queries as f64 / wall / 1e6)
    } else {
        "-".to_string()
    };
    println!(
        "\n{} rows in {:.1} s (seed {}, {} threads); non-member queries per second per core: \
         {rate}; per wall second, whole run: {wall_rate}\ntimings from a {}",
        rows.len(),
        wall,
        config.sampling.seed,
        if config.threads == 0 {
            "all".to_string()
        } else {
            config.threads.to_string()
        },
        bloomlab_cli::build_description()
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
