//! Playing at a chosen strength (`UCI_LimitStrength` with `UCI_Elo`), so that the weakened
//! engine plays like a weaker player rather than a strong one that now and then drops a
//! piece. Three things fall with the level, each a known way players are weaker:
//!
//! - it sees less: a node budget a move, log-spaced over the range, since a search's
//!   strength grows about linearly with the logarithm of its nodes;
//! - it judges worse, and consistently so: noise on the static evaluation that is a fixed
//!   function of the position for the whole game, so the engine holds a slightly wrong view
//!   and plays to it, rather than a fresh random blunder each move;
//! - it chooses less sharply: among the best root moves (as MultiPV finds them) it picks by
//!   score with a temperature, never one that loses more than a bound against the best, nor
//!   one that the search sees getting mated, and above the lowest level never one that
//!   allows a mate in one or loses the queen (checked on the board, whatever the search saw).
//!
//! What it must always do: a proven mate or tablebase result is played at once, and with a
//! lone king on the board (KQ v K, KR v K and the like) it searches at least
//! `LONE_KING_NODES` with neither noise nor temperature, so every level converts them.
//! Each level is fitted in games to Stockfish 15.1's `UCI_Elo` scale at 10+0.1
//! (docs/strength.md has the table, the games and how to redo them).

use super::see::see_ge;
use super::Iteration;
use crate::rng::mix;
use crate::types::DECISIVE;
use shakmaty::{Chess, Color, Move, Position};

/// The range of `UCI_Elo`: the part of Stockfish 15.1's `UCI_Elo` scale that the calibration
/// covers.
pub const ELO_MIN: i32 = 1350;
pub const ELO_MAX: i32 = 2150;
/// Root moves considered for the choice (a MultiPV search of at least this many lines).
pub const CANDIDATES: usize = 4;
/// The scale of settings that the weakening is given on: at `SETTING_MIN` the least nodes and
/// the most noise, temperature and loss, at `SETTING_MAX` and above none of them.
pub const SETTING_MIN: f64 = 1350.0;
pub const SETTING_MAX: f64 = 2850.0;
/// The node budget at `SETTING_MIN`, and how many points of the scale double it.
const NODES_AT_MIN: f64 = 250.0;
const POINTS_PER_DOUBLING: f64 = 150.0;
/// Evaluation noise at `SETTING_MIN` in centipawns (+-), falling linearly to none at the top.
const NOISE_AT_MIN: i32 = 70;
/// The choice's temperature at `SETTING_MIN` in centipawns, falling linearly to none.
const TEMPERATURE_AT_MIN: i32 = 45;
/// The most a chosen move may lose against the best, at the bottom and at the top.
const MAX_LOSS_AT_MIN: i32 = 300;
const MAX_LOSS_AT_MAX: i32 = 60;
/// The calibration against Stockfish 15.1's `UCI_Elo` at 10+0.1 (docs/strength.md): each
/// level and the setting that scored 50% within its error bar in 100 games against Stockfish
/// at that level. Levels between are interpolated. The top plays at full judgement with at
/// most 256,000 nodes a move (about what the clock allows at 10+0.1).
const CALIBRATION: [(i32, f64); 5] = [
    (1350, 1725.0),
    (1625, 2060.0),
    (1875, 2400.0),
    (2000, 2600.0),
    (2150, 2850.0),
];
/// The least a search with a lone king on the board may search, at every level.
pub const LONE_KING_NODES: u64 = 5_000;

/// A strength level, the setting it plays at, and the game's random seed (which fixes the
/// evaluation's noise and the choice's draws for the game).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strength {
    elo: i32,
    setting: f64,
    seed: u64,
}

impl Strength {
    /// The level `elo`, held to `ELO_MIN..=ELO_MAX` (UCI refuses others), at the setting the
    /// calibration gives it, for a game seeded with `seed`.
    pub fn new(elo: i32, seed: u64) -> Strength {
        let elo = elo.clamp(ELO_MIN, ELO_MAX);
        Strength {
            elo,
            setting: calibrated_setting(elo),
            seed,
        }
    }

