//! Clause 5, scale (task EDGE): a filter past `plan.scale_bits` bits, filled and measured.
//!
//! STUB until task EDGE's file replaces it: the signature is the one `run_with` calls.

use std::sync::Arc;

use super::Plan;
use crate::candidate::Candidate;
use crate::verdict::{Clause, Outcome, RatePoint, Verdict};

/// Not built yet: n/a.
pub(crate) fn check(candidate: &Arc<dyn Candidate>, plan: &Plan) -> (Verdict, Vec<RatePoint>) {
    let _ = candidate;
    (
        super::verdict(
            plan,
            Clause::Scale,
            Outcome::NotApplicable,
            "not built yet".into(),
            Vec::new(),
        ),
        Vec::new(),
    )
}
