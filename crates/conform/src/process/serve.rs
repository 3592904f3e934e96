//! The adapter's side of the protocol in Rust: [`serve`] a [`Candidate`] on stdin/stdout.

use std::any::Any;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::candidate::{About, Candidate, CandidateError, Instance, KeyBatch};

use super::wire::{self, FrameError};
use super::{MAGIC, VERSION, op, status};

/// Serves `candidate` over the protocol on this process's stdin/stdout until CLOSE or end of
/// input: how a Rust filter (bloomlab's own, a crate's, the null adapter) is reached through the
/// same door as any other language's. Panics in the candidate are caught and answered with PANIC
/// (the default panic hook still prints the panic to stderr, which bloomlab shows in errors).
/// Errors: a broken request frame (`InvalidData`) or a failed read/write; end of input is `Ok`.
pub fn serve(candidate: &dyn Candidate) -> io::Result<()> {
    serve_on(candidate, io::stdin().lock(), io::stdout().lock())
}

/// [`serve`] on any pair of streams (what the tests drive).
pub(crate) fn serve_on(
    candidate: &dyn Candidate,
    input: impl Read,
    output: impl Write,
) -> io::Result<()> {
    let mut server = Server {
        candidate,
        about: candidate.about(),
        instance: None,
        keys: KeyBatch::new(),
        answers: Vec::new(),
        out: Vec::new(),
    };
    let mut input = BufReader::with_capacity(1 << 16, input);
    let mut output = BufWriter::with_capacity(1 << 16, output);
    let mut frame = Vec::new();
    loop {
        match wire::read_frame(&mut input, &mut frame) {
            Ok(()) => {}
            Err(FrameError::Eof) => return Ok(()),
            Err(FrameError::Length(len)) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("request frame of {len} bytes (allowed 1..=2^30)"),
                ));
            }
            Err(FrameError::Io(e)) => return Err(e),
        }
        let close = frame[0] == op::CLOSE;
        server.handle(frame[0], &frame[1..]);
        output.write_all(&server.out)?;
        output.flush()?;
        if close {
            return Ok(());
        }
    }
}

struct Server<'a> {
    candidate: &'a dyn Candidate,
    about: About,
    instance: Option<Box<dyn Instance>>,
    /// Reused from request to request: no allocation per key.
    keys: KeyBatch,
    answers: Vec<bool>,
    /// The answer frame being built.
    out: Vec<u8>,
}

