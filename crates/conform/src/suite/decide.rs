//! The statistics every rate clause decides with: exact (Clopper-Pearson) bounds and the
//! conditional test of a rate ratio, each turned into holds / broken / undecided.
//!
//! Every decision here calls a correct filter broken with probability at most the level it is
//! given (the false-alarm rate), because "broken" needs the whole confidence bound on the wrong
//! side of the tolerated value, and "holds" needs it on the right side.

use bloomlab_theory::stats::clopper_pearson;
use bloomlab_theory::stats::hypothesis::{binomial_cdf, binomial_sf_inclusive, rate_ratio_test};

use crate::verdict::Outcome;

/// One-sided exact bounds at confidence `1 - level` each: the ends of the two-sided
/// Clopper-Pearson interval at `1 - 2 level` (each end leaves `level` of the tail beyond it).
/// `level` must be in (0, 0.5) and `trials >= 1` ([`crate::Plan::validate`] ensures both).
pub(crate) fn one_sided_bounds(x: u64, q: u64, level: f64) -> (f64, f64) {
    clopper_pearson(x, q, 1.0 - 2.0 * level)
}

/// An observed rate held to a ceiling (clause 2: the promise times `1 + margin`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ceiling {
    /// Broken if the lower bound is above the ceiling, holds if the upper bound is at or below
    /// it, undecided otherwise.
    pub outcome: Outcome,
    /// One-sided lower bound at `1 - level`.
    pub lower: f64,
    /// One-sided upper bound at `1 - level`.
    pub upper: f64,
    /// When undecided: about how many queries in all would decide at the observed rate (`None`
    /// when the observed rate is the ceiling itself, where no number of queries decides).
    pub queries_to_decide: Option<u64>,
}

/// Holds `x` false positives out of `q` queries to `ceiling` at false-alarm rate `level`: a
/// filter whose true rate is at most `ceiling` is called broken with probability at most
/// `level`, and one whose rate is above it is called holding with probability at most `level`.
pub(crate) fn against_ceiling(x: u64, q: u64, ceiling: f64, level: f64) -> Ceiling {
    let (lower, upper) = one_sided_bounds(x, q, level);
    let outcome = ceiling_outcome(lower, upper, ceiling);
    let queries_to_decide = if outcome == Outcome::Undecided {
        queries_to_decide(x as f64 / q as f64, q, ceiling, level)
    } else {
        None
    };
    Ceiling {
        outcome,
        lower,
        upper,
        queries_to_decide,
    }
}

fn ceiling_outcome(lower: f64, upper: f64, ceiling: f64) -> Outcome {
    if lower > ceiling {
        Outcome::Broken
    } else if upper <= ceiling {
        Outcome::Holds
    } else {
        Outcome::Undecided
    }
}

/// The smallest total number of queries (more than `q`) at which the same observed `rate` would
/// decide against `ceiling`, found on the exact bounds (doubling, then bisection); `None` when
/// the rate is the ceiling or more than 2^50 queries would be needed.
pub(crate) fn queries_to_decide(rate: f64, q: u64, ceiling: f64, level: f64) -> Option<u64> {
    if rate == ceiling {
        return None;
    }
    queries_until(q, |queries| {
        let x = ((rate * queries as f64).round() as u64).min(queries);
        let (lower, upper) = one_sided_bounds(x, queries, level);
        ceiling_outcome(lower, upper, ceiling) != Outcome::Undecided
    })
}

/// [`queries_to_decide`] for [`against_band`]: the total queries at which the observed `rate`
/// would put the two-sided interval inside `[low, high]` or entirely outside it; `None` when the
/// rate is an end of the band or more than 2^50 queries would be needed.
pub(crate) fn queries_to_decide_band(
    rate: f64,
    q: u64,
    (low, high): (f64, f64),
    level: f64,
) -> Option<u64> {
    if rate == low || rate == high {
        return None;
    }
    queries_until(q, |queries| {
        let x = ((rate * queries as f64).round() as u64).min(queries);
        against_band(x, queries, low, high, level).outcome != Outcome::Undecided
    })
}

