//! One adapter process: spawned with piped stdio, a writer, a frame reader and a stderr tail on
//! their own threads, so every wait is bounded by `recv_timeout` and a hung or crashed adapter
//! never hangs bloomlab. Every child is waited for (killed first if need be): no zombie. Every
//! child not yet waited for is also on one list, [`LIVE`], so that [`stop_all`] can kill them all
//! when bloomlab is about to exit with threads still holding some (an interrupt, or a bad-input
//! case's watchdog thread left behind).

use std::collections::VecDeque;
use std::io::{BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use crate::candidate::CandidateError;

use super::Command;
use super::wire::{self, FrameError};

/// Bytes of stderr kept for error messages.
const STDERR_TAIL: usize = 4096;
/// How long a closed or killed adapter's stderr may take to drain into the tail.
const STDERR_DRAIN: Duration = Duration::from_millis(500);
/// How long an adapter may take to exit after CLOSE or after closing its stdout.
pub(crate) const EXIT_GRACE: Duration = Duration::from_secs(1);

/// The adapter processes started and not yet reaped, by pid (each leads its own process group).
/// An adapter runs in its own group, which a terminal's Ctrl-C does not reach, so bloomlab exiting
/// without killing it leaves it running with parent 1. A pid is on the list exactly while it is
/// unreaped, and it is reaped only under the lock (by its [`Adapter`] or by [`stop_all`]), so a
/// kill through the list can never reach a recycled pid.
static LIVE: Mutex<Live> = Mutex::new(Live {
    pids: Vec::new(),
    stopped: false,
});

struct Live {
    pids: Vec<u32>,
    /// Set by [`stop_all`]: no adapter starts after it.
    stopped: bool,
}

fn live() -> MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

impl Live {
    /// Takes `pid` off the list; whether it was on it (not yet reaped by [`stop_all`]).
    fn remove(&mut self, pid: u32) -> bool {
        let before = self.pids.len();
        self.pids.retain(|&p| p != pid);
        self.pids.len() != before
    }
}

/// Kills every adapter process bloomlab started and has not yet reaped (each with its process
/// group: what a wrapper script started too) and reaps them; adapters started after this fail to
/// start. For the moment before bloomlab exits: on an interrupt (Ctrl-C, SIGTERM), or after a run
/// that left threads waiting on adapters (a bad-input case reported as a hang whose request has
/// not timed out yet). Requests in flight to those adapters then fail as exits.
pub fn stop_all() {
    let mut live = live();
    live.stopped = true;
    for &pid in &live.pids {
        if let Ok(pid) = i32::try_from(pid) {
            // SAFETY: kill(2) has no memory effects; `pid` is unreaped (see [`LIVE`]), so neither
            // it nor its group id can have been reused.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
    }
    for pid in std::mem::take(&mut live.pids) {
        let Ok(pid) = i32::try_from(pid) else {
            continue;
        };
        loop {
            // SAFETY: waitpid(2) on our own child, with no status pointer to write through.
            let r = unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
            if r != -1 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                break;
            }
        }
    }
}

/// What an adapter reaped by [`stop_all`] is known to have died of.
fn killed() -> ExitStatus {
    ExitStatus::from_raw(libc::SIGKILL)
}

/// A child process in its own process group, on [`LIVE`] from its start until it is reaped (by
/// [`Tracked::kill`], [`Tracked::try_reap`] or [`stop_all`]), so that [`stop_all`] reaches it and a
/// kill can never hit a recycled pid. Dropped unreaped, it is killed and reaped: no zombie, no
/// orphan. The adapters and the supervised run's children (`suite::isolate`) are started so.
pub(crate) struct Tracked {
    child: Child,
    reaped: Option<ExitStatus>,
}

impl Tracked {
    /// Starts `command` in its own process group (so a kill reaches what it started too); fails
    /// after [`stop_all`].
    pub(crate) fn spawn(command: &mut std::process::Command) -> std::io::Result<Tracked> {
        // Started under the lock, so that a concurrent [`stop_all`] either sees it or stops it
        // from starting.
        let mut live = live();
        if live.stopped {
            return Err(std::io::Error::other(
                "not started: bloomlab is stopping its child processes before it exits",
            ));
        }
        let child = command.process_group(0).spawn()?;
        live.pids.push(child.id());
        Ok(Tracked {
            child,
            reaped: None,
        })
    }

    /// The process, for its pipes.
    pub(crate) fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Its exit status, once reaped.
    pub(crate) fn reaped(&self) -> Option<ExitStatus> {
        self.reaped
    }

    /// Kills the process and its process group (a wrapper script's children, which would
    /// otherwise keep running with the pipes open) and reaps it; its status.
    pub(crate) fn kill(&mut self) -> ExitStatus {
        if let Some(status) = self.reaped {
            return status;
        }
        let mut live = live();
        let status = if live.remove(self.child.id()) {
            if let Ok(pid) = i32::try_from(self.child.id()) {
                // SAFETY: kill(2) has no memory effects; the group is the unreaped child's
                // own (process_group(0) at spawn), so its id cannot have been reused.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
            }
            let _ = self.child.kill();
            self.child.wait().unwrap_or_else(|_| killed())
        } else {
            killed()
        };
        self.reaped = Some(status);
        status
    }

    /// Reaps the process if it has exited (or if [`stop_all`] already did); its status then.
    pub(crate) fn try_reap(&mut self) -> Option<ExitStatus> {
        if self.reaped.is_none() {
            let mut live = live();
            if !live.pids.contains(&self.child.id()) {
                self.reaped = Some(killed());
            } else if let Ok(Some(status)) = self.child.try_wait() {
                live.remove(self.child.id());
                self.reaped = Some(status);
            }
        }
        self.reaped
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The last [`STDERR_TAIL`] bytes the adapter wrote to stderr.
#[derive(Default)]
struct Tail {
    bytes: VecDeque<u8>,
    done: bool,
}

/// A running adapter process.
pub(crate) struct Adapter {
    /// Who it is in errors: the program until HELLO names it.
    pub(crate) subject: String,
    child: Tracked,
    /// Request frames to the writer thread; dropping it closes the adapter's stdin.
    requests: Option<Sender<Vec<u8>>>,
    /// Request buffers the writer is done with, for reuse.
    spent: Receiver<Vec<u8>>,
    /// Whether the last request's buffer is with the writer.
    lent: bool,
    /// Answer frames (or why none came) from the reader thread.
    answers: Receiver<(Result<(), FrameError>, Vec<u8>)>,
    /// Answer buffers handed back to the reader for reuse.
    recycle: Sender<Vec<u8>>,
    stderr: Arc<(Mutex<Tail>, Condvar)>,
    /// The first fatal failure: every later request answers with it.
    failed: Option<CandidateError>,
}

impl Adapter {
    /// Starts `command` with piped stdin, stdout and stderr.
    pub(crate) fn spawn(command: &Command) -> Result<Adapter, CandidateError> {
        let subject = command.display();
        let (program, args) = command
            .argv
            .split_first()
            .ok_or_else(|| CandidateError::Io {
                subject: subject.clone(),
                detail: "empty adapter command".into(),
            })?;
        let mut child = Tracked::spawn(
            std::process::Command::new(program)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        )
        .map_err(|e| CandidateError::Io {
            subject: subject.clone(),
            detail: format!("cannot start {:?}: {e}", program),
        })?;
        let pipes = child.child_mut();
        let (stdin, stdout, stderr) = (
            pipes.stdin.take().expect("piped"),
            pipes.stdout.take().expect("piped"),
            pipes.stderr.take().expect("piped"),
        );
        let (requests, spent) = spawn_writer(stdin);
        let (answers, recycle) = spawn_reader(stdout);
        let tail = Arc::new((Mutex::new(Tail::default()), Condvar::new()));
        spawn_stderr(stderr, Arc::clone(&tail));
        Ok(Adapter {
            subject,
            child,
            requests: Some(requests),
            spent,
            lent: false,
            answers,
            recycle,
            stderr: tail,
            failed: None,
        })
    }

    /// A cleared buffer to build the next request frame in (reused when the writer has handed
    /// one back, so steady-state requests allocate nothing).
    pub(crate) fn buffer(&mut self) -> Vec<u8> {
        // The last answer came, so the writer is done with its buffer or about to be.
        let mut buf = if self.lent {
            self.spent
                .recv_timeout(Duration::from_millis(10))
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        self.lent = false;
        buf.clear();
        buf
    }

    /// Sends the finished frame `request` and waits up to `limit` for the answer frame
    /// (status byte first), which `with` reads (given the subject's name for its errors). A timeout, an exit, a broken frame or an error
    /// `with` returns kill the adapter and are returned now and for every later request.
    pub(crate) fn request<T>(
        &mut self,
        operation: &str,
        request: Vec<u8>,
        limit: Duration,
        with: impl FnOnce(&str, &[u8]) -> Result<T, Fatal>,
    ) -> Result<T, CandidateError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        // A send fails only when the writer met a broken pipe: the reader sees the exit.
        self.lent = self
            .requests
            .as_ref()
            .is_some_and(|r| r.send(request).is_ok());
        let outcome = match self.answers.recv_timeout(limit) {
            Ok((Ok(()), frame)) => {
                let result = with(&self.subject, &frame);
                let _ = self.recycle.send(frame);
                result
            }
            Ok((Err(FrameError::Length(len)), _)) => Err(Fatal::Protocol(format!(
                "answer frame of {len} bytes (allowed 1..=2^30)"
            ))),
            Ok((Err(FrameError::Io(e)), _)) => {
                Err(Fatal::Protocol(format!("reading its stdout: {e}")))
            }
            Ok((Err(FrameError::Eof), _)) | Err(RecvTimeoutError::Disconnected) => {
                Err(Fatal::Exited)
            }
            Err(RecvTimeoutError::Timeout) => Err(Fatal::Timeout(limit)),
        };
        outcome.map_err(|fatal| {
            // The writer may never hand this buffer back (a killed adapter).
            self.lent = false;
            let e = self.fail(operation, fatal);
            self.failed = Some(e.clone());
            e
        })
    }

    /// Stops the adapter after `fatal` and describes it, with its exit status and stderr tail.
    fn fail(&mut self, operation: &str, fatal: Fatal) -> CandidateError {
        let subject = self.subject.clone();
        let operation = operation.to_string();
        match fatal {
            Fatal::Timeout(limit) => {
                self.kill();
                CandidateError::Timeout {
                    subject,
                    operation,
                    seconds: limit.as_secs_f64(),
                    stderr: self.stderr_tail(),
                }
            }
            Fatal::Exited => {
                let status = match self.wait_for(EXIT_GRACE) {
                    Some(status) => describe(status),
                    None => {
                        self.kill();
                        format!(
                            "closed its stdout but was still running after {} s; killed",
                            EXIT_GRACE.as_secs()
                        )
                    }
                };
                CandidateError::Exited {
                    subject,
                    operation,
                    status,
                    stderr: self.stderr_tail(),
                }
            }
            Fatal::Protocol(detail) => {
                self.kill();
                let tail = self.stderr_tail();
                CandidateError::Protocol {
                    subject,
                    operation,
                    detail: format!("{detail}; stderr: {tail}"),
                }
            }
            Fatal::Refused(e) => {
                self.kill();
                e
            }
        }
    }

    /// Sends CLOSE, waits up to [`EXIT_GRACE`] for the exit, then kills; always reaps.
    pub(crate) fn close(&mut self) {
        if self.child.reaped().is_some() {
            return;
        }
        if self.failed.is_none() {
            let mut buf = Vec::with_capacity(5);
            wire::start_frame(&mut buf, super::op::CLOSE);
            wire::finish_frame(&mut buf).expect("an empty frame fits");
            if let Some(r) = &self.requests {
                let _ = r.send(buf);
            }
        }
        // Closing stdin too: an adapter that missed CLOSE still sees the end of its input.
        self.requests = None;
        if self.wait_for(EXIT_GRACE).is_none() {
            self.kill();
        }
    }

    /// Kills the process (and its process group) and reaps it.
    fn kill(&mut self) {
        self.child.kill();
        self.requests = None;
    }

    /// Reaps the process if it has exited (or if [`stop_all`] already did); its status then.
    fn try_reap(&mut self) -> Option<ExitStatus> {
        self.child.try_reap()
    }

    /// Waits up to `limit` for the process to exit by itself; its status if it did.
    fn wait_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.try_reap() {
                return Some(status);
            }
            if start.elapsed() >= limit {
                return None;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// The adapter's last stderr bytes (waiting briefly for a stopped adapter's to drain).
    pub(crate) fn stderr_tail(&self) -> String {
        let (lock, cvar) = &*self.stderr;
        let guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        let (tail, _) = cvar
            .wait_timeout_while(guard, STDERR_DRAIN, |t| {
                self.child.reaped().is_some() && !t.done
            })
            .unwrap_or_else(|p| p.into_inner());
        let (a, b) = tail.bytes.as_slices();
        let text = String::from_utf8_lossy(&[a, b].concat()).trim().to_string();
        if text.is_empty() {
            "(empty)".into()
        } else {
            text
        }
    }
}

impl Drop for Adapter {
    fn drop(&mut self) {
        self.close();
    }
}

/// A failure that ends the adapter.
pub(crate) enum Fatal {
    /// No answer within the limit.
    Timeout(Duration),
    /// End of its stdout.
    Exited,
    /// A broken frame, answer or JSON: what was wrong.
    Protocol(String),
    /// An answer the caller cannot go on after (a refused HELLO).
    Refused(CandidateError),
}

/// An exit status as text: "exit status 3", "killed by signal 6 (SIGABRT)".
pub(crate) fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig} ({})", signal_name(sig)),
        _ => status.to_string(),
    }
}

pub(crate) fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => "unnamed signal",
    }
}

