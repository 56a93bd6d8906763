//! `ferrite-lab tune`: Texel-style tuning of the evaluation weights on positions labelled with
//! the result of the game they came from, or with a stronger engine's expected score
//! (method: Peter Österlund, "Texel's Tuning Method", Chess Programming Wiki). The evaluation
//! is linear in its weights given a position's features (`eval::features`), so the mean
//! squared error between the label and `sigmoid(K * eval)` (plus an optional pull towards the
//! starting weights) is minimised by full-batch gradient descent with Adam. The fit starts
//! from the weights the engine plays with.

use anyhow::Context;
use ferrite::board::Board;
use ferrite::eval::hce::{self as eval, Features, N_WEIGHTS, WEIGHTS};
use shakmaty::CastlingMode;
use std::path::{Path, PathBuf};

/// `ferrite-lab tune`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Lines of `FEN label`: a game result as [1.0]/[0.5]/[0.0] or 1-0/1/2-1/2/0-1, or an
    /// expected score from White's side such as [0.734].
    #[arg(long)]
    data: PathBuf,
    /// Gradient steps.
    #[arg(long, default_value_t = 500)]
    iterations: usize,
    /// Step size in centipawns.
    #[arg(long, default_value_t = 1.0)]
    rate: f64,
    /// Tune the piece values and piece-square tables too (780 numbers: give it millions of
    /// positions).
    #[arg(long)]
    tables: bool,
    /// Pull towards the starting weights: adds PULL x (change in cp)^2 per weight to the error
    /// (1e-8 keeps rarely seen weights near their start).
    #[arg(long, default_value_t = 0.0)]
    pull: f64,
    /// Positions kept out of the fit: their error is reported before and after, with the same
    /// K, to show whether the gain holds outside the sample.
    #[arg(long, value_name = "FILE")]
    holdout: Option<PathBuf>,
    /// Also write the tuned weights as Rust source to this file (`src/eval/weights.rs` is the
    /// engine's), with this origin note in its header.
    #[arg(long, value_name = "FILE")]
    rust: Option<PathBuf>,
    /// The origin note for `--rust`: where the data came from and how it was labelled.
    #[arg(long, default_value = "")]
    origin: String,
    /// Where the fit starts and what --pull pulls towards: the weights the engine plays with,
    /// or `neutral` (the usual piece values, every other weight 0).
    #[arg(long, default_value = "engine", value_parser = ["engine", "neutral"])]
    from: String,
    /// For `FEN | score | result | move` lines (`ferrite-lab export`): the weight of the game
    /// result in the label; the rest is sigmoid(score / --score-scale).
    #[arg(long, default_value_t = 1.0)]
    wdl: f64,
    /// The sigmoid scale of the scores in centipawns (`ferrite-lab check` fits it); needed
    /// when --wdl is below 1, and then also the scale of the fit's own sigmoid, so the
    /// evaluation learns the scores' centipawns.
    #[arg(long)]
    score_scale: Option<f64>,
}

