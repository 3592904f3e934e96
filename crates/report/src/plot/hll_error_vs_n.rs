//! `hll_error_vs_n.png`: HyperLogLog accuracy against the true cardinality n (log). Left: each
//! sketch's relative error at the most common precision, its mean (bias) with interval bars and
//! the shaded band of plus/minus one standard error `1.04 / sqrt(m)` about zero. Right: every
//! sketch's RMS relative error divided by `1.04 / sqrt(m)`, with chi-square interval bars, and
//! the line y = 1 where the stated standard error is met.

use std::path::{Path, PathBuf};

use bloomlab_harness::sketch::HllRow;
use plotters::prelude::*;

use super::{PANEL, axis, chart, draw_legend, frame, legend_line, legend_rect, log_axis, render};
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
    let all = series(rows, |r| r.sketch.clone());
    // The precision with the most sketches (ties: the larger p) fills the left panel.
    let mut by_p: Vec<(u8, usize)> = Vec::new();
    for (_, s) in &all {
        let p = s[0].precision;
        match by_p.iter_mut().find(|(q, _)| *q == p) {
            Some(e) => e.1 += 1,
            None => by_p.push((p, 1)),
        }
    }
    by_p.sort_by_key(|&(p, c)| (c, p));
    let Some(&(p_left, _)) = by_p.last() else {
        return Err(ReportError::NoRows {
            path: path.to_path_buf(),
        });
    };
    let se = bloomlab_sketches::hll::standard_error(p_left);
    let left: Vec<&(String, Vec<&HllRow>)> = all
        .iter()
        .filter(|(_, s)| s[0].precision == p_left)
        .collect();
    let trials = rows.iter().map(|r| r.trials).max().unwrap_or(0);
    let subtitle = format!(
        "{} sketches, up to {} trials per point (seeded distinct keys); left: precision p = {p_left} \
         (m = {}, 1.04 / sqrt(m) = {})",
        all.len(),
        trials,
        1u64 << p_left,
        fmt::percent(se)
    );
    let notes = [
        "Left: mean relative error (bias) with its Student-t interval; grey band: +-1.04/sqrt(m), \
         where about 68% of single estimates should fall."
            .to_string(),
        "Right: RMS relative error / (1.04/sqrt(m)) with chi-square intervals; 1 = the stated error. \
         Below about 2.5 m linear counting is more accurate than the stated error."
            .to_string(),
    ];
    let (x0, x1) = {
        let lo = rows
            .iter()
            .map(|r| r.n as f64)
            .fold(f64::INFINITY, f64::min);
        let hi = rows.iter().map(|r| r.n as f64).fold(0.0, f64::max);
        (lo / 1.5, hi * 1.5)
    };
    let ymax = left
        .iter()
        .flat_map(|(_, s)| s.iter().flat_map(|r| [r.bias_low.abs(), r.bias_high.abs()]))
        .filter(|v| v.is_finite())
        .fold(se * 1.5, f64::max)
        * 1.1;
    let rmax = rows
        .iter()
        .map(|r| r.rms_high / r.std_error_theory)
        .filter(|v| v.is_finite())
        .fold(1.5, f64::max)
        .min(20.0)
        * 1.05;
    render(path, |root| {
        let area = frame(root, TITLE, &subtitle, &notes)?;
        let panels = area.split_evenly((1, 2));
        let mut l = chart(
            &panels[0],
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
        let count = left.len();
        for (i, (name, s)) in left.iter().enumerate() {
            let color = palette(all.iter().position(|(n, _)| n == name).unwrap_or(i));
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
        draw_legend(&mut l, SeriesLabelPosition::LowerLeft)?;

        let mut r = chart(
            &panels[1],
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
        let count = all.len();
        for (i, (name, s)) in all.iter().enumerate() {
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
        draw_legend(&mut r, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    })
}
