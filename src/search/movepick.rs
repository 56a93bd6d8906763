//! Move ordering: the table move, winning captures by MVV-LVA and capture history, killers,
//! the counter-move, quiet moves by history, then losing captures. Moves come out best first.

use super::see::{see_ge, see_value};
use crate::board::encode_move;
use crate::tt::MAX_PLY;
use shakmaty::{Chess, Color, Move, MoveList, Position, Role};

const TT_MOVE: i32 = 2_000_000_000;
const GOOD_CAPTURE: i32 = 1_000_000_000;
const KILLER: i32 = 900_000_000;
const COUNTER: i32 = 800_000_000;
const BAD_CAPTURE: i32 = -1_000_000_000;
/// History scores stay within +-MAX_HISTORY (the "gravity" update converges there).
pub const MAX_HISTORY: i32 = 16_384;

/// A moving piece (colour and role) and its target square: what continuation histories are
/// indexed by, `0..PIECE_TO`.
pub type PieceTo = usize;
const PIECE_TO: usize = 12 * 64;

pub fn piece_to(color: Color, mv: Move) -> PieceTo {
    piece_index(color, mv.role()) * 64 + mv.to() as usize
}

/// The moves one and two plies before a node, as continuation-history keys.
pub type Continuations = [Option<PieceTo>; 2];

/// What one search thread learned about moves: killers per ply, counter-moves, and three
/// histories: quiet moves by from-to square, quiet moves by the moves before them
/// (continuation), and captures by piece, target and victim. It outlives a search, so the
/// next move of the game starts from what this one learned.
pub struct History {
    butterfly: Box<[[[i32; 64]; 64]; 2]>,
    /// `[previous piece-to][piece-to]`, flat.
    continuation: Box<[i16]>,
    /// `[piece-to][captured role]`, flat.
    capture: Box<[i16]>,
    counter: Box<[[Option<Move>; 64]; 12]>,
    killers: Box<[[Option<Move>; 2]; MAX_PLY as usize + 2]>,
    /// `[side to move][pawn key % CORRECTION_SIZE]`: how far searches found the static
    /// evaluation off, in 1/CORRECTION_GRAIN centipawns.
    correction: Box<[[i32; CORRECTION_SIZE]; 2]>,
}

const CORRECTION_SIZE: usize = 16_384;
const CORRECTION_GRAIN: i32 = 256;
/// Corrections stay within +-64 centipawns.
const CORRECTION_MAX: i32 = 64 * CORRECTION_GRAIN;
/// An update's weight (of 256) grows with the search depth up to this.
const CORRECTION_WEIGHT_MAX: i32 = 16;

impl Default for History {
    fn default() -> History {
        History {
            butterfly: Box::new([[[0; 64]; 64]; 2]),
            continuation: vec![0; PIECE_TO * PIECE_TO].into_boxed_slice(),
            capture: vec![0; PIECE_TO * 6].into_boxed_slice(),
            counter: Box::new([[None; 64]; 12]),
            killers: Box::new([[None; 2]; MAX_PLY as usize + 2]),
            correction: Box::new([[0; CORRECTION_SIZE]; 2]),
        }
    }
}

fn from_to(mv: Move) -> (usize, usize) {
    (mv.from().map_or(0, |sq| sq as usize), mv.to() as usize)
}

