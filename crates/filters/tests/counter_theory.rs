//! Counter saturation theory against exact computation and against the real filter.
//!
//! - `counter_saturation_one` is the Binomial(n k, 1/m) upper tail at the saturation value t: it
//!   matches statrs' binomial survival function.
//! - `counter_saturation_any` (independence product) against the exact probability that any of m
//!   counters reaches t when n k probes fall uniformly and independently (a multinomial, computed
//!   exactly by placing the probes counter by counter): the product is a lower bound (the loads
//!   are negatively associated) and close to the exact value; Fan et al.'s bound is above both.
//! - A seeded simulation of `Counting4<Xxh3, KirschMitzenmacher>` with k = 1 (so the probes are
//!   independent uniform choices, as the model assumes): how often any counter saturates, and how
//!   often counter 0 does, each under a two-sided exact binomial test at alpha = 1e-6 per
//!   assertion.

use bloomlab_filters::theory::{
    counter_saturation_any, counter_saturation_fan_bound, counter_saturation_one,
    expected_saturated_counters, saturation_value,
};
use bloomlab_filters::{Counting4, KirschMitzenmacher, Params, Xxh3};
use statrs::distribution::{Binomial, Discrete, DiscreteCDF};

const SEED: u64 = 0xC0_0417_7E0E;
const ALPHA: f64 = 1e-6;

