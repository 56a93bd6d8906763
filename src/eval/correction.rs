//! How far searches found the static evaluation off, learned by each search thread and kept
//! from one search of a game to the next: the evaluation side of the search's seam corrects
//! every static evaluation by it.

use shakmaty::Color;

/// How far searches found the static evaluation off, by side to move and pawn structure:
/// positions that share their pawns tend to share the evaluation's errors. It corrects
/// evaluations and has no part in move ordering.
pub struct Correction {
    /// `[side to move][pawn key % CORRECTION_SIZE]`, in 1/CORRECTION_GRAIN centipawns.
    table: Box<[[i32; CORRECTION_SIZE]; 2]>,
}

impl Default for Correction {
    fn default() -> Correction {
        Correction {
            table: Box::new([[0; CORRECTION_SIZE]; 2]),
        }
    }
}

const CORRECTION_SIZE: usize = 16_384;
const CORRECTION_GRAIN: i32 = 256;
/// Corrections stay within +-64 centipawns.
const CORRECTION_MAX: i32 = 64 * CORRECTION_GRAIN;
/// An update's weight (of 256) grows with the search depth up to this.
const CORRECTION_WEIGHT_MAX: i32 = 16;

/// The entry of a pawn key: its low bits, which a Zobrist key makes depend on every pawn.
fn index(pawn_key: u64) -> usize {
    pawn_key as usize % CORRECTION_SIZE
}

impl Correction {
    /// `raw`, the static evaluation, moved by what searches of positions with the same pawns
    /// found it to be off.
    pub fn corrected(&self, color: Color, pawn_key: u64, raw: i32) -> i32 {
        let entry = self.table[color as usize][index(pawn_key)];
        raw + entry / CORRECTION_GRAIN
    }

    /// A search of `depth` found the position worth `error` more than its raw static
    /// evaluation: the entry moves that way, more for deeper searches.
    pub fn update(&mut self, color: Color, pawn_key: u64, depth: i32, error: i32) {
        let entry = &mut self.table[color as usize][index(pawn_key)];
        let weight = (depth + 1).min(CORRECTION_WEIGHT_MAX);
        let target = error.clamp(-CORRECTION_MAX, CORRECTION_MAX) * CORRECTION_GRAIN;
        let moved = (*entry * (256 - weight) + target * weight) / 256;
        *entry = moved.clamp(-CORRECTION_MAX, CORRECTION_MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Board;
    use shakmaty::CastlingMode;

    /// Positions that differ by one pawn, of either colour, on any square a pawn may stand on,
    /// use different entries: passed pawns on the sixth and seventh ranks, where the evaluation
    /// errs most, must not share an entry with positions that lack them.
    #[test]
    fn every_pawn_moves_the_entry() {
        let entry = |fen: &str| {
            let board = Board::from_fen(fen, CastlingMode::Standard).unwrap();
            index(board.pawn_key())
        };
        // Kings alone, then the same with one pawn.
        let placement = |extra: Option<(usize, char)>| {
            let mut squares = ['.'; 64];
            squares[0] = 'K'; // a8 in FEN order: rank 8 first
            squares[63] = 'k'; // h1
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
            format!("{} w - - 0 1", ranks.join("/"))
        };
        let base = entry(&placement(None));
        let mut checked = 0;
        for piece in ['P', 'p'] {
            // FEN order: index 8 is a7, index 55 is h2; ranks 2 to 7.
            for at in 8..56 {
                let fen = placement(Some((at, piece)));
                assert_ne!(entry(&fen), base, "{fen}");
                checked += 1;
            }
        }
        assert_eq!(checked, 2 * 48);
    }

    #[test]
    fn correction_follows_search_results_within_its_bound() {
        let mut correction = Correction::default();
        let (white_key, other_key) = (0x1234_5678_9abc_def0, 0x0fed_cba9_8765_4321);
        assert_eq!(correction.corrected(Color::White, white_key, 50), 50);
        // Deep searches keep finding the position 40 cp better than its evaluation.
        for _ in 0..200 {
            correction.update(Color::White, white_key, 12, 40);
        }
        let corrected = correction.corrected(Color::White, white_key, 50);
        assert!((85..=90).contains(&corrected), "{corrected}");
        // Only that side and that pawn structure are corrected.
        assert_eq!(correction.corrected(Color::Black, white_key, 50), 50);
        assert_eq!(correction.corrected(Color::White, other_key, 50), 50);
        // However wrong the evaluation looks, the correction stays within 64 cp.
        for _ in 0..500 {
            correction.update(Color::White, white_key, 20, -5000);
        }
        assert_eq!(correction.corrected(Color::White, white_key, 0), -64);
    }
}
