//! `ferrite tt-bench`: the table alone, with 4 KiB pages and with 2 MiB pages side by side.
//! Every figure is the median of several rounds measured in this one run.

use crate::rng::mix;
use crate::tt::memory::{clear_threads, AllocError, PagePolicy};
use crate::tt::{Record, Tt};
use crate::types::Bound;
use shakmaty::{fen::Fen, CastlingMode, Chess, Position};
use std::hint::black_box;
use std::time::{Duration, Instant};

const ROUNDS: usize = 5;
const CHAIN: usize = 400_000;
const INDEPENDENT: usize = 1_000_000;
/// Default unrelated work between prefetch and probe, as a search's move generation would be.
pub const DEFAULT_WORK_NS: u64 = 200;
const WORK_FEN: &str = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 0 8";

/// Keys whose buckets are known without a division: with `step = ceil(2^64 / n)`, the key
/// `bucket * step + slot` (slot 0..4) lands in `bucket` of a table with `n` buckets.
#[derive(Clone, Copy)]
struct KeySpace {
    n: usize,
    step: u64,
}

impl KeySpace {
    fn new(n: usize) -> KeySpace {
        let step = (u64::MAX / n as u64).wrapping_add(1);
        KeySpace { n, step }
    }
    fn key(self, bucket: usize, slot: u64) -> u64 {
        bucket as u64 * self.step + slot
    }
    /// A stored key picked by the random word `r`.
    fn random(self, r: u64) -> u64 {
        self.key(((r as u128 * self.n as u128) >> 64) as usize, r & 3)
    }
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

/// Writes one entry into every slot, sequentially, so probes of `KeySpace::random` all hit.
fn fill(tt: &Tt, space: KeySpace) {
    for bucket in 0..space.n {
        for slot in 0..4 {
            let key = space.key(bucket, slot);
            tt.store(&Record {
                key,
                ply: 0,
                mv: 1,
                score: 0,
                raw_eval: (key >> 40) as i32 & 0x3FF,
                depth: 5,
                bound: Bound::Exact,
            });
        }
    }
}

struct Work {
    pos: Chess,
    reps: usize,
}

impl Work {
    fn calibrate(target_ns: u64) -> Work {
        let pos: Chess = WORK_FEN
            .parse::<Fen>()
            .expect("valid FEN")
            .into_position(CastlingMode::Standard)
            .expect("legal position");
        let mut work = Work { pos, reps: 1 };
        let calls = 200_000;
        let (_, t) = timed(|| (0..calls).map(|_| work.run()).sum::<u64>());
        let per_call = t.as_nanos() as f64 / calls as f64;
        work.reps = (target_ns as f64 / per_call).round().max(1.0) as usize;
        work
    }
    fn run(&self) -> u64 {
        (0..self.reps)
            .map(|_| black_box(&self.pos).legal_moves().len() as u64)
            .sum()
    }
}

/// One page size's figures, in nanoseconds except where named.
struct Figures {
    create_ms: f64,
    fault_ms: f64,
    clear_1_ms: f64,
    clear_n_ms: f64,
    huge_share: Option<f64>,
    dependent_ns: f64,
    work_ns: f64,
    stall_without_ns: f64,
    stall_with_ns: f64,
    probe_ns: f64,
    store_ns: f64,
}

fn measure(
    mib: usize,
    threads: usize,
    policy: PagePolicy,
    work: &Work,
) -> Result<Figures, AllocError> {
    let mut create = Vec::new();
    for _ in 0..ROUNDS {
        let (tt, t) = timed(|| Tt::with_policy(mib, policy));
        tt?;
        create.push(t.as_secs_f64() * 1e3);
    }
    let (tt, _) = timed(|| Tt::with_policy(mib, policy));
    let mut tt = tt?;
    let space = KeySpace::new(tt.entries() / 4);
    // The first clear of a fresh mapping is what faults every page in.
    let (_, fault) = timed(|| tt.clear(1));

    let (mut clear_1, mut clear_n) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS.min(3) {
        fill(&tt, space);
        clear_1.push(timed(|| tt.clear(1)).1.as_secs_f64() * 1e3);
        fill(&tt, space);
        clear_n.push(timed(|| tt.clear(threads)).1.as_secs_f64() * 1e3);
    }
    fill(&tt, space);
    let huge_share = tt
        .huge_page_bytes()
        .map(|b| b as f64 / (tt.entries() * 16) as f64);

    let per = |d: Duration, count: usize| d.as_nanos() as f64 / count as f64;
    let mut dependent = Vec::new();
    let mut work_only = Vec::new();
    let mut without = Vec::new();
    let mut with = Vec::new();
    let mut probe = Vec::new();
    let mut store = Vec::new();
    let keys: Vec<u64> = (0..INDEPENDENT as u64)
        .map(|i| space.random(mix(i ^ 0xA5A5)))
        .collect();
    for round in 0..ROUNDS as u64 {
        // A descent: each probe's key comes from the previous probe's result.
        let (_, t) = timed(|| {
            let mut r = round;
            for _ in 0..CHAIN {
                let eval = tt.probe(space.random(mix(r)), 0).map_or(0, |h| h.eval);
                r = r.wrapping_add(eval as u64 + 1);
            }
            black_box(r)
        });
        dependent.push(per(t, CHAIN));

        // The search pattern: child key known, (prefetch,) move generation, then probe.
        let chain = |use_prefetch: bool, do_probe: bool| {
            let mut r = round;
            for _ in 0..CHAIN / 4 {
                let key = space.random(mix(r));
                if use_prefetch {
                    tt.prefetch(key);
                }
                let moves = work.run();
                let eval = if do_probe {
                    tt.probe(key, 0).map_or(0, |h| h.eval)
                } else {
                    0
                };
                r = r.wrapping_add(eval as u64 + moves);
            }
            black_box(r)
        };
        work_only.push(per(timed(|| chain(false, false)).1, CHAIN / 4));
        without.push(per(timed(|| chain(false, true)).1, CHAIN / 4));
        with.push(per(timed(|| chain(true, true)).1, CHAIN / 4));

        let (_, t) = timed(|| keys.iter().filter(|&&k| tt.probe(k, 0).is_some()).count());
        probe.push(per(t, keys.len()));
        let (_, t) = timed(|| {
            for &k in &keys {
                tt.store(&Record {
                    key: k,
                    ply: 0,
                    mv: 2,
                    score: 0,
                    raw_eval: 7,
                    depth: 6,
                    bound: Bound::Lower,
                });
            }
        });
        store.push(per(t, keys.len()));
    }
    let work_ns = median(work_only);
    Ok(Figures {
        create_ms: median(create),
        fault_ms: fault.as_secs_f64() * 1e3,
        clear_1_ms: median(clear_1),
        clear_n_ms: median(clear_n),
        huge_share,
        dependent_ns: median(dependent),
        work_ns,
        stall_without_ns: (median(without) - work_ns).max(0.0),
        stall_with_ns: (median(with) - work_ns).max(0.0),
        probe_ns: median(probe),
        store_ns: median(store),
    })
}

/// `ferrite tt-bench`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Table size in MiB.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    mib: u64,
    /// Threads for the clear (at most one per core is used).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: u64,
    /// Nanoseconds of move generation between a prefetch and its probe.
    #[arg(long, default_value_t = DEFAULT_WORK_NS, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    work_ns: u64,
}

