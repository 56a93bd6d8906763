//! Turning `go` limits into a plan: a soft deadline (do not start another iteration after it)
//! and a hard deadline (stop at once), both already short of the clock by the move overhead.

use crate::params;
use shakmaty::Color;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// What `go` asked for. Absent fields impose no limit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub wtime: Option<u64>,
    pub btime: Option<u64>,
    pub winc: Option<u64>,
    pub binc: Option<u64>,
    pub movestogo: Option<u64>,
    pub movetime: Option<u64>,
    pub depth: Option<i32>,
    pub nodes: Option<u64>,
    /// No new iteration once this many nodes are searched (data generation; not a UCI
    /// parameter).
    pub soft_nodes: Option<u64>,
    pub mate: Option<i32>,
    pub infinite: bool,
    pub ponder: bool,
}

/// What the search says after each iteration, for the soft deadline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IterationReport {
    /// Iterations in a row that kept the same best move (0: it just changed).
    pub stable_iterations: usize,
    /// How far the best score fell from the iteration before (negative: it rose).
    pub score_drop: i32,
    /// The share of the root's nodes spent under the best move, if it was searched.
    pub best_node_share: Option<f64>,
}

/// The soft deadline's scale by how many iterations the best move has held.
const STABILITY_SCALE: [f64; 5] = [1.8, 1.3, 1.05, 0.9, 0.75];

impl IterationReport {
    /// How much of the soft deadline this search deserves: more while the best move is
    /// unsettled or the score falls, and while the best move has not yet shown it dominates
    /// the others by its nodes (`tm_node_base` - `tm_node_slope` x share, at least a half).
    pub fn soft_scale(&self) -> f64 {
        let stability = STABILITY_SCALE[self.stable_iterations.min(STABILITY_SCALE.len() - 1)];
        let drop = 1.0 + f64::from(self.score_drop.clamp(0, 100)) / 200.0;
        let share = self.best_node_share.map_or(1.0, |share| {
            let base = f64::from(params::tm_node_base()) / 100.0;
            let slope = f64::from(params::tm_node_slope()) / 100.0;
            (base - slope * share).max(0.5)
        });
        stability * drop * share
    }
}

/// Deadlines count from `start`, or from `ponderhit` when the search began as a ponder search:
/// while pondering there is no deadline at all.
#[derive(Debug)]
pub struct TimePlan {
    pub start: Instant,
    pub soft: Option<Duration>,
    pub hard: Option<Duration>,
    /// Whether the soft deadline may move with the search's confidence (a clock, not a fixed
    /// `movetime`).
    flexible: bool,
    pondering: AtomicBool,
    /// Microseconds from `start` to the `ponderhit` that started the clock.
    clock_offset_us: AtomicU64,
}

impl TimePlan {
    /// Plans the search of the side `us`; `overhead_ms` is kept back for the GUI and the pipe.
    pub fn new(limits: &Limits, us: Color, overhead_ms: u64, start: Instant) -> TimePlan {
        let ms = Duration::from_millis;
        let mut plan = TimePlan {
            start,
            soft: None,
            hard: None,
            flexible: limits.movetime.is_none(),
            pondering: AtomicBool::new(limits.ponder),
            clock_offset_us: AtomicU64::new(0),
        };
        if limits.infinite {
            return plan;
        }
        if let Some(movetime) = limits.movetime {
            let budget = movetime.saturating_sub(overhead_ms).max(1);
            plan.soft = Some(ms(budget));
            plan.hard = Some(ms(budget));
        }
        let (time, inc) = match us {
            Color::White => (limits.wtime, limits.winc.unwrap_or(0)),
            Color::Black => (limits.btime, limits.binc.unwrap_or(0)),
        };
        if let Some(time) = time {
            // What may be spent this move, never the last of the clock.
            let available = time.saturating_sub(overhead_ms).max(1);
            let moves_left = limits.movestogo.unwrap_or(25).clamp(1, 50);
            let share = (available / moves_left).saturating_add(inc / 4 * 3);
            let cap = if moves_left == 1 {
                available / 10 * 7
            } else {
                available / 2
            };
            let soft_percent = u64::from(params::tm_soft_percent().unsigned_abs());
            let soft = (share.saturating_mul(soft_percent) / 100).min(cap).max(1);
            let hard = share.saturating_mul(3).min(cap).max(soft);
            plan.soft = Some(plan.soft.map_or(ms(soft), |s| s.min(ms(soft))));
            plan.hard = Some(plan.hard.map_or(ms(hard), |h| h.min(ms(hard))));
        }
        plan
    }

