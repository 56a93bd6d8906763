//! Move ordering: the table move, winning captures by MVV-LVA and capture history, killers,
//! the counter-move, quiet moves by history, then losing captures. Moves come out best first.

use super::history::{Continuations, History};
use super::see::{see_ge, see_value};
use crate::board::encode_move;
use shakmaty::{Chess, Color, Move, MoveList, Position, Role};

const TT_MOVE: i32 = 2_000_000_000;
const GOOD_CAPTURE: i32 = 1_000_000_000;
const KILLER: i32 = 900_000_000;
const COUNTER: i32 = 800_000_000;
const BAD_CAPTURE: i32 = -1_000_000_000;
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
}