/// The smallest query count above `q` where `decides` holds (doubling, then bisection to 0.1%),
/// or `None` past 2^50.
fn queries_until(q: u64, decides: impl Fn(u64) -> bool) -> Option<u64> {
    let (mut lo, mut hi) = (q.max(1), q.max(1).saturating_mul(2));
    while !decides(hi) {
        if hi > 1 << 50 {
            return None;
        }
        lo = hi;
        hi *= 2;
    }
    // `decides` is monotone in the query count up to the rounding of x; the bisection finds a
    // count that decides, within a factor of 2 of the first one.
    while hi - lo > 1 + hi / 1000 {
        let mid = lo + (hi - lo) / 2;
        if decides(mid) { hi = mid } else { lo = mid }
    }
    Some(hi)
}

/// The largest count of `q` whose one-sided exact upper bound at `1 - level` is at most
/// `ceiling` (`None`: not even 0). By the duality of the Clopper-Pearson bound, the upper bound
/// of x is at most `ceiling` iff P(Bin(q, ceiling) <= x) <= `level`, which is increasing in x.
pub(crate) fn max_holding_count(q: u64, ceiling: f64, level: f64) -> Option<u64> {
    let holds = |x: u64| x < q && binomial_cdf(x, q, ceiling) <= level;
    if !holds(0) {
        return None;
    }
    let (mut lo, mut hi) = (0, q);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if holds(mid) { lo = mid } else { hi = mid }
    }
    Some(lo)
}

/// The power of the one-sided ceiling test: the probability that a filter whose true rate is
/// `rate` holds against `ceiling` on `q` queries at false-alarm rate `level`
/// (P(Bin(q, rate) <= [`max_holding_count`])).
pub(crate) fn power_to_hold(rate: f64, q: u64, ceiling: f64, level: f64) -> f64 {
    max_holding_count(q, ceiling, level).map_or(0.0, |x| binomial_cdf(x, q, rate))
}

/// The fewest queries (to 0.1%, at most `cap`) at which a filter whose rate is exactly `rate`
/// holds against `ceiling` with probability at least `power` ([`power_to_hold`]), with that
/// probability; `cap` and its power when even `cap` queries fall short.
pub(crate) fn queries_for_power(
    rate: f64,
    ceiling: f64,
    level: f64,
    power: f64,
    cap: u64,
) -> (u64, f64) {
    let enough = |q: u64| power_to_hold(rate, q, ceiling, level) >= power;
    if !enough(cap) {
        return (cap, power_to_hold(rate, cap, ceiling, level));
    }
    // The power rises with q up to the saw-tooth of the discrete count, so the bisection finds a
    // count with the power asked for, near the first one.
    let (mut lo, mut hi) = (0, cap);
    while hi - lo > 1 + hi / 1000 {
        let mid = lo + (hi - lo) / 2;
        if enough(mid) { hi = mid } else { lo = mid }
    }
    (hi, power_to_hold(rate, hi, ceiling, level))
}

/// An observed rate held to a band around a theory (clause 3).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Band {
    /// Holds if the two-sided interval is inside the band, broken if it lies entirely outside,
    /// undecided otherwise.
    pub outcome: Outcome,
    /// Two-sided exact interval at `1 - level`.
    pub lower: f64,
    /// Its upper end.
    pub upper: f64,
}

/// Holds `x` of `q` to the band `[low, high]` with the two-sided exact interval at `1 - level`:
/// a filter whose rate is inside the band is called broken with probability at most `level`
/// (each end of the interval misses with at most `level / 2`).
pub(crate) fn against_band(x: u64, q: u64, low: f64, high: f64, level: f64) -> Band {
    let (lower, upper) = clopper_pearson(x, q, 1.0 - level);
    let outcome = if upper < low || lower > high {
        Outcome::Broken
    } else if lower >= low && upper <= high {
        Outcome::Holds
    } else {
        Outcome::Undecided
    };
    Band {
        outcome,
        lower,
        upper,
    }
}

