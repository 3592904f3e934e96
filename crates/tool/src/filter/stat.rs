//! `stat` and `monitor`: how full a live filter is, and whether that needs attention.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bloomlab_filters::BitPositions;
use bloomlab_filters::Geometry;
use bloomlab_filters::fill::{FillCounter, FillStat};
use bloomlab_filters::guava::{BytesFunnel, GuavaBloom, GuavaStrategy};
use bloomlab_redis::{Connection, RedisBloom, RedisFilterError, RedisVisitor, admin, dump};
use clap::Args;

use super::{Failure, Place, Target, bad, connect};

/// Flags of `filter stat`.
#[derive(Debug, Args)]
pub struct StatArgs {
    #[command(flatten)]
    target: Target,
    /// Confidence level of the interval around the estimated key count, in (0, 1).
    #[arg(long, default_value_t = 0.95)]
    confidence: f64,
    /// The fill (share of bits set) whose distance in keys is reported, in (0, 1). 0.5 is where an
    /// optimally sized filter reaches its design rate.
    #[arg(long, default_value_t = 0.5)]
    fill: f64,
}

/// Flags of `filter monitor`.
#[derive(Debug, Args)]
pub struct MonitorArgs {
    #[command(flatten)]
    target: Target,
    /// Warning when the fill (share of bits set) reaches this, in (0, 1]. An optimally sized
    /// filter is half full at its design load.
    #[arg(long, default_value_t = 0.5)]
    warn_fill: f64,
    /// Critical when the fill reaches this, in (0, 1]. Default: none.
    #[arg(long)]
    crit_fill: Option<f64>,
    /// Warning when the false-positive rate the bits imply reaches this, in (0, 1]. Default: none.
    #[arg(long)]
    warn_rate: Option<f64>,
    /// Critical when the implied false-positive rate reaches this, in (0, 1]. Default: twice the
    /// rate the filter was designed for (for a file without one, none).
    #[arg(long)]
    crit_rate: Option<f64>,
    /// Also write the figures in Prometheus's text format to this file (written whole: a
    /// temporary file renamed over it, for node_exporter's textfile collector), or to standard
    /// output with `-`.
    #[arg(long, value_name = "PATH")]
    prometheus: Option<PathBuf>,
}

/// A monitoring status, with the exit codes monitoring agents read (Nagios plugin convention).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Below every threshold: exit 0.
    Ok = 0,
    /// A warning threshold reached: exit 1.
    Warning = 1,
    /// A critical threshold reached: exit 2.
    Critical = 2,
    /// The filter could not be read, or the flags are invalid: exit 3.
    Unknown = 3,
}

impl Status {
    /// `OK`, `WARNING`, `CRITICAL` or `UNKNOWN`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::Warning => "WARNING",
            Self::Critical => "CRITICAL",
            Self::Unknown => "UNKNOWN",
        }
    }

    /// The exit code (0, 1, 2, 3).
    pub fn exit_code(self) -> ExitCode {
        ExitCode::from(self as u8)
    }
}

/// Everything `stat` reports about one filter.
#[derive(Debug, Clone)]
pub struct Report {
    /// What was read: `"NAME" at URL` or the file's path.
    pub label: String,
    /// The filter's name (Redis) or file name, for metric labels.
    pub name: String,
    /// The variant's catalogue name.
    pub variant: String,
    /// The (n, p) the filter was sized for, when known.
    pub design: Option<(u64, f64)>,
    /// Shard count and bits per shard (Redis filters).
    pub shards: Option<(u64, u64)>,
    /// Bytes the filter takes where it lives (server memory, or the file's size).
    pub stored_bytes: Option<u64>,
    /// What the bits say.
    pub fill: FillStat,
}

