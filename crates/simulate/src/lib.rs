//! Time-domain reference solver: implicit (Moreau-Jean, backward Euler) time stepping of
//! `M u'' + C u' + K u = f(t) + W^T r` with exact set-valued Coulomb friction, run to the
//! periodic steady state.
//!
//! It is independent of the harmonic-balance path and checks it: same model, same contact
//! quantities, same CSV columns ([`timeseries`]). Each step factorises nothing (the step
//! matrix `M + h C + h^2 K` is factorised once) and solves the contact problem exactly
//! ([`contact`]): one contact by projection on the friction disk in the metric of its
//! Delassus block, several by projected Gauss-Seidel. Static and dynamic bounds may differ
//! ([`Options::static_factor`]); massless DOFs are allowed; elastic (Jenkins) contacts are
//! built with [`with_jenkins`] (automatically for a model with contact stiffnesses `k_t`).
//! 3-D contacts (model format v2: a unilateral normal direction with friction bound
//! `mu lambda`, rigid or with a normal stiffness `k_n`) are solved with the normal force at
//! every step. See `docs/simulate.md`.
//!
//! ```no_run
//! let model = ewr_model::examples::oscillator_2d();
//! let mut opts = ewr_simulate::Options::new(0.1);
//! opts.dt = Some(1e-3);
//! let sim = ewr_simulate::simulate(&model, &opts, &mut |_| {}).unwrap();
//! println!("{:?}", sim.contact_summaries()[0].stick_intervals);
//! ```

#![warn(missing_docs)]

pub mod contact;
mod integrate;
mod jenkins;
mod linear;
mod model_check;
mod output;
pub mod setup;
mod stepped;
pub mod timeseries;

pub use contact::{ContactState, ContactStats, LocalSolution, normal_force, solve_local};
pub use integrate::{
    DEFAULT_STEPS_PER_PERIOD, Hysteretic, MIN_STEPS_PER_PERIOD, Options, Progress, State, simulate,
};
pub use jenkins::with_jenkins;
pub use linear::{DENSE_MAX_DOFS, LinearSolver};
pub use output::{
    ContactSummary, EnergyBalance, NormalHistory, NormalSummary, Simulation, Summary,
};
pub use stepped::{SteppedPoint, SteppedProgress, SteppedRun, stepped_frequencies, stepped_sine};

/// Why a run could not be done.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimulateError {
    /// An option is out of range (bad input).
    #[error("invalid option: {0}")]
    Option(String),
    /// The model cannot be simulated as it is (bad input).
    #[error("{0}")]
    Model(String),
    /// A numerical failure (singular step matrix, blow-up).
    #[error("{0}")]
    Numerical(String),
}
