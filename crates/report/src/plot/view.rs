//! The one view of a sweep that every picture draws from: the rows sliced and grouped per filter
//! once, so no picture selects its own rows.

use bloomlab_harness::SweepRow;
use plotters::style::RGBColor;

use crate::fmt;
use crate::select::{
    FloatKey, OverfillSlice, families_in_order, filters_in_order, main_key_set, main_n, main_p,
    overfill_slice, sized_rows,
};

/// Above this many filters, a picture stops joining each filter's points with lines: dozens of
/// overlapping lines hide the points, the intervals and the reference line.
const MAX_JOINED_FILTERS: usize = 8;

/// The slices of a sweep the four pictures show, chosen once from the rows (see `select` for how
/// each fixed coordinate is chosen). Build it once and hand it to every picture's `draw`.
pub struct SweepView<'a> {
    /// The key set the as-sized pictures show; `None` only for no rows.
    pub(super) key_set: Option<String>,
    /// That key set filled as sized at its most common n, across p (the two FPR pictures).
    pub(super) at_main_n: Option<(u64, Slice<'a>)>,
    /// That key set filled as sized at its most common p, across n (the lookup picture).
    pub(super) at_main_p: Option<(f64, Slice<'a>)>,
    /// The (key set, n, p) run at several overfill factors with the most rows.
    pub(super) overfill: Option<OverfillView<'a>>,
}

/// The overfill picture's slice with its fixed coordinates.
pub(super) struct OverfillView<'a> {
    pub key_set: String,
    pub n: u64,
    pub p: f64,
    pub slice: Slice<'a>,
}

impl<'a> SweepView<'a> {
    /// Selects every picture's slice of `rows`.
    pub fn new(rows: &'a [SweepRow]) -> Self {
        let key_set = main_key_set(rows);
        let sized = key_set
            .as_deref()
            .map_or_else(Vec::new, |k| sized_rows(rows, k));
        let at_main_n = main_n(&sized).map(|n| (n, Slice::new(&sized, |r| r.n == n)));
        let at_main_p = main_p(&sized).map(|p| (p, Slice::new(&sized, |r| r.p == p)));
        let overfill = overfill_slice(rows).map(
            |OverfillSlice {
                 key_set,
                 n,
                 p,
                 rows,
             }| OverfillView {
                key_set,
                n,
                p,
                slice: Slice::new(&rows, |_| true),
            },
        );
        Self {
            key_set,
            at_main_n,
            at_main_p,
            overfill,
        }
    }
}

/// One filter's rows within a slice, in CSV order.
pub(super) struct Series<'a> {
    /// The layout family, which picks the colour and the legend entry.
    pub family: String,
    pub filter: String,
    pub rows: Vec<&'a SweepRow>,
}

impl<'a> Series<'a> {
    /// The rows as points at x = `x(row)`, in order of x.
    pub fn points(&self, x: impl Fn(&SweepRow) -> f64) -> Vec<(f64, &'a SweepRow)> {
        let mut points: Vec<(f64, &SweepRow)> = self.rows.iter().map(|r| (x(r), *r)).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        points
    }
}

/// The rows of one slice, grouped per filter in legend order (family, then name).
pub(super) struct Slice<'a> {
    pub rows: Vec<&'a SweepRow>,
    pub series: Vec<Series<'a>>,
    /// Distinct families, in legend order.
    pub families: Vec<String>,
}

impl<'a> Slice<'a> {
    fn new(rows: &[&'a SweepRow], keep: impl Fn(&SweepRow) -> bool) -> Self {
        let rows: Vec<&SweepRow> = rows.iter().copied().filter(|r| keep(r)).collect();
        let filters = filters_in_order(&rows);
        let families = families_in_order(&filters);
        let series = filters
            .into_iter()
            .map(|(family, filter)| Series {
                rows: rows
                    .iter()
                    .copied()
                    .filter(|r| r.filter.to_string() == filter)
                    .collect(),
                family,
                filter,
            })
            .collect();
        Self {
            rows,
            series,
            families,
        }
    }

    /// Whether each filter's points are joined by a line (few enough filters to tell them apart).
    pub fn joined(&self) -> bool {
        self.series.len() <= MAX_JOINED_FILTERS
    }

    /// Whether series `i` is its family's first, which carries the family's legend entry.
    pub fn opens_family(&self, i: usize) -> bool {
        i == 0 || self.series[i - 1].family != self.series[i].family
    }

    /// The rows of `family`'s filters.
    pub fn family_rows<'s>(&'s self, family: &'s str) -> impl Iterator<Item = &'a SweepRow> + 's {
        self.series
            .iter()
            .filter(move |s| s.family == family)
            .flat_map(|s| s.rows.iter().copied())
    }

    /// Colour of a layout family: fixed for the known families, from a palette for others.
    pub fn color(&self, family: &str) -> RGBColor {
        family_color(family, &self.families)
    }

    /// The legend entry of `family`: the filter's name when it has one filter, else the count.
    pub fn family_label(&self, family: &str) -> String {
        let mut filters = self.series.iter().filter(|s| s.family == family);
        match (filters.next(), filters.count()) {
            (Some(only), 0) => format!("{family}: {}", only.filter),
            (_, more) => format!("{family} ({} filters)", more + 1),
        }
    }

    /// The confidence level(s) of the rows, as percentages for captions.
    pub fn confidence_text(&self) -> String {
        let mut levels: Vec<FloatKey> = self.rows.iter().map(|r| FloatKey(r.confidence)).collect();
        levels.sort();
        levels.dedup();
        levels
            .iter()
            .map(|l| fmt::percent(l.0))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether some row observed no false positive (drawn as an open circle).
    pub fn any_zero(&self) -> bool {
        self.rows.iter().any(|r| r.false_positives == 0)
    }

    /// A log range over every row's interval and drawn rate, plus `also`'s values (reference
    /// lines the axis must show), capped at 1.
    pub fn fpr_range(&self, also: impl Fn(&SweepRow) -> Vec<f64>) -> (f64, f64) {
        super::log_range(
            self.rows.iter().flat_map(|r| {
                [r.ci_low, shown_fpr(r), r.ci_high]
                    .into_iter()
                    .chain(also(r))
            }),
            1.0,
        )
    }
}

/// Colour of a layout family: fixed for the known families, from a palette for others.
pub(super) fn family_color(family: &str, families: &[String]) -> RGBColor {
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
pub(super) fn shown_fpr(r: &SweepRow) -> f64 {
    if r.false_positives == 0 {
        r.ci_high
    } else {
        r.fpr
    }
}
