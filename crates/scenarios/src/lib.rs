//! The classic Bloom filter deployments, run against a real database of record and measured:
//!
//! - [`dedup`]: de-duplicating ingestion. Articles arrive (50,000 a day, 70% duplicates, keyed by
//!   the SHA-256 of title and body); the filter is asked first and only its positives are
//!   confirmed in the database. Compared with asking the database for every article.
//! - [`penetration`]: a filter of the valid ids in front of a cache and the database, against a
//!   request mix in which a share of requests asks for ids that never existed.
//! - [`swap`]: readers query a filter on several threads while a writer changes the database and
//!   a background job rebuilds the filter from it and swaps the new generation in (`arc-swap`).
//!
//! Each scenario creates its own table (`bloomlab_*`; an existing table of that name with other
//! columns is refused, [`db::Db::ensure_table`]), starts from an empty table (a rerun starts
//! clean), writes in transactions (an interrupted run leaves whole batches: the database stays
//! consistent), and checks its end state with SQL: a loss, a row stored twice or a false negative
//! is an error ([`ScenarioError::Verification`]), never a footnote.
//!
//! The database is SQLite (embedded, the default: a temp file) or PostgreSQL, chosen by URL
//! ([`db::DbUrl`]); `scripts/postgres-local.sh` starts a throwaway PostgreSQL cluster.
//!
//! This crate measures; it does not render. Each `run` returns a typed outcome (settings, counts,
//! latencies, verdicts) whose schema lives in [`bloomlab_report::scenario`], where the Markdown,
//! the pictures and the staged writing of a report directory are; each module's `write_report`
//! hands its outcome over to that crate.

#![warn(missing_docs)]

pub mod db;
pub mod dedup;
pub mod error;
pub mod latency;
pub mod penetration;
pub mod swap;

pub use error::{Result, ScenarioError};

/// Progress of a long phase: (phase label, done, total). The CLI draws it as a progress bar.
pub type Progress<'a> = &'a mut dyn FnMut(&str, u64, u64);

/// Whether `e` is the database failing (a statement or the connection), as opposed to bad input
/// or a verification failure: such a failure after something was measured interrupts a run, whose
/// measured part is then reported as interrupted.
pub(crate) fn is_database_failure(e: &ScenarioError) -> bool {
    matches!(
        e,
        ScenarioError::Query { .. } | ScenarioError::Connect { .. }
    )
}

/// Checks a target false-positive rate: finite and strictly between 0 and 1.
pub fn check_p(p: f64) -> Result<()> {
    if p.is_finite() && p > 0.0 && p < 1.0 {
        Ok(())
    } else {
        Err(ScenarioError::BadInput(format!(
            "--p {p} is invalid: the target false-positive rate must be in the open interval (0, 1)"
        )))
    }
}

/// Checks a count flag `what` against `min..=max`.
pub fn check_count(what: &str, v: u64, min: u64, max: u64) -> Result<()> {
    if (min..=max).contains(&v) {
        Ok(())
    } else {
        Err(ScenarioError::BadInput(format!(
            "{what} {v} is invalid: it must be from {min} to {max}"
        )))
    }
}

/// Checks a share `what` in the open interval (0, 1).
pub fn check_share(what: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 && v < 1.0 {
        Ok(())
    } else {
        Err(ScenarioError::BadInput(format!(
            "{what} {v} is invalid: it must be in the open interval (0, 1)"
        )))
    }
}
