//! The process protocol end to end: the reference adapters (Python and Rust) answer exactly
//! through [`ProcessCandidate`], and every failure the spec names is reported as the error it
//! promises, by a tiny misbehaving Python adapter written to a temp dir. Every adapter writes
//! its pid to a file, and each test checks afterwards that all of them were reaped (no zombie).
//!
//! Python is `python3` on PATH; without it the Python tests print why they skip, unless
//! `BLOOMLAB_REQUIRE_SERVICES=1`, when they fail.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use bloomlab_conform::process::{Command, MAGIC, ProcessCandidate, VERSION};
use bloomlab_conform::{Candidate, CandidateError, KeyBatch, Stats};

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/conform")
}

/// The Python package whose `protocol` module every Python adapter serves with.
fn python_package() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("python")
}

/// Whether `python3` runs; panics instead of skipping when services are required.
fn python(test: &str) -> bool {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("BLOOMLAB_REQUIRE_SERVICES").as_deref() != Ok("1"),
            "bloomlab-conform test {test} cannot run: python3 is not on PATH, and BLOOMLAB_REQUIRE_SERVICES=1 makes that a failure"
        );
        // Not eprintln!: the test harness captures that, and a skip must be seen.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED bloomlab-conform test {test}: python3 is not on PATH. To run it: apt-get install -y python3 (Debian)"
        );
    }
    ok
}

/// A temp dir holding adapters, and the file their pids go to.
struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    fn new() -> Lab {
        Lab {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn pids(&self) -> PathBuf {
        self.dir.path().join("pids")
    }

    /// A Python adapter: a prelude (pid recorded, frame helpers), then `body`.
    fn script(&self, name: &str, body: &str) -> Command {
        let prelude = format!(
            r#"import json, os, signal, struct, sys, time
open({pids:?}, "a").write(f"{{os.getpid()}}\n")
inp, out = sys.stdin.buffer, sys.stdout.buffer
def read():
    head = inp.read(4)
    if len(head) < 4:
        sys.exit(0)
    (n,) = struct.unpack("<I", head)
    body = inp.read(n)
    return body[0], body[1:]
def send(status, payload=b""):
    out.write(struct.pack("<I", 1 + len(payload)) + bytes([status]) + payload)
    out.flush()
def hello(protocol=1, caps=()):
    return json.dumps({{"protocol": protocol, "name": "test/{name}", "version": "0",
                       "language": "python", "capabilities": list(caps)}}).encode()
"#,
            pids = self.pids().to_str().unwrap()
        );
        let path = self.dir.path().join(format!("{name}.py"));
        std::fs::write(&path, format!("{prelude}{body}")).unwrap();
        Command::new(["python3".into(), path.into_os_string()])
    }

    /// A real adapter from `scripts/conform`, wrapped so its pid is recorded too.
    fn reference(&self, file: &str) -> Command {
        let path = scripts().join(file);
        let body = format!(
            "sys.argv = [{p:?}]\nsys.path.insert(0, {d:?})\nimport runpy\nrunpy.run_path({p:?}, run_name='__main__')\n",
            p = path.to_str().unwrap(),
            d = scripts().to_str().unwrap()
        );
        self.script(file.trim_end_matches(".py"), &body)
    }

    /// Panics unless every recorded adapter process is gone (exited and reaped).
    fn assert_reaped(&self) {
        let pids = std::fs::read_to_string(self.pids()).unwrap_or_default();
        assert!(!pids.is_empty(), "no adapter recorded its pid");
        for pid in pids.lines() {
            let stat = Path::new("/proc").join(pid).join("stat");
            if let Ok(s) = std::fs::read_to_string(&stat) {
                panic!("adapter pid {pid} still exists (not reaped): {s}");
            }
        }
    }
}

fn batch<'a>(keys: impl IntoIterator<Item = &'a [u8]>) -> KeyBatch {
    let mut b = KeyBatch::new();
    for k in keys {
        b.push(k);
    }
    b
}

/// `count` distinct 4-byte keys.
fn numbered(count: u32) -> KeyBatch {
    let mut b = KeyBatch::new();
    for i in 0..count {
        b.push(&i.to_le_bytes());
    }
    b
}

