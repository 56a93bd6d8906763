//! Endings the evaluations are not trusted with: a lone king against a queen or a rook. Both
//! evaluations know such a position is won but give the search no way towards the mate, which
//! needs the lone king driven to the edge with the other king close; searches of a few thousand
//! nodes a move, and even of twenty thousand, drew KR v K by the fifty-move rule. Here the
//! score says how far along that way a position is.

use super::piece_value;
use shakmaty::{Chess, Color, Position, Role, Square};

/// The base of a won lone-king ending's score: above any middlegame advantage, far below the
/// decisive range that mates and tablebase wins hold.
const LONE_KING_WIN: i32 = 2_000;

/// The score of `pos` from the side to move where one side has only its king and the other a
/// queen or a rook (and whatever else): the stronger side's material, and more the nearer the
/// lone king is to a corner and the closer the two kings stand. `None` for any other position.
pub fn lone_king(pos: &Chess) -> Option<i32> {
    let board = pos.board();
    let alone = |color: Color| board.by_color(color) == board.kings() & board.by_color(color);
    let winner = match (alone(Color::White), alone(Color::Black)) {
        (false, true) => Color::White,
        (true, false) => Color::Black,
        _ => return None,
    };
    let ours = board.by_color(winner);
    if (ours & (board.queens() | board.rooks())).is_empty() {
        return None;
    }
    let material: i32 = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
    ]
    .into_iter()
    .map(|role| (ours & board.by_role(role)).count() as i32 * piece_value(role))
    .sum();
    let strong_king = board.king_of(winner)?;
    let lone = board.king_of(!winner)?;
    let score = LONE_KING_WIN
        + material
        + 40 * from_centre(lone)
        + 20 * (7 - strong_king.distance(lone) as i32);
    Some(if pos.turn() == winner { score } else { -score })
}

/// How far `sq` is from the four centre squares, by file plus by rank: 0 there, 6 in a corner.
fn from_centre(sq: Square) -> i32 {
    let off = |coordinate: u32| (3 - coordinate as i32).max(coordinate as i32 - 4);
    off(sq.file() as u32) + off(sq.rank() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{fen::Fen, CastlingMode};

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn only_a_lone_king_against_a_queen_or_rook_is_scored() {
        assert!(lone_king(&pos("8/8/8/4k3/8/8/8/4K2R w - - 0 1")).is_some());
        assert!(lone_king(&pos("8/8/8/4k3/8/8/8/Q3K3 b - - 0 1")).is_some());
        // Minor pieces and pawns alone are left to the evaluations; so is any other material.
        assert_eq!(lone_king(&pos("8/8/8/4k3/8/8/8/2B1K1N1 w - - 0 1")), None);
        assert_eq!(lone_king(&pos("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1")), None);
        assert_eq!(lone_king(&pos("8/8/8/4k3/8/8/4p3/4K2R w - - 0 1")), None);
        assert_eq!(
            lone_king(&pos(
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
            )),
            None
        );
    }

    #[test]
    fn the_score_leads_the_lone_king_to_the_edge_and_the_kings_together() {
        // The winner's view: positive for it to move, the negation for the lone king.
        let centre = lone_king(&pos("8/8/8/4k3/8/8/8/R3K3 w - - 0 1")).unwrap();
        let edge = lone_king(&pos("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")).unwrap();
        let corner = lone_king(&pos("7k/8/8/8/8/8/8/R3K3 w - - 0 1")).unwrap();
        assert!(centre < edge && edge < corner, "{centre} {edge} {corner}");
        let far = lone_king(&pos("7k/8/8/8/8/8/8/K5R1 w - - 0 1")).unwrap();
        let near = lone_king(&pos("7k/8/5K2/8/8/8/8/6R1 w - - 0 1")).unwrap();
        assert!(far < near, "{far} {near}");
        assert_eq!(
            lone_king(&pos("7k/8/5K2/8/8/8/8/6R1 b - - 0 1")).unwrap(),
            -near
        );
        // A queen is worth more than a rook, and the whole stays far from the decisive range.
        let queen = lone_king(&pos("7k/8/5K2/8/8/8/Q7/8 w - - 0 1")).unwrap();
        assert!(queen > near && queen < crate::types::DECISIVE / 4);
    }
}
