//! The Redis store against real servers, in one test binary (one build and link instead of one per
//! file): `server` (one server: bytes, answers, config checks, damage, racing clients, round
//! trips), `cluster` (a 3-master cluster), `big` (a filter past 2^32 bits), `dump` (export and
//! import), `faults` (a server stopped mid-run) and `generation` (rebuild and swap under
//! readers). What each needs and how it says it was skipped is in `common`.

mod big;
mod cluster;
mod common;
mod dump;
mod faults;
mod fresh;
mod generation;
mod hll;
mod server;