/// Reads a Redis filter's bits, streamed in bounded memory, into a [`Report`].
fn redis_report(urls: &str, name: &str) -> Result<Report, Failure> {
    let mut conn = connect(urls)?;
    let followed = super::follow(&mut conn, name)?;
    let name = followed.as_str();
    let config = admin::stored_config(&mut conn, name)?;
    let server = admin::server_figures(&mut conn, name, &config)?;
    let label = format!("{name:?} at {}", conn.url());
    let variant = config.variant_name()?;
    let reading = ReadBits {
        conn,
        name,
        geometry: config.geometry(),
    };
    let fill = bloomlab_redis::visit(&variant, reading)??;
    Ok(Report {
        label,
        name: name.to_owned(),
        variant,
        design: Some((config.n, config.p)),
        shards: Some((config.shards, config.shard_bits)),
        stored_bytes: server.memory_bytes,
        fill,
    })
}

/// Opens a filter with its stored type and streams its bits, [`admin::CHUNK_BYTES`] at a time,
/// into a [`FillCounter`].
struct ReadBits<'a> {
    conn: Connection,
    name: &'a str,
    geometry: Geometry,
}

impl RedisVisitor for ReadBits<'_> {
    type Output = Result<FillStat, Failure>;
    fn visit<F: BitPositions>(self) -> Self::Output {
        let mut filter = RedisBloom::<F>::open(self.conn, self.name)?;
        let mut counter = FillCounter::new(self.geometry);
        filter.read_chunks(admin::CHUNK_BYTES, |piece: &mut [u8]| {
            counter.feed(piece).map_err(RedisFilterError::from)
        })?;
        counter.finish().map_err(|e| bad(e.to_string()))
    }
}

/// The [`Report`] of a target.
pub fn report(target: &Target) -> Result<Report, Failure> {
    match target.place()? {
        Place::Redis { urls, name } => redis_report(&urls, &name),
        Place::File(path) => file_report(&path),
    }
}

/// A filter file's [`Report`]: bloomlab's export format (by its magic; read and verified in
/// bounded memory) or Guava's `writeTo` format (held in memory, as Guava holds it). Parquet files
/// are [`super::parquet`]'s: one filter per column chunk.
fn file_report(path: &Path) -> Result<Report, Failure> {
    let shown = path.display().to_string();
    let mut head = [0u8; 16];
    let read = bloomlab_redis::dump::open_filter_file(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .map_err(|e| bad(format!("cannot read {shown}: {e}")))?;
    let stored_bytes = std::fs::metadata(path).ok().map(|m| m.len());
    let name = path
        .file_name()
        .map_or(shown.clone(), |n| n.to_string_lossy().into_owned());
    if read == head.len() && &head == dump::MAGIC {
        let (config, fill) = dump::inspect(path).map_err(|e| bad(e.to_string()))?;
        return Ok(Report {
            label: shown,
            name,
            variant: config.variant_name()?,
            design: Some((config.n, config.p)),
            shards: None,
            stored_bytes,
            fill,
        });
    }
    let file = bloomlab_redis::dump::open_filter_file(path)
        .map_err(|e| bad(format!("cannot read {shown}: {e}")))?;
    let guava = GuavaBloom::<BytesFunnel>::read_whole(std::io::BufReader::new(file)).map_err(|e| {
        bad(format!(
            "{shown} is neither a bloomlab filter file (it does not start with {:?}) nor a Guava BloomFilter file: {e}",
            String::from_utf8_lossy(dump::MAGIC).trim_end()
        ))
    })?;
    let geometry = Geometry::Flat {
        bits: guava.bit_size(),
        hashes: guava.hashes(),
    };
    let mut counter = FillCounter::new(geometry);
    let mut chunk = Vec::with_capacity(1 << 16);
    for w in 0..guava.words() {
        chunk.extend_from_slice(&guava.word(w).to_le_bytes());
        if chunk.len() == chunk.capacity() {
            counter.feed(&chunk).map_err(|e| bad(e.to_string()))?;
            chunk.clear();
        }
    }
    counter.feed(&chunk).map_err(|e| bad(e.to_string()))?;
    Ok(Report {
        label: format!("{shown} (Guava {})", guava.strategy().guava_name()),
        name,
        variant: format!("classic/murmur3/{}/flat", guava_index(guava.strategy())),
        design: None,
        shards: None,
        stored_bytes,
        fill: counter.finish().map_err(|e| bad(e.to_string()))?,
    })
}

/// The index scheme of a Guava strategy, as the catalogue names it.
fn guava_index(s: GuavaStrategy) -> &'static str {
    match s {
        GuavaStrategy::Murmur128Mitz32 => "mitz32",
        GuavaStrategy::Murmur128Mitz64 => "mitz64",
    }
}

