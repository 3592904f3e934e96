//! Outputs that are never a mix of two runs, never stale halves, never truncated.
//!
//! Two tools, used by every report writer of the workspace:
//!
//! - [`OutputDir`]: one run's hold on an output directory. [`OutputDir::lock`] takes an exclusive
//!   lock on a lock file inside it ([`LOCK_NAME`], which records the holder's pid and command
//!   line), so a second run on the same directory is refused at once ([`OutputError::Busy`] names
//!   the directory and the holder). The run writes its files into a staging directory inside the
//!   output directory ([`OutputDir::staging`]); [`OutputDir::commit`] fsyncs them and renames each
//!   into place. Until then the previous report is untouched; if the run fails, is dropped or is
//!   interrupted ([`Interrupt::abandon`]), the staged files are removed and the previous report
//!   stays whole.
//! - [`write_atomic`] / [`write_atomic_with`] for a writer of one file: a temporary file in the
//!   same directory, fsynced, then renamed over the target, so the target is either the old file
//!   or the new one, never a truncated mix (a full disk fails the write, not the old file).
//!
//! The renames of one commit are atomic file by file, not as a set: only a crash (power loss,
//! `kill -9`) in the middle of the renames, a window of microseconds after every byte is already
//! on disk, can leave a directory with some new and some old files.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read as _, Seek as _, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// The lock file inside a locked output directory. It stays after the run (removing a lock file
/// would let a third run lock a new file while a second still holds the removed one); it holds the
/// current holder's pid and command line while the lock is held, and is emptied on release.
pub const LOCK_NAME: &str = ".bloomlab.lock";

/// Prefix of the staging directories inside an output directory. A staging directory left by a
/// run that was killed (SIGKILL, power loss) is removed by the next run that takes the lock.
pub const STAGING_PREFIX: &str = ".bloomlab-staging-";

/// Why an output could not be locked, staged or written. Every variant names its path.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// Another run holds the directory's lock.
    #[error(
        "output directory {} is in use by another run ({holder}); wait for it to finish or give \
         another output directory",
        dir.display()
    )]
    Busy {
        /// The output directory.
        dir: PathBuf,
        /// Who holds its lock, as the lock file records it: pid, start time and command line.
        holder: String,
    },
    /// A file or directory could not be created, opened, written, synced or renamed.
    #[error("{action} {}: {cause}", path.display())]
    Io {
        /// What was being done (`"creating"`, `"renaming"`, ...).
        action: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The operating system's reason.
        cause: std::io::Error,
    },
    /// The run was interrupted: nothing more is written.
    #[error("the run was interrupted: nothing was written to {}", dir.display())]
    Interrupted {
        /// The output directory, left as it was before the run.
        dir: PathBuf,
    },
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> OutputError + 'a {
    move |cause| OutputError::Io {
        action,
        path: path.to_path_buf(),
        cause,
    }
}

/// What the staged files of a run are.
#[derive(Debug, Default)]
struct State {
    /// The staging directory of the files not yet committed (removed when dropped).
    staging: Option<tempfile::TempDir>,
    /// Set by [`Interrupt::abandon`]: nothing may be staged or committed after it.
    interrupted: bool,
    /// Whether a commit has moved files into the output directory.
    committed: bool,
}

/// One run's exclusive hold on an output directory, with its staged files. Dropping it removes
/// whatever was staged and not committed, and releases the lock (the operating system releases it
/// too when the process ends, however it ends).
#[derive(Debug)]
pub struct OutputDir {
    dir: PathBuf,
    lock: File,
    state: Arc<Mutex<State>>,
}

/// Who holds a lock, as written into the lock file: pid, start time and command line.
fn holder_record() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let command: Vec<String> = std::env::args().collect();
    format!(
        "pid {} since {}: {}",
        std::process::id(),
        crate::date::date_utc(now),
        command.join(" ")
    )
}

