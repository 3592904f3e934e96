//! A library's two conformance pictures, drawn with plotters from its [`RatePoint`]s:
//! FPR against keys inserted (the over-fill clause's points) and FPR by key family (the
//! key-families clause's points). Both use log FPR axes, Clopper-Pearson bars at the plan's
//! confidence (1 - alpha, two-sided), and the promised p as a grey line. A rate of 0 cannot sit on
//! a log axis: it is drawn as an open circle at its interval's upper end. Without points (the
//! clause was not run, or construction failed) the picture says so.

use std::path::{Path, PathBuf};

use bloomlab_conform::verdict::RatePoint;
use bloomlab_conform::{Clause, Conformance};
use bloomlab_harness::stats::clopper_pearson;
use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::prelude::*;

use crate::plot::{frame, message_picture as message, render};
use crate::{ReportError, fmt};

const FONT: &str = "sans-serif";
const OBSERVED: RGBColor = RGBColor(31, 119, 180);
const THEORY: RGBColor = RGBColor(214, 39, 40);
const PROMISE: RGBColor = RGBColor(120, 120, 120);

use crate::plot::DrawResult;

/// One point to draw: where, the observed rate, its interval.
struct Rate {
    x: f64,
    observed: f64,
    low: f64,
    high: f64,
}

impl Rate {
    fn of(x: f64, p: &RatePoint, confidence: f64) -> Option<Rate> {
        if p.queries == 0 || p.false_positives > p.queries {
            return None;
        }
        let (low, high) = clopper_pearson(p.false_positives, p.queries, confidence);
        Some(Rate {
            x,
            observed: p.false_positives as f64 / p.queries as f64,
            low,
            high,
        })
    }

    /// Where the point is drawn: the observed rate, or the upper end for a rate of 0.
    fn shown(&self) -> f64 {
        if self.observed > 0.0 {
            self.observed
        } else {
            self.high
        }
    }
}

/// A log range covering every positive value, with margin; capped at 1.
fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return (1e-6, 1.0);
    }
    ((lo / 2.5).max(1e-12), (hi * 2.5).min(1.0))
}

/// A log FPR axis over [lo, hi] labelled at powers of ten, or at 1-2-5 steps when it spans under
/// 2.5 decades (plotters' own choice leaves a narrow range with one or two labels).
fn log_axis(lo: f64, hi: f64) -> WithKeyPoints<LogCoord<f64>> {
    let multiples = |steps: &[f64]| -> Vec<f64> {
        let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        (first..=last)
            .flat_map(|e| steps.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|v| *v >= lo && *v <= hi)
            .collect()
    };
    let bold = if (hi / lo).log10() < 2.5 {
        multiples(&[1.0, 2.0, 5.0])
    } else {
        multiples(&[1.0])
    };
    (lo..hi)
        .log_scale()
        .with_key_points(bold)
        .with_light_points(multiples(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]))
}

fn notes(confidence: f64) -> Vec<String> {
    vec![
        format!(
            "Bars: Clopper-Pearson interval at {:.4}% confidence (two-sided, the plan's 1 - alpha). \
             Grey line: the promised p.",
            confidence * 100.0
        ),
        "Open circles: no false positive observed (rate 0), drawn at the interval's upper end."
            .to_owned(),
    ]
}

/// Draws bars and points (open circles for a rate of 0) in `color`.
fn draw_rates<X, Y>(
    chart: &mut ChartContext<'_, BitMapBackend<'_>, Cartesian2d<X, Y>>,
    rates: &[Rate],
    floor: f64,
    color: RGBColor,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart.draw_series(rates.iter().map(|r| {
        ErrorBar::new_vertical(
            r.x,
            r.low.max(floor),
            r.shown(),
            r.high,
            color.stroke_width(2),
            10,
        )
    }))?;
    chart.draw_series(rates.iter().map(|r| {
        if r.observed > 0.0 {
            Circle::new((r.x, r.shown()), 5, color.filled())
        } else {
            Circle::new((r.x, r.shown()), 6, color.stroke_width(2))
        }
    }))?;
    Ok(())
}

