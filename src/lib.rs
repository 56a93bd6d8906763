//! Ferrite: a UCI chess engine built around a lockless, bucketed transposition table.
//!
//! The engine, its floors from the ground up: `types` (scores, bounds, the 16-bit move),
//! `board` (position, key, repetitions), `eval` (static evaluation), `search`
//! (one thread's search and its move ordering), `threads` (the Lazy SMP pool and a search's
//! lifecycle), `time` (deadlines), `tt` (the shared table), `uci` (the protocol), `syzygy`
//! (endgame tablebases) and `wdl` (the win/draw/loss model of its output).
//! `tools` holds the engine's other commands (bench, perft, tt-bench, genfens, self-play);
//! `rng` is their small random generator, `error` shows an error with its causes. The lab
//! (data generation, the trainer, the tuner) is its own crate, `ferrite-lab` in `lab/`, built
//! on this library: nothing here depends on it.

/// The commit the engine is built from (`build.rs`), or "unknown" outside a git checkout.
pub const BUILD_COMMIT: &str = env!("FERRITE_COMMIT");

pub mod board;
pub mod error;
pub mod eval;
pub mod files;
pub mod params;
pub mod rng;
pub mod search;
pub mod syzygy;
pub mod threads;
pub mod time;
pub mod tools;
pub mod tt;
pub mod types;
pub mod uci;
pub mod wdl;
