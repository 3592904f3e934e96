//! The Markdown report: per key kind and n, one row per structure with criterion's medians, the
//! measured heap, and ratios to std `HashSet`; a headline section computed from the same numbers;
//! then the two capability series (counting filters, scalable filters), each beside its static
//! twins and the HashSet measured in the same series.

use std::collections::BTreeSet;
use std::fmt::Write;

use bloomlab_filters::{HashStrategy, Layout, SplitBlock, Xxh3};
use bloomlab_harness::Subject;
use bloomlab_harness::schema::bench::{
    BenchLog, BenchRecord, FLOOR_REFERENCE, Family, Group, KeyKind, Operation, PairedRecord,
    Series, Structure, label,
};

use super::Machine;
use super::input::{BenchKey, Medians};
use crate::markdown::table;

use KeyKind::{Str, U64};
use Operation::{
    Hash, Insert, LookupAbsent, LookupBatchAbsent, LookupBatchPresent, LookupPresent, Remove,
};

/// The string reference, which the headline compares with.
const STD_STRING: &str = Str.reference();

/// The label of a bloomlab variant or crate at the headline rate, 1%.
fn at_1pc(structure: &str) -> String {
    label(structure, Some(0.01))
}

pub(super) struct View<'a> {
    pub(super) log: &'a BenchLog,
    pub(super) medians: &'a Medians,
}

impl<'a> View<'a> {
    /// The median of `group` for `label` at `n`.
    pub(super) fn median(&self, group: Group, label: &str, n: u64) -> Option<f64> {
        self.medians
            .get(&BenchKey {
                group,
                label: label.to_owned(),
                n,
            })
            .copied()
    }
    /// The main series' median of `op` on `keys`.
    pub(super) fn ns(&self, op: Operation, keys: KeyKind, label: &str, n: u64) -> Option<f64> {
        self.median(Group::new(op, keys), label, n)
    }
    /// The main series' record of `label`.
    pub(super) fn record(&self, keys: KeyKind, label: &str, n: u64) -> Option<&BenchRecord> {
        self.record_in(Series::Main, keys, label, n)
    }
    pub(super) fn record_in(
        &self,
        series: Series,
        keys: KeyKind,
        label: &str,
        n: u64,
    ) -> Option<&BenchRecord> {
        self.log
            .records
            .iter()
            .find(|r| r.series == series && r.keys == keys && r.label == label && r.n == n)
    }
    /// `reference ns / this ns` for `op`: how many times faster than the reference.
    fn speedup(
        &self,
        op: Operation,
        keys: KeyKind,
        label: &str,
        n: u64,
        reference: &str,
    ) -> Option<f64> {
        Some(self.ns(op, keys, reference, n)? / self.ns(op, keys, label, n)?)
    }
    pub(super) fn paired(
        &self,
        op: Operation,
        keys: KeyKind,
        label: &str,
        n: u64,
    ) -> Option<&PairedRecord> {
        self.pair(Group::new(op, keys), label, n, false)
    }

    /// The paired rounds of `label` at `n` in `group`: against its floor when `floor`, else
    /// against the reference set (std `HashSet`). A group holds both kinds for the flagships.
    pub(super) fn pair(
        &self,
        group: Group,
        label: &str,
        n: u64,
        floor: bool,
    ) -> Option<&'a PairedRecord> {
        self.log.paired.iter().find(|r| {
            r.group == group
                && r.label == label
                && r.n == n
                && (r.reference == FLOOR_REFERENCE) == floor
        })
    }
    /// How many times faster `label`'s `op` is than std `HashSet`'s `ref_op` on the same keys
    /// (`ref_op` differs from `op` for batched lookups, compared with one-by-one ones), on `basis`.
    pub(super) fn vs_std(
        &self,
        basis: Basis,
        (op, ref_op): (Operation, Operation),
        label: &str,
        n: u64,
    ) -> Option<f64> {
        match basis {
            Basis::Medians => {
                Some(self.ns(ref_op, Str, STD_STRING, n)? / self.ns(op, Str, label, n)?)
            }
            Basis::Paired => self.paired(op, Str, label, n)?.speedup(),
        }
    }
}

/// What a headline ratio is computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Basis {
    /// Criterion's medians of the two benchmarks, measured minutes apart.
    Medians,
    /// The paired rounds' median ratio, each round timing both within milliseconds.
    Paired,
}

impl Basis {
    pub(super) fn name(self) -> &'static str {
        match self {
            Basis::Medians => "criterion medians",
            Basis::Paired => "paired rounds",
        }
    }
}