fn check_unit(flag: &str, v: f64, closed_top: bool) -> Result<(), Failure> {
    let ok = v.is_finite() && v > 0.0 && (v < 1.0 || (closed_top && v == 1.0));
    if ok {
        Ok(())
    } else {
        let range = if closed_top { "(0, 1]" } else { "(0, 1)" };
        Err(bad(format!(
            "{flag} = {v} is invalid: it must be in {range}"
        )))
    }
}

/// `filter stat`.
pub fn stat(a: &StatArgs) -> Result<ExitCode, Failure> {
    check_unit("--confidence", a.confidence, false)?;
    check_unit("--fill", a.fill, false)?;
    let parquet = super::parquet::Request::Stat {
        confidence: a.confidence,
    };
    if let Some(outcome) = super::parquet::run(&a.target, parquet) {
        return outcome;
    }
    let r = report(&a.target)?;
    print!("{}", render(&r, a.confidence, a.fill)?);
    Ok(ExitCode::SUCCESS)
}

fn mib(bytes: f64) -> String {
    format!("{:.2} MiB", bytes / (1u64 << 20) as f64)
}

/// The text `stat` prints.
pub fn render(r: &Report, confidence: f64, fill_target: f64) -> Result<String, Failure> {
    let f = &r.fill;
    let g = f.geometry;
    let (lo, hi) = f
        .count_interval(confidence)
        .map_err(|e| bad(e.to_string()))?;
    let mut s = String::new();
    let _ = writeln!(s, "filter        {}", r.label);
    let design = r.design.map_or(String::new(), |(n, p)| {
        format!(" (sized for n = {n}, p = {p})")
    });
    let _ = writeln!(s, "variant       {}{design}", r.variant);
    let _ = writeln!(
        s,
        "size          {} bits ({}), k = {}{}",
        g.bits(),
        mib(g.bits() as f64 / 8.0),
        g.hashes(),
        match g {
            Geometry::Flat { .. } => String::new(),
            Geometry::Blocked {
                blocks, block_bits, ..
            } => format!(", {blocks} blocks of {block_bits} bits"),
            Geometry::SplitBlock {
                blocks,
                words,
                word_bits,
            } => format!(", {blocks} blocks of {words} x {word_bits}-bit words"),
        }
    );
    if let Some((shards, shard_bits)) = r.shards {
        let _ = writeln!(s, "shards        {shards} of up to {shard_bits} bits");
    }
    if let Some(b) = r.stored_bytes {
        let _ = writeln!(s, "stored        {} ({b} bytes)", mib(b as f64));
    }
    let _ = writeln!(s, "set bits      {} (fill {:.5})", f.set_bits, f.fill());
    let estimate = f.estimated_count();
    if estimate.is_finite() {
        let _ = writeln!(
            s,
            "estimated     {estimate:.0} distinct keys inserted ({}% interval {lo:.0} .. {hi:.0}: the layout's mean fill solved for n); Swamidass-Baldi -(m/k) ln(1 - X/m) = {:.0}",
            confidence * 100.0,
            f.swamidass_baldi()
        );
    } else {
        let _ = writeln!(
            s,
            "estimated     unbounded: every bit is set, so the fill says only that at least {lo:.0} distinct keys were inserted ({}% lower bound); the filter answers yes to every query",
            confidence * 100.0,
        );
    }
    let vs = r.design.map_or(String::new(), |(n, p)| {
        let at_estimate = if estimate.is_finite() {
            format!(
                ", theory at the estimate {:.4e}",
                g.fpr(estimate.round() as u64)
            )
        } else {
            String::new()
        };
        format!(
            "; design rate {p}{at_estimate}, at n = {n} {:.4e}",
            g.fpr(n)
        )
    });
    let _ = writeln!(s, "implied FPR   {:.4e} (from the bits{vs})", f.implied_fpr);
    if let Some((_, p)) = r.design {
        let _ = writeln!(
            s,
            "headroom      {:.0} more keys reach the design rate {p}; {:.0} reach fill {fill_target}",
            f.keys_to_rate(p),
            f.keys_to_fill(fill_target)
        );
    } else {
        let _ = writeln!(
            s,
            "headroom      {:.0} more keys reach fill {fill_target}",
            f.keys_to_fill(fill_target)
        );
    }
    Ok(s)
}

