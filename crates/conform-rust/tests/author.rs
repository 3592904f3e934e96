//! What a library author's `#[test]` looks like, and that the suite fails broken filters readably:
//! a lossy insert, a rate twice its promise, a hang on n = 0. Also bloomlab's own subjects: the
//! flagships' verdicts on the quick plan, and the textbook port's on scale.
//!
//! Every statistical verdict here comes from the suite's decisions at `Plan::quick()`'s
//! false-alarm rate alpha = 1e-4 per clause (one-sided exact bounds, see `suite::decide`): a
//! correct filter fails one of these assertions with probability at most about 1e-4 per clause
//! asserted, and the seeds are fixed, so a run is reproducible.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bloomlab_conform::{
    About, Candidate, CandidateError, Capabilities, Clause, Conformance, Instance, Outcome, PerKey,
    Plan, run,
};
use bloomlab_conform_rust::own::{self, Own};
use fastbloom::BloomFilter;

/// The author's adapter, as in `examples/author.rs`, with fastbloom's hasher seeded: its default
/// hasher takes random keys per filter, which made this test's verdicts differ between runs (the
/// `long` key family came out undecided about one run in several).
struct FastBloom;

impl Candidate for FastBloom {
    fn about(&self) -> About {
        About::rust("example/fastbloom", "0.17").with(Capabilities {
            stats: true,
            large: true,
            ..Capabilities::default()
        })
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let filter = BloomFilter::with_false_pos(p)
            .seed(&1)
            .expected_items(n as usize);
        let instance = PerKey::new(
            filter,
            |f, key| {
                f.insert(key);
            },
            |f, key| f.contains(key),
        )
        .memory(|f| f.num_bits() as u64 / 8);
        Ok(Box::new(instance))
    }
}

fn outcome(c: &Conformance, clause: Clause) -> Outcome {
    c.verdict(clause)
        .unwrap_or_else(|| panic!("{clause} did not run:\n{c}"))
        .outcome
}

/// The panic message of `conformance.assert_conforms()`, which must panic.
fn assert_fails(conformance: &Conformance) -> String {
    let panic = catch_unwind(AssertUnwindSafe(|| conformance.assert_conforms()))
        .expect_err("assert_conforms() passed a broken filter");
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .expect("a message")
}

#[test]
fn fastbloom_through_the_authors_adapter_holds_all_but_bad_input() {
    let c = run(Arc::new(FastBloom), &Plan::quick());
    eprintln!("{c}");
    for clause in [
        Clause::NoFalseNegatives,
        Clause::PromisedRate,
        Clause::KeyFamilies,
        Clause::OverFill,
    ] {
        assert_eq!(outcome(&c, clause), Outcome::Holds, "{clause}:\n{c}");
    }
    // fastbloom 0.17's `with_false_pos` asserts `fp > 0.0`: p = 0, negative and NaN panic (its
    // docs name p = 0 only). The suite counts a panic on bad input as broken.
    assert_eq!(c.broken(), vec![Clause::BadInput], "{c}");
    let msg = assert_fails(&c);
    assert!(
        msg.contains("p=0 panics") && msg.contains("p=NaN panics") && msg.contains("fp > 0.0"),
        "{msg}"
    );
}

#[test]
fn a_correct_filter_passes_assert_conforms() {
    let c = run(
        bloomlab_conform_rust::by_name("bloomlab/classic/xxh3/km/flat").unwrap(),
        &Plan::quick(),
    );
    c.assert_conforms();
    assert_eq!(outcome(&c, Clause::PromisedRate), Outcome::Holds, "{c}");
    assert_eq!(outcome(&c, Clause::BadInput), Outcome::Holds, "{c}");
}

/// A planted filter over bloomlab's classic flagship: `build` may misbehave, `insert` may lose
/// keys, and the filter may be sized for `rate_factor` times the promised p.
struct Planted {
    name: &'static str,
    rate_factor: f64,
    lossy: bool,
    hang_on_empty: bool,
}

