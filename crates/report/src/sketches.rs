//! The sketch sweep's reports: `hll.csv` and `cms.csv` (one row per [`HllRow`] / [`CmsRow`]), the
//! pictures `hll_error_vs_n.png` and `cms_violations.png` drawn from the CSVs read back, and
//! `summary.md`.

use std::path::{Path, PathBuf};

use std::io::Write;

use bloomlab_harness::sketch::{self as harness, CmsRow, HllRow, HllTrials, NORMAL_WITHIN};
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
/// File name of the per-trial estimates (gzip-compressed CSV).
pub const HLL_TRIALS: &str = "hll_trials.csv.gz";
/// Every fixed-name file the sketch reports may write (besides one
/// `hll_pitchfork_p<P>.png` per precision measured).
pub const FILES: [&str; 6] = [
    HLL_CSV,
    HLL_TRIALS,
    CMS_CSV,
    HLL_PNG,
    CMS_PNG,
    crate::SUMMARY_NAME,
];
/// Family-wise false-alarm rate of the transition finding per sketch ([`harness::departures`]).
pub const DEPARTURE_ALPHA: f64 = 0.01;

/// What the run was, for the summary's header.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    /// The command that produced the rows.
    pub command: String,
    /// Wall time of the measurements, seconds.
    pub seconds: f64,
    /// Worker threads.
    pub threads: usize,
    /// The HyperLogLog grid, for the header (e.g. "16 points per octave from 1 to 16777216").
    pub grid: String,
}

/// The files written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SketchFiles {
    /// The CSVs written, of the row sets that are not empty: `hll.csv` then its per-trial
    /// estimates, then `cms.csv`.
    pub csvs: Vec<PathBuf>,
    /// The pictures drawn.
    pub pngs: Vec<PathBuf>,
    /// The Markdown summary.
    pub summary: PathBuf,
}

/// Writes the CSVs of the non-empty row sets, reads them back, draws the pictures and writes
/// `summary.md`, all in `out_dir` (created if missing).
pub fn write_sketch_reports(
    hll: &[HllRow],
    trials: &[HllTrials],
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
        for p in precisions(&hll_back) {
            files.pngs.push(crate::plot::hll_pitchfork::draw(
                &hll_back,
                p,
                &out_dir.join(crate::plot::hll_pitchfork::file_name(p)),
            )?);
        }
        if !trials.is_empty() {
            let path = out_dir.join(HLL_TRIALS);
            write_trials(trials, &path)?;
            files.csvs.push(path);
        }
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
    let trials_bytes = std::fs::metadata(out_dir.join(HLL_TRIALS))
        .map(|m| m.len())
        .ok()
        .filter(|_| !trials.is_empty());
    let md = render_summary(&hll_back, &cms_back, info, trials_bytes);
    std::fs::write(&files.summary, md).map_err(|cause| ReportError::Io {
        action: "writing",
        path: files.summary.clone(),
        cause,
    })?;
    Ok(files)
}

/// The precisions present, ascending.
pub fn precisions(rows: &[HllRow]) -> Vec<u8> {
    let mut ps: Vec<u8> = rows.iter().map(|r| r.precision).collect();
    ps.sort_unstable();
    ps.dedup();
    ps
}

/// Significant digits kept for each estimate in [`HLL_TRIALS`]: a relative rounding of at most
/// 5e-8, far below any standard error measured (0.2% at p = 18), so every statistic recomputed
/// from the file matches the summary to the digits shown.
pub const TRIAL_DIGITS: usize = 8;

/// Writes every estimate as `sketch,trial,n,estimate` rows (one per output, trial and
/// checkpoint; estimates to [`TRIAL_DIGITS`] significant digits), gzip-compressed, through a
/// temporary file in the same directory that is fsynced and renamed into place: the file is
/// whole or absent.
pub fn write_trials(trials: &[HllTrials], path: &Path) -> Result<(), ReportError> {
    let io = |action: &'static str| {
        let path = path.to_path_buf();
        move |cause| ReportError::Io {
            action,
            path: path.clone(),
            cause,
        }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(io("creating a temporary file for"))?;
    {
        let gz = flate2::write::GzEncoder::new(
            std::io::BufWriter::new(tmp.as_file()),
            flate2::Compression::default(),
        );
        let mut w = std::io::BufWriter::with_capacity(1 << 16, gz);
        writeln!(w, "sketch,trial,n,estimate").map_err(io("writing"))?;
        for t in trials {
            for (o, name) in t.sketches.iter().enumerate() {
                for (trial, est) in t.estimates[o].iter().enumerate() {
                    for (&n, &e) in t.cardinalities.iter().zip(est) {
                        writeln!(w, "{name},{trial},{n},{}", sig_digits(e, TRIAL_DIGITS))
                            .map_err(io("writing"))?;
                    }
                }
            }
        }
        let gz = w.into_inner().map_err(|e| io("writing")(e.into_error()))?;
        let mut inner = gz.finish().map_err(io("compressing"))?;
        inner.flush().map_err(io("writing"))?;
    }
    // A temporary file is private (0600); the report is as readable as the CSVs beside it.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(io("setting permissions of"))?;
    }
    tmp.as_file().sync_all().map_err(io("syncing"))?;
    tmp.persist(path)
        .map_err(|e| io("renaming into place")(e.error))?;
    Ok(())
}

