//! Helpers of the output fault tests, shared by crates/cli/tests/outputs.rs,
//! crates/scale/tests/outputs.rs and crates/tool/tests/outputs.rs (each binary's tests live in its
//! own package, as cargo only gives a package's tests the paths of that package's binaries).

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The lock file an output directory holds while a run writes it.
pub const LOCK: &str = ".bloomlab.lock";

/// A fresh directory under the system temp dir, removed when dropped.
pub struct Dir(pub PathBuf);

impl Dir {
    pub fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("bloomlab-outputs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A file's name, size and a digest of its bytes.
pub type Entry = (String, u64, u64);

/// Every entry of `dir` but the lock file, sorted by name: files with their size and a digest of
/// their bytes (equal snapshots: byte-identical files), directories with size and digest 0.
pub fn snapshot(dir: &Path) -> Vec<Entry> {
    use std::hash::{Hash as _, Hasher as _};
    let mut v: Vec<Entry> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != LOCK)
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() {
                return (name, 0, 0);
            }
            let bytes = std::fs::read(e.path()).unwrap();
            let mut h = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut h);
            (name, bytes.len() as u64, h.finish())
        })
        .collect();
    v.sort();
    v
}

pub fn names(snap: &[Entry]) -> Vec<&str> {
    snap.iter().map(|(n, _, _)| n.as_str()).collect()
}

/// Exit status, stdout and stderr of a finished child, for assertion messages.
pub fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `cmd` with writes limited to files of at most `bytes` (SIGXFSZ ignored, so a write past it
/// fails with EFBIG, as on a full disk).
pub fn with_file_size_limit(mut cmd: Command, bytes: u64) -> Output {
    // SAFETY: between fork and exec only async-signal-safe calls are made (signal, setrlimit).
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: bytes as libc::rlim_t,
                rlim_max: bytes as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

/// `bin --help` documents the exit codes, 130 included.
pub fn assert_exit_codes_documented(bin: &str) {
    let out = Command::new(bin).arg("--help").output().unwrap();
    assert!(out.status.success(), "{bin}: {}", text(&out));
    let help = String::from_utf8_lossy(&out.stdout);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(at) = help.find("Exit status:") else {
        panic!("{bin} --help has no \"Exit status:\": {help}");
    };
    let codes = &help[at..];
    for code in [" 0 ", " 1 ", " 2 ", " 130 interrupted"] {
        assert!(
            codes.contains(code),
            "{bin} --help does not document {code:?}: {codes}"
        );
    }
}

/// `bin args`, run while this process holds the output directory, is refused at once: exit 2,
/// naming the directory's holder (this process).
pub fn assert_refused_as_busy(bin: &str, args: &[String]) {
    let holder = format!("pid {} ", std::process::id());
    let started = Instant::now();
    let out = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let what = format!("{bin} {args:?}: {}", text(&out));
    assert_eq!(out.status.code(), Some(2), "{what}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("in use by another run") && err.contains(&holder),
        "{what}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{what}: not refused at once"
    );
}

/// Longest wait for a child to take its lock or finish: far above what these small runs take on a
/// loaded 2-core machine, so a timeout means a hang.
pub const PATIENCE: Duration = Duration::from_secs(45);

pub fn spawn(bin: &str, args: &[&str]) -> Child {
    Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until `child` has taken the lock of `dir` (its pid is in the lock file), i.e. it is past
/// its input checks and measuring.
pub fn wait_for_lock(child: &mut Child, dir: &Path) {
    let started = Instant::now();
    let want = format!("pid {} ", child.id());
    loop {
        if std::fs::read_to_string(dir.join(LOCK)).is_ok_and(|s| s.starts_with(&want)) {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "the child ended ({status}) before taking the lock of {}",
                dir.display()
            );
        }
        assert!(
            started.elapsed() < PATIENCE,
            "no lock taken in {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn sigint(child: &Child) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) with a pid this test spawned and has not yet reaped.
    let rc = unsafe { libc::kill(pid, libc::SIGINT) };
    assert_eq!(rc, 0, "kill -INT {pid}");
}

pub fn finish(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

/// A `git` first in PATH that notes being run in `dir/git-was-run` and prints a fake revision.
/// Returns the PATH to run a binary with, and the marker, which exists only if git was run.
pub fn fake_git(dir: &Path) -> (String, PathBuf) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let marker = dir.join("git-was-run");
    let fake = bin.join("git");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho run >> '{}'\necho fake-revision\n",
            marker.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (path, marker)
}

/// Column `name` of every row of the CSV file `csv`.
pub fn csv_column(csv: &Path, name: &str) -> Vec<String> {
    let mut reader = csv::Reader::from_path(csv).unwrap();
    let col = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no {name} column in {}", csv.display()));
    reader
        .records()
        .map(|r| r.unwrap()[col].to_owned())
        .collect()
}
