//! Every compared structure, built once per key set and then measured: bloomlab's registered
//! variants (visited by name, so each runs as its concrete type), `HashSet` with SipHash and with
//! foldhash, and the crates a Rust user would pick instead (fastbloom, bloomfilter, xorf).
//!
//! Every structure is called through a closure over its concrete type: the same monomorphised,
//! inlinable loop for all, no `dyn` call anywhere in a timed loop.

use std::collections::HashSet;
use std::time::Duration;

use bloomlab_filters::{
    AtomicBits, Blocked512, Bloom, EnhancedDoubleHash, FilterExt, FlatBits, Fnv1a, GuavaMitz64,
    Key, KirschMitzenmacher, Lookup3, Murmur3, SplitBlock, TextbookFnv1aI32, Variant, VariantId,
    VariantVisitor, Xxh3, Xxh3Wide, Xxh64, registry,
};
use bloomlab_harness::schema::bench::{
    BenchRecord, FLOOR_REFERENCE, FORMAT_FLOOR_REFERENCE, Family, Group, Growth, KeyKind,
    Operation, PairedRecord, Series, floor_structures, grown_label, label, selector,
};
use criterion::Criterion;
use xorf::{BinaryFuse8, BinaryFuse16, Filter as XorFilter};
use xxhash_rust::xxh3::xxh3_64;

use crate::floor::Floor;
use crate::keys::{StrKeys, U64Keys};
use crate::memory::{Log, measure_build};
use crate::timing::{Config, bench, chunk_timer, count_hits, paired, timer};

/// Guava's layout, which the bench also times against the floor at its format's positions.
type GuavaLayout = Bloom<Murmur3, GuavaMitz64, FlatBits>;

/// The lookup batches of one key kind and n, and the exact set every lookup is paired with (std
/// `HashSet` holding the same keys).
pub struct Workload<'w, K, S> {
    pub present: &'w [K],
    pub absent: &'w [K],
    pub reference: &'w S,
    pub reference_label: &'static str,
}

/// The string keys of one n as slices: all inserted keys, and the present and absent batches.
pub struct Batches<'k> {
    pub inserted: &'k [&'k str],
    pub present: &'k [&'k str],
    pub absent: &'k [&'k str],
}

impl<'k> Batches<'k> {
    /// The lookup batches, paired with `reference` (std `HashSet<String>` holding the keys).
    pub fn workload(
        &self,
        reference: &'k HashSet<String>,
    ) -> Workload<'k, &'k str, HashSet<String>> {
        Workload {
            present: self.present,
            absent: self.absent,
            reference,
            reference_label: KeyKind::Str.reference(),
        }
    }
}

/// Membership in the reference set, called as its concrete type.
pub trait Exact<K> {
    fn has(&self, key: K) -> bool;
}

impl<'k> Exact<&'k str> for HashSet<String> {
    #[inline]
    fn has(&self, key: &'k str) -> bool {
        self.contains(key)
    }
}

impl Exact<u64> for HashSet<u64> {
    #[inline]
    fn has(&self, key: u64) -> bool {
        self.contains(&key)
    }
}

/// The largest n at which every variant runs by default (beyond it, the representative set).
pub const ALL_VARIANTS_UP_TO: u64 = 1_000_000;

/// Target rates: the headline 1% and a second, tighter one.
pub const RATES: [f64; 2] = [0.01, 0.001];

/// The variants also run at 0.1% and on u64 keys (all of them with `BLOOMLAB_BENCH_ALL=1`): one
/// per hash, index scheme, store and layout, so every axis is represented.
pub fn representative() -> [&'static str; 11] {
    [
        VariantId::of::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>().name(),
        VariantId::of::<Bloom<Xxh3, KirschMitzenmacher, AtomicBits>>().name(),
        VariantId::of::<Bloom<Xxh3, EnhancedDoubleHash, FlatBits>>().name(),
        VariantId::of::<Bloom<Xxh3Wide, KirschMitzenmacher, FlatBits>>().name(),
        VariantId::of::<Bloom<Murmur3, GuavaMitz64, FlatBits>>().name(),
        VariantId::of::<Bloom<Fnv1a, KirschMitzenmacher, FlatBits>>().name(),
        VariantId::of::<Bloom<Lookup3, KirschMitzenmacher, FlatBits>>().name(),
        VariantId::of::<Blocked512<Xxh3>>().name(),
        VariantId::of::<SplitBlock<Xxh3>>().name(),
        VariantId::of::<SplitBlock<Xxh64>>().name(),
        VariantId::of::<TextbookFnv1aI32>().name(),
    ]
}