/// Members (empty, short, 70 KB) are present and non-members absent, before and after a
/// serialization round trip; stats count the key bytes.
fn check_exact(candidate: &ProcessCandidate, name: &str) {
    let about = candidate.about();
    assert_eq!(about.name, name);
    assert!(about.capabilities.serialize && about.capabilities.stats);
    let long = vec![0xabu8; 70_000];
    let mut long2 = long.clone();
    long2[69_999] = 0;
    let members = batch([&b""[..], b"a", b"bloom", &long]);
    let strangers = batch([&b"b"[..], b"bloo", b"bloom\0", &long2, &long[..69_999]]);
    let mut f = candidate.build(1000, 0.01).unwrap();
    let mut out = vec![true; 3];
    f.query(&members, &mut out).unwrap();
    assert_eq!(out, [false; 4], "{name}: empty set answered present");
    f.insert(&members).unwrap();
    f.query(&members, &mut out).unwrap();
    assert_eq!(out, [true; 4], "{name}: members");
    f.query(&strangers, &mut out).unwrap();
    assert_eq!(out, [false; 5], "{name}: non-members");
    f.query(&KeyBatch::new(), &mut out).unwrap();
    assert!(out.is_empty());
    let stats = f.stats().unwrap();
    assert_eq!(stats.memory_bytes, Some(70_000 + 1 + 5));
    let bytes = f.serialize().unwrap().expect("declares serialize");
    drop(f);
    let mut g = candidate.deserialize(&bytes).unwrap();
    g.query(&members, &mut out).unwrap();
    assert_eq!(out, [true; 4], "{name}: members after a round trip");
    g.query(&strangers, &mut out).unwrap();
    assert_eq!(out, [false; 5], "{name}: non-members after a round trip");
}

#[test]
fn the_python_reference_adapter_answers_exactly() {
    if !python("the_python_reference_adapter_answers_exactly") {
        return;
    }
    let lab = Lab::new();
    let c = ProcessCandidate::connect(lab.reference("exact_set.py")).unwrap();
    assert_eq!(c.about().language, "python");
    assert!(c.isolated());
    check_exact(&c, "python/exact-set");
    drop(c);
    lab.assert_reaped();
}

#[test]
fn the_rust_reference_adapter_answers_exactly() {
    let c = ProcessCandidate::connect(Command::new([env!("CARGO_BIN_EXE_conform-exact-adapter")]))
        .unwrap();
    check_exact(&c, "rust/exact-set");
}

/// The reference adapters, which authors are told to copy, refuse what the bad-input clause
/// calls bad (n = 0, p outside (0, 1), NaN), naming the value and the range, and stay usable.
#[test]
fn the_reference_adapters_refuse_bad_input_naming_the_value() {
    let lab = Lab::new();
    let mut commands = vec![Command::new([env!("CARGO_BIN_EXE_conform-exact-adapter")])];
    let have_python = python("the_reference_adapters_refuse_bad_input_naming_the_value");
    if have_python {
        commands.push(lab.reference("exact_set.py"));
    }
    for command in commands {
        let c = ProcessCandidate::connect(command).unwrap();
        let name = c.about().name;
        let cases: [(u64, f64, &[&str]); 6] = [
            (0, 0.01, &["n = 0", "at least 1"]),
            (10, 0.0, &["p = 0", "(0, 1)"]),
            (10, -0.01, &["p = -0.01", "(0, 1)"]),
            (10, 1.0, &["p = 1", "(0, 1)"]),
            (10, f64::NAN, &["p = ", "(0, 1)"]),
            (10, f64::INFINITY, &["p = ", "(0, 1)"]),
        ];
        for (n, p, wanted) in cases {
            match c.build(n, p).map(|_| ()) {
                Err(CandidateError::Refused { message, .. }) => {
                    for w in wanted {
                        assert!(message.contains(w), "{name}: n = {n}, p = {p}: {message}");
                    }
                }
                other => panic!("{name}: n = {n}, p = {p} was not refused: {other:?}"),
            }
        }
        let mut f = c.build(10, 0.01).unwrap();
        f.insert(&numbered(3)).unwrap();
        let mut out = Vec::new();
        f.query(&numbered(4), &mut out).unwrap();
        assert_eq!(out, [true, true, true, false], "{name}");
    }
    if have_python {
        lab.assert_reaped();
    }
}

