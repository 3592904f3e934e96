//! The four sweep pictures, drawn with plotters' bitmap backend from rows read back from the CSV.
//!
//! Each function draws one PNG of `WIDTH` x `HEIGHT` pixels. With up to ~50 filters per sweep,
//! series are coloured by layout family and the legend names the families (with their filter
//! counts); each picture fixes the coordinates it does not plot (key set, n, p) to the slice with
//! the most rows and says which in its subtitle. A row with no false positive has an observed rate
//! of 0, which a log axis cannot show: it is drawn as an open circle at its interval's upper end,
//! with its bar reaching down to the axis floor, and every picture's footnote says so.
//!
//! Text is rendered with DejaVu Sans embedded in the binary (plotters' `ab_glyph` backend), so the
//! pictures render the same on machines without system fonts or fontconfig.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use bloomlab_harness::SweepRow;
use bloomlab_harness::stats::median;
use plotters::coord::Shift;
use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::prelude::*;
use plotters::style::register_font;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::ReportError;
use crate::fmt;
use crate::select::{
    FloatKey, OverfillSlice, families_in_order, filters_in_order, main_key_set, main_n, main_p,
    overfill_slice, sized_rows,
};

/// Above this many filters, a picture stops joining each filter's points with lines: dozens of
/// overlapping lines hide the points, the intervals and the reference line.
const MAX_JOINED_FILTERS: usize = 8;

/// Picture size in pixels.
pub const WIDTH: u32 = 1400;
/// Picture height in pixels.
pub const HEIGHT: u32 = 900;

/// The font family every text element asks for; [`register_fonts`] maps it to DejaVu Sans.
const FONT: &str = "sans-serif";

type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;
type DrawResult = Result<(), Box<dyn Error>>;

/// Registers DejaVu Sans (regular and bold) with plotters under the generic family names, once
/// per process.
fn register_fonts() -> Result<(), ReportError> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            for family in ["sans-serif", "serif", "monospace"] {
                for (style, bytes) in [
                    (FontStyle::Normal, dejavu::sans::regular()),
                    (FontStyle::Bold, dejavu::sans::bold()),
                ] {
                    register_font(family, style, bytes).map_err(|_| {
                        format!("DejaVu Sans is not a valid font for family {family}")
                    })?;
                }
            }
            Ok(())
        })
        .clone()
        .map_err(ReportError::Font)
}

/// Draws a `WIDTH` x `HEIGHT` white picture at `path` with `draw`, then encodes it.
fn render(path: &Path, draw: impl FnOnce(&Area) -> DrawResult) -> Result<PathBuf, ReportError> {
    register_fonts()?;
    let plot_err = |e: Box<dyn Error>| ReportError::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(e.into()))?;
    draw(&root).map_err(plot_err)?;
    root.present().map_err(|e| plot_err(e.into()))?;
    Ok(path.to_path_buf())
}

/// Title, subtitle, and a footnote of up to three lines; returns the area left for the chart.
fn frame<'a>(
    root: &Area<'a>,
    title: &str,
    subtitle: &str,
    notes: &[String],
) -> Result<Area<'a>, Box<dyn Error>> {
    // ab_glyph draws a title flush with the area's top edge: leave room above it.
    let area = root.margin(14, 0, 0, 0);
    let area = area.titled(title, (FONT, 30).into_font().style(FontStyle::Bold))?;
    let area = area.titled(subtitle, (FONT, 19))?;
    let (_, h) = area.dim_in_pixel();
    let foot_h = 26 * notes.len() as u32 + 10;
    let (chart, foot) = area.split_vertically(h - foot_h);
    for (i, note) in notes.iter().enumerate() {
        foot.draw(&Text::new(
            note.clone(),
            (20, 4 + 26 * i as i32),
            (FONT, 17).into_font().color(&RGBColor(60, 60, 60)),
        ))?;
    }
    Ok(chart)
}