/// What identifies one measured structure.
#[derive(Clone)]
pub struct Meta {
    pub keys: KeyKind,
    pub structure: String,
    pub family: Family,
    pub p: Option<f64>,
    pub n: u64,
    /// The series measuring it, which names its criterion groups.
    pub series: Series,
    /// The label of the static filter it is compared with in its series.
    pub twin: Option<String>,
    /// How a growable filter grew (scalable series).
    pub growth: Option<Growth>,
}

impl Meta {
    /// A structure of the main series.
    pub fn main(keys: KeyKind, structure: &str, family: Family, p: Option<f64>, n: u64) -> Self {
        Self {
            keys,
            structure: structure.to_owned(),
            family,
            p,
            n,
            series: Series::Main,
            twin: None,
            growth: None,
        }
    }

    /// The criterion function id: [`label`], or [`grown_label`] for a grown filter.
    pub fn label(&self) -> String {
        match self.growth {
            Some(g) => grown_label(&self.structure, self.p, g.factor),
            None => label(&self.structure, self.p),
        }
    }

    /// The text `BLOOMLAB_BENCH_ONLY` is matched against ([`selector`]).
    pub fn selector(&self) -> String {
        selector(self.series, &self.label())
    }

    /// The criterion group of `op` on this structure's keys in its series.
    pub fn group(&self, op: Operation) -> Group {
        Group::in_series(self.series, op, self.keys)
    }
}

/// The benchmark driver's state.
pub struct Suite<'a> {
    pub c: &'a mut Criterion,
    pub cfg: &'a Config,
    pub log: &'a mut Log,
}

