//! The registry: every named variant, constructible by name. Names come from the types' `ID`s
//! ([`Variant::variant_name`]), so a name and the code behind it cannot drift apart.
//!
//! Name grammar: `classic/<hash>/<index>/<store>`, `blocked512/<hash>`, `sbbf/<hash>`, and the
//! fixed port `textbook-fnv1a-i32`; hashes `fnv1a murmur3 xxh3 xxh3-128 xxh64`, index schemes
//! `km edh mitz64 mitz32`, stores `flat atomic`. `classic/murmur3/mitz64/flat` is Guava's layout.

use crate::blocked::Blocked512;
use crate::classic::Bloom;
use crate::error::{BloomError, Result};
use crate::filter::{Filter, Variant};
use crate::hash::{Fnv1a, Murmur3, Xxh3, Xxh3Wide, Xxh64};
use crate::index::{EnhancedDoubleHash, GuavaMitz32, GuavaMitz64, KirschMitzenmacher};
use crate::sbbf::SplitBlock;
use crate::sizing::Params;
use crate::store::{AtomicBits, FlatBits};
use crate::textbook::TextbookFnv1aI32;

/// Calls `$cb!(Type)` for every registered variant type: the one list of what exists.
macro_rules! for_each_variant {
    ($cb:ident) => {
        for_each_variant!(@hashes $cb; Fnv1a, Murmur3, Xxh3, Xxh3Wide, Xxh64);
        $cb!(TextbookFnv1aI32);
    };
    (@hashes $cb:ident; $($h:ty),*) => {$(
        for_each_variant!(@index $cb; $h; KirschMitzenmacher, EnhancedDoubleHash, GuavaMitz64, GuavaMitz32);
        $cb!(Blocked512<$h>);
        $cb!(SplitBlock<$h>);
    )*};
    (@index $cb:ident; $h:ty; $($i:ty),*) => {$(
        $cb!(Bloom<$h, $i, FlatBits>);
        $cb!(Bloom<$h, $i, AtomicBits>);
    )*};
}

/// Generic code to run on a variant chosen by name at run time (monomorphised per variant, so the
/// hot loop inside `visit` has no dynamic dispatch).
pub trait VariantVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with the variant's concrete type.
    fn visit<F: Variant>(self) -> Self::Output;
}

/// Every registered name, sorted.
pub fn names() -> Vec<String> {
    let mut out = Vec::new();
    macro_rules! push {
        ($t:ty) => {
            out.push(<$t as Variant>::variant_name());
        };
    }
    for_each_variant!(push);
    out.sort();
    out
}

/// Runs `visitor` with the variant named `name`.
pub fn visit<V: VariantVisitor>(name: &str, visitor: V) -> Result<V::Output> {
    macro_rules! try_one {
        ($t:ty) => {
            if name == <$t as Variant>::variant_name() {
                return Ok(visitor.visit::<$t>());
            }
        };
    }
    for_each_variant!(try_one);
    Err(BloomError::UnknownName {
        name: name.to_owned(),
        known: names().join(", "),
    })
}

/// How to size a filter built by name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spec {
    /// For `n` keys at target rate `p`, by the variant's sizing rule.
    Target { n: u64, p: f64 },
    /// Explicit m bits and k probes.
    Explicit { bits: u64, hashes: u32 },
    /// m bits for n keys, with the optimal k for m/n.
    BitsFor { bits: u64, n: u64 },
}

impl Spec {
    /// Builds variant `F` to this spec.
    pub fn build<F: Variant>(self) -> Result<F> {
        match self {
            Spec::Target { n, p } => F::sized_for(n, p),
            Spec::Explicit { bits, hashes } => F::with_params(Params::explicit(bits, hashes)?),
            Spec::BitsFor { bits, n } => F::with_bits_for(bits, n),
        }
    }
}

