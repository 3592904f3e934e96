//! The scenarios end to end, small, against SQLite always and PostgreSQL when
//! BLOOMLAB_POSTGRES_URL is set (skipped with a message otherwise; a failure under
//! BLOOMLAB_REQUIRE_SERVICES=1, as in CI). Each checks the figures the scenario reports against
//! counts that follow from its workload, and every bad input's error.

use std::io::Write as _;
use std::time::Duration;

use bloomlab_harness::stats::clopper_pearson;
use bloomlab_scenarios::ScenarioError;
use bloomlab_scenarios::db::{Db, DbUrl, TempSqlite, redact};
use bloomlab_scenarios::dedup::{self, DedupConfig, Mode};
use bloomlab_scenarios::penetration::{self, PenetrationConfig};
use bloomlab_scenarios::swap::{self, SwapConfig};

const PG_VAR: &str = "BLOOMLAB_POSTGRES_URL";
const REQUIRE_VAR: &str = "BLOOMLAB_REQUIRE_SERVICES";

/// The tests share one PostgreSQL database and the scenarios' table names (the foreign-schema
/// test replaces one table): each holds this lock while it runs, so they run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The databases to run on: a fresh SQLite file, and PostgreSQL when configured. Reports a skip
/// on the terminal (not captured), or panics when services are required.
fn databases(test: &str) -> Vec<(DbUrl, Option<tempdir::Dir>)> {
    let dir = tempdir::Dir::new(test);
    let mut out = vec![(DbUrl::Sqlite(dir.path.join("db.sqlite")), Some(dir))];
    match std::env::var(PG_VAR).ok().filter(|v| !v.trim().is_empty()) {
        Some(url) => out.push((url.parse().expect(PG_VAR), None)),
        None => {
            let how = format!("export {PG_VAR}=$(scripts/postgres-local.sh start)");
            if std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1") {
                panic!(
                    "bloomlab-scenarios test {test} cannot run on PostgreSQL: {PG_VAR} is not set, and {REQUIRE_VAR}=1 makes a missing service a failure. Start it: {how}"
                );
            }
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED bloomlab-scenarios test {test} on PostgreSQL: {PG_VAR} is not set (ran on SQLite only). To run it: {how}"
            );
        }
    }
    out
}

