//! `bloomlab conform`: the conformance suite (`bloomlab_conform`) on in-process Rust subjects,
//! the external adapters bloomlab knows (`scripts/conform/`), or any command speaking the
//! process protocol. Parses flags into a [`Plan`], runs it clause by clause with progress on
//! stderr, prints each readable verdict on stdout, and writes the JSON and the report whole.

use std::ffi::OsString;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bloomlab_conform::process::{Command, ProcessCandidate};
use bloomlab_conform::subjects::external;
use bloomlab_conform::{Candidate, Clause, Conformance, Plan, suite};
use bloomlab_report::conformance::{ConformanceReport, Machine, RunInfo};
use bloomlab_report::output::{Interrupt, OutputDir, write_atomic};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::Failure;

/// The repository this binary was built from: where the external adapters live by default.
const BUILT_FROM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Longest per-request or build time limit, in seconds (a day): a bound, not a target.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// Default time limit of each request to an adapter, in seconds.
const DEFAULT_TIMEOUT_SECS: f64 = 60.0;

const ABOUT: &str = "Check a filter library against the conformance suite: nine clauses, each \
                     with a verdict, the figure behind it and the command that reproduces it";

const LONG_ABOUT: &str = "\
Check a filter library against the conformance suite: nine clauses, each with a verdict, the \
figure behind it and the command that reproduces it. Every plan also hunts: it checks the \
promises at about 200 (n, p) points besides the promised one (every n from 1 to 64, a dense \
sweep of n at rates from 0.5 to 1e-6, the n of power-of-two bit counts, seeded random points) \
and names the smallest (n, p) that breaks a clause (--no-hunt: the promised point only).

Subjects: in-process Rust filters (rust/<crate>[/<type>], bloomlab/<variant>), the external \
adapters bloomlab knows (python/pybloom-live, python/rbloom, node/bloom-filters, java/guava, \
python/exact-set, python/null; started as `bash <scripts>/adapter NAME`), or your own adapter: any \
command that speaks the process protocol (documented in crates/conform/src/process/mod.rs), \
given after `--adapter --`. `--list` names them all.

Clauses:
  no-false-negatives  every member answers \"maybe present\": every key family, after a \
serialization round trip, under concurrent inserts where claimed
  promised-rate       the FPR at the promised n against the promised p (one-sided exact test)
  theory              the FPR against the declared layout's theory (two-sided), where declared
  key-families        structured keys (sequential, shared prefix) against random keys
  scale               a filter past 2^32 bits, filled and measured (--quick: two filters past \
2^33 and 2^32 bits at the same small load, whose rates must halve with the size; in-process \
subjects; external ones only with --scale)
  over-fill           the FPR at 0.5x to 4x the promised n, or how construction fails; a \
growable filter is filled to 64x and held to its p
  accepts-valid-input every build, insert and query at a valid (n, p) succeeds: inside the \
range the candidate declares, or any n >= 1 and p in (0, 1)
  bad-input           n = 0, p at and beyond its edges, NaN: error, panic, abort, hang or \
silently wrong. In-process Rust subjects run it in a child process (`bloomlab conform serve`), \
so an abort or a hang cannot take bloomlab down
  speed               insert and lookup ns per key, for information (never broken)

Verdicts: holds (the evidence shows it at the false-alarm rate --alpha), broken (the evidence \
shows it does not), n/a (does not apply), undecided (more queries would decide; the figure \
says how many; or the --deadline passed first, with the counts so far).

