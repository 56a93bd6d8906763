//! Static evaluation in centipawns from the side to move: tapered middlegame/endgame
//! material and piece-square tables, mobility, pawn structure, king safety, bishop pair and
//! rooks on open files.

use shakmaty::{attacks, Bitboard, Board, Chess, Color, Position, Role, Square};

/// A middlegame and an endgame value, blended by the game phase.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Score(i32, i32);

impl std::ops::AddAssign for Score {
    fn add_assign(&mut self, other: Score) {
        self.0 += other.0;
        self.1 += other.1;
    }
}

impl std::ops::Mul<i32> for Score {
    type Output = Score;
    fn mul(self, k: i32) -> Score {
        Score(self.0 * k, self.1 * k)
    }
}

// Material and piece-square tables: Ronald Friederich's PeSTO values, as published on the
// Chess Programming Wiki ("PeSTO's Evaluation Function") and in the CCC thread "New uci
// engine: Rofchade" (2018). Tables read like a diagram: index 0 is a8, 63 is h1.
const MG_VALUE: [i32; 6] = [82, 337, 365, 477, 1025, 0];
const EG_VALUE: [i32; 6] = [94, 281, 297, 512, 936, 0];

#[rustfmt::skip]
const MG_TABLE: [[i32; 64]; 6] = [
    [0, 0, 0, 0, 0, 0, 0, 0, 98, 134, 61, 95, 68, 126, 34, -11, -6, 7, 26, 31, 65, 56, 25, -20,
     -14, 13, 6, 21, 23, 12, 17, -23, -27, -2, -5, 12, 17, 6, 10, -25, -26, -4, -4, -10, 3, 3, 33, -12,
     -35, -1, -20, -23, -15, 24, 38, -22, 0, 0, 0, 0, 0, 0, 0, 0],
    [-167, -89, -34, -49, 61, -97, -15, -107, -73, -41, 72, 36, 23, 62, 7, -17, -47, 60, 37, 65, 84, 129, 73, 44,
     -9, 17, 19, 53, 37, 69, 18, 22, -13, 4, 16, 13, 28, 19, 21, -8, -23, -9, 12, 10, 19, 17, 25, -16,
     -29, -53, -12, -3, -1, 18, -14, -19, -105, -21, -58, -33, -17, -28, -19, -23],
    [-29, 4, -82, -37, -25, -42, 7, -8, -26, 16, -18, -13, 30, 59, 18, -47, -16, 37, 43, 40, 35, 50, 37, -2,
     -4, 5, 19, 50, 37, 37, 7, -2, -6, 13, 13, 26, 34, 12, 10, 4, 0, 15, 15, 15, 14, 27, 18, 10,
     4, 15, 16, 0, 7, 21, 33, 1, -33, -3, -14, -21, -13, -12, -39, -21],
    [32, 42, 32, 51, 63, 9, 31, 43, 27, 32, 58, 62, 80, 67, 26, 44, -5, 19, 26, 36, 17, 45, 61, 16,
     -24, -11, 7, 26, 24, 35, -8, -20, -36, -26, -12, -1, 9, -7, 6, -23, -45, -25, -16, -17, 3, 0, -5, -33,
     -44, -16, -20, -9, -1, 11, -6, -71, -19, -13, 1, 17, 16, 7, -37, -26],
    [-28, 0, 29, 12, 59, 44, 43, 45, -24, -39, -5, 1, -16, 57, 28, 54, -13, -17, 7, 8, 29, 56, 47, 57,
     -27, -27, -16, -16, -1, 17, -2, 1, -9, -26, -9, -10, -2, -4, 3, -3, -14, 2, -11, -2, -5, 2, 14, 5,
     -35, -8, 11, 2, 8, 15, -3, 1, -1, -18, -9, 10, -15, -25, -31, -50],
    [-65, 23, 16, -15, -56, -34, 2, 13, 29, -1, -20, -7, -8, -4, -38, -29, -9, 24, 2, -16, -20, 6, 22, -22,
     -17, -20, -12, -27, -30, -25, -14, -36, -49, -1, -27, -39, -46, -44, -33, -51, -14, -14, -22, -46, -44, -30, -15, -27,
     1, 7, -8, -64, -43, -16, 9, 8, -15, 36, 12, -54, 8, -28, 24, 14],
];

