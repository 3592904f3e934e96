//! bloomlab's side of the protocol: [`ProcessCandidate`] and the instance it builds.

use std::time::Duration;

use serde::Deserialize;

use crate::candidate::{
    About, Candidate, CandidateError, Capabilities, Instance, KeyBatch, Stats, Supports,
};

use super::child::{Adapter, Fatal};
use super::wire;
use super::{Command, HELLO_TIMEOUT, MAGIC, VERSION, op, status};

/// HELLO's JSON answer.
#[derive(Deserialize)]
struct Hello {
    protocol: u16,
    name: String,
    version: String,
    language: String,
    capabilities: Vec<String>,
    /// The declared range of n and p, if any.
    #[serde(default)]
    supports: Option<Supports>,
}

/// The capability names HELLO may declare.
const CAPABILITIES: [&str; 4] = ["serialize", "stats", "static", "growable"];

/// A candidate behind an adapter process. Each [`Candidate::build`] (and
/// [`Candidate::deserialize`]) starts a fresh process (so a crash in one build cannot poison the
/// next) and the instance talks to it until dropped, when it sends CLOSE and, if the process does
/// not exit within a second, kills it by its pid. Every process is waited for.
pub struct ProcessCandidate {
    command: Command,
    about: About,
}

impl ProcessCandidate {
    /// Starts the command once for the handshake (name, version, capabilities), then closes it.
    /// Errors: the command cannot start ([`CandidateError::Io`]), no answer within 10 s
    /// (`Timeout`), an exit (`Exited`), a wrong or unparsable answer (`Protocol`), a refused
    /// HELLO (`Refused`).
    pub fn connect(command: Command) -> Result<Self, CandidateError> {
        let mut adapter = Adapter::spawn(&command)?;
        let about = hello(&mut adapter)?;
        adapter.close();
        Ok(ProcessCandidate { command, about })
    }

    /// How it is started.
    pub fn command(&self) -> &Command {
        &self.command
    }

    /// A fresh process that passed HELLO as the same subject.
    fn start(&self) -> Result<Adapter, CandidateError> {
        let mut adapter = Adapter::spawn(&self.command)?;
        let about = hello(&mut adapter)?;
        if about != self.about {
            adapter.close();
            return Err(CandidateError::Protocol {
                subject: self.about.name.clone(),
                operation: "HELLO".into(),
                detail: format!(
                    "a new process introduced itself as {about:?}, the first as {:?}",
                    self.about
                ),
            });
        }
        Ok(adapter)
    }
}

impl Candidate for ProcessCandidate {
    fn about(&self) -> About {
        self.about.clone()
    }

    fn build(&self, n: u64, p: f64) -> Result<Box<dyn Instance>, CandidateError> {
        let mut instance = ProcessInstance {
            adapter: self.start()?,
            timeout: self.command.timeout,
        };
        let mut buf = instance.adapter.buffer();
        wire::start_frame(&mut buf, op::CREATE);
        buf.extend_from_slice(&n.to_le_bytes());
        buf.extend_from_slice(&p.to_bits().to_le_bytes());
        instance.empty("CREATE", buf)??;
        Ok(Box::new(instance))
    }

    fn isolated(&self) -> bool {
        true
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Box<dyn Instance>, CandidateError> {
        let mut instance = ProcessInstance {
            adapter: self.start()?,
            timeout: self.command.timeout,
        };
        let mut buf = instance.adapter.buffer();
        wire::start_frame(&mut buf, op::DESERIALIZE);
        buf.extend_from_slice(bytes);
        instance.empty("DESERIALIZE", buf)??;
        Ok(Box::new(instance))
    }
}

/// HELLO: checks the version and capability names, returns who the adapter is.
fn hello(adapter: &mut Adapter) -> Result<About, CandidateError> {
    let mut buf = adapter.buffer();
    wire::start_frame(&mut buf, op::HELLO);
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&VERSION.to_le_bytes());
    wire::finish_frame(&mut buf).expect("HELLO fits");
    let about = adapter.request("HELLO", buf, HELLO_TIMEOUT, |subject, frame| {
        let payload = answer(subject, "HELLO", frame)?.map_err(Fatal::Refused)?;
        let hello: Hello = json("HELLO", payload)?;
        if hello.protocol != VERSION {
            return Err(Fatal::Protocol(format!(
                "adapter speaks protocol version {}, bloomlab speaks {VERSION}",
                hello.protocol
            )));
        }
        let mut capabilities = Capabilities::default();
        for name in &hello.capabilities {
            match name.as_str() {
                "serialize" => capabilities.serialize = true,
                "stats" => capabilities.stats = true,
                "static" => capabilities.static_build = true,
                "growable" => capabilities.growable = true,
                other => {
                    return Err(Fatal::Protocol(format!(
                        "unknown capability {other:?} (known: {})",
                        CAPABILITIES.join(", ")
                    )));
                }
            }
        }
        if let Some(Err(e)) = hello.supports.as_ref().map(Supports::validate) {
            return Err(Fatal::Protocol(format!("HELLO's supports: {e}")));
        }
        Ok(About {
            name: hello.name,
            version: hello.version,
            language: hello.language,
            capabilities,
            supports: hello.supports,
        })
    })?;
    adapter.subject = about.name.clone();
    Ok(about)
}

