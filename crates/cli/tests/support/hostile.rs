//! Helpers of the hostile-input tests, shared by crates/cli/tests/hostile_input.rs,
//! crates/scale/tests/hostile_input.rs and crates/tool/tests/hostile_input.rs (each binary's tests
//! live in its own package).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Far above what a refused run costs (a process start and some file checks); far below what any
/// measurement here would take.
pub const PREFLIGHT_TIME: Duration = Duration::from_secs(5);

/// A finished child: exit code, output, wall time.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

pub fn run(bin: &str, args: &[&str]) -> Run {
    let start = Instant::now();
    let out = Command::new(bin).args(args).output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: start.elapsed(),
    }
}

/// Runs `bin` with `args` and asserts: exit 2, every `wanted` text in stderr, nothing on stdout
/// (no table, no rows), quick. Returns stderr.
pub fn refused(bin: &str, args: &[&str], wanted: &[&str]) -> String {
    let r = run(bin, args);
    let what = format!(
        "{bin} {args:?}: exit {:?}\nstderr: {}\nstdout: {}",
        r.code, r.stderr, r.stdout
    );
    assert_eq!(r.code, Some(2), "{what}");
    for w in wanted {
        assert!(r.stderr.contains(w), "{what}\nlacks {w:?}");
    }
    assert!(r.stdout.is_empty(), "{what}");
    assert!(r.took < PREFLIGHT_TIME, "{what}\ntook {:?}", r.took);
    r.stderr
}

/// A scratch directory for one test, removed first if a previous run left it.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "bloomlab-{}-{}-{name}",
        env!("CARGO_PKG_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
