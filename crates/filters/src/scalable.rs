//! The scalable filter (Almeida, Baquero, Preguica & Hutchison 2007): a chain of stages of any
//! registered layout, each with more capacity and a tighter rate than the last, for when the number
//! of keys is not known in advance. Plus the textbook schedule, flaw included ([`TextbookScalable`]).

use crate::capability::Growable;
use crate::error::{BloomError, Result};
use crate::filter::{Filter, Geometry, Layout, Variant};
use crate::hash::Digest;
use crate::index::KirschMitzenmacher;
use crate::key::Key;
use crate::sizing::{Params, check_n, check_p};
use crate::store::FlatBits;
use crate::{Bloom, Xxh3};

/// The default growth s: each stage holds twice the keys of the one before.
pub const DEFAULT_GROWTH: f64 = 2.0;
/// The default tightening r: each stage's rate is half the one before.
pub const DEFAULT_TIGHTENING: f64 = 0.5;

/// A scalable Bloom filter over stages of layout `F`.
///
/// Built for an initial capacity n0 and a target rate p, with growth s > 1 and tightening
/// 0 < r < 1: stage i holds `n_i = ceil(n0 s^i)` keys at `p_i = p (1 - r) r^i`. Stage i is
/// `F::sized_for(n_i, p_i)`, enlarged (through `F::with_bits_for`) until its own layout theory at
/// `n_i` keys is at most `p_i`: a layout's nominal sizing can miss its rate (k is rounded; blocked
/// and split-block layouts run 17% and 53% above p at 1%), and the chain's bound is only as good as
/// its stages'. A stage is full after `n_i` inserts; the next insert allocates stage
/// i + 1. Lookups check every stage (newest first), all with the one digest the key hashed to, so a
/// lookup hashes once and probes each stage: its cost grows with the number of stages, about
/// `log_s(n / n0)`.
///
/// Guarantee: no false negatives (every insert lands in a stage that is never modified otherwise).
/// The compound false-positive rate, `1 - prod(1 - f_i)` over the stages' own rates at their fill,
/// is at most `sum f_i <= sum p_i < p` at every fill ([`crate::theory::scalable_limit`]), as far as
/// each stage follows its layout's theory. Stages share the digest (one hash per lookup) but hold
/// disjoint, independently hashed key sets, which is what makes their false positives independent
/// events for a query.
///
/// Growth cost: a new stage is built once, then rebuilt larger while its theory misses `p_i` (two or
/// three builds in practice, each a zeroed allocation); the blocked layout's exact theory at a
/// large k costs up to some 0.3 s an evaluation, so the first insert into a new blocked stage can be
/// that slow. No allocation happens on any other insert or lookup.
///
/// Removal is not offered ([`crate::Removable`] is not implemented): which stage holds a key is not
/// known when it is removed.
///
/// Every insert counts toward the current stage's capacity, including a repeated key (the filter
/// cannot tell a repeat from a false positive).
///
/// If a new stage cannot be built (its size overflows `u64`, its k exceeds 255 because `p_i`
/// became tiny, or the allocator refuses), [`Filter::insert_digest`] keeps inserting into the last
/// stage, which then fills beyond its capacity (its rate rises, no key is lost), and
/// [`Scalable::growth_error`] says why; [`Scalable::try_insert_digest`] returns the error instead.
///
/// The [`Filter`] figures: `bits`, `set_bits` and `memory_bytes` are totals over the stages;
/// `geometry` and `hashes` are the *first* stage's (stages differ in k and size, and no single
/// [`Geometry`] describes the chain), so use [`Filter::fpr_theory`] for the compound theory.
pub struct Scalable<F> {
    /// Stage i at index i; never empty.
    stages: Vec<F>,
    /// The capacity n_i of each stage.
    capacities: Vec<u64>,
    /// Keys inserted into the last stage.
    in_last: u64,
    /// Keys inserted in total.
    inserted: u64,
    n0: u64,
    first_rate: f64,
    growth: f64,
    tightening: f64,
    /// Whether stages are enlarged until their theory meets their rate (false: the textbook's
    /// nominal sizing).
    meet_theory: bool,
    growth_error: Option<BloomError>,
}

