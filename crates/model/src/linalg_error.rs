//! faer's errors as sentences: their `Display` is their `Debug` (`Generic(OutOfMemory)`),
//! which means nothing to a user. Every crate of the workspace formats them through here.

use faer::sparse::linalg::{LltError, LuError};
use faer::sparse::{CreationError, FaerError};

/// A faer error in words an engineer can act on.
pub trait Sentence {
    /// The sentence (no trailing period).
    fn sentence(&self) -> String;
}

impl Sentence for FaerError {
    fn sentence(&self) -> String {
        match self {
            FaerError::OutOfMemory => "not enough memory".into(),
            FaerError::IndexOverflow => "the matrix is too large for its index type".into(),
            other => format!("linear algebra failure ({other:?})"),
        }
    }
}

impl Sentence for CreationError {
    fn sentence(&self) -> String {
        match self {
            CreationError::Generic(e) => e.sentence(),
            CreationError::OutOfBounds { row, col } => {
                format!("entry ({row}, {col}) lies outside the matrix")
            }
        }
    }
}

impl Sentence for LuError {
    fn sentence(&self) -> String {
        match self {
            LuError::Generic(e) => e.sentence(),
            LuError::SymbolicSingular { index } => format!(
                "the matrix is structurally singular (no pivot at step {index}: a DOF with no \
                 coupling at all?)"
            ),
        }
    }
}

impl Sentence for LltError {
    fn sentence(&self) -> String {
        match self {
            LltError::Generic(e) => e.sentence(),
            LltError::Numeric(_) => "the matrix is not positive definite".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_carry_no_debug_text() {
        for s in [
            FaerError::OutOfMemory.sentence(),
            CreationError::Generic(FaerError::IndexOverflow).sentence(),
            CreationError::OutOfBounds { row: 3, col: 4 }.sentence(),
            LuError::SymbolicSingular { index: 2 }.sentence(),
        ] {
            assert!(!s.contains("Generic") && !s.contains('{'), "{s}");
        }
    }
}
