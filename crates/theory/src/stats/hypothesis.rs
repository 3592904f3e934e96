//! Exact binomial hypothesis tests and their power, for the FPR gate.
//!
//! Two questions are asked of an observed false-positive count:
//! - *theory*: is x out of n consistent with the rate theory predicts? An exact two-sided binomial
//!   test ([`binomial_test`]).
//! - *drift*: is x2 out of n2 consistent with a baseline's x1 out of n1 at the same unknown rate?
//!   The conditional test ([`rate_ratio_test`]): given t = x1 + x2, x2 is Binomial(t, n2/(n1+n2))
//!   when both counts are Poisson with equal rates. False-positive counts are binomial, whose variance
//!   is smaller than the Poisson one, so the test is conservative for them (its false-alarm rate stays
//!   below the nominal level).
//!
//! Query counts are chosen by [`queries_for_drift`] so that a relative change of the rate is found
//! with a stated power at a stated level; [`drift_power`] computes that power exactly.

use crate::special::{beta_reg, standard_normal_quantile};

/// P(X <= x) for X ~ Binomial(n, p), through the regularised incomplete beta function
/// (no subtraction from 1, so tails far below 1e-16 stay accurate).
pub fn binomial_cdf(x: u64, n: u64, p: f64) -> f64 {
    if x >= n {
        return 1.0;
    }
    // P(X <= x) = I_{1-p}(n - x, x + 1).
    beta_reg((n - x) as f64, x as f64 + 1.0, 1.0 - p)
}

/// P(X >= x) for X ~ Binomial(n, p).
pub fn binomial_sf_inclusive(x: u64, n: u64, p: f64) -> f64 {
    if x == 0 {
        return 1.0;
    }
    if x > n {
        return 0.0;
    }
    // P(X >= x) = I_p(x, n - x + 1).
    beta_reg(x as f64, (n - x) as f64 + 1.0, p)
}

/// Two-sided exact binomial test of H0: X ~ Binomial(n, p), by doubling the smaller tail (the test
/// dual to the Clopper-Pearson interval): `min(1, 2 min(P(X <= x), P(X >= x)))`. Its false-alarm
/// rate is at most the level it is compared with.
pub fn binomial_test(x: u64, n: u64, p: f64) -> f64 {
    assert!(
        x <= n && (0.0..=1.0).contains(&p),
        "binomial_test({x}, {n}, {p})"
    );
    if p == 0.0 {
        return if x == 0 { 1.0 } else { 0.0 };
    }
    if p == 1.0 {
        return if x == n { 1.0 } else { 0.0 };
    }
    (2.0 * binomial_cdf(x, n, p).min(binomial_sf_inclusive(x, n, p))).min(1.0)
}

/// Conditional two-sided test of equal rates for counts x1 of n1 trials and x2 of n2 trials.
///
/// Panics if `x1 + x2` exceeds `u64::MAX` (no count of a real trial comes near: the gate refuses
/// counts above 2^53 when it reads a baseline). `n1 + n2` is summed in floating point, so any
/// trial counts are accepted.
pub fn rate_ratio_test(x1: u64, n1: u64, x2: u64, n2: u64) -> f64 {
    let t = x1
        .checked_add(x2)
        .unwrap_or_else(|| panic!("rate_ratio_test: {x1} + {x2} false positives overflow u64"));
    if t == 0 {
        return 1.0;
    }
    binomial_test(x2, t, n2 as f64 / (n1 as f64 + n2 as f64))
}

fn z(q: f64) -> f64 {
    standard_normal_quantile(q)
}

/// Queries per side so that the drift test at two-sided level `alpha` detects a rate of
/// `p (1 + rel)` against a baseline at `p` with probability at least `power`, both sides with the
/// same number of queries.
///
/// Normal approximation of the conditional test: with q queries each, t ~ q p (2 + rel) and under
/// the alternative x2 / t has mean pi1 = (1 + rel) / (2 + rel) against pi0 = 1/2, so
/// `t = ((z_{1-alpha/2} sqrt(pi0 (1-pi0)) + z_power sqrt(pi1 (1-pi1))) / (pi1 - pi0))^2` and
/// `q = t / (p (2 + rel))`. That start is then raised in 1% steps until the exact power
/// ([`drift_power`]) reaches `power`, so the returned q meets the target exactly, not approximately.
pub fn queries_for_drift(p: f64, rel: f64, alpha: f64, power: f64) -> u64 {
    let mut q = drift_queries_estimate(p, rel, alpha, power).ceil() as u64;
    while drift_power(q, p, rel, alpha) < power {
        q += q / 100 + 1;
    }
    q
}

/// The normal approximation [`queries_for_drift`] starts from, before its exact search: cheap, so a
/// caller can refuse a plan that would need more queries than it can make before searching.
/// Infinite (or NaN) when `alpha / 2` or `power` is too close to 0 or 1 for `f64`, or `rel` so
/// small that the change cannot be told apart.
pub fn drift_queries_estimate(p: f64, rel: f64, alpha: f64, power: f64) -> f64 {
    let (pi0, pi1): (f64, f64) = (0.5, (1.0 + rel) / (2.0 + rel));
    let num =
        z(1.0 - alpha / 2.0) * (pi0 * (1.0 - pi0)).sqrt() + z(power) * (pi1 * (1.0 - pi1)).sqrt();
    let t = (num / (pi1 - pi0)).powi(2);
    t / (p * (2.0 + rel))
}

