//! `fpr_vs_target.png`: observed FPR against target p (log-log), one series per filter with its
//! confidence interval as a bar, and the line y = x. Shows the main key set at its most common n,
//! filled as sized.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::{
    FprSeries, SweepView, WHOLE, axis, chart, draw_fpr_series, draw_legend, frame, legend_line,
    log_axis, log_range, nothing_sized, render, zero_note,
};
use crate::{ReportError, fmt};

const TITLE: &str = "Observed false-positive rate vs target p";

/// Draws the picture at `path`. Errors: no rows at all (a picture that says why is drawn when
/// there are rows but none filled as sized), or the file cannot be written.
pub fn draw(view: &SweepView, path: &Path) -> Result<PathBuf, ReportError> {
    let (Some(key_set), Some((n, slice))) = (&view.key_set, &view.at_main_n) else {
        return nothing_sized(view, path, TITLE);
    };
    let subtitle = format!(
        "key set {key_set}, n = {n}, filled as sized; {} filters, coloured by layout family",
        slice.series.len()
    );
    let notes = [
        format!(
            "Bars: Clopper-Pearson interval at {}. On the line y = x a filter delivers exactly its target; \
             above it, more false positives than promised.",
            slice.confidence_text()
        ),
        zero_note(slice),
        "Filters are spread slightly left and right of their p, grouped by family, so bars do not overlap."
            .to_string(),
    ];
    let (x0, x1) = log_range(slice.rows.iter().map(|r| r.p), 1.0);
    let (y0, y1) = slice.fpr_range(|r| vec![r.p]);
    render(path, |root| {
        let area = frame(root, TITLE, &subtitle, &notes)?;
        let mut chart = chart(
            &area,
            &WHOLE,
            None,
            axis(
                log_axis(x0, x1),
                "target false-positive rate p (log scale)",
                fmt::tick,
            ),
            axis(
                log_axis(y0, y1),
                "observed false-positive rate (log scale)",
                fmt::tick,
            ),
        )?;
        let (d0, d1) = (x0.max(y0), x1.min(y1));
        let diagonal = BLACK.stroke_width(2);
        chart
            .draw_series(LineSeries::new([(d0, d0), (d1, d1)], diagonal))?
            .label("y = x: observed equals target")
            .legend(legend_line(diagonal));
        // Spread the filters over 0.12 decade around each p: enough to separate families' bars,
        // little enough that each cluster still reads as one p.
        let how = FprSeries {
            x: |offset: f64, r: &bloomlab_harness::SweepRow| r.p * 10f64.powf(0.12 * offset),
            line_opacity: Some(0.35),
        };
        draw_fpr_series(&mut chart, slice, y0, how, |_, _, _| Ok(()))?;
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })
}