impl OutputDir {
    /// Creates `dir` (and its parents) if missing and takes its lock without waiting.
    ///
    /// Errors: [`OutputError::Busy`] when another process (or another `OutputDir` of this one)
    /// holds the lock, naming the holder as its lock file records it; [`OutputError::Io`] when
    /// the directory or the lock file cannot be created. Staging directories left by killed runs
    /// are removed once the lock is held.
    pub fn lock(dir: &Path) -> Result<Self, OutputError> {
        if dir.exists() && !dir.is_dir() {
            return Err(OutputError::Io {
                action: "using as the output directory",
                path: dir.to_path_buf(),
                cause: std::io::Error::other("it exists and is not a directory"),
            });
        }
        std::fs::create_dir_all(dir).map_err(io("creating directory", dir))?;
        let path = dir.join(LOCK_NAME);
        let mut lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io("opening the lock file", &path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = lock.read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(OutputError::Busy {
                    dir: dir.to_path_buf(),
                    holder: if holder.is_empty() {
                        format!("a process that has not yet recorded itself in {LOCK_NAME}")
                    } else {
                        holder.to_owned()
                    },
                });
            }
            Err(std::fs::TryLockError::Error(cause)) => {
                return Err(OutputError::Io {
                    action: "locking",
                    path,
                    cause,
                });
            }
        }
        let mut record = || -> std::io::Result<()> {
            lock.set_len(0)?;
            lock.seek(SeekFrom::Start(0))?;
            writeln!(lock, "{}", holder_record())?;
            lock.flush()
        };
        record().map_err(io("writing the lock file", &path))?;
        let out = Self {
            dir: dir.to_path_buf(),
            lock,
            state: Arc::default(),
        };
        out.remove_stale_staging()?;
        Ok(out)
    }

    /// Removes staging directories of earlier runs that did not end cleanly: with the lock held,
    /// no other run can be using one.
    fn remove_stale_staging(&self) -> Result<(), OutputError> {
        let entries = std::fs::read_dir(&self.dir).map_err(io("listing", &self.dir))?;
        for entry in entries.flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(STAGING_PREFIX)
            {
                let path = entry.path();
                std::fs::remove_dir_all(&path).map_err(io("removing", &path))?;
            }
        }
        Ok(())
    }

    /// The locked output directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the state as it was: still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The staging directory to write this run's files into, by their final names (created on
    /// first use, inside the output directory, so that the commit's renames stay on one file
    /// system). Errors after an interrupt ([`OutputError::Interrupted`]).
    pub fn staging(&self) -> Result<PathBuf, OutputError> {
        let mut state = self.state();
        if state.interrupted {
            return Err(OutputError::Interrupted {
                dir: self.dir.clone(),
            });
        }
        if state.staging.is_none() {
            let staging = tempfile::Builder::new()
                .prefix(STAGING_PREFIX)
                .tempdir_in(&self.dir)
                .map_err(io("creating a staging directory in", &self.dir))?;
            state.staging = Some(staging);
        }
        Ok(state
            .staging
            .as_ref()
            .map(|s| s.path().to_path_buf())
            .expect("created above"))
    }

    /// Moves every file staged since the last commit into the output directory: each is fsynced,
    /// then renamed over the file of the same name, then the directory is fsynced. Returns the
    /// final paths, sorted by name. With nothing staged, commits nothing and returns no path.
    ///
    /// Errors (a sync or rename failed; [`OutputError::Interrupted`] after an interrupt) leave the
    /// files not yet renamed staged, to be removed when this value is dropped.
    pub fn commit(&self) -> Result<Vec<PathBuf>, OutputError> {
        let mut state = self.state();
        if state.interrupted {
            return Err(OutputError::Interrupted {
                dir: self.dir.clone(),
            });
        }
        let Some(staging) = state.staging.as_ref() else {
            return Ok(Vec::new());
        };
        let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(staging.path())
            .map_err(io("listing", staging.path()))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(io("listing", staging.path()))?;
        names.sort();
        // Every byte is on disk before the first rename, so the renames only switch names.
        for name in &names {
            let path = staging.path().join(name);
            if path.is_dir() {
                return Err(OutputError::Io {
                    action: "committing",
                    path,
                    cause: std::io::Error::other("staged directories are not supported"),
                });
            }
            File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(io("syncing", &path))?;
        }
        let mut done = Vec::with_capacity(names.len());
        for name in &names {
            let from = staging.path().join(name);
            let to = self.dir.join(name);
            std::fs::rename(&from, &to).map_err(io("renaming into place", &to))?;
            done.push(to);
        }
        sync_dir(&self.dir)?;
        // The staging directory is empty now; dropping it removes it.
        state.staging = None;
        state.committed |= !done.is_empty();
        Ok(done)
    }

    /// Writes one whole report: `write` puts its files into the staging directory (by their final
    /// names), then they are committed together. On any error nothing is renamed into place, the
    /// staged files are discarded and the previous report stays whole. Returns what `write`
    /// returned; map the paths it names with [`placed`](Self::placed).
    pub fn publish<T, E: From<OutputError>>(
        &self,
        write: impl FnOnce(&Path) -> Result<T, E>,
    ) -> Result<T, E> {
        let staging = self.staging()?;
        let written = write(&staging).inspect_err(|_| self.discard())?;
        self.commit()?;
        Ok(written)
    }

    /// Where a file written into the staging directory stands once committed: the same name in
    /// the output directory.
    pub fn placed(&self, staged: &Path) -> PathBuf {
        self.dir.join(staged.file_name().unwrap_or_default())
    }

    /// Removes the files staged since the last commit.
    pub fn discard(&self) {
        self.state().staging = None;
    }

    /// A handle for a signal handler (it is `Send` and outlives borrows of `self`).
    pub fn interrupt_handle(&self) -> Interrupt {
        Interrupt {
            dir: self.dir.clone(),
            state: Arc::clone(&self.state),
        }
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        // Here, not when the state is dropped: an [`Interrupt`] handle (kept by a signal handler
        // for the life of the process) shares the state.
        self.discard();
        // The holder record goes before the lock is released (when `lock` closes).
        let _ = self.lock.set_len(0);
    }
}

