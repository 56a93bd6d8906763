//! The network's shape and file format, shared by the trainer (`ferrite_lab::train`) and the
//! engine: a (768 x KB -> N) x 2 -> B perspective network with SCReLU, quantised to i16 as
//! bullet's simple example does (QA = 255, QB = 64; source: jw1912/bullet,
//! `examples/simple.rs`), with B output heads chosen by the number of pieces on the board and
//! KB king input buckets (1, or `KING_BUCKETS`) chosen by where each perspective's own king
//! stands.
//!
//! The 768 inputs are (side, role, square) seen from one perspective: the perspective's own
//! pieces come first and its board is the right way up (Black's perspective mirrors the
//! ranks). A network trained with horizontal mirroring also swaps the files of a
//! perspective whose king stands on files a-d, so that king always seems to stand on e-h.
//! With king buckets each perspective reads the feature weights of its king's bucket: the
//! same piece on the same square weighs differently behind a castled king and beside an
//! exposed one. Both perspectives share one feature transformer; each output head has a
//! weight for every hidden unit of each perspective.

mod accumulator;
mod simd;

pub use accumulator::Accumulators;
pub use simd::Kernels;

use shakmaty::{Chess, Color, Position, Role, Square};
use std::ops::RangeInclusive;
use std::sync::{Arc, OnceLock};

pub const INPUTS: usize = 768;
/// Quantisation of the feature transformer (weights and biases times QA).
pub const QA: i32 = 255;
/// Quantisation of the output weights.
pub const QB: i32 = 64;
/// The output heads of a network with material buckets: one per four pieces on the board.
pub const OUTPUT_BUCKETS: usize = 8;
/// The king input buckets of a network that has them (`king_bucket` gives the layout); a
/// network without them has one.
pub const KING_BUCKETS: usize = 4;
/// Weights are kept within this so that a clamped activation times an output weight fits an
/// i16 (255 x 1.98 x 64 < 32,767), which SIMD kernels rely on.
pub const WEIGHT_LIMIT: f32 = 1.98;
/// Output scales (centipawns per unit of the network's output) a file may carry: the sigmoid
/// scale of the training target, fitted to the data, lies far inside.
pub const SCALE_RANGE: RangeInclusive<u32> = 50..=2000;
/// The scale of version 1 files, which do not carry one.
const VERSION_1_SCALE: u32 = 400;
const MAX_HIDDEN: usize = 1 << 14;
const MAX_BUCKETS: usize = 32;

const MAGIC: &[u8; 4] = b"FENN";
/// Version 2 named the output heads, horizontal mirroring and the output scale; version 3
/// adds the king input buckets.
const VERSION: u32 = 3;
const FLAG_MIRRORED: u32 = 1;
/// The network built into the binary: the engine's evaluation unless `EvalFile` (or
/// `--eval-file`) names another. `nets/README.md` says how it was made and the match that
/// admitted it.
const BUILT_IN: &[u8] = include_bytes!("../../../nets/ferrite-net-2.nnue");
/// The built-in network's short name, as data files made with it are named.
pub const BUILT_IN_NAME: &str = "net2";

/// The output head for a position with `pieces` pieces (kings included) of `buckets` heads:
/// equal ranges of the piece count from 2 to 32.
pub fn output_bucket(pieces: u32, buckets: usize) -> usize {
    let per_bucket = 32usize.div_ceil(buckets.max(1));
    (pieces.saturating_sub(2) as usize / per_bucket).min(buckets.max(1) - 1)
}

/// The king input bucket (of `king_buckets`: 1 or `KING_BUCKETS`) of a king on `square` as
/// its own perspective sees it (after the flips of `View`). Four buckets: the castled corners
/// (files a-b and g-h of the first two ranks), the rest of the first rank, the rest of the
/// second, and the king out in the open (ranks 3-8). A mirrored network sees only files e-h.
pub fn king_bucket(square: usize, king_buckets: usize) -> usize {
    if king_buckets == 1 {
        return 0;
    }
    let (rank, file) = (square / 8, square % 8);
    match rank {
        0 | 1 if file <= 1 || file >= 6 => 0,
        0 => 1,
        1 => 2,
        _ => 3,
    }
}

