//! Crash isolation of [`super::run`]: a supervised run in a child process of the test binary.
//!
//! In process, a candidate that aborts (`std::process::abort`, a failed allocation such as
//! `memory allocation of 2305843009213693952 bytes failed`, a stack overflow) ends the caller,
//! and one that hangs outside the bad-input clause's build watchdog hangs it. So when [`run`] is
//! called on a libtest test thread (libtest names each test's thread after the test), it re-runs
//! the current test binary (`std::env::current_exe()`) as a child, `NAME --exact --nocapture
//! --test-threads=1 -q --include-ignored`, with [`CHILD_ENV`] naming a job directory:
//! - the child's test reaches the same `run()` call (counted per thread; the results of the
//!   test's earlier calls are replayed from the job, not measured again), checks that the subject
//!   and the plan are the parent's, runs the clauses **in process** with
//!   [`super::run_in_process`] (so the speed clause's figures are in-process figures), appends
//!   each clause's start and verdict as a JSON line to the job's `events` file, and exits with
//!   `std::process::exit(0)` before libtest prints anything more;
//! - every call into the candidate (build, insert and query batches, stats, serialization,
//!   concurrent inserts, drop) writes what it is into a 40-byte record of a file the child maps
//!   shared (a few stores, no system call: nothing a speed figure would see), so after a crash
//!   the parent can name the call in flight, and a record that stops changing is a hang;
//! - the parent polls the events and the record every [`POLL`]. A child that dies (a signal, or
//!   an exit before its last verdict) has its clause in flight called **broken**, naming the
//!   signal and the call ("killed by SIGABRT during build(n = 4, p = 0.01)") with the last lines
//!   of its stderr; a child that starts or finishes no call for [`hang_limit`] is killed (with its
//!   process group) and its clause called broken by a hang. A new child then runs the clauses
//!   that remain, so every clause gets a verdict.
//!
//! Where re-running is impossible the run stays in process, as before, and every verdict's
//! evidence says so ("not isolated: ..."): `run()` not on a test thread (a `main`, a thread of the
//! test's own), a test binary outside cargo's `deps` directory (unless [`ISOLATE_ENV`]`=1`), or
//! [`ISOLATE_ENV`]`=0`. A candidate that runs in its own process already
//! ([`Candidate::isolated`]) and a plan that fails validation run in process without a note. A
//! child never re-runs anything: with [`CHILD_ENV`] set, every `run()` is in process.
//!
//! The child is started with [`Tracked`]: its own process group, on the list
//! [`crate::process::stop_all`] kills, killed and reaped when the supervision ends by any path.

use std::cell::{Cell, RefCell};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::io::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{Plan, run_in_process, run_with, verdict};
use crate::candidate::{About, Candidate, CandidateError, Instance, KeyBatch, SharedInsert, Stats};
use crate::process::child::{Tracked, signal_name};
use crate::verdict::{Clause, Conformance, Outcome, RatePoint, Speed, Verdict};

/// Set in the child to the job directory; its presence also forbids any further re-run.
pub const CHILD_ENV: &str = "BLOOMLAB_CONFORM_CHILD";
/// `0`: never isolate (every verdict then says "not isolated"); `1`: isolate a libtest test
/// binary even outside cargo's `target/*/deps` (a custom runner's copy).
pub const ISOLATE_ENV: &str = "BLOOMLAB_CONFORM_ISOLATE";
/// How often the parent looks at the child's progress and status.
const POLL: Duration = Duration::from_millis(20);
/// Lines of the child's stderr kept in a broken verdict.
const STDERR_LINES: usize = 8;
/// A child silent for this many build timeouts is hung: see [`hang_limit`].
const HANG_FACTOR: u32 = 6;

/// How long a child may start and finish no call into the candidate (and report no verdict)
/// before it is called hung and killed: `HANG_FACTOR` (6) x `plan.build_timeout`, 60 s at the
/// default 10 s. That is the process protocol's per-request limit
/// ([`crate::process::DEFAULT_TIMEOUT`]): one in-process call (a build, a batch of
/// `plan.batch` keys, a serialization) gets as long as an adapter's request. It is well above
/// `build_timeout`, so the bad-input clause's own watchdog reports a hung build first, with its
/// case, and the clause goes on.
pub(crate) fn hang_limit(plan: &Plan) -> Duration {
    plan.build_timeout.saturating_mul(HANG_FACTOR)
}