/// A structured family's rate against the random-key rate (clause 4).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Family {
    /// See [`family_vs_random`].
    pub outcome: Outcome,
    /// Observed family rate over observed random rate (infinite when the random rate is 0 and
    /// the family's is not; 1 when both are 0).
    pub ratio: f64,
    /// [`rate_ratio_test`]: the two-sided p-value of equal rates (for the evidence).
    pub p_equal: f64,
    /// One-sided p-value of "the family's rate is at most `1 + margin` times the random rate"
    /// (small: it is more).
    pub p_above: f64,
    /// One-sided p-value of "the family's rate is at least `1 + margin` times the random rate"
    /// (small: it is less).
    pub p_below: f64,
    /// The family rate's one-sided exact bounds at `1 - level`.
    pub lower: f64,
    /// Upper bound.
    pub upper: f64,
}

/// The family's `xf` of `qf` against the random keys' `xr` of `qr`, for a filter promising `p`,
/// at level `level` (the caller divides its false-alarm rate among the families: Bonferroni).
///
/// The tolerated family rate is `(1 + margin) x max(random rate, p)`: a family may be worse than
/// random keys as long as it keeps the promise, and may exceed the promise as much as random keys
/// do (clause 2 judges that). With `rho = 1 + margin`:
/// - **broken** iff the family's rate is significantly above `rho` times the random rate (the
///   conditional test: given `t = xf + xr`, `xf ~ Bin(t, rho qf / (qr + rho qf))` when the ratio is
///   exactly `rho`; one-sided p < `level`) **and** its one-sided lower bound exceeds `rho p`.
///   A family inside the tolerance fails one of these with probability at most `level`
///   (the conditional test is exact for Poisson counts and conservative for binomial ones).
/// - **holds** iff its rate is significantly below `rho` times the random rate (the same test the
///   other way) **or** its one-sided upper bound is at most `rho p`. A family beyond both
///   tolerances is called holding with probability at most `2 level`.
/// - **undecided** otherwise: too few false positives to tell.
pub(crate) fn family_vs_random(
    (xf, qf): (u64, u64),
    (xr, qr): (u64, u64),
    p: f64,
    margin: f64,
    level: f64,
) -> Family {
    let rho = 1.0 + margin;
    let t = xf + xr;
    let share = rho * qf as f64 / (qr as f64 + rho * qf as f64);
    let (p_above, p_below) = if t == 0 {
        (1.0, 1.0)
    } else {
        (
            binomial_sf_inclusive(xf, t, share),
            binomial_cdf(xf, t, share),
        )
    };
    let (lower, upper) = one_sided_bounds(xf, qf, level);
    let outcome = if p_above < level && lower > rho * p {
        Outcome::Broken
    } else if p_below < level || upper <= rho * p {
        Outcome::Holds
    } else {
        Outcome::Undecided
    };
    let (rf, rr) = (xf as f64 / qf as f64, xr as f64 / qr as f64);
    let ratio = match (xf, xr) {
        (0, 0) => 1.0,
        (_, 0) => f64::INFINITY,
        _ => rf / rr,
    };
    Family {
        outcome,
        ratio,
        p_equal: rate_ratio_test(xr, qr, xf, qf),
        p_above,
        p_below,
        lower,
        upper,
    }
}

/// A rate as a percentage with three significant digits and no trailing zeros (`1.02%`, `1%`,
/// `0.0123%`, `40%`).
pub(crate) fn pct(rate: f64) -> String {
    if !rate.is_finite() {
        return format!("{rate}");
    }
    let v = rate * 100.0;
    if v == 0.0 {
        return "0%".into();
    }
    let decimals = (2 - v.abs().log10().floor() as i64).clamp(0, 12) as usize;
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    format!("{s}%")
}

#[cfg(test)]
mod tests {
    use super::*;

