//! `ferrite train`: fits a (768 -> N) x 2 -> 1 SCReLU network (`eval::nnue`) to self-play
//! positions, each labelled by a blend of its search score and its game's result, with AdamW,
//! a cosine learning-rate schedule, a held-out validation loss each epoch, and a checkpoint
//! after each epoch that `--resume` continues from. Writes the quantised network the engine
//! loads.
//!
//! The loss is bullet's: (sigmoid(output) - target)^2 with target = wdl x result +
//! (1 - wdl) x sigmoid(score / 400), both from the side to move.

use crate::eval::nnue::{Network, INPUTS, QA, QB, SCALE, WEIGHT_LIMIT};
use crate::rng::SplitMix64;
use crate::search::DECISIVE;
use crate::tools::datagen::read_games;
use bulletformat::ChessBoard;
use shakmaty::{fen::Fen, uci::UciMove, CastlingMode, Chess, Color, Position};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Which positions are worth training on.
#[derive(Clone, Copy, Debug)]
pub struct Filter {
    /// Positions before this ply of the game (counted from the initial position) are dropped.
    pub min_ply: u32,
}

impl Filter {
    /// Positions in check, whose best move is a capture or a promotion, or with a mate
    /// score say little about a quiet evaluation: they are dropped, as are the first plies.
    fn keeps(&self, in_check: bool, tactical: bool, white_score: i32, ply: u32) -> bool {
        !in_check
            && !tactical
            && white_score.abs() < DECISIVE.min(i32::from(i16::MAX))
            && ply >= self.min_ply
    }
}

/// What loading found.
#[derive(Debug, Default)]
pub struct LoadReport {
    pub read: u64,
    pub kept: u64,
    pub problems: Vec<String>,
}

/// Appends the kept positions of a data file to `out`: viriformat (`.vf`, from
/// `ferrite datagen`) or text lines `FEN | score | result | move` (White's view).
pub fn load(path: &Path, filter: Filter, out: &mut Vec<ChessBoard>) -> Result<LoadReport, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let reader = BufReader::new(file);
    if path.extension().is_some_and(|e| e == "vf") {
        load_games(reader, filter, out).map_err(|e| format!("{}: {e}", path.display()))
    } else {
        load_text(reader, filter, out).map_err(|e| format!("{}: {e}", path.display()))
    }
}

fn load_games(
    reader: impl BufRead,
    filter: Filter,
    out: &mut Vec<ChessBoard>,
) -> std::io::Result<LoadReport> {
    let mut report = LoadReport::default();
    let before = out.len();
    let mut failure = None;
    let games = read_games(reader, |game| {
        let kept = game.splat_to_bulletformat_with_filter_callback(
            |board| {
                out.push(board);
                Ok(())
            },
            |mv, score, board, _, _| {
                report.read += 1;
                let ply = board.ply() as u32;
                !filter.keeps(board.in_check(), board.is_tactical(mv), score, ply)
            },
        );
        if let Err(err) = kept {
            failure.get_or_insert(err.to_string());
        }
    })?;
    if let Some(err) = failure {
        report.problems.push(err);
    }
    if let Some(tail) = games.damaged_tail {
        report
            .problems
            .push(format!("damaged tail skipped ({tail})"));
    }
    report.kept = (out.len() - before) as u64;
    Ok(report)
}

fn load_text(
    reader: impl BufRead,
    filter: Filter,
    out: &mut Vec<ChessBoard>,
) -> std::io::Result<LoadReport> {
    let mut report = LoadReport::default();
    let before = out.len();
    let mut skipped = 0;
    for (number, line) in reader.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        report.read += 1;
        match text_position(&line, filter) {
            Ok(Some(board)) => out.push(board),
            Ok(None) => {}
            Err(err) => {
                skipped += 1;
                if report.problems.len() < 10 {
                    report.problems.push(format!("line {}: {err}", number + 1));
                }
            }
        }
    }
    if skipped > report.problems.len() {
        report
            .problems
            .push(format!("{skipped} malformed lines skipped in all"));
    }
    report.kept = (out.len() - before) as u64;
    Ok(report)
}

