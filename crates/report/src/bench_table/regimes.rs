//! *Cache regimes and query mixes*: the regime series (groups `regime-*`), each structure's time
//! per key at sizes from a core's L2 to DRAM and for five shares of present keys, against the
//! memory's random-load times over a buffer of its size and the hashing of a key alone.

use std::collections::BTreeSet;

use bloomlab_harness::schema::bench::{
    BenchRecord, FLOOR_REFERENCE, FORMAT_FLOOR_REFERENCE, Group, KEY_FETCH, KeyKind, Operation,
    PairedRecord, Series,
};

use super::render::{View, family_rank, fmt_bytes, fmt_n, fmt_ns, fmt_ratio, fmt_slowdown};
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

/// Ratios at or below this are at the floor (issue 30's target for the flagships).
pub const FLOOR_TARGET: f64 = 1.5;

/// The headline: each flagship's one-by-one lookups in the regime series against its floor
/// ([`Operation::Floor`]: one loop fetching the key, hashing it with the flagship's hash and
/// doing the loads its layout needs, no bit test), with the floor's parts measured in the same
/// run. Nothing when the log has no floor figures.
pub(super) fn floor_section(out: &mut String, v: &View) {
    let g = |op| Group::in_series(Series::Regime, op, KeyKind::U64);
    let mut rows = Vec::new();
    let mut records: Vec<&BenchRecord> = v
        .log
        .records
        .iter()
        .filter(|r| r.series == Series::Regime)
        .collect();
    records.sort_by(|a, b| (a.n, &a.structure).cmp(&(b.n, &b.structure)));
    for r in records {
        let Some(floor) = v.median(g(Operation::Floor), &r.label, r.n) else {
            continue;
        };
        let absent = v.median(g(Operation::LookupAbsent), &r.label, r.n);
        let present = v.median(g(Operation::LookupPresent), &r.label, r.n);
        let ratio = |x: Option<f64>| x.map(|x| x / floor);
        let pair = |op| v.pair(g(op), &r.label, r.n, true);
        let (paired_absent, paired_present) = (
            pair(Operation::LookupAbsent),
            pair(Operation::LookupPresent),
        );
        // The verdict reads the paired rounds where the run has them (each round's structure and
        // floor see the same state of the machine), criterion's medians otherwise.
        let worst = match (paired_absent, paired_present) {
            (Some(a), Some(p)) => [a.slowdown(), p.slowdown()],
            _ => [ratio(absent), ratio(present)],
        };
        let verdict = worst
            .into_iter()
            .flatten()
            .reduce(f64::max)
            .map_or("—", |w| if w <= FLOOR_TARGET { "yes" } else { "no" });
        rows.push(vec![
            fmt_n(r.n),
            format!("`{}`", r.structure),
            fmt_ns(absent),
            fmt_ns(present),
            fmt_ns(Some(floor)),
            fmt_ratio(ratio(absent)),
            fmt_ratio(ratio(present)),
            fmt_slowdown(paired_absent),
            fmt_slowdown(paired_present),
            verdict.to_owned(),
            fmt_ns(v.median(g(Operation::Hash), KEY_FETCH, r.n)),
            fmt_ns(
                r.structure
                    .own_hash()
                    .and_then(|h| v.median(g(Operation::Hash), h, r.n)),
            ),
            fmt_ns(v.median(g(Operation::Gather), &r.label, r.n)),
        ]);
    }
    if rows.is_empty() {
        return;
    }
    out.push_str(&format!(
        "## Lookups against their floor\n\n\
         Each flagship (p = 1%) on u64 keys (the regime series), one-by-one lookups of the absent \
         and the present batch against its *floor*: one loop over the same batch that does what \
         any filter of that layout must do per lookup and nothing else: fetch the key, hash it \
         with the flagship's hash, load one cache line chosen by the hash (split-block, \
         blocked512) or k words at the hash's k positions (classic), over a buffer of the \
         filter's size, without testing a bit; it derives the digest words the layout uses \
         (blocked512 and classic need the second one, split-block only the first). Every figure \
         is criterion's median, ns per key, measured in the same run by the same timed loop. \
         *paired* is the structure's time over the floor's in rounds that alternate the two on \
         the same batch (median of the rounds, lowest and highest in brackets; see *How to read \
         the tables*): criterion's two medians are taken seconds apart, and where the filter \
         lives in a cache shared with other tenants (an L3 of tens of MB, so 1e7 keys), either \
         one can move severalfold with the machine's state in between. *at floor* says whether \
         both paired ratios (criterion's, in a run without rounds) are at most {FLOOR_TARGET}x. \
         The floor's parts, each timed alone: *key fetch* (the loop \
         over the batch, no work), *hash* (the digest alone), *one load* (one independent \
         random line of the buffer). The parts overlap across keys, so they do not add up to \
         the floor.\n\n"
    ));
    let headers = [
        "n",
        "structure",
        "absent ns",
        "present ns",
        "floor ns",
        "absent / floor",
        "present / floor",
        "paired absent / floor",
        "paired present / floor",
        "at floor",
        "key fetch ns",
        "hash ns",
        "one load ns",
    ]
    .map(String::from);
    out.push_str(&table(&headers, &rows));
    out.push('\n');
}

