//! Smoke check of every registered variant at n = 1M keys, target p = 1%: the observed false
//! positives over Q = 1M non-member queries must fit the layout-correct theory
//! `filter.fpr_theory(n)` (the geometry's theory, or a scalable filter's compound rate over its
//! stages) under a two-sided exact binomial test. The thorough statistics are the
//! sweep's job; this catches a variant that is broken or departs from its layout's theory.
//!
//! False alarms: 1e-6 for the whole file, Bonferroni-split over the variants, so each variant's
//! two-sided test runs at alpha = 1e-6 / (number of variants), about 2e-8 (1e-8 per tail).
//! Power: at p ~ 0.01 and Q = 1M the acceptance region is about +-5.7% of the theory, so a variant
//! whose true rate is 10% off its theory fails with probability above 0.9999.
//!
//! The same filters check `estimated_len()` (see `estimated_len_tracks_n`).
//!
//! Keys: member i is `splitmix(i)`, non-member j is `splitmix(n + j)`, where `splitmix` is the
//! SplitMix64 output function of a seeded Weyl sequence, a bijection of u64: members and
//! non-members are disjoint by construction, not by chance.

use bloomlab_filters::{FilterExt, Geometry, Spec, registry};

const N: u64 = 1_000_000;
const P: f64 = 0.01;
const QUERIES: u64 = 1_000_000;
const SEED: u64 = 0x0B10_0F11_7E45_0001;
const FAMILY_ALPHA: f64 = 1e-6;

mod common;
use common::acceptance;

fn key(i: u64) -> u64 {
    common::key(SEED, i)
}

struct Measured {
    name: String,
    bits: u64,
    hashes: u32,
    geometry: Geometry,
    theory: f64,
    false_positives: u64,
    estimated_len: f64,
}

fn measure(name: &str) -> Measured {
    let mut f = registry::build(name, Spec::Target { n: N, p: P }).unwrap();
    for i in 0..N {
        f.insert(&key(i));
    }
    let false_positives = (N..N + QUERIES).filter(|&j| f.contains(&key(j))).count() as u64;
    Measured {
        name: name.to_owned(),
        bits: f.bits(),
        hashes: f.hashes(),
        geometry: f.geometry(),
        theory: f.fpr_theory(N),
        false_positives,
        estimated_len: f.estimated_len(),
    }
}

/// For the layout, (E[X], an upper bound on sd(X)) of the number X of set bits after n keys, under
/// the same independence model as the theory: flat, each of k n probes uniform over m; blocked and
/// split-block, a Poisson(n / blocks) load per block and, within it, uniform positions. Unset-bit
/// indicators inside a block (or a flat array) are negatively correlated, so summing Bernoulli
/// variances bounds that part from above; the block-load term is added exactly.
fn set_bits_model(g: Geometry, n: u64) -> (f64, f64) {
    let n = n as f64;
    match g {
        Geometry::Flat { bits, hashes } => {
            let m = bits as f64;
            let p0 = (f64::from(hashes) * n * (-1.0 / m).ln_1p()).exp();
            (m * (1.0 - p0), (m * p0 * (1.0 - p0)).sqrt())
        }
        Geometry::Blocked { .. } | Geometry::SplitBlock { .. } => {
            // r: probability that one key in a block leaves a given bit of that block unset.
            let (blocks, block_bits, r) = match g {
                Geometry::Blocked {
                    blocks,
                    block_bits,
                    hashes,
                } => {
                    let b = f64::from(block_bits);
                    (blocks as f64, b, (1.0 - 1.0 / b).powi(hashes as i32))
                }
                Geometry::SplitBlock {
                    blocks,
                    words,
                    word_bits,
                } => {
                    let w = f64::from(word_bits);
                    (blocks as f64, f64::from(words) * w, 1.0 - 1.0 / w)
                }
                Geometry::Flat { .. } => unreachable!(),
            };
            let lambda = n / blocks;
            // E[r^L] and E[r^2L] for L ~ Poisson(lambda).
            let e1 = (-lambda * (1.0 - r)).exp();
            let e2 = (-lambda * (1.0 - r * r)).exp();
            let unset_mean = blocks * block_bits * e1;
            let within = block_bits * (e1 - e2);
            let between = block_bits * block_bits * (e2 - e1 * e1);
            let var = blocks * (within + between);
            (blocks * block_bits - unset_mean, var.sqrt())
        }
    }
}

#[test]
fn every_variant_fits_its_layout_theory_and_estimates_its_count() {
    let names = registry::names();
    let alpha = FAMILY_ALPHA / names.len() as f64;
    let results: Vec<Measured> = names.iter().map(|n| measure(n)).collect();

    eprintln!(
        "n = {N}, p = {P}, queries = {QUERIES}, seed = {SEED:#x}, alpha per variant = {alpha:.2e}"
    );
    eprintln!(
        "{:<32} {:>9} {:>3} {:>9} {:>9} {:>15} {:>8} {:>11}",
        "variant", "m", "k", "observed", "theory", "accepted FP", "FP", "est. n"
    );
    let mut failures = Vec::new();
    for r in &results {
        let theory = r.theory;
        let (lo, hi) = acceptance(QUERIES, theory, alpha);
        let observed = r.false_positives as f64 / QUERIES as f64;
        eprintln!(
            "{:<32} {:>9} {:>3} {:>9.5} {:>9.5} {:>7}..={:<7} {:>8} {:>11.0}",
            r.name, r.bits, r.hashes, observed, theory, lo, hi, r.false_positives, r.estimated_len
        );
        if !(lo..=hi).contains(&r.false_positives) {
            failures.push(format!(
                "{}: n = {N}, p = {P}, m = {}, k = {}, seed = {SEED:#x}, queries = {QUERIES}: \
                 {} false positives (rate {observed:.6}), theory {theory:.6} accepts {lo}..={hi} \
                 at alpha = {alpha:.2e}",
                r.name, r.bits, r.hashes, r.false_positives
            ));
        }
    }
    for r in &results {
        // estimated_len = -(m/k) ln(1 - X/m). Its expectation under the layout's model follows from
        // E[X]; its sd from the delta method, sd(X) (m/k) / (m - E[X]). Accept 6 sd (normal tail
        // 2e-9 per variant). Separately, the model's expectation must be within 1% of n: blocked
        // layouts read low by about (k - 1) / (2 B) (repeated positions inside a block), 0.6% here.
        let m = r.bits as f64;
        let k = f64::from(r.geometry.hashes());
        let (ex, sdx) = set_bits_model(r.geometry, N);
        let expected = -(m / k) * (-ex / m).ln_1p();
        let sd = sdx * (m / k) / (m - ex);
        let ok = (r.estimated_len - expected).abs() <= 6.0 * sd
            && (expected / N as f64 - 1.0).abs() < 0.01;
        if !ok {
            failures.push(format!(
                "{}: n = {N}, m = {}, k = {}, seed = {SEED:#x}: estimated_len {:.1}, model \
                 expects {expected:.1} +- 6 x {sd:.1}",
                r.name, r.bits, r.hashes, r.estimated_len
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
