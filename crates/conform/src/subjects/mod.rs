//! The Rust candidates bloomlab runs in process: third-party crates, each pinned in the workspace
//! (`rust/<crate>[/<type>]`), and bloomlab's own flagships and textbook ports (`bloomlab/<variant>`);
//! and the external subjects bloomlab knows how to start ([`external`]).

use std::sync::Arc;

use crate::candidate::Candidate;

pub mod external;
pub mod own;
pub mod third_party;

/// Every in-process candidate, in report order: the third-party crates, then bloomlab's own.
pub fn all() -> Vec<Arc<dyn Candidate>> {
    let mut v: Vec<Arc<dyn Candidate>> = Vec::new();
    v.extend(third_party::all());
    v.extend(own::all());
    v
}

/// The in-process candidate named `name`; the error lists the known names.
pub fn by_name(name: &str) -> Result<Arc<dyn Candidate>, String> {
    let all = all();
    let names: Vec<String> = all.iter().map(|c| c.about().name).collect();
    all.into_iter()
        .find(|c| c.about().name == name)
        .ok_or_else(|| format!("unknown subject {name:?}; known: {}", names.join(", ")))
}
