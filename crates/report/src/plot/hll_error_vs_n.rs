//! `hll_error_vs_n.png`: HyperLogLog accuracy against the true cardinality n (log). Left: each
//! sketch's relative error at the most common precision, its mean (bias) with interval bars and
//! the shaded band of plus/minus one standard error `1.04 / sqrt(m)` about zero. Right: every
//! sketch's RMS relative error divided by `1.04 / sqrt(m)`, with chi-square interval bars, and
//! the line y = 1 where the stated standard error is met.

use std::path::{Path, PathBuf};

use bloomlab_harness::sketch::HllRow;
use plotters::prelude::*;

use super::{
    Area, DrawResult, PANEL, axis, chart, draw_legend, frame, legend_line, legend_rect, log_axis,
    render,
};
use crate::sketches::{palette, series};
use crate::{ReportError, fmt};

/// A percentage tick that shows zero as `0%` (the axis' middle tick is a rounding residue).
fn pct_tick(x: f64) -> String {
    if x.abs() < 1e-9 {
        "0%".into()
    } else {
        fmt::percent(x)
    }
}

const TITLE: &str = "HyperLogLog: relative error against the stated standard error 1.04 / sqrt(m)";

/// Draws the picture at `path`.
pub fn draw(rows: &[HllRow], path: &Path) -> Result<PathBuf, ReportError> {
    let Some(scales) = Scales::of(rows) else {
        return Err(ReportError::NoRows {
            path: path.to_path_buf(),
        });
    };
    let p_left = scales.p_left;
    let trials = rows.iter().map(|r| r.trials).max().unwrap_or(0);
    let subtitle = format!(
        "{} sketches, up to {} trials per point (seeded distinct keys); left: precision p = {p_left} \
         (m = {}, 1.04 / sqrt(m) = {})",
        scales.all.len(),
        trials,
        1u64 << p_left,
        fmt::percent(scales.se)
    );
    let notes = [
        "Left: mean relative error (bias) with its Student-t interval; grey band: +-1.04/sqrt(m), \
         where about 68% of single estimates should fall."
            .to_string(),
        "Right: RMS relative error / (1.04/sqrt(m)) with chi-square intervals; 1 = the stated error. \
         Below about 2.5 m linear counting is more accurate than the stated error."
            .to_string(),
    ];
    render(path, |root| {
        let area = frame(root, TITLE, &subtitle, &notes)?;
        let panels = area.split_evenly((1, 2));
        bias_panel(&panels[0], &scales)?;
        rms_panel(&panels[1], &scales)
    })
}

/// What both panels share, computed once from the rows: the sketches, the left panel's precision
/// and the axis ranges.
struct Scales<'r> {
    /// Every sketch's rows, in first-seen order (which fixes its colour).
    all: Vec<(String, Vec<&'r HllRow>)>,
    /// The precision with the most sketches (ties: the larger p), shown in the left panel.
    p_left: u8,
    /// The stated standard error `1.04 / sqrt(m)` at `p_left`.
    se: f64,
    /// The n axis (both panels).
    x: (f64, f64),
    /// The left panel's y axis is `-ymax..ymax`.
    ymax: f64,
    /// The right panel's y axis is `0..rmax`.
    rmax: f64,
}

impl<'r> Scales<'r> {
    /// `None` when there are no rows.
    fn of(rows: &'r [HllRow]) -> Option<Self> {
        let all = series(rows, |r| r.sketch.clone());
        let mut by_p: Vec<(u8, usize)> = Vec::new();
        for (_, s) in &all {
            let p = s[0].precision;
            match by_p.iter_mut().find(|(q, _)| *q == p) {
                Some(e) => e.1 += 1,
                None => by_p.push((p, 1)),
            }
        }
        by_p.sort_by_key(|&(p, c)| (c, p));
        let &(p_left, _) = by_p.last()?;
        let se = bloomlab_sketches::hll::standard_error(p_left);
        let lo = rows
            .iter()
            .map(|r| r.n as f64)
            .fold(f64::INFINITY, f64::min);
        let hi = rows.iter().map(|r| r.n as f64).fold(0.0, f64::max);
        let mut scales = Self {
            all,
            p_left,
            se,
            x: (lo / 1.5, hi * 1.5),
            ymax: 0.0,
            rmax: 0.0,
        };
        scales.ymax = scales
            .left()
            .flat_map(|(_, s)| s.iter().flat_map(|r| [r.bias_low.abs(), r.bias_high.abs()]))
            .filter(|v| v.is_finite())
            .fold(se * 1.5, f64::max)
            * 1.1;
        scales.rmax = rows
            .iter()
            .map(|r| r.rms_high / r.std_error_theory)
            .filter(|v| v.is_finite())
            .fold(1.5, f64::max)
            .min(20.0)
            * 1.05;
        Some(scales)
    }

