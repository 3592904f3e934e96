//! The sketch sweep's reports: `hll.csv` and `cms.csv` (one row per [`HllRow`] / [`CmsRow`]), the
//! pictures `hll_error_vs_n.png` and `cms_violations.png` drawn from the CSVs read back, and
//! `summary.md`.

use std::path::{Path, PathBuf};

use bloomlab_harness::sketch::{CmsRow, HllRow, NORMAL_WITHIN};
use plotters::style::RGBColor;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{ReportError, fmt, markdown};

/// File name of the HyperLogLog CSV.
pub const HLL_CSV: &str = "hll.csv";
/// File name of the Count-Min CSV.
pub const CMS_CSV: &str = "cms.csv";
/// File name of the HyperLogLog picture.
pub const HLL_PNG: &str = "hll_error_vs_n.png";
/// File name of the Count-Min picture.
pub const CMS_PNG: &str = "cms_violations.png";
/// Every file the sketch reports may write.
pub const FILES: [&str; 5] = [HLL_CSV, CMS_CSV, HLL_PNG, CMS_PNG, crate::SUMMARY_NAME];

/// What the run was, for the summary's header.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    /// The command that produced the rows.
    pub command: String,
    /// Wall time of the measurements, seconds.
    pub seconds: f64,
    /// Worker threads.
    pub threads: usize,
}

/// The files written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SketchFiles {
    pub csvs: Vec<PathBuf>,
    pub pngs: Vec<PathBuf>,
    pub summary: PathBuf,
}

/// Writes the CSVs of the non-empty row sets, reads them back, draws the pictures and writes
/// `summary.md`, all in `out_dir` (created if missing).
pub fn write_sketch_reports(
    hll: &[HllRow],
    cms: &[CmsRow],
    out_dir: &Path,
    info: &RunInfo,
) -> Result<SketchFiles, ReportError> {
    if hll.is_empty() && cms.is_empty() {
        return Err(ReportError::NoRows {
            path: out_dir.to_path_buf(),
        });
    }
    std::fs::create_dir_all(out_dir).map_err(|cause| ReportError::Io {
        action: "creating directory",
        path: out_dir.to_path_buf(),
        cause,
    })?;
    let mut files = SketchFiles {
        csvs: Vec::new(),
        pngs: Vec::new(),
        summary: out_dir.join(crate::SUMMARY_NAME),
    };
    let (mut hll_back, mut cms_back) = (Vec::new(), Vec::new());
    if !hll.is_empty() {
        let path = out_dir.join(HLL_CSV);
        write_rows(hll, &path)?;
        hll_back = read_rows::<HllRow>(&path)?;
        files.csvs.push(path);
        files.pngs.push(crate::plot::hll_error_vs_n::draw(
            &hll_back,
            &out_dir.join(HLL_PNG),
        )?);
    }
    if !cms.is_empty() {
        let path = out_dir.join(CMS_CSV);
        write_rows(cms, &path)?;
        cms_back = read_rows::<CmsRow>(&path)?;
        files.csvs.push(path);
        files.pngs.push(crate::plot::cms_violations::draw(
            &cms_back,
            &out_dir.join(CMS_PNG),
        )?);
    }
    let md = render_summary(&hll_back, &cms_back, info);
    std::fs::write(&files.summary, md).map_err(|cause| ReportError::Io {
        action: "writing",
        path: files.summary.clone(),
        cause,
    })?;
    Ok(files)
}

/// Writes any serialisable rows to a CSV with a header.
pub fn write_rows<R: Serialize>(rows: &[R], path: &Path) -> Result<(), ReportError> {
    let csv_err = |cause| ReportError::Csv {
        path: path.to_path_buf(),
        cause,
    };
    let mut w = csv::Writer::from_path(path).map_err(csv_err)?;
    for r in rows {
        w.serialize(r).map_err(csv_err)?;
    }
    w.flush().map_err(|cause| ReportError::Io {
        action: "writing",
        path: path.to_path_buf(),
        cause,
    })
}

/// Reads rows written by [`write_rows`]; errors name the path and the record.
pub fn read_rows<R: DeserializeOwned>(path: &Path) -> Result<Vec<R>, ReportError> {
    let file = std::fs::File::open(path).map_err(|cause| ReportError::Io {
        action: "opening",
        path: path.to_path_buf(),
        cause,
    })?;
    csv::Reader::from_reader(std::io::BufReader::new(file))
        .deserialize()
        .collect::<Result<Vec<R>, _>>()
        .map_err(|cause| ReportError::Csv {
            path: path.to_path_buf(),
            cause,
        })
}