impl<F> std::fmt::Debug for Scalable<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scalable")
            .field("stages", &self.stages.len())
            .field("capacities", &self.capacities)
            .field("inserted", &self.inserted)
            .field("first_rate", &self.first_rate)
            .field("growth", &self.growth)
            .field("tightening", &self.tightening)
            .finish()
    }
}

/// Checks growth s > 1 and tightening r in (0, 1), both finite.
fn check_schedule(growth: f64, tightening: f64) -> Result<()> {
    if !(growth.is_finite() && growth > 1.0) {
        return Err(BloomError::OutOfRange {
            what: "scalable growth s",
            value: growth.to_string(),
            allowed: "it must be a finite number greater than 1".into(),
        });
    }
    if !(tightening > 0.0 && tightening < 1.0) {
        return Err(BloomError::OutOfRange {
            what: "scalable tightening r",
            value: tightening.to_string(),
            allowed: "it must be a number in the open interval (0, 1)".into(),
        });
    }
    Ok(())
}

impl<F: Variant> Scalable<F> {
    /// A scalable filter for an initial `n0` keys at target rate `p`, growth `growth` (s > 1) and
    /// tightening `tightening` (0 < r < 1); the first stage runs at `p (1 - r)`.
    ///
    /// Errors: n0 = 0 ([`BloomError::InvalidCount`]), p outside (0, 1) ([`BloomError::InvalidRate`]),
    /// s or r out of range or NaN, or a second stage whose capacity `n0 s` would not fit in `u64`
    /// ([`BloomError::OutOfRange`], naming the value), a second stage whose bit count would not
    /// ([`BloomError::TooLarge`]), and the first stage's own sizing errors.
    pub fn new(n0: u64, p: f64, growth: f64, tightening: f64) -> Result<Self> {
        check_n(n0)?;
        check_p(p)?;
        check_schedule(growth, tightening)?;
        let first_rate = p * (1.0 - tightening);
        let first = sized_stage(n0, first_rate, true)?;
        Self::from_first(first, n0, first_rate, growth, tightening, true)
    }

    /// The chain whose first stage is `first`, holding `n0` keys at rate `first_rate`; later stages
    /// meet their rate by their layout theory when `meet_theory` holds, else are sized nominally.
    fn from_first(
        first: F,
        n0: u64,
        first_rate: f64,
        growth: f64,
        tightening: f64,
        meet_theory: bool,
    ) -> Result<Self> {
        check_schedule(growth, tightening)?;
        check_second_stage(n0, first_rate, growth, tightening)?;
        Ok(Self {
            stages: vec![first],
            capacities: vec![n0],
            in_last: 0,
            inserted: 0,
            n0,
            first_rate,
            growth,
            tightening,
            meet_theory,
            growth_error: None,
        })
    }

    /// A chain on an explicitly sized first stage: `n0` is the count at which its k is optimal,
    /// `max(1, round(m ln 2 / k))`, and its rate is the layout's theory there (capped at 1/2); the
    /// default schedule follows.
    fn from_explicit_first(first: F, n0: Option<u64>) -> Result<Self> {
        let n0 = n0.unwrap_or_else(|| {
            ((first.bits() as f64 * std::f64::consts::LN_2 / f64::from(first.hashes())).round()
                as u64)
                .max(1)
        });
        let rate = first.fpr_theory(n0).clamp(f64::MIN_POSITIVE, 0.5);
        Self::from_first(first, n0, rate, DEFAULT_GROWTH, DEFAULT_TIGHTENING, true)
    }

    /// Allocates the next stage.
    #[cold]
    fn grow(&mut self) -> Result<()> {
        let i = self.stages.len();
        let capacity = stage_capacity(self.n0, self.growth, i)?;
        let rate = self.first_rate * self.tightening.powi(i as i32);
        let stage = sized_stage(capacity, rate, self.meet_theory)?;
        self.stages
            .try_reserve(1)
            .map_err(|_| BloomError::AllocationFailed {
                bytes: std::mem::size_of::<F>() as u64 * (i as u64 + 1),
            })?;
        self.stages.push(stage);
        self.capacities.push(capacity);
        self.in_last = 0;
        Ok(())
    }