/// A temp dir removed on drop (std only).
mod tempdir {
    pub struct Dir {
        pub path: std::path::PathBuf,
    }
    impl Dir {
        pub fn new(label: &str) -> Self {
            let path = std::env::temp_dir().join(format!(
                "bloomlab-scenarios-test-{label}-{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos())
            ));
            std::fs::create_dir_all(&path).unwrap();
            Dir { path }
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn nop() -> impl FnMut(&str, u64, u64) {
    |_, _, _| {}
}

#[test]
fn dedup_counts_follow_from_the_workload_and_the_end_state_is_verified() {
    let _serial = serial();
    for (db, _dir) in databases("dedup") {
        let mut c = DedupConfig::new(db.clone(), "classic/xxh3/km/flat".parse().unwrap(), 0.01);
        c.days = 3;
        c.per_day = 2000;
        c.capacity = 3000; // 600 new a day: 1800 distinct, past half the capacity's fill by day 3
        let o = dedup::run(&c, &mut nop()).unwrap_or_else(|e| panic!("{db}: {e}"));
        assert_eq!(o.rows.len(), 6, "{db}");
        for v in &o.verified {
            assert_eq!(
                (v.expected, v.rows, v.distinct_hashes),
                (1800, 1800, 1800),
                "{db} {v:?}"
            );
        }
        for r in &o.rows {
            assert_eq!(
                (r.articles, r.new_articles, r.duplicates),
                (2000, 600, 1400),
                "{db} {r:?}"
            );
            assert_eq!(r.inserts, 600, "{db} {r:?}");
            match r.mode {
                Mode::NoFilter => {
                    assert_eq!(r.db_lookups, 2000, "{db} {r:?}");
                    assert_eq!(r.false_positives, 0, "{db} {r:?}");
                }
                Mode::Filter => {
                    // Every duplicate is a positive and is confirmed; the rest are false positives.
                    assert_eq!(
                        r.filter_positives,
                        r.duplicates + r.false_positives,
                        "{db} {r:?}"
                    );
                    assert_eq!(r.db_lookups, r.filter_positives, "{db} {r:?}");
                    assert_eq!(
                        r.db_lookups_avoided,
                        r.new_articles - r.false_positives,
                        "{db} {r:?}"
                    );
                    assert!(r.fill_ratio > 0.0 && r.filter_ns > 0.0, "{db} {r:?}");
                }
            }
            assert_eq!(r.rows_in_db, 600 * r.day, "{db} {r:?}");
        }
        // The monitor's day is the first filter row past the threshold.
        let first = o
            .rows
            .iter()
            .find(|r| r.mode == Mode::Filter && r.fill_ratio > 0.5)
            .map(|r| r.day);
        assert_eq!(o.alert_day, first, "{db}");
        let dir = tempdir::Dir::new("dedup-report");
        dedup::write_report(&o, &dir.path, "test").unwrap();
        for f in [dedup::CSV_NAME, dedup::PNG_NAME, dedup::SUMMARY_NAME] {
            assert!(
                std::fs::metadata(dir.path.join(f)).unwrap().len() > 100,
                "{f}"
            );
        }
    }
}

#[test]
fn penetration_attack_share_is_the_filters_rate_and_every_answer_is_right() {
    let _serial = serial();
    for (db, _dir) in databases("penetration") {
        let mut c = PenetrationConfig::new(
            db.clone(),
            "classic/xxh3/km/flat".parse().unwrap(),
            vec![0.05],
        );
        c.valid_ids = 5000;
        c.requests = 40_000;
        let o = penetration::run(&c, &mut nop()).unwrap_or_else(|e| panic!("{db}: {e}"));
        assert_eq!(o.rows_in_db, 5000);
        let (unguarded, guarded) = (&o.rows[0], &o.rows[1]);
        assert_eq!(
            unguarded.attack_reached_db, unguarded.attack_requests,
            "{db}"
        );
        assert!(guarded.attack_requests > 15_000, "{db} {guarded:?}");
        // The attack ids are fresh, so each is an independent trial of the filter's own rate
        // given its bits. Bound: the exact interval at a 1e-6 false-alarm rate (the run is
        // seeded, so the outcome is fixed; the bound says it is not a fluke).
        let (lo, hi) = clopper_pearson(
            guarded.attack_reached_db,
            guarded.attack_requests,
            1.0 - 1e-6,
        );
        assert!(
            lo <= guarded.fpr_given_bits && guarded.fpr_given_bits <= hi,
            "{db}: {} of {} attack requests reached the DB, interval [{lo}, {hi}] misses the filter's own rate {}",
            guarded.attack_reached_db,
            guarded.attack_requests,
            guarded.fpr_given_bits
        );
        // The guard removes the attack queries: DB queries drop by the eliminated ones.
        assert_eq!(
            unguarded.db_queries - guarded.db_queries,
            unguarded.attack_reached_db - guarded.attack_reached_db,
            "{db}"
        );
        let dir = tempdir::Dir::new("pen-report");
        penetration::write_report(&o, &dir.path, "test").unwrap();
        assert!(
            std::fs::metadata(dir.path.join(penetration::PNG_NAME))
                .unwrap()
                .len()
                > 100
        );
    }
}

fn small_swap(db: &DbUrl) -> SwapConfig {
    let mut c = SwapConfig::new(db.clone(), "classic/xxh3/km/atomic".parse().unwrap(), 0.01);
    c.initial_ids = 20_000;
    c.rebuilds = 3;
    c.quiet = Duration::from_millis(150);
    c
}

#[test]
fn swap_has_no_false_negative_and_its_snapshots_match_the_log() {
    let _serial = serial();
    for (db, _dir) in databases("swap") {
        let o = swap::run(&small_swap(&db), &mut nop()).unwrap_or_else(|e| panic!("{db}: {e}"));
        assert_eq!(o.generations.len(), 4, "{db}");
        assert!(
            o.changes > 0 && o.outside.count > 0 && o.during.count > 0,
            "{db} {o:?}"
        );
        for g in &o.generations {
            assert_eq!(
                (g.false_negatives, g.negatives_present_in_both),
                (0, 0),
                "{db} {g:?}"
            );
        }
        assert!(
            o.generations[1..]
                .iter()
                .all(|g| g.both_generations_bytes > g.filter_bytes)
        );
        let dir = tempdir::Dir::new("swap-report");
        swap::write_report(&o, &dir.path, "test").unwrap();
    }
}

#[test]
fn the_swap_check_catches_the_rebuild_race_when_the_writer_leaves_it_open() {
    let _serial = serial();
    // Planted defect: the writer adds inserts to the current generation only, so ids committed
    // between a rebuild's snapshot and its swap are missing from the new generation, and readers
    // asking for them get false negatives, which the check must report.
    let dir = tempdir::Dir::new("swap-race");
    let db = DbUrl::Sqlite(dir.path.join("db.sqlite"));
    let mut c = small_swap(&db);
    c.initial_ids = 200_000; // a longer snapshot and fill: more commits inside the window
    c.rebuilds = 4;
    c.close_race = false;
    match swap::run(&c, &mut nop()) {
        Err(ScenarioError::Verification(m)) => assert!(m.contains("false negatives"), "{m}"),
        other => panic!("the open race went unnoticed: {other:?}"),
    }
}

#[test]
fn bad_input_is_an_error_naming_the_value_and_its_range() {
    let _serial = serial();
    let dir = tempdir::Dir::new("bad");
    let db = DbUrl::Sqlite(dir.path.join("db.sqlite"));
    let err = |c: &DedupConfig| dedup::run(c, &mut nop()).unwrap_err().to_string();
    let base = DedupConfig::new(db.clone(), "classic/xxh3/km/flat".parse().unwrap(), 0.01);
    for p in [0.0, 1.0, -0.5, f64::NAN] {
        let e = err(&DedupConfig { p, ..base.clone() });
        assert!(e.contains("--p") && e.contains("(0, 1)"), "{e}");
    }
    let e = err(&DedupConfig {
        days: 0,
        ..base.clone()
    });
    assert!(e.contains("--days 0") && e.contains("1 to 3650"), "{e}");
    // An unknown filter cannot reach a config: it is refused where its name is parsed, naming
    // the registered ones.
    let e = "classic/nope"
        .parse::<bloomlab_filters::VariantId>()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("classic/nope") && e.contains("classic/xxh3/km/flat"),
        "{e}"
    );

    let mut s = SwapConfig::new(db.clone(), "classic/xxh3/km/atomic".parse().unwrap(), 0.01);
    s.threads = 0;
    let e = swap::run(&s, &mut nop()).unwrap_err().to_string();
    assert!(e.contains("--threads 0") && e.contains("1 to 64"), "{e}");
    s.threads = 2;
    s.filter = "classic/xxh3/km/flat".parse().unwrap();
    let e = swap::run(&s, &mut nop()).unwrap_err().to_string();
    assert!(
        e.contains("classic/xxh3/km/flat") && e.contains("atomic"),
        "{e}"
    );

    let mut pc = PenetrationConfig::new(
        db.clone(),
        "classic/xxh3/km/flat".parse().unwrap(),
        vec![0.01],
    );
    pc.attack_share = 1.5;
    let e = penetration::run(&pc, &mut nop()).unwrap_err().to_string();
    assert!(
        e.contains("--attack-share 1.5") && e.contains("(0, 1)"),
        "{e}"
    );

    for bad in ["mysql://x", "sqlite:", "postgres://127.0.0.1:notaport/db"] {
        let e = bad.parse::<DbUrl>().unwrap_err().to_string();
        assert!(e.contains(bad), "{bad}: {e}");
    }
}

#[test]
fn an_unreachable_database_is_an_error_naming_its_address() {
    let _serial = serial();
    // Port 1 on loopback: nothing listens there (connection refused at once).
    let url: DbUrl = "postgres://bloomlab@127.0.0.1:1/postgres".parse().unwrap();
    let e = dedup::run(
        &DedupConfig::new(url, "classic/xxh3/km/flat".parse().unwrap(), 0.01),
        &mut nop(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("PostgreSQL") && e.contains("127.0.0.1:1"), "{e}");
    let url = DbUrl::Sqlite("/nonexistent-dir-bloomlab/x.sqlite".into());
    let e = dedup::run(
        &DedupConfig::new(url, "classic/xxh3/km/flat".parse().unwrap(), 0.01),
        &mut nop(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("SQLite") && e.contains("/nonexistent-dir-bloomlab/x.sqlite"),
        "{e}"
    );
}

#[test]
fn a_foreign_table_of_the_scenarios_name_is_refused_and_left_alone() {
    let _serial = serial();
    for (db, _dir) in databases("foreign") {
        let mut conn = Db::connect(&db).unwrap();
        conn.batch("DROP TABLE IF EXISTS bloomlab_penetration_items")
            .unwrap();
        conn.batch("CREATE TABLE bloomlab_penetration_items (name TEXT, price BIGINT)")
            .unwrap();
        conn.batch("INSERT INTO bloomlab_penetration_items VALUES ('kept', 1)")
            .unwrap();
        let c = PenetrationConfig::new(
            db.clone(),
            "classic/xxh3/km/flat".parse().unwrap(),
            vec![0.01],
        );
        let e = penetration::run(&c, &mut nop()).unwrap_err();
        assert!(
            matches!(e, ScenarioError::ForeignSchema { .. }),
            "{db}: {e}"
        );
        let m = e.to_string();
        assert!(
            m.contains("bloomlab_penetration_items") && m.contains("name TEXT"),
            "{m}"
        );
        assert_eq!(
            conn.int("SELECT COUNT(*) FROM bloomlab_penetration_items", &[])
                .unwrap(),
            1
        );
        conn.batch("DROP TABLE bloomlab_penetration_items").unwrap();
    }
}

/// A small tmpfs mounted for one test (root only), unmounted on drop.
struct TinyDisk {
    dir: tempdir::Dir,
}

impl TinyDisk {
    /// Mounts `bytes` of tmpfs, or says why not: None with a skip message, a panic under
    /// BLOOMLAB_REQUIRE_SERVICES=1 (CI runs as root and must run the test).
    fn mount(test: &str, bytes: u64) -> Option<TinyDisk> {
        let dir = tempdir::Dir::new(test);
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(&dir.path)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(TinyDisk { dir }),
            other => {
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_owned(),
                    Err(e) => e.to_string(),
                };
                if std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1") {
                    panic!(
                        "bloomlab-scenarios test {test} cannot mount a small tmpfs ({why}), and {REQUIRE_VAR}=1 makes that a failure: run it as root"
                    );
                }
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED bloomlab-scenarios test {test}: cannot mount a small tmpfs to fill ({why}). To run it: run the tests as root"
                );
                None
            }
        }
    }
}