Exit status: 0 no clause broken, 1 some clause broken, 2 bad input or an adapter that could not \
start (named, with the end of its stderr), 130 interrupted (Ctrl-C, SIGTERM or SIGHUP; --out and \
--json are then left as they were). On every exit, interrupted or not, bloomlab first kills the \
adapters and `conform serve` children still running (each in its own process group, which a \
terminal's Ctrl-C does not reach) and waits for them.";

/// `bloomlab conform`: what to check, the plan, the outputs.
#[derive(Debug, Args)]
#[command(about = ABOUT, long_about = LONG_ABOUT, args_conflicts_with_subcommands = true)]
pub struct ConformArgs {
    /// The hidden `serve` of an in-process subject (used by the bad-input clause).
    #[command(subcommand)]
    pub action: Option<ConformAction>,
    #[command(flatten)]
    run: RunArgs,
}

/// Subcommands of `bloomlab conform`.
#[derive(Debug, Subcommand)]
pub enum ConformAction {
    /// Serve an in-process subject over the conformance protocol on stdin/stdout (how the
    /// bad-input clause runs it isolated in a child process).
    #[command(hide = true)]
    Serve {
        /// The in-process subject's name.
        #[arg(long)]
        subject: String,
    },
}

#[derive(Debug, Args)]
struct RunArgs {
    /// A subject to check (repeatable): an in-process `rust/...` or `bloomlab/...` name, or an
    /// external adapter's name (`python/rbloom` or its launcher name `rbloom`). See --list.
    #[arg(long, value_name = "NAME")]
    subject: Vec<String>,
    /// Every in-process and external subject.
    #[arg(long)]
    all: bool,
    /// Check your own adapter: the command after `--` (`--adapter -- python3 my_adapter.py`),
    /// which must speak the process protocol.
    #[arg(long, requires = "command")]
    adapter: bool,
    /// The adapter's command and arguments (after `--`, with --adapter). Everything after `--`
    /// is the adapter's: give bloomlab's own flags (--quick, --clause, ...) before it.
    #[arg(last = true, value_name = "CMD", requires = "adapter")]
    command: Vec<OsString>,
    /// List the subjects bloomlab knows and exit.
    #[arg(long, conflicts_with_all = ["subject", "all", "adapter"])]
    list: bool,
    /// The quick plan (n = 10,000, 400,000 queries, the scale clause's seconds-long boundary test;
    /// seconds per subject) instead of the full one (n = 1,000,000, 4,000,000 queries, the scale
    /// clause's fill past 2^32 bits).
    #[arg(long)]
    quick: bool,
    /// The promised number of keys, from 1 to 2^40 (scientific notation allowed).
    #[arg(long, value_parser = count("--n", 1))]
    n: Option<u64>,
    /// The promised false-positive rate, in (0, 1).
    #[arg(long, value_parser = open_unit("--p", 1.0))]
    p: Option<f64>,
    /// Non-member queries per measured rate, from 1000 to 2^40.
    #[arg(long, value_parser = count("--queries", 1000))]
    queries: Option<u64>,
    /// Seed of every key set (decimal or 0x-hex).
    #[arg(long, value_parser = parse_seed)]
    seed: Option<u64>,
    /// False-alarm rate of each statistical decision, in (0, 0.5).
    #[arg(long, value_parser = open_unit("--alpha", 0.5))]
    alpha: Option<f64>,
    /// Run only this clause (repeatable; default: the plan's). Names: no-false-negatives,
    /// promised-rate, theory, key-families, scale, over-fill, accepts-valid-input, bad-input,
    /// speed.
    #[arg(long, value_name = "NAME", value_parser = Clause::parse)]
    clause: Vec<Clause>,
    /// Check the promised (n, p) only: no hunt over other sizes and rates (how a hunted point's
    /// verdict is reproduced alone).
    #[arg(long)]
    no_hunt: bool,
    /// Run the scale clause (a filter past 2^32 bits) on external subjects too (by default only
    /// in-process subjects run it, and only in the full plan).
    #[arg(long, conflicts_with = "no_scale")]
    scale: bool,
    /// Skip the scale clause for every subject.
    #[arg(long)]
    no_scale: bool,
    /// Time limit of each request to an adapter, in seconds (0 < SECS <= 86400; default 60).
    #[arg(long, value_name = "SECS", value_parser = seconds("--timeout"))]
    timeout: Option<f64>,
    /// How long a build may take in the bad-input clause before it is called a hang, in seconds
    /// (0 < SECS <= 86400; default 10).
    #[arg(long, value_name = "SECS", value_parser = seconds("--build-timeout"))]
    build_timeout: Option<f64>,
    /// Time limit of each subject's whole run, in seconds (0 < SECS <= 86400; default 300 with
    /// --quick, none otherwise). When it passes, the measuring stops between batches: each
    /// decision it cut short is undecided with the counts so far and the queries that would
    /// decide, and each clause not yet started is undecided; never broken because of it.
    #[arg(long, value_name = "SECS", value_parser = seconds("--deadline"))]
    deadline: Option<f64>,
    /// The directory of the external adapters and their launcher `adapter`. Default: the
    /// repository's `scripts/conform`, found from where this binary was built
    /// (CARGO_MANIFEST_DIR at build time).
    #[arg(long, value_name = "DIR")]
    scripts: Option<PathBuf>,
    /// Write the report (README.md summary, a page and two plots per subject, conformance.json)
    /// into DIR, whole or not at all.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Write the list of conformances as JSON to FILE (whole or not at all).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Subjects checked at once, each on its own thread (1 to 64; default 1). The verdicts do not
    /// depend on it (every key set is seeded); the speed clause's figures do, since subjects
    /// then share the machine. node/bloom-filters, the slowest by far, starts first; the report
    /// keeps the subjects' order.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
}

/// A clap parser of a count from `min` to the suite's limit, 2^40 ([`suite::MAX_COUNT`]; the
/// shared count parser's is 2^53), naming `flag` and that range.
fn count(
    flag: &'static str,
    min: u64,
) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |s| match bloomlab_cli::parse_count_named(flag, min, s) {
        Ok(v) if v <= suite::MAX_COUNT => Ok(v),
        _ => Err(format!(
            "{flag} = {s:?} is invalid: it must be a whole number from {min} to 2^40 \
             (scientific notation allowed, e.g. 1e6)"
        )),
    }
}