    /// Inserts a precomputed digest, allocating a stage first when the last one is full; returns
    /// the error if that stage cannot be built (the key is then inserted into the last stage).
    #[inline]
    pub fn try_insert_digest(&mut self, d: Digest) -> Result<()> {
        let mut result = Ok(());
        if self.in_last >= self.capacities[self.capacities.len() - 1]
            && self.growth_error.is_none()
            && let Err(e) = self.grow()
        {
            self.growth_error = Some(e.clone());
            result = Err(e);
        }
        let last = self.stages.len() - 1;
        self.stages[last].insert_digest(d);
        self.in_last += 1;
        self.inserted += 1;
        result
    }

    /// Inserts a precomputed digest (see the type's docs for what happens when growth fails).
    #[inline]
    pub fn insert_digest(&mut self, d: Digest) {
        let _ = self.try_insert_digest(d);
    }

    /// Looks up a precomputed digest in every stage, newest (largest) first.
    #[inline]
    pub fn contains_digest(&self, d: Digest) -> bool {
        self.stages.iter().rev().any(|s| s.contains_digest(d))
    }

    /// Prefetches what a lookup of `d` reads, in every stage.
    #[inline]
    pub fn prefetch_digest(&self, d: Digest) {
        for s in &self.stages {
            s.prefetch_digest(d);
        }
    }

    /// Hashes key bytes (every stage hashes alike, being of one type).
    #[inline]
    pub fn digest(&self, bytes: &[u8]) -> Digest {
        self.stages[0].digest(bytes)
    }

    /// Inserts `key` (see [`crate::key`] for how keys become bytes).
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        key.with_bytes(|b| {
            let d = self.digest(b);
            self.insert_digest(d);
        });
    }

    /// Whether `key` may have been inserted.
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        key.with_bytes(|b| self.contains_digest(self.digest(b)))
    }

    /// The stages, oldest first.
    pub fn stage_filters(&self) -> &[F] {
        &self.stages
    }

    /// The capacity n_i of each stage allocated so far.
    pub fn capacities(&self) -> &[u64] {
        &self.capacities
    }

    /// The target rate `p_i` each stage allocated so far was sized for.
    pub fn stage_rates(&self) -> Vec<f64> {
        (0..self.stages.len())
            .map(|i| self.first_rate * self.tightening.powi(i as i32))
            .collect()
    }

    /// Keys inserted in total.
    pub fn inserted(&self) -> u64 {
        self.inserted
    }

    /// Why the last growth failed, if it did (the last stage then fills beyond its capacity).
    pub fn growth_error(&self) -> Option<&BloomError> {
        self.growth_error.as_ref()
    }

    /// The bound on the compound rate at any fill, [`crate::theory::scalable_limit`] of the first
    /// stage's rate and the tightening: p for [`Scalable::new`]'s schedule.
    pub fn rate_limit(&self) -> f64 {
        crate::theory::scalable_limit(self.first_rate, self.tightening)
    }

    /// How `members` keys, inserted in order, are spread over the stages allocated so far: each
    /// stage takes up to its capacity, and the last takes the rest (as it does when growth fails).
    pub fn stage_counts(&self, members: u64) -> Vec<u64> {
        let mut left = members;
        let last = self.capacities.len() - 1;
        self.capacities
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let here = if i == last { left } else { left.min(c) };
                left -= here;
                here
            })
            .collect()
    }

    /// The compound theory after `members` keys in total: `1 - prod(1 - f_i)`, where f_i is stage
    /// i's own layout theory ([`Filter::fpr_theory`]) at its count from [`Self::stage_counts`].
    /// Exact for `members` up to the number inserted so far; beyond the stages allocated, the extra
    /// keys are counted in the last stage, so call it with the count actually inserted.
    pub fn fpr_theory(&self, members: u64) -> f64 {
        crate::theory::compound(
            self.stages
                .iter()
                .zip(self.stage_counts(members))
                .map(|(s, c)| s.fpr_theory(c)),
        )
    }
}

