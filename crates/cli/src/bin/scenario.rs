//! `scenario`: the classic Bloom filter deployments run against a real database (SQLite built in,
//! or PostgreSQL), measured, their end state checked with SQL, reported under
//! `reports/scenarios/<scenario>/`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use bloomlab_cli::{CountingAlloc, git_revision};
use bloomlab_scenarios::db::DbUrl;
use bloomlab_scenarios::{ScenarioError, dedup, penetration, swap};
use clap::{Parser, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Run a classic Bloom filter deployment against a real database and measure what the textbook
/// arithmetic leaves out.
///
/// dedup: the chapter's de-dup ingestion (50,000 articles a day, 70% duplicates, SHA-256 of title
/// and body as keys), with and without the filter in front of the database; the filter is sized
/// for --capacity articles, fewer than the run brings, so its fill ratio crosses the monitor's 50%
/// during the run. The default 10 days (two modes x 500,000 articles) take about 10 s on SQLite and
/// under a minute on a local PostgreSQL.
///
/// penetration: valid ids in the database, requests of which --attack-share ask for ids that never
/// existed, served by a cache + the filter + the database, and without the filter; each --p in
/// turn (default 0.01 and 0.001, where the "> 99% of attack queries eliminated" claim is checked).
///
/// swap: --threads reader threads query the filter continuously while a writer inserts and
/// deletes rows and a background job rebuilds the filter from the database and swaps it in
/// (arc-swap); every reader answer is checked for false negatives.
///
/// Databases: --db sqlite:PATH, or postgres://USER@HOST:PORT/DB (scripts/postgres-local.sh start
/// prints one); default: a fresh SQLite file in the temp dir, removed afterwards. Each scenario
/// creates its own table (bloomlab_*), refuses a table of that name with other columns, empties
/// it before measuring (a rerun starts clean) and writes in transactions (an interrupted run
/// leaves the database consistent).
///
/// Outputs in --out (default reports/scenarios/SCENARIO/): a CSV, summary.md (which explains
/// every figure) and a PNG. --out is locked from before the run (a second run on it is refused,
/// naming the holder) and the files are staged and moved into place together, so a failed or
/// interrupted run leaves the previous report whole. Exit status: 0 success, 1 a verification
/// failed (rows lost or stored twice, a false negative), 2 bad input, an unusable database or a
/// --out in use by another run (nothing measured), 130 interrupted (Ctrl-C).
#[derive(Debug, Parser)]
#[command(name = "scenario", version)]
struct Args {
    /// Which deployment to run.
    scenario: Kind,
    /// The database of record: sqlite:PATH or postgres://USER@HOST:PORT/DB. Default: a temp
    /// SQLite file.
    #[arg(long, value_name = "URL")]
    db: Option<String>,
    /// The filter, by registry name (`sweep --list` prints them). Default: classic/xxh3/km/flat;
    /// for swap classic/xxh3/km/atomic (swap needs an atomic store: the writer inserts while
    /// readers query).
    #[arg(long, value_name = "NAME")]
    filter: Option<String>,
    /// Target false-positive rate(s), each in (0, 1), comma-separated. Default: 0.01 for dedup
    /// and swap, 0.01,0.001 for penetration. dedup and swap use the first.
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    p: Option<String>,
    /// dedup: days of ingestion, 1 to 3650.
    #[arg(long, default_value_t = dedup::DEFAULT_DAYS)]
    days: u64,
    /// dedup: distinct articles the filter is sized for.
    #[arg(long, default_value_t = dedup::DEFAULT_CAPACITY)]
    capacity: u64,
    /// penetration: share of requests for never-existing ids, in (0, 1).
    #[arg(long, default_value_t = penetration::DEFAULT_ATTACK_SHARE, allow_hyphen_values = true)]
    attack_share: f64,
    /// swap: reader threads, 1 to 64.
    #[arg(long, default_value_t = swap::DEFAULT_THREADS)]
    threads: u64,
    /// Seed of the generated workload.
    #[arg(long, default_value_t = 2024)]
    seed: u64,
    /// Output directory. Default: reports/scenarios/SCENARIO/ (or SCENARIO-postgres/ with a
    /// PostgreSQL --db).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Kind {
    Dedup,
    Penetration,
    Swap,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Dedup => "dedup",
            Kind::Penetration => "penetration",
            Kind::Swap => "swap",
        }
    }
}