thread_local! {
    /// `run()` calls made on this thread so far: the parent's k-th call is the child's k-th.
    static CALLS: Cell<usize> = const { Cell::new(0) };
    /// This thread's results so far (parent only), replayed in a child for the calls before its.
    static HISTORY: RefCell<Vec<Conformance>> = const { RefCell::new(Vec::new()) };
}

/// [`super::run`]: supervised in a child where possible (module docs), else in process.
pub(crate) fn run(candidate: Arc<dyn Candidate>, plan: &Plan) -> Conformance {
    let call = CALLS.with(|c| c.replace(c.get() + 1));
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        return child_side(Path::new(&dir), call, candidate, plan);
    }
    let result = if candidate.isolated() || plan.validate().is_err() {
        run_with(candidate, plan, None)
    } else {
        match where_to_rerun() {
            Ok(how) => supervise(&how, call, candidate, plan),
            Err(why) => not_isolated(run_with(candidate, plan, None), &why),
        }
    };
    HISTORY.with(|h| h.borrow_mut().push(result.clone()));
    result
}

/// Adds "not isolated: `why`" to every verdict's evidence.
fn not_isolated(mut c: Conformance, why: &str) -> Conformance {
    for v in &mut c.verdicts {
        v.evidence.push(format!(
            "not isolated: {why}; the clauses ran in this process, where an abort or a hang of the \
             candidate would end or stall it"
        ));
    }
    c
}

/// The test binary and the test to re-run.
struct Rerun {
    exe: PathBuf,
    test: String,
}

/// Whether and how this call can be re-run in a child; why not otherwise.
fn where_to_rerun() -> Result<Rerun, String> {
    let setting = std::env::var(ISOLATE_ENV).unwrap_or_default();
    if setting == "0" {
        return Err(format!("{ISOLATE_ENV}=0"));
    }
    let thread = std::thread::current();
    let test = match thread.name() {
        Some(name) if name != "main" => name.to_owned(),
        other => {
            return Err(format!(
                "run() was called on thread {other:?}, not on a libtest test's thread (named \
                 after the test), so there is no test to re-run in a child"
            ));
        }
    };
    let exe =
        std::env::current_exe().map_err(|e| format!("the test binary's path is unknown ({e})"))?;
    let in_deps = exe
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d == "deps");
    if !in_deps && setting != "1" {
        return Err(format!(
            "{} is not a cargo test binary (not in a `deps` directory), so re-running it could \
             run something else; {ISOLATE_ENV}=1 re-runs it anyway",
            exe.display()
        ));
    }
    Ok(Rerun { exe, test })
}

/// What the parent tells the child (`job.json`).
#[derive(Serialize, Deserialize)]
struct Job {
    /// The test thread's name.
    test: String,
    /// Which `run()` call of that thread (0-based).
    call: usize,
    /// The subject's name, which the child's candidate must have.
    subject: String,
    /// The plan, which the child's call must have been given.
    plan: Plan,
    /// The clauses still to run.
    clauses: Vec<Clause>,
    /// The results of the thread's earlier calls.
    replay: Vec<Conformance>,
    /// The parent's pid: a child whose parent is gone (a test run interrupted) exits.
    parent: u32,
}

/// One line of the child's `events` file.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Event {
    /// The child reached the call and will run its clauses.
    Hello {
        /// Its pid.
        pid: u32,
    },
    /// The child's call is not the parent's: why.
    Mismatch(String),
    /// A clause started.
    Start(Clause),
    /// A clause finished.
    Done {
        verdict: Verdict,
        points: Vec<RatePoint>,
        speed: Option<Speed>,
    },
    /// Every clause finished.
    End,
}

/// A job directory under the system's temporary directory, removed on drop.
struct JobDir(PathBuf);

