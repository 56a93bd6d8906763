//! The principal variation search of one node and what it needs: the table and tablebase
//! probes, the static evaluation's correction, singular extensions, the history rewards of a
//! cutoff.

use super::{bound_of, check_extension, Worker, CURRMOVE_AFTER_MS, EVAL_NONE};
use crate::board::gives_check;
use crate::eval::correction::Keys;
use crate::params;
use crate::search::movepick::{is_tactical, table_move, MovePicker};
use crate::search::see::see_ge;
use crate::tt::{Hit, Record};
use crate::types::{
    encode_move, mate_in, mated_in, piece_to, Bound, DECISIVE, INFINITY, MAX_PLY, PLY_LIMIT,
};
use shakmaty::{Move, MoveList, Position};
use std::ops::ControlFlow;

/// What the singular-extension search found about the table move.
enum Singular {
    /// Extend the table move by this many plies (-1 reduces it).
    Extend(i32),
    /// The other moves beat beta too: return this score.
    Cut(i32),
}

/// What a node knows once it has probed the table and evaluated itself, before its moves.
struct Node {
    ply: usize,
    depth: i32,
    root: bool,
    pv_node: bool,
    /// Expected to fail high.
    cut: bool,
    in_check: bool,
    /// The move a singular-extension search leaves out here.
    excluded: Option<Move>,
    key: u64,
    /// What the evaluation's correction is looked up by (`None` in check, where there is no
    /// static evaluation to correct).
    correction_keys: Option<Keys>,
    hit: Option<Hit>,
    /// The table's move, legal here (a torn entry or a key collision leaves none).
    tt_move: Option<Move>,
    /// The evaluation as the table keeps it, before the correction.
    raw_eval: i32,
    /// The corrected static evaluation (`EVAL_NONE` in check).
    static_eval: i32,
    /// The best guess of the node's score: the static evaluation, or the table's bound where
    /// it is tighter.
    eval: i32,
    /// The static evaluation rose since our last move.
    improving: bool,
}

/// The tablebases' verdict on a node that they do not settle: its moves' scores are at least
/// `floor` (a win, which a mate may better) and at most `ceiling` (a loss).
struct TablebaseBounds {
    floor: i32,
    ceiling: i32,
}

/// Where a move stands in the node's move list, for pruning and reductions.
struct MoveFacts {
    quiet: bool,
    /// A killer or the counter-move.
    refutation: bool,
    history: i32,
    move_count: usize,
    /// A quiet move's late-move reduction by depth, move number and history, before the
    /// adjustments that need the node or the move played (0 for a tactical move). Pruning
    /// measures its margins at the depth it leaves; the reduced search starts from it.
    planned_reduction: i32,
}

