//! `bench-table`: criterion's estimates and the bench's memory records -> the Markdown report
//! `reports/bloom_vs_hashset.md`.

pub mod input;
pub mod render;

#[cfg(test)]
mod tests;
