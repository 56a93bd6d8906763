//! The command line's tools besides UCI: none of the engine's modules depend on them.

pub mod bench;
pub mod genfens;
pub mod perft;
pub mod pgn;
pub mod selfplay;
pub mod tt_bench;