/// A clap parser of a float strictly between 0 and `hi`, naming `flag` and the range.
fn open_unit(
    flag: &'static str,
    hi: f64,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s| {
        let v = bloomlab_cli::parse_f64(flag, s)?;
        if v > 0.0 && v < hi {
            Ok(v)
        } else {
            Err(format!(
                "{flag} = {s:?} is out of range: it must be in the open interval (0, {hi})"
            ))
        }
    }
}

/// A clap parser of a time limit in seconds, in (0, [`MAX_TIMEOUT_SECS`]].
fn seconds(
    flag: &'static str,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s| {
        let v = bloomlab_cli::parse_f64(flag, s)?;
        if v > 0.0 && v <= MAX_TIMEOUT_SECS {
            Ok(v)
        } else {
            Err(format!(
                "{flag} = {s:?} is out of range: it must be more than 0 and at most \
                 {MAX_TIMEOUT_SECS} seconds"
            ))
        }
    }
}

/// A seed: a decimal or `0x` hexadecimal u64.
fn parse_seed(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => t.parse::<u64>(),
    };
    parsed.map_err(|_| {
        format!(
            "--seed = {s:?} is invalid: it must be a whole number from 0 to 2^64 - 1 (or 0x-hex)"
        )
    })
}

/// Runs `bloomlab conform`.
pub fn run(args: ConformArgs) -> Result<ExitCode, Failure> {
    match args.action {
        Some(ConformAction::Serve { subject }) => serve(&subject),
        None => check(args.run),
    }
}

fn bad(m: impl Into<String>) -> Failure {
    Failure::BadInput(m.into())
}

/// `conform serve --subject NAME`: the in-process subject on stdin/stdout.
fn serve(name: &str) -> Result<ExitCode, Failure> {
    let candidate = bloomlab_conform_rust::by_name(name).map_err(bad)?;
    bloomlab_conform::process::serve(&*candidate)
        .map_err(|e| bad(format!("serving {name}: {e}")))?;
    Ok(ExitCode::SUCCESS)
}

/// Where a subject comes from.
enum Source {
    /// An in-process Rust candidate.
    InProcess(Arc<dyn Candidate>),
    /// A known external adapter.
    External(external::External),
    /// A user's command.
    Adapter(Vec<OsString>),
}

impl Source {
    /// Whether it starts before the others when several run at once
    /// ([`external::External::start_first`]).
    fn start_first(&self) -> bool {
        matches!(self, Source::External(e) if e.start_first)
    }
}