impl Drop for TinyDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(&self.dir.path)
            .status();
    }
}

#[test]
fn a_full_disk_is_an_error_naming_it_and_leaves_only_whole_days_behind() {
    let test = "full-disk";
    let Some(disk) = TinyDisk::mount(test, 4 << 20) else {
        return;
    };
    let path = disk.dir.path.join("db.sqlite");
    let db = DbUrl::Sqlite(path.clone());
    let mut c = DedupConfig::new(db.clone(), "classic/xxh3/km/flat".parse().unwrap(), 0.01);
    c.days = 20;
    c.per_day = 2000;
    c.capacity = 20_000;
    // Issue 28 case 5: the days measured before the disk filled are kept (the run used to end in
    // an error that dropped them), with where and why the run stopped.
    let o = dedup::run(&c, &mut nop()).expect("days measured before the disk filled");
    let i = o
        .interrupted
        .as_ref()
        .expect("20 days of articles on a 4 MiB disk: the run must stop part-way");
    assert!(
        i.cause.contains("full") && i.cause.contains(&path.display().to_string()),
        "{i:?}"
    );
    let measured = o.rows.iter().filter(|r| r.mode == i.mode).count() as u64;
    assert_eq!(measured, i.committed_days, "{i:?}");
    assert!(
        o.rows.iter().all(|r| r.run_status == "interrupted"),
        "every row of an interrupted run is marked"
    );
    let what = o.interruption_summary().unwrap();
    assert!(
        what.contains(&format!(
            "interrupted after day {} of 20 of the {} mode",
            i.committed_days,
            i.mode.as_str()
        )),
        "{what}"
    );
    // The report of the days measured says it is not a complete run.
    let out = tempdir::Dir::new("full-disk-report");
    dedup::write_report(&o, &out.path, "test").unwrap();
    let md = std::fs::read_to_string(out.path.join(dedup::SUMMARY_NAME)).unwrap();
    assert!(
        md.contains("**Interrupted: not a complete run.**") && md.contains(&what),
        "{md}"
    );
    let csv = std::fs::read_to_string(out.path.join(dedup::CSV_NAME)).unwrap();
    assert!(
        csv.lines().skip(1).all(|l| l.ends_with(",interrupted")),
        "{csv}"
    );
    // The day that did not fit was rolled back: what is left is whole days of 600 new articles,
    // each stored once (the file is read back on the same full disk), exactly the days reported
    // as committed (unless the commit itself failed, when its day may have landed).
    let mut check = Db::connect(&db).unwrap();
    let rows = check
        .int("SELECT COUNT(*) FROM bloomlab_dedup_articles", &[])
        .unwrap();
    let distinct = check
        .int(
            "SELECT COUNT(DISTINCT hash) FROM bloomlab_dedup_articles",
            &[],
        )
        .unwrap();
    assert_eq!(rows, distinct, "a row stored twice");
    assert_eq!(rows % 600, 0, "{rows} rows: a partly stored day");
    assert!(
        rows > 0 && rows < 600 * 20,
        "{rows} rows: no day fitted, or the disk was not full"
    );
    let days = (rows / 600) as u64;
    assert!(
        days == i.committed_days || (i.at_commit && days == i.committed_days + 1),
        "{days} whole days stored, {i:?}"
    );
}