/// One text line as a training position, or `None` if the filter drops it.
fn text_position(line: &str, filter: Filter) -> Result<Option<ChessBoard>, String> {
    let fields: Vec<&str> = line.split('|').map(str::trim).collect();
    let [fen, score, result, mv] = fields[..] else {
        return Err("expected 'FEN | score | result | move'".to_string());
    };
    let pos: Chess = fen
        .parse::<Fen>()
        .map_err(|e| e.to_string())?
        .into_position(CastlingMode::Standard)
        .map_err(|e| e.to_string())?;
    let score: i32 = score.parse().map_err(|_| format!("bad score '{score}'"))?;
    let result: f32 = match result {
        "1.0" | "1" => 1.0,
        "0.5" => 0.5,
        "0.0" | "0" => 0.0,
        _ => return Err(format!("bad result '{result}'")),
    };
    let mv = mv
        .parse::<UciMove>()
        .map_err(|_| format!("bad move '{mv}'"))?
        .to_move(&pos)
        .map_err(|_| format!("illegal move '{mv}'"))?;
    let ply = 2 * (u32::from(pos.fullmoves()) - 1) + u32::from(pos.turn() == Color::Black);
    let tactical = mv.is_capture() || mv.is_promotion();
    if !filter.keeps(pos.is_check(), tactical, score, ply) {
        return Ok(None);
    }
    training_board(&pos, score as i16, result).map(Some)
}

/// A position in bulletformat's board, from the side to move, with White's score and result.
fn training_board(pos: &Chess, white_score: i16, white_result: f32) -> Result<ChessBoard, String> {
    let board = pos.board();
    let bbs = [
        board.white().0,
        board.black().0,
        board.pawns().0,
        board.knights().0,
        board.bishops().0,
        board.rooks().0,
        board.queens().0,
        board.kings().0,
    ];
    ChessBoard::from_raw(
        bbs,
        usize::from(pos.turn() == Color::Black),
        white_score,
        white_result,
    )
}

