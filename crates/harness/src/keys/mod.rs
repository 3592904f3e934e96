//! Key sets: reproducible streams of member and non-member keys.
//!
//! Every key set is an indexed sequence `key(0), key(1), ...` with distinct keys. A trial that
//! inserts `m` members uses `key(i)` for `i < m` as members and `key(i)` for `i >= m` as
//! non-members, so the two are disjoint *by construction*: each generated key embeds `i`
//! bijectively (a file key set removes duplicate lines instead). The same `(kind, seed)` gives the
//! same keys bit for bit; keys are produced in caller-sized batches into reused buffers, so memory
//! stays bounded however many keys a trial queries.
//!
//! This module owns key generation for the whole workspace: the sweep's key sets and the criterion
//! bench (`benches/bloom_vs_hashset`) draw from the same generators, one bijective mixer and one
//! writer of `prefix + i` strings. The bench's u64 keys are the `random-u64` key set at the indices
//! it samples ([`KeySet::fill_at`]); its strings `"article-content-hash-" + i` are the `article`
//! shape with the longer prefix of the well-known Java table ([`StrBatch::push_indexed`]). Timing
//! is not shared: the bench owns the authoritative, criterion-based timing, and the sweep keeps its
//! own indicative per-row figures (`crate::bloom::timing`), so that a sweep needs no criterion.
//!
//! One exception: the conformance suite (`bloomlab-conform`), which must not depend on the harness,
//! draws its `random-u64` and `url` families from a small copy of these generators
//! (`bloomlab_conform::keys`), held to these key for key by a test there.

pub mod group;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::error::HarnessError;

/// Which key set.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeySetKind {
    /// `u64` keys: a seeded bijective mix of the index (8 little-endian bytes each).
    RandomU64,
    /// `"article-" + i`: the sequential strings of the textbook workload (unseeded by design).
    Article,
    /// URL-like strings: scheme, host, path segments and a query that carries `i`.
    Url,
    /// 64-character lowercase hex strings, like SHA-256 content hashes; the first 16 characters
    /// are a bijective mix of `i`, the rest seeded noise.
    Hex,
    /// One key per line of a user's file; blank lines are skipped and repeats removed.
    File(PathBuf),
}

impl KeySetKind {
    /// The names accepted by [`FromStr`], for help texts.
    pub const ALLOWED: &'static str = "random-u64, article, url, hex, file:PATH";
}

impl fmt::Display for KeySetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySetKind::RandomU64 => f.write_str("random-u64"),
            KeySetKind::Article => f.write_str("article"),
            KeySetKind::Url => f.write_str("url"),
            KeySetKind::Hex => f.write_str("hex"),
            KeySetKind::File(p) => write!(f, "file:{}", p.display()),
        }
    }
}

impl FromStr for KeySetKind {
    type Err = HarnessError;
    fn from_str(s: &str) -> Result<Self, HarnessError> {
        match s {
            "random-u64" => Ok(KeySetKind::RandomU64),
            "article" => Ok(KeySetKind::Article),
            "url" => Ok(KeySetKind::Url),
            "hex" => Ok(KeySetKind::Hex),
            _ => match s.strip_prefix("file:") {
                Some(path) if !path.is_empty() => Ok(KeySetKind::File(PathBuf::from(path))),
                _ => Err(HarnessError::UnknownKeySet { name: s.to_owned() }),
            },
        }
    }
}

/// The distinct non-blank lines of a key file, in first-seen order.
#[derive(Debug)]
pub struct FileKeys {
    /// The file read.
    pub path: PathBuf,
    /// Distinct lines in first-seen order.
    pub lines: Vec<String>,
    /// Non-blank lines read, repeats included.
    pub total_lines: u64,
    /// Lines dropped as repeats of an earlier line.
    pub duplicates: u64,
}

impl FileKeys {
    /// Reads `path`: one key per line (`\n` or `\r\n`), blank lines skipped, repeats removed and
    /// counted. Lines are read one at a time, each up to [`MAX_KEY_BYTES`]: a longer line (or a
    /// file without line breaks, such as `/dev/zero`) is refused after reading at most that much
    /// of it. Errors name the path, and the line and column where it applies; a bad line is
    /// quoted by its first [`QUOTED_BYTES`] bytes at most.
    pub fn read(path: &Path) -> Result<Self, HarnessError> {
        let fail = |reason: String| HarnessError::KeyFile {
            path: path.to_owned(),
            reason,
        };
        let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
        let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
        // Every line, each followed by `\n`: one allocation for the text, as a whole-file read had.
        let mut text = String::new();
        let mut line = Vec::new();
        let mut number = 0u64;
        while read_key_line(&mut reader, &mut line)
            .map_err(|e| fail(format!("line {}: {e}", number + 1)))?
        {
            number += 1;
            let key = std::str::from_utf8(&line)
                .map_err(|e| fail(not_utf8_at(number, &line, e.valid_up_to())))?;
            text.push_str(key);
            text.push('\n');
        }
        let mut seen = std::collections::HashSet::new();
        let mut lines = Vec::new();
        let mut total = 0u64;
        for line in text.split('\n').filter(|l| !l.is_empty()) {
            total += 1;
            if seen.insert(line) {
                lines.push(line.to_owned());
            }
        }
        let duplicates = total - lines.len() as u64;
        Ok(Self {
            path: path.to_owned(),
            lines,
            total_lines: total,
            duplicates,
        })
    }

