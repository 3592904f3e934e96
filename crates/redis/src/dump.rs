//! Export a Redis filter to a file and import it back: bit-exact, streamed with memory bounded by
//! [`CHUNK_BYTES`] whatever the filter's size, in bloomlab's own format or Guava's `writeTo`
//! format.
//!
//! # bloomlab's filter file, version 1
//!
//! All integers little-endian.
//!
//! | bytes | content |
//! | --- | --- |
//! | 16 | the magic [`MAGIC`], `BLOOMLAB-FILTER\n` |
//! | 4 | the file format version, [`VERSION`] (= 1) |
//! | 4 | the number of config fields, 1 to [`MAX_FIELDS`] |
//! | per field | `u16` name length, the name, `u16` value length, the value (ASCII) |
//! | bits / 8 | the payload: the bit array in the in-memory layout |
//! | 8 | the trailer: XXH3-64 (seed 0) of the payload |
//!
//! The payload is the in-memory filter's bytes (little-endian 64-bit words, blocks in order),
//! i.e. the shards' bytes concatenated ([`RedisBloom::bytes`]).
//!
//! The fields are the Redis config hash's ([`Config::fields`], in that order, its own
//! `format_version` and `checksum` included), so a file's config is validated by the same rules
//! as a stored one ([`Config::parse`]: every field present and readable, consistent, checksum
//! matching). Lengths are bounded ([`MAX_FIELDS`], [`MAX_FIELD_BYTES`]) and checked before
//! anything is read into memory; the payload's length follows from `bits`, and the file's size
//! must be exactly header + payload + 8, checked before the payload is read. A reader names what
//! is wrong: a bad magic, an unknown version, the byte where the file ends inside the header, a
//! size other than the header promises (truncated at byte X of Y), a checksum mismatch.
//!
//! The shard size is recorded (`shard_bits`) but does not bind: the bits are global and shards
//! only decide which Redis key holds which byte, so a file imports into any shard size
//! ([`ImportOptions::shard_bits`]; e.g. a single server's filter into a cluster's
//! [`crate::config::CLUSTER_SHARD_BITS`]) with the same bytes.
//!
//! # Guava's format
//!
//! [`Format::Guava`] is `BloomFilter.writeTo`'s: strategy ordinal, k, a big-endian `int` word
//! count and big-endian words ([`bloomlab_filters::guava`]). Only a `classic/murmur3/mitz64`
//! (ordinal 1) or `classic/murmur3/mitz32` (ordinal 0) filter has Guava's layout; its bit count is
//! a whole number of words, and the file stores k but neither n nor p, so an import needs them
//! and checks that Guava 31.1's sizing of (n, p) (the sizing of these variants) gives the file's
//! bits and k. The format has no checksum: only its length is checked.
//!
//! # Import: nothing changes unless all of it worked
//!
//! [`import`] checks the header and the file size, and the caller's stated config
//! ([`Expected`]), before touching the server; with `replace`, it also reads the whole file once
//! to verify its checksum before deleting the old filter. It then loads through
//! [`RedisBloom::begin_load`]: shards created fresh with an expiry ([`LOAD_EXPIRY`]), written
//! chunk by chunk with SETRANGE, and the config hash written (making the filter visible) and
//! every expiry removed only after the trailer checksum matched. On any failure (a file cut short
//! or changed during the load, a checksum mismatch, a server error) the shards are deleted; a
//! killed importer's shards expire.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bloomlab_filters::fill::{FillCounter, FillStat};
use bloomlab_filters::guava::{self, GuavaStrategy, HEADER_BYTES as GUAVA_HEADER, MAX_WORDS};
use bloomlab_filters::{BitPositions, Bloom, FlatBits, GuavaMitz32, GuavaMitz64, Layout, Murmur3};
use thiserror::Error;
use xxhash_rust::xxh3::Xxh3;

use crate::admin::stored_config;
use crate::config::{Config, Twin};
use crate::conn::Connection;
use crate::error::RedisFilterError;
use crate::filter::{LoadCore, RedisBloom, Store};
use crate::keys::check_name;
use crate::variants::{RedisVisitor, visit};

/// The first 16 bytes of a bloomlab filter file.
pub const MAGIC: &[u8; 16] = b"BLOOMLAB-FILTER\n";

/// The file format version this build writes and reads.
pub const VERSION: u32 = 1;

/// The most config fields a file may declare (version 1 writes 11).
pub const MAX_FIELDS: u32 = 32;

/// The longest field name or value a file may declare, in bytes.
pub const MAX_FIELD_BYTES: u16 = 256;

/// The bytes read from Redis (one GETRANGE) or written (one SETRANGE) at a time, the admin
/// module's chunk: the bound on an export's or import's memory, whatever the filter's size. A
/// multiple of 8, so every chunk is whole 64-bit words (tested).
pub use crate::admin::CHUNK_BYTES;

/// The expiry a filter's keys carry while an import loads them: a killed importer's keys are gone
/// after at most this long. Re-armed while the load writes.
pub const LOAD_EXPIRY: Duration = Duration::from_secs(120);

