//! Hostile input to `scale`: every case exits with status 2 and a message naming the value,
//! before anything is measured. The other binaries' cases: crates/cli/tests/hostile_input.rs and
//! crates/tool/tests/hostile_input.rs.

#[allow(dead_code)] // each package's tests use some of the helpers
#[path = "../../cli/tests/support/hostile.rs"]
mod support;
use support::*;

const SCALE: &str = env!("CARGO_BIN_EXE_scale");

/// Issue 28, case 13: count flags' errors said `n = "0"` whatever the flag (e.g. `scale
/// --memory-limit 0`). Each names its own flag and the expected form.
#[test]
fn count_flags_name_themselves_in_their_errors() {
    let dir = scratch("scale-flag-names");
    for (flag, extra) in [
        ("--memory-limit", &[][..]),
        ("--check-members", &[][..]),
        ("--max-queries", &[][..]),
        ("--n", &[][..]),
        ("--bits", &["--hashes", "3"][..]),
    ] {
        let mut args = vec![flag, "0", "--out", s(&dir)];
        args.extend_from_slice(extra);
        let err = refused(
            SCALE,
            &args,
            &[&format!("{flag} = \"0\""), "whole number from 1 to 2^53"],
        );
        assert!(!err.contains("n = \"0\"") || flag == "--n", "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
