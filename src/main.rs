use clap::{Parser, Subcommand};
use ferrite::board::Board;
use ferrite::tools::{bench, datagen, perft, train, tt_bench, tune};
use ferrite::uci;
use shakmaty::CastlingMode;
use std::process::ExitCode;

/// Ferrite, a UCI chess engine. Without a subcommand it speaks UCI on stdin/stdout.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Search every bench position to a fixed depth; prints the node count and nps.
    Bench {
        /// Search depth in plies.
        #[arg(default_value_t = bench::DEFAULT_DEPTH, value_parser = clap::value_parser!(i32).range(1..=64))]
        depth: i32,
        /// Search threads (the node count is deterministic only with 1).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1024))]
        threads: u64,
        /// Also print the transposition table's use (probes, hits, cutoffs, stores).
        #[arg(long)]
        tt_stats: bool,
        /// Evaluate with this network file, or `hce` for the hand-crafted evaluation (default:
        /// the built-in network).
        #[arg(long, value_name = "NET")]
        eval_file: Option<String>,
    },
    /// Count the leaf nodes of the legal move tree, per root move and in total.
    Perft {
        /// Depth in plies.
        #[arg(value_parser = clap::value_parser!(u32).range(0..=12))]
        depth: u32,
        /// Position to start from (default: the standard start position).
        #[arg(long)]
        fen: Option<String>,
    },
    /// Tune the evaluation weights on labelled positions (Texel's method).
    Tune {
        /// Lines of `FEN label`: a game result as [1.0]/[0.5]/[0.0] or 1-0/1/2-1/2/0-1, or an
        /// expected score from White's side such as [0.734].
        #[arg(long)]
        data: std::path::PathBuf,
        /// Gradient steps.
        #[arg(long, default_value_t = 500)]
        iterations: usize,
        /// Step size in centipawns.
        #[arg(long, default_value_t = 1.0)]
        rate: f64,
        /// Tune the piece values and piece-square tables too (780 numbers: give it millions of
        /// positions).
        #[arg(long)]
        tables: bool,
        /// Pull towards the starting weights: adds PULL x (change in cp)^2 per weight to the
        /// error (1e-8 keeps rarely seen weights near their start).
        #[arg(long, default_value_t = 0.0)]
        pull: f64,
        /// Positions kept out of the fit: their error is reported before and after, with the
        /// same K, to show whether the gain holds outside the sample.
        #[arg(long, value_name = "FILE")]
        holdout: Option<std::path::PathBuf>,
        /// Also write the tuned weights as Rust source to this file (`src/eval/weights.rs` is the
        /// engine's), with this origin note in its header.
        #[arg(long, value_name = "FILE")]
        rust: Option<std::path::PathBuf>,
        /// The origin note for `--rust`: where the data came from and how it was labelled.
        #[arg(long, default_value = "")]
        origin: String,
        /// Where the fit starts and what --pull pulls towards: the weights the engine plays
        /// with, or `neutral` (the usual piece values, every other weight 0).
        #[arg(long, default_value = "engine", value_parser = ["engine", "neutral"])]
        from: String,
        /// For `FEN | score | result | move` lines (datagen --export): the weight of the game
        /// result in the label; the rest is sigmoid(score / --score-scale).
        #[arg(long, default_value_t = 1.0)]
        wdl: f64,
        /// The sigmoid scale of the scores in centipawns (`ferrite datagen --check` fits it);
        /// needed when --wdl is below 1, and then also the scale of the fit's own sigmoid, so
        /// the evaluation learns the scores' centipawns.
        #[arg(long)]
        score_scale: Option<f64>,
    },
    /// Print the search parameters as OpenBench's SPSA input (name, int, value, min, max, step,
    /// learning rate); a build with `--features tune` takes each as a UCI option.
    Params,
    /// Play self-play games for training data, appended to a viriformat file game by game;
    /// or, with --check, count the games, positions and duplicate games of data files.
    Datagen {
        /// A directory, where the file is named after the evaluation, build, nodes and seed
        /// (`net2-ec34b77-5000n-s42.vf`), or a file whose name carries the seed as `-s<seed>`.
        /// Appended to, created if missing.
        #[arg(long, required_unless_present_any = ["check", "export"], conflicts_with_all = ["check", "export"])]
        output: Option<std::path::PathBuf>,
        /// Convert these PGN files (fastchess's, or OpenBench's DATAGEN uploads, decompressed)
        /// to viriformat, each move scored by its comment, appending to --output, instead of
        /// playing. A game that cannot be read whole is skipped and reported.
        #[arg(long, num_args = 1.., value_name = "FILE", conflicts_with_all = ["check", "export"])]
        from_pgn: Vec<std::path::PathBuf>,
        /// Read these data files (.vf or text) and report their games, positions and the
        /// games that occur more than once among them, instead of playing.
        #[arg(long, num_args = 1.., value_name = "FILE", conflicts_with = "export")]
        check: Vec<std::path::PathBuf>,
        /// Write every position of these viriformat files to stdout as text lines `FEN |
        /// score | result | move` (White's view), instead of playing.
        #[arg(long, num_args = 1.., value_name = "FILE")]
        export: Vec<std::path::PathBuf>,
        /// Game threads, one search each.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1024))]
        threads: u64,
        /// Stop after this many games (default: run until killed).
        #[arg(long)]
        games: Option<u64>,
        /// Stop after this many positions.
        #[arg(long)]
        positions: Option<u64>,
        /// Nodes a move: no new iteration after this many.
        #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
        nodes: u64,
        /// The search stops at this many nodes (default: 4 x --nodes).
        #[arg(long)]
        hard_nodes: Option<u64>,
        /// Seed of the random openings (default: from the clock, printed at the start). Never
        /// reuse one with a build that searches alike: it replays the same games.
        #[arg(long)]
        seed: Option<u64>,
        /// Start from random lines of this EPD/FEN file instead of the initial position.
        #[arg(long)]
        book: Option<std::path::PathBuf>,
        /// Random plies played before the game is recorded (this many or one more; default 8,
        /// or 0 with --book).
        #[arg(long)]
        random_plies: Option<usize>,
        /// Play with this network file, or `hce` for the hand-crafted evaluation (default: the
        /// built-in network).
        #[arg(long, value_name = "NET")]
        eval_file: Option<String>,
        /// With --check: positions before this ply are not counted as kept.
        #[arg(long, default_value_t = 16)]
        min_ply: u32,
    },
    /// Train a network on self-play positions and write the quantised file the engine loads.
    Train {
        /// Data files: viriformat games (.vf, from datagen) or text lines `FEN | score |
        /// result | move` from White's side. Repeat for several; a game found twice among
        /// them is trained on once.
        #[arg(long, required = true)]
        data: Vec<std::path::PathBuf>,
        /// The network file to write after every epoch (its checkpoint goes beside it, .ckpt).
        #[arg(long)]
        output: std::path::PathBuf,
        /// Hidden units per perspective.
        #[arg(long, default_value_t = train::DEFAULT_SHAPE.hidden as u64, value_parser = clap::value_parser!(u64).range(1..=4096))]
        hidden: u64,
        /// Output heads, chosen by the number of pieces on the board (1 for a single head).
        #[arg(long, default_value_t = train::DEFAULT_SHAPE.buckets as u64, value_parser = clap::value_parser!(u64).range(1..=32))]
        buckets: u64,
        /// Inputs as they are, without mirroring the files of a perspective whose king stands
        /// on a-d (mirrored inputs are the default).
        #[arg(long)]
        plain_inputs: bool,
        /// Passes over the training positions (the defaults of the schedule are the recipe
        /// measured in games, docs/network.md).
        #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u64).range(1..))]
        epochs: u64,
        #[arg(long, default_value_t = 16384, value_parser = clap::value_parser!(u64).range(1..))]
        batch_size: u64,
        /// The learning rate of the first epoch.
        #[arg(long, default_value_t = 0.002)]
        lr: f32,
        /// The last epoch's learning rate as a fraction of --lr (a cosine in between).
        #[arg(long, default_value_t = 0.01)]
        final_lr: f32,
        /// AdamW's decoupled weight decay, on every weight and bias.
        #[arg(long, default_value_t = 0.3)]
        weight_decay: f32,
        /// Weight of the game result in the target; the rest is the search score.
        #[arg(long, default_value_t = 0.0)]
        wdl: f32,
        /// The sigmoid scale K of the target in centipawns, also the network's output scale
        /// (default: fitted to the training positions' scores and results).
        #[arg(long)]
        scale: Option<f32>,
        /// Fraction of the games held out to measure the validation loss.
        #[arg(long, default_value_t = 0.02)]
        validation: f64,
        /// Positions before this ply of their game are not trained on.
        #[arg(long, default_value_t = 16)]
        min_ply: u32,
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
        threads: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Continue from the checkpoint beside --output.
        #[arg(long)]
        resume: bool,
        /// Do not also train on positions reflected a to h (by default each is reflected in
        /// about half the epochs; with mirrored inputs a reflection changes nothing).
        #[arg(long)]
        no_reflect: bool,
    },
    /// Measure the transposition table alone: 4 KiB vs 2 MiB pages, prefetch, clear.
    TtBench {
        /// Table size in MiB.
        #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
        mib: u64,
        /// Threads for the clear (at most one per core is used).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=1024))]
        threads: u64,
        /// Nanoseconds of move generation between a prefetch and its probe.
        #[arg(long, default_value_t = tt_bench::DEFAULT_WORK_NS, value_parser = clap::value_parser!(u64).range(1..=100_000))]
        work_ns: u64,
    },
}

