//! Issue 29's round trip, with the commands README shows, on one server (`BLOOMLAB_REDIS_URL`) and
//! on the 3-master cluster (`BLOOMLAB_REDIS_CLUSTER_URLS`): create -> add 10^6 keys -> stat (the
//! estimated count's interval holds 10^6; the implied rate is the in-memory twin's, and within 5
//! standard deviations of its theory) -> export -> drop -> import -> check (every key found;
//! answers on 10^5 non-members equal the twin's) -> swap under 4 readers (0 false negatives,
//! counted). Skipped with a message when the variables are not set; a failure with
//! BLOOMLAB_REQUIRE_SERVICES=1.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use bloomlab_filters::{Bloom, Filter, FlatBits, KirschMitzenmacher, Xxh3};

const BLOOMLAB: &str = env!("CARGO_BIN_EXE_bloomlab");
const N: u64 = 1_000_000;
const P: f64 = 0.01;
const NON_MEMBERS: u64 = 100_000;

type Twin = Bloom<Xxh3, KirschMitzenmacher, FlatBits>;

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

fn bloomlab(args: &[&str]) -> Output {
    Command::new(BLOOMLAB)
        .arg("filter")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Runs `bloomlab filter ARGS`, which must exit with `code`; its standard output.
fn expect(args: &[&str], code: i32) -> String {
    let o = bloomlab(args);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(code),
        "{args:?}\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

fn write_keys(path: &Path, keys: impl Iterator<Item = String>) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for k in keys {
        writeln!(f, "{k}").unwrap();
    }
}

fn member(i: u64) -> String {
    format!("https://example.invalid/page/{i}")
}

/// The number after `label` in `text` (e.g. "interval 998512 .. 1001610").
fn numbers_after(text: &str, label: &str) -> Vec<f64> {
    let start = text
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {text}"))
        + label.len();
    text[start..]
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-'))
        .filter(|t| !t.is_empty() && t.parse::<f64>().is_ok())
        .take(3)
        .map(|t| t.parse().unwrap())
        .collect()
}

fn round_trip(urls: &str, tag: &str) {
    let dir = std::env::temp_dir().join(format!(
        "bloomlab-roundtrip-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let name = format!(
        "bloomlab-test-roundtrip-{}",
        dir.file_name().unwrap().to_string_lossy()
    );
    let (members, others, probes) = (dir.join("m.txt"), dir.join("o.txt"), dir.join("probe.txt"));
    write_keys(&members, (0..N).map(member));
    write_keys(
        &others,
        (0..NON_MEMBERS).map(|i| format!("never-inserted-{i}")),
    );
    write_keys(&probes, (0..10_000).map(|i| member(i * 97)));
    let (m, o, pr) = (
        members.to_str().unwrap(),
        others.to_str().unwrap(),
        probes.to_str().unwrap(),
    );
    let file = dir.join("seen.bloom");
    let f = file.to_str().unwrap();
    let target = ["--redis", urls, "--name", &name];
    let with = |cmd: &'static str, extra: &[&'static str]| -> Vec<String> {
        std::iter::once(cmd)
            .chain(target.iter().copied())
            .chain(extra.iter().copied())
            .map(str::to_owned)
            .collect()
    };
    let run = |args: Vec<String>, code: i32| {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        expect(&refs, code)
    };

    run(
        with(
            "create",
            &["--layout", "classic/xxh3/km", "--n", "1e6", "--p", "0.01"],
        ),
        0,
    );
    let mut add = with("add", &["--keys"]);
    add.push(m.to_owned());
    run(add, 0);

    let mut twin = Twin::new(N, P).unwrap();
    for i in 0..N {
        twin.insert(&member(i));
    }
    let stat = run(with("stat", &[]), 0);
    let interval = numbers_after(&stat, "% interval ");
    assert!(
        interval[0] <= N as f64 && N as f64 <= interval[1],
        "10^6 keys outside the estimate's interval {interval:?}:\n{stat}"
    );
    let implied = twin.fpr_given_bits();
    assert!(
        stat.contains(&format!("implied FPR   {implied:.4e}")),
        "{stat}\ntwin: {implied}"
    );
    // The implied rate (X/m)^k moves with the set-bit count X: relative sd k sd(X) / X. Five of
    // them bound a chance departure from theory at a two-sided false-alarm rate of 6e-7.
    let g = twin.geometry();
    let theory = g.fpr(N);
    let sd_x = g.set_bits_variance(N as f64).sqrt();
    let rel = 5.0 * f64::from(g.hashes()) * sd_x / twin.set_bits() as f64;
    assert!(
        (implied / theory - 1.0).abs() <= rel,
        "implied {implied} vs theory {theory}: more than {rel} apart"
    );

    let mut export = with("export", &["--out"]);
    export.push(f.to_owned());
    run(export, 0);
    run(with("drop", &[]), 0);
    expect(&["check", "--redis", urls, "--name", &name, "--keys", o], 2);
    let mut import = with("import", &["--file"]);
    import.push(f.to_owned());
    run(import, 0);

    let mut check = with("check", &["--members", "--count", "--keys"]);
    check.push(m.to_owned());
    let out = run(check, 0);
    assert!(
        out.contains(&format!("{N} keys: {N} maybe present, 0 absent")),
        "{out}"
    );
    let mut check = with("check", &["--keys"]);
    check.push(o.to_owned());
    let answers = run(check, 0);
    let expected: String = (0..NON_MEMBERS)
        .map(|i| {
            if twin.contains(&format!("never-inserted-{i}")) {
                "1\n"
            } else {
                "0\n"
            }
        })
        .collect();
    assert_eq!(
        answers, expected,
        "answers on non-members differ from the twin's"
    );

    let mut swap = with(
        "swap",
        &["--adopt", "--readers", "4", "--grace", "5", "--keys"],
    );
    swap.extend([m.to_owned(), "--probe-keys".into(), pr.to_owned()]);
    let out = run(swap, 0);
    let readers = numbers_after(&out, "readers ");
    assert!(
        readers[0] == 4.0 && readers[1] > 0.0 && readers[2] == 0.0,
        "{out}"
    );
    assert!(out.contains("4 of 4 on the new generation"), "{out}");
    // The swapped filter answers as the old one did: same keys, same sizing, same type.
    let mut check = with("check", &["--keys"]);
    check.push(o.to_owned());
    assert_eq!(
        run(check, 0),
        expected,
        "the new generation's answers differ from the twin's"
    );
    // Dropping the generational filter removes every generation, its list and its pointer.
    run(with("drop", &[]), 0);
    expect(&["stat", "--redis", urls, "--name", &name], 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn round_trip_on_one_server() {
    if let Some(u) = url("round_trip_on_one_server", "BLOOMLAB_REDIS_URL", "start") {
        round_trip(&u, "single");
    }
}

#[test]
fn round_trip_on_the_cluster() {
    if let Some(u) = url(
        "round_trip_on_the_cluster",
        "BLOOMLAB_REDIS_CLUSTER_URLS",
        "cluster",
    ) {
        assert!(u.contains(','), "{u}: a cluster's node URLs");
        round_trip(&u, "cluster");
    }
}