fn parse_ps(s: &str) -> Result<Vec<f64>, ScenarioError> {
    s.split(',')
        .map(|t| {
            let p: f64 = t.trim().parse().map_err(|_| {
                ScenarioError::BadInput(format!(
                    "--p {t:?} is not a number: give rates in the open interval (0, 1), e.g. 0.01"
                ))
            })?;
            bloomlab_scenarios::check_p(p)?;
            Ok(p)
        })
        .collect()
}

fn exit_code(e: &ScenarioError) -> u8 {
    match e {
        ScenarioError::Verification(_) => 1,
        _ => 2,
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scenario {}: error: {e:#}", args.scenario.name());
            let code = e.downcast_ref::<ScenarioError>().map_or(2, exit_code);
            ExitCode::from(code)
        }
    }
}

fn run(args: &Args) -> anyhow::Result<()> {
    let (db, temp) = match &args.db {
        Some(u) => (u.parse::<DbUrl>()?, false),
        None => (DbUrl::temp_sqlite(args.scenario.name()), true),
    };
    let default_ps = match args.scenario {
        Kind::Penetration => "0.01,0.001",
        _ => "0.01",
    };
    let ps = parse_ps(args.p.as_deref().unwrap_or(default_ps))?;
    let out = args.out.clone().unwrap_or_else(|| {
        let suffix = if matches!(db, DbUrl::Postgres(_)) {
            "-postgres"
        } else {
            ""
        };
        PathBuf::from(format!(
            "reports/scenarios/{}{suffix}",
            args.scenario.name()
        ))
    });
    bloomlab_scenarios::output::prepare_dir(&out)?;
    let bar = ProgressBar::new(1);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {wide_msg}")
            .context("progress bar template")?
            .progress_chars("=> "),
    );
    let mut progress = |label: &str, done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
        bar.set_message(label.to_owned());
    };
    let revision = git_revision();
    let filter = args.filter.clone().unwrap_or_else(|| {
        match args.scenario {
            Kind::Swap => "classic/xxh3/km/atomic",
            _ => "classic/xxh3/km/flat",
        }
        .to_owned()
    });
    let result = (|| -> Result<String, ScenarioError> {
        match args.scenario {
            Kind::Dedup => {
                let mut c = dedup::DedupConfig::new(db.clone(), &filter, ps[0]);
                c.days = args.days;
                c.capacity = args.capacity;
                c.seed = args.seed;
                let o = dedup::run(&c, &mut progress)?;
                dedup::write_report(&o, &out, &revision)?;
                Ok(format!("{}", out.join(dedup::SUMMARY_NAME).display()))
            }
            Kind::Penetration => {
                let mut c = penetration::PenetrationConfig::new(db.clone(), &filter, ps.clone());
                c.attack_share = args.attack_share;
                c.seed = args.seed;
                let o = penetration::run(&c, &mut progress)?;
                penetration::write_report(&o, &out, &revision)?;
                Ok(format!("{}", out.join(penetration::SUMMARY_NAME).display()))
            }
            Kind::Swap => {
                let mut c = swap::SwapConfig::new(db.clone(), &filter, ps[0]);
                c.threads = args.threads;
                c.seed = args.seed;
                c.heap_bytes = Some(CountingAlloc::live_bytes);
                let o = swap::run(&c, &mut progress)?;
                swap::write_report(&o, &out, &revision)?;
                Ok(format!("{}", out.join(swap::SUMMARY_NAME).display()))
            }
        }
    })();
    bar.finish_and_clear();
    if temp {
        db.remove_sqlite_files();
    }
    let summary = result?;
    eprintln!("scenario {}: wrote {summary}", args.scenario.name());
    Ok(())
}
