//! *Cache regimes and query mixes*: the regime series (groups `regime-*`), each structure's time
//! per key at sizes from a core's L2 to DRAM and for five shares of present keys, against the
//! memory's random-load times over a buffer of its size and the hashing of a key alone.

use std::collections::BTreeSet;

use bloomlab_harness::schema::bench::{BenchRecord, Group, KeyKind, Operation, Series};

use super::render::{View, family_rank, fmt_bytes, fmt_n, fmt_ns, fmt_ratio};
use crate::markdown::table;

/// One structure's figures at one n: ns per key for each mix, the memory's dependent and
/// independent load times over a buffer of its size, and its hash alone.
#[derive(Debug, Clone, PartialEq)]
pub struct RegimeRow {
    pub mixes: [Option<f64>; 5],
    pub chase: Option<f64>,
    pub gather: Option<f64>,
    pub hash: Option<f64>,
}

impl RegimeRow {
    /// The slowest mix's ns per key.
    pub fn slowest(&self) -> Option<f64> {
        self.mixes.iter().flatten().copied().reduce(f64::max)
    }

    /// The floor a lookup of this structure cannot beat on this machine: the larger of its hash
    /// alone and one independent random load over its size (a lookup does at least one of each;
    /// across keys the two overlap, so their sum would be too high a floor).
    pub fn floor(&self) -> Option<f64> {
        match (self.hash, self.gather) {
            (Some(h), Some(g)) => Some(h.max(g)),
            (h, g) => h.or(g),
        }
    }
}

fn row(v: &View, r: &BenchRecord) -> RegimeRow {
    let ns = |op: Operation, label: &str| {
        v.median(
            Group::in_series(Series::Regime, op, KeyKind::U64),
            label,
            r.n,
        )
    };
    RegimeRow {
        mixes: Operation::MIXES.map(|op| ns(op, &r.label)),
        chase: ns(Operation::Chase, &r.label),
        gather: ns(Operation::Gather, &r.label),
        hash: r.structure.own_hash().and_then(|h| ns(Operation::Hash, h)),
    }
}