/// A subject connected and ready to run.
struct Ready {
    candidate: Arc<dyn Candidate>,
    /// The in-process subject served from a child, for the bad-input clause.
    bad_input: Option<Arc<dyn Candidate>>,
    /// What selects it on the command line (`--subject NAME` or `--adapter -- CMD`).
    select: Select,
    in_process: bool,
    /// Started before the others when several run at once ([`external::External::start_first`]).
    start_first: bool,
}

enum Select {
    Subject(String),
    Adapter(Vec<OsString>),
}

fn scripts_dir(args: &RunArgs) -> PathBuf {
    args.scripts.clone().unwrap_or_else(|| {
        let root = Path::new(BUILT_FROM);
        // `crates/cli/../..` shown as the repository's own path where it still exists.
        root.canonicalize()
            .unwrap_or_else(|_| root.to_path_buf())
            .join(external::SCRIPTS_DIR)
    })
}

fn list(args: &RunArgs) -> ExitCode {
    println!("in process:");
    for c in bloomlab_conform_rust::catalogue() {
        println!("  {}", c.about());
    }
    println!(
        "external (bash {} NAME):",
        scripts_dir(args).join(external::LAUNCHER).display()
    );
    for e in external::ALL {
        println!("  {:<22} launcher name {}", e.name, e.launcher);
    }
    println!(
        "your own: --adapter -- CMD ARGS... (the protocol: crates/conform/src/process/mod.rs)"
    );
    ExitCode::SUCCESS
}

/// The subjects the flags name, in order: --all's, then each --subject, then --adapter's.
fn sources(args: &RunArgs) -> Result<Vec<Source>, Failure> {
    let mut out = Vec::new();
    if args.all {
        out.extend(
            bloomlab_conform_rust::catalogue()
                .into_iter()
                .map(Source::InProcess),
        );
        out.extend(external::ALL.into_iter().map(Source::External));
    }
    for name in &args.subject {
        if let Some(e) = external::by_name(name) {
            out.push(Source::External(e));
            continue;
        }
        let c = bloomlab_conform_rust::by_name(name).map_err(|e| {
            let ext: Vec<&str> = external::ALL.iter().map(|x| x.name).collect();
            bad(format!(
                "--subject: {e}; external: {} (see --list)",
                ext.join(", ")
            ))
        })?;
        out.push(Source::InProcess(c));
    }
    if args.adapter {
        out.push(Source::Adapter(args.command.clone()));
    }
    if out.is_empty() {
        return Err(bad(
            "say what to check: --subject NAME (repeatable), --all, or --adapter -- CMD ARGS...; \
             --list names the subjects",
        ));
    }
    Ok(out)
}

/// Starts each subject's handshake (and, for in-process subjects when `isolate`, the child that
/// serves the bad-input clause): an adapter that cannot start is named, with its stderr tail.
fn connect(
    args: &RunArgs,
    sources: Vec<Source>,
    timeout: Duration,
    isolate: bool,
) -> Result<Vec<Ready>, Failure> {
    let scripts = scripts_dir(args);
    let exe = std::env::current_exe().map_err(|e| {
        bad(format!(
            "cannot find this program to serve the bad-input clause: {e}"
        ))
    })?;
    let start = |what: String, command: Command| {
        ProcessCandidate::connect(command)
            .map(|c| Arc::new(c) as Arc<dyn Candidate>)
            .map_err(|e| bad(format!("{what} could not start: {e}")))
    };
    sources
        .into_iter()
        .map(|s| (s.start_first(), s))
        .map(|(start_first, s)| match s {
            Source::InProcess(c) => {
                let name = c.about().name;
                let argv = [exe.as_os_str(), "conform".as_ref(), "serve".as_ref()]
                    .into_iter()
                    .map(OsString::from)
                    .chain(["--subject".into(), name.clone().into()])
                    .collect();
                let served = if isolate {
                    Some(start(
                        format!("the bad-input child of {name} (bloomlab conform serve)"),
                        Command { argv, timeout },
                    )?)
                } else {
                    None
                };
                Ok(Ready {
                    candidate: c,
                    bad_input: served,
                    select: Select::Subject(name),
                    in_process: true,
                    start_first,
                })
            }
            Source::External(e) => {
                let launcher = scripts.join(external::LAUNCHER);
                if !launcher.is_file() {
                    return Err(bad(format!(
                        "adapter {}: its launcher {} does not exist; give --scripts DIR (the \
                         directory holding `adapter`)",
                        e.name,
                        launcher.display()
                    )));
                }
                let c = start(format!("adapter {}", e.name), e.command(&scripts, timeout))?;
                let declared = c.about().name;
                if declared != e.name {
                    eprintln!(
                        "bloomlab conform: warning: adapter {} declares the name {declared:?}",
                        e.name
                    );
                }
                Ok(Ready {
                    candidate: c,
                    bad_input: None,
                    select: Select::Subject(e.name.to_owned()),
                    in_process: false,
                    start_first,
                })
            }
            Source::Adapter(argv) => {
                let shown = shell_words(&argv);
                let c = start(
                    format!("adapter `{shown}`"),
                    Command {
                        argv: argv.clone(),
                        timeout,
                    },
                )?;
                Ok(Ready {
                    candidate: c,
                    bad_input: None,
                    select: Select::Adapter(argv),
                    in_process: false,
                    start_first,
                })
            }
        })
        .collect()
}

