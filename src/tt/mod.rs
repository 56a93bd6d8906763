//! The transposition table: 64-byte buckets of four `(key ^ data, data)` entries,
//! multiply-shift indexing, generation aging, depth-and-age replacement, node-relative mate
//! scores and a bucket prefetch (docs/table.md says why each).
//!
//! Threads share one `&Tt` and read and write it without locks. A writer stores two independent
//! words; a reader that sees halves of two different writes recomputes a key that does not
//! match and treats the entry as a miss (Hyatt and Mann, ICGA Journal 25(1), 2002). A wrong
//! entry for the right key is therefore as rare as a 64-bit key collision, and the search still
//! checks every table move for legality before playing it.

pub mod memory;
pub mod persist;
mod stats;

pub use stats::{StoreOutcome, TtStats};

use crate::types::{score_from_tt, score_to_tt};
use crate::types::{Bound, DECISIVE};
use memory::{AllocError, PagePolicy, TableMemory};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The table's size in MiB unless told otherwise: UCI's `Hash` default, and the size bench
/// and datagen search with.
pub const DEFAULT_MIB: usize = 16;
/// Stored depth is depth + 8, so quiescence depths down to -8 fit in a u8.
const DEPTH_OFFSET: i32 = 8;
const GENERATION_MASK: u8 = 63;
const ENTRIES_PER_BUCKET: usize = 4;
/// Entries sampled by `hashfull`: the first 250 buckets, as UCI's permille wants 1000.
const HASHFULL_SAMPLE: usize = 1000;

/// The bound of a data word's two bits.
fn bound_from_bits(bits: u64) -> Bound {
    match bits & 3 {
        1 => Bound::Upper,
        2 => Bound::Lower,
        3 => Bound::Exact,
        _ => Bound::None,
    }
}

/// One table write: what a search of the position `key`, `ply` plies from the root, found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub key: u64,
    pub ply: i32,
    /// The best move (0: none; the entry's old move is kept).
    pub mv: u16,
    /// The search's score, relative to the root.
    pub score: i32,
    /// The static evaluation before any correction.
    pub raw_eval: i32,
    pub depth: i32,
    pub bound: Bound,
}

/// What the table knows about a position. `score` is relative to the root (ply-adjusted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    pub mv: u16,
    pub score: i32,
    pub eval: i32,
    pub depth: i32,
    pub bound: Bound,
}

impl Hit {
    /// Whether this entry alone decides the node searched to `depth` with window (alpha, beta).
    pub fn cuts_off(&self, depth: i32, alpha: i32, beta: i32) -> bool {
        self.depth >= depth
            && match self.bound {
                Bound::Exact => true,
                Bound::Lower => self.score >= beta,
                Bound::Upper => self.score <= alpha,
                Bound::None => false,
            }
    }

    /// `eval` where the entry's bound says no more than it, else the entry's score: a lower
    /// bound above it, an upper bound below it, an exact score. A decisive score says nothing
    /// of the evaluation and leaves it as it is.
    pub fn refine(&self, eval: i32) -> i32 {
        if self.score.abs() >= DECISIVE {
            return eval;
        }
        match self.bound {
            Bound::Lower if self.score > eval => self.score,
            Bound::Upper if self.score < eval => self.score,
            Bound::Exact => self.score,
            _ => eval,
        }
    }
}

/// One entry's data word:
/// `| gen 6 | bound 2 | depth 8 | eval 16 | score 16 | move 16 |` from bit 63 down to bit 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Data(u64);

impl Data {
    fn pack(mv: u16, score: i32, eval: i32, depth: i32, bound: Bound, generation: u8) -> Data {
        Data(
            mv as u64
                | (score as i16 as u16 as u64) << 16
                | (eval as i16 as u16 as u64) << 32
                | ((depth + DEPTH_OFFSET).clamp(0, 255) as u64) << 48
                | (bound as u64) << 56
                | ((generation & GENERATION_MASK) as u64) << 58,
        )
    }
    fn mv(self) -> u16 {
        self.0 as u16
    }
    fn score(self) -> i32 {
        (self.0 >> 16) as u16 as i16 as i32
    }
    fn eval(self) -> i32 {
        (self.0 >> 32) as u16 as i16 as i32
    }
    fn depth(self) -> i32 {
        (self.0 >> 48 & 0xFF) as i32 - DEPTH_OFFSET
    }
    fn bound(self) -> Bound {
        bound_from_bits(self.0 >> 56)
    }
    fn generation(self) -> u8 {
        (self.0 >> 58) as u8
    }
    fn is_empty(self) -> bool {
        self.0 == 0
    }
}

