//! The one view of a sweep's churn and grow rows that their pictures and the summary draw from:
//! each workload's slice (key set, n, p with the most rows) chosen once, grouped per series.

use std::collections::BTreeMap;

use bloomlab_harness::{SweepRow, Workload};
use plotters::style::RGBColor;

use crate::select::FloatKey;

/// The churn and grow slices of a sweep; `None` where the sweep has no such rows.
pub struct WorkloadView<'a> {
    /// The churn slice: series per (filter, hostile fraction), points per round.
    pub churn: Option<WorkloadSlice<'a>>,
    /// The grow slice: series per filter, points per growth factor.
    pub grow: Option<WorkloadSlice<'a>>,
}

/// One workload's rows at one (key set, n, p), grouped into series.
pub struct WorkloadSlice<'a> {
    /// Key set of the slice.
    pub key_set: String,
    /// Sized-for count (grow: the initial capacity n0).
    pub n: u64,
    /// Target rate.
    pub p: f64,
    /// Every row of the slice.
    pub rows: Vec<&'a SweepRow>,
    /// Series in legend order (by filter name, then hostile fraction), rows in x order.
    pub series: Vec<WorkloadSeries<'a>>,
}

/// One line of a workload picture.
pub struct WorkloadSeries<'a> {
    /// The legend text: the filter, and the hostile fraction when it is not 0.
    pub label: String,
    /// The rows, in order of round or growth factor.
    pub rows: Vec<&'a SweepRow>,
}

impl<'a> WorkloadView<'a> {
    /// Selects each workload's slice of `rows`.
    pub fn new(rows: &'a [SweepRow]) -> Self {
        Self {
            churn: WorkloadSlice::select(rows, Workload::Churn),
            grow: WorkloadSlice::select(rows, Workload::Grow),
        }
    }
}

impl<'a> WorkloadSlice<'a> {
    /// The (key set, n, p) with false negatives if any has (the rows that show a design failing),
    /// then with the most `workload` rows (ties: `random-u64`, then the larger n, then p nearer
    /// 1%), or `None` without such rows.
    fn select(rows: &'a [SweepRow], workload: Workload) -> Option<Self> {
        let mut groups: BTreeMap<(String, u64, FloatKey), Vec<&SweepRow>> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.workload == workload) {
            groups
                .entry((r.key_set.clone(), r.n, FloatKey(r.p)))
                .or_default()
                .push(r);
        }
        let off_one_percent = |p: f64| (p.log10() + 2.0).abs();
        let any_fn = |rows: &[&SweepRow]| rows.iter().any(|r| r.false_negatives > 0);
        let ((key_set, n, p), rows) = groups.into_iter().max_by(|(ka, a), (kb, b)| {
            any_fn(a)
                .cmp(&any_fn(b))
                .then(a.len().cmp(&b.len()))
                .then((ka.0 == "random-u64").cmp(&(kb.0 == "random-u64")))
                .then(ka.1.cmp(&kb.1))
                .then(off_one_percent(kb.2.0).total_cmp(&off_one_percent(ka.2.0)))
        })?;
        let mut by_series: BTreeMap<(String, FloatKey), Vec<&SweepRow>> = BTreeMap::new();
        for r in &rows {
            by_series
                .entry((r.filter.to_string(), FloatKey(r.hostile)))
                .or_default()
                .push(r);
        }
        let series = by_series
            .into_iter()
            .map(|((filter, hostile), mut rows)| {
                rows.sort_by_key(|r| (r.round, r.growth));
                let label = if hostile.0 > 0.0 {
                    format!("{filter}, {}% hostile removes", hostile.0 * 100.0)
                } else {
                    filter
                };
                WorkloadSeries { label, rows }
            })
            .collect();
        Some(Self {
            key_set,
            n,
            p: p.0,
            rows,
            series,
        })
    }

    /// Colour of series `i`: a qualitative palette (a workload picture has few series).
    pub fn color(&self, i: usize) -> RGBColor {
        const PALETTE: [RGBColor; 10] = [
            RGBColor(31, 119, 180),
            RGBColor(255, 127, 14),
            RGBColor(44, 160, 44),
            RGBColor(214, 39, 40),
            RGBColor(148, 103, 189),
            RGBColor(140, 86, 75),
            RGBColor(227, 119, 194),
            RGBColor(127, 127, 127),
            RGBColor(188, 189, 34),
            RGBColor(23, 190, 207),
        ];
        PALETTE[i % PALETTE.len()]
    }
}
