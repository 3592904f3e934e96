//! `bloomlab filter swap` against a real server (`BLOOMLAB_REDIS_URL`) and the 3-master cluster
//! (`BLOOMLAB_REDIS_CLUSTER_URLS`): a first generation, then a swap under 4 readers with 0 false
//! negatives counted and printed, the new generation answering `filter check --members`; bad
//! input (an unreadable key file, a missing file, a pointer naming a dropped generation, flags out
//! of range) exiting 2 with nothing switched; import and create refused on a generational name
//! and drop removing everything under it; SIGINT mid-build deleting the half-built generation
//! (issue 64). Skipped with a message when a server is not set, a failure when
//! `BLOOMLAB_REQUIRE_SERVICES=1`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use bloomlab_redis::Connection;
use bloomlab_redis::generation::{self, Lifetime};

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

/// Both servers, each when set.
fn servers(test: &str) -> Vec<String> {
    [
        url(test, "BLOOMLAB_REDIS_URL", "start"),
        url(test, "BLOOMLAB_REDIS_CLUSTER_URLS", "cluster"),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn bloomlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bloomlab"))
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn write_keys(path: &Path, families: &[(&str, u64)]) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for (family, count) in families {
        for i in 0..*count {
            writeln!(f, "{family}-{i:07}").unwrap();
        }
    }
    f.flush().unwrap();
}

fn unique(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("bloomlab-test:{test}:{}:{nanos}", std::process::id())
}

/// The value after `label` on the line that starts with it, up to the first space.
fn field<'a>(stdout: &'a str, label: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no {label:?} line in:\n{stdout}"))
}

/// The layout of the file-based tests: classic/xxh3/km sized for 10^4 keys at 1%.
const LAYOUT: [&str; 6] = ["--layout", "classic/xxh3/km", "--n", "10000", "--p", "0.01"];

