//! `ferrite tune`: Texel-style tuning of the evaluation weights on positions labelled with
//! the result of the game they came from (method: Peter Österlund, "Texel's Tuning Method",
//! Chess Programming Wiki). The evaluation is linear in its weights given a position's
//! features (`eval::features`), so the mean squared error between the game result and
//! `sigmoid(K * eval)` is minimised by full-batch gradient descent with Adam.

use crate::board::Board;
use crate::eval::{self, Features, N_WEIGHTS, WEIGHTS};
use shakmaty::CastlingMode;

/// One labelled position: its features and the result from White's side (1, 0.5, 0).
pub struct Sample {
    features: Features,
    result: f64,
}

/// Reads the result marker of a data line: `[1.0]`/`[0.5]`/`[0.0]`, or `"1-0"`, `"0-1"`,
/// `"1/2-1/2"` (with or without quotes), anywhere after the FEN.
fn parse_result(text: &str) -> Option<f64> {
    for token in text.split(|c: char| c.is_whitespace() || c == ';' || c == '"') {
        let token = token.trim_matches(|c| c == '[' || c == ']');
        match token {
            // Bare integers are not results: they are the FEN's move counters.
            "1-0" | "1.0" => return Some(1.0),
            "0-1" | "0.0" => return Some(0.0),
            "1/2-1/2" | "0.5" => return Some(0.5),
            _ => {}
        }
    }
    None
}

/// Parses `FEN <result>` lines; returns the samples and the number of lines skipped.
pub fn load(text: &str) -> (Vec<Sample>, usize) {
    let mut samples = Vec::new();
    let mut skipped = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let fen_len = fields.len().min(6);
        let sample = (4..=fen_len).rev().find_map(|n| {
            let board = Board::from_fen(&fields[..n].join(" "), CastlingMode::Standard).ok()?;
            let result = parse_result(&fields[n..].join(" "))?;
            Some(Sample {
                features: eval::features(board.pos()),
                result,
            })
        });
        match sample {
            Some(sample) => samples.push(sample),
            None => skipped += 1,
        }
    }
    (samples, skipped)
}

fn sigmoid(k: f64, eval: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-k * eval / 400.0))
}

fn mean_error(samples: &[Sample], weights: &[(f64, f64)], k: f64) -> f64 {
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

/// Runs `iterations` Adam steps of size `rate` (centipawns) from the engine's weights; the
/// piece values and piece-square tables stay as they are unless `tables` is set.
pub fn tune(
    samples: &[Sample],
    iterations: usize,
    rate: f64,
    tables: bool,
    mut log: impl FnMut(&str),
) -> TuneReport {
    let mut weights: Vec<(f64, f64)> = WEIGHTS.iter().map(|s| (s.0 as f64, s.1 as f64)).collect();
    let k = best_k(samples, &weights);
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
            let g = (gradient[i].0 / n, gradient[i].1 / n);
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
        let weights: Vec<(f64, f64)> = WEIGHTS.iter().map(|s| (s.0 as f64, s.1 as f64)).collect();
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
            "{} [1.0]\n{} \"0-1\";\n{} ; 1/2-1/2\nnot a position [1.0]\n{}\n",
            FENS[0], FENS[1], FENS[2], FENS[3]
        );
        let (samples, skipped) = load(&text);
        let results: Vec<f64> = samples.iter().map(|s| s.result).collect();
        assert_eq!(results, vec![1.0, 0.0, 0.5]);
        assert_eq!(skipped, 2);
    }

    #[test]
    fn tuning_lowers_the_error_on_its_data() {
        // Results that disagree with the evaluation: the tuner must move towards them.
        let text: String = FENS
            .iter()
            .enumerate()
            .map(|(i, fen)| format!("{fen} [{}]\n", if i % 2 == 0 { "0.0" } else { "1.0" }))
            .collect();
        let (samples, _) = load(&text);
        let report = tune(&samples, 100, 2.0, true, |_| {});
        assert!(
            report.error_after < report.error_before,
            "{} -> {}",
            report.error_before,
            report.error_after
        );
        let frozen = tune(&samples, 100, 2.0, false, |_| {});
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
