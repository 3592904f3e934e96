//! bloomlab's own filters through the same door as anyone's: `bloomlab/<variant>` for the flagships
//! (`sbbf/xxh3`, `blocked512/xxh3`, `classic/xxh3/km/flat`) and the textbook ports
//! (`textbook-fnv1a-i32`, `textbook-scalable`), built by [`registry::build`]: the flagships with
//! [`Spec::Promise`] (the bits their layout needs to keep p), the ports with their own rule.
//!
//! Every one declares `large` (its bit count is a `u64` in the trait), the textbook port included:
//! its real bit count is a Java `int`, and the scale clause is what exposes that. Its build refuses
//! any m above `i32::MAX` with [`BloomError::TooLarge`](bloomlab_filters::error::BloomError), so
//! the clause finds the claim broken by a refusal rather than by a silently smaller filter.
//!
//! Bad input: [`registry::build`] validates before it allocates. n = 0 is
//! `InvalidCount`; a p that is not a finite number in (0, 1) — 0, negative, 1, above 1, NaN
//! (`check_p` tests `is_finite()` first, so NaN never reaches a comparison) and infinities — is
//! `InvalidRate`; a size beyond `u64` words or the allocator is `TooLarge` / `AllocationFailed`.
//! Each becomes [`CandidateError::Refused`] with the filter crate's message.
//!
//! None of the five offers serialization here (the filters crate's only file format is Guava's,
//! for `classic/murmur3/mitz64/flat`) or concurrent inserts through this door (its concurrent
//! inserter borrows the filter mutably, which [`Instance::shared`]'s `&self` cannot lend).

use std::sync::Arc;

use bloomlab_filters::registry::{self, Spec, VariantId};
use bloomlab_filters::{
    Blocked512, Bloom, Filter, FlatBits, Geometry, KirschMitzenmacher, Layout, SplitBlock,
    TextbookFnv1aI32, TextbookScalable, Xxh3,
};

use bloomlab_conform::candidate::{
    About, Candidate, CandidateError, Capabilities, Declared, Instance, KeyBatch, Stats,
};

/// bloomlab's own subjects, in report order: the flagships, then the textbook ports. Named by
/// their types, so a name here cannot drift from the registry's.
pub fn variants() -> [VariantId; 5] {
    [
        VariantId::of::<SplitBlock<Xxh3>>(),
        VariantId::of::<Blocked512<Xxh3>>(),
        VariantId::of::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>(),
        VariantId::of::<TextbookFnv1aI32>(),
        VariantId::of::<TextbookScalable>(),
    ]
}

/// The subject-name prefix of bloomlab's own candidates.
pub const PREFIX: &str = "bloomlab/";

/// A registered bloomlab variant as a [`Candidate`], named `bloomlab/<variant>`.
#[derive(Debug, Clone, Copy)]
pub struct Own {
    variant: VariantId,
}

impl Own {
    /// The candidate for registry name `variant`; the error lists [`variants`]' names.
    pub fn new(variant: &str) -> Result<Self, String> {
        variants()
            .into_iter()
            .find(|v| v.name() == variant)
            .map(|variant| Own { variant })
            .ok_or_else(|| {
                format!(
                    "{variant:?} is not one of bloomlab's conformance subjects; allowed: {}",
                    variants().map(VariantId::name).join(", ")
                )
            })
    }

    /// Its registry variant.
    pub fn variant(&self) -> VariantId {
        self.variant
    }

    /// How it is sized for (n, p): a flagship promises `p`, so it spends the bits its layout needs
    /// ([`Spec::Promise`]); a textbook port keeps the sizing rule it ports ([`Spec::Target`]).
    pub fn spec(&self, n: u64, p: f64) -> Spec {
        if self.variant.layout() == Layout::Textbook {
            Spec::Target { n, p }
        } else {
            Spec::Promise { n, p }
        }
    }
}

/// Every one of bloomlab's own candidates, in [`variants`] order.
pub fn all() -> Vec<Arc<dyn Candidate>> {
    variants()
        .into_iter()
        .map(|variant| Arc::new(Own { variant }) as Arc<dyn Candidate>)
        .collect()
}