#[test]
fn the_default_temp_database_is_private_and_ignores_a_symlink_at_the_old_predictable_path() {
    let _serial = serial();
    // Issue 28 case 14: the default database used to be /tmp/bloomlab-scenario-<name>-<pid>.sqlite,
    // opened through any symlink planted there: a run wrote its rows into the victim's file.
    let base = tempdir::Dir::new("symlink");
    let victim = base.path.join("victim.sqlite");
    {
        let mut v = Db::connect(&DbUrl::Sqlite(victim.clone())).unwrap();
        v.batch(
            "PRAGMA journal_mode=DELETE; CREATE TABLE precious (x BIGINT); \
             INSERT INTO precious VALUES (1)",
        )
        .unwrap();
    }
    let before = std::fs::read(&victim).unwrap();
    let planted = std::env::temp_dir().join(format!(
        "bloomlab-scenario-dedup-{}.sqlite",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&planted);
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    // Removes the planted symlink however the test ends.
    struct Unplant(std::path::PathBuf);
    impl Drop for Unplant {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _unplant = Unplant(planted.clone());
    let temp = TempSqlite::create("dedup").unwrap();
    let dir = temp.dir().to_path_buf();
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}: mode {mode:o}", dir.display());
    }
    let mut c = DedupConfig::new(
        temp.url().clone(),
        "classic/xxh3/km/flat".parse().unwrap(),
        0.01,
    );
    c.days = 1;
    c.per_day = 500;
    let o = dedup::run(&c, &mut nop());
    let after = std::fs::read(&victim).unwrap();
    o.unwrap();
    assert!(
        before == after,
        "the victim file changed: {} -> {} bytes",
        before.len(),
        after.len()
    );
    assert!(
        !base.path.join("victim.sqlite-wal").exists(),
        "a WAL was opened beside the victim"
    );
    drop(temp);
    assert!(!dir.exists(), "{} was not removed", dir.display());
}