/// A paired comparison as `median ratio (lowest-highest round)`.
pub(super) fn fmt_paired(r: Option<&PairedRecord>) -> String {
    let Some(r) = r else { return "—".into() };
    fmt_rounds(r.speedup(), r.ratios())
}

/// A paired record's median ratio of the structure to its reference (a floor), with the lowest
/// and the highest round in brackets.
pub(super) fn fmt_slowdown(r: Option<&PairedRecord>) -> String {
    let Some(r) = r else { return "—".into() };
    fmt_rounds(r.slowdown(), r.slowdowns())
}

fn fmt_rounds(median: Option<f64>, rounds: impl Iterator<Item = f64>) -> String {
    let ratios: Vec<f64> = rounds.collect();
    let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    match median {
        Some(x) => format!(
            "{} ({}–{})",
            fmt_ratio(Some(x)),
            fmt_ratio(Some(lo)).trim_end_matches('x'),
            fmt_ratio(Some(hi)).trim_end_matches('x')
        ),
        None => "—".into(),
    }
}

pub(super) fn fmt_ns(ns: Option<f64>) -> String {
    match ns {
        Some(x) if x < 10.0 => format!("{x:.2}"),
        Some(x) if x < 100.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.0}"),
        None => "—".into(),
    }
}

pub(super) fn fmt_ratio(r: Option<f64>) -> String {
    match r {
        Some(x) if x < 10.0 => format!("{x:.2}x"),
        Some(x) => format!("{x:.1}x"),
        None => "—".into(),
    }
}

pub(super) fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

fn fmt_p(p: Option<f64>) -> String {
    p.map_or("exact".into(), |p| format!("{}%", p * 100.0))
}

pub(super) fn fmt_n(n: u64) -> String {
    match n {
        n if n >= 1_000_000 && n.is_multiple_of(1_000_000) => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n.is_multiple_of(1_000) => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

pub(super) fn family_rank(f: Family) -> u8 {
    match f {
        Family::HashSet => 0,
        Family::Bloomlab => 1,
        Family::Crate => 2,
    }
}

/// The main series' rows in report order: exact sets first, then by rate (1% before 0.1%),
/// bloomlab before the other crates, by name.
fn ordered(log: &BenchLog, keys: KeyKind, n: u64) -> Vec<&BenchRecord> {
    let mut rows: Vec<&BenchRecord> = log
        .records
        .iter()
        .filter(|r| r.series == Series::Main && r.keys == keys && r.n == n)
        .collect();
    rows.sort_by(|a, b| {
        let pa = a.p.map_or(f64::INFINITY, |p| p);
        let pb = b.p.map_or(f64::INFINITY, |p| p);
        pb.total_cmp(&pa)
            .then(family_rank(a.family).cmp(&family_rank(b.family)))
            .then(a.structure.cmp(&b.structure))
    });
    rows
}

fn section(out: &mut String, v: &View, keys: KeyKind, n: u64) {
    let reference = keys.reference();
    let ref_bytes = v.record(keys, reference, n).map(|r| r.heap_bytes);
    let (keys_text, short) = match keys {
        U64 => ("random distinct u64 keys", "`HashSet<u64>`"),
        Str => (
            "string keys `\"article-content-hash-\" + i`",
            "`HashSet<String>`",
        ),
    };
    let _ = writeln!(out, "### {}, n = {}\n", keys_text, fmt_n(n));
    let headers = [
        "structure".to_string(),
        "p".into(),
        "present ns".into(),
        format!("present vs std {short}"),
        "present vs std, paired".into(),
        "absent ns".into(),
        format!("absent vs std {short}"),
        "absent vs std, paired".into(),
        "insert ns".into(),
        "heap".into(),
        "bits/key".into(),
        format!("heap vs std {short}"),
        "observed FPR".into(),
        "build ns/key (1 run)".into(),
    ];
    let rows: Vec<Vec<String>> = ordered(v.log, keys, n)
        .into_iter()
        .map(|r| {
            let present = v.ns(LookupPresent, keys, &r.label, n);
            let absent = v.ns(LookupAbsent, keys, &r.label, n);
            let insert = v.ns(Insert, keys, &r.label, n);
            let mem_ratio = ref_bytes
                .filter(|_| r.heap_bytes > 0)
                .map(|b| b as f64 / r.heap_bytes as f64);
            vec![
                format!("`{}`", r.structure),
                fmt_p(r.p),
                fmt_ns(present),
                fmt_ratio(v.speedup(LookupPresent, keys, &r.label, n, reference)),
                fmt_paired(v.paired(LookupPresent, keys, &r.label, n)),
                fmt_ns(absent),
                fmt_ratio(v.speedup(LookupAbsent, keys, &r.label, n, reference)),
                fmt_paired(v.paired(LookupAbsent, keys, &r.label, n)),
                fmt_ns(insert),
                fmt_bytes(r.heap_bytes),
                format!("{:.2}", r.heap_bytes as f64 * 8.0 / r.n as f64),
                mem_ratio.map_or("—".into(), |x| format!("1/{x:.0}")),
                format!("{:.3}%", r.observed_fpr * 100.0),
                format!("{:.0}", r.build_ns_per_key),
            ]
        })
        .collect();
    out.push_str(&table(&headers, &rows));
    out.push('\n');
}

/// A group of bloomlab variants a headline judges together, by their layout and hash (read from
/// the catalogue, never from the name's text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kin {
    /// Every registered variant.
    Any,
    /// Every split-block variant (`sbbf/*`).
    SplitBlock,
    /// Every blocked variant (`blocked512/*`).
    Blocked,
    /// Every classic variant hashed with XXH3 (`classic/xxh3/*`).
    ClassicXxh3,
}

impl Kin {
    /// Whether `s` is a registered variant of this group.
    fn has(self, s: &Structure) -> bool {
        let Some(id) = s.subject().and_then(|s| match s {
            Subject::Variant(id) => Some(id),
            _ => None,
        }) else {
            return false;
        };
        match self {
            Kin::Any => true,
            Kin::SplitBlock => id.layout() == Layout::SplitBlock,
            Kin::Blocked => id.layout() == Layout::Blocked512,
            Kin::ClassicXxh3 => {
                id.layout() == Layout::Classic && id.axes().hash == Some(<Xxh3 as HashStrategy>::ID)
            }
        }
    }
}

/// The bloomlab variants the headline judges: string keys, this n, p = 1%, of group `kin`.
fn headline_variants<'a>(
    v: &'a View,
    n: u64,
    kin: Kin,
) -> impl Iterator<Item = &'a BenchRecord> + 'a {
    v.log.records.iter().filter(move |r| {
        r.series == Series::Main
            && r.keys == Str
            && r.n == n
            && r.p == Some(0.01)
            && r.family == Family::Bloomlab
            && kin.has(&r.structure)
    })
}

