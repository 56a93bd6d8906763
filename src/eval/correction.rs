//! How far searches found the static evaluation off, learned by each search thread and kept
//! from one search of a game to the next: the evaluation side of the search's seam corrects
//! every static evaluation by it.

use crate::board::Board;
use crate::types::{Continuations, PIECE_TO};
use shakmaty::{Bitboard, Color, Position};

/// The keys a position's correction is looked up by: its pawns (a Zobrist key), each side's
/// pieces other than pawns, the minor pieces and kings, and the two moves that led to it.
/// Positions that share one of these tend to share the evaluation's errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keys {
    pawn: u64,
    /// Indexed by colour (`Color as usize`).
    non_pawn: [u64; 2],
    minor: u64,
    /// `previous piece-to * PIECE_TO + last piece-to`, where both moves were made.
    continuation: Option<usize>,
}

impl Keys {
    /// The keys of `board`'s position, reached by the moves `before` (one and two plies back).
    pub fn of(board: &Board, before: Continuations) -> Keys {
        let b = board.pos().board();
        let side = |color: Color| {
            let ours = b.by_color(color);
            mix(&[
                b.knights() & ours,
                b.bishops() & ours,
                b.rooks() & ours,
                b.queens() & ours,
                b.kings() & ours,
            ])
        };
        let mut non_pawn = [0; 2];
        for color in Color::ALL {
            non_pawn[color as usize] = side(color);
        }
        let (white, black) = (b.white(), b.black());
        let minor = mix(&[
            b.knights() & white,
            b.bishops() & white,
            b.kings() & white,
            b.knights() & black,
            b.bishops() & black,
            b.kings() & black,
        ]);
        let continuation = match before {
            [Some(last), Some(previous)] => Some(previous * PIECE_TO + last),
            _ => None,
        };
        Keys {
            pawn: board.pawn_key(),
            non_pawn,
            minor,
            continuation,
        }
    }
}