/// The rest of the floor verdict: every floor pair the run took other than the u64 one-by-one
/// rows of [`floor_section`]: batched lookups on u64 keys at every regime size, and one-by-one and
/// batched lookups on string keys (the flagships and Guava's layout). Paired rounds only, so each
/// figure is the median of the rounds' times. Then Guava's layout against the floor at its
/// format's positions ([`FORMAT_FLOOR_REFERENCE`]). Nothing when the log has none.
pub(super) fn floor_pairs_section(out: &mut String, v: &View) {
    let one_by_one_u64 = |g: Group| {
        g.series == Series::Regime
            && g.keys == KeyKind::U64
            && matches!(g.op, Operation::LookupAbsent | Operation::LookupPresent)
    };
    if let Some((md, at, all)) = pairs_table(v, FLOOR_REFERENCE, |g| !one_by_one_u64(g)) {
        out.push_str(&format!(
            "### Batched lookups and string keys against their floor\n\n\
             {at} of {all} rows at the floor. The same floor as above, for the lookups the table \
             above leaves out: batched lookups (`contains_batch`) on u64 keys at every regime \
             size, against the batched floor (the floor's parts through the filters' own batched \
             driver: the next {lookahead} keys hashed and their lines prefetched ahead of the one \
             loaded; for the classic layout, whose batched lookup keeps each key's k positions \
             from its prefetch to its test, the floor keeps its k word indices too), and on the \
             main series' string keys, one-by-one and batched, for the flagships and Guava's \
             layout (`classic/murmur3/mitz64/flat`: Murmur3-128 and k words, the floor's \
             positions reduced by multiply-shift where Guava's format takes them modulo the bit \
             count). For string keys the key fetch reads the key's bytes from the batch's buffer. \
             Paired rounds only: *ns* is the median of the rounds' times for the structure, \
             *floor ns* for the floor, and */ floor* the median of the rounds' ratios (lowest and \
             highest in brackets). *at floor*: both ratios at most {FLOOR_TARGET}x.\n\n{md}\n",
            lookahead = bloomlab_filters::filter::LOOKAHEAD,
        ));
    }
    if let Some((md, at, all)) = pairs_table(v, FORMAT_FLOOR_REFERENCE, |_| true) {
        out.push_str(&format!(
            "### Guava's layout against the floor at its format's positions\n\n\
             {at} of {all} rows within {FLOOR_TARGET}x. The floor above reduces the classic \
             layout's positions by multiply-shift, the cheapest reduction; Guava's file format \
             fixes them as `(combined & Long.MAX_VALUE) % m`, and a filter that reads and writes \
             Guava's files must compute them so (bloomlab does it by multiplication, \
             `bloomlab_filters::index::Modulus`, not by division). Here the same floor loads \
             its words at the filter's own positions: */ floor* is what the filter costs beyond \
             the positions its format fixes, and this floor's *ns* over the one above is what the \
             format's reduction costs. Same rounds and columns as above.\n\n{md}\n"
        ));
    }
}