/// `argv` as a shell would read it back: words quoted where they hold anything but safe
/// characters.
fn shell_words(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| {
            let s = a.to_string_lossy();
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                s.into_owned()
            } else {
                format!("'{}'", s.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The plan the flags ask for, before per-subject changes (scale, reproduce).
fn base_plan(args: &RunArgs) -> Plan {
    let mut plan = if args.quick {
        Plan::quick()
    } else {
        Plan::full()
    };
    if let Some(n) = args.n {
        plan.n = n;
    }
    if let Some(p) = args.p {
        plan.p = p;
    }
    if let Some(q) = args.queries {
        plan.queries = q;
    }
    if let Some(s) = args.seed {
        plan.seed = s;
    }
    if let Some(a) = args.alpha {
        plan.alpha = a;
    }
    if let Some(t) = args.build_timeout {
        plan.build_timeout = Duration::from_secs_f64(t);
    }
    if args.no_hunt {
        plan.hunt = None;
    }
    if let Some(t) = args.deadline {
        plan.deadline = Some(Duration::from_secs_f64(t));
    }
    if !args.clause.is_empty() {
        plan.clauses = Clause::ALL
            .into_iter()
            .filter(|c| args.clause.contains(c))
            .collect();
    }
    plan
}

/// The plan for one subject: the scale clause on or off (asked for explicitly by --scale or
/// --clause scale; off for external subjects otherwise; off for all with --no-scale), and the
/// command line that reproduces it.
fn subject_plan(base: &Plan, args: &RunArgs, ready: &Ready) -> Plan {
    let mut plan = base.clone();
    let asked = args.scale || args.clause.contains(&Clause::Scale);
    let scale =
        !args.no_scale && (asked || (ready.in_process && plan.clauses.contains(&Clause::Scale)));
    if scale {
        if !plan.clauses.contains(&Clause::Scale) {
            plan.clauses.push(Clause::Scale);
            plan.clauses.sort();
        }
        plan.scale_bits.get_or_insert(1 << 32);
    } else {
        plan.clauses.retain(|&c| c != Clause::Scale);
        plan.scale_bits = None;
    }
    plan.reproduce = reproduce(args, ready);
    plan
}

/// `bloomlab conform --subject NAME` with the plan flags given and the seed; an adapter's
/// `--adapter -- CMD` is added after the clause by [`fix_adapter_reproduce`].
fn reproduce(args: &RunArgs, ready: &Ready) -> String {
    let mut s = String::from("bloomlab conform");
    if let Select::Subject(name) = &ready.select {
        s += &format!(" --subject {}", shell_words(&[name.into()]));
    }
    if args.quick {
        s += " --quick";
    }
    let flags: [(&str, Option<String>); 7] = [
        ("--n", args.n.map(|v| v.to_string())),
        ("--p", args.p.map(|v| v.to_string())),
        ("--queries", args.queries.map(|v| v.to_string())),
        ("--alpha", args.alpha.map(|v| v.to_string())),
        ("--timeout", args.timeout.map(|v| v.to_string())),
        ("--build-timeout", args.build_timeout.map(|v| v.to_string())),
        ("--deadline", args.deadline.map(|v| v.to_string())),
    ];
    for (flag, v) in flags {
        if let Some(v) = v {
            s += &format!(" {flag} {v}");
        }
    }
    if args.scale {
        s += " --scale";
    }
    if args.no_hunt {
        s += " --no-hunt";
    }
    if let Some(dir) = &args.scripts {
        s += &format!(" --scripts {}", shell_words(&[dir.into()]));
    }
    s += &format!(" --seed {}", args.seed.unwrap_or(base_plan(args).seed));
    s
}

/// An adapter's command goes last (after `--`), behind the `--clause NAME` the suite appended.
fn fix_adapter_reproduce(c: &mut Conformance, ready: &Ready) {
    if let Select::Adapter(argv) = &ready.select {
        let tail = format!(" --adapter -- {}", shell_words(argv));
        for v in &mut c.verdicts {
            v.reproduce.push_str(&tail);
        }
    }
}

/// Progress on stderr: a spinner when stderr is a terminal, a plain line per clause otherwise.
struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    fn new() -> Self {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar: Some(bar) }
    }

    fn start(&self, subject: &str, i: usize, of: usize, clause: Clause) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{subject}: clause {i}/{of} {clause}"));
        }
    }

    fn done(&self, subject: &str, i: usize, of: usize, line: String) {
        let line = format!("bloomlab conform: {subject} [{i}/{of}] {line}");
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The order subjects start in: those marked `start_first`, then the rest, each part in subject
/// order (a stable sort). `first[i]` is subject i's mark.
fn start_order(first: &[bool]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..first.len()).collect();
    order.sort_by_key(|&i| !first[i]);
    order
}