    /// The GUI ponders: time spent pondering comes back from the opponent's clock, so aim a
    /// quarter higher (never past the hard deadline).
    pub fn expect_pondering(&mut self) {
        self.soft = self
            .soft
            .map(|soft| (soft * 5 / 4).min(self.hard.unwrap_or(soft)));
    }

    /// Time since `go` (what `info time` reports).
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Time on our clock at `now`: since `go`, or since `ponderhit` for a ponder search.
    fn clock_at(&self, now: Instant) -> Duration {
        let offset = Duration::from_micros(self.clock_offset_us.load(Relaxed));
        now.saturating_duration_since(self.start)
            .saturating_sub(offset)
    }

    pub fn is_pondering(&self) -> bool {
        self.pondering.load(Relaxed)
    }

    /// The opponent played the expected move: our clock runs from now.
    pub fn ponderhit(&self) {
        self.ponderhit_at(Instant::now());
    }

    fn ponderhit_at(&self, now: Instant) {
        let offset = now.saturating_duration_since(self.start).as_micros() as u64;
        self.clock_offset_us.store(offset, Relaxed);
        self.pondering.store(false, Relaxed);
    }

    /// Whether a clock-based budget applies (not depth, nodes, infinite or pondering).
    pub fn has_deadline(&self) -> bool {
        self.hard.is_some() && !self.is_pondering()
    }

    pub fn past_hard(&self) -> bool {
        self.past_hard_at(Instant::now())
    }

    fn past_hard_at(&self, now: Instant) -> bool {
        !self.is_pondering() && self.hard.is_some_and(|hard| self.clock_at(now) >= hard)
    }

    /// Whether the search should start no new iteration after one that ended as `report`
    /// says: the clock has passed the soft deadline scaled by `report.soft_scale()`.
    pub fn past_soft_after(&self, report: &IterationReport) -> bool {
        self.past_scaled_soft(report.soft_scale())
    }

    /// Whether the clock has passed the soft deadline times `scale` (never beyond the hard
    /// one); a fixed `movetime` ignores `scale`.
    pub fn past_scaled_soft(&self, scale: f64) -> bool {
        self.past_scaled_soft_at(scale, Instant::now())
    }

