//! The network's hidden layer before activation (the accumulator), kept for every position on
//! the line a search thread is looking at: one pair (White's perspective, Black's) per ply.
//! Making a move writes the next pair from the previous one and the few feature rows the move
//! changes; unmaking steps back, a null move copies. Nothing is rebuilt from scratch in the
//! normal course of a search.

use super::simd::Kernels;
use super::{output_bucket, Network, View};
use crate::board::{Change, Placement};
use arrayvec::ArrayVec;
use shakmaty::{Chess, Color, File, Move, Position, Role, Square};
use std::sync::Arc;

/// The feature rows of `placements` seen through `view`.
fn rows<'n>(net: &'n Network, view: View, placements: &[Placement]) -> ArrayVec<&'n [i16], 2> {
    placements
        .iter()
        .map(|&(color, role, square)| net.row(view.feature(color, role, square)))
        .collect()
}

fn side_index(color: Color) -> usize {
    match color {
        Color::White => 0,
        Color::Black => 1,
    }
}

/// Where the king of the side making `mv` stands afterwards, if `mv` moves it.
fn king_destination(mv: Move) -> Option<Square> {
    match mv {
        Move::Normal {
            role: Role::King,
            to,
            ..
        } => Some(to),
        Move::Castle { king, rook } => {
            let file = if rook > king { File::G } else { File::C };
            Some(Square::from_coords(file, king.rank()))
        }
        _ => None,
    }
}

/// Whether a mirrored network sees a king on `a` and on `b` through different files.
fn crosses_the_middle(a: Square, b: Square) -> bool {
    (a.file() < File::E) != (b.file() < File::E)
}

/// The accumulators of one search thread.
pub struct Accumulators {
    net: Arc<Network>,
    kernels: Kernels,
    /// `[ply][perspective][hidden]`, flat: the values of the line from the root.
    values: Vec<i16>,
    /// The ply whose pair is current.
    ply: usize,
}

impl Accumulators {
    /// Accumulators for a search from `root`, with the fastest kernels of this CPU.
    pub fn new(net: Arc<Network>, root: &Chess) -> Accumulators {
        Accumulators::with_kernels(net, root, Kernels::detect())
    }

    pub(super) fn with_kernels(net: Arc<Network>, root: &Chess, kernels: Kernels) -> Accumulators {
        let width = 2 * net.hidden;
        let mut accumulators = Accumulators {
            net,
            kernels,
            // Room for a typical line; `grow` adds more if a search goes deeper.
            values: vec![0; 64 * width],
            ply: 0,
        };
        for perspective in [Color::White, Color::Black] {
            accumulators.refresh(root, perspective);
        }
        accumulators
    }

    fn width(&self) -> usize {
        2 * self.net.hidden
    }

    /// Computes the current ply's accumulator of `perspective` from nothing, for `pos`.
    fn refresh(&mut self, pos: &Chess, perspective: Color) {
        let hidden = self.net.hidden;
        let view = self.net.view(pos, perspective);
        let start = self.ply * self.width() + side_index(perspective) * hidden;
        let acc = &mut self.values[start..start + hidden];
        acc.copy_from_slice(&self.net.feature_bias);
        let board = pos.board();
        for square in board.occupied() {
            let piece = board.piece_at(square).expect("occupied square");
            let row = self.net.row(view.feature(piece.color, piece.role, square));
            for (a, &w) in acc.iter_mut().zip(row) {
                *a = a.wrapping_add(w);
            }
        }
    }

    /// Makes sure the pair of ply `ply` exists.
    fn grow(&mut self, ply: usize) {
        let needed = (ply + 1) * self.width();
        if self.values.len() < needed {
            self.values.resize(needed.max(2 * self.values.len()), 0);
        }
    }

    /// The move `mv` is made from `before`: the next ply's pair follows from this one, but
    /// for a perspective that now sees the board through other files (its king crossed the
    /// middle under a mirrored network), which is computed afresh.
    pub fn make(&mut self, before: &Chess, mv: Move) {
        self.grow(self.ply + 1);
        let us = before.turn();
        let change = Change::of(us, mv);
        let mut fresh: ArrayVec<Color, 2> = ArrayVec::new();
        if change.is_none() {
            fresh.extend([Color::White, Color::Black]);
        } else if self.net.mirrored {
            if let (Some(from), Some(to)) = (before.board().king_of(us), king_destination(mv)) {
                if crosses_the_middle(from, to) {
                    fresh.push(us);
                }
            }
        }
        if let Some(change) = &change {
            let (hidden, width) = (self.net.hidden, self.width());
            let (done, next) = self.values.split_at_mut((self.ply + 1) * width);
            let current = &done[self.ply * width..];
            for perspective in [Color::White, Color::Black] {
                if fresh.contains(&perspective) {
                    continue;
                }
                let view = self.net.view(before, perspective);
                let at = side_index(perspective) * hidden;
                self.kernels.update(
                    &mut next[at..at + hidden],
                    &current[at..at + hidden],
                    &rows(&self.net, view, &change.added),
                    &rows(&self.net, view, &change.removed),
                );
            }
        }
        self.ply += 1;
        if !fresh.is_empty() {
            let mut after = before.clone();
            after.play_unchecked(mv);
            for perspective in fresh {
                self.refresh(&after, perspective);
            }
        }
    }