/// What [`Interrupt::abandon`] found. In both cases the files staged since the last commit (if
/// any) were removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abandoned {
    /// No commit was made: the run wrote nothing into the output directory, and the previous
    /// report there is whole.
    NothingWritten,
    /// Earlier commits of this run stand (each a whole set of files); nothing after them was
    /// written.
    AfterCommit,
}

/// Stops an [`OutputDir`] from a signal handler: see [`Interrupt::abandon`].
#[derive(Debug, Clone)]
pub struct Interrupt {
    dir: PathBuf,
    state: Arc<Mutex<State>>,
}

impl Interrupt {
    /// Removes the files staged and not committed, and refuses any later staging or commit. A
    /// commit in progress is waited for (it holds the same mutex), so a report is never half
    /// committed by an interrupt; the caller may then exit at once.
    pub fn abandon(&self) -> Abandoned {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.interrupted = true;
        state.staging = None;
        if state.committed {
            Abandoned::AfterCommit
        } else {
            Abandoned::NothingWritten
        }
    }

    /// The output directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn sync_dir(dir: &Path) -> Result<(), OutputError> {
    // A directory's fsync makes its renames durable (Linux, the BSDs); elsewhere opening a
    // directory for sync may not be supported, and the renames are still atomic.
    if cfg!(unix) {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io("syncing directory", dir))?;
    }
    Ok(())
}