/// The protocol's JSON is UTF-8: invalid UTF-8 is a protocol error even in a field bloomlab
/// ignores (serde_json reading bytes skips an ignored string without checking it).
#[test]
fn invalid_utf8_in_an_ignored_json_field_is_a_protocol_error() {
    if !python("invalid_utf8_in_an_ignored_json_field_is_a_protocol_error") {
        return;
    }
    let lab = Lab::new();
    let c = ProcessCandidate::connect(lab.script(
        "latin1",
        r#"while True:
    op, p = read()
    if op == 1: send(0, hello(caps=["stats"]))
    elif op == 5: send(0, b'{"memory_bytes": 10, "layout": null, "note": "caf\xe9"}')
    elif op == 8: send(0); sys.exit(0)
    else: send(0)
"#,
    ))
    .unwrap();
    let mut f = c.build(10, 0.01).unwrap();
    let e = f.stats().unwrap_err();
    assert!(
        protocol_detail(&e).contains("STATS's answer is not UTF-8 JSON"),
        "{e}"
    );
    drop((f, c));

    let Some(e) = failure(
        "latin1-hello",
        r#"read()
send(0, hello()[:-1] + b', "vendor": "caf\xe9"}')
read()
"#,
        LIMIT,
    ) else {
        return;
    };
    assert!(
        protocol_detail(&e).contains("HELLO's answer is not UTF-8 JSON"),
        "{e}"
    );
    lab.assert_reaped();
}

#[test]
fn the_null_adapters_answer_absent_and_support_nothing_optional() {
    let mut commands = vec![Command::new([env!("CARGO_BIN_EXE_conform-null-adapter")])];
    let lab = Lab::new();
    let have_python = python("the_null_adapters_answer_absent_and_support_nothing_optional");
    if have_python {
        commands.push(lab.reference("null.py"));
    }
    for command in commands {
        let c = ProcessCandidate::connect(command).unwrap();
        let name = c.about().name;
        assert_eq!(c.about().capabilities, Default::default(), "{name}");
        let keys = numbered(4096);
        let mut f = c.build(10, 0.5).unwrap();
        f.insert(&keys).unwrap();
        let mut out = Vec::new();
        f.query(&keys, &mut out).unwrap();
        assert_eq!(out, vec![false; 4096], "{name}");
        assert_eq!(
            f.stats().unwrap(),
            Stats::default(),
            "{name}: STATS unsupported is nothing known"
        );
        assert_eq!(
            f.serialize().unwrap(),
            None,
            "{name}: SERIALIZE unsupported is None"
        );
        let e = c
            .deserialize(b"x")
            .err()
            .expect("deserialize is unsupported");
        assert!(
            matches!(e, CandidateError::Unsupported { .. }),
            "{name}: {e}"
        );
    }
    if have_python {
        lab.assert_reaped();
    }
}

/// A refusal leaves the adapter running; the next request works.
#[test]
fn a_refusal_is_refused_and_the_adapter_goes_on() {
    if !python("a_refusal_is_refused_and_the_adapter_goes_on") {
        return;
    }
    let lab = Lab::new();
    let c = ProcessCandidate::connect(lab.script(
        "refuses",
        r#"while True:
    op, p = read()
    if op == 1: send(0, hello())
    elif op == 2: send(0)
    elif op == 3: send(1, b"ValueError: keys too long")
    elif op == 4: send(0, b"\x01")
    elif op == 8: send(0); sys.exit(0)
    else: send(2, b"what")
"#,
    ))
    .unwrap();
    let mut f = c.build(10, 0.01).unwrap();
    let e = f.insert(&batch([&b"k"[..]])).unwrap_err();
    assert_eq!(
        e,
        CandidateError::Refused {
            subject: "test/refuses".into(),
            message: "ValueError: keys too long".into()
        }
    );
    let mut out = Vec::new();
    f.query(&batch([&b"k"[..]]), &mut out).unwrap();
    assert_eq!(out, [true]);
    drop((f, c));
    lab.assert_reaped();
}