#[repr(C, align(64))]
struct Bucket([AtomicU64; 2 * ENTRIES_PER_BUCKET]);

impl Bucket {
    #[inline]
    fn entry(&self, i: usize) -> (u64, Data) {
        let data = self.0[2 * i + 1].load(Relaxed);
        (self.0[2 * i].load(Relaxed) ^ data, Data(data))
    }
    #[inline]
    fn write(&self, i: usize, key: u64, data: Data) {
        self.0[2 * i].store(key ^ data.0, Relaxed);
        self.0[2 * i + 1].store(data.0, Relaxed);
    }
}

/// How many generations ago `data` was written, with the 6-bit counter's wrap-around.
fn age(generation: u8, data: Data) -> i32 {
    (generation.wrapping_sub(data.generation()) & GENERATION_MASK) as i32
}

/// The shared table. Readers and writers take `&Tt`; sizing, clearing and starting a new
/// generation take `&mut Tt`, so they cannot race a search.
pub struct Tt {
    memory: TableMemory,
    n_buckets: usize,
    generation: u8,
    /// Whether the contents came from a file (`Load Hash`) and have not been cleared since.
    loaded: bool,
}

impl Tt {
    /// A table of `mib` MiB (at least one bucket) backed by huge pages where granted.
    pub fn new(mib: usize) -> Result<Tt, AllocError> {
        Tt::with_policy(mib, PagePolicy::Huge)
    }

    pub fn with_policy(mib: usize, policy: PagePolicy) -> Result<Tt, AllocError> {
        Tt::with_buckets(mib_to_buckets(mib), policy)
    }

    fn with_buckets(n_buckets: usize, policy: PagePolicy) -> Result<Tt, AllocError> {
        let n_buckets = n_buckets.max(1);
        let bytes = n_buckets.saturating_mul(size_of::<Bucket>());
        let memory = TableMemory::new(bytes, policy)?;
        Ok(Tt {
            memory,
            n_buckets,
            generation: 0,
            loaded: false,
        })
    }

    fn buckets(&self) -> &[Bucket] {
        let ptr = self.memory.as_ptr() as *const Bucket;
        debug_assert_eq!(ptr as usize % align_of::<Bucket>(), 0);
        // SAFETY: the memory is 2 MiB-aligned (so 64-byte aligned), at least
        // n_buckets * 64 bytes long, zero-initialised by the OS (all-zero AtomicU64s are valid),
        // and lives as long as &self. Only atomic operations touch it while it is shared;
        // `clear` writes plain bytes through `&mut self`, which excludes every reader.
        unsafe { std::slice::from_raw_parts(ptr, self.n_buckets) }
    }

    /// `(key * n) >> 64`: the high bits of the key pick the bucket, for any table size.
    #[inline]
    fn bucket_index(&self, key: u64) -> usize {
        ((key as u128 * self.n_buckets as u128) >> 64) as usize
    }

    #[inline]
    fn bucket(&self, key: u64) -> &Bucket {
        &self.buckets()[self.bucket_index(key)]
    }

    pub fn mib(&self) -> usize {
        (self.n_buckets * size_of::<Bucket>()) >> 20
    }

    pub fn entries(&self) -> usize {
        self.n_buckets * ENTRIES_PER_BUCKET
    }

    pub fn huge_page_bytes(&self) -> Option<usize> {
        self.memory.huge_page_bytes()
    }