#[rustfmt::skip]
const EG_TABLE: [[i32; 64]; 6] = [
    [0, 0, 0, 0, 0, 0, 0, 0, 178, 173, 158, 134, 147, 132, 165, 187, 94, 100, 85, 67, 56, 53, 82, 84,
     32, 24, 13, 5, -2, 4, 17, 17, 13, 9, -3, -7, -7, -8, 3, -1, 4, 7, -6, 1, 0, -5, -1, -8,
     13, 8, 8, 10, 13, 0, 2, -7, 0, 0, 0, 0, 0, 0, 0, 0],
    [-58, -38, -13, -28, -31, -27, -63, -99, -25, -8, -25, -2, -9, -25, -24, -52, -24, -20, 10, 9, -1, -9, -19, -41,
     -17, 3, 22, 22, 22, 11, 8, -18, -18, -6, 16, 25, 16, 17, 4, -18, -23, -3, -1, 15, 10, -3, -20, -22,
     -42, -20, -10, -5, -2, -20, -23, -44, -29, -51, -23, -15, -22, -18, -50, -64],
    [-14, -21, -11, -8, -7, -9, -17, -24, -8, -4, 7, -12, -3, -13, -4, -14, 2, -8, 0, -1, -2, 6, 0, 4,
     -3, 9, 12, 9, 14, 10, 3, 2, -6, 3, 13, 19, 7, 10, -3, -9, -12, -3, 8, 10, 13, 3, -7, -15,
     -14, -18, -7, -1, 4, -9, -15, -27, -23, -9, -23, -5, -9, -16, -5, -17],
    [13, 10, 18, 15, 12, 12, 8, 5, 11, 13, 13, 11, -3, 3, 8, 3, 7, 7, 7, 5, 4, -3, -5, -3,
     4, 3, 13, 1, 2, 1, -1, 2, 3, 5, 8, 4, -5, -6, -8, -11, -4, 0, -5, -1, -7, -12, -8, -16,
     -6, -6, 0, 2, -9, -9, -11, -3, -9, 2, 3, -1, -5, -13, 4, -20],
    [-9, 22, 22, 27, 27, 19, 10, 20, -17, 20, 32, 41, 58, 25, 30, 0, -20, 6, 9, 49, 47, 35, 19, 9,
     3, 22, 24, 45, 57, 40, 57, 36, -18, 28, 19, 47, 31, 34, 39, 23, -16, -27, 15, 6, 9, 17, 10, 5,
     -22, -23, -30, -16, -16, -23, -36, -32, -33, -28, -22, -43, -5, -32, -20, -41],
    [-74, -35, -18, -18, -11, 15, 4, -17, -12, 17, 14, 17, 17, 38, 23, 11, 10, 17, 23, 15, 20, 45, 44, 13,
     -8, 22, 24, 27, 26, 33, 26, 3, -18, -4, 21, 24, 27, 23, 9, -11, -19, -3, 11, 21, 23, 16, 7, -9,
     -27, -11, 4, 13, 14, 4, -5, -17, -53, -34, -21, -11, -28, -14, -24, -43],
];

const PHASE_WEIGHT: [i32; 6] = [0, 1, 1, 2, 4, 0];
const PHASE_MAX: i32 = 24;

// Positional terms (centipawns, middlegame and endgame), set by hand here.
const MOBILITY: [Score; 6] = [
    Score(0, 0),
    Score(4, 4),
    Score(5, 5),
    Score(2, 4),
    Score(1, 2),
    Score(0, 0),
];
/// Squares a piece of each kind typically reaches, so mobility is centred on zero.
const MOBILITY_BASE: [i32; 6] = [0, 4, 6, 7, 13, 0];
const PASSED: [Score; 8] = [
    Score(0, 0),
    Score(2, 8),
    Score(4, 12),
    Score(8, 22),
    Score(20, 40),
    Score(40, 75),
    Score(70, 120),
    Score(0, 0),
];
const ISOLATED: Score = Score(-12, -14);
const DOUBLED: Score = Score(-8, -20);
const BISHOP_PAIR: Score = Score(28, 50);
const ROOK_OPEN: Score = Score(28, 10);
const ROOK_SEMI_OPEN: Score = Score(12, 6);
const SHIELD_PAWN: Score = Score(10, 0);
/// Pressure on the zone around the king, by attacking piece kind.
const KING_ATTACK_WEIGHT: [i32; 6] = [0, 2, 2, 3, 5, 0];
const TEMPO: i32 = 12;

fn square_index(sq: Square, color: Color) -> usize {
    // Tables are written from White's side with a8 first; flip for White, as-is for Black.
    match color {
        Color::White => sq as usize ^ 56,
        Color::Black => sq as usize,
    }
}

fn file_mask(file: u32) -> Bitboard {
    Bitboard(0x0101_0101_0101_0101 << file)
}

fn adjacent_files(file: u32) -> Bitboard {
    let mut mask = Bitboard::EMPTY;
    if file > 0 {
        mask |= file_mask(file - 1);
    }
    if file < 7 {
        mask |= file_mask(file + 1);
    }
    mask
}

/// Squares strictly in front of `sq` from `color`'s point of view, on files `files`.
fn ahead(sq: Square, color: Color, files: Bitboard) -> Bitboard {
    let rank = sq.rank().to_u32();
    let ranks = match color {
        Color::White if rank < 7 => Bitboard(!0u64 << (8 * (rank + 1))),
        Color::Black if rank > 0 => Bitboard(!0u64 >> (8 * (8 - rank))),
        _ => Bitboard::EMPTY,
    };
    ranks & files
}

