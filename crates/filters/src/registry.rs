//! The registry: every named variant, constructible by name. Names come from the types' `ID`s
//! ([`Variant::variant_name`]), so a name and the code behind it cannot drift apart.
//!
//! Name grammar: `classic/<hash>/<index>/<store>`, `blocked512/<hash>`, `sbbf/<hash>`,
//! `counting4/<hash>/<index>` and `counting8/<hash>/<index>` (index `km` or `edh`),
//! `scalable/<inner name>`, and the fixed ports `textbook-fnv1a-i32`,
//! `textbook-counting-fnv1a-i32` and `textbook-scalable`; hashes `fnv1a murmur3 xxh3 xxh3-128
//! xxh64 lookup3`, index schemes `km edh mitz64 mitz32`, stores `flat atomic`.
//! `classic/murmur3/mitz64/flat` is Guava's layout.
//!
//! Types are registered in three lists: plain filters, [`Removable`] ones and [`Growable`] ones.
//! [`capabilities`] reads a name's capabilities from the list it is in, and [`visit_removable`] /
//! [`visit_growable`] reach only the types of their list, with the capability as a bound.
//!
//! The scalable filter is registered over one representative per layout family
//! (`scalable/classic/xxh3/km/flat`, `scalable/blocked512/xxh3`, `scalable/sbbf/xxh3`,
//! `scalable/counting4/xxh3/km`); [`crate::Scalable`] works over any [`Variant`].

use crate::blocked::Blocked512;
use crate::capability::{Growable, Removable};
use crate::classic::Bloom;
use crate::counting::{Counting4, Counting8};
use crate::error::{BloomError, Result};
use crate::filter::{Filter, Geometry, Layout, Variant};
use crate::hash::{Fnv1a, Lookup3, Murmur3, Xxh3, Xxh3Wide, Xxh64};
use crate::index::{EnhancedDoubleHash, GuavaMitz32, GuavaMitz64, KirschMitzenmacher};
use crate::sbbf::SplitBlock;
use crate::scalable::{Scalable, TextbookScalable};
use crate::shared::ConcurrentFill;
use crate::sizing::Params;
use crate::store::{AtomicBits, ConcurrentBitStore, FlatBits};
use crate::textbook::TextbookFnv1aI32;
use crate::textbook_counting::TextbookCountingFnv1aI32;

/// Calls `$cb!(Type)` for every registered type with neither removal nor growth.
macro_rules! for_each_plain {
    ($cb:ident) => {
        for_each_plain!(@hashes $cb; Fnv1a, Murmur3, Xxh3, Xxh3Wide, Xxh64, Lookup3);
        $cb!(TextbookFnv1aI32);
    };
    (@hashes $cb:ident; $($h:ty),*) => {$(
        for_each_plain!(@index $cb; $h; KirschMitzenmacher, EnhancedDoubleHash, GuavaMitz64, GuavaMitz32);
        $cb!(Blocked512<$h>);
        $cb!(SplitBlock<$h>);
    )*};
    (@index $cb:ident; $h:ty; $($i:ty),*) => {$(
        $cb!(Bloom<$h, $i, FlatBits>);
        $cb!(Bloom<$h, $i, AtomicBits>);
    )*};
}

/// Calls `$cb!(Type)` for every registered [`Removable`] type.
macro_rules! for_each_removable {
    ($cb:ident) => {
        for_each_removable!(@hashes $cb; Fnv1a, Murmur3, Xxh3, Xxh3Wide, Xxh64, Lookup3);
        $cb!(TextbookCountingFnv1aI32);
    };
    (@hashes $cb:ident; $($h:ty),*) => {$(
        for_each_removable!(@index $cb; $h; KirschMitzenmacher, EnhancedDoubleHash);
    )*};
    (@index $cb:ident; $h:ty; $($i:ty),*) => {$(
        $cb!(Counting4<$h, $i>);
        $cb!(Counting8<$h, $i>);
    )*};
}

/// Calls `$cb!(Type)` for every registered [`Growable`] type.
macro_rules! for_each_growable {
    ($cb:ident) => {
        $cb!(Scalable<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>);
        $cb!(Scalable<Blocked512<Xxh3>>);
        $cb!(Scalable<SplitBlock<Xxh3>>);
        $cb!(Scalable<Counting4<Xxh3, KirschMitzenmacher>>);
        $cb!(TextbookScalable);
    };
}

