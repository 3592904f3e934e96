//! `redis-costs`: the report of what a filter in Redis costs and keeps (`reports/redis/`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use bloomlab_cli::parse_count_named;
use bloomlab_harness::bloom::preflight::{self, MemoryBudget};
use bloomlab_redis::costs::{self, CostPlan, Endpoints, Steps, SweepInRedis};
use bloomlab_redis::sweep as redis_sweep;
use bloomlab_report::bench_table::Machine;
use bloomlab_report::output::OutputDir;
use bloomlab_report::redis_costs::{REPORT_NAME, falling_cost, render};
use bloomlab_report::roundtrips;
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

/// Measures a Bloom filter whose bits live in Redis against the same filter in memory, on a real
/// server and (when given) a real cluster, and writes `roundtrips.csv`, `roundtrips.png` and
/// `report.md` to --out:
///
/// 1. Round trips: inserts and lookups per second, per key and per round trip (p50, p99), for
///    1, 16, 256 and 4096 keys per round trip (pipeline), on one server and on the cluster, with
///    each cell's slowdown against memory measured in the same repetition.
/// 2. One filter of more than 2^32 bits (two Redis strings) on the server: members found, bytes
///    equal to the in-memory twin's (needs about 550 MB of server memory and as much here).
/// 3. The sweep's Redis rows against their in-memory twins' rows, column by column.
///
/// Start throwaway servers first: `export BLOOMLAB_REDIS_URL=$(scripts/redis-local.sh start)` and
/// `export BLOOMLAB_REDIS_CLUSTER_URLS=$(scripts/redis-local.sh cluster)`; stop them with
/// `scripts/redis-local.sh stop`. Every count is checked (1 to 2^53, scientific notation
/// allowed) and the run's peak memory is computed and compared with --memory-limit (default:
/// MemAvailable) before anything is allocated or any server is contacted. Each filter is created
/// fresh under a random name, its keys expiring after 10 minutes unless in use, and deleted
/// after. URLs are shown without their credentials. On a cluster, a refused command is retried
/// for at most BLOOMLAB_REDIS_RETRY_SECS seconds (default 3, 0 to 600), then the error names the
/// nodes that are down.
///
/// --out is locked for the run (a second run on it is refused at once, naming the holder); the
/// three files are staged and moved into place together only after every measurement, so a
/// failed or interrupted run leaves the previous report whole.
///
/// Exit status: 0 done; 1 a measurement failed (a server unreachable or lost, a member not
/// found, a byte or row that differs from the twin; the report is written when the measurements
/// finished) or the report could not be written; 2 bad input (a flag out of range, no server
/// given, a plan larger than the memory limit) or a --out in use by another run (nothing
/// measured); 130 interrupted (Ctrl-C: nothing is written).
#[derive(Parser, Debug)]
#[command(name = "redis-costs", version, about, long_about)]
struct Args {
    /// The server, e.g. redis://127.0.0.1:6379.
    #[arg(long, env = "BLOOMLAB_REDIS_URL", value_name = "URL")]
    redis: Option<String>,
    /// The cluster's node URLs, comma-separated. Without it there are no cluster rows.
    #[arg(long, env = "BLOOMLAB_REDIS_CLUSTER_URLS", value_name = "URLS")]
    cluster: Option<String>,
    /// Keys inserted, then looked up, per cell and repetition: 1 to 2^53 (e.g. 16384, 1e5), as
    /// memory allows.
    #[arg(
        long,
        default_value = "16384",
        value_name = "COUNT",
        allow_hyphen_values = true
    )]
    keys: String,
    /// Repetitions of every cell: 1 to 4294967295, as memory allows. Figures are medians over
    /// them.
    #[arg(
        long,
        default_value = "7",
        value_name = "COUNT",
        allow_hyphen_values = true
    )]
    reps: String,
    /// Comma-separated keys per round trip, each at least 1.
    #[arg(long, default_value = "1,16,256,4096", value_name = "SIZES")]
    batches: String,
    /// Skip the filter of more than 2^32 bits.
    #[arg(long)]
    skip_big: bool,
    /// Members inserted into the big filter: 1 to 2^53 (e.g. 2e6), as memory allows.
    #[arg(
        long,
        default_value = "2e6",
        value_name = "COUNT",
        allow_hyphen_values = true
    )]
    big_members: String,
    /// Skip the sweep comparison.
    #[arg(long)]
    skip_sweep: bool,
    /// Memory the run may hold at once, in bytes (scientific notation allowed, e.g. 8e9):
    /// the peak computed from the flags (keys, round-trip times, the big filter's in-memory twin,
    /// the sweep comparison) is compared with it before anything is allocated. Default: the
    /// MemAvailable figure of /proc/meminfo.
    #[arg(long, value_name = "BYTES")]
    memory_limit: Option<String>,
    /// Output directory.
    #[arg(long, default_value = "reports/redis")]
    out: PathBuf,
}

/// The flags' values once checked that [`CostPlan`] does not hold.
struct Counts {
    big_members: u64,
}

