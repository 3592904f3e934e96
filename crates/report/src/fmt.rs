//! Number formatting shared by plots and the summary.

/// `x` to `sig` significant digits, in plain notation between 1e-3 and 1e6, scientific outside.
pub(crate) fn sig(x: f64, sig: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if (1e-3..1e6).contains(&a) {
        let decimals = (sig as i32 - 1 - a.log10().floor() as i32).max(0) as usize;
        format!("{x:.decimals$}")
    } else {
        format!("{x:.prec$e}", prec = sig.saturating_sub(1))
    }
}

/// An axis tick: powers of ten outside [1e-2, 1e4] as `1e-5`, others with trailing zeros trimmed.
pub(crate) fn tick(x: f64) -> String {
    if x <= 0.0 || !x.is_finite() {
        return sig(x, 3);
    }
    let e = x.log10();
    if (e - e.round()).abs() < 1e-9 && !(-2.0..=4.0).contains(&e.round()) {
        return format!("1e{}", e.round() as i64);
    }
    let s = sig(x, 3);
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// An axis tick for a count: from 1e4 up in the `2e5` style when the mantissa is a whole number
/// (long runs of zeros are hard to read on an axis), others as [`tick`] writes them.
pub(crate) fn count_tick(x: f64) -> String {
    if x >= 1e4 {
        let e = x.log10().floor();
        let m = x / 10f64.powf(e);
        if (m - m.round()).abs() < 1e-9 {
            return format!("{}e{}", m.round() as i64, e as i64);
        }
    }
    tick(x)
}

/// Bytes in B, KiB, MiB or GiB with three significant digits.
pub(crate) fn bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = b as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{b} B")
    } else {
        format!("{} {}", sig(v, 3), UNITS[unit])
    }
}

/// A percentage with `sig` significant digits, e.g. `1.02%`.
pub(crate) fn percent(x: f64) -> String {
    format!("{}%", sig(x * 100.0, 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(sig(0.012345, 3), "0.0123");
        assert_eq!(sig(1.5e-5, 3), "1.50e-5");
        assert_eq!(sig(123.4, 3), "123");
        assert_eq!(tick(1e-5), "1e-5");
        assert_eq!(tick(0.01), "0.01");
        assert_eq!(tick(2.0), "2");
        assert_eq!(tick(1e6), "1e6");
        assert_eq!(count_tick(1e4), "1e4");
        assert_eq!(count_tick(2e5), "2e5");
        assert_eq!(count_tick(5000.0), "5000");
        assert_eq!(count_tick(500.0), "500");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.50 KiB");
        assert_eq!(percent(0.0102), "1.02%");
    }
}