/// A 64-bit hash of bitboards in which every bit of every board reaches the high bits: each
/// step is a bijection of the running hash for a given board, so positions that differ in one
/// board always differ before the finaliser, which is a bijection too (the finaliser of
/// MurmurHash3, constants from Austin Appleby's public-domain reference).
fn mix(boards: &[Bitboard]) -> u64 {
    let mut h: u64 = 0;
    for board in boards {
        h = (h.rotate_left(23) ^ board.0).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Entries per side to move in each keyed table.
const SIZE_BITS: u32 = 14;
const SIZE: usize = 1 << SIZE_BITS;
/// Entries are kept in 1/GRAIN centipawns.
const GRAIN: i32 = 256;
/// Each entry stays within +-64 centipawns.
const ENTRY_MAX: i32 = 64 * GRAIN;
/// An update's step (of 256) grows with the search depth up to this.
const STEP_MAX: i32 = 16;
/// Each table's weight in the correction, of 64: the correction is the weighted sum of the
/// position's entries, and each entry learns from what the sum left over, in proportion to
/// its weight (a linear model fitted by stochastic gradient descent).
const WEIGHT_PAWN: i32 = 64;
const WEIGHT_NON_PAWN: i32 = 48;
const WEIGHT_MINOR: i32 = 48;
const WEIGHT_CONTINUATION: i32 = 40;

/// The entry of a key: its high bits (a Zobrist key's are as good as its low ones, and a
/// `mix`ed key's depend on every input bit).
fn index(key: u64) -> usize {
    (key >> (64 - SIZE_BITS)) as usize
}

/// Where each table starts in `Correction::entries`.
const PAWN: usize = 0;
const NON_PAWN: usize = PAWN + 2 * SIZE;
const MINOR: usize = NON_PAWN + 4 * SIZE;
const CONTINUATION: usize = MINOR + 2 * SIZE;
const LEN: usize = CONTINUATION + PIECE_TO * PIECE_TO;

/// How far searches found the static evaluation off, by side to move and by the pawns, each
/// side's other pieces, the minor pieces and kings, and the two moves before: a position's
/// correction is the weighted sum of its entries in these tables. It corrects evaluations
/// and has no part in move ordering.
pub struct Correction {
    /// The tables one after another, in 1/GRAIN centipawns:
    /// pawns `[side to move][index(pawn key)]`,
    /// other pieces `[side to move][colour][index(that colour's key)]`,
    /// minor pieces `[side to move][index(minor key)]`,
    /// continuation `[previous piece-to][last piece-to]` (the last move's piece gives the side
    /// to move).
    entries: Box<[i32]>,
}

impl Default for Correction {
    fn default() -> Correction {
        Correction {
            entries: vec![0; LEN].into_boxed_slice(),
        }
    }
}

impl Correction {
    /// The entries of a position with these keys, `color` to move, with their weights.
    fn slots(color: Color, keys: &Keys) -> impl Iterator<Item = (usize, i32)> {
        let us = color as usize;
        [
            Some((PAWN + us * SIZE + index(keys.pawn), WEIGHT_PAWN)),
            Some((
                NON_PAWN + (us * 2) * SIZE + index(keys.non_pawn[0]),
                WEIGHT_NON_PAWN,
            )),
            Some((
                NON_PAWN + (us * 2 + 1) * SIZE + index(keys.non_pawn[1]),
                WEIGHT_NON_PAWN,
            )),
            Some((MINOR + us * SIZE + index(keys.minor), WEIGHT_MINOR)),
            keys.continuation
                .map(|at| (CONTINUATION + at, WEIGHT_CONTINUATION)),
        ]
        .into_iter()
        .flatten()
    }

    /// The correction of a position with these keys, `color` to move, in centipawns.
    pub fn correction(&self, color: Color, keys: &Keys) -> i32 {
        let sum: i64 = Correction::slots(color, keys)
            .map(|(at, weight)| self.entries[at] as i64 * weight as i64)
            .sum();
        (sum / (64 * GRAIN as i64)) as i32
    }

    /// `raw`, the static evaluation, moved by what searches of positions that share its keys
    /// found it to be off.
    pub fn corrected(&self, color: Color, keys: &Keys, raw: i32) -> i32 {
        raw + self.correction(color, keys)
    }

    /// A search of `depth` found the position worth `residual` centipawns more than its
    /// corrected static evaluation: each entry moves by its weight's share to close the gap,
    /// more for deeper searches, and stays within +-64 centipawns.
    pub fn update(&mut self, color: Color, keys: &Keys, depth: i32, residual: i32) {
        let step = (depth + 1).min(STEP_MAX) as i64;
        let residual = residual.clamp(-ENTRY_MAX / GRAIN, ENTRY_MAX / GRAIN) as i64 * GRAIN as i64;
        for (at, weight) in Correction::slots(color, keys) {
            let entry = &mut self.entries[at];
            let moved = *entry as i64 + residual * weight as i64 * step / (64 * 256);
            *entry = (moved as i32).clamp(-ENTRY_MAX, ENTRY_MAX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Board;
    use shakmaty::CastlingMode;

    fn keys(fen: &str, before: Continuations) -> Keys {
        let board = Board::from_fen(fen, CastlingMode::Standard).unwrap();
        Keys::of(&board, before)
    }

    /// A FEN with the white king on a8, the black king on h1 and `extra` (a square index in
    /// FEN order, a8 = 0, and a piece letter) besides; the side to move is the other colour
    /// than the extra piece's, which may give check.
    fn kings_and(extra: Option<(usize, char)>) -> String {
        let mut squares = ['.'; 64];
        squares[0] = 'K';
        squares[63] = 'k';
        if let Some((at, piece)) = extra {
            squares[at] = piece;
        }
        let ranks: Vec<String> = squares
            .chunks(8)
            .map(|rank| {
                let mut text = String::new();
                let mut empty = 0;
                for &c in rank {
                    if c == '.' {
                        empty += 1;
                    } else {
                        if empty > 0 {
                            text.push_str(&empty.to_string());
                            empty = 0;
                        }
                        text.push(c);
                    }
                }
                if empty > 0 {
                    text.push_str(&empty.to_string());
                }
                text
            })
            .collect();
        let turn = match extra {
            Some((_, piece)) if piece.is_ascii_uppercase() => 'b',
            _ => 'w',
        };
        format!("{} {turn} - - 0 1", ranks.join("/"))
    }

    /// Positions that differ by one pawn, of either colour, on any square a pawn may stand on,
    /// use different entries: passed pawns on the sixth and seventh ranks, where the evaluation
    /// errs most, must not share an entry with positions that lack them.
    #[test]
    fn every_pawn_moves_the_entry() {
        let base = index(keys(&kings_and(None), [None; 2]).pawn);
        let mut checked = 0;
        for piece in ['P', 'p'] {
            // FEN order: index 8 is a7, index 55 is h2; ranks 2 to 7.
            for at in 8..56 {
                let fen = kings_and(Some((at, piece)));
                assert_ne!(index(keys(&fen, [None; 2]).pawn), base, "{fen}");
                checked += 1;
            }
        }
        assert_eq!(checked, 2 * 48);
    }

    /// A knight, bishop, rook or queen of either colour on any free square moves that colour's
    /// entry and leaves the other colour's; a knight or bishop moves the minor pieces' entry.
    #[test]
    fn every_piece_moves_its_entries() {
        let base = keys(&kings_and(None), [None; 2]);
        let mut checked = 0;
        for piece in ['N', 'B', 'R', 'Q', 'n', 'b', 'r', 'q'] {
            let (ours, theirs) = if piece.is_ascii_uppercase() {
                (Color::White as usize, Color::Black as usize)
            } else {
                (Color::Black as usize, Color::White as usize)
            };
            let minor = matches!(piece.to_ascii_lowercase(), 'n' | 'b');
            for at in 1..63 {
                let fen = kings_and(Some((at, piece)));
                let with = keys(&fen, [None; 2]);
                assert_ne!(
                    index(with.non_pawn[ours]),
                    index(base.non_pawn[ours]),
                    "{fen}"
                );
                assert_eq!(with.non_pawn[theirs], base.non_pawn[theirs], "{fen}");
                assert_eq!(with.pawn, base.pawn, "{fen}");
                if minor {
                    assert_ne!(index(with.minor), index(base.minor), "{fen}");
                } else {
                    assert_eq!(with.minor, base.minor, "{fen}");
                }
                checked += 1;
            }
        }
        assert_eq!(checked, 8 * 62);
    }

    #[test]
    fn the_continuation_key_needs_both_moves() {
        let fen = kings_and(None);
        assert_eq!(keys(&fen, [Some(3), None]).continuation, None);
        assert_eq!(keys(&fen, [None, Some(3)]).continuation, None);
        let a = keys(&fen, [Some(3), Some(700)]).continuation.unwrap();
        let b = keys(&fen, [Some(700), Some(3)]).continuation.unwrap();
        assert_ne!(a, b);
        assert!(a.max(b) < PIECE_TO * PIECE_TO);
    }

    #[test]
    fn correction_follows_search_results_within_its_bound() {
        let mut correction = Correction::default();
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let ours = keys(start, [Some(100), Some(200)]);
        let other = keys(&kings_and(None), [None; 2]);
        assert_eq!(correction.corrected(Color::White, &ours, 50), 50);
        // Deep searches keep finding the position 40 cp better than its raw evaluation: the
        // weighted entries together learn the gap.
        for _ in 0..200 {
            let residual = 50 + 40 - correction.corrected(Color::White, &ours, 50);
            correction.update(Color::White, &ours, 12, residual);
        }
        let corrected = correction.corrected(Color::White, &ours, 50);
        assert!((87..=90).contains(&corrected), "{corrected}");
        // Only that side to move and positions that share a key are corrected (the
        // continuation entry is the side's by the last move's piece, so leave it out here).
        let ours_after_null = keys(start, [None; 2]);
        assert_eq!(correction.corrected(Color::Black, &ours_after_null, 50), 50);
        assert_eq!(correction.corrected(Color::White, &other, 50), 50);
        // However wrong the evaluation looks, each entry stays within 64 cp: the weights
        // (64 + 3 x 48 + 40) / 64 bound the whole correction at 248 cp.
        for _ in 0..2000 {
            correction.update(Color::White, &ours, 20, -5000);
        }
        assert_eq!(correction.corrected(Color::White, &ours, 0), -248);
    }
}
