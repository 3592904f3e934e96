//! The measurement harness, by concern:
//! - [`subject`]: the catalogue of what is measured (registered variants, Redis twins, adapters);
//! - [`bloom`]: the Bloom filter sweep (plan, trials, churn and grow workloads, timing,
//!   preflight checks) and the FPR gate;
//! - [`sketch`]: the HyperLogLog and Count-Min sweep, its bench log and its gate;
//! - [`scale`]: the 10^10-key run's settings and rows (its engine is the `bloomlab-scale` crate);
//! - [`schema`]: files shared with other crates (the criterion bench's log, Redis round trips);
//! - [`keys`] (key sets, and the keys a sweep group shares), [`stats`] (intervals and exact
//!   tests), [`limits`] (input bounds), [`clock`] (per-thread CPU time), [`memory`] (the
//!   counting allocator) and [`error`].
//!
//! Imports flow one way between these files (no cycle; `scripts/code-figures.py` counts them).

#![warn(missing_docs)]

pub mod bloom;
pub mod clock;
pub mod error;
pub mod keys;
pub mod limits;
pub mod memory;
pub mod scale;
pub mod schema;
pub mod sketch;
// Binomial intervals and tests live in bloomlab-theory, which the conformance suite shares.
pub use bloomlab_theory::stats;
pub mod subject;

pub use bloom::row::{SweepRow, Workload};
pub use bloom::sweep::{Grid, Plan, Progress, SweepConfig};
pub use bloom::trial::{Sampling, TrialSpec};
pub use error::HarnessError;
pub use keys::{KeySet, KeySetKind};
pub use subject::{Selection, Subject};