impl Server<'_> {
    /// Builds the answer to one request in `self.out`.
    fn handle(&mut self, opcode: u8, payload: &[u8]) {
        wire::start_frame(&mut self.out, status::OK);
        if let Err(e) = self.dispatch(opcode, payload) {
            let (code, message) = match e {
                CandidateError::Unsupported { operation, .. } => (status::UNSUPPORTED, operation),
                CandidateError::Panicked { message, .. } => (status::PANIC, message),
                CandidateError::Refused { message, .. } => (status::ERROR, message),
                other => (status::ERROR, other.to_string()),
            };
            wire::start_frame(&mut self.out, code);
            self.out.extend_from_slice(message.as_bytes());
        }
        if wire::finish_frame(&mut self.out).is_none() {
            wire::start_frame(&mut self.out, status::ERROR);
            self.out
                .extend_from_slice(b"answer larger than a frame (2^30 bytes)");
            wire::finish_frame(&mut self.out).expect("fits");
        }
    }

    fn dispatch(&mut self, opcode: u8, payload: &[u8]) -> Result<(), CandidateError> {
        let refused = |message: String| CandidateError::Refused {
            subject: self.about.name.clone(),
            message,
        };
        let unsupported = |operation: &str| CandidateError::Unsupported {
            subject: self.about.name.clone(),
            operation: operation.into(),
        };
        match opcode {
            op::HELLO => {
                let mut expected = MAGIC.to_vec();
                expected.extend_from_slice(&VERSION.to_le_bytes());
                if payload != expected {
                    return Err(refused(format!(
                        "this adapter speaks bloomlab-conform protocol {VERSION}"
                    )));
                }
                let json = hello_json(&self.about);
                self.out.extend_from_slice(json.as_bytes());
            }
            op::CREATE => {
                let (n, p) = payload
                    .split_first_chunk::<8>()
                    .and_then(|(n, rest)| {
                        Some((u64::from_le_bytes(*n), <[u8; 8]>::try_from(rest).ok()?))
                    })
                    .map(|(n, p)| (n, f64::from_bits(u64::from_le_bytes(p))))
                    .ok_or_else(|| {
                        refused(format!(
                            "CREATE needs 16 payload bytes, got {}",
                            payload.len()
                        ))
                    })?;
                self.instance = None;
                let candidate = self.candidate;
                self.instance = Some(guarded(&self.about, || candidate.build(n, p))?);
            }
            op::DESERIALIZE => {
                self.instance = None;
                let candidate = self.candidate;
                self.instance = Some(guarded(&self.about, || candidate.deserialize(payload))?);
            }
            op::CLOSE => self.instance = None,
            op::INSERT | op::QUERY | op::STATS | op::SERIALIZE => {
                self.with_instance(opcode, payload)?
            }
            other => return Err(unsupported(&format!("opcode {other}"))),
        }
        Ok(())
    }

    fn with_instance(&mut self, opcode: u8, payload: &[u8]) -> Result<(), CandidateError> {
        let subject = &self.about.name;
        let instance = self
            .instance
            .as_mut()
            .ok_or_else(|| CandidateError::Refused {
                subject: subject.clone(),
                message: "no filter yet: CREATE or DESERIALIZE first".into(),
            })?;
        let bad_keys = |detail: String| CandidateError::Refused {
            subject: subject.clone(),
            message: format!("bad key list: {detail}"),
        };
        match opcode {
            op::INSERT => {
                wire::get_keys(payload, &mut self.keys).map_err(bad_keys)?;
                guarded(&self.about, || instance.insert(&self.keys))?;
            }
            op::QUERY => {
                wire::get_keys(payload, &mut self.keys).map_err(bad_keys)?;
                guarded(&self.about, || {
                    instance.query(&self.keys, &mut self.answers)
                })?;
                if self.answers.len() != self.keys.len() {
                    return Err(CandidateError::Refused {
                        subject: subject.clone(),
                        message: format!(
                            "{} answers for {} keys",
                            self.answers.len(),
                            self.keys.len()
                        ),
                    });
                }
                wire::put_bitmap(&mut self.out, &self.answers);
            }
            op::STATS => {
                if !self.about.capabilities.stats {
                    return Err(CandidateError::Unsupported {
                        subject: subject.clone(),
                        operation: "stats".into(),
                    });
                }
                let stats = guarded(&self.about, || instance.stats())?;
                let json = serde_json::to_vec(&stats).expect("Stats serializes");
                self.out.extend_from_slice(&json);
            }
            _ => match guarded(&self.about, || instance.serialize())? {
                Some(bytes) => self.out.extend_from_slice(&bytes),
                None => {
                    return Err(CandidateError::Unsupported {
                        subject: subject.clone(),
                        operation: "serialize".into(),
                    });
                }
            },
        }
        Ok(())
    }
}

