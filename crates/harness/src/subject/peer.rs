//! Third-party filters measured by the same workloads as ours, through adapters here (not in
//! `bloomlab-filters`, which has no third-party dependency).
//!
//! `peer/growable-bloom-filter`: [`growable_bloom_filter::GrowableBloom`] 2.1, the scalable filter
//! Rust users reach for. Its documentation promises that `desired_error_prob` is "the desired
//! error probability" of the filter, so the grow workload records that rate as the row's target
//! `p`. Its source (not its documentation) cites the Almeida et al. bound
//! `fp <= fp0 / (1 - r)`, which with its defaults (first stage at the full p, tightening
//! r = 0.8515625, growth 2) is about 6.7 p: the measurement shows which of the two it keeps.
//!
//! Its structure, read from its source, gives its theory: stage i holds up to `n0 2^i` keys in a
//! partitioned filter of `k_i = ceil(log2(1 / (p r^i)))` slices of `ceil(n0 2^i / ln 2)` bits; a
//! key is inserted only if no stage already reports it, into the last stage.

use bloomlab_filters::{Capabilities, Geometry, Layout};
use growable_bloom_filter::GrowableBloom;

use super::{Adapter, MeasuredFilter, Shape};
use crate::error::HarnessError;

/// The name of the growable-bloom-filter adapter.
pub const GROWABLE_BLOOM_FILTER: &str = "peer/growable-bloom-filter";

/// The catalogue's adapter for [`GrowablePeer`] (registered from the start).
#[derive(Debug, Clone, Copy, Default)]
pub struct GrowableBloomFilter;

impl Adapter for GrowableBloomFilter {
    fn name(&self) -> &str {
        GROWABLE_BLOOM_FILTER
    }
    /// A scalable filter (of partitioned stages).
    fn layout(&self) -> Layout {
        Layout::Scalable
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            grow: true,
            ..Capabilities::default()
        }
    }
    fn theory(&self) -> String {
        "1 - prod(1 - f_i) over its partitioned stages, as its source sizes them".into()
    }
    /// Its first stage as its source sizes it (later stages add memory as keys arrive).
    fn sized_bytes(&self, n: u64, p: f64) -> Result<u64, HarnessError> {
        let build = |source| HarnessError::Build {
            filter: GROWABLE_BLOOM_FILTER.into(),
            n,
            p,
            source,
        };
        bloomlab_filters::sizing::check_n(n).map_err(build)?;
        bloomlab_filters::sizing::check_p(p).map_err(build)?;
        Ok(Stage::new(n, p, 0).bits().div_ceil(8))
    }
    fn build(&self, n: u64, p: f64) -> Result<Box<dyn MeasuredFilter>, HarnessError> {
        Ok(Box::new(GrowablePeer::new(n, p)?))
    }
}

/// The crate's default tightening ratio (its `DEFAULT_TIGHTENING_RATIO`).
const TIGHTENING: f64 = 0.851_562_5;

/// One stage of the peer, as its source sizes it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stage {
    capacity: u64,
    slices: u64,
    slice_bits: u64,
}

impl Stage {
    fn new(n0: u64, p: f64, i: u32) -> Self {
        let capacity = n0 << i;
        let error = p * TIGHTENING.powi(i as i32);
        Self {
            capacity,
            slices: (1.0 / error).log2().ceil() as u64,
            slice_bits: (capacity as f64 / std::f64::consts::LN_2).ceil() as u64,
        }
    }
    fn bits(&self) -> u64 {
        self.slices * self.slice_bits
    }
    /// FPR of a partitioned filter holding `keys`: every slice has one bit per key.
    fn fpr(&self, keys: u64) -> f64 {
        let one = -((keys as f64) * (-1.0 / self.slice_bits as f64).ln_1p()).exp_m1();
        one.powi(self.slices as i32)
    }
}

/// `growable-bloom-filter`'s `GrowableBloom`, built with its own `new(p, n0)`.
pub struct GrowablePeer {
    filter: GrowableBloom,
    n0: u64,
    p: f64,
}

