//! Shared glue for the bloomlab binaries: flag parsing helpers, a counting allocator, the build
//! revision, and the logic of the `bloomlab guava` commands ([`guava`]), so that the binaries
//! only parse flags and call a library.

pub mod guava;
pub mod redis_costs;
pub mod redis_sweep;
pub mod scale;
pub mod sketch_sweep;

pub use bloomlab_harness::memory::CountingAlloc;

pub use bloomlab_harness::preflight::MAX_COUNT;

/// Parses a count that may be written in scientific notation (`1e6`, `2.5e5`, `100000`): the one
/// count parser of every binary. Counts run from 1 to 2^53 ([`MAX_COUNT`]: every integer up to it
/// is an exact `f64`, so `1e6` and `1000000` are the same count).
///
/// Errors name the value and say it must be a whole number from 1 to 2^53.
pub fn parse_count(s: &str) -> Result<u64, String> {
    parse_count_named("n", 1, s)
}

/// [`parse_count`] with the smallest allowed count `min` (0 or 1) and the name `what` shown in
/// errors (e.g. `--max-queries`).
pub fn parse_count_named(what: &str, min: u64, s: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "{what} = {s:?} is invalid: it must be a whole number from {min} to 2^53 \
             (scientific notation allowed, e.g. 1e6)"
        )
    };
    let t = s.trim();
    let v = match t.parse::<u64>() {
        Ok(v) => v,
        Err(_) => {
            let f: f64 = t.parse().map_err(|_| bad())?;
            if !(f.is_finite() && f >= 0.0 && f <= MAX_COUNT as f64 && f.fract() == 0.0) {
                return Err(bad());
            }
            f as u64
        }
    };
    if (min..=MAX_COUNT).contains(&v) {
        Ok(v)
    } else {
        Err(bad())
    }
}

/// Parses a comma-separated list with `item`, naming the flag and the bad item on error.
pub fn parse_list<T>(
    flag: &str,
    s: &str,
    item: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let out: Vec<T> = s
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| item(x).map_err(|e| format!("--{flag}: {e}")))
        .collect::<Result<_, _>>()?;
    if out.is_empty() {
        return Err(format!("--{flag} {s:?}: give at least one value"));
    }
    Ok(out)
}

/// Parses a float (scientific notation allowed), naming `what` and the value on error.
pub fn parse_f64(what: &str, s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .map_err(|_| format!("{what} = {s:?} is not a number"))
}

/// `git describe --always --dirty` of the working tree the binary runs in, or `unknown`.
pub fn git_revision() -> String {
    std::process::Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_accept_scientific_notation_and_reject_fractions() {
        assert_eq!(parse_count("1e4"), Ok(10_000));
        assert_eq!(parse_count("2.5e5"), Ok(250_000));
        assert_eq!(parse_count("123"), Ok(123));
        for bad in [
            "0",
            "1.5",
            "-3",
            "abc",
            "1e300",
            "NaN",
            "inf",
            "",
            "9007199254740993",
        ] {
            let err = parse_count(bad).unwrap_err();
            assert!(
                err.contains(&format!("{bad:?}")) && err.contains("2^53"),
                "{bad}: {err}"
            );
        }
        assert_eq!(parse_count("9007199254740992"), Ok(MAX_COUNT));
        assert_eq!(parse_count_named("--n", 0, "0"), Ok(0));
        let err = parse_count_named("--max-queries", 1, "0").unwrap_err();
        assert!(err.starts_with("--max-queries = \"0\""), "{err}");
    }

    #[test]
    fn lists_name_the_flag_and_item() {
        assert_eq!(
            parse_list("n", "1e4, 1e5", parse_count),
            Ok(vec![10_000, 100_000])
        );
        let err = parse_list("n", "1e4,x", parse_count).unwrap_err();
        assert!(err.contains("--n") && err.contains("\"x\""), "{err}");
    }
}