    // q = 400,000 queries at p = 1% (Plan::quick): sd of the count = sqrt(q p (1-p)) = 62.9.
    const Q: u64 = 400_000;
    const ALPHA: f64 = 1e-4;
    const CEILING: f64 = 0.01 * 1.15;

    #[test]
    fn a_fair_filter_at_its_promise_holds() {
        // x = 4,000 is the expected count; the upper bound at 1 - 1e-4 is about 4,000 + 3.72 sd
        // = 4,234 / 400,000 = 1.06%, below 1.15%. A fair filter's count exceeds 4,000 + (600 -
        // 3.72 x 62.9) = 4,366 (the point where this would turn undecided) with probability
        // ~5e-9: the false-alarm rate of this figure if it were drawn at random.
        for x in [3_900, 4_000, 4_200] {
            let c = against_ceiling(x, Q, CEILING, ALPHA);
            assert_eq!(c.outcome, Outcome::Holds, "x = {x}: {c:?}");
            assert!(c.lower < 0.01 && c.upper > x as f64 / Q as f64, "{c:?}");
        }
    }

    #[test]
    fn a_filter_at_twice_its_promise_is_broken() {
        // 2p: 8,000 expected, sd 88.6; its lower bound is ~8,000 - 3.72 x 88.6 = 7,670 > 4,600.
        // A filter at 2p would fall below the 4,600 + 3.72 sd line with probability < 1e-200.
        let c = against_ceiling(8_000, Q, CEILING, ALPHA);
        assert_eq!(c.outcome, Outcome::Broken, "{c:?}");
        assert!(c.lower > CEILING);
    }

    #[test]
    fn a_thin_sample_is_undecided_and_says_how_many_queries_would_decide() {
        // 1 of 100 queries: the upper bound is ~9%, far above 1.15%, the lower far below.
        let c = against_ceiling(1, 100, CEILING, ALPHA);
        assert_eq!(c.outcome, Outcome::Undecided, "{c:?}");
        let need = c
            .queries_to_decide
            .expect("a rate of 1% can be told from 1.15%");
        // Normal approximation: (z_{1-1e-4} sqrt(r (1 - r)) / (ceiling - r))^2 = 60,900; the exact
        // Clopper-Pearson bound is wider than the normal one, so more is needed, but not double.
        let z: f64 = 3.719;
        let approx = (z * (0.01f64 * 0.99).sqrt() / 0.0015).powi(2);
        assert!(
            need as f64 >= approx && (need as f64) < 2.0 * approx,
            "{need} vs {approx}"
        );
        // That many queries at 1% decide; 2% fewer do not (the search's precision is 0.1%).
        let decided = against_ceiling(need / 100, need, CEILING, ALPHA);
        assert_eq!(decided.outcome, Outcome::Holds, "{decided:?}");
        let fewer = need * 98 / 100;
        let short = against_ceiling(fewer / 100, fewer, CEILING, ALPHA);
        assert_eq!(short.outcome, Outcome::Undecided, "{fewer}: {short:?}");
        // A rate exactly at the ceiling never decides.
        assert_eq!(queries_to_decide(CEILING, 100, CEILING, ALPHA), None);
    }

    #[test]
    fn band_holds_inside_breaks_outside_and_is_undecided_on_thin_samples() {
        // Theory 1%, band [1%/1.15, 1.15%]. A fair 4,000 / 400,000: two-sided interval at
        // 1 - 1e-4 is ~[0.94%, 1.06%] (3.89 sd each side), inside the band. 15.7% (a filter with
        // half its declared bits) is 100 sd away from anything in the band.
        let (low, high) = (0.01 / 1.15, 0.01 * 1.15);
        assert_eq!(
            against_band(4_000, Q, low, high, ALPHA).outcome,
            Outcome::Holds
        );
        assert_eq!(
            against_band(62_800, Q, low, high, ALPHA).outcome,
            Outcome::Broken
        );
        assert_eq!(
            against_band(1_000, Q, low, high, ALPHA).outcome,
            Outcome::Broken
        );
        assert_eq!(
            against_band(1, 100, low, high, ALPHA).outcome,
            Outcome::Undecided
        );
    }

