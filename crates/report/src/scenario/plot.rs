//! One small picture type the scenario reports share: side-by-side panels of line series against a
//! common kind of x axis, with optional horizontal reference lines, drawn with plotters' bitmap
//! backend and the embedded DejaVu Sans, from the rows the CSV holds.

use std::path::Path;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::output::{discard, staged_path};
use super::{Result, write_err};

/// One line series.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points (x, y).
    pub points: Vec<(f64, f64)>,
    /// Colour index into the palette.
    pub color: usize,
}

/// A horizontal reference line.
#[derive(Debug, Clone)]
pub struct HLine {
    /// Legend text.
    pub name: String,
    /// Its y.
    pub y: f64,
}

/// One panel.
#[derive(Debug, Clone)]
pub struct Panel {
    /// Caption.
    pub title: String,
    /// X axis label (with unit).
    pub x_label: String,
    /// Y axis label (with unit).
    pub y_label: String,
    /// Logarithmic y axis (values <= 0 are left out).
    pub log_y: bool,
    /// The series.
    pub series: Vec<Series>,
    /// Reference lines (dashed, black).
    pub hlines: Vec<HLine>,
}

const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Draws `panels` side by side under `title` into a PNG at `path` (700 px wide per panel); in an
/// output directory prepared by [`super::output::prepare_dir`] the picture is staged, and appears
/// with the report's other files.
pub fn draw(path: &Path, title: &str, panels: &[Panel]) -> Result<()> {
    let staged = staged_path(path)?;
    let drawn = draw_to(staged.as_deref().unwrap_or(path), path, title, panels);
    if drawn.is_err() && staged.is_some() {
        discard(path);
    }
    drawn
}

/// Draws into `file`; errors name `path`, the file the user asked for.
fn draw_to(file: &Path, path: &Path, title: &str, panels: &[Panel]) -> Result<()> {
    crate::plot::register_fonts().map_err(|e| write_err(path, e))?;
    let width = 700 * panels.len().max(1) as u32;
    let size = (width, 560);
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| write_err(path, e))?;
        let root = root
            .titled(title, ("sans-serif", 24))
            .map_err(|e| write_err(path, e))?;
        let areas = root.split_evenly((1, panels.len().max(1)));
        for (panel, area) in panels.iter().zip(areas.iter()) {
            draw_panel(panel, area).map_err(|e| write_err(path, e))?;
        }
        root.present().map_err(|e| write_err(path, e))?;
    }
    crate::plot::write_png(file, size, &rgb).map_err(|e| write_err(path, e))
}

type DrawResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// Whether a log axis (`log_y`) or a linear one can show `y`.
fn shown(log_y: bool, y: f64) -> bool {
    y.is_finite() && (!log_y || y > 0.0)
}

/// The x and y ranges that hold every point and reference line the panel's axis can show, with
/// defaults for an empty panel.
fn extent(panel: &Panel) -> ((f64, f64), (f64, f64)) {
    let keep = |&(_, y): &(f64, f64)| shown(panel.log_y, y);
    let points = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(keep);
    let lines = panel.hlines.iter().map(|h| (f64::NAN, h.y)).filter(keep);
    let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY);
    for (x, y) in points.chain(lines) {
        if x.is_finite() {
            x0 = x0.min(x);
            x1 = x1.max(x);
        }
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if !y0.is_finite() {
        (y0, y1) = (if panel.log_y { 1e-6 } else { 0.0 }, 1.0);
    }
    ((x0, x1), (y0, y1))
}

fn draw_panel(
    panel: &Panel,
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
) -> DrawResult {
    let ((x0, x1), (y0, y1)) = extent(panel);
    let mut chart = ChartBuilder::on(area);
    chart
        .caption(&panel.title, ("sans-serif", 18))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(80);
    if panel.log_y {
        let (lo, hi) = (y0 / 2.0, y1 * 2.0);
        let mut c = chart.build_cartesian_2d(x0..x1, (lo..hi).log_scale())?;
        c.configure_mesh()
            .x_desc(&panel.x_label)
            .y_desc(&panel.y_label)
            .y_label_formatter(&|v| format!("{v:.1e}"))
            .draw()?;
        draw_lines(&mut c, panel, (x0, x1))
    } else {
        let pad = (y1 - y0).abs().max(1e-12) * 0.08;
        let lo = if y0 >= 0.0 { 0.0 } else { y0 - pad };
        let mut c = chart.build_cartesian_2d(x0..x1, lo..y1 + pad)?;
        c.configure_mesh()
            .x_desc(&panel.x_label)
            .y_desc(&panel.y_label)
            .draw()?;
        draw_lines(&mut c, panel, (x0, x1))
    }
}

/// Draws the panel's series (lines with dots), its reference lines (dashed, black, across
/// `x0..x1`) and the legend on a chart of either kind of y axis.
fn draw_lines<'a, Y>(
    c: &mut ChartContext<'a, BitMapBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    panel: &Panel,
    (x0, x1): (f64, f64),
) -> DrawResult
where
    Y: Ranged<ValueType = f64>,
{
    for s in &panel.series {
        let col = PALETTE[s.color % PALETTE.len()];
        // A log axis leaves out what it cannot show; a linear one gets the points as given.
        let p: Vec<(f64, f64)> = if panel.log_y {
            let keep = |&(_, y): &(f64, f64)| shown(true, y);
            s.points.iter().copied().filter(keep).collect()
        } else {
            s.points.clone()
        };
        c.draw_series(LineSeries::new(p.clone(), col.stroke_width(2)))?
            .label(&s.name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], col.stroke_width(2)));
        c.draw_series(p.iter().map(|&q| Circle::new(q, 3, col.filled())))?;
    }
    for h in &panel.hlines {
        c.draw_series(DashedLineSeries::new(
            vec![(x0, h.y), (x1, h.y)],
            8,
            5,
            BLACK.stroke_width(1),
        ))?
        .label(&h.name)
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two panels, one of each kind of y axis, with a point a log axis must leave out.
    fn sample() -> Vec<Panel> {
        let series = |color| Series {
            name: format!("series {color}"),
            points: vec![(1.0, 0.5), (2.0, 0.02), (3.0, 0.0), (4.0, 0.3)],
            color,
        };
        let hlines = vec![HLine {
            name: "reference".into(),
            y: 0.1,
        }];
        vec![
            Panel {
                title: "linear".into(),
                x_label: "day".into(),
                y_label: "share".into(),
                log_y: false,
                series: vec![series(0), series(1)],
                hlines: hlines.clone(),
            },
            Panel {
                title: "log".into(),
                x_label: "day".into(),
                y_label: "rate".into(),
                log_y: true,
                series: vec![series(2), series(7)],
                hlines,
            },
        ]
    }

    #[test]
    fn draws_a_png_of_the_panels_side_by_side() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("panels.png");
        draw(&path, "two panels", &sample()).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
        // IHDR: 700 px per panel, 560 high.
        assert_eq!(&bytes[16..24], &[0, 0, 5, 120, 0, 0, 2, 48]);
    }
}