#[test]
fn the_fill_sentence_follows_the_run() {
    let _serial = serial();
    // The summary used to say the filter "fills past its design point on purpose" whatever the
    // run: at --days 2 the default filter holds 30,000 of its 100,000 (fill 0.197).
    let dir = tempdir::Dir::new("fill-sentence");
    let db = DbUrl::Sqlite(dir.path.join("db.sqlite"));
    for (days, past) in [(2, false), (5, true)] {
        let mut c = DedupConfig::new(db.clone(), "classic/xxh3/km/flat".parse().unwrap(), 0.01);
        c.days = days;
        c.per_day = 5000; // 1500 new a day
        c.capacity = 6000;
        let o = dedup::run(&c, &mut nop()).unwrap();
        let out = tempdir::Dir::new("fill-sentence-report");
        dedup::write_report(&o, &out.path, "test").unwrap();
        let md = std::fs::read_to_string(out.path.join(dedup::SUMMARY_NAME)).unwrap();
        let line = md
            .lines()
            .find(|l| l.starts_with("- Filter:"))
            .unwrap()
            .to_owned();
        assert!(
            line.contains(&format!("brings {} distinct articles", 1500 * days)),
            "{line}"
        );
        assert_eq!(
            line.contains("fills past its design point"),
            past,
            "days {days}: {line}"
        );
        assert_eq!(
            line.contains("stays within its design point"),
            !past,
            "days {days}: {line}"
        );
        assert!(!md.contains("Interrupted"), "{md}");
    }
}

