//! The corpus: deliberately defective candidates, one per defect class that published filter
//! libraries have shipped, each caught by the **quick plan** (what an author's `#[test]` runs) on
//! the right clause with a minimized (n, p), while its correct twin (the same filter without the
//! defect) breaks no clause.
//!
//! The filter underneath is a classic Bloom filter written here (u64 bit count, k probes each from
//! its own finalized hash of one FNV-1a digest) with one switch per defect:
//! - indices that correlate at even bit counts (the step derived from the start index, 6 bits of
//!   it, instead of from a second hash): only 64 m probe patterns, so a non-member matches a
//!   member's pattern with probability about n / (64 m): +16% at p = 1%, 9x at p = 1e-4, on even m
//!   only (the quick plan's own n = 10,000 at 1% has an odd m: 95,851 bits);
//! - serialization that drops the last `m % 8` bits (it writes `m / 8` whole bytes);
//! - a panic for n < 8;
//! - a scalable filter whose stages do not tighten (each new stage at p: the rates add up).
//!   The hang at n = 0 is covered in `author.rs`; the abort on a huge allocation and the cap at
//!   2^32 bits have their own tests (`isolation.rs`, the scale clause's).
//!
//! One more pair is not a defect class but the false alarm the hunt's confirmation exists for
//! ([`Swinging`]): a correct filter whose rate swings from build to build (as one of few blocks
//! does) must not be called broken because one build was unlucky, while a filter at twice its
//! promise on every build must be.
//!
//! False alarms: each twin asserts "no clause broken" on the quick plan, whose clauses each call a
//! correct filter broken with probability at most alpha = 1e-4 (the hunt's rate findings, confirmed
//! on fresh builds, share one more alpha), so each twin's assertion fails by chance with
//! probability below 1e-3; the seeds are fixed, so a run is reproducible. The defects are caught deterministically
//! (a miss, a panic) or far beyond the bounds (the correlated filter's rate at p = 1e-4 is about
//! 9 times the promise, with 200,000 queries a point).

use std::sync::Arc;

use bloomlab_conform::suite::hunt;
use bloomlab_conform::{
    About, Candidate, CandidateError, Capabilities, Clause, Conformance, Declared, Instance,
    KeyBatch, Outcome, Plan, Stats, run,
};

/// What is wrong with a [`Toy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Defect {
    None,
    CorrelatedAtEvenM,
    LosesTailBits,
    PanicsBelow8,
}