/// The smallest speedup over std `HashSet<String>` on `basis` (see [`View::vs_std`]) among the
/// headline variants of group `kin`; with the slowest one's name.
fn min_speedup(
    v: &View,
    basis: Basis,
    ops: (Operation, Operation),
    n: u64,
    kin: Kin,
) -> Option<(f64, String)> {
    headline_variants(v, n, kin)
        .filter_map(|r| Some((v.vs_std(basis, ops, &r.label, n)?, r.structure.to_string())))
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

/// The variant (string keys, p = 1%, bloomlab, of group `kin`) whose slower of its present and
/// absent speedups over std `HashSet<String>` (criterion medians) is the largest: (present,
/// absent, name).
fn best_variant(v: &View, n: u64, kin: Kin) -> Option<(f64, f64, String)> {
    headline_variants(v, n, kin)
        .filter_map(|r| {
            let present = v.speedup(LookupPresent, Str, &r.label, n, STD_STRING)?;
            let absent = v.speedup(LookupAbsent, Str, &r.label, n, STD_STRING)?;
            Some((present, absent, r.structure.to_string()))
        })
        .max_by(|a, b| a.0.min(a.1).total_cmp(&b.0.min(b.1)))
}

/// The headline's present and absent figures on `basis` for the variants of group `kin`:
/// `(text, met)`, met when both reach `target` (None: nothing measured).
fn target_parts(
    v: &View,
    basis: Basis,
    n: u64,
    kin: Kin,
    batched: bool,
    target: f64,
) -> Option<(String, bool)> {
    let mut parts = Vec::new();
    let mut met = true;
    for op in [LookupPresent, LookupAbsent] {
        let timed = if batched {
            op.batched().unwrap_or(op)
        } else {
            op
        };
        let what = op.batch().unwrap_or_default();
        match min_speedup(v, basis, (timed, op), n, kin) {
            Some((x, worst)) => {
                met &= x >= target;
                parts.push(format!("{what} {} (`{worst}`)", fmt_ratio(Some(x))));
            }
            None => {
                met = false;
                parts.push(format!("{what} not measured"));
            }
        }
    }
    (!parts.iter().all(|p| p.ends_with("not measured"))).then(|| (parts.join(", "), met))
}

fn headline(out: &mut String, v: &View, n: u64) {
    let _ = writeln!(
        out,
        "## Headline: string keys, n = {}, p = 1%\n\nEach figure is how many times faster than std \
         `HashSet<String>` the slowest variant of a family is (the variant is named), computed two \
         ways: from criterion's medians (each benchmark measured on its own, minutes apart from the \
         HashSet's), and from the paired rounds (the structure and the HashSet timed alternately \
         within milliseconds, median of the rounds' ratios; see *How to read the tables*). The \
         keys of every figure here are the main series' batches: one contiguous buffer holding the \
         keys back to back in lookup order (see *Where string keys come from* for the same \
         lookups with each key in its own allocation).\n",
        fmt_n(n)
    );
    super::targets::restated(out, v, n);
    out.push_str(
        "\nFor information, not targets (the former targets asked every hash variant of a layout \
         to beat std `HashSet<String>`; FNV-1a, Murmur3 and XXH64 hash a string more slowly than \
         that target leaves room for), the slowest variant of each family:\n\n",
    );
    let targets: [(&str, Kin, f64); 3] = [
        ("split-block (`sbbf/*`)", Kin::SplitBlock, 4.0),
        ("blocked (`blocked512/*`)", Kin::Blocked, 4.0),
        ("classic xxh3 (`classic/xxh3/*`)", Kin::ClassicXxh3, 1.5),
    ];
    for (name, kin, target) in targets {
        let mut bases = Vec::new();
        for basis in [Basis::Medians, Basis::Paired] {
            let (parts, met) = target_parts(v, basis, n, kin, false, target)
                .unwrap_or_else(|| ("not measured".into(), false));
            bases.push(format!(
                "{}: {parts}, {}",
                basis.name(),
                if met { "reaches it" } else { "below it" }
            ));
        }
        let best = best_variant(v, n, kin)
            .map(|(present, absent, best)| {
                format!(
                    " (best variant by criterion medians `{best}`: present {}, absent {})",
                    fmt_ratio(Some(present)),
                    fmt_ratio(Some(absent))
                )
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "- {name}, former target {target}x for every variant: {}{best}.",
            bases.join("; ")
        );
    }
    let mut batched = Vec::new();
    for (name, kin) in [
        ("split-block", Kin::SplitBlock),
        ("blocked", Kin::Blocked),
        ("classic xxh3", Kin::ClassicXxh3),
    ] {
        let bases: Vec<String> = [Basis::Medians, Basis::Paired]
            .into_iter()
            .filter_map(|basis| {
                let (parts, _) = target_parts(v, basis, n, kin, true, 0.0)?;
                Some(format!("{parts} ({})", basis.name()))
            })
            .collect();
        if !bases.is_empty() {
            batched.push(format!("{name} {}", bases.join(", ")));
        }
    }
    if !batched.is_empty() {
        let _ = writeln!(
            out,
            "- Batched lookups (`contains_batch`: the next {} keys hashed and prefetched ahead; the \
             representative variants) against the HashSet's one-by-one lookups, worst variant: {}.",
            bloomlab_filters::filter::LOOKAHEAD,
            batched.join("; ")
        );
    }
    for fb in ["fastbloom", "fastbloom+foldhash"] {
        fastbloom_line(out, v, n, fb);
    }
    if let (Some(std), Some(sbbf)) = (
        v.record(Str, STD_STRING, n),
        v.record(
            Str,
            &at_1pc(&Subject::of::<SplitBlock<Xxh3>>().to_string()),
            n,
        ),
    ) {
        let _ = writeln!(
            out,
            "- Memory: std `HashSet<String>` holds {} ({:.1} bits/key), `sbbf/xxh3` at 1% holds {} \
             ({:.2} bits/key): 1/{:.0} of it.",
            fmt_bytes(std.heap_bytes),
            std.heap_bytes as f64 * 8.0 / n as f64,
            fmt_bytes(sbbf.heap_bytes),
            sbbf.heap_bytes as f64 * 8.0 / n as f64,
            std.heap_bytes as f64 / sbbf.heap_bytes.max(1) as f64
        );
    }
    out.push('\n');
}

/// Which headline variants are slower than the crate `fb` at p = 1%, by criterion medians
/// (`fb`'s median / the variant's) and by paired rounds (the variant's paired speedup over the
/// HashSet / `fb`'s).
fn fastbloom_line(out: &mut String, v: &View, n: u64, fb: &str) {
    let fb_label = at_1pc(fb);
    let mut summaries = Vec::new();
    for basis in [Basis::Medians, Basis::Paired] {
        let mut slower: Vec<(f64, String)> = Vec::new();
        let mut compared = 0;
        for r in headline_variants(v, n, Kin::Any) {
            for op in [LookupPresent, LookupAbsent] {
                let x = match basis {
                    Basis::Medians => v.speedup(op, Str, &r.label, n, &fb_label),
                    Basis::Paired => v
                        .vs_std(basis, (op, op), &r.label, n)
                        .zip(v.vs_std(basis, (op, op), &fb_label, n))
                        .map(|(mine, theirs)| mine / theirs),
                };
                let Some(x) = x else { continue };
                compared += 1;
                if x < 1.0 {
                    let what = op.batch().unwrap_or_default();
                    slower.push((
                        x,
                        format!("`{}` {what} {}", r.structure, fmt_ratio(Some(x))),
                    ));
                }
            }
        }
        if compared == 0 {
            continue;
        }
        slower.sort_by(|a, b| a.0.total_cmp(&b.0));
        const SHOWN: usize = 6;
        let worst: Vec<&str> = slower.iter().take(SHOWN).map(|(_, s)| s.as_str()).collect();
        summaries.push(if slower.is_empty() {
            format!("{}: none of {compared} comparisons", basis.name())
        } else {
            format!(
                "{}: {} of {compared} comparisons ({}: {})",
                basis.name(),
                slower.len(),
                if slower.len() > SHOWN {
                    "the worst"
                } else {
                    "all"
                },
                worst.join(", ")
            )
        });
    }
    if summaries.is_empty() {
        let _ = writeln!(out, "- `{fb}`: not measured.");
    } else {
        let _ = writeln!(
            out,
            "- Slower than `{fb}` at the same p (present or absent): {}.",
            summaries.join("; ")
        );
    }
}

// Moved to `crate::date`; kept under this path for the binaries that name it here.
pub use crate::date::date_utc;

/// The whole report.
pub fn render(log: &BenchLog, medians: &Medians, machine: &Machine) -> String {
    let v = View { log, medians };
    let mut out = String::new();
    out.push_str("# Bloom filters vs HashSet: lookups, inserts and memory\n\n");
    out.push_str(
        "Generated by `cargo run --release --bin bench-table` from criterion's median estimates \
         (`target/criterion/**/new/estimates.json`) of `cargo bench --bench bloom_vs_hashset`, and \
         the heap bytes the bench's counting allocator measured. Do not edit by hand.\n\n",
    );
    let _ = writeln!(
        out,
        "- Machine: {}, {} cores; {}; compiled for this CPU (`-C target-cpu=native`, features used: \
         {}).\n- Bench run ({} mode): {} to {}; table generated {}.\n",
        machine.cpu,
        machine.cores,
        machine.rustc,
        machine.features,
        log.mode,
        date_utc(log.started_unix),
        date_utc(log.updated_unix),
        machine.generated
    );
    let sizes: BTreeSet<u64> = log
        .records
        .iter()
        .filter(|r| r.series == Series::Main)
        .map(|r| r.n)
        .collect();
    super::regimes::floor_section(&mut out, &v);
    super::regimes::floor_pairs_section(&mut out, &v);
    if let Some(&largest) = sizes.last() {
        headline(&mut out, &v, largest);
    }
    out.push_str(
        "## How to read the tables\n\n\
         - *present ns* / *absent ns*: criterion's median time per lookup, over a pre-generated batch \
         of up to 2^20 keys drawn at random from the inserted (present) or never-inserted (absent) \
         keys, looked up in order, so the structure is probed at random. The loop runs lookups back \
         to back: independent cache misses overlap, as in any batch workload.\n\
         - *vs std*: std `HashSet`'s median divided by this row's: above 1x is faster than the \
         HashSet. u64 tables compare with `HashSet<u64>`.\n\
         - *vs std, paired*: right after criterion measures a lookup, the bench times this structure \
         and std `HashSet` on the same batch alternately, in rounds of two short parts (a full run: \
         9 rounds, parts of about 15 ms), each after an equally long untimed pass over its own \
         data; shown is the median of the rounds' ratios and, in brackets, the lowest and the \
         highest. Both parts of a round see the same state of the machine, so the ratio does not \
         depend on which minute of the run each benchmark fell in, and the spread shows how steady the structure's time was: at 10M a \
         filter held partly in the shared L3 slows down with whatever else uses that cache, while \
         the HashSet, bound by DRAM either way, hardly changes. The std row paired with itself \
         shows the method's own noise.\n\
         - *insert ns*: re-inserting present keys into the full filter (the bits are already set, so \
         the state never changes between iterations); *build ns/key* is one build from empty timed \
         with a wall clock (not criterion), divided by n, for every structure including the HashSets.\n\
         - *heap*: live heap bytes the structure requested, measured by a counting global allocator \
         around its build (HashSet: table plus every `String`); allocator overhead not included. \
         *bits/key* = heap x 8 / n.\n\
         - *observed FPR*: share of the absent batch reported present (0 for exact sets).\n\
         - `fastbloom` uses its default hasher (SipHash-1-3); `fastbloom+foldhash` uses foldhash. \
         xorf filters hold u64s: string keys are hashed with XXH3-64 inside the timed lookup; their \
         rate is fixed by the fingerprint (8 bits for the 1% row, 16 bits for the 0.1% row).\n\n",
    );
    for keys in KeyKind::ALL {
        for &n in &sizes {
            if !ordered(log, keys, n).is_empty() {
                section(&mut out, &v, keys, n);
            }
        }
    }
    batched(&mut out, &v, &sizes);
    hashing(&mut out, &v, &sizes);
    super::layouts::section(&mut out, &v);
    super::regimes::section(&mut out, &v);
    counting(&mut out, &v);
    scalable(&mut out, &v);
    out
}

/// Batched lookups (groups `lookup-batch-*`) beside the same structures' one-by-one lookups.
fn batched(out: &mut String, v: &View, sizes: &BTreeSet<u64>) {
    let mut rows = Vec::new();
    for keys in KeyKind::ALL {
        let reference = keys.reference();
        for &n in sizes {
            for r in ordered(v.log, keys, n) {
                let present = v.ns(LookupBatchPresent, keys, &r.label, n);
                let absent = v.ns(LookupBatchAbsent, keys, &r.label, n);
                if present.is_none() && absent.is_none() {
                    continue;
                }
                let vs = |op: Operation, batched: Option<f64>| {
                    Some(v.ns(op, keys, reference, n)? / batched?)
                };
                rows.push(vec![
                    format!("`{reference}`"),
                    fmt_n(n),
                    format!("`{}`", r.structure),
                    fmt_p(r.p),
                    fmt_ns(v.ns(LookupPresent, keys, &r.label, n)),
                    fmt_ns(present),
                    fmt_ratio(vs(LookupPresent, present)),
                    fmt_paired(v.paired(LookupBatchPresent, keys, &r.label, n)),
                    fmt_ns(v.ns(LookupAbsent, keys, &r.label, n)),
                    fmt_ns(absent),
                    fmt_ratio(vs(LookupAbsent, absent)),
                    fmt_paired(v.paired(LookupBatchAbsent, keys, &r.label, n)),
                ]);
            }
        }
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "### Batched lookups\n\n`contains_batch` answers a slice of keys exactly as one `contains` \
         per key would (the bench checks the counts), but hashes the next {} keys and prefetches \
         their cache lines before testing each one, so a large filter's memory accesses overlap \
         instead of waiting in turn. Same batches as above, in calls of 1024 keys; *vs std* divides \
         the HashSet's one-by-one median by the batched one (a HashSet has no batched lookup).\n",
        bloomlab_filters::filter::LOOKAHEAD
    );
    let headers = [
        "compared with",
        "n",
        "structure",
        "p",
        "present ns, one by one",
        "present ns, batched",
        "batched present vs std",
        "paired",
        "absent ns, one by one",
        "absent ns, batched",
        "batched absent vs std",
        "paired",
    ]
    .map(String::from);
    out.push_str(&table(&headers, &rows));
    out.push('\n');
}

/// Hashing alone (group `hash-str`): the share of a string lookup that is the hash.
fn hashing(out: &mut String, v: &View, sizes: &BTreeSet<u64>) {
    let labels: BTreeSet<&str> = v
        .medians
        .keys()
        .filter(|k| k.group == Group::new(Hash, Str) && sizes.contains(&k.n))
        .map(|k| k.label.as_str())
        .collect();
    if labels.is_empty() {
        return;
    }
    out.push_str(
        "### Hashing alone, string keys\n\nThe same present batch, hashed and nothing else: \
         `digest <hash>` is a bloomlab strategy's digest with both words (64-bit hashes derive the \
         second with `fmix64`); the other rows are the HashSets' hashers.\n\n",
    );
    let mut headers = vec!["hash".to_string()];
    headers.extend(
        sizes
            .iter()
            .map(|&n| format!("ns/key, batch of n = {}", fmt_n(n))),
    );
    let rows: Vec<Vec<String>> = labels
        .into_iter()
        .map(|label| {
            let mut row = vec![format!("`{label}`")];
            row.extend(sizes.iter().map(|&n| fmt_ns(v.ns(Hash, Str, label, n))));
            row
        })
        .collect();
    out.push_str(&table(&headers, &rows));
    out.push('\n');
}

/// The records of `series` at `n` on string keys, in table order: the exact set first, then each
/// static twin followed by the structures compared with it (by name, then growth factor), then
/// structures without a twin (peers, by name, then growth factor).
fn series_rows<'a>(v: &View<'a>, series: Series, n: u64) -> Vec<&'a BenchRecord> {
    let mut rows: Vec<&BenchRecord> = v
        .log
        .records
        .iter()
        .filter(|r| r.series == series && r.keys == Str && r.n == n)
        .collect();
    rows.sort_by(|a, b| {
        let key = |r: &BenchRecord| {
            (
                family_rank(r.family),
                // A twin heads the rows that name it; a grown filter without a twin (a peer)
                // keeps its G rows together under its structure name.
                match (&r.twin, r.growth) {
                    (Some(twin), _) => twin.clone(),
                    (None, Some(_)) => r.structure.to_string(),
                    (None, None) => r.label.clone(),
                },
                r.twin.is_some(),
                r.structure,
                r.growth.map_or(0, |g| g.factor),
            )
        };
        key(a).cmp(&key(b))
    });
    rows
}

