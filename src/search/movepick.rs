//! Move ordering in stages: the table move, winning captures by MVV-LVA and capture history,
//! killers, the counter-move, quiet moves by history, then losing captures.

use super::history::{History, Surroundings};
use super::movegen;
use super::see::see_ge;
use crate::eval::piece_value;
use crate::types::encode_move;
use arrayvec::ArrayVec;
use shakmaty::{CastlingSide, Chess, Color, Move, Position, Role, Square};

/// Whether a move changes material: captures and queen promotions. Underpromotions count as
/// quiet moves, which puts them late in the order.
pub fn is_tactical(mv: Move) -> bool {
    mv.is_capture() || mv.promotion() == Some(Role::Queen)
}

/// Most valuable victim first; among equal victims, the capture history decides, and the
/// least valuable attacker breaks ties.
fn capture_order(history: &History, color: Color, mv: Move) -> i32 {
    let victim = mv.capture().map_or(0, piece_value) + mv.promotion().map_or(0, piece_value);
    victim * 16 + history.capture_score(color, mv) / 16 - piece_value(mv.role()) / 100
}

/// The legal move of `pos` (in check or not, as `in_check` says) whose table encoding is
/// `code`, checked on the board, so a torn entry or a key collision yields nothing rather than
/// an illegal move.
pub fn table_move(pos: &Chess, in_check: bool, code: u16) -> Option<Move> {
    if code == 0 {
        return None;
    }
    let from = Square::new(u32::from(code & 63));
    let to = Square::new(u32::from((code >> 6) & 63));
    let piece = pos.board().piece_at(from)?;
    if piece.color != pos.turn() {
        return None;
    }
    let target = pos.board().piece_at(to);
    let candidates = match target {
        // Castling is encoded as the king taking its own rook.
        Some(target) if piece.role == Role::King && target == Role::Rook.of(piece.color) => {
            let side = if to > from {
                CastlingSide::KingSide
            } else {
                CastlingSide::QueenSide
            };
            pos.castling_moves(side)
        }
        // En passant: a pawn moving to an empty square of another file.
        None if piece.role == Role::Pawn && from.file() != to.file() => {
            pos.san_candidates(piece.role, to)
        }
        _ => {
            let promotion = match code >> 12 {
                0 => None,
                role => Some(Role::try_from(role as u8).ok()?),
            };
            let mv = Move::Normal {
                role: piece.role,
                from,
                capture: target.map(|target| target.role),
                to,
                promotion,
            };
            // Built from the code's own squares and promotion, the move has that code.
            return movegen::is_legal(pos, in_check, mv).then_some(mv);
        }
    };
    candidates
        .iter()
        .copied()
        .find(|&mv| encode_move(mv) == code)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    TableMove,
    GenerateTactical,
    /// Captures and queen promotions best first; in the main search those that lose material
    /// by SEE are put aside for `BadTactical`.
    GoodTactical,
    FirstKiller,
    SecondKiller,
    Counter,
    GenerateQuiets,
    Quiets,
    BadTactical,
    Done,
}

/// No chess position has more legal moves than this (the record is 218).
const MAX_MOVES: usize = 256;

/// A list of moves with their scores, handed out best first by selection (most nodes cut off
/// after a few moves, so sorting all of them would be wasted). The scores lie apart from the
/// moves, so the search for the best reads one dense array.
#[derive(Default)]
struct Scored {
    moves: ArrayVec<Move, MAX_MOVES>,
    scores: ArrayVec<i32, MAX_MOVES>,
    next: usize,
}

impl Scored {
    /// Refills the list from a generator that pushes moves, keeping those `keep` accepts.
    fn fill<K: Fn(&Move) -> bool, S: Fn(Move) -> i32>(
        &mut self,
        generate: impl FnOnce(&mut Kept<'_, K, S>),
        keep: K,
        score: S,
    ) {
        self.moves.clear();
        self.scores.clear();
        self.next = 0;
        generate(&mut Kept {
            list: self,
            keep,
            score,
        });
    }

    /// The best of the moves not handed out yet; of equal scores, the last in the list.
    fn best(&mut self) -> Option<Move> {
        let first = self.next;
        let scores = self.scores.get(first..).filter(|rest| !rest.is_empty())?;
        let mut best = 0;
        let mut top = scores[0];
        for (i, &score) in scores.iter().enumerate().skip(1) {
            if score >= top {
                best = i;
                top = score;
            }
        }
        self.moves.swap(first, first + best);
        self.scores.swap(first, first + best);
        self.next += 1;
        Some(self.moves[first])
    }
}

/// The sink a generator pushes into: moves `keep` accepts, with their scores.
struct Kept<'a, K, S> {
    list: &'a mut Scored,
    keep: K,
    score: S,
}

impl<K: Fn(&Move) -> bool, S: Fn(Move) -> i32> Extend<Move> for Kept<'_, K, S> {
    fn extend<I: IntoIterator<Item = Move>>(&mut self, moves: I) {
        for mv in moves {
            if (self.keep)(&mv) {
                self.list.moves.push(mv);
                self.list.scores.push((self.score)(mv));
            }
        }
    }
}

