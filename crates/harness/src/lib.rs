//! The measurement harness: key sets, trials, binomial intervals, the sweep and the gate; and the
//! schema the criterion bench shares with `bench-table` ([`mod@bench`]).

pub mod bench;
pub mod clock;
pub mod error;
pub mod gate;
pub mod group_keys;
pub mod hypothesis;
pub mod keys;
pub mod limits;
pub mod memory;
pub mod peer;
pub mod preflight;
pub mod roundtrip;
pub mod row;
pub mod scale;
pub mod sketch;
pub mod sketch_bench;
pub mod sketch_gate;
pub mod stats;
pub mod sweep;
pub mod timing;
pub mod trial;
pub mod workload;

pub use error::HarnessError;
pub use keys::{KeySet, KeySetKind};
pub use row::{SweepRow, Workload};
pub use sweep::{Grid, Plan, Progress, SweepConfig};
pub use trial::{Sampling, TrialSpec};
