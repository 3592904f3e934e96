//! The regime series (groups `regime-*`): the flagship of each layout
//! ([`bloomlab_harness::schema::bench::flagships`], p = 1%), std `HashSet<u64>`, fastbloom (SipHash and
//! foldhash) and xorf `BinaryFuse8` on u64 keys at the regime sizes (by default 1e5, 1e6, 1e7
//! and 1e8 keys: structures from a core's L2 to DRAM), each looked up with batches of 0, 25, 50,
//! 75 and 100% present keys ([`Operation::MIXES`]).
//!
//! Beside each structure, over a buffer of as many bytes as it holds: one dependent load per
//! iteration in a random cyclic walk over the buffer's cache lines ([`Operation::Chase`]: the
//! memory latency at that size, TLB misses included) and one independent load of a random line
//! per iteration ([`Operation::Gather`]: what a random access costs when, as in a batch of
//! lookups, the next one need not wait for it). And per n, hashing a key alone
//! ([`Operation::Hash`]): XXH3 (the flagships' hash), foldhash and SipHash-1-3.
//!
//! u64 keys, so that the memory hierarchy is measured rather than the fetch of key bytes, and so
//! that 1e8 keys fit (the 1e8 keys themselves take 800 MB, std `HashSet<u64>` about 1.2 GB).
//! Structures are built one at a time and dropped before the next, so the run's peak is the keys
//! plus the largest build (xorf's construction, a few GB at 1e8). Criterion's times are short
//! for non-headline structures ([`crate::timing::Config::times`]); the only paired rounds are each
//! flagship's against its floor ([`Suite::regime_floor`]).

use std::collections::HashSet;
use std::hash::BuildHasher;
use std::hint::black_box;
use std::time::{Duration, Instant};

use bloomlab_filters::{FilterExt, HashStrategy, Variant, VariantVisitor, Xxh3, registry};
use bloomlab_harness::schema::bench::{
    BenchRecord, Family, Group, KEY_FETCH, KeyKind, Operation, Series, flagships, label, selector,
};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use xorf::{BinaryFuse8, Filter as XorFilter};

use crate::floor::Floor;
use crate::keys::{U64Keys, mixed};
use crate::memory::measure_build;
use crate::suite::Suite;
use crate::timing::{Config, bench, count_hits, timer};

/// The headline rate every filter of the series is sized for.
const P: f64 = 0.01;

/// Seeds of the memory walks.
const SEED_CHASE: u64 = 0x5EED_0005;
const SEED_GATHER: u64 = 0x5EED_0006;

/// Words per 64-byte cache line.
const LINE_WORDS: usize = 8;

/// The lookup batches of one n: each mix with its number of present keys.
struct Mixes {
    batches: Vec<(Operation, Vec<u64>, u64)>,
}

/// One structure of the series: its label, family and rate.
struct Item {
    structure: &'static str,
    family: Family,
    p: Option<f64>,
}

impl Item {
    fn label(&self) -> String {
        label(self.structure, self.p)
    }
    fn selector(&self) -> String {
        selector(Series::Regime, &self.label())
    }
}

