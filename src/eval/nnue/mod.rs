//! The network's shape and file format, shared by the trainer (`tools::train`) and the
//! engine: a (768 -> N) x 2 -> 1 perspective network with SCReLU, quantised to i16 as
//! bullet's simple example does (QA = 255, QB = 64, eval scale 400; source: jw1912/bullet,
//! `examples/simple.rs`).
//!
//! The 768 inputs are (side, role, square) seen from one perspective: the side to move's
//! pieces come first and its board is the right way up; the other perspective swaps the
//! sides and mirrors the ranks. Both perspectives share one feature transformer; the output
//! layer has a weight for each hidden unit of each.

mod accumulator;
mod simd;

pub use accumulator::Accumulators;
pub use simd::Kernels;

use shakmaty::{Chess, Color, Position, Role, Square};
use std::sync::{Arc, OnceLock};

pub const INPUTS: usize = 768;
/// Quantisation of the feature transformer (weights and biases times QA).
pub const QA: i32 = 255;
/// Quantisation of the output weights.
pub const QB: i32 = 64;
/// The network's output times this is the evaluation in centipawns.
pub const SCALE: i32 = 400;
/// Weights are kept within this so that a clamped activation times an output weight fits an
/// i16 (255 x 1.98 x 64 < 32,767), which SIMD kernels rely on.
pub const WEIGHT_LIMIT: f32 = 1.98;

const MAGIC: &[u8; 4] = b"FENN";
/// The network built into the binary: the engine's evaluation unless `EvalFile` (or
/// `--eval-file`) names another. `nets/README.md` says how it was made and the match that
/// admitted it.
const BUILT_IN: &[u8] = include_bytes!("../../../nets/ferrite-net-1.nnue");
const VERSION: u32 = 1;

/// The feature of a piece of `color` and `role` on `square`, seen from `perspective`.
pub fn feature(perspective: Color, color: Color, role: Role, square: Square) -> usize {
    let (side, square) = match perspective {
        Color::White => (usize::from(color != Color::White), square as usize),
        Color::Black => (usize::from(color != Color::Black), square as usize ^ 56),
    };
    side * 384 + (role as usize - 1) * 64 + square
}

/// A quantised network as the engine uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    pub hidden: usize,
    /// `[feature][hidden]`, times QA.
    pub feature_weights: Vec<i16>,
    /// Times QA.
    pub feature_bias: Vec<i16>,
    /// The side to move's hidden units, then the other side's; times QB.
    pub output_weights: Vec<i16>,
    /// Times QA x QB.
    pub output_bias: i32,
}

impl Network {
    /// The file: "FENN", version, N (u32 little-endian), then the feature weights, feature
    /// biases and output weights as i16 and the output bias as i32, all little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(12 + 2 * (INPUTS + 3) * self.hidden + 4);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(self.hidden as u32).to_le_bytes());
        for w in self
            .feature_weights
            .iter()
            .chain(&self.feature_bias)
            .chain(&self.output_weights)
        {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(&self.output_bias.to_le_bytes());
        out
    }

