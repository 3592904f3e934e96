//! `lookup_ns_vs_n.png`: median lookup time per key against n (log x), present keys on the left
//! and absent keys on the right, one line per filter and one for `std::collections::HashSet`.
//! Shows the main key set at its most common p, filled as sized.

use std::path::{Path, PathBuf};

use bloomlab_harness::SweepRow;
use bloomlab_harness::stats::median;
use plotters::prelude::*;

use super::{
    PANEL, SweepView, axis, chart, draw_legend, frame, legend_line, legend_rect, log_axis,
    log_range, nothing_sized, render,
};
use crate::{ReportError, fmt};

const TITLE: &str = "Lookup time per key vs n: filters and std HashSet";

/// Draws the picture at `path`. Errors: no rows at all (a picture that says why is drawn when
/// there are rows but none filled as sized), or the file cannot be written.
pub fn draw(view: &SweepView, path: &Path) -> Result<PathBuf, ReportError> {
    let (Some(key_set), Some((p, slice))) = (&view.key_set, &view.at_main_p) else {
        return nothing_sized(view, path, TITLE);
    };
    let subtitle = format!(
        "key set {key_set}, target p = {}, filled as sized; {} filters coloured by layout family; black: HashSet",
        fmt::tick(*p),
        slice.series.len()
    );
    let notes = [
        "Times are medians of several passes over a pre-generated key batch, indicative only: \
         the criterion benches are the authority on speed."
            .to_string(),
        "HashSet: median over this slice's rows of the HashSet timed beside each filter on the same keys."
            .to_string(),
    ];
    let (x0, x1) = log_range(slice.rows.iter().map(|r| r.n as f64), f64::INFINITY);
    let y1 = slice
        .rows
        .iter()
        .flat_map(|r| {
            [
                r.lookup_present_ns,
                r.lookup_absent_ns,
                r.hashset_present_ns,
                r.hashset_absent_ns,
            ]
        })
        .filter(|v| v.is_finite())
        .fold(1.0f64, f64::max)
        * 1.15;
    let mut ns: Vec<u64> = slice.rows.iter().map(|r| r.n).collect();
    ns.sort_unstable();
    ns.dedup();
    render(path, |root| {
        let area = frame(root, TITLE, &subtitle, &notes)?;
        let panels = area.split_evenly((1, 2));
        for (panel, present) in panels.iter().zip([true, false]) {
            let which = if present { "present" } else { "absent" };
            // Nanoseconds per lookup of the filter and of the HashSet beside it.
            type Ns = fn(&SweepRow) -> f64;
            let (filter_ns, set_ns): (Ns, Ns) = if present {
                (|r| r.lookup_present_ns, |r| r.hashset_present_ns)
            } else {
                (|r| r.lookup_absent_ns, |r| r.hashset_absent_ns)
            };
            let mut chart = chart(
                panel,
                &PANEL,
                Some(format!("{which} keys")),
                axis(
                    log_axis(x0, x1),
                    "n, keys in the filter (log scale)",
                    fmt::count_tick,
                ),
                axis(0.0..y1, format!("ns per {which}-key lookup"), fmt::tick),
            )?;
            for (i, series) in slice.series.iter().enumerate() {
                let color = slice.color(&series.family);
                let points: Vec<(f64, f64)> = series
                    .points(|r| r.n as f64)
                    .into_iter()
                    .map(|(x, r)| (x, filter_ns(r)))
                    .collect();
                let drawn = chart.draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.mix(0.6).stroke_width(1),
                ))?;
                if slice.opens_family(i) {
                    drawn
                        .label(slice.family_label(&series.family))
                        .legend(legend_rect(color));
                }
                chart.draw_series(
                    points
                        .iter()
                        .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
                )?;
            }
            let hashset: Vec<(f64, f64)> = ns
                .iter()
                .map(|&n| {
                    let v = slice.rows.iter().filter(|r| r.n == n).map(|r| set_ns(r));
                    (n as f64, median(v))
                })
                .collect();
            let hashset_style = BLACK.stroke_width(3);
            chart
                .draw_series(LineSeries::new(hashset.iter().copied(), hashset_style))?
                .label("std HashSet, same keys")
                .legend(legend_line(hashset_style));
            chart.draw_series(
                hashset
                    .iter()
                    .map(|&(x, y)| Circle::new((x, y), 5, BLACK.filled())),
            )?;
            // One legend serves both panels; the right one keeps its data unobscured.
            if present {
                draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
            }
        }
        Ok(())
    })
}