/// Hands out a node's legal moves in stages, generating each kind only when the node gets
/// that far: the table move (before any generation), good captures and queen promotions
/// (SEE only when one is picked), the killers and the counter-move, quiet moves by history,
/// then the captures that lose material. Quiescence nodes get the table move and the tactical
/// moves alone.
pub struct MovePicker {
    stage: Stage,
    tactical_only: bool,
    in_check: bool,
    tt_move: Option<Move>,
    killers: [Option<Move>; 2],
    counter: Option<Move>,
    around: Surroundings,
    list: Scored,
    /// The codes of the table move and the refutations handed out before the quiet moves,
    /// which the quiet stage skips (0: none; no legal move has that code).
    handed: [u16; 4],
    bad: ArrayVec<Move, MAX_MOVES>,
    bad_next: usize,
}

impl MovePicker {
    /// The picker of a main-search node (`in_check`: whether its side to move is in check);
    /// `around` is what its quiet moves' histories are looked up by.
    pub fn new(
        in_check: bool,
        tt_move: Option<Move>,
        killers: [Option<Move>; 2],
        counter: Option<Move>,
        around: Surroundings,
    ) -> MovePicker {
        MovePicker {
            stage: Stage::TableMove,
            tactical_only: false,
            in_check,
            tt_move,
            killers,
            counter,
            around,
            list: Scored::default(),
            handed: [0; 4],
            bad: ArrayVec::new(),
            bad_next: 0,
        }
    }

    /// The picker of a quiescence node not in check: the table move if it is tactical, then
    /// the captures and queen promotions by victim and capture history.
    pub fn tactical(tt_move: Option<Move>) -> MovePicker {
        let tt_move = tt_move.filter(|&mv| is_tactical(mv));
        let mut picker = MovePicker::new(false, tt_move, [None; 2], None, Surroundings::default());
        picker.tactical_only = true;
        picker
    }

    /// A killer or counter-move (`slot` 1, 2 or 3), if it is a quiet move, not handed out
    /// before and legal here; kept among the moves handed out. (A move from elsewhere whose
    /// code a handed-out move has is either that move or illegal here.)
    fn refutation(&mut self, pos: &Chess, mv: Option<Move>, slot: usize) -> Option<Move> {
        let mv = mv.filter(|&mv| {
            !is_tactical(mv)
                && !self.handed.contains(&encode_move(mv))
                && movegen::is_legal(pos, self.in_check, mv)
        })?;
        self.handed[slot] = encode_move(mv);
        Some(mv)
    }