impl GrowablePeer {
    /// The peer for an initial capacity `n0` and desired rate `p`; errors instead of the crate's
    /// panics for n0 = 0 or p outside (0, 1).
    pub fn new(n0: u64, p: f64) -> Result<Self, HarnessError> {
        if n0 == 0 || n0 > usize::MAX as u64 {
            return Err(HarnessError::invalid(
                "n",
                n0,
                "must be at least 1 for growable-bloom-filter",
            ));
        }
        if !(p > 0.0 && p < 1.0) {
            return Err(HarnessError::invalid(
                "p",
                p,
                "must be in the open interval (0, 1)",
            ));
        }
        Ok(Self {
            filter: GrowableBloom::new(p, n0 as usize),
            n0,
            p,
        })
    }

    /// Its stages now: its capacity is n0 (2^s - 1) after s stages.
    fn stage_count(&self) -> u32 {
        let c = self.filter.capacity() as u64;
        (c / self.n0 + 1).trailing_zeros()
    }

    fn stages_vec(&self) -> Vec<Stage> {
        (0..self.stage_count())
            .map(|i| Stage::new(self.n0, self.p, i))
            .collect()
    }
}

impl MeasuredFilter for GrowablePeer {
    fn insert(&mut self, b: &[u8]) {
        self.filter.insert(b);
    }
    fn contains(&self, b: &[u8]) -> bool {
        self.filter.contains(b)
    }
    /// Theory: `1 - prod(1 - f_i)` over the stages, each filled to capacity except the last,
    /// which holds the rest of the keys the filter accepted (`len()`).
    fn shape(&self, _members: u64) -> Shape {
        let stages = self.stages_vec();
        let mut left = self.filter.len() as u64;
        let mut pass = 1.0;
        let mut textbook_pass = 1.0;
        for (i, st) in stages.iter().enumerate() {
            let keys = if i + 1 == stages.len() {
                left
            } else {
                st.capacity.min(left)
            };
            left -= keys;
            pass *= 1.0 - st.fpr(keys);
            let g = Geometry::Flat {
                bits: st.bits(),
                hashes: st.slices as u32,
            };
            textbook_pass *= 1.0 - g.textbook_fpr(keys);
        }
        let bits: u64 = stages.iter().map(Stage::bits).sum();
        let slices = stages.last().map_or(0, |s| s.slices as u32);
        Shape {
            // The peer is a scalable filter (of partitioned stages).
            layout: Layout::Scalable,
            bits,
            hashes: slices,
            // Each stage's bytes, rounded up as the crate does.
            memory_bytes: stages.iter().map(|s| s.bits().div_ceil(8)).sum(),
            fill_ratio: f64::NAN,
            estimated_count: self.filter.len() as f64,
            fpr_theory: 1.0 - pass,
            fpr_textbook: 1.0 - textbook_pass,
            // The crate does not expose its bits.
            fpr_given_bits: f64::NAN,
            counter_overflow_p: None,
        }
    }
    fn stages(&self) -> u64 {
        u64::from(self.stage_count())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stage count read from the capacity matches the crate's growth rule.
    #[test]
    fn stages_follow_the_capacity() {
        let mut peer = GrowablePeer::new(100, 0.01).unwrap();
        assert_eq!(peer.stages(), 0);
        for i in 0u64..1000 {
            peer.insert(&i.to_le_bytes());
        }
        // 100 + 200 + 400 = 700 < accepted keys <= 1000 < 1500: four stages.
        assert_eq!(peer.stages(), 4, "capacity {}", peer.filter.capacity());
        let shape = peer.shape(1000);
        assert!(
            shape.fpr_theory > 0.0 && shape.fpr_theory < 0.05,
            "{shape:?}"
        );
    }

    #[test]
    fn bad_sizes_are_errors_not_panics() {
        assert!(GrowablePeer::new(0, 0.01).is_err());
        assert!(GrowablePeer::new(10, 1.0).is_err());
        assert!(GrowablePeer::new(10, f64::NAN).is_err());
    }
}