/// A picture that only says why there is nothing to plot (so a report never silently lacks one).
fn message_picture(path: &Path, title: &str, message: &str) -> Result<PathBuf, ReportError> {
    render(path, |root| {
        let area = root.margin(14, 0, 0, 0);
        let area = area.titled(title, (FONT, 30).into_font().style(FontStyle::Bold))?;
        let (w, h) = area.dim_in_pixel();
        area.draw(&Text::new(
            message.to_string(),
            (w as i32 / 2, h as i32 / 2),
            TextStyle::from((FONT, 22).into_font()).pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
        Ok(())
    })
}

/// Colour of a layout family: fixed for the known families, from a palette for others.
fn family_color(family: &str, families: &[String]) -> RGBColor {
    match family {
        "classic" => RGBColor(31, 119, 180),
        "blocked512" => RGBColor(255, 127, 14),
        "sbbf" => RGBColor(44, 160, 44),
        "textbook" => RGBColor(214, 39, 40),
        _ => {
            const OTHERS: [RGBColor; 5] = [
                RGBColor(148, 103, 189),
                RGBColor(140, 86, 75),
                RGBColor(227, 119, 194),
                RGBColor(188, 189, 34),
                RGBColor(23, 190, 207),
            ];
            let i = families.iter().position(|f| f == family).unwrap_or(0);
            OTHERS[i % OTHERS.len()]
        }
    }
}

/// The observed rate as drawn on a log axis: a zero count is drawn at the interval's upper end.
fn shown_fpr(r: &SweepRow) -> f64 {
    if r.false_positives == 0 {
        r.ci_high
    } else {
        r.fpr
    }
}

/// Offset in [-0.5, 0.5] of filter `i` of `count`, to spread overlapping bars apart along x.
fn spread(i: usize, count: usize) -> f64 {
    if count <= 1 {
        0.0
    } else {
        i as f64 / (count - 1) as f64 - 0.5
    }
}

/// The confidence level(s) of `rows`, as a percentage for captions.
fn confidence_text(rows: &[&SweepRow]) -> String {
    let mut levels: Vec<FloatKey> = rows.iter().map(|r| FloatKey(r.confidence)).collect();
    levels.sort();
    levels.dedup();
    levels
        .iter()
        .map(|l| fmt::percent(l.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Lowest and highest positive value, for a log axis that shows them all with some margin.
fn log_range(values: impl Iterator<Item = f64>, cap: f64) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return (1e-6, cap);
    }
    ((lo / 2.5).max(1e-12), (hi * 2.5).min(cap))
}

/// A log axis over [lo, hi] labelled at powers of ten, or at 1-2-5 steps when it spans under
/// 2.5 decades (plotters' own choice labels every 1..9 multiple there, and the labels collide),
/// with light grid lines at every 1..9 multiple.
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
    let light = multiples(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    (lo..hi)
        .log_scale()
        .with_key_points(bold)
        .with_light_points(light)
}

/// The legend line shared by the FPR pictures for rows with no false positive.
fn zero_note(any_zero: bool) -> String {
    if any_zero {
        "Open circles: no false positive observed (rate 0), drawn at the interval's upper end; \
         the bar runs down to the axis floor."
            .to_string()
    } else {
        "Every row drawn here observed at least one false positive (filled circles).".to_string()
    }
}

/// Draws one filter's points with interval bars, clipped at the axis floor `y_floor`.
fn draw_points<'a, X, Y>(
    chart: &mut ChartContext<'a, BitMapBackend<'a>, Cartesian2d<X, Y>>,
    points: &[(f64, &SweepRow)],
    color: RGBColor,
    y_floor: f64,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart.draw_series(points.iter().map(|&(x, r)| {
        ErrorBar::new_vertical(
            x,
            r.ci_low.max(y_floor),
            shown_fpr(r),
            r.ci_high,
            color.mix(0.8).stroke_width(1),
            6,
        )
    }))?;
    chart.draw_series(points.iter().map(|&(x, r)| {
        if r.false_positives == 0 {
            Circle::new((x, shown_fpr(r)), 5, color.stroke_width(2))
        } else {
            Circle::new((x, shown_fpr(r)), 4, color.filled())
        }
    }))?;
    Ok(())
}

fn legend_rect(color: RGBColor) -> impl Fn((i32, i32)) -> Rectangle<(i32, i32)> {
    move |(x, y)| Rectangle::new([(x, y - 6), (x + 18, y + 6)], color.filled())
}

fn family_label(family: &str, filters: &[(String, String)]) -> String {
    let count = filters.iter().filter(|f| f.0 == family).count();
    if count == 1 {
        let name = &filters.iter().find(|f| f.0 == family).expect("counted").1;
        format!("{family}: {name}")
    } else {
        format!("{family} ({count} filters)")
    }
}

fn draw_legend<'a, X, Y>(
    chart: &mut ChartContext<'a, BitMapBackend<'a>, Cartesian2d<X, Y>>,
    position: SeriesLabelPosition,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.5))
        .label_font((FONT, 17))
        .margin(12)
        .draw()?;
    Ok(())
}