/// A filter file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// bloomlab's own format (see the module doc): any Redis filter, with its config and a
    /// checksum.
    #[default]
    Bloomlab,
    /// Guava's `BloomFilter.writeTo` format: `classic/murmur3/mitz64` or `mitz32` filters only.
    Guava,
}

impl Format {
    /// The name used on the command line (`bloomlab`, `guava`).
    pub const fn name(self) -> &'static str {
        match self {
            Format::Bloomlab => "bloomlab",
            Format::Guava => "guava",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why an export or import failed. In every case the target file (export) or the server (import)
/// is as it was before (see the module doc for `replace`).
#[derive(Debug, Error)]
pub enum DumpError {
    /// Redis refused or failed, or the filter is missing, damaged or exists.
    #[error(transparent)]
    Redis(#[from] RedisFilterError),
    /// Reading or writing a file failed (for an export: the old file, if any, is unchanged and no
    /// temporary file is left).
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done (`create a temporary file beside`, `write`, `read`, ...).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file is not a valid filter file of its format: bad magic, unknown version, truncated,
    /// trailing bytes, checksum mismatch, an invalid config.
    #[error("{}: not a valid {format} filter file: {reason}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// The format it was read as.
        format: Format,
        /// What is wrong, with the offsets involved.
        reason: String,
    },
    /// The file's filter differs from the one the caller stated.
    #[error(
        "{}: the file's filter has {field} = {file}, but {requested} was given; nothing was imported",
        path.display()
    )]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// The config field that differs.
        field: &'static str,
        /// The file's value.
        file: String,
        /// The value the caller gave.
        requested: String,
    },
    /// The caller's progress callback asked to stop (Ctrl-C): nothing was written.
    #[error("interrupted: nothing was written")]
    Interrupted,
    /// The filter cannot be written or read in the requested format, or the import lacks what
    /// the format does not store (Guava's n and p).
    #[error("{0}")]
    Unsupported(String),
}

impl DumpError {
    /// Whether the server failed rather than the file or the request
    /// ([`RedisFilterError::is_server_failure`]).
    pub fn is_server_failure(&self) -> bool {
        matches!(self, Self::Redis(e) if e.is_server_failure())
    }

    fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_owned();
        move |source| DumpError::Io {
            action,
            path,
            source,
        }
    }
}

/// Called after each chunk with (payload bytes done, payload bytes in all); a
/// [`ControlFlow::Break`] stops the transfer with [`DumpError::Interrupted`].
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64) -> ControlFlow<()>;

/// The result type of this module.
pub type Result<T> = std::result::Result<T, DumpError>;

/// What an export or import moved.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The filter's config (for an import, as stored on the server, with its shard size).
    pub config: Config,
    /// Bytes of the file, header and trailer included.
    pub file_bytes: u64,
    /// Bytes of the bit array.
    pub payload_bytes: u64,
    /// What the bits say (set bits, fill, implied false-positive rate, estimated count),
    /// counted as the bytes passed, in bounded memory.
    pub fill: FillStat,
    /// Wall-clock seconds the transfer took.
    pub seconds: f64,
}

// ---------------------------------------------------------------------------------------------
// The bloomlab header

/// The header of a bloomlab filter file for `config`.
pub fn header_bytes(config: &Config) -> Vec<u8> {
    let fields = config.fields();
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(fields.len() as u32).to_le_bytes());
    for (name, value) in &fields {
        for text in [*name, value.as_str()] {
            out.extend_from_slice(&(text.len() as u16).to_le_bytes());
            out.extend_from_slice(text.as_bytes());
        }
    }
    out
}

/// A reader that counts the bytes it consumed, to name where a file ends.
struct Counted<R> {
    inner: R,
    at: u64,
}

impl<R: Read> Counted<R> {
    /// Reads exactly `buf.len()` bytes, or says where the file ended and what was being read.
    fn exact(&mut self, buf: &mut [u8], what: &str) -> std::result::Result<(), String> {
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => {
                    return Err(format!(
                        "truncated: the file ends at byte {}, inside the header ({what}, bytes {}..{})",
                        self.at + got as u64,
                        self.at,
                        self.at + buf.len() as u64
                    ));
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("reading {what} failed: {e}")),
            }
        }
        self.at += buf.len() as u64;
        Ok(())
    }

    fn u16(&mut self, what: &str) -> std::result::Result<u16, String> {
        let mut b = [0; 2];
        self.exact(&mut b, what)?;
        Ok(u16::from_le_bytes(b))
    }

    fn u32(&mut self, what: &str) -> std::result::Result<u32, String> {
        let mut b = [0; 4];
        self.exact(&mut b, what)?;
        Ok(u32::from_le_bytes(b))
    }

    /// A length-prefixed ASCII text of at most [`MAX_FIELD_BYTES`] bytes.
    fn text(&mut self, what: &str) -> std::result::Result<String, String> {
        let len = self.u16(&format!("{what}'s length"))?;
        if len > MAX_FIELD_BYTES {
            return Err(format!(
                "{what} is {len} bytes long at byte {}: at most {MAX_FIELD_BYTES} allowed",
                self.at - 2
            ));
        }
        let mut b = vec![0; usize::from(len)];
        self.exact(&mut b, what)?;
        String::from_utf8(b)
            .ok()
            .filter(|s| s.is_ascii())
            .ok_or_else(|| format!("{what} (before byte {}) is not ASCII text", self.at))
    }
}