fn fnv(key: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &b in key {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// MurmurHash3's 64-bit finalizer: FNV-1a alone leaves short keys' high bits weak.
fn fmix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// A classic Bloom filter of `m` bits and `k` probes, with `defect`.
#[derive(Clone)]
struct Bits {
    words: Vec<u64>,
    m: u64,
    k: u32,
    defect: Defect,
}

impl Bits {
    fn sized(n: u64, p: f64, defect: Defect) -> Result<Bits, String> {
        if n == 0 || !(p > 0.0 && p < 1.0) || n > 1 << 32 || p < 1e-12 {
            return Err(format!(
                "n = {n}, p = {p}: allowed n in 1..=2^32 and p in [1e-12, 1)"
            ));
        }
        if defect == Defect::PanicsBelow8 && n < 8 {
            panic!("attempt to subtract with overflow (n = {n})");
        }
        let ln2 = std::f64::consts::LN_2;
        let m = ((n as f64) * -p.ln() / (ln2 * ln2)).ceil().max(1.0) as u64;
        let k = ((m as f64 / n as f64) * ln2).round().max(1.0) as u32;
        Ok(Bits {
            words: vec![0; m.div_ceil(64) as usize],
            m,
            k,
            defect,
        })
    }

    /// The k probe positions of `key`, to `f` (stopping at the first `false`).
    ///
    /// Each probe is its own finalized hash: plain double hashing (`a + i b mod m`) has a rate
    /// floor near 1 / m from its degenerate steps (b = 0, or b of small order mod m, put all k
    /// probes on a few bits), which the hunt's points at p = 1e-6 showed here as 50 times the
    /// promise; a correct twin must not have it.
    fn probes(&self, key: &[u8], mut f: impl FnMut(u64) -> bool) -> bool {
        let h = fnv(key);
        let m = self.m;
        if self.defect == Defect::CorrelatedAtEvenM && m.is_multiple_of(2) {
            // The "fast path" for even m: double hashing whose step comes from 6 bits of the start
            // instead of a second hash, so only 64 m probe patterns exist.
            let a = fmix(h) % m;
            let step = (2 * a + 1 + (fmix(h) >> 58)) % m;
            return (0..u64::from(self.k)).all(|i| f((a + i * step) % m));
        }
        (0..u64::from(self.k)).all(|i| f(fmix(h ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) % m))
    }

    fn insert(&mut self, key: &[u8]) {
        let mut words = std::mem::take(&mut self.words);
        self.probes(key, |i| {
            words[(i / 64) as usize] |= 1 << (i % 64);
            true
        });
        self.words = words;
    }

    fn contains(&self, key: &[u8]) -> bool {
        self.probes(key, |i| self.words[(i / 64) as usize] >> (i % 64) & 1 == 1)
    }

    /// `m` (u64 LE), `k` (u32 LE), then the bits, least significant first: `ceil(m / 8)` bytes,
    /// or `floor(m / 8)` for [`Defect::LosesTailBits`].
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.m.to_le_bytes());
        out.extend_from_slice(&self.k.to_le_bytes());
        let bytes = if self.defect == Defect::LosesTailBits {
            self.m / 8
        } else {
            self.m.div_ceil(8)
        };
        out.extend(
            self.words
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .take(bytes as usize),
        );
        out
    }

    fn from_bytes(bytes: &[u8], defect: Defect) -> Result<Bits, String> {
        if bytes.len() < 12 {
            return Err(format!("{} bytes: at least 12 expected", bytes.len()));
        }
        let m = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        let k = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        let body = &bytes[12..];
        if m == 0 || k == 0 || body.len() as u64 > m.div_ceil(8) {
            return Err(format!("m = {m}, k = {k}, {} bytes of bits", body.len()));
        }
        let mut words = vec![0u64; m.div_ceil(64) as usize];
        for (i, &b) in body.iter().enumerate() {
            words[i / 8] |= u64::from(b) << (8 * (i % 8));
        }
        Ok(Bits {
            words,
            m,
            k,
            defect,
        })
    }
}

struct Toy(Defect);

struct ToyInstance(Bits);

impl Instance for ToyInstance {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        keys.iter().for_each(|k| self.0.insert(k));
        Ok(())
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        out.clear();
        out.extend(keys.iter().map(|k| self.0.contains(k)));
        Ok(())
    }

    fn stats(&mut self) -> Result<Stats, CandidateError> {
        Ok(Stats {
            memory_bytes: Some(self.0.m.div_ceil(8)),
            layout: Some(Declared::Classic {
                bits: self.0.m,
                hashes: self.0.k,
            }),
        })
    }

    fn serialize(&mut self) -> Result<Option<Vec<u8>>, CandidateError> {
        Ok(Some(self.0.to_bytes()))
    }
}

fn refused(subject: &str, message: String) -> CandidateError {
    CandidateError::Refused {
        subject: subject.into(),
        message,
    }
}

impl Candidate for Toy {
    fn about(&self) -> About {
        About::rust(format!("corpus/{:?}", self.0), "test").with(Capabilities {
            serialize: true,
            stats: true,
            ..Capabilities::default()
        })
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let bits = Bits::sized(n, p, self.0).map_err(|e| refused(&self.about().name, e))?;
        Ok(Box::new(ToyInstance(bits)))
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
        let bits = Bits::from_bytes(bytes, self.0).map_err(|e| refused(&self.about().name, e))?;
        Ok(Box::new(ToyInstance(bits)))
    }
}