/// Calls `$cb!(Type)` for every registered variant type: the one list of what exists.
macro_rules! for_each_variant {
    ($cb:ident) => {
        for_each_plain!($cb);
        for_each_removable!($cb);
        for_each_growable!($cb);
    };
}

/// Generic code to run on a variant chosen by name at run time (monomorphised per variant, so the
/// hot loop inside `visit` has no dynamic dispatch).
pub trait VariantVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with the variant's concrete type.
    fn visit<F: Variant>(self) -> Self::Output;
}

/// [`VariantVisitor`] for the variants keys can be removed from ([`visit_removable`]).
pub trait RemovableVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with the variant's concrete type.
    fn visit<F: Variant + Removable>(self) -> Self::Output;
}

/// [`VariantVisitor`] for the variants that grow ([`visit_growable`]).
pub trait GrowableVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with the variant's concrete type.
    fn visit<F: Variant + Growable>(self) -> Self::Output;
}

/// Calls `$cb!(Type)` for every registered [`ConcurrentFill`] type (filled from many threads at
/// once: the flat classic layout, blocked and split-block).
macro_rules! for_each_concurrent {
    ($cb:ident) => {
        for_each_concurrent!(@hashes $cb; Fnv1a, Murmur3, Xxh3, Xxh3Wide, Xxh64, Lookup3);
    };
    (@hashes $cb:ident; $($h:ty),*) => {$(
        for_each_concurrent!(@index $cb; $h; KirschMitzenmacher, EnhancedDoubleHash, GuavaMitz64, GuavaMitz32);
        $cb!(Blocked512<$h>);
        $cb!(SplitBlock<$h>);
    )*};
    (@index $cb:ident; $h:ty; $($i:ty),*) => {$(
        $cb!(Bloom<$h, $i, FlatBits>);
    )*};
}

/// What a registered variant can do beyond [`Filter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// Implements [`Removable`].
    pub remove: bool,
    /// Implements [`Growable`].
    pub grow: bool,
    /// Many threads may insert at once: it implements [`ConcurrentFill`], or its store inserts
    /// through a shared reference (the atomic store, `Bloom::insert_shared`).
    pub concurrent: bool,
    /// Has a file format another implementation reads: Guava's `BloomFilter.writeTo`
    /// ([`crate::GuavaBloom`], the layout `classic/murmur3/mitz64/flat`).
    pub serializable: bool,
}

impl Capabilities {
    /// The capabilities that are set, by name, in declaration order (`remove grow concurrent
    /// serializable`).
    pub fn names(&self) -> Vec<&'static str> {
        [
            (self.remove, "remove"),
            (self.grow, "grow"),
            (self.concurrent, "concurrent"),
            (self.serializable, "serializable"),
        ]
        .into_iter()
        .filter_map(|(set, name)| set.then_some(name))
        .collect()
    }
}

/// The axes a variant is built from, read from its types: the hash strategy's, index scheme's and
/// bit store's `ID`s where the variant has that axis (a textbook port fixes its own; a scalable
/// filter reports its stages').
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Axes {
    /// [`crate::HashStrategy::ID`], e.g. `xxh3`.
    pub hash: Option<&'static str>,
    /// [`crate::IndexScheme::ID`], e.g. `km`.
    pub index: Option<&'static str>,
    /// [`crate::BitStore::ID`], `flat` or `atomic`.
    pub store: Option<&'static str>,
}

/// One registered variant as the catalogue describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantInfo {
    /// Its name ([`Variant::variant_name`]).
    pub name: String,
    /// Its layout family ([`Variant::LAYOUT`]).
    pub layout: Layout,
    /// Its axes ([`Variant::axes`]).
    pub axes: Axes,
    /// What it can do beyond [`Filter`].
    pub capabilities: Capabilities,
}

/// A registered variant, parsed once from its name: a copyable handle whose name, layout, axes and
/// capabilities come from the types in the registration lists. Displays (and serializes, with
/// serde) as its name, so a CSV column holding one reads the same as a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VariantId(u16);

/// A store's `ID`, for a store that inserts through a shared reference.
const fn shared_store_id<S: ConcurrentBitStore>() -> &'static str {
    S::ID
}