/// Writes `bytes` to `path` whole or not at all: see [`write_atomic_with`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Writes `path` whole or not at all: `write` fills a temporary file in the same directory
/// (created if missing), which is flushed, fsynced and renamed over `path`. On any error the
/// temporary file is removed and an existing `path` is left byte for byte as it was.
///
/// The new file gets the permissions an existing `path` had, else those `File::create` would give
/// (0666 less the umask). A symlink at `path` is replaced, not written through.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<&File>) -> std::io::Result<()>,
) -> Result<(), OutputError> {
    if path.is_dir() {
        return Err(OutputError::Io {
            action: "writing",
            path: path.to_path_buf(),
            cause: std::io::Error::other("it is a directory; give a file path"),
        });
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(io("creating directory", dir))?;
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let temp = builder
        .tempfile_in(dir)
        .map_err(io("creating a temporary file in", dir))?;
    let fill = || -> std::io::Result<()> {
        if let Ok(meta) = std::fs::metadata(path) {
            temp.as_file().set_permissions(meta.permissions())?;
        }
        let mut w = BufWriter::new(temp.as_file());
        write(&mut w)?;
        w.flush()?;
        drop(w);
        temp.as_file().sync_all()
    };
    fill().map_err(io("writing", path))?;
    temp.persist(path).map_err(|e| OutputError::Io {
        action: "renaming into place",
        path: path.to_path_buf(),
        cause: e.error,
    })?;
    sync_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::temp_dir;

    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_second_lock_on_the_same_directory_is_refused_naming_the_holder() {
        let dir = temp_dir("output_lock");
        let first = OutputDir::lock(&dir).unwrap();
        let err = OutputDir::lock(&dir).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, OutputError::Busy { .. }), "{err:?}");
        assert!(message.contains(&dir.display().to_string()), "{message}");
        assert!(
            message.contains(&format!("pid {}", std::process::id())),
            "{message}"
        );
        drop(first);
        // Released on drop, and the record is emptied.
        assert_eq!(std::fs::read_to_string(dir.join(LOCK_NAME)).unwrap(), "");
        let again = OutputDir::lock(&dir).unwrap();
        drop(again);
    }

    #[test]
    fn staged_files_appear_only_on_commit() {
        let dir = temp_dir("output_commit");
        std::fs::write(dir.join("a.csv"), "old a").unwrap();
        std::fs::write(dir.join("b.md"), "old b").unwrap();
        let out = OutputDir::lock(&dir).unwrap();
        let staging = out.staging().unwrap();
        std::fs::write(staging.join("a.csv"), "new a").unwrap();
        std::fs::write(staging.join("b.md"), "new b").unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("a.csv")).unwrap(), "old a");
        let done = out.commit().unwrap();
        assert_eq!(done, vec![dir.join("a.csv"), dir.join("b.md")]);
        assert_eq!(std::fs::read_to_string(dir.join("a.csv")).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(dir.join("b.md")).unwrap(), "new b");
        assert_eq!(listing(&dir), vec![LOCK_NAME, "a.csv", "b.md"]);
        // A second transaction on the same hold (as `scale` does after each filter).
        std::fs::write(out.staging().unwrap().join("a.csv"), "newer a").unwrap();
        out.commit().unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("a.csv")).unwrap(),
            "newer a"
        );
        assert_eq!(listing(&dir), vec![LOCK_NAME, "a.csv", "b.md"]);
    }

    #[test]
    fn a_dropped_or_interrupted_run_leaves_the_old_report_whole() {
        let dir = temp_dir("output_drop");
        std::fs::write(dir.join("a.csv"), "old a").unwrap();
        {
            let out = OutputDir::lock(&dir).unwrap();
            std::fs::write(out.staging().unwrap().join("a.csv"), "half").unwrap();
        }
        assert_eq!(std::fs::read_to_string(dir.join("a.csv")).unwrap(), "old a");
        assert_eq!(listing(&dir), vec![LOCK_NAME, "a.csv"]);

        let out = OutputDir::lock(&dir).unwrap();
        std::fs::write(out.staging().unwrap().join("a.csv"), "half").unwrap();
        let interrupt = out.interrupt_handle();
        assert_eq!(interrupt.abandon(), Abandoned::NothingWritten);
        assert!(matches!(out.commit(), Err(OutputError::Interrupted { .. })));
        assert!(matches!(
            out.staging(),
            Err(OutputError::Interrupted { .. })
        ));
        assert_eq!(std::fs::read_to_string(dir.join("a.csv")).unwrap(), "old a");
        assert_eq!(listing(&dir), vec![LOCK_NAME, "a.csv"]);
        assert_eq!(interrupt.abandon(), Abandoned::NothingWritten);

        // After a commit, an interrupt removes only what was staged since.
        drop(out);
        let out = OutputDir::lock(&dir).unwrap();
        std::fs::write(out.staging().unwrap().join("a.csv"), "new a").unwrap();
        out.commit().unwrap();
        std::fs::write(out.staging().unwrap().join("a.csv"), "half").unwrap();
        assert_eq!(out.interrupt_handle().abandon(), Abandoned::AfterCommit);
        assert_eq!(std::fs::read_to_string(dir.join("a.csv")).unwrap(), "new a");
        assert_eq!(listing(&dir), vec![LOCK_NAME, "a.csv"]);
    }

    #[test]
    fn dropping_removes_what_was_staged_even_while_an_interrupt_handle_lives() {
        let dir = temp_dir("output_drop_handle");
        let out = OutputDir::lock(&dir).unwrap();
        let handle = out.interrupt_handle();
        std::fs::write(out.staging().unwrap().join("a.csv"), "half").unwrap();
        drop(out);
        assert_eq!(listing(&dir), vec![LOCK_NAME]);
        drop(handle);
    }

    #[test]
    fn staging_left_by_a_killed_run_is_removed_by_the_next() {
        let dir = temp_dir("output_stale");
        let stale = dir.join(&format!("{STAGING_PREFIX}killed"));
        std::fs::create_dir_all(&stale).unwrap();
        std::fs::write(stale.join("sweep.csv"), "half").unwrap();
        let _out = OutputDir::lock(&dir).unwrap();
        assert!(!stale.exists());
    }

    #[test]
    fn a_file_in_place_of_the_directory_is_an_error_naming_it() {
        let dir = temp_dir("output_not_dir");
        let file = dir.join("file");
        std::fs::write(&file, "x").unwrap();
        let err = OutputDir::lock(&file).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
        assert!(err.to_string().contains("file"), "{err}");
    }

    #[test]
    fn write_atomic_replaces_whole_or_keeps_the_old_file() {
        let dir = temp_dir("output_atomic");
        let path = dir.join("f.bin");
        write_atomic(&path, b"first").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        write_atomic(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        // A writer that fails half way: the old file stays, no temporary file is left.
        let err = write_atomic_with(&path, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("disk full"), "{err}");
        assert!(err.to_string().contains("f.bin"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        assert_eq!(listing(&dir), vec!["f.bin"]);
    }

    #[cfg(unix)]
    #[test]
    fn write_atomic_keeps_the_permissions_of_the_file_it_replaces() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = temp_dir("output_mode");
        let path = dir.join("f.txt");
        std::fs::write(&path, "x").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, b"y").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        // A new file gets File::create's mode (0666 less the umask), not a temporary file's 0600.
        let created = dir.join("created.txt");
        std::fs::File::create(&created).unwrap();
        let want = std::fs::metadata(&created).unwrap().permissions().mode() & 0o777;
        let fresh = dir.join("g.txt");
        write_atomic(&fresh, b"z").unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, want, "mode {mode:o}, File::create gives {want:o}");
    }
}
