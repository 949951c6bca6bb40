//! Fourier-Galerkin machinery and dynamic condensation of the linear structure onto the
//! friction DOFs, for the E-WR harmonic-balance method.

pub mod fourier;
pub mod galerkin;
pub mod modes;
pub mod profile;
pub mod receptance;

pub use fourier::{
    FourierError, FourierSampler, HarmonicKind, HarmonicSet, MAX_HARMONIC, MAX_SAMPLES,
    SignalScratch, default_samples,
};
pub use galerkin::DenseGalerkin;
pub use receptance::{
    ContactDynamics, DampingCoupling, HarmonicDynamics, ModalProduct, Modes, Receptance,
    ReceptanceAt, ReceptanceError, ReceptanceKind,
};

/// Parallelism for faer's kernels with a fixed split rather than the thread count: faer
/// partitions reductions (matrix products, supernodal factorisations) by the count it is
/// given, and results must not change with `RAYON_NUM_THREADS`, to the last bit (a study
/// resumed on another machine, or a test rerun, gives the same file). Rayon runs the pieces
/// on however many threads there are. Used by this crate's explicit calls; programs also set
/// it as faer's global parallelism (`faer::set_global_parallelism`) for faer's internal ones.
pub fn deterministic_parallelism() -> faer::Par {
    faer::Par::rayon(FAER_SPLIT)
}

/// Pieces of each parallel faer kernel: enough for a workstation's cores.
const FAER_SPLIT: usize = 8;
