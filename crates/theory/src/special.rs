//! The special functions the exact binomial statistics need: `ln Γ`, the regularised incomplete
//! beta function and the inverse complementary error function (hence the normal quantile).
//!
//! Each is a port of statrs 0.19.1 (`function::gamma::ln_gamma`, `function::beta::beta_reg`,
//! `function::erf::erfc_inv`, `Normal::inverse_cdf`), the same operations in the same order with
//! the same constants, so every figure computed from them is the one statrs gives, bit for bit
//! (the tests compare both over thousands of arguments): bloomlab's committed statistics did not
//! move when they stopped calling statrs. They live here, not behind a dependency on statrs,
//! because statrs brings four more crates into the tree of `bloomlab-conform`, whose whole tree
//! is held under 15 crates (issue 63). statrs is MIT-licensed, Copyright (c) 2016 Michael Ma; its
//! `erfc_inv` coefficients are Boost's (John Maddock, Boost Software License 1.0), as in statrs.

// The constants are written as statrs writes them, digits beyond f64's included.
#![allow(clippy::excessive_precision)]

use std::f64::consts as f64_consts;

/// `ln π` (statrs's `consts::LN_PI`).
const LN_PI: f64 = 1.1447298858494001741434273513530587116472948129153;
/// `ln(2 sqrt(e / π))` (statrs's `consts::LN_2_SQRT_E_OVER_PI`).
const LN_2_SQRT_E_OVER_PI: f64 = 0.6207822376352452223455184457816472122518527279025978;
/// The machine epsilon statrs's continued fraction stops at (`prec::F64_PREC`, 2^-53).
const F64_PREC: f64 = 0.00000000000000011102230246251565;
/// Within this of 1, `beta_reg` takes its prefactor as 0 (statrs's `MODULE_EPS` in `beta`).
const BETA_EPS: f64 = 1e-15;

/// The Lanczos approximation's `r` (Pugh 2004, p. 116).
const GAMMA_R: f64 = 10.900511;

/// Polynomial coefficients for approximating the `gamma_ln` function
const GAMMA_DK: &[f64] = &[
    2.48574089138753565546e-5,
    1.05142378581721974210,
    -3.45687097222016235469,
    4.51227709466894823700,
    -2.98285225323576655721,
    1.05639711577126713077,
    -1.95428773191645869583e-1,
    1.70970543404441224307e-2,
    -5.71926117404305781283e-4,
    4.63399473359905636708e-6,
    -2.71994908488607703910e-9,
];

/// `ln Γ(x)` to about 16 digits (Lanczos, after Pugh, "An Analysis of the Lanczos Gamma
/// Approximation", 2004, p. 116).
pub fn ln_gamma(x: f64) -> f64 {
    if x < 0.5 {
        let s = GAMMA_DK
            .iter()
            .enumerate()
            .skip(1)
            .fold(GAMMA_DK[0], |s, t| s + t.1 / (t.0 as f64 - x));

        LN_PI
            - (f64_consts::PI * x).sin().ln()
            - s.ln()
            - LN_2_SQRT_E_OVER_PI
            - (0.5 - x) * ((0.5 - x + GAMMA_R) / f64_consts::E).ln()
    } else {
        let s = GAMMA_DK
            .iter()
            .enumerate()
            .skip(1)
            .fold(GAMMA_DK[0], |s, t| s + t.1 / (x + t.0 as f64 - 1.0));

        s.ln() + LN_2_SQRT_E_OVER_PI + (x - 0.5) * ((x - 0.5 + GAMMA_R) / f64_consts::E).ln()
    }
}