/// A library's exception becomes a refusal with its message, and its prints go to stderr instead
/// of corrupting the frames (`bloomlab_conform.protocol`).
#[test]
fn protocol_py_turns_exceptions_into_refusals_and_prints_into_stderr() {
    if !python("protocol_py_turns_exceptions_into_refusals_and_prints_into_stderr") {
        return;
    }
    let lab = Lab::new();
    let body = format!(
        r#"sys.dont_write_bytecode = True
sys.path.insert(0, {dir:?})
from bloomlab_conform import protocol
class Picky:
    name, version, language, capabilities = "test/picky", "0", "python", []
    def create(self, n, p):
        print("library chatter on stdout")
        if n == 0:
            raise ValueError(f"n must be positive, got {{n}}")
        self.keys = set()
    def insert(self, keys):
        self.keys.update(keys)
    def query(self, keys):
        return [k in self.keys for k in keys]
protocol.serve(Picky())
"#,
        dir = python_package().to_str().unwrap()
    );
    let c = ProcessCandidate::connect(lab.script("picky", &body)).unwrap();
    let e = c.build(0, 0.01).err().expect("n = 0 is refused");
    assert_eq!(
        e,
        CandidateError::Refused {
            subject: "test/picky".into(),
            message: "ValueError: n must be positive, got 0".into()
        }
    );
    let mut f = c.build(5, f64::NAN).unwrap();
    f.insert(&batch([&b"x"[..]])).unwrap();
    let mut out = Vec::new();
    f.query(&batch([&b"x"[..], b"y"]), &mut out).unwrap();
    assert_eq!(out, [true, false]);
    drop((f, c));
    lab.assert_reaped();
}

/// PANIC becomes `Panicked` with its message and UNSUPPORTED to INSERT becomes `Unsupported`;
/// the adapter goes on after either.
#[test]
fn panic_and_unsupported_answers_keep_the_adapter() {
    if !python("panic_and_unsupported_answers_keep_the_adapter") {
        return;
    }
    let lab = Lab::new();
    let body = r#"while True:
    op, p = read()
    if op == 1: send(0, hello())
    elif op == 2:
        (n,) = struct.unpack_from("<Q", p)
        if n == 0: send(3, b"attempt to divide by zero")
        else: send(0)
    elif op == 3: send(2, b"insert")
    elif op == 4: send(0, b"\x01")
    elif op == 8: send(0); sys.exit(0)
"#;
    let c = ProcessCandidate::connect(lab.script("panicky", body)).unwrap();
    // Each build is a fresh process: the panic in one cannot poison the next.
    let e = c.build(0, 0.01).err().expect("CREATE with n = 0 panics");
    assert_eq!(
        e,
        CandidateError::Panicked {
            subject: "test/panicky".into(),
            message: "attempt to divide by zero".into()
        }
    );
    let mut f = c.build(10, 0.01).unwrap();
    let e = f.insert(&batch([&b"k"[..]])).unwrap_err();
    assert_eq!(
        e,
        CandidateError::Unsupported {
            subject: "test/panicky".into(),
            operation: "insert".into()
        }
    );
    let mut out = Vec::new();
    f.query(&batch([&b"k"[..]]), &mut out).unwrap();
    assert_eq!(out, [true], "the adapter still answers after UNSUPPORTED");
    drop((f, c));
    lab.assert_reaped();
}

#[test]
fn a_command_that_does_not_exist_is_an_io_error_naming_it() {
    let e = ProcessCandidate::connect(Command::new(["/nonexistent/bloomlab-adapter", "--x"]))
        .err()
        .unwrap();
    assert!(matches!(e, CandidateError::Io { .. }), "{e}");
    assert!(
        e.to_string().contains("/nonexistent/bloomlab-adapter"),
        "{e}"
    );
}

