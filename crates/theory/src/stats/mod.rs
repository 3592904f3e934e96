//! Binomial confidence intervals for an observed false-positive count.

pub mod hypothesis;

use crate::special::{beta_reg, standard_normal_quantile};

/// Checks a confidence level: a finite number strictly between 0 and 1.
pub fn check_confidence(confidence: f64) -> Result<(), String> {
    if confidence.is_finite() && confidence > 0.0 && confidence < 1.0 {
        Ok(())
    } else {
        Err(format!(
            "confidence level {} is invalid: it must be in the open interval (0, 1)",
            crate::Compact(confidence)
        ))
    }
}

/// The Clopper-Pearson exact two-sided interval for `successes` out of `trials` at `confidence`:
/// the `alpha/2` quantile of Beta(x, n-x+1) and the `1-alpha/2` quantile of Beta(x+1, n-x), with
/// 0 and 1 at the ends. Its coverage is at least `confidence` for every true rate.
///
/// Panics if `successes > trials`, `trials == 0`, or `confidence` is not in (0, 1): callers own
/// these counts, so such a call is a bug, not bad input.
pub fn clopper_pearson(successes: u64, trials: u64, confidence: f64) -> (f64, f64) {
    assert!(
        trials > 0 && successes <= trials,
        "{successes} successes out of {trials} trials"
    );
    check_confidence(confidence).unwrap();
    let alpha = 1.0 - confidence;
    let (x, n) = (successes as f64, trials as f64);
    let low = if successes == 0 {
        0.0
    } else {
        beta_quantile(x, n - x + 1.0, alpha / 2.0)
    };
    let high = if successes == trials {
        1.0
    } else {
        beta_quantile(x + 1.0, n - x, 1.0 - alpha / 2.0)
    };
    (low, high)
}

/// The `q` quantile of Beta(a, b) to full double precision.
///
/// statrs's `inverse_cdf` is accurate only to about 1e-5 relative and, for some shape parameters
/// (e.g. a few hundred successes out of millions), never returns. So a normal approximation of
/// the Beta distribution only seeds a bracket, which is widened until it holds the quantile and
/// then narrowed by bisection on the regularised incomplete beta function (accurate to ~1e-14)
/// until it cannot shrink.
fn beta_quantile(a: f64, b: f64, q: f64) -> f64 {
    let cdf = |u: f64| beta_reg(a, b, u);
    let z = standard_normal_quantile(q);
    let mean = a / (a + b);
    let sd = (a * b / ((a + b) * (a + b) * (a + b + 1.0))).sqrt();
    let guess = (mean + z * sd).clamp(f64::MIN_POSITIVE, 1.0);
    let (mut lo, mut hi) = (guess * 0.5, (guess * 2.0).min(1.0));
    while lo > f64::MIN_POSITIVE && cdf(lo) > q {
        lo /= 2.0;
    }
    while hi < 1.0 && cdf(hi) < q {
        hi = (hi * 2.0).min(1.0);
    }
    loop {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            return mid;
        }
        if cdf(mid) < q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
}

/// The standard normal quantile that leaves `(1 - confidence) / 2` in each tail: the `z` of a
/// two-sided interval at `confidence` (1.96 at 95%).
pub fn two_sided_z(confidence: f64) -> f64 {
    standard_normal_quantile(1.0 - (1.0 - confidence) / 2.0)
}

/// Queries after which a rate `f` (0 < f <= 1) has a two-sided interval of relative half-width
/// `precision`, by the normal approximation `z * sqrt((1 - f) / (f q)) = precision`:
/// `z^2 (1 - f) / (precision^2 f)`, with `z` from [`two_sided_z`].
pub fn normal_queries(z: f64, f: f64, precision: f64) -> f64 {
    z * z * (1.0 - f) / (precision * precision * f)
}