/// The regularised lower incomplete beta function `I_x(a, b)`, for `a > 0`, `b > 0` and
/// `0 <= x <= 1`, by its continued fraction (modified Lentz, at most 140 terms; accurate to about
/// 1e-14).
///
/// Panics, naming the value, if `a` or `b` is not positive or `x` is outside [0, 1]: the callers
/// (binomial tails and quantiles) derive them from counts they own, so such a call is a bug.
pub fn beta_reg(a: f64, b: f64, x: f64) -> f64 {
    assert!(a > 0.0, "beta_reg: a = {a} must be > 0");
    assert!(b > 0.0, "beta_reg: b = {b} must be > 0");
    assert!(
        (0.0..=1.0).contains(&x),
        "beta_reg: x = {x} must be in [0, 1]"
    );

    // statrs's `ulps_eq!(x, 1.0, epsilon = 1e-15)`: its absolute test decides every x in [0, 1]
    // (5 ulps below 1 is 5.6e-16).
    let bt = if x == 0.0 || (1.0 - x).abs() <= BETA_EPS {
        0.0
    } else {
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp()
    };
    let symm_transform = x >= (a + 1.0) / (a + b + 2.0);
    let eps = F64_PREC;
    let fpmin = f64::MIN_POSITIVE / eps;

    let mut a = a;
    let mut b = b;
    let mut x = x;
    if symm_transform {
        let swap = a;
        x = 1.0 - x;
        a = b;
        b = swap;
    }

    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;

    if d.abs() < fpmin {
        d = fpmin;
    }
    d = 1.0 / d;
    let mut h = d;

    for m in 1..141 {
        let m = f64::from(m);
        let m2 = m * 2.0;
        let mut aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < fpmin {
            d = fpmin;
        }
        c = 1.0 + aa / c;
        if c.abs() < fpmin {
            c = fpmin;
        }
        d = 1.0 / d;
        h = h * d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < fpmin {
            d = fpmin;
        }
        c = 1.0 + aa / c;
        if c.abs() < fpmin {
            c = fpmin;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() <= eps {
            break;
        }
    }

    if symm_transform {
        1.0 - bt * h / a
    } else {
        bt * h / a
    }
}

/// The `q` quantile of the normal distribution with mean `mean` and standard deviation `sd`:
/// `mean - sd sqrt(2) erfc_inv(2q)`; infinite at q = 0 and 1.
///
/// Panics, naming the value, if `q` is not in [0, 1].
pub fn normal_quantile(mean: f64, sd: f64, q: f64) -> f64 {
    assert!(
        (0.0..=1.0).contains(&q),
        "normal_quantile: q = {q} must be in [0, 1]"
    );
    mean - (sd * f64_consts::SQRT_2 * erfc_inv(2.0 * q))
}

/// The `q` quantile of the standard normal distribution ([`normal_quantile`] with mean 0, sd 1).
pub fn standard_normal_quantile(q: f64) -> f64 {
    normal_quantile(0.0, 1.0, q)
}

/// The inverse of the complementary error function: `+inf` at x <= 0, `-inf` at x >= 2.
pub fn erfc_inv(x: f64) -> f64 {
    if x <= 0.0 {
        f64::INFINITY
    } else if x >= 2.0 {
        f64::NEG_INFINITY
    } else if x > 1.0 {
        erf_inv_impl(-1.0 + x, 2.0 - x, -1.0)
    } else {
        erf_inv_impl(1.0 - x, x, 1.0)
    }
}

/// A polynomial with coefficients `coeff` (lowest order first) at `z`, by Horner's rule.
fn polynomial(z: f64, coeff: &[f64]) -> f64 {
    coeff.iter().rev().fold(0_f64, |acc, val| acc * z + val)
}

// `erf_inv_impl` computes the inverse error function where
// `p`,`q`, and `s` are the first, second, and third intermediate
// parameters respectively
fn erf_inv_impl(p: f64, q: f64, s: f64) -> f64 {
    let result = if p <= 0.5 {
        let y = 0.0891314744949340820313;
        let g = p * (p + 10.0);
        let r = polynomial(p, ERF_INV_IMPL_AN) / polynomial(p, ERF_INV_IMPL_AD);
        g * y + g * r
    } else if q >= 0.25 {
        let y = 2.249481201171875;
        let g = (-2.0 * q.ln()).sqrt();
        let xs = q - 0.25;
        let r = polynomial(xs, ERF_INV_IMPL_BN) / polynomial(xs, ERF_INV_IMPL_BD);
        g / (y + r)
    } else {
        let x = (-q.ln()).sqrt();
        if x < 3.0 {
            let y = 0.807220458984375;
            let xs = x - 1.125;
            let r = polynomial(xs, ERF_INV_IMPL_CN) / polynomial(xs, ERF_INV_IMPL_CD);
            y * x + r * x
        } else if x < 6.0 {
            let y = 0.93995571136474609375;
            let xs = x - 3.0;
            let r = polynomial(xs, ERF_INV_IMPL_DN) / polynomial(xs, ERF_INV_IMPL_DD);
            y * x + r * x
        } else if x < 18.0 {
            let y = 0.98362827301025390625;
            let xs = x - 6.0;
            let r = polynomial(xs, ERF_INV_IMPL_EN) / polynomial(xs, ERF_INV_IMPL_ED);
            y * x + r * x
        } else if x < 44.0 {
            let y = 0.99714565277099609375;
            let xs = x - 18.0;
            let r = polynomial(xs, ERF_INV_IMPL_FN) / polynomial(xs, ERF_INV_IMPL_FD);
            y * x + r * x
        } else {
            let y = 0.99941349029541015625;
            let xs = x - 44.0;
            let r = polynomial(xs, ERF_INV_IMPL_GN) / polynomial(xs, ERF_INV_IMPL_GD);
            y * x + r * x
        }
    };
    s * result
}

/// Polynomial coefficients for a numerator of `erf_inv_impl`
/// in the interval [0, 0.5].
const ERF_INV_IMPL_AN: &[f64] = &[
    -0.000508781949658280665617,
    -0.00836874819741736770379,
    0.0334806625409744615033,
    -0.0126926147662974029034,
    -0.0365637971411762664006,
    0.0219878681111168899165,
    0.00822687874676915743155,
    -0.00538772965071242932965,
];
/// Polynomial coefficients for a denominator of `erf_inv_impl`
/// in the interval [0, 0.5].
const ERF_INV_IMPL_AD: &[f64] = &[
    1.0,
    -0.970005043303290640362,
    -1.56574558234175846809,
    1.56221558398423026363,
    0.662328840472002992063,
    -0.71228902341542847553,
    -0.0527396382340099713954,
    0.0795283687341571680018,
    -0.00233393759374190016776,
    0.000886216390456424707504,
];
/// Polynomial coefficients for a numerator of `erf_inv_impl`
/// in the interval [0.5, 0.75].
const ERF_INV_IMPL_BN: &[f64] = &[
    -0.202433508355938759655,
    0.105264680699391713268,
    8.37050328343119927838,
    17.6447298408374015486,
    -18.8510648058714251895,
    -44.6382324441786960818,
    17.445385985570866523,
    21.1294655448340526258,
    -3.67192254707729348546,
];
/// Polynomial coefficients for a denominator of `erf_inv_impl`
/// in the interval [0.5, 0.75].
const ERF_INV_IMPL_BD: &[f64] = &[
    1.0,
    6.24264124854247537712,
    3.9713437953343869095,
    -28.6608180499800029974,
    -20.1432634680485188801,
    48.5609213108739935468,
    10.8268667355460159008,
    -22.6436933413139721736,
    1.72114765761200282724,
];
/// Polynomial coefficients for a numerator of `erf_inv_impl`
/// in the interval [0.75, 1] with x less than 3.
const ERF_INV_IMPL_CN: &[f64] = &[
    -0.131102781679951906451,
    -0.163794047193317060787,
    0.117030156341995252019,
    0.387079738972604337464,
    0.337785538912035898924,
    0.142869534408157156766,
    0.0290157910005329060432,
    0.00214558995388805277169,
    -0.679465575181126350155e-6,
    0.285225331782217055858e-7,
    -0.681149956853776992068e-9,
];
/// Polynomial coefficients for a denominator of `erf_inv_impl`
/// in the interval [0.75, 1] with x less than 3.
const ERF_INV_IMPL_CD: &[f64] = &[
    1.0,
    3.46625407242567245975,
    5.38168345707006855425,
    4.77846592945843778382,
    2.59301921623620271374,
    0.848854343457902036425,
    0.152264338295331783612,
    0.01105924229346489121,
];
/// Polynomial coefficients for a numerator of `erf_inv_impl`
/// in the interval [0.75, 1] with x between 3 and 6.
const ERF_INV_IMPL_DN: &[f64] = &[
    -0.0350353787183177984712,
    -0.00222426529213447927281,
    0.0185573306514231072324,
    0.00950804701325919603619,
    0.00187123492819559223345,
    0.000157544617424960554631,
    0.460469890584317994083e-5,
    -0.230404776911882601748e-9,
    0.266339227425782031962e-11,
];
/// Polynomial coefficients for a denominator of `erf_inv_impl`
/// in the interval [0.75, 1] with x between 3 and 6.
const ERF_INV_IMPL_DD: &[f64] = &[
    1.0,
    1.3653349817554063097,
    0.762059164553623404043,
    0.220091105764131249824,
    0.0341589143670947727934,
    0.00263861676657015992959,
    0.764675292302794483503e-4,
];
/// Polynomial coefficients for a numerator of `erf_inv_impl`
/// in the interval [0.75, 1] with x between 6 and 18.
const ERF_INV_IMPL_EN: &[f64] = &[
    -0.0167431005076633737133,
    -0.00112951438745580278863,
    0.00105628862152492910091,
    0.000209386317487588078668,
    0.149624783758342370182e-4,
    0.449696789927706453732e-6,
    0.462596163522878599135e-8,
    -0.281128735628831791805e-13,
    0.99055709973310326855e-16,
];
/// Polynomial coefficients for a denominator of `erf_inv_impl`
/// in the interval [0.75, 1] with x between 6 and 18.
const ERF_INV_IMPL_ED: &[f64] = &[
    1.0,
    0.591429344886417493481,
    0.138151865749083321638,
    0.0160746087093676504695,
    0.000964011807005165528527,
    0.275335474764726041141e-4,
    0.282243172016108031869e-6,
];
/// Polynomial coefficients for a numerator of `erf_inv_impl`
/// in the interval [0.75, 1] with x between 18 and 44.
const ERF_INV_IMPL_FN: &[f64] = &[
    -0.0024978212791898131227,
    -0.779190719229053954292e-5,
    0.254723037413027451751e-4,
    0.162397777342510920873e-5,
    0.396341011304801168516e-7,
    0.411632831190944208473e-9,
    0.145596286718675035587e-11,
    -0.116765012397184275695e-17,
];
/// Polynomial coefficients for a denominator of `erf_inv_impl`
/// in the interval [0.75, 1] with x between 18 and 44.
const ERF_INV_IMPL_FD: &[f64] = &[
    1.0,
    0.207123112214422517181,
    0.0169410838120975906478,
    0.000690538265622684595676,
    0.145007359818232637924e-4,
    0.144437756628144157666e-6,
    0.509761276599778486139e-9,
];
/// Polynomial coefficients for a numerator of `erf_inv_impl`
/// in the interval [0.75, 1] with x greater than 44.
const ERF_INV_IMPL_GN: &[f64] = &[
    -0.000539042911019078575891,
    -0.28398759004727721098e-6,
    0.899465114892291446442e-6,
    0.229345859265920864296e-7,
    0.225561444863500149219e-9,
    0.947846627503022684216e-12,
    0.135880130108924861008e-14,
    -0.348890393399948882918e-21,
];
/// Polynomial coefficients for a denominator of `erf_inv_impl`
/// in the interval [0.75, 1] with x greater than 44.
const ERF_INV_IMPL_GD: &[f64] = &[
    1.0,
    0.0845746234001899436914,
    0.00282092984726264681981,
    0.468292921940894236786e-4,
    0.399968812193862100054e-6,
    0.161809290887904476097e-8,
    0.231558608310259605225e-11,
];

#[cfg(test)]
mod tests {
    use statrs::distribution::{ContinuousCDF, Normal};

    use super::*;

    /// Arguments spread over many scales: small and large shapes, rates near 0, 1/2 and 1.
    fn grid() -> Vec<f64> {
        let mut v = vec![
            1e-300, 1e-12, 1e-6, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.999,
        ];
        let mut x = 0.5f64;
        for _ in 0..60 {
            x = (x * 3.7 + 0.123_456_789).fract();
            v.push(x);
        }
        v
    }

    #[test]
    fn ln_gamma_is_statrs_bit_for_bit() {
        let mut x = 1e-6f64;
        while x < 1e9 {
            let (ours, theirs) = (ln_gamma(x), statrs::function::gamma::ln_gamma(x));
            assert_eq!(
                ours.to_bits(),
                theirs.to_bits(),
                "ln_gamma({x}): {ours} vs {theirs}"
            );
            x *= 1.37;
        }
    }

    #[test]
    fn beta_reg_is_statrs_bit_for_bit() {
        let shapes = [
            0.5, 1.0, 2.0, 3.5, 7.0, 100.0, 381.0, 12_345.0, 4e6, 2e7, 1e9,
        ];
        for a in shapes {
            for b in shapes {
                for x in grid().into_iter().chain([0.0, 1.0, 1.0 - 1e-16]) {
                    let ours = beta_reg(a, b, x);
                    let theirs = statrs::function::beta::beta_reg(a, b, x);
                    assert_eq!(
                        ours.to_bits(),
                        theirs.to_bits(),
                        "beta_reg({a}, {b}, {x}): {ours} vs {theirs}"
                    );
                }
            }
        }
    }

    #[test]
    fn normal_quantile_is_statrs_bit_for_bit() {
        let n = Normal::standard();
        for q in grid()
            .into_iter()
            .chain([0.0, 1.0, 1e-20, 1.0 - 1e-12, 0.975, 0.999_999_5])
        {
            let (ours, theirs) = (standard_normal_quantile(q), n.inverse_cdf(q));
            assert_eq!(
                ours.to_bits(),
                theirs.to_bits(),
                "quantile({q}): {ours} vs {theirs}"
            );
        }
    }

    #[test]
    #[should_panic(expected = "x = 1.5 must be in [0, 1]")]
    fn beta_reg_names_an_argument_out_of_range() {
        beta_reg(1.0, 1.0, 1.5);
    }
}