/// Builds the misbehaving adapter `body` and returns the error of `connect`, or else of
/// `build(10, 0.01)` and a query of 10 keys; then checks it was reaped.
fn failure(name: &str, body: &str, timeout: Duration) -> Option<CandidateError> {
    if !python(&format!("of the misbehaving adapter test/{name}")) {
        return None;
    }
    let lab = Lab::new();
    let command = lab.script(name, body).with_timeout(timeout);
    let e = match ProcessCandidate::connect(command) {
        Err(e) => e,
        Ok(c) => match c.build(10, 0.01) {
            Err(e) => e,
            Ok(mut f) => {
                let keys = numbered(10);
                let e = f.query(&keys, &mut Vec::new()).unwrap_err();
                // Later requests get the same error: the adapter is gone.
                assert_eq!(f.insert(&keys).unwrap_err(), e);
                e
            }
        },
    };
    lab.assert_reaped();
    Some(e)
}

/// HELLO and CREATE answered, then `query` runs on QUERY.
fn on_query(query: &str) -> String {
    format!(
        "while True:\n    op, p = read()\n    if op == 1: send(0, hello())\n    elif op == 2: send(0)\n    elif op == 4:\n        {query}\n    else: send(0)\n"
    )
}

fn on_create(create: &str) -> String {
    format!(
        "while True:\n    op, p = read()\n    if op == 1: send(0, hello())\n    elif op == 2:\n        {create}\n    else: send(0)\n"
    )
}

const LIMIT: Duration = Duration::from_secs(10);