/// The features of a training board from both perspectives: the side to move's, then the
/// other side's. bulletformat's board is already seen from the side to move (its pieces have
/// colour bit 0 and the board is mirrored when Black is to move). `mirror` swaps the files
/// (a to h): the same position reflected, which is worth the same to the side to move since
/// the network does not see castling rights.
fn features(board: &ChessBoard, mirror: bool) -> (Vec<usize>, Vec<usize>) {
    let mut ours = Vec::with_capacity(32);
    let mut theirs = Vec::with_capacity(32);
    let files = if mirror { 7 } else { 0 };
    for (piece, square) in *board {
        let side = usize::from(piece >> 3);
        let role = usize::from(piece & 7);
        let square = usize::from(square) ^ files;
        ours.push(side * 384 + role * 64 + square);
        theirs.push((1 - side) * 384 + role * 64 + (square ^ 56));
    }
    (ours, theirs)
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The network in floating point, as it is trained.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatNet {
    pub hidden: usize,
    /// `[feature][hidden]`, then the feature biases, the output weights (ours, then theirs)
    /// and the output bias: one flat vector, so the optimiser treats every weight alike.
    pub weights: Vec<f32>,
}

impl FloatNet {
    pub fn new(hidden: usize, seed: u64) -> FloatNet {
        let mut rng = SplitMix64::new(seed);
        let mut uniform = |limit: f32| {
            let unit = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
            (2.0 * unit - 1.0) * limit
        };
        let n = Self::len(hidden);
        let mut weights = vec![0.0; n];
        let feature_limit = 1.0 / (32.0f32).sqrt();
        let output_limit = 1.0 / (2.0 * hidden as f32).sqrt();
        for (i, w) in weights.iter_mut().enumerate() {
            *w = if i < INPUTS * hidden {
                uniform(feature_limit)
            } else if i < (INPUTS + 1) * hidden {
                0.0
            } else if i < (INPUTS + 3) * hidden {
                uniform(output_limit)
            } else {
                0.0
            };
        }
        FloatNet { hidden, weights }
    }

    fn len(hidden: usize) -> usize {
        (INPUTS + 3) * hidden + 1
    }

    fn bias_at(&self) -> usize {
        INPUTS * self.hidden
    }

    fn output_at(&self) -> usize {
        (INPUTS + 1) * self.hidden
    }

    /// Hidden pre-activations of one perspective.
    fn accumulate(&self, features: &[usize]) -> Vec<f32> {
        let h = self.hidden;
        let mut acc = self.weights[self.bias_at()..self.bias_at() + h].to_vec();
        for &f in features {
            for (a, w) in acc.iter_mut().zip(&self.weights[f * h..(f + 1) * h]) {
                *a += w;
            }
        }
        acc
    }

    /// The raw output (evaluation / SCALE) and both accumulators.
    fn forward(&self, ours: &[usize], theirs: &[usize]) -> (f32, Vec<f32>, Vec<f32>) {
        let (a, b) = (self.accumulate(ours), self.accumulate(theirs));
        let out = self.output_at();
        let h = self.hidden;
        let mut sum = self.weights[out + 2 * h];
        for j in 0..h {
            sum += screlu(a[j]) * self.weights[out + j] + screlu(b[j]) * self.weights[out + h + j];
        }
        (sum, a, b)
    }

    /// The evaluation of a training board in centipawns from the side to move.
    pub fn evaluate(&self, board: &ChessBoard) -> f32 {
        let (ours, theirs) = features(board, false);
        self.forward(&ours, &theirs).0 * SCALE as f32
    }

    /// Adds the gradient of one position's loss (reflected if `sample.mirror`) to `grad` and
    /// returns the loss.
    fn backprop(&self, sample: Sample, wdl: f32, grad: &mut [f32]) -> f32 {
        let board = &sample.board;
        let (ours, theirs) = features(board, sample.mirror);
        let (out, a, b) = self.forward(&ours, &theirs);
        let target = wdl * f32::from(board.result) / 2.0
            + (1.0 - wdl) * sigmoid(f32::from(board.score) / SCALE as f32);
        let predicted = sigmoid(out);
        let error = predicted - target;
        let g = 2.0 * error * predicted * (1.0 - predicted);
        let h = self.hidden;
        let (bias_at, out_at) = (self.bias_at(), self.output_at());
        grad[out_at + 2 * h] += g;
        for (acc, features, offset) in [(&a, &ours, 0), (&b, &theirs, h)] {
            for j in 0..h {
                grad[out_at + offset + j] += g * screlu(acc[j]);
                let d = g * self.weights[out_at + offset + j] * screlu_slope(acc[j]);
                if d != 0.0 {
                    grad[bias_at + j] += d;
                    for &f in features.iter() {
                        grad[f * h + j] += d;
                    }
                }
            }
        }
        error * error
    }

    /// The mean loss over `boards`.
    pub fn loss(&self, boards: &[ChessBoard], wdl: f32) -> f32 {
        let mut scratch = vec![0.0; self.weights.len()];
        let total: f32 = boards
            .iter()
            .map(|&board| self.backprop(Sample::plain(board), wdl, &mut scratch))
            .sum();
        total / boards.len().max(1) as f32
    }

    /// The network the engine loads.
    pub fn quantise(&self) -> Network {
        let h = self.hidden;
        let q = |w: f32, scale: i32| (w * scale as f32).round() as i16;
        let out = self.output_at();
        Network {
            hidden: h,
            feature_weights: self.weights[..INPUTS * h]
                .iter()
                .map(|&w| q(w, QA))
                .collect(),
            feature_bias: self.weights[self.bias_at()..out]
                .iter()
                .map(|&w| q(w, QA))
                .collect(),
            output_weights: self.weights[out..out + 2 * h]
                .iter()
                .map(|&w| q(w, QB))
                .collect(),
            output_bias: (self.weights[out + 2 * h] * (QA * QB) as f32).round() as i32,
        }
    }
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
    /// output bias is not clipped).
    fn update(&mut self, weights: &mut [f32], grad: &[f32], lr: f32, decay: f32) {
        self.step += 1;
        let c1 = 1.0 - BETA1.powi(self.step.min(1 << 20) as i32);
        let c2 = 1.0 - BETA2.powi(self.step.min(1 << 20) as i32);
        let last = weights.len() - 1;
        for i in 0..weights.len() {
            let g = grad[i];
            self.m[i] = BETA1 * self.m[i] + (1.0 - BETA1) * g;
            self.v[i] = BETA2 * self.v[i] + (1.0 - BETA2) * g * g;
            let step = (self.m[i] / c1) / ((self.v[i] / c2).sqrt() + EPSILON);
            weights[i] -= lr * (step + decay * weights[i]);
            if i != last {
                weights[i] = weights[i].clamp(-WEIGHT_LIMIT, WEIGHT_LIMIT);
            }
        }
    }
}

/// What `ferrite train` was asked for.
#[derive(Clone, Debug)]
pub struct Settings {
    pub hidden: usize,
    pub epochs: usize,
    pub batch_size: usize,
    pub lr: f32,
    /// The learning rate falls along a cosine to this fraction of `lr` by the last epoch.
    pub final_lr_fraction: f32,
    pub weight_decay: f32,
    /// Weight of the game result in the target (the rest is the search score).
    pub wdl: f32,
    pub threads: usize,
    pub seed: u64,
    pub output: PathBuf,
    /// Continue from `output`'s checkpoint.
    pub resume: bool,
    /// Train on each position reflected a to h in about half the epochs.
    pub mirror: bool,
}

/// Separates the reflection draws of one epoch from the next.
const MIRROR_SALT: u64 = 0xA24B_AED4_963E_E407;

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

impl Checkpoint {
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(b"FECK");
        out.extend_from_slice(&(self.epoch as u64).to_le_bytes());
        out.extend_from_slice(&(self.net.hidden as u64).to_le_bytes());
        out.extend_from_slice(&self.adam.step.to_le_bytes());
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
        if bytes.len() < 28 || &bytes[..4] != b"FECK" {
            return Err("not a training checkpoint".to_string());
        }
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let (epoch, hidden, step) = (word(4) as usize, word(12) as usize, word(20));
        if hidden == 0 || hidden > 1 << 14 {
            return Err(format!("checkpoint of {hidden} hidden units"));
        }
        let n = FloatNet::len(hidden);
        if bytes.len() != 28 + 12 * n {
            return Err("checkpoint of the wrong size".to_string());
        }
        let floats: Vec<f32> = bytes[28..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(Checkpoint {
            epoch,
            net: FloatNet {
                hidden,
                weights: floats[..n].to_vec(),
            },
            adam: Adam {
                m: floats[n..2 * n].to_vec(),
                v: floats[2 * n..].to_vec(),
                step,
            },
        })
    }
}

/// Writes `bytes` to `path` through a temporary file, so a kill never leaves half a file.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// A training position as one step sees it: as stored, or reflected.
#[derive(Clone, Copy, Debug)]
struct Sample {
    board: ChessBoard,
    mirror: bool,
}

impl Sample {
    fn plain(board: ChessBoard) -> Sample {
        Sample {
            board,
            mirror: false,
        }
    }
}

/// The gradient of a batch, summed over `threads` threads, and its total loss.
fn batch_gradient(net: &FloatNet, batch: &[Sample], wdl: f32, threads: usize) -> (Vec<f32>, f32) {
    let chunk = batch.len().div_ceil(threads.max(1)).max(1);
    let parts: Vec<(Vec<f32>, f32)> = std::thread::scope(|scope| {
        let handles: Vec<_> = batch
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    let mut grad = vec![0.0; net.weights.len()];
                    let loss = part
                        .iter()
                        .map(|&sample| net.backprop(sample, wdl, &mut grad))
                        .sum::<f32>();
                    (grad, loss)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a training thread panicked"))
            .collect()
    });
    let mut total = vec![0.0; net.weights.len()];
    let mut loss = 0.0;
    for (grad, part_loss) in parts {
        for (t, g) in total.iter_mut().zip(grad) {
            *t += g;
        }
        loss += part_loss;
    }
    let scale = 1.0 / batch.len().max(1) as f32;
    total.iter_mut().for_each(|g| *g *= scale);
    (total, loss)
}

/// Trains on `train`, reports the loss on `validation` after every epoch, writes the
/// quantised network and a checkpoint after every epoch. `log` receives progress lines.
pub fn train(
    settings: &Settings,
    train: &[ChessBoard],
    validation: &[ChessBoard],
    mut log: impl FnMut(&str),
) -> Result<FloatNet, String> {
    if train.is_empty() {
        return Err("no training positions".to_string());
    }
    let ckpt_path = checkpoint_path(&settings.output);
    let (mut net, mut adam, first_epoch) = if settings.resume {
        let bytes = std::fs::read(&ckpt_path)
            .map_err(|e| format!("cannot read {}: {e}", ckpt_path.display()))?;
        let ckpt =
            Checkpoint::from_bytes(&bytes).map_err(|e| format!("{}: {e}", ckpt_path.display()))?;
        if ckpt.net.hidden != settings.hidden {
            return Err(format!(
                "the checkpoint has {} hidden units, not {}",
                ckpt.net.hidden, settings.hidden
            ));
        }
        log(&format!("resuming after epoch {}", ckpt.epoch));
        (ckpt.net, ckpt.adam, ckpt.epoch)
    } else {
        let net = FloatNet::new(settings.hidden, settings.seed);
        let n = net.weights.len();
        (net, Adam::new(n), 0)
    };
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
        // Unless --no-mirror, each position is reflected in about half the epochs, by a draw of
        // the seed and the epoch alone (so a resumed run reflects as the first run would).
        let mut mirror_rng =
            SplitMix64::new(settings.seed ^ (epoch as u64).wrapping_mul(MIRROR_SALT));
        let mut mirror_bits = 0u64;
        let progress = epoch as f32 / (settings.epochs.max(2) - 1) as f32;
        let cosine = 0.5 * (1.0 + (std::f32::consts::PI * progress).cos());
        let lr = settings.lr
            * (settings.final_lr_fraction + (1.0 - settings.final_lr_fraction) * cosine);
        let start = Instant::now();
        let mut epoch_loss = 0.0;
        for (b, indices) in order.chunks(settings.batch_size).enumerate() {
            let batch: Vec<Sample> = indices
                .iter()
                .enumerate()
                .map(|(k, &i)| {
                    if k % 64 == 0 {
                        mirror_bits = mirror_rng.next_u64();
                    }
                    Sample {
                        board: train[i as usize],
                        mirror: settings.mirror && (mirror_bits >> (k % 64)) & 1 == 1,
                    }
                })
                .collect();
            let (grad, loss) = batch_gradient(&net, &batch, settings.wdl, settings.threads);
            adam.update(&mut net.weights, &grad, lr, settings.weight_decay);
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
            format!("{:.6}", net.loss(validation, settings.wdl))
        };
        log(&format!(
            "epoch {} done: train loss {:.6}, validation loss {validation_loss}, lr {lr:.2e}, {:.0} s",
            epoch + 1,
            epoch_loss / train.len() as f32,
            start.elapsed().as_secs_f64()
        ));
        write_atomically(&settings.output, &net.quantise().to_bytes())?;
        let ckpt = Checkpoint {
            epoch: epoch + 1,
            net: net.clone(),
            adam: adam.clone(),
        };
        write_atomically(&ckpt_path, &ckpt.to_bytes())?;
    }
    Ok(net)
}

