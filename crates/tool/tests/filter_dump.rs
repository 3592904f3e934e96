//! `bloomlab filter export` and `import` as an operator runs them, against a real server
//! (`BLOOMLAB_REDIS_URL`) and cluster (`BLOOMLAB_REDIS_CLUSTER_URLS`); skipped with a message when
//! unset, a failure when `BLOOMLAB_REQUIRE_SERVICES=1`: the issue's round trip (create, add,
//! export, drop, import, check), a move into the cluster, an export to a full disk, and bad files
//! and flags, each exit 2 with nothing changed.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use bloomlab_redis::Connection;
use bloomlab_redis::admin::key_type;
use bloomlab_redis::keys::{config_key, shard_key};

const BLOOMLAB: &str = env!("CARGO_BIN_EXE_bloomlab");

/// The URL(s) in `var`; None (the test skipped, said on stderr) when unset, a failure when
/// BLOOMLAB_REQUIRE_SERVICES=1.
fn url(test: &str, var: &str, how: &str) -> Option<String> {
    let url = std::env::var(var).ok().filter(|u| !u.trim().is_empty());
    if url.is_none() {
        let how = format!("export {var}=$(scripts/redis-local.sh {how})");
        if std::env::var("BLOOMLAB_REQUIRE_SERVICES").is_ok_and(|v| v == "1") {
            panic!(
                "bloomlab-tool test {test} cannot run: {var} is not set, and BLOOMLAB_REQUIRE_SERVICES=1 makes a missing service a failure. Start it: {how}"
            );
        }
        // Straight to stderr: the harness captures eprintln! of passing tests.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED bloomlab-tool test {test}: {var} is not set. To run it: {how}"
        );
    }
    url
}

fn single(test: &str) -> Option<String> {
    url(test, "BLOOMLAB_REDIS_URL", "start")
}

/// A filter name of this test process only.
fn unique(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("bloomlab-test:{test}:{}:{nanos}", std::process::id())
}

fn run(args: &[&str]) -> Output {
    Command::new(BLOOMLAB).args(args).output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs and requires exit 0; returns stdout.
fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?}\n{}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs and requires exit 2 with `needle` in stderr; returns stderr.
fn refused(args: &[&str], needle: &str) -> String {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        o.status.code() == Some(2) && err.contains(needle),
        "{args:?}: expected exit 2 and {needle:?}\n{}",
        text(&o)
    );
    err
}

/// Whether any key of filter `name` with up to `shards` shards exists at `urls`.
fn any_key(urls: &str, name: &str, shards: u64) -> Option<String> {
    let mut conn = Connection::open(urls).unwrap();
    std::iter::once(config_key(name))
        .chain((0..shards).map(|i| shard_key(name, i)))
        .find(|k| key_type(&mut conn, k).unwrap() != "none")
}

fn keys_file(dir: &Path, name: &str, family: &str, count: u64) -> PathBuf {
    let path = dir.join(name);
    let body: String = (0..count).map(|i| format!("{family}-{i}\n")).collect();
    std::fs::write(&path, body).unwrap();
    path
}

/// create -> add -> export -> drop -> import -> check: every member found, the non-members'
/// answers unchanged, and a second export byte for byte the first.
fn issue_round_trip(urls: &str, layout: &str) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = unique("dump-cli");
    let members = keys_file(d, "members", "member", 20_000);
    let others = keys_file(d, "others", "other", 20_000);
    let (m, o) = (members.to_str().unwrap(), others.to_str().unwrap());
    let file = d.join("f.bloomlab");
    let f = file.to_str().unwrap();
    let target = ["--redis", urls, "--name", &name];
    ok(&[
        &["filter", "create"][..],
        &target,
        &["--layout", layout, "--n", "20000", "--p", "0.01"],
    ]
    .concat());
    ok(&[&["filter", "add"][..], &target, &["--keys", m]].concat());
    let before = ok(&[&["filter", "check"][..], &target, &["--keys", o]].concat());
    let summary = ok(&[&["filter", "export"][..], &target, &["--out", f]].concat());
    assert!(summary.contains("bytes in bloomlab format"), "{summary}");
    ok(&[&["filter", "drop"][..], &target].concat());
    assert_eq!(any_key(urls, &name, 1), None);
    ok(&[
        "filter", "import", "--redis", urls, "--name", &name, "--file", f,
    ]);
    let counts = ok(&[
        &["filter", "check"][..],
        &target,
        &["--keys", m, "--members", "--count"],
    ]
    .concat());
    assert!(counts.contains("20000 maybe present, 0 absent"), "{counts}");
    let after = ok(&[&["filter", "check"][..], &target, &["--keys", o]].concat());
    assert!(before == after, "{layout}: answers on non-members changed");
    let again = d.join("again.bloomlab");
    ok(&[
        &["filter", "export"][..],
        &target,
        &["--out", again.to_str().unwrap()],
    ]
    .concat());
    assert!(std::fs::read(&file).unwrap() == std::fs::read(&again).unwrap());
    ok(&[&["filter", "drop"][..], &target].concat());
}