fn table() -> &'static [VariantInfo] {
    static TABLE: std::sync::OnceLock<Vec<VariantInfo>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut concurrent = Vec::new();
        // Through a `ConcurrentFill` bound, so the list cannot name a type without the trait.
        fn concurrent_name<T: ConcurrentFill>() -> String {
            T::variant_name()
        }
        macro_rules! concurrent {
            ($t:ty) => {
                concurrent.push(concurrent_name::<$t>());
            };
        }
        for_each_concurrent!(concurrent);
        let removable = removable_names();
        let growable = growable_names();
        let guava = <Bloom<Murmur3, GuavaMitz64, FlatBits> as Variant>::variant_name();
        const ATOMIC: &str = shared_store_id::<AtomicBits>();
        let mut out = Vec::new();
        macro_rules! push {
            ($t:ty) => {{
                let name = <$t as Variant>::variant_name();
                out.push(VariantInfo {
                    layout: <$t as Variant>::LAYOUT,
                    axes: <$t as Variant>::axes(),
                    capabilities: Capabilities {
                        remove: removable.contains(&name),
                        grow: growable.contains(&name),
                        // A classic filter over the atomic store inserts through `&self`
                        // (`Bloom::insert_shared`, for any `ConcurrentBitStore`).
                        concurrent: concurrent.contains(&name)
                            || <$t as Variant>::axes().store == Some(ATOMIC),
                        serializable: name == guava,
                    },
                    name,
                });
            }};
        }
        for_each_variant!(push);
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    })
}

impl VariantId {
    /// The registered variant named `name`; [`BloomError::UnknownName`] (listing the known names)
    /// otherwise.
    pub fn parse(name: &str) -> Result<Self> {
        table()
            .binary_search_by(|v| v.name.as_str().cmp(name))
            .map(|i| VariantId(i as u16))
            .map_err(|_| unknown(name))
    }

    /// The id of variant type `F` (registered, or a panic naming it: every [`Variant`] in this
    /// crate is in a registration list, and a test checks it).
    pub fn of<F: Variant>() -> Self {
        let name = F::variant_name();
        Self::parse(&name).unwrap_or_else(|_| panic!("{name} is not registered"))
    }

    /// Every registered variant, sorted by name.
    pub fn all() -> impl Iterator<Item = VariantId> {
        (0..table().len()).map(|i| VariantId(i as u16))
    }

    /// What the catalogue knows of it.
    pub fn info(self) -> &'static VariantInfo {
        &table()[usize::from(self.0)]
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        &self.info().name
    }

    /// Its layout family.
    pub fn layout(self) -> Layout {
        self.info().layout
    }

    /// Its axes.
    pub fn axes(self) -> Axes {
        self.info().axes
    }

    /// What it can do beyond [`Filter`].
    pub fn capabilities(self) -> Capabilities {
        self.info().capabilities
    }

    /// Runs `visitor` with its concrete type.
    pub fn visit<V: VariantVisitor>(self, visitor: V) -> V::Output {
        visit(self.name(), visitor).expect("a VariantId names a registered variant")
    }
}

