//! The engine's vocabulary, the ground floor every other room builds on: scores and their
//! ranges, the bound a score has against its window, the 16-bit form of a move and a move's
//! piece-to index. Nothing here imports another room of the engine.

mod moves;
mod score;

pub use moves::{encode_move, piece_index, piece_to, Continuations, PieceTo, PIECE_TO};
pub use score::{
    mate_in, mate_plies, mated_in, score_from_tt, score_to_tt, Bound, DECISIVE, INFINITY, MATE,
    MATE_BOUND, MAX_PLY, PLY_LIMIT, TB_WIN,
};