    /// Reads a network file, refusing anything that is not one whole network.
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, String> {
        if bytes.len() < 12 || &bytes[..4] != MAGIC {
            return Err("not a Ferrite network file".to_string());
        }
        let word = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        if word(4) != VERSION {
            return Err(format!(
                "network format version {} (expected {VERSION})",
                word(4)
            ));
        }
        let hidden = word(8) as usize;
        if hidden == 0 || hidden > 1 << 14 {
            return Err(format!("hidden layer of {hidden} units"));
        }
        let expected = 12 + 2 * (INPUTS + 3) * hidden + 4;
        if bytes.len() != expected {
            return Err(format!(
                "{} bytes where a network of {hidden} hidden units has {expected}",
                bytes.len()
            ));
        }
        let mut values = bytes[12..expected - 4]
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]));
        let mut take = |n: usize| values.by_ref().take(n).collect::<Vec<i16>>();
        let feature_weights = take(INPUTS * hidden);
        let feature_bias = take(hidden);
        let output_weights = take(2 * hidden);
        let output_bias = i32::from_le_bytes(bytes[expected - 4..].try_into().expect("4 bytes"));
        // The kernels' arithmetic stays in 16 bits only for weights within the trainer's
        // limit; a network beyond it would silently evaluate wrong, so it is refused.
        let limit = |q: i32| (WEIGHT_LIMIT * q as f32).round() as i16;
        let (feature_limit, output_limit) = (limit(QA), limit(QB));
        if feature_weights
            .iter()
            .chain(&feature_bias)
            .any(|w| w.abs() > feature_limit)
            || output_weights.iter().any(|w| w.abs() > output_limit)
        {
            return Err(format!(
                "weights beyond +-{WEIGHT_LIMIT} (+-{feature_limit} and +-{output_limit} quantised)"
            ));
        }
        Ok(Network {
            hidden,
            feature_weights,
            feature_bias,
            output_weights,
            output_bias,
        })
    }

    /// The built-in network, read once. Its bytes are part of the program and a test reads
    /// them, so they are a whole network.
    pub fn built_in() -> Arc<Network> {
        static NETWORK: OnceLock<Arc<Network>> = OnceLock::new();
        NETWORK
            .get_or_init(|| {
                Arc::new(Network::from_bytes(BUILT_IN).expect("the built-in network is whole"))
            })
            .clone()
    }

    /// Reads a network file.
    pub fn load(path: &std::path::Path) -> Result<Network, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Network::from_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The feature transformer's weights of one input feature.
    pub fn row(&self, feature: usize) -> &[i16] {
        &self.feature_weights[feature * self.hidden..(feature + 1) * self.hidden]
    }

    /// One perspective's accumulator, computed from nothing.
    fn accumulate(&self, pos: &Chess, perspective: Color) -> Vec<i32> {
        let mut acc: Vec<i32> = self.feature_bias.iter().map(|&b| i32::from(b)).collect();
        let board = pos.board();
        for square in board.occupied() {
            let piece = board.piece_at(square).expect("occupied square");
            let row = feature(perspective, piece.color, piece.role, square) * self.hidden;
            for (a, &w) in acc
                .iter_mut()
                .zip(&self.feature_weights[row..row + self.hidden])
            {
                *a += i32::from(w);
            }
        }
        acc
    }

    /// The evaluation of `pos` in centipawns from the side to move, computed from nothing
    /// with plain integer arithmetic: the reference the engine's faster paths must equal.
    pub fn evaluate(&self, pos: &Chess) -> i32 {
        let us = self.accumulate(pos, pos.turn());
        let them = self.accumulate(pos, !pos.turn());
        let (ours, theirs) = self.output_weights.split_at(self.hidden);
        let mut sum: i64 = 0;
        for (acc, weights) in [(&us, ours), (&them, theirs)] {
            for (&a, &w) in acc.iter().zip(weights) {
                let v = i64::from(a.clamp(0, QA));
                sum += v * v * i64::from(w);
            }
        }
        let output = sum / i64::from(QA) + i64::from(self.output_bias);
        (output * i64::from(SCALE) / i64::from(QA * QB)) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Network {
        let hidden = 3;
        Network {
            hidden,
            feature_weights: (0..INPUTS * hidden).map(|i| (i % 97) as i16 - 48).collect(),
            feature_bias: vec![10, -20, 30],
            output_weights: vec![5, -7, 9, 11, -13, 2],
            output_bias: -1234,
        }
    }

    #[test]
    fn the_built_in_network_reads_and_knows_material() {
        let net = Network::built_in();
        let eval = |fen: &str| {
            let pos: Chess = fen
                .parse::<shakmaty::fen::Fen>()
                .unwrap()
                .into_position(shakmaty::CastlingMode::Standard)
                .unwrap();
            net.evaluate(&pos)
        };
        let start = eval("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        assert!(start.abs() < 100, "start position {start}");
        // White without its queen's knight, then without its queen, from each side.
        let knight = "r1bqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";
        let queen = "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";
        let (knight_w, knight_b) = (
            eval(&format!("{knight} w KQkq - 0 1")),
            eval(&format!("{knight} b KQkq - 0 1")),
        );
        let (queen_w, queen_b) = (
            eval(&format!("{queen} w KQkq - 0 1")),
            eval(&format!("{queen} b KQkq - 0 1")),
        );
        assert!(knight_w > 150 && knight_b < -150, "{knight_w} {knight_b}");
        assert!(
            queen_w > knight_w + 200 && queen_b < knight_b - 200,
            "{queen_w} {queen_b}"
        );
    }

    #[test]
    fn a_network_survives_its_file_and_a_damaged_file_is_refused() {
        let net = tiny();
        let bytes = net.to_bytes();
        assert_eq!(Network::from_bytes(&bytes), Ok(net));
        assert!(Network::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        assert!(Network::from_bytes(b"FENN").is_err());
        let mut wrong_magic = bytes.clone();
        wrong_magic[0] = b'X';
        assert!(Network::from_bytes(&wrong_magic).is_err());
    }

    #[test]
    fn the_evaluation_is_symmetric_under_colour_flip() {
        let net = tiny();
        for (fen, flipped) in [
            (
                "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
                "rnbqkb1r/pppp1ppp/5n2/4p3/4P3/2N5/PPPP1PPP/R1BQKBNR b KQkq - 2 3",
            ),
            (
                "8/5k2/8/8/8/3Q4/2K5/8 w - - 0 1",
                "8/2k5/3q4/8/8/8/5K2/8 b - - 0 1",
            ),
        ] {
            let pos: Chess = fen
                .parse::<shakmaty::fen::Fen>()
                .unwrap()
                .into_position(shakmaty::CastlingMode::Standard)
                .unwrap();
            let mirror: Chess = flipped
                .parse::<shakmaty::fen::Fen>()
                .unwrap()
                .into_position(shakmaty::CastlingMode::Standard)
                .unwrap();
            assert_eq!(net.evaluate(&pos), net.evaluate(&mirror), "{fen}");
        }
    }
}