    /// A null move changes no piece: the next ply's pair is a copy.
    pub fn make_null(&mut self) {
        self.grow(self.ply + 1);
        let width = self.width();
        let start = self.ply * width;
        self.values.copy_within(start..start + width, start + width);
        self.ply += 1;
    }

    /// Back to the previous ply's pair.
    pub fn unmake(&mut self) {
        self.ply = self.ply.checked_sub(1).expect("unmake without make");
    }

    /// The evaluation of the current position `pos`, in centipawns from the side to move.
    pub fn evaluate(&self, pos: &Chess) -> i32 {
        let hidden = self.net.hidden;
        let pair = &self.values[self.ply * self.width()..][..2 * hidden];
        let (white, black) = pair.split_at(hidden);
        let (ours, theirs) = match pos.turn() {
            Color::White => (white, black),
            Color::Black => (black, white),
        };
        let bucket = output_bucket(pos.board().occupied().count() as u32, self.net.buckets);
        let (our_weights, their_weights) = self.net.head(bucket);
        let sum = self.kernels.screlu_dot(ours, our_weights)
            + self.kernels.screlu_dot(theirs, their_weights);
        self.net.centipawns(sum, bucket)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::nnue::tests::random_network;
    use crate::rng::SplitMix64;
    use shakmaty::{fen::Fen, CastlingMode};

    fn position(fen: &str, mode: CastlingMode) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(mode).unwrap()
    }

    /// Random games from positions with castling (both modes), en passant and promotions at
    /// hand, made and unmade on the accumulators, which must equal the network computed from
    /// nothing at every step.
    #[test]
    fn incremental_updates_equal_the_evaluation_from_scratch() {
        for net in [
            random_network(40, 1, false, 3),
            random_network(40, super::super::OUTPUT_BUCKETS, true, 4),
        ] {
            replay_random_games(Arc::new(net));
        }
    }

    fn replay_random_games(net: Arc<Network>) {
        let starts = [
            (
                "r3k2r/pPpp1ppp/8/3Pp3/8/8/P1PPP1pP/R3K2R w KQkq e6 0 1",
                CastlingMode::Standard,
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                CastlingMode::Standard,
            ),
            // Chess960: the king on b1 castles with rooks on a1 and h1.
            (
                "rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w HAha - 0 1",
                CastlingMode::Chess960,
            ),
            (
                "8/2P5/8/3pP3/8/8/5p2/K6k w - d6 0 1",
                CastlingMode::Standard,
            ),
        ];
        let mut rng = SplitMix64::new(11);
        let mut kinds = [0usize; 4];
        for (fen, mode) in starts {
            for kernels in Kernels::available() {
                for _game in 0..8 {
                    let mut pos = position(fen, mode);
                    let mut acc = Accumulators::with_kernels(Arc::clone(&net), &pos, kernels);
                    let mut line = vec![pos.clone()];
                    for _ply in 0..60 {
                        let moves = pos.legal_moves();
                        if moves.is_empty() {
                            break;
                        }
                        let mv = moves[rng.below(moves.len())];
                        kinds[0] += usize::from(mv.is_castle());
                        kinds[1] += usize::from(mv.is_en_passant());
                        kinds[2] += usize::from(mv.is_promotion());
                        kinds[3] += usize::from(king_destination(mv).is_some_and(|to| {
                            crosses_the_middle(pos.board().king_of(pos.turn()).unwrap(), to)
                        }));
                        acc.make(&pos, mv);
                        pos.play_unchecked(mv);
                        line.push(pos.clone());
                        assert_eq!(acc.evaluate(&pos), net.evaluate(&pos), "{kernels:?}");
                        if rng.below(4) == 0 && !pos.is_check() {
                            // A null move and back: the pair is a copy, then gone.
                            acc.make_null();
                            let passed = pos.clone().swap_turn().unwrap();
                            assert_eq!(acc.evaluate(&passed), net.evaluate(&passed));
                            acc.unmake();
                        }
                    }
                    // Unmaking retraces the line exactly.
                    line.pop();
                    while let Some(before) = line.pop() {
                        acc.unmake();
                        assert_eq!(acc.evaluate(&before), net.evaluate(&before));
                    }
                }
            }
        }
        assert!(
            kinds.iter().all(|&n| n > 0),
            "castles, en passant, promotions, kings crossing the middle: {kinds:?}"
        );
    }
}
