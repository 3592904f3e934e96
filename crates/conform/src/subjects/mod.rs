//! The candidates bloomlab runs in process: its own flagships and textbook ports
//! (`bloomlab/<variant>`); and the external subjects bloomlab knows how to start ([`external`]).
//! The third-party Rust crates (`rust/<crate>[/<type>]`) are in `bloomlab-conform-rust`, whose
//! `catalogue` lists them before these.

use std::sync::Arc;

use crate::candidate::Candidate;

pub mod external;
pub mod own;

/// bloomlab's own in-process candidates, in report order.
pub fn all() -> Vec<Arc<dyn Candidate>> {
    own::all()
}

/// The candidate named `name` among `candidates`; the error lists the known names.
pub fn find(candidates: Vec<Arc<dyn Candidate>>, name: &str) -> Result<Arc<dyn Candidate>, String> {
    let names: Vec<String> = candidates.iter().map(|c| c.about().name).collect();
    candidates
        .into_iter()
        .find(|c| c.about().name == name)
        .ok_or_else(|| format!("unknown subject {name:?}; known: {}", names.join(", ")))
}

/// bloomlab's own candidate named `name`; the error lists the known names.
pub fn by_name(name: &str) -> Result<Arc<dyn Candidate>, String> {
    find(all(), name)
}
