//! The loops every clause shares: insert a family's keys, count positive answers, in batches.

use crate::candidate::{CandidateError, Instance, KeyBatch};
use crate::keys::Family;

/// Reused buffers for batched calls: no allocation per batch once grown.
#[derive(Default)]
pub struct Buffers {
    /// The keys of the current batch.
    pub keys: KeyBatch,
    /// The answers to the current batch.
    pub answers: Vec<bool>,
}

/// Inserts keys `range` of `family` under `seed`, `batch` at a time.
pub fn insert(
    instance: &mut dyn Instance,
    family: Family,
    seed: u64,
    range: std::ops::Range<u64>,
    batch: usize,
    buf: &mut Buffers,
) -> Result<(), CandidateError> {
    let mut at = range.start;
    while at < range.end {
        let len = (range.end - at).min(batch as u64) as usize;
        family.fill(seed, at, len, &mut buf.keys);
        instance.insert(&buf.keys)?;
        at += len as u64;
    }
    Ok(())
}

/// Queries keys `range` of `family` under `seed`, `batch` at a time: how many answered "maybe
/// present", and the index of the first that answered "absent" (for members: a false negative).
pub fn count_positive(
    instance: &mut dyn Instance,
    family: Family,
    seed: u64,
    range: std::ops::Range<u64>,
    batch: usize,
    buf: &mut Buffers,
) -> Result<(u64, Option<u64>), CandidateError> {
    let mut at = range.start;
    let mut positive = 0;
    let mut first_absent = None;
    while at < range.end {
        let len = (range.end - at).min(batch as u64) as usize;
        family.fill(seed, at, len, &mut buf.keys);
        instance.query(&buf.keys, &mut buf.answers)?;
        if buf.answers.len() != len {
            return Err(CandidateError::Protocol {
                subject: String::new(),
                operation: "query".into(),
                detail: format!("{} answers to {len} keys", buf.answers.len()),
            });
        }
        positive += buf.answers.iter().filter(|&&a| a).count() as u64;
        if first_absent.is_none()
            && let Some(i) = buf.answers.iter().position(|&a| !a)
        {
            first_absent = Some(at + i as u64);
        }
        at += len as u64;
    }
    Ok((positive, first_absent))
}
