//! The layout series (groups `contiguous-*` and `scattered-*`): where string keys come from.
//! The same lookup batches in two layouts, for std `HashSet<String>`, the flagship of each layout
//! ([`bloomlab_harness::schema::bench::flagships`], p = 1%), `fastbloom+foldhash` and xorf
//! `BinaryFuse8+xxh3`, each structure built once and timed in both layouts one after the other:
//! - contiguous ([`Series::Contiguous`]): the keys back to back in one buffer, in lookup order,
//!   as read from a page or a socket (`StrBatch`: one `String` plus end offsets; the main series'
//!   layout), so fetching the next key reads the next bytes;
//! - scattered ([`Series::Scattered`]): the same keys each in its own `String`, allocated in an
//!   order unrelated to the lookup order ([`crate::keys::Scattered`]), so fetching a key is a
//!   random access into the heap before any hashing starts.
//!
//! Each lookup is paired with std `HashSet<String>` looking up the same batch in the same layout.

use std::collections::HashSet;
use std::time::Duration;

use bloomlab_filters::{Variant, VariantVisitor, registry};
use bloomlab_harness::schema::bench::{Family, KeyKind, Series, flagships};
use xorf::{BinaryFuse8, Filter as XorFilter};
use xxhash_rust::xxh3::xxh3_64;

use crate::keys::Scattered;
use crate::memory::measure_build;
use crate::suite::{Batches, Meta, Suite, Workload};

/// The layout series' rate.
const P: f64 = 0.01;

/// The two layouts' workloads of one n.
struct Layouts<'w> {
    contiguous: Workload<'w, &'w str, HashSet<String>>,
    scattered: Workload<'w, &'w str, HashSet<String>>,
}

impl Layouts<'_> {
    /// The workloads in measuring order, with their series.
    fn each(&self) -> [(Series, &Workload<'_, &str, HashSet<String>>); 2] {
        [
            (Series::Contiguous, &self.contiguous),
            (Series::Scattered, &self.scattered),
        ]
    }
}

/// A structure's identity in one layout's series.
fn meta(series: Series, structure: &str, family: Family, p: Option<f64>, n: u64) -> Meta {
    Meta {
        series,
        ..Meta::main(KeyKind::Str, structure, family, p, n)
    }
}

impl Suite<'_> {
    /// The layout series on the string keys of one n; `std_set` (std `HashSet<String>` holding
    /// them, built in `built`) is measured and paired with every lookup.
    pub fn layouts(
        &mut self,
        b: &Batches,
        std_set: &HashSet<String>,
        built: (usize, Duration),
        n: u64,
    ) {
        let selected = |suite: &Self, structure: &str, p: Option<f64>| {
            [Series::Contiguous, Series::Scattered]
                .into_iter()
                .any(|s| {
                    let m = meta(s, structure, Family::Bloomlab, p, n);
                    suite.cfg.wants(&m.selector())
                })
        };
        let structures: Vec<(&str, Family, Option<f64>)> =
            std::iter::once((KeyKind::Str.reference(), Family::HashSet, None))
                .chain(flagships().map(|f| (f, Family::Bloomlab, Some(P))))
                .chain([
                    ("fastbloom+foldhash", Family::Crate, Some(P)),
                    ("xorf BinaryFuse8+xxh3", Family::Crate, Some(P)),
                ])
                .filter(|(s, _, p)| selected(self, s, *p))
                .collect();
        if structures.is_empty() {
            return;
        }
        eprintln!("layout series: n = {n}");
        let present = Scattered::new(b.present);
        let absent = Scattered::new(b.absent);
        let (present_keys, absent_keys) = (present.keys(), absent.keys());
        let reference_label = KeyKind::Str.reference();
        let layouts = Layouts {
            contiguous: Workload {
                present: b.present,
                absent: b.absent,
                reference: std_set,
                reference_label,
            },
            scattered: Workload {
                present: &present_keys,
                absent: &absent_keys,
                reference: std_set,
                reference_label,
            },
        };
        for (structure, family, p) in structures {
            match structure {
                s if s == reference_label => {
                    self.in_layouts(&layouts, (s, family, p, n), built, |k: &str| {
                        std_set.contains(k)
                    });
                }
                "fastbloom+foldhash" => {
                    let (f, bytes, t) = measure_build(|| {
                        let mut f = fastbloom::BloomFilter::with_false_pos(P)
                            .hasher(foldhash::fast::RandomState::default())
                            .expected_items(n as usize);
                        for k in b.inserted {
                            f.insert(*k);
                        }
                        f
                    });
                    self.in_layouts(
                        &layouts,
                        (structure, family, p, n),
                        (bytes, t),
                        |k: &str| f.contains(k),
                    );
                }
                "xorf BinaryFuse8+xxh3" => {
                    let (f, bytes, t) = measure_build(|| {
                        let hashes: Vec<u64> =
                            b.inserted.iter().map(|k| xxh3_64(k.as_bytes())).collect();
                        BinaryFuse8::try_from(&hashes).expect("distinct 64-bit hashes")
                    });
                    self.in_layouts(
                        &layouts,
                        (structure, family, p, n),
                        (bytes, t),
                        |k: &str| f.contains(&xxh3_64(k.as_bytes())),
                    );
                }
                name => {
                    let visit = LayoutVariant {
                        suite: self,
                        layouts: &layouts,
                        structure: name,
                        n,
                        inserted: b.inserted,
                    };
                    registry::visit(name, visit).expect("FLAGSHIPS are registered names");
                }
            }
        }
    }

    /// Lookups of one structure in both layouts, one right after the other.
    fn in_layouts(
        &mut self,
        layouts: &Layouts,
        (structure, family, p, n): (&str, Family, Option<f64>, u64),
        built: (usize, Duration),
        mut contains: impl FnMut(&str) -> bool,
    ) {
        for (series, w) in layouts.each() {
            let m = meta(series, structure, family, p, n);
            if self.cfg.wants(&m.selector()) {
                self.lookups(&m, built, w, &mut contains);
            }
        }
    }
}

/// One flagship on string keys, run as its concrete type `F`, in both layouts.
struct LayoutVariant<'s, 'a> {
    suite: &'s mut Suite<'a>,
    layouts: &'s Layouts<'s>,
    structure: &'s str,
    n: u64,
    inserted: &'s [&'s str],
}

impl VariantVisitor for LayoutVariant<'_, '_> {
    type Output = ();
    fn visit<F: Variant>(self) {
        let n = self.n;
        let (f, bytes, t) = measure_build(|| {
            let mut f = F::sized_for(n, P)
                .unwrap_or_else(|e| panic!("{} for n = {n}, p = {P}: {e}", self.structure));
            for k in self.inserted {
                f.insert_bytes(k.as_bytes());
            }
            f
        });
        self.suite.in_layouts(
            self.layouts,
            (self.structure, Family::Bloomlab, Some(P), n),
            (bytes, t),
            |k: &str| f.contains_bytes(k.as_bytes()),
        );
    }
}
