//! The network's hidden layer before activation (the accumulator), kept for every position on
//! the line a search thread is looking at: one pair (White's perspective, Black's) per ply.
//! Making a move writes the next pair from the previous one and the few feature rows the move
//! changes; unmaking steps back, a null move copies. Nothing is rebuilt from scratch in the
//! normal course of a search.

use super::simd::Kernels;
use super::{feature, Network, QA, QB, SCALE};
use crate::board::{Change, Placement};
use arrayvec::ArrayVec;
use shakmaty::{Chess, Color, Move, Position};
use std::sync::Arc;

/// The feature rows of `placements` seen from `perspective`.
fn rows<'n>(
    net: &'n Network,
    perspective: Color,
    placements: &[Placement],
) -> ArrayVec<&'n [i16], 2> {
    placements
        .iter()
        .map(|&(color, role, square)| net.row(feature(perspective, color, role, square)))
        .collect()
}

fn side_index(color: Color) -> usize {
    match color {
        Color::White => 0,
        Color::Black => 1,
    }
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
        accumulators.refresh(root);
        accumulators
    }

    fn width(&self) -> usize {
        2 * self.net.hidden
    }

    /// Computes the current pair from nothing, for `pos`.
    fn refresh(&mut self, pos: &Chess) {
        let hidden = self.net.hidden;
        let start = self.ply * self.width();
        let pair = &mut self.values[start..start + 2 * hidden];
        for perspective in [Color::White, Color::Black] {
            let acc = &mut pair[side_index(perspective) * hidden..][..hidden];
            acc.copy_from_slice(&self.net.feature_bias);
            let board = pos.board();
            for square in board.occupied() {
                let piece = board.piece_at(square).expect("occupied square");
                let row = self
                    .net
                    .row(feature(perspective, piece.color, piece.role, square));
                for (a, &w) in acc.iter_mut().zip(row) {
                    *a = a.wrapping_add(w);
                }
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

    /// The move `mv` is made from `before`: the next ply's pair follows from this one.
    pub fn make(&mut self, before: &Chess, mv: Move) {
        let Some(change) = Change::of(before.turn(), mv) else {
            let mut after = before.clone();
            after.play_unchecked(mv);
            self.grow(self.ply + 1);
            self.ply += 1;
            self.refresh(&after);
            return;
        };
        self.grow(self.ply + 1);
        let (hidden, width) = (self.net.hidden, self.width());
        let (done, next) = self.values.split_at_mut((self.ply + 1) * width);
        let current = &done[self.ply * width..];
        for perspective in [Color::White, Color::Black] {
            let at = side_index(perspective) * hidden;
            self.kernels.update(
                &mut next[at..at + hidden],
                &current[at..at + hidden],
                &rows(&self.net, perspective, &change.added),
                &rows(&self.net, perspective, &change.removed),
            );
        }
        self.ply += 1;
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

    /// The evaluation of the current position, `turn` to move, in centipawns from its side.
    pub fn evaluate(&self, turn: Color) -> i32 {
        let hidden = self.net.hidden;
        let pair = &self.values[self.ply * self.width()..][..2 * hidden];
        let (white, black) = pair.split_at(hidden);
        let (ours, theirs) = match turn {
            Color::White => (white, black),
            Color::Black => (black, white),
        };
        let (our_weights, their_weights) = self.net.output_weights.split_at(hidden);
        let sum = self.kernels.screlu_dot(ours, our_weights)
            + self.kernels.screlu_dot(theirs, their_weights);
        let output = sum / i64::from(QA) + i64::from(self.net.output_bias);
        (output * i64::from(SCALE) / i64::from(QA * QB)) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use shakmaty::{fen::Fen, CastlingMode};

    /// A network of random weights within the limits, big enough to exercise the vector
    /// kernels' full chunks and tail.
    fn random_network(hidden: usize, seed: u64) -> Network {
        let mut rng = SplitMix64::new(seed);
        let mut values = |n: usize, limit: u64| -> Vec<i16> {
            (0..n)
                .map(|_| ((rng.next_u64() % (2 * limit + 1)) as i64 - limit as i64) as i16)
                .collect()
        };
        Network {
            hidden,
            feature_weights: values(super::super::INPUTS * hidden, 500),
            feature_bias: values(hidden, 500),
            output_weights: values(2 * hidden, 126),
            output_bias: 1234,
        }
    }

    fn position(fen: &str, mode: CastlingMode) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(mode).unwrap()
    }

    /// Random games from positions with castling (both modes), en passant and promotions at
    /// hand, made and unmade on the accumulators, which must equal the network computed from
    /// nothing at every step.
    #[test]
    fn incremental_updates_equal_the_evaluation_from_scratch() {
        let net = Arc::new(random_network(40, 3));
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
        let mut kinds = [0usize; 3];
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
                        acc.make(&pos, mv);
                        pos.play_unchecked(mv);
                        line.push(pos.clone());
                        assert_eq!(acc.evaluate(pos.turn()), net.evaluate(&pos), "{kernels:?}");
                        if rng.below(4) == 0 && !pos.is_check() {
                            // A null move and back: the pair is a copy, then gone.
                            acc.make_null();
                            let passed = pos.clone().swap_turn().unwrap();
                            assert_eq!(acc.evaluate(passed.turn()), net.evaluate(&passed));
                            acc.unmake();
                        }
                    }
                    // Unmaking retraces the line exactly.
                    line.pop();
                    while let Some(before) = line.pop() {
                        acc.unmake();
                        assert_eq!(acc.evaluate(before.turn()), net.evaluate(&before));
                    }
                }
            }
        }
        assert!(
            kinds.iter().all(|&n| n > 0),
            "castles, en passant, promotions: {kinds:?}"
        );
    }
}