impl JobDir {
    fn new() -> std::io::Result<JobDir> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let path = base.join(format!(
                "bloomlab-conform-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            match fs::create_dir(&path) {
                Ok(()) => return Ok(JobDir(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for JobDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// How one child ended.
enum End {
    /// It reported every clause.
    Finished,
    /// It never reached the call (or reached a different one): why.
    NotReached(String),
    /// It died or was killed with clauses left.
    Died { status: ExitStatus, hung: bool },
}

/// The parent: runs the clauses in children until each has a verdict.
fn supervise(how: &Rerun, call: usize, candidate: Arc<dyn Candidate>, plan: &Plan) -> Conformance {
    let dir = match JobDir::new() {
        Ok(dir) => dir,
        Err(e) => {
            let why = format!(
                "no job directory in {}: {e}",
                std::env::temp_dir().display()
            );
            return not_isolated(run_with(candidate, plan, None), &why);
        }
    };
    let subject = candidate.about();
    let mut out = Conformance {
        subject: subject.clone(),
        n: plan.n,
        p: plan.p,
        seed: plan.seed,
        verdicts: Vec::new(),
        points: Vec::new(),
        speed: None,
    };
    let mut job = Job {
        test: how.test.clone(),
        call,
        subject: subject.name.clone(),
        plan: plan.clone(),
        clauses: plan.clauses.clone(),
        replay: HISTORY.with(|h| h.borrow().clone()),
        parent: std::process::id(),
    };
    let limit = hang_limit(plan);
    while !job.clauses.is_empty() {
        let mut seen = Seen::default();
        let end = match attend(how, &dir.0, &job, limit, &mut seen) {
            Ok(end) => end,
            Err(e) => End::NotReached(format!("the child could not be run: {e}")),
        };
        for (verdict, points, speed) in seen.done.drain(..) {
            job.clauses.retain(|&c| c != verdict.clause);
            out.points.extend(points);
            out.speed = out.speed.take().or(speed);
            out.verdicts.push(verdict);
        }
        match end {
            End::Finished => break,
            End::NotReached(why) if seen.pid.is_none() => {
                let rest = Plan {
                    clauses: job.clauses.clone(),
                    ..plan.clone()
                };
                let c = not_isolated(run_with(Arc::clone(&candidate), &rest, None), &why);
                out.verdicts.extend(c.verdicts);
                out.points.extend(c.points);
                out.speed = out.speed.take().or(c.speed);
                break;
            }
            End::NotReached(_) | End::Died { .. } => {
                let Some(&clause) = seen.started.as_ref().or(job.clauses.first()) else {
                    break;
                };
                let (status, hung) = match end {
                    End::Died { status, hung } => (status, hung),
                    _ => (ExitStatus::from_raw(0), false),
                };
                out.verdicts.push(crashed(
                    plan, clause, how, &dir.0, &seen, status, hung, limit,
                ));
                job.clauses.retain(|&c| c != clause);
            }
        }
    }
    // Children run the clauses in plan order, but a fallback's verdicts come after a crashed one's.
    out.verdicts.sort_by_key(|v| {
        plan.clauses
            .iter()
            .position(|&c| c == v.clause)
            .unwrap_or(usize::MAX)
    });
    out
}

/// What the parent learned from one child.
#[derive(Default)]
struct Seen {
    /// From its hello.
    pid: Option<u32>,
    /// The clause started and not finished.
    started: Option<Clause>,
    /// Finished clauses.
    done: Vec<(Verdict, Vec<RatePoint>, Option<Speed>)>,
    /// The last call record read.
    record: [u64; WORDS],
}

/// Starts one child for `job` and follows it to its end.
fn attend(
    how: &Rerun,
    dir: &Path,
    job: &Job,
    limit: Duration,
    seen: &mut Seen,
) -> std::io::Result<End> {
    fs::write(dir.join("job.json"), serde_json::to_vec(job)?)?;
    let events_path = dir.join("events");
    File::create(&events_path)?;
    File::create(dir.join("now"))?.set_len(RECORD_BYTES)?;
    let stderr = File::create(dir.join("stderr"))?;
    let mut child = Tracked::spawn(
        std::process::Command::new(&how.exe)
            .args([
                how.test.as_str(),
                "--exact",
                "--nocapture",
                "--test-threads=1",
                "-q",
                "--include-ignored",
            ])
            .env(CHILD_ENV, dir)
            .stdin(Stdio::null())
            // The test's own printing and libtest's: the parent's copy of the test prints them.
            .stdout(Stdio::null())
            .stderr(stderr),
    )?;
    let mut events = File::open(&events_path)?;
    let mut pending = Vec::new();
    let mut last_progress = Instant::now();
    loop {
        std::thread::sleep(POLL);
        let exited = child.try_reap();
        // Read after the status, so that everything a dead child wrote is seen.
        let before = (seen.done.len(), seen.started, seen.pid);
        let mut ended = false;
        for event in read_events(&mut events, &mut pending)? {
            match event {
                Event::Hello { pid } => seen.pid = Some(pid),
                Event::Mismatch(why) => {
                    child.kill();
                    return Ok(End::NotReached(why));
                }
                Event::Start(c) => seen.started = Some(c),
                Event::Done {
                    verdict,
                    points,
                    speed,
                } => {
                    seen.started = None;
                    seen.done.push((verdict, points, speed));
                }
                Event::End => ended = true,
            }
        }
        let record = read_record(&dir.join("now"));
        if record != seen.record || before != (seen.done.len(), seen.started, seen.pid) {
            seen.record = record;
            last_progress = Instant::now();
        }
        if ended {
            // It exits by itself right after; the drop reaps it either way.
            return Ok(End::Finished);
        }
        if let Some(status) = exited {
            return Ok(if seen.pid.is_none() {
                End::NotReached(format!(
                    "the re-run test ({} {} --exact) ended with {} before reaching this run() call",
                    how.exe.display(),
                    how.test,
                    status_text(status)
                ))
            } else {
                End::Died {
                    status,
                    hung: false,
                }
            });
        }
        if last_progress.elapsed() >= limit {
            let status = child.kill();
            return Ok(if seen.pid.is_none() {
                End::NotReached(format!(
                    "the re-run test ({} {} --exact) did not reach this run() call within {} s",
                    how.exe.display(),
                    how.test,
                    limit.as_secs_f64()
                ))
            } else {
                End::Died { status, hung: true }
            });
        }
    }
}

/// The complete new lines of the events file.
fn read_events(events: &mut File, pending: &mut Vec<u8>) -> std::io::Result<Vec<Event>> {
    events.read_to_end(pending)?;
    let mut out = Vec::new();
    let complete = pending
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    for line in pending[..complete].split(|&b| b == b'\n') {
        if !line.is_empty() {
            out.push(serde_json::from_slice(line).map_err(std::io::Error::other)?);
        }
    }
    pending.drain(..complete);
    Ok(out)
}

/// "killed by SIGABRT", "exited with status 3".
fn status_text(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("killed by {}", signal_name(sig)),
        _ => status.to_string(),
    }
}

/// The broken verdict of a clause whose child died or hung.
#[allow(clippy::too_many_arguments)]
fn crashed(
    plan: &Plan,
    clause: Clause,
    how: &Rerun,
    dir: &Path,
    seen: &Seen,
    status: ExitStatus,
    hung: bool,
    limit: Duration,
) -> Verdict {
    let call = describe_record(&seen.record);
    let figure = if hung {
        format!("hung {call}: silent for {} s, killed", limit.as_secs_f64())
    } else {
        format!("{} {call}", status_text(status))
    };
    let mut evidence = vec![
        format!(
            "the clause ran in a child process (pid {}) re-running this test ({} {} --exact); it \
             {} {call}",
            seen.pid.map_or("?".into(), |p| p.to_string()),
            how.exe.display(),
            how.test,
            if hung {
                format!(
                    "started and finished no call into the candidate for {} s ({HANG_FACTOR} x \
                     the plan's build_timeout of {} s) and was killed with its process group",
                    limit.as_secs_f64(),
                    plan.build_timeout.as_secs_f64()
                )
            } else {
                format!("ended ({})", status_text(status))
            }
        ),
        "the clauses after it ran in a new child".into(),
    ];
    let tail = stderr_tail(&dir.join("stderr"));
    if !tail.is_empty() {
        evidence.push("its stderr ended with:".into());
        evidence.extend(tail.into_iter().map(|l| format!("  {l}")));
    }
    verdict(plan, clause, Outcome::Broken, figure, evidence)
}

/// The last [`STDERR_LINES`] non-empty lines of the child's stderr (at most 64 KiB read), without
/// backtraces (`RUST_BACKTRACE` set), which would push the message that matters out of the tail.
fn stderr_tail(path: &Path) -> Vec<String> {
    let Ok(mut f) = File::open(path) else {
        return Vec::new();
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(1 << 16)));
    let mut bytes = Vec::new();
    let _ = f.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = Vec::new();
    let mut in_backtrace = false;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if line.starts_with("stack backtrace:") {
            in_backtrace = true;
            lines.push("(backtrace omitted)".to_owned());
            continue;
        }
        // Frames and their locations are indented; the note closes the backtrace.
        if in_backtrace && (line.starts_with(' ') || line.starts_with("note: Some details")) {
            continue;
        }
        in_backtrace = false;
        lines.push(line.to_owned());
    }
    lines[lines.len().saturating_sub(STDERR_LINES)..].to_vec()
}

// ---- the call record ----

/// Words of the record: sequence number, operation (kind | RETURNED), n, p's bits, length.
const WORDS: usize = 5;
/// The record file's size (one page: the mapping's unit).
const RECORD_BYTES: u64 = 4096;
/// Set in the operation word once the call returned.
const RETURNED: u64 = 1 << 8;

/// A call into the candidate, as recorded.
#[derive(Clone, Copy)]
enum Op {
    Build { n: u64, p: f64 },
    Deserialize { bytes: usize },
    Insert { keys: usize },
    Query { keys: usize },
    Stats,
    Serialize,
    Shared,
    Drop,
}

impl Op {
    fn words(self) -> [u64; 4] {
        match self {
            Op::Build { n, p } => [1, n, p.to_bits(), 0],
            Op::Deserialize { bytes } => [2, 0, 0, bytes as u64],
            Op::Insert { keys } => [3, 0, 0, keys as u64],
            Op::Query { keys } => [4, 0, 0, keys as u64],
            Op::Stats => [5, 0, 0, 0],
            Op::Serialize => [6, 0, 0, 0],
            Op::Shared => [7, 0, 0, 0],
            Op::Drop => [8, 0, 0, 0],
        }
    }
}

/// The record read by the parent (zeros when unreadable).
fn read_record(path: &Path) -> [u64; WORDS] {
    let mut words = [0; WORDS];
    if let Ok(bytes) = fs::read(path) {
        for (w, chunk) in words.iter_mut().zip(bytes.chunks_exact(8)) {
            *w = u64::from_ne_bytes(chunk.try_into().expect("8 bytes"));
        }
    }
    words
}

/// "during build(n = 4, p = 0.01)", "after insert(4096 keys) returned".
fn describe_record(r: &[u64; WORDS]) -> String {
    if r[0] == 0 {
        return "before its first call into the candidate".into();
    }
    let call = match r[1] & 0xff {
        1 => format!("build(n = {}, p = {})", r[2], f64::from_bits(r[3])),
        2 => format!("deserialize({} bytes)", r[4]),
        3 => format!("insert({} keys)", r[4]),
        4 => format!("query({} keys)", r[4]),
        5 => "stats()".into(),
        6 => "serialize()".into(),
        7 => "concurrent inserts (shared())".into(),
        8 => "dropping a filter".into(),
        _ => "an unknown call".into(),
    };
    if r[1] & RETURNED != 0 {
        format!("after {call} returned")
    } else {
        format!("during {call}")
    }
}

/// The child's side of the record: a shared mapping of the job's `now` file.
#[derive(Clone, Copy)]
struct Recorder(&'static [AtomicU64; WORDS]);

impl Recorder {
    fn open(path: &Path) -> std::io::Result<Recorder> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        // SAFETY: a fresh shared mapping of RECORD_BYTES bytes of a file that long; no other
        // memory is touched. It is never unmapped (the child exits when done), so the 'static
        // reference below stays valid.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                RECORD_BYTES as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the mapping is page-aligned, 4096 >= 40 bytes long, readable and writable, and
        // AtomicU64 has u64's layout; other processes only read it (through the file).
        Ok(Recorder(unsafe { &*ptr.cast::<[AtomicU64; WORDS]>() }))
    }

    fn begin(self, op: Op) {
        let [kind, n, p, len] = op.words();
        self.0[1].store(kind, Ordering::Relaxed);
        self.0[2].store(n, Ordering::Relaxed);
        self.0[3].store(p, Ordering::Relaxed);
        self.0[4].store(len, Ordering::Relaxed);
        self.0[0].fetch_add(1, Ordering::Release);
    }

    fn end(self) {
        self.0[1].fetch_or(RETURNED, Ordering::Relaxed);
        self.0[0].fetch_add(1, Ordering::Release);
    }

    fn call<T>(self, op: Op, f: impl FnOnce() -> T) -> T {
        self.begin(op);
        let out = f();
        self.end();
        out
    }
}

/// The candidate with every call recorded.
struct Watched {
    inner: Arc<dyn Candidate>,
    rec: Recorder,
}

impl Candidate for Watched {
    fn about(&self) -> About {
        self.inner.about()
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let inner = self
            .rec
            .call(Op::Build { n, p }, || self.inner.build(n, p))?;
        Ok(Box::new(WatchedInstance {
            inner: Some(inner),
            rec: self.rec,
        }))
    }

    fn isolated(&self) -> bool {
        self.inner.isolated()
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
        let op = Op::Deserialize { bytes: bytes.len() };
        let inner = self.rec.call(op, || self.inner.deserialize(bytes))?;
        Ok(Box::new(WatchedInstance {
            inner: Some(inner),
            rec: self.rec,
        }))
    }
}

/// An instance with every call recorded (`inner` is `None` only while dropping).
struct WatchedInstance {
    inner: Option<Box<dyn Instance>>,
    rec: Recorder,
}

impl WatchedInstance {
    fn inner(&mut self) -> &mut dyn Instance {
        self.inner.as_deref_mut().expect("taken only on drop")
    }
}

impl Instance for WatchedInstance {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        let rec = self.rec;
        rec.call(Op::Insert { keys: keys.len() }, || {
            self.inner().insert(keys)
        })
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        let rec = self.rec;
        rec.call(Op::Query { keys: keys.len() }, || {
            self.inner().query(keys, out)
        })
    }

    fn stats(&mut self) -> Result<Stats, CandidateError> {
        let rec = self.rec;
        rec.call(Op::Stats, || self.inner().stats())
    }

    fn serialize(&mut self) -> Result<Option<Vec<u8>>, CandidateError> {
        let rec = self.rec;
        rec.call(Op::Serialize, || self.inner().serialize())
    }

    fn shared(&self) -> Option<&dyn SharedInsert> {
        // Per-key calls from many threads are not recorded one by one (the record would be
        // contended); a hang or crash among them is "during concurrent inserts".
        self.rec.begin(Op::Shared);
        self.inner.as_deref().and_then(|i| i.shared())
    }
}

impl Drop for WatchedInstance {
    fn drop(&mut self) {
        let inner = self.inner.take();
        self.rec.call(Op::Drop, || drop(inner));
    }
}

// ---- the child ----

/// The child's `run()`: replays an earlier call's result, or runs the parent's call and exits.
fn child_side(dir: &Path, call: usize, candidate: Arc<dyn Candidate>, plan: &Plan) -> Conformance {
    let job: Option<Job> = fs::read(dir.join("job.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let Some(job) = job else {
        return run_with(candidate, plan, None);
    };
    if std::thread::current().name() != Some(job.test.as_str()) {
        // A thread of the test's own: in process in the parent too.
        return run_with(candidate, plan, None);
    }
    // The child is in its own process group, which a terminal's Ctrl-C does not reach: when the
    // parent's test thread ends without killing it (the test run interrupted), it must not run on
    // (a hung candidate would spin forever). Checked after asking, for a parent already gone.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(2) with PR_SET_PDEATHSIG takes a signal number and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
    // SAFETY: getppid(2) cannot fail and touches no memory.
    if u32::try_from(unsafe { libc::getppid() }).ok() != Some(job.parent) {
        std::process::exit(3);
    }
    let events = OpenOptions::new().append(true).open(dir.join("events"));
    let Ok(mut events) = events else {
        std::process::exit(3);
    };
    let mut send = |e: &Event| {
        let mut line = serde_json::to_vec(e).expect("events serialize");
        line.push(b'\n');
        // One write per line: a crash leaves at most an incomplete last line, which the parent
        // ignores. A failed write (the parent gone) ends the child.
        if events.write_all(&line).is_err() {
            std::process::exit(3);
        }
    };
    if call < job.call
        && let Some(c) = job.replay.get(call)
    {
        return c.clone();
    }
    let name = candidate.about().name;
    let mismatch = if call != job.call {
        Some(format!(
            "the re-run test made run() call {} where the parent made call {}",
            call + 1,
            job.call + 1
        ))
    } else if name != job.subject || *plan != job.plan {
        Some(format!(
            "the re-run test's run() call {} has subject {name:?} and plan {} where the parent's \
             had {:?} and {}",
            call + 1,
            serde_json::to_string(plan).unwrap_or_default(),
            job.subject,
            serde_json::to_string(&job.plan).unwrap_or_default()
        ))
    } else {
        None
    };
    if let Some(why) = mismatch {
        send(&Event::Mismatch(format!(
            "{why} (a test whose run() calls differ between runs cannot be re-run)"
        )));
        std::process::exit(0);
    }
    let rec = match Recorder::open(&dir.join("now")) {
        Ok(rec) => rec,
        Err(e) => {
            send(&Event::Mismatch(format!(
                "the call record cannot be mapped: {e}"
            )));
            std::process::exit(0);
        }
    };
    send(&Event::Hello {
        pid: std::process::id(),
    });
    let watched: Arc<dyn Candidate> = Arc::new(Watched {
        inner: candidate,
        rec,
    });
    let rest = Plan {
        clauses: job.clauses.clone(),
        ..plan.clone()
    };
    let mut points_sent = 0;
    run_in_process(watched, &rest, None, &mut |step, out| match step {
        Step::Start(clause) => send(&Event::Start(clause)),
        Step::Done(clause) => {
            let verdict = out.verdicts.last().cloned().expect("a verdict per clause");
            let points = out.points[points_sent..].to_vec();
            points_sent = out.points.len();
            let speed = if clause == Clause::Speed {
                out.speed.clone()
            } else {
                None
            };
            send(&Event::Done {
                verdict,
                points,
                speed,
            });
        }
    });
    send(&Event::End);
    // Before libtest prints the test's result (the parent's copy of the test goes on).
    std::process::exit(0);
}

/// A point of the clause loop [`super::run_in_process`] reports to its watcher.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    /// The clause is about to run.
    Start(Clause),
    /// Its verdict is the last of the conformance's, its points the last it added.
    Done(Clause),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_names_the_call_in_flight_or_just_returned() {
        let mut r = [0u64; WORDS];
        assert_eq!(
            describe_record(&r),
            "before its first call into the candidate"
        );
        let [kind, n, p, len] = Op::Build { n: 4, p: 0.01 }.words();
        r = [1, kind, n, p, len];
        assert_eq!(describe_record(&r), "during build(n = 4, p = 0.01)");
        r[1] |= RETURNED;
        assert_eq!(describe_record(&r), "after build(n = 4, p = 0.01) returned");
        let [kind, n, p, len] = Op::Insert { keys: 4096 }.words();
        assert_eq!(
            describe_record(&[7, kind, n, p, len]),
            "during insert(4096 keys)"
        );
    }

    #[test]
    fn a_signal_is_named_and_an_exit_code_given() {
        assert_eq!(
            status_text(ExitStatus::from_raw(libc::SIGABRT)),
            "killed by SIGABRT"
        );
        assert_eq!(status_text(ExitStatus::from_raw(3 << 8)), "exit status 3");
    }

    #[test]
    fn the_stderr_tail_keeps_the_message_and_drops_backtraces() {
        let dir = JobDir::new().unwrap();
        let path = dir.0.join("stderr");
        fs::write(
            &path,
            "memory allocation of 8 bytes failed\nstack backtrace:\n   0: f\n      at x.rs:1\n\
             note: Some details are omitted\nlast words\n",
        )
        .unwrap();
        assert_eq!(
            stderr_tail(&path),
            [
                "memory allocation of 8 bytes failed",
                "(backtrace omitted)",
                "last words"
            ]
        );
    }

    #[test]
    fn six_build_timeouts_make_the_protocols_minute() {
        assert_eq!(hang_limit(&Plan::quick()), crate::process::DEFAULT_TIMEOUT);
    }
}
