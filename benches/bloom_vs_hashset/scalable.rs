//! The scalable series: lookups in a scalable filter holding n keys after it grew from an initial
//! capacity of n/G keys, for each growth factor G of [`GROWTH`], so that the number of stages a
//! lookup probes grows (1, 5 and 11 stages at growth 2), beside a static filter of the stages'
//! layout sized for all n keys (its *twin*), std `HashSet` and the `growable-bloom-filter` crate
//! (through its adapter, [`GrowablePeer`]). Same keys, batches and conventions as the main series;
//! criterion groups `scalable-lookup-<present|absent>-str`.

use std::collections::HashSet;
use std::time::Duration;

use bloomlab_filters::registry::{self, GrowableVisitor, VariantVisitor};
use bloomlab_filters::{
    Blocked512, Bloom, FlatBits, Growable, KirschMitzenmacher, Scalable, SplitBlock,
    TextbookScalable, Variant, VariantId, Xxh3,
};
use bloomlab_harness::schema::bench::{Family, Growth, KeyKind, Series, label};
use bloomlab_harness::subject::{GROWABLE_BLOOM_FILTER, GrowablePeer, MeasuredFilter};

use crate::memory::measure_build;
use crate::suite::{Batches, Meta, RATES, Suite, Workload};

/// The growth factors G: each filter holds n keys after being built for n/G (the 1, 16
/// and 1024x growth).
pub const GROWTH: [u64; 3] = [1, 16, 1024];

/// The growable variants measured, each with its static twin. The scalable filters are
/// registered as `scalable/<layout of their stages>`; `textbook-scalable` has classic xxh3
/// stages (`bloomlab_filters::scalable::TextbookStage`), so that its schedule is its only flaw.
pub fn scalable() -> [(&'static str, &'static str); 4] {
    type Classic = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;
    let name = |id: VariantId| id.name();
    [
        (
            name(VariantId::of::<Scalable<Classic>>()),
            name(VariantId::of::<Classic>()),
        ),
        (
            name(VariantId::of::<Scalable<Blocked512<Xxh3>>>()),
            name(VariantId::of::<Blocked512<Xxh3>>()),
        ),
        (
            name(VariantId::of::<Scalable<SplitBlock<Xxh3>>>()),
            name(VariantId::of::<SplitBlock<Xxh3>>()),
        ),
        (
            name(VariantId::of::<TextbookScalable>()),
            name(VariantId::of::<Classic>()),
        ),
    ]
}

/// A structure of the scalable series at the headline rate (`None` for the exact set).
fn meta(structure: &str, family: Family, p: Option<f64>, n: u64) -> Meta {
    Meta {
        series: Series::Scalable,
        ..Meta::main(KeyKind::Str, structure, family, p, n)
    }
}

/// The initial capacity for growth factor `g`: n/G rounded down, at least 1.
fn initial_capacity(n: u64, g: u64) -> u64 {
    (n / g).max(1)
}

