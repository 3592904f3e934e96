//! Limits shared by the trial runner, the group key store, the timing phase and the scale run.
//!
//! They live here, not in the first file that needed them, so that those files import a leaf
//! module instead of each other.

/// Keys generated per batch: bounds a trial's key memory whatever its query count.
pub const GEN_BATCH: usize = 1 << 16;
