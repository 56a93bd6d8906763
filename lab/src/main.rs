//! `ferrite-lab`: the trainer, the tuner and the data tools on the command line. Each
//! command's arguments and their checks live with the command.

use clap::{Parser, Subcommand};
use ferrite_lab::{data, datagen, from_pgn, train, tune};
use std::process::ExitCode;

/// Ferrite's lab: trains the network and tunes the hand-crafted evaluation on the games
/// `ferrite-lab datagen` plays, and checks and converts that data.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play self-play games with the engine's search for training data, appended to a
    /// viriformat file game by game.
    Datagen(datagen::Args),
    /// Train a network on self-play positions and write the quantised file the engine loads.
    Train(train::Args),
    /// Tune the hand-crafted evaluation's weights on labelled positions (Texel's method).
    Tune(tune::Args),
    /// Count the games, positions and duplicate games of data files, and fit the scale K of
    /// their scores.
    Check(data::CheckArgs),
    /// Write every position of viriformat files to stdout as text lines `FEN | score | result
    /// | move` (White's view).
    Export(data::ExportArgs),
    /// Convert PGN files (fastchess's, or OpenBench's DATAGEN uploads, decompressed) to
    /// viriformat, each move scored by its comment; a game that cannot be read whole is
    /// skipped and reported.
    FromPgn(from_pgn::Args),
}

fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Datagen(args) => datagen::command(args)?,
        Command::Train(args) => train::command(args)?,
        Command::Tune(args) => tune::command(args)?,
        Command::Check(args) => data::check_command(args)?,
        Command::Export(args) => data::export_command(args)?,
        Command::FromPgn(args) => from_pgn::command(args)?,
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
