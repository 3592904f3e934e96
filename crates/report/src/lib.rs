//! Reports: typed rows to CSV, CSV to PNG (plotters), Markdown tables and the sweep summary.
//!
//! [`write_reports`] is the whole pipeline: it writes the CSV, reads it back, and draws every
//! picture and the summary from the rows read back, so the pictures show only what the CSV holds.

#![warn(missing_docs)]

pub mod bench_table;
pub mod conformance;
pub mod csv_io;
pub mod date;
mod fmt;
pub mod markdown;
pub mod output;
pub mod plot;
pub mod redis_costs;
pub mod roundtrips;
pub mod scale;
pub mod scenario;
mod select;
pub mod sketches;
pub mod summary;

use std::path::{Path, PathBuf};

use bloomlab_harness::{SweepRow, Workload};

pub use csv_io::{read_csv, write_csv};
pub use plot::{
    SweepView, WorkloadView, plot_fpr_vs_bits_per_key, plot_fpr_vs_overfill, plot_fpr_vs_target,
    plot_lookup_ns_vs_n,
};
pub use summary::{render_summary, write_summary};

/// File name of the CSV inside the output directory.
pub const CSV_NAME: &str = "sweep.csv";
/// File name of the Markdown summary inside the output directory.
pub const SUMMARY_NAME: &str = "summary.md";
/// File names of the four pictures of static rows, in the order [`ReportFiles::pngs`] lists them.
pub const PNG_NAMES: [&str; 4] = [
    "fpr_vs_target.png",
    "fpr_vs_bits_per_key.png",
    "lookup_ns_vs_n.png",
    "fpr_vs_overfill.png",
];
/// File name of the churn picture (drawn when the CSV has churn rows).
pub const CHURN_PNG: &str = "churn_rounds.png";
/// File name of the grow picture (drawn when the CSV has grow rows).
pub const GROW_PNG: &str = "fpr_vs_growth.png";

/// The files [`write_reports`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportFiles {
    /// The CSV, one row per [`SweepRow`].
    pub csv: PathBuf,
    /// The pictures drawn: the four of [`PNG_NAMES`] in that order when the CSV has static rows,
    /// then [`CHURN_PNG`] and [`GROW_PNG`] when it has such rows.
    pub pngs: Vec<PathBuf>,
    /// The Markdown summary, which links the pictures by relative path.
    pub summary: PathBuf,
}

/// Why a report could not be written or read. Every variant names the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file or directory could not be created, opened, read or written.
    ///
    /// The cause is part of the message and deliberately not a `source()`, so that an error chain
    /// printed with `{:#}` names it once.
    #[error("{action} {path}: {cause}")]
    Io {
        /// What was being done (`"creating directory"`, `"reading"`, ...).
        action: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The operating system's reason.
        cause: std::io::Error,
    },
    /// The CSV could not be written or parsed (bad header, bad field, wrong column count).
    #[error("CSV {path}: {cause}")]
    Csv {
        /// The CSV file.
        path: PathBuf,
        /// Where and why (row and field when the csv crate knows them).
        cause: csv::Error,
    },
    /// There were no rows to report on.
    #[error("{path}: no sweep rows to report on")]
    NoRows {
        /// The file or directory the rows were for.
        path: PathBuf,
    },
    /// plotters failed to draw or encode a picture.
    #[error("drawing {path}: {message}")]
    Plot {
        /// The picture's path.
        path: PathBuf,
        /// plotters' message.
        message: String,
    },
    /// The embedded font could not be registered with plotters.
    #[error("registering the embedded DejaVu Sans font: {0}")]
    Font(String),
    /// The output directory is held by another run, or a staged file could not be committed.
    #[error(transparent)]
    Output(#[from] output::OutputError),
}

/// Writes `out_dir/sweep.csv`, then reads it back and draws the PNGs and `summary.md` from the
/// rows read back: the four static pictures from the static rows (if any), the churn and grow
/// pictures from those rows (if any). Creates `out_dir` (and its parents) if missing; overwrites earlier files.
///
/// Errors: [`ReportError::NoRows`] if `rows` is empty, otherwise the first failure, naming its path.
pub fn write_reports(rows: &[SweepRow], out_dir: &Path) -> Result<ReportFiles, ReportError> {
    if rows.is_empty() {
        return Err(ReportError::NoRows {
            path: out_dir.to_path_buf(),
        });
    }
    std::fs::create_dir_all(out_dir).map_err(|source| ReportError::Io {
        action: "creating directory",
        path: out_dir.to_path_buf(),
        cause: source,
    })?;
    let csv = out_dir.join(CSV_NAME);
    write_csv(rows, &csv)?;
    // Plots and summary read only what the CSV holds.
    let rows = read_csv(&csv)?;
    let statics: Vec<SweepRow> = rows
        .iter()
        .filter(|r| r.workload == Workload::Static)
        .cloned()
        .collect();
    let mut pngs: Vec<PathBuf> = Vec::new();
    if !statics.is_empty() {
        pngs = PNG_NAMES.iter().map(|name| out_dir.join(name)).collect();
        let view = SweepView::new(&statics);
        plot::fpr_vs_target::draw(&view, &pngs[0])?;
        plot::fpr_vs_bits_per_key::draw(&view, &pngs[1])?;
        plot::lookup_ns_vs_n::draw(&view, &pngs[2])?;
        plot::fpr_vs_overfill::draw(&view, &pngs[3])?;
    }
    let workloads = WorkloadView::new(&rows);
    if let Some(slice) = &workloads.churn {
        pngs.push(plot::churn_rounds::draw(slice, &out_dir.join(CHURN_PNG))?);
    }
    if let Some(slice) = &workloads.grow {
        pngs.push(plot::fpr_vs_growth::draw(slice, &out_dir.join(GROW_PNG))?);
    }
    let summary = out_dir.join(SUMMARY_NAME);
    write_summary(&rows, &csv, &pngs, &summary)?;
    Ok(ReportFiles { csv, pngs, summary })
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{synthetic_rows, temp_dir};

    #[test]
    fn write_reports_writes_csv_pictures_and_summary_into_a_new_directory() {
        let rows = synthetic_rows();
        let dir = temp_dir("write_reports");
        let out = dir.join("nested").join("out");
        let files = write_reports(&rows, &out).unwrap();
        assert_eq!(read_csv(&files.csv).unwrap(), rows, "CSV round trip");
        assert_eq!(files.pngs.len(), PNG_NAMES.len());
        for png in &files.pngs {
            let bytes = std::fs::read(png).unwrap();
            assert!(
                bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
                "{} is not a PNG",
                png.display()
            );
        }
        let md = std::fs::read_to_string(&files.summary).unwrap();
        for name in PNG_NAMES {
            assert!(
                md.contains(&format!("]({name})")),
                "summary lacks relative link {name}"
            );
        }
        assert!(
            md.contains(&format!("]({CSV_NAME})")),
            "summary lacks the CSV link"
        );
    }

    #[test]
    fn write_reports_refuses_no_rows() {
        let out = temp_dir("write_reports_empty");
        let err = write_reports(&[], &out).unwrap_err();
        assert!(matches!(err, ReportError::NoRows { .. }), "{err:?}");
    }
}