#[test]
fn passwords_never_appear_in_messages_or_debug_output() {
    let _serial = serial();
    let pw = "hunter2pw";
    // URL errors name the value given, redacted.
    for bad in [
        "mysql://u:hunter2pw@h/db",
        "postgres://u:hunter2pw@h:notaport/db",
        "host=h port=notaport password=hunter2pw",
        "host=h port=notaport password='hunter2pw with space'",
    ] {
        let e = bad.parse::<DbUrl>().unwrap_err().to_string();
        assert!(!e.contains(pw), "{bad}: {e}");
        assert!(e.contains("***"), "{bad}: {e}");
    }
    // Both PostgreSQL forms are accepted; Debug, Display and the address hide the password.
    for good in [
        "postgres://bloomlab:hunter2pw@127.0.0.1:5432/postgres",
        "postgresql://bloomlab:hunter2pw@127.0.0.1:5432/postgres?password=hunter2pw",
        "host=127.0.0.1 port=5432 user=bloomlab password=hunter2pw dbname=postgres",
    ] {
        let u: DbUrl = good.parse().unwrap();
        for shown in [format!("{u:?}"), u.to_string(), u.address()] {
            assert!(!shown.contains(pw), "{good}: {shown}");
        }
        assert_eq!(u.address(), "127.0.0.1:5432/postgres", "{good}");
    }
    assert_eq!(
        redact("cannot reach postgres://me:s%40cret@db.example:5432/x?sslmode=disable"),
        "cannot reach postgres://me:***@db.example:5432/x?sslmode=disable"
    );
    assert_eq!(
        redact("host=h password = 'a b\\'c' user=u"),
        "host=h password = *** user=u"
    );
    assert_eq!(
        redact("host=h password='é\\é\\'x' user=u"),
        "host=h password=*** user=u"
    );
    assert_eq!(redact("password='unterminated é"), "password=***");
    assert_eq!(
        redact("postgres://u@h/d?password=x&user=u"),
        "postgres://u@h/d?password=***&user=u"
    );
    // A wrong password on an unreachable server: the error names the address, not the password.
    let u: DbUrl = "postgres://bloomlab:hunter2pw@127.0.0.1:1/postgres"
        .parse()
        .unwrap();
    let e = dedup::run(
        &DedupConfig::new(u, "classic/xxh3/km/flat".parse().unwrap(), 0.01),
        &mut nop(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        !e.contains(pw) && e.contains("127.0.0.1:1") && e.contains("host and port"),
        "{e}"
    );
}
