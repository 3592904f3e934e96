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
    let out = Command::new("bash")
        .arg(script())
        .arg(action)
        .env("BLOOMLAB_REDIS_STATE_DIR", state)
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

#[test]
fn a_server_stopped_mid_run_gives_errors_naming_address_and_operation() {
    let test = "a_server_stopped_mid_run_gives_errors_naming_address_and_operation";
    if Command::new("redis-server")
        .arg("--version")
        .output()
        .is_err()
    {
        common::skip(
            test,
            "redis-server is not installed",
            "apt-get install -y redis-server (Debian)",
        );
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
