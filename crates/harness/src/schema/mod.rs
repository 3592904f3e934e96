//! Files shared between a producer and a consumer in other crates: the criterion bench's log that
//! `bench-table` reads ([`mod@bench`]), and the Redis round-trip samples `redis-costs` writes and the
//! report plots ([`roundtrip`]).

pub mod bench;
pub mod roundtrip;
