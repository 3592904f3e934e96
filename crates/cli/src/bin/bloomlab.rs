//! `bloomlab`: tools for Bloom filter files. Thin: parse flags, call the library, map the outcome
//! to an exit code (0 ok, 1 a check failed, 2 bad input, 130 interrupted).

use std::process::ExitCode;

use bloomlab_cli::guava;
use clap::{Parser, Subcommand};

/// Read, write, inspect and audit Bloom filter files.
///
/// Files written (`guava build`, `guava union`) are written whole or not at all: a temporary file
/// beside --out, fsynced, then renamed over it, so a failure (a full disk) leaves an earlier file
/// as it was.
///
/// Exit status: 0 ok, 1 a check failed (e.g. an audit found a missing member), 2 bad input
/// (unreadable or corrupt file, malformed key, invalid flag, an output that cannot be written),
/// 130 interrupted (Ctrl-C).
#[derive(Debug, Parser)]
#[command(name = "bloomlab", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Guava `BloomFilter` files (`writeTo`/`readFrom` format), bit-for-bit as Guava 31.1.
    #[command(subcommand)]
    Guava(guava::GuavaCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Guava(cmd) => guava::run(cmd),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("bloomlab: {failure}");
            failure.exit_code()
        }
    }
}
