//! `bloomlab`: tools for Bloom filter files. Thin: parse flags, call the library, map the outcome
//! to an exit code (0 ok, 1 a check failed, 2 bad input, 3 a server failed, 130 interrupted).

use std::process::ExitCode;

use bloomlab_tool::{conform, filter, guava};
use clap::{Parser, Subcommand};

/// Read, write, inspect and audit Bloom filter files.
///
/// Files written (`guava build`, `guava union`) are written whole or not at all: a temporary file
/// beside --out, fsynced, then renamed over it, so a failure (a full disk) leaves an earlier file
/// as it was.
///
/// Exit status: 0 ok, 1 a check failed (e.g. an audit found a missing member), 2 bad input
/// (unreadable or corrupt file, malformed key, invalid flag, an output that cannot be written,
/// credentials a server refuses), 3 a server failed, not the input (Redis could not be reached,
/// or went away or refused a command mid-run: "server failure:"), 130 interrupted (Ctrl-C).
/// `filter monitor` has its own statuses (its --help).
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
    /// Operate a live filter in Redis or in a file: create, add, check, drop, describe, stat,
    /// monitor, export, import, swap.
    #[command(subcommand)]
    Filter(filter::FilterCommand),
    // The about and long help are ConformArgs' own (a doc comment here would replace them).
    Conform(conform::ConformArgs),
}

fn main() -> ExitCode {
    let cli = Cli::try_parse();
    // Rust ignores SIGPIPE, so a println! into a closed pipe (`bloomlab filter check ... | head`)
    // would panic. Restore the default: the process ends quietly, as `cat` would. Not for
    // `conform`, which writes to adapters' pipes: an adapter that dies (or that an interrupt
    // kills) while a request is on its way must be an error about that adapter, not a SIGPIPE
    // that ends bloomlab with no verdict and no exit status of its own.
    if !matches!(
        cli,
        Ok(Cli {
            command: Command::Conform(_)
        })
    ) {
        // SAFETY: before any other thread exists (parsing starts none); SIG_DFL is a valid
        // disposition for SIGPIPE.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let cli = match cli {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // A monitoring agent reads 2 as "critical": a monitor command it cannot parse is
            // "unknown" (3). Help and version requests are not errors.
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ if is_monitor() => filter::Status::Unknown.exit_code(),
                _ => ExitCode::from(2),
            };
        }
    };
    match cli.command {
        Command::Guava(cmd) => match guava::run(cmd) {
            Ok(()) => ExitCode::SUCCESS,
            Err(failure) => {
                eprintln!("bloomlab: {failure}");
                failure.exit_code()
            }
        },
        Command::Conform(args) => conform::run(args).unwrap_or_else(|failure| {
            eprintln!("bloomlab: {failure}");
            failure.exit_code()
        }),
        Command::Filter(cmd) => match filter::run(cmd) {
            Ok(code) => code,
            Err(failure) => {
                eprintln!("bloomlab: {failure}");
                failure.exit_code()
            }
        },
    }
}

/// Whether the command line asks for `filter monitor`.
fn is_monitor() -> bool {
    let args: Vec<String> = std::env::args().skip(1).take(2).collect();
    args == ["filter", "monitor"]
}
