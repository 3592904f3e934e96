//! `sweep --sketch hll,cms`: the sketch sweep's flags, plan and run (the binary only parses and
//! calls [`run`]). Statistics: `bloomlab_harness::sketch`; reports: `bloomlab_report::sketches`.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use bloomlab_harness::bloom::preflight;
use bloomlab_harness::sketch::{self, CmsPlan, CmsRow, HllPlan, HllRow, HllTrials};
use bloomlab_redis::{Connection, RedisHll};
use bloomlab_sketches::cardinality::{build_by_name, build_group};
use clap::Args;

use crate::progress::{Look, RunProgress};
use crate::{git_revision, parse_count_named, parse_f64, parse_list};

/// The sketch sweep's own flags (shown under their own heading in `sweep --help`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Sketches (sweep --sketch)")]
pub struct SketchArgs {
    /// Run the sketch sweep instead of the Bloom sweep: `hll` (HyperLogLog accuracy against
    /// 1.04/sqrt(m)), `cms` (Count-Min overcounts against epsilon N), or `hll,cms`. Writes
    /// hll.csv, cms.csv, hll_error_vs_n.png, cms_violations.png and summary.md to --out (default
    /// reports/sketches). With --redis URL, Redis's own HyperLogLog (PFADD/PFCOUNT, p = 14) is
    /// measured beside ours. Exit status: 0 ok, 1 a measurement failed (a Count-Min undercount,
    /// a server error), 2 bad input.
    #[arg(long, value_name = "KINDS")]
    pub sketch: Option<String>,
    /// HyperLogLog sketches: hll/HASH/pPRECISION (ours) and
    /// peer/hyperloglogplus/HASH/pPRECISION (the crates.io hyperloglogplus, HLL++), HASH one
    /// of xxh3, murmur3, fnv1a, xxh3-128, xxh64, lookup3; precision 4..18.
    #[arg(
        long,
        value_name = "NAMES",
        default_value = "hll/xxh3/p14,hll/xxh3/p14/ertl,hll/murmur3/p14,hll/murmur3/p14/ertl,hll/fnv1a/p14,hll/fnv1a/p14/ertl,peer/hyperloglogplus/xxh3/p14,hll/xxh3/p4,hll/xxh3/p4/ertl,hll/xxh3/p10,hll/xxh3/p10/ertl,hll/xxh3/p18,hll/xxh3/p18/ertl"
    )]
    pub hll: String,
    /// HyperLogLog trials per sketch (independent seeded key sequences); default 1024, 30 with
    /// --quick. Our sketches of one hash and precision (e.g. hll/xxh3/p14 and
    /// hll/xxh3/p14/ertl) share their trials: one pass, every estimator read from the same
    /// registers.
    #[arg(long, value_name = "COUNT")]
    pub trials: Option<String>,
    /// Trials per precision, overriding --trials for the sketches of that p: P=COUNT, ...
    /// (e.g. 14=4096). Default 14=4096 (none with --quick).
    #[arg(long, value_name = "LIST")]
    pub trials_at: Option<String>,
    /// HyperLogLog checkpoints per octave (factor of two) of n, from 1 to --max-n; default 16
    /// (Apache DataSketches' resolution), 4 with --quick. At most 64.
    #[arg(long, value_name = "COUNT")]
    pub points_per_octave: Option<String>,
    /// Trials of Redis's HyperLogLog (with --redis; every key goes over the network); default 40,
    /// 5 with --quick.
    #[arg(long, value_name = "COUNT")]
    pub redis_trials: Option<String>,
    /// Largest HyperLogLog cardinality (at most 2^32); points run from 1, --points-per-octave per
    /// factor of two. Default 2^24 = 16777216, 1e5 with --quick.
    #[arg(long, value_name = "COUNT")]
    pub max_n: Option<String>,
    /// Count-Min epsilon, in (0, 1).
    #[arg(long, default_value_t = 0.001, allow_hyphen_values = true)]
    pub epsilon: f64,
    /// Count-Min delta, in (0, 1).
    #[arg(long, default_value_t = 0.01, allow_hyphen_values = true)]
    pub delta: f64,
    /// Zipf exponents of the Count-Min streams (0 = uniform).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "0,0.8,1,1.2,1.5",
        allow_hyphen_values = true
    )]
    pub exponents: String,
    /// Count-Min hashes (each with standard and conservative update).
    #[arg(long, value_name = "LIST", default_value = "xxh3,murmur3,fnv1a")]
    pub cms_hashes: String,
    /// Count-Min streams (trials) per exponent; default 20, 4 with --quick.
    #[arg(long, value_name = "COUNT")]
    pub streams: Option<String>,
    /// Draws per Count-Min stream (the total count N); default 1e6, 1e5 with --quick.
    #[arg(long, value_name = "COUNT")]
    pub stream_len: Option<String>,
    /// Items in the Count-Min universe; default 1e5, 1e4 with --quick.
    #[arg(long, value_name = "COUNT")]
    pub universe: Option<String>,
}