impl Suite<'_> {
    /// The whole regime series, at every regime size.
    pub fn regimes(&mut self) {
        // The main series' configuration: the same criterion times per structure
        // ([`Config::times`]), so a flagship's figure does not depend on the series.
        let cfg = self.cfg;
        for &n in &self.cfg.regime_sizes.clone() {
            let items = regime_items();
            let wanted = items.iter().any(|i| self.cfg.wants(&i.selector()))
                || self.cfg.wants("regime: hash");
            if !wanted {
                continue;
            }
            eprintln!("regime series: n = {n}");
            let keys = U64Keys::new(n);
            let mixes = Mixes {
                batches: Operation::MIXES
                    .iter()
                    .map(|&op| {
                        let percent = op.present_percent().expect("a mix has a present share");
                        let (batch, present) = mixed(&keys.present, &keys.absent, percent);
                        (op, batch, present)
                    })
                    .collect(),
            };
            if self.cfg.wants("regime: hash") {
                self.regime_hashing(cfg, n, &keys.present);
            }
            for item in items {
                if !self.cfg.wants(&item.selector()) {
                    continue;
                }
                let bytes = self.regime_structure(cfg, &item, n, &keys.inserted, &mixes);
                self.regime_memory(cfg, &item.label(), n, bytes);
            }
        }
    }

    /// Builds `item` from `inserted`, records it and times the mixes (a flagship also against its
    /// floor, [`Suite::regime_floor`]); returns its heap bytes (the structure is dropped on
    /// return).
    fn regime_structure(
        &mut self,
        cfg: &Config,
        item: &Item,
        n: u64,
        inserted: &[u64],
        mixes: &Mixes,
    ) -> u64 {
        let cap = usize::try_from(n).expect("n keys fit in memory");
        match item.structure {
            s if s == KeyKind::U64.reference() => {
                let (set, bytes, t) =
                    measure_build(|| inserted.iter().copied().collect::<HashSet<u64>>());
                self.regime_lookups(cfg, item, n, (bytes, t), mixes, |k| set.contains(&k))
            }
            "fastbloom" => {
                let (f, bytes, t) = measure_build(|| {
                    let mut f = fastbloom::BloomFilter::with_false_pos(P).expected_items(cap);
                    for k in inserted {
                        f.insert(k);
                    }
                    f
                });
                self.regime_lookups(cfg, item, n, (bytes, t), mixes, |k| f.contains(&k))
            }
            "fastbloom+foldhash" => {
                let (f, bytes, t) = measure_build(|| {
                    let mut f = fastbloom::BloomFilter::with_false_pos(P)
                        .hasher(foldhash::fast::RandomState::default())
                        .expected_items(cap);
                    for k in inserted {
                        f.insert(k);
                    }
                    f
                });
                self.regime_lookups(cfg, item, n, (bytes, t), mixes, |k| f.contains(&k))
            }
            "xorf BinaryFuse8" => {
                let (f, bytes, t) =
                    measure_build(|| BinaryFuse8::try_from(inserted).expect("distinct keys"));
                self.regime_lookups(cfg, item, n, (bytes, t), mixes, |k| f.contains(&k))
            }
            name => registry::visit(
                name,
                RegimeVariant {
                    suite: self,
                    cfg,
                    item,
                    n,
                    inserted,
                    mixes,
                },
            )
            .expect("FLAGSHIPS are registered names"),
        }
    }

    /// Checks `contains` on every mix (each present key found; an exact set finds nothing else),
    /// records the structure, and times each mix. Returns the heap bytes.
    fn regime_lookups(
        &mut self,
        cfg: &Config,
        item: &Item,
        n: u64,
        (bytes, t): (usize, Duration),
        mixes: &Mixes,
        mut contains: impl FnMut(u64) -> bool,
    ) -> u64 {
        let label = item.label();
        let mut false_pos = 0;
        let mut absent_keys = 0;
        for (op, batch, present) in &mixes.batches {
            let found = count_hits(batch, &mut contains);
            assert!(
                found >= *present && (item.p.is_some() || found == *present),
                "{label}, n = {n}, {op}: found {found} keys, the batch holds {present} present \
                 keys of {}",
                batch.len()
            );
            if *op == Operation::LookupAbsent {
                false_pos = found;
                absent_keys = batch.len() as u64;
            }
        }
        self.log.push(BenchRecord {
            keys: KeyKind::U64,
            label: label.clone(),
            structure: item
                .structure
                .parse()
                .expect("a structure the schema knows"),
            family: item.family,
            p: item.p,
            n,
            heap_bytes: bytes as u64,
            build_ns_per_key: t.as_nanos() as f64 / n as f64,
            observed_fpr: false_pos as f64 / absent_keys.max(1) as f64,
            absent_batch: absent_keys,
            series: Series::Regime,
            twin: None,
            growth: None,
        });
        for (op, batch, _) in &mixes.batches {
            let group = Group::in_series(Series::Regime, *op, KeyKind::U64);
            bench(self.c, cfg, group, &label, n, timer(batch, &mut contains));
        }
        bytes as u64
    }

    /// The memory's dependent and independent random-load times over a buffer of `bytes` bytes
    /// (whole cache lines, at least two), recorded under the structure's label.
    fn regime_memory(&mut self, cfg: &Config, label: &str, n: u64, bytes: u64) {
        let lines = usize::try_from(bytes.div_ceil(64).max(2)).expect("the structure fit");
        let words = cycle(lines);
        let mut at = 0usize;
        let chase = |iters: u64| {
            let start = Instant::now();
            for _ in 0..iters {
                at = words[at * LINE_WORDS] as usize;
            }
            let elapsed = start.elapsed();
            black_box(at);
            elapsed
        };
        let group = Group::in_series(Series::Regime, Operation::Chase, KeyKind::U64);
        bench(self.c, cfg, group, label, n, chase);

        let mut rng = Pcg64Mcg::seed_from_u64(SEED_GATHER);
        let targets: Vec<usize> = (0..crate::keys::MAX_BATCH.min(lines * 4))
            .map(|_| rng.random_range(0..lines) * LINE_WORDS)
            .collect();
        let group = Group::in_series(Series::Regime, Operation::Gather, KeyKind::U64);
        bench(
            self.c,
            cfg,
            group,
            label,
            n,
            timer(&targets, |i: usize| words[i]),
        );
    }

    /// The floor of flagship `item`, filter `f` (group `regime-floor-u64`, [`Operation::Floor`]):
    /// [`Floor::one`] over the absent batch, a buffer of `bytes` bytes. Then the paired rounds
    /// ([`Suite::floor_pairs`]) of the floor and the filter's `contains`, and of the batched floor
    /// ([`Floor::batch`]) and the filter's `contains_batch`, each on the absent and on the present
    /// batch, recorded against
    /// [`FLOOR_REFERENCE`](bloomlab_harness::schema::bench::FLOOR_REFERENCE) (groups `regime-lookup-*` and
    /// `regime-lookup-batch-*`): criterion's two medians are taken seconds apart, and where the
    /// filter lives in an L3 shared with other tenants (1e7 keys on a 32 MB L3) either one moves
    /// 3-5x with the machine's state in that time.
    fn regime_floor<F: Variant>(
        &mut self,
        cfg: &Config,
        (item, n): (&Item, u64),
        f: &F,
        bytes: u64,
        mixes: &Mixes,
    ) {
        let floor = Floor::new(f, bytes);
        let label = item.label();
        let group = |op| Group::in_series(Series::Regime, op, KeyKind::U64);
        for (op, batch, _) in &mixes.batches {
            if *op == Operation::LookupAbsent {
                bench(
                    self.c,
                    cfg,
                    group(Operation::Floor),
                    &label,
                    n,
                    timer(batch, |k: u64| floor.one(&k)),
                );
            }
            if !matches!(op, Operation::LookupAbsent | Operation::LookupPresent) {
                continue;
            }
            self.floor_pairs((group(*op), &label, n), (f, &floor), batch);
        }
    }

    /// Hashing a key alone, on the present batch: XXH3 as the flagships use it (bloomlab's
    /// digest of the key's 8 bytes, both words), foldhash and SipHash-1-3 (std `HashSet`).
    fn regime_hashing(&mut self, cfg: &Config, n: u64, batch: &[u64]) {
        let group = Group::in_series(Series::Regime, Operation::Hash, KeyKind::U64);
        // The floor's first part: fetching the next key of the batch, nothing else.
        bench(self.c, cfg, group, KEY_FETCH, n, timer(batch, |k: u64| k));
        let digest = |k: u64| {
            let d = Xxh3::digest(&k.to_le_bytes());
            d.h1 ^ d.h2
        };
        bench(
            self.c,
            cfg,
            group,
            REGIME_HASHES[0],
            n,
            timer(batch, digest),
        );
        let fold = foldhash::fast::RandomState::default();
        bench(
            self.c,
            cfg,
            group,
            REGIME_HASHES[1],
            n,
            timer(batch, |k: u64| fold.hash_one(k)),
        );
        let sip = std::collections::hash_map::RandomState::new();
        bench(
            self.c,
            cfg,
            group,
            REGIME_HASHES[2],
            n,
            timer(batch, |k: u64| sip.hash_one(k)),
        );
    }
}

