//! The Bloom filter sweep: a plan of rows ([`sweep`]), each row one trial ([`trial`]) or one
//! workload run ([`workload`]: churn, grow), written as [`row::SweepRow`]s; the timing of filled
//! filters ([`timing`]); the checks made before anything runs ([`preflight`]); and the FPR gate
//! that re-runs committed points ([`gate`]). Imports flow one way: `preflight` -> `sweep` ->
//! `workload` -> `trial` -> `timing`, `row`; `gate` -> `workload`, `trial`.

pub mod gate;
pub mod preflight;
pub mod row;
pub mod sweep;
pub mod timing;
pub mod trial;
pub mod workload;
