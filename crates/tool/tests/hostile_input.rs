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

/// Issue 28, case 8: `guava inspect /dev/zero` read until out of memory. The header is read first
/// (here: k = 0), and the body only up to the size it implies plus one byte.
#[test]
fn guava_inspect_reads_an_endless_file_only_as_far_as_its_header_implies() {
    let err = refused(
        BLOOMLAB,
        &["guava", "inspect", "/dev/zero"],
        &["/dev/zero", "k = 0"],
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