/// Settings of the sweep the sketch run shares with the Bloom sweep.
#[derive(Debug, Clone)]
pub struct Shared {
    /// Seed of every trial's keys.
    pub seed: u64,
    /// Confidence of the reported intervals, in (0, 1).
    pub confidence: f64,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// The small grid that finishes in seconds.
    pub quick: bool,
    /// Output directory (`reports/sketches` when absent).
    pub out: Option<PathBuf>,
    /// Redis server whose HyperLogLog (PFADD/PFCOUNT) is measured too.
    pub redis: Option<String>,
}

/// A checked plan.
#[derive(Debug, Clone)]
pub struct SketchPlan {
    /// Groups of sketch names measured in one pass each (see `group_names`), each with its plan.
    pub hll: Option<Vec<(Vec<String>, HllPlan)>>,
    /// Redis's HyperLogLog: the server's URL and its plan.
    pub redis: Option<(String, HllPlan)>,
    /// The Count-Min plan.
    pub cms: Option<CmsPlan>,
    /// Output directory.
    pub out: PathBuf,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// HyperLogLog checkpoints per octave.
    pub points_per_octave: u64,
}

fn count(flag: &str, v: &Option<String>, default: u64, quick: u64, is_quick: bool) -> Result<u64> {
    match v {
        Some(s) => parse_count_named(flag, 1, s).map_err(anyhow::Error::msg),
        None => Ok(if is_quick { quick } else { default }),
    }
}

/// Checks every flag and builds the plan; nothing is measured. Errors are bad input (exit 2).
/// Flags are checked in a fixed order (kinds, shared settings, HyperLogLog, Count-Min, output),
/// so the first bad one is the one named.
pub fn plan(a: &SketchArgs, s: &Shared) -> Result<SketchPlan> {
    let kinds = parse_kinds(a)?;
    check_shared(s)?;
    let revision = git_revision();
    let mut out = SketchPlan {
        hll: None,
        redis: None,
        cms: None,
        out: s
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("reports/sketches")),
        threads: s.threads,
        points_per_octave: 0,
    };
    if kinds.iter().any(|k| k == "hll") {
        let hll = plan_hll(a, s, &revision)?;
        out.hll = Some(hll.groups);
        out.redis = hll.redis;
        out.points_per_octave = hll.points_per_octave;
    } else if s.redis.is_some() {
        bail!("--redis with --sketch measures Redis's HyperLogLog: include hll in --sketch");
    }
    if kinds.iter().any(|k| k == "cms") {
        out.cms = Some(plan_cms(a, s, revision)?);
    }
    preflight::check_output_dir("output directory (--out)", &out.out)?;
    for f in bloomlab_report::sketches::FILES {
        preflight::check_output_file("output file", &out.out.join(f))?;
    }
    Ok(out)
}

/// `--sketch`: a list of `hll` and `cms`.
fn parse_kinds(a: &SketchArgs) -> Result<Vec<String>> {
    parse_list("sketch", a.sketch.as_deref().unwrap_or(""), |k| match k {
        "hll" | "cms" => Ok(k.to_owned()),
        other => Err(format!(
            "{other:?} is not a sketch kind: use hll, cms or hll,cms"
        )),
    })
    .map_err(anyhow::Error::msg)
}

/// The settings shared with the Bloom sweep that the sketch sweep reads: confidence and threads.
fn check_shared(s: &Shared) -> Result<()> {
    bloomlab_harness::stats::check_confidence(s.confidence).map_err(anyhow::Error::msg)?;
    if s.threads > preflight::max_threads() {
        bail!(
            "--threads {} is invalid: it must be at most {} ({} per core)",
            s.threads,
            preflight::max_threads(),
            preflight::THREADS_PER_CORE
        );
    }
    Ok(())
}

/// The HyperLogLog part of a [`SketchPlan`].
struct HllPart {
    groups: Vec<(Vec<String>, HllPlan)>,
    redis: Option<(String, HllPlan)>,
    points_per_octave: u64,
}

