//! Which slice of a sweep each picture shows.
//!
//! A sweep can hold ~50 filters x several key sets x n x p x overfill values; one picture of all of
//! them is unreadable. Each picture fixes the coordinates it does not plot to the slice with the
//! most rows, and its title says which, so the choice is visible and reproducible from the CSV.

use std::collections::BTreeMap;

use bloomlab_harness::SweepRow;

/// Overfill factors this close to 1 count as "filled as sized".
const AS_SIZED_TOLERANCE: f64 = 1e-9;

/// The layout families in the order pictures and legends list them; others follow by name.
const FAMILY_ORDER: [&str; 4] = ["classic", "blocked512", "sbbf", "textbook"];

pub(crate) fn as_sized(row: &SweepRow) -> bool {
    (row.overfill - 1.0).abs() < AS_SIZED_TOLERANCE
}

/// The key set the pictures show: the one with the most rows filled as sized (ties: `random-u64`,
/// then the first by name). `None` only for no rows.
pub(crate) fn main_key_set(rows: &[SweepRow]) -> Option<String> {
    let sized: Vec<&SweepRow> = rows.iter().filter(|r| as_sized(r)).collect();
    let pool: Vec<&SweepRow> = if sized.is_empty() {
        rows.iter().collect()
    } else {
        sized
    };
    most_common(pool.iter().map(|r| r.key_set.clone()), |a, b| {
        (b == "random-u64").cmp(&(a == "random-u64")).then(a.cmp(b))
    })
}

/// Rows filled as sized for `key_set`.
pub(crate) fn sized_rows<'a>(rows: &'a [SweepRow], key_set: &str) -> Vec<&'a SweepRow> {
    rows.iter()
        .filter(|r| as_sized(r) && r.key_set == key_set)
        .collect()
}

/// The most common `n` among `rows` (ties: the largest).
pub(crate) fn main_n(rows: &[&SweepRow]) -> Option<u64> {
    most_common(rows.iter().map(|r| r.n), |a, b| b.cmp(a))
}

/// The most common `p` among `rows` (ties: the one nearest 1%, the usual target).
pub(crate) fn main_p(rows: &[&SweepRow]) -> Option<f64> {
    let key = |p: f64| (p.log10() + 2.0).abs();
    most_common(rows.iter().map(|r| FloatKey(r.p)), |a, b| {
        key(a.0).total_cmp(&key(b.0))
    })
    .map(|k| k.0)
}

/// The (key set, n, p) slice shown against overfill, with its rows at every overfill factor.
pub(crate) struct OverfillSlice<'a> {
    pub key_set: String,
    pub n: u64,
    pub p: f64,
    pub rows: Vec<&'a SweepRow>,
}

/// The (key set, n, p) slice with the most rows among filters run at several overfill factors
/// (ties: `random-u64`, then the larger n, then p nearer 1%), or `None` if no filter was.
pub(crate) fn overfill_slice(rows: &[SweepRow]) -> Option<OverfillSlice<'_>> {
    let mut groups: BTreeMap<(String, u64, FloatKey, String), Vec<&SweepRow>> = BTreeMap::new();
    for r in rows {
        groups
            .entry((r.key_set.clone(), r.n, FloatKey(r.p), r.filter.to_string()))
            .or_default()
            .push(r);
    }
    let mut slices: BTreeMap<(String, u64, FloatKey), Vec<&SweepRow>> = BTreeMap::new();
    for ((key_set, n, p, _), group) in groups {
        let mut factors: Vec<f64> = group.iter().map(|r| r.overfill).collect();
        factors.sort_by(f64::total_cmp);
        factors.dedup();
        if factors.len() >= 2 {
            slices.entry((key_set, n, p)).or_default().extend(group);
        }
    }
    slices
        .into_iter()
        .max_by(|(ka, a), (kb, b)| {
            // Nearer 1% is better, hence the reversed comparison.
            let off_one_percent = |p: f64| (p.log10() + 2.0).abs();
            a.len()
                .cmp(&b.len())
                .then((ka.0 == "random-u64").cmp(&(kb.0 == "random-u64")))
                .then(ka.1.cmp(&kb.1))
                .then(off_one_percent(kb.2.0).total_cmp(&off_one_percent(ka.2.0)))
        })
        .map(|((key_set, n, p), rows)| OverfillSlice {
            key_set,
            n,
            p: p.0,
            rows,
        })
}

/// Filters in legend order (family, then name) with their layout family.
pub(crate) fn filters_in_order(rows: &[&SweepRow]) -> Vec<(String, String)> {
    let mut filters: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.layout.to_string(), r.filter.to_string()))
        .collect();
    filters.sort_by(|a, b| family_rank(&a.0).cmp(&family_rank(&b.0)).then(a.cmp(b)));
    filters.dedup();
    filters
}

/// Distinct families in legend order.
pub(crate) fn families_in_order(filters: &[(String, String)]) -> Vec<String> {
    let mut families: Vec<String> = filters.iter().map(|f| f.0.clone()).collect();
    families.dedup();
    families
}

fn family_rank(family: &str) -> (usize, String) {
    let known = FAMILY_ORDER.iter().position(|f| *f == family);
    (known.unwrap_or(FAMILY_ORDER.len()), family.to_string())
}

/// The most frequent value; `tie` orders equally frequent values, the smallest wins.
fn most_common<T: Ord + Clone>(
    values: impl Iterator<Item = T>,
    tie: impl Fn(&T, &T) -> std::cmp::Ordering,
) -> Option<T> {
    let mut counts: BTreeMap<T, usize> = BTreeMap::new();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    counts
        .into_iter()
        .min_by(|(a, ca), (b, cb)| cb.cmp(ca).then(tie(a, b)))
        .map(|(v, _)| v)
}

/// An `f64` ordered by `total_cmp`, so it can key a map.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatKey(pub f64);

impl PartialEq for FloatKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}
impl Eq for FloatKey {}
impl PartialOrd for FloatKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for FloatKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}