/// Reads and validates a bloomlab header: returns the config and the header's length. Reads at
/// most the header's bytes; nothing is allocated beyond [`MAX_FIELD_BYTES`] per field.
fn read_header<R: Read>(input: R) -> std::result::Result<(Config, u64), String> {
    let mut r = Counted {
        inner: input,
        at: 0,
    };
    let mut magic = [0u8; 16];
    r.exact(&mut magic, "the magic")?;
    if &magic != MAGIC {
        let hint = if magic[0] <= 1 && magic[1] >= 1 {
            " (it looks like a Guava file: try --format guava)"
        } else {
            ""
        };
        return Err(format!(
            "bad magic: the file starts with {:?}, a bloomlab filter file with {:?}{hint}",
            String::from_utf8_lossy(&magic),
            String::from_utf8_lossy(MAGIC)
        ));
    }
    let version = r.u32("the format version")?;
    if version != VERSION {
        return Err(format!(
            "unknown format version {version}: this build reads version {VERSION}"
        ));
    }
    let count = r.u32("the field count")?;
    if count == 0 || count > MAX_FIELDS {
        return Err(format!(
            "field count {count}: it must be in 1..={MAX_FIELDS}"
        ));
    }
    let mut hash = std::collections::HashMap::new();
    for i in 0..count {
        let name = r.text(&format!("field {i}'s name"))?;
        let value = r.text(&format!("field {name:?}'s value"))?;
        if hash.insert(name.clone(), value).is_some() {
            return Err(format!("field {name:?} appears twice"));
        }
    }
    let config = Config::parse("file", "header", &hash).map_err(|e| match e {
        RedisFilterError::Corrupt { reason, .. } => format!("its config: {reason}"),
        other => other.to_string(),
    })?;
    Ok((config, r.at))
}

// ---------------------------------------------------------------------------------------------
// Guava

/// The Guava strategy of a config, or why it has no Guava layout.
fn guava_strategy(config: &Config) -> Result<GuavaStrategy> {
    let strategy = match (config.layout, config.hash.as_str(), config.index.as_str()) {
        (Layout::Classic, "murmur3", "mitz64") => GuavaStrategy::Murmur128Mitz64,
        (Layout::Classic, "murmur3", "mitz32") => GuavaStrategy::Murmur128Mitz32,
        _ => {
            return Err(DumpError::Unsupported(format!(
                "{} has layout {}, hash {}, index {}: Guava's format holds only layout classic, hash murmur3, index mitz64 (or mitz32); export it with --format bloomlab",
                config.variant_name()?,
                config.layout,
                config.hash,
                config.index
            )));
        }
    };
    if !config.bits.is_multiple_of(64) || config.bits / 64 > MAX_WORDS || config.hashes > 255 {
        return Err(DumpError::Unsupported(format!(
            "bits = {}, hashes = {}: Guava's format needs a whole number of 64-bit words, at most {MAX_WORDS} words, and k <= 255",
            config.bits, config.hashes
        )));
    }
    Ok(strategy)
}

/// Guava's 6-byte header for `config` (which [`guava_strategy`] accepted).
fn guava_header(config: &Config, strategy: GuavaStrategy) -> [u8; GUAVA_HEADER] {
    guava::header(strategy, config.hashes, config.bits / 64)
}

/// Swaps each 8-byte word between little- and big-endian, in place (a whole number of words).
fn swap_words(bytes: &mut [u8]) {
    for w in bytes.chunks_exact_mut(8) {
        w.reverse();
    }
}

// ---------------------------------------------------------------------------------------------
// Export

/// Writes filter `name` (any variant) to `out`, whole or not at all.
///
/// Guarantees: the file is written to a temporary file beside `out`, fsynced and renamed over
/// it, so `out` is either the complete new file or (on any error, a full disk included) what it
/// was before, and no temporary file is left. Memory is bounded by [`CHUNK_BYTES`] whatever the
/// filter's size. The payload is the filter's bytes as [`RedisBloom::bytes`] returns them (for
/// Guava, the same words big-endian). `progress(done, total)` is called after each chunk with
/// payload bytes; when it breaks, the export stops with [`DumpError::Interrupted`] (nothing
/// written, as for any error).
pub fn export(
    mut conn: Connection,
    name: &str,
    out: &Path,
    format: Format,
    progress: Progress<'_>,
) -> Result<Summary> {
    let config = stored_config(&mut conn, name)?;
    let strategy = match format {
        Format::Guava => Some(guava_strategy(&config)?),
        Format::Bloomlab => None,
    };
    struct Export<'a> {
        conn: Connection,
        name: &'a str,
        out: &'a Path,
        strategy: Option<GuavaStrategy>,
        progress: Progress<'a>,
    }
    impl RedisVisitor for Export<'_> {
        type Output = Result<Summary>;
        fn visit<F: BitPositions>(self) -> Result<Summary> {
            let mut filter = RedisBloom::<F>::open(self.conn, self.name)?;
            export_from(filter.store_mut(), self.out, self.strategy, self.progress)
        }
    }
    visit(
        &config.variant_name()?,
        Export {
            conn,
            name,
            out,
            strategy,
            progress,
        },
    )?
}