impl std::fmt::Display for VariantId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for VariantId {
    type Err = BloomError;
    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
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

/// The names of the [`Removable`] variants, sorted.
pub fn removable_names() -> Vec<String> {
    let mut out = Vec::new();
    macro_rules! push {
        ($t:ty) => {
            out.push(<$t as Variant>::variant_name());
        };
    }
    for_each_removable!(push);
    out.sort();
    out
}

/// The names of the [`Growable`] variants, sorted.
pub fn growable_names() -> Vec<String> {
    let mut out = Vec::new();
    macro_rules! push {
        ($t:ty) => {
            out.push(<$t as Variant>::variant_name());
        };
    }
    for_each_growable!(push);
    out.sort();
    out
}

fn unknown(name: &str) -> BloomError {
    BloomError::UnknownName {
        name: name.to_owned(),
        known: names().join(", "),
    }
}

/// What the variant named `name` can do; [`BloomError::UnknownName`] for an unregistered name.
pub fn capabilities(name: &str) -> Result<Capabilities> {
    VariantId::parse(name).map(VariantId::capabilities)
}

/// The error for a registered `name` that lacks `capability`, or an unknown name's error.
fn unsupported(name: &str, capability: &'static str, which: Vec<String>) -> BloomError {
    if names().iter().any(|n| n == name) {
        BloomError::Unsupported {
            name: name.to_owned(),
            capability,
            which: which.join(", "),
        }
    } else {
        unknown(name)
    }
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
    Err(unknown(name))
}

/// Runs `visitor` with the [`Removable`] variant named `name`. A registered name without counters
/// is [`BloomError::Unsupported`] (listing the names that have them); an unknown one is
/// [`BloomError::UnknownName`].
pub fn visit_removable<V: RemovableVisitor>(name: &str, visitor: V) -> Result<V::Output> {
    macro_rules! try_one {
        ($t:ty) => {
            if name == <$t as Variant>::variant_name() {
                return Ok(visitor.visit::<$t>());
            }
        };
    }
    for_each_removable!(try_one);
    Err(unsupported(name, "remove keys", removable_names()))
}

/// Runs `visitor` with the [`Growable`] variant named `name`. A registered name that does not grow
/// is [`BloomError::Unsupported`] (listing the names that do); an unknown one is
/// [`BloomError::UnknownName`].
pub fn visit_growable<V: GrowableVisitor>(name: &str, visitor: V) -> Result<V::Output> {
    macro_rules! try_one {
        ($t:ty) => {
            if name == <$t as Variant>::variant_name() {
                return Ok(visitor.visit::<$t>());
            }
        };
    }
    for_each_growable!(try_one);
    Err(unsupported(name, "grow", growable_names()))
}

/// How to size a filter built by name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spec {
    /// For `n` keys at target rate `p`, by the variant's sizing rule.
    Target {
        /// Expected keys.
        n: u64,
        /// Target false-positive rate, in (0, 1).
        p: f64,
    },
    /// Explicit m bits and k probes.
    Explicit {
        /// Bits m (rounded up to the layout's unit).
        bits: u64,
        /// Probes per key k.
        hashes: u32,
    },
    /// For `n` keys with the fewest bits (to within 1/1024) whose own layout's theory at `n` keys
    /// keeps rate `p`, k optimal for the bits: what a caller who is promised `p` needs.
    /// [`Target`](Self::Target) gives every layout the classic filter's m (equal memory, what the
    /// sweep compares layouts at), so a blocked or split-block filter built that way runs above
    /// `p`; this spends the bits its layout needs instead (the same as `Target` for a classic
    /// filter whose rounding already keeps `p`).
    Promise {
        /// Expected keys.
        n: u64,
        /// Promised false-positive rate, in (0, 1).
        p: f64,
    },
    /// m bits for n keys, with the optimal k for m/n.
    BitsFor {
        /// Bits m (rounded up to the layout's unit).
        bits: u64,
        /// Expected keys the optimal k is chosen for.
        n: u64,
    },
}

impl Spec {
    /// Builds variant `F` to this spec.
    pub fn build<F: Variant>(self) -> Result<F> {
        match self {
            Spec::Target { n, p } => F::sized_for(n, p),
            Spec::Explicit { bits, hashes } => F::with_params(Params::explicit(bits, hashes)?),
            Spec::BitsFor { bits, n } => F::with_bits_for(bits, n),
            Spec::Promise { n, p } => sized_to_promise::<F>(n, p),
        }
    }
}

/// How far beyond the classic rule's bits [`Spec::Promise`] looks before it refuses: a layout
/// that needs more than this to keep `p` (a split-block filter, whose k is fixed at 8, below
/// p = 1e-20 or so) is refused rather than sized.
pub const PROMISE_MAX_FACTOR: u64 = 64;

