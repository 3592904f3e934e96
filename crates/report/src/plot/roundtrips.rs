//! `roundtrips.png`: keys per second (log) against keys per round trip (log), one line per target
//! and operation, with each cell's slowest-to-fastest repetition as a bar; the in-memory filter's
//! rate as a dashed horizontal line per operation.

use std::path::{Path, PathBuf};

use bloomlab_harness::schema::roundtrip::{RoundTripOp, RoundTripRow, Target};
use plotters::prelude::*;

use super::{WHOLE, axis, chart, draw_legend, frame, legend_line, log_axis, log_range, render};
use crate::{ReportError, fmt};

const TITLE: &str = "A filter in Redis: keys per second against keys per round trip";

fn style(target: Target, op: RoundTripOp) -> ShapeStyle {
    let color = match target {
        Target::Memory => RGBColor(40, 40, 40),
        Target::Server => RGBColor(31, 119, 180),
        Target::Cluster => RGBColor(214, 39, 40),
    };
    match op {
        RoundTripOp::Insert => color.stroke_width(2),
        RoundTripOp::Lookup => color.mix(0.55).stroke_width(3),
    }
}

/// Draws the picture at `path` from `rows` (as [`bloomlab_harness::schema::roundtrip::aggregate`] makes
/// them). Errors when no row has a round trip.
pub fn draw(rows: &[RoundTripRow], path: &Path) -> Result<PathBuf, ReportError> {
    let remote: Vec<&RoundTripRow> = rows.iter().filter(|r| r.per_round_trip > 0).collect();
    if remote.is_empty() {
        return Err(ReportError::NoRows {
            path: path.to_path_buf(),
        });
    }
    let reps = rows.iter().map(|r| r.reps).max().unwrap_or(0);
    let keys = remote.first().map_or(0, |r| r.keys);
    let subtitle = format!(
        "classic/xxh3/km/flat; per cell {} repetitions; points: median, bars: slowest to fastest repetition",
        reps
    );
    let notes = [format!(
        "Dashed: the same filter in memory (no round trip). One client thread, server and client on the same host ({} keys per cell in Redis).",
        keys
    )];
    let (x0, x1) = log_range(
        remote.iter().map(|r| f64::from(r.per_round_trip)),
        f64::INFINITY,
    );
    let (x0, x1) = (x0.max(0.5), x1);
    let (y0, y1) = log_range(
        rows.iter()
            .flat_map(|r| [r.keys_per_second_min, r.keys_per_second_max]),
        f64::INFINITY,
    );
    render(path, |root| {
        let area = frame(root, TITLE, &subtitle, &notes)?;
        let mut c = chart(
            &area,
            &WHOLE,
            None,
            axis(
                log_axis(x0, x1),
                "keys per round trip (pipeline length, log scale)",
                fmt::count_tick,
            ),
            axis(
                log_axis(y0, y1),
                "keys per second (log scale)",
                fmt::count_tick,
            ),
        )?;
        for r in rows.iter().filter(|r| r.target == Target::Memory) {
            let s = style(Target::Memory, r.op);
            c.draw_series(DashedLineSeries::new(
                [(x0, r.keys_per_second), (x1, r.keys_per_second)],
                10,
                6,
                s,
            ))?
            .label(format!("{}, {}", Target::Memory.label(), r.op.label()))
            .legend(legend_line(s));
        }
        for target in [Target::Server, Target::Cluster] {
            for op in [RoundTripOp::Insert, RoundTripOp::Lookup] {
                let mut cell: Vec<&&RoundTripRow> = remote
                    .iter()
                    .filter(|r| r.target == target && r.op == op)
                    .collect();
                if cell.is_empty() {
                    continue;
                }
                cell.sort_by_key(|r| r.per_round_trip);
                let s = style(target, op);
                let pts: Vec<(f64, f64)> = cell
                    .iter()
                    .map(|r| (f64::from(r.per_round_trip), r.keys_per_second))
                    .collect();
                c.draw_series(LineSeries::new(pts.iter().copied(), s))?
                    .label(format!("{}, {}", target.label(), op.label()))
                    .legend(legend_line(s));
                c.draw_series(cell.iter().map(|r| {
                    ErrorBar::new_vertical(
                        f64::from(r.per_round_trip),
                        r.keys_per_second_min,
                        r.keys_per_second,
                        r.keys_per_second_max,
                        s,
                        8,
                    )
                }))?;
                c.draw_series(pts.iter().map(|&p| Circle::new(p, 4, s.color.filled())))?;
            }
        }
        draw_legend(&mut c, SeriesLabelPosition::LowerRight)?;
        Ok(())
    })
}