/// `fpr_vs_target.png`: observed FPR against target p (log-log), one series per filter with its
/// confidence interval as a bar, and the line y = x. Shows the main key set at its most common n,
/// filled as sized.
pub fn plot_fpr_vs_target(rows: &[SweepRow], path: &Path) -> Result<PathBuf, ReportError> {
    let title = "Observed false-positive rate vs target p";
    let key_set = main_key_set(rows).ok_or_else(|| no_rows(path))?;
    let sized = sized_rows(rows, &key_set);
    let Some(n) = main_n(&sized) else {
        return message_picture(
            path,
            title,
            "No rows filled as sized (overfill 1) in this CSV.",
        );
    };
    let slice: Vec<&SweepRow> = sized.into_iter().filter(|r| r.n == n).collect();
    let filters = filters_in_order(&slice);
    let families = families_in_order(&filters);
    let subtitle = format!(
        "key set {key_set}, n = {n}, filled as sized; {} filters, coloured by layout family",
        filters.len()
    );
    let any_zero = slice.iter().any(|r| r.false_positives == 0);
    let notes = [
        format!(
            "Bars: Clopper-Pearson interval at {}. On the line y = x a filter delivers exactly its target; \
             above it, more false positives than promised.",
            confidence_text(&slice)
        ),
        zero_note(any_zero),
        "Filters are spread slightly left and right of their p, grouped by family, so bars do not overlap."
            .to_string(),
    ];
    let (x0, x1) = log_range(slice.iter().map(|r| r.p), 1.0);
    let (y0, y1) = log_range(
        slice
            .iter()
            .flat_map(|r| [r.ci_low, shown_fpr(r), r.ci_high, r.p]),
        1.0,
    );
    render(path, |root| {
        let area = frame(root, title, &subtitle, &notes)?;
        let mut chart = ChartBuilder::on(&area)
            .margin(20)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d(log_axis(x0, x1), log_axis(y0, y1))?;
        chart
            .configure_mesh()
            .x_desc("target false-positive rate p (log scale)")
            .y_desc("observed false-positive rate (log scale)")
            .x_label_formatter(&|v| fmt::tick(*v))
            .y_label_formatter(&|v| fmt::tick(*v))
            .label_style((FONT, 17))
            .axis_desc_style((FONT, 20))
            .light_line_style(BLACK.mix(0.05))
            .draw()?;
        let (d0, d1) = (x0.max(y0), x1.min(y1));
        chart
            .draw_series(LineSeries::new([(d0, d0), (d1, d1)], BLACK.stroke_width(2)))?
            .label("y = x: observed equals target")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK.stroke_width(2)));
        // Spread the filters over 0.12 decade around each p: enough to separate families' bars,
        // little enough that each cluster still reads as one p.
        let mut labelled = Vec::new();
        for (i, (family, filter)) in filters.iter().enumerate() {
            let color = family_color(family, &families);
            let factor = 10f64.powf(0.12 * spread(i, filters.len()));
            let mut points: Vec<(f64, &SweepRow)> = slice
                .iter()
                .filter(|r| &r.filter == filter)
                .map(|r| (r.p * factor, *r))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let series = chart.draw_series(LineSeries::new(
                points
                    .iter()
                    .filter(|_| filters.len() <= MAX_JOINED_FILTERS)
                    .map(|&(x, r)| (x, shown_fpr(r))),
                color.mix(0.35).stroke_width(1),
            ))?;
            if !labelled.contains(family) {
                labelled.push(family.clone());
                series
                    .label(family_label(family, &filters))
                    .legend(legend_rect(color));
            }
            draw_points(&mut chart, &points, color, y0)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })
}

