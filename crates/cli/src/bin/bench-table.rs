//! `cargo run --release --bin bench-table`: writes `reports/bloom_vs_hashset.md` from the results
//! of `cargo bench --bench bloom_vs_hashset` (criterion's medians and the measured heap bytes),
//! and `reports/sketches_bench.md` beside it from those of `cargo bench --bench sketches` when
//! that bench has run.
//! Thin: parse flags, call [`bloomlab_report::bench_table::write_report`], map to an exit code.

use std::path::PathBuf;
use std::process::ExitCode;

use bloomlab_harness::bench::criterion_dir;
use bloomlab_report::bench_table::{Machine, sketches, write_report};
use clap::Parser;

/// Writes the Bloom-vs-HashSet Markdown table from a finished `cargo bench` run, and the
/// sketches report (`sketches_bench.md`, in the same directory) when `cargo bench --bench
/// sketches` has run.
///
/// Exit codes: 0 = written (one report is enough when the other bench has not run), 2 = bad input (no or unreadable bench results, an unwritable output).
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
    let machine = Machine::detect();
    // Issue 17: the sketch bench's report, written first so the Bloom bench's absence does not
    // prevent it.
    let sketch_out = args.out.with_file_name(sketches::REPORT);
    let sketches_written = match sketches::write_report(&dir, &sketch_out, &machine) {
        Ok(written) => {
            if written {
                println!("wrote {}", sketch_out.display());
            }
            written
        }
        Err(e) => {
            eprintln!("bench-table: error: {:#}", anyhow::Error::from(e));
            return ExitCode::from(2);
        }
    };
    match write_report(&dir, &args.out, &machine) {
        Ok(()) => {
            println!("wrote {}", args.out.display());
            ExitCode::SUCCESS
        }
        Err(e) if sketches_written && e.is_missing_results() => {
            eprintln!("bench-table: note: {e}; only the sketches report was written");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-table: error: {:#}", anyhow::Error::from(e));
            ExitCode::from(2)
        }
    }
}
