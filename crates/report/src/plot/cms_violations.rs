//! `cms_violations.png`: Count-Min against its contract, by stream (uniform, then Zipf exponents).
//! Left: the share of items whose overcount exceeded `epsilon N` (log), with Clopper-Pearson bars,
//! against `delta`. Right: the largest overcount seen, as a fraction of `epsilon N`.

use std::path::{Path, PathBuf};

use bloomlab_harness::sketch::CmsRow;
use plotters::prelude::*;

use super::{PANEL, axis, chart, draw_legend, frame, legend_line, legend_rect, log_axis, render};
use crate::sketches::{palette, series};
use crate::{ReportError, fmt};

const TITLE: &str = "Count-Min: items overcounted by more than epsilon N, against delta";

fn exponent_tick(x: f64) -> String {
    if x.abs() < 1e-9 {
        "0 (uniform)".into()
    } else {
        fmt::tick(x)
    }
}

/// Draws the picture at `path`.
pub fn draw(rows: &[CmsRow], path: &Path) -> Result<PathBuf, ReportError> {
    let Some(first) = rows.first() else {
        return Err(ReportError::NoRows {
            path: path.to_path_buf(),
        });
    };
    let all = series(rows, |r| r.sketch.clone());
    let delta = first.delta;
    let subtitle = format!(
        "epsilon = {}, delta = {}: {} x {} counters; streams of N = {} draws over {} items, {} trials \
         each; every item compared",
        fmt::tick(first.epsilon),
        fmt::tick(delta),
        first.width,
        first.depth,
        fmt::count_tick(first.total as f64),
        fmt::count_tick(first.universe as f64),
        first.trials
    );
    let notes = [
        "Left: violation share with its Clopper-Pearson interval over all items of all trials (nominal: \
         items of one sketch share counters). Open circles: no violation, drawn at the upper end."
            .to_string(),
        "Right: the largest overcount of any item, as a fraction of the bound epsilon N; above 1 is a \
         violation. No item was ever undercounted (the sweep fails otherwise)."
            .to_string(),
    ];
    let xs: Vec<f64> = rows.iter().map(|r| r.exponent).collect();
    let x0 = xs.iter().copied().fold(f64::INFINITY, f64::min) - 0.15;
    let x1 = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max) + 0.15;
    let floor = rows
        .iter()
        .map(|r| r.share_high)
        .filter(|v| *v > 0.0)
        .fold(delta, f64::min)
        / 10.0;
    let top = rows.iter().map(|r| r.share_high).fold(delta, f64::max) * 3.0;
    let omax = rows.iter().map(|r| r.max_over_bound).fold(1.2, f64::max) * 1.1;
    render(path, |root| {
        let area = frame(root, TITLE, &subtitle, &notes)?;
        let panels = area.split_evenly((1, 2));
        let mut l = chart(
            &panels[0],
            &PANEL,
            Some("violation share".to_string()),
            axis(x0..x1, "Zipf exponent s of the stream", exponent_tick),
            axis(
                log_axis(floor, top.min(1.0)),
                "share of items with overcount > epsilon N (log scale)",
                fmt::tick,
            ),
        )?;
        let d = RGBColor(200, 30, 30).stroke_width(2);
        l.draw_series(LineSeries::new([(x0, delta), (x1, delta)], d))?
            .label(format!("delta = {}", fmt::tick(delta)))
            .legend(legend_line(d));
        let count = all.len();
        for (i, (name, s)) in all.iter().enumerate() {
            let color = palette(i);
            let dx = 0.2 * (i as f64 / (count.max(2) - 1) as f64 - 0.5);
            let shown = |r: &CmsRow| {
                if r.violations == 0 {
                    r.share_high
                } else {
                    r.share
                }
            };
            l.draw_series(std::iter::once(Circle::new(
                (x0 - 1.0, 1.0),
                0,
                color.filled(),
            )))?
            .label(name.clone())
            .legend(legend_rect(color));
            l.draw_series(s.iter().map(|r| {
                ErrorBar::new_vertical(
                    r.exponent + dx,
                    r.share_low.max(floor),
                    shown(r),
                    r.share_high,
                    color.mix(0.8).stroke_width(1),
                    5,
                )
            }))?;
            l.draw_series(s.iter().map(|r| {
                let at = (r.exponent + dx, shown(r));
                if r.violations == 0 {
                    Circle::new(at, 5, color.stroke_width(2))
                } else {
                    Circle::new(at, 4, color.filled())
                }
            }))?;
        }
        draw_legend(&mut l, SeriesLabelPosition::UpperRight)?;

        let mut r = chart(
            &panels[1],
            &PANEL,
            Some("largest overcount / epsilon N".to_string()),
            axis(x0..x1, "Zipf exponent s of the stream", exponent_tick),
            axis(0.0..omax, "largest overcount / (epsilon N)", fmt::tick),
        )?;
        let one = BLACK.stroke_width(2);
        r.draw_series(LineSeries::new([(x0, 1.0), (x1, 1.0)], one))?
            .label("the bound epsilon N")
            .legend(legend_line(one));
        for (i, (_, s)) in all.iter().enumerate() {
            let color = palette(i);
            let dx = 0.2 * (i as f64 / (count.max(2) - 1) as f64 - 0.5);
            r.draw_series(s.iter().map(|row| {
                Circle::new((row.exponent + dx, row.max_over_bound), 4, color.filled())
            }))?;
        }
        draw_legend(&mut r, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}