    /// The next move, best first; `pos` and `history` must be those the picker was made for.
    pub fn next_move(&mut self, pos: &Chess, history: &History) -> Option<Move> {
        let us = pos.turn();
        loop {
            match self.stage {
                Stage::TableMove => {
                    self.stage = Stage::GenerateTactical;
                    if let Some(mv) = self.tt_move {
                        self.handed[0] = encode_move(mv);
                        return Some(mv);
                    }
                }
                Stage::GenerateTactical => {
                    let tt_move = self.tt_move;
                    let not_given = |mv: &Move| Some(*mv) != tt_move;
                    let score = |mv| capture_order(history, us, mv);
                    if self.in_check {
                        // Evasions are few: shakmaty generates them all, in the same order of
                        // captures first and queen promotions after.
                        let moves = pos.legal_moves();
                        let captures = moves.iter().filter(|mv| mv.is_capture());
                        let queen_pushes = moves
                            .iter()
                            .filter(|mv| !mv.is_capture() && mv.promotion() == Some(Role::Queen));
                        let tactical = captures.chain(queen_pushes).copied();
                        self.list.fill(|out| out.extend(tactical), not_given, score);
                    } else {
                        self.list
                            .fill(|out| movegen::tactical_moves(pos, out), not_given, score);
                    }
                    self.stage = Stage::GoodTactical;
                }
                Stage::GoodTactical => match self.list.best() {
                    Some(mv) if self.tactical_only || see_ge(pos, mv, 0) => return Some(mv),
                    Some(mv) => self.bad.push(mv),
                    None => {
                        self.stage = if self.tactical_only {
                            Stage::Done
                        } else {
                            Stage::FirstKiller
                        }
                    }
                },
                Stage::FirstKiller => {
                    let mv = self.refutation(pos, self.killers[0], 1);
                    self.stage = Stage::SecondKiller;
                    if mv.is_some() {
                        return mv;
                    }
                }
                Stage::SecondKiller => {
                    let mv = self.refutation(pos, self.killers[1], 2);
                    self.stage = Stage::Counter;
                    if mv.is_some() {
                        return mv;
                    }
                }
                Stage::Counter => {
                    let mv = self.refutation(pos, self.counter, 3);
                    self.stage = Stage::GenerateQuiets;
                    if mv.is_some() {
                        return mv;
                    }
                }
                Stage::GenerateQuiets => {
                    self.stage = Stage::Quiets;
                    // Codes stand for moves here: two legal moves of a position never share one.
                    let handed = self.handed;
                    let not_given = |mv: &Move| !handed.contains(&encode_move(*mv));
                    let around = self.around;
                    let score = |mv| history.quiet_score(us, mv, &around);
                    if self.in_check {
                        let moves = pos.legal_moves();
                        let quiets = moves.iter().copied().filter(|&mv| !is_tactical(mv));
                        self.list.fill(|out| out.extend(quiets), not_given, score);
                    } else {
                        self.list
                            .fill(|out| movegen::quiet_moves(pos, out), not_given, score);
                    }
                }
                Stage::Quiets => match self.list.best() {
                    Some(mv) => return Some(mv),
                    None => self.stage = Stage::BadTactical,
                },
                Stage::BadTactical => {
                    if let Some(&mv) = self.bad.get(self.bad_next) {
                        self.bad_next += 1;
                        return Some(mv);
                    }
                    self.stage = Stage::Done;
                }
                Stage::Done => return None,
            }
        }
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

    /// Everything a picker hands out, in order.
    fn drain(mut picker: MovePicker, pos: &Chess, history: &History) -> Vec<Move> {
        std::iter::from_fn(|| picker.next_move(pos, history)).collect()
    }

    fn find(pos: &Chess, uci: &str) -> Move {
        uci.parse::<shakmaty::uci::UciMove>()
            .unwrap()
            .to_move(pos)
            .unwrap()
    }

    #[test]
    fn table_move_then_winning_capture_then_refutations_then_quiets_then_losing_capture() {
        // exd5 wins a knight; Qxb7+ loses the queen for a pawn.
        let pos = position("1k6/1p6/8/3n4/4P3/8/8/1Q2K3 w - - 0 1");
        let (tt, killer, counter) = (find(&pos, "e1e2"), find(&pos, "b1c2"), find(&pos, "e1f1"));
        let picker = MovePicker::new(
            false,
            Some(tt),
            [Some(killer), Some(find(&pos, "e4d5"))],
            Some(counter),
            Surroundings::default(),
        );
        let order = drain(picker, &pos, &History::default());
        assert_eq!(order[..4], [tt, find(&pos, "e4d5"), killer, counter]);
        assert_eq!(*order.last().unwrap(), find(&pos, "b1b7"));
    }

    #[test]
    fn every_legal_move_comes_out_once_whatever_the_hints() {
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "rnbqkb1r/pp1p1ppp/5n2/2pPp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 4",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "4k3/8/8/8/8/8/4q3/4K3 w - - 0 1",
        ];
        // Hints from another position: illegal here, tactical, or repeated.
        let other =
            position("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
        let hints: Vec<Move> = other.legal_moves().into_iter().collect();
        for fen in fens {
            let pos = position(fen);
            let mut legal: Vec<String> = pos.legal_moves().iter().map(|m| m.to_string()).collect();
            legal.sort();
            for (i, &hint) in hints.iter().enumerate() {
                let tt = pos.legal_moves().get(i % 7).copied();
                let killers = [Some(hint), Some(hints[(i * 7) % hints.len()])];
                let picker = MovePicker::new(
                    pos.is_check(),
                    tt,
                    killers,
                    Some(hint),
                    Surroundings::default(),
                );
                let mut given: Vec<String> = drain(picker, &pos, &History::default())
                    .iter()
                    .map(|m| m.to_string())
                    .collect();
                given.sort();
                assert_eq!(given, legal, "{fen} with hint {hint}");
            }
            if pos.is_check() {
                // Quiescence searches every evasion with the main picker.
                continue;
            }
            let tactical: Vec<Move> = drain(MovePicker::tactical(None), &pos, &History::default());
            let expected = pos
                .legal_moves()
                .into_iter()
                .filter(|&m| is_tactical(m))
                .count();
            assert_eq!(tactical.len(), expected, "{fen}");
            assert!(tactical.iter().all(|&m| is_tactical(m)));
        }
    }

    #[test]
    fn a_table_move_is_only_ever_a_legal_move_of_the_position() {
        // Castling both ways, en passant (one legal, one exposing the king), promotions by
        // push and capture, pins, and a position in check.
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "8/8/8/KPp4r/8/8/8/7k w - c6 0 2",
            "1n2k1n1/P1P3P1/8/8/8/8/p1p3p1/1N2K1N1 b - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "4k3/8/8/8/8/8/4q3/4K3 w - - 0 1",
        ];
        for fen in fens {
            let pos = position(fen);
            let mut found = 0;
            for code in 0..=u16::MAX {
                if let Some(mv) = table_move(&pos, pos.is_check(), code) {
                    assert!(pos.is_legal(mv), "{fen} {code:#x}: {mv}");
                    assert_eq!(encode_move(mv), code);
                    found += 1;
                }
            }
            assert_eq!(
                found,
                pos.legal_moves().len(),
                "{fen}: every legal move has its code"
            );
        }
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
            let mut picker =
                MovePicker::new(false, None, [None, None], None, Surroundings::default());
            assert_eq!(picker.next_move(&pos, &history), Some(favourite));
            let mut tactical = MovePicker::tactical(None);
            assert_eq!(tactical.next_move(&pos, &history), Some(favourite));
            history.update_capture(Color::White, favourite, -8000);
        }
    }
}