fn batches(s: &str) -> Result<Vec<u32>, String> {
    s.split(',')
        .map(|b| match b.trim().parse::<u32>() {
            Ok(v) if v >= 1 => Ok(v),
            _ => Err(format!(
                "--batches: {b:?} is not a whole number of keys per round trip from 1 to {}",
                u32::MAX
            )),
        })
        .collect()
}

fn prepare(args: &Args) -> Result<(CostPlan, Endpoints, Counts), String> {
    let keys = parse_count_named("--keys", 1, &args.keys)?;
    let reps = parse_count_named("--reps", 1, &args.reps)?;
    let reps = u32::try_from(reps).map_err(|_| {
        format!(
            "--reps = {:?} is invalid: it must be a whole number from 1 to {}",
            args.reps,
            u32::MAX
        )
    })?;
    let big_members = parse_count_named("--big-members", 1, &args.big_members)?;
    let keys = usize::try_from(keys)
        .map_err(|_| format!("--keys = {keys} is more than this machine can address"))?;
    let limit = match &args.memory_limit {
        Some(s) => Some(parse_count_named("--memory-limit", 1, s)?),
        None => None,
    };
    let cluster: Option<Vec<String>> = args
        .cluster
        .as_deref()
        .filter(|c| !c.trim().is_empty())
        .map(|c| c.split(',').map(|u| u.trim().to_owned()).collect());
    let plan = CostPlan {
        keys,
        reps,
        batches: batches(&args.batches)?,
        ..CostPlan::default()
    };
    // Before a server is needed: a plan that cannot fit is refused whatever the servers.
    let need = costs::memory_need(
        &plan,
        cluster.is_some(),
        (!args.skip_big).then_some(big_members),
        !args.skip_sweep,
    )
    .map_err(|e| format!("{e:#}"))?;
    let budget = MemoryBudget::detect(limit);
    if let Some(note) = budget.skipped_note() {
        eprintln!("redis-costs: {note}");
    }
    preflight::check_memory(&need, &budget, "--memory-limit").map_err(|e| e.to_string())?;
    let server = args.redis.clone().filter(|u| !u.trim().is_empty()).ok_or(
        "no server: give --redis URL or set BLOOMLAB_REDIS_URL \
         (export BLOOMLAB_REDIS_URL=$(scripts/redis-local.sh start))",
    )?;
    // A bad retry setting is bad input, found before connecting.
    bloomlab_redis::conn::retry_time_from_env().map_err(|e| e.to_string())?;
    Ok((plan, Endpoints { server, cluster }, Counts { big_members }))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let (plan, at, counts) = match prepare(&args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("redis-costs: {e}");
            return ExitCode::from(2);
        }
    };
    let out = match OutputDir::lock(&args.out) {
        Ok(out) => out,
        Err(e) => {
            eprintln!("redis-costs: --out: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&args, &counts, &plan, &at, &out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Every Redis error names its URL redacted already; this also covers any other
            // message that quotes one.
            eprintln!(
                "redis-costs: {}",
                bloomlab_redis::redact_words(&format!("{e:#}"))
            );
            ExitCode::FAILURE
        }
    }
}

/// Measures (round trips, then the big filter and the sweep comparison unless skipped), writes
/// the three files together, prints where, and fails on what the measurements found wrong.
fn run(
    args: &Args,
    counts: &Counts,
    plan: &CostPlan,
    at: &Endpoints,
    out: &OutputDir,
) -> Result<()> {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} {spinner} {wide_msg}")
            .context("progress template")?,
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let show = |m: &str| bar.set_message(m.to_owned());
    let started = Instant::now();
    let in_redis: &SweepInRedis<'_> =
        &|config, plan, url| redis_sweep::run(config, plan, url, &|_| {});
    let steps = Steps {
        big_members: (!args.skip_big).then_some(counts.big_members),
        sweep: (!args.skip_sweep).then_some(in_redis),
    };
    let outcome = costs::run(plan, at, &steps, &show)?;
    bar.finish_and_clear();

    let machine = Machine::detect();
    out.publish(|staging| -> Result<()> {
        roundtrips::write_csv(&outcome.rows, &staging.join(roundtrips::CSV_NAME))?;
        bloomlab_report::plot::roundtrips::draw(
            &outcome.rows,
            &staging.join(roundtrips::PNG_NAME),
        )?;
        let report = staging.join(REPORT_NAME);
        std::fs::write(&report, render(&outcome, &machine))
            .with_context(|| format!("writing {}", report.display()))
            .with_context(|| {
                format!(
                    "writing the report to {} (nothing was written; the previous report there is as it was)",
                    out.dir().display()
                )
            })
    })?;
    println!("{}", falling_cost(&outcome.rows));
    println!("\ndone in {:.0} s", started.elapsed().as_secs_f64());
    println!("CSV:    {}", out.dir().join(roundtrips::CSV_NAME).display());
    println!("PNG:    {}", out.dir().join(roundtrips::PNG_NAME).display());
    println!("Report: {}", out.dir().join(REPORT_NAME).display());
    if let Some(failure) = outcome.failure() {
        bail!(failure);
    }
    Ok(())
}