/// The Wilson score interval for `successes` out of `trials` at `confidence`.
///
/// Panics under the same conditions as [`clopper_pearson`].
pub fn wilson(successes: u64, trials: u64, confidence: f64) -> (f64, f64) {
    assert!(
        trials > 0 && successes <= trials,
        "{successes} successes out of {trials} trials"
    );
    check_confidence(confidence).unwrap();
    let z = two_sided_z(confidence);
    let n = trials as f64;
    let phat = successes as f64 / n;
    let denom = 1.0 + z * z / n;
    let centre = (phat + z * z / (2.0 * n)) / denom;
    let half = z / denom * (phat * (1.0 - phat) / n + z * z / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Median of the finite values (mean of the middle two for an even count); NaN if none is finite.
pub fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    median_of(values.into_iter().collect())
}

/// [`median`] of a vector, which it reorders: the one copy of the sort every caller's iterator
/// type shares.
pub fn median_of(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn clopper_pearson_matches_published_values() {
        // R 4.x: binom.test(3, 100)$conf.int and binom.test(0, 50)$conf.int and
        // binom.test(50, 100)$conf.int (all at the default 95%); for x = 0 the
        // upper end is 1 - 0.025^(1/50) exactly.
        let cases = [
            (3, 100, 0.006_229_972, 0.085_176_053),
            (0, 50, 0.0, 0.071_121_736),
            (50, 100, 0.398_321_3, 0.601_678_7),
        ];
        for (x, n, lo, hi) in cases {
            let (l, h) = clopper_pearson(x, n, 0.95);
            assert!(
                close(l, lo, 1e-6) && close(h, hi, 1e-6),
                "x={x} n={n}: got ({l}, {h}), want ({lo}, {hi})"
            );
        }
    }

    #[test]
    fn clopper_pearson_zero_successes_has_closed_form() {
        // For x = 0 the upper end solves (1 - u)^n = alpha/2.
        let (n, conf) = (1_000_000u64, 0.99);
        let (_, h) = clopper_pearson(0, n, conf);
        let exact = 1.0 - ((1.0 - conf) / 2.0f64).powf(1.0 / n as f64);
        assert!(close(h, exact, 1e-9), "{h} vs {exact}");
    }

    #[test]
    fn clopper_pearson_ends_solve_their_equations_for_large_counts() {
        // Sweep-sized counts (statrs's own Beta quantile never returned for some of these): each
        // end must put exactly alpha/2 of the binomial tail beyond it.
        let conf = 0.95;
        let half = (1.0 - conf) / 2.0;
        for trials in [4_096u64, 65_536, 4_000_000, 20_000_000] {
            for x in [1u64, 7, 380, 407, 12_345] {
                if x >= trials {
                    continue;
                }
                let (l, h) = clopper_pearson(x, trials, conf);
                let (xf, nf) = (x as f64, trials as f64);
                let below = beta_reg(xf, nf - xf + 1.0, l);
                let above = 1.0 - beta_reg(xf + 1.0, nf - xf, h);
                assert!(
                    close(below, half, 1e-8) && close(above, half, 1e-8),
                    "x={x} n={trials}: ({l}, {h}) leaves tails {below} and {above}, want {half}"
                );
            }
        }
    }

    #[test]
    fn wilson_matches_published_value() {
        // Wilson interval for 3/100 at 95%: (0.01026, 0.08450) (Newcombe 1998 method 3, z = 1.959964).
        let (l, h) = wilson(3, 100, 0.95);
        assert!(
            close(l, 0.010_26, 1e-3) && close(h, 0.084_50, 1e-3),
            "({l}, {h})"
        );
    }

    #[test]
    fn median_skips_non_finite_values_and_averages_the_middle_pair() {
        assert_eq!(median([3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median([4.0, 1.0, f64::NAN, 3.0, 2.0]), 2.5);
        assert!(median([f64::INFINITY, f64::NAN]).is_nan());
        assert!(median(Vec::new()).is_nan());
    }
}
