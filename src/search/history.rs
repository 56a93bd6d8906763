//! What a search thread learns about moves as it searches, kept from one search of a game to
//! the next: move-ordering histories (quiet, continuation, capture, killers, counter-moves).
//! What it learns about the evaluation is `eval::Correction`; `Memory` holds both.

use crate::eval::Correction;
pub use crate::types::Continuations;
use crate::types::{piece_index, piece_to, MAX_PLY, PIECE_TO};
use shakmaty::{Bitboard, Color, Move};

/// History scores stay within +-MAX_HISTORY (the "gravity" update converges there).
pub const MAX_HISTORY: i32 = 16_384;

/// What a quiet move's history is looked up by besides the move itself: the moves before it
/// (continuation keys) and the squares the opponent attacks where it is played.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Surroundings {
    pub conts: Continuations,
    pub threats: Bitboard,
}

/// What one search thread learned about moves: killers per ply, counter-moves, and three
/// histories (quiet moves by from-to square and whether each of the two is attacked, quiet
/// moves by the moves before them (continuation), captures by piece, target and victim). It
/// outlives a search, so the next move of the game starts from what this one learned.
pub struct History {
    /// `[colour][from attacked][to attacked][from][to]`: the same move learns apart whether
    /// it escapes an attack, steps into one, or neither.
    /// Flat, indexed by `butterfly_index`.
    butterfly: Box<[i32]>,
    /// `[previous piece-to][piece-to]`, flat.
    continuation: Box<[i16]>,
    /// `[piece-to][captured role]`, flat.
    capture: Box<[i16]>,
    counter: Box<[[Option<Move>; 64]; 12]>,
    killers: Box<[[Option<Move>; 2]; MAX_PLY as usize + 2]>,
}

/// Everything a search thread keeps from one search of a game to the next: its move
/// histories and its correction of the static evaluation. `ucinewgame` starts it afresh.
#[derive(Default)]
pub struct Memory {
    pub history: History,
    pub correction: Correction,
}

impl Default for History {
    fn default() -> History {
        History {
            butterfly: vec![0; 2 * 2 * 2 * 64 * 64].into_boxed_slice(),
            continuation: vec![0; PIECE_TO * PIECE_TO].into_boxed_slice(),
            capture: vec![0; PIECE_TO * 6].into_boxed_slice(),
            counter: Box::new([[None; 64]; 12]),
            killers: Box::new([[None; 2]; MAX_PLY as usize + 2]),
        }
    }
}

fn from_to(mv: Move) -> (usize, usize) {
    (mv.from().map_or(0, |sq| sq as usize), mv.to() as usize)
}

/// Where the butterfly history of `color`'s quiet `mv` lies, with `threats` attacked by the
/// opponent: `[colour][from attacked][to attacked][from][to]`, flat.
fn butterfly_index(color: Color, mv: Move, threats: Bitboard) -> usize {
    let (from, to) = from_to(mv);
    let attacked = |sq: usize| (threats.0 >> sq & 1) as usize;
    (((color as usize * 2 + attacked(from)) * 2 + attacked(to)) * 64 + from) * 64 + to
}

/// Moves `entry` towards +-MAX_HISTORY by `bonus`, less as it gets closer.
fn gravity(entry: i32, bonus: i32) -> i32 {
    let bonus = bonus.clamp(-MAX_HISTORY, MAX_HISTORY);
    entry + bonus - entry * bonus.abs() / MAX_HISTORY
}

fn gravity_i16(entry: &mut i16, bonus: i32) {
    // Stays within +-MAX_HISTORY, which fits an i16.
    *entry = gravity(i32::from(*entry), bonus) as i16;
}

impl History {
    /// A new search: killers belong to the last position, the histories carry over.
    pub fn new_search(&mut self) {
        *self.killers = [[None; 2]; MAX_PLY as usize + 2];
    }

    /// From-to history (by the threats on both squares) plus the continuation histories of
    /// the two moves before.
    pub fn quiet_score(&self, color: Color, mv: Move, around: &Surroundings) -> i32 {
        let current = piece_to(color, mv);
        let mut score = self.butterfly[butterfly_index(color, mv, around.threats)];
        for prev in around.conts.into_iter().flatten() {
            score += i32::from(self.continuation[prev * PIECE_TO + current]);
        }
        score
    }

