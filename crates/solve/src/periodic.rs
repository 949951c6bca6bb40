//! A periodic solution: how it is computed ([`PointSettings`], the tolerances, the
//! preconditioner), what it is ([`PointSolution`]) and why it could not be attempted
//! ([`SolveError`]). The solver itself is [`crate::point`].

use crate::newton::{NewtonOptions, NewtonStatus};
use crate::post::ContactSummary;
use ewr_contact::{ContactHistories, ContactParams, FrictionLaw, ResidualError};
use ewr_hb::receptance::ReceptanceError;
use ewr_hb::{FourierError, HarmonicSet};
use std::fmt;

/// Why a periodic solution could not be attempted (non-convergence is not an error: it is
/// reported in [`PointSolution::status`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SolveError {
    /// The structure could not be condensed at this frequency (e.g. singular `Z_h`).
    #[error("condensation: {0}")]
    Receptance(#[from] ReceptanceError),
    /// The residual could not be set up.
    #[error("residual: {0}")]
    Residual(#[from] ResidualError),
    /// A harmonic set or sample count is invalid.
    #[error("harmonics: {0}")]
    Fourier(#[from] FourierError),
    /// A start vector does not fit.
    #[error("start vector: {0}")]
    Start(String),
}

/// The highest harmonic of the set used where none is given ([`default_set`]).
const DEFAULT_H_MAX: usize = 59;

/// How the front ends spell the set used where none is given (`--harmonics default`,
/// `harmonics="default"`): [`default_set`] of the model.
pub const DEFAULT_SET_NAME: &str = "default";

/// Whether `model`'s periodic solution needs the static term or even harmonics: a static
/// load, 3-D contacts (preload and mean forces in `h = 0`) or forcing on an even harmonic.
pub(crate) fn needs_all_harmonics(model: &ewr_model::Model) -> bool {
    model.contacts.has_normal()
        || model
            .forcing
            .iter()
            .any(|f| f.harmonic == 0 || f.harmonic % 2 == 0)
}

/// The set used where none is given: `odd:59` (the paper's), or `all:59` where the model
/// [`needs_all_harmonics`], on which `odd:59` would be refused ([`harmonic_set_problem`]) or
/// would drop the even forcing.
pub fn default_set(model: &ewr_model::Model) -> HarmonicSet {
    let set = if needs_all_harmonics(model) {
        HarmonicSet::all(DEFAULT_H_MAX)
    } else {
        HarmonicSet::odd(DEFAULT_H_MAX)
    };
    set.expect("a valid set")
}

/// Why `set` cannot carry `model`'s periodic solution, if it cannot: a static load or 3-D
/// contacts (preload and mean forces) need the static term `h = 0`, which a silently dropped
/// term would change the operating point by. Front ends prefix the option's name.
pub fn harmonic_set_problem(model: &ewr_model::Model, set: &HarmonicSet) -> Option<String> {
    let with_zero = || match set.kind() {
        ewr_hb::HarmonicKind::List => format!("0,{set}"),
        _ => format!("all:{}", set.h_max()),
    };
    if let Some(f) = model
        .forcing
        .iter()
        .find(|f| f.harmonic == 0 && !set.contains(0))
    {
        return Some(format!(
            "the model has a static load (DOF {}, harmonic 0), which this set cannot carry; \
             use {}",
            f.dof,
            with_zero()
        ));
    }
    if model.contacts.has_normal() && !set.contains(0) {
        return Some(format!(
            "3-D contacts (normal direction) carry their preload and mean forces in the \
             static term h = 0; use {}",
            with_zero()
        ));
    }
    None
}

/// Stick fraction from which a contact counts as stuck the whole period
/// ([`PointSolution::fully_stuck`]): the sampled intervals leave a sample's width of slack.
pub const FULLY_STUCK: f64 = 0.999;

/// Default tolerance on the scaled residual of models with constant friction bounds.
pub const DEFAULT_TOL: f64 = 1e-10;

/// Default tolerance of models with 3-D contacts. Their mean friction force of a contact
/// stuck nearly all period is barely fixed by the equations (docs/contact-3d.md, pitfall 3):
/// below about 1e-9 Newton moves it across kinks of the law a per cent at a time, which cost
/// the 200-contact sector sweep twice its time (1077 s against 545 s) for amplitudes that
/// moved less than two sweeps whose modes differ by rounding (docs/performance.md).
pub const DEFAULT_TOL_3D: f64 = 1e-9;

/// The tolerance a front end uses when none is given: [`DEFAULT_TOL_3D`] for 3-D contacts,
/// [`DEFAULT_TOL`] otherwise.
pub fn default_tolerance(model: &ewr_model::Model) -> f64 {
    if model.contacts.has_normal() {
        DEFAULT_TOL_3D
    } else {
        DEFAULT_TOL
    }
}

/// Why `n_samples` cannot sample `set`, if it cannot.
pub fn samples_problem(set: &HarmonicSet, n_samples: usize) -> Option<String> {
    (n_samples <= 2 * set.h_max() || n_samples > ewr_hb::MAX_SAMPLES).then(|| {
        format!(
            "must exceed 2 x the highest harmonic ({}) and be at most {}",
            2 * set.h_max(),
            ewr_hb::MAX_SAMPLES
        )
    })
}

/// How to compute one periodic solution.
#[derive(Clone, Debug)]
pub struct PointSettings {
    /// Harmonics of the friction forces and displacements.
    pub set: HarmonicSet,
    /// Time samples per period for the Galerkin integrals.
    pub n_samples: usize,
    /// The friction law.
    pub law: FrictionLaw,
    /// Newton options; `tol_residual` applies to the scaled residual (see [`scaled_norm`]).
    pub newton: NewtonOptions,
    /// Solve with fewer harmonics first and prolong (paper Table 1: much faster from zero).
    pub ramp: bool,
    /// DOFs whose response is recovered (peak amplitudes in [`PointSolution::dofs`]).
    pub monitor: Vec<usize>,
    /// When a solve stalls, retry it with every `rho` scaled by 10 and by 1/10 (the
    /// solution does not depend on `rho` for the exact and projection laws).
    pub retry_rho: bool,
    /// Preconditioner of the matrix-free path (ignored by dense solves).
    pub preconditioner: Preconditioner,
    /// Automatic harmonics (`--harmonics auto:TOL`): `set` is the smallest set tried, and the
    /// solution is the smallest set of its doubling sequence whose truncation error is within
    /// this fraction of the amplitude ([`crate::auto`]); `None`: `set` is used as is.
    pub auto: Option<f64>,
    /// What "amplitude" means in [`DofResponse`] (and so in curves, peaks, optima and the
    /// truncation-error estimates).
    pub amplitude: Amplitude,
}

/// How the response of the monitored DOFs `u(t)` is summed up in one amplitude
/// (`--amplitude`). Each applies per DOF (`|u_i|`) and to the vector of monitored DOFs
/// (`||u||`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Amplitude {
    /// `max_t ||u(t)||`: the total amplitude of the paper, static part included.
    #[default]
    Max,
    /// `max_t ||u(t) - u_0||`: the vibration about the mean, without the static deflection
    /// (preloads, static loads, the held mean of stuck contacts).
    Dynamic,
    /// `max_t ||u_1(t)||`: the first harmonic alone (what a linear or describing-function
    /// analysis and most measurements report).
    H1,
    /// `max_{t,s} ||u(t) - u(s)||`: peak to peak (for one DOF, `max u - min u`, refined as
    /// the maxima are; for several DOFs the largest chord over at most 512 instants of the
    /// period, since the pairs grow as its square: short by about `(pi h / 512)^2 / 2` of a
    /// harmonic `h` that dominates it).
    PeakToPeak,
}

impl Amplitude {
    /// Every measure, in the order of [`Amplitude::name`]'s documentation.
    pub const ALL: [Amplitude; 4] = [
        Amplitude::Max,
        Amplitude::Dynamic,
        Amplitude::H1,
        Amplitude::PeakToPeak,
    ];

    /// Its option value and column suffix: `max`, `dynamic`, `h1`, `pp`.
    pub fn name(self) -> &'static str {
        match self {
            Amplitude::Max => "max",
            Amplitude::Dynamic => "dynamic",
            Amplitude::H1 => "h1",
            Amplitude::PeakToPeak => "pp",
        }
    }

    /// The formula, for axis labels and file attributes.
    pub fn formula(self) -> &'static str {
        match self {
            Amplitude::Max => "max_t ||u(t)||",
            Amplitude::Dynamic => "max_t ||u(t) - u_0||",
            Amplitude::H1 => "max_t ||u_1(t)||",
            Amplitude::PeakToPeak => "max_t,s ||u(t) - u(s)||",
        }
    }
}