/// The sizes at which `series` has records.
fn series_sizes(v: &View, series: Series) -> BTreeSet<u64> {
    v.log
        .records
        .iter()
        .filter(|r| r.series == series)
        .map(|r| r.n)
        .collect()
}

/// The line that says a series is missing from the log, and how to measure it.
fn missing(out: &mut String, series: Series) {
    let _ = writeln!(
        out,
        "Not in this run's log: it holds no record of the {series} series (a run older than the \
         series, or one that `BLOOMLAB_BENCH_ONLY` restricted to other structures). \
         `cargo bench --bench bloom_vs_hashset` measures it; `BLOOMLAB_BENCH_ONLY='{series}: '` \
         measures it alone.\n"
    );
}

/// `reference / this`, both optional: above 1 when this is faster (or smaller).
fn ratio(reference: Option<f64>, this: Option<f64>) -> Option<f64> {
    Some(reference? / this?).filter(|x| x.is_finite())
}

/// The counting series (groups `counting-*`): insert, remove and lookups of each counting filter,
/// against its twin and std `HashSet<String>` measured in the same series.
fn counting(out: &mut String, v: &View) {
    out.push_str("## Counting filters: insert, remove and lookups\n\n");
    let sizes = series_sizes(v, Series::Counting);
    if sizes.is_empty() {
        missing(out, Series::Counting);
        return;
    }
    out.push_str(
        "Each counting filter beside its *twin*, the flat filter with the same hash and index \
         scheme (same m and k, one bit where the counting filter keeps a counter), and std \
         `HashSet<String>`, all built for the same n string keys (filters at p = 1%) and timed in \
         one series, on the lookup batches of the tables above. *remove ns*: removing one member \
         key; *insert ns*: inserting one key that was removed a while before. The bench undoes \
         each timed operation untimed, a window of keys apart, so every iteration meets the same \
         state (the filter holds its n keys less that window), and checks the filter answers as \
         before afterwards. A twin cannot remove: its insert re-inserts members, the same work for \
         a bit array. *vs twin* and *vs std* divide the twin's or the HashSet's median by this \
         row's: above 1x is faster, 0.50x takes twice the time. *heap / twin*: this row's heap \
         over its twin's.\n\n",
    );
    let headers = [
        "structure",
        "twin",
        "insert ns",
        "remove ns",
        "present ns",
        "absent ns",
        "insert vs twin",
        "present vs twin",
        "absent vs twin",
        "insert vs std",
        "remove vs std",
        "present vs std",
        "absent vs std",
        "heap",
        "heap / twin",
        "observed FPR",
    ]
    .map(String::from);
    for n in sizes {
        let ns = |op: Operation, label: &str| {
            v.median(Group::in_series(Series::Counting, op, Str), label, n)
        };
        let std_label = Str.reference();
        let rows: Vec<Vec<String>> = series_rows(v, Series::Counting, n)
            .into_iter()
            .map(|r| {
                let twin = r.twin.as_deref();
                let twin_record = twin.and_then(|t| v.record_in(Series::Counting, Str, t, n));
                let vs_twin = |op: Operation| {
                    twin.map_or("—".into(), |t| {
                        fmt_ratio(ratio(ns(op, t), ns(op, &r.label)))
                    })
                };
                let vs_std = |op: Operation| fmt_ratio(ratio(ns(op, std_label), ns(op, &r.label)));
                vec![
                    format!("`{}`", r.structure),
                    twin_record.map_or("—".into(), |t| format!("`{}`", t.structure)),
                    fmt_ns(ns(Insert, &r.label)),
                    fmt_ns(ns(Remove, &r.label)),
                    fmt_ns(ns(LookupPresent, &r.label)),
                    fmt_ns(ns(LookupAbsent, &r.label)),
                    vs_twin(Insert),
                    vs_twin(LookupPresent),
                    vs_twin(LookupAbsent),
                    vs_std(Insert),
                    vs_std(Remove),
                    vs_std(LookupPresent),
                    vs_std(LookupAbsent),
                    fmt_bytes(r.heap_bytes),
                    fmt_ratio(
                        twin_record
                            .filter(|t| t.heap_bytes > 0)
                            .map(|t| r.heap_bytes as f64 / t.heap_bytes as f64),
                    ),
                    format!("{:.3}%", r.observed_fpr * 100.0),
                ]
            })
            .collect();
        let _ = writeln!(out, "### Counting series, string keys, n = {}\n", fmt_n(n));
        out.push_str(&table(&headers, &rows));
        out.push('\n');
    }
}