/// A scalable filter: stages of n, 2n, 4n, ... keys; a key goes into the newest stage, a query
/// asks every stage. `tighten` halves each new stage's rate from p / 2 (the rates sum to at most
/// p); without it every stage is built at p and the rates add up as it grows.
struct Scalable {
    tighten: bool,
}

struct ScalableInstance {
    stages: Vec<(Bits, u64)>,
    n: u64,
    p: f64,
    tighten: bool,
    held: u64,
}

impl ScalableInstance {
    fn stage_rate(&self, i: usize) -> f64 {
        if self.tighten {
            self.p / 2f64.powi(i as i32 + 1)
        } else {
            self.p
        }
    }
}

impl Instance for ScalableInstance {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        for k in keys.iter() {
            let (_, cap) = self.stages.last().expect("one stage from the start");
            if self.held == *cap {
                let i = self.stages.len();
                let cap = self.n << i;
                let bits = Bits::sized(cap, self.stage_rate(i), Defect::None)
                    .map_err(|e| refused("corpus/scalable", format!("stage {i}: {e}")))?;
                self.stages.push((bits, cap));
                self.held = 0;
            }
            self.stages.last_mut().expect("a stage").0.insert(k);
            self.held += 1;
        }
        Ok(())
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        out.clear();
        out.extend(
            keys.iter()
                .map(|k| self.stages.iter().any(|(s, _)| s.contains(k))),
        );
        Ok(())
    }
}

impl Candidate for Scalable {
    fn about(&self) -> About {
        let name = if self.tighten {
            "corpus/scalable-tightening"
        } else {
            "corpus/scalable-not-tightening"
        };
        About::rust(name, "test").with(Capabilities {
            growable: true,
            ..Capabilities::default()
        })
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let mut inst = ScalableInstance {
            stages: Vec::new(),
            n,
            p,
            tighten: self.tighten,
            held: 0,
        };
        let first = Bits::sized(n, inst.stage_rate(0), Defect::None)
            .map_err(|e| refused(&self.about().name, e))?;
        inst.stages.push((first, n));
        Ok(Box::new(inst))
    }
}

/// An exact set that also answers "present" for a share of non-members, decided by a hash of the
/// key salted with the member set. Up to [`SWING_MAX_N`] members its rate swings by build: with
/// probability 1/5 (a hash of the member set) a build runs at 4 p, otherwise at p / 5, so the
/// rate averaged over builds is 0.96 p and the median build's p / 5: correct, and right-skewed as
/// a filter of few blocks is. `steady` puts every such build at 2 p instead: a defect on every
/// build. Above [`SWING_MAX_N`] it runs at p / 2, so the quick plan's own point (n = 10,000) is
/// steady and the swing is the hunt's alone.
struct Swinging {
    steady: bool,
}

/// The largest n at which [`Swinging`] swings: below the quick plan's n, above the hunt's
/// [`hunt::RATE_MIN_N`], so some twenty of the hunt's rate points swing.
const SWING_MAX_N: u64 = 5_000;

struct SwingingInstance {
    members: std::collections::HashSet<Vec<u8>>,
    /// XOR of the members' hashes: the same for the same member set, in any order.
    salt: u64,
    n: u64,
    p: f64,
    steady: bool,
}

impl SwingingInstance {
    fn rate(&self) -> f64 {
        if self.n > SWING_MAX_N {
            self.p / 2.0
        } else if self.steady {
            2.0 * self.p
        } else if fmix(self.salt ^ 0x5eed).is_multiple_of(5) {
            4.0 * self.p
        } else {
            self.p / 5.0
        }
    }
}

