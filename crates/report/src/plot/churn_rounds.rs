//! `churn_rounds.png`: the churn workload. Left: observed FPR (log) with its interval against the
//! round, each series' theory dashed. Right: false negatives among the members held after each
//! round, with their Clopper-Pearson upper bound (a correct design must stay at 0).

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::view::shown_fpr;
use super::workload_view::WorkloadSlice;
use super::{PANEL, axis, chart, draw_legend, frame, legend_rect, log_axis, log_range, render};
use crate::{ReportError, fmt};

const TITLE: &str =
    "Churn: false positives and false negatives as members are removed and replaced";

/// Draws the picture at `path` from the churn slice.
pub fn draw(slice: &WorkloadSlice, path: &Path) -> Result<PathBuf, ReportError> {
    let churn = slice.rows.first().map_or(0.0, |r| r.churn);
    let subtitle = format!(
        "key set {}, n = {} at p = {}; each round removes {}% of the members and inserts as many fresh keys",
        slice.key_set,
        slice.n,
        fmt::tick(slice.p),
        churn * 100.0
    );
    let notes = [
        "Left: bars are Clopper-Pearson intervals on never-inserted keys (removed keys are never sampled); \
         dashed: theory at the members held. Open circles: no false positive observed."
            .to_string(),
        "Right: members not found after the round (false negatives); round 0 is the filled filter \
         before any removal. Hostile removes remove never-inserted keys that test positive."
            .to_string(),
    ];
    let last = slice.rows.iter().map(|r| r.round).max().unwrap_or(1).max(1) as f64;
    let (x0, x1) = (-0.5, last + 0.5);
    let (y0, y1) = log_range(
        slice
            .rows
            .iter()
            .flat_map(|r| [r.ci_low, shown_fpr(r), r.ci_high, r.fpr_theory]),
        1.0,
    );
    let fn_max = slice
        .rows
        .iter()
        .map(|r| r.false_negatives)
        .max()
        .unwrap_or(0)
        .max(1) as f64
        * 1.15;
    render(path, |root| {
        let area = frame(root, TITLE, &subtitle, &notes)?;
        let panels = area.split_evenly((1, 2));
        let mut left = chart(
            &panels[0],
            &PANEL,
            Some("false-positive rate".to_string()),
            axis(x0..x1, "round", fmt::count_tick),
            axis(
                log_axis(y0, y1),
                "false-positive rate (log scale)",
                fmt::tick,
            ),
        )?;
        let count = slice.series.len();
        for (i, s) in slice.series.iter().enumerate() {
            let color = slice.color(i);
            let dx = super::spread(i, count) * 0.3;
            left.draw_series(DashedLineSeries::new(
                s.rows.iter().map(|r| (r.round as f64, r.fpr_theory)),
                8,
                6,
                color.mix(0.7).stroke_width(1),
            ))?;
            left.draw_series(LineSeries::new(
                s.rows.iter().map(|r| (r.round as f64 + dx, shown_fpr(r))),
                color.mix(0.5).stroke_width(1),
            ))?
            .label(s.label.clone())
            .legend(legend_rect(color));
            left.draw_series(s.rows.iter().map(|r| {
                ErrorBar::new_vertical(
                    r.round as f64 + dx,
                    r.ci_low.max(y0),
                    shown_fpr(r),
                    r.ci_high,
                    color.mix(0.8).stroke_width(1),
                    6,
                )
            }))?;
            left.draw_series(s.rows.iter().map(|r| {
                let at = (r.round as f64 + dx, shown_fpr(r));
                if r.false_positives == 0 {
                    Circle::new(at, 5, color.stroke_width(2))
                } else {
                    Circle::new(at, 4, color.filled())
                }
            }))?;
        }
        draw_legend(&mut left, SeriesLabelPosition::UpperLeft)?;

        let mut right = chart(
            &panels[1],
            &PANEL,
            Some("false negatives".to_string()),
            axis(x0..x1, "round", fmt::count_tick),
            axis(
                0.0..fn_max,
                "members not found (false negatives)",
                fmt::count_tick,
            ),
        )?;
        for (i, s) in slice.series.iter().enumerate() {
            let color = slice.color(i);
            let dx = super::spread(i, count) * 0.3;
            let pts: Vec<(f64, f64)> = s
                .rows
                .iter()
                .map(|r| (r.round as f64 + dx, r.false_negatives as f64))
                .collect();
            right.draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?;
            right.draw_series(pts.iter().map(|&pt| Circle::new(pt, 4, color.filled())))?;
        }
        Ok(())
    })
}