/// The table of the paired rounds against `reference` whose group passes `keep`, one row per
/// (keys, one-by-one or batched, n, structure) with the absent and present pairs side by side,
/// and how many of its rows are within [`FLOOR_TARGET`] (both ratios): `(markdown, at, all)`, or
/// `None` when the log has no such pair.
fn pairs_table(
    v: &View,
    reference: &str,
    keep: impl Fn(Group) -> bool,
) -> Option<(String, usize, usize)> {
    // (keys, batched, n, label) -> (absent, present)
    type Pair<'a> = [Option<&'a PairedRecord>; 2];
    let mut rows: std::collections::BTreeMap<(KeyKind, bool, u64, &str), Pair> =
        std::collections::BTreeMap::new();
    for r in &v.log.paired {
        if r.reference != reference || !keep(r.group) {
            continue;
        }
        let (batched, slot) = match r.group.op {
            Operation::LookupAbsent => (false, 0),
            Operation::LookupPresent => (false, 1),
            Operation::LookupBatchAbsent => (true, 0),
            Operation::LookupBatchPresent => (true, 1),
            _ => continue,
        };
        rows.entry((r.group.keys, batched, r.n, &r.label))
            .or_default()[slot] = Some(r);
    }
    if rows.is_empty() {
        return None;
    }
    let median = |xs: &[f64]| Some(bloomlab_harness::stats::median(xs.iter().copied()));
    let mut table_rows = Vec::new();
    let (mut at, mut all) = (0, 0);
    for ((keys, batched, n, label), pair) in &rows {
        let verdict = pair
            .iter()
            .map(|r| r.and_then(PairedRecord::slowdown))
            .collect::<Option<Vec<f64>>>()
            .and_then(|w| w.into_iter().reduce(f64::max))
            .map(|w| w <= FLOOR_TARGET);
        all += 1;
        at += usize::from(verdict == Some(true));
        let mut row = vec![
            keys.as_str().to_owned(),
            if *batched { "batched" } else { "one-by-one" }.to_owned(),
            fmt_n(*n),
            format!("`{label}`"),
        ];
        for r in pair {
            row.push(fmt_ns(r.and_then(|r| median(&r.structure_ns))));
            row.push(fmt_ns(r.and_then(|r| median(&r.reference_ns))));
            row.push(fmt_slowdown(*r));
        }
        row.push(
            match verdict {
                Some(true) => "yes",
                Some(false) => "no",
                None => "—",
            }
            .to_owned(),
        );
        table_rows.push(row);
    }
    let headers = [
        "keys",
        "lookups",
        "n",
        "structure",
        "absent ns",
        "absent floor ns",
        "absent / floor",
        "present ns",
        "present floor ns",
        "present / floor",
        "at floor",
    ]
    .map(String::from);
    Some((table(&headers, &table_rows), at, all))
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
         median, with the same criterion times as in every other series), then dropped. Beside it, over a buffer of as \
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
    fn the_floor_table_divides_each_mix_by_the_floor_loop() {
        let n = 10_000_000;
        let sbbf = label("sbbf/xxh3", Some(0.01));
        let records = vec![record(
            Series::Regime,
            KeyKind::U64,
            "sbbf/xxh3",
            Some(0.01),
            n,
            12_000_000,
        )];
        let mut m = Medians::new();
        let g = |op| Group::in_series(Series::Regime, op, KeyKind::U64);
        put(&mut m, g(Operation::LookupAbsent), &sbbf, n, 6.0);
        put(&mut m, g(Operation::LookupPresent), &sbbf, n, 9.0);
        put(&mut m, g(Operation::Floor), &sbbf, n, 5.0);
        put(&mut m, g(Operation::Gather), &sbbf, n, 3.0);
        put(&mut m, g(Operation::Hash), KEY_FETCH, n, 0.5);
        put(&mut m, g(Operation::Hash), "digest xxh3", n, 2.0);
        let md = render::render(&log(records.clone(), Vec::new()), &m, &machine());
        // 6 / 5 = 1.2x is at the floor, 9 / 5 = 1.8x is not: the row is not at the floor.
        assert!(
            md.contains(
                "| 10M | `sbbf/xxh3` | 6.00 | 9.00 | 5.00 | 1.20x | 1.80x | — | — | no | 0.50 | \
                 2.00 | 3.00 |"
            ),
            "{md}"
        );
        // With paired rounds, the verdict is theirs: present 1.3x in rounds where the floor and
        // the filter saw the same machine, though criterion's medians (seconds apart) say 1.8x.
        let pair = |op, structure_ns: Vec<f64>| PairedRecord {
            group: g(op),
            label: sbbf.clone(),
            n,
            reference: FLOOR_REFERENCE.to_owned(),
            reference_ns: vec![5.0; 3],
            structure_ns,
        };
        let paired = vec![
            pair(Operation::LookupAbsent, vec![5.5, 6.0, 5.0]),
            pair(Operation::LookupPresent, vec![6.5, 6.0, 7.0]),
        ];
        let md = render::render(&log(records.clone(), paired), &m, &machine());
        assert!(
            md.contains(
                "| 10M | `sbbf/xxh3` | 6.00 | 9.00 | 5.00 | 1.20x | 1.80x | 1.10x (1.00–1.20) | \
                 1.30x (1.20–1.40) | yes | 0.50 | 2.00 | 3.00 |"
            ),
            "{md}"
        );
        // Paired present rounds above the target make the row miss, whatever criterion says.
        let paired = vec![
            pair(Operation::LookupAbsent, vec![5.5, 6.0, 5.0]),
            pair(Operation::LookupPresent, vec![8.0, 8.0, 8.0]),
        ];
        let md = render::render(&log(records, paired), &m, &machine());
        assert!(md.contains("| 1.60x (1.60–1.60) | no |"), "{md}");
        let floor = md
            .find("## Lookups against their floor")
            .expect("the floor table");
        let regimes = md.find("## Cache regimes").expect("the regime table");
        assert!(floor < regimes, "the floor table comes first: {md}");
    }

    #[test]
    fn batched_and_string_floor_pairs_get_their_own_verdicts() {
        let n = 1_000_000;
        let sbbf = label("sbbf/xxh3", Some(0.01));
        let guava = label("classic/murmur3/mitz64/flat", Some(0.01));
        let pair = |group, label: &str, reference: &str, structure_ns: Vec<f64>| PairedRecord {
            group,
            label: label.to_owned(),
            n,
            reference: reference.to_owned(),
            reference_ns: vec![10.0, 10.0, 10.0],
            structure_ns,
        };
        let regime = |op| Group::in_series(Series::Regime, op, KeyKind::U64);
        let main = |op| Group::new(op, KeyKind::Str);
        let paired = vec![
            // u64 one-by-one pairs belong to the first floor table, not this one.
            pair(
                regime(Operation::LookupAbsent),
                &sbbf,
                FLOOR_REFERENCE,
                vec![11.0; 3],
            ),
            pair(
                regime(Operation::LookupBatchAbsent),
                &sbbf,
                FLOOR_REFERENCE,
                vec![12.0, 11.0, 13.0],
            ),
            pair(
                regime(Operation::LookupBatchPresent),
                &sbbf,
                FLOOR_REFERENCE,
                vec![14.0, 14.0, 15.0],
            ),
            pair(
                main(Operation::LookupAbsent),
                &guava,
                FLOOR_REFERENCE,
                vec![20.0; 3],
            ),
            pair(
                main(Operation::LookupPresent),
                &guava,
                FLOOR_REFERENCE,
                vec![12.0; 3],
            ),
            // The HashSet pair of the same group: a different reference, not a floor row.
            pair(
                main(Operation::LookupAbsent),
                &guava,
                "std HashSet<String>",
                vec![1.0; 3],
            ),
            // Against the floor at the format's positions: a table of their own.
            pair(
                main(Operation::LookupAbsent),
                &guava,
                FORMAT_FLOOR_REFERENCE,
                vec![12.0, 12.0, 13.0],
            ),
            pair(
                main(Operation::LookupPresent),
                &guava,
                FORMAT_FLOOR_REFERENCE,
                vec![11.0; 3],
            ),
        ];
        let records = vec![record(
            Series::Main,
            KeyKind::Str,
            "classic/murmur3/mitz64/flat",
            Some(0.01),
            n,
            1_200_000,
        )];
        let md = render::render(&log(records, paired), &Medians::new(), &machine());
        // The main table's paired figure against std HashSet is the HashSet pair's (10 / 1), not
        // the floor pair's of the same group, label and n.
        assert!(md.contains("| 10.0x (10.0–10.0) |"), "{md}");
        let section = &md[md
            .find("### Batched lookups and string keys against their floor")
            .expect("the section")..];
        assert!(section.contains("1 of 2 rows at the floor"), "{section}");
        assert!(
            section.contains(
                "| u64 | batched | 1M | `sbbf/xxh3 p=1%` | 12.0 | 10.0 | 1.20x (1.10–1.30) | \
                 14.0 | 10.0 | 1.40x (1.40–1.50) | yes |"
            ),
            "{section}"
        );
        // Absent at 2x the floor: the row misses.
        assert!(
            section.contains(
                "| str | one-by-one | 1M | `classic/murmur3/mitz64/flat p=1%` | 20.0 | 10.0 | \
                 2.00x (2.00–2.00) | 12.0 | 10.0 | 1.20x (1.20–1.20) | no |"
            ),
            "{section}"
        );
        assert!(
            !section.contains("| u64 | one-by-one |"),
            "u64 one-by-one pairs are in the first table: {section}"
        );
        let (floor, format) = section
            .split_once("### Guava's layout against the floor at its format's positions")
            .expect("the format floor's table follows");
        assert!(!floor.contains("1.20x (1.20–1.30)"), "{floor}");
        assert!(format.contains("1 of 1 rows within 1.5x"), "{format}");
        assert!(
            format.contains(
                "| str | one-by-one | 1M | `classic/murmur3/mitz64/flat p=1%` | 12.0 | 10.0 | \
                 1.20x (1.20–1.30) | 11.0 | 10.0 | 1.10x (1.10–1.10) | yes |"
            ),
            "{format}"
        );
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
