//! `cargo run --release --bin bench-table`: writes `reports/bloom_vs_hashset.md` from the results
//! of `cargo bench --bench bloom_vs_hashset` (criterion's medians and the measured heap bytes),
//! and `reports/sketches_bench.md` from those of `cargo bench --bench sketches` when that bench
//! has run.
//! Thin: parse flags, call [`bloomlab_report::bench_table::write_report`], map to an exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bloomlab_harness::schema::bench::criterion_dir;
use bloomlab_report::bench_table::{Machine, sketches, write_report};
use bloomlab_report::output::OutputDir;
use clap::Parser;

/// Writes the Bloom-vs-HashSet Markdown table from a finished `cargo bench` run, and the
/// sketches report from a finished `cargo bench --bench sketches`.
///
/// Which files: with neither --out nor --sketches-out, both reports at their defaults (under
/// reports/ in the current directory; the sketches report only when its bench has run). With
/// either flag, only the report(s) named by a flag given: nothing else is written or overwritten.
/// Each file is written whole or not at all (temporary file beside it, fsync, rename), and the
/// directory of each is locked while it is written: a second bench-table (or sweep) on the same
/// directory is refused, naming the holder.
///
/// Exit status: 0 written (with no flag, one report is enough when the other bench has not run);
/// 1 is not used (nothing is measured here); 2 bad input: no or unreadable bench results, an unwritable
/// output, a directory in use by another run; 130 interrupted (Ctrl-C: no file is cut short).
#[derive(Debug, Parser)]
#[command(name = "bench-table", version)]
struct Args {
    /// Criterion's output directory (default: `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`,
    /// else `target/criterion` of this workspace).
    #[arg(long)]
    criterion_dir: Option<PathBuf>,
    /// The Bloom-vs-HashSet Markdown file to write (default: reports/bloom_vs_hashset.md, when
    /// --sketches-out is not given either).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// The sketches Markdown file to write (default: reports/sketches_bench.md, when --out is not
    /// given either).
    #[arg(long, value_name = "FILE")]
    sketches_out: Option<PathBuf>,
}

/// The reports asked for: (Bloom report, sketches report), `None` for one not asked for.
fn targets(args: &Args) -> (Option<PathBuf>, Option<PathBuf>) {
    match (&args.out, &args.sketches_out) {
        (None, None) => (
            Some(PathBuf::from("reports/bloom_vs_hashset.md")),
            Some(PathBuf::from("reports").join(sketches::REPORT)),
        ),
        (out, sketches) => (out.clone(), sketches.clone()),
    }
}

/// Locks the directory of every target (each directory once), held until the process ends.
fn lock_dirs(files: &[&Path]) -> Result<Vec<OutputDir>, String> {
    let mut held: Vec<OutputDir> = Vec::new();
    for file in files {
        let dir = match file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if file.is_dir() {
            return Err(format!(
                "{} is a directory: give the Markdown file to write",
                file.display()
            ));
        }
        let same = |d: &OutputDir| {
            d.dir() == dir
                || (d.dir().canonicalize().ok()).is_some_and(|c| dir.canonicalize().ok() == Some(c))
        };
        if !held.iter().any(same) {
            held.push(OutputDir::lock(&dir).map_err(|e| e.to_string())?);
        }
    }
    Ok(held)
}

fn main() -> ExitCode {
    let args = Args::parse();
    let dir = args.criterion_dir.clone().unwrap_or_else(criterion_dir);
    let machine = Machine::detect();
    let (bloom, sketch) = targets(&args);
    let asked: Vec<&Path> = bloom.iter().chain(&sketch).map(PathBuf::as_path).collect();
    let _locks = match lock_dirs(&asked) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bench-table: error: {e}");
            return ExitCode::from(2);
        }
    };
    // The sketch bench's report first, so that the Bloom bench's absence does not prevent it.
    let mut sketches_written = false;
    if let Some(out) = &sketch {
        match sketches::write_report(&dir, out, &machine) {
            Ok(true) => {
                println!("wrote {}", out.display());
                sketches_written = true;
            }
            // Asked for by name, the report must be written.
            Ok(false) if args.sketches_out.is_some() => {
                eprintln!(
                    "bench-table: error: no sketch bench results in {}: run `cargo bench --bench \
                     sketches` first",
                    dir.display()
                );
                return ExitCode::from(2);
            }
            Ok(false) => {}
            Err(e) => {
                eprintln!("bench-table: error: {:#}", anyhow::Error::from(e));
                return ExitCode::from(2);
            }
        }
    }
    let Some(out) = &bloom else {
        return ExitCode::SUCCESS;
    };
    match write_report(&dir, out, &machine) {
        Ok(()) => {
            println!("wrote {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) if args.out.is_none() && sketches_written && e.is_missing_results() => {
            eprintln!("bench-table: note: {e}; only the sketches report was written");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-table: error: {:#}", anyhow::Error::from(e));
            ExitCode::from(2)
        }
    }
}