    fn past_scaled_soft_at(&self, scale: f64, now: Instant) -> bool {
        let Some(soft) = self.soft else {
            return false;
        };
        let soft = if self.flexible {
            let scaled = soft.mul_f64(scale.max(0.0));
            self.hard.map_or(scaled, |hard| scaled.min(hard))
        } else {
            soft
        };
        !self.is_pondering() && self.clock_at(now) >= soft
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unsettled_or_falling_search_earns_more_of_the_soft_deadline() {
        let report = |stable_iterations, score_drop| IterationReport {
            stable_iterations,
            score_drop,
            best_node_share: None,
        };
        assert_eq!(report(0, 0).soft_scale(), 1.8);
        assert_eq!(report(4, 0).soft_scale(), 0.75);
        assert_eq!(
            report(40, -30).soft_scale(),
            0.75,
            "held long, score rising"
        );
        assert_eq!(report(4, 100).soft_scale(), 0.75 * 1.5);
        assert_eq!(
            report(4, 900).soft_scale(),
            0.75 * 1.5,
            "a drop counts up to 100 cp"
        );
    }

    #[test]
    fn a_dominant_best_move_shortens_the_think_and_a_contested_one_stretches_it() {
        let scale = |share| {
            IterationReport {
                stable_iterations: 4,
                score_drop: 0,
                best_node_share: Some(share),
            }
            .soft_scale()
                / 0.75
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(
            close(scale(0.8), 1.0),
            "a typical share leaves the deadline"
        );
        assert!(close(scale(1.0), 0.75), "all nodes under one move");
        assert!(close(scale(0.2), 1.75), "a contested root");
        assert!(scale(0.0) <= 2.0 && scale(0.99) >= 0.5);
    }

    fn plan(limits: Limits) -> TimePlan {
        TimePlan::new(&limits, Color::White, 50, Instant::now())
    }

    /// White's plan without overhead, as if `go` had arrived `ago` before now.
    /// A plan whose search started at `start`; the tests read its clock at instants of their
    /// own, so a slow or loaded machine cannot change what they see.
    fn plan_at(limits: Limits, start: Instant) -> TimePlan {
        TimePlan::new(&limits, Color::White, 0, start)
    }

    #[test]
    fn movetime_keeps_the_overhead() {
        let p = plan(Limits {
            movetime: Some(1000),
            ..Limits::default()
        });
        assert_eq!(p.hard, Some(Duration::from_millis(950)));
        assert_eq!(p.soft, p.hard);
    }

    #[test]
    fn clock_is_never_spent_whole() {
        for (time, inc, mtg) in [
            (10, 0, None),
            (60, 10, None),
            (1000, 100, Some(1)),
            (100, 5000, None),
            (300_000, 0, Some(40)),
        ] {
            let p = plan(Limits {
                wtime: Some(time),
                winc: Some(inc),
                movestogo: mtg,
                ..Limits::default()
            });
            let hard = p.hard.unwrap().as_millis() as u64;
            let soft = p.soft.unwrap().as_millis() as u64;
            assert!(soft <= hard, "{time} {inc}");
            assert!(
                hard <= time.saturating_sub(50).max(1),
                "{time}+{inc}: hard {hard}"
            );
        }
    }

    #[test]
    fn ponder_has_no_deadline_until_ponderhit() {
        let start = Instant::now();
        let at = |ms| start + Duration::from_millis(ms);
        let p = plan_at(
            Limits {
                ponder: true,
                movetime: Some(50),
                ..Limits::default()
            },
            start,
        );
        assert!(!p.past_hard_at(at(5000)) && !p.past_scaled_soft_at(1.0, at(5000)));
        p.ponderhit_at(at(5000));
        assert!(
            !p.past_hard_at(at(5040)),
            "the clock starts at ponderhit, not at go"
        );
        assert!(p.past_hard_at(at(5050)));
    }

    #[test]
    fn absurd_clock_values_do_not_overflow() {
        let p = plan(Limits {
            wtime: Some(u64::MAX),
            winc: Some(u64::MAX),
            movestogo: Some(1),
            ..Limits::default()
        });
        assert!(p.soft.unwrap() <= p.hard.unwrap());
    }

    #[test]
    fn scaled_soft_deadline_moves_with_a_clock_but_not_with_movetime() {
        let start = Instant::now();
        let now = start + Duration::from_millis(300);
        let clock = plan_at(
            Limits {
                wtime: Some(10_000),
                ..Limits::default()
            },
            start,
        );
        // 10 s over 25 moves: soft 240 ms, hard 1200 ms; 300 ms have passed.
        assert!(clock.past_scaled_soft_at(1.0, now));
        assert!(!clock.past_scaled_soft_at(1.5, now));
        assert!(clock.past_scaled_soft_at(0.5, now));
        let movetime = plan_at(
            Limits {
                movetime: Some(500),
                ..Limits::default()
            },
            start,
        );
        assert!(
            !movetime.past_scaled_soft_at(0.5, now),
            "movetime is spent whole"
        );
    }

    #[test]
    fn infinite_and_depth_have_no_deadline() {
        assert!(plan(Limits {
            infinite: true,
            wtime: Some(10),
            ..Limits::default()
        })
        .hard
        .is_none());
        assert!(plan(Limits {
            depth: Some(5),
            ..Limits::default()
        })
        .hard
        .is_none());
    }
}
