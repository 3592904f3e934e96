//! `hll_pitchfork_p<P>.png`: one picture per precision, a panel per sketch of that precision.
//! Each panel draws the empirical quantiles of the trials' relative error against n (log) at
//! the normal law's -3 .. +3 sigma levels (the contours of Apache DataSketches' "pitchfork"
//! plots) and, as grey lines, the stated error's +-1, 2, 3 x 1.04 / sqrt(m). Where the sketch
//! keeps its promise each contour lies on its grey line; a bias shifts all contours together.

use std::path::{Path, PathBuf};

use bloomlab_harness::sketch::HllRow;
use plotters::prelude::*;

use super::{PANEL, axis, chart, frame, log_axis, render};
use crate::sketches::series;
use crate::{ReportError, fmt};

fn pct_tick(x: f64) -> String {
    if x.abs() < 1e-9 {
        "0%".into()
    } else {
        fmt::percent(x)
    }
}

/// The file name of precision `p`'s picture.
pub fn file_name(p: u8) -> String {
    format!("hll_pitchfork_p{p}.png")
}

/// Contour colours, from -3 sigma to +3 sigma (the median in black).
const CONTOURS: [(RGBColor, &str); 7] = [
    (RGBColor(120, 0, 160), "0.135% (-3 sigma)"),
    (RGBColor(30, 90, 200), "2.275% (-2 sigma)"),
    (RGBColor(30, 160, 60), "15.87% (-1 sigma)"),
    (RGBColor(0, 0, 0), "median"),
    (RGBColor(30, 160, 60), "84.13% (+1 sigma)"),
    (RGBColor(30, 90, 200), "97.725% (+2 sigma)"),
    (RGBColor(120, 0, 160), "99.865% (+3 sigma)"),
];

/// Draws the picture of the rows of precision `p` (every sketch of that precision) at `path`.
pub fn draw(rows: &[HllRow], p: u8, path: &Path) -> Result<PathBuf, ReportError> {
    let at_p: Vec<HllRow> = rows.iter().filter(|r| r.precision == p).cloned().collect();
    let all = series(&at_p, |r| r.sketch.clone());
    if all.is_empty() {
        return Err(ReportError::NoRows {
            path: path.to_path_buf(),
        });
    }
    let se = bloomlab_sketches::hll::standard_error(p);
    let tmin = all.iter().map(|(_, s)| s[0].trials).min().unwrap_or(0);
    let tmax = all.iter().map(|(_, s)| s[0].trials).max().unwrap_or(0);
    let subtitle = format!(
        "p = {p} (m = {}), 1.04 / sqrt(m) = {}; {} trials per point (see each panel); {} points from n = {} to {}",
        1u64 << p,
        fmt::percent(se),
        if tmin == tmax {
            tmin.to_string()
        } else {
            format!("{tmin} to {tmax}")
        },
        all[0].1.len(),
        all[0].1.first().map_or(0, |r| r.n),
        all[0].1.last().map_or(0, |r| r.n),
    );
    let notes = [
        "Coloured: empirical quantiles of the relative error (estimate / n - 1) over the trials at \
         the normal law's -3..+3 sigma levels (0.135%, 2.275%, 15.87%, 50%, 84.13%, 97.725%, 99.865%)."
            .to_string(),
        "Grey: +-1, 2, 3 x 1.04/sqrt(m), where those quantiles fall if the error is normal with the \
         stated standard error. Below about 2.5 m the error is smaller (linear counting, exact small counts)."
            .to_string(),
    ];
    let (x0, x1) = {
        let lo = at_p
            .iter()
            .map(|r| r.n as f64)
            .fold(f64::INFINITY, f64::min);
        let hi = at_p.iter().map(|r| r.n as f64).fold(0.0, f64::max);
        (lo.max(1.0) / 1.2, hi * 1.2)
    };
    let ylim = 4.5 * se;
    let cols = if all.len() <= 2 {
        all.len()
    } else if all.len() <= 4 {
        2
    } else {
        all.len().div_ceil(2).min(4)
    };
    let rows_n = all.len().div_ceil(cols);
    render(path, |root| {
        let area = frame(
            root,
            &format!("HyperLogLog pitchfork at p = {p}: quantiles of the relative error against n"),
            &subtitle,
            &notes,
        )?;
        let panels = area.split_evenly((rows_n, cols));
        for ((name, s), panel) in all.iter().zip(panels.iter()) {
            let mut c = chart(
                panel,
                &PANEL,
                Some(format!("{name}, T = {}", s[0].trials)),
                axis(
                    log_axis(x0, x1),
                    "true distinct count n (log scale)",
                    fmt::count_tick,
                ),
                axis(-ylim..ylim, "relative error", pct_tick),
            )?;
            for k in [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0] {
                let g = RGBColor(150, 150, 150);
                c.draw_series(LineSeries::new(
                    [(x0, k * se), (x1, k * se)],
                    g.stroke_width(if k == 0.0 { 2 } else { 1 }),
                ))?;
            }
            let clamp = |v: f64| v.clamp(-ylim, ylim);
            for (i, (color, _)) in CONTOURS.iter().enumerate() {
                let pts = s.iter().map(|r| {
                    let q = [r.q_m3, r.q_m2, r.q_m1, r.q_median, r.q_p1, r.q_p2, r.q_p3][i];
                    (r.n as f64, clamp(q))
                });
                c.draw_series(LineSeries::new(pts, color.stroke_width(2)))?;
            }
        }
        Ok(())
    })
}
