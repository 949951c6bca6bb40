//! The error of every contact residual: why a system could not be built or evaluated.

use crate::law::LawError;
use ewr_hb::FourierError;
use ewr_hb::receptance::ReceptanceError;

/// Why the residual could not be evaluated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResidualError {
    /// The friction law refused its input (e.g. a non-finite sample), naming the contact.
    #[error("friction law: {0}")]
    Law(#[from] LawError),
    /// The receptance could not be applied.
    #[error("receptance: {0}")]
    Receptance(#[from] ReceptanceError),
    /// The Fourier machinery refused its input.
    #[error("Fourier: {0}")]
    Fourier(#[from] FourierError),
    /// The input cannot be used as it is (named in the message).
    #[error("{0}")]
    Input(String),
    /// A vector or matrix has the wrong size.
    #[error("{what}: expected {expected} entries, got {got}")]
    Size {
        /// What was being checked.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Length given.
        got: usize,
    },
}