/// Checks the HyperLogLog flags (names, --max-n, --points-per-octave, --trials, --trials-at,
/// then --redis-trials with --redis) and plans one pass per group of sketches sharing trials.
fn plan_hll(a: &SketchArgs, s: &Shared, revision: &str) -> Result<HllPart> {
    let q = s.quick;
    let names = parse_list("hll", &a.hll, |n| {
        build_by_name(n)
            .map(|_| n.to_owned())
            .map_err(|e| e.to_string())
    })
    .map_err(anyhow::Error::msg)?;
    let max_n = count("--max-n", &a.max_n, 1 << 24, 100_000, q)?;
    if !(10..=1u64 << 32).contains(&max_n) {
        bail!("--max-n = {max_n} is invalid: it must be in 10..=4294967296");
    }
    let per_octave = count("--points-per-octave", &a.points_per_octave, 16, 4, q)?;
    if per_octave > 64 {
        bail!("--points-per-octave = {per_octave} is invalid: it must be in 1..=64");
    }
    let trials = count("--trials", &a.trials, 1024, 30, q)?;
    if trials < 2 {
        bail!("--trials = {trials} is invalid: it must be at least 2 (an RMS interval needs two)");
    }
    let trials_at =
        parse_trials_at(
            a.trials_at
                .as_deref()
                .unwrap_or(if q { "" } else { "14=4096" }),
        )?;
    let plan = HllPlan {
        cardinalities: sketch::octave_spaced(1, max_n, per_octave as u32),
        trials,
        seed: s.seed,
        confidence: s.confidence,
        revision: revision.to_owned(),
    };
    let mut groups = Vec::new();
    for g in bloomlab_sketches::cardinality::group_names(&names)? {
        let p = bloomlab_sketches::cardinality::parse_name(&g[0])?.precision;
        let t = trials_at
            .iter()
            .find(|(q, _)| *q == p)
            .map_or(trials, |&(_, t)| t);
        groups.push((
            g,
            HllPlan {
                trials: t,
                ..plan.clone()
            },
        ));
    }
    let mut redis = None;
    if let Some(url) = &s.redis {
        let rt = count("--redis-trials", &a.redis_trials, 40, 5, q)?;
        if rt < 2 {
            bail!("--redis-trials = {rt} is invalid: it must be at least 2");
        }
        redis = Some((url.clone(), HllPlan { trials: rt, ..plan }));
    }
    Ok(HllPart {
        groups,
        redis,
        points_per_octave: per_octave,
    })
}

/// Checks the Count-Min flags (--exponents, --cms-hashes, the stream sizes, then epsilon and
/// delta through [`CmsPlan::validate`]) and plans the streams.
fn plan_cms(a: &SketchArgs, s: &Shared, revision: String) -> Result<CmsPlan> {
    let q = s.quick;
    let exps = parse_list("exponents", &a.exponents, |x| parse_f64("exponent", x))
        .map_err(anyhow::Error::msg)?;
    let hashes = parse_list("cms-hashes", &a.cms_hashes, |h| {
        if bloomlab_sketches::cardinality::HASHES.contains(&h) {
            Ok(h.to_owned())
        } else {
            Err(format!(
                "unknown hash {h:?}; known hashes: {}",
                bloomlab_sketches::cardinality::HASHES.join(", ")
            ))
        }
    })
    .map_err(anyhow::Error::msg)?;
    let plan = CmsPlan {
        epsilon: a.epsilon,
        delta: a.delta,
        exponents: exps,
        universe: count("--universe", &a.universe, 100_000, 10_000, q)?,
        stream: count("--stream-len", &a.stream_len, 1_000_000, 100_000, q)?,
        trials: count("--streams", &a.streams, 20, 4, q)?,
        hashes,
        seed: s.seed,
        confidence: s.confidence,
        revision,
    };
    plan.validate().map_err(anyhow::Error::msg)?;
    Ok(plan)
}

/// Parses `P=COUNT,...` for --trials-at: each P a precision 4..=18, each COUNT at least 2.
fn parse_trials_at(list: &str) -> Result<Vec<(u32, u64)>> {
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        let bad = || {
            anyhow::anyhow!(
                "--trials-at item {item:?} is invalid: it must be P=COUNT with P in 4..=18 and COUNT >= 2 (e.g. 14=4096)"
            )
        };
        let (p, c) = item.split_once('=').ok_or_else(bad)?;
        let p: u32 = p.trim().parse().map_err(|_| bad())?;
        bloomlab_sketches::hll::check_precision(p).map_err(|_| bad())?;
        let c = parse_count_named("--trials-at", 2, c.trim()).map_err(|_| bad())?;
        out.push((p, c));
    }
    Ok(out)
}

