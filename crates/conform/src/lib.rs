//! A conformance suite for approximate-membership filters bloomlab does not ship.
//!
//! A filter joins in one of two ways:
//! - **in Rust, in process**: implement [`Candidate`] (build for (n, p)) and [`Instance`] (insert and
//!   query batches of byte keys; optionally stats, serialization, concurrent inserts), or wrap a
//!   filter's own insert/contains in [`PerKey`]; then [`run`] the suite from a `#[test]` with
//!   this crate as a dev-dependency (see below; the clauses run in a child re-running that test, so
//!   a filter that aborts, overflows its stack or hangs fails the test with a broken clause naming
//!   the signal, instead of killing the test binary);
//! - **in any language**: speak the [`process`] protocol on stdin/stdout; bloomlab starts the
//!   command and drives it ([`process::ProcessCandidate`]).
//!
//! The suite ([`suite`]) answers nine clauses, each with a [`Verdict`]: holds, broken, not
//! applicable or undecided, with the figure behind it and the command that reproduces it. Every
//! shipped plan also **hunts** ([`suite::hunt`]): it checks the promises at some 200 (n, p) points
//! besides the promised one (every n from 1 to 64, a dense sweep of n at rates from 0.5 to 1e-6,
//! the n of power-of-two bit counts, seeded random points) and names the smallest (n, p) that
//! breaks a clause.
//!
//! # In a filter's own tests
//!
//! ```toml
//! [dev-dependencies]
//! bloomlab-conform = "0.1"
//! # or, from a checkout of bloomlab until it is published:
//! # bloomlab-conform = { path = "../bloomlab/crates/conform" }
//! ```
//!
//! ```text
//! #[test]
//! fn conforms() {
//!     // `MyFilter` implements `Candidate` (see `examples/author.rs` for a whole adapter).
//!     bloomlab_conform::run(std::sync::Arc::new(MyFilter), &bloomlab_conform::Plan::quick())
//!         .assert_conforms();
//! }
//! ```
//!
//! The crate is kept light for that: its whole dependency tree is serde, serde_json, thiserror,
//! libc and bloomlab-theory (the rate theory and exact binomial statistics, no dependencies of its
//! own), 15 crates in all, with no filter library among them; bloomlab's own filters and the
//! third-party crates it checks in process are in `bloomlab-conform-rust`.

#![warn(missing_docs)]

// Lets the unit tests compile bloomlab-conform-rust's `own` module, which names this crate by its
// name (see `subjects`).
#[cfg(test)]
extern crate self as bloomlab_conform;

pub mod candidate;
pub mod keys;
pub mod process;
pub mod subjects;
pub mod suite;
pub mod verdict;

pub use candidate::{
    About, Candidate, CandidateError, Capabilities, Declared, Instance, KeyBatch, PerKey, Stats,
    Supports,
};
pub use suite::{Plan, ScaleMethod, run};
pub use verdict::{Clause, Conformance, Outcome, Verdict};