    /// Checks that `members` members leave at least one non-member.
    pub fn check_members(&self, members: u64) -> Result<(), HarnessError> {
        let distinct = self.lines.len() as u64;
        if distinct > members {
            return Ok(());
        }
        Err(HarnessError::KeyFileTooSmall {
            path: self.path.clone(),
            lines: self.total_lines,
            distinct,
            duplicates: self.duplicates,
            members,
            needed: members + 1,
        })
    }
}

/// The longest key a key file may hold, in bytes (its line without the line ending): 1 MiB, far
/// beyond any real key (URLs, hashes, identifiers), and the most of one line any reader here holds
/// in memory. A longer line is refused with an error naming this limit.
pub const MAX_KEY_BYTES: usize = 1 << 20;

/// The most bytes of a bad input line an error message quotes.
pub const QUOTED_BYTES: usize = 60;

/// Reads the next line of `reader` into `line` (cleared first), without its `\n` or `\r\n`,
/// reading at most [`MAX_KEY_BYTES`] + 2 bytes. Returns `Ok(false)` at the end of the input; an
/// error (without a path or line number) when the line is longer than [`MAX_KEY_BYTES`], quoting
/// its start ([`quote_prefix`]), or when reading fails.
pub fn read_key_line<R: std::io::BufRead>(
    reader: &mut R,
    line: &mut Vec<u8>,
) -> Result<bool, String> {
    use std::io::{BufRead, Read};
    line.clear();
    let read = reader
        .by_ref()
        .take(MAX_KEY_BYTES as u64 + 2)
        .read_until(b'\n', line)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if read == 0 {
        return Ok(false);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
    }
    if line.len() > MAX_KEY_BYTES {
        return Err(format!(
            "the line is longer than {MAX_KEY_BYTES} bytes, the longest key allowed (it starts \
             {})",
            quote_prefix(line)
        ));
    }
    Ok(true)
}

/// `bytes` quoted for an error message: at most its first [`QUOTED_BYTES`] bytes (invalid UTF-8
/// shown as U+FFFD), followed by how long it is in all when it was cut.
pub fn quote_prefix(bytes: &[u8]) -> String {
    if bytes.len() <= QUOTED_BYTES {
        return format!("{:?}", String::from_utf8_lossy(bytes));
    }
    format!(
        "{:?}... ({} bytes in all)",
        String::from_utf8_lossy(&bytes[..QUOTED_BYTES]),
        bytes.len()
    )
}

/// Where the first invalid UTF-8 byte of `bytes` is, as `line L, column C (byte 0xXX)`.
pub(crate) fn not_utf8(bytes: &[u8], e: std::str::Utf8Error) -> String {
    let at = e.valid_up_to();
    let before = &bytes[..at];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    not_utf8_at(line as u64, &bytes[line_start..], at - line_start)
}

/// [`not_utf8`] for one line (line number `line`) whose first invalid byte is at offset `at`.
fn not_utf8_at(line: u64, bytes: &[u8], at: usize) -> String {
    // Columns count characters; everything before `at` on this line is valid UTF-8.
    let column = String::from_utf8_lossy(&bytes[..at]).chars().count() + 1;
    format!(
        "line {line}, column {column}: byte 0x{:02x} is not valid UTF-8 (keys are read as UTF-8 \
         text, one per line)",
        bytes[at]
    )
}

/// How far ahead [`Batch::for_each_bytes_in_ahead`] prefetches: 1 KiB, 16 cache lines (128 integer
/// keys). Measured on the `sbbf/xxh3` random-u64 row at n = 1e6, p = 1e-4 (issue 30): prefetching
/// 1 KiB ahead, one line per line of keys, beat a burst of 32 lines 4 KiB ahead per 256 keys.
pub const READ_AHEAD: usize = 1024;

/// A batch of consecutive keys, in one of two representations so that hot loops stay typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Batch {
    /// Integer keys (the `random-u64` key set).
    U64(Vec<u64>),
    /// String keys, stored back to back in one buffer.
    Str(StrBatch),
}

/// String keys stored back to back: no allocation per key once the buffers have grown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StrBatch {
    text: String,
    ends: Vec<usize>,
}

impl StrBatch {
    /// The byte offset in `text` where key `i` starts (the end of key `i - 1`; for `i` = the
    /// length, the end of the last key).
    #[inline(always)]
    fn start_of(&self, i: usize) -> usize {
        match i {
            0 => 0,
            i => self.ends[i - 1],
        }
    }