/// The evaluation `--eval-file` names: the built-in network without it, none (hand-crafted)
/// for `hce`, else the file, which is an error if it is not a network.
fn load_network(
    name: Option<&str>,
) -> Result<ferrite::eval::Evaluation, ferrite::eval::nnue::LoadError> {
    ferrite::eval::Evaluation::choose(name.unwrap_or_default())
}

fn run(command: Option<Command>) -> Result<(), Box<dyn std::error::Error>> {
    match command {
        None => Ok(uci::run()?),
        Some(Command::Bench {
            depth,
            threads,
            tt_stats,
            eval_file,
        }) => {
            let network = load_network(eval_file.as_deref())?;
            let result = bench::run(depth, threads as usize, network, |line| println!("{line}"))?;
            if tt_stats {
                println!("TT: {}, mean hashfull {}", result.tt_stats, result.hashfull);
            }
            println!(
                "{} positions, depth {depth}, {:.2} s",
                bench::positions().len(),
                result.seconds
            );
            println!("Nodes searched  : {}", result.nodes);
            println!(
                "Nodes/second    : {}",
                (result.nodes as f64 / result.seconds.max(1e-9)) as u64
            );
            Ok(())
        }
        Some(Command::Perft { depth, fen }) => {
            let board = match fen {
                Some(fen) => Board::from_fen(&fen, CastlingMode::Standard)?,
                None => Board::default(),
            };
            let start = std::time::Instant::now();
            let (counts, total) = perft::divide(board.pos(), depth);
            for (mv, n) in counts {
                println!("{mv}: {n}");
            }
            println!();
            println!("Nodes: {total}");
            println!("Time : {:.3} s", start.elapsed().as_secs_f64());
            Ok(())
        }
        Some(Command::Tune {
            data,
            iterations,
            rate,
            tables,
            pull,
            holdout,
            rust,
            origin,
            from,
            wdl,
            score_scale,
        }) => {
            if !(0.0..=1.0).contains(&wdl) {
                return Err(format!("--wdl must lie in 0..1, not {wdl}").into());
            }
            let scale = match score_scale {
                Some(k) if k > 0.0 && k.is_finite() => k,
                Some(k) => return Err(format!("--score-scale must be positive, not {k}").into()),
                None if wdl < 1.0 => {
                    return Err(
                        "--wdl below 1 needs --score-scale (ferrite datagen --check fits it)"
                            .into(),
                    )
                }
                None => 400.0,
            };
            let labels = tune::Labels { wdl, scale };
            let read = |path: &std::path::Path| -> Result<Vec<tune::Sample>, String> {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                let (samples, skipped) = tune::load(&text, labels);
                if samples.is_empty() {
                    return Err(format!("no labelled positions in {}", path.display()));
                }
                eprintln!(
                    "{}: {} positions read, {skipped} lines skipped",
                    path.display(),
                    samples.len()
                );
                Ok(samples)
            };
            let samples = read(&data)?;
            let holdout = holdout.as_deref().map(read).transpose()?;
            let start = if from == "neutral" {
                tune::neutral_weights()
            } else {
                tune::engine_weights()
            };
            let settings = tune::Settings {
                iterations,
                rate,
                tables,
                pull,
                start: start.clone(),
                k: (wdl < 1.0).then(|| tune::k_of_scale(scale)),
            };
            let report = tune::tune(&samples, &settings, |line| eprintln!("{line}"));
            eprintln!(
                "K {:.4}: error {:.6} -> {:.6}",
                report.k, report.error_before, report.error_after
            );
            if let Some(holdout) = holdout {
                eprintln!(
                    "held out: error {:.6} -> {:.6}",
                    tune::mean_error(&holdout, &start, report.k),
                    tune::mean_error(&holdout, &report.weights, report.k)
                );
            }
            print!("{}", tune::format_weights(&report.weights));
            if let Some(path) = rust {
                ferrite::files::write(
                    &path,
                    tune::rust_source(&report.weights, &origin).as_bytes(),
                )
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            }
            Ok(())
        }
        Some(Command::Params) => {
            print!("{}", ferrite::params::spsa_list());
            Ok(())
        }
        Some(Command::Datagen {
            output,
            from_pgn,
            check,
            export,
            threads,
            games,
            positions,
            nodes,
            hard_nodes,
            seed,
            book,
            random_plies,
            eval_file,
            min_ply,
        }) => {
            if !check.is_empty() {
                let filter = ferrite::tools::data::Filter { min_ply };
                ferrite::tools::data::check(&check, filter, |line| println!("{line}"))?;
                return Ok(());
            }
            if !export.is_empty() {
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                for path in &export {
                    let report = ferrite::tools::data::export_text(path, &mut out)?;
                    for problem in &report.problems {
                        eprintln!("{}: {problem}", path.display());
                    }
                }
                return Ok(std::io::Write::flush(&mut out)?);
            }
            if !from_pgn.is_empty() {
                let output = output.expect("clap requires --output without --check");
                let converted = ferrite::tools::from_pgn::convert(&from_pgn, &output)?;
                for skipped in &converted.skipped {
                    eprintln!("skipped: {skipped}");
                }
                println!(
                    "{} games, {} positions appended to {}; {} games skipped",
                    converted.games,
                    converted.positions,
                    output.display(),
                    converted.skipped.len()
                );
                return Ok(());
            }
            let network = load_network(eval_file.as_deref())?;
            let book = match &book {
                Some(path) => ferrite::tools::genfens::read_book(path)?,
                None => Vec::new(),
            };
            let seed = seed.unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64)
            });
            let output = output.expect("clap requires --output without --check");
            let output = datagen::output_path(
                &output,
                &datagen::evaluation_tag(eval_file.as_deref()),
                nodes,
                seed,
            )?;
            let settings = datagen::Settings {
                output,
                threads: threads as usize,
                games,
                positions,
                soft_nodes: nodes,
                hard_nodes: hard_nodes.unwrap_or(nodes.saturating_mul(4)),
                seed,
                random_plies: random_plies.unwrap_or(if book.is_empty() { 8 } else { 0 }),
                book,
                evaluation: network,
            };
            eprintln!(
                "datagen: seed {seed}, {} thread(s), {} nodes a move (hard {}), appending to {}",
                settings.threads,
                settings.soft_nodes,
                settings.hard_nodes,
                settings.output.display()
            );
            let every = std::time::Duration::from_secs(10);
            datagen::run(&settings, every, |line| eprintln!("{line}"))?;
            Ok(())
        }
        Some(Command::Train {
            data,
            output,
            hidden,
            buckets,
            plain_inputs,
            epochs,
            batch_size,
            lr,
            final_lr,
            weight_decay,
            wdl,
            scale,
            validation,
            min_ply,
            threads,
            seed,
            resume,
            no_reflect,
        }) => {
            if !(0.0..=1.0).contains(&wdl) {
                return Err(format!("--wdl must lie in 0..1, not {wdl}").into());
            }
            let scale_range = ferrite::eval::nnue::SCALE_RANGE;
            if let Some(k) = scale
                .filter(|&k| !(k >= *scale_range.start() as f32 && k <= *scale_range.end() as f32))
            {
                return Err(format!(
                    "--scale must lie in {}..{}, not {k}",
                    scale_range.start(),
                    scale_range.end()
                )
                .into());
            }
            let filter = ferrite::tools::data::Filter { min_ply };
            let mut pile = ferrite::tools::data::Pile::new(validation, seed);
            let mut duplicates = 0;
            for path in &data {
                let report = pile.load(path, filter)?;
                duplicates += report.duplicate_games;
                eprintln!("{}", ferrite::tools::data::describe(path, &report));
                for problem in &report.problems {
                    eprintln!("{}: {problem}", path.display());
                }
            }
            eprintln!(
                "{} games, {duplicates} duplicate games skipped; training on {} positions, validating on {}",
                pile.games(),
                pile.train.len(),
                pile.validation.len()
            );
            let k = scale.unwrap_or_else(|| {
                let k = ferrite::tools::data::fit_scale(&ferrite::tools::data::scores_and_results(
                    &pile.train,
                ));
                eprintln!("scale K fitted to the training positions: {k:.1}");
                k
            });
            let settings = train::Settings {
                shape: train::Shape {
                    hidden: hidden as usize,
                    buckets: buckets as usize,
                    mirrored: !plain_inputs,
                },
                epochs: epochs as usize,
                batch_size: batch_size as usize,
                lr,
                final_lr_fraction: final_lr,
                weight_decay,
                target: train::Target { wdl, k },
                threads: threads as usize,
                seed,
                output,
                resume,
                reflect: !no_reflect,
            };
            train::train(&settings, &pile.train, &pile.validation, |line| {
                eprintln!("{line}")
            })?;
            Ok(())
        }
        Some(Command::TtBench {
            mib,
            threads,
            work_ns,
        }) => {
            print!(
                "{}",
                tt_bench::run(mib as usize, threads as usize, work_ns)?
            );
            Ok(())
        }
    }
}

/// Runs the UCI commands given as arguments, one command each (`ferrite "genfens 10 seed 1
/// book None" quit`, as OpenBench asks for openings), instead of reading them from stdin.
/// `genfens` is answered here, the rest by the UCI engine.
fn run_commands(lines: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    use ferrite::tools::genfens;
    uci::run_commands(lines, |line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&"genfens") {
            return Ok(false);
        }
        let request = genfens::parse(&words[1..])?;
        genfens::run(&request, ferrite::eval::Evaluation::built_in(), |fen| {
            println!("info string genfens {fen}")
        })?;
        Ok(true)
    })?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let commands = args
        .first()
        .and_then(|first| first.split_whitespace().next())
        .is_some_and(|word| word == "genfens" || uci::is_command(word));
    let outcome = if commands {
        run_commands(&args)
    } else {
        run(Cli::parse().command)
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
