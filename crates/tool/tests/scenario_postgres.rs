//! `scenario` against a private PostgreSQL cluster that this test starts
//! (`scripts/postgres-local.sh` with its own state dir and a password) and stops by its pid:
//! the server's own message on a failed login (never the password), and the fault test of issue
//! 28: the postmaster killed mid-dedup. Skipped with a message when PostgreSQL is not installed;
//! a failure under BLOOMLAB_REQUIRE_SERVICES=1 (CI).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bloomlab_scenarios::db::{Db, DbUrl};

const SCENARIO: &str = env!("CARGO_BIN_EXE_scenario");
const REQUIRE_VAR: &str = "BLOOMLAB_REQUIRE_SERVICES";
/// The cluster's password: in the URL given to `scenario`, never in what it prints or writes.
const PASSWORD: &str = "Pw-4-bloomlab-test";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres-local.sh")
}

/// A cluster started by `scripts/postgres-local.sh` in a state dir of its own; stopped (by the
/// pid the script recorded) and removed on drop.
struct Cluster {
    state: tempfile::TempDir,
    url: String,
    port: u16,
}

impl Cluster {
    /// Starts one, or says why not: None with a skip message, a panic under
    /// BLOOMLAB_REQUIRE_SERVICES=1.
    fn start(test: &str) -> Option<Cluster> {
        let state = tempfile::Builder::new()
            .prefix("bloomlab-pg-state-")
            .tempdir()
            .unwrap();
        let out = Command::new("bash")
            .arg(script())
            .arg("start")
            .env("BLOOMLAB_POSTGRES_STATE_DIR", state.path())
            .env("BLOOMLAB_POSTGRES_PASSWORD", PASSWORD)
            .output()
            .unwrap();
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            if std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1") {
                panic!(
                    "{test}: scripts/postgres-local.sh start failed ({why}), and {REQUIRE_VAR}=1 makes that a failure"
                );
            }
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED bloomlab-tool test {test}: no PostgreSQL cluster ({why}). To run it: apt-get install -y postgresql"
            );
            return None;
        }
        let url = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        let port = url
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {url}"));
        Some(Cluster { state, url, port })
    }

    fn run_script(&self, cmd: &str) -> std::process::Output {
        Command::new("bash")
            .arg(script())
            .arg(cmd)
            .env("BLOOMLAB_POSTGRES_STATE_DIR", self.state.path())
            .env("BLOOMLAB_POSTGRES_PASSWORD", PASSWORD)
            .output()
            .unwrap()
    }

    /// The postmaster's pid, as the script recorded it.
    fn pid(&self) -> String {
        let state = std::fs::read_to_string(self.state.path().join("postgres.state")).unwrap();
        state
            .lines()
            .find_map(|l| l.strip_prefix("pid="))
            .unwrap()
            .to_owned()
    }

    fn url_with(&self, userinfo: &str, db: &str) -> String {
        format!("postgres://{userinfo}@127.0.0.1:{}/{db}", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.run_script("stop");
    }
}

fn scenario(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(SCENARIO).args(args).output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn login_failures_print_the_servers_message_and_what_to_check_never_the_password() {
    let Some(pg) = Cluster::start("login_failures") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let out = out.path().to_str().unwrap();
    let address = format!("127.0.0.1:{}", pg.port);
    let wrong = "Wrong-pw-123";
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            pg.url_with(&format!("bloomlab:{wrong}"), "postgres"),
            vec![
                "password authentication failed",
                "check the user and the password",
            ],
        ),
        (
            format!(
                "host=127.0.0.1 port={} user=bloomlab password={wrong} dbname=postgres",
                pg.port
            ),
            vec![
                "password authentication failed",
                "check the user and the password",
            ],
        ),
        (
            pg.url_with(&format!("bloomlab:{PASSWORD}"), "no_such_db"),
            vec!["\"no_such_db\" does not exist", "check the database name"],
        ),
        (
            pg.url_with(&format!("nobody_here:{PASSWORD}"), "postgres"),
            vec!["nobody_here", "check the user"],
        ),
    ];
    for (url, needles) in cases {
        let (code, stderr) = scenario(&["dedup", "--days", "1", "--db", &url, "--out", out]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(&address), "{stderr}");
        for n in needles {
            assert!(stderr.contains(n), "{n:?} missing: {stderr}");
        }
        assert!(
            !stderr.contains(wrong) && !stderr.contains(PASSWORD),
            "a password was printed: {stderr}"
        );
        assert!(!Path::new(out).join("summary.md").exists());
    }
}

