//! `bloomlab filter` against real servers: create, add, check, stat, monitor, describe and drop on
//! one server (`BLOOMLAB_REDIS_URL`) and on the 3-master cluster (`BLOOMLAB_REDIS_CLUSTER_URLS`),
//! answers compared with the in-memory twin's, and every bad input of issue 29 (wrong URL, wrong
//! password, a key of another type, a foreign filter, a name that exists, invalid flags) a clear
//! error with exit 2 (3 for monitor) that changes nothing on the server; a 10 KB name quoted by
//! its start; a server that cannot be reached or is killed mid-command a server failure (exit 3,
//! issue 64), on a server of the test's own. Skipped with a message when the variables are not
//! set (or redis-server is not installed); a failure with BLOOMLAB_REQUIRE_SERVICES=1.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use bloomlab_filters::{Bloom, Filter, FlatBits, KirschMitzenmacher, Xxh3};

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
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED bloomlab-tool test {test}: {var} is not set. To run it: {how}"
        );
    }
    url
}

/// A filter name no other test (or earlier run) uses.
fn unique(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "bloomlab-test-{tag}-{}-{nanos}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Runs `bloomlab filter ARGS` with `stdin` as standard input.
fn run<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(args: &[S], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(BLOOMLAB)
        .arg("filter")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = stdin.unwrap_or_default().to_vec();
    let mut pipe = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn ok<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(args: &[S], stdin: Option<&[u8]>) -> String {
    let o = run(args, stdin);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// A scratch directory named after the test, removed when the guard drops (a failed test too).
fn temp_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{}-", unique(tag)))
        .tempdir()
        .unwrap()
}

fn write_keys(path: &Path, keys: &[String]) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for k in keys {
        writeln!(f, "{k}").unwrap();
    }
}

type Twin = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;

/// The life of one filter, with answers compared with the in-memory twin's.
fn life_of_a_filter(urls: &str) {
    let name = unique("life");
    let scratch = temp_dir("life");
    let dir = scratch.path();
    let n = 20_000u64;
    let members: Vec<String> = (0..n)
        .map(|i| format!("https://example.invalid/{i}"))
        .collect();
    let others: Vec<String> = (0..5_000).map(|i| format!("other-{i}")).collect();
    let (mf, of) = (dir.join("members.txt"), dir.join("others.txt"));
    write_keys(&mf, &members);
    write_keys(&of, &others);
    // `bloomlab filter SUB --redis URLS --name NAME EXTRA...`
    let cmd = |sub: &str, extra: &[&str]| -> Vec<String> {
        [sub, "--redis", urls, "--name", &name]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    let create = cmd(
        "create",
        &["--layout", "classic/xxh3/km", "--n", "2e4", "--p", "0.01"],
    );
    let out = ok(&create, None);
    assert!(out.contains("redis/classic/xxh3/km"), "{out}");

    // A second create is refused and leaves the filter as it was.
    let again = run(&create, None);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    assert!(text(&again).contains("already exists"), "{}", text(&again));

    // Add from a file, then check members from standard input: every one found.
    ok(&cmd("add", &["--keys", mf.to_str().unwrap()]), None);
    let stdin: Vec<u8> = members
        .iter()
        .flat_map(|k| format!("{k}\n").into_bytes())
        .collect();
    let out = ok(&cmd("check", &["--members", "--count"]), Some(&stdin));
    assert!(
        out.contains(&format!("{n} keys: {n} maybe present, 0 absent")),
        "{out}"
    );

    // Non-members: each answer equals the twin's.
    let mut twin = Twin::new(n, 0.01).unwrap();
    for k in &members {
        twin.insert(k);
    }
    let answers = ok(&cmd("check", &["--keys", of.to_str().unwrap()]), None);
    let expected: String = others
        .iter()
        .map(|k| if twin.contains(k) { "1\n" } else { "0\n" })
        .collect();
    assert_eq!(answers, expected);
    // --members on non-members: exit 1 naming the first absent key's line.
    let o = run(
        &cmd(
            "check",
            &["--members", "--count", "--keys", of.to_str().unwrap()],
        ),
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("line 1"), "{}", text(&o));

    let target = ["--redis", urls, "--name", name.as_str()];
    stat_and_monitor(&target, &twin, n, dir);

    let out = ok(
        &["describe", "--redis", urls, &format!("{{{name}:0}}:bits")],
        None,
    );
    assert!(
        out.contains("shard 0 of filter") && out.contains("redis/classic/xxh3/km"),
        "{out}"
    );

    ok(&cmd("drop", &[]), None);
    let gone = run(&cmd("stat", &[]), None);
    assert_eq!(gone.status.code(), Some(2), "{}", text(&gone));
    assert!(text(&gone).contains("no filter"), "{}", text(&gone));
    let unknown = run(&cmd("monitor", &[]), None);
    assert_eq!(unknown.status.code(), Some(3), "{}", text(&unknown));
    assert!(
        text(&unknown).contains("FILTER UNKNOWN"),
        "{}",
        text(&unknown)
    );
}

/// `stat` reports the twin's figures; `monitor` maps fill and rate to exit codes.
fn stat_and_monitor(target: &[&str], twin: &Twin, n: u64, dir: &Path) {
    let out = ok(&[&["stat"], target].concat(), None);
    let set_bits = twin.set_bits();
    assert!(
        out.contains(&format!("set bits      {set_bits} ")),
        "{out}\ntwin: {set_bits}"
    );
    let implied = twin.fpr_given_bits();
    assert!(
        out.contains(&format!("implied FPR   {implied:.4e}")),
        "{out}\ntwin: {implied}"
    );
    assert!(
        out.contains(&format!("sized for n = {n}, p = 0.01")),
        "{out}"
    );

    // At its design load a k = 7 filter is about 52% full: past the default warning fill 0.5.
    let o = run(&[&["monitor"], target].concat(), None);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).starts_with("exit Some(1)\nstdout: FILTER WARNING"),
        "{}",
        text(&o)
    );
    let o = run(
        &[&["monitor"], target, &["--warn-fill", "0.9"]].concat(),
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = run(
        &[&["monitor"], target, &["--crit-fill", "0.5"]].concat(),
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = run(
        &[&["monitor"], target, &["--warn-fill", "2"]].concat(),
        None,
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("--warn-fill = 2"), "{}", text(&o));

    // The Prometheus file is written whole, with the twin's set bits.
    let prom = dir.join("filter.prom");
    let p = prom.to_str().unwrap();
    run(&[&["monitor"], target, &["--prometheus", p]].concat(), None);
    let metrics = std::fs::read_to_string(&prom).unwrap();
    assert!(
        metrics.contains(&format!(
            "bloomlab_filter_set_bits{{filter=\"{}\"}} {set_bits}\n",
            target[3]
        )),
        "{metrics}"
    );
    assert!(
        metrics.contains("bloomlab_filter_status{") && metrics.contains("} 1\n"),
        "{metrics}"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn a_filter_lives_and_dies_on_one_server() {
    if let Some(u) = url(
        "a_filter_lives_and_dies_on_one_server",
        "BLOOMLAB_REDIS_URL",
        "start",
    ) {
        life_of_a_filter(&u);
    }
}

#[test]
fn a_filter_lives_and_dies_on_the_cluster() {
    let test = "a_filter_lives_and_dies_on_the_cluster";
    if let Some(u) = url(test, "BLOOMLAB_REDIS_CLUSTER_URLS", "cluster") {
        assert!(u.contains(','), "{u}: a cluster's node URLs");
        life_of_a_filter(&u);
    }
}

/// Runs `redis-cli -u URL ARGS` (the test plants keys another program would have made).
fn redis_cli(url: &str, args: &[&str]) -> String {
    let o = Command::new("redis-cli")
        .arg("-u")
        .arg(url)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "redis-cli {args:?}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

/// Every bad input is exit 2 (monitor: 3) with a message naming the problem, and changes
/// nothing: planted keys keep their type and value.
#[test]
fn bad_inputs_are_clear_errors_that_change_nothing() {
    let Some(u) = url(
        "bad_inputs_are_clear_errors_that_change_nothing",
        "BLOOMLAB_REDIS_URL",
        "start",
    ) else {
        return;
    };
    let addr = u.trim_start_matches("redis://").trim_end_matches('/');
    let secret = "S3cret-not-for-logs";
    let expect = |args: &[&str], code: i32, needle: &str| {
        let o = run(args, Some(b"k\n"));
        let t = text(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {t}");
        assert!(t.contains(needle), "{args:?}: lacks {needle:?}: {t}");
        assert!(!t.contains(secret), "{args:?}: shows the password: {t}");
    };
    // Nothing listens on port 1.
    expect(
        &["stat", "--redis", "redis://127.0.0.1:1", "--name", "x"],
        3,
        "server failure: cannot connect",
    );
    expect(
        &["monitor", "--redis", "redis://127.0.0.1:1", "--name", "x"],
        3,
        "FILTER UNKNOWN",
    );
    // A user that does not exist, and a password on a server without one.
    let wrong_user = format!("redis://someone:{secret}@{addr}");
    let wrong_pass = format!("redis://:{secret}@{addr}");
    for bad_url in [&wrong_user, &wrong_pass] {
        expect(
            &[
                "create", "--redis", bad_url, "--name", "x", "--n", "10", "--p", "0.1",
            ],
            2,
            addr,
        );
        expect(&["add", "--redis", bad_url, "--name", "x"], 2, addr);
    }
    // A plain string where a config hash would be; a plain key named like the filter (what a
    // RedisBloom module filter looks like); a Redisson filter's config hash.
    let (s, plain, redisson) = (unique("str"), unique("plain"), unique("redisson"));
    redis_cli(&u, &["SET", &format!("{{{s}}}:config"), "hello"]);
    redis_cli(&u, &["SET", &plain, "hello"]);
    redis_cli(
        &u,
        &[
            "HSET",
            &format!("{{{redisson}}}:config"),
            "size",
            "9585",
            "hashIterations",
            "7",
            "expectedInsertions",
            "1000",
            "falseProbability",
            "0.01",
        ],
    );
    for cmd in ["stat", "add", "check", "drop"] {
        expect(&[cmd, "--redis", &u, "--name", &s], 2, "of type \"string\"");
        expect(
            &[cmd, "--redis", &u, "--name", &plain],
            2,
            "no bloomlab filter",
        );
        expect(&[cmd, "--redis", &u, "--name", &redisson], 2, "Redisson");
    }
    expect(
        &[
            "create",
            "--redis",
            &u,
            "--name",
            &s,
            "--n",
            "10",
            "--p",
            "0.1",
            "--replace",
        ],
        2,
        "not a bloomlab filter",
    );
    expect(
        &["monitor", "--redis", &u, "--name", &redisson],
        3,
        "Redisson",
    );
    assert_eq!(redis_cli(&u, &["GET", &format!("{{{s}}}:config")]), "hello");
    assert_eq!(redis_cli(&u, &["GET", &plain]), "hello");
    assert_eq!(
        redis_cli(&u, &["HGET", &format!("{{{redisson}}}:config"), "size"]),
        "9585"
    );
    for k in [
        format!("{{{s}}}:config"),
        plain,
        format!("{{{redisson}}}:config"),
    ] {
        redis_cli(&u, &["DEL", &k]);
    }
    // Flags: a layout the store does not have, a name Redis keys cannot carry, n = 0, p = 1,
    // a filter without a server, both a server and a file.
    let good = unique("flags");
    expect(
        &[
            "create",
            "--redis",
            &u,
            "--name",
            &good,
            "--n",
            "10",
            "--p",
            "0.1",
            "--layout",
            "sbbf/xxh3",
        ],
        2,
        "redis/blocked512/xxh3",
    );
    expect(
        &[
            "create", "--redis", &u, "--name", "a b", "--n", "10", "--p", "0.1",
        ],
        2,
        "filter name",
    );
    expect(
        &[
            "create", "--redis", &u, "--name", &good, "--n", "0", "--p", "0.1",
        ],
        2,
        "--n",
    );
    expect(
        &[
            "create", "--redis", &u, "--name", &good, "--n", "10", "--p", "1",
        ],
        2,
        "p = 1",
    );
    expect(
        &["create", "--name", &good, "--n", "10", "--p", "0.1"],
        2,
        "--name needs --redis",
    );
    expect(
        &["stat", "--redis", &u, "--name", &good, "--file", "x"],
        2,
        "cannot be used with",
    );
    expect(
        &["monitor", "--redis", &u, "--name", &good, "--bogus"],
        3,
        "--bogus",
    );
    assert_eq!(
        redis_cli(&u, &["EXISTS", &format!("{{{good}}}:config")]),
        "0"
    );
}

/// A 10 KB name is refused by every command that takes one, quoting at most its first 60 bytes
/// and its length (issue 64): an error message is read by a person, not a copy of the input.
#[test]
fn a_huge_name_is_quoted_by_its_start_in_every_command() {
    let Some(u) = url(
        "a_huge_name_is_quoted_by_its_start_in_every_command",
        "BLOOMLAB_REDIS_URL",
        "start",
    ) else {
        return;
    };
    let dir = temp_dir("huge-name");
    let file = dir.path().join("f.bloomlab");
    std::fs::write(&file, b"BLOOMLAB-FILTER\n").unwrap();
    let (f, out) = (
        file.to_str().unwrap(),
        dir.path().join("out.bloomlab").to_str().unwrap().to_owned(),
    );
    let long = "x".repeat(10_000);
    let l = long.as_str();
    let cases: [(&[&str], i32); 11] = [
        (
            &[
                "create", "--redis", &u, "--name", l, "--n", "10", "--p", "0.1",
            ],
            2,
        ),
        (&["add", "--redis", &u, "--name", l], 2),
        (&["check", "--redis", &u, "--name", l], 2),
        (&["drop", "--redis", &u, "--name", l], 2),
        (&["stat", "--redis", &u, "--name", l], 2),
        (&["monitor", "--redis", &u, "--name", l], 3),
        (&["describe", "--redis", &u, l], 2),
        (&["export", "--redis", &u, "--name", l, "--out", &out], 2),
        (&["import", "--redis", &u, "--name", l, "--file", f], 2),
        (
            &[
                "swap", "--redis", &u, "--name", l, "--n", "10", "--p", "0.1",
            ],
            2,
        ),
        (&["swap", "--redis", &u, "--name", l, "--list"], 2),
    ];
    for (args, code) in cases {
        let o = run(args, Some(b"k\n"));
        let t = text(&o);
        let shown = format!(
            "exit {:?}, stderr of {} bytes: {}",
            o.status.code(),
            o.stderr.len(),
            &t[..t.len().min(600)]
        );
        assert_eq!(o.status.code(), Some(code), "{}: {shown}", args[0]);
        assert!(t.contains("filter name"), "{}: {shown}", args[0]);
        assert!(t.contains("10000 bytes in all"), "{}: {shown}", args[0]);
        assert!(!t.contains(&"x".repeat(61)), "{}: {shown}", args[0]);
    }
}

/// Stops the throwaway server a test started with `scripts/redis-local.sh` (its own state dir),
/// also when the test fails.
struct OwnServer {
    state: tempfile::TempDir,
    url: String,
}

impl OwnServer {
    fn script(state: &Path, action: &str) -> Output {
        Command::new("bash")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/redis-local.sh"))
            .arg(action)
            .env("BLOOMLAB_REDIS_STATE_DIR", state)
            .output()
            .unwrap()
    }

    /// A server of its own, or None (skipped, said on stderr) without `redis-server`; a failure
    /// then with BLOOMLAB_REQUIRE_SERVICES=1.
    fn start(test: &str) -> Option<Self> {
        if Command::new("redis-server")
            .arg("--version")
            .output()
            .is_err()
        {
            let how = "apt-get install -y redis-server (Debian)";
            if std::env::var("BLOOMLAB_REQUIRE_SERVICES").is_ok_and(|v| v == "1") {
                panic!(
                    "bloomlab-tool test {test} cannot run: redis-server is not installed, and BLOOMLAB_REQUIRE_SERVICES=1 makes a missing service a failure. Install it: {how}"
                );
            }
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED bloomlab-tool test {test}: redis-server is not installed. To run it: {how}"
            );
            return None;
        }
        let state = temp_dir("own-server");
        let o = Self::script(state.path(), "start");
        assert!(o.status.success(), "redis-local.sh start: {}", text(&o));
        let url = String::from_utf8(o.stdout).unwrap().trim().to_owned();
        Some(Self { state, url })
    }

    /// SIGKILLs the server (`redis-local.sh crash`).
    fn crash(&self) {
        let o = Self::script(self.state.path(), "crash");
        assert!(o.status.success(), "redis-local.sh crash: {}", text(&o));
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        let _ = Self::script(self.state.path(), "stop");
    }
}

/// A server killed while `filter add` runs is a server failure (exit 3, "server failure:"), not
/// the input's fault (issue 64: it was "bad input:", exit 2).
#[test]
fn a_server_killed_mid_add_is_a_server_failure_not_bad_input() {
    let Some(server) =
        OwnServer::start("a_server_killed_mid_add_is_a_server_failure_not_bad_input")
    else {
        return;
    };
    let u = server.url.as_str();
    let name = unique("crash");
    ok(
        &[
            "create", "--redis", u, "--name", &name, "--n", "1000", "--p", "0.01",
        ],
        None,
    );
    // One key per round trip, fed by hand: the first lands, then the server dies under the
    // command that waits for the second.
    let mut child = Command::new(BLOOMLAB)
        .args([
            "filter", "add", "--redis", u, "--name", &name, "--batch", "1",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "first").unwrap();
    stdin.flush().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let o = run(
            &["check", "--redis", u, "--name", &name, "--count"],
            Some(b"first\n"),
        );
        if String::from_utf8_lossy(&o.stdout).contains("1 maybe present") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the first key never landed: {}",
            text(&o)
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    server.crash();
    writeln!(stdin, "second").unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        err.starts_with("bloomlab: server failure: ") && !err.contains("bad input"),
        "{}",
        text(&o)
    );
    assert!(err.contains(u), "{}", text(&o));
    // Nothing listens any more: connecting is a server failure too.
    let o = run(&["stat", "--redis", u, "--name", &name], None);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("server failure: cannot connect"),
        "{}",
        text(&o)
    );
}

/// `filter build` writes, offline, the very file `create` + `add` + `export` of the same keys
/// write (bloomlab's format for two layouts, Guava's for Guava's layout), and it imports to a
/// filter that finds every key. A filter larger than --memory-limit is refused before allocating.
#[test]
fn an_offline_build_is_the_file_create_add_and_export_write() {
    let test = "an_offline_build_is_the_file_create_add_and_export_write";
    let Some(u) = url(test, "BLOOMLAB_REDIS_URL", "start") else {
        return;
    };
    let scratch = temp_dir("build");
    let dir = scratch.path();
    let keys: Vec<String> = (0..30_000).map(|i| format!("user-{i}")).collect();
    let kf = dir.join("keys.txt");
    write_keys(&kf, &keys);
    // Enough non-members that some are false positives at p = 0.001 (about 20 expected).
    let others = dir.join("others.txt");
    write_keys(
        &others,
        &(0..20_000)
            .map(|i| format!("not-a-user-{i}"))
            .collect::<Vec<_>>(),
    );
    let k = kf.to_str().unwrap();
    for (layout, format) in [
        ("classic/xxh3/km", "bloomlab"),
        ("blocked512/xxh64", "bloomlab"),
        ("classic/murmur3/mitz64", "guava"),
    ] {
        let name = unique("build");
        let (built, exported) = (
            dir.join(format!("{name}.built")),
            dir.join(format!("{name}.exported")),
        );
        let sized = ["--layout", layout, "--n", "3e4", "--p", "0.001"];
        let mut args = vec![
            "build",
            "--keys",
            k,
            "--format",
            format,
            "--out",
            built.to_str().unwrap(),
        ];
        args.extend(sized);
        ok(&args, None);
        let target = ["--redis", u.as_str(), "--name", name.as_str()];
        ok(&[&["create"], &target[..], &sized[..]].concat(), None);
        ok(&[&["add"], &target[..], &["--keys", k]].concat(), None);
        let export = ["--format", format, "--out", exported.to_str().unwrap()];
        ok(&[&["export"], &target[..], &export[..]].concat(), None);
        assert_eq!(
            std::fs::read(&built).unwrap(),
            std::fs::read(&exported).unwrap(),
            "{layout} ({format}): the built file differs from the exported one"
        );
        ok(&[&["drop"], &target[..]].concat(), None);
        if format == "bloomlab" {
            ok(
                &[
                    &["import"],
                    &target[..],
                    &["--file", built.to_str().unwrap()],
                ]
                .concat(),
                None,
            );
            let out = ok(
                &[
                    &["check"],
                    &target[..],
                    &["--members", "--count", "--keys", k],
                ]
                .concat(),
                None,
            );
            assert!(
                out.contains("30000 keys: 30000 maybe present, 0 absent"),
                "{out}"
            );
            // The file answers as the filter in Redis does, key for key, members and others.
            let members = ok(
                &[
                    "check",
                    "--file",
                    built.to_str().unwrap(),
                    "--members",
                    "--count",
                    "--keys",
                    k,
                ],
                None,
            );
            assert!(
                members.contains("30000 keys: 30000 maybe present, 0 absent"),
                "{members}"
            );
            let from_file = ok(
                &[
                    "check",
                    "--file",
                    built.to_str().unwrap(),
                    "--keys",
                    others.to_str().unwrap(),
                ],
                None,
            );
            let from_redis = ok(
                &[
                    &["check"],
                    &target[..],
                    &["--keys", others.to_str().unwrap()],
                ]
                .concat(),
                None,
            );
            assert_eq!(
                from_file, from_redis,
                "{layout}: the file's answers differ from Redis's"
            );
            assert!(
                from_file.contains('1') && from_file.contains('0'),
                "{layout}: {from_file}"
            );
            ok(&[&["drop"], &target[..]].concat(), None);
        }
    }
    let big = dir.join("big");
    let o = run(
        &[
            "build",
            "--keys",
            k,
            "--n",
            "1e9",
            "--p",
            "0.01",
            "--memory-limit",
            "1000000",
            "--out",
            big.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--memory-limit") && !big.exists(),
        "{}",
        text(&o)
    );
}

/// Output into a closed pipe (`bloomlab filter stat ... | head -1`) ends the process by SIGPIPE,
/// as for any Unix tool, never with a panic message. The pipe's reading end is closed before the
/// child starts, so its first write fails every time. No server needed: a Guava file built here.
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let scratch = temp_dir("pipe");
    let dir = scratch.path();
    let (keys, file) = (dir.join("k.txt"), dir.join("g.bloom"));
    write_keys(&keys, &(0..1000).map(|i| i.to_string()).collect::<Vec<_>>());
    ok(
        &[
            "build",
            "--keys",
            keys.to_str().unwrap(),
            "--n",
            "1000",
            "--p",
            "0.01",
            "--out",
            file.to_str().unwrap(),
        ],
        None,
    );
    for args in [
        vec!["stat", "--file", file.to_str().unwrap()],
        vec![
            "monitor",
            "--file",
            file.to_str().unwrap(),
            "--prometheus",
            "-",
        ],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(BLOOMLAB)
            .arg("filter")
            .args(&args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(
            out.status.signal(),
            Some(libc_sigpipe()),
            "{args:?}: {:?} {stderr}",
            out.status
        );
    }
}

/// SIGPIPE's number on Linux.
fn libc_sigpipe() -> i32 {
    13
}

/// `check --file` refuses a Guava file (its keys' encoding is not in the file: `guava query`
/// knows the funnels) and a damaged bloomlab file, naming each; nothing is answered.
#[test]
fn check_of_a_file_refuses_what_it_cannot_answer() {
    let scratch = temp_dir("checkfile");
    let dir = scratch.path();
    let keys = dir.join("k.txt");
    write_keys(&keys, &(0..100).map(|i| i.to_string()).collect::<Vec<_>>());
    let (k, g, b) = (
        keys.to_str().unwrap(),
        dir.join("g.bloom"),
        dir.join("b.bloom"),
    );
    let sized = ["--n", "100", "--p", "0.01", "--keys", k];
    ok(
        &[
            &[
                "build",
                "--layout",
                "classic/murmur3/mitz64",
                "--format",
                "guava",
                "--out",
                g.to_str().unwrap(),
            ],
            &sized[..],
        ]
        .concat(),
        None,
    );
    ok(
        &[&["build", "--out", b.to_str().unwrap()], &sized[..]].concat(),
        None,
    );
    let o = run(&["check", "--file", g.to_str().unwrap(), "--keys", k], None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("guava query") && o.stdout.is_empty(),
        "{}",
        text(&o)
    );
    let mut bytes = std::fs::read(&b).unwrap();
    let last = bytes.len() - 9;
    bytes[last] ^= 0xff;
    std::fs::write(&b, &bytes).unwrap();
    let o = run(&["check", "--file", b.to_str().unwrap(), "--keys", k], None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("checksum") && o.stdout.is_empty(),
        "{}",
        text(&o)
    );
}
