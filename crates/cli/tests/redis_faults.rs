//! Faults of a Redis-backed sweep, each against a private server this test starts with
//! `scripts/redis-local.sh` (its own state dir, loopback, stopped by pid): the server killed
//! mid-sweep (issue 28's fault test), and a wrong password (case 11). Needs `redis-server`
//! installed; skipped with a message otherwise, a failure with BLOOMLAB_REQUIRE_SERVICES=1.

use bloomlab_report::output::LOCK_NAME;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SWEEP: &str = env!("CARGO_BIN_EXE_sweep");
const REDIS_COSTS: &str = env!("CARGO_BIN_EXE_redis-costs");

/// A password no message may show.
const PASSWORD: &str = "Zq7-not-for-logs";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/redis-local.sh")
}

/// Whether redis-server and redis-cli are installed; reports the skip when not.
fn installed(test: &str) -> bool {
    let ok = ["redis-server", "redis-cli"]
        .iter()
        .all(|t| Command::new(t).arg("--version").output().is_ok());
    if !ok {
        let how = "apt-get install -y redis-server (Debian)";
        if std::env::var("BLOOMLAB_REQUIRE_SERVICES").is_ok_and(|v| v == "1") {
            panic!(
                "bloomlab-cli test {test} cannot run: redis-server is not installed, and BLOOMLAB_REQUIRE_SERVICES=1 makes a missing service a failure. {how}"
            );
        }
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED bloomlab-cli test {test}: redis-server is not installed. To run it: {how}"
        );
    }
    ok
}

/// A private server: started in its own state dir, stopped (by the pid the script recorded)
/// when dropped.
struct Server {
    state: PathBuf,
    /// `127.0.0.1:PORT`.
    addr: String,
    pid: u32,
}

impl Server {
    /// Starts a server requiring [`PASSWORD`].
    fn start(tag: &str) -> Self {
        let state = std::env::temp_dir().join(format!(
            "bloomlab-cli-redis-{tag}-{}-{}",
            std::process::id(),
            Instant::now().elapsed().as_nanos()
        ));
        let out = Command::new("bash")
            .arg(script())
            .arg("start")
            .env("BLOOMLAB_REDIS_STATE_DIR", &state)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "redis-local.sh start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        let addr = url.trim_start_matches("redis://").to_owned();
        let text = std::fs::read_to_string(state.join("single.state")).unwrap();
        let pid = text
            .lines()
            .find_map(|l| l.strip_prefix("pid="))
            .unwrap()
            .parse()
            .unwrap();
        let server = Server { state, addr, pid };
        server.cli(&["CONFIG", "SET", "requirepass", PASSWORD]);
        server
    }

    /// The URL with the password.
    fn url(&self) -> String {
        format!("redis://:{PASSWORD}@{}", self.addr)
    }