/// How one perspective sees the board: whose pieces count as its own, the exclusive-or
/// that takes a square to the perspective's square (ranks for Black, files when mirrored),
/// and where the weights of its king's bucket start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    perspective: Color,
    flip: usize,
    /// `king bucket x INPUTS`.
    offset: usize,
}

impl View {
    /// The view of `perspective`, whose king stands on `king`, for a network that does or
    /// does not mirror and has `king_buckets` king input buckets.
    pub fn new(perspective: Color, king: Square, mirrored: bool, king_buckets: usize) -> View {
        let ranks = match perspective {
            Color::White => 0,
            Color::Black => 56,
        };
        let files = if mirrored && (king as usize) % 8 < 4 {
            7
        } else {
            0
        };
        let flip = ranks | files;
        View {
            perspective,
            flip,
            offset: king_bucket(king as usize ^ flip, king_buckets) * INPUTS,
        }
    }

    /// The input feature of a piece of `color` and `role` on `square`.
    pub fn feature(self, color: Color, role: Role, square: Square) -> usize {
        let side = usize::from(color != self.perspective);
        self.offset + side * 384 + (role as usize - 1) * 64 + (square as usize ^ self.flip)
    }
}

/// Why bytes are not a network this build can use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("not a Ferrite network file")]
    NotANetwork,
    #[error(
        "network format version {0}, which this build does not read (it reads 1 to {VERSION})"
    )]
    UnknownVersion(u32),
    #[error("unknown header flags {0:#x}")]
    UnknownFlags(u32),
    #[error("a network of {hidden} hidden units and {buckets} output heads (at most {MAX_HIDDEN} and {MAX_BUCKETS}, at least 1 each)")]
    Shape { hidden: usize, buckets: usize },
    #[error("{0} king input buckets (this build knows 1 and {KING_BUCKETS})")]
    KingBuckets(usize),
    #[error("output scale {0}, outside {first}..={last}", first = SCALE_RANGE.start(), last = SCALE_RANGE.end())]
    Scale(u32),
    #[error("{found} bytes where a network of this header has {expected} (truncated or damaged)")]
    Length { found: usize, expected: usize },
    #[error("weights beyond +-{WEIGHT_LIMIT} (+-{feature} and +-{output} quantised)")]
    WeightsBeyondLimit { feature: i16, output: i16 },
}

/// Why a network file could not be used: it could not be read, or it is not a network.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{}", .0.display())]
    Read(std::path::PathBuf, #[source] std::io::Error),
    #[error("{}", .0.display())]
    Format(std::path::PathBuf, #[source] FormatError),
}

/// A quantised network as the engine uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    pub hidden: usize,
    /// Output heads, chosen by `output_bucket`.
    pub buckets: usize,
    /// Whether each perspective's files are swapped when its king stands on files a-d.
    pub mirrored: bool,
    /// King input buckets, chosen by `king_bucket` (1: none).
    pub king_buckets: usize,
    /// Centipawns per unit of output.
    pub scale: u32,
    /// `[king bucket][feature][hidden]`, times QA.
    pub feature_weights: Vec<i16>,
    /// Times QA.
    pub feature_bias: Vec<i16>,
    /// `[bucket][2 x hidden]`: the side to move's hidden units, then the other side's; times QB.
    pub output_weights: Vec<i16>,
    /// `[bucket]`, times QA x QB.
    pub output_bias: Vec<i32>,
}