fn pawn_attacks_of(board: &Board, color: Color) -> Bitboard {
    board
        .by_piece(Role::Pawn.of(color))
        .into_iter()
        .fold(Bitboard::EMPTY, |acc, sq| {
            acc | attacks::pawn_attacks(color, sq)
        })
}

fn side_score(board: &Board, us: Color, phase: &mut i32) -> Score {
    let them = !us;
    let occupied = board.occupied();
    let our_pawns = board.by_piece(Role::Pawn.of(us));
    let their_pawns = board.by_piece(Role::Pawn.of(them));
    let mobility_area = !board.by_color(us) & !pawn_attacks_of(board, them);
    let their_king = board.king_of(them);
    let king_zone = their_king.map_or(Bitboard::EMPTY, attacks::king_attacks);
    let mut score = Score::default();
    let mut attack_units = 0;
    let mut attackers = 0;

    for sq in board.by_color(us) {
        let role = board.role_at(sq).expect("occupied square");
        let r = role as usize - 1;
        let index = square_index(sq, us);
        score += Score(
            MG_VALUE[r] + MG_TABLE[r][index],
            EG_VALUE[r] + EG_TABLE[r][index],
        );
        *phase += PHASE_WEIGHT[r];
        let file = sq.file().to_u32();
        match role {
            Role::Pawn => {
                let relative_rank = match us {
                    Color::White => sq.rank().to_u32(),
                    Color::Black => 7 - sq.rank().to_u32(),
                };
                if (adjacent_files(file) & our_pawns).is_empty() {
                    score += ISOLATED;
                }
                if (ahead(sq, us, file_mask(file)) & our_pawns).any() {
                    score += DOUBLED;
                } else if (ahead(sq, us, file_mask(file) | adjacent_files(file)) & their_pawns)
                    .is_empty()
                {
                    score += PASSED[relative_rank as usize];
                }
            }
            Role::King => {
                let shield = attacks::king_attacks(sq) & our_pawns;
                score += SHIELD_PAWN * shield.count() as i32;
            }
            _ => {
                let reach = attacks::attacks(sq, role.of(us), occupied);
                let mobility = (reach & mobility_area).count() as i32 - MOBILITY_BASE[r];
                score += MOBILITY[r] * mobility;
                let hits = (reach & king_zone).count() as i32;
                if hits > 0 {
                    attackers += 1;
                    attack_units += KING_ATTACK_WEIGHT[r] * hits;
                }
                if role == Role::Rook && (file_mask(file) & our_pawns).is_empty() {
                    score += if (file_mask(file) & their_pawns).is_empty() {
                        ROOK_OPEN
                    } else {
                        ROOK_SEMI_OPEN
                    };
                }
            }
        }
    }
    if (board.by_piece(Role::Bishop.of(us))).count() >= 2 {
        score += BISHOP_PAIR;
    }
    // One attacker alone is rarely dangerous; the danger grows with the square of the pressure.
    if attackers >= 2 {
        score += Score(attack_units * attack_units / 4, 0);
    }
    score
}

/// The static evaluation from the side to move's point of view.
pub fn evaluate(pos: &Chess) -> i32 {
    let board = pos.board();
    let mut phase = 0;
    let white = side_score(board, Color::White, &mut phase);
    let black = side_score(board, Color::Black, &mut phase);
    let mg = white.0 - black.0;
    let eg = white.1 - black.1;
    let phase = phase.min(PHASE_MAX);
    let blended = (mg * phase + eg * (PHASE_MAX - phase)) / PHASE_MAX;
    let score = match pos.turn() {
        Color::White => blended,
        Color::Black => -blended,
    };
    score + TEMPO
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{fen::Fen, CastlingMode};

    fn eval_fen(fen: &str) -> i32 {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        evaluate(&pos)
    }

    #[test]
    fn start_position_is_balanced_and_symmetric() {
        let white = eval_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        let black = eval_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1");
        assert_eq!(white, TEMPO);
        assert_eq!(black, TEMPO);
    }

    #[test]
    fn mirrored_positions_score_the_same() {
        let a = eval_fen("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5");
        let b = eval_fen("rnbqk2r/ppp2ppp/3p1n2/2b1p3/2B1P3/2N2N2/PPPP1PPP/R1BQK2R b KQkq - 1 5");
        assert_eq!(a, b);
    }

    #[test]
    fn extra_material_and_advanced_passers_count() {
        assert!(eval_fen("4k3/8/8/8/8/8/8/R3K3 w - - 0 1") > 400);
        assert!(eval_fen("4k3/8/8/8/8/8/8/R3K3 b - - 0 1") < -400);
        let far = eval_fen("4k3/8/8/8/8/8/P7/4K3 w - - 0 1");
        let near = eval_fen("4k3/P7/8/8/8/8/8/4K3 w - - 0 1");
        assert!(near > far + 100, "{near} vs {far}");
    }
}
