//! Shared glue for the bloomlab binaries: flag parsing helpers, a counting allocator, the build
//! revision and profile, progress for long runs ([`progress`]), and the sketch sweep ([`sketch_sweep`]), so that the binaries only parse
//! flags and call a library. The `bloomlab` tool and `scenario` live in `bloomlab-tool`
//! (crates/tool), which uses this glue: they need a database, a Parquet reader and the
//! conformance subjects, which README's main command (`sweep`) should not wait to compile.

#![warn(missing_docs)]

pub mod progress;
pub mod sketch_sweep;

pub use bloomlab_harness::memory::CountingAlloc;

use bloomlab_harness::bloom::trial::Lookup;
use bloomlab_harness::{KeySetKind, Selection, Subject};
use clap::ValueEnum;

pub use bloomlab_harness::bloom::preflight::MAX_COUNT;

/// Parses a count that may be written in scientific notation (`1e6`, `2.5e5`, `100000`): the one
/// count parser of every binary. Counts run from 1 to 2^53 ([`MAX_COUNT`]: every integer up to it
/// is an exact `f64`, so `1e6` and `1000000` are the same count).
///
/// Errors name the value and say it must be a whole number from 1 to 2^53.
pub fn parse_count(s: &str) -> Result<u64, String> {
    parse_count_named("n", 1, s)
}

/// [`parse_count`] with the smallest allowed count `min` (0 or 1) and the name `what` shown in
/// errors (e.g. `--max-queries`).
pub fn parse_count_named(what: &str, min: u64, s: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "{what} = {s:?} is invalid: it must be a whole number from {min} to 2^53 \
             (scientific notation allowed, e.g. 1e6)"
        )
    };
    let t = s.trim();
    let v = match t.parse::<u64>() {
        Ok(v) => v,
        Err(_) => {
            let f: f64 = t.parse().map_err(|_| bad())?;
            if !(f.is_finite() && f >= 0.0 && f <= MAX_COUNT as f64 && f.fract() == 0.0) {
                return Err(bad());
            }
            f as u64
        }
    };
    if (min..=MAX_COUNT).contains(&v) {
        Ok(v)
    } else {
        Err(bad())
    }
}

/// Parses a comma-separated list with `item`, naming the flag and the bad item on error.
pub fn parse_list<T>(
    flag: &str,
    s: &str,
    item: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let out: Vec<T> = s
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| item(x).map_err(|e| format!("--{flag}: {e}")))
        .collect::<Result<_, _>>()?;
    if out.is_empty() {
        return Err(format!("--{flag} {s:?}: give at least one value"));
    }
    Ok(out)
}

/// Parses a float (scientific notation allowed), naming `what` and the value on error.
pub fn parse_f64(what: &str, s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .map_err(|_| format!("{what} = {s:?} is not a number"))
}

/// A clap value parser for a count flag: [`parse_count_named`] with the flag's name `what` (as
/// its errors show it, e.g. `--max-queries`) and the smallest allowed count `min`.
pub fn count_parser(
    what: &'static str,
    min: u64,
) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |s| parse_count_named(what, min, s)
}

/// A clap value parser for a float flag: [`parse_f64`] naming `what`. Only the syntax is checked
/// here; the range (e.g. p in (0, 1)) is the library's to check, with the value in its message.
pub fn float_parser(
    what: &'static str,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s| parse_f64(what, s)
}

/// Parses one `--filters` item: `all`, or a subject's name, resolved by the catalogue
/// ([`Subject`]'s `FromStr`, the one resolver): an unknown name is an error listing the known
/// ones; an empty item is refused.
pub fn parse_subject(s: &str) -> Result<Selection, String> {
    match s.trim() {
        "" => Err("an empty filter name: give at least one name (see --list), or all".into()),
        "all" => Ok(Selection::All),
        name => name
            .parse::<Subject>()
            .map(|s| Selection::Only(vec![s]))
            .map_err(|e| e.to_string()),
    }
}

/// Parses a registered variant's name (`--filter` of the scenarios), resolved by the registry's
/// table ([`VariantId`](bloomlab_filters::VariantId)): an unknown name is an error listing the registered ones.
pub fn parse_variant(s: &str) -> Result<bloomlab_filters::VariantId, String> {
    bloomlab_filters::VariantId::parse(s.trim()).map_err(|e| e.to_string())
}

/// The selection `--filters` items make together: all, if any item is `all`; otherwise every
/// named subject in order.
pub fn joined(items: Vec<Selection>) -> Selection {
    let mut out = Vec::new();
    for item in items {
        match item {
            Selection::All => return Selection::All,
            Selection::Only(v) => out.extend(v),
        }
    }
    Selection::Only(out)
}

/// The built-in key sets `--keys` accepts beside `file:PATH` (names as the harness's
/// [`KeySetKind`] prints them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BuiltinKeys {
    /// u64 keys, a seeded bijective mix of the index.
    RandomU64,
    /// "article-" + i: the sequential strings of the textbook workload.
    Article,
    /// URL-like strings: scheme, host, path segments and a query carrying i.
    Url,
    /// 64-character lowercase hex strings, like SHA-256 content hashes.
    Hex,
}