impl Worker<'_> {
    /// The principal variation search of the current position to `depth` in the window
    /// (`alpha`, `beta`), `ply` plies from the root; `cut` says the node is expected to fail
    /// high. Step by step: the node's end by rule or distance, the table, the evaluation, the
    /// tablebases, pruning of the whole node, then each move, then the result's bound, the
    /// evaluation's correction and the table.
    pub(super) fn negamax(
        &mut self,
        mut alpha: i32,
        mut beta: i32,
        depth: i32,
        ply: usize,
        cut: bool,
    ) -> i32 {
        debug_assert!(
            -INFINITY <= alpha && alpha < beta && beta <= INFINITY,
            "window ({alpha}, {beta})"
        );
        debug_assert!(ply <= PLY_LIMIT, "ply {ply}");
        // A PV node (an open window) is never expected to fail high.
        debug_assert!(
            !(cut && beta - alpha > 1),
            "a cut node with window ({alpha}, {beta})"
        );
        if depth <= 0 {
            return self.qsearch(alpha, beta, ply);
        }
        self.pv_len[ply] = ply;
        if self.count_node() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        let root = ply == 0;
        let in_check = self.board.in_check();
        if !root {
            if self.board.is_draw() {
                return 0;
            }
            if ply >= PLY_LIMIT {
                return if in_check { 0 } else { self.evaluate() };
            }
            // No mate found from here can be shorter than one already found nearer the root.
            alpha = alpha.max(mated_in(ply));
            beta = beta.min(mate_in(ply + 1));
            if alpha >= beta {
                return alpha;
            }
        }
        let node = match self.enter_node(alpha, beta, depth, ply, cut, in_check) {
            ControlFlow::Continue(node) => node,
            ControlFlow::Break(score) => return score,
        };
        let tablebases = match self.tablebase_bounds(&node, alpha, beta) {
            ControlFlow::Continue(bounds) => bounds,
            ControlFlow::Break(score) => return score,
        };
        self.memory.history.clear_killers(ply + 1);
        if let Some(score) = self.prune_node(&node, beta) {
            return score;
        }
        // Without a table move the ordering is poor: search a ply shallower first.
        let depth =
            if node.tt_move.is_none() && depth >= params::iir_depth() && (node.pv_node || cut) {
                depth - 1
            } else {
                depth
            };
        let node = Node { depth, ..node };
        self.search_moves(&node, alpha, beta, &tablebases)
    }

    /// Probes the table (which may settle the node) and evaluates the position: the node as
    /// its moves will see it, or the score that ends it.
    fn enter_node(
        &mut self,
        alpha: i32,
        beta: i32,
        depth: i32,
        ply: usize,
        cut: bool,
        in_check: bool,
    ) -> ControlFlow<i32, Node> {
        let root = ply == 0;
        let pv_node = beta - alpha > 1;
        // Set while this node is a singular-extension search that leaves out one move.
        let excluded = self.stack[ply].excluded;
        let key = self.board.key();
        let hit = self.probe_tt(key, ply);
        self.stats.record_probe(hit.is_some());
        if let Some(hit) = hit {
            // Near the fifty-move rule no table score stands (`table_may_cut`).
            // PV nodes search on: a table score carries no repetition or fifty-move context of
            // this line and would cut the PV short. The one exception is an exact entry deeper
            // than this whole iteration, which only an earlier search (a previous move, or a
            // loaded hash file) can have left: re-searching it here would only overwrite deep
            // analysis with shallower results along the PV.
            // The entry speaks for all moves, so a search without one of them cannot use it.
            let usable = excluded.is_none()
                && self.table_may_cut()
                && (!pv_node
                    || (hit.bound == Bound::Exact && !root && hit.depth > self.root_depth));
            if usable && hit.cuts_off(depth, alpha, beta) {
                self.stats.cutoffs += 1;
                return ControlFlow::Break(hit.score);
            }
        }

        // The table keeps the raw evaluation; the search uses it corrected by what searches of
        // similar positions found.
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
        let correction_keys = (!in_check).then(|| self.correction_keys(ply));
        let static_eval = match &correction_keys {
            Some(keys) => self.corrected(keys, raw_eval),
            None => EVAL_NONE,
        };
        // The table's bound, where it is tighter, is a better guess than the static eval
        // (but not without the table's move, which the bound may owe everything to).
        let eval = match hit {
            Some(h) if !in_check && excluded.is_none() => h.refine(static_eval),
            _ => static_eval,
        };
        self.stack[ply].static_eval = static_eval;
        let improving = !in_check
            && ply >= 2
            && (self.stack[ply - 2].static_eval == EVAL_NONE
                || static_eval > self.stack[ply - 2].static_eval);
        ControlFlow::Continue(Node {
            ply,
            depth,
            root,
            pv_node,
            cut,
            in_check,
            excluded,
            key,
            correction_keys,
            hit,
            tt_move: hit.and_then(|h| table_move(self.board.pos(), in_check, h.mv)),
            raw_eval,
            static_eval,
            eval,
            improving,
        })
    }

    /// Tablebases: after a capture or pawn move into few enough pieces the tables know the
    /// outcome. A result that settles the window ends the node (`Break`, stored); otherwise a
    /// PV node keeps it as a floor or a ceiling for its moves.
    fn tablebase_bounds(
        &mut self,
        node: &Node,
        alpha: i32,
        beta: i32,
    ) -> ControlFlow<i32, TablebaseBounds> {
        let mut bounds = TablebaseBounds {
            floor: -INFINITY,
            ceiling: INFINITY,
        };
        if node.root || node.excluded.is_some() {
            return ControlFlow::Continue(bounds);
        }
        let Some((score, bound)) = self.probe_tablebases(node.depth, node.ply) else {
            return ControlFlow::Continue(bounds);
        };
        let settles = match bound {
            Bound::Lower => score >= beta,
            Bound::Upper => score <= alpha,
            _ => true,
        };
        if settles {
            self.store(Record {
                key: node.key,
                ply: node.ply as i32,
                mv: 0,
                score,
                raw_eval: node.raw_eval,
                depth: (node.depth + 6).min(MAX_PLY - 1),
                bound,
            });
            return ControlFlow::Break(score);
        }
        if node.pv_node {
            match bound {
                Bound::Lower => bounds.floor = score,
                _ => bounds.ceiling = score,
            }
        }
        ControlFlow::Continue(bounds)
    }

    /// Pruning of the whole node before its moves, off the PV and out of check: the score
    /// that ends it, if any.
    fn prune_node(&mut self, node: &Node, beta: i32) -> Option<i32> {
        if node.pv_node || node.in_check {
            return None;
        }
        let (depth, eval, ply) = (node.depth, node.eval, node.ply);
        // Reverse futility: far enough above beta that a shallow search will not drop back.
        if depth <= params::rfp_depth()
            && eval.abs() < DECISIVE
            && beta.abs() < DECISIVE
            && eval - params::rfp_margin() * (depth - i32::from(node.improving)) >= beta
        {
            return Some(eval);
        }
        // Null move: if passing still fails high, a real move will too (zugzwang aside,
        // hence the non-pawn material guard).
        if depth >= params::nmp_depth()
            && node.excluded.is_none()
            && eval >= beta
            && beta.abs() < DECISIVE
            && !node.root
            && self.stack[ply - 1].mv.is_some()
            && self.board.has_non_pawn_material()
        {
            let reduction = params::nmp_base()
                + depth / params::nmp_depth_divisor()
                + ((eval - beta) / params::nmp_eval_divisor()).min(params::nmp_eval_max());
            self.stack[ply].mv = None;
            self.stack[ply].piece_to = None;
            self.make_null();
            let score = -self.negamax(-beta, -beta + 1, depth - 1 - reduction, ply + 1, !node.cut);
            self.unmake_null();
            if self.stopped {
                return Some(0);
            }
            if score >= beta {
                return Some(if score >= DECISIVE { beta } else { score });
            }
        }
        None
    }

    /// Searches the node's moves, best first as the picker orders them, and records the
    /// result.
    fn search_moves(
        &mut self,
        node: &Node,
        mut alpha: i32,
        beta: i32,
        tablebases: &TablebaseBounds,
    ) -> i32 {
        let (ply, depth) = (node.ply, node.depth);
        let previous = if ply > 0 {
            self.stack[ply - 1].mv
        } else {
            None
        };
        let us = self.board.turn();
        self.stack[ply].threats = self.board.threats();
        let around = self.surroundings(ply);
        let killers = self.memory.history.killers(ply);
        let counter = previous.and_then(|prev| self.memory.history.counter(!us, prev));
        let mut picker = MovePicker::new(node.in_check, node.tt_move, killers, counter, around);

        let original_alpha = alpha;
        let mut best_score = tablebases.floor;
        alpha = alpha.max(tablebases.floor);
        let mut best_move = None;
        let mut move_count = 0;
        // Whether the position has a legal move at all (mate and stalemate have none).
        let mut any_legal = false;
        let mut quiets_tried = MoveList::new();
        let mut captures_tried = MoveList::new();
        while let Some(mv) = picker.next_move(self.board.pos(), &self.memory.history) {
            any_legal = true;
            if Some(mv) == node.excluded || (node.root && !self.root_allowed(&mv)) {
                continue;
            }
            move_count += 1;
            let quiet = !is_tactical(mv);
            let history = if quiet {
                self.memory.history.quiet_score(us, mv, &around)
            } else {
                0
            };
            let facts = MoveFacts {
                quiet,
                refutation: quiet && (killers.contains(&Some(mv)) || counter == Some(mv)),
                history,
                move_count,
                planned_reduction: if quiet {
                    self.lmr[depth.clamp(0, 63) as usize][move_count.min(63)]
                        - history / params::lmr_history()
                } else {
                    0
                },
            };
            if !node.root
                && best_score > -DECISIVE
                && self.prunes_move(node, mv, &facts, alpha, quiets_tried.len())
            {
                continue;
            }

            let extension = match node.hit {
                Some(h) if !node.root && Some(mv) == node.tt_move && node.excluded.is_none() => {
                    let verdict = self.singular(h, mv, depth, beta, ply, node);
                    if self.stopped {
                        return 0;
                    }
                    match verdict {
                        Singular::Cut(score) => return score.min(tablebases.ceiling),
                        Singular::Extend(plies) => plies,
                    }
                }
                _ => 0,
            };

            if node.root && self.job.plan.elapsed().as_millis() > CURRMOVE_AFTER_MS {
                if let Some(listener) = self.listener {
                    listener.current_move(depth, mv, move_count, &self.progress());
                }
            }
            let score = self.search_move(node, mv, &facts, extension, (alpha, beta), best_score);
            if self.stopped {
                return 0;
            }

            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(mv);
                    alpha = score;
                    self.update_pv(ply, mv);
                    if node.root {
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
            return if node.in_check { mated_in(ply) } else { 0 };
        }
        if node.excluded.is_some() {
            // Nothing is stored, since the result leaves out a move. The singular test reads
            // how far below its bar the other moves stayed; with no other move searched,
            // alpha stands.
            return if best_score == -INFINITY {
                alpha
            } else {
                best_score
            };
        }
        // A fail low (the result is an upper bound), and not a node that the tablebases'
        // floor kept above alpha: no move here was good enough.
        if best_score <= original_alpha && !node.root {
            self.reward_refuting_quiet(ply, depth);
        }
        // An exact result: the best move raised alpha without a cutoff, and is rewarded over
        // the moves tried before it as a cutoff's move is (Stockfish rewards either).
        if let Some(best) = best_move.filter(|_| best_score < beta) {
            let before = |tried: &[Move]| -> MoveList {
                tried.iter().copied().take_while(|&mv| mv != best).collect()
            };
            let (quiets, captures) = (before(&quiets_tried), before(&captures_tried));
            self.reward_cutoff(ply, depth, best, &quiets, &captures);
        }
        self.record_result(
            node,
            best_score,
            best_move,
            original_alpha,
            beta,
            tablebases,
        )
    }

    /// Whether `mv` is pruned without a search: a quiet move that is late, futile or with a
    /// poor history and gives no check, or any move losing too much material by SEE. Never at
    /// the root, nor before a move has escaped a mate.
    fn prunes_move(
        &self,
        node: &Node,
        mv: Move,
        facts: &MoveFacts,
        alpha: i32,
        quiets_tried: usize,
    ) -> bool {
        let depth = node.depth;
        // The depth the move would be searched at after its late-move reduction (before the
        // adjustments that need the move played): the futility and SEE margins of a quiet
        // move are measured against it, not the node's full depth.
        let reduced_depth = if facts.quiet {
            (depth - 1 - facts.planned_reduction).clamp(0, depth)
        } else {
            depth
        };
        // Quiet checks are spared the pruning of quiet moves below: the moves that mate are
        // checks, and the side that mates is often behind in material until it does. Whether
        // a move checks is asked only at depths where one of those prunings applies.
        let quiet_depth = params::lmp_depth()
            .max(params::futility_depth())
            .max(params::history_prune_depth());
        if facts.quiet
            && !node.in_check
            && depth <= quiet_depth
            && !gives_check(self.board.pos(), mv)
        {
            // Late move pruning: deep in a poor move list, quiets rarely matter.
            let limit = (params::lmp_base() + depth * depth) / if node.improving { 1 } else { 2 };
            if depth <= params::lmp_depth() && quiets_tried as i32 >= limit {
                return true;
            }
            // Futility: even a generous positional gain would not reach alpha.
            if depth <= params::futility_depth()
                && alpha.abs() < DECISIVE
                && node.eval
                    + params::futility_base()
                    + params::futility_per_depth() * reduced_depth
                    <= alpha
            {
                return true;
            }
            // History: a quiet that keeps failing in these surroundings.
            if depth <= params::history_prune_depth()
                && !facts.refutation
                && facts.history < -params::history_prune() * depth
            {
                return true;
            }
        }
        let see_margin = if facts.quiet {
            -params::see_quiet() * reduced_depth * reduced_depth
        } else {
            -params::see_capture() * depth
        };
        depth <= params::see_depth() && !see_ge(self.board.pos(), mv, see_margin)
    }

    /// Makes `mv`, searches it (the first move with the full window; the others with a null
    /// window, reduced if late and quiet, then again as needed) and takes it back: its score.
    /// `best_score` is the best of the node's moves so far: how far a reduced search beats it
    /// sets the depth of the search again.
    fn search_move(
        &mut self,
        node: &Node,
        mv: Move,
        facts: &MoveFacts,
        extension: i32,
        (alpha, beta): (i32, i32),
        best_score: i32,
    ) -> i32 {
        let (ply, depth, pv_node, cut) = (node.ply, node.depth, node.pv_node, node.cut);
        let us = self.board.turn();
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

        let score = if facts.move_count == 1 {
            -self.negamax(-beta, -alpha, new_depth, ply + 1, !pv_node && !cut)
        } else {
            let mut reduction = 0;
            if depth >= 3 && facts.move_count > 1 + usize::from(pv_node) && facts.quiet {
                reduction = facts.planned_reduction;
                reduction -= i32::from(pv_node);
                reduction += i32::from(!node.improving);
                reduction += i32::from(cut);
                reduction -= i32::from(gives_check);
                reduction -= i32::from(facts.refutation);
                // Not clamp: an extended or reduced new_depth may leave nothing to reduce.
                reduction = reduction.min(new_depth - 1).max(0);
            }
            let mut score = -self.negamax(-alpha - 1, -alpha, new_depth - reduction, ply + 1, true);
            if score > alpha && reduction > 0 {
                // Far above the best so far: a ply deeper than planned; barely above it: a ply
                // shallower, unless that is no deeper than the reduced search just made.
                let deeper =
                    score > best_score.saturating_add(params::deeper_margin() + 2 * new_depth);
                let shallower = score < best_score.saturating_add(params::shallower_margin());
                let again = new_depth + i32::from(deeper) - i32::from(shallower);
                if again > new_depth - reduction {
                    score = -self.negamax(-alpha - 1, -alpha, again, ply + 1, !cut);
                }
            }
            if score > alpha && pv_node {
                score = -self.negamax(-beta, -alpha, new_depth, ply + 1, false);
            }
            score
        };
        self.unmake_move();
        if node.root {
            self.count_root_nodes(mv, self.nodes - nodes_before);
        }
        score
    }

    /// The node's result: its bound (which the tablebases may set), the evaluation's
    /// correction by it, and the table entry. Returns the score.
    fn record_result(
        &mut self,
        node: &Node,
        best_score: i32,
        best_move: Option<Move>,
        original_alpha: i32,
        beta: i32,
        tablebases: &TablebaseBounds,
    ) -> i32 {
        // A score the tables set is a bound: a win found by no move is at least that win, a
        // loss the moves would have bettered is at most that loss.
        let bound = if best_score > tablebases.ceiling {
            Bound::Upper
        } else if best_move.is_none()
            && tablebases.floor > -INFINITY
            && best_score == tablebases.floor
        {
            Bound::Lower
        } else {
            bound_of(best_score, original_alpha, beta)
        };
        let best_score = best_score.min(tablebases.ceiling);
        // A later MultiPV line searches the root without the lines before it: its result is
        // not the position's, so neither the correction nor the table learns it (the table's
        // move would lead the next iteration's first line with this line's move).
        if node.root && !self.earlier_lines.is_empty() {
            return best_score;
        }
        // A quiet best move's score says how far the corrected evaluation was still off, where
        // the bound does not leave that in doubt.
        let trusted = match bound {
            Bound::Lower => best_score > node.static_eval,
            Bound::Upper => best_score < node.static_eval,
            _ => true,
        };
        if let Some(keys) = node.correction_keys.as_ref().filter(|_| {
            trusted && best_score.abs() < DECISIVE && best_move.is_none_or(|mv| !is_tactical(mv))
        }) {
            let us = self.board.turn();
            self.memory
                .correction
                .update(us, keys, node.depth, best_score - node.static_eval);
        }
        self.store(Record {
            key: node.key,
            ply: node.ply as i32,
            mv: best_move.map_or(0, encode_move),
            score: best_score,
            raw_eval: node.raw_eval,
            depth: node.depth,
            bound,
        });
        best_score
    }

    /// The tablebase score and bound of the current position, where it follows a capture or
    /// pawn move and has few enough pieces (exactly the tables' most only from
    /// `SyzygyProbeDepth` on).
    pub(super) fn probe_tablebases(&mut self, depth: i32, ply: usize) -> Option<(i32, Bound)> {
        let job: &crate::search::Job = self.job;
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
        node: &Node,
    ) -> Singular {
        let cut = node.cut;
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
        if score < singular_beta - params::double_extension_margin() && !node.pv_node {
            // Far below the bar: the table move is the only move by a wide margin.
            Singular::Extend(2)
        } else if score < singular_beta {
            Singular::Extend(1)
        } else if singular_beta >= beta {
            Singular::Cut(singular_beta)
        } else if hit.score >= beta {
            Singular::Extend(-1)
        } else {
            Singular::Extend(0)
        }
    }

    /// No move here reached alpha: the opponent's last move, if quiet, refuted everything we
    /// had, and its histories rise as if it had cut off at its own node.
    fn reward_refuting_quiet(&mut self, ply: usize, depth: i32) {
        let Some(previous) = self.stack[ply - 1].mv.filter(|mv| !is_tactical(*mv)) else {
            return;
        };
        let bonus = history_bonus(depth);
        let around = self.surroundings(ply - 1);
        let them = !self.board.turn();
        self.memory
            .history
            .update_quiet(them, previous, &around, bonus);
    }

    /// `mv` caused a cutoff (or was the best move of an exact result). A quiet one becomes a
    /// killer and the counter to the previous move, and its histories rise while the quiets
    /// tried before it fall; a capture's history rises. Either way the captures tried before it
    /// fall.
    fn reward_cutoff(
        &mut self,
        ply: usize,
        depth: i32,
        mv: Move,
        quiets_tried: &[Move],
        captures_tried: &[Move],
    ) {
        let us = self.board.turn();
        let bonus = history_bonus(depth);
        if is_tactical(mv) {
            self.memory.history.update_capture(us, mv, bonus);
        } else {
            let around = self.surroundings(ply);
            self.memory.history.add_killer(ply, mv);
            self.memory.history.update_quiet(us, mv, &around, bonus);
            for &other in quiets_tried {
                self.memory.history.update_quiet(us, other, &around, -bonus);
            }
            if let Some(previous) = ply.checked_sub(1).and_then(|p| self.stack[p].mv) {
                self.memory.history.set_counter(!us, previous, mv);
            }
        }
        for &other in captures_tried {
            self.memory.history.update_capture(us, other, -bonus);
        }
    }
}

/// The history bonus of a cutoff at `depth` (and the malus of the moves it beat).
fn history_bonus(depth: i32) -> i32 {
    (depth * depth * params::history_bonus_scale()).min(params::history_bonus_max())
}