impl Instance for SwingingInstance {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        for k in keys.iter() {
            if self.members.insert(k.to_vec()) {
                self.salt ^= fmix(fnv(k));
            }
        }
        Ok(())
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        let rate = self.rate();
        out.clear();
        out.extend(keys.iter().map(|k| {
            self.members.contains(k)
                || (fmix(fnv(k) ^ self.salt) as f64) < rate * 18_446_744_073_709_551_616.0
        }));
        Ok(())
    }
}

impl Candidate for Swinging {
    fn about(&self) -> About {
        let name = if self.steady {
            "corpus/steady-at-2p"
        } else {
            "corpus/swinging"
        };
        About::rust(name, "test")
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        if n == 0 || !(p > 0.0 && p < 1.0) {
            return Err(refused(
                &self.about().name,
                format!("n = {n}, p = {p}: allowed n >= 1 and p in (0, 1)"),
            ));
        }
        Ok(Box::new(SwingingInstance {
            members: Default::default(),
            salt: 0,
            n,
            p,
            steady: self.steady,
        }))
    }
}

fn quick(candidate: impl Candidate) -> Conformance {
    let c = run(Arc::new(candidate), &Plan::quick());
    eprintln!("{c}");
    c
}

/// The minimized (n, p) a broken verdict names in its figure (`at n = N, p = P: ...`).
fn minimized(c: &Conformance, clause: Clause) -> (u64, f64) {
    let v = c.verdict(clause).expect("the clause ran");
    assert_eq!(v.outcome, Outcome::Broken, "{clause}:\n{c}");
    let rest = v
        .figure
        .strip_prefix("at n = ")
        .unwrap_or_else(|| panic!("{clause}'s figure names no minimized point: {}", v.figure));
    let (n, rest) = rest.split_once(", p = ").expect("n, then p");
    let p = rest.split_once(':').expect("p, then the finding").0;
    assert!(
        v.reproduce.contains(&format!("n: {n}, p: ")) && v.reproduce.contains("hunt: None"),
        "the reproducing call names the point: {}",
        v.reproduce
    );
    (n.parse().expect("n"), p.parse().expect("p"))
}

#[test]
fn a_correlated_filter_at_even_m_breaks_the_promised_rate_where_its_twin_holds() {
    let c = quick(Toy(Defect::CorrelatedAtEvenM));
    let (n, p) = minimized(&c, Clause::PromisedRate);
    // Broken only where its sizing gives an even m, and only from the hunt: the promised point's
    // m is odd.
    let m = ((n as f64) * -p.ln() / std::f64::consts::LN_2.powi(2)).ceil() as u64;
    assert_eq!(m % 2, 0, "n = {n}, p = {p}: m = {m}");
    assert!(
        c.verdict(Clause::PromisedRate).unwrap().evidence[0]
            .starts_with("the promised (n, p) alone: holds"),
        "{c}"
    );
    assert_eq!(c.broken(), vec![Clause::PromisedRate], "{c}");
    let twin = quick(Toy(Defect::None));
    assert!(twin.broken().is_empty(), "{twin}");
}

#[test]
fn a_serialization_that_drops_the_tail_bits_loses_members_where_its_twin_keeps_them() {
    let c = quick(Toy(Defect::LosesTailBits));
    let (n, p) = minimized(&c, Clause::NoFalseNegatives);
    let m = ((n as f64) * -p.ln() / std::f64::consts::LN_2.powi(2)).ceil() as u64;
    assert_ne!(m % 8, 0, "n = {n}, p = {p}: m = {m}");
    let v = c.verdict(Clause::NoFalseNegatives).unwrap();
    assert!(v.figure.contains("after a serialization round trip"), "{c}");
    // The hunt's small filters show it (a probe in the last m % 8 bits is likelier there).
    assert!(n < 1000, "minimized to n = {n}");
}