fn protocol_detail(e: &CandidateError) -> &str {
    match e {
        CandidateError::Protocol { detail, .. } => detail,
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[test]
fn a_wrong_protocol_version_is_a_protocol_error() {
    let Some(e) = failure(
        "version",
        "read()\nsend(0, hello(protocol=2))\nread()\n",
        LIMIT,
    ) else {
        return;
    };
    assert!(
        protocol_detail(&e).contains("protocol version 2, bloomlab speaks 1"),
        "{e}"
    );
}

#[test]
fn an_unknown_capability_is_a_protocol_error() {
    let Some(e) = failure(
        "caps",
        "read()\nsend(0, hello(caps=['serialise']))\nread()\n",
        LIMIT,
    ) else {
        return;
    };
    assert!(
        protocol_detail(&e).contains("unknown capability \"serialise\""),
        "{e}"
    );
}

#[test]
fn invalid_json_is_a_protocol_error() {
    let Some(e) = failure("json", "read()\nsend(0, b'{not json')\nread()\n", LIMIT) else {
        return;
    };
    assert!(
        protocol_detail(&e).contains("not the protocol's JSON"),
        "{e}"
    );
    assert!(e.to_string().contains("during HELLO"), "{e}");
}

#[test]
fn a_frame_too_long_is_a_protocol_error_without_allocating_it() {
    let body = "read()\nout.write(struct.pack('<I', 0xFFFFFFFF)); out.flush()\nread()\n";
    let Some(e) = failure("long", body, LIMIT) else {
        return;
    };
    assert!(
        protocol_detail(&e).contains("frame of 4294967295 bytes (allowed 1..=2^30)"),
        "{e}"
    );
}

#[test]
fn an_unknown_status_is_a_protocol_error() {
    let Some(e) = failure("status", &on_create("send(9)"), LIMIT) else {
        return;
    };
    assert!(protocol_detail(&e).contains("unknown status 0x09"), "{e}");
    assert!(
        e.to_string().contains("test/status"),
        "names the adapter: {e}"
    );
}

#[test]
fn a_short_bitmap_is_a_protocol_error() {
    let Some(e) = failure("bitmap", &on_query("send(0, b'\\xff')"), LIMIT) else {
        return;
    };
    assert!(
        protocol_detail(&e).contains("bitmap of 1 bytes for 10 keys (expected 2)"),
        "{e}"
    );
    assert!(e.to_string().contains("during QUERY"), "{e}");
}

#[test]
fn an_exit_mid_request_shows_the_exit_status() {
    let Some(e) = failure("exits", &on_query("sys.exit(3)"), LIMIT) else {
        return;
    };
    match &e {
        CandidateError::Exited {
            operation, status, ..
        } => {
            assert_eq!(operation, "QUERY");
            assert_eq!(status, "exit status 3");
        }
        other => panic!("expected Exited, got {other:?}"),
    }
}

#[test]
fn a_signal_is_named() {
    let Some(e) = failure("aborts", &on_create("os.abort()"), LIMIT) else {
        return;
    };
    match &e {
        CandidateError::Exited {
            operation, status, ..
        } => {
            assert_eq!(operation, "CREATE");
            assert_eq!(status, "killed by signal 6 (SIGABRT)");
        }
        other => panic!("expected Exited, got {other:?}"),
    }
}

#[test]
fn a_hang_on_create_times_out_and_is_killed() {
    let start = Instant::now();
    let body =
        on_create("sys.stderr.write('creating...\\n'); sys.stderr.flush(); time.sleep(3600)");
    let Some(e) = failure("hangs", &body, Duration::from_secs(1)) else {
        return;
    };
    // A guard against a hang, not a timing assertion: the limit is 1 s, the bound generous.
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "took {:?}",
        start.elapsed()
    );
    match &e {
        CandidateError::Timeout {
            operation,
            seconds,
            stderr,
            ..
        } => {
            assert_eq!(operation, "CREATE");
            assert_eq!(*seconds, 1.0);
            assert_eq!(stderr, "creating...");
        }
        other => panic!("expected Timeout, got {other:?}"),
    }
}

#[test]
fn the_stderr_tail_is_shown_and_bounded() {
    let create = "sys.stderr.write('x' * 20000 + '\\nTraceback: my-library ran out of cheese\\n'); sys.stderr.flush(); sys.exit(1)";
    let Some(e) = failure("stderr", &on_create(create), LIMIT) else {
        return;
    };
    match &e {
        CandidateError::Exited { status, stderr, .. } => {
            assert_eq!(status, "exit status 1");
            assert!(
                stderr.ends_with("Traceback: my-library ran out of cheese"),
                "{stderr}"
            );
            assert!(stderr.len() <= 4096, "tail of {} bytes", stderr.len());
        }
        other => panic!("expected Exited, got {other:?}"),
    }
}

/// An adapter that ignores CLOSE (and the end of its stdin) is killed about a second after the
/// instance is dropped, and reaped.
#[test]
fn an_adapter_that_ignores_close_is_killed_on_drop() {
    if !python("an_adapter_that_ignores_close_is_killed_on_drop") {
        return;
    }
    let lab = Lab::new();
    let body = "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    h = inp.read(4)\n    if len(h) < 4: time.sleep(3600)\n    (n,) = struct.unpack('<I', h); b = inp.read(n)\n    if b[0] == 1: send(0, hello())\n    elif b[0] == 8: time.sleep(3600)\n    else: send(0)\n";
    let c = ProcessCandidate::connect(lab.script("stubborn", body)).unwrap();
    let f = c.build(1, 0.1).unwrap();
    drop((f, c));
    lab.assert_reaped();
}

/// An adapter that stops reading its stdin cannot block bloomlab's write of a large batch: the
/// request times out and the adapter is killed.
#[test]
fn an_adapter_that_stops_reading_times_out() {
    if !python("an_adapter_that_stops_reading_times_out") {
        return;
    }
    let lab = Lab::new();
    let body = on_create("send(0)\n        time.sleep(3600)");
    let c = ProcessCandidate::connect(
        lab.script("deaf", &body)
            .with_timeout(Duration::from_secs(1)),
    )
    .unwrap();
    let mut f = c.build(10, 0.01).unwrap();
    // 4 MiB: far more than a pipe holds.
    let big = vec![7u8; 4 << 20];
    let e = f.insert(&batch([&big[..]])).unwrap_err();
    assert!(
        matches!(&e, CandidateError::Timeout { operation, .. } if operation == "INSERT"),
        "{e}"
    );
    drop((f, c));
    lab.assert_reaped();
}

/// A wrapper script's child (the real adapter) is killed with it on a timeout, not left running.
#[test]
fn a_timeout_kills_what_a_wrapper_script_started() {
    if !python("a_timeout_kills_what_a_wrapper_script_started") {
        return;
    }
    let lab = Lab::new();
    let inner = lab.script("wrapped", &on_create("time.sleep(3600)"));
    // `; exit 0` keeps sh from exec'ing python: python is sh's child, not sh itself.
    let line = format!(
        "{} {}; exit 0",
        inner.argv[0].to_string_lossy(),
        inner.argv[1].to_string_lossy()
    );
    let command = Command::new(["sh", "-c", line.as_str()]).with_timeout(Duration::from_secs(1));
    let c = ProcessCandidate::connect(command).unwrap();
    let e = c.build(10, 0.01).err().expect("CREATE hangs");
    assert!(
        matches!(&e, CandidateError::Timeout { operation, .. } if operation == "CREATE"),
        "{e}"
    );
    drop(c);
    // The python processes are sh's children: once orphaned, init reaps them, not this test, so
    // wait (bounded) until each is gone or a zombie, i.e. no longer running.
    let pids = std::fs::read_to_string(lab.pids()).unwrap();
    assert_eq!(
        pids.lines().count(),
        2,
        "connect's and build's adapters: {pids}"
    );
    for pid in pids.lines() {
        let stat = Path::new("/proc").join(pid).join("stat");
        let start = Instant::now();
        loop {
            match std::fs::read_to_string(&stat) {
                Err(_) => break,
                Ok(s)
                    if s.rsplit(')')
                        .next()
                        .is_some_and(|rest| rest.trim_start().starts_with('Z')) =>
                {
                    break;
                }
                Ok(s) if start.elapsed() > Duration::from_secs(10) => {
                    panic!("wrapped adapter {pid} still runs: {s}")
                }
                Ok(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

/// Raw frames to an adapter process: (status, payload) of the answer to `request`.
fn exchange(child: &mut std::process::Child, request: &[u8]) -> (u8, Vec<u8>) {
    let stdin = child.stdin.as_mut().unwrap();
    stdin
        .write_all(&(request.len() as u32).to_le_bytes())
        .unwrap();
    stdin.write_all(request).unwrap();
    stdin.flush().unwrap();
    let stdout = child.stdout.as_mut().unwrap();
    let mut head = [0u8; 4];
    stdout.read_exact(&mut head).unwrap();
    let mut body = vec![0u8; u32::from_le_bytes(head) as usize];
    stdout.read_exact(&mut body).unwrap();
    (body[0], body[1..].to_vec())
}

/// Both adapter sides (Rust `serve`, Python `bloomlab_conform.protocol`) refuse a wrong magic or version, answer
/// an unknown opcode UNSUPPORTED and a request before CREATE with ERROR, and exit 0 on CLOSE.
#[test]
fn adapters_refuse_a_wrong_magic_or_version_and_unknown_opcodes() {
    let mut argvs = vec![vec![
        env!("CARGO_BIN_EXE_conform-exact-adapter").to_string(),
    ]];
    if python("adapters_refuse_a_wrong_magic_or_version_and_unknown_opcodes") {
        argvs.push(vec![
            "python3".into(),
            scripts().join("exact_set.py").to_string_lossy().into(),
        ]);
    }
    for argv in argvs {
        let mut child = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut hello = vec![1u8];
        hello.extend_from_slice(b"bloomlab-conforM");
        hello.extend_from_slice(&VERSION.to_le_bytes());
        assert_eq!(exchange(&mut child, &hello).0, 1, "{argv:?}: wrong magic");
        let mut hello = vec![1u8];
        hello.extend_from_slice(MAGIC);
        hello.extend_from_slice(&2u16.to_le_bytes());
        assert_eq!(exchange(&mut child, &hello).0, 1, "{argv:?}: wrong version");
        assert_eq!(
            exchange(&mut child, &[0x42]),
            (2, b"opcode 66".to_vec()),
            "{argv:?}"
        );
        let (status, message) = exchange(&mut child, &[4, 0, 0, 0, 0]);
        assert_eq!(status, 1, "{argv:?}: QUERY before CREATE");
        assert!(
            String::from_utf8_lossy(&message).contains("CREATE"),
            "{argv:?}"
        );
        assert_eq!(exchange(&mut child, &[8]), (0, vec![]), "{argv:?}: CLOSE");
        assert_eq!(child.wait().unwrap().code(), Some(0), "{argv:?}");
    }
}
