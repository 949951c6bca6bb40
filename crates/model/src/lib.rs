//! The ewr model: a linear structure (sparse M, K, C), dry-friction contacts and periodic
//! forcing, with its HDF5 file format (`docs/model-format.md`), validation and the example
//! models of the papers.
//!
//! Data flows one way through the workspace: this crate knows nothing of harmonics or
//! solvers; `ewr-hb` condenses a [`Model`] onto its contacts.

mod annulus;
mod builder;
mod cyclic;
pub mod examples;
pub mod h5;
mod io;
pub mod linalg_error;
mod model;
mod validate;

pub use builder::ModelBuilder;
pub use cyclic::Cyclic;
pub use examples::{Example, ExampleOptions};
pub use io::{FORMAT_NAME, FORMAT_VERSION, ModelError, ReadModel, read, write};
pub use model::{
    Contacts, Damping, ForcingTerm, Kinematics, Model, NormalContacts, STUCK_PENALTY, SparseMatrix,
    linear_combination, values_on,
};
pub use validate::{Problem, SYMMETRY_TOL, Severity, check_semidefinite, has_errors, validate};
