//! `cargo run --release --bin bench-table`: writes `reports/bloom_vs_hashset.md` from the results
//! of `cargo bench --bench bloom_vs_hashset` (criterion's medians and the measured heap bytes).
//! Thin: parse flags, call [`bloomlab_report::bench_table::write_report`], map to an exit code.

use std::path::PathBuf;
use std::process::ExitCode;

use bloomlab_harness::bench::criterion_dir;
use bloomlab_report::bench_table::{Machine, write_report};
use clap::Parser;

/// Writes the Bloom-vs-HashSet Markdown table from a finished `cargo bench` run.
///
/// Exit codes: 0 = written, 2 = bad input (no or unreadable bench results, an unwritable output).
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

fn main() -> ExitCode {
    let args = Args::parse();
    let dir = args.criterion_dir.unwrap_or_else(criterion_dir);
    match write_report(&dir, &args.out, &Machine::detect()) {
        Ok(()) => {
            println!("wrote {}", args.out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-table: error: {:#}", anyhow::Error::from(e));
            ExitCode::from(2)
        }
    }
}
