//! One search thread: iterative deepening, aspiration windows, principal variation search and
//! quiescence search, with the table, pruning and reductions. Threads share only the table,
//! the stop flag and their node counters (see `threads`).

pub mod history;
pub mod movepick;

pub mod see;
mod shared;

pub use shared::Shared;

use crate::board::Board;
use crate::eval::{piece_value, Evaluation, Evaluator};
use crate::params;
use crate::syzygy::{ProbeRules, Probing, Syzygy};
use crate::time::{IterationReport, Limits, TimePlan};
use crate::tt::{Hit, Record, Tt, TtStats};
use crate::types::{
    encode_move, Bound, DECISIVE, INFINITY, MATE, MATE_BOUND, MAX_PLY, PLY_LIMIT, TB_WIN,
};
use history::{piece_to, Continuations, Memory, PieceTo};
use movepick::{is_tactical, MovePicker};
use see::see_ge;
use shakmaty::{Chess, Move, MoveList, Position};
use std::sync::Arc;

/// Stored as the static eval of positions in check, which have none.
const EVAL_NONE: i32 = -32_000;
/// The table depth of an entry that holds only a static evaluation (quiescence results are
/// stored at depth 0).
const DEPTH_EVAL_ONLY: i32 = -1;

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
        }
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

/// What the singular-extension search found about the table move.
enum Singular {
    /// Extend the table move by this many plies (-1 reduces it).
    Extend(i32),
    /// The other moves beat beta too: return this score.
    Cut(i32),
}

/// Root moves are reported as `currmove` only once the search has run this long.
const CURRMOVE_AFTER_MS: u128 = 3000;

#[derive(Clone, Copy, Default)]
struct Frame {
    static_eval: i32,
    /// The move made from this ply (`None` for a null move).
    mv: Option<Move>,
    /// That move as a continuation-history key.
    piece_to: Option<PieceTo>,
    /// The move a singular-extension search leaves out at this ply.
    excluded: Option<Move>,
}

/// The bound a node's best score has against the window it was searched with.
fn bound_of(best_score: i32, alpha: i32, beta: i32) -> Bound {
    if best_score >= beta {
        Bound::Lower
    } else if best_score > alpha {
        Bound::Exact
    } else {
        Bound::Upper
    }
}

/// Plies added to a move that gives check: one, unless the checking piece can be won by the
/// exchange that follows (SEE below zero), where the check is more likely a spite check than
/// a threat. `parent` is the position the move was made from.
fn check_extension(parent: &Chess, mv: Move, gives_check: bool) -> i32 {
    i32::from(gives_check && see_ge(parent, mv, 0))
}

/// Late-move reduction in plies, by depth and move number (`base + ln d * ln m / divisor`).
fn lmr_table() -> Box<[[i32; 64]; 64]> {
    let base = f64::from(params::lmr_base()) / 100.0;
    let divisor = f64::from(params::lmr_divisor()) / 100.0;
    let mut table = Box::new([[0; 64]; 64]);
    for (depth, row) in table.iter_mut().enumerate().skip(1) {
        for (count, r) in row.iter_mut().enumerate().skip(1) {
            *r = (base + (depth as f64).ln() * (count as f64).ln() / divisor) as i32;
        }
    }
    table
}

pub struct Worker<'a> {
    pub id: usize,
    board: Board,
    tt: &'a Tt,
    shared: &'a Shared,
    job: &'a Job,
    listener: Option<&'a dyn Listener>,
    multipv: usize,
    /// Root moves already given a line in this iteration (MultiPV).
    excluded: Vec<Move>,
    /// The thread's move histories and evaluation correction, kept between searches.
    memory: &'a mut Memory,
    lmr: Box<[[i32; 64]; 64]>,
    stack: Box<[Frame; MAX_PLY as usize + 4]>,
    pv: Box<[[Option<Move>; MAX_PLY as usize + 1]; MAX_PLY as usize + 1]>,
    pv_len: [usize; MAX_PLY as usize + 1],
    nodes: u64,
    stats: TtStats,
    seldepth: usize,
    stopped: bool,
    /// The best root move of the iteration in progress, with its score.
    root_best: Option<(Move, i32)>,
    /// The depth of the iteration in progress.
    root_depth: i32,
    /// Nodes searched under each root move in this search, over all iterations.
    root_nodes: Vec<(Move, u64)>,
    /// The evaluation, kept in step with the board.
    evaluator: Evaluator,
    /// Positions with at most this many pieces are probed in the tablebases (0: none).
    tb_cardinality: usize,
    tb_hits: u64,
}

