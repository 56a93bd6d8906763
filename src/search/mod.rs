//! The search: what a `go` asks of it (`Job`), what it reports (`Iteration`, `Progress`, to a
//! `Listener`), and one thread's search (`Worker`): iterative deepening, aspiration windows,
//! principal variation search and quiescence search, with the table, pruning and reductions.
//! Threads share only the table, the stop flag and their node counters (see `threads`).

pub mod history;
pub mod movegen;
pub mod movepick;
pub mod see;
mod shared;
pub mod strength;
mod worker;

pub use shared::Shared;
pub use strength::Strength;
pub use worker::Worker;

use crate::board::Board;
use crate::eval::Evaluation;
use crate::syzygy::{ProbeRules, Probing, Syzygy};
use crate::time::{Limits, TimePlan};
use crate::tt::Tt;
use crate::types::Bound;
use shakmaty::{Move, Position};
use std::sync::Arc;

/// One completed (or usefully interrupted) iteration of a thread's search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iteration {
    pub depth: i32,
    pub seldepth: usize,
    pub score: i32,
    /// `Upper` or `Lower` while an aspiration window fails; `Exact` otherwise.
    pub bound: Bound,
    pub pv: Vec<Move>,
}

impl Iteration {
    /// Depth 0 and a line of the first legal move (if any): what a search that found nothing
    /// better plays rather than no move.
    pub fn first_legal(board: &Board) -> Iteration {
        Iteration {
            depth: 0,
            seldepth: 0,
            score: 0,
            bound: Bound::Exact,
            pv: board
                .pos()
                .legal_moves()
                .first()
                .copied()
                .into_iter()
                .collect(),
        }
    }
}

/// Where a search stands when it reports: nodes of all threads, time since `go`, the table's
/// fill in permille, tablebase hits.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub nodes: u64,
    pub elapsed: std::time::Duration,
    pub hashfull: usize,
    /// Tablebase probes that gave a result, root ranking included.
    pub tbhits: u64,
}

impl Progress {
    pub fn of(tt: &Tt, job: &Job, shared: &Shared) -> Progress {
        let root_probes = job
            .tablebases
            .as_ref()
            .and_then(|p| p.root.as_ref())
            .map_or(0, |r| r.probes);
        Progress {
            nodes: shared.total_nodes(),
            tbhits: shared.total_tbhits() + root_probes,
            elapsed: job.plan.elapsed(),
            hashfull: tt.hashfull(),
        }
    }
}

/// Receives the main thread's progress; implemented by the UCI front end.
pub trait Listener: Sync {
    /// A finished iteration (or an aspiration failure) of PV line `multipv` (1-based).
    fn iteration(&self, multipv: usize, it: &Iteration, progress: &Progress);
    /// The root move now being searched, after the search has run a few seconds.
    fn current_move(&self, depth: i32, mv: Move, number: usize, progress: &Progress);
}

/// What one `go` asks of every search thread.
pub struct Job {
    pub board: Board,
    pub limits: Limits,
    pub plan: TimePlan,
    /// Root moves allowed by `go searchmoves` (all when empty).
    pub search_moves: Vec<Move>,
    /// Principal variations to report (UCI `MultiPV`).
    pub multipv: usize,
    /// The evaluation to search with.
    pub evaluation: Evaluation,
    /// Endgame tablebases to probe, if any.
    pub tablebases: Option<Probing>,
    /// A strength limit (`UCI_LimitStrength`), or none for full strength.
    pub strength: Option<Strength>,
}

impl Job {
    /// A single-line search of `board` to `depth` with no clock (bench, tests).
    pub fn fixed_depth(board: Board, depth: i32, evaluation: Evaluation) -> Job {
        let limits = Limits {
            depth: Some(depth),
            ..Limits::default()
        };
        Job {
            plan: TimePlan::new(&limits, board.turn(), 0, std::time::Instant::now()),
            board,
            limits,
            search_moves: Vec::new(),
            multipv: 1,
            evaluation,
            tablebases: None,
            strength: None,
        }
    }

    /// Plays at `strength`: at most its node budget for the root position, with its noise on
    /// the evaluation and its choice among the root moves. One thread should search it: the
    /// budget and the choice are one thread's.
    pub fn limit_strength(&mut self, strength: Strength) {
        let budget = strength.nodes(self.board.pos());
        self.limits.nodes = Some(self.limits.nodes.map_or(budget, |nodes| nodes.min(budget)));
        self.strength = Some(strength);
    }

    /// Gives the search `tables` to probe under `rules`. Where the root is in them, only the
    /// root moves that keep its best outcome are searched (within `go searchmoves`, unless
    /// none of those keeps it).
    pub fn use_tablebases(&mut self, tables: Arc<Syzygy>, rules: ProbeRules) {
        let mut root = tables.rank_root(&self.board, &rules);
        if let Some(ranking) = &root {
            let kept: Vec<Move> = ranking
                .moves
                .iter()
                .copied()
                .filter(|mv| self.search_moves.is_empty() || self.search_moves.contains(mv))
                .collect();
            if kept.is_empty() {
                // `searchmoves` left out every move of the best outcome: the ranking says
                // nothing about those searched, which are probed like any other position.
                root = None;
            } else {
                self.search_moves = kept;
            }
        }
        self.tablebases = Some(Probing {
            tables,
            rules,
            root,
        });
    }
}