impl fmt::Display for Amplitude {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Amplitude {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Amplitude::ALL
            .into_iter()
            .find(|a| a.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown amplitude measure {s:?}: use max (with the static part), dynamic \
                     (about the mean), h1 (first harmonic) or pp (peak to peak)"
                )
            })
    }
}

/// Preconditioner `M ~ J` of the matrix-free (GMRES) Newton steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preconditioner {
    /// Block-Jacobi over contacts: each contact's exact diagonal block of `J` (its own
    /// Galerkin blocks with its self-receptance). Exact for one contact; blind to the
    /// coupling of contacts through the structure.
    Contact,
    /// Per harmonic, the Jacobian with period-averaged law derivatives
    /// ([`EwrResidual::averaged_harmonic_jacobians`]): all of the coupling through the
    /// structure, none of the time variation of stick and slip. One complex `m x m` LU per
    /// harmonic.
    Harmonic,
    /// Both, multiplicatively: the harmonic step, then the contact blocks on what is left
    /// (`M^-1 = H^-1 + B^-1 (I - J H^-1)`): one more `J x` per GMRES iteration. The
    /// harmonic factorisation is reused across Newton steps while GMRES stays short.
    #[default]
    TwoLevel,
}

impl std::str::FromStr for Preconditioner {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "contact" => Ok(Preconditioner::Contact),
            "harmonic" => Ok(Preconditioner::Harmonic),
            "two-level" => Ok(Preconditioner::TwoLevel),
            _ => Err(format!(
                "unknown preconditioner '{s}' (expected contact, harmonic or two-level)"
            )),
        }
    }
}

