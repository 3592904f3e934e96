//! The Rust reference adapter (`rust/exact-set`): an exact set of byte keys, so every member is
//! present and no non-member is; serializes as a key list and reports the bytes it holds.
//!
//! Exit status: 0 after CLOSE or at the end of its input, 2 on a broken request frame or a failed
//! read or write (the reason on stderr).

use std::collections::HashSet;
use std::process::ExitCode;

use bloomlab_conform::process::serve;
use bloomlab_conform::{About, Candidate, CandidateError, Capabilities, Instance, KeyBatch, Stats};

struct ExactCandidate;

#[derive(Default)]
struct Exact(HashSet<Vec<u8>>);

impl Candidate for ExactCandidate {
    fn about(&self) -> About {
        About::rust("rust/exact-set", env!("CARGO_PKG_VERSION")).with(Capabilities {
            serialize: true,
            stats: true,
            ..Capabilities::default()
        })
    }

    /// Refuses n = 0 and p outside (0, 1) (NaN too), naming the value and the range, as the
    /// bad-input clause expects of a filter (an exact set could keep p = 0; a filter copied from
    /// this cannot). Past that, an exact set holds any number of keys at rate 0.
    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let refuse = |message: String| {
            Err(CandidateError::Refused {
                subject: self.about().name,
                message,
            })
        };
        if n == 0 {
            return refuse(format!("n = {n} is invalid: it must be at least 1"));
        }
        if !(p > 0.0 && p < 1.0) {
            return refuse(format!(
                "p = {p} is invalid: it must be in the open interval (0, 1)"
            ));
        }
        Ok(Box::new(Exact::default()))
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
        let mut set = Exact::default();
        let mut rest = bytes;
        while let Some((len, tail)) = rest.split_first_chunk::<4>() {
            let len = u32::from_le_bytes(*len) as usize;
            let key = tail.get(..len).ok_or_else(|| CandidateError::Refused {
                subject: self.about().name,
                message: format!(
                    "serialized set cut short: a key of {len} bytes, {} left",
                    tail.len()
                ),
            })?;
            set.0.insert(key.to_vec());
            rest = &tail[len..];
        }
        if !rest.is_empty() {
            return Err(CandidateError::Refused {
                subject: self.about().name,
                message: format!(
                    "{} stray bytes at the end of the serialized set",
                    rest.len()
                ),
            });
        }
        Ok(Box::new(set))
    }
}

impl Instance for Exact {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        self.0.extend(keys.iter().map(<[u8]>::to_vec));
        Ok(())
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        out.clear();
        out.extend(keys.iter().map(|k| self.0.contains(k)));
        Ok(())
    }

    fn stats(&mut self) -> Result<Stats, CandidateError> {
        Ok(Stats {
            memory_bytes: Some(self.0.iter().map(|k| k.len() as u64).sum()),
            layout: None,
        })
    }

    /// Each key as a `u32` length and its bytes, in sorted order (the same set, the same bytes).
    fn serialize(&mut self) -> Result<Option<Vec<u8>>, CandidateError> {
        let mut keys: Vec<&Vec<u8>> = self.0.iter().collect();
        keys.sort();
        let mut out = Vec::new();
        for k in keys {
            out.extend_from_slice(&(k.len() as u32).to_le_bytes());
            out.extend_from_slice(k);
        }
        Ok(Some(out))
    }
}

fn main() -> ExitCode {
    match serve(&ExactCandidate) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conform-exact-adapter: {e}");
            ExitCode::from(2)
        }
    }
}
