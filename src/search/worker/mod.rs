//! One thread's search: iterative deepening with aspiration windows (here), the principal
//! variation search (`negamax`) and the quiescence search (`qsearch`), all through one seam
//! (`make_move`, `unmake_move`, `make_null`, `unmake_null`, `evaluate`) that keeps the board
//! and the evaluation in step.

mod negamax;
mod qsearch;

use super::history::{Continuations, Memory, Surroundings};
use super::movepick::table_move;
use super::see::see_ge;
use super::strength::CANDIDATES;
use super::{Iteration, Job, Listener, Progress, Shared};
use crate::board::Board;
use crate::eval::correction::Keys;
use crate::eval::Evaluator;
use crate::params;
use crate::syzygy::Probing;
use crate::time::IterationReport;
use crate::tt::{Hit, Record, Tt, TtStats};
use crate::types::{
    mate_plies, Bound, PieceTo, DECISIVE, INFINITY, MATE, MATE_BOUND, MAX_PLY, TB_WIN,
};
use shakmaty::{Bitboard, Chess, Move, MoveList, Position};

/// Stored as the static eval of positions in check, which have none.
const EVAL_NONE: i32 = -32_000;
/// The table depth of an entry that holds only a static evaluation (quiescence results are
/// stored at depth 0).
const DEPTH_EVAL_ONLY: i32 = -1;

/// Root moves are reported as `currmove` only once the search has run this long.
const CURRMOVE_AFTER_MS: u128 = 3000;

/// From this halfmove clock on, a table score no longer cuts a search off: it was found where
/// the fifty-move rule was further away, and a win it promises may now be a draw by that rule
/// before it can be made (Stockfish stops at the same count).
const TABLE_CUT_HALFMOVE_LIMIT: u32 = 90;

#[derive(Clone, Copy, Default)]
struct Frame {
    static_eval: i32,
    /// The move made from this ply (`None` for a null move).
    mv: Option<Move>,
    /// That move as a continuation-history key.
    piece_to: Option<PieceTo>,
    /// The move a singular-extension search leaves out at this ply.
    excluded: Option<Move>,
    /// The squares the opponent attacks, set where the node's moves are searched.
    threats: Bitboard,
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
    /// Root moves already given a line in this iteration (MultiPV); `excluded` is the
    /// singular test's move alone.
    earlier_lines: Vec<Move>,
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
    /// `go nodes` (or a strength's budget) where this is the only thread: its own count is
    /// the total, so it is checked at every node rather than every 1024.
    own_node_limit: Option<u64>,
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
            // Helpers only fill the table: one line each is enough. A strength limit chooses
            // among the best root moves, so it needs their lines.
            multipv: match (id, job.strength) {
                (0, Some(_)) => job.multipv.max(CANDIDATES),
                (0, None) => job.multipv.max(1),
                _ => 1,
            },
            earlier_lines: Vec::new(),
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
            own_node_limit: job.limits.nodes.filter(|_| shared.threads() == 1),
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
        // The lines of the last complete iteration, best first.
        let mut complete: Vec<Iteration> = Vec::new();
        while depth <= max_depth {
            // Helpers search odd threads one ply deeper, so threads spread over two depths.
            let search_depth = if self.id % 2 == 1 && depth < max_depth {
                depth + 1
            } else {
                depth
            };
            let mut lines: Vec<Iteration> = Vec::with_capacity(lines_wanted);
            self.earlier_lines.clear();
            for (line, &previous) in previous_scores.iter().enumerate() {
                let (score, bound) = self.aspiration(search_depth, previous, line + 1);
                if self.stopped {
                    break;
                }
                let mut pv = self.root_pv(search_depth);
                if pv.is_empty() {
                    pv.push(root_moves[0]);
                }
                self.earlier_lines.push(pv[0]);
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
                // The lines asked for; a strength limit searches more than it shows.
                for (i, line) in lines.iter().enumerate().take(self.job.multipv.max(1)) {
                    listener.iteration(i + 1, line, &progress);
                }
            }
            complete = lines;
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
            if score.abs() > MATE_BOUND && search_depth > 2 * mate_plies(score) + 8 {
                break;
            }
            depth = search_depth + 1;
        }
        self.publish_nodes();
        // A strength limit plays the line its choice falls on; the best line as the search
        // left it (perhaps from a deeper, unfinished iteration) where that is the best one.
        if let Some(strength) = self.job.strength {
            let chosen = strength.choose(&complete, self.board.pos(), self.board.key());
            if chosen > 0 {
                result = complete[chosen].clone();
            }
        }
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
            let Some(mv) = table_move(board.pos(), board.in_check(), hit.mv) else {
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
            && !self.earlier_lines.contains(mv)
    }

    /// How this thread used the table.
    pub fn tt_stats(&self) -> TtStats {
        self.stats
    }