impl Candidate for Planted {
    fn about(&self) -> About {
        About::rust(self.name, "0")
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        if self.hang_on_empty && n == 0 {
            loop {
                // Parked, not spinning: the thread the suite leaves behind costs no CPU.
                std::thread::park();
            }
        }
        let inner = Own::new("classic/xxh3/km/flat")
            .unwrap()
            .build(n, p * self.rate_factor)?;
        if !self.lossy {
            return Ok(inner);
        }
        // Drops every key whose FNV-1a hash is 0 mod 1000: one key in a thousand, the same keys
        // every time.
        struct Lossy(Box<dyn Instance>);
        impl Instance for Lossy {
            fn insert(&mut self, keys: &bloomlab_conform::KeyBatch) -> Result<(), CandidateError> {
                let mut kept = bloomlab_conform::KeyBatch::new();
                for k in keys.iter() {
                    let h = k.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
                    });
                    if h % 1000 != 0 {
                        kept.push(k);
                    }
                }
                self.0.insert(&kept)
            }
            fn query(
                &mut self,
                keys: &bloomlab_conform::KeyBatch,
                out: &mut Vec<bool>,
            ) -> Result<(), CandidateError> {
                self.0.query(keys, out)
            }
        }
        Ok(Box::new(Lossy(inner)))
    }
}

fn planted(name: &'static str) -> Planted {
    Planted {
        name,
        rate_factor: 1.0,
        lossy: false,
        hang_on_empty: false,
    }
}

#[test]
fn a_lossy_insert_fails_naming_no_false_negatives_and_the_missing_key() {
    let c = run(
        Arc::new(Planted {
            lossy: true,
            ..planted("planted/lossy")
        }),
        &Plan::quick(),
    );
    let msg = assert_fails(&c);
    assert!(
        msg.contains("BROKEN: no-false-negatives") && msg.contains("first missed index"),
        "{msg}"
    );
}

#[test]
fn a_filter_at_twice_its_promised_rate_fails_with_both_rates() {
    let c = run(
        Arc::new(Planted {
            rate_factor: 2.0,
            ..planted("planted/twice")
        }),
        &Plan::quick(),
    );
    let msg = assert_fails(&c);
    assert_eq!(outcome(&c, Clause::PromisedRate), Outcome::Broken, "{c}");
    let v = c.verdict(Clause::PromisedRate).unwrap();
    // The hunt names the smallest point it broke at, with its two rates...
    assert!(
        v.figure.starts_with("at n = ") && v.figure.contains("observed vs"),
        "{}",
        v.figure
    );
    // ...and the promised point's verdict comes first in the evidence: sized for 2%, the observed
    // rate is about 2%, printed beside the 1% promised.
    assert!(
        v.evidence[0].starts_with("the promised (n, p) alone: broken (2")
            && v.evidence[0].contains("observed vs 1% promised"),
        "{}",
        v.evidence[0]
    );
    assert!(
        msg.contains("promised-rate") && msg.contains(v.figure.as_str()),
        "{msg}"
    );
}

#[test]
fn a_filter_that_hangs_on_n_zero_fails_bad_input_within_the_build_timeout() {
    let plan = Plan {
        build_timeout: Duration::from_secs(2),
        ..Plan::quick()
    };
    let start = Instant::now();
    let c = run(
        Arc::new(Planted {
            hang_on_empty: true,
            ..planted("planted/hangs")
        }),
        &plan,
    );
    assert_eq!(c.broken(), vec![Clause::BadInput], "{c}");
    let msg = assert_fails(&c);
    assert!(
        msg.contains("n=0 hangs") && msg.contains("hung: build did not return within 2 s"),
        "{msg}"
    );
    // The whole quick plan takes seconds; the hang costs one 2 s wait, not more.
    eprintln!("hang plan ran in {:?}", start.elapsed());
}

fn quick(name: &str) -> Conformance {
    let c = run(
        bloomlab_conform_rust::by_name(&format!("bloomlab/{name}")).unwrap(),
        &Plan::quick(),
    );
    eprintln!("{c}");
    c
}