/// The scalable series (groups `scalable-*`): lookups in each scalable filter grown G-fold,
/// against its static twin and std `HashSet<String>` measured in the same series.
fn scalable(out: &mut String, v: &View) {
    out.push_str("## Scalable filters: lookups after growth\n\n");
    let sizes = series_sizes(v, Series::Scalable);
    if sizes.is_empty() {
        missing(out, Series::Scalable);
        return;
    }
    out.push_str(
        "Each scalable filter holds the n string keys after being built for n0 = n/G of them \
         (p = 1%), so it grew G-fold by adding *stages*, and a lookup probes every stage; beside \
         it its *static* twin (a filter of its stages' layout built for all n keys at the same p) \
         and std `HashSet<String>`, timed in one series on the lookup batches of the tables above. \
         *vs static* divides the static twin's median by this row's: the share of the static \
         filter's speed left after growth (0.25x takes four times as long); *vs std* divides the \
         HashSet's. *bits/key* = measured heap x 8 / n, and *heap / static* compares it with the \
         static twin's, so both show what growing costs in memory. `peer/growable-bloom-filter` \
         has no static twin here (its stages are partitioned filters).\n\n",
    );
    let headers = [
        "structure",
        "G",
        "n0",
        "stages",
        "present ns",
        "absent ns",
        "present vs static",
        "absent vs static",
        "present vs std",
        "absent vs std",
        "bits/key",
        "heap / static",
        "observed FPR",
    ]
    .map(String::from);
    for n in sizes {
        let ns = |op: Operation, label: &str| {
            v.median(Group::in_series(Series::Scalable, op, Str), label, n)
        };
        let std_label = Str.reference();
        let rows: Vec<Vec<String>> = series_rows(v, Series::Scalable, n)
            .into_iter()
            .map(|r| {
                let twin = r.twin.as_deref();
                let twin_record = twin.and_then(|t| v.record_in(Series::Scalable, Str, t, n));
                let vs_static = |op: Operation| {
                    twin.map_or("—".into(), |t| {
                        fmt_ratio(ratio(ns(op, t), ns(op, &r.label)))
                    })
                };
                let vs_std = |op: Operation| fmt_ratio(ratio(ns(op, std_label), ns(op, &r.label)));
                let (g, n0, stages) = match (r.growth, r.family) {
                    (Some(g), _) => (
                        g.factor.to_string(),
                        fmt_n(g.initial_capacity),
                        g.stages.to_string(),
                    ),
                    (None, Family::HashSet) => ("—".into(), "—".into(), "—".into()),
                    (None, _) => ("static".into(), fmt_n(r.n), "1".into()),
                };
                vec![
                    format!("`{}`", r.structure),
                    g,
                    n0,
                    stages,
                    fmt_ns(ns(LookupPresent, &r.label)),
                    fmt_ns(ns(LookupAbsent, &r.label)),
                    vs_static(LookupPresent),
                    vs_static(LookupAbsent),
                    vs_std(LookupPresent),
                    vs_std(LookupAbsent),
                    format!("{:.2}", r.heap_bytes as f64 * 8.0 / r.n as f64),
                    fmt_ratio(
                        twin_record
                            .filter(|t| t.heap_bytes > 0)
                            .map(|t| r.heap_bytes as f64 / t.heap_bytes as f64),
                    ),
                    format!("{:.3}%", r.observed_fpr * 100.0),
                ]
            })
            .collect();
        let _ = writeln!(out, "### Scalable series, string keys, n = {}\n", fmt_n(n));
        out.push_str(&table(&headers, &rows));
        out.push('\n');
    }
}
