//! One sweep result: the CSV schema that the report crate and the gate read back.
//!
//! Every derived figure is a column so that plots and gates read only the CSV.

use bloomlab_filters::Layout;
use serde::{Deserialize, Serialize};

/// One trial: a filter built for `n` keys at target `p`, filled with `n_inserted` member keys of
/// `key_set`, then queried with `queries` non-member keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    /// Registry name of the filter variant, e.g. `classic/xxh3/km/flat`.
    pub filter: String,
    /// Layout family, from the filter's type: `classic`, `blocked512`, `sbbf` or `textbook` in the
    /// CSV.
    pub layout: Layout,
    /// Key set name, e.g. `random-u64`, `article`, `url`, `hex`, `file:PATH`.
    pub key_set: String,
    /// Expected count the filter was sized for.
    pub n: u64,
    /// Target false-positive rate the filter was sized for.
    pub p: f64,
    /// Inserted keys / n (1.0 = as sized).
    pub overfill: f64,
    /// Member keys actually inserted.
    pub n_inserted: u64,
    /// True bit count after the layout's rounding.
    pub bits: u64,
    /// Probes per key.
    pub hashes: u32,
    /// bits / n.
    pub bits_per_key: f64,
    /// log2(1/p): the information-theoretic lower bound in bits per key for rate p.
    pub bound_bits_per_key: f64,
    /// bits_per_key / log2(1/observed FPR): 1.0 would be a perfect filter; Bloom filters sit near 1.44.
    pub space_overhead: f64,
    /// Bytes the filter holds.
    pub memory_bytes: u64,
    /// Fraction of bits set after inserting.
    pub fill_ratio: f64,
    /// Element count estimated from the fill, to compare with `n_inserted`.
    pub estimated_count: f64,
    /// Non-member queries made.
    pub queries: u64,
    /// Non-members reported present.
    pub false_positives: u64,
    /// false_positives / queries.
    pub fpr: f64,
    /// Clopper-Pearson exact interval at `confidence`.
    pub ci_low: f64,
    /// Upper end of the Clopper-Pearson interval.
    pub ci_high: f64,
    /// Wilson score interval at `confidence`.
    pub wilson_low: f64,
    /// Upper end of the Wilson interval.
    pub wilson_high: f64,
    /// Layout-correct theoretical FPR at `n_inserted` keys.
    pub fpr_theory: f64,
    /// Textbook (1 - e^(-kn/m))^k at `n_inserted` keys.
    pub fpr_textbook: f64,
    /// Whether `fpr_theory` lies inside [ci_low, ci_high].
    pub theory_in_interval: bool,
    /// Whether the query cap stopped sampling before the precision target was met.
    pub capped: bool,
    /// Median insert time per key over the timing passes (indicative; criterion is the authority).
    pub insert_ns: f64,
    /// Median lookup time per present key.
    pub lookup_present_ns: f64,
    /// Median lookup time per absent key.
    pub lookup_absent_ns: f64,
    /// The same present-key lookups on a `std::collections::HashSet` of the same keys.
    pub hashset_present_ns: f64,
    /// The same absent-key lookups on the HashSet.
    pub hashset_absent_ns: f64,
    /// Bytes the HashSet holds (table plus owned key bytes), measured.
    pub hashset_memory_bytes: u64,
    /// Confidence level of both intervals.
    pub confidence: f64,
    /// Seed of the run (key sets and query order derive from it and the row's coordinates).
    pub seed: u64,
    /// `git describe --always --dirty` of the build, or `unknown`.
    pub revision: String,
}
