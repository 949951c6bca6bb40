//! The `ewr` binary: the command line of [`ewr_cli`].

use std::process::ExitCode;

/// mimalloc instead of glibc's malloc: see the reason in Cargo.toml.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    ExitCode::from(ewr_cli::run(std::env::args_os().collect(), None))
}
