//! `scale`: the 10-billion-key run (`reports/scale/`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bloomlab_cli::progress::{Look, RunProgress};
use bloomlab_cli::{git_revision, parse_count_named, parse_f64, parse_list};
use bloomlab_filters::Params;
use bloomlab_harness::KeySetKind;
use bloomlab_harness::bloom::preflight::check_output_dir;
use bloomlab_report::output::OutputDir;
use bloomlab_report::scale;
use bloomlab_scale::{Outcome, ScaleConfig, ScaleProgress, ScaleRow, ScaleStatus, run};
use clap::Parser;

/// Fills one Bloom filter per --filters name for --n URL-shaped keys at rate --p (by default the
/// sizing example of every crawler chapter: 10^10 URLs at 1%, about 96 billion bits, 12 GB), from
/// every core, then checks members for false negatives and measures the false-positive rate to
/// --precision with its exact interval against the layout's theory (with the hash-width term of
/// 32-bit schemes), and writes scale.csv and report.md to --out.
///
/// Keys are generated and hashed on the fly, never held: the memory needed is the filter's and
/// up to 256 MiB of digests and bit positions per thread (the run refuses before allocating when
/// it does not fit, naming the bytes needed and available).
/// Filled concurrently: classic/HASH/INDEX/flat, blocked512/HASH, sbbf/HASH. Any other name is
/// recorded as refused with the reason; the textbook port (`textbook-fnv1a-i32`) refuses every
/// size past 2^31 - 1 bits. A 10^10-key run takes minutes per filter, split-block the shortest
/// and the others up to about twice as long: reports/scale/report.md has the times measured
/// on this project's 2-core machine; --n 1e9 takes about a sixth of that (its member check is
/// as long: 10^9 keys either way).
///
/// Rows of a later run replace those of the same filter, key set, n, p and --query-offset in
/// --out/scale.csv; report.md is rendered from all rows. --out is locked for the whole run (a
/// second run on it is refused at once, naming the holder), and after each filter both files are
/// staged and moved into place together, so they are never a mix of two runs nor cut short. Ctrl-C
/// stops the run between chunks of keys; the row is written as `interrupted`, saying how far it
/// got. Progress goes to stderr: a bar on a terminal, otherwise (a log file, `nohup`) a line at
/// each phase and every 10 s with the keys done and their rate.
///
/// Exit status: 0 every run done; 1 a false negative, or the report could not be written; 2 bad
/// input, a --out in use by another run, or a run refused for its size (nothing measured for it;
/// the report is written first); 130 interrupted (the interrupted row is written).
#[derive(Parser, Debug)]
#[command(name = "scale", version, about, long_about)]
struct Args {
    /// Comma-separated filter names, run one after another.
    #[arg(
        long,
        value_name = "NAMES",
        default_value = "sbbf/xxh3,blocked512/xxh3,classic/xxh3/km/flat,classic/murmur3/mitz32/flat"
    )]
    filters: String,
    /// Members inserted, and the count each filter is sized for (scientific notation allowed).
    #[arg(long, default_value = "1e10")]
    n: String,
    /// Target false-positive rate, in (0, 1).
    #[arg(long, default_value = "0.01")]
    p: String,
    /// An explicit filter size in bits instead of the sizing for --n and --p (with --hashes):
    /// e.g. a 2^33-bit filter holding few keys. Scientific notation allowed.
    #[arg(long, value_name = "BITS", requires = "hashes")]
    bits: Option<String>,
    /// Probes per key with --bits (the split-block filter takes only 8).
    #[arg(long, value_name = "K", requires = "bits")]
    hashes: Option<u32>,
    /// Key set: url (the default), article, hex or random-u64.
    #[arg(long, default_value = "url")]
    keys: String,
    /// Run seed: the keys derive from it.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Members looked up after the fill, evenly spread over all n (all of them when >= n).
    #[arg(long, default_value = "1e9", value_name = "COUNT")]
    check_members: String,
    /// Target relative half-width of the false-positive rate's exact interval.
    #[arg(long, default_value_t = 0.05)]
    precision: f64,
    /// Confidence level of the interval, in (0, 1).
    #[arg(long, default_value_t = 0.95)]
    confidence: f64,
    /// Most non-member queries (scientific notation allowed).
    #[arg(long, default_value = "1e9", value_name = "COUNT")]
    max_queries: String,
    /// Query non-members from key n + OFFSET on instead of key n (scientific notation allowed).
    /// With the same --seed the filter is the same, so a rerun with an offset past the earlier
    /// run's queries measures the same filter on keys disjoint from them. Rows with different
    /// offsets are kept side by side in the report.
    #[arg(long, default_value = "0", value_name = "OFFSET")]
    query_offset: String,
    /// Do not ask the kernel for 2 MiB pages for the filter.
    #[arg(long)]
    no_huge_pages: bool,
    /// Bytes the run may use, instead of what /proc/meminfo reports available.
    #[arg(long, value_name = "BYTES")]
    memory_limit: Option<String>,
    /// Output directory.
    #[arg(long, default_value = "reports/scale")]
    out: PathBuf,
}

