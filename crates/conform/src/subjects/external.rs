//! The external subjects bloomlab knows: adapters in other languages, each started as
//! `bash <repo>/scripts/conform/adapter LAUNCHER` and reached over the [`crate::process`]
//! protocol. Their libraries are installed by the project's own scripts (`scripts/conform/`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::process::Command;

/// The directory of the adapters and their launcher, relative to the repository root.
pub const SCRIPTS_DIR: &str = "scripts/conform";
/// The launcher script every external subject is started through, inside [`SCRIPTS_DIR`].
pub const LAUNCHER: &str = "adapter";

/// One external subject: the launcher's argument and the name its HELLO declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct External {
    /// The argument of `scripts/conform/adapter` (`pybloom-live`, `guava`, ...).
    pub launcher: &'static str,
    /// The subject name its HELLO declares and reports show (`python/pybloom-live`, ...).
    pub name: &'static str,
    /// Whether a run of several subjects at a time starts it before the others: true for the one
    /// whose pass outlasts all the others together, so the others run beside it instead of
    /// before it. Reports keep [`ALL`]'s order either way.
    pub start_first: bool,
}

/// Every external subject, in report order: the libraries, then the reference exact set and the
/// null adapter (the protocol's own cost).
///
/// `node/bloom-filters` starts first: the library hashes with xxhashjs, 64-bit arithmetic in
/// JavaScript (about 30 us an insert in its speed clause), so its quick pass took 151 s of the
/// 209 s all the quick passes took together (`conform --quick --all --jobs 2`, 2 cores,
/// 2026-12-04), 107 s of it on key-families' long keys (4 KiB then; 1,101 bytes since).
pub const ALL: [External; 6] = [
    External {
        launcher: "pybloom-live",
        name: "python/pybloom-live",
        start_first: false,
    },
    External {
        launcher: "rbloom",
        name: "python/rbloom",
        start_first: false,
    },
    External {
        launcher: "bloom-filters",
        name: "node/bloom-filters",
        start_first: true,
    },
    External {
        launcher: "guava",
        name: "java/guava",
        start_first: false,
    },
    External {
        launcher: "exact-set",
        name: "python/exact-set",
        start_first: false,
    },
    // The launcher's `null` is the Python null adapter (scripts/conform/null.py), which declares
    // `python/null`: it measures what the protocol and Python cost per key. The Rust null adapter
    // (`conform-null-adapter`, HELLO name `null`) measures the protocol alone.
    External {
        launcher: "null",
        name: "python/null",
        start_first: false,
    },
];

/// The external subject named `name` (its HELLO name, or its launcher name), if bloomlab knows it.
pub fn by_name(name: &str) -> Option<External> {
    ALL.into_iter()
        .find(|e| e.name == name || e.launcher == name)
}

impl External {
    /// How to start it from the adapters' directory `scripts` (the repository's
    /// `scripts/conform`): `bash <scripts>/adapter LAUNCHER`, each request after HELLO limited to
    /// `timeout`. The plain-Python adapters (exact-set, null) get `--python INTERPRETER`, the
    /// program `python3` resolves to ([`python3`]), so that a version manager's shim is not
    /// run again at every start: the hunt starts a fresh process for each of its ~200 round trips,
    /// and pyenv's shim adds about 0.1 s to each.
    pub fn command(&self, scripts: &Path, timeout: Duration) -> Command {
        let script: PathBuf = scripts.join(LAUNCHER);
        let mut argv = vec![OsString::from("bash"), script.into_os_string()];
        if matches!(self.launcher, "exact-set" | "null")
            && let Some(python) = python3()
        {
            argv.extend([OsString::from("--python"), python.clone()]);
        }
        argv.push(OsString::from(self.launcher));
        Command { argv, timeout }
    }
}

/// The interpreter `python3` on PATH runs (`sys.executable`), asked once per process; `None`
/// when it cannot be asked (the launcher then starts `python3` itself and says what failed).
pub fn python3() -> Option<&'static OsString> {
    static PYTHON: std::sync::OnceLock<Option<OsString>> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let out = std::process::Command::new("python3")
                .args(["-c", "import sys; sys.stdout.write(sys.executable)"])
                .stdin(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .output()
                .ok()?;
            let path = String::from_utf8(out.stdout).ok()?;
            (out.status.success() && Path::new(&path).is_absolute()).then(|| path.into())
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_by_either_spelling() {
        for e in ALL {
            assert_eq!(by_name(e.name), Some(e));
            assert_eq!(by_name(e.launcher), Some(e));
            assert_eq!(ALL.iter().filter(|o| o.name == e.name).count(), 1);
        }
        assert_eq!(by_name("python/nope"), None);
        let c = by_name("guava").unwrap().command(
            &Path::new("/repo").join(SCRIPTS_DIR),
            Duration::from_secs(3),
        );
        assert_eq!(
            c.argv,
            ["bash", "/repo/scripts/conform/adapter", "guava"].map(OsString::from)
        );
        assert_eq!(c.timeout, Duration::from_secs(3));
        let c = by_name("exact-set")
            .unwrap()
            .command(Path::new("/s"), Duration::from_secs(3));
        let expected: Vec<OsString> = match python3() {
            Some(py) => vec![
                "bash".into(),
                "/s/adapter".into(),
                "--python".into(),
                py.clone(),
                "exact-set".into(),
            ],
            None => vec!["bash".into(), "/s/adapter".into(), "exact-set".into()],
        };
        assert_eq!(c.argv, expected);
    }
}
