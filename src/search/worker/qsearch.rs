//! The quiescence search: captures (and every evasion in check) until the position is quiet.

use super::{bound_of, Worker, EVAL_NONE};
use crate::eval::piece_value;
use crate::params;
use crate::search::movepick::{table_move, MovePicker};
use crate::search::see::see_ge;
use crate::tt::Record;
use crate::types::{encode_move, mated_in, piece_to, Bound, INFINITY, PLY_LIMIT};

impl Worker<'_> {
    /// The quiescence search of the current position in the window (`alpha`, `beta`).
    pub(super) fn qsearch(&mut self, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        debug_assert!(
            -INFINITY <= alpha && alpha < beta && beta <= INFINITY,
            "window ({alpha}, {beta})"
        );
        debug_assert!(ply <= PLY_LIMIT, "ply {ply}");
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
            (EVAL_NONE, EVAL_NONE, mated_in(ply))
        } else {
            let raw = hit.map_or_else(|| self.evaluate(), |h| h.eval);
            let eval = self.corrected(&self.correction_keys(ply), raw);
            // The table's bound, where it is tighter, is a better guess of standing pat than
            // the static evaluation (as in the main search).
            let stand_pat = hit.map_or(eval, |h| h.refine(eval));
            // Standing pat: the side to move need not capture. The stand-pat score is a lower
            // bound of this quiescence search, worth keeping with the evaluation.
            if stand_pat >= beta {
                if hit.is_none() {
                    self.store(Record {
                        key,
                        ply: ply as i32,
                        mv: 0,
                        score: stand_pat,
                        raw_eval: raw,
                        depth: 0,
                        bound: Bound::Lower,
                    });
                }
                return stand_pat;
            }
            alpha = alpha.max(stand_pat);
            (raw, eval, stand_pat)
        };

        let tt_move = hit.and_then(|h| table_move(self.board.pos(), in_check, h.mv));
        // In check every evasion is searched, ordered as in the main search.
        let mut picker = if in_check {
            self.stack[ply].threats = self.board.threats();
            MovePicker::new(true, tt_move, [None; 2], None, self.surroundings(ply))
        } else {
            MovePicker::tactical(tt_move)
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
            // The children's continuation keys (evasion ordering, the evaluation's correction).
            self.stack[ply].mv = Some(mv);
            self.stack[ply].piece_to = Some(piece_to(self.board.turn(), mv));
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
            return mated_in(ply);
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