impl Suite<'_> {
    /// The scalable series for the string keys of one n: std `HashSet` (already built, with its
    /// build's heap and time), each static twin once, each growable variant and the peer at every
    /// growth factor. Each is checked and its memory recorded, then its present and absent
    /// lookups timed and paired with the HashSet's ([`Suite::lookups`]).
    pub fn scalable(
        &mut self,
        b: &Batches,
        std_set: &HashSet<String>,
        std_built: (usize, Duration),
        n: u64,
    ) {
        let p = RATES[0];
        let w = b.workload(std_set);
        let hs = meta(KeyKind::Str.reference(), Family::HashSet, None, n);
        if self.cfg.wants(&hs.selector()) {
            self.lookups(&hs, std_built, &w, |k: &str| std_set.contains(k));
        }

        let mut twins: Vec<&str> = scalable().iter().map(|&(_, twin)| twin).collect();
        twins.sort_unstable();
        twins.dedup();
        for twin in twins {
            let m = meta(twin, Family::Bloomlab, Some(p), n);
            if self.cfg.wants(&m.selector()) {
                let visit = Static {
                    suite: self,
                    meta: m,
                    inserted: b.inserted,
                    w: &w,
                };
                registry::visit(twin, visit)
                    .unwrap_or_else(|e| panic!("scalable series, static twin {twin}: {e}"));
            }
        }

        for (name, twin) in scalable() {
            for g in GROWTH {
                let m = Meta {
                    twin: Some(label(twin, Some(p))),
                    growth: Some(Growth {
                        factor: g,
                        initial_capacity: initial_capacity(n, g),
                        // Read from the filter once it holds the n keys.
                        stages: 0,
                    }),
                    ..meta(name, Family::Bloomlab, Some(p), n)
                };
                if self.cfg.wants(&m.selector()) {
                    let visit = Grown {
                        suite: self,
                        meta: m,
                        inserted: b.inserted,
                        w: &w,
                    };
                    registry::visit_growable(name, visit)
                        .unwrap_or_else(|e| panic!("scalable series, {name}: {e}"));
                }
            }
        }

        // The peer has no static twin in the registry: its stages are partitioned filters.
        for g in GROWTH {
            let n0 = initial_capacity(n, g);
            let mut m = Meta {
                growth: Some(Growth {
                    factor: g,
                    initial_capacity: n0,
                    stages: 0,
                }),
                ..meta(GROWABLE_BLOOM_FILTER, Family::Crate, Some(p), n)
            };
            if !self.cfg.wants(&m.selector()) {
                continue;
            }
            let (peer, bytes, t) = measure_build(|| {
                let mut f = GrowablePeer::new(n0, p)
                    .unwrap_or_else(|e| panic!("{GROWABLE_BLOOM_FILTER} for n0 = {n0}: {e}"));
                for k in b.inserted {
                    f.insert(k.as_bytes());
                }
                f
            });
            if let Some(growth) = &mut m.growth {
                growth.stages = peer.stages();
            }
            self.lookups(&m, (bytes, t), &w, |k: &str| peer.contains(k.as_bytes()));
        }
    }
}

/// A static twin, sized for all n keys at the headline rate, run as its concrete type `F`.
struct Static<'s, 'a, 'w> {
    suite: &'s mut Suite<'a>,
    meta: Meta,
    inserted: &'s [&'s str],
    w: &'s Workload<'w, &'w str, HashSet<String>>,
}

impl VariantVisitor for Static<'_, '_, '_> {
    type Output = ();
    fn visit<F: Variant>(self) {
        let (n, p) = (self.meta.n, self.meta.p.expect("filters have a rate"));
        let (f, bytes, t) = measure_build(|| {
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
    }
}

/// A growable variant built for n0 = n/G keys, then given all n keys, run as its concrete type.
struct Grown<'s, 'a, 'w> {
    suite: &'s mut Suite<'a>,
    meta: Meta,
    inserted: &'s [&'s str],
    w: &'s Workload<'w, &'w str, HashSet<String>>,
}

impl GrowableVisitor for Grown<'_, '_, '_> {
    type Output = ();
    fn visit<F: Variant + Growable>(mut self) {
        let p = self.meta.p.expect("filters have a rate");
        let n0 = self
            .meta
            .growth
            .map(|g| g.initial_capacity)
            .expect("grown filters have a growth");
        let (f, bytes, t) = measure_build(|| {
            let mut f = F::sized_for(n0, p)
                .unwrap_or_else(|e| panic!("{} for n0 = {n0}, p = {p}: {e}", self.meta.structure));
            for k in self.inserted {
                f.insert_bytes(k.as_bytes());
            }
            f
        });
        if let Some(growth) = &mut self.meta.growth {
            growth.stages = f.stages() as u64;
        }
        self.suite
            .lookups(&self.meta, (bytes, t), self.w, |k: &str| {
                f.contains_bytes(k.as_bytes())
            });
    }
}
