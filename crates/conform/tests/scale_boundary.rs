//! The quick plan's scale clause (the boundary test, `ScaleMethod::Boundary`) against a filter
//! whose indices never pass a 32-bit cap, and against its correct twin and a bloomlab flagship.
//!
//! The candidates here are one classic Bloom filter with a `u64` bit count, written for this test,
//! in three index reductions: the full `h % m` (correct), `(h as u32) % m` (indices below 2^32)
//! and `h % min(m, 2^31)` (indices below 2^31). Each claims `large`.
//!
//! Every verdict comes from the suite's decision at `Plan::quick()`'s alpha = 1e-4 (the module
//! docs of `suite::scale` derive it): a filter capped at 2^32 is called broken with probability
//! 1 - 10^-18 or more, the correct twin is called broken with at most 1e-4 (and is undecided
//! with about 1e-10); seeds are fixed, so each run here gives the same counts. Memory: each
//! boundary test builds one filter of 2^33 x 1.05 bits (1.05 GiB) and then one of half that, so
//! these tests peak at about 1.05 GiB each (a few GiB when the test threads run them together).
//! Run them in release: `cargo test --release --workspace --test scale_boundary`.

use std::sync::Arc;

use bloomlab_conform::{
    About, Candidate, CandidateError, Capabilities, Clause, Conformance, Declared, Instance,
    KeyBatch, Outcome, Plan, ScaleMethod, Stats, run,
};

/// How a [`Classic`] filter reduces a 64-bit hash to a bit index.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Reduce {
    /// `h % m`: every bit reachable.
    Full,
    /// `(h as u32) % m`: the textbook 32-bit truncation; no index at or past 2^32.
    TruncU32,
    /// `h % min(m, 2^31)`: an `int`-sized cap.
    Cap31,
}

/// The largest filter the candidate builds: 2^37 bits (16 GiB), refused beyond with a message.
const MAX_BITS: u64 = 1 << 37;

/// A classic Bloom filter: `m = ceil(-n ln p / ln(2)^2)` bits in `u64` words and
/// `k = max(1, round(m / n ln 2))` probes by double hashing, its bit count a `u64`.
struct Classic {
    reduce: Reduce,
}

impl Candidate for Classic {
    fn about(&self) -> About {
        About::rust(format!("classic-{:?}", self.reduce), "0").with(Capabilities {
            stats: true,
            large: true,
            ..Capabilities::default()
        })
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let refuse = |message: String| CandidateError::Refused {
            subject: self.about().name,
            message,
        };
        if n == 0 {
            return Err(refuse("n = 0: allowed n >= 1".into()));
        }
        if !(p > 0.0 && p < 1.0) {
            return Err(refuse(format!("p = {p}: allowed the open interval (0, 1)")));
        }
        let ln2 = std::f64::consts::LN_2;
        let m = (-(n as f64) * p.ln() / (ln2 * ln2)).ceil().max(1.0);
        if m > MAX_BITS as f64 {
            return Err(refuse(format!(
                "n = {n} at p = {p} needs {m} bits: allowed at most 2^37"
            )));
        }
        let bits = m as u64;
        let hashes = ((bits as f64 / n as f64 * ln2).round() as u32).clamp(1, 64);
        Ok(Box::new(Filter {
            words: vec![0; bits.div_ceil(64) as usize],
            bits,
            hashes,
            reduce: self.reduce,
        }))
    }
}

struct Filter {
    words: Vec<u64>,
    bits: u64,
    hashes: u32,
    reduce: Reduce,
}

/// splitmix64's finalizer: a bijective 64-bit mix.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Two 64-bit hashes of `key`: its 8-byte chunks chained through [`mix`], with its length.
fn hash(key: &[u8]) -> (u64, u64) {
    let mut h = 0x9e37_79b9_7f4a_7c15 ^ key.len() as u64;
    for chunk in key.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        h = mix(h ^ u64::from_le_bytes(w));
    }
    (mix(h), mix(h ^ 0x6a09_e667_f3bc_c909) | 1)
}