    #[test]
    fn family_rate_decisions() {
        let level = ALPHA / 4.0; // Bonferroni over the four structured families.
        // Equal rates (4,000 vs 4,000): the ratio test puts xf / t = 0.5 against 1.15 / 2.15 =
        // 0.535 under a ratio of exactly 1.15, 6.2 sd away: holds. A fair family would sit that
        // far above its mean with probability ~1e-10.
        let d = family_vs_random((4_000, Q), (4_000, Q), 0.01, 0.15, level);
        assert_eq!(d.outcome, Outcome::Holds, "{d:?}");
        assert!((d.ratio - 1.0).abs() < 1e-12 && d.p_equal > 0.99);
        // 5x the random rate (and the promise): broken by a huge margin.
        let d = family_vs_random((20_000, Q), (4_000, Q), 0.01, 0.15, level);
        assert_eq!(d.outcome, Outcome::Broken, "{d:?}");
        assert!((d.ratio - 5.0).abs() < 1e-12 && d.p_equal < 1e-100);
        // 5x a random rate far below the promise, still under the promise: holds.
        let d = family_vs_random((200, Q), (40, Q), 0.01, 0.15, level);
        assert_eq!(d.outcome, Outcome::Holds, "{d:?}");
        // Thin: 2 vs 1 false positive among 200 queries each.
        let d = family_vs_random((2, 200), (1, 200), 0.01, 0.15, level);
        assert_eq!(d.outcome, Outcome::Undecided, "{d:?}");
        // No false positive anywhere (an exact set): the upper bound decides.
        let d = family_vs_random((0, Q), (0, Q), 0.01, 0.15, level);
        assert_eq!(d.outcome, Outcome::Holds, "{d:?}");
    }

    #[test]
    fn percentages_read_as_three_significant_digits() {
        assert_eq!(pct(0.0102), "1.02%");
        assert_eq!(pct(0.01), "1%");
        assert_eq!(pct(0.000_123), "0.0123%");
        assert_eq!(pct(0.4), "40%");
        assert_eq!(pct(0.089), "8.9%");
        assert_eq!(pct(0.0), "0%");
        assert_eq!(pct(1.0), "100%");
    }

    #[test]
    fn a_thin_band_measurement_says_how_many_queries_would_decide() {
        // 1% observed against theory 1% with a 15% band: 40 of 4,000 is undecided; the count of
        // queries found must decide at that rate, and 2% fewer must not (the search's precision
        // is 0.1%).
        let band = (0.01 / 1.15, 0.01 * 1.15);
        let at = |q: u64| against_band((q as f64 * 0.01).round() as u64, q, band.0, band.1, ALPHA);
        assert_eq!(at(4_000).outcome, Outcome::Undecided);
        let need = queries_to_decide_band(0.01, 4_000, band, ALPHA).expect("1% is inside");
        assert_eq!(at(need).outcome, Outcome::Holds, "{need}");
        assert_eq!(at(need * 98 / 100).outcome, Outcome::Undecided, "{need}");
        assert_eq!(queries_to_decide_band(band.1, 4_000, band, ALPHA), None);
    }

    #[test]
    fn the_holding_count_is_the_dual_of_the_upper_bound() {
        // x_max is the last count whose upper bound is within the ceiling, x_max + 1 the first
        // beyond it.
        let x = max_holding_count(Q, CEILING, ALPHA).unwrap();
        assert!(one_sided_bounds(x, Q, ALPHA).1 <= CEILING * (1.0 + 1e-12));
        assert!(one_sided_bounds(x + 1, Q, ALPHA).1 > CEILING * (1.0 - 1e-12));
        assert_eq!(max_holding_count(10, 0.001, ALPHA), None);
    }
}