    pub fn update_quiet(&mut self, color: Color, mv: Move, around: &Surroundings, bonus: i32) {
        let entry = &mut self.butterfly[butterfly_index(color, mv, around.threats)];
        *entry = gravity(*entry, bonus);
        let current = piece_to(color, mv);
        for prev in around.conts.into_iter().flatten() {
            gravity_i16(&mut self.continuation[prev * PIECE_TO + current], bonus);
        }
    }

    fn capture_index(color: Color, mv: Move) -> usize {
        let victim = mv.capture().map_or(0, |role| role as usize - 1);
        piece_to(color, mv) * 6 + victim
    }

    pub fn capture_score(&self, color: Color, mv: Move) -> i32 {
        i32::from(self.capture[Self::capture_index(color, mv)])
    }

    pub fn update_capture(&mut self, color: Color, mv: Move, bonus: i32) {
        gravity_i16(&mut self.capture[Self::capture_index(color, mv)], bonus);
    }

    pub fn killers(&self, ply: usize) -> [Option<Move>; 2] {
        self.killers[ply]
    }

    pub fn add_killer(&mut self, ply: usize, mv: Move) {
        let slots = &mut self.killers[ply];
        if slots[0] != Some(mv) {
            slots[1] = slots[0];
            slots[0] = Some(mv);
        }
    }

    pub fn clear_killers(&mut self, ply: usize) {
        self.killers[ply] = [None; 2];
    }

    /// The reply that refuted `previous` last time (by the moving piece and its target).
    pub fn counter(&self, previous_mover: Color, previous: Move) -> Option<Move> {
        self.counter[piece_index(previous_mover, previous.role())][previous.to() as usize]
    }

    pub fn set_counter(&mut self, previous_mover: Color, previous: Move, reply: Move) {
        self.counter[piece_index(previous_mover, previous.role())][previous.to() as usize] =
            Some(reply);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Role;

    fn knight_g1f3() -> Move {
        Move::Normal {
            role: Role::Knight,
            from: shakmaty::Square::G1,
            capture: None,
            to: shakmaty::Square::F3,
            promotion: None,
        }
    }

    #[test]
    fn history_gravity_stays_bounded() {
        let mut history = History::default();
        let mv = knight_g1f3();
        let conts = Surroundings {
            conts: [Some(piece_to(Color::Black, mv)), None],
            threats: Bitboard::EMPTY,
        };
        let none = Surroundings::default();
        for _ in 0..1000 {
            history.update_quiet(Color::White, mv, &conts, 5000);
        }
        let score = history.quiet_score(Color::White, mv, &none);
        assert!(
            score > MAX_HISTORY * 9 / 10 && score <= MAX_HISTORY,
            "{score}"
        );
        let with_continuation = history.quiet_score(Color::White, mv, &conts);
        assert!(
            with_continuation > score + MAX_HISTORY * 9 / 10
                && with_continuation <= 2 * MAX_HISTORY,
            "{with_continuation}"
        );
        history.update_quiet(Color::White, mv, &conts, -5000);
        assert!(history.quiet_score(Color::White, mv, &none) < score);
    }

    /// The same move is learnt apart by whether its squares are attacked: a knight that keeps
    /// cutting off when it escapes from an attacked square says nothing of the same jump from
    /// a safe one, nor of one into an attack.
    #[test]
    fn a_quiet_move_is_learnt_apart_by_the_threats_on_its_squares() {
        let mut history = History::default();
        let mv = knight_g1f3();
        let with = |threats: Bitboard| Surroundings {
            conts: [None, None],
            threats,
        };
        let g1 = Bitboard::from_square(shakmaty::Square::G1);
        let f3 = Bitboard::from_square(shakmaty::Square::F3);
        // Other attacked squares do not matter, only the move's own two.
        let elsewhere = Bitboard::from_square(shakmaty::Square::A8);
        history.update_quiet(Color::White, mv, &with(g1 | elsewhere), 3000);
        assert!(history.quiet_score(Color::White, mv, &with(g1)) > 0);
        for other in [Bitboard::EMPTY, f3, g1 | f3, elsewhere] {
            assert_eq!(
                history.quiet_score(Color::White, mv, &with(other)),
                0,
                "{other:?}"
            );
        }
    }
}
