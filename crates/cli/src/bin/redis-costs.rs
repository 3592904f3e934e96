//! `redis-costs`: the report of what a filter in Redis costs and keeps (`reports/redis/`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use bloomlab_cli::parse_count_named;
use bloomlab_cli::redis_costs::{
    self, BigFilter, CostPlan, Endpoints, SweepPair, measure_big, measure_round_trips,
};
use bloomlab_harness::bloom::preflight::{self, MemoryBudget};
use bloomlab_harness::schema::roundtrip::{self, RoundTripOp, RoundTripRow, Target};
use bloomlab_report::bench_table::Machine;
use bloomlab_report::output::OutputDir;
use bloomlab_report::{markdown, roundtrips};
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
    let need = redis_costs::memory_need(
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
    let version = bloomlab_redis::Connection::single(&at.server)?
        .info_field("server", "redis_version")
        .unwrap_or_else(|_| "unknown".into());

    let samples = measure_round_trips(plan, at, &show)?;
    let rows = roundtrip::aggregate(&samples).map_err(anyhow::Error::msg)?;
    let big = if args.skip_big {
        None
    } else {
        Some(measure_big(&at.server, counts.big_members, &show)?)
    };
    let pairs = if args.skip_sweep {
        None
    } else {
        Some(redis_costs::compare_sweep(&at.server, &show)?)
    };
    bar.finish_and_clear();

    out.publish(|staging| -> Result<()> {
        roundtrips::write_csv(&rows, &staging.join(roundtrips::CSV_NAME))?;
        bloomlab_report::plot::roundtrips::draw(&rows, &staging.join(roundtrips::PNG_NAME))?;
        let text = render(
            args,
            plan,
            at,
            &version,
            &rows,
            big.as_ref(),
            pairs.as_deref(),
        );
        let report = staging.join("report.md");
        std::fs::write(&report, text)
            .with_context(|| format!("writing {}", report.display()))
            .with_context(|| {
                format!(
                    "writing the report to {} (nothing was written; the previous report there is as it was)",
                    out.dir().display()
                )
            })
    })?;
    let csv = out.dir().join(roundtrips::CSV_NAME);
    let png = out.dir().join(roundtrips::PNG_NAME);
    let report = out.dir().join("report.md");
    println!("{}", falling_cost(&rows));
    println!("\ndone in {:.0} s", started.elapsed().as_secs_f64());
    println!("CSV:    {}", csv.display());
    println!("PNG:    {}", png.display());
    println!("Report: {}", report.display());

    if let Some(b) = &big
        && (b.found != b.members || !b.bytes_equal_twin || !b.non_member_answers_equal_twin)
    {
        bail!("the big filter differs from its in-memory twin: {b:?}");
    }
    if let Some(p) = &pairs
        && let Some(bad) = p.iter().find(|p| !p.equal)
    {
        bail!(
            "sweep row {} {} n={} p={} differs from its twin {}",
            bad.redis,
            bad.key_set,
            bad.n,
            bad.p,
            bad.twin
        );
    }
    Ok(())
}

