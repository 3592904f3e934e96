//! Number formatting of the scenario reports (their tables print these exact strings).

/// `x` with `digits` significant digits: plain notation for magnitudes from 1e-4 to below 1e6,
/// scientific outside; `0` for zero and Rust's own text for NaN and infinities.
pub fn sig(x: f64, digits: usize) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-4..6).contains(&mag) {
        return format!("{x:.*e}", digits.saturating_sub(1));
    }
    let decimals = (digits as i32 - 1 - mag).max(0) as usize;
    format!("{x:.decimals$}")
}

/// Nanoseconds in the unit that keeps them readable (ns, µs, ms or s, 3 significant digits);
/// `n/a` when not finite (the mean of an empty histogram).
pub fn dur_ns(ns: f64) -> String {
    if !ns.is_finite() {
        "n/a".into()
    } else if ns < 1e3 {
        format!("{} ns", sig(ns, 3))
    } else if ns < 1e6 {
        format!("{} µs", sig(ns / 1e3, 3))
    } else if ns < 1e9 {
        format!("{} ms", sig(ns / 1e6, 3))
    } else {
        format!("{} s", sig(ns / 1e9, 3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sig_and_dur_ns_print_the_reports_strings() {
        assert_eq!(sig(0.0, 3), "0");
        assert_eq!(sig(0.012345, 3), "0.0123");
        assert_eq!(sig(12345.0, 3), "12345");
        assert_eq!(sig(1.5e-5, 3), "1.50e-5");
        assert_eq!(sig(2.5e6, 2), "2.5e6");
        assert_eq!(sig(f64::NAN, 3), "NaN");
        assert_eq!(dur_ns(82.0), "82.0 ns");
        assert_eq!(dur_ns(1500.0), "1.50 µs");
        assert_eq!(dur_ns(2e6), "2.00 ms");
        assert_eq!(dur_ns(3.2e9), "3.20 s");
        assert_eq!(dur_ns(f64::NAN), "n/a");
    }
}
