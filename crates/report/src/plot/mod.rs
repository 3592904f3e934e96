//! The sweep pictures (four of static rows, one each of churn and grow rows), drawn with plotters' bitmap backend from rows read back from the CSV.
//!
//! [`SweepView`] selects each picture's rows once; each picture has its own small module with a
//! `draw(view, path)`, and this module holds what they share: the frame (title, subtitle,
//! footnotes), the axes, the legend, the family colours and the points with interval bars.
//!
//! Each picture is `WIDTH` x `HEIGHT` pixels. With up to ~50 filters per sweep, series are coloured
//! by layout family and the legend names the families (with their filter counts); each picture
//! fixes the coordinates it does not plot (key set, n, p) to the slice with the most rows and says
//! which in its subtitle. A row with no false positive has an observed rate of 0, which a log axis
//! cannot show: it is drawn as an open circle at its interval's upper end, with its bar reaching
//! down to the axis floor, and every FPR picture's footnote says so.
//!
//! Text is rendered with DejaVu Sans embedded in the binary (plotters' `ab_glyph` backend), so the
//! pictures render the same on machines without system fonts or fontconfig.

pub mod churn_rounds;
pub mod cms_violations;
pub mod fpr_vs_bits_per_key;
pub mod fpr_vs_growth;
pub mod fpr_vs_overfill;
pub mod fpr_vs_target;
pub mod hll_error_vs_n;
pub mod hll_pitchfork;
pub mod lookup_ns_vs_n;
pub mod roundtrips;
mod view;
mod workload_view;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use bloomlab_harness::SweepRow;
use plotters::coord::Shift;
use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::register_font;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::ReportError;
pub use view::SweepView;
use view::{Slice, shown_fpr};
pub use workload_view::{WorkloadSeries, WorkloadSlice, WorkloadView};

/// Picture size in pixels.
pub const WIDTH: u32 = 1400;
/// Picture height in pixels.
pub const HEIGHT: u32 = 900;

/// The font family every text element asks for; [`register_fonts`] maps it to DejaVu Sans.
const FONT: &str = "sans-serif";

pub(crate) type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;
type Chart<'a, X, Y> = ChartContext<'a, BitMapBackend<'a>, Cartesian2d<X, Y>>;
pub(crate) type DrawResult = Result<(), Box<dyn Error>>;

/// `fpr_vs_target.png` from `rows`; see [`fpr_vs_target::draw`].
pub fn plot_fpr_vs_target(rows: &[SweepRow], path: &Path) -> Result<PathBuf, ReportError> {
    fpr_vs_target::draw(&SweepView::new(rows), path)
}

/// `fpr_vs_bits_per_key.png` from `rows`; see [`fpr_vs_bits_per_key::draw`].
pub fn plot_fpr_vs_bits_per_key(rows: &[SweepRow], path: &Path) -> Result<PathBuf, ReportError> {
    fpr_vs_bits_per_key::draw(&SweepView::new(rows), path)
}

/// `lookup_ns_vs_n.png` from `rows`; see [`lookup_ns_vs_n::draw`].
pub fn plot_lookup_ns_vs_n(rows: &[SweepRow], path: &Path) -> Result<PathBuf, ReportError> {
    lookup_ns_vs_n::draw(&SweepView::new(rows), path)
}

/// `fpr_vs_overfill.png` from `rows`; see [`fpr_vs_overfill::draw`].
pub fn plot_fpr_vs_overfill(rows: &[SweepRow], path: &Path) -> Result<PathBuf, ReportError> {
    fpr_vs_overfill::draw(&SweepView::new(rows), path)
}

