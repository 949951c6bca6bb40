//! Nonlinear solution of the E-WR equations: trust-region Newton, periodic solutions with
//! harmonic ramping, post-processing; continuation and studies build on them. The Newton
//! solver is generic over "a residual with a Jacobian" ([`Residual`]), so the physics stays in
//! `ewr-contact`; it solves either with a dense LU or matrix-free (Newton-Krylov, GMRES with a
//! contact-block, harmonic-averaged or two-level preconditioner, see [`Preconditioner`]), see
//! [`newton`].

pub mod auto;
pub mod continuation;
pub mod estimate;
pub mod newton;
pub mod nonlinear_mode;
pub mod peaks;
pub mod periodic;
pub mod point;
pub mod post;
/// Where a run's time goes (`--profile`): kept in `ewr_hb` so that the receptance setup can
/// time its own parts.
pub use ewr_hb::profile;
pub mod quadrature;
pub mod ramp;
pub mod scaled;
pub mod setup;
pub mod stability;
pub mod step_control;
pub mod sweep;
pub mod unilateral;

pub use continuation::{
    Continuation, FrcPoint, FrcSettings, frc, frc_resume, frc_resume_until, frc_until,
};
pub use estimate::{Estimate, EstimateMethod, from_below, truncation_error};
pub use newton::{
    AUTO_MATRIX_FREE_MIN_UNKNOWNS, EvalError, KrylovOptions, LinearSolve, NewtonOptions,
    NewtonReport, NewtonStatus, Residual, solve,
};
pub use peaks::{Peak, maximise, peak_near, refine_peaks};
pub use periodic::{
    Amplitude, DEFAULT_SET_NAME, DEFAULT_TOL, DEFAULT_TOL_3D, DofResponse, PointSettings,
    PointSolution, Preconditioner, SolveError, default_set, default_tolerance,
    harmonic_set_problem, samples_problem,
};
pub use point::{solve_point, solve_point_holding};
pub use post::ContactSummary;
pub use quadrature::{PhaseResonance, phase_resonances};
pub use scaled::{Policy, ScaledContacts};
pub use setup::{
    DofRef, MAX_POINTS, Opt, OptionError, Setup, SetupError, SolveOptions, Spelling, SweepOptions,
};
pub use stability::{
    Crossing, PhaseFamily, Stability, StabilityChange, StabilityError, floquet, phase_multipliers,
    stability, stability_all_phases, stability_changes, stability_families, stability_family,
    travelling_wave_flags, turning_points,
};
#[doc(hidden)]
pub use stability::{
    EigenMethod, floquet_by, hill_eigenvalues, hill_eigenvalues_family, stability_by,
};
pub use sweep::{Curve, CurveSpec, StopReason, StoredCurve, SweepObserver, sweep, sweep_curve};