    /// The same level at another setting: how the calibration measures a setting (a tuning
    /// build's `Strength Setting` option), everything else as the level plays.
    pub fn at_setting(self, setting: f64) -> Strength {
        Strength { setting, ..self }
    }

    pub fn elo(&self) -> i32 {
        self.elo
    }

    /// How weak the setting is, from 0.0 (the top of the scale or above) to 1.0 (its bottom).
    fn weakness(&self) -> f64 {
        ((SETTING_MAX - self.setting) / (SETTING_MAX - SETTING_MIN)).clamp(0.0, 1.0)
    }

    /// The nodes a move at this level in `pos`.
    pub fn nodes(&self, pos: &Chess) -> u64 {
        let above_min = self.setting - SETTING_MIN;
        let budget = (NODES_AT_MIN * 2f64.powf(above_min / POINTS_PER_DOUBLING)) as u64;
        if has_lone_king(pos) {
            budget.max(LONE_KING_NODES)
        } else {
            budget
        }
    }

    /// The evaluation's noise in `pos` (key `key`): fixed for the position and the game,
    /// within +-the level's amplitude; none with a lone king on the board.
    pub fn noise(&self, pos: &Chess, key: u64) -> i32 {
        let amplitude = (f64::from(NOISE_AT_MIN) * self.weakness()).round() as u64;
        if amplitude == 0 || has_lone_king(pos) {
            return 0;
        }
        (mix(key ^ self.seed) % (2 * amplitude + 1)) as i32 - amplitude as i32
    }

    /// The line to play among `lines`, the root moves' lines of a complete iteration, best
    /// first: by score with the level's temperature among those that lose at most the
    /// level's bound against the best and are not mated. The best line where the best score
    /// is decisive (a mate or a tablebase result), with a lone king on the board, or at the
    /// top level. `key` is the root's key: a position met again in the game gets the same
    /// choice.
    pub fn choose(&self, lines: &[Iteration], pos: &Chess, key: u64) -> usize {
        let temperature = f64::from(TEMPERATURE_AT_MIN) * self.weakness();
        let Some(best) = lines.first().map(|line| line.score) else {
            return 0;
        };
        if best.abs() >= DECISIVE || temperature < 1.0 || has_lone_king(pos) {
            return 0;
        }
        let max_loss = MAX_LOSS_AT_MAX
            + (f64::from(MAX_LOSS_AT_MIN - MAX_LOSS_AT_MAX) * self.weakness()).round() as i32;
        let guarded = self.elo > ELO_MIN;
        let weights: Vec<f64> = lines
            .iter()
            .map(|line| {
                let blunder = guarded && line.pv.first().is_some_and(|&mv| blunders(pos, mv));
                if line.score > -DECISIVE && best - line.score <= max_loss && !blunder {
                    (f64::from(line.score - best) / temperature).exp()
                } else {
                    0.0
                }
            })
            .collect();
        let total: f64 = weights.iter().sum();
        if total == 0.0 {
            return 0;
        }
        // A uniform draw in [0, total) from the game's seed and the position.
        let draw = (mix(key ^ self.seed.rotate_left(32)) >> 11) as f64 / (1u64 << 53) as f64;
        let mut left = draw * total;
        for (i, weight) in weights.iter().enumerate() {
            if left < *weight {
                return i;
            }
            left -= weight;
        }
        0
    }
}

/// The setting of level `elo`, interpolated in `CALIBRATION`.
fn calibrated_setting(elo: i32) -> f64 {
    let elo = f64::from(elo);
    let mut below = CALIBRATION[0];
    for &above in &CALIBRATION[1..] {
        if elo <= f64::from(above.0) {
            let t = (elo - f64::from(below.0)) / f64::from(above.0 - below.0);
            return below.1 + t * (above.1 - below.1);
        }
        below = above;
    }
    below.1
}

