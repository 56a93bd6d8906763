//! Self-play: one game of the engine against itself from a few random plies (or a book
//! position), with a fixed node budget a move, adjudicated as datagen's games are. `Player`
//! plays the games of `ferrite-lab datagen` (the training data) and scores the openings of
//! `genfens` (OpenBench's DATAGEN workloads), so both come from the engine's own search.

use crate::board::Board;
use crate::eval::Evaluation;
use crate::rng::SplitMix64 as Rng;
use crate::search::history::Memory;
use crate::search::{Job, Shared, Worker};
use crate::time::{Limits, TimePlan};
use crate::tt::memory::AllocError;
use crate::tt::Tt;
use shakmaty::{CastlingMode, Color, Move, Position};
use std::time::Instant;

/// An opening whose first search scores outside this window is not played.
pub const OPENING_WINDOW: i32 = 400;
/// A score of at least this for `WIN_PLIES` plies in a row (White's view, same sign) wins.
const WIN_SCORE: i32 = 2500;
const WIN_PLIES: usize = 4;
/// After `DRAW_AFTER` plies, a score within `DRAW_SCORE` for `DRAW_PLIES` plies draws.
const DRAW_AFTER: usize = 80;
const DRAW_SCORE: i32 = 10;
const DRAW_PLIES: usize = 12;
/// A game still going after this many plies is called a draw.
const MAX_GAME_PLIES: usize = 600;

/// A finished game: where it started, each position's chosen move with White's score, and
/// the result from White's side (2 win, 1 draw, 0 loss).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    pub start_fen: String,
    pub moves: Vec<(Move, i16)>,
    pub result: u8,
}

/// One game thread's state: its table and search memory, reused from game to game.
pub struct Player {
    tt: Tt,
    memory: Memory,
    soft_nodes: u64,
    hard_nodes: u64,
    evaluation: Evaluation,
}

impl Player {
    pub fn new(
        soft_nodes: u64,
        hard_nodes: u64,
        evaluation: Evaluation,
    ) -> Result<Player, AllocError> {
        Ok(Player {
            tt: Tt::new(crate::tt::DEFAULT_MIB)?,
            memory: Memory::default(),
            soft_nodes,
            hard_nodes: hard_nodes.max(soft_nodes),
            evaluation,
        })
    }

    /// Searches `board` with the node budget: the best move and its score for the side to move.
    pub fn search(&mut self, board: &Board) -> Option<(Move, i32)> {
        let limits = Limits {
            nodes: Some(self.hard_nodes),
            soft_nodes: Some(self.soft_nodes),
            ..Limits::default()
        };
        let job = Job {
            plan: TimePlan::new(&limits, board.turn(), 0, Instant::now()),
            board: board.clone(),
            limits,
            search_moves: Vec::new(),
            multipv: 1,
            evaluation: self.evaluation.clone(),
            tablebases: None,
            strength: None,
        };
        let shared = Shared::new(1);
        self.tt.new_search();
        let best = Worker::new(0, &job, &self.tt, &shared, None, &mut self.memory).iterate();
        best.pv.first().map(|&mv| (mv, best.score))
    }

    /// Plays one game from a random opening; `None` if the opening was rejected.
    pub fn play(
        &mut self,
        rng: &mut Rng,
        book: &[String],
        random_plies: usize,
    ) -> Option<GameRecord> {
        let mut board = opening(rng, book, random_plies)?;
        let start_fen =
            shakmaty::fen::Fen::from_position(board.pos(), shakmaty::EnPassantMode::Legal)
                .to_string();
        // A new game, as after `ucinewgame`.
        self.tt.clear(1);
        self.memory = Memory::default();
        let mut moves: Vec<(Move, i16)> = Vec::new();
        let mut win_run = 0;
        let mut draw_run = 0;
        let result = loop {
            if let Some(result) = result_by_rules(&board) {
                break result;
            }
            if moves.len() >= MAX_GAME_PLIES {
                break 1;
            }
            let (mv, score) = self.search(&board)?;
            let white_score = if board.turn() == Color::White {
                score
            } else {
                -score
            };
            if moves.is_empty() && white_score.abs() > OPENING_WINDOW {
                return None;
            }
            moves.push((
                mv,
                white_score.clamp(-i16::MAX as i32, i16::MAX as i32) as i16,
            ));
            // Adjudication: a decisive score held by both sides' searches, or a long dead draw.
            let previous_sign = moves
                .len()
                .checked_sub(2)
                .map_or(0, |i| i32::from(moves[i].1).signum());
            win_run = if white_score.abs() >= WIN_SCORE
                && (win_run == 0 || white_score.signum() == previous_sign)
            {
                win_run + 1
            } else {
                0
            };
            if win_run >= WIN_PLIES {
                break if white_score > 0 { 2 } else { 0 };
            }
            draw_run = if white_score.abs() <= DRAW_SCORE {
                draw_run + 1
            } else {
                0
            };
            if moves.len() >= DRAW_AFTER && draw_run >= DRAW_PLIES {
                break 1;
            }
            board.play(mv);
        };
        Some(GameRecord {
            start_fen,
            moves,
            result,
        })
    }
}

/// The result by the rules, if the game is over: checkmate, stalemate, insufficient material,
/// threefold repetition or the fifty-move rule.
fn result_by_rules(board: &Board) -> Option<u8> {
    let pos = board.pos();
    if pos.legal_moves().is_empty() {
        return Some(match (pos.is_check(), pos.turn()) {
            (false, _) => 1,
            (true, Color::White) => 0,
            (true, Color::Black) => 2,
        });
    }
    let drawn = pos.is_insufficient_material()
        || pos.halfmoves() >= 100
        || board.earlier_occurrences() >= 2;
    drawn.then_some(1)
}

/// A start position: a book line or the initial position, then `plies` or `plies + 1` random
/// legal moves; `None` if the random moves ended the game.
pub fn opening(rng: &mut Rng, book: &[String], plies: usize) -> Option<Board> {
    let mut board = if book.is_empty() {
        Board::default()
    } else {
        Board::from_fen(&book[rng.below(book.len())], CastlingMode::Standard).ok()?
    };
    for _ in 0..plies + rng.below(2) {
        let moves = board.pos().legal_moves();
        if moves.is_empty() {
            return None;
        }
        board.play(moves[rng.below(moves.len())]);
    }
    (!board.pos().legal_moves().is_empty()).then_some(board)
}
