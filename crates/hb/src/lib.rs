//! Fourier-Galerkin machinery and dynamic condensation of the linear structure onto the
//! friction DOFs, for the E-WR harmonic-balance method.

pub mod fourier;
pub mod galerkin;
pub mod modes;
pub mod receptance;

pub use fourier::{
    FourierError, FourierSampler, HarmonicKind, HarmonicSet, MAX_HARMONIC, MAX_SAMPLES,
    default_samples,
};
pub use galerkin::DenseGalerkin;
pub use receptance::{Modes, Receptance, ReceptanceAt, ReceptanceError, ReceptanceKind};