/// Waits for `child` up to `limit`; kills it (by its pid) and panics past that.
fn wait_bounded(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("scenario did not exit within {limit:?} of the server's death");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The last day committed so far (0 when none, or while the table does not exist yet).
fn max_day(db: &DbUrl) -> i64 {
    Db::connect(db)
        .and_then(|mut c| {
            c.int(
                "SELECT COALESCE(MAX(day), 0) FROM bloomlab_dedup_articles",
                &[],
            )
        })
        .unwrap_or(0)
}

#[test]
fn postgres_killed_mid_dedup_exits_1_keeps_whole_days_and_marks_the_report() {
    let Some(pg) = Cluster::start("killed_mid_dedup") else {
        return;
    };
    let test_start = Instant::now();
    let out = tempfile::tempdir().unwrap();
    let db: DbUrl = pg.url.parse().unwrap();
    // 3650 days would take hours: the server dies long before the run could end.
    let mut child = Command::new(SCENARIO)
        .args(["dedup", "--days", "3650", "--db", &pg.url, "--out"])
        .arg(out.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Two whole days committed (a few seconds each), then the postmaster is killed by its pid.
    let deadline = Instant::now() + Duration::from_secs(30);
    while max_day(&db) < 2 {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("the run did not commit 2 days within 30 s (or exited early)");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let killed = Command::new("kill")
        .args(["-9", &pg.pid()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = wait_bounded(&mut child, Duration::from_secs(20));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();

    // Exit 1 (a measured failure), the server named, how to resume, never the password.
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        !stderr.contains(PASSWORD),
        "the password was printed: {stderr}"
    );
    assert!(
        stderr.contains(&format!("127.0.0.1:{}/postgres", pg.port)),
        "{stderr}"
    );
    assert!(stderr.contains("To resume"), "{stderr}");
    let committed: u64 = stderr
        .split("interrupted after day ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("no 'interrupted after day D' in {stderr}"));
    assert!(stderr.contains("of 3650 of the no-filter mode"), "{stderr}");
    assert!(committed >= 2, "{stderr}");
    let at_commit = stderr.contains("(the commit of day");

    // The report of the days measured is marked, in the summary and on every CSV row.
    let md = std::fs::read_to_string(out.path().join("summary.md")).unwrap();
    assert!(
        md.contains("**Interrupted: not a complete run.**")
            && md.contains(&format!("interrupted after day {committed} of 3650")),
        "{md}"
    );
    assert!(!md.contains(PASSWORD));
    let csv = std::fs::read_to_string(out.path().join("dedup.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len() as u64, committed, "{csv}");
    assert!(rows.iter().all(|l| l.ends_with(",interrupted")), "{csv}");
    assert!(!csv.contains(PASSWORD));

    // Restarted, the server holds whole days only: exactly the committed ones, 15,000 new
    // articles each (50,000 a day, 70% duplicates), each stored once.
    let restarted = pg.run_script("restart");
    assert!(
        restarted.status.success(),
        "{}",
        String::from_utf8_lossy(&restarted.stderr)
    );
    let mut conn = Db::connect(&db).unwrap();
    let per_day = conn
        .rows(
            "SELECT day, COUNT(*), COUNT(DISTINCT hash) FROM bloomlab_dedup_articles \
             GROUP BY day ORDER BY day",
            &[],
        )
        .unwrap();
    let days = per_day.len() as u64;
    assert!(
        days == committed || (at_commit && days == committed + 1),
        "{days} days stored, {committed} reported committed: {stderr}"
    );
    for (i, r) in per_day.iter().enumerate() {
        let v: Vec<i64> = r.iter().map(|v| v.int().unwrap()).collect();
        assert_eq!(v, vec![i as i64 + 1, 15_000, 15_000], "day {}", i + 1);
    }
    let _ = writeln!(
        std::io::stderr(),
        "postgres fault test: {committed} days committed before the kill, {:?} in all",
        test_start.elapsed()
    );
}

/// Kills the postmaster (by the pid the script recorded) and waits until it is gone, so the next
/// statement of the run fails.
fn kill_postmaster(pg: &Cluster) {
    let pid = pg.pid();
    assert!(
        Command::new("kill")
            .args(["-9", &pid])
            .status()
            .unwrap()
            .success()
    );
}

#[test]
fn postgres_killed_between_penetration_modes_keeps_the_modes_measured() {
    use bloomlab_scenarios::penetration::{self, PenetrationConfig};
    let Some(pg) = Cluster::start("killed_mid_penetration") else {
        return;
    };
    let db: DbUrl = pg.url.parse().unwrap();
    let mut c = PenetrationConfig::new(
        db,
        "classic/xxh3/km/flat".parse().unwrap(),
        vec![0.01, 0.001],
    );
    c.valid_ids = 20_000;
    c.requests = 40_000;
    // The kill lands as the first guarded mode starts (its first progress call): the unguarded
    // mode is measured whole, the guarded one fails on its next database query.
    let mut killed = false;
    let mut progress = |label: &str, _: u64, _: u64| {
        if !killed && label.contains("guarded, p = 0.01") {
            kill_postmaster(&pg);
            killed = true;
        }
    };
    let o = penetration::run(&c, &mut progress).expect("the unguarded mode was measured");
    assert!(killed);
    let i = o.interrupted.as_ref().expect("the run must be interrupted");
    assert_eq!((i.modes_done, i.modes), (1, 3), "{i:?}");
    assert!(
        i.during.contains("p = 0.01") && i.cause.contains(&format!("127.0.0.1:{}", pg.port)),
        "{i:?}"
    );
    assert!(!i.cause.contains(PASSWORD), "{i:?}");
    assert_eq!(o.rows.len(), 1);
    assert_eq!(o.rows[0].mode, "unguarded");
    assert_eq!(o.rows[0].requests, 40_000);
    assert_eq!(o.rows[0].run_status, "interrupted");
    let out = tempfile::tempdir().unwrap();
    penetration::write_report(&o, out.path(), "test").unwrap();
    let md = std::fs::read_to_string(out.path().join(penetration::SUMMARY_NAME)).unwrap();
    assert!(
        md.contains("**Interrupted: not a complete run.**")
            && md.contains("interrupted after 1 of 3 modes"),
        "{md}"
    );
}

#[test]
fn postgres_killed_mid_swap_is_a_measured_failure_naming_the_server() {
    use bloomlab_scenarios::ScenarioError;
    use bloomlab_scenarios::swap::{self, SwapConfig};
    let Some(pg) = Cluster::start("killed_mid_swap") else {
        return;
    };
    let db: DbUrl = pg.url.parse().unwrap();
    let mut c = SwapConfig::new(db, "classic/xxh3/km/atomic".parse().unwrap(), 0.01);
    c.initial_ids = 20_000;
    c.rebuilds = 4;
    c.quiet = Duration::from_millis(500);
    // The run lasts at least 5 quiet periods (2.5 s) after the initial rows: a kill 0.8 s after
    // they are written lands while the writer and the rebuilds run.
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let killer = std::thread::scope(|s| {
        let pg = &pg;
        let killer = s.spawn(move || {
            rx.recv().unwrap();
            std::thread::sleep(Duration::from_millis(800));
            kill_postmaster(pg);
        });
        let mut sent = false;
        let mut progress = |label: &str, done: u64, total: u64| {
            if !sent && label.contains("initial rows") && done == total {
                tx.send(()).unwrap();
                sent = true;
            }
        };
        let r = swap::run(&c, &mut progress);
        killer.join().unwrap();
        r
    });
    match killer {
        Err(ScenarioError::Interrupted(m)) => {
            assert!(
                m.contains(&format!("127.0.0.1:{}", pg.port))
                    && m.contains("To resume")
                    && !m.contains(PASSWORD),
                "{m}"
            );
        }
        other => panic!("expected an interrupted run, got {other:?}"),
    }
}

#[test]
fn postgres_killed_in_the_filter_mode_reports_both_modes_over_the_common_days() {
    use bloomlab_scenarios::dedup::{self, DedupConfig, Mode};
    let Some(pg) = Cluster::start("killed_in_filter_mode") else {
        return;
    };
    let db: DbUrl = pg.url.parse().unwrap();
    let mut c = DedupConfig::new(db, "classic/xxh3/km/flat".parse().unwrap(), 0.01);
    c.days = 5;
    c.per_day = 2000;
    c.capacity = 5000;
    // Killed inside day 3 of the filter mode (its first progress call of that day, after the
    // day's first statements): the no-filter mode ran whole, days 1 and 2 of the filter mode
    // are committed.
    let mut killed = false;
    let mut progress = |label: &str, done: u64, _: u64| {
        if !killed && label.starts_with("dedup filter") && done >= 2 * 2000 {
            kill_postmaster(&pg);
            killed = true;
        }
    };
    let o = dedup::run(&c, &mut progress).expect("days were measured");
    assert!(killed);
    let i = o.interrupted.as_ref().expect("the run must be interrupted");
    assert_eq!((i.mode, i.committed_days), (Mode::Filter, 2), "{i:?}");
    assert_eq!(o.verified.len(), 1, "the no-filter mode was checked");
    assert_eq!(o.rows.len(), 5 + 2);
    let what = o.interruption_summary().unwrap();
    assert!(
        what.contains("interrupted after day 2 of 5 of the filter mode")
            && what.contains("the no-filter mode ran all 5 days"),
        "{what}"
    );
    let out = tempfile::tempdir().unwrap();
    dedup::write_report(&o, out.path(), "test").unwrap();
    let md = std::fs::read_to_string(out.path().join(dedup::SUMMARY_NAME)).unwrap();
    for needle in [
        "**Interrupted: not a complete run.**",
        "## Totals over days 1 to 2 (measured in both modes)",
        "mean of 2 days",
        "| filter | not checked: interrupted after day 2 |",
        "it stored 1200 before it stopped",
    ] {
        assert!(md.contains(needle), "{needle:?} missing:\n{md}");
    }
    assert!(!md.contains(PASSWORD));
}
