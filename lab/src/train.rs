//! `ferrite-lab train`: fits a (768 x KB -> N) x 2 -> B SCReLU network (`eval::nnue`) to self-play
//! positions, each labelled by a blend of its search score and its game's result, with AdamW,
//! a cosine learning-rate schedule, a held-out validation loss each epoch, and a checkpoint
//! after each epoch that `--resume` continues from. Writes the quantised network the engine
//! loads.
//!
//! The loss is bullet's: (sigmoid(output) - target)^2 with target = wdl x result +
//! (1 - wdl) x sigmoid(score / K), both from the side to move. K, the scale at which the
//! data's scores predict its results, is fitted to the training positions before training
//! (`data::fit_scale`) unless given; the network's output times K is its evaluation in
//! centipawns, and the file carries K as its output scale.

use crate::data;
use arrayvec::ArrayVec;
use bulletformat::ChessBoard;
use ferrite::eval::nnue::{
    king_bucket, output_bucket, Network, INPUTS, KING_BUCKETS, OUTPUT_BUCKETS, QA, QB, WEIGHT_LIMIT,
};
use ferrite::rng::SplitMix64;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The shape of a network: hidden units, output heads, whether each perspective's files are
/// mirrored so its king stands on e-h, and its king input buckets (1 or `KING_BUCKETS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub hidden: usize,
    pub buckets: usize,
    pub mirrored: bool,
    pub king_buckets: usize,
}

/// The features of a training board, at most 32 a perspective.
type Features = ArrayVec<u16, 32>;

/// The features of a training board from both perspectives (the side to move's, then the
/// other side's) and its output head. bulletformat's board is already seen from the side to
/// move (its pieces have colour bit 0 and the board is mirrored when Black is to move); its
/// `opp_ksq` is the other king seen from the other side. `reflect` swaps the files of the
/// whole position (a to h), which is worth the same to the side to move since the network
/// does not see castling rights.
fn features(board: &ChessBoard, shape: Shape, reflect: bool) -> (Features, Features, usize) {
    let reflect = if reflect { 7 } else { 0 };
    let flip = |king: u8| {
        if shape.mirrored && (usize::from(king) ^ reflect) % 8 < 4 {
            7
        } else {
            0
        }
    };
    let (our_flip, their_flip) = (flip(board.our_ksq()), flip(board.opp_ksq()));
    // Where each side's weights start: its king's bucket, its king seen as it sees the board.
    let offset = |king: u8, flip: usize| {
        king_bucket(usize::from(king) ^ reflect ^ flip, shape.king_buckets) * INPUTS
    };
    let (our_offset, their_offset) = (
        offset(board.our_ksq(), our_flip),
        offset(board.opp_ksq(), their_flip),
    );
    let mut ours = Features::new();
    let mut theirs = Features::new();
    for (piece, square) in *board {
        let side = usize::from(piece >> 3);
        let role = usize::from(piece & 7);
        let square = usize::from(square) ^ reflect;
        ours.push((our_offset + side * 384 + role * 64 + (square ^ our_flip)) as u16);
        theirs.push(
            (their_offset + (1 - side) * 384 + role * 64 + (square ^ 56 ^ their_flip)) as u16,
        );
    }
    let bucket = output_bucket(board.occ().count_ones(), shape.buckets);
    (ours, theirs, bucket)
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

fn screlu(x: f32) -> f32 {
    let c = x.clamp(0.0, 1.0);
    c * c
}

fn screlu_slope(x: f32) -> f32 {
    if x > 0.0 && x < 1.0 {
        2.0 * x
    } else {
        0.0
    }
}

/// What a position is trained towards: `wdl` of the result, the rest the score through a
/// sigmoid of scale `k`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Target {
    pub wdl: f32,
    pub k: f32,
}

impl Target {
    fn of(self, board: &ChessBoard) -> f32 {
        self.wdl * f32::from(board.result) / 2.0
            + (1.0 - self.wdl) * sigmoid(f32::from(board.score) / self.k)
    }
}

/// The network in floating point, as it is trained.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatNet {
    pub shape: Shape,
    /// `[king bucket][feature][hidden]`, then the feature biases, the output weights (`[bucket][ours,
    /// theirs]`) and the output biases: one flat vector, so the optimiser treats every weight
    /// alike.
    pub weights: Vec<f32>,
}

impl FloatNet {
    pub fn new(shape: Shape, seed: u64) -> FloatNet {
        let mut rng = SplitMix64::new(seed);
        let mut uniform = |limit: f32| {
            let unit = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
            (2.0 * unit - 1.0) * limit
        };
        let net = FloatNet {
            shape,
            weights: Vec::new(),
        };
        let n = Self::len(shape);
        let h = shape.hidden;
        let feature_limit = 1.0 / (32.0f32).sqrt();
        let output_limit = 1.0 / (2.0 * h as f32).sqrt();
        let weights = (0..n)
            .map(|i| {
                if i < net.bias_at() {
                    uniform(feature_limit)
                } else if i < net.output_at() {
                    0.0
                } else if i < net.output_bias_at() {
                    uniform(output_limit)
                } else {
                    0.0
                }
            })
            .collect();
        FloatNet { shape, weights }
    }