/// Exact power of the drift test: the probability that [`rate_ratio_test`] on x1 ~ Bin(q, p) and
/// x2 ~ Bin(q, p (1 + rel)) falls below `alpha`. Summed over x1 within 8 standard deviations; for
/// each x1 the rejection region of x2 is found by bisection (the p-value is unimodal in x2).
pub fn drift_power(q: u64, p: f64, rel: f64, alpha: f64) -> f64 {
    let p2 = p * (1.0 + rel);
    let sd1 = (q as f64 * p * (1.0 - p)).sqrt();
    let lo1 = (q as f64 * p - 8.0 * sd1 - 1.0).max(0.0) as u64;
    let hi1 = ((q as f64 * p + 8.0 * sd1 + 1.0) as u64).min(q);
    let mut total = 0.0;
    for x1 in lo1..=hi1 {
        let w = binomial_cdf(x1, q, p)
            - if x1 == 0 {
                0.0
            } else {
                binomial_cdf(x1 - 1, q, p)
            };
        if w < 1e-300 {
            continue;
        }
        let rejects = |x2: u64| rate_ratio_test(x1, q, x2, q) < alpha;
        // Largest x2 below the centre that rejects, smallest above it that rejects.
        let centre = x1.max(1);
        let upper = first_true(centre, q, rejects);
        let lower = last_true_below(centre, rejects);
        let mut reject_prob = 0.0;
        if let Some(u) = upper {
            reject_prob += binomial_sf_inclusive(u, q, p2);
        }
        if let Some(l) = lower {
            reject_prob += binomial_cdf(l, q, p2);
        }
        total += w * reject_prob;
    }
    total.min(1.0)
}

/// The smallest x in [from, to] with f(x) true, for f false then true (monotone).
fn first_true(from: u64, to: u64, f: impl Fn(u64) -> bool) -> Option<u64> {
    if !f(to) {
        return None;
    }
    let (mut lo, mut hi) = (from, to);
    if f(lo) {
        return Some(lo);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if f(mid) { hi = mid } else { lo = mid }
    }
    Some(hi)
}

/// The largest x in [0, below) with f(x) true, for f true then false (monotone).
fn last_true_below(below: u64, f: impl Fn(u64) -> bool) -> Option<u64> {
    if below == 0 || !f(0) {
        return None;
    }
    let (mut lo, mut hi) = (0, below);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if f(mid) { lo = mid } else { hi = mid }
    }
    Some(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_tails_match_direct_sums() {
        // Bin(20, 0.3): sums of the pmf computed directly.
        let (n, p) = (20u64, 0.3f64);
        let pmf = |k: u64| {
            let mut c = 1.0;
            for i in 0..k {
                c *= (n - i) as f64 / (i + 1) as f64;
            }
            c * p.powi(k as i32) * (1.0 - p).powi((n - k) as i32)
        };
        for x in 0..=n {
            let cdf: f64 = (0..=x).map(pmf).sum();
            let sf: f64 = (x..=n).map(pmf).sum();
            assert!((binomial_cdf(x, n, p) - cdf).abs() < 1e-12, "cdf x={x}");
            assert!(
                (binomial_sf_inclusive(x, n, p) - sf).abs() < 1e-12,
                "sf x={x}"
            );
        }
    }

    #[test]
    fn binomial_test_doubles_the_smaller_tail() {
        // P(X >= 7) for Bin(100, 0.02) = sum_{k>=7} C(100,k) 0.02^k 0.98^(100-k)
        // = 0.004062054080101 (exact integer binomial coefficients, evaluated in Python).
        let tail = binomial_sf_inclusive(7, 100, 0.02);
        assert!((tail - 0.004_062_054_080_101).abs() < 1e-12, "{tail}");
        assert!((binomial_test(7, 100, 0.02) - 2.0 * tail).abs() < 1e-15);
        // The lower tail is the smaller one for x = 0 at a large rate.
        assert!((binomial_test(0, 10, 0.5) - 2.0 * 0.5f64.powi(10)).abs() < 1e-15);
    }

    #[test]
    fn rate_ratio_test_takes_counts_whose_trial_sum_overflows() {
        // n1 + n2 = 2^65 - 2 does not fit a u64; the rate is equal, so the test cannot reject.
        let p = rate_ratio_test(5, u64::MAX, 5, u64::MAX);
        assert!((p - 1.0).abs() < 1e-12, "{p}");
    }

    #[test]
    fn drift_estimate_is_infinite_where_no_query_count_can_do() {
        assert!(drift_queries_estimate(0.01, 0.1, 1e-6, 0.99).is_finite());
        // 1 - alpha/2 rounds to 1: the quantile is infinite.
        assert!(!drift_queries_estimate(0.01, 0.1, 1e-20, 0.99).is_finite());
        // A change of 1e-300 cannot be resolved.
        assert!(drift_queries_estimate(0.01, 1e-300, 1e-6, 0.99) > 1e300);
    }

    #[test]
    fn sample_size_gives_the_stated_power_exactly() {
        let (p, rel, alpha, power) = (0.01, 0.10, 1e-6, 0.99);
        let q = queries_for_drift(p, rel, alpha, power);
        let exact = drift_power(q, p, rel, alpha);
        assert!(exact >= power, "q = {q}: exact power {exact}");
        // and a third of the queries is clearly not enough
        assert!(drift_power(q / 3, p, rel, alpha) < 0.9);
    }
}
