//! Writes the model files of the seed-000 single-point benchmarks, so that `ewr solve` can run
//! them as a user would (`scripts/bench-small.sh`):
//!
//! * `table1.h5`: oscillator-2d with `f2 = 10 cos 3wt` (paper Table 1; solve at w = 0.1,
//!   odd:199, 4096 samples);
//! * `fig21.h5`: two-mass-damper with `f12 = 20 cos 3wt` (paper Fig. 21; solve at w = 0.115,
//!   odd:1799, 16384 samples).
//!
//! Usage: `cargo run --release -p ewr-solve --example paper_models -- OUT_DIR`.

use ewr_model::examples;
use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    std::fs::create_dir_all(&dir).expect("output directory");
    let mut table1 = examples::oscillator_2d();
    table1.forcing[1].harmonic = 3;
    ewr_model::write(dir.join("table1.h5"), &table1).expect("write table1.h5");
    let mut fig21 = examples::two_mass_damper(1.0);
    fig21.forcing[1].harmonic = 3;
    ewr_model::write(dir.join("fig21.h5"), &fig21).expect("write fig21.h5");
    println!("wrote {0}/table1.h5 and {0}/fig21.h5", dir.display());
}