/// What [`write_file`]'s reader calls with each piece of the bit array, in order.
type EachPiece<'a> = &'a mut dyn FnMut(&mut [u8]) -> Result<()>;

/// [`export`] of an opened filter (no type parameter: compiled once for every variant).
fn export_from(
    store: &mut Store,
    out: &Path,
    strategy: Option<GuavaStrategy>,
    progress: Progress<'_>,
) -> Result<Summary> {
    let config = store.config().clone();
    write_file(&config, out, strategy, progress, &mut |each| {
        store.read_chunks(CHUNK_BYTES, each)
    })
}

/// Writes a filter of `config` to `out` (whole or not at all, as [`export`] says), its bytes
/// handed over in order by `read`, which calls its argument with each chunk of the in-memory
/// layout.
fn write_file(
    config: &Config,
    out: &Path,
    strategy: Option<GuavaStrategy>,
    progress: Progress<'_>,
    read: &mut dyn FnMut(EachPiece<'_>) -> Result<()>,
) -> Result<Summary> {
    let started = Instant::now();
    let config = config.clone();
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".bloomlab-export-");
    // The file a user asked for gets the mode `File::create` would give it (0666 less the umask),
    // or the mode of the file it replaces, not the temporary file's private 0600, which the
    // rename would otherwise carry over (issue 64).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let tmp = builder
        .tempfile_in(dir)
        .map_err(DumpError::io("create a temporary file in", dir))?;
    if let Ok(meta) = std::fs::metadata(out) {
        tmp.as_file()
            .set_permissions(meta.permissions())
            .map_err(DumpError::io("set the permissions of", out))?;
    }
    let mut w = BufWriter::with_capacity(1 << 16, tmp);
    let header: Vec<u8> = match strategy {
        Some(s) => guava_header(&config, s).to_vec(),
        None => header_bytes(&config),
    };
    w.write_all(&header).map_err(DumpError::io("write", out))?;
    let total = config.bits / 8;
    let mut hasher = Xxh3::new();
    let mut done = 0u64;
    let mut fill = FillCounter::new(config.geometry());
    read(&mut |piece: &mut [u8]| -> Result<()> {
        hasher.update(piece);
        fill.feed(piece).map_err(RedisFilterError::from)?;
        if strategy.is_some() {
            swap_words(piece);
        }
        w.write_all(piece).map_err(DumpError::io("write", out))?;
        done += piece.len() as u64;
        match progress(done, total) {
            ControlFlow::Continue(()) => Ok(()),
            ControlFlow::Break(()) => Err(DumpError::Interrupted),
        }
    })?;
    let fill = fill.finish().map_err(RedisFilterError::from)?;
    if strategy.is_none() {
        w.write_all(&hasher.digest().to_le_bytes())
            .map_err(DumpError::io("write", out))?;
    }
    let tmp = w
        .into_inner()
        .map_err(|e| DumpError::io("write", out)(e.into_error()))?;
    tmp.as_file()
        .sync_all()
        .map_err(DumpError::io("sync", out))?;
    tmp.persist(out)
        .map_err(|e| DumpError::io("rename the temporary file to", out)(e.error))?;
    // The rename is durable once the directory is synced (best effort: not every file system
    // allows opening a directory).
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    let trailer = if strategy.is_none() { 8 } else { 0 };
    Ok(Summary {
        config,
        file_bytes: header.len() as u64 + total + trailer,
        payload_bytes: total,
        fill,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Writes a filter built in memory, `bits` being its whole bit array in the in-memory layout
/// (what a [`RedisBloom`] of `config` would hold), to `out` in `format`, whole or not at all:
/// `filter build`'s offline build, to be loaded with [`import`]. On success `bits` is as it was.
/// Errors: a `bits` whose length is not `config.bits / 8`, a Guava file of a layout Guava does
/// not have, and any write failure (nothing written).
pub fn write_bits(config: &Config, bits: &mut [u8], out: &Path, format: Format) -> Result<Summary> {
    if bits.len() as u64 * 8 != config.bits {
        return Err(RedisFilterError::OutOfRange {
            what: "bit array (bytes)",
            value: bits.len().to_string(),
            allowed: format!(
                "{} bytes, the config's {} bits",
                config.bits / 8,
                config.bits
            ),
        }
        .into());
    }
    let strategy = match format {
        Format::Guava => Some(guava_strategy(config)?),
        Format::Bloomlab => None,
    };
    write_file(
        config,
        out,
        strategy,
        &mut |_, _| ControlFlow::Continue(()),
        &mut |each| {
            for piece in bits.chunks_mut(CHUNK_BYTES as usize) {
                each(piece)?;
                if strategy.is_some() {
                    // The Guava writer turns words big-endian in place: turn them back.
                    swap_words(piece);
                }
            }
            Ok(())
        },
    )
}

// ---------------------------------------------------------------------------------------------
// Import

/// What the caller states about the filter being imported: each given value must equal the
/// file's (for Guava files, n and p are required and give the config).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expected {
    /// The Redis variant name (`redis/classic/xxh3/km`; the `redis/` prefix may be left out).
    pub variant: Option<String>,
    /// The number of keys the filter was sized for.
    pub n: Option<u64>,
    /// The false-positive rate it was sized for.
    pub p: Option<f64>,
}

/// How to import.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportOptions {
    /// The file's format.
    pub format: Format,
    /// Replace an existing filter of the same name (deleted once the file has been verified).
    pub replace: bool,
    /// The shard size on the server; `None`: the file's (bloomlab format) or the connection's
    /// default ([`Connection::default_shard_bits`]; Guava format, which records none).
    pub shard_bits: Option<u64>,
    /// What the caller states about the filter.
    pub expected: Expected,
}

/// A file opened for import, its header read and its size checked.
struct Source {
    path: PathBuf,
    format: Format,
    reader: BufReader<File>,
    /// The config from the file (Guava: from the stated n and p, checked against the file).
    config: Config,
    header_len: u64,
    file_len: u64,
}

impl Source {
    fn bad(&self, reason: String) -> DumpError {
        DumpError::Format {
            path: self.path.clone(),
            format: self.format,
            reason,
        }
    }
}

/// Opens a filter file for reading, refusing anything but a regular file: a FIFO would block in
/// `open` until some writer came (issue 64: `import --file`, `check --file` and `stat --file` hung
/// there), and a FIFO or a device feeds bytes without a size to check them against. The open does
/// not wait for a FIFO's writer (`O_NONBLOCK`, which changes nothing for a regular file's reads).
/// The error names what the path is; the caller names the path.
pub fn open_filter_file(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "it is {}, not a regular file (a filter file is read and checked against its size)",
            file_kind(kind)
        ),
    ))
}