fn configs(args: &Args) -> Result<Vec<ScaleConfig>, String> {
    let n = parse_count_named("--n", 1, &args.n)?;
    let p = parse_f64("--p", &args.p)?;
    if !(p > 0.0 && p < 1.0) {
        return Err(format!("--p = {p} is outside (0, 1)"));
    }
    let keys: KeySetKind = args.keys.parse().map_err(|e| format!("--keys: {e}"))?;
    let check_members = parse_count_named("--check-members", 1, &args.check_members)?;
    let max_queries = parse_count_named("--max-queries", 1, &args.max_queries)?;
    let query_offset = parse_count_named("--query-offset", 0, &args.query_offset)?;
    let memory_limit = args
        .memory_limit
        .as_deref()
        .map(|m| parse_count_named("--memory-limit", 1, m))
        .transpose()?;
    let geometry = match (&args.bits, args.hashes) {
        (Some(bits), Some(hashes)) => Some(Params {
            bits: parse_count_named("--bits", 1, bits)?,
            hashes,
        }),
        _ => None,
    };
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let threads = args.threads.unwrap_or(cores);
    if threads == 0 || threads > 4 * cores {
        return Err(format!(
            "--threads = {threads} is outside 1..={} (4 per core)",
            4 * cores
        ));
    }
    let filters = parse_list("filters", &args.filters, |s| Ok::<_, String>(s.to_owned()))?;
    // The command as run, with the build it ran from (`measure` for committed figures).
    let build = match bloomlab_cli::build_profile() {
        "release" => "--release".to_owned(),
        "debug" => String::new(),
        other => format!("--profile {other}"),
    };
    let command = std::iter::once(format!("cargo run {build} --bin scale --").replace("  ", " "))
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    let revision = git_revision();
    Ok(filters
        .into_iter()
        .map(|filter| ScaleConfig {
            filter,
            n,
            p,
            geometry,
            keys: keys.clone(),
            seed: args.seed,
            threads,
            check_members,
            precision: args.precision,
            confidence: args.confidence,
            max_queries,
            query_offset,
            huge_pages: !args.no_huge_pages,
            memory_limit,
            revision: revision.clone(),
            command: command.clone(),
        })
        .collect())
}

fn bar() -> RunProgress {
    RunProgress::new(
        1,
        &Look {
            program: "scale",
            unit: "keys",
            template: "{msg:>30} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} ({per_sec}, eta {eta})",
            rate: true,
        },
    )
}

/// Stages `scale.csv` and `report.md` and moves both into place: the report on disk is always
/// one whole set of rows.
fn write(out: &OutputDir, outcome: &Outcome) -> Result<(), String> {
    out.publish(|staging| -> anyhow::Result<()> {
        let written =
            bloomlab_report::csv_io::write_rows(&outcome.rows, &staging.join(scale::CSV_NAME))
                .map_err(anyhow::Error::from)
                .and_then(|()| {
                    let report = staging.join(scale::REPORT_NAME);
                    std::fs::write(&report, scale::render(outcome))
                        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", report.display()))
                });
        written.map_err(|e| {
            anyhow::anyhow!(
                "{e} (nothing was written; the previous report in {} is as it was)",
                out.dir().display()
            )
        })
    })
    .map_err(|e| format!("{e:#}"))
}

/// One run's outcome on stderr: its status and note, then its rate against theory and its
/// phase times, or why the rate was not measured.
fn say(row: &ScaleRow) {
    eprintln!(
        "  {}{}{}",
        row.status,
        if row.note.is_empty() { "" } else { ": " },
        row.note
    );
    if row.status != ScaleStatus::Refused && row.queries == 0 {
        eprintln!("  FPR not measured: no non-member was queried");
    } else if row.status != ScaleStatus::Refused {
        eprintln!(
            "  FPR {:.4e} [{:.4e}, {:.4e}], theory {:.4e} (uniform {:.4e}); fill {:.1} s \
             ({:.1}M/s/core), members {:.1} s, queries {:.1} s; peak RSS {:.2} GB",
            row.fpr,
            row.ci_low,
            row.ci_high,
            row.fpr_theory,
            row.fpr_theory_uniform,
            row.insert_secs,
            row.insert_per_sec_per_core / 1e6,
            row.members_secs,
            row.queries_secs,
            row.peak_rss_bytes as f64 / 1e9
        );
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let configs = match configs(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = check_output_dir("--out", &args.out) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    // Held until the process ends: rows are read, merged and written by this run alone.
    let out = match OutputDir::lock(&args.out) {
        Ok(out) => out,
        Err(e) => {
            eprintln!("error: --out: {e}");
            return ExitCode::from(2);
        }
    };
    let mut outcome = match scale::read(&args.out) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e} (move it away to start a new report)");
            return ExitCode::from(2);
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        if let Err(e) = ctrlc::set_handler(move || stop.store(true, Ordering::Relaxed)) {
            eprintln!("warning: Ctrl-C will not stop the run cleanly: {e}");
        }
    }
    let (mut refused, mut failed) = (false, false);
    for config in &configs {
        eprintln!(
            "{}: n = {}, p = {}, {} keys, {} threads",
            config.filter, config.n, config.p, config.keys, config.threads
        );
        let bar = bar();
        let phase = std::sync::Mutex::new("");
        let progress = |p: ScaleProgress| {
            let mut current = phase.lock().expect("progress lock");
            if *current != p.phase {
                *current = p.phase;
                bar.phase(format!("{}: {}", config.filter, p.phase), p.total);
            }
            bar.set_length(p.total);
            bar.set_position(p.done);
        };
        let mut row = match run(config, &stop, &progress) {
            Ok(row) => row,
            Err(e) => {
                bar.finish_and_clear();
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        bar.finish_and_clear();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        row.finished = bloomlab_report::bench_table::render::date_utc(now);
        say(&row);
        refused |= row.status == ScaleStatus::Refused;
        failed |= row.status == ScaleStatus::Failed;
        let interrupted = row.status == ScaleStatus::Interrupted;
        outcome.merge(row);
        if let Err(e) = write(&out, &outcome) {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
        if interrupted {
            eprintln!("interrupted: report written to {}", args.out.display());
            return ExitCode::from(130);
        }
    }
    eprintln!("report: {}", args.out.join(scale::REPORT_NAME).display());
    if failed {
        ExitCode::from(1)
    } else if refused {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}
