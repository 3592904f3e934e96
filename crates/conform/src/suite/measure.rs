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

/// Runs `f`, turning a panic into [`CandidateError::Panicked`] naming `subject`, and a
/// [`CandidateError::Protocol`] without a subject (as [`count_positive`] makes one) into one
/// naming it: the suite never panics because the candidate did.
pub fn guard<T>(
    subject: &str,
    f: impl FnOnce() -> Result<T, CandidateError>,
) -> Result<T, CandidateError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Err(CandidateError::Protocol {
            subject: s,
            operation,
            detail,
        })) if s.is_empty() => Err(CandidateError::Protocol {
            subject: subject.to_owned(),
            operation,
            detail,
        }),
        Ok(r) => r,
        Err(payload) => Err(CandidateError::Panicked {
            subject: subject.to_owned(),
            message: panic_message(payload.as_ref()),
        }),
    }
}

/// The text of a panic payload (`&str` or `String`; anything else is named as such).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a panic payload that is not text)".into())
}

/// Whether an error is a crash (the candidate panicked, exited, hung or broke the protocol),
/// which breaks the clause it happened in, rather than a clean answer (refused, unsupported)
/// or a failure to reach it at all (I/O), which are evidence.
pub fn is_crash(e: &CandidateError) -> bool {
    matches!(
        e,
        CandidateError::Panicked { .. }
            | CandidateError::Exited { .. }
            | CandidateError::Timeout { .. }
            | CandidateError::Protocol { .. }
    )
}

/// One filter built, filled and queried: what the rate clauses measure.
#[derive(Debug, Clone)]
pub struct Filled {
    /// Members inserted (indices `0..inserted`).
    pub inserted: u64,
    /// Members that answered "absent", and the first such index, when members were queried.
    pub missed: Option<(u64, Option<u64>)>,
    /// Non-members queried (indices `inserted..inserted + queries`).
    pub queries: u64,
    /// Those answering "maybe present".
    pub false_positives: u64,
    /// What the filter reported about itself after the queries (an error here is not a failure
    /// of the measurement).
    pub stats: Result<crate::candidate::Stats, CandidateError>,
}

/// Builds `candidate` for (`design_n`, `plan.p`), inserts members `0..inserted` of `family`,
/// queries them back when `check_members`, then queries `queries` non-members, `plan.batch` keys
/// at a time under `plan.seed`; every call guarded ([`guard`]).
pub fn fill_and_query(
    candidate: &dyn crate::candidate::Candidate,
    plan: &super::Plan,
    family: Family,
    design_n: u64,
    (inserted, queries): (u64, u64),
    check_members: bool,
) -> Result<Filled, CandidateError> {
    let subject = candidate.about().name;
    let (p, seed, batch) = (plan.p, plan.seed, plan.batch);
    let mut buf = Buffers::default();
    let mut instance = guard(&subject, || candidate.build(design_n, p))?;
    let inst = instance.as_mut();
    guard(&subject, || {
        insert(inst, family, seed, 0..inserted, batch, &mut buf)
    })?;
    let missed = if check_members {
        let (found, first) = guard(&subject, || {
            count_positive(inst, family, seed, 0..inserted, batch, &mut buf)
        })?;
        Some((inserted - found, first))
    } else {
        None
    };
    let (false_positives, _) = guard(&subject, || {
        count_positive(
            inst,
            family,
            seed,
            inserted..inserted + queries,
            batch,
            &mut buf,
        )
    })?;
    let stats = guard(&subject, || inst.stats());
    Ok(Filled {
        inserted,
        missed,
        queries,
        false_positives,
        stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_turns_a_panic_into_an_error_naming_the_subject() {
        let e = guard::<()>("planted", || panic!("at key {}", 7)).unwrap_err();
        assert_eq!(
            e,
            CandidateError::Panicked {
                subject: "planted".into(),
                message: "at key 7".into()
            }
        );
        assert!(is_crash(&e));
        let e = guard::<()>("planted", || {
            Err(CandidateError::Protocol {
                subject: String::new(),
                operation: "query".into(),
                detail: "3 answers to 4 keys".into(),
            })
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "planted broke the conformance protocol during query: 3 answers to 4 keys"
        );
        let refused = CandidateError::Refused {
            subject: "planted".into(),
            message: "p = 0".into(),
        };
        assert!(!is_crash(&refused));
        assert_eq!(guard("planted", || Ok(5)), Ok(5));
    }
}