/// bloomlab's flagships, sized to their promise (`Spec::Promise`: the bits their own layout needs
/// to keep p), hold every clause the quick plan runs. (Sized by the classic rule instead, as the
/// sweep does for equal memory, the split-block layout runs at about 1.5x p: see the registry's
/// `sized_to_the_promise_...` test.) Key families may be undecided at this scale, never broken:
/// each family is measured on its own filter, and a small blocked or split-block filter's rate
/// varies from one filter to the next by more than the binomial noise the rule allows for (a
/// 10,000-key split-block filter was seen at 1.10x on long keys, equal-rate p = 4e-4, while its
/// random-key twin kept p); the full plan's 10^6-key filters average that out.
#[test]
fn bloomlabs_flagships_hold_every_clause_of_the_quick_plan() {
    for name in ["sbbf/xxh3", "blocked512/xxh3", "classic/xxh3/km/flat"] {
        let c = quick(name);
        for v in &c.verdicts {
            match v.clause {
                Clause::Speed => {}
                Clause::KeyFamilies => {
                    assert_ne!(v.outcome, Outcome::Broken, "{name} {}:\n{c}", v.clause)
                }
                // The split-block layout's k is 8: at the scale boundary test's small load it has
                // no false positive to compare (the full plan's fill decides it).
                Clause::Scale if name == "sbbf/xxh3" => {
                    assert_eq!(v.outcome, Outcome::Undecided, "{name} {}:\n{c}", v.clause)
                }
                _ => assert_eq!(v.outcome, Outcome::Holds, "{name} {}:\n{c}", v.clause),
            }
        }
    }
}

/// The textbook port's FNV-1a does not show on the suite's key families at n = 10,000: its
/// structured-key rates stay within the 15% margin of its random-key rate (measured by hand:
/// 0.96x to 1.14x on little- and big-endian sequential u64, decimal and shared-prefix keys at
/// n = 10^4 to 10^6), so clause 4 holds where the issue expected it broken. bloomlab's own sweep
/// agrees (`reports/sweep/summary.md`: 1.14x at most, on `article` keys at n = 10^6).
#[test]
fn the_textbook_port_is_not_flagged_by_the_key_family_clause_at_quick_scale() {
    let c = quick("textbook-fnv1a-i32");
    assert_ne!(outcome(&c, Clause::KeyFamilies), Outcome::Broken, "{c}");
    assert_eq!(outcome(&c, Clause::PromisedRate), Outcome::Holds, "{c}");
}

/// The scale clause on the textbook port at 2^32 bits: it claims large filters, but its bit
/// count is a Java `int` and its build refuses m > 2^31 - 1, before allocating (so this is fast).
#[test]
fn the_textbook_port_breaks_the_scale_clause_past_2_pow_32_bits() {
    let plan = Plan {
        clauses: vec![Clause::Scale],
        ..Plan::full()
    };
    let c = run(
        bloomlab_conform_rust::by_name("bloomlab/textbook-fnv1a-i32").unwrap(),
        &plan,
    );
    assert_eq!(c.broken(), vec![Clause::Scale], "{c}");
    let msg = assert_fails(&c);
    assert!(
        msg.contains("claims large filters, refuses one") && msg.contains("Java int"),
        "{msg}"
    );
}

#[test]
fn every_own_subject_is_in_the_catalogue() {
    let names: HashSet<String> = own::all().iter().map(|c| c.about().name).collect();
    for v in own::variants() {
        let name = format!("bloomlab/{}", v.name());
        assert!(names.contains(&name), "{name}: {names:?}");
    }
    for v in ["sbbf/xxh3", "blocked512/xxh3", "classic/xxh3/km/flat"] {
        assert!(names.contains(&format!("bloomlab/{v}")), "{v}: {names:?}");
    }
}

#[test]
fn the_classic_flagship_holds_the_quick_boundary_test() {
    // The quick plan's scale clause: two filters past 2^33 and 2^32 bits at the same load, whose
    // rates must halve with the size (`suite::scale`, false-alarm rate alpha = 1e-4).
    let c = run(
        Arc::new(Own::new("classic/xxh3/km/flat").unwrap()),
        &Plan {
            clauses: vec![Clause::Scale],
            ..Plan::quick()
        },
    );
    assert_eq!(outcome(&c, Clause::Scale), Outcome::Holds, "{c}");
}