impl Suite<'_> {
    /// Benchmarks `op` on each key of `batch` as `<group>/<label>/<n>` with this run's settings.
    pub(crate) fn time<K: Copy, R: Into<u64>>(
        &mut self,
        group: Group,
        label: &str,
        n: u64,
        batch: &[K],
        op: impl FnMut(K) -> R,
    ) {
        bench(self.c, self.cfg, group, label, n, timer(batch, op));
    }

    /// Benchmarks a lookup with criterion, then compares it with the reference in the paired
    /// rounds (see [`paired`]), recorded as `<group>/<label>/<n>` in the log.
    pub(crate) fn time_paired(
        &mut self,
        (group, label, n): (Group, &str, u64),
        reference: &'static str,
        mut reference_time: impl FnMut(u64) -> Duration,
        mut time: impl FnMut(u64) -> Duration,
    ) {
        bench(self.c, self.cfg, group, label, n, &mut time);
        let rounds = paired(self.cfg, &mut reference_time, &mut time);
        self.push_pair((group, label, n), reference, rounds);
    }

    /// Records the paired rounds `(reference ns, structure ns)` of `label` at `n` in `group`
    /// against `reference`; nothing when the run takes no rounds.
    fn push_pair(
        &mut self,
        (group, label, n): (Group, &str, u64),
        reference: &str,
        (reference_ns, structure_ns): (Vec<f64>, Vec<f64>),
    ) {
        if !structure_ns.is_empty() {
            self.log.push_paired(PairedRecord {
                group,
                label: label.to_owned(),
                n,
                reference: reference.to_owned(),
                reference_ns,
                structure_ns,
            });
        }
    }

    /// Filter `f` against its floor on `batch`, in paired rounds: `contains` against
    /// [`Floor::one`], recorded in `group` (a one-by-one lookup's), and `contains_batch` (checked
    /// to give the one-by-one count) against [`Floor::batch`], in the group's batched form; both
    /// against [`FLOOR_REFERENCE`].
    pub(crate) fn floor_pairs<F: Variant, K: Key + Copy>(
        &mut self,
        at: (Group, &str, u64),
        (f, floor): (&F, &Floor<F>),
        batch: &[K],
    ) {
        self.pairs_against_floor(
            at,
            f,
            (
                FLOOR_REFERENCE,
                |k: &K| floor.one(k),
                |keys: &[K]| floor.batch(keys),
            ),
            batch,
        );
    }

    /// [`Suite::floor_pairs`] against any floor: `one` for a one-by-one lookup, `batched` for
    /// `contains_batch`, recorded against `reference`.
    fn pairs_against_floor<F: Variant, K: Key + Copy>(
        &mut self,
        (group, label, n): (Group, &str, u64),
        f: &F,
        (reference, one, batched): (&str, impl Fn(&K) -> u64, impl Fn(&[K]) -> u64),
        batch: &[K],
    ) {
        let one_by_one = paired(
            self.cfg,
            timer(batch, |k: K| one(&k)),
            timer(batch, |k: K| f.contains(&k)),
        );
        self.push_pair((group, label, n), reference, one_by_one);
        let (hits, all) = (count_hits(batch, |k| f.contains(&k)), batch_hits(f, batch));
        assert_eq!(
            hits, all,
            "{label}, n = {n}, {}: contains_batch found {all} keys, contains {hits}",
            group.op
        );
        let batched = paired(
            self.cfg,
            chunk_timer(batch, |keys: &[K]| batched(keys)),
            chunk_timer(batch, |keys: &[K]| batch_hits(f, keys)),
        );
        let op = group
            .op
            .batched()
            .expect("a one-by-one lookup has a batched form");
        self.push_pair((Group { op, ..group }, label, n), reference, batched);
    }

    /// The floor pairs of filter `f` on string keys ([`Suite::floor_pairs`]), on the present and
    /// the absent batch, in the main series' lookup groups; for Guava's layout also against the
    /// floor at its format's positions ([`FORMAT_FLOOR_REFERENCE`]).
    fn str_floor<F: Variant>(&mut self, meta: &Meta, w: &Workload<&str, HashSet<String>>, f: &F) {
        let floor = Floor::new(f, f.memory_bytes() as u64);
        let label = meta.label();
        let guava = (f as &dyn std::any::Any).downcast_ref::<GuavaLayout>();
        let format_floor = guava.map(|g| Floor::new(g, f.memory_bytes() as u64));
        let own = format_floor.as_ref().map(Floor::at_own_positions);
        for (op, batch) in [
            (Operation::LookupPresent, w.present),
            (Operation::LookupAbsent, w.absent),
        ] {
            let at = (meta.group(op), label.as_str(), meta.n);
            self.floor_pairs(at, (f, &floor), batch);
            if let (Some(g), Some(own)) = (guava, &own) {
                self.pairs_against_floor(
                    at,
                    g,
                    (
                        FORMAT_FLOOR_REFERENCE,
                        |k: &&str| own.one(k),
                        |keys: &[&str]| own.batch(keys),
                    ),
                    batch,
                );
            }
        }
    }

    /// Checks the structure (every present key found), records its memory and observed FPR, and
    /// benchmarks present and absent lookups, each followed by its paired comparison with the
    /// workload's reference set looking up the same batch.
    pub(crate) fn lookups<K: Copy, S: Exact<K>>(
        &mut self,
        meta: &Meta,
        built: (usize, Duration),
        w: &Workload<K, S>,
        mut contains: impl FnMut(K) -> bool,
    ) {
        let (present, absent) = (w.present, w.absent);
        let label = meta.label();
        let found = count_hits(present, &mut contains);
        assert_eq!(
            found,
            present.len() as u64,
            "{label}, n = {}: {} of {} present keys not found (false negatives)",
            meta.n,
            present.len() as u64 - found,
            present.len()
        );
        let false_pos = count_hits(absent, &mut contains);
        self.log.push(BenchRecord {
            keys: meta.keys,
            label: label.clone(),
            structure: meta
                .structure
                .parse()
                .expect("a structure the schema knows"),
            family: meta.family,
            p: meta.p,
            n: meta.n,
            heap_bytes: built.0 as u64,
            build_ns_per_key: built.1.as_nanos() as f64 / meta.n as f64,
            observed_fpr: false_pos as f64 / absent.len() as f64,
            absent_batch: absent.len() as u64,
            series: meta.series,
            twin: meta.twin.clone(),
            growth: meta.growth,
        });
        for (op, batch) in [
            (Operation::LookupPresent, present),
            (Operation::LookupAbsent, absent),
        ] {
            self.time_paired(
                (meta.group(op), &label, meta.n),
                w.reference_label,
                timer(batch, |k| w.reference.has(k)),
                timer(batch, &mut contains),
            );
        }
    }

    /// Benchmarks inserting the keys of `present` (members) again: the filter's bits do not change
    /// (they are set already), so every iteration does the same work on the same state. Only for
    /// structures whose state an insert of a member leaves alone (not counting or scalable
    /// filters, whose series time inserts their own way).
    pub(crate) fn inserts<K: Copy>(
        &mut self,
        meta: &Meta,
        present: &[K],
        mut insert: impl FnMut(K),
    ) {
        let group = meta.group(Operation::Insert);
        self.time(group, &meta.label(), meta.n, present, |k| {
            insert(k);
            0u64
        });
    }

    /// Benchmarks batched lookups (`contains_batch`: the next keys hashed and prefetched ahead) of
    /// the present and absent batches, groups `lookup-batch-<present|absent>-<keys>`, after
    /// checking they give exactly the per-key answers' counts; each paired with the reference's
    /// one-by-one lookups.
    fn batched<K: Copy, S: Exact<K>>(
        &mut self,
        meta: &Meta,
        w: &Workload<K, S>,
        mut contains: impl FnMut(K) -> bool,
        mut contains_batch: impl FnMut(&[K]) -> u64,
    ) {
        let label = meta.label();
        for (op, batch) in [
            (Operation::LookupBatchPresent, w.present),
            (Operation::LookupBatchAbsent, w.absent),
        ] {
            let one_by_one = count_hits(batch, &mut contains);
            let batched = contains_batch(batch);
            assert_eq!(
                batched,
                one_by_one,
                "{label}, n = {}: batched lookups found {batched} of the {} batch, one-by-one \
                 lookups {one_by_one}",
                meta.n,
                op.batch().unwrap_or_default()
            );
            self.time_paired(
                (meta.group(op), &label, meta.n),
                w.reference_label,
                timer(batch, |k| w.reference.has(k)),
                chunk_timer(batch, &mut contains_batch),
            );
        }
    }

    /// Batched lookups are measured for the representative variants at the headline rate.
    fn wants_batched(name: &str, p: f64) -> bool {
        p == RATES[0] && representative().contains(&name)
    }

    /// Whether the main series measures variant `name` at `p` on `keys`. Never a counting or
    /// scalable variant: an insert changes a counting filter's counters and grows a scalable one,
    /// so the main series' re-insert would not repeat the same work on the same state; their own
    /// series ([`Suite::counting`], [`Suite::scalable`]) measure them.
    ///
    /// By default every variant runs at the headline rate on string keys at up to 1M keys (at the
    /// short criterion times of [`crate::timing::Config::times`]), and only the representative
    /// set beyond: a full run fits in about half an hour ([`crate::timing`]).
    fn wants_variant(&self, name: &str, p: f64, keys: KeyKind, n: u64) -> bool {
        let caps = registry::capabilities(name).expect("names() lists registered names");
        if caps.remove || caps.grow {
            return false;
        }
        let headline = p == RATES[0] && keys == KeyKind::Str && n <= ALL_VARIANTS_UP_TO;
        headline || self.cfg.all_variants_everywhere || representative().contains(&name)
    }

    /// Every structure on the string keys of one n: the exact sets, the hashes alone, then at
    /// each rate bloomlab's variants and the other crates, then the layout, scalable and counting
    /// series.
    pub fn strings(&mut self, keys: &StrKeys, n: u64) {
        let inserted: Vec<&str> = keys.inserted.iter().collect();
        let present: Vec<&str> = keys.present.iter().collect();
        let absent: Vec<&str> = keys.absent.iter().collect();
        let batches = Batches {
            inserted: &inserted,
            present: &present,
            absent: &absent,
        };

        // The reference is built even when it is not itself measured: every lookup is paired
        // with it.
        let (mut std_set, bytes, t) = measure_build(|| {
            let mut s = HashSet::new();
            for k in &inserted {
                s.insert((*k).to_owned());
            }
            s
        });
        let w = batches.workload(&std_set);
        self.str_exact_sets(&batches, &w, (bytes, t), n);
        self.hashing(n, &present);
        for p in RATES {
            self.str_variants(&batches, &w, p, n);
            self.str_crates(&batches, &w, p, n);
            self.str_xorf(&batches, &w, p, n);
        }

        // The layout series and the capability series, on the same keys and batches, each with
        // its own std HashSet figures; the counting series last, as it removes and re-inserts the HashSet's keys (it
        // ends holding the same keys).
        self.layouts(&batches, &std_set, (bytes, t), n);
        self.scalable(&batches, &std_set, (bytes, t), n);
        self.counting(&batches, &mut std_set, (bytes, t), n);
    }

    /// The exact sets on string keys: std `HashSet<String>` (the reference, already built:
    /// `reference_built` is its heap bytes and build time) and foldhash's.
    fn str_exact_sets(
        &mut self,
        b: &Batches,
        w: &Workload<&str, HashSet<String>>,
        reference_built: (usize, Duration),
        n: u64,
    ) {
        let meta = Meta::main(
            KeyKind::Str,
            KeyKind::Str.reference(),
            Family::HashSet,
            None,
            n,
        );
        if self.cfg.wants(&meta.selector()) {
            let std_set = w.reference;
            self.lookups(&meta, reference_built, w, |k: &str| std_set.contains(k));
        }
        let meta = Meta::main(
            KeyKind::Str,
            "foldhash HashSet<String>",
            Family::HashSet,
            None,
            n,
        );
        if self.cfg.wants(&meta.selector()) {
            let (set, bytes, t) = measure_build(|| {
                let mut s = foldhash::HashSet::default();
                for k in b.inserted {
                    s.insert((*k).to_owned());
                }
                s
            });
            self.lookups(&meta, (bytes, t), w, |k: &str| set.contains(k));
        }
    }

    /// bloomlab's registered variants at `p` on string keys, each visited by name so that it runs
    /// as its concrete type; inserts too at the headline rate.
    fn str_variants(&mut self, b: &Batches, w: &Workload<&str, HashSet<String>>, p: f64, n: u64) {
        for name in registry::names() {
            let meta = Meta::main(KeyKind::Str, &name, Family::Bloomlab, Some(p), n);
            if !self.wants_variant(&name, p, KeyKind::Str, n) || !self.cfg.wants(&meta.selector()) {
                continue;
            }
            let visit = StrVariant {
                suite: self,
                meta,
                inserted: b.inserted,
                w,
                with_inserts: p == RATES[0],
            };
            registry::visit(&name, visit).expect("names() lists registered names");
        }
    }

    /// fastbloom (its own hasher and foldhash) and bloomfilter at `p` on string keys; inserts too
    /// at the headline rate.
    fn str_crates(&mut self, b: &Batches, w: &Workload<&str, HashSet<String>>, p: f64, n: u64) {
        let base = |structure: &str| Meta::main(KeyKind::Str, structure, Family::Crate, Some(p), n);
        let (inserted, present) = (b.inserted, b.present);
        let meta = base("fastbloom");
        if self.cfg.wants(&meta.selector()) {
            let (mut f, bytes, t) = measure_build(|| {
                let mut f = fastbloom::BloomFilter::with_false_pos(p).expected_items(n as usize);
                for k in inserted {
                    f.insert(*k);
                }
                f
            });
            self.lookups(&meta, (bytes, t), w, |k: &str| f.contains(k));
            if p == RATES[0] {
                self.inserts(&meta, present, |k: &str| {
                    f.insert(k);
                });
            }
        }
        let meta = base("fastbloom+foldhash");
        if self.cfg.wants(&meta.selector()) {
            let (mut f, bytes, t) = measure_build(|| {
                let mut f = fastbloom::BloomFilter::with_false_pos(p)
                    .hasher(foldhash::fast::RandomState::default())
                    .expected_items(n as usize);
                for k in inserted {
                    f.insert(*k);
                }
                f
            });
            self.lookups(&meta, (bytes, t), w, |k: &str| f.contains(k));
            if p == RATES[0] {
                self.inserts(&meta, present, |k: &str| {
                    f.insert(k);
                });
            }
        }
        let meta = base("bloomfilter");
        if self.cfg.wants(&meta.selector()) {
            let (mut f, bytes, t) = measure_build(|| {
                let mut f = bloomfilter::Bloom::<str>::new_for_fp_rate(n as usize, p)
                    .expect("valid n and p");
                for k in inserted {
                    f.set(*k);
                }
                f
            });
            self.lookups(&meta, (bytes, t), w, |k: &str| f.check(k));
            if p == RATES[0] {
                self.inserts(&meta, present, |k: &str| f.set(k));
            }
        }
    }

    /// xorf's binary fuse filter at `p` on string keys. xorf filters hold u64 keys: strings are
    /// hashed with XXH3-64 (the hash bloomlab's xxh3 variants use) and that hashing is part of
    /// every lookup's time. Its rate is fixed by the fingerprint width: 8 bits (~0.4%) for 1%,
    /// 16 bits (~0.002%) for 0.1%.
    fn str_xorf(&mut self, b: &Batches, w: &Workload<&str, HashSet<String>>, p: f64, n: u64) {
        let (structure, wide) = if p == RATES[0] {
            ("xorf BinaryFuse8+xxh3", false)
        } else {
            ("xorf BinaryFuse16+xxh3", true)
        };
        let meta = Meta::main(KeyKind::Str, structure, Family::Crate, Some(p), n);
        if !self.cfg.wants(&meta.selector()) {
            return;
        }
        let hashes = || {
            b.inserted
                .iter()
                .map(|k| xxh3_64(k.as_bytes()))
                .collect::<Vec<u64>>()
        };
        if wide {
            let (f, bytes, t) = measure_build(|| {
                BinaryFuse16::try_from(&hashes()).expect("distinct 64-bit hashes")
            });
            self.lookups(&meta, (bytes, t), w, |k: &str| {
                f.contains(&xxh3_64(k.as_bytes()))
            });
        } else {
            let (f, bytes, t) =
                measure_build(|| BinaryFuse8::try_from(&hashes()).expect("distinct 64-bit hashes"));
            self.lookups(&meta, (bytes, t), w, |k: &str| {
                f.contains(&xxh3_64(k.as_bytes()))
            });
        }
    }

    /// Hashing alone, over the same present batch: how much of a lookup is the hash. Group
    /// `hash-str`; bloomlab's strategies through their `digest`, and the hashers the HashSets use.
    fn hashing(&mut self, n: u64, batch: &[&str]) {
        use bloomlab_filters::{Fnv1a, Lookup3, Murmur3, Xxh3, Xxh3Wide, Xxh64};
        use std::hash::BuildHasher;

        let group = Group::new(Operation::Hash, KeyKind::Str);
        self.digest::<Fnv1a>(group, n, batch);
        self.digest::<Murmur3>(group, n, batch);
        self.digest::<Xxh3>(group, n, batch);
        self.digest::<Xxh3Wide>(group, n, batch);
        self.digest::<Xxh64>(group, n, batch);
        self.digest::<Lookup3>(group, n, batch);
        let cfg = self.cfg;
        let sip = std::collections::hash_map::RandomState::new();
        if cfg.wants("SipHash-1-3 (std HashSet)") {
            self.time(group, "SipHash-1-3 (std HashSet)", n, batch, |k: &str| {
                sip.hash_one(k)
            });
        }
        let fold = foldhash::fast::RandomState::default();
        if cfg.wants("foldhash (foldhash HashSet)") {
            self.time(group, "foldhash (foldhash HashSet)", n, batch, |k: &str| {
                fold.hash_one(k)
            });
        }
    }

    /// One hash strategy's digest, both words (what the classic and blocked layouts consume).
    fn digest<H: bloomlab_filters::HashStrategy>(&mut self, group: Group, n: u64, batch: &[&str]) {
        let label = format!("digest {}", H::ID);
        if self.cfg.wants(&label) {
            self.time(group, &label, n, batch, |k: &str| {
                let d = H::digest(k.as_bytes());
                d.h1 ^ d.h2
            });
        }
    }

    /// The exact sets, the representative bloomlab variants and the other crates on u64 keys.
    pub fn u64s(&mut self, keys: &U64Keys, n: u64) {
        let (inserted, present, absent) = (&keys.inserted, &keys.present, &keys.absent);
        let base = |structure: &str, family, p| Meta::main(KeyKind::U64, structure, family, p, n);

        let meta = base(KeyKind::U64.reference(), Family::HashSet, None);
        let (std_set, bytes, t) =
            measure_build(|| inserted.iter().copied().collect::<HashSet<u64>>());
        let w = Workload {
            present,
            absent,
            reference: &std_set,
            reference_label: KeyKind::U64.reference(),
        };
        if self.cfg.wants(&meta.selector()) {
            self.lookups(&meta, (bytes, t), &w, |k: u64| std_set.contains(&k));
        }
        let meta = base("foldhash HashSet<u64>", Family::HashSet, None);
        if self.cfg.wants(&meta.selector()) {
            let (set, bytes, t) =
                measure_build(|| inserted.iter().copied().collect::<foldhash::HashSet<u64>>());
            self.lookups(&meta, (bytes, t), &w, |k: u64| set.contains(&k));
        }

        for p in RATES {
            for name in registry::names() {
                let meta = base(&name, Family::Bloomlab, Some(p));
                if !self.wants_variant(&name, p, KeyKind::U64, n)
                    || !self.cfg.wants(&meta.selector())
                {
                    continue;
                }
                let visit = U64Variant {
                    suite: self,
                    meta,
                    inserted,
                    w: &w,
                };
                registry::visit(&name, visit).expect("names() lists registered names");
            }
            let meta = base("fastbloom", Family::Crate, Some(p));
            if self.cfg.wants(&meta.selector()) {
                let (f, bytes, t) = measure_build(|| {
                    let mut f =
                        fastbloom::BloomFilter::with_false_pos(p).expected_items(n as usize);
                    for k in inserted {
                        f.insert(k);
                    }
                    f
                });
                self.lookups(&meta, (bytes, t), &w, |k: u64| f.contains(&k));
            }
            let meta = base("fastbloom+foldhash", Family::Crate, Some(p));
            if self.cfg.wants(&meta.selector()) {
                let (f, bytes, t) = measure_build(|| {
                    let mut f = fastbloom::BloomFilter::with_false_pos(p)
                        .hasher(foldhash::fast::RandomState::default())
                        .expected_items(n as usize);
                    for k in inserted {
                        f.insert(k);
                    }
                    f
                });
                self.lookups(&meta, (bytes, t), &w, |k: u64| f.contains(&k));
            }
            let meta = base("bloomfilter", Family::Crate, Some(p));
            if self.cfg.wants(&meta.selector()) {
                let (f, bytes, t) = measure_build(|| {
                    let mut f = bloomfilter::Bloom::<u64>::new_for_fp_rate(n as usize, p)
                        .expect("valid n and p");
                    for k in inserted {
                        f.set(k);
                    }
                    f
                });
                self.lookups(&meta, (bytes, t), &w, |k: u64| f.check(&k));
            }
            // xorf takes u64 keys directly (it mixes them itself), as its docs intend.
            let structure = if p == RATES[0] {
                "xorf BinaryFuse8"
            } else {
                "xorf BinaryFuse16"
            };
            let meta = base(structure, Family::Crate, Some(p));
            if self.cfg.wants(&meta.selector()) {
                if p == RATES[0] {
                    let (f, bytes, t) =
                        measure_build(|| BinaryFuse8::try_from(inserted).expect("distinct keys"));
                    self.lookups(&meta, (bytes, t), &w, |k: u64| f.contains(&k));
                } else {
                    let (f, bytes, t) =
                        measure_build(|| BinaryFuse16::try_from(inserted).expect("distinct keys"));
                    self.lookups(&meta, (bytes, t), &w, |k: u64| f.contains(&k));
                }
            }
        }
    }
}

