//! `bloomlab filter ...`: operate a live filter (issue 29).

pub mod parquet;