/// [`Spec::Promise`]: the registry's sizing when it keeps `p`; else the fewest bits (to 1/1024)
/// whose geometry keeps `p`, searched on the geometry alone (nothing is allocated while
/// searching), then built once. Refuses with [`BloomError::PromiseUnreachable`] when more than
/// [`PROMISE_MAX_FACTOR`] times the classic rule's bits would be needed.
fn sized_to_promise<F: Variant>(n: u64, p: f64) -> Result<F> {
    let first = F::sized_for(n, p)?;
    if first.fpr_theory(n) <= p {
        return Ok(first);
    }
    let shape = first.geometry();
    let start = first.bits();
    drop(first);
    let unreachable = |rate: f64| BloomError::PromiseUnreachable {
        variant: F::variant_name(),
        n,
        p,
        bits: start,
        factor: PROMISE_MAX_FACTOR,
        rate,
    };
    let (high, rate_at_high) = match promise_search(shape, start, n, p)? {
        Ok(found) => found,
        Err(rate_at_limit) => return Err(unreachable(rate_at_limit)),
    };
    // The build's own geometry decides; a unit of rounding more if the two ever disagree.
    for bits in [high, high + high / 1024 + 512] {
        let f = F::with_bits_for(bits, n)?;
        if f.fpr_theory(n) <= p {
            return Ok(f);
        }
    }
    Err(unreachable(rate_at_high))
}