/// `fpr_vs_bits_per_key.png`: observed FPR (log) against bits per key, each layout family's theory
/// curve (its rows' `fpr_theory`, dashed) and the information-theoretic bound p = 2^(-bits per key).
/// Shows the main key set at its most common n, filled as sized.
pub fn plot_fpr_vs_bits_per_key(rows: &[SweepRow], path: &Path) -> Result<PathBuf, ReportError> {
    let title = "Observed false-positive rate vs memory (bits per key)";
    let key_set = main_key_set(rows).ok_or_else(|| no_rows(path))?;
    let sized = sized_rows(rows, &key_set);
    let Some(n) = main_n(&sized) else {
        return message_picture(
            path,
            title,
            "No rows filled as sized (overfill 1) in this CSV.",
        );
    };
    let slice: Vec<&SweepRow> = sized.into_iter().filter(|r| r.n == n).collect();
    let filters = filters_in_order(&slice);
    let families = families_in_order(&filters);
    let subtitle = format!(
        "key set {key_set}, n = {n}, filled as sized; {} filters; dashed: each layout's theory",
        filters.len()
    );
    let any_zero = slice.iter().any(|r| r.false_positives == 0);
    let notes = [
        format!(
            "Bars: Clopper-Pearson interval at {}. Black line: no filter of any kind can beat p = 2^(-bits per key) \
             (log2(1/p) bits per key).",
            confidence_text(&slice)
        ),
        zero_note(any_zero),
        "Dashed: each family's layout-correct theory (fpr_theory) in order of bits per key. Filters are spread \
         +-0.15 bits per key, grouped by family, so bars do not overlap."
            .to_string(),
    ];
    let (bx0, bx1) = slice
        .iter()
        .map(|r| r.bits_per_key)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let (x0, x1) = ((bx0 - 1.0).max(0.0), bx1 + 1.0);
    let (y0, y1) = log_range(
        slice
            .iter()
            .flat_map(|r| [r.ci_low, shown_fpr(r), r.ci_high, r.fpr_theory]),
        1.0,
    );
    render(path, |root| {
        let area = frame(root, title, &subtitle, &notes)?;
        let mut chart = ChartBuilder::on(&area)
            .margin(20)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d(x0..x1, log_axis(y0, y1))?;
        chart
            .configure_mesh()
            .x_desc("bits per key (filter bits / n)")
            .y_desc("false-positive rate (log scale)")
            .x_label_formatter(&|v| fmt::tick(*v))
            .y_label_formatter(&|v| fmt::tick(*v))
            .label_style((FONT, 17))
            .axis_desc_style((FONT, 20))
            .light_line_style(BLACK.mix(0.05))
            .draw()?;
        let bound: Vec<(f64, f64)> = (0..=200)
            .map(|i| x0 + (x1 - x0) * f64::from(i) / 200.0)
            .map(|x| (x, 2f64.powf(-x)))
            .filter(|&(_, y)| y >= y0 && y <= y1)
            .collect();
        chart
            .draw_series(LineSeries::new(bound, BLACK.stroke_width(2)))?
            .label("lower bound p = 2^(-bits per key)")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK.stroke_width(2)));
        for (f, family) in families.iter().enumerate() {
            let color = family_color(family, &families);
            // Families whose theory coincides (classic and textbook share the formula) stay
            // visible: each later line is drawn narrower on top of the earlier ones.
            let width = if f + 1 < families.len() { 4 } else { 2 };
            let mut theory: Vec<(f64, f64)> = slice
                .iter()
                .filter(|r| r.layout.as_str() == family && r.fpr_theory > 0.0)
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
        let mut labelled = Vec::new();
        for (i, (family, filter)) in filters.iter().enumerate() {
            let color = family_color(family, &families);
            // Filters of one (n, p) share nearly the same bits per key: spread them over
            // 0.3 bits per key, grouped by family, so their bars stay apart.
            let dx = 0.3 * spread(i, filters.len());
            let points: Vec<(f64, &SweepRow)> = slice
                .iter()
                .filter(|r| &r.filter == filter)
                .map(|r| (r.bits_per_key + dx, *r))
                .collect();
            if !labelled.contains(family) {
                labelled.push(family.clone());
                chart
                    .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
                    .label(family_label(family, &filters))
                    .legend(legend_rect(color));
            }
            draw_points(&mut chart, &points, color, y0)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}

/// `lookup_ns_vs_n.png`: median lookup time per key against n (log x), present keys on the left
/// and absent keys on the right, one line per filter and one for `std::collections::HashSet`.
/// Shows the main key set at its most common p, filled as sized.
pub fn plot_lookup_ns_vs_n(rows: &[SweepRow], path: &Path) -> Result<PathBuf, ReportError> {
    let title = "Lookup time per key vs n: filters and std HashSet";
    let key_set = main_key_set(rows).ok_or_else(|| no_rows(path))?;
    let sized = sized_rows(rows, &key_set);
    let Some(p) = main_p(&sized) else {
        return message_picture(
            path,
            title,
            "No rows filled as sized (overfill 1) in this CSV.",
        );
    };
    let slice: Vec<&SweepRow> = sized.into_iter().filter(|r| r.p == p).collect();
    let filters = filters_in_order(&slice);
    let families = families_in_order(&filters);
    let subtitle = format!(
        "key set {key_set}, target p = {}, filled as sized; {} filters coloured by layout family; black: HashSet",
        fmt::tick(p),
        filters.len()
    );
    let notes = [
        "Times are medians of several passes over a pre-generated key batch, indicative only: \
         the criterion benches are the authority on speed."
            .to_string(),
        "HashSet: median over this slice's rows of the HashSet timed beside each filter on the same keys."
            .to_string(),
    ];
    let (x0, x1) = log_range(slice.iter().map(|r| r.n as f64), f64::INFINITY);
    let y1 = slice
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
    let mut ns: Vec<u64> = slice.iter().map(|r| r.n).collect();
    ns.sort_unstable();
    ns.dedup();
    render(path, |root| {
        let area = frame(root, title, &subtitle, &notes)?;
        let panels = area.split_evenly((1, 2));
        for (panel, present) in panels.iter().zip([true, false]) {
            let which = if present { "present" } else { "absent" };
            let filter_ns = |r: &SweepRow| {
                if present {
                    r.lookup_present_ns
                } else {
                    r.lookup_absent_ns
                }
            };
            let set_ns = |r: &SweepRow| {
                if present {
                    r.hashset_present_ns
                } else {
                    r.hashset_absent_ns
                }
            };
            let mut chart = ChartBuilder::on(panel)
                .caption(format!("{which} keys"), (FONT, 22))
                .margin(15)
                .x_label_area_size(55)
                .y_label_area_size(70)
                .build_cartesian_2d(log_axis(x0, x1), 0.0..y1)?;
            chart
                .configure_mesh()
                .x_desc("n, keys in the filter (log scale)")
                .y_desc(format!("ns per {which}-key lookup"))
                .x_label_formatter(&|v| fmt::count_tick(*v))
                .y_label_formatter(&|v| fmt::tick(*v))
                .label_style((FONT, 16))
                .axis_desc_style((FONT, 19))
                .light_line_style(BLACK.mix(0.05))
                .draw()?;
            let mut labelled = Vec::new();
            for (family, filter) in &filters {
                let color = family_color(family, &families);
                let mut points: Vec<(f64, f64)> = slice
                    .iter()
                    .filter(|r| &r.filter == filter)
                    .map(|r| (r.n as f64, filter_ns(r)))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                let series = chart.draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.mix(0.6).stroke_width(1),
                ))?;
                if !labelled.contains(family) {
                    labelled.push(family.clone());
                    series
                        .label(family_label(family, &filters))
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
                    let v = slice.iter().filter(|r| r.n == n).map(|r| set_ns(r));
                    (n as f64, median(v))
                })
                .collect();
            chart
                .draw_series(LineSeries::new(
                    hashset.iter().copied(),
                    BLACK.stroke_width(3),
                ))?
                .label("std HashSet, same keys")
                .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK.stroke_width(3)));
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

/// `fpr_vs_overfill.png`: observed FPR (log) and its theory against the overfill factor (keys
/// inserted / keys sized for), one series per filter, for the (key set, n, p) slice with the most
/// filters run at several overfill factors. Without such rows the picture says so.
pub fn plot_fpr_vs_overfill(rows: &[SweepRow], path: &Path) -> Result<PathBuf, ReportError> {
    let title = "False-positive rate when more (or fewer) keys are inserted than sized for";
    if rows.is_empty() {
        return Err(no_rows(path));
    }
    let Some(OverfillSlice {
        key_set,
        n,
        p,
        rows: slice,
    }) = overfill_slice(rows)
    else {
        return message_picture(
            path,
            title,
            "No filter in this CSV was run at several overfill factors (sweep --overfill 0.5,1,2,3).",
        );
    };
    let filters = filters_in_order(&slice);
    let families = families_in_order(&filters);
    let lines = if filters.len() <= MAX_JOINED_FILTERS {
        "solid: observed, dashed: theory"
    } else {
        "dashed: each family's median theory"
    };
    let subtitle = format!(
        "key set {key_set}, sized for n = {n} at p = {}; {} filters; {lines}",
        fmt::tick(p),
        filters.len()
    );
    let any_zero = slice.iter().any(|r| r.false_positives == 0);
    let notes = [
        format!(
            "Bars: Clopper-Pearson interval at {}. Dashed lines: layout-correct theory at the keys actually \
             inserted; grey line: the target p.",
            confidence_text(&slice)
        ),
        zero_note(any_zero),
        "Filters are spread slightly left and right of their overfill factor, grouped by family, so bars do not overlap."
            .to_string(),
    ];
    let mut factors: Vec<f64> = slice.iter().map(|r| r.overfill).collect();
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
    let (y0, y1) = log_range(
        slice
            .iter()
            .flat_map(|r| [r.ci_low, shown_fpr(r), r.ci_high, r.fpr_theory, r.p]),
        1.0,
    );
    render(path, |root| {
        let area = frame(root, title, &subtitle, &notes)?;
        let mut chart = ChartBuilder::on(&area)
            .margin(20)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d(x0..x1, log_axis(y0, y1))?;
        chart
            .configure_mesh()
            .x_desc("overfill factor: keys inserted / n sized for (1 = as sized)")
            .y_desc("false-positive rate (log scale)")
            .x_label_formatter(&|v| fmt::tick(*v))
            .y_label_formatter(&|v| fmt::tick(*v))
            .label_style((FONT, 17))
            .axis_desc_style((FONT, 20))
            .light_line_style(BLACK.mix(0.05))
            .draw()?;
        let grey = RGBColor(120, 120, 120);
        chart
            .draw_series(LineSeries::new([(x0, p), (x1, p)], grey.stroke_width(2)))?
            .label(format!("target p = {}", fmt::tick(p)))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], grey.stroke_width(2)));
        if filters.len() > MAX_JOINED_FILTERS {
            for family in &families {
                let color = family_color(family, &families);
                let theory: Vec<(f64, f64)> = factors
                    .iter()
                    .map(|&f| {
                        let v = slice
                            .iter()
                            .filter(|r| r.layout.as_str() == family && r.overfill == f)
                            .map(|r| r.fpr_theory);
                        (f, median(v))
                    })
                    .filter(|&(_, t)| t > 0.0)
                    .collect();
                chart.draw_series(DashedLineSeries::new(theory, 10, 6, color.stroke_width(2)))?;
            }
        }
        let mut labelled = Vec::new();
        for (i, (family, filter)) in filters.iter().enumerate() {
            let color = family_color(family, &families);
            let dx = width * spread(i, filters.len());
            let mut points: Vec<(f64, &SweepRow)> = slice
                .iter()
                .filter(|r| &r.filter == filter)
                .map(|r| (r.overfill + dx, *r))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let joined = filters.len() <= MAX_JOINED_FILTERS;
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
            let series = chart.draw_series(LineSeries::new(
                points
                    .iter()
                    .filter(|_| joined)
                    .map(|&(x, r)| (x, shown_fpr(r))),
                color.mix(0.45).stroke_width(1),
            ))?;
            if !labelled.contains(family) {
                labelled.push(family.clone());
                series
                    .label(family_label(family, &filters))
                    .legend(legend_rect(color));
            }
            draw_points(&mut chart, &points, color, y0)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })
}

