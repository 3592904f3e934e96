//! A server that stops mid-run: every operation afterwards is an error naming the address and the
//! operation, never a panic or an invented answer. The test starts and stops its own throwaway
//! server with `scripts/redis-local.sh` (so it needs `redis-server` installed, not a URL).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use bloomlab_filters::{Bloom, FlatBits, KirschMitzenmacher, Xxh3};
use bloomlab_redis::{Connection, RedisBloom, RedisFilterError};

type Km = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/redis-local.sh")
}

/// Runs the script with its own state dir, so it starts and stops only this test's server.
fn local(state: &Path, action: &str) -> String {
    local_with(state, action, &[])
}

/// [`local`] with extra environment variables (persistence mode, data dir).
fn local_with(state: &Path, action: &str, env: &[(&str, &Path)]) -> String {
    let out = Command::new("bash")
        .arg(script())
        .arg(action)
        .env("BLOOMLAB_REDIS_STATE_DIR", state)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("running {} {action}: {e}", script().display()));
    assert!(
        out.status.success(),
        "{} {action} failed: {}",
        script().display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Whether `redis-server` is installed; says the test is skipped when not.
fn installed(test: &str) -> bool {
    let ok = Command::new("redis-server")
        .arg("--version")
        .output()
        .is_ok();
    if !ok {
        common::skip(
            test,
            "redis-server is not installed",
            "apt-get install -y redis-server (Debian)",
        );
    }
    ok
}

#[test]
fn a_server_stopped_mid_run_gives_errors_naming_address_and_operation() {
    let test = "a_server_stopped_mid_run_gives_errors_naming_address_and_operation";
    if !installed(test) {
        return;
    }
    let state = std::env::temp_dir().join(common::unique_name("faults").replace(':', "-"));
    let url = local(&state, "start");
    let name = common::unique_name("stopped");
    let mut f =
        RedisBloom::<Km>::create_or_open(Connection::single(&url).unwrap(), &name, 1000, 0.01)
            .unwrap();
    f.insert("before").unwrap();
    assert!(f.contains("before").unwrap());

    local(&state, "stop");
    let _ = std::fs::remove_dir_all(&state);

    let check = |e: RedisFilterError, operation: &str| {
        let msg = e.to_string();
        assert!(
            matches!(&e, RedisFilterError::Command { url: u, operation: o, .. } if *u == url && *o == operation),
            "{operation}: {e:?}"
        );
        assert!(msg.contains(&url) && msg.contains(operation), "{msg}");
    };
    check(f.insert("after").unwrap_err(), "insert");
    check(f.contains("before").unwrap_err(), "lookup");
    let keys = common::keys("after", 100);
    check(f.insert_batch(&keys, 16).unwrap_err(), "insert");
    let mut answers = 0;
    check(
        f.contains_batch(&keys, 16, |_, _| answers += 1)
            .unwrap_err(),
        "lookup",
    );
    assert_eq!(answers, 0, "no answer is reported once the server is gone");
    let e = Connection::single(&url).unwrap_err();
    assert!(
        matches!(&e, RedisFilterError::Connect { url: u, .. } if *u == url),
        "{e}"
    );
}

/// How the server goes down between the two runs, and what it persisted.
#[derive(Debug, Clone, Copy)]
enum Restart {
    /// Append-only file fsynced on every write, then SIGKILL (nothing flushed on the way down).
    AofAfterKill,
    /// An RDB snapshot written on a normal stop (SIGTERM).
    RdbAfterStop,
    /// No persistence, then SIGKILL: the filter is gone.
    NothingAfterKill,
}

/// What [`restart`] saw: the filter's bytes before the restart, and after it the members' answers
/// and the bytes, or the error reopening it.
struct Restarted {
    name: String,
    before: Vec<u8>,
    reopened: Result<(Vec<bool>, Vec<u8>), RedisFilterError>,
}

/// Fills a filter on a server persisting as `mode`, takes the server down, starts a new one on
/// the same data dir, and reopens the filter by name.
fn restart(mode: Restart) -> Restarted {
    let tag = format!("{mode:?}").to_lowercase();
    let state = std::env::temp_dir().join(common::unique_name(&tag).replace(':', "-"));
    let data = state.join("data");
    let persist = match mode {
        Restart::AofAfterKill => "aof",
        Restart::RdbAfterStop => "rdb",
        Restart::NothingAfterKill => "none",
    };
    let env = [
        ("BLOOMLAB_REDIS_PERSIST", Path::new(persist)),
        ("BLOOMLAB_REDIS_DATA_DIR", data.as_path()),
    ];
    let url = local_with(&state, "start", &env);
    let name = common::unique_name("persisted");
    let members = common::keys("persisted-member", 20_000);
    let mut f =
        RedisBloom::<Km>::create_or_open(Connection::single(&url).unwrap(), &name, 50_000, 0.01)
            .unwrap();
    f.insert_batch(&members[..100], 1).unwrap();
    f.insert_batch(&members[100..], 256).unwrap();
    let before = f.bytes().unwrap();
    drop(f);
    match mode {
        Restart::RdbAfterStop => local(&state, "stop"),
        Restart::AofAfterKill | Restart::NothingAfterKill => local(&state, "crash"),
    };
    let url = local_with(&state, "start", &env);
    let reopened =
        RedisBloom::<Km>::open(Connection::single(&url).unwrap(), &name).and_then(|mut f| {
            let after = f.bytes()?;
            let mut answers = Vec::with_capacity(members.len());
            f.contains_batch(&members, 4096, |_, hit| answers.push(hit))?;
            Ok((answers, after))
        });
    local(&state, "stop");
    let _ = std::fs::remove_dir_all(&state);
    Restarted {
        name,
        before,
        reopened,
    }
}

#[test]
fn a_server_restarted_from_its_aof_or_rdb_reopens_the_filter_with_every_member() {
    let test = "a_server_restarted_from_its_aof_or_rdb_reopens_the_filter_with_every_member";
    if !installed(test) {
        return;
    }
    for mode in [Restart::AofAfterKill, Restart::RdbAfterStop] {
        let r = restart(mode);
        let (answers, after) = r
            .reopened
            .unwrap_or_else(|e| panic!("{mode:?}: reopening {}: {e}", r.name));
        let missing = answers.iter().filter(|&&hit| !hit).count();
        assert_eq!(missing, 0, "{mode:?}: members not found after the restart");
        assert!(after == r.before, "{mode:?}: the bytes changed");
    }
    // Without persistence the restarted server has no filter: opening it is an error naming it,
    // never an empty filter that answers no for every member.
    let r = restart(Restart::NothingAfterKill);
    let e = r
        .reopened
        .expect_err("a filter reopened on a server that persisted nothing");
    assert!(
        matches!(&e, RedisFilterError::NotFound { .. }) && e.to_string().contains(&r.name),
        "{e:?}"
    );
}
