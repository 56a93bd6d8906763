//! The network's hidden layer before activation (the accumulator), kept for every position on
//! the line a search thread is looking at: one pair (White's perspective, Black's) per ply.
//! Making a move writes the next pair from the previous one and the few feature rows the move
//! changes; unmaking steps back, a null move copies. A king move that changes how its side
//! sees the board (another king bucket, or the other half under mirroring) refreshes that
//! side's accumulator from the last one computed for the same view, by the difference of the
//! two boards (a cache of one accumulator per view: Koivisto's and Berserk's "finny table").

use super::simd::Kernels;
use super::{output_bucket, Network, View, INPUTS};
use crate::board::{Change, Placement};
use arrayvec::ArrayVec;
use shakmaty::{Bitboard, Chess, Color, File, Move, Position, Role, Square};
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

/// The last accumulator computed for one view, and the board it was computed for.
struct Cached {
    values: Vec<i16>,
    /// `[colour][role - 1]`: where the pieces stood.
    pieces: [[Bitboard; 6]; 2],
}

/// The slot of `view` in the cache: by perspective, king bucket and whether the files are
/// swapped.
fn cache_slot(view: View, king_buckets: usize) -> usize {
    let side = side_index(view.perspective);
    let bucket = view.offset / INPUTS;
    let swapped = usize::from(view.flip & 7 != 0);
    (side * king_buckets + bucket) * 2 + swapped
}

/// The accumulators of one search thread.
pub struct Accumulators {
    net: Arc<Network>,
    kernels: Kernels,
    /// `[ply][perspective][hidden]`, flat: the values of the line from the root.
    values: Vec<i16>,
    /// The ply whose pair is current.
    ply: usize,
    /// One entry per view (`cache_slot`), each starting as the biases of an empty board.
    cache: Vec<Cached>,
}

impl Accumulators {
    /// Accumulators for a search from `root`, with the fastest kernels of this CPU.
    pub fn new(net: Arc<Network>, root: &Chess) -> Accumulators {
        Accumulators::with_kernels(net, root, Kernels::detect())
    }

    pub(super) fn with_kernels(net: Arc<Network>, root: &Chess, kernels: Kernels) -> Accumulators {
        let width = 2 * net.hidden;
        let cache = (0..2 * net.king_buckets * 2)
            .map(|_| Cached {
                values: net.feature_bias.clone(),
                pieces: [[Bitboard::EMPTY; 6]; 2],
            })
            .collect();
        let mut accumulators = Accumulators {
            net,
            kernels,
            // Room for a typical line; `grow` adds more if a search goes deeper.
            values: vec![0; 64 * width],
            ply: 0,
            cache,
        };
        for perspective in [Color::White, Color::Black] {
            accumulators.refresh(root, perspective);
        }
        accumulators
    }

    fn width(&self) -> usize {
        2 * self.net.hidden
    }

    /// Computes the current ply's accumulator of `perspective` for `pos` from the cached one of
    /// the same view: the rows of the pieces that arrived since are added, those of the pieces
    /// that left are taken away, and the cache keeps the result.
    fn refresh(&mut self, pos: &Chess, perspective: Color) {
        let hidden = self.net.hidden;
        let start = self.ply * self.width() + side_index(perspective) * hidden;
        let view = self.net.view(pos, perspective);
        let cached = &mut self.cache[cache_slot(view, self.net.king_buckets)];
        let board = pos.board();
        for color in [Color::White, Color::Black] {
            for role in Role::ALL {
                let now = board.by_color(color) & board.by_role(role);
                let then = &mut cached.pieces[side_index(color)][role as usize - 1];
                for (squares, sign) in [(now & !*then, 1i16), (*then & !now, -1)] {
                    for square in squares {
                        let row = self.net.row(view.feature(color, role, square));
                        for (a, &w) in cached.values.iter_mut().zip(row) {
                            *a = a.wrapping_add(sign.wrapping_mul(w));
                        }
                    }
                }
                *then = now;
            }
        }
        self.values[start..start + hidden].copy_from_slice(&cached.values);
    }

    /// Makes sure the pair of ply `ply` exists.
    fn grow(&mut self, ply: usize) {
        let needed = (ply + 1) * self.width();
        if self.values.len() < needed {
            self.values.resize(needed.max(2 * self.values.len()), 0);
        }
    }

    /// The move `mv` is made from `before`: the next ply's pair follows from this one, but
    /// for a perspective whose king move changed its view (another king bucket, or the other
    /// half of the board under mirroring), which is refreshed.
    pub fn make(&mut self, before: &Chess, mv: Move) {
        self.grow(self.ply + 1);
        let us = before.turn();
        let change = Change::of(us, mv);
        let mut fresh: ArrayVec<Color, 2> = ArrayVec::new();
        if change.is_none() {
            fresh.extend([Color::White, Color::Black]);
        } else if let (Some(from), Some(to)) = (before.board().king_of(us), king_destination(mv)) {
            if self.net.king_view(us, from) != self.net.king_view(us, to) {
                fresh.push(us);
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
    use crate::eval::nnue::tests::{random_bucketed_network, random_network};
    use crate::eval::nnue::{KING_BUCKETS, OUTPUT_BUCKETS};
    use crate::rng::SplitMix64;
    use shakmaty::{fen::Fen, CastlingMode};

    fn position(fen: &str, mode: CastlingMode) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(mode).unwrap()
    }

    /// Random games from positions with castling (both modes), en passant and promotions at
    /// hand, made and unmade on the accumulators, which must equal the network computed from
    /// nothing at every step: through king moves into other buckets and across the middle,
    /// where the cache refreshes a side by difference.
    #[test]
    fn incremental_updates_equal_the_evaluation_from_scratch() {
        for net in [
            random_network(40, 1, false, 3),
            random_network(40, OUTPUT_BUCKETS, true, 4),
            random_bucketed_network(40, OUTPUT_BUCKETS, true, KING_BUCKETS, 5),
            random_bucketed_network(40, 1, false, KING_BUCKETS, 6),
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
                            let us = pos.turn();
                            net.king_view(us, pos.board().king_of(us).unwrap())
                                != net.king_view(us, to)
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
        // A plain network (one bucket, no mirroring) sees the board alike wherever its king
        // goes.
        let views_can_change = net.king_buckets > 1 || net.mirrored;
        assert!(
            kinds[..3].iter().all(|&n| n > 0) && (kinds[3] > 0) == views_can_change,
            "castles, en passant, promotions, king moves that change the view: {kinds:?}"
        );
    }
}
