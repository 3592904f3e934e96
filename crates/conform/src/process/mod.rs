//! The conformance process protocol, version 1: how a filter in any language joins the suite.
//!
//! bloomlab starts the adapter's command and talks to it over the adapter's **stdin** (requests)
//! and **stdout** (answers). The adapter may write anything to **stderr**; bloomlab keeps the last
//! lines and shows them when the adapter fails. One request at a time: bloomlab waits for each
//! answer before sending the next request.
//!
//! # Frames
//! Every request and every answer is one frame: a `u32` little-endian length `L`
//! (`1 <= L <= 2^30`), then `L` bytes. A request's first byte is its **opcode**, an answer's first
//! byte its **status**; the rest is the payload. All integers are little-endian.
//!
//! A *key list* is a `u32` count, then for each key a `u32` length and that many bytes (keys are
//! arbitrary bytes; empty keys and keys of 64 KiB occur).
//!
//! # Requests
//! | op | name | payload | answer payload when OK |
//! |----|------|---------|------------------------|
//! | `0x01` | HELLO | the 16 ASCII bytes `bloomlab-conform`, then `u16` protocol version (1) | UTF-8 JSON: `{"protocol": 1, "name": "...", "version": "...", "language": "...", "capabilities": [...], "supports": {"n": [1, 1000000000], "p": [1e-9, 0.5]}}` (`supports` optional) |
//! | `0x02` | CREATE | `u64` n, then `f64` p (IEEE-754 bits; NaN, 0, 1 and negatives are sent as is) | empty |
//! | `0x03` | INSERT | a key list | empty |
//! | `0x04` | QUERY | a key list | a bitmap of `ceil(count / 8)` bytes: key `i` is bit `i % 8` (least significant first) of byte `i / 8`; 1 means "maybe present" |
//! | `0x05` | STATS | empty | UTF-8 JSON [`Stats`](crate::Stats): `{"memory_bytes": 1234 or null, "layout": {"layout": "classic", "bits": 9586, "hashes": 7} or null}` |
//! | `0x06` | SERIALIZE | empty | the filter's bytes |
//! | `0x07` | DESERIALIZE | bytes from SERIALIZE | empty; the filter read replaces the current one |
//! | `0x08` | CLOSE | empty | empty; then the adapter exits with status 0 |
//!
//! CREATE replaces the current filter. INSERT, QUERY, STATS and SERIALIZE before any CREATE or
//! DESERIALIZE are answered with ERROR.
//!
//! `capabilities` lists any of `serialize` (SERIALIZE and DESERIALIZE work), `stats` (STATS
//! reports something), `static` (keys are buffered and the filter is built at the first QUERY),
//! `growable` (the filter grows past n and keeps p: held to p up to 64x n); see
//! [`Capabilities`](crate::Capabilities). `supports`, when given, is the inclusive range of n and p
//! the adapter accepts ([`Supports`](crate::Supports)); inside it (or, without it, for every
//! n >= 1 and p in (0, 1)) an ERROR, a crash or a hang on CREATE, INSERT or QUERY breaks the
//! accepts-valid-input clause. A range that is empty or leaves (0, 1) is a protocol failure.
//!
//! # Answers
//! | status | meaning | payload |
//! |--------|---------|---------|
//! | `0x00` | OK | as in the table above |
//! | `0x01` | ERROR: the library refused (returned an error, threw an exception) | its UTF-8 message |
//! | `0x02` | UNSUPPORTED: the adapter does not offer this request | UTF-8 name of the request |
//! | `0x03` | PANIC: a Rust library panicked (used by [`serve`]; other languages answer ERROR for an exception) | the panic message |
//!
//! # Failures bloomlab reports
//! Each names the adapter and the request in flight, with the adapter's last stderr lines: the
//! command cannot start; the handshake's magic or version is wrong; a frame is longer than 2^30 or
//! shorter than 1; a status is unknown; a bitmap has the wrong size; JSON does not parse; the
//! adapter exits or closes stdout (its exit status or signal is given); an answer takes longer than
//! the time limit (10 s for HELLO, configurable for the rest), after which bloomlab kills the
//! process. A hung or crashed adapter never hangs bloomlab.
//!
//! # Decisions where the table above is silent
//! - HELLO's `protocol` must equal [`VERSION`]; a different value is a protocol failure. An
//!   adapter that gets other magic bytes or a version it cannot speak answers ERROR, which
//!   bloomlab reports as a refusal ([`CandidateError::Refused`](crate::CandidateError::Refused))
//!   and stops the adapter.
//! - The time limit of every request after HELLO is [`Command::timeout`] ([`DEFAULT_TIMEOUT`]
//!   unless set); HELLO's is [`HELLO_TIMEOUT`]. The timer starts when the request is handed to
//!   the writer, so an adapter that stops reading its stdin times out too.
//! - `capabilities` may name only `serialize`, `stats`, `static` and `growable`; any other name is a protocol
//!   failure (a misspelt capability would otherwise silently skip a clause). Extra JSON fields in
//!   HELLO and STATS are ignored.
//! - An opcode the adapter does not know is answered UNSUPPORTED (payload `opcode N`), so a later
//!   version's requests fail cleanly.
//! - UNSUPPORTED to STATS means "nothing known" ([`Stats::default`](crate::Stats)) and to SERIALIZE
//!   means "cannot serialize" (`None`), as for an in-process candidate; to INSERT, QUERY or CREATE
//!   it is [`CandidateError::Unsupported`](crate::CandidateError::Unsupported).
//! - ERROR, UNSUPPORTED and PANIC leave the adapter running; every other failure (timeout, exit,
//!   bad frame, wrong bitmap size, bad JSON, a non-empty OK payload where the table says empty,
//!   unknown status) stops it: bloomlab kills and reaps it, and later requests to that instance
//!   return the same error. A refused HELLO also stops it.
//! - Each build and each DESERIALIZE of [`ProcessCandidate`] starts its own process, which must
//!   introduce itself in HELLO exactly as the first one did.
//! - A batch that does not fit one frame is not split: it is an error naming the limit.
//! - Each adapter runs in its own process group (so a wrapper script's children are killed with
//!   it), which a terminal's Ctrl-C does not reach: a program that may exit with requests in
//!   flight (interrupted, or after a bad-input case reported as a hang) calls [`stop_all`] first,
//!   which kills and reaps every adapter still running; `bloomlab conform` does on every exit.
//! - Only stdout carries frames: an adapter whose library prints must send the prints to stderr
//!   (`bloomlab_conform.protocol` does this).
//!
//! # Writing an adapter
//! From a Python or Node test, `bloomlab_conform.check(MyFilter)` (the `bloomlab` wheel) or
//! `check(modulePath)` (the `bloomlab-conform` npm package) serves the filter with this protocol
//! itself (`crates/conform/python`, `crates/conform/node`). For an adapter script, copy
//! `scripts/conform/exact_set.py` (it serves with `bloomlab_conform.protocol`); in Rust,
//! implement [`Candidate`](crate::Candidate) and call [`serve`] from `main`, as the
//! `conform-exact-adapter` and `conform-null-adapter` binaries do.