/// Holds out about `fraction` of the positions for validation, in blocks of consecutive
/// positions chosen in a seeded order. The loaders keep each game's positions together, so a
/// block is whole games but for the two at its edges: positions of one game are alike, and a
/// validation set sampled position by position rewards a network for memorising games (a
/// 256-unit network once had the lower loss that way and lost every game).
pub fn split_validation<T>(boards: Vec<T>, fraction: f64, seed: u64) -> (Vec<T>, Vec<T>) {
    let block = (boards.len() / 100).clamp(1, 2048);
    let blocks = boards.len().div_ceil(block);
    let held = ((blocks as f64) * fraction.clamp(0.0, 0.5)).round() as usize;
    let mut order: Vec<usize> = (0..blocks).collect();
    let mut rng = SplitMix64::new(seed ^ 0x9FB2_1C65_1E98_DF25);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut is_held = vec![false; blocks];
    for &b in &order[..held] {
        is_held[b] = true;
    }
    let (mut train, mut validation) = (Vec::new(), Vec::new());
    for (i, board) in boards.into_iter().enumerate() {
        if is_held[i / block] {
            validation.push(board);
        } else {
            train.push(board);
        }
    }
    (train, validation)
}

/// A shakmaty position's features, for tests that compare the trainer with `eval::nnue`.
pub fn board_of(pos: &Chess) -> Result<ChessBoard, String> {
    training_board(pos, 0, 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions() -> Vec<Chess> {
        [
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "4k3/8/8/3q4/8/8/3Q4/4K3 b - - 0 1",
            "rnbqkb1r/pp1p1ppp/5n2/2pPp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 4",
            "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
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

    /// Training boards with made-up labels: a score by material, and a result.
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

    #[test]
    fn the_gradient_equals_finite_differences() {
        let net = FloatNet::new(4, 7);
        let wdl = 0.3;
        for board in boards() {
            let mut grad = vec![0.0; net.weights.len()];
            net.backprop(Sample::plain(board), wdl, &mut grad);
            let (ours, _) = features(&board, false);
            // A weight of an active feature, a bias, output weights of both sides, the bias.
            let h = net.hidden;
            let checked = [
                ours[0] * h + 1,
                ours[3] * h,
                net.bias_at() + 2,
                net.output_at(),
                net.output_at() + h + 3,
                net.weights.len() - 1,
            ];
            for &i in &checked {
                let step = 1e-3;
                let mut plus = net.clone();
                plus.weights[i] += step;
                let mut minus = net.clone();
                minus.weights[i] -= step;
                let numeric = (plus.loss(&[board], wdl) - minus.loss(&[board], wdl)) / (2.0 * step);
                let tolerance = 1e-4 + 0.05 * numeric.abs();
                assert!(
                    (grad[i] - numeric).abs() <= tolerance,
                    "weight {i}: {} against {numeric}",
                    grad[i]
                );
            }
        }
    }

    #[test]
    fn a_reflected_sample_has_the_features_of_the_reflected_position() {
        for pos in positions() {
            let mut setup = pos.to_setup(shakmaty::EnPassantMode::Legal);
            setup.board.flip_horizontal();
            setup.castling_rights = shakmaty::Bitboard::EMPTY;
            setup.ep_square = None;
            let reflected: Chess = setup.position(CastlingMode::Standard).unwrap();
            let sorted = |(mut a, mut b): (Vec<usize>, Vec<usize>)| {
                a.sort_unstable();
                b.sort_unstable();
                (a, b)
            };
            let board = board_of(&pos).unwrap();
            assert_eq!(
                sorted(features(&board, true)),
                sorted(features(&board_of(&reflected).unwrap(), false))
            );
            assert_ne!(
                sorted(features(&board, true)),
                sorted(features(&board, false))
            );
        }
    }

    #[test]
    fn a_tiny_network_fits_a_toy_target() {
        let mut net = FloatNet::new(8, 3);
        let data = boards();
        let samples: Vec<Sample> = data.iter().copied().map(Sample::plain).collect();
        let mut adam = Adam::new(net.weights.len());
        let before = net.loss(&data, 0.0);
        for _ in 0..300 {
            let (grad, _) = batch_gradient(&net, &samples, 0.0, 2);
            adam.update(&mut net.weights, &grad, 0.01, 0.0);
        }
        let after = net.loss(&data, 0.0);
        assert!(after < before / 10.0, "loss {before} -> {after}");
    }

    /// The float network whose weights are exactly the quantised ones.
    fn dequantised(net: &Network) -> FloatNet {
        fn scaled(w: &[i16], scale: i32) -> impl Iterator<Item = f32> + '_ {
            w.iter().map(move |&w| f32::from(w) / scale as f32)
        }
        let weights = scaled(&net.feature_weights, QA)
            .chain(scaled(&net.feature_bias, QA))
            .chain(scaled(&net.output_weights, QB))
            .chain(std::iter::once(net.output_bias as f32 / (QA * QB) as f32))
            .collect();
        FloatNet {
            hidden: net.hidden,
            weights,
        }
    }

    #[test]
    fn the_quantised_network_plays_what_the_float_one_learned() {
        // The integer arithmetic equals the float arithmetic on the same (rounded) weights
        // within 2 cp (the truncating divisions); rounding the weights themselves (to 1/255,
        // and 1/64 in the output layer) moves these evaluations by less than 25 cp.
        let net = FloatNet::new(32, 11);
        let quantised = Network::from_bytes(&net.quantise().to_bytes()).unwrap();
        let rounded = dequantised(&quantised);
        for pos in positions() {
            let board = board_of(&pos).unwrap();
            let int = quantised.evaluate(&pos) as f32;
            let same_weights = rounded.evaluate(&board);
            assert!(
                (same_weights - int).abs() <= 2.0,
                "{same_weights} against {int}"
            );
            let float = net.evaluate(&board);
            assert!((float - int).abs() <= 25.0, "{float} against {int}");
        }
    }

    #[test]
    fn a_resumed_run_ends_where_an_uninterrupted_one_does() {
        let dir = std::env::temp_dir().join(format!("ferrite-train-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let settings = |epochs: usize, resume: bool, name: &str| Settings {
            hidden: 8,
            epochs,
            batch_size: 4,
            lr: 0.01,
            final_lr_fraction: 0.1,
            weight_decay: 0.01,
            wdl: 0.5,
            threads: 2,
            seed: 5,
            output: dir.join(name),
            resume,
            mirror: true,
        };
        let whole = train(&settings(3, false, "a.nnue"), &boards(), &[], |_| {}).unwrap();
        train(&settings(1, false, "b.nnue"), &boards(), &[], |_| {}).unwrap();
        let resumed = train(&settings(3, true, "b.nnue"), &boards(), &[], |_| {}).unwrap();
        assert_eq!(whole, resumed);
        let written = std::fs::read(dir.join("b.nnue")).unwrap();
        assert_eq!(Network::from_bytes(&written).unwrap(), resumed.quantise());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn text_data_is_filtered_and_read_from_the_side_to_move() {
        let filter = Filter { min_ply: 0 };
        let line =
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3 | 35 | 1.0 | g8f6";
        let board = text_position(line, filter).unwrap().unwrap();
        assert_eq!(
            (board.score, board.result),
            (-35, 0),
            "Black to move: White's +35 and win"
        );
        let capture =
            "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 | 20 | 0.5 | e4d5";
        assert_eq!(text_position(capture, filter).unwrap(), None);
        let early = Filter { min_ply: 16 };
        assert_eq!(text_position(line, early).unwrap(), None);
        assert!(text_position("not a line", filter).is_err());
        assert!(text_position("8/8/8/8/8/8/8/8 w - - 0 1 | 0 | 0.5 | e2e4", filter).is_err());
    }

    #[test]
    fn validation_is_held_out_in_blocks_of_consecutive_positions() {
        let positions: Vec<usize> = (0..100_000).collect();
        let (train, validation) = split_validation(positions, 0.02, 7);
        assert_eq!(train.len() + validation.len(), 100_000);
        assert_eq!(validation.len(), 2 * 1000, "two blocks of 1000");
        // Each held-out block is a run of consecutive positions (whole games).
        for run in validation.chunks(1000) {
            assert!(run.windows(2).all(|w| w[1] == w[0] + 1), "{:?}", &run[..3]);
            assert_eq!(run[0] % 1000, 0);
        }
        // Another seed holds out other blocks.
        let (_, other) = split_validation((0..100_000).collect::<Vec<usize>>(), 0.02, 8);
        assert_ne!(other, validation);
    }
}