/// A stage for `n` keys at rate `p`: `F::sized_for(n, p)`, then, if `meet_theory`, rebuilt with
/// more bits (`F::with_bits_for`) until `fpr_theory(n) <= p`.
///
/// The bits are found by the secant method on the log of the rate against the bits (aiming 0.5%
/// below p, and adding at least 0.5% per step), from the origin for the first step: the log of
/// the rate falls about linearly in the bits for every layout at a useful load, so two or three
/// steps suffice. Where the rate does not fall (a layout whose k from `with_bits_for` overshoots)
/// the step is 25%. Errors if 64 steps do not suffice.
///
/// Each candidate's rate comes from [`Variant::theory_with_bits_for`], so only the returned stage
/// is allocated: a rate the layout cannot reach (split-block's fixed k = 8 at p = 1e-80) is refused
/// by arithmetic, at the layout's size limit or after 64 steps, where building every candidate
/// allocated ever larger filters (10.8 GB for 1000 keys). A variant without it builds each
/// candidate.
fn sized_stage<F: Variant>(n: u64, p: f64, meet_theory: bool) -> Result<F> {
    let first = F::sized_for(n, p)?;
    if !meet_theory {
        return Ok(first);
    }
    let (mut bits, mut rate) = (first.bits(), first.fpr_theory(n));
    // The filter of the last candidate, when it was built to learn its rate.
    let mut built = Some(first);
    let mut asked = 0;
    let aim = (p * 0.995).ln();
    let mut previous: Option<(f64, f64)> = None;
    for _ in 0..64 {
        if rate <= p {
            // `built` is `None` only once a candidate was asked for and its rate computed.
            return built.map_or_else(|| F::with_bits_for(asked, n), Ok);
        }
        let (b1, ln_rate) = (bits as f64, rate.ln());
        let next = match previous {
            None => b1 * aim / ln_rate,
            Some((b0, l0)) if ln_rate < l0 => b1 + (aim - ln_rate) * (b1 - b0) / (ln_rate - l0),
            Some(_) => b1 * 1.25,
        };
        let next = next.max(b1 * 1.005).ceil();
        previous = Some((b1, ln_rate));
        built = None;
        if next >= 18_446_744_073_709_549_568.0 {
            return Err(BloomError::TooLarge {
                what: format!("a scalable stage of n = {n} at p = {p}"),
                needed: next,
                max: crate::sizing::MAX_BITS,
                variant: F::variant_name(),
            });
        }
        let next = next as u64;
        asked = next;
        (bits, rate) = match F::theory_with_bits_for(next, n) {
            Some(theory) => theory?,
            None => {
                let stage = F::with_bits_for(next, n)?;
                let theory = (stage.bits(), stage.fpr_theory(n));
                built = Some(stage);
                theory
            }
        };
    }
    Err(BloomError::OutOfRange {
        what: "scalable stage rate",
        value: format!("{p} for n = {n} keys in {}", F::variant_name()),
        allowed: "64 enlargements did not bring the layout's theory down to it".into(),
    })
}

/// Refuses, before anything is allocated, a chain that could never grow: its second stage's key
/// count `n0 s` must fit in `u64`, and its bit count at `p_1` (by [`Params::optimal_bits`]) too.
fn check_second_stage(n0: u64, first_rate: f64, growth: f64, tightening: f64) -> Result<()> {
    let capacity = stage_capacity(n0, growth, 1)?;
    Params::optimal_bits(capacity, first_rate * tightening).map(|_| ())
}

/// `ceil(n0 s^i)` as a `u64`, or an error naming the stage and the values when it does not fit.
fn stage_capacity(n0: u64, growth: f64, i: usize) -> Result<u64> {
    let raw = (n0 as f64 * growth.powi(i.min(i32::MAX as usize) as i32)).ceil();
    // 2^64 is exactly representable; every f64 below it converts without wrapping.
    if raw.is_nan() || raw >= 18_446_744_073_709_551_616.0 {
        return Err(BloomError::OutOfRange {
            what: "scalable stage capacity n0 s^i",
            value: format!("{raw:e} (n0 = {n0}, growth s = {growth}, stage i = {i})"),
            allowed: format!("it must fit in u64 (at most {} keys)", u64::MAX),
        });
    }
    Ok(raw as u64)
}