impl fmt::Display for Preconditioner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Preconditioner::Contact => "contact",
            Preconditioner::Harmonic => "harmonic",
            Preconditioner::TwoLevel => "two-level",
        })
    }
}

/// The residual scale `1 / (max mu N)^2`, or 1 when every bound is zero.
pub fn scaled_norm(params: &ContactParams) -> f64 {
    let m = params.mu_n.iter().copied().fold(0.0, f64::max);
    if m > 0.0 { 1.0 / (m * m) } else { 1.0 }
}

/// A periodic solution and what was done to get it.
#[derive(Clone, Debug)]
pub struct PointSolution {
    /// Fundamental circular frequency.
    pub omega: f64,
    /// The harmonic set of `friction`.
    pub set: HarmonicSet,
    /// Friction-force coefficients (hb block layout, signal `c * dim + k`).
    pub friction: Vec<f64>,
    /// Coefficients of the contacts' relative displacement, same layout.
    pub displacement: Vec<f64>,
    /// How the (last stage of the) Newton solve ended.
    pub status: NewtonStatus,
    /// Final scaled residual norm.
    pub residual: f64,
    /// Newton iterations over all ramp stages.
    pub iterations: usize,
    /// GMRES iterations over all ramp stages (0 when every solve was dense).
    pub krylov_iterations: usize,
    /// Factor on every contact's `rho` that the solution satisfies: 1 unless a retry with a
    /// scaled `rho` converged and the final solve with the original `rho` did not.
    pub rho_factor: f64,
    /// Sampled histories at the contacts.
    pub histories: ContactHistories,
    /// Per-contact summary.
    pub contacts: Vec<ContactSummary>,
    /// Response of the monitored DOFs.
    pub dofs: DofResponse,
    /// The truncation error of the amplitudes, where it was estimated
    /// ([`crate::estimate::truncation_error`]).
    pub estimate: Option<crate::estimate::Estimate>,
    /// Its Floquet multipliers, where they were computed ([`crate::stability::stability`]).
    pub stability: Option<crate::stability::Stability>,
}

