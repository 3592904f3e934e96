//! The null adapter (`null`): keeps nothing, answers "absent" to every query after the key list
//! was read. What bloomlab measures against it is the protocol's own cost per key.
//!
//! Exit status: 0 after CLOSE or at the end of its input, 2 on a broken request frame or a failed
//! read or write (the reason on stderr).

use std::process::ExitCode;

use bloomlab_conform::process::serve;
use bloomlab_conform::{About, Candidate, CandidateError, Instance, KeyBatch};

struct Null;

impl Candidate for Null {
    fn about(&self) -> About {
        About::rust("null", env!("CARGO_PKG_VERSION"))
    }

    fn build(&self, _n: u64, _p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        Ok(Box::new(Null))
    }
}

impl Instance for Null {
    fn insert(&mut self, _keys: &KeyBatch) -> Result<(), CandidateError> {
        Ok(())
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        out.clear();
        out.resize(keys.len(), false);
        Ok(())
    }
}

fn main() -> ExitCode {
    match serve(&Null) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conform-null-adapter: {e}");
            ExitCode::from(2)
        }
    }
}