impl From<BuiltinKeys> for KeySetKind {
    fn from(k: BuiltinKeys) -> Self {
        match k {
            BuiltinKeys::RandomU64 => KeySetKind::RandomU64,
            BuiltinKeys::Article => KeySetKind::Article,
            BuiltinKeys::Url => KeySetKind::Url,
            BuiltinKeys::Hex => KeySetKind::Hex,
        }
    }
}

/// The spelling of a user's key file in `--keys`.
const FILE_KEYS: &str = "file:PATH";

/// Parses one `--keys` item: a [`BuiltinKeys`] name or `file:PATH` (PATH not empty). Errors name
/// the value and every allowed form.
pub fn parse_key_set(s: &str) -> Result<KeySetKind, String> {
    let t = s.trim();
    if let Some(path) = t.strip_prefix("file:")
        && !path.is_empty()
    {
        return Ok(KeySetKind::File(path.into()));
    }
    BuiltinKeys::from_str(t, false)
        .map(KeySetKind::from)
        .map_err(|_| {
            let names: Vec<String> = BuiltinKeys::value_variants()
                .iter()
                .filter_map(|v| v.to_possible_value())
                .map(|v| v.get_name().to_owned())
                .chain([FILE_KEYS.to_owned()])
                .collect();
            format!("unknown key set {s:?}; allowed: {}", names.join(", "))
        })
}

/// The clap value parser of `--keys` items: [`parse_key_set`], with the built-in names and
/// `file:PATH` listed as possible values in `--help`.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeySetParser;

impl clap::builder::TypedValueParser for KeySetParser {
    type Value = KeySetKind;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<KeySetKind, clap::Error> {
        // clap's own parser for a function: its error names the flag and the value.
        clap::builder::TypedValueParser::parse_ref(&parse_key_set, cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let file = clap::builder::PossibleValue::new(FILE_KEYS).help(format!(
            "one UTF-8 key per line of the file at PATH, each at most {} bytes; the first \
                 members are inserted, the rest are queried; blank lines skipped, duplicates \
                 removed and counted",
            bloomlab_harness::keys::MAX_KEY_BYTES
        ));
        Some(Box::new(
            BuiltinKeys::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value)
                .chain([file]),
        ))
    }
}

/// `--lookup`: the lookup that counts false positives (names as the harness's [`Lookup`] spells
/// them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LookupArg {
    /// Stop at the first clear bit (the default).
    #[default]
    EarlyExit,
    /// Read all k bits, as the timing columns do.
    BranchFree,
}

impl From<LookupArg> for Lookup {
    fn from(l: LookupArg) -> Self {
        match l {
            LookupArg::EarlyExit => Lookup::EarlyExit,
            LookupArg::BranchFree => Lookup::BranchFree,
        }
    }
}

/// The sketch families `sweep sketch` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SketchKind {
    /// HyperLogLog accuracy against 1.04/sqrt(m).
    Hll,
    /// Count-Min overcounts against epsilon N.
    Cms,
}

impl SketchKind {
    /// The name the command line and the sketch plan use (`hll`, `cms`).
    pub fn name(self) -> &'static str {
        match self {
            SketchKind::Hll => "hll",
            SketchKind::Cms => "cms",
        }
    }
}

/// Makes Ctrl-C (SIGINT) end the process with exit status 130 without leaving a partial report in
/// `out`: the files staged and not committed are removed (a commit in progress is finished
/// first), a line on stderr says what this run wrote, and the process exits at once. For runs
/// that cannot stop cleanly between steps (the sweep); `scale` polls a flag instead.
pub fn exit_130_on_interrupt(program: &'static str, out: &bloomlab_report::output::OutputDir) {
    let handle = out.interrupt_handle();
    let set = ctrlc::set_handler(move || {
        abandon_on_interrupt(program, &handle);
        std::process::exit(130);
    });
    if let Err(e) = set {
        eprintln!("{program}: warning: Ctrl-C will not stop the run cleanly: {e}");
    }
}

/// What [`exit_130_on_interrupt`]'s handler does before it exits: removes the files `handle`'s
/// run staged and not committed, and says on stderr what this run wrote. For a handler that has
/// more to stop first (`bloomlab conform`'s adapters).
pub fn abandon_on_interrupt(program: &str, handle: &bloomlab_report::output::Interrupt) {
    use bloomlab_report::output::Abandoned;
    let dir = handle.dir().display();
    match handle.abandon() {
        Abandoned::NothingWritten => eprintln!(
            "\n{program}: interrupted: this run wrote nothing; the previous report in {dir} \
             (if any) is as it was"
        ),
        Abandoned::AfterCommit => {
            eprintln!("\n{program}: interrupted after its report was written to {dir}")
        }
    }
}

/// The build's revision: `git describe --always` of the checkout the binary was built from, with
/// `-dirty` when its code (crates/, benches/, the manifests) differed from that commit at build
/// time; `unknown` when it was not built from a git checkout. Recorded by `build.rs`, so a binary
/// never runs git in whatever directory its user stands in.
pub fn git_revision() -> String {
    env!("BLOOMLAB_REVISION").to_owned()
}