/// `ferrite-lab tune`: fits, reports the error before and after (and on the held-out
/// positions), prints the weights and writes them as Rust source if asked.
pub fn command(args: Args) -> anyhow::Result<()> {
    let wdl = args.wdl;
    if !(0.0..=1.0).contains(&wdl) {
        anyhow::bail!("--wdl must lie in 0..1, not {wdl}");
    }
    let scale = match args.score_scale {
        Some(k) if k > 0.0 && k.is_finite() => k,
        Some(k) => anyhow::bail!("--score-scale must be positive, not {k}"),
        None if wdl < 1.0 => {
            anyhow::bail!("--wdl below 1 needs --score-scale (ferrite-lab check fits it)")
        }
        None => 400.0,
    };
    let labels = Labels { wdl, scale };
    let read = |path: &Path| -> anyhow::Result<Vec<Sample>> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let (samples, skipped) = load(&text, labels);
        if samples.is_empty() {
            anyhow::bail!("no labelled positions in {}", path.display());
        }
        eprintln!(
            "{}: {} positions read, {skipped} lines skipped",
            path.display(),
            samples.len()
        );
        Ok(samples)
    };
    let samples = read(&args.data)?;
    let holdout = args.holdout.as_deref().map(read).transpose()?;
    let start = if args.from == "neutral" {
        neutral_weights()
    } else {
        engine_weights()
    };
    let settings = Settings {
        iterations: args.iterations,
        rate: args.rate,
        tables: args.tables,
        pull: args.pull,
        start: start.clone(),
        k: (wdl < 1.0).then(|| k_of_scale(scale)),
    };
    let report = tune(&samples, &settings, |line| eprintln!("{line}"));
    eprintln!(
        "K {:.4}: error {:.6} -> {:.6}",
        report.k, report.error_before, report.error_after
    );
    if let Some(holdout) = holdout {
        eprintln!(
            "held out: error {:.6} -> {:.6}",
            mean_error(&holdout, &start, report.k),
            mean_error(&holdout, &report.weights, report.k)
        );
    }
    print!("{}", format_weights(&report.weights));
    if let Some(path) = args.rust {
        ferrite::files::write(&path, rust_source(&report.weights, &args.origin).as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// One labelled position: its features and the result from White's side (1, 0.5, 0).
pub struct Sample {
    features: Features,
    result: f64,
}

/// Reads the label of a data line, anywhere after the FEN: a game result `1.0`/`0.5`/`0.0`
/// or `"1-0"`, `"0-1"`, `"1/2-1/2"` (with or without brackets or quotes), or an expected
/// score in brackets such as `[0.734]` (as `scripts/label_positions.py` writes).
fn parse_result(text: &str) -> Option<f64> {
    for token in text.split(|c: char| c.is_whitespace() || c == ';' || c == '"') {
        match token {
            "1-0" | "1.0" => return Some(1.0),
            "0-1" | "0.0" => return Some(0.0),
            "1/2-1/2" | "0.5" => return Some(0.5),
            // Other bare numbers are not labels: bare integers are the FEN's move counters.
            _ => {
                let inner = token.strip_prefix('[').and_then(|t| t.strip_suffix(']'));
                let score = inner.and_then(|t| t.parse::<f64>().ok());
                if let Some(score) = score.filter(|s| (0.0..=1.0).contains(s)) {
                    return Some(score);
                }
            }
        }
    }
    None
}

/// How positions of data lines `FEN | score | result | move` (datagen's export, White's view)
/// are labelled: `wdl` of the game result and the rest the search score's expected result
/// `sigmoid(score / scale)`. Positions in check, with a capture or promotion as the best move,
/// a mate score, or before ply 16 are left out of those files, as the trainer leaves them.
#[derive(Clone, Copy, Debug)]
pub struct Labels {
    pub wdl: f64,
    pub scale: f64,
}

impl Default for Labels {
    fn default() -> Labels {
        Labels {
            wdl: 1.0,
            scale: 400.0,
        }
    }
}

/// One line of a data file: a sample, `None` for a position the filter leaves out, or an
/// error for a line that cannot be read.
fn sample(line: &str, labels: Labels) -> Result<Option<Sample>, ()> {
    if line.contains('|') {
        let line = crate::data::TextLine::parse(line).map_err(|_| ())?;
        if !line.kept_by(crate::data::Filter { min_ply: 16 }) {
            return Ok(None);
        }
        let expected = 1.0 / (1.0 + (-f64::from(line.white_score) / labels.scale).exp());
        return Ok(Some(Sample {
            features: eval::features(&line.pos),
            result: labels.wdl * f64::from(line.white_result) + (1.0 - labels.wdl) * expected,
        }));
    }
    let fields: Vec<&str> = line.split_whitespace().collect();
    let fen_len = fields.len().min(6);
    (4..=fen_len)
        .rev()
        .find_map(|n| {
            let board = Board::from_fen(&fields[..n].join(" "), CastlingMode::Standard).ok()?;
            let result = parse_result(&fields[n..].join(" "))?;
            Some(Sample {
                features: eval::features(board.pos()),
                result,
            })
        })
        .map(Some)
        .ok_or(())
}

/// Parses `FEN <result>` lines, or datagen's `FEN | score | result | move` lines labelled by
/// `labels`; returns the samples and the number of lines skipped.
pub fn load(text: &str, labels: Labels) -> (Vec<Sample>, usize) {
    let mut samples = Vec::new();
    let mut skipped = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match sample(line, labels) {
            Ok(Some(sample)) => samples.push(sample),
            Ok(None) => {}
            Err(()) => skipped += 1,
        }
    }
    (samples, skipped)
}

fn sigmoid(k: f64, eval: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-k * eval / 400.0))
}