/// Rows grouped by `key`, in first-seen order.
pub(crate) fn series<R, K: PartialEq>(rows: &[R], key: impl Fn(&R) -> K) -> Vec<(K, Vec<&R>)> {
    let mut out: Vec<(K, Vec<&R>)> = Vec::new();
    for r in rows {
        let k = key(r);
        match out.iter_mut().find(|(q, _)| *q == k) {
            Some((_, v)) => v.push(r),
            None => out.push((k, vec![r])),
        }
    }
    out
}

/// A qualitative palette (Tableau 10), cycled.
pub(crate) fn palette(i: usize) -> RGBColor {
    const C: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ];
    let (r, g, b) = C[i % C.len()];
    RGBColor(r, g, b)
}

fn pct_ci(x: f64, lo: f64, hi: f64) -> String {
    format!(
        "{} [{}, {}]",
        fmt::percent(x),
        fmt::percent(lo),
        fmt::percent(hi)
    )
}

/// Whether a point is in the large range, where the stated error is the theory (n >= 5 m: past
/// the small-range estimators' region).
pub fn large_range(r: &HllRow) -> bool {
    r.n >= 5 * r.registers
}

/// The Markdown summary of a sketch run.
pub fn render_summary(hll: &[HllRow], cms: &[CmsRow], info: &RunInfo) -> String {
    let mut md =
        String::from("# Sketch sweep: HyperLogLog and Count-Min against their contracts\n\n");
    md.push_str(&crate::markdown::dirty_warning(
        hll.iter()
            .map(|r| r.revision.as_str())
            .chain(cms.iter().map(|r| r.revision.as_str())),
    ));
    md.push_str(
        "Generated by the sketch sweep (never edited by hand). Every figure below is a column of the \
         CSVs beside this file.\n\n",
    );
    let rev = hll
        .first()
        .map(|r| (r.revision.clone(), r.seed, r.confidence))
        .or_else(|| {
            cms.first()
                .map(|r| (r.revision.clone(), r.seed, r.confidence))
        });
    if let Some((rev, seed, conf)) = rev {
        md.push_str(&format!(
            "- command: `{}`\n- revision {rev}, seed {seed}, intervals at {}% confidence; measured in {:.0} s on {} threads\n",
            info.command,
            conf * 100.0,
            info.seconds,
            info.threads
        ));
    }
    if !hll.is_empty() {
        hll_section(&mut md, hll);
    }
    if !cms.is_empty() {
        cms_section(&mut md, cms);
    }
    md
}

fn hll_section(md: &mut String, hll: &[HllRow]) {
    md.push_str(&format!(
        "\n## HyperLogLog\n\n![HyperLogLog relative error]({HLL_PNG})\n\nData: [{HLL_CSV}]({HLL_CSV}). \
         A trial feeds one seeded sequence of distinct keys and reads the estimate at every n; \
         statistics are over trials. *Large range*: n >= 5 m, where the stated standard error \
         1.04/sqrt(m) is the theory; below it linear counting (and each sketch's own small-range \
         method) applies.\n\n"
    ));
    let all = series(hll, |r| r.sketch.clone());
    let mut rows = Vec::new();
    for (name, s) in &all {
        let big: Vec<&&HllRow> = s.iter().filter(|r| large_range(r)).collect();
        let ratio: Vec<f64> = big.iter().map(|r| r.rms_over_theory).collect();
        let worst_bias = big.iter().map(|r| r.bias.abs()).fold(0.0, f64::max);
        let inside = big.iter().filter(|r| r.theory_in_rms_interval).count();
        let shares = |k: usize| {
            big.iter()
                .filter(|r| {
                    let (lo, hi) = [
                        (r.share1_low, r.share1_high),
                        (r.share2_low, r.share2_high),
                        (r.share3_low, r.share3_high),
                    ][k];
                    lo <= NORMAL_WITHIN[k] && NORMAL_WITHIN[k] <= hi
                })
                .count()
        };
        let small_max = s
            .iter()
            .filter(|r| !large_range(r))
            .map(|r| r.rms_over_theory)
            .fold(0.0, f64::max);
        rows.push(vec![
            name.clone(),
            s[0].estimator.clone(),
            fmt::bytes(s[0].memory_bytes),
            fmt::percent(s[0].std_error_theory),
            if ratio.is_empty() {
                "- (no n >= 5 m)".to_string()
            } else {
                format!(
                    "{} .. {}",
                    fmt::sig(ratio.iter().copied().fold(f64::INFINITY, f64::min), 3),
                    fmt::sig(ratio.iter().copied().fold(0.0, f64::max), 3)
                )
            },
            format!("{inside}/{}", big.len()),
            fmt::percent(worst_bias),
            format!("{}/{}/{} of {}", shares(0), shares(1), shares(2), big.len()),
            fmt::sig(small_max, 3),
        ]);
    }
    md.push_str(&markdown::table(
        &[
            "sketch",
            "estimator",
            "memory",
            "1.04/sqrt(m)",
            "RMS / stated, large range (min .. max)",
            "stated inside RMS interval",
            "largest abs bias, large range",
            "points whose 1/2/3-SE share interval holds 68.27/95.45/99.73%",
            "largest RMS / stated, small range",
        ],
        &rows,
    ));
    md.push_str(
        "\nHow to read: an RMS / stated near 1 with the stated error inside the interval means the \
         sketch keeps its promise at that n. The shares within 1, 2 and 3 standard errors test the \
         error's *shape* (a normal law gives 68.27%, 95.45%, 99.73%): a sketch with the right RMS but \
         heavy tails fails them.\n",
    );
    for (name, s) in &all {
        md.push_str(&format!("\n### {name}\n\n"));
        let rows: Vec<Vec<String>> = s
            .iter()
            .map(|r| {
                vec![
                    fmt::count_tick(r.n as f64),
                    r.trials.to_string(),
                    pct_ci(r.bias, r.bias_low, r.bias_high),
                    pct_ci(r.rms, r.rms_low, r.rms_high),
                    fmt::sig(r.rms_over_theory, 3),
                    pct_ci(r.share1, r.share1_low, r.share1_high),
                    pct_ci(r.share2, r.share2_low, r.share2_high),
                    pct_ci(r.share3, r.share3_low, r.share3_high),
                    format!(
                        "{} .. {}",
                        fmt::percent(r.min_error),
                        fmt::percent(r.max_error)
                    ),
                ]
            })
            .collect();
        md.push_str(&markdown::table(
            &[
                "n",
                "trials",
                "bias [CI]",
                "RMS [CI]",
                "RMS / stated",
                "within 1 SE [CI]",
                "within 2 SE [CI]",
                "within 3 SE [CI]",
                "error range",
            ],
            &rows,
        ));
    }
}