/// The checked thresholds of `monitor`.
struct Thresholds {
    warn_fill: f64,
    crit_fill: Option<f64>,
    warn_rate: Option<f64>,
    crit_rate: Option<f64>,
}

fn thresholds(a: &MonitorArgs) -> Result<Thresholds, Failure> {
    check_unit("--warn-fill", a.warn_fill, true)?;
    for (flag, v) in [
        ("--crit-fill", a.crit_fill),
        ("--warn-rate", a.warn_rate),
        ("--crit-rate", a.crit_rate),
    ] {
        if let Some(v) = v {
            check_unit(flag, v, true)?;
        }
    }
    Ok(Thresholds {
        warn_fill: a.warn_fill,
        crit_fill: a.crit_fill,
        warn_rate: a.warn_rate,
        crit_rate: a.crit_rate,
    })
}

/// `filter monitor`: prints one status line (and perfdata) and returns the status's exit code.
/// Anything that stops it from judging the filter is UNKNOWN (3), never OK.
pub fn monitor(a: &MonitorArgs) -> ExitCode {
    let judged = thresholds(a).and_then(|t| Ok((report(&a.target)?, t)));
    let (status, line, metrics) = match judged {
        Ok((r, t)) => judge(&r, &t),
        Err(e) => (
            Status::Unknown,
            format!("FILTER UNKNOWN - {e}"),
            unknown_metrics(&a.target),
        ),
    };
    println!("{line}");
    if let Some(path) = &a.prometheus
        && let Err(e) = write_prometheus(path, &metrics)
    {
        println!("FILTER UNKNOWN - cannot write the Prometheus file: {e}");
        return Status::Unknown.exit_code();
    }
    status.exit_code()
}

fn judge(r: &Report, t: &Thresholds) -> (Status, String, String) {
    let f = &r.fill;
    let crit_rate = t.crit_rate.or(r.design.map(|(_, p)| 2.0 * p));
    let fill = f.fill();
    let rate = f.implied_fpr;
    let mut status = Status::Ok;
    let mut why = Vec::new();
    let mut over = |value: f64, limit: Option<f64>, level: Status, what: &str| {
        if let Some(l) = limit
            && value >= l
        {
            status = status.max(level);
            why.push(format!(
                "{what} {value:.4} >= {l} ({})",
                level.label().to_lowercase()
            ));
        }
    };
    over(fill, t.crit_fill, Status::Critical, "fill");
    over(rate, crit_rate, Status::Critical, "implied FPR");
    over(fill, Some(t.warn_fill), Status::Warning, "fill");
    over(rate, t.warn_rate, Status::Warning, "implied FPR");
    let detail = if why.is_empty() {
        format!("fill {fill:.4}, implied FPR {rate:.4e}")
    } else {
        why.join(", ")
    };
    let opt = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    // Nagios perfdata values are numbers: with every bit set the fill bounds the key count from
    // below only, so the text says so and the perfdata leaves the count out (issue 64: it printed
    // `estimated_keys=inf`).
    let estimate = f.estimated_count();
    let (keys, keys_perf) = if estimate.is_finite() {
        (
            format!("about {estimate:.0} keys"),
            format!(" estimated_keys={estimate:.0};;;0"),
        )
    } else {
        (
            "every bit set, so the key count is unbounded".to_owned(),
            String::new(),
        )
    };
    let line = format!(
        "FILTER {} - {}: {detail}, {keys} | fill={fill};{};{};0;1 implied_fpr={rate};{};{};0;1{keys_perf}",
        status.label(),
        r.name,
        t.warn_fill,
        opt(t.crit_fill),
        opt(t.warn_rate),
        opt(crit_rate),
    );
    (status, line, metrics(r, status))
}

