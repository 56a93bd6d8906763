//! Turning `go` limits into a plan: a soft deadline (do not start another iteration after it)
//! and a hard deadline (stop at once), both already short of the clock by the move overhead.

use shakmaty::Color;
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
    pub mate: Option<i32>,
    pub infinite: bool,
    pub ponder: bool,
}

#[derive(Clone, Debug)]
pub struct TimePlan {
    pub start: Instant,
    pub soft: Option<Duration>,
    pub hard: Option<Duration>,
}

impl TimePlan {
    /// Plans the search of the side `us`; `overhead_ms` is kept back for the GUI and the pipe.
    pub fn new(limits: &Limits, us: Color, overhead_ms: u64, start: Instant) -> TimePlan {
        let ms = Duration::from_millis;
        let mut plan = TimePlan {
            start,
            soft: None,
            hard: None,
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
            let share = available / moves_left + inc * 3 / 4;
            let cap = if moves_left == 1 {
                available * 7 / 10
            } else {
                available / 2
            };
            let soft = (share * 6 / 10).min(cap).max(1);
            let hard = (share * 3).min(cap).max(soft);
            plan.soft = Some(plan.soft.map_or(ms(soft), |s| s.min(ms(soft))));
            plan.hard = Some(plan.hard.map_or(ms(hard), |h| h.min(ms(hard))));
        }
        plan
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    pub fn past_hard(&self) -> bool {
        self.hard.is_some_and(|hard| self.elapsed() >= hard)
    }

    pub fn past_soft(&self) -> bool {
        self.soft.is_some_and(|soft| self.elapsed() >= soft)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(limits: Limits) -> TimePlan {
        TimePlan::new(&limits, Color::White, 50, Instant::now())
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
