//! Errors of friction-law evaluation.

use std::fmt;

/// Why an evaluation was refused or failed. Per-contact errors name the contact (and
/// the time sample where there is one); when several contacts are bad, the one with
/// the lowest index is reported, whatever the number of threads.
#[derive(Clone, Debug, PartialEq)]
pub enum LawError {
    /// The tangential dimension is not 1 or 2.
    InvalidDim {
        /// The dimension given.
        dim: usize,
    },
    /// A slice does not have the length implied by `dim`, `n_samples` and the number of
    /// contacts (`rho.len()`).
    Length {
        /// Which slice (`"r"`, `"v"`, `"mu_n"`, `"psi"`, `"d_r"`, `"d_v"`).
        what: &'static str,
        /// The length the layout requires.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// `n_contacts * dim * dim * n_samples` does not fit in `usize`.
    SizeOverflow,
    /// A law parameter (alpha, delta, eps) is not finite and positive.
    InvalidParameter {
        /// The law's command-line name.
        law: &'static str,
        /// The parameter's name.
        name: &'static str,
        /// The rejected value.
        value: f64,
    },
    /// `rho` of a contact is not finite and positive.
    InvalidRho {
        /// Contact index.
        contact: usize,
        /// The rejected value.
        value: f64,
    },
    /// The friction bound `muN` is negative or not finite.
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
    NonFinite {
        /// Contact index.
        contact: usize,
        /// Time sample (the first bad one of that contact).
        sample: usize,
    },
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

impl fmt::Display for LawError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LawError::InvalidDim { dim } => {
                write!(f, "tangential dimension must be 1 or 2, got {dim}")
            }
            LawError::Length {
                what,
                expected,
                got,
            } => write!(f, "slice `{what}` has length {got}, expected {expected}"),
            LawError::SizeOverflow => write!(f, "batch size overflows usize"),
            LawError::InvalidParameter { law, name, value } => write!(
                f,
                "friction law `{law}`: parameter {name} must be finite and > 0, got {value}"
            ),
            LawError::InvalidRho { contact, value } => {
                write!(
                    f,
                    "contact {contact}: rho must be finite and > 0, got {value}"
                )
            }
            LawError::InvalidBound {
                contact,
                sample: Some(j),
                value,
            } => write!(
                f,
                "contact {contact}, sample {j}: friction bound muN must be finite and >= 0, got {value}"
            ),
            LawError::InvalidBound {
                contact,
                sample: None,
                value,
            } => write!(
                f,
                "contact {contact}: friction bound muN must be finite and >= 0, got {value}"
            ),
            LawError::NonFinite { contact, sample } => write!(
                f,
                "contact {contact}, sample {sample}: non-finite friction force or velocity (or overflow in the friction law)"
            ),
        }
    }
}

impl std::error::Error for LawError {}