/// Registers DejaVu Sans (regular and bold) with plotters under the generic family names, once
/// per process. Public so that other crates drawing with plotters (crates/scenarios) render text
/// the same way.
pub fn register_fonts() -> Result<(), ReportError> {
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

/// Draws a `WIDTH` x `HEIGHT` white picture with `draw`, then writes it to `path` as a PNG.
pub(crate) fn render(
    path: &Path,
    draw: impl FnOnce(&Area) -> DrawResult,
) -> Result<PathBuf, ReportError> {
    register_fonts()?;
    let plot_err = |e: Box<dyn Error>| ReportError::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut rgb = vec![0u8; WIDTH as usize * HEIGHT as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| plot_err(e.into()))?;
        draw(&root).map_err(plot_err)?;
        root.present().map_err(|e| plot_err(e.into()))?;
    }
    write_png(path, (WIDTH, HEIGHT), &rgb).map_err(plot_err)?;
    Ok(path.to_path_buf())
}

/// Writes `rgb`, a picture of `size` (width, height) pixels in 8-bit RGB, rows top down, to `path`
/// as a PNG. Encoded with the `png` crate rather than through plotters' `image` encoder, which
/// would bring the `image` crate and its JPEG and BMP codecs into every build for one format.
pub(crate) fn write_png(
    path: &Path,
    (width, height): (u32, u32),
    rgb: &[u8],
) -> Result<(), Box<dyn Error>> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()?;
    std::fs::write(path, &bytes)?;
    Ok(())
}

/// The title band every picture starts with; returns the area below it.
fn titled<'a>(root: &Area<'a>, title: &str) -> Result<Area<'a>, Box<dyn Error>> {
    // ab_glyph draws a title flush with the area's top edge: leave room above it.
    let area = root.margin(14, 0, 0, 0);
    Ok(area.titled(title, (FONT, 30).into_font().style(FontStyle::Bold))?)
}

/// Title, subtitle, and a footnote of up to three lines; returns the area left for the chart.
pub(crate) fn frame<'a>(
    root: &Area<'a>,
    title: &str,
    subtitle: &str,
    notes: &[String],
) -> Result<Area<'a>, Box<dyn Error>> {
    let area = titled(root, title)?.titled(subtitle, (FONT, 19))?;
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
pub(crate) fn message_picture(
    path: &Path,
    title: &str,
    message: &str,
) -> Result<PathBuf, ReportError> {
    render(path, |root| {
        let area = titled(root, title)?;
        let (w, h) = area.dim_in_pixel();
        area.draw(&Text::new(
            message.to_string(),
            (w as i32 / 2, h as i32 / 2),
            TextStyle::from((FONT, 22).into_font()).pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
        Ok(())
    })
}

/// The message picture for a view whose as-sized slice is empty, or the no-rows error.
fn nothing_sized(view: &SweepView, path: &Path, title: &str) -> Result<PathBuf, ReportError> {
    if view.key_set.is_none() {
        return Err(no_rows(path));
    }
    message_picture(
        path,
        title,
        "No rows filled as sized (overfill 1) in this CSV.",
    )
}

fn no_rows(path: &Path) -> ReportError {
    ReportError::NoRows {
        path: path.to_path_buf(),
    }
}

/// Frame and text sizes of a chart: a whole picture, or one of two side-by-side panels.
struct ChartStyle {
    margin: u32,
    x_label_area: u32,
    y_label_area: u32,
    label_size: u32,
    desc_size: u32,
}

const WHOLE: ChartStyle = ChartStyle {
    margin: 20,
    x_label_area: 60,
    y_label_area: 90,
    label_size: 17,
    desc_size: 20,
};

const PANEL: ChartStyle = ChartStyle {
    margin: 15,
    x_label_area: 55,
    y_label_area: 70,
    label_size: 16,
    desc_size: 19,
};

/// One axis: its coordinates, its description (with unit or scale) and its tick labels.
struct Axis<R> {
    range: R,
    desc: String,
    tick: fn(f64) -> String,
}

fn axis<R>(range: R, desc: impl Into<String>, tick: fn(f64) -> String) -> Axis<R> {
    Axis {
        range,
        desc: desc.into(),
        tick,
    }
}

/// Builds a chart on `area` with an optional caption and draws its mesh: both axes described and
/// labelled, light grid lines.
fn chart<'a, X, Y>(
    area: &Area<'a>,
    style: &ChartStyle,
    caption: Option<String>,
    x: Axis<X>,
    y: Axis<Y>,
) -> Result<Chart<'a, X::CoordDescType, Y::CoordDescType>, Box<dyn Error>>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut builder = ChartBuilder::on(area);
    if let Some(caption) = caption {
        builder.caption(caption, (FONT, 22));
    }
    let mut chart = builder
        .margin(style.margin)
        .x_label_area_size(style.x_label_area)
        .y_label_area_size(style.y_label_area)
        .build_cartesian_2d(x.range, y.range)?;
    chart
        .configure_mesh()
        .x_desc(x.desc)
        .y_desc(y.desc)
        .x_label_formatter(&|v| (x.tick)(*v))
        .y_label_formatter(&|v| (y.tick)(*v))
        .label_style((FONT, style.label_size))
        .axis_desc_style((FONT, style.desc_size))
        .light_line_style(BLACK.mix(0.05))
        .draw()?;
    Ok(chart)
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

/// Offset in [-0.5, 0.5] of filter `i` of `count`, to spread overlapping bars apart along x.
fn spread(i: usize, count: usize) -> f64 {
    if count <= 1 {
        0.0
    } else {
        i as f64 / (count - 1) as f64 - 0.5
    }
}

/// The footnote shared by the FPR pictures about rows with no false positive.
fn zero_note(slice: &Slice) -> String {
    if slice.any_zero() {
        "Open circles: no false positive observed (rate 0), drawn at the interval's upper end; \
         the bar runs down to the axis floor."
            .to_string()
    } else {
        "Every row drawn here observed at least one false positive (filled circles).".to_string()
    }
}

/// Legend mark of a family: a filled square.
fn legend_rect(color: RGBColor) -> impl Fn((i32, i32)) -> Rectangle<(i32, i32)> {
    move |(x, y)| Rectangle::new([(x, y - 6), (x + 18, y + 6)], color.filled())
}

/// Legend mark of a reference line: a short solid line.
fn legend_line(style: ShapeStyle) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new([(x, y), (x + 18, y)], style)
}

