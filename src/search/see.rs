//! Static exchange evaluation: whether a move wins at least a given amount of material when
//! both sides keep recapturing on its square with their least valuable piece.

use crate::eval::piece_value;
use shakmaty::{attacks, Bitboard, Board, Chess, Color, Move, Position, Role, Square};

fn attackers_to(board: &Board, sq: Square, occupied: Bitboard) -> Bitboard {
    let pawns = board.pawns();
    (attacks::pawn_attacks(Color::White, sq) & pawns & board.black())
        | (attacks::pawn_attacks(Color::Black, sq) & pawns & board.white())
        | (attacks::knight_attacks(sq) & board.knights())
        | (attacks::king_attacks(sq) & board.kings())
        | (attacks::bishop_attacks(sq, occupied) & board.bishops_and_queens())
        | (attacks::rook_attacks(sq, occupied) & board.rooks_and_queens())
}

/// Whether `mv` gains at least `threshold` centipawns by exchange (pins are ignored).
pub fn see_ge(pos: &Chess, mv: Move, threshold: i32) -> bool {
    let (from, to) = match mv {
        Move::Normal { from, to, .. } | Move::EnPassant { from, to } => (from, to),
        _ => return threshold <= 0,
    };
    let board = pos.board();
    let captured = mv.capture().map_or(0, piece_value);
    let promotion_gain = mv
        .promotion()
        .map_or(0, |role| piece_value(role) - piece_value(Role::Pawn));
    // `swap` alternates between "what the mover is up if the exchange stops now" and what the
    // opponent is up; `wins` is the answer if the side that just captured is left standing.
    let mut swap = captured + promotion_gain - threshold;
    if swap < 0 {
        return false;
    }
    swap = piece_value(mv.promotion().unwrap_or(mv.role())) - swap;
    if swap <= 0 {
        return true;
    }
    let mut occupied = board.occupied() ^ Bitboard::from(from) ^ Bitboard::from(to);
    if let Move::EnPassant { .. } = mv {
        occupied ^= Bitboard::from(Square::from_coords(to.file(), from.rank()));
    }
    let mut attackers = attackers_to(board, to, occupied);
    let mut side = pos.turn();
    let mut wins = true;
    loop {
        side = !side;
        attackers &= occupied;
        let ours = attackers & board.by_color(side);
        if ours.is_empty() {
            break;
        }
        wins = !wins;
        let role = Role::ALL
            .into_iter()
            .find(|&role| (ours & board.by_role(role)).any())
            .expect("an attacker has a role");
        if role == Role::King {
            // The king may only recapture onto an undefended square.
            let defended = (attackers & board.by_color(!side)).any();
            return if defended { !wins } else { wins };
        }
        swap = piece_value(role) - swap;
        if swap < i32::from(wins) {
            break;
        }
        let attacker_sq = (ours & board.by_role(role))
            .first()
            .expect("non-empty attacker set");
        occupied ^= Bitboard::from(attacker_sq);
        // Sliders behind the piece that just captured join in (x-rays).
        attackers |= attacks::bishop_attacks(to, occupied) & board.bishops_and_queens();
        attackers |= attacks::rook_attacks(to, occupied) & board.rooks_and_queens();
    }
    wins
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{fen::Fen, uci::UciMove, CastlingMode};

    fn check(fen: &str, uci: &str, threshold: i32) -> bool {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let mv = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        see_ge(&pos, mv, threshold)
    }

    #[test]
    fn exchanges() {
        // Pawn takes an undefended knight: +320.
        let fen = "4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1";
        assert!(check(fen, "e4d5", 320));
        assert!(!check(fen, "e4d5", 321));
        // Queen takes a pawn defended by a pawn: loses material.
        let fen = "4k3/8/2p5/3p4/8/8/3Q4/4K3 w - - 0 1";
        assert!(!check(fen, "d2d5", 0));
        assert!(check(fen, "d2d5", -850));
        // Rook takes a rook defended by a rook, backed by our second rook: an even trade.
        let fen = "3rk3/3r4/8/8/8/8/3R4/3RK3 w - - 0 1";
        assert!(check(fen, "d2d7", 0));
        assert!(!check(fen, "d2d7", 1));
        // A quiet move to a square attacked by a pawn loses the piece.
        let fen = "4k3/8/4p3/8/8/2N5/8/4K3 w - - 0 1";
        assert!(!check(fen, "c3d5", 0));
        assert!(check(fen, "c3d5", -320));
        assert!(check(fen, "c3b5", 0));
        // En passant wins a pawn.
        let fen = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2";
        assert!(check(fen, "e5d6", 100));
    }
}
