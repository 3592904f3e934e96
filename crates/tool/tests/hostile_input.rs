//! Hostile input to the `bloomlab` tool: every case must exit with status 2 (or fail its check
//! with 1) and a message naming the value, before anything is measured, in well under a second
//! of work. The other binaries' cases are in crates/cli/tests/hostile_input.rs.

use std::path::Path;

#[allow(dead_code)] // each package's tests use some of the helpers
#[path = "../../cli/tests/support/hostile.rs"]
mod support;
use support::*;

const BLOOMLAB: &str = env!("CARGO_BIN_EXE_bloomlab");

// ---------------------------------------------------------------- bloomlab guava

#[test]
fn guava_build_takes_counts_as_sweep_does() {
    let dir = scratch("guava");
    let keys = dir.join("keys.txt");
    std::fs::write(&keys, "1\n2\n3\n").unwrap();
    let out = dir.join("f.bin");
    let r = run(
        BLOOMLAB,
        &[
            "guava",
            "build",
            "--funnel",
            "long",
            "--n",
            "1e3",
            "--p",
            "0.01",
            "--keys",
            s(&keys),
            "--out",
            s(&out),
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // Guava sizes 1e3 at 1% to 9585 bits, 150 words.
    assert!(
        r.stdout.contains("9600 bits") && out.exists(),
        "{}",
        r.stdout
    );
    refused(
        BLOOMLAB,
        &[
            "guava",
            "build",
            "--funnel",
            "long",
            "--n",
            "1e300",
            "--p",
            "0.01",
            "--keys",
            s(&keys),
            "--out",
            s(&out),
        ],
        &["--n = \"1e300\"", "2^53"],
    );
    let err = refused(
        BLOOMLAB,
        &[
            "guava",
            "build",
            "--funnel",
            "long",
            "--n",
            "100",
            "--p",
            "1e-300",
            "--keys",
            s(&keys),
            "--out",
            s(&out),
        ],
        &["k = 997"],
    );
    assert!(!err.contains("0.000000"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------- issue 28: bounded reads

/// The longest key line (bytes), as `bloomlab_harness::keys::MAX_KEY_BYTES` states it.
const MAX_KEY: &str = "1048576";

/// Most stderr any refusal below may print: a message quotes at most a short prefix of bad input.
const SHORT_STDERR: usize = 2000;

/// A sparse file of `len` bytes starting with `head` (the rest reads as zeros; no disk is used).
fn sparse(path: &Path, head: &[u8], len: u64) {
    std::fs::write(path, head).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// Issue 28, case 8: `guava inspect /dev/zero` read until out of memory. Since issue 64 a device
/// (like a FIFO) is refused before any read, as not a regular file; a regular file's body is read
/// only up to the size its header implies plus one byte.
#[test]
fn guava_inspect_reads_an_endless_file_only_as_far_as_its_header_implies() {
    let err = refused(
        BLOOMLAB,
        &["guava", "inspect", "/dev/zero"],
        &["/dev/zero", "a character device, not a regular file"],
    );
    assert!(err.len() < SHORT_STDERR, "{err}");
    // A 2 GiB file whose header promises one word: refused after reading 6 + 8 + 1 bytes.
    let dir = scratch("guava-sparse");
    let file = dir.join("big.bin");
    let len = 2u64 << 30;
    sparse(&file, &[1, 3, 0, 0, 0, 1], len);
    let err = refused(
        BLOOMLAB,
        &["guava", "inspect", s(&file)],
        &[
            "trailing bytes",
            "1 words",
            "2147483648 bytes",
            "after byte 14",
        ],
    );
    assert!(err.len() < SHORT_STDERR, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 28, case 8: a key line is read only up to the stated maximum, and an error quotes only
/// its start (a 1 GB bad line used to be copied whole into the message).
#[test]
fn guava_key_lines_are_bounded_and_quoted_by_their_start() {
    let dir = scratch("guava-long-line");
    let out = dir.join("f.bin");
    let build = |keys: &Path| {
        vec![
            "guava".to_owned(),
            "build".into(),
            "--funnel".into(),
            "long".into(),
            "--n".into(),
            "100".into(),
            "--p".into(),
            "0.01".into(),
            "--keys".into(),
            s(keys).into(),
            "--out".into(),
            s(&out).into(),
        ]
    };
    // 1 GiB of NUL bytes without a line break.
    let huge = dir.join("huge.txt");
    sparse(&huge, b"", 1 << 30);
    let args = build(&huge);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = refused(BLOOMLAB, &args, &["huge.txt", "line 1", MAX_KEY]);
    assert!(err.len() < SHORT_STDERR, "{} bytes: {err:.3000}", err.len());
    // A long line within the limit that is not a number: quoted by its first bytes only.
    let long = dir.join("long.txt");
    std::fs::write(&long, format!("12\n{}\n", "7x".repeat(50_000))).unwrap();
    let args = build(&long);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = refused(
        BLOOMLAB,
        &args,
        &["line 2", "100000 bytes in all", "not a decimal Java long"],
    );
    assert!(err.len() < SHORT_STDERR, "{} bytes: {err:.3000}", err.len());
    assert!(!out.exists());
    // The limit is documented where the key files are given.
    for cmd in ["build", "audit", "query"] {
        let r = run(BLOOMLAB, &["guava", cmd, "--help"]);
        assert!(
            r.stdout.contains(MAX_KEY),
            "guava {cmd} --help: {}",
            r.stdout
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------- issue 28: guava audit

/// Lines `from..to` as decimal Java longs.
fn longs(path: &Path, from: u64, to: u64) {
    let text: String = (from..to).map(|i| format!("{i}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// Builds a mitz64 long-funnel filter sized for (n, p) from `keys`; returns the run.
fn guava_build(keys: &Path, n: &str, p: &str, out: &Path) -> Run {
    run(
        BLOOMLAB,
        &[
            "guava",
            "build",
            "--funnel",
            "long",
            "--n",
            n,
            "--p",
            p,
            "--keys",
            s(keys),
            "--out",
            s(out),
        ],
    )
}

fn guava_audit(filter: &Path, members: &Path, non_members: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "guava",
        "audit",
        s(filter),
        "--funnel",
        "long",
        "--members",
        s(members),
        "--non-members",
        s(non_members),
    ];
    args.extend_from_slice(extra);
    run(BLOOMLAB, &args)
}

/// Issue 28, case 10: an audit with no members said "OK (every member found)"; a saturated
/// filter audited OK (Guava's expectedFpp is 1.0 there, so the FPR check passes); `--n 0` built a
/// filter for one key without a word. Now: exit 2, exit 1 naming fill and implied FPP, exit 2.
#[test]
fn guava_audit_refuses_nothing_to_check_and_fails_a_saturated_or_overfilled_filter() {
    let dir = scratch("guava-audit");
    let (members, others, empty) = (
        dir.join("members.txt"),
        dir.join("others.txt"),
        dir.join("empty.txt"),
    );
    longs(&members, 0, 1000);
    // Disjoint from the members.
    longs(&others, 1_000_000, 1_010_000);
    std::fs::write(&empty, "").unwrap();

    // A filter built as designed: 1000 keys for n = 1000 at 1% passes (Guava's hashing is
    // deterministic, so this outcome is fixed).
    let good = dir.join("good.bin");
    let r = guava_build(&members, "1000", "0.01", &good);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    let r = guava_audit(&good, &members, &others, &["--p", "0.01"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("verdict:      OK"), "{}", r.stdout);

    // Nothing to check.
    let r = guava_audit(&good, &empty, &others, &[]);
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("empty.txt has no keys"), "{}", r.stderr);
    assert!(!r.stdout.contains("OK"), "{}", r.stdout);

    // --n 0 is refused as every count flag refuses 0.
    refused(
        BLOOMLAB,
        &[
            "guava",
            "build",
            "--funnel",
            "long",
            "--n",
            "0",
            "--p",
            "0.01",
            "--keys",
            s(&members),
            "--out",
            s(&dir.join("zero.bin")),
        ],
        &["--n = \"0\"", "from 1 to 2^53"],
    );

    // 1000 keys into a filter for one key: every bit set. The build says so; the audit fails.
    let saturated = dir.join("saturated.bin");
    let r = guava_build(&members, "1", "0.01", &saturated);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("warning: 1000 keys put into a filter built for n = 1")
            && r.stderr.contains("SATURATED"),
        "{}",
        r.stderr
    );
    let r = guava_audit(&saturated, &members, &others, &[]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("SATURATED") && r.stderr.contains("fill 1"),
        "{}",
        r.stderr
    );

    // 1000 keys into a filter for 300 at 1%: fill about 1 - e^(-7 x 1000 / 2880) = 0.91, implied
    // FPP about 0.53, far above 2 x 1%.
    let over = dir.join("over.bin");
    let r = guava_build(&members, "300", "0.01", &over);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("OVER-FILLED"), "{}", r.stderr);
    let r = guava_audit(&over, &members, &others, &["--p", "0.01"]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("OVER-FILLED")
            && r.stderr.contains("implies an FPP of")
            && r.stderr.contains("design p = 1.000000e-2"),
        "{}",
        r.stderr
    );
    refused(
        BLOOMLAB,
        &[
            "guava",
            "audit",
            s(&over),
            "--funnel",
            "long",
            "--members",
            s(&members),
            "--non-members",
            s(&others),
            "--p",
            "1.5",
        ],
        &["--p = 1.5", "(0, 1)"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------- bloomlab filter: files

/// Long enough for any of these small cases (they take milliseconds), short enough that a
/// regression to a hang fails the test instead of stalling the run.
const FINISH_WITHIN: std::time::Duration = std::time::Duration::from_secs(60);

/// `filter build` of the keys 1..=count into a filter for n keys at p = 0.01 (the default
/// layout, blocked512), written to `out`.
fn filter_build(dir: &Path, count: u64, n: u64, out: &Path) {
    let keys = dir.join(format!("keys-{count}.txt"));
    let text: String = (1..=count).map(|k| format!("{k}\n")).collect();
    std::fs::write(&keys, text).unwrap();
    let r = run_within(
        BLOOMLAB,
        &[
            "filter",
            "build",
            "--n",
            &n.to_string(),
            "--p",
            "0.01",
            "--keys",
            s(&keys),
            "--out",
            s(out),
        ],
        FINISH_WITHIN,
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

/// Issue 64, first defect: `filter stat` on a saturated blocked512 filter never returned (the
/// blocked theory at the estimate, 2^64 keys when every bit is set, summed ln(i!) up to i = 2^64
/// / blocks). Now stat says what a full filter tells, and monitor's Nagios perfdata and
/// Prometheus file hold only numbers (it printed `estimated_keys=inf`).
#[test]
fn stat_and_monitor_answer_on_a_saturated_or_overfilled_blocked_filter() {
    let dir = scratch("saturated");
    for (keys, full) in [(20_000, true), (15_000, true), (4_000, false)] {
        let file = dir.join(format!("f{keys}.bloom"));
        filter_build(&dir, keys, 1000, &file);
        let r = run_within(
            BLOOMLAB,
            &["filter", "stat", "--file", s(&file)],
            FINISH_WITHIN,
        );
        assert_eq!(r.code, Some(0), "{keys} keys: {}\n{}", r.stdout, r.stderr);
        assert_eq!(
            r.stdout
                .contains("estimated     unbounded: every bit is set"),
            full,
            "{keys} keys: {}",
            r.stdout
        );
        assert!(!r.stdout.contains("inf"), "{keys} keys: {}", r.stdout);
        let prom = dir.join(format!("f{keys}.prom"));
        let r = run_within(
            BLOOMLAB,
            &[
                "filter",
                "monitor",
                "--file",
                s(&file),
                "--prometheus",
                s(&prom),
            ],
            FINISH_WITHIN,
        );
        // Critical: the implied rate is far past twice the design rate.
        assert_eq!(r.code, Some(2), "{keys} keys: {}\n{}", r.stdout, r.stderr);
        let (text, perfdata) = r.stdout.trim_end().split_once(" | ").unwrap();
        assert_eq!(text.contains("key count is unbounded"), full, "{text}");
        for item in perfdata.split(' ') {
            let (label, values) = item.split_once('=').unwrap();
            for v in values.split(';').filter(|v| !v.is_empty()) {
                assert!(
                    v.parse::<f64>().is_ok_and(f64::is_finite),
                    "{keys} keys: perfdata {label} = {v:?} is not a number: {perfdata}"
                );
            }
        }
        assert_eq!(perfdata.contains("estimated_keys"), !full, "{perfdata}");
        let metrics = std::fs::read_to_string(&prom).unwrap();
        for line in metrics.lines().filter(|l| !l.starts_with('#')) {
            let value = line.rsplit(' ').next().unwrap();
            assert!(
                value == "+Inf" || value.parse::<f64>().is_ok_and(f64::is_finite),
                "{keys} keys: Prometheus line {line:?}"
            );
        }
    }
}

/// Issue 64, fourth defect: `filter build` (and `export`, which writes through the same code)
/// wrote mode 0600 and turned an existing 0644 file into 0600. A new file gets `File::create`'s
/// mode (0666 less the umask), a replaced one keeps its own.
#[test]
fn filter_files_get_the_umask_mode_or_keep_the_mode_they_replace() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = scratch("modes");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let probe = dir.join("probe");
    std::fs::File::create(&probe).unwrap();
    let file = dir.join("f.bloom");
    filter_build(&dir, 100, 1000, &file);
    assert_eq!(mode(&file), mode(&probe), "a new filter file");
    for kept in [0o644, 0o640, 0o604] {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(kept)).unwrap();
        filter_build(&dir, 200, 1000, &file);
        assert_eq!(mode(&file), kept, "{kept:o} replaced: {:o}", mode(&file));
    }
}

/// Issue 64, sixth defect: a FIFO named by `--file` blocked in open() before any check. Every
/// command that reads a filter file refuses it at once, naming it and saying what it is; import
/// does so before contacting the server (port 1: nothing listens there).
#[test]
fn a_fifo_named_as_a_filter_file_is_refused_at_once() {
    let dir = scratch("fifo");
    let fifo = dir.join("pipe.bloom");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates the file.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let keys = dir.join("keys.txt");
    std::fs::write(&keys, "1\n2\n").unwrap();
    let cases: [&[&str]; 5] = [
        &["filter", "stat", "--file", s(&fifo)],
        &["filter", "monitor", "--file", s(&fifo)],
        &["filter", "check", "--file", s(&fifo), "--keys", s(&keys)],
        &[
            "filter",
            "import",
            "--redis",
            "redis://127.0.0.1:1",
            "--name",
            "x",
            "--file",
            s(&fifo),
        ],
        &["guava", "inspect", s(&fifo)],
    ];
    for args in cases {
        let r = run_within(BLOOMLAB, args, FINISH_WITHIN);
        // monitor says it on stdout (`FILTER UNKNOWN - ...`, exit 3, as a Nagios plugin must).
        let said = format!("{}{}", r.stdout, r.stderr);
        assert!(
            r.code.is_some_and(|c| c >= 2) && said.contains("pipe.bloom") && said.contains("FIFO"),
            "{args:?}: exit {:?}\n{}\n{}",
            r.code,
            r.stdout,
            r.stderr
        );
    }
}