impl Filter {
    /// The `i`-th probe's bit index.
    fn index(&self, (h1, h2): (u64, u64), i: u32) -> u64 {
        let h = h1.wrapping_add(u64::from(i).wrapping_mul(h2));
        match self.reduce {
            Reduce::Full => h % self.bits,
            Reduce::TruncU32 => u64::from(h as u32) % self.bits,
            Reduce::Cap31 => h % self.bits.min(1 << 31),
        }
    }
}

impl Instance for Filter {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        for key in keys.iter() {
            let h = hash(key);
            for i in 0..self.hashes {
                let at = self.index(h, i);
                self.words[(at / 64) as usize] |= 1 << (at % 64);
            }
        }
        Ok(())
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        out.clear();
        out.extend(keys.iter().map(|key| {
            let h = hash(key);
            (0..self.hashes).all(|i| {
                let at = self.index(h, i);
                self.words[(at / 64) as usize] & (1 << (at % 64)) != 0
            })
        }));
        Ok(())
    }

    fn stats(&mut self) -> Result<Stats, CandidateError> {
        Ok(Stats {
            memory_bytes: Some(self.words.len() as u64 * 8),
            layout: Some(Declared::Classic {
                bits: self.bits,
                hashes: self.hashes,
            }),
        })
    }
}

fn scale_only(candidate: Arc<dyn Candidate>) -> Conformance {
    let plan = Plan {
        clauses: vec![Clause::Scale],
        ..Plan::quick()
    };
    let c = run(candidate, &plan);
    eprintln!("{c}");
    c
}

fn scale_verdict(c: &Conformance) -> &bloomlab_conform::Verdict {
    c.verdicts
        .iter()
        .find(|v| v.clause == Clause::Scale)
        .expect("a scale verdict")
}

#[test]
fn the_quick_plan_runs_the_boundary_test_and_the_full_plan_the_fill() {
    let (quick, full) = (Plan::quick(), Plan::full());
    assert!(quick.clauses.contains(&Clause::Scale));
    assert_eq!(quick.scale_bits, Some(1 << 32));
    assert_eq!(quick.scale_method, ScaleMethod::Boundary);
    assert_eq!(full.scale_bits, Some(1 << 32));
    assert_eq!(full.scale_method, ScaleMethod::Fill);
}

/// The whole quick plan: the 32-bit truncation shows on the scale clause alone (every other
/// clause runs at n = 10,000, far below 2^32 bits, where the truncation changes nothing).
#[test]
fn a_filter_whose_indices_stop_at_2_pow_32_breaks_only_the_quick_plans_scale_clause() {
    let c = run(
        Arc::new(Classic {
            reduce: Reduce::TruncU32,
        }),
        &Plan::quick(),
    );
    eprintln!("{c}");
    assert_eq!(c.broken(), vec![Clause::Scale], "{c}");
    let v = scale_verdict(&c);
    assert!(v.figure.contains("same load per bit"), "{v:?}");
    assert!(v.evidence.last().unwrap().contains("32-bit index"), "{v:?}");
    // Both filters were measured and declared past 2^32 bits: the cap, not the size, broke it.
    let points: Vec<_> = c
        .points
        .iter()
        .filter(|p| p.clause == Clause::Scale)
        .collect();
    assert_eq!(points.len(), 2, "{c}");
    assert_eq!(points[0].design_n, 2 * points[1].design_n);
    assert!(
        v.evidence
            .iter()
            .any(|e| e.contains("large: declares Classic"))
    );
}

#[test]
fn its_correct_twin_passes_the_whole_quick_plan() {
    let c = run(
        Arc::new(Classic {
            reduce: Reduce::Full,
        }),
        &Plan::quick(),
    );
    eprintln!("{c}");
    assert!(c.broken().is_empty(), "{c}");
    let v = scale_verdict(&c);
    assert_eq!(v.outcome, Outcome::Holds, "{v:?}");
    assert!(v.figure.contains("scales past the boundary"), "{v:?}");
}

#[test]
fn a_filter_capped_at_2_pow_31_is_broken_too() {
    let c = scale_only(Arc::new(Classic {
        reduce: Reduce::Cap31,
    }));
    assert_eq!(c.broken(), vec![Clause::Scale], "{c}");
}