impl<F: Variant> Filter for Scalable<F> {
    fn name(&self) -> String {
        <Self as Variant>::variant_name()
    }
    fn layout(&self) -> Layout {
        <Self as Variant>::LAYOUT
    }
    #[inline]
    fn digest(&self, bytes: &[u8]) -> Digest {
        Self::digest(self, bytes)
    }
    #[inline]
    fn insert_digest(&mut self, d: Digest) {
        Self::insert_digest(self, d);
    }
    #[inline]
    fn contains_digest(&self, d: Digest) -> bool {
        Self::contains_digest(self, d)
    }
    #[inline]
    fn prefetch_digest(&self, d: Digest) {
        Self::prefetch_digest(self, d);
    }
    fn bits(&self) -> u64 {
        self.stages.iter().map(Filter::bits).sum()
    }
    fn hashes(&self) -> u32 {
        self.stages[0].hashes()
    }
    fn memory_bytes(&self) -> usize {
        // Each stage's figure counts its inline part, which lives in the stage vector.
        let spare = self.stages.capacity() - self.stages.len();
        std::mem::size_of::<Self>()
            + self.stages.iter().map(Filter::memory_bytes).sum::<usize>()
            + spare * std::mem::size_of::<F>()
            + self.capacities.capacity() * 8
    }
    fn set_bits(&self) -> u64 {
        self.stages.iter().map(Filter::set_bits).sum()
    }
    fn geometry(&self) -> Geometry {
        self.stages[0].geometry()
    }
    /// The compound rate; see [`Scalable::fpr_theory`].
    fn fpr_theory(&self, members: u64) -> f64 {
        Self::fpr_theory(self, members)
    }
    /// `1 - prod(1 - g_i)` over the stages' own [`Filter::fpr_given_bits`] g_i. (Stages share the
    /// digest, so a query's probes in two stages are not quite independent; with stage sizes that
    /// differ, their positions are unrelated in practice.)
    fn fpr_given_bits(&self) -> f64 {
        crate::theory::compound(self.stages.iter().map(Filter::fpr_given_bits))
    }
    /// The sum of the stages' own estimates.
    fn estimated_len(&self) -> f64 {
        self.stages.iter().map(Filter::estimated_len).sum()
    }
}

impl<F: Variant> Growable for Scalable<F> {
    fn stages(&self) -> usize {
        self.stages.len()
    }
}

impl<F: Variant> Variant for Scalable<F> {
    const LAYOUT: Layout = Layout::Scalable;
    fn variant_name() -> String {
        format!("{}/{}", Self::LAYOUT, F::variant_name())
    }
    fn axes() -> crate::registry::Axes {
        F::axes()
    }
    /// The first stage is `F::with_params(params)`, holding n0 = `max(1, round(m ln 2 / k))` keys
    /// (the count at which its k is optimal) at its layout's theoretical rate there (capped at
    /// 1/2); later stages follow the default schedule from that rate.
    fn with_params(params: Params) -> Result<Self> {
        Self::from_explicit_first(F::with_params(params)?, None)
    }
    /// [`Scalable::new`] with the default growth 2 and tightening 1/2.
    fn sized_for(n: u64, p: f64) -> Result<Self> {
        Self::new(n, p, DEFAULT_GROWTH, DEFAULT_TIGHTENING)
    }
    /// A lower bound: the first stage at its layout's plain sizing for `p (1 - r)`. The built first
    /// stage may be larger (it is enlarged until its own theory meets its rate), and every later
    /// stage adds memory as keys arrive, which no size at build time can know.
    fn sized_bytes(n: u64, p: f64) -> Result<u64> {
        check_n(n)?;
        check_p(p)?;
        F::sized_bytes(n, p * (1.0 - DEFAULT_TIGHTENING))
    }
    /// The first stage is `F::with_bits_for(bits, n)`, holding n0 = n keys at its layout's
    /// theoretical rate there (capped at 1/2); later stages follow the default schedule.
    fn with_bits_for(bits: u64, n: u64) -> Result<Self> {
        Self::from_explicit_first(F::with_bits_for(bits, n)?, Some(n))
    }
}

/// The inner layout of [`TextbookScalable`]: the classic xxh3 filter, a sound one, so that the
/// only flaw measured is the schedule.
pub type TextbookStage = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;

/// The scalable filter as textbooks and tutorials write it, flaw included: the first stage runs
/// at the full target p, each later stage at half the rate of the one before, with twice the
/// capacity, each sized by the nominal formula (no check against the layout's theory). Its compound rate is `1 - prod(1 - p 2^-i)`, which tends to almost 2p as it grows
/// ([`crate::theory::scalable_limit`]`(p, 0.5)`), not p.
///
/// Stages are the classic xxh3 filter ([`TextbookStage`]), so that the schedule is the only flaw
/// measured.
#[derive(Debug)]
pub struct TextbookScalable(Scalable<TextbookStage>);