/// Runs bloomlab against `urls` and requires exit 0; its stdout.
fn ok(urls: &str, args: &[&str]) -> String {
    let o = bloomlab(args);
    assert!(o.status.success(), "{urls}: {args:?}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The first generation of `name` ([`LAYOUT`]), built by `swap` from the key file `keys`; its
/// name.
fn first_generation(urls: &str, name: &str, keys: &Path) -> String {
    let keys = keys.to_str().unwrap();
    let mut args = vec![
        "filter", "swap", "--redis", urls, "--name", name, "--keys", keys,
    ];
    args.extend(LAYOUT);
    field(&ok(urls, &args), "new generation  ").to_owned()
}

/// A filter file of [`LAYOUT`] exported to `file` from a filter made elsewhere (and dropped
/// after), holding the keys of `keys` when given.
fn exported_elsewhere(urls: &str, file: &Path, keys: Option<&Path>) {
    let source = unique("swap-cli-src");
    let mut create = vec!["filter", "create", "--redis", urls, "--name", &source];
    create.extend(LAYOUT);
    ok(urls, &create);
    if let Some(keys) = keys {
        let keys = keys.to_str().unwrap();
        ok(
            urls,
            &[
                "filter", "add", "--redis", urls, "--name", &source, "--keys", keys,
            ],
        );
    }
    let out = file.to_str().unwrap();
    ok(
        urls,
        &[
            "filter", "export", "--redis", urls, "--name", &source, "--out", out,
        ],
    );
    ok(
        urls,
        &["filter", "drop", "--redis", urls, "--name", &source],
    );
}

#[test]
fn swap_under_readers_counts_no_false_negatives_and_the_new_generation_answers() {
    for urls in servers("filter_swap_under_readers") {
        let dir = tempfile::tempdir().unwrap();
        let (members, old, new) = (
            dir.path().join("members"),
            dir.path().join("old"),
            dir.path().join("new"),
        );
        write_keys(&members, &[("member", 5000)]);
        write_keys(&old, &[("member", 5000), ("old-only", 2000)]);
        write_keys(&new, &[("member", 5000), ("new-only", 3000)]);
        let name = unique("swap-cli");
        let s = |p: &Path| p.to_str().unwrap().to_owned();
        let shard = "8192";

        let first = bloomlab(&[
            "filter",
            "swap",
            "--redis",
            &urls,
            "--name",
            &name,
            "--keys",
            &s(&old),
            "--n",
            "20000",
            "--p",
            "0.01",
            "--shard-bits",
            shard,
        ]);
        assert!(first.status.success(), "{urls}: {}", text(&first));
        let out = String::from_utf8_lossy(&first.stdout).into_owned();
        assert!(out.contains("old generation  none"), "{out}");
        let g1 = field(&out, "new generation  ").to_owned();

        let second = bloomlab(&[
            "filter",
            "swap",
            "--redis",
            &urls,
            "--name",
            &name,
            "--keys",
            &s(&new),
            "--readers",
            "4",
            "--probe-keys",
            &s(&members),
            "--grace",
            "1",
        ]);
        assert!(second.status.success(), "{urls}: {}", text(&second));
        let out = String::from_utf8_lossy(&second.stdout).into_owned();
        let g2 = field(&out, "new generation  ").to_owned();
        assert_eq!(field(&out, "old generation  "), g1, "{out}");
        assert!(
            out.contains(", 0 false negatives, 4 of 4 on the new generation at the end"),
            "{out}"
        );
        assert!(out.contains("build           8000 keys"), "{out}");
        assert_eq!(out.matches(", 0 false negatives, ").count(), 5, "{out}");

        let mut conn = Connection::open(&urls).unwrap();
        assert_eq!(
            generation::current(&mut conn, &name).unwrap(),
            Some(g2.clone())
        );
        let check = bloomlab(&[
            "filter",
            "check",
            "--redis",
            &urls,
            "--name",
            &g2,
            "--keys",
            &s(&new),
            "--members",
            "--count",
        ]);
        assert!(check.status.success(), "{urls}: {}", text(&check));

        std::thread::sleep(Duration::from_millis(1300));
        let listed = generation::generations(&mut conn, &name).unwrap();
        assert!(
            listed
                .iter()
                .any(|g| g.name == g1 && g.lifetime == Lifetime::Gone),
            "{urls}: the old generation outlived its 1 s grace: {listed:?}"
        );
        generation::drop_all(&mut conn, &name).unwrap();
    }
}

#[test]
fn bad_input_exits_2_and_switches_nothing() {
    // No server needed: a refused connection is a server failure (exit 3, not the input's
    // fault) naming the URL with its password redacted.
    let o = bloomlab(&[
        "filter",
        "swap",
        "--redis",
        "redis://user:hunter2@127.0.0.1:1",
        "--name",
        "x",
        "--keys",
        "-",
        "--n",
        "10",
        "--p",
        "0.1",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let all = text(&o);
    assert!(
        !all.contains("hunter2") && all.contains("127.0.0.1:1") && all.contains("server failure"),
        "{all}"
    );
    for urls in servers("filter_swap_bad_input") {
        let dir = tempfile::tempdir().unwrap();
        let keys = dir.path().join("keys");
        write_keys(&keys, &[("member", 1000)]);
        let k = keys.to_str().unwrap();
        let name = unique("swap-cli-bad");
        let base = ["filter", "swap", "--redis", &urls, "--name", &name];
        let run = |extra: &[&str]| {
            let mut args: Vec<&str> = base.to_vec();
            args.extend_from_slice(extra);
            bloomlab(&args)
        };
        let expect_2 = |o: Output, needle: &str| {
            assert_eq!(o.status.code(), Some(2), "{urls}: {}", text(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains(needle),
                "{urls}: {needle:?} not in: {}",
                text(&o)
            );
        };

        // Before any generation exists.
        expect_2(
            run(&["--keys", k]),
            "a first generation needs --n N and --p P",
        );
        expect_2(
            run(&[
                "--keys",
                k,
                "--n",
                "5000",
                "--p",
                "0.01",
                "--readers",
                "2",
                "--probe-keys",
                k,
            ]),
            "none yet",
        );
        let first = run(&["--keys", k, "--n", "5000", "--p", "0.01"]);
        assert!(first.status.success(), "{urls}: {}", text(&first));
        let mut conn = Connection::open(&urls).unwrap();
        let g1 = generation::current(&mut conn, &name).unwrap().unwrap();

        // A key "file" that opens but cannot be read (a directory): the half-built generation is
        // deleted, the pointer stays.
        let d = dir.path().to_str().unwrap();
        expect_2(
            run(&["--keys", d]),
            "nothing was switched and the half-built generation was deleted",
        );
        expect_2(
            run(&["--keys", "/nonexistent/keys"]),
            "cannot open key file /nonexistent/keys",
        );
        expect_2(run(&["--keys", k, "--grace", "0"]), "--grace");
        expect_2(run(&["--keys", k, "--readers", "2"]), "--probe-keys");
        expect_2(
            run(&["--keys", k, "--layout", "sbbf/xxh3"]),
            "--layout \"sbbf/xxh3\"",
        );
        assert_eq!(
            generation::current(&mut conn, &name).unwrap(),
            Some(g1.clone())
        );
        let listed = generation::generations(&mut conn, &name).unwrap();
        assert_eq!(listed.len(), 1, "{urls}: {listed:?}");
        assert_eq!(listed[0].lifetime, Lifetime::Persistent);

        // The pointer names a generation that was dropped behind its back.
        let dropped = bloomlab(&["filter", "drop", "--redis", &urls, "--name", &g1]);
        assert!(dropped.status.success(), "{urls}: {}", text(&dropped));
        expect_2(run(&["--keys", k]), "which does not exist");
        assert_eq!(generation::current(&mut conn, &name).unwrap(), Some(g1));
        generation::drop_all(&mut conn, &name).unwrap();
    }
}

#[test]
fn swap_from_an_exported_file_under_readers_and_list_the_generations() {
    for urls in servers("filter_swap_from_file") {
        let dir = tempfile::tempdir().unwrap();
        let (members, old, new) = (
            dir.path().join("members"),
            dir.path().join("old"),
            dir.path().join("new"),
        );
        write_keys(&members, &[("member", 3000)]);
        write_keys(&old, &[("member", 3000), ("old-only", 1000)]);
        write_keys(&new, &[("member", 3000), ("file-only", 2000)]);
        let s = |p: &Path| p.to_str().unwrap().to_owned();
        let name = unique("swap-cli-file");
        let run = |args: &[&str]| ok(&urls, args);
        let g1 = first_generation(&urls, &name, &old);

        // The next generation built elsewhere and exported.
        let new_s = s(&new);
        let file_path = dir.path().join("next.blf");
        exported_elsewhere(&urls, &file_path, Some(&new));
        let file = s(&file_path);

        // A truncated copy is refused, nothing switched.
        let cut = s(&dir.path().join("cut.blf"));
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let o = bloomlab(&[
            "filter",
            "swap",
            "--redis",
            &urls,
            "--name",
            &name,
            "--from-file",
            &cut,
        ]);
        assert_eq!(o.status.code(), Some(2), "{urls}: {}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("truncated"),
            "{urls}: {}",
            text(&o)
        );

        let members_s = s(&members);
        let out = run(&[
            "filter",
            "swap",
            "--redis",
            &urls,
            "--name",
            &name,
            "--from-file",
            &file,
            "--readers",
            "4",
            "--probe-keys",
            &members_s,
            "--grace",
            "30",
        ]);
        assert!(
            out.contains(", 0 false negatives, 4 of 4 on the new generation at the end"),
            "{urls}: {out}"
        );
        assert_eq!(field(&out, "old generation  "), g1, "{out}");
        let g2 = field(&out, "new generation  ").to_owned();
        run(&[
            "filter",
            "check",
            "--redis",
            &urls,
            "--name",
            &g2,
            "--keys",
            &new_s,
            "--members",
            "--count",
        ]);
        let listed = run(&[
            "filter", "swap", "--redis", &urls, "--name", &name, "--list",
        ]);
        let lines: Vec<&str> = listed.lines().collect();
        assert_eq!(lines.len(), 3, "{urls}: {listed}");
        assert!(
            lines[1].starts_with(&format!("current {g2} (redis/classic/xxh3/km, n = 10000"))
                && lines[1].ends_with("; persistent)"),
            "{listed}"
        );
        assert!(
            lines[2].starts_with(&format!("old     {g1} ")) && lines[2].contains("; expires in "),
            "{listed}"
        );
        generation::drop_all(&mut Connection::open(&urls).unwrap(), &name).unwrap();
    }
}

#[test]
fn a_plain_filter_is_swapped_only_with_adopt_keys_from_standard_input() {
    for urls in servers("filter_swap_adopt") {
        let dir = tempfile::tempdir().unwrap();
        let members = dir.path().join("members");
        write_keys(&members, &[("member", 4000)]);
        let m = members.to_str().unwrap();
        let name = unique("swap-cli-adopt");
        let ok = |o: Output| {
            assert!(o.status.success(), "{urls}: {}", text(&o));
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        ok(bloomlab(&[
            "filter", "create", "--redis", &urls, "--name", &name, "--n", "4000", "--p", "0.01",
        ]));
        ok(bloomlab(&[
            "filter", "add", "--redis", &urls, "--name", &name, "--keys", m,
        ]));
        // The new generation's keys on standard input, as `seq ... | bloomlab filter swap`.
        let swap = |extra: &[&str]| {
            let mut child = Command::new(env!("CARGO_BIN_EXE_bloomlab"))
                .args(["filter", "swap", "--redis", &urls, "--name", &name])
                .args(extra)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            std::io::copy(&mut std::fs::File::open(&members).unwrap(), &mut stdin).unwrap();
            writeln!(stdin, "one-more-key").unwrap();
            drop(stdin);
            child.wait_with_output().unwrap()
        };
        let refused = swap(&[]);
        assert_eq!(refused.status.code(), Some(2), "{urls}: {}", text(&refused));
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("--adopt"),
            "{}",
            text(&refused)
        );
        let mut conn = Connection::open(&urls).unwrap();
        assert_eq!(generation::current(&mut conn, &name).unwrap(), None);

        let out = ok(swap(&[
            "--adopt",
            "--n",
            "8000",
            "--readers",
            "4",
            "--probe-keys",
            m,
        ]));
        assert_eq!(field(&out, "old generation  "), name, "{out}");
        assert!(out.contains("build           4001 keys"), "{out}");
        assert!(
            out.contains(", 0 false negatives, 4 of 4 on the new generation at the end"),
            "{urls}: {out}"
        );
        // The plain filter is the old generation now: it expires after the grace period.
        let listed = generation::generations(&mut conn, &name).unwrap();
        assert!(
            listed.iter().any(|g| g.name == name
                && !g.current
                && matches!(g.lifetime, Lifetime::Expiring(_))),
            "{urls}: {listed:?}"
        );
        generation::drop_all(&mut conn, &name).unwrap();
    }
}

/// Every key whose name contains `name`, from each node of `urls` (SCAN: a cluster's keys are
/// spread over its nodes), sorted.
fn keys_under(urls: &str, name: &str) -> Vec<String> {
    let mut found = Vec::new();
    for u in urls.split(',').map(str::trim).filter(|u| !u.is_empty()) {
        let o = Command::new("redis-cli")
            .args(["-u", u, "--scan", "--pattern", &format!("*{name}*")])
            .output()
            .unwrap();
        assert!(o.status.success(), "redis-cli --scan on {u}: {}", text(&o));
        found.extend(
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| !l.is_empty())
                .map(str::to_owned),
        );
    }
    found.sort();
    found
}

/// Issue 64, item 2: `import` and `create` onto a name `swap` made are refused naming its
/// current generation and the command to use (readers follow the pointer and would never see a
/// filter beside it), `add` goes to the current generation, and `drop` removes every key under
/// the name, a plain filter left beside the pointer included, saying what it removed.
#[test]
fn a_generational_name_refuses_import_and_create_and_drop_removes_everything() {
    for urls in servers("filter_swap_generational_name") {
        let dir = tempfile::tempdir().unwrap();
        let (old, extra) = (dir.path().join("old"), dir.path().join("extra"));
        write_keys(&old, &[("member", 3000)]);
        write_keys(&extra, &[("extra", 500)]);
        let extra_s = extra.to_str().unwrap();
        let name = unique("swap-cli-gen");
        let ok = |args: &[&str]| ok(&urls, args);
        let g1 = first_generation(&urls, &name, &old);

        // A file of the same layout, from a filter elsewhere.
        let file_path = dir.path().join("other.blf");
        exported_elsewhere(&urls, &file_path, None);
        let file = file_path.to_str().unwrap();

        // Import and create onto the generational name: refused, with or without --replace,
        // naming the current generation and the command that goes through the pointer.
        let refused = |args: &[&str], command: &str| {
            let o = bloomlab(args);
            let t = text(&o);
            assert_eq!(o.status.code(), Some(2), "{urls}: {args:?}: {t}");
            assert!(
                t.contains(&g1) && t.contains(command) && t.contains("nothing was"),
                "{urls}: {args:?}: lacks {g1:?} or {command:?}: {t}"
            );
        };
        let import = [
            "filter", "import", "--redis", &urls, "--name", &name, "--file", file,
        ];
        refused(&import, "filter swap --redis");
        refused(&[&import[..], &["--replace"]].concat(), "--from-file");
        let mut create = vec!["filter", "create", "--redis", &urls, "--name", &name];
        create.extend(LAYOUT);
        refused(&create, "filter swap --redis");
        refused(
            &[&create[..], &["--replace"]].concat(),
            "filter swap --redis",
        );
        let mut conn = Connection::open(&urls).unwrap();
        assert_eq!(
            generation::current(&mut conn, &name).unwrap(),
            Some(g1.clone())
        );
        let before: Vec<String> = keys_under(&urls, &name);
        assert!(
            !before.contains(&format!("{{{name}}}:config")),
            "{urls}: a plain filter was written beside the pointer: {before:?}"
        );

        // `add` with the plain name adds to the current generation, where readers find the keys.
        let added = ok(&[
            "filter", "add", "--redis", &urls, "--name", &name, "--keys", extra_s,
        ]);
        assert!(added.contains(&g1), "{urls}: {added}");
        ok(&[
            "filter",
            "check",
            "--redis",
            &urls,
            "--name",
            &name,
            "--keys",
            extra_s,
            "--members",
            "--count",
        ]);

        // What an import did before it was refused: a plain filter beside the pointer. `drop`
        // removes it too, and every generation, the pointer and the list, and says so.
        bloomlab_redis::RedisBloom::<
            bloomlab_filters::Bloom<
                bloomlab_filters::Xxh3,
                bloomlab_filters::KirschMitzenmacher,
                bloomlab_filters::FlatBits,
            >,
        >::create_new(
            Connection::open(&urls).unwrap(),
            &name,
            1000,
            0.01,
            8192,
            None,
        )
        .unwrap();
        assert!(keys_under(&urls, &name).contains(&format!("{{{name}}}:config")));
        let dropped = ok(&["filter", "drop", "--redis", &urls, "--name", &name]);
        for needle in [
            g1.as_str(),
            "plain filter",
            &generation::pointer_key(&name),
            &generation::list_key(&name),
        ] {
            assert!(
                dropped.contains(needle),
                "{urls}: {needle:?} not in: {dropped}"
            );
        }
        let left = keys_under(&urls, &name);
        assert!(
            left.is_empty(),
            "{urls}: drop left {left:?}; it said: {dropped}"
        );
    }
}

/// Issue 64, item 5: SIGINT while `filter swap` builds (its keys on a pipe that stalls) exits 130
/// saying what it removed, and leaves neither the half-built generation's keys nor its name in
/// `{NAME}:generations`; the current generation stays current.
#[test]
fn sigint_mid_swap_deletes_the_half_built_generation_and_says_so() {
    for urls in servers("filter_swap_sigint") {
        let dir = tempfile::tempdir().unwrap();
        let keys = dir.path().join("keys");
        write_keys(&keys, &[("member", 2000)]);
        let name = unique("swap-cli-int");
        let first = bloomlab(&[
            "filter",
            "swap",
            "--redis",
            &urls,
            "--name",
            &name,
            "--keys",
            keys.to_str().unwrap(),
            "--n",
            "5000",
            "--p",
            "0.01",
        ]);
        assert!(first.status.success(), "{urls}: {}", text(&first));
        let mut conn = Connection::open(&urls).unwrap();
        let g1 = generation::current(&mut conn, &name).unwrap().unwrap();

        // The longest build expiry: a generation left behind would stay a day.
        let mut child = Command::new(env!("CARGO_BIN_EXE_bloomlab"))
            .args(["filter", "swap", "--redis", &urls, "--name", &name])
            .args(["--build-expiry", "86400"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for i in 0..100 {
            writeln!(stdin, "slow-{i}").unwrap();
        }
        stdin.flush().unwrap();
        // The build has begun once its generation is listed with a config; then the producer
        // stalls (the pipe stays open, nothing more is written).
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let building = loop {
            let listed = generation::generations(&mut conn, &name).unwrap();
            if let Some(g) = listed.iter().find(|g| !g.current && g.config.is_some()) {
                break g.name.clone();
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("{urls}: the swap never started building: {listed:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(!keys_under(&urls, &building).is_empty());
        // SAFETY: kill(2) on the pid of a child this test spawned and has not yet waited for.
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("{urls}: filter swap did not stop within 20 s of SIGINT");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let shown = format!(
            "{status:?}\nstdout:\n{}\nstderr:\n{err}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(status.code(), Some(130), "{urls}: {shown}");
        assert!(
            err.contains("interrupted")
                && err.contains(&building)
                && err.contains("deleted")
                && err.contains("nothing was switched"),
            "{urls}: {shown}"
        );
        let left = keys_under(&urls, &building);
        assert!(
            left.is_empty(),
            "{urls}: the half-built generation left {left:?}: {shown}"
        );
        let listed = generation::generations(&mut conn, &name).unwrap();
        assert_eq!(
            listed.iter().map(|g| g.name.as_str()).collect::<Vec<_>>(),
            [g1.as_str()],
            "{urls}: {listed:?}"
        );
        assert!(listed[0].current && listed[0].lifetime == Lifetime::Persistent);
        let dropped = bloomlab(&["filter", "drop", "--redis", &urls, "--name", &name]);
        assert!(dropped.status.success(), "{urls}: {}", text(&dropped));
    }
}