/// The build this binary came from, as timings should name it: `measure` (`cargo run --profile
/// measure`: fat LTO, one codegen unit, the build committed timings come from), `release` (`cargo
/// run --release`: no LTO; timings indicative), or another profile directory's name.
/// Recorded by `build.rs` from the build's output directory.
pub fn build_profile() -> &'static str {
    env!("BLOOMLAB_BUILD_PROFILE")
}

/// [`build_profile`] with what it means for timings, for a report's or a run's last line.
pub fn build_description() -> String {
    match build_profile() {
        "measure" => "`measure` build (fat LTO, one codegen unit)".to_owned(),
        "release" => "`release` build (no LTO; timings indicative, `--profile measure` \
                      for the committed ones)"
            .to_owned(),
        other => format!("`{other}` build"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_accept_scientific_notation_and_reject_fractions() {
        assert_eq!(parse_count("1e4"), Ok(10_000));
        assert_eq!(parse_count("2.5e5"), Ok(250_000));
        assert_eq!(parse_count("123"), Ok(123));
        for bad in [
            "0",
            "1.5",
            "-3",
            "abc",
            "1e300",
            "NaN",
            "inf",
            "",
            "9007199254740993",
        ] {
            let err = parse_count(bad).unwrap_err();
            assert!(
                err.contains(&format!("{bad:?}")) && err.contains("2^53"),
                "{bad}: {err}"
            );
        }
        assert_eq!(parse_count("9007199254740992"), Ok(MAX_COUNT));
        assert_eq!(parse_count_named("--n", 0, "0"), Ok(0));
        let err = parse_count_named("--max-queries", 1, "0").unwrap_err();
        assert!(err.starts_with("--max-queries = \"0\""), "{err}");
    }

    /// The typed flags spell their values as the harness does, so a name cannot mean one thing
    /// on the command line and another in a CSV.
    #[test]
    fn typed_values_spell_the_harness_names() {
        for k in BuiltinKeys::value_variants() {
            let name = k.to_possible_value().unwrap().get_name().to_owned();
            let kind = KeySetKind::from(*k);
            assert_eq!(kind.to_string(), name);
            assert_eq!(name.parse::<KeySetKind>().unwrap(), kind);
            assert_eq!(parse_key_set(&name), Ok(kind));
        }
        for l in LookupArg::value_variants() {
            let name = l.to_possible_value().unwrap().get_name().to_owned();
            assert_eq!(Lookup::from(*l).as_str(), name);
        }
        assert_eq!(Lookup::from(LookupArg::default()), Lookup::default());
        for k in SketchKind::value_variants() {
            assert_eq!(k.to_possible_value().unwrap().get_name(), k.name());
        }
    }

    #[test]
    fn key_sets_take_a_file_and_name_every_allowed_form_on_error() {
        assert_eq!(
            parse_key_set(" file:urls.txt"),
            Ok(KeySetKind::File("urls.txt".into()))
        );
        for bad in ["file:", "uuid", ""] {
            let err = parse_key_set(bad).unwrap_err();
            assert!(
                err.contains(&format!("{bad:?}"))
                    && err.contains("random-u64, article, url, hex, file:PATH"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn subjects_are_any_non_empty_name() {
        let sbbf: Subject = "sbbf/xxh3".parse().unwrap();
        assert_eq!(
            parse_subject(" sbbf/xxh3 "),
            Ok(Selection::Only(vec![sbbf]))
        );
        assert_eq!(parse_subject("all"), Ok(Selection::All));
        let err = parse_subject("  ").unwrap_err();
        assert!(err.contains("at least one name"), "{err}");
        let err = parse_subject("sbbf/xxh4").unwrap_err();
        assert!(
            err.contains("sbbf/xxh4") && err.contains("sbbf/xxh3"),
            "{err}"
        );
        let peer = bloomlab_harness::subject::GROWABLE_PEER;
        assert_eq!(
            joined(vec![
                Selection::Only(vec![sbbf]),
                Selection::Only(vec![peer])
            ]),
            Selection::Only(vec![sbbf, peer])
        );
        assert_eq!(
            joined(vec![Selection::Only(vec![sbbf]), Selection::All]),
            Selection::All
        );
    }

    #[test]
    fn value_parsers_name_their_flag() {
        let err = count_parser("--max-growth", 1)("0").unwrap_err();
        assert!(err.starts_with("--max-growth = \"0\""), "{err}");
        assert_eq!(count_parser("--max-growth", 1)("1e3"), Ok(1000));
        let err = float_parser("overfill")("x").unwrap_err();
        assert_eq!(err, "overfill = \"x\" is not a number");
    }

    #[test]
    fn lists_name_the_flag_and_item() {
        assert_eq!(
            parse_list("n", "1e4, 1e5", parse_count),
            Ok(vec![10_000, 100_000])
        );
        let err = parse_list("n", "1e4,x", parse_count).unwrap_err();
        assert!(err.contains("--n") && err.contains("\"x\""), "{err}");
    }
}