    fn len(shape: Shape) -> usize {
        (INPUTS * shape.king_buckets + 1 + 2 * shape.buckets) * shape.hidden + shape.buckets
    }

    fn bias_at(&self) -> usize {
        INPUTS * self.shape.king_buckets * self.shape.hidden
    }

    fn output_at(&self) -> usize {
        self.bias_at() + self.shape.hidden
    }

    fn output_bias_at(&self) -> usize {
        self.output_at() + 2 * self.shape.hidden * self.shape.buckets
    }

    /// The raw output (evaluation / K) of a board.
    pub fn output(&self, board: &ChessBoard, reflect: bool) -> f32 {
        let mut scratch = Scratch::new(self.shape.hidden);
        let (ours, theirs, bucket) = features(board, self.shape, reflect);
        forward(self, &ours, &theirs, bucket, &mut scratch)
    }

    /// The network the engine loads, with `scale` centipawns per unit of output.
    pub fn quantise(&self, scale: u32) -> Network {
        let q = |w: f32, scale: i32| (w * scale as f32).round() as i16;
        let (bias_at, out, out_bias) = (self.bias_at(), self.output_at(), self.output_bias_at());
        Network {
            hidden: self.shape.hidden,
            buckets: self.shape.buckets,
            mirrored: self.shape.mirrored,
            king_buckets: self.shape.king_buckets,
            scale,
            feature_weights: self.weights[..bias_at].iter().map(|&w| q(w, QA)).collect(),
            feature_bias: self.weights[bias_at..out]
                .iter()
                .map(|&w| q(w, QA))
                .collect(),
            output_weights: self.weights[out..out_bias]
                .iter()
                .map(|&w| q(w, QB))
                .collect(),
            output_bias: self.weights[out_bias..]
                .iter()
                .map(|&w| (w * (QA * QB) as f32).round() as i32)
                .collect(),
        }
    }
}

/// Per-thread buffers of one position's forward and backward pass.
struct Scratch {
    ours: Vec<f32>,
    theirs: Vec<f32>,
    d_ours: Vec<f32>,
    d_theirs: Vec<f32>,
}

impl Scratch {
    fn new(hidden: usize) -> Scratch {
        Scratch {
            ours: vec![0.0; hidden],
            theirs: vec![0.0; hidden],
            d_ours: vec![0.0; hidden],
            d_theirs: vec![0.0; hidden],
        }
    }
}

// The hot loops are written over whole contiguous rows, element by element, so that the
// compiler vectorises them; `part_gradient` is compiled twice, for any x86-64 and for AVX2
// with FMA, and the second is chosen when the CPU has it.

#[inline(always)]
fn add_row(acc: &mut [f32], row: &[f32]) {
    let n = acc.len();
    let row = &row[..n];
    for i in 0..n {
        acc[i] += row[i];
    }
}

/// `sum of screlu(acc) * w`, in eight partial sums so that the additions can run in lanes.
#[inline(always)]
fn screlu_dot(acc: &[f32], w: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let mut a = acc.chunks_exact(8);
    let mut b = w[..acc.len()].chunks_exact(8);
    for (x, y) in a.by_ref().zip(b.by_ref()) {
        for l in 0..8 {
            let c = x[l].clamp(0.0, 1.0);
            lanes[l] += c * c * y[l];
        }
    }
    let tail: f32 = a
        .remainder()
        .iter()
        .zip(b.remainder())
        .map(|(&x, &y)| screlu(x) * y)
        .sum();
    lanes.iter().sum::<f32>() + tail
}

/// Fills the scratch accumulators and returns the raw output.
#[inline(always)]
fn forward(
    net: &FloatNet,
    ours: &[u16],
    theirs: &[u16],
    bucket: usize,
    scratch: &mut Scratch,
) -> f32 {
    let h = net.shape.hidden;
    let w = &net.weights;
    let bias = &w[net.bias_at()..net.output_at()];
    for (acc, features) in [(&mut scratch.ours, ours), (&mut scratch.theirs, theirs)] {
        acc.copy_from_slice(bias);
        for &f in features {
            let at = usize::from(f) * h;
            add_row(acc, &w[at..at + h]);
        }
    }
    let head = net.output_at() + bucket * 2 * h;
    w[net.output_bias_at() + bucket]
        + screlu_dot(&scratch.ours, &w[head..head + h])
        + screlu_dot(&scratch.theirs, &w[head + h..head + 2 * h])
}