fn piece_index(color: Color, role: Role) -> usize {
    role as usize - 1 + 6 * color as usize
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

    /// From-to history plus the continuation histories of the two moves before.
    pub fn quiet_score(&self, color: Color, mv: Move, conts: Continuations) -> i32 {
        let (from, to) = from_to(mv);
        let current = piece_to(color, mv);
        let mut score = self.butterfly[color as usize][from][to];
        for prev in conts.into_iter().flatten() {
            score += i32::from(self.continuation[prev * PIECE_TO + current]);
        }
        score
    }

    pub fn update_quiet(&mut self, color: Color, mv: Move, conts: Continuations, bonus: i32) {
        let (from, to) = from_to(mv);
        let entry = &mut self.butterfly[color as usize][from][to];
        *entry = gravity(*entry, bonus);
        let current = piece_to(color, mv);
        for prev in conts.into_iter().flatten() {
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

    /// `raw`, the static evaluation, moved by what searches of positions with the same pawns
    /// found it to be off.
    pub fn corrected_eval(&self, color: Color, pawn_key: u64, raw: i32) -> i32 {
        let entry = self.correction[color as usize][pawn_key as usize % CORRECTION_SIZE];
        raw + entry / CORRECTION_GRAIN
    }

    /// A search of `depth` found the position worth `error` more than its raw static
    /// evaluation: the entry moves that way, more for deeper searches.
    pub fn update_correction(&mut self, color: Color, pawn_key: u64, depth: i32, error: i32) {
        let entry = &mut self.correction[color as usize][pawn_key as usize % CORRECTION_SIZE];
        let weight = (depth + 1).min(CORRECTION_WEIGHT_MAX);
        let target = error.clamp(-CORRECTION_MAX, CORRECTION_MAX) * CORRECTION_GRAIN;
        let moved = (*entry * (256 - weight) + target * weight) / 256;
        *entry = moved.clamp(-CORRECTION_MAX, CORRECTION_MAX);
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

/// Whether a move changes material: captures and queen promotions. Underpromotions count as
/// quiet moves, which puts them late in the order.
pub fn is_tactical(mv: Move) -> bool {
    mv.is_capture() || mv.promotion() == Some(Role::Queen)
}

/// Most valuable victim first; among equal victims, the capture history decides, and the
/// least valuable attacker breaks ties.
fn capture_order(history: &History, color: Color, mv: Move) -> i32 {
    let victim = mv.capture().map_or(0, see_value) + mv.promotion().map_or(0, see_value);
    victim * 16 + history.capture_score(color, mv) / 16 - see_value(mv.role()) / 100
}

pub struct MovePicker {
    moves: MoveList,
    scores: Vec<i32>,
    next: usize,
}

impl MovePicker {
    /// Orders all `moves` of a main-search node; `conts` are the moves before it.
    pub fn new(
        pos: &Chess,
        moves: MoveList,
        tt_move: u16,
        killers: [Option<Move>; 2],
        counter: Option<Move>,
        history: &History,
        conts: Continuations,
    ) -> MovePicker {
        let us = pos.turn();
        let scores = moves
            .iter()
            .map(|&mv| {
                if tt_move != 0 && encode_move(mv) == tt_move {
                    TT_MOVE
                } else if is_tactical(mv) {
                    let base = if see_ge(pos, mv, 0) {
                        GOOD_CAPTURE
                    } else {
                        BAD_CAPTURE
                    };
                    base + capture_order(history, us, mv)
                } else if killers[0] == Some(mv) {
                    KILLER + 1
                } else if killers[1] == Some(mv) {
                    KILLER
                } else if counter == Some(mv) {
                    COUNTER
                } else {
                    history.quiet_score(us, mv, conts)
                }
            })
            .collect();
        MovePicker {
            moves,
            scores,
            next: 0,
        }
    }

    /// Orders the moves of a quiescence node, tactical ones by victim and capture history
    /// (the table move first).
    pub fn tactical(pos: &Chess, moves: MoveList, tt_move: u16, history: &History) -> MovePicker {
        let us = pos.turn();
        let scores = moves
            .iter()
            .map(|&mv| {
                if tt_move != 0 && encode_move(mv) == tt_move {
                    TT_MOVE
                } else {
                    capture_order(history, us, mv)
                }
            })
            .collect();
        MovePicker {
            moves,
            scores,
            next: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.moves.len()
    }

    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    /// The best remaining move (selection sort: most nodes cut off after a few moves).
    pub fn next_move(&mut self) -> Option<Move> {
        if self.next >= self.moves.len() {
            return None;
        }
        let best = (self.next..self.moves.len())
            .max_by_key(|&i| self.scores[i])
            .expect("non-empty range");
        self.moves.swap(self.next, best);
        self.scores.swap(self.next, best);
        self.next += 1;
        Some(self.moves[self.next - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{fen::Fen, CastlingMode};

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn table_move_then_winning_capture_then_quiets_then_losing_capture() {
        // White can take a free knight (Qxd5?? no: exd5), or lose the queen for a pawn (Qxb7).
        let pos = position("1k6/1p6/8/3n4/4P3/8/8/1Q2K3 w - - 0 1");
        let moves = pos.legal_moves();
        let tt_move = moves
            .iter()
            .find(|m| m.to().to_string() == "e2")
            .copied()
            .unwrap();
        let mut picker = MovePicker::new(
            &pos,
            moves,
            encode_move(tt_move),
            [None, None],
            None,
            &History::default(),
            [None, None],
        );
        assert_eq!(picker.next_move(), Some(tt_move));
        let second = picker.next_move().unwrap();
        assert!(
            second.is_capture() && second.role() == Role::Pawn,
            "{second:?}"
        );
        let mut rest = Vec::new();
        while let Some(mv) = picker.next_move() {
            rest.push(mv);
        }
        let last = rest.last().unwrap();
        assert!(last.is_capture() && last.role() == Role::Queen, "{last:?}");
    }

    #[test]
    fn history_gravity_stays_bounded() {
        let mut history = History::default();
        let mv = Move::Normal {
            role: Role::Knight,
            from: shakmaty::Square::G1,
            capture: None,
            to: shakmaty::Square::F3,
            promotion: None,
        };
        let conts = [Some(piece_to(Color::Black, mv)), None];
        for _ in 0..1000 {
            history.update_quiet(Color::White, mv, conts, 5000);
        }
        let score = history.quiet_score(Color::White, mv, [None, None]);
        assert!(
            score > MAX_HISTORY * 9 / 10 && score <= MAX_HISTORY,
            "{score}"
        );
        let with_continuation = history.quiet_score(Color::White, mv, conts);
        assert!(
            with_continuation > score + MAX_HISTORY * 9 / 10
                && with_continuation <= 2 * MAX_HISTORY,
            "{with_continuation}"
        );
        history.update_quiet(Color::White, mv, conts, -5000);
        assert!(history.quiet_score(Color::White, mv, [None, None]) < score);
    }

    #[test]
    fn capture_history_orders_captures_of_equal_victims() {
        // The knight on d5 can be taken by the knight on b4 or the bishop on a2: the same
        // victim, so only the capture history tells them apart.
        let pos = position("4k3/8/8/3n4/1N6/8/B7/4K3 w - - 0 1");
        let captures: Vec<Move> = pos
            .legal_moves()
            .into_iter()
            .filter(|m| m.is_capture())
            .collect();
        assert_eq!(captures.len(), 2);
        let mut history = History::default();
        for favourite in captures.iter().copied() {
            history.update_capture(Color::White, favourite, 4000);
            let mut picker = MovePicker::new(
                &pos,
                pos.legal_moves(),
                0,
                [None, None],
                None,
                &history,
                [None, None],
            );
            assert_eq!(picker.next_move(), Some(favourite));
            let mut tactical =
                MovePicker::tactical(&pos, captures.iter().copied().collect(), 0, &history);
            assert_eq!(tactical.next_move(), Some(favourite));
            history.update_capture(Color::White, favourite, -8000);
        }
    }

    #[test]
    fn correction_follows_search_results_within_its_bound() {
        let mut history = History::default();
        let (white_key, other_key) = (0x1234_5678_9abc_def0, 0x0fed_cba9_8765_4321);
        assert_eq!(history.corrected_eval(Color::White, white_key, 50), 50);
        // Deep searches keep finding the position 40 cp better than its evaluation.
        for _ in 0..200 {
            history.update_correction(Color::White, white_key, 12, 40);
        }
        let corrected = history.corrected_eval(Color::White, white_key, 50);
        assert!((85..=90).contains(&corrected), "{corrected}");
        // Only that side and that pawn structure are corrected.
        assert_eq!(history.corrected_eval(Color::Black, white_key, 50), 50);
        assert_eq!(history.corrected_eval(Color::White, other_key, 50), 50);
        // However wrong the evaluation looks, the correction stays within 64 cp.
        for _ in 0..500 {
            history.update_correction(Color::White, white_key, 20, -5000);
        }
        assert_eq!(history.corrected_eval(Color::White, white_key, 0), -64);
    }
}
