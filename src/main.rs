//! The engine's command line: UCI without a subcommand (or with UCI commands as arguments, as
//! OpenBench calls engines), and the tools a tester runs beside it. Each command's arguments
//! and their checks live with the command in `tools`.

use clap::{Parser, Subcommand};
use ferrite::tools::{bench, genfens, perft, tt_bench};
use ferrite::uci;
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
    /// Search every bench position to a fixed depth; prints the node count and nps.
    Bench(bench::Args),
    /// Count the leaf nodes of the legal move tree, per root move and in total.
    Perft(perft::Args),
    /// Print the search parameters as OpenBench's SPSA input (name, int, value, min, max, step,
    /// learning rate); a build with `--features tune` takes each as a UCI option.
    Params,
    /// Measure the transposition table alone: 4 KiB vs 2 MiB pages, prefetch, clear.
    TtBench(tt_bench::Args),
}

fn run(command: Option<Command>) -> anyhow::Result<()> {
    match command {
        None => uci::run()?,
        Some(Command::Bench(args)) => bench::command(args)?,
        Some(Command::Perft(args)) => perft::command(args)?,
        Some(Command::Params) => print!("{}", ferrite::params::spsa_list()),
        Some(Command::TtBench(args)) => tt_bench::command(args)?,
    }
    Ok(())
}

/// Runs the UCI commands given as arguments, one command each (`ferrite "genfens 10 seed 1
/// book None" quit`, as OpenBench asks for openings), instead of reading them from stdin.
/// `genfens` is answered here, the rest by the UCI engine.
fn run_commands(lines: &[String]) -> anyhow::Result<()> {
    uci::run_commands(lines, |line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&"genfens") {
            return Ok(false);
        }
        let request = genfens::parse(&words[1..]).map_err(anyhow::Error::msg)?;
        genfens::run(&request, ferrite::eval::Evaluation::built_in(), |fen| {
            println!("info string genfens {fen}")
        })
        .map_err(anyhow::Error::msg)?;
        Ok(true)
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let commands = args
        .first()
        .and_then(|first| first.split_whitespace().next())
        .is_some_and(|word| word == "genfens" || uci::is_command(word));
    let outcome = if commands {
        run_commands(&args)
    } else {
        run(Cli::parse().command)
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
