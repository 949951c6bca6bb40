//! Nonlinear solution of the E-WR equations: trust-region Newton now; continuation and
//! studies build on it. Generic over "a residual with a Jacobian" ([`Residual`]), so the
//! physics stays in `ewr-contact` and a matrix-free Krylov variant can slot in later.

pub mod newton;

pub use newton::{EvalError, NewtonOptions, NewtonReport, NewtonStatus, Residual, solve};