impl<'a> Worker<'a> {
    pub fn new(
        id: usize,
        job: &'a Job,
        tt: &'a Tt,
        shared: &'a Shared,
        listener: Option<&'a dyn Listener>,
        memory: &'a mut Memory,
    ) -> Worker<'a> {
        memory.history.new_search();
        Worker {
            id,
            board: job.board.clone(),
            tt,
            shared,
            job,
            listener,
            // Helpers only fill the table: one line each is enough.
            multipv: if id == 0 { job.multipv.max(1) } else { 1 },
            excluded: Vec::new(),
            memory,
            lmr: lmr_table(),
            stack: Box::new([Frame::default(); MAX_PLY as usize + 4]),
            pv: Box::new([[None; MAX_PLY as usize + 1]; MAX_PLY as usize + 1]),
            pv_len: [0; MAX_PLY as usize + 1],
            nodes: 0,
            stats: TtStats::default(),
            seldepth: 0,
            stopped: false,
            root_best: None,
            root_depth: 0,
            root_nodes: Vec::new(),
            evaluator: job.evaluation.evaluator(job.board.pos()),
            tb_cardinality: job.tablebases.as_ref().map_or(0, Probing::cardinality),
            tb_hits: 0,
        }
    }

    fn is_main(&self) -> bool {
        self.id == 0
    }

    /// Iterative deepening until a limit or the stop flag; returns the last trusted iteration
    /// of the best line.
    pub fn iterate(&mut self) -> Iteration {
        let root_moves = self.root_moves();
        let mut result = Iteration {
            pv: root_moves.first().copied().into_iter().collect(),
            ..Iteration::first_legal(&self.board)
        };
        if root_moves.is_empty() {
            return result;
        }
        let lines_wanted = self.multipv.min(root_moves.len());
        let mut previous_scores = vec![0; lines_wanted];
        let max_depth = self
            .job
            .limits
            .depth
            .unwrap_or(MAX_PLY - 1)
            .clamp(1, MAX_PLY - 1);
        let mut depth = 1;
        if let Some((loaded_depth, loaded_score)) = self.loaded_root(max_depth) {
            previous_scores[0] = loaded_score;
            depth = loaded_depth;
            // One line wanted: the loaded iteration is the answer at its depth, and the search
            // goes on from the next. Its PV is the table's, which may reach past the depth as
            // a search's extensions do.
            let pv = self.root_pv(2 * loaded_depth);
            if lines_wanted == 1 && pv.first().is_some_and(|mv| root_moves.contains(mv)) {
                result = Iteration {
                    depth: loaded_depth,
                    seldepth: loaded_depth as usize,
                    score: loaded_score,
                    bound: Bound::Exact,
                    pv,
                };
                if let Some(listener) = self.listener {
                    listener.iteration(1, &result, &self.progress());
                }
                depth = loaded_depth + 1;
            }
        }
        // How many iterations in a row have kept the same best move.
        let mut stability = 0;
        while depth <= max_depth {
            // Helpers search odd threads one ply deeper, so threads spread over two depths.
            let search_depth = if self.id % 2 == 1 && depth < max_depth {
                depth + 1
            } else {
                depth
            };
            let mut lines: Vec<Iteration> = Vec::with_capacity(lines_wanted);
            self.excluded.clear();
            for (line, &previous) in previous_scores.iter().enumerate() {
                let (score, bound) = self.aspiration(search_depth, previous, line + 1);
                if self.stopped {
                    break;
                }
                let mut pv = self.root_pv(search_depth);
                if pv.is_empty() {
                    pv.push(root_moves[0]);
                }
                self.excluded.push(pv[0]);
                lines.push(Iteration {
                    depth: search_depth,
                    seldepth: self.seldepth,
                    score,
                    bound,
                    pv,
                });
            }
            if self.stopped {
                match lines.first() {
                    // The best line of this depth is complete; later lines are not needed.
                    Some(best) => result = best.clone(),
                    None => {
                        if let Some((mv, score)) = self.root_best {
                            if result.pv.first() != Some(&mv) {
                                result.pv = vec![mv];
                                result.score = score;
                            }
                        }
                    }
                }
                break;
            }
            lines.sort_by_key(|line| -line.score);
            let score_drop = previous_scores[0] - lines[0].score;
            previous_scores = lines.iter().map(|line| line.score).collect();
            stability = if lines[0].pv.first() == result.pv.first() {
                stability + 1
            } else {
                0
            };
            result = lines[0].clone();
            self.publish_nodes();
            if let Some(listener) = self.listener {
                let progress = self.progress();
                for (i, line) in lines.iter().enumerate() {
                    listener.iteration(i + 1, line, &progress);
                }
            }
            let score = result.score;
            let report = IterationReport {
                stable_iterations: stability,
                score_drop,
                best_node_share: self.node_share(result.pv[0]),
            };
            let past_soft_nodes = self
                .job
                .limits
                .soft_nodes
                .is_some_and(|limit| self.shared.total_nodes() >= limit);
            if self.is_main()
                && (self.job.plan.past_soft_after(&report)
                    || past_soft_nodes
                    || self.mate_found(score)
                    || (root_moves.len() == 1 && self.job.plan.has_deadline()))
            {
                break;
            }
            // A proven mate well inside the horizon will not change with more depth.
            if score.abs() > MATE_BOUND && search_depth > 2 * (MATE - score.abs()) + 8 {
                break;
            }
            depth = search_depth + 1;
        }
        self.publish_nodes();
        result
    }

    /// Where a table loaded from a file (`Load Hash`) holds an exact result for the root: its
    /// depth (at most `max_depth`) and score. That result is the analysis the file was saved
    /// with, so iterative deepening takes it as done and goes on from the next depth, in a
    /// window around its score: searching the depths below again would cost nearly as much as
    /// the first time, since PV nodes take no table cutoffs and a fresh process has none of
    /// the move histories that shaped the saved tree.
    fn loaded_root(&self, max_depth: i32) -> Option<(i32, i32)> {
        if !self.tt.holds_loaded_analysis() {
            return None;
        }
        let hit = self.tt.probe(self.board.key(), 0)?;
        (hit.bound == Bound::Exact && hit.depth >= 2 && hit.score.abs() < DECISIVE)
            .then(|| (hit.depth.min(max_depth), hit.score))
    }

    /// The root's principal variation, continued with table moves where a table cutoff cut it
    /// short (up to `depth` moves), so the GUI sees the whole line and a ponder move.
    fn root_pv(&self, depth: i32) -> Vec<Move> {
        let mut pv: Vec<Move> = self.pv[0][..self.pv_len[0]]
            .iter()
            .flatten()
            .copied()
            .collect();
        let mut board = self.board.clone();
        for &mv in &pv {
            board.make(mv, board.key_after(mv));
        }
        while pv.len() < depth.max(0) as usize && !board.is_draw() {
            let Some(hit) = self.tt.probe(board.key(), 0) else {
                break;
            };
            let legal = board.pos().legal_moves();
            let Some(&mv) = legal.iter().find(|&&mv| encode_move(mv) == hit.mv) else {
                break;
            };
            pv.push(mv);
            board.make(mv, board.key_after(mv));
        }
        pv
    }

    /// The share of the root's nodes, over all iterations so far, spent under `best`.
    fn node_share(&self, best: Move) -> Option<f64> {
        let total: u64 = self.root_nodes.iter().map(|&(_, nodes)| nodes).sum();
        let &(_, best_nodes) = self.root_nodes.iter().find(|&&(mv, _)| mv == best)?;
        Some(best_nodes as f64 / total.max(1) as f64)
    }

    /// Adds `nodes` to those searched under the root move `mv`.
    fn count_root_nodes(&mut self, mv: Move, nodes: u64) {
        match self.root_nodes.iter_mut().find(|(m, _)| *m == mv) {
            Some((_, total)) => *total += nodes,
            None => self.root_nodes.push((mv, nodes)),
        }
    }

    fn root_allowed(&self, mv: &Move) -> bool {
        (self.job.search_moves.is_empty() || self.job.search_moves.contains(mv))
            && !self.excluded.contains(mv)
    }

    /// How this thread used the table.
    pub fn tt_stats(&self) -> TtStats {
        self.stats
    }

    fn mate_found(&self, score: i32) -> bool {
        self.job
            .limits
            .mate
            .is_some_and(|moves| score.abs() > MATE_BOUND && MATE - score.abs() < 2 * moves)
    }

    /// The legal moves the root may play: `go searchmoves` and MultiPV leave some out.
    fn root_moves(&self) -> MoveList {
        self.board
            .pos()
            .legal_moves()
            .into_iter()
            .filter(|mv| self.root_allowed(mv))
            .collect()
    }

    /// Searches `depth` in a window around the last score, widening it when the result falls
    /// outside. The main thread reports each failure with its bound.
    fn aspiration(&mut self, depth: i32, previous: i32, line: usize) -> (i32, Bound) {
        let mut delta = params::aspiration_delta();
        let (mut alpha, mut beta) = if depth >= 4 && previous.abs() < DECISIVE {
            (previous - delta, previous + delta)
        } else {
            (-INFINITY, INFINITY)
        };
        loop {
            self.root_best = None;
            self.root_depth = depth;
            self.seldepth = 0;
            let score = self.negamax(alpha, beta, depth, 0, false);
            if self.stopped {
                return (score, Bound::Exact);
            }
            let bound = if score <= alpha {
                beta = (alpha + beta) / 2;
                alpha = (score - delta).max(-INFINITY);
                Bound::Upper
            } else if score >= beta {
                beta = (score + delta).min(INFINITY);
                Bound::Lower
            } else {
                return (score, Bound::Exact);
            };
            delta += delta / 2;
            if delta > 1000 {
                (alpha, beta) = (-INFINITY, INFINITY);
            }
            if let (Some(listener), true) =
                (self.listener, self.job.plan.elapsed().as_millis() > 1000)
            {
                self.publish_nodes();
                let pv = self.root_pv(depth);
                listener.iteration(
                    line,
                    &Iteration {
                        depth,
                        seldepth: self.seldepth,
                        score,
                        bound,
                        pv,
                    },
                    &self.progress(),
                );
            }
        }
    }

    fn progress(&self) -> Progress {
        Progress::of(self.tt, self.job, self.shared)
    }

    fn publish_nodes(&self) {
        self.shared.set_nodes(self.id, self.nodes, self.tb_hits);
    }

    /// Counts a node and decides whether to stop: every thread obeys the shared flag; the
    /// main thread also watches the clock and the node limit every 1024 nodes.
    fn count_node(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes.is_multiple_of(1024) {
            self.publish_nodes();
            if self.is_main()
                && (self.job.plan.past_hard()
                    || self
                        .job
                        .limits
                        .nodes
                        .is_some_and(|limit| self.shared.total_nodes() >= limit))
            {
                self.shared.stop();
            }
        }
        if self.shared.stopped() {
            self.stopped = true;
        }
        self.stopped
    }

    // The seam: the only way the search changes the position or asks for a static score, so
    // that state kept beside the board (an evaluation's accumulators) changes with it.

    /// Makes `mv`, starting the load of the child's bucket as soon as its key is known, so the
    /// cache miss overlaps making the move and generating the replies.
    fn make_move(&mut self, mv: Move) {
        let child_key = self.board.key_after(mv);
        self.tt.prefetch(child_key);
        self.evaluator.make(self.board.pos(), mv);
        self.board.make(mv, child_key);
    }

    fn unmake_move(&mut self) {
        self.board.unmake();
        self.evaluator.unmake();
    }

    /// Passes the move (null-move pruning; never in check), prefetching the child's bucket.
    fn make_null(&mut self) {
        self.board.make_null();
        self.tt.prefetch(self.board.key());
        self.evaluator.make_null();
    }

    fn unmake_null(&mut self) {
        self.unmake_move();
    }

    /// The static evaluation of the current position from the side to move, kept clear of
    /// the decisive range (and of the table's 16 bits) whatever a network says.
    fn evaluate(&self) -> i32 {
        let score = self.evaluator.evaluate(self.board.pos());
        score.clamp(-DECISIVE + 1, DECISIVE - 1)
    }

    fn update_pv(&mut self, ply: usize, mv: Move) {
        let child_len = self.pv_len[ply + 1].max(ply + 1);
        self.pv[ply][ply] = Some(mv);
        for i in ply + 1..child_len {
            self.pv[ply][i] = self.pv[ply + 1][i];
        }
        self.pv_len[ply] = child_len;
    }

    /// The continuation-history keys of the moves one and two plies before `ply`.
    fn continuations(&self, ply: usize) -> Continuations {
        let before = |back: usize| {
            if ply >= back {
                self.stack[ply - back].piece_to
            } else {
                None
            }
        };
        [before(1), before(2)]
    }

    fn negamax(&mut self, mut alpha: i32, mut beta: i32, depth: i32, ply: usize, cut: bool) -> i32 {
        if depth <= 0 {
            return self.qsearch(alpha, beta, ply);
        }
        self.pv_len[ply] = ply;
        if self.count_node() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        let root = ply == 0;
        let pv_node = beta - alpha > 1;
        let in_check = self.board.in_check();
        // Set while this node is a singular-extension search that leaves out one move.
        let excluded = self.stack[ply].excluded;
        if !root {
            if self.board.is_draw() {
                return 0;
            }
            if ply >= PLY_LIMIT {
                return if in_check { 0 } else { self.evaluate() };
            }
            // No mate found from here can be shorter than one already found nearer the root.
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }

        let key = self.board.key();
        let hit = self.probe_tt(key, ply);
        self.stats.record_probe(hit.is_some());
        let tt_move = hit.map_or(0, |h| h.mv);
        if let Some(hit) = hit {
            // PV nodes search on: a table score carries no repetition or fifty-move context of
            // this line and would cut the PV short. The one exception is an exact entry deeper
            // than this whole iteration, which only an earlier search (a previous move, or a
            // loaded hash file) can have left: re-searching it here would only overwrite deep
            // analysis with shallower results along the PV.
            // The entry speaks for all moves, so a search without one of them cannot use it.
            let usable = excluded.is_none()
                && (!pv_node
                    || (hit.bound == Bound::Exact && !root && hit.depth > self.root_depth));
            if usable && hit.cuts_off(depth, alpha, beta) {
                self.stats.cutoffs += 1;
                return hit.score;
            }
        }

        // The table keeps the raw evaluation; the search uses it corrected by pawn structure.
        let raw_eval = match hit {
            _ if in_check => EVAL_NONE,
            Some(h) => h.eval,
            None => {
                let raw_eval = self.evaluate();
                // Kept at once: pruning may return before this node stores its result, and
                // the next visit should not have to evaluate again.
                if excluded.is_none() {
                    self.store_eval(key, ply, raw_eval);
                }
                raw_eval
            }
        };
        let pawn_key = self.board.pawn_key();
        let static_eval = if in_check {
            EVAL_NONE
        } else {
            self.corrected(pawn_key, raw_eval)
        };
        // The table's bound, where it is tighter, is a better guess than the static eval
        // (but not without the table's move, which the bound may owe everything to).
        let eval = match hit {
            Some(h) if !in_check && excluded.is_none() && h.score.abs() < DECISIVE => {
                match h.bound {
                    Bound::Lower if h.score > static_eval => h.score,
                    Bound::Upper if h.score < static_eval => h.score,
                    Bound::Exact => h.score,
                    _ => static_eval,
                }
            }
            _ => static_eval,
        };
        // Tablebases: after a capture or pawn move into few enough pieces the tables know the
        // outcome. A result that settles the window ends the node; otherwise a PV node keeps
        // it as a floor (a win, which a mate may better) or a ceiling (a loss) for its moves.
        let mut tb_floor = -INFINITY;
        let mut tb_ceiling = INFINITY;
        if !root && excluded.is_none() {
            if let Some((score, bound)) = self.probe_tablebases(depth, ply) {
                let settles = match bound {
                    Bound::Lower => score >= beta,
                    Bound::Upper => score <= alpha,
                    _ => true,
                };
                if settles {
                    self.store(Record {
                        key,
                        ply: ply as i32,
                        mv: 0,
                        score,
                        raw_eval,
                        depth: (depth + 6).min(MAX_PLY - 1),
                        bound,
                    });
                    return score;
                }
                if pv_node {
                    match bound {
                        Bound::Lower => tb_floor = score,
                        _ => tb_ceiling = score,
                    }
                }
            }
        }
        self.stack[ply].static_eval = static_eval;
        let improving = !in_check
            && ply >= 2
            && (self.stack[ply - 2].static_eval == EVAL_NONE
                || static_eval > self.stack[ply - 2].static_eval);
        self.memory.history.clear_killers(ply + 1);

        if !pv_node && !in_check {
            // Reverse futility: far enough above beta that a shallow search will not drop back.
            if depth <= params::rfp_depth()
                && eval.abs() < DECISIVE
                && beta.abs() < DECISIVE
                && eval - params::rfp_margin() * (depth - i32::from(improving)) >= beta
            {
                return eval;
            }
            // Null move: if passing still fails high, a real move will too (zugzwang aside,
            // hence the non-pawn material guard).
            if depth >= params::nmp_depth()
                && excluded.is_none()
                && eval >= beta
                && beta.abs() < DECISIVE
                && !root
                && self.stack[ply - 1].mv.is_some()
                && self.board.has_non_pawn_material()
            {
                let reduction = params::nmp_base()
                    + depth / params::nmp_depth_divisor()
                    + ((eval - beta) / params::nmp_eval_divisor()).min(params::nmp_eval_max());
                self.stack[ply].mv = None;
                self.stack[ply].piece_to = None;
                self.make_null();
                let score = -self.negamax(-beta, -beta + 1, depth - 1 - reduction, ply + 1, !cut);
                self.unmake_null();
                if self.stopped {
                    return 0;
                }
                if score >= beta {
                    return if score >= DECISIVE { beta } else { score };
                }
            }
        }

        // Without a table move the ordering is poor: search a ply shallower first.
        let depth = if tt_move == 0 && depth >= params::iir_depth() && (pv_node || cut) {
            depth - 1
        } else {
            depth
        };

        let previous = if ply > 0 {
            self.stack[ply - 1].mv
        } else {
            None
        };
        let us = self.board.turn();
        let conts = self.continuations(ply);
        let killers = self.memory.history.killers(ply);
        let counter = previous.and_then(|prev| self.memory.history.counter(!us, prev));
        let mut picker = MovePicker::new(self.board.pos(), tt_move, killers, counter, conts);

        let original_alpha = alpha;
        let mut best_score = tb_floor;
        alpha = alpha.max(tb_floor);
        let mut best_move = None;
        let mut move_count = 0;
        // Whether the position has a legal move at all (mate and stalemate have none).
        let mut any_legal = false;
        let mut quiets_tried = MoveList::new();
        let mut captures_tried = MoveList::new();
        while let Some(mv) = picker.next_move(self.board.pos(), &self.memory.history) {
            any_legal = true;
            if Some(mv) == excluded || (root && !self.root_allowed(&mv)) {
                continue;
            }
            move_count += 1;
            let quiet = !is_tactical(mv);
            let refutation = quiet && (killers.contains(&Some(mv)) || counter == Some(mv));
            let history = if quiet {
                self.memory.history.quiet_score(us, mv, conts)
            } else {
                0
            };
            if !root && best_score > -DECISIVE {
                if quiet && !in_check {
                    // Late move pruning: deep in a poor move list, quiets rarely matter.
                    let limit =
                        (params::lmp_base() + depth * depth) / if improving { 1 } else { 2 };
                    if depth <= params::lmp_depth() && quiets_tried.len() as i32 >= limit {
                        continue;
                    }
                    // Futility: even a generous positional gain would not reach alpha.
                    if depth <= params::futility_depth()
                        && alpha.abs() < DECISIVE
                        && eval + params::futility_base() + params::futility_per_depth() * depth
                            <= alpha
                    {
                        continue;
                    }
                    // History: a quiet that keeps failing in these surroundings.
                    if depth <= params::history_prune_depth()
                        && !refutation
                        && history < -params::history_prune() * depth
                    {
                        continue;
                    }
                }
                let see_margin = if quiet {
                    -params::see_quiet() * depth * depth
                } else {
                    -params::see_capture() * depth
                };
                if depth <= params::see_depth() && !see_ge(self.board.pos(), mv, see_margin) {
                    continue;
                }
            }

            let extension = match hit {
                Some(h) if !root && encode_move(mv) == tt_move && excluded.is_none() => {
                    let verdict = self.singular(h, mv, depth, beta, ply, cut);
                    if self.stopped {
                        return 0;
                    }
                    match verdict {
                        Singular::Cut(score) => return score.min(tb_ceiling),
                        Singular::Extend(plies) => plies,
                    }
                }
                _ => 0,
            };

            if root && self.job.plan.elapsed().as_millis() > CURRMOVE_AFTER_MS {
                if let Some(listener) = self.listener {
                    listener.current_move(depth, mv, move_count, &self.progress());
                }
            }
            self.stack[ply].mv = Some(mv);
            self.stack[ply].piece_to = Some(piece_to(us, mv));
            let nodes_before = self.nodes;
            self.make_move(mv);
            let gives_check = self.board.in_check();
            let new_depth = depth - 1
                + if extension != 0 {
                    extension
                } else {
                    let parent = self.board.parent().expect("a move was just made");
                    check_extension(parent, mv, gives_check)
                };

            let score = if move_count == 1 {
                -self.negamax(-beta, -alpha, new_depth, ply + 1, !pv_node && !cut)
            } else {
                let mut reduction = 0;
                if depth >= 3 && move_count > 1 + usize::from(pv_node) && quiet {
                    reduction = self.lmr[depth.min(63) as usize][move_count.min(63)];
                    reduction -= i32::from(pv_node);
                    reduction += i32::from(!improving);
                    reduction += i32::from(cut);
                    reduction -= i32::from(gives_check);
                    reduction -= i32::from(refutation);
                    reduction -= history / params::lmr_history();
                    // Not clamp: an extended or reduced new_depth may leave nothing to reduce.
                    reduction = reduction.min(new_depth - 1).max(0);
                }
                let mut score =
                    -self.negamax(-alpha - 1, -alpha, new_depth - reduction, ply + 1, true);
                if score > alpha && reduction > 0 {
                    score = -self.negamax(-alpha - 1, -alpha, new_depth, ply + 1, !cut);
                }
                if score > alpha && pv_node {
                    score = -self.negamax(-beta, -alpha, new_depth, ply + 1, false);
                }
                score
            };
            self.unmake_move();
            if root {
                self.count_root_nodes(mv, self.nodes - nodes_before);
            }
            if self.stopped {
                return 0;
            }

            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(mv);
                    alpha = score;
                    self.update_pv(ply, mv);
                    if root {
                        self.root_best = Some((mv, score));
                    }
                    if score >= beta {
                        self.reward_cutoff(ply, depth, mv, &quiets_tried, &captures_tried);
                        break;
                    }
                }
            }
            if quiet {
                quiets_tried.push(mv);
            } else {
                captures_tried.push(mv);
            }
        }

        if !any_legal {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }
        if excluded.is_some() {
            // Only a fail high or low matters to the singular test; nothing is stored, since
            // the result leaves out a move. With no other legal move, alpha stands.
            return best_score.max(alpha);
        }
        // A score the tables set is a bound: a win found by no move is at least that win, a
        // loss the moves would have bettered is at most that loss.
        let bound = if best_score > tb_ceiling {
            Bound::Upper
        } else if best_move.is_none() && tb_floor > -INFINITY && best_score == tb_floor {
            Bound::Lower
        } else {
            bound_of(best_score, original_alpha, beta)
        };
        let best_score = best_score.min(tb_ceiling);
        // A quiet best move's score says how far the evaluation of this pawn structure was
        // off, where the bound does not leave that in doubt.
        let trusted = match bound {
            Bound::Lower => best_score > static_eval,
            Bound::Upper => best_score < static_eval,
            _ => true,
        };
        if !in_check
            && trusted
            && best_score.abs() < DECISIVE
            && best_move.is_none_or(|mv| !is_tactical(mv))
        {
            let us = self.board.turn();
            self.memory
                .correction
                .update(us, pawn_key, depth, best_score - raw_eval);
        }
        self.store(Record {
            key,
            ply: ply as i32,
            mv: best_move.map_or(0, encode_move),
            score: best_score,
            raw_eval,
            depth,
            bound,
        });
        best_score
    }

    /// The table's entry for the current position (key `key`). A decisive score whose mate or
    /// zeroing move lies further away than the fifty-move counter leaves here (the key does
    /// not know the counter) becomes the strongest score short of decisive.
    fn probe_tt(&self, key: u64, ply: usize) -> Option<Hit> {
        let mut hit = self.tt.probe(key, ply as i32)?;
        let magnitude = hit.score.abs();
        if magnitude > DECISIVE {
            let end = if magnitude > MATE_BOUND { MATE } else { TB_WIN };
            let distance = end - magnitude - ply as i32;
            if distance > 100 - self.board.pos().halfmoves() as i32 {
                hit.score = hit.score.signum() * (DECISIVE - 1);
            }
        }
        Some(hit)
    }

    /// The tablebase score and bound of the current position, where it follows a capture or
    /// pawn move and has few enough pieces (exactly the tables' most only from
    /// `SyzygyProbeDepth` on).
    fn probe_tablebases(&mut self, depth: i32, ply: usize) -> Option<(i32, Bound)> {
        let job: &Job = self.job;
        let probing = job.tablebases.as_ref()?;
        let pos = self.board.pos();
        let pieces = pos.board().occupied().count();
        if pieces > self.tb_cardinality
            || (pieces == self.tb_cardinality && depth < probing.rules.depth)
            || pos.halfmoves() != 0
            || pos.castles().any()
        {
            return None;
        }
        let wdl = probing.tables.probe_wdl(pos)?;
        self.tb_hits += 1;
        Some(crate::syzygy::search_score(wdl, &probing.rules, ply as i32))
    }

    /// The static evaluation corrected by what this thread's searches learned of the pawns,
    /// kept clear of the decisive range.
    fn corrected(&self, pawn_key: u64, raw_eval: i32) -> i32 {
        let corrected = self
            .memory
            .correction
            .corrected(self.board.turn(), pawn_key, raw_eval);
        corrected.clamp(-DECISIVE + 1, DECISIVE - 1)
    }

    /// Singular extension: whether the table move `mv` is the only good move here, found by a
    /// reduced search of all the others against a bar a little below the table's score.
    /// If even the others beat `beta`, the node is cut at once (multi-cut); if the table's
    /// score alone already beats `beta`, the table move is searched a ply shallower.
    fn singular(
        &mut self,
        hit: Hit,
        mv: Move,
        depth: i32,
        beta: i32,
        ply: usize,
        cut: bool,
    ) -> Singular {
        // Extensions stop at twice the iteration's depth, so chains of them stay finite.
        if depth < params::singular_depth()
            || ply as i32 >= 2 * self.root_depth
            || hit.depth < depth - 3
            || !matches!(hit.bound, Bound::Lower | Bound::Exact)
            || hit.score.abs() >= DECISIVE
        {
            return Singular::Extend(0);
        }
        let singular_beta = hit.score - params::singular_margin() * depth;
        self.stack[ply].excluded = Some(mv);
        let score = self.negamax(singular_beta - 1, singular_beta, (depth - 1) / 2, ply, cut);
        self.stack[ply].excluded = None;
        // The search above used this ply's PV slot.
        self.pv_len[ply] = ply;
        if score < singular_beta {
            Singular::Extend(1)
        } else if singular_beta >= beta {
            Singular::Cut(singular_beta)
        } else if hit.score >= beta {
            Singular::Extend(-1)
        } else {
            Singular::Extend(0)
        }
    }

    /// Records a position's static evaluation alone: no move, no bound, and a depth below any
    /// search's, so that any result of the position replaces it.
    fn store_eval(&mut self, key: u64, ply: usize, raw_eval: i32) {
        self.store(Record {
            key,
            ply: ply as i32,
            mv: 0,
            score: 0,
            raw_eval,
            depth: DEPTH_EVAL_ONLY,
            bound: Bound::None,
        });
    }

    /// Records a node's result in the table.
    fn store(&mut self, record: Record) {
        let outcome = self.tt.store(&record);
        self.stats.record_store(outcome);
    }

    /// `mv` caused a cutoff. A quiet one becomes a killer and the counter to the previous
    /// move, and its histories rise while the quiets tried before it fall; a capture's history
    /// rises. Either way the captures tried before it fall.
    fn reward_cutoff(
        &mut self,
        ply: usize,
        depth: i32,
        mv: Move,
        quiets_tried: &[Move],
        captures_tried: &[Move],
    ) {
        let us = self.board.turn();
        let bonus =
            (depth * depth * params::history_bonus_scale()).min(params::history_bonus_max());
        if is_tactical(mv) {
            self.memory.history.update_capture(us, mv, bonus);
        } else {
            let conts = self.continuations(ply);
            self.memory.history.add_killer(ply, mv);
            self.memory.history.update_quiet(us, mv, conts, bonus);
            for &other in quiets_tried {
                self.memory.history.update_quiet(us, other, conts, -bonus);
            }
            if let Some(previous) = ply.checked_sub(1).and_then(|p| self.stack[p].mv) {
                self.memory.history.set_counter(!us, previous, mv);
            }
        }
        for &other in captures_tried {
            self.memory.history.update_capture(us, other, -bonus);
        }
    }

    fn qsearch(&mut self, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.pv_len[ply] = ply;
        if self.count_node() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        // A quiet move into a repetition at depth 1 lands here: the draw comes first.
        if self.board.is_draw() {
            return 0;
        }
        let in_check = self.board.in_check();
        if ply >= PLY_LIMIT {
            return if in_check { 0 } else { self.evaluate() };
        }
        let pv_node = beta - alpha > 1;
        let key = self.board.key();
        let hit = self.probe_tt(key, ply);
        self.stats.record_probe(hit.is_some());
        if let Some(hit) = hit {
            if !pv_node && hit.cuts_off(0, alpha, beta) {
                self.stats.cutoffs += 1;
                return hit.score;
            }
        }
        let original_alpha = alpha;
        let (raw_eval, static_eval, mut best_score) = if in_check {
            (EVAL_NONE, EVAL_NONE, -MATE + ply as i32)
        } else {
            let raw = hit.map_or_else(|| self.evaluate(), |h| h.eval);
            let eval = self.corrected(self.board.pawn_key(), raw);
            // Standing pat: the side to move need not capture. The stand-pat score is a lower
            // bound of this quiescence search, worth keeping with the evaluation.
            if eval >= beta {
                if hit.is_none() {
                    self.store(Record {
                        key,
                        ply: ply as i32,
                        mv: 0,
                        score: eval,
                        raw_eval: raw,
                        depth: 0,
                        bound: Bound::Lower,
                    });
                }
                return eval;
            }
            alpha = alpha.max(eval);
            (raw, eval, eval)
        };

        let tt_move = hit.map_or(0, |h| h.mv);
        // In check every evasion is searched, ordered as in the main search.
        let mut picker = if in_check {
            let conts = self.continuations(ply);
            MovePicker::new(self.board.pos(), tt_move, [None; 2], None, conts)
        } else {
            MovePicker::tactical(self.board.pos(), tt_move)
        };
        let mut best_move = None;
        let mut any_legal = false;
        while let Some(mv) = picker.next_move(self.board.pos(), &self.memory.history) {
            any_legal = true;
            if !in_check {
                // Delta pruning: even winning the piece outright would not reach alpha.
                let gain = mv.capture().map_or(0, piece_value);
                if mv.promotion().is_none() && static_eval + gain + params::delta_margin() <= alpha
                {
                    continue;
                }
                if !see_ge(self.board.pos(), mv, 0) {
                    continue;
                }
            }
            self.make_move(mv);
            let score = -self.qsearch(-beta, -alpha, ply + 1);
            self.unmake_move();
            if self.stopped {
                return 0;
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    alpha = score;
                    best_move = Some(mv);
                    self.update_pv(ply, mv);
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        if in_check && !any_legal {
            return -MATE + ply as i32;
        }
        let bound = bound_of(best_score, original_alpha, beta);
        self.store(Record {
            key,
            ply: ply as i32,
            mv: best_move.map_or(0, encode_move),
            score: best_score,
            raw_eval,
            depth: 0,
            bound,
        });
        best_score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{fen::Fen, uci::UciMove, CastlingMode};

    #[test]
    fn only_checks_that_keep_their_material_are_extended() {
        // Qa4+ is safe; Qd5+ is taken by the knight for nothing.
        let pos: Chess = "kr6/8/5n2/8/8/8/8/K2Q4 w - - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let extension = |text: &str| {
            let mv = text.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            let mut child = pos.clone();
            child.play_unchecked(mv);
            check_extension(&pos, mv, child.is_check())
        };
        assert_eq!(extension("d1a4"), 1);
        assert_eq!(extension("d1d5"), 0);
        assert_eq!(extension("d1d2"), 0);
    }

    fn board(fen: &str) -> Board {
        Board::from_fen(fen, CastlingMode::Standard).unwrap()
    }

    #[test]
    fn the_search_never_probes_a_position_with_castling_rights() {
        let Some(dir) = crate::syzygy::tables_for_tests() else {
            return;
        };
        let tables = Arc::new(Syzygy::open(dir, |_| {}).syzygy.expect("tables"));
        let tt = Tt::new(1).unwrap();
        let shared = Shared::new(1);
        let mut memory = Memory::default();
        // The same four pieces just after a capture (halfmove clock 0), with and without
        // castling rights; the root is one ply above.
        for (fen, probed) in [
            ("r3k3/8/8/8/8/8/8/4K2R w Kq - 0 1", false),
            ("r3k3/8/8/8/8/8/8/4K2R w - - 0 1", true),
        ] {
            let mut job = Job::fixed_depth(board(fen), 4, Evaluation::built_in());
            job.tablebases = Some(Probing {
                tables: Arc::clone(&tables),
                rules: ProbeRules::default(),
                root: None,
            });
            let mut worker = Worker::new(0, &job, &tt, &shared, None, &mut memory);
            assert_eq!(worker.probe_tablebases(4, 1).is_some(), probed, "{fen}");
            assert_eq!(worker.tb_hits, u64::from(probed));
        }
    }

    #[test]
    fn a_decisive_table_score_beyond_the_fifty_move_rule_is_not_trusted() {
        let tt = Tt::new(1).unwrap();
        let shared = Shared::new(1);
        let mut memory = Memory::default();
        for (halfmoves, trusted) in [(0, true), (95, false)] {
            let b = board(&format!("6k1/8/8/8/8/8/8/R5K1 w - - {halfmoves} 80"));
            let key = b.key();
            let job = Job::fixed_depth(b, 4, Evaluation::built_in());
            let mut worker = Worker::new(0, &job, &tt, &shared, None, &mut memory);
            // A mate 20 plies from this node, found at ply 2.
            let mate = MATE - 22;
            worker.store(Record {
                key,
                ply: 2,
                mv: 0,
                score: mate,
                raw_eval: 0,
                depth: 10,
                bound: Bound::Lower,
            });
            let score = worker.probe_tt(key, 2).unwrap().score;
            assert_eq!(score == mate, trusted, "halfmoves {halfmoves}: {score}");
            assert!(score > 0 && (trusted || score == DECISIVE - 1));
        }
    }

    #[test]
    fn an_early_return_keeps_the_static_evaluation() {
        let board = Board::default();
        let key = board.key();
        let evaluation = Evaluation::built_in();
        let raw_eval = evaluation.evaluate(board.pos());
        let job = Job::fixed_depth(board, 1, evaluation);
        let tt = Tt::new(1).unwrap();
        let shared = Shared::new(1);
        let mut memory = Memory::default();
        let mut worker = Worker::new(0, &job, &tt, &shared, None, &mut memory);

        // Far above beta, reverse futility returns before the node stores a result.
        assert!(worker.negamax(-1001, -1000, 1, 1, false) > -1000);
        let hit = tt.probe(key, 1).expect("the evaluation is stored");
        assert_eq!((hit.bound, hit.mv, hit.eval), (Bound::None, 0, raw_eval));
        assert!(hit.depth < 0);

        // Standing pat in quiescence keeps its score as a lower bound.
        let tt = Tt::new(1).unwrap();
        worker.tt = &tt;
        let score = worker.qsearch(-1001, -1000, 1);
        let hit = tt.probe(key, 1).expect("the stand-pat is stored");
        assert_eq!(
            (hit.bound, hit.mv, hit.eval, hit.score, hit.depth),
            (Bound::Lower, 0, raw_eval, score, 0)
        );
    }
}