/// The labels of the regime series' hashing benchmarks.
const REGIME_HASHES: [&str; 3] = ["digest xxh3", "foldhash", "SipHash-1-3"];

/// The series' structures: std `HashSet<u64>`, the flagships, then the crates.
fn regime_items() -> Vec<Item> {
    let mut items = vec![Item {
        structure: KeyKind::U64.reference(),
        family: Family::HashSet,
        p: None,
    }];
    items.extend(flagships().map(|structure| Item {
        structure,
        family: Family::Bloomlab,
        p: Some(P),
    }));
    for structure in ["fastbloom", "fastbloom+foldhash", "xorf BinaryFuse8"] {
        items.push(Item {
            structure,
            family: Family::Crate,
            p: Some(P),
        });
    }
    items
}

/// `lines` cache lines (8 words each) whose first words link them into one random cycle
/// (Sattolo's shuffle gives a uniformly random cyclic permutation), so a walk from any line
/// visits every line before it returns, in an order no prefetcher can guess.
fn cycle(lines: usize) -> Vec<u64> {
    let mut rng = Pcg64Mcg::seed_from_u64(SEED_CHASE);
    let mut next: Vec<u32> = (0..lines as u32).collect();
    for i in (1..lines).rev() {
        let j = rng.random_range(0..i);
        next.swap(i, j);
    }
    let mut words = vec![0u64; lines * LINE_WORDS];
    for (line, &to) in next.iter().enumerate() {
        words[line * LINE_WORDS] = u64::from(to);
    }
    words
}

/// One flagship on u64 keys, run as its concrete type `F`; returns its heap bytes.
struct RegimeVariant<'s, 'a> {
    suite: &'s mut Suite<'a>,
    cfg: &'s Config,
    item: &'s Item,
    n: u64,
    inserted: &'s [u64],
    mixes: &'s Mixes,
}

impl VariantVisitor for RegimeVariant<'_, '_> {
    type Output = u64;
    fn visit<F: Variant>(self) -> u64 {
        let n = self.n;
        let (f, bytes, t) = measure_build(|| {
            let mut f = F::sized_for(n, P)
                .unwrap_or_else(|e| panic!("{} for n = {n}, p = {P}: {e}", self.item.structure));
            for k in self.inserted {
                f.insert(k);
            }
            f
        });
        let bytes =
            self.suite
                .regime_lookups(self.cfg, self.item, n, (bytes, t), self.mixes, |k| {
                    f.contains(&k)
                });
        self.suite
            .regime_floor(self.cfg, (self.item, n), &f, bytes, self.mixes);
        bytes
    }
}