/// Little-endian u32 at `at`.
fn word(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

impl Network {
    /// The file (version 3): "FENN", version, hidden units, output heads, flags (bit 0:
    /// mirrored), output scale, king input buckets, each a u32; then the feature weights,
    /// feature biases and output weights as i16 and the output biases as i32, all
    /// little-endian. Version 2 had no king buckets field (one bucket); version 1 had only
    /// "FENN", version and hidden units, one head, no mirroring and scale 400.
    pub fn to_bytes(&self) -> Vec<u8> {
        let len = Self::file_len(VERSION, self.hidden, self.buckets, self.king_buckets);
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(MAGIC);
        let flags = if self.mirrored { FLAG_MIRRORED } else { 0 };
        for field in [
            VERSION,
            self.hidden as u32,
            self.buckets as u32,
            flags,
            self.scale,
            self.king_buckets as u32,
        ] {
            out.extend_from_slice(&field.to_le_bytes());
        }
        for w in self
            .feature_weights
            .iter()
            .chain(&self.feature_bias)
            .chain(&self.output_weights)
        {
            out.extend_from_slice(&w.to_le_bytes());
        }
        for b in &self.output_bias {
            out.extend_from_slice(&b.to_le_bytes());
        }
        out
    }

    fn header_len(version: u32) -> usize {
        match version {
            1 => 12,
            2 => 24,
            _ => 28,
        }
    }

    fn file_len(version: u32, hidden: usize, buckets: usize, king_buckets: usize) -> usize {
        Self::header_len(version)
            + 2 * (INPUTS * king_buckets + 1 + 2 * buckets) * hidden
            + 4 * buckets
    }

    /// Reads a network file, refusing anything that is not one whole network.
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, FormatError> {
        if bytes.len() < 12 || &bytes[..4] != MAGIC {
            return Err(FormatError::NotANetwork);
        }
        let version = word(bytes, 4);
        if !(1..=VERSION).contains(&version) {
            return Err(FormatError::UnknownVersion(version));
        }
        if bytes.len() < Self::header_len(version) {
            return Err(FormatError::Length {
                found: bytes.len(),
                expected: Self::header_len(version),
            });
        }
        let hidden = word(bytes, 8) as usize;
        let (buckets, flags, scale) = if version == 1 {
            (1, 0, VERSION_1_SCALE)
        } else {
            (word(bytes, 12) as usize, word(bytes, 16), word(bytes, 20))
        };
        let king_buckets = if version >= 3 {
            word(bytes, 24) as usize
        } else {
            1
        };
        if !(1..=MAX_HIDDEN).contains(&hidden) || !(1..=MAX_BUCKETS).contains(&buckets) {
            return Err(FormatError::Shape { hidden, buckets });
        }
        if king_buckets != 1 && king_buckets != KING_BUCKETS {
            return Err(FormatError::KingBuckets(king_buckets));
        }
        if flags & !FLAG_MIRRORED != 0 {
            return Err(FormatError::UnknownFlags(flags));
        }
        if !SCALE_RANGE.contains(&scale) {
            return Err(FormatError::Scale(scale));
        }
        let expected = Self::file_len(version, hidden, buckets, king_buckets);
        if bytes.len() != expected {
            return Err(FormatError::Length {
                found: bytes.len(),
                expected,
            });
        }
        let biases_at = expected - 4 * buckets;
        let mut values = bytes[Self::header_len(version)..biases_at]
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]));
        let mut take = |n: usize| values.by_ref().take(n).collect::<Vec<i16>>();
        let feature_weights = take(INPUTS * king_buckets * hidden);
        let feature_bias = take(hidden);
        let output_weights = take(2 * hidden * buckets);
        let output_bias = (0..buckets)
            .map(|b| word(bytes, biases_at + 4 * b) as i32)
            .collect();
        // The kernels' arithmetic stays in 16 bits only for weights within the trainer's
        // limit; a network beyond it would silently evaluate wrong, so it is refused.
        let limit = |q: i32| (WEIGHT_LIMIT * q as f32).round() as i16;
        let (feature, output) = (limit(QA), limit(QB));
        if feature_weights
            .iter()
            .chain(&feature_bias)
            .any(|w| w.abs() > feature)
            || output_weights.iter().any(|w| w.abs() > output)
        {
            return Err(FormatError::WeightsBeyondLimit { feature, output });
        }
        Ok(Network {
            hidden,
            buckets,
            mirrored: flags & FLAG_MIRRORED != 0,
            king_buckets,
            scale,
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
    pub fn load(path: &std::path::Path) -> Result<Network, LoadError> {
        let bytes = std::fs::read(path).map_err(|e| LoadError::Read(path.to_path_buf(), e))?;
        Network::from_bytes(&bytes).map_err(|e| LoadError::Format(path.to_path_buf(), e))
    }

    /// A short description for the GUI and the logs.
    pub fn describe(&self) -> String {
        format!(
            "{} hidden units, {} output head{}{}{}, scale {}",
            self.hidden,
            self.buckets,
            if self.buckets == 1 { "" } else { "s" },
            if self.mirrored { ", mirrored" } else { "" },
            if self.king_buckets > 1 {
                format!(", {} king buckets", self.king_buckets)
            } else {
                String::new()
            },
            self.scale
        )
    }

    /// The feature transformer's weights of one input feature.
    pub fn row(&self, feature: usize) -> &[i16] {
        &self.feature_weights[feature * self.hidden..(feature + 1) * self.hidden]
    }

    /// How `perspective` sees `pos`.
    pub fn view(&self, pos: &Chess, perspective: Color) -> View {
        // A legal position has a king of each colour; a1 stands in should one ever lack it.
        let king = pos.board().king_of(perspective).unwrap_or(Square::A1);
        self.king_view(perspective, king)
    }

    /// How `perspective` sees the board with its king on `king`.
    pub fn king_view(&self, perspective: Color, king: Square) -> View {
        View::new(perspective, king, self.mirrored, self.king_buckets)
    }

    /// The output weights of head `bucket`: the side to move's, then the other side's.
    pub fn head(&self, bucket: usize) -> (&[i16], &[i16]) {
        let width = 2 * self.hidden;
        self.output_weights[bucket * width..(bucket + 1) * width].split_at(self.hidden)
    }

    /// The output layer's sum (already through SCReLU and times the weights) of head `bucket`
    /// in centipawns.
    pub fn centipawns(&self, sum: i64, bucket: usize) -> i32 {
        let output = sum / i64::from(QA) + i64::from(self.output_bias[bucket]);
        (output * i64::from(self.scale) / i64::from(QA * QB)) as i32
    }

    /// One perspective's accumulator, computed from nothing.
    fn accumulate(&self, pos: &Chess, perspective: Color) -> Vec<i32> {
        let view = self.view(pos, perspective);
        let mut acc: Vec<i32> = self.feature_bias.iter().map(|&b| i32::from(b)).collect();
        let board = pos.board();
        for square in board.occupied() {
            let piece = board.piece_at(square).expect("occupied square");
            let row = self.row(view.feature(piece.color, piece.role, square));
            for (a, &w) in acc.iter_mut().zip(row) {
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
        let bucket = output_bucket(pos.board().occupied().count() as u32, self.buckets);
        let (ours, theirs) = self.head(bucket);
        let mut sum: i64 = 0;
        for (acc, weights) in [(&us, ours), (&them, theirs)] {
            for (&a, &w) in acc.iter().zip(weights) {
                let v = i64::from(a.clamp(0, QA));
                sum += v * v * i64::from(w);
            }
        }
        self.centipawns(sum, bucket)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use shakmaty::{fen::Fen, CastlingMode};

    /// A network of random weights within the limits.
    pub(crate) fn random_network(
        hidden: usize,
        buckets: usize,
        mirrored: bool,
        seed: u64,
    ) -> Network {
        random_bucketed_network(hidden, buckets, mirrored, 1, seed)
    }

    /// A network of random weights within the limits, with `king_buckets` king buckets.
    pub(crate) fn random_bucketed_network(
        hidden: usize,
        buckets: usize,
        mirrored: bool,
        king_buckets: usize,
        seed: u64,
    ) -> Network {
        let mut rng = SplitMix64::new(seed);
        let mut values = |n: usize, limit: u64| -> Vec<i16> {
            (0..n)
                .map(|_| ((rng.next_u64() % (2 * limit + 1)) as i64 - limit as i64) as i16)
                .collect()
        };
        Network {
            hidden,
            buckets,
            mirrored,
            king_buckets,
            scale: 300,
            feature_weights: values(INPUTS * king_buckets * hidden, 500),
            feature_bias: values(hidden, 500),
            output_weights: values(2 * hidden * buckets, 126),
            output_bias: (0..buckets as i32).map(|b| 1234 - 400 * b).collect(),
        }
    }

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn the_built_in_network_reads_and_knows_material() {
        let net = Network::built_in();
        let eval = |fen: &str| net.evaluate(&position(fen));
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

    /// Version 1 bytes of `net` (one head, not mirrored, scale 400), as the first network's
    /// file was written.
    fn version_1_bytes(net: &Network) -> Vec<u8> {
        let mut out = b"FENN".to_vec();
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&(net.hidden as u32).to_le_bytes());
        for w in net
            .feature_weights
            .iter()
            .chain(&net.feature_bias)
            .chain(&net.output_weights)
        {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(&net.output_bias[0].to_le_bytes());
        out
    }

    #[test]
    fn a_network_survives_its_file_and_the_older_formats_still_read() {
        let net = random_network(24, OUTPUT_BUCKETS, true, 1);
        assert_eq!(Network::from_bytes(&net.to_bytes()), Ok(net.clone()));
        let bucketed = random_bucketed_network(24, OUTPUT_BUCKETS, true, KING_BUCKETS, 7);
        assert_eq!(Network::from_bytes(&bucketed.to_bytes()), Ok(bucketed));
        // Version 2: the same header without the king buckets' word.
        let mut version_2 = net.to_bytes();
        version_2[4..8].copy_from_slice(&2u32.to_le_bytes());
        version_2.drain(24..28);
        assert_eq!(Network::from_bytes(&version_2), Ok(net));
        let mut old = random_network(24, 1, false, 2);
        old.scale = 400;
        assert_eq!(Network::from_bytes(&version_1_bytes(&old)), Ok(old));
    }

    #[test]
    fn king_buckets_part_the_corners_the_back_ranks_and_the_open_board() {
        let bucket = |name: &str| {
            let square: Square = name.parse().unwrap();
            king_bucket(square as usize, KING_BUCKETS)
        };
        for corner in ["g1", "h1", "g2", "h2", "a1", "b2"] {
            assert_eq!(bucket(corner), 0, "{corner}");
        }
        for home in ["e1", "f1", "c1", "d1"] {
            assert_eq!(bucket(home), 1, "{home}");
        }
        for second in ["e2", "f2", "c2"] {
            assert_eq!(bucket(second), 2, "{second}");
        }
        for open in ["g3", "e4", "a8", "h8"] {
            assert_eq!(bucket(open), 3, "{open}");
        }
        assert!((0..64).all(|sq| king_bucket(sq, 1) == 0));
        // Black's king on g8 is in its castled corner, as White's on g1.
        let net = random_bucketed_network(4, 1, true, KING_BUCKETS, 8);
        assert_eq!(
            net.king_view(Color::Black, Square::G8).offset,
            net.king_view(Color::White, Square::G1).offset
        );
        assert_eq!(net.king_view(Color::White, Square::B1).offset, 0);
        assert_eq!(net.king_view(Color::White, Square::E4).offset, 3 * INPUTS);
    }

    #[test]
    fn damaged_foreign_and_unknown_files_are_refused_with_the_reason() {
        let net = random_network(16, OUTPUT_BUCKETS, true, 3);
        let bytes = net.to_bytes();
        let refused = |bytes: &[u8]| Network::from_bytes(bytes).unwrap_err();
        let with_word = |at: usize, value: u32| {
            let mut b = bytes.clone();
            b[at..at + 4].copy_from_slice(&value.to_le_bytes());
            b
        };
        assert!(matches!(
            refused(&bytes[..bytes.len() - 1]),
            FormatError::Length { .. }
        ));
        assert!(matches!(refused(&bytes[..20]), FormatError::Length { .. }));
        assert_eq!(refused(b"FENN"), FormatError::NotANetwork);
        assert_eq!(refused(&with_word(0, 0x4e4e4558)), FormatError::NotANetwork);
        assert_eq!(refused(&with_word(4, 4)), FormatError::UnknownVersion(4));
        assert_eq!(refused(&with_word(4, 0)), FormatError::UnknownVersion(0));
        assert!(matches!(
            refused(&with_word(8, 0)),
            FormatError::Shape { hidden: 0, .. }
        ));
        assert!(matches!(
            refused(&with_word(12, 0)),
            FormatError::Shape { buckets: 0, .. }
        ));
        assert_eq!(refused(&with_word(16, 6)), FormatError::UnknownFlags(6));
        assert_eq!(refused(&with_word(20, 0)), FormatError::Scale(0));
        assert_eq!(refused(&with_word(20, 40_000)), FormatError::Scale(40_000));
        assert_eq!(refused(&with_word(24, 0)), FormatError::KingBuckets(0));
        assert_eq!(refused(&with_word(24, 2)), FormatError::KingBuckets(2));
        // Four king buckets claimed over the weights of one.
        assert!(matches!(
            refused(&with_word(24, KING_BUCKETS as u32)),
            FormatError::Length { .. }
        ));
        // A header that claims another shape than the weights that follow.
        assert!(matches!(
            refused(&with_word(12, 4)),
            FormatError::Length { .. }
        ));
        let mut beyond = bytes.clone();
        beyond[28..30].copy_from_slice(&i16::MAX.to_le_bytes());
        assert!(matches!(
            refused(&beyond),
            FormatError::WeightsBeyondLimit { .. }
        ));
        // Every message says what was wrong.
        assert!(refused(&with_word(20, 0))
            .to_string()
            .contains("output scale 0"));
        assert!(refused(&with_word(4, 4)).to_string().contains("version 4"));
        assert!(refused(&with_word(24, 2))
            .to_string()
            .contains("2 king input buckets"));
    }

    #[test]
    fn output_buckets_split_the_piece_count_evenly() {
        let heads: Vec<usize> = (2..=32).map(|n| output_bucket(n, 8)).collect();
        assert_eq!(&heads[..4], &[0, 0, 0, 0]);
        assert_eq!(heads[4], 1);
        assert_eq!(heads[30], 7);
        assert!(heads.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1));
        assert!((2..=32).all(|n| output_bucket(n, 1) == 0));
        assert_eq!(output_bucket(0, 8), 0);
    }

    #[test]
    fn the_evaluation_is_symmetric_under_colour_flip() {
        for net in [
            random_network(8, 1, false, 4),
            random_network(8, OUTPUT_BUCKETS, true, 5),
            random_bucketed_network(8, OUTPUT_BUCKETS, true, KING_BUCKETS, 9),
        ] {
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
                assert_eq!(
                    net.evaluate(&position(fen)),
                    net.evaluate(&position(flipped)),
                    "{fen}"
                );
            }
        }
    }

    #[test]
    fn a_mirrored_network_sees_a_position_and_its_reflection_alike() {
        let net = random_network(8, OUTPUT_BUCKETS, true, 6);
        let plain = random_network(8, OUTPUT_BUCKETS, false, 6);
        let bucketed = random_bucketed_network(8, OUTPUT_BUCKETS, true, KING_BUCKETS, 6);
        for (fen, reflected) in [
            (
                "6k1/5ppp/8/3n4/8/2B5/5PPP/3R2K1 w - - 0 1",
                "1k6/ppp5/8/4n3/8/5B2/PPP5/1K2R3 w - - 0 1",
            ),
            (
                "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 b - - 0 1",
                "8/5p2/4p3/r5PK/k1p3R1/8/1P1P4/8 b - - 0 1",
            ),
        ] {
            let (a, b) = (position(fen), position(reflected));
            assert_eq!(net.evaluate(&a), net.evaluate(&b), "{fen}");
            assert_eq!(bucketed.evaluate(&a), bucketed.evaluate(&b), "{fen}");
            assert_ne!(plain.evaluate(&a), plain.evaluate(&b), "{fen}");
        }
    }
}