/// `x` rounded to `digits` significant digits, printed in the shortest form that reads back as
/// that rounded value.
fn sig_digits(x: f64, digits: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let s = format!("{:.*e}", digits - 1, x);
    let v: f64 = s.parse().unwrap_or(x);
    format!("{v}")
}

/// Reads [`HLL_TRIALS`] back: (sketch, trial, n, estimate) rows. Errors name the path and line.
pub fn read_trials(path: &Path) -> Result<Vec<(String, u64, u64, f64)>, ReportError> {
    let file = std::fs::File::open(path).map_err(|cause| ReportError::Io {
        action: "opening",
        path: path.to_path_buf(),
        cause,
    })?;
    let mut r =
        csv::Reader::from_reader(flate2::read::GzDecoder::new(std::io::BufReader::new(file)));
    r.deserialize()
        .collect::<Result<Vec<(String, u64, u64, f64)>, _>>()
        .map_err(|cause| ReportError::Csv {
            path: path.to_path_buf(),
            cause,
        })
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
pub fn render_summary(
    hll: &[HllRow],
    cms: &[CmsRow],
    info: &RunInfo,
    trials_bytes: Option<u64>,
) -> String {
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
        let mut per: Vec<String> = Vec::new();
        for (name, s) in series(hll, |r| r.sketch.clone()) {
            per.push(format!("{name} {}", s[0].trials));
        }
        md.push_str(&format!(
            "- HyperLogLog: {}; trials per point: {}
",
            if info.grid.is_empty() {
                "grid not stated".to_string()
            } else {
                info.grid.clone()
            },
            per.join(", ")
        ));
        if let Some(b) = trials_bytes {
            md.push_str(&format!(
                "- per-trial estimates: [{HLL_TRIALS}]({HLL_TRIALS}) ({}, gzip; columns sketch, trial, n, estimate to {TRIAL_DIGITS} significant digits)\n",
                fmt::bytes(b)
            ));
        }
        hll_section(&mut md, hll);
    }
    if !cms.is_empty() {
        cms_section(&mut md, cms);
    }
    md
}

/// The HyperLogLog part of the summary: the overview table, the pitchforks, the transition
/// finding and one table per sketch, in that order.
fn hll_section(md: &mut String, hll: &[HllRow]) {
    md.push_str(&format!(
        "\n## HyperLogLog\n\n![HyperLogLog relative error]({HLL_PNG})\n\nData: [{HLL_CSV}]({HLL_CSV}). \
         A trial feeds one seeded sequence of distinct keys and reads the estimate at every n; \
         statistics are over trials. *Large range*: n >= 5 m, where the stated standard error \
         1.04/sqrt(m) is the theory; below it linear counting (and each sketch's own small-range \
         method) applies.\n\n"
    ));
    let all = series(hll, |r| r.sketch.clone());
    hll_overview(md, &all);
    pitchforks(md, hll);
    transition_section(md, hll);
    per_sketch_tables(md, hll, &all);
}

/// One line per sketch: its RMS against the stated error over the large range, its worst bias
/// and how many points' shares within 1/2/3 standard errors hold a normal law's.
fn hll_overview(md: &mut String, all: &[(String, Vec<&HllRow>)]) {
    let rows: Vec<Vec<String>> = all.iter().map(|(name, s)| overview_row(name, s)).collect();
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
}

/// The overview line of sketch `name`, whose points are `s`.
fn overview_row(name: &str, s: &[&HllRow]) -> Vec<String> {
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
    vec![
        name.to_string(),
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
    ]
}

