//! Scalable filters, measured: the compound theory (`fpr_theory`) matches a seeded measurement at
//! 64x growth for every registered growable variant; at 1024x growth the textbook schedule
//! measurably exceeds its target p while the correct schedule (first stage at p (1 - r), r = 1/2,
//! stages meeting their rates by theory) stays at or below p.
//!
//! Keys: member i is `splitmix(i)`, non-member j is `splitmix(2^40 + j)` (a bijection, so the two
//! sets are disjoint by construction). Every test is an exact binomial test over Q non-member
//! queries, with its false-alarm rate stated beside it.

use bloomlab_filters::{FilterExt, Spec, registry};
mod common;
use common::acceptance;
use statrs::distribution::{Binomial, DiscreteCDF};

const SEED: u64 = 0x5CA1_AB1E_0000_0013;
const P: f64 = 0.01;
const NON_MEMBERS: u64 = 1 << 40;

fn key(i: u64) -> u64 {
    common::key(SEED, i)
}

/// `P(X >= x)` for X ~ Binomial(trials, p0): the one-sided p-value of x false positives against a
/// rate of at most p0.
fn upper_p_value(trials: u64, p0: f64, x: u64) -> f64 {
    if x == 0 {
        return 1.0;
    }
    Binomial::new(p0, trials).unwrap().sf(x - 1)
}

struct Grown {
    name: String,
    inserted: u64,
    stages: usize,
    bytes: usize,
    theory: f64,
    false_positives: u64,
    queries: u64,
}

/// Builds `name` for `n0` keys at P, inserts `n0 * growth` keys, checks every one is found, and
/// counts the false positives among `queries` non-members.
fn grow(name: &str, n0: u64, growth: u64, queries: u64) -> Grown {
    let mut f = registry::build_growable(name, Spec::Target { n: n0, p: P }).unwrap();
    let inserted = n0 * growth;
    for i in 0..inserted {
        f.insert(&key(i));
    }
    let lost = (0..inserted).filter(|&i| !f.contains(&key(i))).count();
    assert_eq!(lost, 0, "{name}: {lost} of {inserted} members lost");
    let false_positives = (0..queries)
        .filter(|&j| f.contains(&key(NON_MEMBERS + j)))
        .count() as u64;
    Grown {
        name: name.to_owned(),
        inserted,
        stages: f.stages(),
        bytes: f.memory_bytes(),
        theory: f.fpr_theory(inserted),
        false_positives,
        queries,
    }
}

/// n0 = 10 000, 64x growth (640 000 keys, 7 stages: 10k (2^6 - 1) < 640k <= 10k (2^7 - 1)),
/// Q = 1M. Two-sided exact test of the count against `fpr_theory`, family alpha 1e-6
/// Bonferroni-split over the growable variants.
///
/// Why n0 = 10 000 and not less: the test treats the filter as fixed and the queries as the only
/// randomness, but the theory is an expectation over key sets too, and a small stage's realized
/// rate varies from one key set to another. With n0 = 1000 the first blocked stage has 23 blocks,
/// and at 1024x growth `scalable/blocked512/xxh3` measured 0.00834 against a theory of 0.00938 (a
/// two-sided test on queries alone would call that a failure); per stage, on another seed, the
/// stages matched their own theories within that spread.
#[test]
fn compound_theory_matches_measurement_at_64x_growth() {
    let names = registry::growable_names();
    let alpha = 1e-6 / names.len() as f64;
    let mut failures = Vec::new();
    for name in &names {
        let g = grow(name, 10_000, 64, 1_000_000);
        let (lo, hi) = acceptance(g.queries, g.theory, alpha);
        eprintln!(
            "{:<30} stages {} inserted {} bytes {} observed {:.6} theory {:.6} accepts {lo}..={hi}",
            g.name,
            g.stages,
            g.inserted,
            g.bytes,
            g.false_positives as f64 / g.queries as f64,
            g.theory
        );
        assert_eq!(g.stages, 7, "{name}");
        if !(lo..=hi).contains(&g.false_positives) {
            failures.push(format!(
                "{name}: n0 = 10000, growth 64x, p = {P}, seed = {SEED:#x}, Q = {}: {} false \
                 positives, compound theory {:.6} accepts {lo}..={hi} at alpha = {alpha:.1e}",
                g.queries, g.false_positives, g.theory
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// n0 = 1000, 1024x growth (1 024 000 keys, 11 stages), Q = 2M, one-sided exact tests at
/// alpha = 1e-6 each:
/// - `textbook-scalable` exceeds p: `P(X >= observed | rate p)` must be below alpha (its theory is
///   about 1.9p here, so the test has power near 1);
/// - every `scalable/...` stays at or below p: the same p-value must be above alpha (a false alarm
///   has probability at most alpha when the true rate is at most p).
#[test]
fn textbook_schedule_exceeds_p_and_the_correct_one_does_not_at_1024x_growth() {
    const ALPHA: f64 = 1e-6;
    for name in registry::growable_names() {
        let g = grow(&name, 1000, 1024, 2_000_000);
        let observed = g.false_positives as f64 / g.queries as f64;
        let p_value = upper_p_value(g.queries, P, g.false_positives);
        eprintln!(
            "{:<30} stages {} observed {observed:.6} (theory {:.6}, target {P}) P(X >= obs | p) = {p_value:.3e}, {:.2} bytes/key",
            g.name,
            g.stages,
            g.theory,
            g.bytes as f64 / g.inserted as f64
        );
        assert_eq!(g.stages, 11, "{name}");
        let context = format!(
            "{name}: n0 = 1000, growth 1024x, p = {P}, seed = {SEED:#x}, Q = {}: {} false \
             positives (rate {observed:.6}, compound theory {:.6}), P(X >= observed | p) = \
             {p_value:.3e}, alpha = {ALPHA:e}",
            g.queries, g.false_positives, g.theory
        );
        if name == "textbook-scalable" {
            assert!(p_value < ALPHA, "should exceed p: {context}");
            assert!(g.theory > 1.8 * P, "{context}");
        } else {
            assert!(p_value > ALPHA, "should stay at or below p: {context}");
            assert!(g.theory <= P, "{context}");
        }
    }
}