/// One line per target and operation: the time per key at the smallest and the largest batch.
fn falling_cost(rows: &[RoundTripRow]) -> String {
    let mut out = String::new();
    for target in [Target::Server, Target::Cluster] {
        for op in [RoundTripOp::Insert, RoundTripOp::Lookup] {
            let mut cell: Vec<&RoundTripRow> = rows
                .iter()
                .filter(|r| r.target == target && r.op == op)
                .collect();
            cell.sort_by_key(|r| r.per_round_trip);
            let (Some(first), Some(last)) = (cell.first(), cell.last()) else {
                continue;
            };
            let _ = writeln!(
                out,
                "- {} {}: {:.2} µs per key at {} key(s) per round trip, {:.2} µs at {} ({:.1}x less); {:.0}x slower than memory at {}, {:.0}x at {}.",
                target.label(),
                op.label(),
                first.us_per_key,
                first.per_round_trip,
                last.us_per_key,
                last.per_round_trip,
                first.us_per_key / last.us_per_key,
                first.slowdown_vs_memory,
                first.per_round_trip,
                last.slowdown_vs_memory,
                last.per_round_trip,
            );
        }
    }
    out
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn render(
    args: &Args,
    plan: &CostPlan,
    at: &Endpoints,
    version: &str,
    rows: &[RoundTripRow],
    big: Option<&BigFilter>,
    pairs: Option<&[SweepPair]>,
) -> String {
    let m = Machine::detect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# A filter in Redis: what a round trip costs, and what the server keeps\n\n\
         Generated by `cargo run --release --bin redis-costs` at {} on {} ({} cores), {}, against \
         redis-server {version} on loopback: one server{}. Servers started by \
         `scripts/redis-local.sh` (no persistence, `maxmemory-policy noeviction`). The machine is \
         shared and noisy: compare the ratios (each measured within one repetition) rather than \
         absolute figures across runs.\n",
        m.generated,
        m.cpu,
        m.cores,
        m.rustc,
        if at.cluster.is_some() {
            " and a 3-master cluster"
        } else {
            " (no cluster given: no cluster rows)"
        }
    );
    let _ = writeln!(
        s,
        "## Round trips by batch size\n\n\
         The filter is `classic/xxh3/km/flat` sized for n = {} at p = {} ({} bits in memory; \
         on the cluster in shards of {} bits, so its keys spread over the masters). In each of {} \
         repetitions, {} fresh keys are inserted, then looked up (all must be found), into a fresh \
         filter per cell, k bits per key in one BITFIELD command, `keys per round trip` commands \
         per pipeline. In memory the same keys are timed over {} passes. One client thread; \
         server and client share the machine's cores.\n",
        plan.n,
        plan.p,
        bloomlab_filters::Filter::bits(
            &redis_costs::Measured::new(plan.n, plan.p).expect("the plan's sizing is valid")
        ),
        plan.cluster_shard_bits,
        plan.reps,
        plan.keys,
        plan.memory_passes
    );
    s.push_str(&roundtrips::table(rows));
    let _ = writeln!(
        s,
        "\n![keys per second against keys per round trip]({})\n\n\
         How the cost per key falls with the batch size (medians):\n\n{}",
        roundtrips::PNG_NAME,
        falling_cost(rows)
    );
    let _ = writeln!(
        s,
        "A round trip's cost is mostly fixed (the system calls and the loopback on both sides, \
         the server's event loop); pipelining spreads it over the keys of a batch until the \
         server's own work per key (parsing and executing BITFIELD) dominates. On the cluster \
         a pipeline is split per node and the nodes are asked one after another, so a batch costs \
         up to three round trips, and the cluster's three servers share the same two cores.\n"
    );
    if let Some(b) = big {
        let _ = writeln!(
            s,
            "## One filter of more than 2^32 bits on one server\n\n\
             One Redis string holds at most 2^32 bits (512 MiB). This filter, sized for n = {} at \
             p = {}, has {} bits, so it spans {} strings (shards of {} bits, the last one the \
             rest); positions are computed over the whole bit count exactly as in memory, so the \
             twin's theory applies unchanged.\n",
            b.n, b.p, b.bits, b.shards, b.shard_bits
        );
        let found = format!("{} of {}", b.found, b.members);
        let yes = |x: bool| if x { "yes" } else { "**no**" }.to_string();
        let table_rows = vec![
            vec![
                "bits (hashes)".to_string(),
                format!("{} ({})", b.bits, b.hashes),
            ],
            vec!["shards".into(), b.shards.to_string()],
            vec![
                "members inserted, 4096 per round trip".into(),
                format!(
                    "{} in {:.1} s ({:.0} keys/s)",
                    b.members,
                    b.insert.as_secs_f64(),
                    b.members as f64 / b.insert.as_secs_f64()
                ),
            ],
            vec![
                "members found".into(),
                format!(
                    "{found} in {:.1} s ({:.0} keys/s)",
                    b.lookup.as_secs_f64(),
                    b.members as f64 / b.lookup.as_secs_f64()
                ),
            ],
            vec![
                "member bit positions in the second shard (at or above 2^32)".into(),
                format!(
                    "{} ({})",
                    b.positions_past_first_shard, b.positions_at_or_above_2_pow_32
                ),
            ],
            vec![
                "both shards' bytes equal the in-memory twin's".into(),
                yes(b.bytes_equal_twin),
            ],
            vec![
                format!("answers for {} non-members equal the twin's", b.non_members),
                yes(b.non_member_answers_equal_twin),
            ],
            vec![
                "creating the shards (allocating them)".into(),
                format!("{:.1} s", b.create.as_secs_f64()),
            ],
            vec![
                "server used_memory before, with the filter".into(),
                format!("{}, {}", mb(b.used_memory_before), mb(b.used_memory_after)),
            ],
        ];
        s.push_str(&markdown::table(&["", ""], &table_rows));
        s.push('\n');
    }
    if let Some(pairs) = pairs {
        let _ = writeln!(
            s,
            "## The sweep's Redis rows equal the in-memory rows\n\n\
             The same sweep plan (seeded key sets, query counts from the precision target) run \
             twice: with the filters in memory and with them in Redis (`sweep --redis URL`, \
             4096 keys per round trip). `equal` compares every column but the name and the memory \
             held, bit for bit.\n"
        );
        let body: Vec<Vec<String>> = pairs
            .iter()
            .map(|p| {
                vec![
                    p.redis.clone(),
                    p.twin.clone(),
                    p.key_set.clone(),
                    p.n.to_string(),
                    p.p.to_string(),
                    p.queries.to_string(),
                    p.false_positives.to_string(),
                    format!("{:.5} [{:.5}, {:.5}]", p.fpr, p.ci.0, p.ci.1),
                    if p.equal { "yes" } else { "**no**" }.into(),
                ]
            })
            .collect();
        s.push_str(&markdown::table(
            &[
                "Redis filter",
                "in-memory twin",
                "key set",
                "n",
                "p",
                "queries",
                "false positives",
                "FPR [95% interval]",
                "equal",
            ],
            &body,
        ));
    }
    let _ = writeln!(
        s,
        "\nRe-run: `BLOOMLAB_REDIS_URL=... BLOOMLAB_REDIS_CLUSTER_URLS=... cargo run --release \
         --bin redis-costs -- --keys {} --reps {} --batches {}{}{}`.",
        plan.keys,
        plan.reps,
        args.batches,
        if args.skip_big { " --skip-big" } else { "" },
        if args.skip_sweep { " --skip-sweep" } else { "" }
    );
    s
}
