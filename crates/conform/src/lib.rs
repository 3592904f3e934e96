//! A conformance suite for approximate-membership filters bloomlab does not ship.
//!
//! A filter joins in one of two ways:
//! - **in Rust, in process**: implement [`Candidate`] (build for (n, p)) and [`Instance`] (insert and
//!   query batches of byte keys; optionally stats, serialization, concurrent inserts), or wrap a
//!   filter's own insert/contains in [`PerKey`]; then [`run`] the suite from a `#[test]` with
//!   bloomlab as a dev-dependency;
//! - **in any language**: speak the [`process`] protocol on stdin/stdout; bloomlab starts the
//!   command and drives it ([`process::ProcessCandidate`]).
//!
//! The suite ([`suite`]) answers eight clauses, each with a [`Verdict`]: holds, broken, not
//! applicable or undecided, with the figure behind it and the command that reproduces it.

#![warn(missing_docs)]

pub mod candidate;
pub mod keys;
pub mod process;
pub mod subjects;
pub mod suite;
pub mod verdict;

pub use candidate::{
    About, Candidate, CandidateError, Capabilities, Declared, Instance, KeyBatch, PerKey, Stats,
};
pub use suite::{Plan, ScaleMethod, run};
pub use verdict::{Clause, Conformance, Outcome, Verdict};
