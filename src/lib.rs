//! Ferrite: a UCI chess engine built around a lockless, bucketed transposition table.

pub mod bench;
pub mod board;
pub mod eval;
pub mod movepick;
pub mod perft;
pub mod search;
pub mod see;
pub mod threads;
pub mod time;
pub mod tt;
pub mod tt_bench;
pub mod tune;
pub mod uci;
pub mod weights;
