//! `fpr_vs_overfill.png`: observed FPR (log) and its theory against the overfill factor (keys
//! inserted / keys sized for), one series per filter, for the (key set, n, p) slice with the most
//! filters run at several overfill factors. Without such rows the picture says so.

use std::path::{Path, PathBuf};

use bloomlab_harness::SweepRow;
use bloomlab_harness::stats::median;
use plotters::prelude::*;

use super::view::OverfillView;
use super::{
    FprSeries, SweepView, WHOLE, axis, chart, draw_fpr_series, draw_legend, frame, legend_line,
    log_axis, message_picture, no_rows, render, zero_note,
};
use crate::{ReportError, fmt};

const TITLE: &str = "False-positive rate when more (or fewer) keys are inserted than sized for";

/// Draws the picture at `path`. Errors: no rows at all (a picture that says why is drawn when no
/// filter was run at several overfill factors), or the file cannot be written.
pub fn draw(view: &SweepView, path: &Path) -> Result<PathBuf, ReportError> {
    if view.key_set.is_none() {
        return Err(no_rows(path));
    }
    let Some(OverfillView {
        key_set,
        n,
        p,
        slice,
    }) = &view.overfill
    else {
        return message_picture(
            path,
            TITLE,
            "No filter in this CSV was run at several overfill factors (sweep --overfill 0.5,1,2,3).",
        );
    };
    let p = *p;
    let joined = slice.joined();
    let lines = if joined {
        "solid: observed, dashed: theory"
    } else {
        "dashed: each family's median theory"
    };
    let subtitle = format!(
        "key set {key_set}, sized for n = {n} at p = {}; {} filters; {lines}",
        fmt::tick(p),
        slice.series.len()
    );
    let notes = [
        format!(
            "Bars: Clopper-Pearson interval at {}. Dashed lines: layout-correct theory at the keys actually \
             inserted; grey line: the target p.",
            slice.confidence_text()
        ),
        zero_note(slice),
        "Filters are spread slightly left and right of their overfill factor, grouped by family, so bars do not overlap."
            .to_string(),
    ];
    let mut factors: Vec<f64> = slice.rows.iter().map(|r| r.overfill).collect();
    factors.sort_by(f64::total_cmp);
    factors.dedup();
    let gap = factors
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    let width = 0.15 * gap;
    let (x0, x1) = (
        factors[0] - gap * 0.5,
        factors[factors.len() - 1] + gap * 0.5,
    );
    let (y0, y1) = slice.fpr_range(|r| vec![r.fpr_theory, r.p]);
    render(path, |root| {
        let area = frame(root, TITLE, &subtitle, &notes)?;
        let mut chart = chart(
            &area,
            &WHOLE,
            None,
            axis(
                x0..x1,
                "overfill factor: keys inserted / n sized for (1 = as sized)",
                fmt::tick,
            ),
            axis(
                log_axis(y0, y1),
                "false-positive rate (log scale)",
                fmt::tick,
            ),
        )?;
        let target = RGBColor(120, 120, 120).stroke_width(2);
        chart
            .draw_series(LineSeries::new([(x0, p), (x1, p)], target))?
            .label(format!("target p = {}", fmt::tick(p)))
            .legend(legend_line(target));
        if !joined {
            for family in &slice.families {
                let theory: Vec<(f64, f64)> = factors
                    .iter()
                    .map(|&f| {
                        let v = slice
                            .family_rows(family)
                            .filter(|r| r.overfill == f)
                            .map(|r| r.fpr_theory);
                        (f, median(v))
                    })
                    .filter(|&(_, t)| t > 0.0)
                    .collect();
                chart.draw_series(DashedLineSeries::new(
                    theory,
                    10,
                    6,
                    slice.color(family).stroke_width(2),
                ))?;
            }
        }
        let how = FprSeries {
            x: |offset: f64, r: &SweepRow| r.overfill + width * offset,
            line_opacity: Some(0.45),
        };
        // With few filters, each filter's theory is drawn under its own points.
        draw_fpr_series(&mut chart, slice, y0, how, |chart, color, points| {
            if joined {
                chart.draw_series(DashedLineSeries::new(
                    points
                        .iter()
                        .filter(|(_, r)| r.fpr_theory > 0.0)
                        .map(|&(x, r)| (x, r.fpr_theory)),
                    8,
                    6,
                    color.mix(0.7).stroke_width(1),
                ))?;
            }
            Ok(())
        })?;
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })
}