/// The pitchfork pictures, one per precision, and how to read them.
fn pitchforks(md: &mut String, hll: &[HllRow]) {
    md.push_str("\n### Pitchforks\n\n");
    for p in precisions(hll) {
        let f = crate::plot::hll_pitchfork::file_name(p);
        md.push_str(&format!("![pitchfork p = {p}]({f})\n"));
    }
    md.push_str(
        "\nHow to read a pitchfork: each coloured line is a quantile of the trials' relative error \
         at a normal law's -3..+3 sigma level; each grey line is that level for the stated error \
         1.04/sqrt(m). Lines on their grey partners: the stated error holds with a normal shape. \
         All lines lifted together: a bias. Lines inside their partners: smaller error (the small \
         range).\n",
    );
}

/// One table per sketch: 4 points per octave and every point of a departure (the CSV beside
/// holds them all).
fn per_sketch_tables(md: &mut String, hll: &[HllRow], all: &[(String, Vec<&HllRow>)]) {
    let found = harness::departures(hll, DEPARTURE_ALPHA);
    let max_n = hll.iter().map(|r| r.n).max().unwrap_or(1);
    let quarter = harness::octave_spaced(1, max_n, 4);
    md.push_str(
        "\nThe tables below show 4 points per octave and every point of a departure; \
         [hll.csv](hll.csv) holds every point.\n",
    );
    for (name, s) in all {
        md.push_str(&format!("\n### {name}\n\n"));
        let rows: Vec<Vec<String>> = s
            .iter()
            .filter(|r| {
                quarter.binary_search(&r.n).is_ok()
                    || found
                        .iter()
                        .any(|d| &d.sketch == name && (d.n_from..=d.n_to).contains(&r.n))
            })
            .map(|r| point_row(r))
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

/// One point's line of its sketch's table.
fn point_row(r: &HllRow) -> Vec<String> {
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
}

/// The transition finding: per sketch, where its bias or RMS leaves the stated error
/// ([`harness::departures`]), and for each our original-estimator departure the same n read by
/// Ertl's estimator on the same trials.
fn transition_section(md: &mut String, hll: &[HllRow]) {
    let found = harness::departures(hll, DEPARTURE_ALPHA);
    md.push_str(&format!(
        "\n### Finding: where the error leaves the stated one (detected automatically)\n\n\
         At every n of every sketch two tests: the mean error is zero (Student t, two-sided) and \
         the RMS is at most 1.04/sqrt(m) (chi-square, one-sided), each at {} / (2 x points) \
         (Bonferroni), so a sketch that keeps its promise everywhere shows a departure here with \
         probability at most {} per sketch. A point where every trial gives the same estimate is \
         not tested: its error is a fixed number, read exactly (*exact*), and departs when the \
         bias is not 0 or the RMS is above the stated error. Consecutive n are merged. Every \
         interval in the table, Ertl's column included, is at the per-test level of its sketch \
         ({} here; each end one-sided at that level for RMS/stated), not at the {}% of the \
         tables below.\n\n",
        fmt::tick(DEPARTURE_ALPHA),
        fmt::tick(DEPARTURE_ALPHA),
        per_test_levels(hll),
        fmt::tick(hll.first().map_or(0.95, |r| r.confidence) * 100.0),
    ));
    let names: Vec<String> = series(hll, |r| r.sketch.clone())
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let quiet: Vec<&String> = names
        .iter()
        .filter(|n| !found.iter().any(|d| &d.sketch == *n))
        .collect();
    if found.is_empty() {
        md.push_str("No departure in any sketch.\n");
        return;
    }
    let row_at = |name: &str, n: u64| hll.iter().find(|r| r.sketch == name && r.n == n);
    let rows: Vec<Vec<String>> = found
        .iter()
        .map(|d| {
            let twin = if d.sketch.starts_with("hll/") && !d.sketch.ends_with("/ertl") {
                row_at(&format!("{}/ertl", d.sketch), d.n_peak)
            } else {
                None
            };
            // The twin is read at the departure's own per-test level, so that every interval
            // of the table is at the level its note states.
            let shown = |r: &HllRow| {
                let (b, q) = (
                    harness::bias_test(r, d.alpha),
                    harness::rms_test(r, d.alpha),
                );
                format!("bias {}, RMS/stated {}", bias_text(&b), ratio_text(&q))
            };
            let value = if d.what == "bias" {
                format!(
                    "{} = {} x stated",
                    bias_text(&harness::PointTest {
                        flagged: true,
                        value: d.value,
                        low: d.low,
                        high: d.high,
                        exact: d.exact,
                    }),
                    fmt::sig(d.value / d.stated, 2)
                )
            } else {
                ratio_text(&harness::PointTest {
                    flagged: true,
                    value: d.value,
                    low: d.low,
                    high: d.high,
                    exact: d.exact,
                })
            };
            vec![
                d.sketch.clone(),
                d.what.to_string(),
                format!(
                    "{} .. {} ({} points; {} .. {} m)",
                    fmt::count_tick(d.n_from as f64),
                    fmt::count_tick(d.n_to as f64),
                    d.points,
                    fmt::sig(d.n_from as f64 / d.registers as f64, 3),
                    fmt::sig(d.n_to as f64 / d.registers as f64, 3)
                ),
                format!(
                    "{} ({} m)",
                    fmt::count_tick(d.n_peak as f64),
                    fmt::sig(d.n_peak as f64 / d.registers as f64, 3)
                ),
                value,
                twin.map_or("-".to_string(), shown),
            ]
        })
        .collect();
    md.push_str(&markdown::table(
        &[
            "sketch",
            "test",
            "n where it departs",
            "largest at n",
            "there: bias [CI] or RMS/stated [CI]",
            "Ertl's estimator, same trials, same n",
        ],
        &rows,
    ));
    if !quiet.is_empty() {
        md.push_str(&format!(
            "\nNo departure: {}.\n",
            quiet
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
}

/// The per-test level of the finding ([`harness::departures`]: the family rate over twice a
/// sketch's points), one value when every sketch has as many points, else one per sketch.
fn per_test_levels(hll: &[HllRow]) -> String {
    let levels: Vec<(String, String)> = series(hll, |r| r.sketch.clone())
        .into_iter()
        .map(|(name, s)| {
            let level = DEPARTURE_ALPHA / (2 * s.len()).max(1) as f64;
            (name, fmt::sig(level, 3))
        })
        .collect();
    match levels.first() {
        None => "-".to_string(),
        Some((_, first)) if levels.iter().all(|(_, l)| l == first) => first.clone(),
        Some(_) => levels
            .iter()
            .map(|(n, l)| format!("{l} for `{n}`"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// A bias and its interval in percent, or the bias and "exact" for a deterministic point.
fn bias_text(t: &harness::PointTest) -> String {
    if t.exact {
        format!("{} (exact)", fmt::percent(t.value))
    } else {
        pct_ci(t.value, t.low, t.high)
    }
}

/// RMS / stated and its interval, or the ratio and "exact" for a deterministic point.
fn ratio_text(t: &harness::PointTest) -> String {
    if t.exact {
        format!("{} (exact)", fmt::sig(t.value, 3))
    } else {
        format!(
            "{} [{}, {}]",
            fmt::sig(t.value, 3),
            fmt::sig(t.low, 3),
            fmt::sig(t.high, 3)
        )
    }
}

/// Per variant (hash, rows, update), pooled over streams: the share of items overcounted by more
/// than epsilon N with its Clopper-Pearson interval, beside the stated delta, the delta the depth
/// proves (`e^-d`) and the delta the variant achieved (the interval's upper end).
fn cms_delta_table(md: &mut String, cms: &[CmsRow]) {
    let conf = cms[0].confidence;
    let rows: Vec<Vec<String>> = series(cms, |r| r.sketch.clone())
        .into_iter()
        .map(|(name, s)| {
            let v: u64 = s.iter().map(|r| r.violations).sum();
            let n: u64 = s.iter().map(|r| r.items).sum();
            let (lo, hi) = bloomlab_harness::stats::clopper_pearson(v, n, conf);
            let r = s[0];
            vec![
                name,
                r.rows.clone(),
                r.update.clone(),
                format!("{v} / {n}"),
                format!(
                    "{} [{}, {}]",
                    fmt::sig(v as f64 / n as f64, 3),
                    fmt::sig(lo, 3),
                    fmt::sig(hi, 3)
                ),
                fmt::tick(r.delta),
                fmt::sig(r.delta_proved, 3),
                fmt::sig(hi, 3),
                if hi > 0.0 {
                    fmt::sig(r.delta / hi, 3)
                } else {
                    "-".into()
                },
            ]
        })
        .collect();
    md.push_str(&format!(
        "\n#### Share overcounted by more than epsilon N against delta, pooled over streams\n\n\
         Exact (Clopper-Pearson, {}%) intervals; *achieved delta* is the interval's upper end, the \
         smallest delta this run shows the variant meets. Nominal, as above: items of one stream \
         share counters.\n\n",
        conf * 100.0
    ));
    md.push_str(&markdown::table(
        &[
            "sketch",
            "rows",
            "update",
            "violations / items",
            "share [CI]",
            "stated delta",
            "delta the depth proves, e^-d",
            "achieved delta (upper end)",
            "stated / achieved",
        ],
        &rows,
    ));
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
                r.rows.clone(),
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
            "rows",
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
    cms_delta_table(md, cms);
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

#[cfg(test)]
mod tests {
    use super::*;
    use bloomlab_harness::sketch::{HllPlan, bias_test, hll_row, rms_test};

    /// Rows of one original sketch and its Ertl twin at p = 10 over four n, 200 trials each:
    /// errors spread evenly over +-3% (a fixed pattern, no randomness), the original's lifted by
    /// 5% at n = 3000 so that it departs there.
    fn twin_rows() -> Vec<HllRow> {
        let plan = HllPlan {
            cardinalities: vec![1000, 2000, 3000, 4000],
            trials: 200,
            seed: 1,
            confidence: 0.95,
            revision: "test".into(),
        };
        let spread = |t: usize| ((t as f64 * 0.754_877_666) % 1.0 - 0.5) * 0.06;
        let mut rows = Vec::new();
        for (name, label, lift) in [
            ("hll/xxh3/p10", "flajolet+linear-counting", 0.05),
            ("hll/xxh3/p10/ertl", "ertl", 0.0),
        ] {
            for &n in &plan.cardinalities {
                let up = if n == 3000 { lift } else { 0.0 };
                let est: Vec<f64> = (0..200)
                    .map(|t| n as f64 * (1.0 + up + spread(t)))
                    .collect();
                rows.push(hll_row(name, label, 10, 1024, n, &est, &plan));
            }
        }
        rows
    }

    /// The finding's note says its intervals are at the per-test level; Ertl's column printed
    /// the rows' 95% intervals under it. It must print the twin's interval at the departure's
    /// own level (0.01 / 8 here), as the departure's own column does.
    #[test]
    fn the_ertl_column_is_at_the_per_test_level_the_note_states() {
        let rows = twin_rows();
        let md = render_summary(&rows, &[], &RunInfo::default(), None);
        let line = md
            .lines()
            .find(|l| l.starts_with("| hll/xxh3/p10 | bias |"))
            .unwrap_or_else(|| panic!("no bias departure of the original:\n{md}"));
        let twin = rows
            .iter()
            .find(|r| r.sketch == "hll/xxh3/p10/ertl" && r.n == 3000)
            .unwrap();
        let alpha = DEPARTURE_ALPHA / 8.0;
        let (b, q) = (bias_test(twin, alpha), rms_test(twin, alpha));
        let wanted = format!(
            "bias {}, RMS/stated {} [{}, {}]",
            pct_ci(b.value, b.low, b.high),
            fmt::sig(q.value, 3),
            fmt::sig(q.low, 3),
            fmt::sig(q.high, 3)
        );
        assert!(line.contains(&wanted), "{line}\nlacks {wanted}");
        let at_95 = pct_ci(twin.bias, twin.bias_low, twin.bias_high);
        assert!(
            !line.contains(&at_95),
            "{line}\nshows the 95% interval {at_95}"
        );
        assert!(
            md.contains("at the per-test level of its sketch (0.00125 here"),
            "the note does not state the level:\n{md}"
        );
    }

    /// Every trial the same estimate: the finding prints the error as exact, not an interval.
    #[test]
    fn a_deterministic_departure_is_printed_as_exact() {
        let plan = HllPlan {
            cardinalities: vec![1, 2],
            trials: 16,
            seed: 1,
            confidence: 0.95,
            revision: "test".into(),
        };
        let m = 1024f64;
        let rows: Vec<HllRow> = [1u64, 2]
            .iter()
            .map(|&n| {
                let est = m * (m / (m - n as f64)).ln();
                hll_row(
                    "hll/xxh3/p10",
                    "flajolet+linear-counting",
                    10,
                    1024,
                    n,
                    &[est; 16],
                    &plan,
                )
            })
            .collect();
        let md = render_summary(&rows, &[], &RunInfo::default(), None);
        let line = md
            .lines()
            .find(|l| l.starts_with("| hll/xxh3/p10 | bias |"))
            .unwrap_or_else(|| panic!("no bias departure:\n{md}"));
        assert!(
            line.contains(&format!("{} (exact)", fmt::percent(rows[1].bias))),
            "{line}"
        );
    }
}
