//! The pictures render text and series for typical, many-filter, single-row and empty sweeps.

use super::view::family_color;
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
    let view = SweepView::new(&[]);
    for (name, draw) in [
        (
            "target.png",
            fpr_vs_target::draw as fn(&SweepView, &Path) -> _,
        ),
        ("bits.png", fpr_vs_bits_per_key::draw),
        ("lookup.png", lookup_ns_vs_n::draw),
        ("overfill.png", fpr_vs_overfill::draw),
    ] {
        let err = draw(&view, &dir.join(name)).unwrap_err();
        assert!(matches!(err, ReportError::NoRows { .. }), "{name}: {err:?}");
        assert!(err.to_string().contains(name), "{err}");
    }
}

#[test]
fn as_sized_plots_without_as_sized_rows_say_so() {
    let rows: Vec<SweepRow> = synthetic_rows()
        .into_iter()
        .filter(|r| !crate::select::as_sized(r))
        .collect();
    let view = SweepView::new(&rows);
    assert!(view.at_main_n.is_none() && view.at_main_p.is_none());
    let dir = temp_dir("plots_no_sized");
    for (name, draw) in [
        (
            "target.png",
            fpr_vs_target::draw as fn(&SweepView, &Path) -> _,
        ),
        ("bits.png", fpr_vs_bits_per_key::draw),
        ("lookup.png", lookup_ns_vs_n::draw),
    ] {
        let (_, _, pixels) = decode(&draw(&view, &dir.join(name)).unwrap());
        let ink = pixels.iter().filter(|p| p[0] < 128).count();
        assert!(
            ink > 500,
            "{name}: {ink} dark pixels: title and message expected"
        );
    }
}

/// The view fixes each picture's coordinates once: the main key set at its most common n (ties:
/// the larger) and p (ties: nearest 1%), and the overfill slice; each filter's rows are grouped
/// once, in legend order.
#[test]
fn the_view_slices_and_groups_rows_once() {
    let rows = synthetic_rows();
    let view = SweepView::new(&rows);
    assert_eq!(view.key_set.as_deref(), Some("random-u64"));
    let (n, by_p) = view.at_main_n.as_ref().unwrap();
    assert_eq!(*n, 100_000);
    let (p, by_n) = view.at_main_p.as_ref().unwrap();
    assert_eq!(*p, 0.01);
    let overfill = view.overfill.as_ref().unwrap();
    assert_eq!(
        (overfill.key_set.as_str(), overfill.n, overfill.p),
        ("random-u64", 100_000, 0.01)
    );
    for (what, slice, rows_per_filter) in [
        ("across p", by_p, 3),
        ("across n", by_n, 2),
        ("across overfill", &overfill.slice, 4),
    ] {
        let filters: Vec<&str> = slice.series.iter().map(|s| s.filter.as_str()).collect();
        assert_eq!(
            filters,
            [
                "classic/fnv1a/edh/flat",
                "classic/xxh3/km/flat",
                "blocked512/xxh3",
                "sbbf/xxh64",
                "textbook-fnv1a-i32"
            ],
            "{what}: legend order"
        );
        assert_eq!(
            slice.families,
            ["classic", "blocked512", "sbbf", "textbook"],
            "{what}"
        );
        let opening: Vec<bool> = (0..5).map(|i| slice.opens_family(i)).collect();
        assert_eq!(opening, [true, false, true, true, true], "{what}");
        assert_eq!(slice.family_label("classic"), "classic (2 filters)");
        assert_eq!(slice.family_label("sbbf"), "sbbf: sbbf/xxh64");
        assert_eq!(slice.family_rows("classic").count(), 2 * rows_per_filter);
        for series in &slice.series {
            assert_eq!(
                series.rows.len(),
                rows_per_filter,
                "{what}: {}",
                series.filter
            );
            assert!(
                series
                    .rows
                    .iter()
                    .all(|r| r.filter.to_string() == series.filter)
            );
        }
        let grouped: usize = slice.series.iter().map(|s| s.rows.len()).sum();
        assert_eq!(grouped, slice.rows.len(), "{what}: every row in one series");
        assert!(slice.joined(), "{what}: 5 filters are joined");
    }
    assert!(
        by_p.rows
            .iter()
            .all(|r| r.n == 100_000 && r.key_set == "random-u64")
    );
    assert!(
        by_n.rows
            .iter()
            .all(|r| r.p == 0.01 && r.key_set == "random-u64")
    );

    let many = crate::testing::synthetic_rows_many();
    let view = SweepView::new(&many);
    assert!(!view.at_main_n.as_ref().unwrap().1.joined(), "51 filters");
}

/// `write_reports` draws every picture from one view; the per-picture functions build their own
/// from the rows: the pictures are the same either way.
#[test]
fn one_view_draws_the_same_pictures_as_the_rows() {
    let rows = synthetic_rows();
    let view = SweepView::new(&rows);
    let dir = temp_dir("plots_view");
    for (name, from_view, from_rows) in [
        (
            "target",
            fpr_vs_target::draw as fn(&SweepView, &Path) -> _,
            plot_fpr_vs_target as fn(&[SweepRow], &Path) -> _,
        ),
        ("bits", fpr_vs_bits_per_key::draw, plot_fpr_vs_bits_per_key),
        ("lookup", lookup_ns_vs_n::draw, plot_lookup_ns_vs_n),
        ("overfill", fpr_vs_overfill::draw, plot_fpr_vs_overfill),
    ] {
        let a = from_view(&view, &dir.join(&format!("{name}-view.png"))).unwrap();
        let b = from_rows(&rows, &dir.join(&format!("{name}-rows.png"))).unwrap();
        assert!(
            std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
            "{name}: pictures differ"
        );
    }
}

#[test]
fn unwritable_path_is_an_error_naming_the_path() {
    let dir = temp_dir("plots_unwritable");
    let path = dir.join("missing-dir").join("t.png");
    let err = plot_fpr_vs_target(&synthetic_rows(), &path).unwrap_err();
    assert!(err.to_string().contains("missing-dir"), "{err}");
}
