//! The 16-bit form of a move, as the table stores it, and a move's piece and target square,
//! which histories are indexed by.

use shakmaty::{Color, Move, Role};

/// A moving piece (colour and role) and its target square: what continuation histories and
/// the continuation correction are indexed by, `0..PIECE_TO`.
pub type PieceTo = usize;
pub const PIECE_TO: usize = 12 * 64;

/// The moves one and two plies before a node, as piece-to indices (`None` before the root
/// or after a null move).
pub type Continuations = [Option<PieceTo>; 2];

/// The piece-to index of `mv` played by `color`.
pub fn piece_to(color: Color, mv: Move) -> PieceTo {
    piece_index(color, mv.role()) * 64 + mv.to() as usize
}

/// A piece as `0..12`: white pawn to king, then black.
pub fn piece_index(color: Color, role: Role) -> usize {
    role as usize - 1 + 6 * color as usize
}

/// The 16-bit form of a move: from (6 bits), to (6 bits; the rook for castling), promotion
/// role (4 bits). Only ever compared with the legal moves of a position, never played as it is.
pub fn encode_move(mv: Move) -> u16 {
    let from = mv.from().map_or(0, |sq| sq as u16);
    let promotion = mv.promotion().map_or(0, |role| role as u16);
    from | (mv.to() as u16) << 6 | promotion << 12
}
