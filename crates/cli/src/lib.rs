//! `ewr`: periodic forced response of structures with dry friction by the E-WR method.
//!
//! The command line is a thin layer: it parses arguments, calls the library crates and turns
//! their errors into messages and exit codes (0 success, 1 failure while working, 2 bad input).
//! It is a library so that two programs run the same code: the `ewr` binary, and the `ewr`
//! command the Python package installs (one build gives a user both; [`run`]).

/// `println!` that never panics: a closed stdout (`ewr ... | head -1`) must not abort a run
/// whose results are still being computed and written; what cannot be shown is dropped.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `eprintln!` that never panics (see `say!`).
macro_rules! say_err {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

mod args;
mod import_cmd;
mod interrupt;
mod model_cmd;
mod modes_cmd;
mod paths;
mod peaks_cmd;
mod probe;
mod progress;
mod simulate_cmd;
mod solve_cmd;
mod study_cmd;

use clap::{Parser, Subcommand};
use std::ffi::OsString;

/// Exact Coulomb friction, periodic responses, many contacts: the E-WR method.
#[derive(Parser)]
#[command(
    name = "ewr",
    version,
    about = "Periodic forced vibration of structures with dry (Coulomb) friction by the \
             Equality-based Weighted Residual method",
    long_about = "Periodic forced vibration of structures with dry (Coulomb) friction, in one or \
                  two tangential directions per contact, by the Equality-based Weighted Residual \
                  (E-WR) method: exact set-valued Coulomb friction, no penalty to tune.\n\n\
                  A model is an HDF5 file (sparse M, K, C, contacts, forcing; see \
                  docs/model-format.md). Start with `ewr model example --list`.\n\n\
                  Exit codes: 0 success, 1 failure while working (e.g. a file cannot be \
                  written), 2 bad input (missing or invalid file, bad option)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Inspect, check and create model files.
    #[command(subcommand)]
    Model(model_cmd::ModelCommand),
    /// Periodic solution at one frequency (exit 0 converged, 1 not converged, 2 bad input).
    Solve(solve_cmd::SolveArgs),
    /// Frequency response curve(s) by continuation in the excitation frequency.
    Frc(solve_cmd::FrcArgs),
    /// Resonance peak followed over a parameter (mu_n, forcing, a DOF's mass), and the
    /// parameter value with the smallest peak.
    #[command(long_about = peaks_cmd::PEAKS_ABOUT)]
    Peaks(peaks_cmd::PeaksArgs),
    /// Nonlinear mode by the extended periodic motion concept with exact friction: natural
    /// frequency and modal damping ratio against the modal amplitude (the backbone).
    Modes(modes_cmd::ModesArgs),
    /// Create a model file from FE matrices (CalculiX, Matrix Market) and CSV files.
    #[command(subcommand)]
    Import(import_cmd::ImportCommand),
    /// Time-domain reference solution: implicit time stepping with exact Coulomb friction
    /// to the periodic steady state (exit 0 steady, 1 not steady, 2 bad input).
    #[command(long_about = simulate_cmd::SIMULATE_ABOUT)]
    Simulate(simulate_cmd::SimulateArgs),
    /// Compare two time-series CSV files column by column (e.g. simulate against solve).
    #[command(long_about = simulate_cmd::COMPARE_ABOUT)]
    Compare(simulate_cmd::CompareArgs),
    /// Parameter study: frequency response curves over a grid of damper parameters, resumable,
    /// shardable over a cluster (`ewr study merge` combines shards).
    #[command(long_about = study_cmd::STUDY_ABOUT)]
    Study(study_cmd::StudyArgs),
}

/// An error that ends the program: what to tell the user and the exit code.
pub struct Failure {
    /// Exit code: 1 failure while working, 2 bad input.
    pub code: u8,
    /// Message printed on stderr after `error: `.
    pub message: String,
}

impl Failure {
    /// Bad input: a missing, malformed or invalid file, or an invalid option value.
    pub fn input(message: impl Into<String>) -> Self {
        Failure {
            code: 2,
            message: message.into(),
        }
    }

    /// A failure while working (writing a result, a computation that failed).
    pub fn work(message: impl Into<String>) -> Self {
        Failure {
            code: 1,
            message: message.into(),
        }
    }
}

/// Runs the command line `args` (the program's name first, as `std::env::args_os` gives it)
/// and returns the exit code: 0 success, 1 failure while working, 2 bad input.
///
/// `relaunch` is how this program starts a copy of itself (the program and the arguments
/// before the command's own), for the child that reads user files first (`probe`): `None`
/// for a binary, which restarts its own executable; the Python package's `ewr` passes its
/// interpreter and `-m ewr`.
pub fn run(args: Vec<OsString>, relaunch: Option<Vec<OsString>>) -> u8 {
    // Results must not depend on the number of threads (see the function's documentation).
    faer::set_global_parallelism(ewr_hb::deterministic_parallelism());
    if let Some(code) = probe::child(&args) {
        return code;
    }
    if let Some(r) = relaunch {
        probe::set_relaunch(r);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with exit 0, usage errors to stderr with exit 2.
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    // The command runs on one of rayon's workers: a parallel call made from a thread outside
    // the pool is handed to a worker and waited for through the kernel (a futex round trip per
    // call), which small models pay thousands of times a second.
    let result = rayon::scope(move |_| match cli.command {
        Command::Model(cmd) => model_cmd::run(cmd),
        Command::Solve(a) => solve_cmd::solve(&a),
        Command::Frc(a) => solve_cmd::frc_cmd(&a),
        Command::Peaks(a) => peaks_cmd::peaks(&a),
        Command::Modes(a) => modes_cmd::modes(&a),
        Command::Import(cmd) => import_cmd::run(cmd),
        Command::Simulate(a) => simulate_cmd::simulate(&a),
        Command::Compare(a) => simulate_cmd::compare(&a),
        Command::Study(a) => study_cmd::run(&a),
    });
    match result {
        Ok(()) => 0,
        Err(f) => {
            say_err!("error: {}", f.message);
            f.code
        }
    }
}