/// One bloomlab variant on string keys, run as its concrete type `F`.
struct StrVariant<'s, 'a> {
    suite: &'s mut Suite<'a>,
    meta: Meta,
    inserted: &'s [&'s str],
    w: &'s Workload<'s, &'s str, HashSet<String>>,
    with_inserts: bool,
}

impl VariantVisitor for StrVariant<'_, '_> {
    type Output = ();
    fn visit<F: Variant>(self) {
        let (n, p) = (self.meta.n, self.meta.p.expect("filters have a rate"));
        let (mut f, bytes, t) = measure_build(|| {
            let mut f = F::sized_for(n, p)
                .unwrap_or_else(|e| panic!("{} for n = {n}, p = {p}: {e}", self.meta.structure));
            for k in self.inserted {
                f.insert_bytes(k.as_bytes());
            }
            f
        });
        self.suite
            .lookups(&self.meta, (bytes, t), self.w, |k: &str| {
                f.contains_bytes(k.as_bytes())
            });
        let (name, p) = (&self.meta.structure, self.meta.p.unwrap_or(0.0));
        if Suite::wants_batched(name, p) {
            self.suite.batched(
                &self.meta,
                self.w,
                |k: &str| f.contains_bytes(k.as_bytes()),
                |keys: &[&str]| batch_hits(&f, keys),
            );
        }
        if p == RATES[0] && floor_structures(KeyKind::Str).contains(&name.as_str()) {
            self.suite.str_floor(&self.meta, self.w, &f);
        }
        if self.with_inserts {
            self.suite.inserts(&self.meta, self.w.present, |k: &str| {
                f.insert_bytes(k.as_bytes());
            });
        }
    }
}