/// What a file that is not a regular file is, for a message.
fn file_kind(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a plain file"
    }
}

/// Opens `path`, reads and validates its header, and checks its size against the header.
fn open_source(path: &Path, opts: &ImportOptions, default_shard_bits: u64) -> Result<Source> {
    let file = open_filter_file(path).map_err(DumpError::io("open", path))?;
    let file_len = file
        .metadata()
        .map_err(DumpError::io("read the size of", path))?
        .len();
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let bad = |reason: String| DumpError::Format {
        path: path.to_owned(),
        format: opts.format,
        reason,
    };
    let (config, header_len, trailer) = match opts.format {
        Format::Bloomlab => {
            let (mut config, header_len) = read_header(&mut reader).map_err(bad)?;
            if let Some(s) = opts.shard_bits {
                crate::config::check_shard_bits(s)?;
                config.shard_bits = s;
                config.shards = config.bits.div_ceil(s);
            }
            (config, header_len, 8)
        }
        Format::Guava => {
            let config = guava_config(path, &mut reader, opts, default_shard_bits)?;
            (config, GUAVA_HEADER as u64, 0)
        }
    };
    let want = header_len + config.bits / 8 + trailer;
    if file_len < want {
        return Err(bad(format!(
            "truncated at byte {file_len} of {want}: the header promises {want} bytes (header {header_len} + bit array {} + trailer {trailer})",
            config.bits / 8
        )));
    }
    if file_len > want {
        return Err(bad(format!(
            "trailing bytes: the file has {file_len} bytes, but its header promises {want}; {} bytes follow the filter",
            file_len - want
        )));
    }
    Ok(Source {
        path: path.to_owned(),
        format: opts.format,
        reader,
        config,
        header_len,
        file_len,
    })
}

/// Reads a Guava header and builds the config from the stated n and p: Guava 31.1's sizing of
/// them must give the file's bits and k.
fn guava_config(
    path: &Path,
    reader: &mut impl Read,
    opts: &ImportOptions,
    default_shard_bits: u64,
) -> Result<Config> {
    let mut h = [0u8; GUAVA_HEADER];
    let mut r = Counted {
        inner: reader,
        at: 0,
    };
    let bad = |reason: String| DumpError::Format {
        path: path.to_owned(),
        format: Format::Guava,
        reason,
    };
    r.exact(&mut h, "strategy ordinal, k and word count")
        .map_err(bad)?;
    let (strategy, hashes, words) = guava::parse_header(&h).map_err(|e| bad(e.to_string()))?;
    let (Some(n), Some(p)) = (opts.expected.n, opts.expected.p) else {
        return Err(DumpError::Unsupported(format!(
            "{}: a Guava file stores neither n nor p (only k = {hashes} and {words} words); give both (--n and --p)",
            path.display()
        )));
    };
    let shard_bits = opts.shard_bits.unwrap_or(default_shard_bits);
    let config = match strategy {
        GuavaStrategy::Murmur128Mitz64 => {
            Config::sized::<Bloom<Murmur3, GuavaMitz64, FlatBits>>(n, p, shard_bits)?
        }
        GuavaStrategy::Murmur128Mitz32 => {
            Config::sized::<Bloom<Murmur3, GuavaMitz32, FlatBits>>(n, p, shard_bits)?
        }
    };
    for (field, file, sized) in [
        ("bits", words * 64, config.bits),
        ("hashes", u64::from(hashes), u64::from(config.hashes)),
    ] {
        if file != sized {
            return Err(DumpError::Mismatch {
                path: path.to_owned(),
                field,
                file: file.to_string(),
                requested: format!(
                    "{sized} (Guava 31.1's sizing of n = {n}, p = {p}, strategy {strategy})"
                ),
            });
        }
    }
    Ok(config)
}

