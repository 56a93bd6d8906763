//! `ferrite perft`: leaf-node counts of the legal move tree, the standard check of a move
//! generator (and here of shakmaty's, as used by the engine).

use crate::board::Board;
use shakmaty::{uci::UciMove, CastlingMode, Chess, Position};

/// `ferrite perft`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Depth in plies.
    #[arg(value_parser = clap::value_parser!(u32).range(0..=12))]
    depth: u32,
    /// Position to start from (default: the standard start position).
    #[arg(long)]
    fen: Option<String>,
}

/// `ferrite perft`: the count under each root move, the total and the time.
pub fn command(args: Args) -> anyhow::Result<()> {
    let board = match args.fen {
        Some(fen) => Board::from_fen(&fen, CastlingMode::Standard)?,
        None => Board::default(),
    };
    let start = std::time::Instant::now();
    let (counts, total) = divide(board.pos(), args.depth);
    for (mv, n) in counts {
        println!("{mv}: {n}");
    }
    println!();
    println!("Nodes: {total}");
    println!("Time : {:.3} s", start.elapsed().as_secs_f64());
    Ok(())
}

/// Leaf nodes `depth` plies below `pos` (bulk-counted at the last ply).
pub fn perft(pos: &Chess, depth: u32) -> u64 {
    let moves = pos.legal_moves();
    match depth {
        0 => 1,
        1 => moves.len() as u64,
        _ => moves
            .iter()
            .map(|&mv| {
                let mut child = pos.clone();
                child.play_unchecked(mv);
                perft(&child, depth - 1)
            })
            .sum(),
    }
}

/// Per-root-move counts, in UCI notation, and their total.
pub fn divide(pos: &Chess, depth: u32) -> (Vec<(String, u64)>, u64) {
    let counts: Vec<(String, u64)> = pos
        .legal_moves()
        .iter()
        .map(|&mv| {
            let mut child = pos.clone();
            child.play_unchecked(mv);
            let text = UciMove::from_move(mv, CastlingMode::Standard).to_string();
            (text, perft(&child, depth.saturating_sub(1)))
        })
        .collect();
    let total = if depth == 0 {
        1
    } else {
        counts.iter().map(|(_, n)| n).sum()
    };
    (counts, total)
}