/// Runs every subject, `jobs` at a time (threads taking the next subject in [`start_order`]),
/// each printed as it finishes; the results in subject order.
fn run_all(ready: &[Ready], plans: &[Plan], progress: &Progress, jobs: usize) -> Vec<Conformance> {
    let first: Vec<bool> = ready.iter().map(|r| r.start_first).collect();
    let order = start_order(&first);
    let next = AtomicUsize::new(0);
    let done: Vec<Mutex<Option<Conformance>>> = ready.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..jobs.min(ready.len()) {
            s.spawn(|| {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let (Some(r), Some(plan)) = (ready.get(i), plans.get(i)) else {
                        break;
                    };
                    let c = run_subject(r, plan, progress);
                    println!("{c}");
                    *done[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(c);
                }
            });
        }
    });
    done.into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

/// Runs `plan` on one subject in one run (clauses 2-4 share its random-key measurement, and its
/// deadline counts from the start), with a progress line as each clause starts and ends.
fn run_subject(ready: &Ready, plan: &Plan, progress: &Progress) -> Conformance {
    let name = ready.candidate.about().name;
    let of = plan.clauses.len();
    let (mut i, mut t) = (0, Instant::now());
    let mut c = suite::run_observed(
        Arc::clone(&ready.candidate),
        plan,
        ready.bad_input.clone(),
        &mut |step| match step {
            suite::Step::Starting(clause) => {
                (i, t) = (i + 1, Instant::now());
                progress.start(&name, i, of, clause);
            }
            suite::Step::Finished(v) => {
                let line = format!(
                    "{}: {} {} ({:.1} s)",
                    v.clause,
                    v.outcome,
                    v.figure,
                    t.elapsed().as_secs_f64()
                );
                progress.done(&name, i, of, line);
            }
        },
    );
    fix_adapter_reproduce(&mut c, ready);
    c
}

/// The machine, as the report's head shows it: `uname -m`, cores, physical memory.
fn machine() -> Machine {
    let arch = std::process::Command::new("uname")
        .arg("-m")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let memory_bytes = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    Machine {
        arch,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes,
    }
}

/// The report directory of the run, once locked: what an interrupt leaves as it was.
static REPORT: OnceLock<Interrupt> = OnceLock::new();

const PROGRAM: &str = "bloomlab conform";

