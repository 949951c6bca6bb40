//! Errors of friction-law evaluation.

use std::fmt;

/// Why an evaluation was refused or failed. Per-contact errors name the contact (and
/// the time sample where there is one); when several contacts are bad, the one with
/// the lowest index is reported, whatever the number of threads.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LawError {
    /// The tangential dimension is not 1 or 2.
    #[error("tangential dimension must be 1 or 2, got {dim}")]
    InvalidDim {
        /// The dimension given.
        dim: usize,
    },
    /// A slice does not have the length implied by `dim`, `n_samples` and the number of
    /// contacts (`rho.len()`).
    #[error("slice `{what}` has length {got}, expected {expected}")]
    Length {
        /// Which slice (`"r"`, `"v"`, `"mu_n"`, `"psi"`, `"d_r"`, `"d_v"`).
        what: &'static str,
        /// The length the layout requires.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// `n_contacts * dim * dim * n_samples` does not fit in `usize`.
    #[error("batch size overflows usize")]
    SizeOverflow,
    /// A law parameter (alpha, delta, eps) is not finite and positive.
    #[error("friction law `{law}`: parameter {name} must be finite and > 0, got {value}")]
    InvalidParameter {
        /// The law's command-line name.
        law: &'static str,
        /// The parameter's name.
        name: &'static str,
        /// The rejected value.
        value: f64,
    },
    /// `rho` of a contact is not finite and positive.
    #[error("contact {contact}: rho must be finite and > 0, got {value}")]
    InvalidRho {
        /// Contact index.
        contact: usize,
        /// The rejected value.
        value: f64,
    },
    /// The friction bound `muN` is negative or not finite.
    #[error(
        "contact {contact}{}: friction bound muN must be finite and >= 0, got {value}",
        SampleSuffix(*.sample)
    )]
    InvalidBound {
        /// Contact index.
        contact: usize,
        /// Time sample, for a sampled bound; `None` for a per-contact bound.
        sample: Option<usize>,
        /// The rejected value.
        value: f64,
    },
    /// An input `r` or `v` is NaN or infinite at this contact and sample, or the result
    /// overflowed there (inputs beyond about 1e150 in magnitude).
    #[error(
        "contact {contact}, sample {sample}: non-finite friction force or velocity (or overflow in the friction law)"
    )]
    NonFinite {
        /// Contact index.
        contact: usize,
        /// Time sample (the first bad one of that contact).
        sample: usize,
    },
}

/// `", sample j"` after the contact of a sampled bound's error; nothing for a per-contact one.
struct SampleSuffix(Option<usize>);

impl fmt::Display for SampleSuffix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(j) => write!(f, ", sample {j}"),
            None => Ok(()),
        }
    }
}

impl LawError {
    /// The contact an error refers to, if it is specific to one.
    pub fn contact(&self) -> Option<usize> {
        match *self {
            LawError::InvalidRho { contact, .. }
            | LawError::InvalidBound { contact, .. }
            | LawError::NonFinite { contact, .. } => Some(contact),
            _ => None,
        }
    }
}
