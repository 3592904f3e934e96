//! *Where string keys come from*: the layout series (groups `contiguous-*`, `scattered-*`), the
//! same lookups with the keys in one buffer and with each key in its own allocation.

use std::collections::BTreeSet;
use std::fmt::Write;

use bloomlab_harness::schema::bench::{
    BenchRecord, Group, KeyKind, Operation, PairedRecord, Series,
};

use super::render::{View, family_rank, fmt_bytes, fmt_n, fmt_ns, fmt_paired, fmt_ratio};
use crate::markdown::table;

use Operation::{LookupAbsent, LookupPresent};

/// The two layouts, in table order.
const LAYOUTS: [(Series, &str); 2] = [
    (Series::Contiguous, "one buffer"),
    (Series::Scattered, "one allocation per key"),
];

fn paired<'a>(
    v: &View<'a>,
    series: Series,
    op: Operation,
    label: &str,
    n: u64,
) -> Option<&'a PairedRecord> {
    v.pair(Group::in_series(series, op, KeyKind::Str), label, n, false)
}

/// The section, after the main series' tables; says so when the log has no layout records.
pub(super) fn section(out: &mut String, v: &View) {
    out.push_str("## Where string keys come from\n\n");
    let sizes: BTreeSet<u64> = v
        .log
        .records
        .iter()
        .filter(|r| r.series == Series::Contiguous || r.series == Series::Scattered)
        .map(|r| r.n)
        .collect();
    if sizes.is_empty() {
        out.push_str(
            "No layout series in this run's log. `cargo bench --bench \
             bloom_vs_hashset` measures it; `BLOOMLAB_BENCH_ONLY='contiguous: |scattered: '` \
             measures it alone.\n\n",
        );
        return;
    }
    out.push_str(
        "The same present and absent batches of string keys in two layouts, each structure built \
         once and timed in both, one right after the other: *one buffer* holds the keys back to \
         back in lookup order, as they arrive from a page or a socket (the layout of every other \
         string table in this report, the headline's included); *one allocation per key* holds \
         each key in its own `String` (a `Vec<String>`), allocated in an order unrelated to the \
         lookup order, so fetching a key is a random access into some 50 MB of heap before its \
         hash can start. *vs std* divides std `HashSet<String>`'s median in the same layout by \
         this row's; *paired* as in the main tables, against the HashSet looking up the same keys \
         in the same layout. *scattered / buffer*: this structure's time with one allocation per \
         key over its time with one buffer.\n\n",
    );
    let headers = [
        "structure",
        "keys in",
        "present ns",
        "present vs std",
        "present vs std, paired",
        "absent ns",
        "absent vs std",
        "absent vs std, paired",
        "present: scattered / buffer",
        "absent: scattered / buffer",
        "heap",
        "observed FPR",
    ]
    .map(String::from);
    let std = KeyKind::Str.reference();
    for n in sizes {
        let ns = |series: Series, op: Operation, label: &str| {
            v.median(Group::in_series(series, op, KeyKind::Str), label, n)
        };
        let mut records: Vec<&BenchRecord> = v
            .log
            .records
            .iter()
            .filter(|r| r.series == Series::Contiguous && r.keys == KeyKind::Str && r.n == n)
            .collect();
        records.sort_by(|a, b| {
            (family_rank(a.family), &a.structure).cmp(&(family_rank(b.family), &b.structure))
        });
        let mut rows = Vec::new();
        for r in records {
            for (series, layout) in LAYOUTS {
                let Some(rec) = v.record_in(series, KeyKind::Str, &r.label, n) else {
                    continue;
                };
                let vs_std = |op| Some(ns(series, op, std)? / ns(series, op, &rec.label)?);
                let slowdown = |op| {
                    Some(
                        ns(Series::Scattered, op, &rec.label)?
                            / ns(Series::Contiguous, op, &rec.label)?,
                    )
                };
                let scattered = series == Series::Scattered;
                rows.push(vec![
                    format!("`{}`", rec.structure),
                    layout.into(),
                    fmt_ns(ns(series, LookupPresent, &rec.label)),
                    fmt_ratio(vs_std(LookupPresent)),
                    fmt_paired(paired(v, series, LookupPresent, &rec.label, n)),
                    fmt_ns(ns(series, LookupAbsent, &rec.label)),
                    fmt_ratio(vs_std(LookupAbsent)),
                    fmt_paired(paired(v, series, LookupAbsent, &rec.label, n)),
                    if scattered {
                        fmt_ratio(slowdown(LookupPresent))
                    } else {
                        String::new()
                    },
                    if scattered {
                        fmt_ratio(slowdown(LookupAbsent))
                    } else {
                        String::new()
                    },
                    fmt_bytes(rec.heap_bytes),
                    format!("{:.3}%", rec.observed_fpr * 100.0),
                ]);
            }
        }
        let _ = writeln!(out, "### Key layouts, string keys, n = {}\n", fmt_n(n));
        out.push_str(&table(&headers, &rows));
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use bloomlab_harness::schema::bench::label;

    use super::super::input::Medians;
    use super::super::render;
    use super::super::targets::tests::{log, machine, put, record};
    use super::*;

    #[test]
    fn both_layouts_are_shown_with_the_slowdown_of_scattered_keys() {
        let n = 10_000_000;
        let std = KeyKind::Str.reference();
        let sbbf = label("sbbf/xxh3", Some(0.01));
        let mut records = Vec::new();
        let mut m = Medians::new();
        for (series, std_ns, sbbf_ns) in [
            (Series::Contiguous, (400.0, 100.0), (40.0, 25.0)),
            (Series::Scattered, (500.0, 200.0), (100.0, 50.0)),
        ] {
            records.push(record(series, KeyKind::Str, std, None, n, 600_000_000));
            records.push(record(
                series,
                KeyKind::Str,
                "sbbf/xxh3",
                Some(0.01),
                n,
                12_000_000,
            ));
            let g = |op| Group::in_series(series, op, KeyKind::Str);
            put(&mut m, g(LookupPresent), std, n, std_ns.0);
            put(&mut m, g(LookupAbsent), std, n, std_ns.1);
            put(&mut m, g(LookupPresent), &sbbf, n, sbbf_ns.0);
            put(&mut m, g(LookupAbsent), &sbbf, n, sbbf_ns.1);
        }
        let md = render::render(&log(records, Vec::new()), &m, &machine());
        assert!(md.contains("### Key layouts, string keys, n = 10M"), "{md}");
        // HashSet first; each structure's buffer row, then its scattered row with the slowdown.
        let std_at = md
            .find("| `std HashSet<String>` | one buffer |")
            .expect("std row");
        let sbbf_at = md
            .find("| `sbbf/xxh3` | one buffer | 40.0 | 10.0x | — | 25.0 | 4.00x | — |  |  |")
            .expect("sbbf buffer row");
        assert!(std_at < sbbf_at, "{md}");
        assert!(
            md.contains(
                "| `sbbf/xxh3` | one allocation per key | 100 | 5.00x | — | 50.0 | 4.00x | — | \
                 2.50x | 2.00x |"
            ),
            "{md}"
        );
    }
}