impl PointSolution {
    /// Displacement histories of the monitored DOFs over one period at `n_samples` uniform
    /// samples, DOF-major (`i * n_samples + j`), synthesised from their coefficients.
    pub fn dof_histories(&self, n_samples: usize) -> Result<Vec<f64>, SolveError> {
        let mut out = vec![0.0; self.dofs.dofs.len() * n_samples];
        let mut sampler = ewr_hb::FourierSampler::new(self.set.clone(), n_samples)?;
        sampler.synthesize_many(&self.dofs.coeffs, &mut out)?;
        Ok(out)
    }

    /// Whether each contact sticks at each sample of [`Self::histories`], contact-major
    /// (`c * n_samples + j`): inside one of its stick intervals, the classification of the
    /// summaries.
    pub fn stick_flags(&self) -> Vec<bool> {
        let nt = self.histories.n_samples;
        let period = std::f64::consts::TAU / self.omega;
        let mut out = vec![false; self.contacts.len() * nt];
        for (c, summary) in self.contacts.iter().enumerate() {
            for j in 0..nt {
                let t = period * j as f64 / nt as f64;
                // An interval that wraps past the period ends after T: test t and t + T.
                out[c * nt + j] = summary.stick_intervals.iter().any(|iv| {
                    (iv[0] <= t && t <= iv[1]) || (iv[0] <= t + period && t + period <= iv[1])
                });
            }
        }
        out
    }

    /// The contacts stuck the whole period when the set has the static term: their mean
    /// friction force is then set by the path to the solution, not by the periodic equations
    /// (docs/contact-3d.md, pitfall 3).
    pub fn fully_stuck(&self) -> Vec<usize> {
        if !self.set.contains_zero() {
            return Vec::new();
        }
        let f = self.stick_fractions();
        (0..f.len()).filter(|&c| f[c] >= FULLY_STUCK).collect()
    }

    /// The fraction of the period each contact sticks (length of its stick intervals over
    /// the period).
    pub fn stick_fractions(&self) -> Vec<f64> {
        let period = std::f64::consts::TAU / self.omega;
        self.contacts
            .iter()
            .map(|c| {
                let stuck: f64 = c.stick_intervals.iter().map(|i| i[1] - i[0]).sum();
                // `+ 0.0`: an empty sum is -0.0, which would print as "-0%".
                (stuck / period).clamp(0.0, 1.0) + 0.0
            })
            .collect()
    }
}

/// The response of the monitored DOFs, recovered from the contact forces.
#[derive(Clone, Debug, Default)]
pub struct DofResponse {
    /// The DOFs, as in [`PointSettings::monitor`].
    pub dofs: Vec<usize>,
    /// Displacement coefficients per DOF (hb layout, DOF-major).
    pub coeffs: Vec<f64>,
    /// Amplitude of each DOF in the measure of [`PointSettings::amplitude`] (by default
    /// `max_t |u_i(t)|`).
    pub peak: Vec<f64>,
    /// Amplitude of the monitored DOFs together in that measure (by default
    /// `max_t sqrt(sum_i u_i(t)^2)`, the paper's "total amplitude").
    pub norm_peak: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    #[test]
    fn solve_error_messages_and_sources() {
        let start = SolveError::Start("3 entries, the system 4".into());
        assert_eq!(start.to_string(), "start vector: 3 entries, the system 4");
        assert!(start.source().is_none());
        let e = HarmonicSet::odd(4).unwrap_err();
        let wrapped = SolveError::from(e.clone());
        assert_eq!(wrapped.to_string(), format!("harmonics: {e}"));
        assert_eq!(wrapped.source().map(|s| s.to_string()), Some(e.to_string()));
    }
}
