//! `cargo run --release --bin bench-table`: writes `reports/bloom_vs_hashset.md` from the results
//! of `cargo bench --bench bloom_vs_hashset` (criterion's medians and the measured heap bytes).

#[path = "../bench_table/mod.rs"]
mod bench_table;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;

use bench_table::{input, render};

/// Writes the Bloom-vs-HashSet Markdown table from a finished `cargo bench` run.
#[derive(Debug, Parser)]
#[command(name = "bench-table", version)]
struct Args {
    /// Criterion's output directory (default: `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`,
    /// else `target/criterion` of this workspace).
    #[arg(long)]
    criterion_dir: Option<PathBuf>,
    /// The Markdown file to write.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../reports/bloom_vs_hashset.md"))]
    out: PathBuf,
}

fn default_criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/criterion"
    ))
}

fn machine() -> render::Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key.trim() == "model name").then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let rustc = std::process::Command::new(std::env::var_os("RUSTC").unwrap_or("rustc".into()))
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "rustc (version unknown)".into(), |s| s.trim().to_owned());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // This binary is built with the same flags as the bench (the workspace's .cargo/config.toml).
    let features: Vec<&str> = [
        ("sse4.2", cfg!(target_feature = "sse4.2")),
        ("avx2", cfg!(target_feature = "avx2")),
        ("bmi2", cfg!(target_feature = "bmi2")),
        ("avx512f", cfg!(target_feature = "avx512f")),
        ("neon", cfg!(target_feature = "neon")),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect();
    render::Machine {
        cpu,
        cores,
        rustc,
        features: if features.is_empty() {
            "baseline only".into()
        } else {
            features.join(", ")
        },
        generated: render::date_utc(now),
    }
}

fn run(args: Args) -> Result<()> {
    let dir = args.criterion_dir.unwrap_or_else(default_criterion_dir);
    let log = input::read_memory(&dir)?;
    let medians = input::read_medians(&dir)?;
    let text = render::render(&log, &medians, &machine());
    if let Some(parent) = args.out.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(&args.out, text)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    println!("wrote {}", args.out.display());
    Ok(())
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-table: {e:#}");
            ExitCode::FAILURE
        }
    }
}