/// Adds the gradient of each sample's loss to `grad` and returns their summed loss.
#[inline(always)]
fn part_gradient(net: &FloatNet, part: &[Sample], target: Target, grad: &mut [f32]) -> f32 {
    let h = net.shape.hidden;
    let mut scratch = Scratch::new(h);
    let (bias_at, out_at, out_bias_at) = (net.bias_at(), net.output_at(), net.output_bias_at());
    let mut loss = 0.0;
    for sample in part {
        let (ours, theirs, bucket) = features(&sample.board, net.shape, sample.reflect);
        let out = forward(net, &ours, &theirs, bucket, &mut scratch);
        let predicted = sigmoid(out);
        let error = predicted - target.of(&sample.board);
        loss += error * error;
        let g = 2.0 * error * predicted * (1.0 - predicted);
        let head = out_at + bucket * 2 * h;
        grad[out_bias_at + bucket] += g;
        let Scratch {
            ours: acc_ours,
            theirs: acc_theirs,
            d_ours,
            d_theirs,
        } = &mut scratch;
        for (acc, d, offset) in [
            (&*acc_ours, &mut *d_ours, 0),
            (&*acc_theirs, &mut *d_theirs, h),
        ] {
            let weights = &net.weights[head + offset..head + offset + h];
            let out_grad = &mut grad[head + offset..head + offset + h];
            for j in 0..h {
                out_grad[j] += g * screlu(acc[j]);
                d[j] = g * weights[j] * screlu_slope(acc[j]);
            }
        }
        let bias_grad = &mut grad[bias_at..bias_at + h];
        for j in 0..h {
            bias_grad[j] += d_ours[j] + d_theirs[j];
        }
        for (features, d) in [(&ours, &*d_ours), (&theirs, &*d_theirs)] {
            for &f in features.iter() {
                let at = usize::from(f) * h;
                add_row(&mut grad[at..at + h], d);
            }
        }
    }
    loss
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn part_gradient_avx2(net: &FloatNet, part: &[Sample], target: Target, grad: &mut [f32]) -> f32 {
    part_gradient(net, part, target, grad)
}

/// `part_gradient` with the fastest instructions this CPU has.
fn part_gradient_fastest(net: &FloatNet, part: &[Sample], target: Target, grad: &mut [f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has just reported AVX2 and FMA, the features the function is
        // compiled for.
        return unsafe { part_gradient_avx2(net, part, target, grad) };
    }
    part_gradient(net, part, target, grad)
}

/// AdamW's moments, one pair per weight.
#[derive(Clone, Debug, PartialEq)]
struct Adam {
    m: Vec<f32>,
    v: Vec<f32>,
    step: u64,
}

const BETA1: f32 = 0.9;
const BETA2: f32 = 0.999;
const EPSILON: f32 = 1e-8;

impl Adam {
    fn new(n: usize) -> Adam {
        Adam {
            m: vec![0.0; n],
            v: vec![0.0; n],
            step: 0,
        }
    }

    /// One AdamW step over all weights, then the clip that keeps quantisation safe (the
    /// output biases, from `free_from` on, are not clipped).
    fn update(&mut self, weights: &mut [f32], grad: &[f32], lr: f32, decay: f32, free_from: usize) {
        self.step += 1;
        let c1 = 1.0 - BETA1.powi(self.step.min(1 << 20) as i32);
        let c2 = 1.0 - BETA2.powi(self.step.min(1 << 20) as i32);
        for i in 0..weights.len() {
            let g = grad[i];
            self.m[i] = BETA1 * self.m[i] + (1.0 - BETA1) * g;
            self.v[i] = BETA2 * self.v[i] + (1.0 - BETA2) * g * g;
            let step = (self.m[i] / c1) / ((self.v[i] / c2).sqrt() + EPSILON);
            weights[i] -= lr * (step + decay * weights[i]);
            if i < free_from {
                weights[i] = weights[i].clamp(-WEIGHT_LIMIT, WEIGHT_LIMIT);
            }
        }
    }
}

/// `ferrite-lab train`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Data files: viriformat games (.vf, from datagen) or text lines `FEN | score | result |
    /// move` from White's side. Repeat for several; a game found twice among them is trained
    /// on once.
    #[arg(long, required = true)]
    data: Vec<PathBuf>,
    /// The network file to write after every epoch (its checkpoint goes beside it, .ckpt).
    #[arg(long)]
    output: PathBuf,
    /// Hidden units per perspective.
    #[arg(long, default_value_t = DEFAULT_SHAPE.hidden as u64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    hidden: u64,
    /// Output heads, chosen by the number of pieces on the board (1 for a single head).
    #[arg(long, default_value_t = DEFAULT_SHAPE.buckets as u64, value_parser = clap::value_parser!(u64).range(1..=32))]
    buckets: u64,
    /// Inputs as they are, without mirroring the files of a perspective whose king stands on
    /// a-d (mirrored inputs are the default).
    #[arg(long)]
    plain_inputs: bool,
    /// King input buckets: 1 (none) or 4 (the castled corners, the rest of the first rank,
    /// the second rank, the open board; `eval::nnue::king_bucket`).
    #[arg(long, default_value_t = DEFAULT_SHAPE.king_buckets as u64, value_parser = king_buckets_arg)]
    king_buckets: u64,
    /// Passes over the training positions (the defaults of the schedule are the recipe
    /// measured in games, docs/network.md).
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u64).range(1..))]
    epochs: u64,
    #[arg(long, default_value_t = 16384, value_parser = clap::value_parser!(u64).range(1..))]
    batch_size: u64,
    /// The learning rate of the first epoch.
    #[arg(long, default_value_t = 0.002)]
    lr: f32,
    /// The last epoch's learning rate as a fraction of --lr (a cosine in between).
    #[arg(long, default_value_t = 0.01)]
    final_lr: f32,
    /// AdamW's decoupled weight decay, on every weight and bias.
    #[arg(long, default_value_t = 0.3)]
    weight_decay: f32,
    /// Weight of the game result in the target; the rest is the search score.
    #[arg(long, default_value_t = 0.0)]
    wdl: f32,
    /// The sigmoid scale K of the target in centipawns, also the network's output scale
    /// (default: fitted to the training positions' scores and results).
    #[arg(long)]
    scale: Option<f32>,
    /// Fraction of the games held out to measure the validation loss.
    #[arg(long, default_value_t = 0.02)]
    validation: f64,
    /// Positions before this ply of their game are not trained on.
    #[arg(long, default_value_t = 16)]
    min_ply: u32,
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Continue from the checkpoint beside --output.
    #[arg(long)]
    resume: bool,
    /// Do not also train on positions reflected a to h (by default each is reflected in about
    /// half the epochs; with mirrored inputs a reflection changes nothing).
    #[arg(long)]
    no_reflect: bool,
}