/// Checks the caller's stated values against the file's config: the first that differs is a
/// [`DumpError::Mismatch`] naming the field and both values.
fn check_expected(path: &Path, config: &Config, expected: &Expected) -> Result<()> {
    let mismatch = |field, file: String, requested: String| DumpError::Mismatch {
        path: path.to_owned(),
        field,
        file,
        requested,
    };
    if let Some(v) = &expected.variant {
        let want = if v.starts_with("redis/") {
            v.clone()
        } else {
            format!("redis/{v}")
        };
        let have = config.variant_name()?;
        if want != have {
            return Err(mismatch("variant", have, want));
        }
    }
    if let Some(n) = expected.n
        && n != config.n
    {
        return Err(mismatch("n", config.n.to_string(), n.to_string()));
    }
    if let Some(p) = expected.p
        && p.to_bits() != config.p.to_bits()
    {
        return Err(mismatch("p", config.p.to_string(), p.to_string()));
    }
    Ok(())
}

/// Reads the whole payload of a bloomlab file in chunks, passing each to `each`, and checks the
/// trailer checksum.
fn scan(src: &mut Source, mut each: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    let mut hasher = Xxh3::new();
    let total = src.config.bits / 8;
    let mut buf = vec![0u8; CHUNK_BYTES.min(total) as usize];
    let mut done = 0;
    while done < total {
        let take = CHUNK_BYTES.min(total - done) as usize;
        read_payload(src, &mut buf[..take], done)?;
        hasher.update(&buf[..take]);
        each(&buf[..take])?;
        done += take as u64;
    }
    check_trailer(src, hasher.digest())
}

/// Reads the payload once and checks its checksum (bloomlab format), then rewinds to it.
fn verify(src: &mut Source) -> Result<()> {
    use std::io::{Seek, SeekFrom};
    scan(src, |_| Ok(()))?;
    src.reader
        .seek(SeekFrom::Start(src.header_len))
        .map_err(DumpError::io("seek in", &src.path))?;
    Ok(())
}

/// What a bloomlab filter file holds, read whole and verified (header, size, checksum) in memory
/// bounded by [`CHUNK_BYTES`]: its config, and the statistics of its bits (set bits, fill,
/// estimated count, implied false-positive rate: the same figures as for the filter in Redis,
/// bit for bit). For `stat --file`.
pub fn inspect(path: &Path) -> Result<(Config, FillStat)> {
    let mut src = open_source(
        path,
        &ImportOptions::default(),
        crate::config::DEFAULT_SHARD_BITS,
    )?;
    let mut fill = FillCounter::new(src.config.geometry());
    scan(&mut src, |piece| {
        fill.feed(piece).map_err(RedisFilterError::from)?;
        Ok(())
    })?;
    let fill = fill.finish().map_err(RedisFilterError::from)?;
    Ok((src.config, fill))
}

/// A bloomlab filter file's config and whole bit array (the in-memory layout), read and verified
/// like [`inspect`]: for membership checks of a file (`filter check --file`). It holds
/// `config.bits / 8` bytes, no more than the file's size, which is checked against the header
/// before anything is allocated; a caller that bounds memory compares the file's size first.
pub fn read_bits(path: &Path) -> Result<(Config, Vec<u8>)> {
    let mut src = open_source(
        path,
        &ImportOptions::default(),
        crate::config::DEFAULT_SHARD_BITS,
    )?;
    let mut bits = Vec::with_capacity((src.config.bits / 8) as usize);
    scan(&mut src, |piece| {
        bits.extend_from_slice(piece);
        Ok(())
    })?;
    Ok((src.config, bits))
}

fn read_payload(src: &mut Source, buf: &mut [u8], offset: u64) -> Result<()> {
    src.reader.read_exact(buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            src.bad(format!(
                "truncated during the import: the file ended inside the bit array (after byte {} of {}); it changed after its size was checked",
                src.header_len + offset,
                src.file_len
            ))
        } else {
            DumpError::io("read", &src.path)(e)
        }
    })
}

/// Reads the 8-byte trailer and compares it with the payload's hash.
fn check_trailer(src: &mut Source, digest: u64) -> Result<()> {
    let mut t = [0u8; 8];
    let at = src.header_len + src.config.bits / 8;
    read_payload(src, &mut t, at - src.header_len)?;
    let stored = u64::from_le_bytes(t);
    if stored != digest {
        return Err(src.bad(format!(
            "checksum mismatch: the trailer (byte {at}) says {stored:016x}, the bit array hashes to {digest:016x} (XXH3-64): the file is damaged"
        )));
    }
    Ok(())
}