#[test]
fn a_filter_that_panics_below_8_keys_breaks_accepts_valid_input_at_n_1() {
    let c = quick(Toy(Defect::PanicsBelow8));
    assert_eq!(minimized(&c, Clause::AcceptsValidInput), (1, 0.01));
    let v = c.verdict(Clause::AcceptsValidInput).unwrap();
    assert!(v.figure.contains("build failed on a valid request"), "{c}");
    assert!(
        v.figure.contains("attempt to subtract with overflow"),
        "{c}"
    );
    assert_eq!(c.broken(), vec![Clause::AcceptsValidInput], "{c}");
}

#[test]
fn a_scalable_filter_that_does_not_tighten_breaks_over_fill_where_its_twin_holds() {
    let c = quick(Scalable { tighten: false });
    let v = c.verdict(Clause::OverFill).unwrap();
    assert_eq!(v.outcome, Outcome::Broken, "{c}");
    assert!(v.figure.contains("grows without keeping p"), "{c}");
    assert_eq!(c.broken(), vec![Clause::OverFill], "{c}");
    let twin = quick(Scalable { tighten: true });
    assert!(twin.broken().is_empty(), "{twin}");
    assert!(
        twin.verdict(Clause::OverFill)
            .unwrap()
            .evidence
            .iter()
            .any(|e| e.starts_with("64x: growable, held to p")),
        "{twin}"
    );
    // Every evidence line reads as one sentence: no run of spaces left by a broken string.
    for v in c.verdicts.iter().chain(&twin.verdicts) {
        for e in &v.evidence {
            assert!(!e.contains("  "), "{e:?}");
        }
    }
}

#[test]
fn a_range_declared_by_the_candidate_is_respected() {
    // The n < 8 panic is not a defect when the candidate says it supports n from 8 only.
    struct Declaring;
    impl Candidate for Declaring {
        fn about(&self) -> About {
            Toy(Defect::PanicsBelow8)
                .about()
                .supporting(bloomlab_conform::Supports {
                    n: (8, 1 << 32),
                    p: (1e-12, 0.5),
                })
        }
        fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
            Toy(Defect::PanicsBelow8).build(n, p)
        }
        fn deserialize(&self, bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
            Toy(Defect::PanicsBelow8).deserialize(bytes)
        }
    }
    let c = run(
        Arc::new(Declaring),
        &Plan {
            clauses: vec![Clause::AcceptsValidInput],
            ..Plan::quick()
        },
    );
    let v = c.verdict(Clause::AcceptsValidInput).unwrap();
    assert_eq!(v.outcome, Outcome::Holds, "{c}");
    assert!(
        v.evidence
            .iter()
            .any(|e| e.contains("points outside the declared range skipped")),
        "{c}"
    );
}

#[test]
fn a_rate_that_swings_by_build_is_not_broken_but_one_over_on_every_build_is() {
    let c = quick(Swinging { steady: false });
    let rate = c.verdict(Clause::PromisedRate).expect("the clause ran");
    // One build in five runs at 4 p: with over a hundred rate points the screen flags some, and
    // the fresh builds must not confirm them.
    let unconfirmed = rate
        .evidence
        .iter()
        .find(|e| e.contains("exceeded on their one build"))
        .unwrap_or_else(|| panic!("the screen flagged nothing to confirm:\n{c}"));
    assert!(
        unconfirmed.contains("not confirmed at n = "),
        "{unconfirmed}"
    );
    assert_eq!(c.broken(), Vec::<Clause>::new(), "{c}");

    let c = quick(Swinging { steady: true });
    let (n, _) = minimized(&c, Clause::PromisedRate);
    assert!((hunt::RATE_MIN_N..=SWING_MAX_N).contains(&n), "n = {n}");
    let rate = c.verdict(Clause::PromisedRate).expect("the clause ran");
    assert!(
        rate.evidence
            .iter()
            .any(|e| e.starts_with("hunt: confirmed at n = ")),
        "{c}"
    );
    assert_eq!(c.broken(), vec![Clause::PromisedRate], "{c}");
}
