//! The command line's tools besides UCI: none of the engine's modules depend on them.

pub mod bench;
pub mod data;
pub mod datagen;
pub mod from_pgn;
pub mod genfens;
pub mod perft;
pub mod pgn;
pub mod train;
pub mod tt_bench;
pub mod tune;