#[test]
fn the_issue_round_trip_on_a_server_and_the_cluster() {
    let test = "the_issue_round_trip_on_a_server_and_the_cluster";
    let Some(u) = single(test) else {
        return;
    };
    issue_round_trip(&u, "blocked512/xxh3");
    issue_round_trip(&u, "classic/murmur3/mitz64");
    if let Some(c) = url(test, "BLOOMLAB_REDIS_CLUSTER_URLS", "cluster") {
        issue_round_trip(&c, "classic/xxh3/km");
    }
}

#[test]
fn a_server_filter_moves_into_the_cluster_and_guava_files_go_both_ways() {
    let test = "a_server_filter_moves_into_the_cluster_and_guava_files_go_both_ways";
    let (Some(u), Some(c)) = (
        single(test),
        url(test, "BLOOMLAB_REDIS_CLUSTER_URLS", "cluster"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = unique("dump-cli-move");
    let members = keys_file(d, "members", "moved", 50_000);
    let m = members.to_str().unwrap();
    let guava = d.join("f.guava");
    let g = guava.to_str().unwrap();
    ok(&[
        "filter",
        "create",
        "--redis",
        &u,
        "--name",
        &name,
        "--layout",
        "classic/murmur3/mitz64",
        "--n",
        "50000",
        "--p",
        "0.001",
        "--shard-bits",
        "65536",
    ]);
    ok(&["filter", "add", "--redis", &u, "--name", &name, "--keys", m]);
    ok(&[
        "filter", "export", "--redis", &u, "--name", &name, "--out", g, "--format", "guava",
    ]);
    // Guava's file into the cluster, in its default shard size: every member there.
    let summary = ok(&[
        "filter", "import", "--redis", &c, "--name", &name, "--file", g, "--format", "guava",
        "--n", "50000", "--p", "0.001",
    ]);
    assert!(summary.contains("shard(s) of 1048576 bits"), "{summary}");
    let counts = ok(&[
        "filter",
        "check",
        "--redis",
        &c,
        "--name",
        &name,
        "--keys",
        m,
        "--members",
        "--count",
    ]);
    assert!(counts.contains("50000 maybe present, 0 absent"), "{counts}");
    // And back out in Guava's format: the same bytes.
    let back = d.join("back.guava");
    ok(&[
        "filter",
        "export",
        "--redis",
        &c,
        "--name",
        &name,
        "--out",
        back.to_str().unwrap(),
        "--format",
        "guava",
    ]);
    assert!(std::fs::read(&guava).unwrap() == std::fs::read(&back).unwrap());
    // Guava's sizing of another (n, p) gives other bits: refused, naming both.
    refused(
        &[
            "filter",
            "import",
            "--redis",
            &u,
            "--name",
            &unique("dump-cli-g"),
            "--file",
            g,
            "--format",
            "guava",
            "--n",
            "40000",
            "--p",
            "0.001",
        ],
        "bits = ",
    );
    ok(&["filter", "drop", "--redis", &u, "--name", &name]);
    ok(&["filter", "drop", "--redis", &c, "--name", &name]);
}

/// Runs `cmd` with writes limited to files of at most `bytes` (SIGXFSZ ignored, so a write past it
/// fails with EFBIG, as on a full disk).
fn with_file_size_limit(mut cmd: Command, bytes: u64) -> Output {
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

#[test]
fn an_export_to_a_full_disk_keeps_the_old_file_whole() {
    let test = "an_export_to_a_full_disk_keeps_the_old_file_whole";
    let Some(u) = single(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = unique("dump-cli-full");
    let members = keys_file(d, "members", "full", 1000);
    ok(&[
        "filter", "create", "--redis", &u, "--name", &name, "--n", "1000", "--p", "0.01",
    ]);
    ok(&[
        "filter",
        "add",
        "--redis",
        &u,
        "--name",
        &name,
        "--keys",
        members.to_str().unwrap(),
    ]);
    // The old file: an earlier export of the small filter.
    let out = d.join("backup.bloomlab");
    let o = out.to_str().unwrap();
    ok(&[
        "filter", "export", "--redis", &u, "--name", &name, "--out", o,
    ]);
    let old = std::fs::read(&out).unwrap();
    ok(&["filter", "drop", "--redis", &u, "--name", &name]);
    // Now the filter is 200 times larger (about 240 KB) and the disk holds 64 KiB per file.
    ok(&[
        "filter", "create", "--redis", &u, "--name", &name, "--n", "200000", "--p", "0.01",
    ]);
    let mut cmd = Command::new(BLOOMLAB);
    cmd.args([
        "filter", "export", "--redis", &u, "--name", &name, "--out", o,
    ]);
    let full = with_file_size_limit(cmd, 64 * 1024);
    let err = String::from_utf8_lossy(&full.stderr);
    assert!(
        full.status.code() == Some(2) && err.contains("backup.bloomlab"),
        "{}",
        text(&full)
    );
    assert!(std::fs::read(&out).unwrap() == old, "the old file changed");
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "members" && n != "backup.bloomlab")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    ok(&["filter", "drop", "--redis", &u, "--name", &name]);
}

#[test]
fn bad_files_and_flags_exit_2_and_change_nothing() {
    let test = "bad_files_and_flags_exit_2_and_change_nothing";
    let Some(u) = single(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = unique("dump-cli-bad");
    let members = keys_file(d, "members", "bad", 3000);
    ok(&[
        "filter",
        "create",
        "--redis",
        &u,
        "--name",
        &name,
        "--n",
        "3000",
        "--p",
        "0.01",
        "--shard-bits",
        "8192",
    ]);
    ok(&[
        "filter",
        "add",
        "--redis",
        &u,
        "--name",
        &name,
        "--keys",
        members.to_str().unwrap(),
    ]);
    let file = d.join("good.bloomlab");
    let f = file.to_str().unwrap();
    ok(&[
        "filter", "export", "--redis", &u, "--name", &name, "--out", f,
    ]);
    let good = std::fs::read(&file).unwrap();
    // 3000 keys at 1%: about 29,000 bits, 4 shards of 8192 bits; 8 probes more than cover them.
    let shards = 8;
    let fresh = unique("dump-cli-new");
    let import = |path: &str, extra: &[&str], needle: &str| {
        let args = [
            &[
                "filter", "import", "--redis", &u, "--name", &fresh, "--file", path,
            ][..],
            extra,
        ]
        .concat();
        refused(&args, needle);
        assert_eq!(any_key(&u, &fresh, shards), None, "{args:?} left a key");
    };

    // Truncated at several offsets: header, bit array, trailer.
    for cut in [10, 100, good.len() / 2, good.len() - 1] {
        let p = d.join(format!("cut-{cut}"));
        std::fs::write(&p, &good[..cut]).unwrap();
        import(p.to_str().unwrap(), &[], "truncated");
    }
    // A damaged bit array: written, caught by the checksum, deleted.
    let mut damaged = good.clone();
    damaged[good.len() - 20] ^= 4;
    let p = d.join("damaged");
    std::fs::write(&p, &damaged).unwrap();
    import(p.to_str().unwrap(), &[], "checksum mismatch");
    // Another config stated: the field and both values.
    import(f, &["--n", "4000"], "n = 3000, but 4000 was given");
    import(
        f,
        &["--layout", "classic/xxh3/km"],
        "variant = redis/blocked512/xxh3, but redis/classic/xxh3/km",
    );
    import(f, &["--layout", "nonsense"], "--layout \"nonsense\"");
    import(f, &["--shard-bits", "1000"], "shard size");
    import(f, &["--format", "guava"], "needs --n and --p");
    import(
        d.join("absent").to_str().unwrap(),
        &[],
        "cannot open --file",
    );

    // A taken name: refused, the filter untouched.
    let before = std::fs::read(&file).unwrap();
    refused(
        &[
            "filter", "import", "--redis", &u, "--name", &name, "--file", f,
        ],
        "already exists",
    );
    let again = d.join("again");
    ok(&[
        "filter",
        "export",
        "--redis",
        &u,
        "--name",
        &name,
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(std::fs::read(&again).unwrap() == before);

    // Guava's format for a layout it does not have: no file written.
    let g = d.join("f.guava");
    refused(
        &[
            "filter",
            "export",
            "--redis",
            &u,
            "--name",
            &name,
            "--out",
            g.to_str().unwrap(),
            "--format",
            "guava",
        ],
        "layout blocked512",
    );
    assert!(!g.exists());
    // No such filter; a password never printed.
    refused(
        &[
            "filter",
            "export",
            "--redis",
            &u,
            "--name",
            &fresh,
            "--out",
            g.to_str().unwrap(),
        ],
        "no filter",
    );
    // Nothing listens on port 1: a server failure (exit 3), not bad input.
    let o = run(&[
        "filter",
        "export",
        "--redis",
        "redis://me:hunter2-secret@127.0.0.1:1",
        "--name",
        &name,
        "--out",
        f,
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.code() == Some(3) && err.contains("server failure: cannot connect"),
        "{}",
        text(&o)
    );
    assert!(!err.contains("hunter2"), "{err}");
    ok(&["filter", "drop", "--redis", &u, "--name", &name]);
}