/// Loads the file `path` into Redis as filter `name`.
///
/// Guarantees (see the module doc): the header, size and stated config are checked before the
/// server is touched; the filter becomes visible only once every byte was written and the
/// checksum matched; on any failure what was written is deleted. Memory is bounded by
/// [`CHUNK_BYTES`]. `progress(done, total)` is called after each chunk with payload bytes; when
/// it breaks, the import stops with [`DumpError::Interrupted`] and what it wrote is deleted.
pub fn import(
    conn: Connection,
    name: &str,
    path: &Path,
    opts: &ImportOptions,
    progress: Progress<'_>,
) -> Result<Summary> {
    check_name(name)?;
    let mut src = open_source(path, opts, conn.default_shard_bits())?;
    check_expected(path, &src.config, &opts.expected)?;
    if opts.replace && src.format == Format::Bloomlab {
        verify(&mut src)?;
    }
    struct Import<'a> {
        conn: Connection,
        name: &'a str,
        src: Source,
        replace: bool,
        progress: Progress<'a>,
    }
    impl RedisVisitor for Import<'_> {
        type Output = Result<Summary>;
        fn visit<F: BitPositions>(self) -> Result<Summary> {
            let twin = Twin::of::<F>();
            load(
                self.conn,
                self.name,
                twin,
                self.src,
                self.replace,
                self.progress,
            )
        }
    }
    visit(
        &src.config.variant_name()?,
        Import {
            conn,
            name,
            src,
            replace: opts.replace,
            progress,
        },
    )?
}

