//! `ferrite perft`: leaf-node counts of the legal move tree, the standard check of a move
//! generator (and here of shakmaty's, as used by the engine).

use shakmaty::{uci::UciMove, CastlingMode, Chess, Position};

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