    /// Runs a redis-cli command against the server; its stdout.
    fn cli(&self, args: &[&str]) -> String {
        // redis-cli 7.0 mishandles `-u redis://:PASSWORD@...` (an empty user): -a instead.
        let (host, port) = self.addr.split_once(':').unwrap();
        let out = Command::new("redis-cli")
            .args(["--no-auth-warning", "-h", host, "-p", port, "-a", PASSWORD])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "redis-cli {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// SIGKILLs the server (nothing flushed: a crash).
    fn kill(&self) {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", self.pid)).unwrap_or_default();
        assert!(String::from_utf8_lossy(&cmdline).contains("redis-server"));
        assert!(
            Command::new("kill")
                .args(["-9", &self.pid.to_string()])
                .status()
                .unwrap()
                .success()
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .env("BLOOMLAB_REDIS_STATE_DIR", &self.state)
            .output();
        let _ = std::fs::remove_dir_all(&self.state);
    }
}

/// Every file under `dir` with its bytes, sorted by path.
/// The lock file a run takes on --out ([`LOCK_NAME`]) is the run's own bookkeeping, not part of
/// the report, so it is left out; everything else, staging directories included, is compared.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| e.as_ref().is_ok_and(|e| e.file_name() != LOCK_NAME))
        .map(|e| {
            let p = e.unwrap().path();
            let bytes = std::fs::read(&p).unwrap_or_default();
            (p, bytes)
        })
        .collect();
    out.sort();
    out
}

/// Issue 28's fault test "Redis killed mid-sweep": while a sweep runs in Redis, every key it
/// made carries an expiry (a killed run leaves nothing for ever); the server is then SIGKILLed.
/// The sweep must stop within a minute with exit 1 (a measured failure: the run was measuring
/// when its server went away), an error naming the server's address but not its password, and
/// no report written: the previous report in --out is left whole.
#[test]
fn redis_killed_mid_sweep_is_a_clear_error_leaving_the_previous_report_whole() {
    let test = "redis_killed_mid_sweep_is_a_clear_error_leaving_the_previous_report_whole";
    if !installed(test) {
        return;
    }
    let server = Server::start("killed");
    let out = std::env::temp_dir().join(format!("bloomlab-cli-killed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("summary.md"), "# the previous report\n").unwrap();
    std::fs::write(out.join("sweep.csv"), "filter\nprevious\n").unwrap();
    let before = snapshot(&out);

    // Rows long enough (about 10^5 members and millions of queries each) to be killed mid-run.
    let mut child = Command::new(SWEEP)
        .args([
            "--redis",
            &server.url(),
            "--filters",
            "redis/classic/xxh3/km,redis/blocked512/xxh3",
            "--n",
            "1e5",
            "--p",
            "1e-3",
            "--keys",
            "url",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    // Wait for the first row's filter, then check every bloomlab key's expiry.
    let keys = loop {
        let keys: Vec<String> = server
            .cli(&["--scan", "--pattern", "{bloomlab-sweep:*"])
            .lines()
            .map(str::to_owned)
            .collect();
        if keys.len() >= 2 {
            break keys;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the sweep ended ({status}) before its filter was seen");
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no filter keys after 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    for k in &keys {
        let ttl: i64 = server.cli(&["PTTL", k]).trim().parse().unwrap();
        // -2: deleted meanwhile (a finished row), fine; -1 (no expiry) is the leak.
        assert!(
            ttl > 0 || ttl == -2,
            "{k}: PTTL {ttl}: a key without expiry"
        );
        assert!(
            ttl <= 600_000,
            "{k}: PTTL {ttl} ms, more than the 10 min expiry"
        );
    }
    server.kill();

    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the sweep still ran 60 s after its server was killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.contains(&server.addr),
        "the error does not name the server: {stderr}"
    );
    assert!(
        !stderr.contains(PASSWORD) && !stdout.contains(PASSWORD),
        "the password is shown: {stderr}{stdout}"
    );
    assert!(
        snapshot(&out) == before,
        "the output dir changed: {:?}",
        snapshot(&out).iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    std::fs::remove_dir_all(&out).unwrap();
}

/// Issue 28, case 11: a wrong password against a server with `requirepass`. The sweep and
/// redis-costs name the server's address and never the password given (the sweep printed
/// `redis://:WRONGPASS@...`).
#[test]
fn a_wrong_password_is_reported_without_the_password() {
    let test = "a_wrong_password_is_reported_without_the_password";
    if !installed(test) {
        return;
    }
    let server = Server::start("password");
    let wrong = "WRONG-Pa55-x";
    let url = format!("redis://:{wrong}@{}", server.addr);
    let user_url = format!("redis://someone:{wrong}@{}", server.addr);
    let out = std::env::temp_dir().join(format!("bloomlab-cli-pw-{}", std::process::id()));
    let runs: [(&str, Vec<&str>); 3] = [
        (
            SWEEP,
            vec![
                "--redis",
                &url,
                "--filters",
                "redis/classic/xxh3/km",
                "--n",
                "1e4",
                "--keys",
                "url",
                "--out",
                out.to_str().unwrap(),
            ],
        ),
        (
            SWEEP,
            vec![
                "--redis",
                &user_url,
                "--filters",
                "redis/classic/xxh3/km",
                "--n",
                "1e4",
                "--keys",
                "url",
                "--out",
                out.to_str().unwrap(),
            ],
        ),
        (
            REDIS_COSTS,
            vec![
                "--redis",
                &url,
                "--keys",
                "16",
                "--reps",
                "1",
                "--skip-big",
                "--skip-sweep",
                "--out",
                out.to_str().unwrap(),
            ],
        ),
    ];
    for (bin, args) in runs {
        let r = Command::new(bin)
            .args(&args)
            .env_remove("BLOOMLAB_REDIS_CLUSTER_URLS")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&r.stderr);
        let stdout = String::from_utf8_lossy(&r.stdout);
        let what = format!(
            "{bin} {args:?}: exit {:?}\nstderr: {stderr}",
            r.status.code()
        );
        assert_eq!(r.status.code(), Some(1), "{what}");
        assert!(stderr.contains(&server.addr), "{what}\nlacks the address");
        assert!(
            !stderr.contains(wrong) && !stdout.contains(wrong) && !stderr.contains("someone"),
            "{what}\nshows the credentials"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}
