//! The measurement harness: key sets, trials, binomial intervals, the sweep and the gate.

pub mod hypothesis;
pub mod row;
pub mod stats;

pub use row::SweepRow;
