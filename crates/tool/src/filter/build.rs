//! `filter build`: a filter built offline, in memory, from a key file, and written as a file that
//! `filter import` loads (or `swap --from-file` switches to): the bits a Redis filter of the same
//! layout, n and p would hold after `add` of the same keys.

use std::path::PathBuf;
use std::process::ExitCode;

use bloomlab_filters::BitPositions;
use bloomlab_harness::bloom::preflight::{MemoryBudget, MemoryNeed, check_memory};
use bloomlab_redis::config::DEFAULT_SHARD_BITS;
use bloomlab_redis::{Config, RedisVisitor, dump};
use clap::Args;

use super::dump::{FileFormat, describe};
use super::live::redis_variant;
use super::{Failure, KeySource, Outcome, bad, for_each_batch};

/// Flags of `filter build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    source: KeySource,
    /// The file to write, whole or not at all (a temporary file beside it, then renamed).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// The layout, as `filter create` names it.
    #[arg(long, default_value_t = super::default_variant())]
    layout: String,
    /// Expected distinct keys the filter is sized for, 1 to 2^53 (e.g. 1e6).
    #[arg(long, value_parser = bloomlab_cli::count_parser("--n", 1))]
    n: u64,
    /// Target false-positive rate at n keys, in the open interval (0, 1).
    #[arg(long, value_parser = bloomlab_cli::float_parser("--p"))]
    p: f64,
    /// Bits per shard recorded in the file (an import may choose others), a multiple of 512 up
    /// to 2^32.
    #[arg(long, default_value_t = DEFAULT_SHARD_BITS)]
    shard_bits: u64,
    /// The file's format.
    #[arg(long, value_enum, default_value_t = FileFormat::Bloomlab)]
    format: FileFormat,
    /// The most memory the filter's bit array may take, in bytes. Default: what the machine
    /// reports available (MemAvailable); a filter larger than that is refused before anything
    /// is allocated.
    #[arg(long, value_name = "BYTES")]
    memory_limit: Option<u64>,
}

/// `filter build`.
pub fn build(a: &BuildArgs) -> Outcome {
    let variant = redis_variant(&a.layout)?;
    let config = bloomlab_redis::visit(
        &variant,
        Sized {
            n: a.n,
            p: a.p,
            shard_bits: a.shard_bits,
        },
    )??;
    let need = MemoryNeed {
        bytes: config.bits / 8,
        detail: format!(
            "the bit array of {} bits ({variant}, n = {}, p = {})",
            config.bits, a.n, a.p
        ),
    };
    check_memory(
        &need,
        &MemoryBudget::detect(a.memory_limit),
        "--memory-limit",
    )
    .map_err(|e| bad(e.to_string()))?;
    let mut bits = vec![0u8; (config.bits / 8) as usize];
    let count = bloomlab_redis::visit(
        &variant,
        Fill {
            config: &config,
            bits: &mut bits,
            source: &a.source,
        },
    )??;
    let summary = dump::write_bits(&config, &mut bits, &a.out, a.format.into())
        .map_err(|e| bad(e.to_string()))?;
    println!(
        "built {} from {count} keys: {}",
        a.out.display(),
        describe(&summary, a.format)?
    );
    Ok(ExitCode::SUCCESS)
}

/// The config a Redis filter of the variant would get for (n, p).
struct Sized {
    n: u64,
    p: f64,
    shard_bits: u64,
}

impl RedisVisitor for Sized {
    type Output = Result<Config, Failure>;
    fn visit<F: BitPositions>(self) -> Self::Output {
        Ok(Config::sized::<F>(self.n, self.p, self.shard_bits)?)
    }
}

/// Sets every key's positions in `bits`, as the variant's Redis filter sets them.
struct Fill<'a> {
    config: &'a Config,
    bits: &'a mut [u8],
    source: &'a KeySource,
}

impl RedisVisitor for Fill<'_> {
    type Output = Result<u64, Failure>;
    fn visit<F: BitPositions>(self) -> Self::Output {
        let (m, k) = (self.config.bits, self.config.hashes);
        let bits = self.bits;
        for_each_batch(self.source, |keys| {
            for key in keys {
                F::for_each_position(m, k, F::digest_of(key), |g| {
                    bits[(g / 8) as usize] |= 1 << (g % 8);
                });
            }
            Ok(())
        })
    }
}