/// How many of `keys` one `contains_batch` call on `f` reports present.
pub(crate) fn batch_hits<F: Variant, K: Key>(f: &F, keys: &[K]) -> u64 {
    let mut hits = 0;
    f.contains_batch(keys, |_, found| hits += u64::from(found));
    hits
}

/// One bloomlab variant on u64 keys (their 8 little-endian bytes), run as its concrete type `F`.
struct U64Variant<'s, 'a> {
    suite: &'s mut Suite<'a>,
    meta: Meta,
    inserted: &'s [u64],
    w: &'s Workload<'s, u64, HashSet<u64>>,
}

impl VariantVisitor for U64Variant<'_, '_> {
    type Output = ();
    fn visit<F: Variant>(self) {
        let (n, p) = (self.meta.n, self.meta.p.expect("filters have a rate"));
        let (f, bytes, t) = measure_build(|| {
            let mut f = F::sized_for(n, p)
                .unwrap_or_else(|e| panic!("{} for n = {n}, p = {p}: {e}", self.meta.structure));
            for k in self.inserted {
                f.insert(k);
            }
            f
        });
        self.suite
            .lookups(&self.meta, (bytes, t), self.w, |k: u64| f.contains(&k));
        let (name, p) = (&self.meta.structure, self.meta.p.unwrap_or(0.0));
        if Suite::wants_batched(name, p) {
            self.suite.batched(
                &self.meta,
                self.w,
                |k: u64| f.contains(&k),
                |keys: &[u64]| batch_hits(&f, keys),
            );
        }
    }
}