    fn mate_found(&self, score: i32) -> bool {
        self.job
            .limits
            .mate
            .is_some_and(|moves| score.abs() > MATE_BOUND && mate_plies(score) < 2 * moves)
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
    /// main thread also watches the clock and the node limit every 1024 nodes, and a lone
    /// thread its node limit at every node.
    fn count_node(&mut self) -> bool {
        // The node that would pass the limit is not searched.
        if self.own_node_limit.is_some_and(|limit| self.nodes >= limit) {
            self.shared.stop();
            self.stopped = true;
            return true;
        }
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
        let pos = self.board.pos();
        let mut score = self.evaluator.evaluate(pos);
        if let Some(strength) = self.job.strength {
            score += strength.noise(pos, self.board.key());
        }
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

    /// What the quiet histories of the moves at `ply` are looked up by: the moves before it
    /// and the threats its node found (`search_moves` sets them).
    fn surroundings(&self, ply: usize) -> Surroundings {
        Surroundings {
            conts: self.continuations(ply),
            threats: self.stack[ply].threats,
        }
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

    /// The table's entry for the current position (key `key`). A decisive score whose mate or
    /// zeroing move lies further away than the fifty-move counter leaves here (the key does
    /// not know the counter) becomes the strongest score short of decisive.
    pub(super) fn probe_tt(&self, key: u64, ply: usize) -> Option<Hit> {
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

    /// Whether a table score may stand for a search of the current position, where its bound
    /// and depth allow: not once the fifty-move rule is close (`TABLE_CUT_HALFMOVE_LIMIT`).
    pub(super) fn table_may_cut(&self) -> bool {
        self.board.pos().halfmoves() < TABLE_CUT_HALFMOVE_LIMIT
    }

    /// What the current position's evaluation correction is looked up by.
    pub(super) fn correction_keys(&self, ply: usize) -> Keys {
        Keys::of(&self.board, self.continuations(ply))
    }

    /// The static evaluation corrected by what this thread's searches learned of positions
    /// that share its keys, kept clear of the decisive range.
    pub(super) fn corrected(&self, keys: &Keys, raw_eval: i32) -> i32 {
        let corrected = self
            .memory
            .correction
            .corrected(self.board.turn(), keys, raw_eval);
        corrected.clamp(-DECISIVE + 1, DECISIVE - 1)
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
    pub(super) fn store(&mut self, record: Record) {
        let outcome = self.tt.store(&record);
        self.stats.record_store(outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Evaluation;
    use crate::syzygy::{ProbeRules, Syzygy};
    use crate::types::encode_move;
    use shakmaty::{fen::Fen, uci::UciMove, CastlingMode};
    use std::sync::Arc;

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
        let tables = Arc::new(Syzygy::open(&dir, |_| {}).syzygy.expect("tables"));
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
    fn no_table_score_cuts_near_the_fifty_move_rule() {
        let shared = Shared::new(1);
        let mut memory = Memory::default();
        // The start position, whose search stays far below 100, with a table entry claiming
        // at least 300 from a deeper search.
        for (halfmoves, cut) in [(0, true), (89, true), (90, false), (95, false)] {
            let b = board(&format!(
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - {halfmoves} 60"
            ));
            let tt = Tt::new(1).unwrap();
            tt.store(&Record {
                key: b.key(),
                ply: 1,
                mv: 0,
                score: 300,
                raw_eval: 0,
                depth: 10,
                bound: Bound::Lower,
            });
            let job = Job::fixed_depth(b, 2, Evaluation::built_in());
            let mut worker = Worker::new(0, &job, &tt, &shared, None, &mut memory);
            let score = worker.negamax(100, 101, 2, 1, false);
            // Near the rule the entry may still inform the node's evaluation, but the node
            // searches (or prunes) on its own: no cutoff is taken anywhere.
            let expected = if cut { (1, Some(300)) } else { (0, None) };
            let got = (worker.stats.cutoffs, cut.then_some(score));
            assert_eq!(got, expected, "halfmoves {halfmoves}");
        }
    }

    #[test]
    fn a_later_multipv_line_leaves_the_root_entry_to_the_first() {
        // Qxd5 wins a queen; every other move is far worse.
        let b = board("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1");
        let key = b.key();
        let mut job = Job::fixed_depth(b, 6, Evaluation::built_in());
        job.multipv = 3;
        let tt = Tt::new(1).unwrap();
        let shared = Shared::new(1);
        let mut memory = Memory::default();
        let best = Worker::new(0, &job, &tt, &shared, None, &mut memory).iterate();
        let hit = tt.probe(key, 0).expect("the root is stored");
        assert_eq!(hit.mv, encode_move(best.pv[0]));
        assert_eq!(hit.depth, 6);
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