/// `<stem>_fpr_vs_inserted.png`: the over-fill clause's rates against keys inserted (log x, log
/// y), the declared layout's theory as a dashed line where declared, the promise as a grey line.
pub fn fpr_vs_inserted(
    c: &Conformance,
    confidence: f64,
    path: &Path,
) -> Result<PathBuf, ReportError> {
    let title = format!(
        "{}: false-positive rate against keys inserted",
        c.subject.name
    );
    let mut points: Vec<&RatePoint> = c
        .points
        .iter()
        .filter(|p| p.clause == Clause::OverFill && p.inserted > 0)
        .collect();
    points.sort_by_key(|p| p.inserted);
    let rates: Vec<Rate> = points
        .iter()
        .filter_map(|p| Rate::of(p.inserted as f64, p, confidence))
        .collect();
    if rates.is_empty() {
        let why = match c.verdict(Clause::OverFill) {
            None => "The over-fill clause was not run.".to_owned(),
            Some(v) => format!("No rate measured: over-fill {}: {}", v.outcome, v.figure),
        };
        return message(path, &title, &why);
    }
    let theory: Vec<(f64, f64)> = points
        .iter()
        .filter_map(|p| {
            p.theory
                .filter(|t| *t > 0.0)
                .map(|t| (p.inserted as f64, t))
        })
        .collect();
    let (x0, x1) = (rates[0].x / 1.4, rates[rates.len() - 1].x * 1.4);
    let (y0, y1) = log_range(
        rates
            .iter()
            .flat_map(|r| [r.shown(), r.high, r.low])
            .chain(theory.iter().map(|t| t.1))
            .chain([c.p]),
    );
    let subtitle = format!(
        "built for n = {} at p = {}; {} non-member queries per point; family {}",
        c.n,
        fmt::tick(c.p),
        points[0].queries,
        points[0].family
    );
    let notes = notes(confidence);
    render(path, |root| {
        let area = frame(root, &title, &subtitle, &notes)?;
        let mut chart = ChartBuilder::on(&area)
            .margin(20)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d((x0..x1).log_scale(), log_axis(y0, y1))?;
        chart
            .configure_mesh()
            .x_desc("keys inserted (log scale)")
            .y_desc("false-positive rate (log scale)")
            .x_label_formatter(&|v| fmt::count_tick(*v))
            .y_label_formatter(&|v| fmt::tick(*v))
            .label_style((FONT, 17))
            .axis_desc_style((FONT, 20))
            .light_line_style(BLACK.mix(0.05))
            .draw()?;
        let promise = PROMISE.stroke_width(2);
        chart
            .draw_series(LineSeries::new([(x0, c.p), (x1, c.p)], promise))?
            .label(format!("promised p = {}", fmt::tick(c.p)))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], promise));
        if !theory.is_empty() {
            let style = THEORY.stroke_width(2);
            chart
                .draw_series(DashedLineSeries::new(theory.clone(), 10, 6, style))?
                .label("declared layout's theory")
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], style));
        }
        draw_rates(&mut chart, &rates, y0, OBSERVED)?;
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
            .label(format!("observed (the promised n is {})", c.n))
            .legend(|(x, y)| Circle::new((x + 9, y), 5, OBSERVED.filled()));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.5))
            .label_font((FONT, 17))
            .margin(12)
            .draw()?;
        Ok(())
    })
}

/// `<stem>_fpr_by_family.png`: the key-families clause's rates, one column per key family in the
/// order measured, with the promise as a grey line.
pub fn fpr_by_family(
    c: &Conformance,
    confidence: f64,
    path: &Path,
) -> Result<PathBuf, ReportError> {
    let title = format!("{}: false-positive rate by key family", c.subject.name);
    let mut points: Vec<&RatePoint> = c
        .points
        .iter()
        .filter(|p| p.clause == Clause::KeyFamilies)
        .collect();
    // The random-key rate the structured families are compared with: the promised-rate clause's,
    // when the key-families clause did not measure its own.
    if !points.is_empty() && !points.iter().any(|p| p.family == "random-u64") {
        let baseline = c.points.iter().find(|p| {
            p.clause == Clause::PromisedRate && p.family == "random-u64" && p.inserted == c.n
        });
        points.splice(0..0, baseline);
    }
    let mut families: Vec<&str> = Vec::new();
    for p in &points {
        if !families.contains(&p.family.as_str()) {
            families.push(&p.family);
        }
    }
    let rates: Vec<Rate> = points
        .iter()
        .filter_map(|p| {
            let i = families.iter().position(|f| *f == p.family)?;
            Rate::of(i as f64, p, confidence)
        })
        .collect();
    if rates.is_empty() {
        let why = match c.verdict(Clause::KeyFamilies) {
            None => "The key-families clause was not run.".to_owned(),
            Some(v) => format!("No rate measured: key-families {}: {}", v.outcome, v.figure),
        };
        return message(path, &title, &why);
    }
    let (y0, y1) = log_range(
        rates
            .iter()
            .flat_map(|r| [r.shown(), r.high, r.low])
            .chain([c.p]),
    );
    let subtitle = format!(
        "built for n = {} at p = {}, filled with n keys of each family; {} non-member queries each",
        c.n,
        fmt::tick(c.p),
        points[0].queries
    );
    let notes = notes(confidence);
    let x1 = families.len() as f64 - 0.5;
    let labels: Vec<String> = families.iter().map(|f| (*f).to_owned()).collect();
    render(path, |root| {
        let area = frame(root, &title, &subtitle, &notes)?;
        let mut chart = ChartBuilder::on(&area)
            .margin(20)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d(-0.5..x1, log_axis(y0, y1))?;
        let label = |v: &f64| {
            let i = v.round();
            if (v - i).abs() < 1e-6 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .x_desc("key family of members and non-members")
            .y_desc("false-positive rate (log scale)")
            .x_label_formatter(&label)
            // Ticks every half column (plotters picks round steps), labelled at whole ones.
            .x_labels(labels.len() * 2 + 1)
            .y_label_formatter(&|v| fmt::tick(*v))
            .disable_x_mesh()
            .label_style((FONT, 17))
            .axis_desc_style((FONT, 20))
            .light_line_style(BLACK.mix(0.05))
            .draw()?;
        let promise = PROMISE.stroke_width(2);
        chart
            .draw_series(LineSeries::new([(-0.5, c.p), (x1, c.p)], promise))?
            .label(format!("promised p = {}", fmt::tick(c.p)))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], promise));
        draw_rates(&mut chart, &rates, y0, OBSERVED)?;
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
            .label("observed")
            .legend(|(x, y)| Circle::new((x + 9, y), 5, OBSERVED.filled()));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.5))
            .label_font((FONT, 17))
            .margin(12)
            .draw()?;
        Ok(())
    })
}