/// Measures the plan, writes the reports into `out`'s staging directory and commits them (`out`
/// is `plan.out`, locked by the caller), prints where; errors are failed measurements (exit 1).
pub fn run(
    plan: &SketchPlan,
    out: &bloomlab_report::output::OutputDir,
    command: &str,
) -> Result<()> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(plan.threads)
        .build()
        .context("starting the worker threads")?;
    let bar = progress_bar(plan);
    let started = Instant::now();
    let hll = measure_hll(plan, &pool, &bar)?;
    let cms_rows = measure_cms(plan, &pool, &bar, hll.done)?;
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let info = bloomlab_report::sketches::RunInfo {
        // The command line may hold a Redis URL with a password: never into a report.
        command: bloomlab_redis::redact_words(command),
        seconds,
        threads: pool.current_num_threads(),
        grid: grid_text(plan),
    };
    publish(out, &hll.rows, &hll.trials, &cms_rows, &info)?;
    let under: u64 = cms_rows.iter().map(|r| r.undercounts).sum();
    if under > 0 {
        bail!("Count-Min undercounted {under} items (the contract says never; reports written)");
    }
    Ok(())
}

/// A bar over every trial of the plan: HyperLogLog groups, Redis's HyperLogLog, Count-Min streams.
fn progress_bar(plan: &SketchPlan) -> RunProgress {
    let total = plan
        .hll
        .as_ref()
        .map_or(0, |g| g.iter().map(|(_, p)| p.trials).sum::<u64>())
        + plan.redis.as_ref().map_or(0, |(_, p)| p.trials)
        + plan
            .cms
            .as_ref()
            .map_or(0, |p| p.trials * p.exponents.len() as u64);
    RunProgress::new(
        total,
        &Look {
            program: "sweep sketch",
            unit: "trials",
            template: "{elapsed_precise} [{bar:30}] {pos}/{len} trials  {wide_msg}",
            rate: false,
        },
    )
}

/// What the HyperLogLog phase measured, and how many trials it ran (where the bar stands).
struct HllMeasured {
    rows: Vec<HllRow>,
    trials: Vec<HllTrials>,
    done: u64,
}

/// Runs every HyperLogLog group of the plan, then Redis's HyperLogLog if planned.
fn measure_hll(
    plan: &SketchPlan,
    pool: &rayon::ThreadPool,
    bar: &RunProgress,
) -> Result<HllMeasured> {
    let mut m = HllMeasured {
        rows: Vec::new(),
        trials: Vec::new(),
        done: 0,
    };
    for (names, p) in plan.hll.iter().flatten() {
        bar.set_message(names.join(" + "));
        let b = m.done;
        let run = pool.install(|| {
            sketch::run_hll(
                |_| build_group(names).map_err(anyhow::Error::from),
                p,
                true,
                &|d| bar.set_position(b + d),
            )
        })?;
        m.done += p.trials;
        m.rows.extend(run.rows);
        m.trials.push(run.trials);
    }
    if let Some((url, p)) = &plan.redis {
        let run = measure_redis_hll(url, p, pool, bar, m.done)?;
        m.done += p.trials;
        m.rows.extend(run.rows);
        m.trials.push(run.trials);
    }
    Ok(m)
}

/// Redis's own HyperLogLog at `url`, one fresh key per trial; the bar starts at `done`.
fn measure_redis_hll(
    url: &str,
    p: &HllPlan,
    pool: &rayon::ThreadPool,
    bar: &RunProgress,
    done: u64,
) -> Result<sketch::HllRun> {
    let shown = bloomlab_redis::redact(url);
    bar.set_message(format!("redis/pfadd/p14 at {shown}"));
    // A random run id, not the pid (which repeats across containers), and an expiry on
    // every key (re-armed by each insert), as for the Bloom sweep's filters.
    let run_id = bloomlab_redis::keys::run_id()?;
    pool.install(|| {
        sketch::run_hll(
            |t| -> Result<Box<RedisHll>> {
                let conn = Connection::single(url)?;
                let mut h = RedisHll::new(conn, &format!("bloomlab-sketch-sweep:{run_id}:{t}"))
                    .with_expiry(bloomlab_redis::sweep::EXPIRY);
                h.delete()?;
                Ok(Box::new(h))
            },
            p,
            true,
            &|d| bar.set_position(done + d),
        )
    })
    .with_context(|| format!("Redis HyperLogLog at {shown}"))
}