/// Makes Ctrl-C (SIGINT), SIGTERM and SIGHUP end the run with exit status 130: the adapters and
/// `conform serve` children are killed and reaped first (they run in their own process groups,
/// which a terminal's Ctrl-C does not reach: left alone they would keep running with parent 1),
/// then the report directory, if locked, is left as it was ([`bloomlab_cli::abandon_on_interrupt`]).
fn exit_130_on_interrupt() {
    let set = ctrlc::set_handler(|| {
        INTERRUPTED.store(true, Ordering::SeqCst);
        bloomlab_conform::process::stop_all();
        match REPORT.get() {
            Some(report) => bloomlab_cli::abandon_on_interrupt(PROGRAM, report),
            None => eprintln!("\n{PROGRAM}: interrupted; nothing was written"),
        }
        std::process::exit(130);
    });
    if let Err(e) = set {
        eprintln!("{PROGRAM}: warning: Ctrl-C will not stop the adapters cleanly: {e}");
        return;
    }
    // ctrlc handles SIGINT only (its `termination` feature would change the sweep's and scale's
    // SIGTERM too, in every workspace build), so SIGTERM and SIGHUP are turned into SIGINT here.
    // A signal the parent set to be ignored (`nohup`) stays ignored.
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let forward = forward_to_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: the handler only calls kill(2) and getpid(2), both async-signal-safe;
        // signal(2) replaces a disposition and touches no memory of ours.
        unsafe {
            if libc::signal(signal, forward) == libc::SIG_IGN {
                libc::signal(signal, libc::SIG_IGN);
            }
        }
    }
}

/// Set first thing by the interrupt handler: the run's own ending must then wait for the handler's
/// exit 130 (adapters the handler killed make the measuring threads finish early, and the main
/// thread would otherwise write its outputs and exit 1 first).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Parks the calling thread for good once an interrupt came: the handler ends the process.
fn wait_for_the_interrupt() {
    if INTERRUPTED.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// A signal handler raising SIGINT, which ctrlc's handler then takes.
extern "C" fn forward_to_sigint(_: libc::c_int) {
    // SAFETY: kill(2) and getpid(2) are async-signal-safe and touch no memory.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGINT);
    }
}

/// Kills the adapters still running when `check` returns, whatever the way out (an error, a
/// panic, or a bad-input case's watchdog thread left waiting on an adapter it called hung).
struct StopAdapters;

impl Drop for StopAdapters {
    fn drop(&mut self) {
        bloomlab_conform::process::stop_all();
        wait_for_the_interrupt();
    }
}