impl TextbookScalable {
    /// The textbook chain for an initial `n0` keys at target rate `p`: stage i holds `n0 2^i` keys
    /// at `p 2^-i`.
    pub fn new(n0: u64, p: f64) -> Result<Self> {
        check_n(n0)?;
        check_p(p)?;
        let first = TextbookStage::sized_for(n0, p)?;
        Ok(Self(Scalable::from_first(
            first,
            n0,
            p,
            DEFAULT_GROWTH,
            DEFAULT_TIGHTENING,
            false,
        )?))
    }

    /// The chain, with all of [`Scalable`]'s figures.
    pub fn inner(&self) -> &Scalable<TextbookStage> {
        &self.0
    }

    /// Inserts `key`.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        self.0.insert(key);
    }

    /// Whether `key` may have been inserted.
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.0.contains(key)
    }
}

impl Filter for TextbookScalable {
    fn name(&self) -> String {
        <Self as Variant>::variant_name()
    }
    fn layout(&self) -> Layout {
        <Self as Variant>::LAYOUT
    }
    #[inline]
    fn digest(&self, bytes: &[u8]) -> Digest {
        self.0.digest(bytes)
    }
    #[inline]
    fn insert_digest(&mut self, d: Digest) {
        self.0.insert_digest(d);
    }
    #[inline]
    fn contains_digest(&self, d: Digest) -> bool {
        self.0.contains_digest(d)
    }
    #[inline]
    fn prefetch_digest(&self, d: Digest) {
        self.0.prefetch_digest(d);
    }
    fn bits(&self) -> u64 {
        self.0.bits()
    }
    fn hashes(&self) -> u32 {
        self.0.hashes()
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
    fn set_bits(&self) -> u64 {
        self.0.set_bits()
    }
    fn geometry(&self) -> Geometry {
        self.0.geometry()
    }
    fn fpr_theory(&self, members: u64) -> f64 {
        self.0.fpr_theory(members)
    }
    fn fpr_given_bits(&self) -> f64 {
        self.0.fpr_given_bits()
    }
    fn estimated_len(&self) -> f64 {
        self.0.estimated_len()
    }
}

impl Growable for TextbookScalable {
    fn stages(&self) -> usize {
        self.0.stages.len()
    }
}

impl Variant for TextbookScalable {
    const LAYOUT: Layout = Layout::Textbook;
    fn variant_name() -> String {
        format!("{}-scalable", Self::LAYOUT)
    }
    /// FNV-1a, the port's own hash (its index arithmetic is its own, not an index scheme here).
    fn axes() -> crate::registry::Axes {
        crate::registry::Axes {
            hash: Some(<crate::hash::Fnv1a as crate::hash::HashStrategy>::ID),
            ..Default::default()
        }
    }
    fn with_params(params: Params) -> Result<Self> {
        Ok(Self(Scalable::with_params(params)?))
    }
    fn sized_for(n: u64, p: f64) -> Result<Self> {
        Self::new(n, p)
    }
    /// The first stage, sized plainly for the full `p`; later stages add memory as keys arrive.
    fn sized_bytes(n: u64, p: f64) -> Result<u64> {
        TextbookStage::sized_bytes(n, p)
    }
    fn with_bits_for(bits: u64, n: u64) -> Result<Self> {
        Ok(Self(Scalable::with_bits_for(bits, n)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AtomicBits, Blocked512, Counting4, GuavaMitz32, SplitBlock};

    type S = Scalable<TextbookStage>;

    /// `theory_with_bits_for` gives the bits and the theory of the filter `with_bits_for` builds,
    /// to the last bit of the f64, and its error where the size is refused before allocating.
    fn theory_is_the_built_filters<F: Variant>() {
        let bits = [
            1,
            63,
            64,
            65,
            255,
            256,
            257,
            511,
            512,
            513,
            1000,
            12_345,
            1 << 20,
            9_585_088,
        ];
        for b in bits {
            for n in [0, 1, 7, 1000, 20_000] {
                let built = F::with_bits_for(b, n).map(|f| (f.bits(), f.fpr_theory(n)));
                let computed = F::theory_with_bits_for(b, n).expect("computed without building");
                match (built, computed) {
                    (Ok((b0, r0)), Ok((b1, r1))) => {
                        assert_eq!(b0, b1, "{} bits {b} n {n}", F::variant_name());
                        assert_eq!(
                            r0.to_bits(),
                            r1.to_bits(),
                            "{} bits {b} n {n}",
                            F::variant_name()
                        );
                    }
                    (built, computed) => assert_eq!(
                        built.map(|_| ()),
                        computed.map(|_| ()),
                        "{} bits {b} n {n}",
                        F::variant_name()
                    ),
                }
            }
        }
    }

    #[test]
    fn every_stage_layout_computes_its_theory_without_building() {
        theory_is_the_built_filters::<Bloom<Xxh3, KirschMitzenmacher, FlatBits>>();
        theory_is_the_built_filters::<Bloom<Xxh3, KirschMitzenmacher, AtomicBits>>();
        // A scheme of fewer than 2^53 positions: its theory has the reduced-domain term.
        theory_is_the_built_filters::<Bloom<Xxh3, GuavaMitz32, FlatBits>>();
        theory_is_the_built_filters::<Blocked512<Xxh3>>();
        theory_is_the_built_filters::<SplitBlock<Xxh3>>();
        theory_is_the_built_filters::<Counting4<Xxh3, KirschMitzenmacher>>();
    }

    #[test]
    fn a_rate_the_layout_cannot_reach_is_refused_with_the_first_stage_only() {
        // Split-block's k is fixed at 8: 1e-80 for 1000 keys would take blocks beyond any memory.
        // The stage search reaches the layout's block limit by arithmetic and refuses there; it
        // once built every candidate on the way, up to 10 GB.
        let e = Scalable::<SplitBlock<Xxh3>>::sized_for(1000, 1e-80).unwrap_err();
        assert!(
            matches!(&e, BloomError::TooLarge { what, .. } if what.ends_with("split blocks")),
            "{e:?}"
        );
    }

    #[test]
    fn stages_follow_the_schedule() {
        let mut f = S::new(100, 0.01, 2.0, 0.5).unwrap();
        assert_eq!(f.stages.len(), 1);
        for i in 0..100u64 {
            f.insert(&i);
        }
        assert_eq!(
            f.stages.len(),
            1,
            "a stage is full after n0 inserts, not before"
        );
        f.insert(&100u64);
        assert_eq!(f.stages.len(), 2);
        for i in 101..700u64 {
            f.insert(&i);
        }
        // 100 + 200 + 400 = 700: three stages exactly full.
        assert_eq!(f.capacities(), &[100, 200, 400]);
        assert_eq!(f.stage_rates(), vec![0.005, 0.0025, 0.00125]);
        assert_eq!(f.stage_counts(700), vec![100, 200, 400]);
        assert_eq!(f.stage_counts(150), vec![100, 50, 0]);
        assert!((0..700u64).all(|i| f.contains(&i)));
        assert!(f.fpr_theory(700) < 0.01);
        assert_eq!(f.rate_limit(), 0.01);
    }

    #[test]
    fn every_stage_meets_its_rate_by_its_layout_theory() {
        fn check<F: Variant>() {
            let mut f = Scalable::<F>::new(1000, 0.01, 2.0, 0.5).unwrap();
            for i in 0..63_000u64 {
                f.insert(&i);
            }
            assert_eq!(f.stage_filters().len(), 6, "{}", F::variant_name());
            let rates = f.stage_rates();
            for (i, s) in f.stage_filters().iter().enumerate() {
                let n = f.capacities()[i];
                let theory = s.fpr_theory(n);
                assert!(
                    theory <= rates[i] && theory > 0.9 * rates[i],
                    "{} stage {i}: theory {theory} at n = {n}, rate {}",
                    F::variant_name(),
                    rates[i]
                );
            }
            assert!(f.fpr_theory(63_000) <= 0.01);
        }
        check::<TextbookStage>();
        check::<crate::Blocked512<Xxh3>>();
        check::<crate::SplitBlock<Xxh3>>();
        check::<crate::Counting4<Xxh3, KirschMitzenmacher>>();
    }
}