/// The Count-Min streams of the plan (none if not planned); the bar starts at `done`.
fn measure_cms(
    plan: &SketchPlan,
    pool: &rayon::ThreadPool,
    bar: &RunProgress,
    done: u64,
) -> Result<Vec<CmsRow>> {
    let Some(p) = &plan.cms else {
        return Ok(Vec::new());
    };
    bar.set_message("count-min streams".to_string());
    pool.install(|| sketch::run_cms(p, &|d| bar.set_position(done + d)))
        .map_err(anyhow::Error::msg)
}

/// The HyperLogLog grid as the summary states it (empty without HyperLogLog).
fn grid_text(plan: &SketchPlan) -> String {
    plan.hll
        .as_ref()
        .and_then(|g| g.first())
        .map(|(_, p)| {
            format!(
                "{} points per octave from {} to {} ({} checkpoints)",
                plan.points_per_octave,
                p.cardinalities.first().copied().unwrap_or(0),
                p.cardinalities.last().copied().unwrap_or(0),
                p.cardinalities.len()
            )
        })
        .unwrap_or_default()
}

/// Writes the reports whole into `out` and prints the headlines and where each file went.
fn publish(
    out: &bloomlab_report::output::OutputDir,
    hll_rows: &[HllRow],
    hll_trials: &[HllTrials],
    cms_rows: &[CmsRow],
    info: &bloomlab_report::sketches::RunInfo,
) -> Result<()> {
    let staged = out.publish(|dir| {
        bloomlab_report::sketches::write_sketch_reports(hll_rows, hll_trials, cms_rows, dir, info)
            .with_context(|| {
                format!(
                    "writing reports to {} (nothing was written; the previous report there is as it was)",
                    out.dir().display()
                )
            })
    })?;
    let files = bloomlab_report::sketches::SketchFiles {
        csvs: staged.csvs.iter().map(|p| out.placed(p)).collect(),
        pngs: staged.pngs.iter().map(|p| out.placed(p)).collect(),
        summary: out.placed(&staged.summary),
    };
    print_headlines(hll_rows, cms_rows);
    println!(
        "\nmeasured in {:.1} s on {} threads",
        info.seconds, info.threads
    );
    for f in files.csvs.iter().chain(&files.pngs) {
        println!("wrote {}", f.display());
    }
    println!("wrote {}", files.summary.display());
    Ok(())
}

fn print_headlines(hll: &[HllRow], cms: &[CmsRow]) {
    let mut names: Vec<&str> = Vec::new();
    for r in hll {
        if !names.contains(&r.sketch.as_str()) {
            names.push(&r.sketch);
        }
    }
    if !names.is_empty() {
        println!(
            "{:<34} {:>8} {:>22} {:>14}",
            "HyperLogLog", "stated", "RMS/stated, n >= 5m", "stated in CI"
        );
    }
    for n in names {
        let big: Vec<&HllRow> = hll
            .iter()
            .filter(|r| r.sketch == n && bloomlab_report::sketches::large_range(r))
            .collect();
        let lo = big
            .iter()
            .map(|r| r.rms_over_theory)
            .fold(f64::INFINITY, f64::min);
        let hi = big.iter().map(|r| r.rms_over_theory).fold(0.0, f64::max);
        let inside = big.iter().filter(|r| r.theory_in_rms_interval).count();
        let se = hll
            .iter()
            .find(|r| r.sketch == n)
            .map_or(0.0, |r| r.std_error_theory);
        let range = if big.is_empty() {
            "-".to_string()
        } else {
            format!("{lo:.3} .. {hi:.3}")
        };
        println!(
            "{:<34} {:>7.3}% {:>22} {:>14}",
            n,
            se * 100.0,
            range,
            format!("{inside}/{}", big.len())
        );
    }
    if !cms.is_empty() {
        println!(
            "\n{:<26} {:>10} {:>12} {:>12} {:>24}",
            "Count-Min", "stream", "undercounts", "violations", "share [CI]"
        );
    }
    for r in cms {
        println!(
            "{:<26} {:>10} {:>12} {:>12} {:>24}",
            r.sketch,
            r.stream,
            r.undercounts,
            r.violations,
            format!(
                "{:.2e} [{:.1e}, {:.1e}]",
                r.share, r.share_low, r.share_high
            )
        );
    }
}