impl Candidate for Own {
    fn about(&self) -> About {
        About::rust(
            format!("{PREFIX}{}", self.variant.name()),
            env!("CARGO_PKG_VERSION"),
        )
        .with(Capabilities {
            stats: true,
            large: true,
            // A scalable layout promises to keep p as it grows.
            growable: self.variant.capabilities().grow,
            ..Capabilities::default()
        })
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let filter = registry::build(self.variant.name(), self.spec(n, p)).map_err(|e| {
            CandidateError::Refused {
                subject: format!("{PREFIX}{}", self.variant.name()),
                message: e.to_string(),
            }
        })?;
        Ok(Box::new(OwnInstance { filter }))
    }
}

/// A built bloomlab filter: one dynamic call per key, none per probe.
struct OwnInstance {
    filter: Box<dyn Filter>,
}

impl Instance for OwnInstance {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        for k in keys.iter() {
            self.filter.insert_bytes(k);
        }
        Ok(())
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        out.clear();
        out.extend(keys.iter().map(|k| self.filter.contains_bytes(k)));
        Ok(())
    }

    fn stats(&mut self) -> Result<Stats, CandidateError> {
        Ok(Stats {
            memory_bytes: Some(self.filter.memory_bytes() as u64),
            layout: declared(&*self.filter),
        })
    }
}

/// The layout `filter` declares: its [`Geometry`], or nothing when the filter is not one geometry
/// (a scalable chain past its first stage, whose [`Filter::geometry`] is that stage's alone).
fn declared(filter: &dyn Filter) -> Option<Declared> {
    let geometry = filter.geometry();
    let total = geometry.bits();
    if total != filter.bits() {
        return None;
    }
    Some(match geometry {
        Geometry::Flat { bits, hashes } => Declared::Classic { bits, hashes },
        Geometry::Blocked {
            block_bits, hashes, ..
        } => Declared::Blocked {
            bits: total,
            hashes,
            block_bits,
        },
        Geometry::SplitBlock { .. } => Declared::SplitBlock { bits: total },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_own_subject_builds_and_declares_its_layout() {
        for c in all() {
            let about = c.about();
            let mut f = c.build(1000, 0.01).unwrap();
            let stats = f.stats().unwrap();
            assert!(stats.memory_bytes.unwrap() > 1000, "{about}");
            let bits = match stats.layout {
                Some(Declared::Classic { bits, .. })
                | Some(Declared::Blocked { bits, .. })
                | Some(Declared::SplitBlock { bits }) => bits,
                other => panic!("{about} declares {other:?}"),
            };
            // 1000 keys at 1% need 9586 bits by the textbook formula; every layout rounds up.
            assert!(bits >= 9586, "{about}: {bits} bits");
        }
    }

    #[test]
    fn the_layout_matches_the_kind_of_filter() {
        let stats = |v: &str| Own::new(v).unwrap().build(1000, 0.01).unwrap().stats();
        assert!(matches!(
            stats("sbbf/xxh3").unwrap().layout,
            Some(Declared::SplitBlock { .. })
        ));
        assert!(matches!(
            stats("blocked512/xxh3").unwrap().layout,
            Some(Declared::Blocked {
                block_bits: 512,
                ..
            })
        ));
        assert!(matches!(
            stats("classic/xxh3/km/flat").unwrap().layout,
            Some(Declared::Classic { hashes: 7, .. })
        ));
    }

    #[test]
    fn bad_n_and_p_are_refused_with_the_filter_crates_message() {
        let c = Own::new("classic/xxh3/km/flat").unwrap();
        for (n, p, needle) in [
            (0, 0.01, "n = 0"),
            (100, f64::NAN, "p = NaN"),
            (100, 0.0, "p = 0"),
            (100, 1.0, "p = 1"),
        ] {
            match c.build(n, p) {
                Err(CandidateError::Refused { subject, message }) => {
                    assert_eq!(subject, "bloomlab/classic/xxh3/km/flat");
                    assert!(message.contains(needle), "{message} lacks {needle}");
                }
                Err(e) => panic!("n = {n}, p = {p}: {e}"),
                Ok(_) => panic!("n = {n}, p = {p} accepted"),
            }
        }
    }

    #[test]
    fn an_unknown_variant_lists_the_allowed_ones() {
        let err = Own::new("classic/md5").unwrap_err();
        assert!(err.contains("textbook-scalable"), "{err}");
    }
}