/// `--king-buckets`: a count the network format knows.
fn king_buckets_arg(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) if n == 1 || n == KING_BUCKETS as u64 => Ok(n),
        _ => Err(format!("1 or {KING_BUCKETS}")),
    }
}

/// `ferrite-lab train`: reads the pile, fits K unless given, and trains, with a line of
/// progress on stderr.
pub fn command(args: Args) -> anyhow::Result<()> {
    if !(0.0..=1.0).contains(&args.wdl) {
        anyhow::bail!("--wdl must lie in 0..1, not {}", args.wdl);
    }
    let range = ferrite::eval::nnue::SCALE_RANGE;
    if let Some(k) = args
        .scale
        .filter(|&k| !(k >= *range.start() as f32 && k <= *range.end() as f32))
    {
        anyhow::bail!(
            "--scale must lie in {}..{}, not {k}",
            range.start(),
            range.end()
        );
    }
    let filter = data::Filter {
        min_ply: args.min_ply,
    };
    let mut pile = data::Pile::new(args.validation, args.seed);
    let mut duplicates = 0;
    for path in &args.data {
        let report = pile.load(path, filter)?;
        duplicates += report.duplicate_games;
        eprintln!("{}", data::describe(path, &report));
        for problem in &report.problems {
            eprintln!("{}: {problem}", path.display());
        }
    }
    eprintln!(
        "{} games, {duplicates} duplicate games skipped; training on {} positions, validating on {}",
        pile.games(),
        pile.train.len(),
        pile.validation.len()
    );
    let k = args.scale.unwrap_or_else(|| {
        let k = data::fit_scale(&data::scores_and_results(&pile.train));
        eprintln!("scale K fitted to the training positions: {k:.1}");
        k
    });
    let settings = Settings {
        shape: Shape {
            hidden: args.hidden as usize,
            buckets: args.buckets as usize,
            mirrored: !args.plain_inputs,
            king_buckets: args.king_buckets as usize,
        },
        epochs: args.epochs as usize,
        batch_size: args.batch_size as usize,
        lr: args.lr,
        final_lr_fraction: args.final_lr,
        weight_decay: args.weight_decay,
        target: Target { wdl: args.wdl, k },
        threads: args.threads as usize,
        seed: args.seed,
        output: args.output,
        resume: args.resume,
        reflect: !args.no_reflect,
    };
    train(&settings, &pile.train, &pile.validation, |line| {
        eprintln!("{line}")
    })?;
    Ok(())
}

/// What `ferrite-lab train` was asked for.
#[derive(Clone, Debug)]
pub struct Settings {
    pub shape: Shape,
    pub epochs: usize,
    pub batch_size: usize,
    pub lr: f32,
    /// The learning rate falls along a cosine to this fraction of `lr` by the last epoch.
    pub final_lr_fraction: f32,
    pub weight_decay: f32,
    /// The training target: the weight of the game result and the sigmoid's scale.
    pub target: Target,
    pub threads: usize,
    pub seed: u64,
    pub output: PathBuf,
    /// Continue from `output`'s checkpoint.
    pub resume: bool,
    /// Train on each position reflected a to h in about half the epochs.
    pub reflect: bool,
}