use std::ffi::OsString;
use std::time::Duration;

pub(crate) mod child;
mod client;
mod serve;
mod wire;

pub use child::stop_all;
pub use client::ProcessCandidate;
pub use serve::serve;

/// The protocol version this bloomlab speaks.
pub const VERSION: u16 = 1;
/// The handshake's magic bytes.
pub const MAGIC: &[u8; 16] = b"bloomlab-conform";
/// The largest frame either side may send.
pub const MAX_FRAME: u32 = 1 << 30;
/// Time limit of HELLO (starting an interpreter or a JVM included).
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// Time limit of every later request unless [`Command::with_timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Request opcodes.
#[allow(missing_docs)]
pub mod op {
    pub const HELLO: u8 = 0x01;
    pub const CREATE: u8 = 0x02;
    pub const INSERT: u8 = 0x03;
    pub const QUERY: u8 = 0x04;
    pub const STATS: u8 = 0x05;
    pub const SERIALIZE: u8 = 0x06;
    pub const DESERIALIZE: u8 = 0x07;
    pub const CLOSE: u8 = 0x08;
}

/// Answer statuses.
#[allow(missing_docs)]
pub mod status {
    pub const OK: u8 = 0x00;
    pub const ERROR: u8 = 0x01;
    pub const UNSUPPORTED: u8 = 0x02;
    pub const PANIC: u8 = 0x03;
}

/// How to start an adapter.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The program and its arguments.
    pub argv: Vec<OsString>,
    /// Time limit of each request after HELLO.
    pub timeout: Duration,
}

impl Command {
    /// `argv` (program first) with [`DEFAULT_TIMEOUT`].
    pub fn new<S: Into<OsString>>(argv: impl IntoIterator<Item = S>) -> Self {
        Command {
            argv: argv.into_iter().map(Into::into).collect(),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The same with `timeout` for each request after HELLO.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The command line as text, for messages.
    pub fn display(&self) -> String {
        let words: Vec<_> = self.argv.iter().map(|a| a.to_string_lossy()).collect();
        words.join(" ")
    }
}
