//! Shared glue for the bloomlab binaries: flag parsing helpers, a counting allocator, the build
//! revision, and the logic of the `bloomlab guava` commands ([`guava`]), so that the binaries
//! only parse flags and call a library.

pub mod guava;
pub mod redis_sweep;
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

/// Makes Ctrl-C (SIGINT) end the process with exit status 130 without leaving a partial report in
/// `out`: the files staged and not committed are removed (a commit in progress is finished
/// first), a line on stderr says what this run wrote, and the process exits at once. For runs
/// that cannot stop cleanly between steps (the sweep); `scale` polls a flag instead.
pub fn exit_130_on_interrupt(program: &'static str, out: &bloomlab_report::output::OutputDir) {
    use bloomlab_report::output::Abandoned;
    let handle = out.interrupt_handle();
    let set = ctrlc::set_handler(move || {
        let dir = handle.dir().display();
        match handle.abandon() {
            Abandoned::NothingWritten => eprintln!(
                "\n{program}: interrupted: this run wrote nothing; the previous report in {dir} \
                 (if any) is as it was"
            ),
            Abandoned::AfterCommit => {
                eprintln!("\n{program}: interrupted after its report was written to {dir}")
            }
        }
        std::process::exit(130);
    });
    if let Err(e) = set {
        eprintln!("{program}: warning: Ctrl-C will not stop the run cleanly: {e}");
    }
}

/// The build's revision: `git describe --always` of the checkout the binary was built from, with
/// `-dirty` when its code (crates/, benches/, the manifests) differed from that commit at build
/// time; `unknown` when it was not built from a git checkout. Recorded by `build.rs`, so a binary
/// never runs git in whatever directory its user stands in.
pub fn git_revision() -> String {
    env!("BLOOMLAB_REVISION").to_owned()
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
