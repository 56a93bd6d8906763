use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Ferrite, a UCI chess engine. Without a subcommand it speaks UCI on stdin/stdout.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Measure the transposition table alone: 4 KiB vs 2 MiB pages, prefetch, clear.
    TtBench {
        /// Table size in MiB.
        #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
        mib: u64,
        /// Threads for the clear (at most one per core is used).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=1024))]
        threads: u64,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::TtBench { mib, threads }) => {
            ferrite::tt_bench::run(mib as usize, threads as usize).map(|report| print!("{report}"))
        }
        None => Err("no subcommand given; see --help".to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