/// The search of [`sized_to_promise`], on the geometry alone (no type parameter: compiled once,
/// not once per variant): `Ok((bits, rate))` with the fewest bits (to 1/1024) at or above `start`
/// whose geometry of `shape`'s kind keeps `p`, and that geometry's rate; `Err(rate)` when even
/// [`PROMISE_MAX_FACTOR`] times `start` does not, with the rate there.
fn promise_search(
    shape: Geometry,
    start: u64,
    n: u64,
    p: f64,
) -> Result<std::result::Result<(u64, f64), f64>> {
    // The geometry `with_bits_for(bits, n)` builds: the layout's unit, k optimal for bits / n
    // (fixed words for the split-block layout). Checked against the real build by the caller.
    let rate = |bits: u64| -> Result<f64> {
        // k optimal for bits / n, where the layout chooses k; past the crate's k limit no filter
        // of that size exists (an infinite rate: never kept).
        let hashes = match shape {
            Geometry::SplitBlock { .. } => 0,
            _ => match Params::for_bits_and_count(bits, n) {
                Ok(params) => params.hashes,
                Err(BloomError::InvalidHashes { .. }) => return Ok(f64::INFINITY),
                Err(e) => return Err(e),
            },
        };
        let g = match shape {
            Geometry::Flat { .. } => Geometry::Flat {
                bits: bits.div_ceil(64) * 64,
                hashes,
            },
            Geometry::Blocked { block_bits, .. } => Geometry::Blocked {
                blocks: bits.div_ceil(u64::from(block_bits)),
                block_bits,
                hashes,
            },
            Geometry::SplitBlock {
                words, word_bits, ..
            } => Geometry::SplitBlock {
                blocks: bits.div_ceil(u64::from(words) * u64::from(word_bits)),
                words,
                word_bits,
            },
        };
        Ok(g.fpr(n))
    };
    let keeps = |bits: u64| -> Result<bool> { Ok(rate(bits)? <= p) };
    let limit = start.saturating_mul(PROMISE_MAX_FACTOR);
    let (mut low, mut high) = (start, start);
    loop {
        if high >= limit {
            return Ok(Err(rate(limit)?));
        }
        high = high.saturating_add(high / 4 + 1).min(limit);
        if keeps(high)? {
            break;
        }
        low = high;
    }
    while high - low > (high >> 10).max(1) {
        let mid = low + (high - low) / 2;
        if keeps(mid)? {
            high = mid;
        } else {
            low = mid;
        }
    }
    Ok(Ok((high, rate(high)?)))
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

/// Builds the [`Removable`] variant named `name` to `spec`, boxed; errors as [`visit_removable`].
pub fn build_removable(name: &str, spec: Spec) -> Result<Box<dyn Removable>> {
    struct Build(Spec);
    impl RemovableVisitor for Build {
        type Output = Result<Box<dyn Removable>>;
        fn visit<F: Variant + Removable>(self) -> Self::Output {
            Ok(Box::new(self.0.build::<F>()?))
        }
    }
    visit_removable(name, Build(spec))?
}

/// Builds the [`Growable`] variant named `name` to `spec`, boxed; errors as [`visit_growable`].
pub fn build_growable(name: &str, spec: Spec) -> Result<Box<dyn Growable>> {
    struct Build(Spec);
    impl GrowableVisitor for Build {
        type Output = Result<Box<dyn Growable>>;
        fn visit<F: Variant + Growable>(self) -> Self::Output {
            Ok(Box::new(self.0.build::<F>()?))
        }
    }
    visit_growable(name, Build(spec))?
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
            let grows = capabilities(&name).unwrap().grow;
            for (n, p) in specs {
                let sized = sized_bytes(&name, n, p);
                if grows {
                    // A lower bound (see `Scalable::sized_bytes`): a size it refuses is refused by
                    // the build too, and a small filter that builds holds at least the bytes it
                    // gives (an enlarged stage can still be refused: k beyond 255 at p = 1e-80).
                    match sized {
                        Err(_) => assert!(build(&name, Spec::Target { n, p }).is_err(), "{name}"),
                        Ok(bytes) if bytes < 1 << 26 => {
                            if let Ok(f) = build(&name, Spec::Target { n, p }) {
                                let held = f.memory_bytes() as u64;
                                assert!(bytes <= held, "{name} n={n} p={p}: {bytes} B > {held} B");
                            }
                        }
                        Ok(_) => {}
                    }
                    continue;
                }
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
    fn sized_to_the_promise_every_flagship_keeps_p_with_the_fewest_bits_that_do() {
        let (n, p) = (100_000, 0.01);
        for name in ["sbbf/xxh3", "blocked512/xxh3", "classic/xxh3/km/flat"] {
            let target = build(name, Spec::Target { n, p }).unwrap();
            let f = build(name, Spec::Promise { n, p }).unwrap();
            assert!(
                f.fpr_theory(n) <= p,
                "{name}: theory {} > {p}",
                f.fpr_theory(n)
            );
            assert!(
                f.bits() >= target.bits(),
                "{name}: fewer bits than the classic rule"
            );
            // 1% fewer bits no longer keep p (the bisection stops within 1/1024).
            let smaller = Spec::BitsFor {
                bits: f.bits() - f.bits() / 100,
                n,
            };
            let smaller = build(name, smaller).unwrap();
            assert!(
                smaller.fpr_theory(n) > p,
                "{name}: {} bits not minimal",
                f.bits()
            );
        }
        // The classic rule leaves the split-block layout above p: why Promise exists.
        let sbbf = build("sbbf/xxh3", Spec::Target { n, p }).unwrap();
        assert!(sbbf.fpr_theory(n) > 1.2 * p, "{}", sbbf.fpr_theory(n));
        for bad in [Spec::Promise { n: 0, p }, Spec::Promise { n, p: f64::NAN }] {
            assert!(build("sbbf/xxh3", bad).is_err(), "{bad:?}");
        }
        // A rate the split-block layout cannot reach within PROMISE_MAX_FACTOR x the classic bits
        // is refused at once, without allocating (it once grew its filter until a watchdog
        // called it a hang: the conformance run's bad-input clause at p = 1e-300).
        let e = build("sbbf/xxh3", Spec::Promise { n, p: 1e-300 }).unwrap_err();
        assert!(matches!(e, BloomError::PromiseUnreachable { .. }), "{e}");
        assert!(e.to_string().contains("1e-300"), "{e}");
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
            "classic/lookup3/km/flat",
            "blocked512/lookup3",
            "sbbf/lookup3",
            "counting4/lookup3/edh",
            "classic/murmur3/km/atomic",
            "classic/murmur3/mitz64/flat",
            "textbook-fnv1a-i32",
            "counting4/xxh3/km",
            "counting8/murmur3/edh",
            "textbook-counting-fnv1a-i32",
            "scalable/classic/xxh3/km/flat",
            "scalable/blocked512/xxh3",
            "scalable/sbbf/xxh3",
            "scalable/counting4/xxh3/km",
            "textbook-scalable",
        ] {
            assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
        }
        // Six hashes (fnv1a murmur3 xxh3 xxh3-128 xxh64 lookup3): 91 names in all.
        let plain = 6 * (4 * 2 + 2) + 1;
        let removable = 6 * 2 * 2 + 1;
        let growable = 4 + 1;
        assert_eq!(names.len(), plain + removable + growable);
        assert_eq!(names.len(), 91);
        assert_eq!(removable_names().len(), removable);
        assert_eq!(growable_names().len(), growable);
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
        let built: Vec<Layout> = Layout::ALL
            .into_iter()
            .filter(|&l| l != Layout::External)
            .collect();
        assert_eq!(
            seen, built,
            "every layout but the adapters' has a registered variant"
        );
    }

    #[test]
    fn capabilities_follow_the_registration_lists() {
        let none = Capabilities::default();
        for (name, caps) in [
            (
                "classic/xxh3/km/flat",
                Capabilities {
                    concurrent: true,
                    ..none
                },
            ),
            ("textbook-fnv1a-i32", none),
            (
                "counting4/xxh3/km",
                Capabilities {
                    remove: true,
                    grow: false,
                    ..Capabilities::default()
                },
            ),
            (
                "textbook-counting-fnv1a-i32",
                Capabilities {
                    remove: true,
                    grow: false,
                    ..Capabilities::default()
                },
            ),
            (
                "scalable/sbbf/xxh3",
                Capabilities {
                    remove: false,
                    grow: true,
                    ..Capabilities::default()
                },
            ),
            (
                "textbook-scalable",
                Capabilities {
                    remove: false,
                    grow: true,
                    ..Capabilities::default()
                },
            ),
        ] {
            assert_eq!(capabilities(name), Ok(caps), "{name}");
        }
        assert!(matches!(
            capabilities("counting16/xxh3/km"),
            Err(BloomError::UnknownName { .. })
        ));
        for name in names() {
            let caps = capabilities(&name).unwrap();
            assert_eq!(
                caps.remove,
                build_removable(&name, Spec::Target { n: 10, p: 0.1 }).is_ok()
            );
            assert_eq!(
                caps.grow,
                build_growable(&name, Spec::Target { n: 10, p: 0.1 }).is_ok()
            );
        }
    }

    #[test]
    fn a_missing_capability_is_an_error_naming_the_ones_that_have_it() {
        let spec = Spec::Target { n: 10, p: 0.01 };
        let e = build_removable("classic/xxh3/km/flat", spec).unwrap_err();
        assert!(
            matches!(&e, BloomError::Unsupported { name, capability: "remove keys", .. } if name == "classic/xxh3/km/flat"),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("classic/xxh3/km/flat") && msg.contains("counting4/xxh3/km"),
            "{msg}"
        );
        let msg = build_growable("counting4/xxh3/km", spec)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("cannot grow") && msg.contains("textbook-scalable"),
            "{msg}"
        );
        assert!(matches!(
            build_removable("nope", spec),
            Err(BloomError::UnknownName { .. })
        ));
        assert!(matches!(
            build_growable("nope", spec),
            Err(BloomError::UnknownName { .. })
        ));
    }

    #[test]
    fn variant_ids_round_trip_and_carry_the_types_axes_and_capabilities() {
        assert_eq!(VariantId::all().count(), names().len());
        for id in VariantId::all() {
            assert_eq!(VariantId::parse(id.name()).unwrap(), id);
            assert_eq!(id.to_string(), id.name());
            assert!(id.name().starts_with(&id.layout().to_string()), "{id}");
        }
        let guava = VariantId::of::<Bloom<Murmur3, GuavaMitz64, FlatBits>>();
        assert_eq!(guava.name(), "classic/murmur3/mitz64/flat");
        assert_eq!(
            guava.axes(),
            Axes {
                hash: Some("murmur3"),
                index: Some("mitz64"),
                store: Some("flat")
            }
        );
        let caps = guava.capabilities();
        assert!(caps.serializable && caps.concurrent && !caps.remove && !caps.grow);
        let atomic = VariantId::of::<Bloom<Xxh3, KirschMitzenmacher, AtomicBits>>();
        assert!(atomic.capabilities().concurrent && !atomic.capabilities().serializable);
        let textbook = VariantId::of::<TextbookFnv1aI32>();
        assert!(!textbook.capabilities().concurrent);
        let scalable = VariantId::of::<Scalable<SplitBlock<Xxh3>>>();
        assert_eq!(scalable.axes().hash, Some("xxh3"));
        assert!(scalable.capabilities().grow);
        assert!(
            VariantId::of::<Counting4<Xxh3, KirschMitzenmacher>>()
                .capabilities()
                .remove
        );
        assert!(
            VariantId::parse("sbbf/xxh3")
                .unwrap()
                .capabilities()
                .concurrent
        );
        let e = VariantId::parse("sbbf/nope").unwrap_err().to_string();
        assert!(e.contains("sbbf/nope") && e.contains("sbbf/xxh3"), "{e}");
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