/// Splits an answer frame: `Ok(Ok(payload))` for OK, `Ok(Err(..))` for the statuses the adapter
/// goes on after (ERROR, UNSUPPORTED, PANIC), `Err` for an unknown status.
fn answer<'a>(
    subject: &str,
    operation: &str,
    frame: &'a [u8],
) -> Result<Result<&'a [u8], CandidateError>, Fatal> {
    let (&code, payload) = frame.split_first().expect("frames are at least 1 byte");
    let message = || String::from_utf8_lossy(payload).into_owned();
    let subject = subject.to_string();
    Ok(Err(match code {
        status::OK => return Ok(Ok(payload)),
        status::ERROR => CandidateError::Refused {
            subject,
            message: message(),
        },
        // Lower case, as an in-process candidate names what it lacks (`serialize`, `insert`).
        status::UNSUPPORTED => CandidateError::Unsupported {
            subject,
            operation: operation.to_lowercase(),
        },
        status::PANIC => CandidateError::Panicked {
            subject,
            message: message(),
        },
        other => {
            return Err(Fatal::Protocol(format!(
                "unknown status 0x{other:02x} (allowed 0x00..=0x03)"
            )));
        }
    }))
}

/// A filter living in an adapter process.
struct ProcessInstance {
    adapter: Adapter,
    timeout: Duration,
}

impl ProcessInstance {
    /// Sends the request frame `buf` (opcode and payload written), reads the answer with `with`.
    fn call<T>(
        &mut self,
        operation: &str,
        mut buf: Vec<u8>,
        with: impl FnOnce(&[u8]) -> Result<T, Fatal>,
    ) -> Result<Result<T, CandidateError>, CandidateError> {
        if wire::finish_frame(&mut buf).is_none() {
            return Err(too_big(&self.adapter.subject, operation, buf.len()));
        }
        self.adapter
            .request(operation, buf, self.timeout, |subject, frame| match answer(
                subject, operation, frame,
            )? {
                Ok(payload) => with(payload).map(Ok),
                Err(e) => Ok(Err(e)),
            })
    }

    /// A request whose OK answer is empty.
    fn empty(
        &mut self,
        operation: &str,
        buf: Vec<u8>,
    ) -> Result<Result<(), CandidateError>, CandidateError> {
        self.call(operation, buf, expect_empty)
    }

    /// A request frame holding a key list.
    fn keys_frame(
        &mut self,
        opcode: u8,
        operation: &str,
        keys: &KeyBatch,
    ) -> Result<Vec<u8>, CandidateError> {
        let mut buf = self.adapter.buffer();
        wire::start_frame(&mut buf, opcode);
        match wire::put_keys(&mut buf, keys) {
            Some(()) => Ok(buf),
            None => Err(too_big(&self.adapter.subject, operation, keys.byte_len())),
        }
    }
}

/// An answer's UTF-8 JSON payload. The whole payload must be UTF-8, fields bloomlab ignores
/// included: serde_json reading bytes skips an ignored string without checking it, and the
/// protocol says UTF-8 JSON, so a library writing Latin-1 into a field bloomlab does not read
/// today would otherwise pass until the day it does.
fn json<T: serde::de::DeserializeOwned>(operation: &str, payload: &[u8]) -> Result<T, Fatal> {
    let text = std::str::from_utf8(payload).map_err(|e| {
        Fatal::Protocol(format!(
            "{operation}'s answer is not UTF-8 JSON: {e} (the protocol's JSON is UTF-8)"
        ))
    })?;
    serde_json::from_str(text).map_err(|e| {
        Fatal::Protocol(format!(
            "{operation}'s answer is not the protocol's JSON: {e}"
        ))
    })
}

fn expect_empty(payload: &[u8]) -> Result<(), Fatal> {
    if payload.is_empty() {
        Ok(())
    } else {
        Err(Fatal::Protocol(format!(
            "OK with {} payload bytes where none belong",
            payload.len()
        )))
    }
}

fn too_big(subject: &str, operation: &str, bytes: usize) -> CandidateError {
    CandidateError::Protocol {
        subject: subject.to_string(),
        operation: operation.to_string(),
        detail: format!(
            "a request of {bytes} bytes does not fit a frame (at most 2^30 bytes, 2^32 - 1 keys); send smaller batches"
        ),
    }
}

impl Instance for ProcessInstance {
    fn insert(&mut self, keys: &KeyBatch) -> Result<(), CandidateError> {
        let buf = self.keys_frame(op::INSERT, "INSERT", keys)?;
        self.call("INSERT", buf, expect_empty)?
    }

    fn query(&mut self, keys: &KeyBatch, out: &mut Vec<bool>) -> Result<(), CandidateError> {
        out.clear();
        let buf = self.keys_frame(op::QUERY, "QUERY", keys)?;
        let count = keys.len();
        self.call("QUERY", buf, |bitmap| {
            if bitmap.len() != wire::bitmap_len(count) {
                return Err(Fatal::Protocol(format!(
                    "bitmap of {} bytes for {count} keys (expected {})",
                    bitmap.len(),
                    wire::bitmap_len(count)
                )));
            }
            wire::get_bitmap(bitmap, count, out);
            Ok(())
        })?
    }

    /// UNSUPPORTED is "nothing known", as for an in-process candidate without stats.
    fn stats(&mut self) -> Result<Stats, CandidateError> {
        let mut buf = self.adapter.buffer();
        wire::start_frame(&mut buf, op::STATS);
        match self.call("STATS", buf, |payload| json::<Stats>("STATS", payload))? {
            Err(CandidateError::Unsupported { .. }) => Ok(Stats::default()),
            other => other,
        }
    }

    /// UNSUPPORTED is `None`, as for an in-process candidate that cannot serialize.
    fn serialize(&mut self) -> Result<Option<Vec<u8>>, CandidateError> {
        let mut buf = self.adapter.buffer();
        wire::start_frame(&mut buf, op::SERIALIZE);
        match self.call("SERIALIZE", buf, |bytes| Ok(bytes.to_vec()))? {
            Ok(bytes) => Ok(Some(bytes)),
            Err(CandidateError::Unsupported { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
}
