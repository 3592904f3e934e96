//! What a library author writes to hold their filter to bloomlab's conformance suite: here for
//! `fastbloom::BloomFilter`. Run with `cargo run --release -p bloomlab-conform --example author`.
//!
//! A [`Candidate`] says who the filter is and builds one for (n, p); [`PerKey`] wraps its own
//! insert and contains, so no batching code is needed. [`run`] answers every clause of
//! [`Plan::quick`]; [`Conformance`]'s `Display` is the readable verdict, and `assert_conforms()`
//! panics with it when a clause is broken (what a `#[test]` in the author's crate calls).
//! Exit code: 0 when no clause is broken, 1 when one is.
//!
//! A `main` has no test to re-run in a child, so here [`run`] runs in process (every verdict's
//! evidence says "not isolated"): a filter that aborts would end this program. In a `#[test]`
//! it is isolated; `tests/isolate.rs` shows that test with nothing but this crate and std.
//!
//! [`Conformance`]: bloomlab_conform::Conformance

use std::process::ExitCode;
use std::sync::Arc;

use bloomlab_conform::{
    About, Candidate, CandidateError, Capabilities, Instance, PerKey, Plan, run,
};
use fastbloom::BloomFilter;

/// fastbloom's classic filter, sized by its own builder for (n, p).
struct FastBloom;

impl Candidate for FastBloom {
    fn about(&self) -> About {
        About::rust("example/fastbloom", "0.17").with(Capabilities {
            stats: true,
            large: true,
            ..Capabilities::default()
        })
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let filter = BloomFilter::with_false_pos(p).expected_items(n as usize);
        let instance = PerKey::new(
            filter,
            |f, key| {
                f.insert(key);
            },
            |f, key| f.contains(key),
        )
        .memory(|f| f.num_bits() as u64 / 8);
        Ok(Box::new(instance))
    }
}

/// Prints the readable verdict; exits 1 when a clause is broken (a `#[test]` would call
/// `conformance.assert_conforms()` instead, as `crates/conform-rust/tests/author.rs` does).
///
/// fastbloom 0.17 holds every clause it is measured on except bad input: `with_false_pos`
/// asserts `fp > 0.0`, so p = 0, p < 0 and p = NaN panic (its docs name only p = 0), and this
/// example exits 1 with that verdict.
fn main() -> ExitCode {
    let conformance = run(Arc::new(FastBloom), &Plan::quick());
    println!("{conformance}");
    if conformance.broken().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