/// `ferrite tt-bench`: prints the report.
pub fn command(args: Args) -> anyhow::Result<()> {
    print!(
        "{}",
        run(args.mib as usize, args.threads as usize, args.work_ns)?
    );
    Ok(())
}

/// Runs the benchmark for a table of `mib` MiB and returns the printed report.
/// `work_ns` is the work done between a prefetch and its probe (about 200 ns in a search).
pub fn run(mib: usize, threads: usize, work_ns: u64) -> Result<String, AllocError> {
    let threads = clear_threads(threads);
    let work = Work::calibrate(work_ns);
    let small = measure(mib, threads, PagePolicy::Small, &work)?;
    let huge = measure(mib, threads, PagePolicy::Huge, &work)?;

    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line(format!(
        "tt-bench: {mib} MiB, {} entries, medians of {ROUNDS} rounds, clear with {threads} thread(s)",
        mib << 16
    ));
    line(format!(
        "{:<44} {:>12} {:>12} {:>8}",
        "", "4 KiB pages", "2 MiB pages", "ratio"
    ));
    let share = |f: &Figures| {
        f.huge_share
            .map_or("n/a".into(), |s| format!("{:.0}%", s * 100.0))
    };
    line(format!(
        "{:<44} {:>12} {:>12}",
        "AnonHugePages share of the table",
        share(&small),
        share(&huge)
    ));
    let rows: [(&str, f64, f64); 10] = [
        ("create table (ms)", small.create_ms, huge.create_ms),
        (
            "fault in: first clear, 1 thread (ms)",
            small.fault_ms,
            huge.fault_ms,
        ),
        (
            "clear filled table, 1 thread (ms)",
            small.clear_1_ms,
            huge.clear_1_ms,
        ),
        (
            "clear filled table, N threads (ms)",
            small.clear_n_ms,
            huge.clear_n_ms,
        ),
        (
            "dependent probe chain (ns/probe)",
            small.dependent_ns,
            huge.dependent_ns,
        ),
        (
            "work alone between probes (ns)",
            small.work_ns,
            huge.work_ns,
        ),
        (
            "exposed stall, no prefetch (ns/probe)",
            small.stall_without_ns,
            huge.stall_without_ns,
        ),
        (
            "exposed stall, prefetch (ns/probe)",
            small.stall_with_ns,
            huge.stall_with_ns,
        ),
        (
            "independent probes (ns/probe)",
            small.probe_ns,
            huge.probe_ns,
        ),
        (
            "independent stores (ns/store)",
            small.store_ns,
            huge.store_ns,
        ),
    ];
    for (name, s, h) in rows {
        let ratio = if h > 0.0 {
            format!("{:.2}x", s / h)
        } else {
            "-".into()
        };
        line(format!("{name:<44} {s:>12.2} {h:>12.2} {ratio:>8}"));
    }
    line(format!(
        "{:<44} {:>11.0}% {:>11.0}%",
        "stall hidden by prefetch",
        hidden(&small),
        hidden(&huge)
    ));
    Ok(out)
}

fn hidden(f: &Figures) -> f64 {
    if f.stall_without_ns > 0.0 {
        100.0 * (1.0 - f.stall_with_ns / f.stall_without_ns)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_space_keys_land_in_their_bucket() {
        for n in [1, 7, 1000, 16_384, 1 << 26, (1 << 26) + 12_345] {
            let space = KeySpace::new(n);
            for bucket in [0, n / 3, n / 2, n - 1] {
                for slot in 0..4 {
                    let index = ((space.key(bucket, slot) as u128 * n as u128) >> 64) as usize;
                    assert_eq!(index, bucket, "n {n} bucket {bucket} slot {slot}");
                }
            }
        }
    }
}