/// HELLO's JSON for `about` (capabilities a process cannot offer, concurrent and large, are left
/// out).
fn hello_json(about: &About) -> String {
    let c = about.capabilities;
    let caps: Vec<&str> = [
        (c.serialize, "serialize"),
        (c.stats, "stats"),
        (c.static_build, "static"),
        (c.growable, "growable"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    serde_json::json!({
        "protocol": VERSION,
        "name": about.name,
        "version": about.version,
        "language": about.language,
        "capabilities": caps,
        "supports": about.supports,
    })
    .to_string()
}

/// Runs `f`, turning a panic into [`CandidateError::Panicked`] with its message.
fn guarded<T>(
    about: &About,
    f: impl FnOnce() -> Result<T, CandidateError>,
) -> Result<T, CandidateError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        Err(CandidateError::Panicked {
            subject: about.name.clone(),
            message: panic_message(payload.as_ref()),
        })
    })
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::PerKey;

    /// Panics on CREATE with n = 0 and on inserting an empty key; refuses n = 1.
    struct Touchy;

    impl Candidate for Touchy {
        fn about(&self) -> About {
            About::rust("test/touchy", "0")
        }

        fn build(&self, n: u64, _p: f64) -> Result<Box<dyn Instance>, CandidateError> {
            assert!(n != 0, "n must be positive");
            if n == 1 {
                return Err(CandidateError::Refused {
                    subject: "test/touchy".into(),
                    message: "n = 1 is too small".into(),
                });
            }
            let insert: fn(&mut Vec<Vec<u8>>, &[u8]) = |set, k| {
                assert!(!k.is_empty(), "empty key");
                set.push(k.to_vec());
            };
            Ok(Box::new(PerKey::new(Vec::new(), insert, |set, k| {
                set.iter().any(|s| s == k)
            })))
        }
    }

    fn frame(bytes: &[u8]) -> Vec<u8> {
        let mut f = (bytes.len() as u32).to_le_bytes().to_vec();
        f.extend_from_slice(bytes);
        f
    }

    fn create(n: u64) -> Vec<u8> {
        let mut r = vec![op::CREATE];
        r.extend_from_slice(&n.to_le_bytes());
        r.extend_from_slice(&0.01f64.to_bits().to_le_bytes());
        frame(&r)
    }

    fn keys(ks: &[&[u8]], opcode: u8) -> Vec<u8> {
        let mut batch = KeyBatch::new();
        ks.iter().for_each(|k| batch.push(k));
        let mut r = vec![opcode];
        wire::put_keys(&mut r, &batch).unwrap();
        frame(&r)
    }

    /// Every answer frame `serve` writes for `requests`.
    fn answers(requests: &[Vec<u8>]) -> Vec<(u8, Vec<u8>)> {
        let input = requests.concat();
        let mut output = Vec::new();
        serve_on(&Touchy, &input[..], &mut output).unwrap();
        let mut rest = &output[..];
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while !rest.is_empty() {
            wire::read_frame(&mut rest, &mut buf).unwrap();
            out.push((buf[0], buf[1..].to_vec()));
        }
        out
    }

    #[test]
    fn panics_are_answered_panic_and_the_server_goes_on() {
        let got = answers(&[
            create(0),
            create(1),
            create(10),
            keys(&[b"a", b""], op::INSERT),
            keys(&[b"a", b"b", b"c"], op::QUERY),
            frame(&[op::STATS]),
            frame(&[op::SERIALIZE]),
            frame(&[op::CLOSE]),
            create(10),
        ]);
        let text = |i: usize| (got[i].0, String::from_utf8_lossy(&got[i].1).into_owned());
        assert_eq!(text(0), (status::PANIC, "n must be positive".into()));
        assert_eq!(text(1), (status::ERROR, "n = 1 is too small".into()));
        assert_eq!(got[2], (status::OK, vec![]));
        assert_eq!(text(3), (status::PANIC, "empty key".into()));
        // "a" went in before the panic on the empty key.
        assert_eq!(got[4], (status::OK, vec![0b001]));
        assert_eq!(text(5), (status::UNSUPPORTED, "stats".into()));
        assert_eq!(text(6), (status::UNSUPPORTED, "serialize".into()));
        // CLOSE is answered, and nothing after it is read.
        assert_eq!(got[7], (status::OK, vec![]));
        assert_eq!(got.len(), 8);
    }

    #[test]
    fn a_broken_request_frame_ends_serve_with_invalid_data() {
        let mut output = Vec::new();
        let e = serve_on(&Touchy, &[0u8, 0, 0, 0][..], &mut output).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("frame of 0 bytes"), "{e}");
        assert!(output.is_empty());
    }
}