/// Builds the variant named `name` to `spec`, boxed. One dynamic call per key, none per probe; use
/// [`visit`] to run generic code on the concrete type instead.
pub fn build(name: &str, spec: Spec) -> Result<Box<dyn Filter>> {
    struct Build(Spec);
    impl VariantVisitor for Build {
        type Output = Result<Box<dyn Filter>>;
        fn visit<F: Variant>(self) -> Self::Output {
            Ok(Box::new(self.0.build::<F>()?))
        }
    }
    visit(name, Build(spec))?
}

/// Heap bytes of the bit array that building `name` for (n, p) would allocate, computed without
/// allocating ([`Variant::sized_bytes`]); errors as the build would (unknown name, refused size).
pub fn sized_bytes(name: &str, n: u64, p: f64) -> Result<u64> {
    struct Size(u64, f64);
    impl VariantVisitor for Size {
        type Output = Result<u64>;
        fn visit<F: Variant>(self) -> Self::Output {
            F::sized_bytes(self.0, self.1)
        }
    }
    visit(name, Size(n, p))?
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Layout;

    #[test]
    fn sized_bytes_is_what_the_build_allocates_or_its_error() {
        // Small specs are built and compared; large ones only where the size is refused, which
        // must then be the build's own error (a refused build allocates nothing).
        let specs = [
            (1, 0.5),
            (1000, 0.01),
            (12_345, 1e-4),
            (100_000, 1e-7),
            (1000, 1e-80),
            (1000, 1e-300),
            (1_000_000_000, 1e-3),
            (1 << 53, 1e-300),
        ];
        for name in names() {
            for (n, p) in specs {
                let sized = sized_bytes(&name, n, p);
                match sized {
                    Err(e) => {
                        let built = build(&name, Spec::Target { n, p }).map(|f| f.bits());
                        assert_eq!(built, Err(e), "{name} n={n} p={p}");
                    }
                    Ok(bytes) if bytes < 1 << 26 => {
                        let f = build(&name, Spec::Target { n, p }).unwrap();
                        let held = f.memory_bytes() as u64;
                        assert!(
                            bytes * 8 >= f.bits() && bytes <= held && held - bytes < 64,
                            "{name} n={n} p={p}: sized {bytes} B, built {} bits in {held} B",
                            f.bits()
                        );
                    }
                    Ok(_) => {}
                }
            }
        }
    }

    #[test]
    fn names_are_unique_and_include_the_documented_ones() {
        let names = names();
        let mut dedup = names.clone();
        dedup.dedup();
        assert_eq!(names, dedup);
        for n in [
            "classic/xxh3/km/flat",
            "blocked512/xxh3",
            "sbbf/xxh64",
            "classic/murmur3/km/atomic",
            "classic/murmur3/mitz64/flat",
            "textbook-fnv1a-i32",
        ] {
            assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
        }
        assert_eq!(names.len(), 5 * (4 * 2 + 2) + 1);
    }

    #[test]
    fn every_variant_starts_its_name_with_its_layout_and_reports_it_when_built() {
        struct Layouts;
        impl VariantVisitor for Layouts {
            type Output = (Layout, Layout);
            fn visit<F: Variant>(self) -> Self::Output {
                let built = Spec::Target { n: 100, p: 0.01 }.build::<F>().unwrap();
                (F::LAYOUT, built.layout())
            }
        }
        let mut seen = Vec::new();
        for name in names() {
            let (layout, built) = visit(&name, Layouts).unwrap();
            assert_eq!(built, layout, "{name}");
            let head = name.split(['/', '-']).next().unwrap();
            assert_eq!(head.parse::<Layout>(), Ok(layout), "{name}");
            seen.push(layout);
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen, Layout::ALL, "every layout has a registered variant");
    }

    #[test]
    fn unknown_name_is_an_error_listing_known_ones() {
        let err = build("classic/md5/km/flat", Spec::Target { n: 10, p: 0.01 }).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("classic/md5/km/flat") && msg.contains("sbbf/xxh64"),
            "{msg}"
        );
    }
}