    /// The keys in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter().copied())
            .map(|(a, b)| &self.text[a..b])
    }

    /// Keys `range` (positions in this batch), in order.
    ///
    /// Panics if `range` is not within `0..self.len()`.
    pub fn iter_in(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = &str> + '_ {
        let first = self.start_of(range.start);
        let ends = &self.ends[range];
        let starts = std::iter::once(first).chain(ends.iter().copied());
        starts
            .zip(ends.iter().copied())
            .map(|(a, b)| &self.text[a..b])
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Appends the key `prefix + i` (`i` in decimal): the `article` key set's shape with another
    /// prefix. Distinct indices give distinct keys.
    pub fn push_indexed(&mut self, prefix: &str, i: u64) {
        write_indexed(&mut self.text, prefix, i);
        self.close_key();
    }

    fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    fn close_key(&mut self) {
        self.ends.push(self.text.len());
    }
}

impl Batch {
    /// Number of keys.
    pub fn len(&self) -> usize {
        match self {
            Batch::U64(v) => v.len(),
            Batch::Str(s) => s.len(),
        }
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` with each key's canonical bytes (see `bloomlab_filters::key`), in order.
    #[inline]
    pub fn for_each_bytes(&self, mut f: impl FnMut(&[u8])) {
        match self {
            Batch::U64(v) => v.iter().for_each(|k| f(&k.to_le_bytes())),
            Batch::Str(s) => s.iter().for_each(|k| f(k.as_bytes())),
        }
    }

    /// Calls `f` with the canonical bytes of keys `range` (positions in this batch), in order.
    ///
    /// Panics if `range` is not within `0..self.len()`.
    #[inline]
    pub fn for_each_bytes_in(&self, range: std::ops::Range<usize>, mut f: impl FnMut(&[u8])) {
        match self {
            Batch::U64(v) => v[range].iter().for_each(|k| f(&k.to_le_bytes())),
            Batch::Str(s) => {
                let mut start = s.start_of(range.start);
                for &end in &s.ends[range] {
                    f(&s.text.as_bytes()[start..end]);
                    start = end;
                }
            }
        }
    }

    /// [`for_each_bytes_in`](Self::for_each_bytes_in), asking the cache for the batch's memory
    /// [`READ_AHEAD`] bytes ahead of the key being visited (a hint per cache line of keys, or per
    /// string key: nothing is read early, and an address past the batch is never dereferenced):
    /// for a pass over keys stored long before, which would otherwise wait on memory every few
    /// keys.
    #[inline]
    pub fn for_each_bytes_in_ahead(&self, range: std::ops::Range<usize>, mut f: impl FnMut(&[u8])) {
        use bloomlab_filters::filter::prefetch_line;
        match self {
            Batch::U64(v) => {
                let keys = &v[range];
                for (j, line) in keys.chunks(8).enumerate() {
                    prefetch_line(keys.as_ptr().wrapping_add(j * 8 + READ_AHEAD / 8));
                    line.iter().for_each(|k| f(&k.to_le_bytes()));
                }
            }
            Batch::Str(s) => {
                let text = s.text.as_bytes();
                let ends = &s.ends[range.clone()];
                let mut start = s.start_of(range.start);
                for (i, &end) in ends.iter().enumerate() {
                    prefetch_line(text.as_ptr().wrapping_add(start + READ_AHEAD));
                    if i % 8 == 0 {
                        prefetch_line(ends.as_ptr().wrapping_add(i + READ_AHEAD / 8));
                    }
                    f(&text[start..end]);
                    start = end;
                }
            }
        }
    }

    /// Heap bytes the batch holds (its buffers' capacities).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Batch::U64(v) => v.capacity() * 8,
            Batch::Str(s) => s.text.capacity() + s.ends.capacity() * size_of::<usize>(),
        }
    }

    /// Releases the buffers' spare capacity (a batch kept for a long time).
    pub fn shrink_to_fit(&mut self) {
        match self {
            Batch::U64(v) => v.shrink_to_fit(),
            Batch::Str(s) => {
                s.text.shrink_to_fit();
                s.ends.shrink_to_fit();
            }
        }
    }

    /// The position of the first key for which `pred` is false, if any.
    #[inline]
    pub fn position_not(&self, mut pred: impl FnMut(&[u8]) -> bool) -> Option<usize> {
        match self {
            Batch::U64(v) => v.iter().position(|k| !pred(&k.to_le_bytes())),
            Batch::Str(s) => s.iter().position(|k| !pred(k.as_bytes())),
        }
    }

    /// How many keys satisfy `pred`.
    #[inline]
    pub fn count(&self, mut pred: impl FnMut(&[u8]) -> bool) -> u64 {
        let mut hits = 0u64;
        self.for_each_bytes(|b| hits += u64::from(pred(b)));
        hits
    }

    /// How many of keys `range` (positions in this batch) satisfy `pred`.
    ///
    /// Panics if `range` is not within `0..self.len()`.
    #[inline]
    pub fn count_in(
        &self,
        range: std::ops::Range<usize>,
        mut pred: impl FnMut(&[u8]) -> bool,
    ) -> u64 {
        let mut hits = 0u64;
        self.for_each_bytes_in(range, |b| hits += u64::from(pred(b)));
        hits
    }
}

/// Writes `prefix` and `i` in decimal: the indexed keys the bench builds with other prefixes (the
/// `article` key set is the same shape, built by [`KeyBuf`]).
fn write_indexed(text: &mut String, prefix: &str, i: u64) {
    text.push_str(prefix);
    let mut k = KeyBuf::new();
    let mut w = KeyWriter::new(&mut k.buf);
    w.decimal(i);
    k.len = w.len;
    text.push_str(k.as_str());
}

/// The two ASCII digits of every number below 100, back to back: `00`, `01`, ..., `99`.
const DIGIT_PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// The two lowercase hex digits of every byte, back to back: `00`, `01`, ..., `ff`.
const HEX_PAIRS: [u8; 512] = {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut t = [0u8; 512];
    let mut i = 0;
    while i < 256 {
        t[2 * i] = HEX[i >> 4];
        t[2 * i + 1] = HEX[i & 0xf];
        i += 1;
    }
    t
};

/// A seeded, indexed key set. Cheap to clone (a file's lines are shared).
#[derive(Debug, Clone)]
pub struct KeySet {
    kind: KeySetKind,
    seed: u64,
    mix_in: u64,
    mix_out: u64,
    file: Option<Arc<FileKeys>>,
}

/// SplitMix64's finaliser: a bijection on `u64` (xor-shifts and odd multipliers are invertible).
#[inline]
fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A seed for one named stream of a run: FNV-1a of the label folded into the run seed, so streams
/// are independent of each other and of the order anything runs in.
pub fn derive_seed(seed: u64, label: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in label.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    mix64(seed ^ mix64(h))
}

const HOSTS: [&str; 8] = [
    "example.com",
    "www.example.org",
    "cdn.example.net",
    "shop.example.co.uk",
    "api.example.io",
    "blog.example.dev",
    "static.example.com",
    "news.example.org",
];
const SEGMENTS: [&str; 16] = [
    "products", "blog", "2024", "en", "users", "images", "docs", "api", "v2", "search", "category",
    "archive", "posts", "media", "help", "static",
];
const LANGS: [&str; 4] = ["en", "de", "fr", "ja"];

impl KeySet {
    /// The key set `kind` for run seed `seed`. A file key set reads its file here.
    pub fn new(kind: KeySetKind, seed: u64) -> Result<Self, HarnessError> {
        let file = match &kind {
            KeySetKind::File(path) => Some(Arc::new(FileKeys::read(path)?)),
            _ => None,
        };
        let own = derive_seed(seed, &kind.to_string());
        let mut rng = Pcg64Mcg::seed_from_u64(own);
        Ok(Self {
            mix_in: rng.next_u64(),
            mix_out: rng.next_u64(),
            kind,
            seed: own,
            file,
        })
    }

    /// Which key set this is.
    pub fn kind(&self) -> &KeySetKind {
        &self.kind
    }

    /// Whether keys are `u64` (else strings).
    pub fn is_u64(&self) -> bool {
        self.kind == KeySetKind::RandomU64
    }

    /// The file's lines, for a file key set.
    pub fn file(&self) -> Option<&FileKeys> {
        self.file.as_deref()
    }

    /// How many keys exist (`None`: practically unlimited, 2^64).
    pub fn available(&self) -> Option<u64> {
        self.file.as_ref().map(|f| f.lines.len() as u64)
    }

    /// An empty batch of the right representation.
    pub fn new_batch(&self) -> Batch {
        if self.is_u64() {
            Batch::U64(Vec::new())
        } else {
            Batch::Str(StrBatch::default())
        }
    }

    /// Replaces `out`'s contents with keys `start..start + len` (fewer if a file runs out).
    pub fn fill(&self, start: u64, len: usize, out: &mut Batch) {
        match out {
            Batch::U64(v) => {
                v.clear();
                v.extend((start..start + len as u64).map(|i| self.u64_key(i)));
            }
            Batch::Str(s) => {
                s.clear();
                let end = match self.available() {
                    Some(avail) => (start + len as u64).min(avail),
                    None => start + len as u64,
                };
                let mut k = KeyBuf::new();
                for i in start..end {
                    self.push_str_key(i, s, &mut k);
                }
            }
        }
    }

    /// Replaces `out`'s contents with the keys at `indices`, in order (repeats allowed): lookup
    /// batches drawn at random positions of the key set, as the criterion bench does.
    ///
    /// Panics if an index is past the end of a file key set ([`available`](Self::available)).
    pub fn fill_at(&self, indices: impl IntoIterator<Item = u64>, out: &mut Batch) {
        match out {
            Batch::U64(v) => {
                v.clear();
                v.extend(indices.into_iter().map(|i| self.u64_key(i)));
            }
            Batch::Str(s) => {
                s.clear();
                let mut k = KeyBuf::new();
                for i in indices {
                    self.push_str_key(i, s, &mut k);
                }
            }
        }
    }

    /// Key `i` of an integer key set.
    #[inline]
    fn u64_key(&self, i: u64) -> u64 {
        mix64(i ^ self.mix_in) ^ self.mix_out
    }

    /// Per-key randomness that does not depend on which batch produced the key.
    fn key_rng(&self, i: u64) -> Pcg64Mcg {
        Pcg64Mcg::seed_from_u64(self.seed ^ mix64(i.wrapping_add(0x9e37_79b9_7f4a_7c15)))
    }

    /// Calls `f` with the bytes of each key at `indices`, in order (repeats allowed), without
    /// storing them: the bytes [`fill_at`](Self::fill_at) then [`Batch::for_each_bytes`] give,
    /// one copy and one pass over a batch's memory fewer.
    ///
    /// Panics if an index is past the end of a file key set ([`available`](Self::available)).
    pub fn for_each_key(&self, indices: impl IntoIterator<Item = u64>, mut f: impl FnMut(&[u8])) {
        if self.is_u64() {
            indices
                .into_iter()
                .for_each(|i| f(&self.u64_key(i).to_le_bytes()));
        } else if matches!(self.kind, KeySetKind::Url) {
            self.for_each_url_key(indices, f);
        } else {
            let mut k = KeyBuf::new();
            for i in indices {
                f(self.str_key(i, &mut k).as_bytes());
            }
        }
    }

    /// [`for_each_key`](Self::for_each_key) for `url` keys, [`KEY_BLOCK`] at a time in three
    /// passes: every key's random word, then every key's bytes, then `f` on each.
    fn for_each_url_key(&self, indices: impl IntoIterator<Item = u64>, mut f: impl FnMut(&[u8])) {
        let mut at = [0u64; KEY_BLOCK];
        let mut words = [0u64; KEY_BLOCK];
        let mut bufs = [[0u8; KEY_BUF]; KEY_BLOCK];
        let mut lens = [0usize; KEY_BLOCK];
        let mut it = indices.into_iter();
        loop {
            let mut n = 0;
            while n < KEY_BLOCK {
                let Some(i) = it.next() else { break };
                at[n] = i;
                n += 1;
            }
            for j in 0..n {
                words[j] = self.key_rng(at[j]).next_u64();
            }
            for j in 0..n {
                let mut w = KeyWriter::new(&mut bufs[j]);
                w.url(at[j], words[j]);
                lens[j] = w.len;
            }
            for j in 0..n {
                f(&bufs[j][..lens[j]]);
            }
            if n < KEY_BLOCK {
                break;
            }
        }
    }

    fn push_str_key(&self, i: u64, s: &mut StrBatch, k: &mut KeyBuf) {
        s.text.push_str(self.str_key(i, k));
        s.close_key();
    }

    /// String key `i`: built in `k`, or a line of the key file.
    fn str_key<'a>(&'a self, i: u64, k: &'a mut KeyBuf) -> &'a str {
        let mut w = KeyWriter::new(&mut k.buf);
        match &self.kind {
            KeySetKind::RandomU64 => unreachable!("integer key set has a u64 batch"),
            KeySetKind::Article => {
                w.piece(&ARTICLE);
                w.decimal(i);
            }
            KeySetKind::Url => {
                // One random word drives every choice; `?` occurs once, before `id=`, and the
                // words contain no `&`, so `i` reads back unambiguously: keys are distinct.
                w.url(i, self.key_rng(i).next_u64());
            }
            KeySetKind::Hex => {
                let mut rng = self.key_rng(i);
                w.hex16(self.u64_key(i));
                for _ in 0..3 {
                    w.hex16(rng.next_u64());
                }
            }
            KeySetKind::File(_) => {
                let file = self.file.as_ref().expect("file key set has its lines");
                return &file.lines[i as usize];
            }
        }
        k.len = w.len;
        k.as_str()
    }
}

/// Room for the longest generated key (a `url` key is at most 90 bytes, a `hex` key 64) plus the
/// slack a fixed-width piece copy writes past the key's end.
const KEY_BUF: usize = 160;
/// Width of every word copied into a [`KeyBuf`]: words are padded to it and copied whole, so a
/// copy is a couple of vector stores instead of a `memcpy` call of a data-dependent length.
const PIECE: usize = 32;
/// Keys a `url` pass generates at a time ([`KeySet::for_each_key`]). Built one by one, a key's
/// random word, bytes and hash are one chain of dependent steps the processor cannot overlap
/// with the next key's; in passes over 32 keys it can (the scale fill of `sbbf/xxh3` into a
/// 1 MB filter, computation alone: 26.3M against 32.0M keys/s/core, three runs each).
const KEY_BLOCK: usize = 32;

/// A word of a generated key (`prefix` then `word`), padded to [`PIECE`] bytes, and its length.
#[derive(Clone, Copy)]
struct Piece {
    bytes: [u8; PIECE],
    len: usize,
}

impl Piece {
    const fn join(prefix: &str, word: &str, suffix: &str) -> Self {
        let mut bytes = [0u8; PIECE];
        let mut len = 0;
        let parts = [prefix.as_bytes(), word.as_bytes(), suffix.as_bytes()];
        let mut p = 0;
        while p < parts.len() {
            let mut i = 0;
            while i < parts[p].len() {
                // `KeyBuf::as_str` relies on this: every byte a key buffer ever holds is ASCII.
                assert!(parts[p][i].is_ascii(), "key words are ASCII");
                bytes[len] = parts[p][i];
                len += 1;
                i += 1;
            }
            p += 1;
        }
        Self { bytes, len }
    }

    /// `prefix + words[j] + suffix` for each word.
    const fn each<const N: usize>(prefix: &str, words: [&str; N], suffix: &str) -> [Self; N] {
        let mut out = [Self::join("", "", ""); N];
        let mut j = 0;
        while j < N {
            out[j] = Self::join(prefix, words[j], suffix);
            j += 1;
        }
        out
    }
}

const ARTICLE: Piece = Piece::join("article-", "", "");
const SCHEMES: [Piece; 2] = Piece::each("", ["https://", "http://"], "");
const HOST_PIECES: [Piece; HOSTS.len()] = Piece::each("", HOSTS, "");
const SEGMENT_PIECES: [Piece; SEGMENTS.len()] = Piece::each("/", SEGMENTS, "");
const URL_ID: Piece = Piece::join("?id=", "", "");
const LANG_PIECES: [Piece; LANGS.len()] = Piece::each("&lang=", LANGS, "&v=");

/// One generated key, built on the stack and appended to its batch at once: one UTF-8 check and
/// one copy per key instead of a `push_str` per word (the `url` key set's nine `push_str` calls
/// were a quarter of a `url` query's time).
struct KeyBuf {
    buf: [u8; KEY_BUF],
    len: usize,
}

impl KeyBuf {
    fn new() -> Self {
        Self {
            buf: [0; KEY_BUF],
            len: 0,
        }
    }

    /// The key built so far.
    #[inline]
    fn as_str(&self) -> &str {
        let key = &self.buf[..self.len];
        debug_assert!(key.is_ascii());
        // SAFETY: every byte of `buf` is ASCII, hence any prefix of it is UTF-8: it starts zeroed,
        // and is written only with `Piece` bytes (ASCII words and zero padding, asserted when the
        // pieces are built at compile time) and digits from `DIGIT_PAIRS` and `HEX_PAIRS`. The
        // checked conversion cost 16% of a `url` query (a profile of `sbbf/xxh3`, n = 1e6).
        unsafe { std::str::from_utf8_unchecked(key) }
    }
}

/// Writes one key into a [`KeyBuf`]'s bytes, its length a local (kept in a register: stored in
/// the buffer's struct, it was reloaded after every word's store, a chain through the whole key;
/// the scale fill's computation went from 25.7M to 26.3M keys/s/core).
struct KeyWriter<'a> {
    buf: &'a mut [u8; KEY_BUF],
    len: usize,
}

impl<'a> KeyWriter<'a> {
    fn new(buf: &'a mut [u8; KEY_BUF]) -> Self {
        Self { buf, len: 0 }
    }

    /// Appends `p`. Every generated key leaves [`PIECE`] bytes of room after its last word.
    #[inline]
    fn piece(&mut self, p: &Piece) {
        self.buf[self.len..self.len + PIECE].copy_from_slice(&p.bytes);
        self.len += p.len;
    }

    /// Writes `url` key `i` from its random word `r`.
    #[inline(always)]
    fn url(&mut self, i: u64, r: u64) {
        self.piece(&SCHEMES[(r & 1) as usize]);
        self.piece(&HOST_PIECES[(r >> 1) as usize % HOSTS.len()]);
        let depth = 1 + (r >> 4) as usize % 3;
        for d in 0..depth {
            self.piece(&SEGMENT_PIECES[(r >> (8 + 4 * d)) as usize % SEGMENTS.len()]);
        }
        self.piece(&URL_ID);
        self.decimal(i);
        self.piece(&LANG_PIECES[(r >> 24) as usize % LANGS.len()]);
        self.decimal((r >> 32) % 100);
    }

    /// Appends `i` in decimal: the bytes `write!(_, "{i}")` writes, two digits per step.
    #[inline(always)]
    fn decimal(&mut self, i: u64) {
        let digits = i.checked_ilog10().map_or(1, |d| d as usize + 1);
        let out = &mut self.buf[self.len..self.len + digits];
        let mut x = i;
        let mut end = digits;
        while x >= 100 {
            let pair = (x % 100) as usize * 2;
            x /= 100;
            end -= 2;
            out[end..end + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        }
        if x >= 10 {
            let pair = x as usize * 2;
            out[..2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        } else {
            out[0] = b'0' + x as u8;
        }
        self.len += digits;
    }

    /// Appends `x` as 16 lowercase hex digits, zero-padded: the bytes of `format!("{x:016x}")`.
    #[inline]
    fn hex16(&mut self, x: u64) {
        let out = &mut self.buf[self.len..self.len + 16];
        for (j, pair) in out.chunks_exact_mut(2).enumerate() {
            let byte = (x >> (56 - 8 * j)) as u8 as usize * 2;
            pair.copy_from_slice(&HEX_PAIRS[byte..byte + 2]);
        }
        self.len += 16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(batch: &Batch) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        batch.for_each_bytes(|b| out.push(b.to_vec()));
        out
    }

    /// `fill_at` and `for_each_key` give each index the key `fill` gives it, whatever the order
    /// or repeats.
    #[test]
    fn keys_at_chosen_indices_are_the_keys_at_those_positions() {
        for kind in [
            KeySetKind::RandomU64,
            KeySetKind::Article,
            KeySetKind::Url,
            KeySetKind::Hex,
        ] {
            let set = KeySet::new(kind.clone(), 42).unwrap();
            let mut run = set.new_batch();
            set.fill(100, 50, &mut run);
            let run = keys(&run);
            let indices = [149u64, 100, 120, 120, 137];
            let mut at = set.new_batch();
            set.fill_at(indices, &mut at);
            let expected: Vec<Vec<u8>> = indices
                .iter()
                .map(|&i| run[(i - 100) as usize].clone())
                .collect();
            assert_eq!(keys(&at), expected, "{kind}");
            let mut each = Vec::new();
            set.for_each_key(indices, |b| each.push(b.to_vec()));
            assert_eq!(each, expected, "{kind}: for_each_key");
        }
    }

    /// `url` keys, generated [`KEY_BLOCK`] at a time by `for_each_key`, are `fill`'s keys over
    /// runs of every length around the block's (a last block full, short or empty) and at
    /// indices past 10^10, repeats included.
    #[test]
    fn url_keys_in_blocks_are_the_keys_one_at_a_time() {
        let set = KeySet::new(KeySetKind::Url, 7).unwrap();
        let mut batch = set.new_batch();
        for start in [0, 9_999_999_990] {
            set.fill(start, 3 * KEY_BLOCK + 1, &mut batch);
            let run = keys(&batch);
            for len in [
                0,
                1,
                KEY_BLOCK - 1,
                KEY_BLOCK,
                KEY_BLOCK + 1,
                3 * KEY_BLOCK + 1,
            ] {
                let mut each = Vec::new();
                set.for_each_key(start..start + len as u64, |b| each.push(b.to_vec()));
                assert_eq!(each, run[..len], "from {start}, {len} keys");
            }
            let indices: Vec<u64> = (0..2 * KEY_BLOCK as u64 + 3)
                .map(|j| start + (j * 37) % (3 * KEY_BLOCK as u64 + 1))
                .collect();
            let mut each = Vec::new();
            set.for_each_key(indices.iter().copied(), |b| each.push(b.to_vec()));
            let expected: Vec<Vec<u8>> = indices
                .iter()
                .map(|&i| run[(i - start) as usize].clone())
                .collect();
            assert_eq!(each, expected, "from {start}, chosen indices");
        }
    }

    /// The keys as the formatting machinery writes them (the generator before it wrote digits
    /// itself): the hand-written writers must give these bytes exactly, or every string row's
    /// statistics would change.
    fn formatted_key(set: &KeySet, i: u64) -> String {
        use std::fmt::Write as _;
        let mut t = String::new();
        match set.kind() {
            KeySetKind::Article => write!(t, "article-{i}").unwrap(),
            KeySetKind::Url => {
                let r = set.key_rng(i).next_u64();
                let scheme = if r & 1 == 0 { "https" } else { "http" };
                let host = HOSTS[(r >> 1) as usize % HOSTS.len()];
                write!(t, "{scheme}://{host}").unwrap();
                for d in 0..1 + (r >> 4) as usize % 3 {
                    let seg = SEGMENTS[(r >> (8 + 4 * d)) as usize % SEGMENTS.len()];
                    write!(t, "/{seg}").unwrap();
                }
                let lang = LANGS[(r >> 24) as usize % LANGS.len()];
                write!(t, "?id={i}&lang={lang}&v={}", (r >> 32) % 100).unwrap();
            }
            KeySetKind::Hex => {
                let mut rng = set.key_rng(i);
                write!(t, "{:016x}", set.u64_key(i)).unwrap();
                for _ in 0..3 {
                    write!(t, "{:016x}", rng.next_u64()).unwrap();
                }
            }
            other => unreachable!("{other} is not a generated string key set"),
        }
        t
    }

    #[test]
    fn string_keys_are_the_bytes_the_formatting_machinery_writes() {
        let mut indices: Vec<u64> = (0..2_000).collect();
        // Every decimal length, and the edges of each.
        for digits in 1..=20u32 {
            let low = 10u64.saturating_pow(digits - 1);
            indices.extend([low, low.saturating_add(1), low.saturating_mul(10) - 1]);
        }
        indices.extend([u64::MAX, u64::MAX - 1, 1 << 63, 9_999_999_999]);
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        indices.extend((0..5_000).map(|_| rng.next_u64() >> (rng.next_u64() % 64)));
        for kind in [KeySetKind::Article, KeySetKind::Url, KeySetKind::Hex] {
            let set = KeySet::new(kind.clone(), 11).unwrap();
            let mut batch = set.new_batch();
            set.fill_at(indices.iter().copied(), &mut batch);
            let Batch::Str(got) = &batch else {
                unreachable!("string key sets have string batches")
            };
            for (key, &i) in got.iter().zip(&indices) {
                assert_eq!(key, formatted_key(&set, i), "{kind} key {i}");
            }
            assert_eq!(got.len(), indices.len());
        }
    }

    /// A range of a batch gives the keys at those positions, for both representations, from the
    /// first key, from the middle and to the end, and an empty range gives none; read ahead
    /// (prefetching past the range's end, even past the batch's) too.
    #[test]
    fn a_range_of_a_batch_is_those_keys() {
        for kind in [KeySetKind::RandomU64, KeySetKind::Url] {
            let set = KeySet::new(kind.clone(), 4).unwrap();
            let mut batch = set.new_batch();
            set.fill(10, 40, &mut batch);
            let all = keys(&batch);
            for range in [0..40, 0..1, 7..23, 39..40, 12..12] {
                let mut got = Vec::new();
                batch.for_each_bytes_in(range.clone(), |k| got.push(k.to_vec()));
                assert_eq!(got, all[range.clone()], "{kind} {range:?}");
                let mut ahead = Vec::new();
                batch.for_each_bytes_in_ahead(range.clone(), |k| ahead.push(k.to_vec()));
                assert_eq!(
                    ahead, got,
                    "{kind} {range:?}: reading ahead visits the same keys"
                );
            }
            let held = batch.heap_bytes();
            batch.shrink_to_fit();
            assert!(batch.heap_bytes() <= held, "{kind}");
            assert_eq!(keys(&batch), all, "{kind}: shrinking keeps the keys");
        }
    }

    /// The bench's strings come from the same writer as the `article` key set.
    #[test]
    fn indexed_strings_are_the_article_keys_with_another_prefix() {
        let set = KeySet::new(KeySetKind::Article, 7).unwrap();
        let mut article = set.new_batch();
        set.fill(0, 3, &mut article);
        let mut own = StrBatch::default();
        for i in 0..3 {
            own.push_indexed("article-", i);
        }
        assert_eq!(article, Batch::Str(own.clone()));
        own.push_indexed("article-content-hash-", 18_446_744_073_709_551_615);
        assert_eq!(
            own.iter().collect::<Vec<_>>(),
            [
                "article-0",
                "article-1",
                "article-2",
                "article-content-hash-18446744073709551615"
            ]
        );
    }

    #[test]
    fn a_non_utf8_key_file_is_refused_at_its_line_and_column() {
        let path = std::env::temp_dir().join(format!("bloomlab-keys-{}.txt", std::process::id()));
        std::fs::write(&path, b"alpha\nbeta\nga\xffmma\n").unwrap();
        let err = FileKeys::read(&path).unwrap_err().to_string();
        std::fs::remove_file(&path).unwrap();
        assert!(
            err.contains("line 3, column 3")
                && err.contains("0xff")
                && err.contains("bloomlab-keys"),
            "{err}"
        );
    }

    #[test]
    fn key_lines_are_read_up_to_the_stated_maximum_and_no_further() {
        let read_all = |bytes: &[u8]| {
            let mut reader = std::io::BufReader::new(bytes);
            let (mut line, mut out) = (Vec::new(), Vec::new());
            loop {
                match read_key_line(&mut reader, &mut line) {
                    Ok(true) => out.push(line.len()),
                    Ok(false) => return Ok(out),
                    Err(e) => return Err(e),
                }
            }
        };
        let max = vec![b'k'; MAX_KEY_BYTES];
        // The longest key, with either line ending or none, then a short one.
        for end in [&b"\n"[..], b"\r\n"] {
            let text = [&max[..], end, b"ab\r\n"].concat();
            assert_eq!(read_all(&text), Ok(vec![MAX_KEY_BYTES, 2]));
        }
        assert_eq!(read_all(&max), Ok(vec![MAX_KEY_BYTES]));
        // One byte more is refused, with or without a line break, quoting a short prefix.
        for text in [[&max[..], b"k\n"].concat(), [&max[..], b"kk"].concat()] {
            let err = read_all(&text).unwrap_err();
            assert!(err.contains("longer than 1048576 bytes"), "{err:.200}");
            assert!(err.len() < 300, "{} bytes", err.len());
        }
        assert_eq!(
            quote_prefix(&[b'x'; 100]),
            format!("{:?}... (100 bytes in all)", "x".repeat(QUOTED_BYTES))
        );
        assert_eq!(quote_prefix(b"ab"), "\"ab\"");
    }
}