fn draw_legend<X, Y>(chart: &mut Chart<X, Y>, position: SeriesLabelPosition) -> DrawResult
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

/// How an FPR picture places and joins each filter's points.
struct FprSeries<P> {
    /// The x of a row, given its filter's offset in [-0.5, 0.5] (see [`spread`]).
    x: P,
    /// Opacity of the line joining a filter's points, if they are joined (with few filters).
    line_opacity: Option<f64>,
}

/// Draws every filter of `slice` as points with interval bars clipped at the axis floor
/// `y_floor`, in legend order, each family labelled once; `before` draws anything of a filter
/// that belongs under its points.
fn draw_fpr_series<'a, X, Y, P>(
    chart: &mut Chart<'a, X, Y>,
    slice: &Slice,
    y_floor: f64,
    how: FprSeries<P>,
    mut before: impl FnMut(&mut Chart<'a, X, Y>, RGBColor, &[(f64, &SweepRow)]) -> DrawResult,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
    P: Fn(f64, &SweepRow) -> f64,
{
    let count = slice.series.len();
    for (i, series) in slice.series.iter().enumerate() {
        let color = slice.color(&series.family);
        let offset = spread(i, count);
        let points = series.points(|r| (how.x)(offset, r));
        before(chart, color, &points)?;
        let line: Vec<(f64, f64)> = match how.line_opacity {
            Some(_) if slice.joined() => points.iter().map(|&(x, r)| (x, shown_fpr(r))).collect(),
            _ => Vec::new(),
        };
        let opacity = how.line_opacity.unwrap_or(1.0);
        let drawn = chart.draw_series(LineSeries::new(line, color.mix(opacity).stroke_width(1)))?;
        if slice.opens_family(i) {
            drawn
                .label(slice.family_label(&series.family))
                .legend(legend_rect(color));
        }
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
    }
    Ok(())
}

#[cfg(test)]
mod tests;