/// SplitMix64 of a seeded Weyl sequence: distinct indices give distinct keys.
fn key(i: u64) -> u64 {
    let mut z = SEED.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The two-sided exact acceptance region of Binomial(trials, p0) at level alpha.
fn acceptance(trials: u64, p0: f64, alpha: f64) -> (u64, u64) {
    let b = Binomial::new(p0, trials).unwrap();
    let lo = (0..=trials)
        .find(|&x| b.cdf(x) > alpha / 2.0)
        .unwrap_or(trials);
    let hi = (lo..=trials)
        .rev()
        .find(|&x| x == 0 || b.sf(x - 1) > alpha / 2.0)
        .unwrap_or(lo);
    (lo, hi)
}

/// Exactly, P(some counter's load >= t) when `balls` probes fall independently and uniformly into
/// `m` counters: place the counters one at a time, counter j receiving Binomial(r, 1/(m - j)) of
/// the r probes still unplaced. The result is summed as P(counters before j below t, counter j at
/// or above t) over j, a sum of positive terms, so tiny probabilities keep their digits (`1 - P(all
/// below)` would cancel).
fn exact_any(m: u64, balls: u64, t: u64) -> f64 {
    let mut dist = vec![0.0f64; balls as usize + 1];
    dist[balls as usize] = 1.0; // P(r probes left, every counter so far below t)
    let mut reached = 0.0;
    for j in 0..m {
        let left = m - j;
        let mut next = vec![0.0f64; balls as usize + 1];
        for (r, &pr) in dist.iter().enumerate() {
            if pr == 0.0 {
                continue;
            }
            if left == 1 {
                // The last counter takes every probe left.
                if r as u64 >= t {
                    reached += pr;
                }
                continue;
            }
            let b = Binomial::new(1.0 / left as f64, r as u64).unwrap();
            if r as u64 >= t {
                reached += pr * b.sf(t - 1);
            }
            for c in 0..(r as u64 + 1).min(t) {
                next[r - c as usize] += pr * b.pmf(c);
            }
        }
        dist = next;
    }
    reached
}

#[test]
fn one_counter_tail_is_the_binomial_survival_function() {
    for (m, k, n, bits) in [
        (64u64, 1u32, 384u64, 4u32),
        (1000, 7, 1000, 4),
        (9_585_088, 7, 1_000_000, 4),
        (100, 3, 1000, 4),     // mean 30: above t, summed as 1 - P(X < t)
        (64, 4, 1000, 8),      // t = 255, mean 62.5
        (10_000, 7, 1_500, 4), // overloaded to 1.05 per counter
    ] {
        let t = saturation_value(bits);
        let trials = n * u64::from(k);
        let want = Binomial::new(1.0 / m as f64, trials).unwrap().sf(t - 1);
        let got = counter_saturation_one(m, k, n, bits);
        let rel = (got - want).abs() / want.max(1e-300);
        assert!(
            rel < 1e-8 || (got - want).abs() < 1e-15,
            "m = {m}, k = {k}, n = {n}, bits = {bits}: {got:e} vs statrs {want:e}"
        );
    }
    // Fewer probes than the saturation value: impossible.
    assert_eq!(counter_saturation_one(10, 1, 14, 4), 0.0);
}

#[test]
fn any_counter_product_is_a_close_lower_bound_and_fan_is_above() {
    for (m, k, n) in [
        (64u64, 1u32, 384u64),
        (64, 3, 128),
        (128, 2, 400),
        (256, 7, 150),
        (1000, 7, 100), // the optimal k at 10 counters per key: Fan's bound below 1
    ] {
        let t = saturation_value(4);
        let exact = exact_any(m, n * u64::from(k), t);
        let product = counter_saturation_any(m, k, n, 4);
        let fan = counter_saturation_fan_bound(m, k, n, 4);
        eprintln!(
            "m = {m}, k = {k}, n = {n}: exact {exact:.6e}, product {product:.6e}, Fan bound {fan:.6e}"
        );
        assert!(
            product <= exact * (1.0 + 1e-9),
            "m = {m}, k = {k}, n = {n}: product {product:e} above exact {exact:e}"
        );
        assert!(
            product >= 0.9 * exact,
            "m = {m}, k = {k}, n = {n}: product {product:e} far below exact {exact:e}"
        );
        assert!(
            fan >= exact,
            "m = {m}, k = {k}, n = {n}: Fan {fan:e} below exact {exact:e}"
        );
    }
    // At a realistic size the exact tail is tiny: 1M keys at 1% (m = 9.59M, k = 7).
    let any = counter_saturation_any(9_585_088, 7, 1_000_000, 4);
    let fan = counter_saturation_fan_bound(9_585_088, 7, 1_000_000, 4);
    assert!(
        any > 0.0 && any < fan && fan < 1e-5,
        "any {any:e}, Fan {fan:e}"
    );
    // Stable for q far below 1/m: 1 - (1 - q)^m computed naively would round to 0 or lose digits.
    let one = counter_saturation_one(9_585_088, 7, 1_000_000, 4);
    assert!(
        (any / (one * 9_585_088.0) - 1.0).abs() < 1e-6,
        "{any:e} vs m q"
    );
}

/// 64 counters (the smallest counting filter), k = 1, 384 keys per trial (6 per counter), 20 000
/// trials of fresh keys.
#[test]
fn simulated_saturation_matches_the_exact_model() {
    const M: u64 = 64;
    const N: u64 = 384;
    const TRIALS: u64 = 20_000;
    let t = saturation_value(4);
    let mut any_hits = 0u64;
    let mut first_hits = 0u64;
    let mut saturated_total = 0u64;
    for trial in 0..TRIALS {
        let mut f =
            Counting4::<Xxh3, KirschMitzenmacher>::with_params(Params::explicit(M, 1).unwrap())
                .unwrap();
        for i in 0..N {
            f.insert(&key(trial * N + i));
        }
        let s = f.saturated_counters();
        any_hits += u64::from(s > 0);
        first_hits += u64::from(f.counter(0) == t);
        saturated_total += s;
    }
    let p_any = exact_any(M, N, t);
    let p_one = counter_saturation_one(M, 1, N, 4);
    for (what, hits, p0) in [
        ("any counter", any_hits, p_any),
        ("counter 0", first_hits, p_one),
    ] {
        let (lo, hi) = acceptance(TRIALS, p0, ALPHA);
        eprintln!("{what}: {hits} of {TRIALS} trials saturated, model {p0:.5} accepts {lo}..={hi}");
        assert!(
            (lo..=hi).contains(&hits),
            "{what}: m = {M}, k = 1, n = {N}, seed = {SEED:#x}: {hits} of {TRIALS} trials \
             saturated, model {p0:.6} accepts {lo}..={hi} at alpha = {ALPHA:e}"
        );
    }
    let mean = saturated_total as f64 / TRIALS as f64;
    let expected = expected_saturated_counters(M, 1, N, 4);
    eprintln!("saturated counters per trial: {mean:.5}, expected {expected:.5}");
}
