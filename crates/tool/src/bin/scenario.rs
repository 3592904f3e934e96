//! `scenario`: the classic Bloom filter deployments run against a real database (SQLite built in,
//! or PostgreSQL), measured, their end state checked with SQL, reported under
//! `reports/scenarios/<scenario>/`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bloomlab_cli::progress::{Look, RunProgress};
use bloomlab_cli::{CountingAlloc, git_revision, parse_variant};
use bloomlab_filters::VariantId;
use bloomlab_scenarios::db::{DbUrl, TempSqlite, redact};
use bloomlab_scenarios::{ScenarioError, dedup, penetration, swap};
use clap::{Parser, ValueEnum};

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
/// Databases: --db sqlite:PATH, postgres://USER:PASSWORD@HOST:PORT/DB (scripts/postgres-local.sh
/// start prints one) or PostgreSQL's keyword form (host=H port=P user=U dbname=D); default: a
/// fresh SQLite file in a private temp dir (unpredictable name, mode 0700), removed afterwards.
/// Passwords are never printed: messages and reports show host:port/database. Each scenario
/// creates its own table (bloomlab_*), refuses a table of that name with other columns, empties
/// it before measuring (a rerun starts clean) and writes in transactions (an interrupted run
/// leaves the database consistent).
///
/// Outputs in --out (default reports/scenarios/SCENARIO/): a CSV, summary.md (which explains
/// every figure) and a PNG. --out is locked from before the run (a second run on it is refused,
/// naming the holder) and the files are staged and moved into place together, so a failed run
/// never leaves a mix of two runs. When the database fails part-way (the server stops, the disk
/// fills), what was measured is still reported, marked "interrupted after day D of N" (dedup) or
/// "after N of M modes" (penetration) in the summary, the picture and every CSV row, and the
/// message says what the database holds and how to resume; swap, whose figures cover the whole
/// run, reports nothing then.
///
/// Progress goes to stderr: a bar on a terminal, otherwise (a log file, CI) a line every 10 s.
///
/// Exit status: 0 success; 1 a measured failure (a verification failed: rows lost or stored
/// twice, a false negative; or a run interrupted by the database after days were measured);
/// 2 bad input, an unusable database, a --out in use by another run, or a failure before anything
/// was measured (no report written); 130 interrupted by Ctrl-C (no report written; the database
/// keeps only whole transactions).
#[derive(Debug, Parser)]
#[command(name = "scenario", version)]
struct Args {
    /// Which deployment to run.
    scenario: Kind,
    /// The database of record: sqlite:PATH, postgres://USER:PASSWORD@HOST:PORT/DB or
    /// "host=H port=P user=U dbname=D". Default: a SQLite file in a private temp dir.
    #[arg(long, value_name = "URL")]
    db: Option<String>,
    /// The filter, by registry name (`sweep --list` prints them). Default: classic/xxh3/km/flat;
    /// for swap classic/xxh3/km/atomic (swap needs an atomic store: the writer inserts while
    /// readers query).
    #[arg(long, value_name = "NAME", value_parser = parse_variant)]
    filter: Option<VariantId>,
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
    /// Output directory (created if missing; must not be a file). Default:
    /// reports/scenarios/SCENARIO/ (or SCENARIO-postgres/ with a PostgreSQL --db).
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
        ScenarioError::Verification(_) | ScenarioError::Interrupted(_) => 1,
        _ => 2,
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = e.downcast_ref::<ScenarioError>().map_or(2, exit_code);
            // A database failure mid-run ends in an Interrupted report (exit 1); any other
            // failure that exits 2, except writing the report, came before anything was measured.
            let writing = matches!(
                e.downcast_ref::<ScenarioError>(),
                Some(ScenarioError::Write { .. })
            );
            let note = if code == 2 && !writing {
                " (nothing was measured; no report written)"
            } else {
                ""
            };
            eprintln!(
                "scenario {}: error: {}{note}",
                args.scenario.name(),
                redact(&format!("{e:#}"))
            );
            ExitCode::from(code)
        }
    }
}

