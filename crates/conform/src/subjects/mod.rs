//! The external subjects bloomlab knows how to start ([`external`]), and the lookup of a subject by
//! name. The in-process ones, bloomlab's own filters (`bloomlab/<variant>`) and the third-party
//! Rust crates (`rust/<crate>[/<type>]`), are in `bloomlab-conform-rust`, so that this crate
//! depends on no filter library.

use std::sync::Arc;

use crate::candidate::Candidate;

pub mod external;

// The suite's unit tests hold bloomlab's own filters to its clauses too: under test this crate
// compiles their module from bloomlab-conform-rust (which names this crate `bloomlab_conform`, see
// lib.rs), against bloomlab-filters as a dev-dependency. Outside tests it is not part of the crate.
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../../conform-rust/src/own.rs"]
pub(crate) mod own;

/// The candidate named `name` among `candidates`; the error lists the known names.
pub fn find(candidates: Vec<Arc<dyn Candidate>>, name: &str) -> Result<Arc<dyn Candidate>, String> {
    let names: Vec<String> = candidates.iter().map(|c| c.about().name).collect();
    candidates
        .into_iter()
        .find(|c| c.about().name == name)
        .ok_or_else(|| format!("unknown subject {name:?}; known: {}", names.join(", ")))
}
