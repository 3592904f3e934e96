//! Redraws the pictures and summary of a sweep from its CSV, without measuring anything:
//! `cargo run --release -p bloomlab-report --example redraw -- reports/sweep/sweep.csv OUT_DIR`.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [csv, out] = args.as_slice() else {
        eprintln!("usage: redraw SWEEP_CSV OUT_DIR");
        return ExitCode::from(2);
    };
    let result = bloomlab_report::read_csv(&PathBuf::from(csv))
        .and_then(|rows| bloomlab_report::write_reports(&rows, &PathBuf::from(out)));
    match result {
        Ok(files) => {
            for png in &files.pngs {
                println!("PNG:     {}", png.display());
            }
            println!("Summary: {}", files.summary.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