fn cms_section(md: &mut String, cms: &[CmsRow]) {
    let f = &cms[0];
    md.push_str(&format!(
        "\n## Count-Min\n\n![Count-Min violations]({CMS_PNG})\n\nData: [{CMS_CSV}]({CMS_CSV}). \
         epsilon = {}, delta = {}: width ceil(e/epsilon) = {}, depth ceil(ln(1/delta)) = {} ({}). \
         Each trial is a stream of N = {} draws over {} items; every item of the universe (present \
         or not) is compared with its true count. Undercounts in this run: {} (the contract: none; \
         the sweep fails on any).\n\n",
        fmt::tick(f.epsilon),
        fmt::tick(f.delta),
        f.width,
        f.depth,
        fmt::bytes(f.memory_bytes),
        f.total,
        f.universe,
        cms.iter().map(|r| r.undercounts).sum::<u64>()
    ));
    let rows: Vec<Vec<String>> = cms
        .iter()
        .map(|r| {
            vec![
                r.sketch.clone(),
                r.stream.clone(),
                r.trials.to_string(),
                r.items.to_string(),
                r.undercounts.to_string(),
                r.violations.to_string(),
                format!(
                    "{} [{}, {}]",
                    fmt::sig(r.share, 3),
                    fmt::sig(r.share_low, 3),
                    fmt::sig(r.share_high, 3)
                ),
                if r.below_delta { "yes" } else { "no" }.to_string(),
                fmt::sig(r.bound_p, 3),
                fmt::sig(r.mean_over_bound, 3),
                fmt::sig(r.max_over_bound, 3),
            ]
        })
        .collect();
    md.push_str(&markdown::table(
        &[
            "sketch",
            "stream",
            "trials",
            "items compared",
            "undercounts",
            "violations",
            "share [CI]",
            "CI below delta",
            "p (share <= delta)",
            "mean overcount / eps N",
            "largest overcount / eps N",
        ],
        &rows,
    ));
    md.push_str(
        "\nHow to read: *share* is the fraction of items whose overcount exceeded epsilon N, with a \
         Clopper-Pearson interval that treats items as independent (they are not: one sketch's \
         items share counters, so read it as nominal). *p (share <= delta)* is the valid test: \
         each trial's share is one independent observation, and a p below the gate's alpha would \
         say the sketch breaks its contract (Chernoff bound, see `bloomlab_harness::sketch`). \
         The bound is a worst case: Markov's inequality per row, so measured shares sit far below \
         delta; conservative update (`/cu`) only lowers counts.\n",
    );
}