/// The mean squared error of `sigmoid(K * eval)` against the labels.
pub fn mean_error(samples: &[Sample], weights: &[(f64, f64)], k: f64) -> f64 {
    let total: f64 = samples
        .iter()
        .map(|s| (s.result - sigmoid(k, s.features.white_eval(weights))).powi(2))
        .sum();
    total / samples.len().max(1) as f64
}

/// The scaling constant K that best fits the current weights to the results.
pub fn best_k(samples: &[Sample], weights: &[(f64, f64)]) -> f64 {
    let (mut lo, mut hi) = (0.1, 3.0);
    // Golden-section search: the error is unimodal in K.
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..40 {
        let a = hi - ratio * (hi - lo);
        let b = lo + ratio * (hi - lo);
        if mean_error(samples, weights, a) < mean_error(samples, weights, b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    (lo + hi) / 2.0
}

pub struct TuneReport {
    pub k: f64,
    pub error_before: f64,
    pub error_after: f64,
    pub weights: Vec<(f64, f64)>,
}

/// The weights the engine plays with, as the tuner's starting point.
pub fn engine_weights() -> Vec<(f64, f64)> {
    WEIGHTS.iter().map(|s| (s.0 as f64, s.1 as f64)).collect()
}

/// A start that knows nothing but the usual piece values (pawn 100, knight 300, bishop 320,
/// rook 500, queen 900), every other weight 0: a fit from here owes nothing to the weights
/// before it.
pub fn neutral_weights() -> Vec<(f64, f64)> {
    let mut weights = vec![(0.0, 0.0); N_WEIGHTS];
    for (role, value) in [100.0, 300.0, 320.0, 500.0, 900.0].into_iter().enumerate() {
        weights[eval::material_index(role)] = (value, value);
    }
    weights
}

/// How `tune` runs.
pub struct Settings {
    /// Adam steps over the whole data.
    pub iterations: usize,
    /// Step size in centipawns.
    pub rate: f64,
    /// Whether the piece values and piece-square tables move too.
    pub tables: bool,
    /// Adds `pull * (w - start)^2` per weight (centipawns) to the error, so weights that few
    /// positions speak for (a queen reaching 26 squares, a storm of 30 attack units) stay near
    /// their starting values instead of fitting the noise.
    pub pull: f64,
    /// Where the fit starts, and what the pull pulls towards.
    pub start: Vec<(f64, f64)>,
    /// The sigmoid's K, fixed; fitted to the starting weights when `None`. Labels made from
    /// search scores fix it to their own scale, so the evaluation learns those centipawns.
    pub k: Option<f64>,
}

/// The tuner's K (`sigmoid(K * eval)` in base-10 form over 400) equal to a logistic
/// `sigmoid(eval / scale)`.
pub fn k_of_scale(scale: f64) -> f64 {
    400.0 / (scale * std::f64::consts::LN_10)
}

/// Runs Adam steps from the engine's weights.
pub fn tune(samples: &[Sample], settings: &Settings, mut log: impl FnMut(&str)) -> TuneReport {
    let Settings {
        iterations,
        rate,
        tables,
        pull,
        ..
    } = *settings;
    let start = settings.start.clone();
    let mut weights = start.clone();
    let k = settings.k.unwrap_or_else(|| best_k(samples, &weights));
    let error_before = mean_error(samples, &weights, k);
    log(&format!(
        "{} positions, K = {k:.4}, error {error_before:.6}",
        samples.len()
    ));
    let (beta1, beta2, epsilon): (f64, f64, f64) = (0.9, 0.999, 1e-8);
    let mut m = vec![(0.0, 0.0); N_WEIGHTS];
    let mut v = vec![(0.0, 0.0); N_WEIGHTS];
    let scale = std::f64::consts::LN_10 * k / 400.0;
    for step in 1..=iterations {
        let mut gradient = vec![(0.0, 0.0); N_WEIGHTS];
        for s in samples {
            let p = sigmoid(k, s.features.white_eval(&weights));
            // d(error)/d(eval) for this sample; the eval's derivative in each weight is its
            // count, split between middlegame and endgame by the phase.
            let d = -2.0 * (s.result - p) * p * (1.0 - p) * scale;
            let d = d * s.features.scale as f64 / 8.0;
            let mg_share = s.features.phase as f64 / 24.0;
            let eg_share = 1.0 - mg_share;
            for &(i, c) in &s.features.counts {
                let g = &mut gradient[i as usize];
                g.0 += d * c as f64 * mg_share;
                g.1 += d * c as f64 * eg_share;
            }
        }
        let n = samples.len().max(1) as f64;
        let correction1 = 1.0 - beta1.powi(step as i32);
        let correction2 = 1.0 - beta2.powi(step as i32);
        for i in (0..N_WEIGHTS).filter(|&i| tables || !eval::is_base_value(i)) {
            let g = (
                gradient[i].0 / n + 2.0 * pull * (weights[i].0 - start[i].0),
                gradient[i].1 / n + 2.0 * pull * (weights[i].1 - start[i].1),
            );
            m[i] = (
                beta1 * m[i].0 + (1.0 - beta1) * g.0,
                beta1 * m[i].1 + (1.0 - beta1) * g.1,
            );
            v[i] = (
                beta2 * v[i].0 + (1.0 - beta2) * g.0 * g.0,
                beta2 * v[i].1 + (1.0 - beta2) * g.1 * g.1,
            );
            weights[i].0 -=
                rate * (m[i].0 / correction1) / ((v[i].0 / correction2).sqrt() + epsilon);
            weights[i].1 -=
                rate * (m[i].1 / correction1) / ((v[i].1 / correction2).sqrt() + epsilon);
        }
        if step % 50 == 0 || step == iterations {
            log(&format!(
                "step {step}: error {:.6}",
                mean_error(samples, &weights, k)
            ));
        }
    }
    let error_after = mean_error(samples, &weights, k);
    TuneReport {
        k,
        error_before,
        error_after,
        weights,
    }
}

/// The tuned weights, one `name mg eg (was mg eg)` line each.
pub fn format_weights(weights: &[(f64, f64)]) -> String {
    weights
        .iter()
        .zip(WEIGHTS.iter())
        .enumerate()
        .map(|(i, (new, old))| {
            format!(
                "{:<18} {:>5} {:>5}   (was {} {})\n",
                eval::weight_name(i),
                new.0.round(),
                new.1.round(),
                old.0,
                old.1
            )
        })
        .collect()
}

/// The tuned weights as the source of `src/eval/weights.rs`, which the engine plays with: one
/// `Score(mg, eg)` per line, named. `origin` says where the weights came from.
pub fn rust_source(weights: &[(f64, f64)], origin: &str) -> String {
    let mut out = String::from(
        "//! The evaluation weights, written by `ferrite-lab tune --rust` (see docs/tuning.md):\n\
         //! edit them by tuning again, or by hand for a new term's starting value.\n",
    );
    for line in origin.lines() {
        out += &format!("//! {line}\n");
    }
    out += "\nuse super::hce::{Score, N_WEIGHTS};\n\n#[rustfmt::skip]\n";
    out += "pub const WEIGHTS: [Score; N_WEIGHTS] = [\n";
    for (i, w) in weights.iter().enumerate() {
        let (mg, eg) = (w.0.round() as i32, w.1.round() as i32);
        out += &format!("    Score({mg}, {eg}), // {}\n", eval::weight_name(i));
    }
    out + "];\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Color;

    const FENS: [&str; 5] = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 0 8",
        "6k1/5ppp/8/3N4/8/8/2r2PPP/6K1 b - - 0 40",
    ];

    #[test]
    fn the_tuner_sees_the_engines_evaluation() {
        let weights = engine_weights();
        for fen in FENS {
            let board = Board::from_fen(fen, CastlingMode::Standard).unwrap();
            let engine = eval::evaluate(board.pos());
            let white = match board.turn() {
                Color::White => engine,
                Color::Black => -engine,
            };
            let tuner = eval::features(board.pos()).white_eval(&weights);
            // The engine rounds the blend towards zero; the tuner does not.
            assert!(
                (tuner - white as f64).abs() < 1.0,
                "{fen}: tuner {tuner}, engine {white}"
            );
        }
    }

    #[test]
    fn results_are_read_in_the_usual_notations() {
        let text = format!(
            "{} [1.0]\n{} \"0-1\";\n{} ; 1/2-1/2\n{} [0.734]\n{} 0.5\nnot a position [1.0]\n{}\n{} [1.5]\n",
            FENS[0], FENS[1], FENS[2], FENS[3], FENS[4], FENS[0], FENS[1]
        );
        let (samples, skipped) = load(&text, Labels::default());
        let results: Vec<f64> = samples.iter().map(|s| s.result).collect();
        assert_eq!(results, vec![1.0, 0.0, 0.5, 0.734, 0.5]);
        // The bad FEN, the line without a label, and the score outside [0, 1].
        assert_eq!(skipped, 3);
    }

    #[test]
    fn datagen_lines_are_labelled_by_score_and_result() {
        let quiet =
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 9 | 200 | 0.0 | f1c4";
        let early =
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3 | 200 | 0.0 | f1c4";
        let capture =
            "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 9 | 20 | 0.5 | e4d5";
        let text = format!("{quiet}\n{early}\n{capture}\nbad | 1 | 1.0 | e2e4\n");
        let labels = Labels {
            wdl: 0.25,
            scale: 200.0,
        };
        let (samples, skipped) = load(&text, labels);
        assert_eq!((samples.len(), skipped), (1, 1));
        let expected = 0.75 / (1.0 + (-1.0f64).exp());
        assert!(
            (samples[0].result - expected).abs() < 1e-12,
            "{}",
            samples[0].result
        );
    }

    #[test]
    fn a_fixed_k_is_the_logistic_scale_of_the_labels() {
        let k = k_of_scale(227.0);
        for eval in [-300.0, 45.0, 600.0] {
            let logistic = 1.0 / (1.0 + (-eval / 227.0f64).exp());
            assert!((sigmoid(k, eval) - logistic).abs() < 1e-12);
        }
    }

    #[test]
    fn the_neutral_start_knows_only_piece_values() {
        let neutral = neutral_weights();
        let named: Vec<String> = (0..N_WEIGHTS)
            .filter(|&i| neutral[i] != (0.0, 0.0))
            .map(eval::weight_name)
            .collect();
        assert_eq!(
            named,
            [
                "material[0]",
                "material[1]",
                "material[2]",
                "material[3]",
                "material[4]"
            ]
        );
        // The start position's material balances: only the fixed tempo bonus remains.
        let board = Board::from_fen(FENS[0], CastlingMode::Standard).unwrap();
        let features = eval::features(board.pos());
        assert_eq!(features.white_eval(&neutral), f64::from(features.tempo));
    }

    #[test]
    fn the_rust_source_holds_every_weight_in_order() {
        let weights: Vec<(f64, f64)> = (0..N_WEIGHTS)
            .map(|i| (i as f64, -0.6 * i as f64))
            .collect();
        let source = rust_source(&weights, "test data");
        assert!(source.contains("//! test data\n"));
        let read: Vec<(f64, f64)> = source
            .lines()
            .filter_map(|l| l.trim().strip_prefix("Score(")?.split_once("), //"))
            .map(|(pair, _)| {
                let (mg, eg) = pair.split_once(", ").unwrap();
                (mg.parse().unwrap(), eg.parse().unwrap())
            })
            .collect();
        let rounded: Vec<(f64, f64)> = weights.iter().map(|w| (w.0, w.1.round())).collect();
        assert_eq!(read, rounded);
    }

    #[test]
    fn tuning_lowers_the_error_on_its_data() {
        // Results that disagree with the evaluation: the tuner must move towards them.
        let text: String = FENS
            .iter()
            .enumerate()
            .map(|(i, fen)| format!("{fen} [{}]\n", if i % 2 == 0 { "0.0" } else { "1.0" }))
            .collect();
        let (samples, _) = load(&text, Labels::default());
        let settings = |tables| Settings {
            iterations: 100,
            rate: 2.0,
            tables,
            pull: 0.0,
            start: engine_weights(),
            k: None,
        };
        let report = tune(&samples, &settings(true), |_| {});
        assert!(
            report.error_after < report.error_before,
            "{} -> {}",
            report.error_before,
            report.error_after
        );
        let frozen = tune(&samples, &settings(false), |_| {});
        for (i, (new, old)) in frozen.weights.iter().zip(WEIGHTS.iter()).enumerate() {
            if eval::is_base_value(i) {
                assert_eq!(
                    *new,
                    (old.0 as f64, old.1 as f64),
                    "{}",
                    eval::weight_name(i)
                );
            }
        }
    }
}