/// The section; says so when the log has no regime records.
pub(super) fn section(out: &mut String, v: &View) {
    out.push_str("## Cache regimes and query mixes\n\n");
    let records: Vec<&BenchRecord> = v
        .log
        .records
        .iter()
        .filter(|r| r.series == Series::Regime)
        .collect();
    if records.is_empty() {
        out.push_str(
            "No regime series in this run's log. `cargo bench --bench \
             bloom_vs_hashset` measures it; `BLOOMLAB_BENCH_ONLY='regime: '` measures it alone.\n\n",
        );
        return;
    }
    out.push_str(
        "The flagship of each layout (p = 1%), std `HashSet<u64>`, fastbloom and xorf \
         `BinaryFuse8`, on random distinct u64 keys, so that the memory hierarchy is measured and \
         not the fetch of key bytes, and so that 10^8 keys fit on this machine (the keys alone take \
         800 MB, std `HashSet<u64>` holds about 1.2 GB at 10^8). Each is built alone, looked up \
         with batches of 2^20 keys of which 0, 25, 50, 75 or 100% are present (at random \
         positions, so a branch on the answer cannot be predicted), ns per key (criterion's \
         median, short times: 0.5 s per benchmark), then dropped. Beside it, over a buffer of as \
         many bytes as it holds: *dependent load*, one load whose address comes from the line \
         loaded before, in a random cycle over the buffer's cache lines (the memory latency at \
         that size, TLB misses included), and *independent load*, one load of a random line of \
         the buffer when the next one need not wait for it (as in a batch of lookups, whose \
         misses overlap). *hash* is the structure's own hash of a key alone (`digest xxh3` for \
         the flagships, SipHash-1-3 for std `HashSet` and plain `fastbloom`, foldhash for \
         `fastbloom+foldhash`; xorf's mixer is not timed alone). *floor* is the larger of hash and \
         independent load, what a lookup touching one random cache line cannot beat here; *x \
         floor* divides the slowest mix by it: how close to the machine's limit the structure \
         runs (1.0x is at it; a classic filter reads k lines, xorf three, a HashSet at least one \
         plus the hash). Where the buffer sits shows in the dependent load: a few ns in L2, tens \
         in L3, 100 ns or more from DRAM.\n\n",
    );
    let hashes: BTreeSet<&str> = v
        .medians
        .keys()
        .filter(|k| k.group == Group::in_series(Series::Regime, Operation::Hash, KeyKind::U64))
        .map(|k| k.label.as_str())
        .collect();
    let sizes: BTreeSet<u64> = records.iter().map(|r| r.n).collect();
    let headers = [
        "n",
        "structure",
        "heap",
        "0% present ns",
        "25%",
        "50%",
        "75%",
        "100%",
        "dependent load ns",
        "independent load ns",
        "hash ns",
        "slowest / dependent load",
        "x floor",
        "observed FPR",
    ]
    .map(String::from);
    let mut rows = Vec::new();
    for &n in &sizes {
        let mut here: Vec<&&BenchRecord> = records.iter().filter(|r| r.n == n).collect();
        here.sort_by(|a, b| {
            (family_rank(a.family), &a.structure).cmp(&(family_rank(b.family), &b.structure))
        });
        for r in here {
            let x = row(v, r);
            let mut cells = vec![
                fmt_n(n),
                format!("`{}`", r.structure),
                fmt_bytes(r.heap_bytes),
            ];
            cells.extend(x.mixes.iter().map(|&m| fmt_ns(m)));
            cells.extend([
                fmt_ns(x.chase),
                fmt_ns(x.gather),
                fmt_ns(x.hash),
                fmt_ratio(x.slowest().zip(x.chase).map(|(s, c)| s / c)),
                fmt_ratio(x.slowest().zip(x.floor()).map(|(s, f)| s / f)),
                format!("{:.3}%", r.observed_fpr * 100.0),
            ]);
            rows.push(cells);
        }
    }
    out.push_str(&table(&headers, &rows));
    out.push('\n');
    if !hashes.is_empty() {
        out.push_str("Hashing a u64 key alone (the present batch, nothing else), ns per key:\n\n");
        let mut headers = vec!["hash".to_string()];
        headers.extend(sizes.iter().map(|&n| format!("batch of n = {}", fmt_n(n))));
        let rows: Vec<Vec<String>> = hashes
            .iter()
            .map(|&h| {
                let mut row = vec![format!("`{h}`")];
                row.extend(sizes.iter().map(|&n| {
                    fmt_ns(v.median(
                        Group::in_series(Series::Regime, Operation::Hash, KeyKind::U64),
                        h,
                        n,
                    ))
                }));
                row
            })
            .collect();
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
    fn the_floor_is_the_larger_of_hash_and_independent_load() {
        let row = RegimeRow {
            mixes: [Some(6.0), Some(9.0), Some(12.0), Some(8.0), Some(7.0)],
            chase: Some(90.0),
            gather: Some(4.0),
            hash: Some(3.0),
        };
        assert_eq!(row.slowest(), Some(12.0));
        assert_eq!(row.floor(), Some(4.0));
        let no_hash = RegimeRow { hash: None, ..row };
        assert_eq!(no_hash.floor(), Some(4.0));
    }

    #[test]
    fn regime_rows_show_every_mix_against_the_memory_and_the_hash() {
        let n = 100_000_000;
        let sbbf = label("sbbf/xxh3", Some(0.01));
        let records = vec![
            record(
                Series::Regime,
                KeyKind::U64,
                "sbbf/xxh3",
                Some(0.01),
                n,
                120_000_000,
            ),
            record(
                Series::Regime,
                KeyKind::U64,
                "xorf BinaryFuse8",
                Some(0.01),
                n,
                113_000_000,
            ),
        ];
        let mut m = Medians::new();
        let g = |op| Group::in_series(Series::Regime, op, KeyKind::U64);
        for (op, ns) in Operation::MIXES
            .into_iter()
            .zip([10.0, 14.0, 16.0, 15.0, 12.0])
        {
            put(&mut m, g(op), &sbbf, n, ns);
        }
        put(&mut m, g(Operation::Chase), &sbbf, n, 80.0);
        put(&mut m, g(Operation::Gather), &sbbf, n, 8.0);
        put(&mut m, g(Operation::Hash), "digest xxh3", n, 2.0);
        put(&mut m, g(Operation::Hash), "foldhash", n, 1.0);
        let md = render::render(&log(records, Vec::new()), &m, &machine());
        // Slowest mix 16 ns: 0.2x the dependent load, 2x the floor max(2, 8).
        assert!(
            md.contains(
                "| 100M | `sbbf/xxh3` | 114.4 MiB | 10.0 | 14.0 | 16.0 | 15.0 | 12.0 | 80.0 | \
                 8.00 | 2.00 | 0.20x | 2.00x | 1.000% |"
            ),
            "{md}"
        );
        // xorf: nothing timed, no hash of its own.
        assert!(
            md.contains("| 100M | `xorf BinaryFuse8` | 107.8 MiB | — |"),
            "{md}"
        );
        assert!(md.contains("| `digest xxh3` | 2.00 |"), "{md}");
        assert!(md.contains("| `foldhash` | 1.00 |"), "{md}");
    }

    #[test]
    fn a_log_without_the_series_says_how_to_measure_it() {
        let records = vec![record(
            Series::Main,
            KeyKind::Str,
            "sbbf/xxh3",
            Some(0.01),
            1000,
            1200,
        )];
        let md = render::render(&log(records, Vec::new()), &Medians::new(), &machine());
        assert!(
            md.contains("`BLOOMLAB_BENCH_ONLY='regime: '` measures it alone"),
            "{md}"
        );
        assert!(
            md.contains("`BLOOMLAB_BENCH_ONLY='contiguous: |scattered: '` measures it alone"),
            "{md}"
        );
    }
}