/// `bloomlab conform` without a subcommand.
fn check(args: RunArgs) -> Result<ExitCode, Failure> {
    if args.list {
        return Ok(list(&args));
    }
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let base = base_plan(&args);
    // The suite's own limits (n and queries up to 2^40), checked before anything starts.
    base.validate()
        .map_err(|e| bad(format!("{e} (flags --n, --p, --queries, --alpha)")))?;
    if args.no_scale && !args.clause.is_empty() && args.clause.iter().all(|&c| c == Clause::Scale) {
        return Err(bad(
            "--no-scale with only --clause scale leaves no clause to run: drop one of them",
        ));
    }
    let timeout = Duration::from_secs_f64(args.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS));
    // Before the first adapter starts, so that no exit from here on leaves one running.
    exit_130_on_interrupt();
    let _stop = StopAdapters;
    // The bad-input clause's child is started only when that clause runs.
    let isolate = base.clauses.contains(&Clause::BadInput);
    let ready = connect(&args, sources(&args)?, timeout, isolate)?;
    // Locked only once every subject started: a run that cannot start leaves no directory.
    let out = match &args.out {
        Some(dir) => Some(OutputDir::lock(dir).map_err(|e| bad(e.to_string()))?),
        None => None,
    };
    if let Some(out) = &out {
        // Set once: `check` runs once per process.
        let _ = REPORT.set(out.interrupt_handle());
    }
    let plans: Vec<Plan> = ready
        .iter()
        .map(|r| subject_plan(&base, &args, r))
        .collect();
    let progress = Progress::new();
    let results = run_all(&ready, &plans, &progress, usize::from(args.jobs));
    // Results cut short by an interrupt are never written.
    wait_for_the_interrupt();
    progress.finish();
    if let Some(path) = &args.json {
        let json = serde_json::to_vec_pretty(&results)
            .map_err(|e| bad(format!("serializing the conformances: {e}")))?;
        write_atomic(path, &json).map_err(|e| bad(e.to_string()))?;
    }
    if let Some(out) = &out {
        let report = ConformanceReport {
            run: RunInfo {
                plan: base,
                date_unix: started,
                machine: machine(),
                revision: bloomlab_cli::git_revision(),
                command: std::env::args().collect::<Vec<_>>().join(" "),
            },
            results: results.clone(),
        };
        let files = bloomlab_report::conformance::write(out, &report)
            .map_err(|e| bad(format!("writing the report: {e}")))?;
        eprintln!(
            "bloomlab conform: report written to {} ({} files)",
            out.dir().display(),
            files.len()
        );
    }
    let broken: Vec<String> = results
        .iter()
        .filter(|c| !c.broken().is_empty())
        .map(|c| c.subject.name.clone())
        .collect();
    if broken.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(Failure::CheckFailed(format!(
            "a clause is broken for {}",
            broken.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_parsers_name_the_flag_value_and_range() {
        let err = open_unit("--p", 1.0)("1.5").unwrap_err();
        assert!(
            err.contains("--p = \"1.5\"") && err.contains("(0, 1)"),
            "{err}"
        );
        assert!(open_unit("--p", 1.0)("NaN").is_err());
        assert!(open_unit("--alpha", 0.5)("0.5").is_err());
        assert_eq!(open_unit("--alpha", 0.5)("1e-4"), Ok(1e-4));
        let err = seconds("--timeout")("0").unwrap_err();
        assert!(
            err.contains("--timeout = \"0\"") && err.contains("86400"),
            "{err}"
        );
        assert!(seconds("--timeout")("inf").is_err());
        let err = seconds("--deadline")("90000").unwrap_err();
        assert!(
            err.contains("--deadline = \"90000\"") && err.contains("at most 86400 seconds"),
            "{err}"
        );
        assert_eq!(seconds("--deadline")("2.5"), Ok(2.5));
        assert_eq!(parse_seed("0x0b10_0c0f"), Ok(0x0b10_0c0f));
        assert_eq!(parse_seed("42"), Ok(42));
        assert!(parse_seed("-1").unwrap_err().contains("--seed = \"-1\""));
    }

    #[test]
    fn shell_words_quote_what_a_shell_would_split() {
        let argv: Vec<OsString> = ["python3", "my adapter.py", "it's", ""]
            .map(OsString::from)
            .to_vec();
        assert_eq!(shell_words(&argv), r"python3 'my adapter.py' 'it'\''s' ''");
    }

    #[test]
    fn marked_subjects_start_first_and_the_rest_keep_their_order() {
        assert_eq!(start_order(&[false, false, true, false]), [2, 0, 1, 3]);
        assert_eq!(start_order(&[true, false, true]), [0, 2, 1]);
        assert_eq!(start_order(&[false; 3]), [0, 1, 2]);
        assert!(start_order(&[]).is_empty());
    }

    #[test]
    fn with_all_the_node_subject_starts_first_and_only_it_moves() {
        #[derive(clap::Parser)]
        struct Line {
            #[command(flatten)]
            run: RunArgs,
        }
        let line = <Line as clap::Parser>::try_parse_from(["conform", "--all"]).unwrap();
        let all = sources(&line.run).unwrap();
        let name = |s: &Source| match s {
            Source::InProcess(c) => c.about().name,
            Source::External(e) => e.name.to_owned(),
            Source::Adapter(argv) => shell_words(argv),
        };
        let first: Vec<bool> = all.iter().map(Source::start_first).collect();
        let order = start_order(&first);
        assert_eq!(name(&all[order[0]]), "node/bloom-filters");
        let rest: Vec<usize> = order[1..].to_vec();
        let mut sorted = rest.clone();
        sorted.sort_unstable();
        assert_eq!(rest, sorted, "the others keep the subjects' order");
        assert_eq!(order.len(), all.len());
    }
}
