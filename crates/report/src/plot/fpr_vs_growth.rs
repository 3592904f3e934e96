//! `fpr_vs_growth.png`: the grow workload. Left: observed FPR (log) with its interval against the
//! growth factor G (log), each filter's theory dashed and the target p in grey. Right: bits per
//! member against G, with a static classic filter sized for the members held in black.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::view::shown_fpr;
use super::workload_view::WorkloadSlice;
use super::{
    Area, DrawResult, PANEL, axis, chart, draw_legend, frame, legend_line, legend_rect, log_axis,
    log_range, render,
};
use crate::{ReportError, fmt};

const TITLE: &str =
    "Growth: false-positive rate and memory as a filter receives G times its initial capacity";

/// Draws the picture at `path` from the grow slice.
pub fn draw(slice: &WorkloadSlice, path: &Path) -> Result<PathBuf, ReportError> {
    let subtitle = format!(
        "key set {}, initial capacity n0 = {} at target p = {}; {} filters",
        slice.key_set,
        slice.n,
        fmt::tick(slice.p),
        slice.series.len()
    );
    let notes = [
        "Bars: Clopper-Pearson interval. Dashed: each filter's theory at the members held (a scalable \
         filter's compound rate over its stages). Grey: the target p."
            .to_string(),
        "Open circles: no false positive observed, drawn at the interval's upper end. Right: black is a \
         static classic filter sized for the members held at p (from sizing)."
            .to_string(),
    ];
    let ranges = Ranges::of(slice);
    render(path, |root| {
        let area = frame(root, TITLE, &subtitle, &notes)?;
        let panels = area.split_evenly((1, 2));
        fpr_panel(&panels[0], slice, &ranges)?;
        memory_panel(&panels[1], slice, &ranges)
    })
}

/// The axis ranges of both panels, from every row of the slice.
struct Ranges {
    /// Growth factor (both panels' x).
    x: (f64, f64),
    /// False-positive rate (left y).
    fpr: (f64, f64),
    /// Bits per member (right y).
    bits: (f64, f64),
}

impl Ranges {
    fn of(slice: &WorkloadSlice) -> Self {
        let (x0, x1) = log_range(slice.rows.iter().map(|r| r.growth as f64), f64::INFINITY);
        let fpr = log_range(
            slice
                .rows
                .iter()
                .flat_map(|r| [r.ci_low, shown_fpr(r), r.ci_high, r.fpr_theory, r.p]),
            1.0,
        );
        let bits = log_range(
            slice
                .rows
                .iter()
                .flat_map(|r| [r.bits_per_member, r.static_bits_per_key]),
            f64::INFINITY,
        );
        Self {
            x: (x0.max(0.5), x1),
            fpr,
            bits,
        }
    }
}

/// Left panel: each filter's observed FPR with its interval, its theory dashed, the target grey.
fn fpr_panel(area: &Area, slice: &WorkloadSlice, ranges: &Ranges) -> DrawResult {
    let ((x0, x1), (y0, y1), p) = (ranges.x, ranges.fpr, slice.p);
    let mut left = chart(
        area,
        &PANEL,
        Some("false-positive rate".to_string()),
        axis(
            log_axis(x0, x1),
            "growth factor G = members / n0 (log scale)",
            fmt::count_tick,
        ),
        axis(
            log_axis(y0, y1),
            "false-positive rate (log scale)",
            fmt::tick,
        ),
    )?;
    let target = RGBColor(120, 120, 120).stroke_width(2);
    left.draw_series(LineSeries::new([(x0, p), (x1, p)], target))?
        .label(format!("target p = {}", fmt::tick(p)))
        .legend(legend_line(target));
    for (i, s) in slice.series.iter().enumerate() {
        let color = slice.color(i);
        let pts: Vec<(f64, f64)> = s
            .rows
            .iter()
            .map(|r| (r.growth as f64, shown_fpr(r)))
            .collect();
        left.draw_series(DashedLineSeries::new(
            s.rows
                .iter()
                .filter(|r| r.fpr_theory > 0.0)
                .map(|r| (r.growth as f64, r.fpr_theory)),
            8,
            6,
            color.mix(0.7).stroke_width(1),
        ))?;
        left.draw_series(LineSeries::new(
            pts.iter().copied(),
            color.mix(0.5).stroke_width(1),
        ))?;
        left.draw_series(s.rows.iter().map(|r| {
            ErrorBar::new_vertical(
                r.growth as f64,
                r.ci_low.max(y0),
                shown_fpr(r),
                r.ci_high,
                color.mix(0.8).stroke_width(1),
                6,
            )
        }))?;
        left.draw_series(s.rows.iter().map(|r| {
            let at = (r.growth as f64, shown_fpr(r));
            if r.false_positives == 0 {
                Circle::new(at, 5, color.stroke_width(2))
            } else {
                Circle::new(at, 4, color.filled())
            }
        }))?;
    }
    draw_legend(&mut left, SeriesLabelPosition::UpperLeft)
}

/// Right panel: bits per member of each filter, and of a static classic filter sized for the
/// members held; its legend names the filters of both panels.
fn memory_panel(area: &Area, slice: &WorkloadSlice, ranges: &Ranges) -> DrawResult {
    let ((x0, x1), (b0, b1)) = (ranges.x, ranges.bits);
    let mut right = chart(
        area,
        &PANEL,
        Some("memory".to_string()),
        axis(
            log_axis(x0, x1),
            "growth factor G = members / n0 (log scale)",
            fmt::count_tick,
        ),
        axis(
            log_axis(b0, b1),
            "bits per member held (log scale)",
            fmt::tick,
        ),
    )?;
    let mut static_line: Vec<(f64, f64)> = slice
        .rows
        .iter()
        .map(|r| (r.growth as f64, r.static_bits_per_key))
        .collect();
    static_line.sort_by(|a, b| a.0.total_cmp(&b.0));
    static_line.dedup_by(|a, b| a.0 == b.0);
    let static_style = BLACK.stroke_width(3);
    right
        .draw_series(LineSeries::new(static_line, static_style))?
        .label("static classic filter sized for the members held")
        .legend(legend_line(static_style));
    for (i, s) in slice.series.iter().enumerate() {
        let color = slice.color(i);
        let pts: Vec<(f64, f64)> = s
            .rows
            .iter()
            .map(|r| (r.growth as f64, r.bits_per_member))
            .collect();
        right
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?
            .label(s.label.clone())
            .legend(legend_rect(color));
        right.draw_series(pts.iter().map(|&pt| Circle::new(pt, 3, color.filled())))?;
    }
    // One legend names the filters of both panels, where the memory panel has room.
    draw_legend(&mut right, SeriesLabelPosition::LowerLeft)
}