fn no_rows(path: &Path) -> ReportError {
    ReportError::NoRows {
        path: path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{row, synthetic_rows, temp_dir};

    /// Decodes a PNG written by `render` into (width, height, RGB pixels).
    fn decode(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
        let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut reader = png::Decoder::new(std::io::BufReader::new(file))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb, "{}", path.display());
        let pixels = buf[..info.buffer_size()]
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        (info.width, info.height, pixels)
    }

    /// The picture has the promised size, ink in the title band (so the embedded font drew text)
    /// and ink of `color` somewhere (so series were drawn).
    fn assert_drawn(path: &Path, color: RGBColor) {
        let (w, h, pixels) = decode(path);
        assert_eq!((w, h), (WIDTH, HEIGHT), "{}", path.display());
        let title_ink = pixels[..(40 * w) as usize]
            .iter()
            .filter(|p| p[0] < 128 && p[1] < 128 && p[2] < 128)
            .count();
        assert!(
            title_ink > 200,
            "{}: {title_ink} dark pixels in the title band",
            path.display()
        );
        let series_ink = pixels
            .iter()
            .filter(|p| **p == [color.0, color.1, color.2])
            .count();
        assert!(
            series_ink > 50,
            "{}: {series_ink} pixels of colour {color:?}",
            path.display()
        );
    }

    #[test]
    fn every_plot_renders_text_and_series() {
        let rows = synthetic_rows();
        let dir = temp_dir("plots");
        let textbook = family_color("textbook", &[]);
        let classic = family_color("classic", &[]);
        for (name, draw) in [
            (
                "target.png",
                plot_fpr_vs_target as fn(&[SweepRow], &Path) -> _,
            ),
            ("bits.png", plot_fpr_vs_bits_per_key),
            ("lookup.png", plot_lookup_ns_vs_n),
            ("overfill.png", plot_fpr_vs_overfill),
        ] {
            let path = draw(&rows, &dir.join(name)).unwrap();
            assert_drawn(&path, textbook);
            assert_drawn(&path, classic);
        }
    }

    #[test]
    fn fifty_filters_render() {
        let rows = crate::testing::synthetic_rows_many();
        let dir = temp_dir("plots_many");
        let textbook = family_color("textbook", &[]);
        assert_drawn(
            &plot_fpr_vs_target(&rows, &dir.join("target.png")).unwrap(),
            textbook,
        );
        assert_drawn(
            &plot_fpr_vs_bits_per_key(&rows, &dir.join("bits.png")).unwrap(),
            textbook,
        );
        assert_drawn(
            &plot_lookup_ns_vs_n(&rows, &dir.join("lookup.png")).unwrap(),
            textbook,
        );
        assert_drawn(
            &plot_fpr_vs_overfill(&rows, &dir.join("overfill.png")).unwrap(),
            textbook,
        );
    }

    #[test]
    fn overfill_plot_without_overfill_rows_says_so() {
        let rows: Vec<SweepRow> = synthetic_rows()
            .into_iter()
            .filter(crate::select::as_sized)
            .collect();
        let dir = temp_dir("plots_no_overfill");
        let path = dir.join("overfill.png");
        plot_fpr_vs_overfill(&rows, &path).unwrap();
        let (_, _, pixels) = decode(&path);
        let ink = pixels.iter().filter(|p| p[0] < 128).count();
        assert!(ink > 500, "{ink} dark pixels: title and message expected");
    }

    #[test]
    fn single_row_renders() {
        let rows = [row("sbbf/xxh64", "sbbf", "url", 5_000, 0.05, 1.0)];
        let dir = temp_dir("plots_single");
        plot_fpr_vs_target(&rows, &dir.join("t.png")).unwrap();
        plot_fpr_vs_bits_per_key(&rows, &dir.join("b.png")).unwrap();
        plot_lookup_ns_vs_n(&rows, &dir.join("l.png")).unwrap();
    }

    #[test]
    fn no_rows_is_an_error_naming_the_path() {
        let dir = temp_dir("plots_empty");
        let path = dir.join("empty.png");
        let err = plot_fpr_vs_target(&[], &path).unwrap_err();
        assert!(matches!(err, ReportError::NoRows { .. }), "{err:?}");
        assert!(err.to_string().contains("empty.png"), "{err}");
    }

    #[test]
    fn unwritable_path_is_an_error_naming_the_path() {
        let dir = temp_dir("plots_unwritable");
        let path = dir.join("missing-dir").join("t.png");
        let err = plot_fpr_vs_target(&synthetic_rows(), &path).unwrap_err();
        assert!(err.to_string().contains("missing-dir"), "{err}");
    }
}