/// The writer thread: writes each request frame whole, hands the buffer back. A write into a
/// full pipe that the adapter never reads blocks only this thread; the caller's timeout kills
/// the adapter, which ends the write with a broken pipe.
fn spawn_writer(mut stdin: std::process::ChildStdin) -> (Sender<Vec<u8>>, Receiver<Vec<u8>>) {
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let (spent_tx, spent_rx) = mpsc::channel();
    thread::spawn(move || {
        for frame in rx {
            if stdin
                .write_all(&frame)
                .and_then(|()| stdin.flush())
                .is_err()
            {
                return;
            }
            let _ = spent_tx.send(frame);
        }
    });
    (tx, spent_rx)
}

type Answer = (Result<(), FrameError>, Vec<u8>);

/// The reader thread: one message per answer frame; stops after the first failure. One answer
/// buffer goes back and forth (the caller returns each frame once read), so steady-state answers
/// allocate nothing; the thread ends when the caller drops its end.
fn spawn_reader(stdout: std::process::ChildStdout) -> (Receiver<Answer>, Sender<Vec<u8>>) {
    let (tx, rx) = mpsc::channel::<Answer>();
    let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<u8>>();
    recycle_tx.send(Vec::new()).expect("the receiver is alive");
    thread::spawn(move || {
        let mut input = BufReader::with_capacity(1 << 16, stdout);
        loop {
            let Ok(mut buf) = recycle_rx.recv() else {
                return;
            };
            let result = wire::read_frame(&mut input, &mut buf);
            let stop = result.is_err();
            if tx.send((result, buf)).is_err() || stop {
                return;
            }
        }
    });
    (rx, recycle_tx)
}

/// The stderr thread: keeps the last [`STDERR_TAIL`] bytes, signals the end of stderr.
fn spawn_stderr(mut stderr: std::process::ChildStderr, tail: Arc<(Mutex<Tail>, Condvar)>) {
    thread::spawn(move || {
        let mut chunk = [0u8; 1024];
        loop {
            let n = stderr.read(&mut chunk).unwrap_or(0);
            let (lock, cvar) = &*tail;
            let mut t = lock.lock().unwrap_or_else(|p| p.into_inner());
            if n == 0 {
                t.done = true;
                cvar.notify_all();
                return;
            }
            t.bytes.extend(&chunk[..n]);
            let excess = t.bytes.len().saturating_sub(STDERR_TAIL);
            t.bytes.drain(..excess);
        }
    });
}
