//! Ferrite: a UCI chess engine built around a lockless, bucketed transposition table.

pub mod tt;
pub mod tt_bench;
