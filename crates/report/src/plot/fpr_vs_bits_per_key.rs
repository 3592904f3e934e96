//! `fpr_vs_bits_per_key.png`: observed FPR (log) against bits per key, each layout family's theory
//! curve (its rows' `fpr_theory`, dashed) and the information-theoretic bound
//! p = 2^(-bits per key). Shows the main key set at its most common n, filled as sized.

use std::path::{Path, PathBuf};

use bloomlab_harness::SweepRow;
use plotters::prelude::*;

use super::{
    FprSeries, SweepView, WHOLE, axis, chart, draw_fpr_series, draw_legend, frame, legend_line,
    log_axis, nothing_sized, render, zero_note,
};
use crate::{ReportError, fmt};

const TITLE: &str = "Observed false-positive rate vs memory (bits per key)";

/// Draws the picture at `path`. Errors: no rows at all (a picture that says why is drawn when
/// there are rows but none filled as sized), or the file cannot be written.
pub fn draw(view: &SweepView, path: &Path) -> Result<PathBuf, ReportError> {
    let (Some(key_set), Some((n, slice))) = (&view.key_set, &view.at_main_n) else {
        return nothing_sized(view, path, TITLE);
    };
    let subtitle = format!(
        "key set {key_set}, n = {n}, filled as sized; {} filters; dashed: each layout's theory",
        slice.series.len()
    );
    let notes = [
        format!(
            "Bars: Clopper-Pearson interval at {}. Black line: no filter of any kind can beat p = 2^(-bits per key) \
             (log2(1/p) bits per key).",
            slice.confidence_text()
        ),
        zero_note(slice),
        "Dashed: each family's layout-correct theory (fpr_theory) in order of bits per key. Filters are spread \
         +-0.15 bits per key, grouped by family, so bars do not overlap."
            .to_string(),
    ];
    let (bx0, bx1) = slice
        .rows
        .iter()
        .map(|r| r.bits_per_key)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let (x0, x1) = ((bx0 - 1.0).max(0.0), bx1 + 1.0);
    let (y0, y1) = slice.fpr_range(|r| vec![r.fpr_theory]);
    render(path, |root| {
        let area = frame(root, TITLE, &subtitle, &notes)?;
        let mut chart = chart(
            &area,
            &WHOLE,
            None,
            axis(x0..x1, "bits per key (filter bits / n)", fmt::tick),
            axis(
                log_axis(y0, y1),
                "false-positive rate (log scale)",
                fmt::tick,
            ),
        )?;
        let bound: Vec<(f64, f64)> = (0..=200)
            .map(|i| x0 + (x1 - x0) * f64::from(i) / 200.0)
            .map(|x| (x, 2f64.powf(-x)))
            .filter(|&(_, y)| y >= y0 && y <= y1)
            .collect();
        let bound_style = BLACK.stroke_width(2);
        chart
            .draw_series(LineSeries::new(bound, bound_style))?
            .label("lower bound p = 2^(-bits per key)")
            .legend(legend_line(bound_style));
        for (f, family) in slice.families.iter().enumerate() {
            let color = slice.color(family);
            // Families whose theory coincides (classic and textbook share the formula) stay
            // visible: each later line is drawn narrower on top of the earlier ones.
            let width = if f + 1 < slice.families.len() { 4 } else { 2 };
            let mut theory: Vec<(f64, f64)> = slice
                .family_rows(family)
                .filter(|r| r.fpr_theory > 0.0)
                .map(|r| (r.bits_per_key, r.fpr_theory))
                .collect();
            theory.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
            theory.dedup();
            chart
                .draw_series(DashedLineSeries::new(
                    theory,
                    10,
                    6,
                    color.stroke_width(width),
                ))?
                .label(format!("{family} theory"))
                .legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new([(0, 0), (7, 0)], color.stroke_width(2))
                        + PathElement::new([(11, 0), (18, 0)], color.stroke_width(2))
                });
        }
        // Filters of one (n, p) share nearly the same bits per key: spread them over 0.3 bits per
        // key, grouped by family, so their bars stay apart. Their points are not joined.
        let how = FprSeries {
            x: |offset: f64, r: &SweepRow| r.bits_per_key + 0.3 * offset,
            line_opacity: None,
        };
        draw_fpr_series(&mut chart, slice, y0, how, |_, _, _| Ok(()))?;
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}