/// Why training could not go on.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error("no training positions")]
    NoPositions,
    #[error("cannot write {}", .0.display())]
    Write(PathBuf, #[source] std::io::Error),
    #[error("cannot read {}", .0.display())]
    ReadCheckpoint(PathBuf, #[source] std::io::Error),
    #[error("{path}: {1}", path = .0.display())]
    Checkpoint(PathBuf, String),
}

/// Separates the reflection draws of one epoch from the next.
const REFLECT_SALT: u64 = 0xA24B_AED4_963E_E407;

/// The state written after every epoch: enough to continue exactly there.
struct Checkpoint {
    epoch: usize,
    net: FloatNet,
    adam: Adam,
}

fn checkpoint_path(output: &Path) -> PathBuf {
    let mut name = output.as_os_str().to_owned();
    name.push(".ckpt");
    PathBuf::from(name)
}

/// Version 3 of the checkpoint: the shape carries the king buckets.
const CHECKPOINT_MAGIC: &[u8; 4] = b"FEC3";
const CHECKPOINT_HEADER: usize = 4 + 6 * 8;

impl Checkpoint {
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(CHECKPOINT_MAGIC);
        let shape = self.net.shape;
        for field in [
            self.epoch as u64,
            shape.hidden as u64,
            shape.buckets as u64,
            u64::from(shape.mirrored),
            self.adam.step,
            shape.king_buckets as u64,
        ] {
            out.extend_from_slice(&field.to_le_bytes());
        }
        for x in self
            .net
            .weights
            .iter()
            .chain(&self.adam.m)
            .chain(&self.adam.v)
        {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out
    }

    fn from_bytes(bytes: &[u8]) -> Result<Checkpoint, String> {
        if bytes.len() < CHECKPOINT_HEADER || &bytes[..4] != CHECKPOINT_MAGIC {
            return Err("not a training checkpoint of this version".to_string());
        }
        let word = |i: usize| {
            let at = 4 + 8 * i;
            u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
        };
        let shape = Shape {
            hidden: word(1) as usize,
            buckets: word(2) as usize,
            mirrored: word(3) != 0,
            king_buckets: word(5) as usize,
        };
        if !(1..=1 << 14).contains(&shape.hidden)
            || !(1..=32).contains(&shape.buckets)
            || ![1, KING_BUCKETS].contains(&shape.king_buckets)
        {
            return Err(format!("checkpoint of shape {shape:?}"));
        }
        let n = FloatNet::len(shape);
        if bytes.len() != CHECKPOINT_HEADER + 12 * n {
            return Err("checkpoint of the wrong size".to_string());
        }
        let floats: Vec<f32> = bytes[CHECKPOINT_HEADER..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(Checkpoint {
            epoch: word(0) as usize,
            net: FloatNet {
                shape,
                weights: floats[..n].to_vec(),
            },
            adam: Adam {
                m: floats[n..2 * n].to_vec(),
                v: floats[2 * n..].to_vec(),
                step: word(4),
            },
        })
    }
}

/// A training position as one step sees it: as stored, or reflected.
#[derive(Clone, Copy, Debug)]
struct Sample {
    board: ChessBoard,
    reflect: bool,
}

#[cfg(test)]
impl Sample {
    fn plain(board: ChessBoard) -> Sample {
        Sample {
            board,
            reflect: false,
        }
    }
}

/// The gradient of a batch, summed over `threads` threads and divided by its size, and its
/// total loss.
fn batch_gradient(
    net: &FloatNet,
    batch: &[Sample],
    target: Target,
    threads: usize,
) -> (Vec<f32>, f32) {
    let chunk = batch.len().div_ceil(threads.max(1)).max(1);
    let parts: Vec<(Vec<f32>, f32)> = std::thread::scope(|scope| {
        let handles: Vec<_> = batch
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    let mut grad = vec![0.0; net.weights.len()];
                    let loss = part_gradient_fastest(net, part, target, &mut grad);
                    (grad, loss)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a training thread panicked"))
            .collect()
    });
    let mut parts = parts.into_iter();
    let (mut total, mut loss) = parts.next().unwrap_or_default();
    for (grad, part_loss) in parts {
        add_row(&mut total, &grad);
        loss += part_loss;
    }
    let scale = 1.0 / batch.len().max(1) as f32;
    total.iter_mut().for_each(|g| *g *= scale);
    (total, loss)
}

/// The mean loss over `boards`, on `threads` threads.
pub fn loss(net: &FloatNet, boards: &[ChessBoard], target: Target, threads: usize) -> f32 {
    let chunk = boards.len().div_ceil(threads.max(1)).max(1);
    let total: f32 = std::thread::scope(|scope| {
        let handles: Vec<_> = boards
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|board| {
                            let error = sigmoid(net.output(board, false)) - target.of(board);
                            error * error
                        })
                        .sum::<f32>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a loss thread panicked"))
            .sum()
    });
    total / boards.len().max(1) as f32
}

/// The learning rate of `epoch` (from 0): a cosine from `lr` to `final_lr_fraction x lr`.
fn learning_rate(settings: &Settings, epoch: usize) -> f32 {
    let progress = epoch as f32 / (settings.epochs.max(2) - 1) as f32;
    let cosine = 0.5 * (1.0 + (std::f32::consts::PI * progress).cos());
    settings.lr * (settings.final_lr_fraction + (1.0 - settings.final_lr_fraction) * cosine)
}

/// Trains on `train`, reports the loss on `validation` after every epoch, writes the
/// quantised network and a checkpoint after every epoch. `log` receives progress lines.
pub fn train(
    settings: &Settings,
    train: &[ChessBoard],
    validation: &[ChessBoard],
    mut log: impl FnMut(&str),
) -> Result<FloatNet, TrainError> {
    if train.is_empty() {
        return Err(TrainError::NoPositions);
    }
    let ckpt_path = checkpoint_path(&settings.output);
    let (mut net, mut adam, first_epoch) = if settings.resume {
        let bytes = std::fs::read(&ckpt_path)
            .map_err(|e| TrainError::ReadCheckpoint(ckpt_path.clone(), e))?;
        let ckpt = Checkpoint::from_bytes(&bytes)
            .map_err(|e| TrainError::Checkpoint(ckpt_path.clone(), e))?;
        if ckpt.net.shape != settings.shape {
            return Err(TrainError::Checkpoint(
                ckpt_path,
                format!(
                    "the checkpoint's shape is {:?}, not {:?}",
                    ckpt.net.shape, settings.shape
                ),
            ));
        }
        log(&format!("resuming after epoch {}", ckpt.epoch));
        (ckpt.net, ckpt.adam, ckpt.epoch)
    } else {
        let net = FloatNet::new(settings.shape, settings.seed);
        let n = net.weights.len();
        (net, Adam::new(n), 0)
    };
    let scale = settings.target.k.round() as u32;
    let free_from = net.output_bias_at();
    let batches = train.len().div_ceil(settings.batch_size);
    let mut order: Vec<u32> = Vec::with_capacity(train.len());
    for epoch in first_epoch..settings.epochs {
        // The order of epoch e depends only on the seed and e, so a resumed run sees the
        // order an uninterrupted one would have.
        order.clear();
        order.extend(0..train.len() as u32);
        let mut order_rng = SplitMix64::new(settings.seed.wrapping_add(epoch as u64));
        for i in (1..order.len()).rev() {
            order.swap(i, order_rng.below(i + 1));
        }
        // With reflection, each position is reflected in about half the epochs, by a draw of
        // the seed and the epoch alone (so a resumed run reflects as the first run would).
        let mut reflect_rng =
            SplitMix64::new(settings.seed ^ (epoch as u64).wrapping_mul(REFLECT_SALT));
        let mut reflect_bits = 0u64;
        let lr = learning_rate(settings, epoch);
        let start = Instant::now();
        let mut epoch_loss = 0.0;
        let mut batch: Vec<Sample> = Vec::with_capacity(settings.batch_size);
        for (b, indices) in order.chunks(settings.batch_size).enumerate() {
            batch.clear();
            batch.extend(indices.iter().enumerate().map(|(k, &i)| {
                if k % 64 == 0 {
                    reflect_bits = reflect_rng.next_u64();
                }
                Sample {
                    board: train[i as usize],
                    reflect: settings.reflect && (reflect_bits >> (k % 64)) & 1 == 1,
                }
            }));
            let (grad, loss) = batch_gradient(&net, &batch, settings.target, settings.threads);
            adam.update(
                &mut net.weights,
                &grad,
                lr,
                settings.weight_decay,
                free_from,
            );
            epoch_loss += loss;
            if (b + 1).is_multiple_of(100) || b + 1 == batches {
                let seen = ((b + 1) * settings.batch_size).min(train.len());
                log(&format!(
                    "epoch {} batch {}/{batches} loss {:.6} {:.0} positions/s",
                    epoch + 1,
                    b + 1,
                    epoch_loss / seen as f32,
                    seen as f64 / start.elapsed().as_secs_f64().max(1e-6)
                ));
            }
        }
        let validation_loss = if validation.is_empty() {
            String::from("-")
        } else {
            format!(
                "{:.6}",
                loss(&net, validation, settings.target, settings.threads)
            )
        };
        log(&format!(
            "epoch {} done: train loss {:.6}, validation loss {validation_loss}, lr {lr:.2e}, {:.0} s",
            epoch + 1,
            epoch_loss / train.len() as f32,
            start.elapsed().as_secs_f64()
        ));
        ferrite::files::write(&settings.output, &net.quantise(scale).to_bytes())
            .map_err(|e| TrainError::Write(settings.output.clone(), e))?;
        let ckpt = Checkpoint {
            epoch: epoch + 1,
            net: net.clone(),
            adam: adam.clone(),
        };
        ferrite::files::write(&ckpt_path, &ckpt.to_bytes())
            .map_err(|e| TrainError::Write(ckpt_path.clone(), e))?;
    }
    Ok(net)
}

/// The default shape of a new network.
pub const DEFAULT_SHAPE: Shape = Shape {
    hidden: 256,
    buckets: OUTPUT_BUCKETS,
    mirrored: true,
    king_buckets: 1,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::training_board;
    use shakmaty::{fen::Fen, CastlingMode, Chess, Position};

    fn positions() -> Vec<Chess> {
        [
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "4k3/8/8/3q4/8/8/3Q4/4K3 b - - 0 1",
            "rnbqkb1r/pp1p1ppp/5n2/2pPp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 4",
            "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
            "1k6/ppp5/8/8/8/8/PPP5/1K1R4 b - - 0 1",
        ]
        .iter()
        .map(|fen| {
            fen.parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap()
        })
        .collect()
    }

    /// Training boards with made-up labels: a score, and a result.
    fn boards() -> Vec<ChessBoard> {
        positions()
            .iter()
            .enumerate()
            .map(|(i, pos)| {
                let score = (i as i16 - 2) * 150;
                training_board(pos, score, [0.0, 0.5, 1.0][i % 3]).unwrap()
            })
            .collect()
    }

    const SHAPES: [Shape; 5] = [
        Shape {
            hidden: 4,
            buckets: 1,
            mirrored: false,
            king_buckets: 1,
        },
        Shape {
            hidden: 12,
            buckets: OUTPUT_BUCKETS,
            mirrored: false,
            king_buckets: 1,
        },
        Shape {
            hidden: 12,
            buckets: OUTPUT_BUCKETS,
            mirrored: true,
            king_buckets: 1,
        },
        Shape {
            hidden: 12,
            buckets: OUTPUT_BUCKETS,
            mirrored: true,
            king_buckets: KING_BUCKETS,
        },
        Shape {
            hidden: 8,
            buckets: 1,
            mirrored: false,
            king_buckets: KING_BUCKETS,
        },
    ];

    const TARGET: Target = Target { wdl: 0.3, k: 310.0 };

    /// One position's loss and gradient through the portable code.
    fn gradient(net: &FloatNet, board: ChessBoard) -> (f32, Vec<f32>) {
        let mut grad = vec![0.0; net.weights.len()];
        let loss = part_gradient(net, &[Sample::plain(board)], TARGET, &mut grad);
        (loss, grad)
    }

    #[test]
    fn the_gradient_equals_finite_differences() {
        for shape in SHAPES {
            // Weights large enough that some hidden units saturate and some are dead.
            let mut net = FloatNet::new(shape, 7);
            net.weights.iter_mut().for_each(|w| *w *= 3.0);
            for board in boards() {
                let (_, grad) = gradient(&net, board);
                let (ours, _, bucket) = features(&board, shape, false);
                let h = shape.hidden;
                let head = net.output_at() + bucket * 2 * h;
                // Weights of active features, a bias, output weights of both sides, the bias.
                let checked = [
                    usize::from(ours[0]) * h + 1,
                    usize::from(ours[3]) * h,
                    net.bias_at() + 2,
                    head,
                    head + h + 3,
                    net.output_bias_at() + bucket,
                ];
                for &i in &checked {
                    let step = 1e-3;
                    let mut plus = net.clone();
                    plus.weights[i] += step;
                    let mut minus = net.clone();
                    minus.weights[i] -= step;
                    let numeric =
                        (gradient(&plus, board).0 - gradient(&minus, board).0) / (2.0 * step);
                    let tolerance = 1e-4 + 0.05 * numeric.abs();
                    assert!(
                        (grad[i] - numeric).abs() <= tolerance,
                        "{shape:?} weight {i}: {} against {numeric}",
                        grad[i]
                    );
                }
            }
        }
    }

    #[test]
    fn the_fastest_kernels_compute_the_portable_gradient() {
        let shape = SHAPES[2];
        let net = FloatNet::new(shape, 9);
        let samples: Vec<Sample> = boards()
            .into_iter()
            .enumerate()
            .map(|(i, board)| Sample {
                board,
                reflect: i % 2 == 1,
            })
            .collect();
        let mut portable = vec![0.0; net.weights.len()];
        let mut fastest = vec![0.0; net.weights.len()];
        let a = part_gradient(&net, &samples, TARGET, &mut portable);
        let b = part_gradient_fastest(&net, &samples, TARGET, &mut fastest);
        assert!((a - b).abs() <= 1e-5 * a.abs().max(1.0), "{a} {b}");
        for (x, y) in portable.iter().zip(&fastest) {
            assert!((x - y).abs() <= 1e-5 * x.abs().max(1e-3), "{x} {y}");
        }
    }

    fn reflected(pos: &Chess) -> Chess {
        let mut setup = pos.to_setup(shakmaty::EnPassantMode::Legal);
        setup.board.flip_horizontal();
        setup.castling_rights = shakmaty::Bitboard::EMPTY;
        setup.ep_square = None;
        setup.position(CastlingMode::Standard).unwrap()
    }

    fn sorted((mut a, mut b, bucket): (Features, Features, usize)) -> (Features, Features, usize) {
        a.sort_unstable();
        b.sort_unstable();
        (a, b, bucket)
    }

    #[test]
    fn a_reflected_sample_has_the_features_of_the_reflected_position() {
        for shape in SHAPES {
            for pos in positions() {
                let board = training_board(&pos, 0, 0.5).unwrap();
                let mirror = training_board(&reflected(&pos), 0, 0.5).unwrap();
                assert_eq!(
                    sorted(features(&board, shape, true)),
                    sorted(features(&mirror, shape, false))
                );
                // Without mirrored inputs the reflection is new information; with them it is
                // the same input.
                assert_eq!(
                    sorted(features(&board, shape, true)) == sorted(features(&board, shape, false)),
                    shape.mirrored,
                    "{shape:?}"
                );
            }
        }
    }

    #[test]
    fn a_tiny_network_fits_a_toy_target() {
        for shape in SHAPES {
            let mut net = FloatNet::new(shape, 3);
            let data = boards();
            let samples: Vec<Sample> = data.iter().copied().map(Sample::plain).collect();
            let mut adam = Adam::new(net.weights.len());
            let target = Target { wdl: 0.0, k: 400.0 };
            let before = loss(&net, &data, target, 1);
            let free_from = net.output_bias_at();
            for _ in 0..300 {
                let (grad, _) = batch_gradient(&net, &samples, target, 2);
                adam.update(&mut net.weights, &grad, 0.01, 0.0, free_from);
            }
            let after = loss(&net, &data, target, 2);
            assert!(after < before / 10.0, "{shape:?}: loss {before} -> {after}");
        }
    }

    #[test]
    fn the_fitted_scale_is_the_one_the_data_was_made_with() {
        // Results drawn so that a score s wins with probability sigmoid(s / 250).
        let pos = &positions()[0];
        let mut rng = SplitMix64::new(5);
        let boards: Vec<ChessBoard> = (0..40_000)
            .map(|_| {
                let score = (rng.below(1201) as i32 - 600) as i16;
                let p = sigmoid(f32::from(score) / 250.0);
                let unit = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
                let result = if unit < p { 1.0 } else { 0.0 };
                training_board(pos, score, result).unwrap()
            })
            .collect();
        let k = crate::data::fit_scale(&crate::data::scores_and_results(&boards));
        assert!((k - 250.0).abs() < 15.0, "K = {k}");
    }

    /// The float network whose weights are exactly the quantised ones.
    fn dequantised(net: &Network) -> FloatNet {
        fn scaled(w: &[i16], scale: i32) -> impl Iterator<Item = f32> + '_ {
            w.iter().map(move |&w| f32::from(w) / scale as f32)
        }
        let weights = scaled(&net.feature_weights, QA)
            .chain(scaled(&net.feature_bias, QA))
            .chain(scaled(&net.output_weights, QB))
            .chain(net.output_bias.iter().map(|&b| b as f32 / (QA * QB) as f32))
            .collect();
        FloatNet {
            shape: Shape {
                hidden: net.hidden,
                buckets: net.buckets,
                mirrored: net.mirrored,
                king_buckets: net.king_buckets,
            },
            weights,
        }
    }

    #[test]
    fn the_quantised_network_plays_what_the_float_one_learned() {
        // The integer arithmetic equals the float arithmetic on the same (rounded) weights
        // within 2 cp (the truncating divisions); rounding the weights themselves (to 1/255,
        // and 1/64 in the output layer) moves these evaluations by less than 25 cp.
        for shape in SHAPES {
            let shape = Shape {
                hidden: 32,
                ..shape
            };
            let mut net = FloatNet::new(shape, 11);
            // Output biases that differ by head, so a wrong head shows.
            let at = net.output_bias_at();
            for (b, w) in net.weights[at..].iter_mut().enumerate() {
                *w = 0.1 * b as f32 - 0.3;
            }
            let scale = 290;
            let quantised = Network::from_bytes(&net.quantise(scale).to_bytes()).unwrap();
            let rounded = dequantised(&quantised);
            for pos in positions() {
                let board = training_board(&pos, 0, 0.5).unwrap();
                let int = quantised.evaluate(&pos) as f32;
                let same_weights = rounded.output(&board, false) * scale as f32;
                assert!(
                    (same_weights - int).abs() <= 2.0,
                    "{shape:?}: {same_weights} against {int}"
                );
                let float = net.output(&board, false) * scale as f32;
                assert!(
                    (float - int).abs() <= 25.0,
                    "{shape:?}: {float} against {int}"
                );
            }
        }
    }

    #[test]
    fn a_resumed_run_ends_where_an_uninterrupted_one_does() {
        let dir = std::env::temp_dir().join(format!("ferrite-train-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let settings = |epochs: usize, resume: bool, name: &str| Settings {
            shape: SHAPES[2],
            epochs,
            batch_size: 4,
            lr: 0.01,
            final_lr_fraction: 0.1,
            weight_decay: 0.01,
            target: TARGET,
            threads: 2,
            seed: 5,
            output: dir.join(name),
            resume,
            reflect: true,
        };
        let whole = train(&settings(3, false, "a.nnue"), &boards(), &[], |_| {}).unwrap();
        train(&settings(1, false, "b.nnue"), &boards(), &[], |_| {}).unwrap();
        let resumed = train(&settings(3, true, "b.nnue"), &boards(), &[], |_| {}).unwrap();
        assert_eq!(whole, resumed);
        let written = std::fs::read(dir.join("b.nnue")).unwrap();
        let network = Network::from_bytes(&written).unwrap();
        assert_eq!(network, resumed.quantise(310));
        assert_eq!(network.scale, 310, "the file carries the target's scale");
        // A checkpoint of another shape is refused.
        let other = Settings {
            shape: SHAPES[1],
            ..settings(4, true, "b.nnue")
        };
        assert!(train(&other, &boards(), &[], |_| {}).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