fn load(
    conn: Connection,
    name: &str,
    twin: Twin,
    mut src: Source,
    replace: bool,
    progress: Progress<'_>,
) -> Result<Summary> {
    let started = Instant::now();
    let c = src.config.clone();
    // A file whose (n, p) this build sizes differently cannot be loaded as that filter: its
    // bits would be probed at other positions.
    let sized = Config::sized_as(twin, c.n, c.p, c.shard_bits)?;
    if let Some((field, file, ours)) = c.first_difference(&sized) {
        return Err(src.bad(format!(
            "its config has {field} = {file}, but this build sizes n = {}, p = {} as {field} = {ours}",
            c.n, c.p
        )));
    }
    let mut loading = LoadCore::begin(
        conn,
        name,
        twin,
        c.n,
        c.p,
        c.shard_bits,
        replace,
        LOAD_EXPIRY,
    )?;
    let total = c.bits / 8;
    let mut buf = vec![0u8; CHUNK_BYTES.min(total) as usize];
    let mut hasher = Xxh3::new();
    let mut fill = FillCounter::new(c.geometry());
    let mut done = 0u64;
    let result = (|| -> Result<FillStat> {
        while done < total {
            let take = CHUNK_BYTES.min(total - done) as usize;
            let piece = &mut buf[..take];
            read_payload(&mut src, piece, done)?;
            if src.format == Format::Guava {
                swap_words(piece);
            }
            hasher.update(piece);
            fill.feed(piece).map_err(RedisFilterError::from)?;
            loading.write(done, piece)?;
            done += take as u64;
            if progress(done, total).is_break() {
                return Err(DumpError::Interrupted);
            }
        }
        if src.format == Format::Bloomlab {
            check_trailer(&mut src, hasher.digest())?;
        }
        let mut extra = [0u8; 1];
        if src
            .reader
            .read(&mut extra)
            .map_err(DumpError::io("read", &src.path))?
            > 0
        {
            return Err(src.bad(format!(
                "trailing bytes: the file grew during the import past its {} bytes",
                src.file_len
            )));
        }
        Ok(fill.finish().map_err(RedisFilterError::from)?)
    })();
    let fill = match result {
        Ok(fill) => fill,
        Err(e) => {
            // Best effort: the error that matters is the one that stopped the load; shards not
            // deleted expire within LOAD_EXPIRY.
            let _ = loading.abort();
            return Err(e);
        }
    };
    let store = loading.commit()?;
    Ok(Summary {
        config: store.config().clone(),
        file_bytes: src.file_len,
        payload_bytes: total,
        fill,
        seconds: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomlab_filters::{Blocked512, Xxh3 as Xxh3Hash};

    type Guava = Bloom<Murmur3, GuavaMitz64, FlatBits>;

    #[test]
    fn a_header_reads_back_and_every_cut_names_its_byte() {
        let c = Config::sized::<Blocked512<Xxh3Hash>>(1000, 0.01, 1 << 16).unwrap();
        let h = header_bytes(&c);
        let (back, len) = read_header(&h[..]).unwrap();
        assert_eq!((back, len), (c, h.len() as u64));
        for cut in [0, 5, 16, 19, 23, 30, h.len() - 1] {
            let e = read_header(&h[..cut]).unwrap_err();
            assert!(
                e.contains(&format!("truncated: the file ends at byte {cut}")),
                "cut at {cut}: {e}"
            );
        }
    }

    #[test]
    fn bad_magic_version_lengths_and_edits_are_named() {
        let c = Config::sized::<Guava>(1000, 0.01, 1 << 16).unwrap();
        let h = header_bytes(&c);
        let mut bad = h.clone();
        bad[0] = b'X';
        assert!(read_header(&bad[..]).unwrap_err().contains("bad magic"));
        let mut bad = h.clone();
        bad[16] = 2;
        assert!(
            read_header(&bad[..])
                .unwrap_err()
                .contains("unknown format version 2")
        );
        let mut bad = h.clone();
        bad[20..24].copy_from_slice(&1000u32.to_le_bytes());
        assert!(
            read_header(&bad[..])
                .unwrap_err()
                .contains("field count 1000")
        );
        // The first field's name length, forged to 60000: refused before any allocation.
        let mut bad = h.clone();
        bad[24..26].copy_from_slice(&60000u16.to_le_bytes());
        assert!(
            read_header(&bad[..])
                .unwrap_err()
                .contains("60000 bytes long")
        );
        // A value edited by hand (n = 1000 -> 2000): the config's checksum catches it.
        let text = String::from_utf8_lossy(&h).replace("\u{4}\u{0}1000", "\u{4}\u{0}2000");
        let e = read_header(text.as_bytes()).unwrap_err();
        assert!(e.contains("checksum"), "{e}");
        let guava = GuavaStrategy::Murmur128Mitz64.ordinal();
        let e = read_header(&[0, guava, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0][..]).unwrap_err();
        assert!(e.contains("--format guava"), "{e}");
    }

    #[test]
    fn guava_layout_is_required_and_named() {
        let ok = Config::sized::<Guava>(1000, 0.01, 1 << 16).unwrap();
        assert_eq!(guava_strategy(&ok).unwrap(), GuavaStrategy::Murmur128Mitz64);
        assert_eq!(
            guava_header(&ok, GuavaStrategy::Murmur128Mitz64),
            [1, 7, 0, 0, 0, 150]
        );
        let blocked = Config::sized::<Blocked512<Xxh3Hash>>(1000, 0.01, 1 << 16).unwrap();
        let e = guava_strategy(&blocked).unwrap_err().to_string();
        assert!(
            e.contains("layout blocked512") && e.contains("murmur3"),
            "{e}"
        );
    }

    #[test]
    fn inspect_reads_and_checks_a_whole_file() {
        let c = Config::sized::<Blocked512<Xxh3Hash>>(100_000, 0.01, 1 << 16).unwrap();
        let payload: Vec<u8> = (0..c.bits / 8).map(|i| (i * 31 % 251) as u8).collect();
        let mut file = header_bytes(&c);
        file.extend_from_slice(&payload);
        file.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&payload).to_le_bytes());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bloomlab");
        std::fs::write(&path, &file).unwrap();
        let (config, fill) = inspect(&path).unwrap();
        assert_eq!(config, c);
        let whole = bloomlab_filters::fill::FillStat::from_bytes(c.geometry(), &payload).unwrap();
        assert_eq!(fill, whole);
        let last = file.len() - 9;
        file[last] ^= 1;
        std::fs::write(&path, &file).unwrap();
        let e = inspect(&path).unwrap_err().to_string();
        assert!(e.contains("checksum mismatch"), "{e}");
        std::fs::write(&path, &file[..file.len() - 1]).unwrap();
        let e = inspect(&path).unwrap_err().to_string();
        assert!(e.contains("truncated at byte"), "{e}");
    }

    /// A header whose checksum is valid but whose n or p no filter can have (issue 64: p = NaN
    /// failed with "false-positive rate p = NaN is invalid", naming neither the file nor the
    /// field): the error names the file, the field and the allowed range.
    #[test]
    fn a_config_with_an_impossible_n_or_p_is_named_with_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let good = Config::sized::<Blocked512<Xxh3Hash>>(1000, 0.01, 1 << 16).unwrap();
        for (field, forged) in [
            (
                "p",
                Config {
                    p: f64::NAN,
                    ..good.clone()
                },
            ),
            (
                "p",
                Config {
                    p: 0.0,
                    ..good.clone()
                },
            ),
            (
                "p",
                Config {
                    p: 1.5,
                    ..good.clone()
                },
            ),
            (
                "n",
                Config {
                    n: 0,
                    ..good.clone()
                },
            ),
        ] {
            let payload = vec![0u8; (forged.bits / 8) as usize];
            let mut file = header_bytes(&forged);
            file.extend_from_slice(&payload);
            file.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&payload).to_le_bytes());
            let path = dir.path().join("forged.bloomlab");
            std::fs::write(&path, &file).unwrap();
            let e = inspect(&path).unwrap_err().to_string();
            let value = if field == "p" {
                format!("p = {}", forged.p)
            } else {
                "n = 0".to_owned()
            };
            assert!(
                e.contains("forged.bloomlab")
                    && e.contains(&value)
                    && e.contains("(0, 1)") == (field == "p"),
                "{field}: {e}"
            );
        }
    }

    /// A FIFO (and a directory) named as a filter file is refused at once, saying what it is,
    /// instead of blocking in open() for a writer that never comes (issue 64).
    #[test]
    fn only_a_regular_file_is_opened_as_a_filter_file() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates the file.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = inspect(&fifo).unwrap_err().to_string();
        assert!(e.contains("pipe") && e.contains("FIFO"), "{e}");
        let e = open_filter_file(dir.path()).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        assert!(open_filter_file(&file).is_ok());
    }

    #[test]
    fn the_chunk_is_a_few_mib_of_whole_words() {
        assert!(CHUNK_BYTES.is_multiple_of(8));
        assert!((1 << 20..=16 << 20).contains(&CHUNK_BYTES));
    }
}
