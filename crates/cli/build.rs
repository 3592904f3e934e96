//! Records the build's revision as `BLOOMLAB_REVISION` (read by `bloomlab_cli::git_revision`):
//! `git describe --always` of the checkout being built, with `-dirty` when the code (crates/,
//! benches/, the manifests, .cargo/) differs from that commit, tracked or untracked; `unknown`
//! outside a git checkout. Taken here, at build time, so that a binary never runs git in the
//! directory its user happens to stand in, and a report's revision is the code that made it.
//!
//! Also records the build's profile directory as `BLOOMLAB_BUILD_PROFILE` (read by
//! `bloomlab_cli::build_profile`): `release` for `cargo run --release` (and `cargo bench`, which
//! shares it), `measure` for `cargo run --profile measure`, `debug` for a dev build; timings say
//! which build made them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What counts as code, relative to the workspace root: a change here makes the build `-dirty`
/// and re-runs this script. Reports and docs elsewhere do not change what the binaries compute.
const CODE: [&str; 6] = [
    "crates",
    "benches",
    "Cargo.toml",
    "Cargo.lock",
    ".cargo",
    "rust-toolchain.toml",
];

fn git(root: &Path, args: &[&str]) -> Option<(bool, String)> {
    let out = Command::new("git")
        // Read only: no index refresh written back into the checkout being built.
        .arg("--no-optional-locks")
        .args(args)
        .current_dir(root)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    Some((out.status.success(), text))
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest.join("..").join("..");
    for path in CODE {
        let p = root.join(path);
        // A path that does not exist would make cargo re-run the script on every build.
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    let revision = revision(&root).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BLOOMLAB_REVISION={revision}");
    println!("cargo:rustc-env=BLOOMLAB_BUILD_PROFILE={}", profile_dir());
}

/// The profile's output directory: OUT_DIR is `<target>/<profile dir>/build/<package>-<hash>/out`.
fn profile_dir() -> String {
    std::env::var_os("OUT_DIR")
        .map(PathBuf::from)
        .and_then(|out| {
            out.ancestors()
                .nth(3)
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn revision(root: &Path) -> Option<String> {
    // Where this checkout keeps HEAD, the branch HEAD names and the packed refs (a worktree's
    // HEAD is its own, its refs shared): a commit or checkout re-runs the script. Only the
    // checked-out branch's ref, not all of refs/: other worktrees' commits do not change this
    // build's revision. Not the index: `git add` changes neither the diff against HEAD nor the
    // untracked files this script reads, and any `git status` (this script's own `git diff`
    // included, before `--no-optional-locks`) may rewrite it, which re-ran the script and rebuilt
    // every binary after the tests.
    let mut watched = vec!["HEAD".to_owned(), "packed-refs".into()];
    if let Some((true, branch)) = git(root, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for what in &watched {
        if let Some((true, path)) = git(root, &["rev-parse", "--git-path", what]) {
            let path = root.join(path);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    let (ok, describe) = git(root, &["describe", "--always"])?;
    if !ok || describe.is_empty() {
        return None;
    }
    let code: Vec<&str> = CODE
        .iter()
        .copied()
        .filter(|p| root.join(p).exists())
        .collect();
    let mut diff = vec!["diff", "--quiet", "HEAD", "--"];
    diff.extend(&code);
    let changed = !git(root, &diff)?.0;
    let mut others = vec!["ls-files", "--others", "--exclude-standard", "--"];
    others.extend(&code);
    let untracked = git(root, &others).is_some_and(|(ok, list)| ok && !list.is_empty());
    Some(if changed || untracked {
        format!("{describe}-dirty")
    } else {
        describe
    })
}