/// Checks that `out` can be the output directory: it, or its nearest existing ancestor, must be a
/// directory. Named by flag, before anything is measured.
fn check_out_dir(out: &Path) -> Result<(), ScenarioError> {
    let mut p = Some(out);
    while let Some(d) = p {
        if let Ok(m) = std::fs::metadata(d) {
            if m.is_dir() {
                return Ok(());
            }
            return Err(ScenarioError::BadInput(if d == out {
                format!(
                    "--out must be a directory; {} is a file: name a directory (created if \
                     missing)",
                    out.display()
                )
            } else {
                format!(
                    "--out must be a directory; {} cannot be created because {} is a file",
                    out.display(),
                    d.display()
                )
            }));
        }
        p = d.parent().filter(|q| !q.as_os_str().is_empty());
    }
    Ok(())
}

fn run(args: &Args) -> anyhow::Result<()> {
    // The default database lives in a private temp dir, removed when `_temp` drops.
    let (db, _temp) = match &args.db {
        Some(u) => (u.parse::<DbUrl>()?, None),
        None => {
            let t = TempSqlite::create(args.scenario.name())?;
            (t.url().clone(), Some(t))
        }
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
    check_out_dir(&out)?;
    bloomlab_report::scenario::output::prepare_dir(&out).map_err(ScenarioError::from)?;
    // The phases count different things (ids, requests, rows): their labels say which.
    let bar = RunProgress::new(
        1,
        &Look {
            program: "scenario",
            unit: "",
            template: "{elapsed_precise} [{bar:30}] {pos}/{len} {wide_msg}",
            rate: false,
        },
    );
    let mut progress = |label: &str, done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
        bar.set_message(label.to_owned());
    };
    let revision = git_revision();
    let result = measure_and_report(args, db, &ps, &out, &revision, &mut progress);
    bar.finish_and_clear();
    let summary = result?;
    eprintln!(
        "scenario {}: wrote {}",
        args.scenario.name(),
        summary.display()
    );
    Ok(())
}

/// Runs the scenario, writes its report into `out` and returns the summary's path; a run the
/// database interrupted is reported, then returned as [`ScenarioError::Interrupted`].
fn measure_and_report(
    args: &Args,
    db: DbUrl,
    ps: &[f64],
    out: &Path,
    revision: &str,
    progress: bloomlab_scenarios::Progress<'_>,
) -> Result<PathBuf, ScenarioError> {
    let filter = args.filter.unwrap_or_else(|| match args.scenario {
        Kind::Swap => swap::default_filter(),
        _ => dedup::default_filter(),
    });
    let interrupted = match args.scenario {
        Kind::Dedup => {
            let mut c = dedup::DedupConfig::new(db, filter, ps[0]);
            c.days = args.days;
            c.capacity = args.capacity;
            c.seed = args.seed;
            let o = dedup::run(&c, progress)?;
            dedup::write_report(&o, out, revision)?;
            dedup::interrupted_error(&o, &out.join(dedup::SUMMARY_NAME))
        }
        Kind::Penetration => {
            let mut c = penetration::PenetrationConfig::new(db, filter, ps.to_vec());
            c.attack_share = args.attack_share;
            c.seed = args.seed;
            let o = penetration::run(&c, progress)?;
            penetration::write_report(&o, out, revision)?;
            penetration::interrupted_error(&o, &out.join(penetration::SUMMARY_NAME))
        }
        Kind::Swap => {
            let mut c = swap::SwapConfig::new(db, filter, ps[0]);
            c.threads = args.threads;
            c.seed = args.seed;
            c.heap_bytes = Some(CountingAlloc::live_bytes);
            let o = swap::run(&c, progress)?;
            swap::write_report(&o, out, revision)?;
            None
        }
    };
    let summary = out.join(match args.scenario {
        Kind::Dedup => dedup::SUMMARY_NAME,
        Kind::Penetration => penetration::SUMMARY_NAME,
        Kind::Swap => swap::SUMMARY_NAME,
    });
    interrupted.map_or(Ok(summary), Err)
}
