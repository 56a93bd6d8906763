//! Scores in centipawns from the side to move, and the ranges that say what kind a score is:
//! an evaluation inside `DECISIVE`, a tablebase result above it, a mate above `MATE_BOUND`.

/// A mate in n plies from the root scores `MATE - n` (the table keeps mates relative to the
/// node instead: `score_to_tt`).
pub const MATE: i32 = 31_000;
/// The deepest ply a search reaches.
pub const MAX_PLY: i32 = 128;
/// The deepest ply a search may search at (`MAX_PLY - 1`), as an index.
pub const PLY_LIMIT: usize = MAX_PLY as usize - 1;
/// Scores beyond this magnitude are mates.
pub const MATE_BOUND: i32 = MATE - MAX_PLY;
/// A tablebase win `n` plies from the root scores `TB_WIN - n`: below every mate, above every
/// evaluation. Losses are the negation.
pub const TB_WIN: i32 = MATE_BOUND - 1;
/// Scores beyond this magnitude are decisive: a tablebase result or a mate. Evaluations stay
/// inside it.
pub const DECISIVE: i32 = TB_WIN - MAX_PLY;
/// Above every score: the bounds of a full window.
pub const INFINITY: i32 = MATE + 1;

/// The score of mating `ply` plies from the root.
pub const fn mate_in(ply: usize) -> i32 {
    MATE - ply as i32
}

/// The score of being mated `ply` plies from the root.
pub const fn mated_in(ply: usize) -> i32 {
    -MATE + ply as i32
}

/// How many plies from the root the mate of a mate score lies (either side's).
pub const fn mate_plies(score: i32) -> i32 {
    MATE - score.abs()
}

/// The bound a search result has against the window it was searched with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bound {
    None = 0,
    /// The score is at most this (no move reached alpha).
    Upper = 1,
    /// The score is at least this (a move reached beta).
    Lower = 2,
    Exact = 3,
}

/// Mate and tablebase scores leave the search relative to the root and enter the table
/// relative to the node, so one found through a transposition at another ply keeps its true
/// distance.
pub fn score_to_tt(score: i32, ply: i32) -> i32 {
    if score > DECISIVE {
        score + ply
    } else if score < -DECISIVE {
        score - ply
    } else {
        score
    }
}

/// A score keeps its kind on the way out: a mate (or a table result) that would lie beyond
/// the deepest ply from the root is shown as the furthest one of its kind.
pub fn score_from_tt(score: i32, ply: i32) -> i32 {
    let furthest = if score.abs() > MATE_BOUND {
        MATE_BOUND + 1
    } else {
        DECISIVE + 1
    };
    if score > DECISIVE {
        (score - ply).max(furthest)
    } else if score < -DECISIVE {
        (score + ply).min(-furthest)
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mates_by_their_distance_from_the_root() {
        assert_eq!((mate_in(3), mated_in(4)), (MATE - 3, -MATE + 4));
        assert_eq!((mate_plies(mate_in(3)), mate_plies(mated_in(4))), (3, 4));
        assert!(mated_in(MAX_PLY as usize) < -MATE_BOUND + 1 && mate_in(5) > MATE_BOUND);
    }

    #[test]
    fn the_ranges_nest() {
        const {
            assert!(MATE_BOUND > TB_WIN && TB_WIN > DECISIVE && DECISIVE > 0);
            assert!(TB_WIN - MAX_PLY >= DECISIVE);
            assert!(INFINITY > MATE);
            // The table keeps scores in 16 bits.
            assert!(MATE < i16::MAX as i32);
        }
    }

    #[test]
    fn decisive_scores_round_trip_through_the_table_at_any_ply() {
        // A decisive score found at `ply` lies at least `ply` plies from the root.
        for ply in [0, 1, 17, 60] {
            for score in [
                MATE - ply - 3,
                -(MATE - ply - 7),
                TB_WIN - ply - 5,
                -(TB_WIN - ply),
                123,
                -45,
                0,
            ] {
                assert_eq!(score_from_tt(score_to_tt(score, ply), ply), score);
            }
        }
        // A mate stored at ply 0 read back 100 plies deeper is still a mate, at the horizon.
        assert_eq!(score_from_tt(MATE - 40, 100), MATE_BOUND + 1);
        assert_eq!(score_from_tt(TB_WIN - 40, 100), DECISIVE + 1);
    }
}
