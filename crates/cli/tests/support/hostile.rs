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

/// Runs `bin` with `args`, killing it if it has not finished within `limit`: a case that used to
/// hang fails with the time it was given instead of hanging the test run. `code` is None when it
/// was killed (or died of a signal).
pub fn run_within(bin: &str, args: &[&str], limit: Duration) -> Run {
    use std::process::Stdio;
    let start = Instant::now();
    let mut child = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drained on their own threads, so a child that writes much never blocks on a full pipe.
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = r.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let mut killed = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            killed = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = err.join().unwrap();
    if killed {
        stderr.push_str(&format!("\n[killed after {limit:?}: it did not finish]"));
    }
    Run {
        code: if killed { None } else { status.code() },
        stdout: out.join().unwrap(),
        stderr,
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
