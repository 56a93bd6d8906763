//! The win/draw/loss model behind `UCI_ShowWDL`: the chances, in per mille, that a score
//! means a win, a draw or a loss for the side to move, by the material left on the board.
//! Fitted to Ferrite's own games by `scripts/fit_wdl.py` (the form Stockfish uses: a
//! logistic curve whose centre and width are cubics in the material); refit it whenever the
//! evaluation changes. These constants: the 309,140 positions with |score| < 2000 of 2,352
//! self-play games of the built-in network ferrite-net-1 (build 109f552, 5000 nodes a move,
//! seed 4401), 5000 steps, mean log-likelihood -0.6267.

use crate::types::DECISIVE;
use shakmaty::{Chess, Position, Role};

/// The score (centipawns) at which a win is an even chance, as a cubic in material / 58.
const A: [f64; 4] = [311.730, -137.770, -764.368, 681.106];
/// How many centipawns the logistic curve takes to rise by a factor of e, as a cubic.
const B: [f64; 4] = [193.170, -184.741, -177.100, 243.073];

/// P + 3N + 3B + 5R + 9Q of both sides, clamped to the range the model was fitted on.
pub fn material(pos: &Chess) -> i32 {
    let board = pos.board();
    let count = |role: Role| board.by_role(role).count() as i32;
    let material = count(Role::Pawn)
        + 3 * (count(Role::Knight) + count(Role::Bishop))
        + 5 * count(Role::Rook)
        + 9 * count(Role::Queen);
    material.clamp(17, 78)
}

fn cubic(c: &[f64; 4], t: f64) -> f64 {
    ((c[0] * t + c[1]) * t + c[2]) * t + c[3]
}

/// Win, draw and loss in per mille (summing to 1000) for `score` from the side to move with
/// `material` (see `material`) on the board. Mates are certain.
pub fn wdl(score: i32, material: i32) -> (u32, u32, u32) {
    if score >= DECISIVE {
        return (1000, 0, 0);
    }
    if score <= -DECISIVE {
        return (0, 0, 1000);
    }
    let t = f64::from(material.clamp(17, 78)) / 58.0;
    let (a, b) = (cubic(&A, t), cubic(&B, t).max(1.0));
    let x = f64::from(score);
    let chance = |z: f64| 1.0 / (1.0 + (z / b).exp());
    let win = (chance(a - x) * 1000.0).round() as u32;
    let loss = (chance(a + x) * 1000.0).round() as u32;
    let loss = loss.min(1000 - win.min(1000));
    (win.min(1000), 1000 - win.min(1000) - loss, loss)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::MATE;

    #[test]
    fn chances_sum_to_a_thousand_and_follow_the_score() {
        for material in [17, 30, 58, 78] {
            let mut last_win = 0;
            for score in (-1500..=1500).step_by(50) {
                let (w, d, l) = wdl(score, material);
                assert_eq!(w + d + l, 1000, "{score} {material}");
                assert!(w >= last_win, "win chance falls at {score}");
                last_win = w;
                // The model is symmetric: the other side's view swaps win and loss.
                assert_eq!(wdl(-score, material), (l, d, w));
            }
            let (w, d, _) = wdl(0, material);
            assert!(d > w, "a draw is the likeliest end of a level position");
            assert!(wdl(1500, material).0 > 900, "fifteen pawns up is a win");
        }
        assert_eq!(wdl(MATE - 3, 40), (1000, 0, 0));
        assert_eq!(wdl(-MATE + 4, 40), (0, 0, 1000));
    }

    #[test]
    fn material_counts_both_sides() {
        assert_eq!(material(&Chess::default()), 78);
        let pos: Chess = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();
        assert_eq!(material(&pos), 17);
    }
}