    /// Starts a new search (a new move): entries written before now age by one generation.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) & GENERATION_MASK;
    }

    #[cfg(test)]
    pub fn generation(&self) -> u8 {
        self.generation
    }

    /// The stored facts for `key`, with mate scores made relative to the root from `ply`.
    #[inline]
    pub fn probe(&self, key: u64, ply: i32) -> Option<Hit> {
        let bucket = self.bucket(key);
        (0..ENTRIES_PER_BUCKET).find_map(|i| {
            let (entry_key, data) = bucket.entry(i);
            (entry_key == key && !data.is_empty()).then(|| Hit {
                mv: data.mv(),
                score: score_from_tt(data.score(), ply),
                eval: data.eval(),
                depth: data.depth(),
                bound: data.bound(),
            })
        })
    }

    /// Records a searched node. A same-key entry is overwritten unless it is fresh, more than
    /// four plies deeper and the new result is not exact; otherwise the entry with the lowest
    /// `depth - 8 * age` gives way (empty entries first, as their depth counts as -8).
    #[inline]
    pub fn store(&self, record: &Record) -> StoreOutcome {
        let Record {
            key,
            ply,
            mv,
            score,
            raw_eval,
            depth,
            bound,
        } = *record;
        let bucket = self.bucket(key);
        let mut mv = mv;
        let mut slot = 0;
        let mut worst = i32::MAX;
        let mut outcome = StoreOutcome::Replaced;
        for i in 0..ENTRIES_PER_BUCKET {
            let (entry_key, old) = bucket.entry(i);
            if entry_key == key && !old.is_empty() {
                if mv == 0 {
                    mv = old.mv();
                }
                let fresh = old.generation() == self.generation;
                if fresh && bound != Bound::Exact && depth + 4 < old.depth() {
                    return StoreOutcome::Refused;
                }
                slot = i;
                outcome = StoreOutcome::SameKey;
                break;
            }
            let value = old.depth() - 8 * age(self.generation, old);
            if value < worst {
                worst = value;
                slot = i;
                outcome = if old.is_empty() {
                    StoreOutcome::Empty
                } else {
                    StoreOutcome::Replaced
                };
            }
        }
        let data = Data::pack(
            mv,
            score_to_tt(score, ply),
            raw_eval,
            depth,
            bound,
            self.generation,
        );
        bucket.write(slot, key, data);
        outcome
    }

    /// Starts loading the bucket of `key` into the cache, so that a probe after some other
    /// work (making the move, generating replies) finds it there.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        let ptr = self.bucket(key) as *const Bucket;
        prefetch_line(ptr as *const u8);
    }

    /// UCI `hashfull`: permille of the first 1000 entries written in the current generation.
    pub fn hashfull(&self) -> usize {
        let sample_buckets = HASHFULL_SAMPLE
            .div_ceil(ENTRIES_PER_BUCKET)
            .min(self.n_buckets);
        let used = self.buckets()[..sample_buckets]
            .iter()
            .flat_map(|bucket| (0..ENTRIES_PER_BUCKET).map(move |i| bucket.entry(i).1))
            .filter(|data| !data.is_empty() && data.generation() == self.generation)
            .count();
        used * 1000 / (sample_buckets * ENTRIES_PER_BUCKET)
    }

    /// Empties the table with up to `threads` threads (one per core at most).
    pub fn clear(&mut self, threads: usize) {
        self.memory.clear(threads);
        self.generation = 0;
        self.loaded = false;
    }

    /// Whether the table holds an analysis loaded from a file (`Load Hash`) and has not been
    /// cleared or resized since.
    pub fn holds_loaded_analysis(&self) -> bool {
        self.loaded
    }

    /// Replaces the table with an empty one of `mib` MiB. The old mapping is released first so
    /// memory use never doubles; if the new size cannot be had, a table of the old size is
    /// rebuilt and the error returned.
    pub fn resize(&mut self, mib: usize) -> Result<(), AllocError> {
        self.resize_buckets(mib_to_buckets(mib))
    }

    fn resize_buckets(&mut self, n_buckets: usize) -> Result<(), AllocError> {
        let old_buckets = self.n_buckets;
        // Swap in a one-bucket table so the old mapping is dropped before the new one is made.
        self.memory = TableMemory::new(size_of::<Bucket>(), PagePolicy::Small)?;
        self.n_buckets = 1;
        self.generation = 0;
        match Tt::with_buckets(n_buckets, PagePolicy::Huge) {
            Ok(table) => {
                *self = table;
                Ok(())
            }
            Err(err) => {
                *self = Tt::with_buckets(old_buckets, PagePolicy::Huge)?;
                Err(err)
            }
        }
    }
}

fn mib_to_buckets(mib: usize) -> usize {
    mib.saturating_mul(1 << 20) / size_of::<Bucket>()
}

#[inline(always)]
fn prefetch_line(ptr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is only a hint; it never faults, even on an invalid address, and
        // SSE (which provides it) is part of the x86-64 baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(ptr as *const i8) };
    }
    #[cfg(target_arch = "aarch64")]
    {
        // SAFETY: PRFM is a hint that never faults and touches no register but its operand.
        unsafe {
            std::arch::asm!("prfm pldl1keep, [{0}]", in(reg) ptr, options(nostack, preserves_flags, readonly))
        };
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = ptr;
}

#[cfg(test)]
mod tests;