/// Whether playing `mv` in `pos` leaves the opponent a mate in one, or a capture of our queen
/// that wins at least a rook's worth by exchange: the blunders a level above the lowest
/// never chooses, whatever a small search made of them.
fn blunders(pos: &Chess, mv: Move) -> bool {
    let mut after = pos.clone();
    after.play_unchecked(mv);
    let our_queens = after.board().queens() & after.board().by_color(pos.turn());
    after.legal_moves().into_iter().any(|reply| {
        let wins_queen =
            our_queens.contains(reply.to()) && reply.is_capture() && see_ge(&after, reply, 500);
        wins_queen || {
            let mut next = after.clone();
            next.play_unchecked(reply);
            next.is_checkmate()
        }
    })
}

/// Whether either side has nothing but its king.
fn has_lone_king(pos: &Chess) -> bool {
    let board = pos.board();
    Color::ALL
        .into_iter()
        .any(|color| (board.by_color(color) & !board.kings()).is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Bound, MATE};
    use shakmaty::{fen::Fen, CastlingMode};

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    const MIDDLEGAME: &str = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    const KRK: &str = "8/8/8/4k3/8/8/8/4K2R w - - 0 1";

    fn lines(scores: &[i32]) -> Vec<Iteration> {
        let start = Chess::default();
        let moves = start.legal_moves();
        scores
            .iter()
            .zip(moves)
            .map(|(&score, mv)| Iteration {
                depth: 5,
                seldepth: 5,
                score,
                bound: Bound::Exact,
                pv: vec![mv],
            })
            .collect()
    }

    #[test]
    fn blunders_are_a_mate_in_one_allowed_or_the_queen_lost() {
        let play = |fen: &str, uci: &str| {
            let position = pos(fen);
            let mv = uci
                .parse::<shakmaty::uci::UciMove>()
                .unwrap()
                .to_move(&position)
                .unwrap();
            blunders(&position, mv)
        };
        // After 1.f3 e5, 2.g4 allows Qh4 mate; 2.e4 does not.
        let fools = "rnbqkbnr/pppp1ppp/8/4p3/8/5P2/PPPPP1PP/RNBQKBNR w KQkq - 0 2";
        assert!(play(fools, "g2g4"));
        assert!(!play(fools, "e2e4"));
        // After 1.e4 d5, 2.Qg4 gives the queen to the bishop; 2.Nf3 gives nothing.
        let scandinavian = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 2";
        assert!(play(scandinavian, "d1g4"));
        assert!(!play(scandinavian, "g1f3"));
        // A queen exchange is no blunder.
        let exchange = "rnb1kbnr/pppp1ppp/8/4p1q1/4P1Q1/7P/PPPP1PP1/RNB1KBNR w KQkq - 2 3";
        assert!(!play(exchange, "b1c3"));
    }

    #[test]
    fn the_node_budget_doubles_with_the_setting_and_has_a_floor_with_a_lone_king() {
        let middlegame = pos(MIDDLEGAME);
        let at = |setting: f64| {
            Strength::new(ELO_MIN, 1)
                .at_setting(setting)
                .nodes(&middlegame)
        };
        assert_eq!(at(SETTING_MIN), NODES_AT_MIN as u64);
        assert_eq!(
            at(SETTING_MIN + POINTS_PER_DOUBLING),
            2 * NODES_AT_MIN as u64
        );
        assert!(at(SETTING_MAX) > 500 * at(SETTING_MIN));
        // The calibration's levels play at their settings, and the levels between at settings
        // between theirs: more nodes at every step up.
        let nodes = |elo: i32| Strength::new(elo, 1).nodes(&middlegame);
        for &(elo, setting) in &CALIBRATION {
            assert_eq!(nodes(elo), at(setting), "{elo}");
        }
        let levels: Vec<u64> = (ELO_MIN..=ELO_MAX).step_by(25).map(nodes).collect();
        assert!(levels.windows(2).all(|w| w[0] < w[1]), "{levels:?}");
        assert_eq!(Strength::new(ELO_MIN, 1).nodes(&pos(KRK)), LONE_KING_NODES);
        // Out-of-range levels are held to the range.
        assert_eq!(Strength::new(0, 1), Strength::new(ELO_MIN, 1));
        assert_eq!(Strength::new(9999, 1), Strength::new(ELO_MAX, 1));
    }

    #[test]
    fn the_noise_is_fixed_for_a_position_and_a_game_and_falls_with_the_level() {
        let middlegame = pos(MIDDLEGAME);
        let low = Strength::new(ELO_MIN, 7).at_setting(SETTING_MIN);
        let noises: Vec<i32> = (0..2000u64)
            .map(|key| low.noise(&middlegame, key))
            .collect();
        assert!(noises.iter().all(|n| n.abs() <= NOISE_AT_MIN));
        assert!(noises.iter().any(|&n| n > NOISE_AT_MIN / 2));
        assert!(noises.iter().any(|&n| n < -NOISE_AT_MIN / 2));
        // The same position in the same game: the same noise; another game: another.
        assert_eq!(low.noise(&middlegame, 42), low.noise(&middlegame, 42));
        let other_game = Strength::new(ELO_MIN, 8).at_setting(SETTING_MIN);
        assert!((0..100u64).any(|k| other_game.noise(&middlegame, k) != low.noise(&middlegame, k)));
        // Narrower higher up, none at the top, none with a lone king.
        let mid = low.at_setting((SETTING_MIN + SETTING_MAX) / 2.0);
        assert!((0..2000u64).all(|k| mid.noise(&middlegame, k).abs() <= NOISE_AT_MIN / 2));
        let top = low.at_setting(SETTING_MAX);
        assert!((0..100u64).all(|k| top.noise(&middlegame, k) == 0));
        assert!((0..100u64).all(|k| low.noise(&pos(KRK), k) == 0));
    }

    #[test]
    fn the_choice_spreads_over_close_moves_and_never_takes_a_losing_one() {
        let middlegame = pos(MIDDLEGAME);
        let low = Strength::new(ELO_MIN, 3).at_setting(SETTING_MIN);
        // Two close moves, one that drops a piece, one that is mated.
        let close = lines(&[30, 10, 30 - 320, -MATE + 4]);
        let mut picked = [0; 4];
        for key in 0..4000u64 {
            picked[low.choose(&close, &middlegame, key)] += 1;
        }
        assert!(picked[0] > picked[1] && picked[1] > 400, "{picked:?}");
        assert_eq!(picked[2] + picked[3], 0, "{picked:?}");
        // A level above the lowest never takes a move that loses a piece, nor one the board
        // shows to be a blunder, whatever its score says.
        let above = Strength::new(ELO_MIN + 100, 3);
        let blunder = lines(&[0, -330, -950]);
        assert!((0..1000u64).all(|k| above.choose(&blunder, &middlegame, k) == 0));
        let fools = pos("rnbqkbnr/pppp1ppp/8/4p3/8/5P2/PPPPP1PP/RNBQKBNR w KQkq - 0 2");
        let mut fools_lines = lines(&[20, 15]);
        fools_lines[0].pv = vec![shakmaty::Move::Normal {
            role: shakmaty::Role::Pawn,
            from: shakmaty::Square::G2,
            capture: None,
            to: shakmaty::Square::G4,
            promotion: None,
        }];
        fools_lines[1].pv = vec![shakmaty::Move::Normal {
            role: shakmaty::Role::Pawn,
            from: shakmaty::Square::E2,
            capture: None,
            to: shakmaty::Square::E4,
            promotion: None,
        }];
        assert!((0..1000u64).all(|k| above.choose(&fools_lines, &fools, k) == 1));
        // The same position in the same game: the same choice.
        assert_eq!(
            low.choose(&close, &middlegame, 99),
            low.choose(&close, &middlegame, 99)
        );
        // A mate to play, a lone king, or the top level: always the best line.
        let mating = lines(&[MATE - 5, 20, 10]);
        assert!((0..1000u64).all(|k| low.choose(&mating, &middlegame, k) == 0));
        assert!((0..1000u64).all(|k| low.choose(&close, &pos(KRK), k) == 0));
        let top = low.at_setting(SETTING_MAX);
        assert!((0..1000u64).all(|k| top.choose(&close, &middlegame, k) == 0));
    }
}
