//! Ferrite's lab: what makes and checks the engine's evaluation, apart from the engine a GUI
//! runs. `data` reads the training data (datagen's viriformat games and text lines), `train`
//! fits the network, `tune` fits the hand-crafted evaluation's weights (Texel's method), and
//! `from_pgn` turns games played elsewhere (fastchess, OpenBench's DATAGEN) into datagen's
//! format. The engine (`ferrite`) is a library here; nothing in it depends on the lab.

pub mod data;
pub mod datagen;
pub mod from_pgn;
pub mod train;
pub mod tune;