/// A Prometheus label value escaped (backslash, double quote, newline).
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn gauge(out: &mut String, metric: &str, help: &str, filter: &str, value: f64) {
    let _ = writeln!(out, "# HELP bloomlab_filter_{metric} {help}");
    let _ = writeln!(out, "# TYPE bloomlab_filter_{metric} gauge");
    // The text format spells the non-finite values +Inf, -Inf and NaN (Rust prints "inf").
    let value = match value {
        v if v == f64::INFINITY => "+Inf".to_owned(),
        v if v == f64::NEG_INFINITY => "-Inf".to_owned(),
        v if v.is_nan() => "NaN".to_owned(),
        v => v.to_string(),
    };
    let _ = writeln!(
        out,
        "bloomlab_filter_{metric}{{filter=\"{}\"}} {value}",
        label(filter)
    );
}

fn metrics(r: &Report, status: Status) -> String {
    let f = &r.fill;
    let mut out = String::new();
    let name = &r.name;
    gauge(
        &mut out,
        "up",
        "1 when the filter could be read.",
        name,
        1.0,
    );
    gauge(
        &mut out,
        "status",
        "0 ok, 1 warning, 2 critical, 3 unknown.",
        name,
        status as u8 as f64,
    );
    gauge(
        &mut out,
        "bits",
        "Bits in the filter.",
        name,
        f.geometry.bits() as f64,
    );
    gauge(
        &mut out,
        "hashes",
        "Bits set per key (k).",
        name,
        f64::from(f.geometry.hashes()),
    );
    gauge(&mut out, "set_bits", "Bits set.", name, f.set_bits as f64);
    gauge(
        &mut out,
        "fill_ratio",
        "Set bits over all bits.",
        name,
        f.fill(),
    );
    gauge(
        &mut out,
        "estimated_keys",
        "Distinct keys inserted, estimated from the fill.",
        name,
        f.estimated_count(),
    );
    gauge(
        &mut out,
        "implied_fpr",
        "False-positive rate the current bits imply.",
        name,
        f.implied_fpr,
    );
    if let Some((n, p)) = r.design {
        gauge(
            &mut out,
            "design_keys",
            "Keys the filter was sized for.",
            name,
            n as f64,
        );
        gauge(
            &mut out,
            "design_fpr",
            "False-positive rate the filter was sized for.",
            name,
            p,
        );
        gauge(
            &mut out,
            "keys_to_design_fpr",
            "More distinct keys until the design rate is reached.",
            name,
            f.keys_to_rate(p),
        );
    }
    if let Some(b) = r.stored_bytes {
        gauge(
            &mut out,
            "stored_bytes",
            "Bytes the filter takes where it is stored.",
            name,
            b as f64,
        );
    }
    out
}

fn unknown_metrics(target: &Target) -> String {
    let name = match target.place() {
        Ok(Place::Redis { name, .. }) => name,
        Ok(Place::File(p)) => p.display().to_string(),
        Err(_) => String::new(),
    };
    let mut out = String::new();
    gauge(
        &mut out,
        "up",
        "1 when the filter could be read.",
        &name,
        0.0,
    );
    gauge(
        &mut out,
        "status",
        "0 ok, 1 warning, 2 critical, 3 unknown.",
        &name,
        3.0,
    );
    out
}

/// Writes `text` to standard output (`-`) or whole to `path` (a temporary file beside it, then
/// renamed over it, with the mode of the file it replaces or `File::create`'s), so a scraper never
/// reads half a file.
fn write_prometheus(path: &Path, text: &str) -> Result<(), String> {
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| e.to_string());
    }
    bloomlab_report::output::write_atomic(path, text.as_bytes()).map_err(|e| e.to_string())
}
