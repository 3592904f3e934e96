//! TEMPORARY stand-in for task FILL's module (replaced at merge): the same names.
#![allow(missing_docs)]
use crate::error::{BloomError, Result};
use crate::filter::Geometry;

#[derive(Debug, Clone, PartialEq)]
pub struct FillStat {
    pub geometry: Geometry,
    pub set_bits: u64,
    pub implied_fpr: f64,
}

pub struct FillCounter {
    geometry: Geometry,
    bytes: Vec<u8>,
}

impl FillCounter {
    pub fn new(geometry: Geometry) -> Self {
        Self {
            geometry,
            bytes: Vec::new(),
        }
    }
    pub fn feed(&mut self, chunk: &[u8]) -> Result<()> {
        self.bytes.extend_from_slice(chunk);
        Ok(())
    }
    pub fn finish(self) -> Result<FillStat> {
        FillStat::from_bytes(self.geometry, &self.bytes)
    }
}

impl FillStat {
    pub fn from_bytes(geometry: Geometry, bytes: &[u8]) -> Result<Self> {
        let set_bits = bytes.iter().map(|b| u64::from(b.count_ones())).sum();
        Ok(Self {
            geometry,
            set_bits,
            implied_fpr: geometry.fpr_given_bytes(bytes),
        })
    }
    pub fn fill(&self) -> f64 {
        self.set_bits as f64 / self.geometry.bits() as f64
    }
    pub fn estimated_count(&self) -> f64 {
        -(self.geometry.bits() as f64 / f64::from(self.geometry.hashes())) * (-self.fill()).ln_1p()
    }
    pub fn count_interval(&self, _c: f64) -> Result<(f64, f64)> {
        Err(BloomError::InvalidCount { n: 0 })
    }
    pub fn keys_to_rate(&self, _p: f64) -> f64 {
        f64::NAN
    }
    pub fn keys_to_fill(&self, _f: f64) -> f64 {
        f64::NAN
    }
}
