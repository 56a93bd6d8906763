//! The 16-bit form of a move, as the table stores it.

use shakmaty::Move;

/// The 16-bit form of a move: from (6 bits), to (6 bits; the rook for castling), promotion
/// role (4 bits). Only ever compared with the legal moves of a position, never played as it is.
pub fn encode_move(mv: Move) -> u16 {
    let from = mv.from().map_or(0, |sq| sq as u16);
    let promotion = mv.promotion().map_or(0, |role| role as u16);
    from | (mv.to() as u16) << 6 | promotion << 12
}