    /// The sketches at the left panel's precision, in first-seen order.
    fn left(&self) -> impl Iterator<Item = &(String, Vec<&'r HllRow>)> {
        self.all
            .iter()
            .filter(|(_, s)| s[0].precision == self.p_left)
    }
}

/// Left panel: the bias of each sketch at `p_left` with its interval, over the shaded band of
/// plus/minus one stated standard error.
fn bias_panel(area: &Area, scales: &Scales) -> DrawResult {
    let ((x0, x1), se, ymax, p_left) = (scales.x, scales.se, scales.ymax, scales.p_left);
    let mut l = chart(
        area,
        &PANEL,
        Some(format!("bias at p = {p_left}")),
        axis(
            log_axis(x0, x1),
            "true distinct count n (log scale)",
            fmt::count_tick,
        ),
        axis(
            -ymax..ymax,
            "mean relative error (estimate / n - 1)",
            pct_tick,
        ),
    )?;
    let band = RGBColor(200, 200, 200);
    l.draw_series(std::iter::once(Rectangle::new(
        [(x0, -se), (x1, se)],
        band.mix(0.5).filled(),
    )))?
    .label(format!("+-1.04/sqrt(m) = +-{}", fmt::percent(se)))
    .legend(legend_rect(band));
    l.draw_series(LineSeries::new(
        [(x0, 0.0), (x1, 0.0)],
        BLACK.stroke_width(1),
    ))?;
    let count = scales.left().count();
    for (i, (name, s)) in scales.left().enumerate() {
        let color = palette(scales.all.iter().position(|(n, _)| n == name).unwrap_or(i));
        let shift = 1.0 + 0.04 * (i as f64 - (count as f64 - 1.0) / 2.0);
        let pts: Vec<(f64, f64)> = s.iter().map(|r| (r.n as f64 * shift, r.bias)).collect();
        l.draw_series(LineSeries::new(
            pts.iter().copied(),
            color.mix(0.6).stroke_width(1),
        ))?
        .label(format!("{name} ({})", s[0].estimator))
        .legend(legend_rect(color));
        l.draw_series(s.iter().map(|r| {
            ErrorBar::new_vertical(
                r.n as f64 * shift,
                r.bias_low,
                r.bias,
                r.bias_high,
                color.mix(0.8).stroke_width(1),
                5,
            )
        }))?;
        l.draw_series(pts.iter().map(|&pt| Circle::new(pt, 3, color.filled())))?;
    }
    draw_legend(&mut l, SeriesLabelPosition::LowerLeft)
}

/// Right panel: every sketch's RMS error over the stated standard error, with its interval, and
/// the line y = 1.
fn rms_panel(area: &Area, scales: &Scales) -> DrawResult {
    let ((x0, x1), rmax) = (scales.x, scales.rmax);
    let mut r = chart(
        area,
        &PANEL,
        Some("RMS error / stated standard error".to_string()),
        axis(
            log_axis(x0, x1),
            "true distinct count n (log scale)",
            fmt::count_tick,
        ),
        axis(
            0.0..rmax,
            "RMS relative error / (1.04 / sqrt(m))",
            fmt::tick,
        ),
    )?;
    let one = BLACK.stroke_width(2);
    r.draw_series(LineSeries::new([(x0, 1.0), (x1, 1.0)], one))?
        .label("stated standard error")
        .legend(legend_line(one));
    let count = scales.all.len();
    for (i, (name, s)) in scales.all.iter().enumerate() {
        let color = palette(i);
        let shift = 1.0 + 0.03 * (i as f64 - (count as f64 - 1.0) / 2.0);
        let pts: Vec<(f64, f64)> = s
            .iter()
            .map(|r| (r.n as f64 * shift, (r.rms_over_theory).min(rmax)))
            .collect();
        r.draw_series(LineSeries::new(
            pts.iter().copied(),
            color.mix(0.6).stroke_width(1),
        ))?
        .label(name.clone())
        .legend(legend_rect(color));
        r.draw_series(s.iter().map(|row| {
            let k = row.std_error_theory;
            ErrorBar::new_vertical(
                row.n as f64 * shift,
                (row.rms_low / k).min(rmax),
                (row.rms_over_theory).min(rmax),
                (row.rms_high / k).min(rmax),
                color.mix(0.8).stroke_width(1),
                5,
            )
        }))?;
        r.draw_series(pts.iter().map(|&pt| Circle::new(pt, 3, color.filled())))?;
    }
    draw_legend(&mut r, SeriesLabelPosition::UpperLeft)
}
