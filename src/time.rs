//! Turning `go` limits into a plan: a soft deadline (do not start another iteration after it)
//! and a hard deadline (stop at once), both already short of the clock by the move overhead.

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
            let soft = (share / 10 * 6).min(cap).max(1);
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

    /// Time on our clock: since `go`, or since `ponderhit` for a ponder search.
    fn clock(&self) -> Duration {
        let offset = Duration::from_micros(self.clock_offset_us.load(Relaxed));
        self.elapsed().saturating_sub(offset)
    }

    pub fn is_pondering(&self) -> bool {
        self.pondering.load(Relaxed)
    }

    /// The opponent played the expected move: our clock runs from now.
    pub fn ponderhit(&self) {
        let offset = self.elapsed().as_micros() as u64;
        self.clock_offset_us.store(offset, Relaxed);
        self.pondering.store(false, Relaxed);
    }

    /// Whether a clock-based budget applies (not depth, nodes, infinite or pondering).
    pub fn has_deadline(&self) -> bool {
        self.hard.is_some() && !self.is_pondering()
    }

    pub fn past_hard(&self) -> bool {
        !self.is_pondering() && self.hard.is_some_and(|hard| self.clock() >= hard)
    }

    /// Whether the clock has passed the soft deadline times `scale` (never beyond the hard
    /// one). The search asks for more time while its best move is unsettled, less once it has
    /// held for several iterations; a fixed `movetime` ignores `scale`.
    pub fn past_scaled_soft(&self, scale: f64) -> bool {
        let Some(soft) = self.soft else {
            return false;
        };
        let soft = if self.flexible {
            let scaled = soft.mul_f64(scale.max(0.0));
            self.hard.map_or(scaled, |hard| scaled.min(hard))
        } else {
            soft
        };
        !self.is_pondering() && self.clock() >= soft
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(limits: Limits) -> TimePlan {
        TimePlan::new(&limits, Color::White, 50, Instant::now())
    }

    /// White's plan without overhead, as if `go` had arrived `ago` before now.
    fn plan_started(limits: Limits, ago: Duration) -> TimePlan {
        TimePlan::new(&limits, Color::White, 0, Instant::now() - ago)
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
        let p = plan_started(
            Limits {
                ponder: true,
                movetime: Some(50),
                ..Limits::default()
            },
            Duration::from_secs(5),
        );
        assert!(!p.past_hard() && !p.past_scaled_soft(1.0));
        p.ponderhit();
        assert!(!p.past_hard(), "the clock starts at ponderhit, not at go");
        std::thread::sleep(Duration::from_millis(60));
        assert!(p.past_hard());
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
        let ago = Duration::from_millis(300);
        let clock = plan_started(
            Limits {
                wtime: Some(10_000),
                ..Limits::default()
            },
            ago,
        );
        // 10 s over 25 moves: soft 240 ms, hard 1200 ms; 300 ms have passed.
        assert!(clock.past_scaled_soft(1.0));
        assert!(!clock.past_scaled_soft(1.5));
        assert!(clock.past_scaled_soft(0.5));
        let movetime = plan_started(
            Limits {
                movetime: Some(500),
                ..Limits::default()
            },
            ago,
        );
        assert!(!movetime.past_scaled_soft(0.5), "movetime is spent whole");
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
