//! Stability of a periodic solution by Hill's method on the E-WR equations linearised at it
//! (derivation, selection of the Floquet exponents and limits: docs/stability.md).
//!
//! A perturbation `e^{lambda t} p(t)`, `p` periodic on the solution's harmonic set, of the
//! forces and of the structure's states `q` (`M q'' + C q' + K q = B^T x`, from
//! [`ContactDynamics`]) satisfies the linearised law
//! `d_force x + d_motion y = 0` ([`Linearization`]) with `y = B q + R x` (displacement rows)
//! or its time derivative (velocity rows). With `d/dt -> lambda + D` (`D` the derivative on
//! the coefficients) and the states `U`, `Z = (lambda + D) U`, this is the pencil
//! `A z = lambda B z`, `z = (x, U, Z)`. At `lambda = 0` its force rows are Newton's Jacobian.
//! Its eigenvalues repeat every `i w` (or `2 i w` on odd sets); one per family is kept, the one
//! whose eigenvector's harmonic centroid is nearest zero, and the multipliers are
//! `exp(lambda T)`.

use crate::periodic::{PointSettings, PointSolution, SolveError};
use crate::point::Kind;
use ewr_contact::{ContactParams, Linearization, SignalBlocks};
use ewr_hb::HarmonicSet;
use ewr_hb::receptance::{ContactDynamics, HarmonicDynamics, Receptance};
use faer::linalg::solvers::{PartialPivLu, Solve};
use faer::{Mat, MatMut, MatRef, c64};

mod forces;
mod hessenberg;
use forces::ForceFactor;

/// Largest eigenproblem (states times coefficients, plus forces with a compliance) solved
/// whole by a dense eigensolve, `O(n^3)` (measured on the shipped models, one core: 0.06 s at
/// 186, 1.4 s at 1200, 17 s at 3000); [`floquet`] solves larger ones by Arnoldi.
pub const MAX_EIGEN_SIZE: usize = 1500;

/// Exponents with `|lambda|` above `RESOLVED_BAND (H + 1) w` vary faster than the highest
/// harmonic of the set resolves: they are left out of the classification. Measured: the
/// truncated stick/slip indicator of a Jenkins contact gives a real exponent of 9e5 at
/// `w = 1100`, `H = 7` on blade-damper-blade-3d, the time scale `rho_T / k_t` of the law; the
/// infinite eigenvalues of a stuck contact's index-3 constraint come out near 1e8.
pub const RESOLVED_BAND: f64 = 2.0;

/// `|mu| - 1` above which a multiplier is outside the unit circle: rounding of the
/// eigensolve is far below, a true crossing is found on both sides of it.
pub const UNSTABLE_ABOVE: f64 = 1e-6;

/// The Floquet multipliers of a periodic solution, as far as they decide its stability.
#[derive(Clone, Debug, PartialEq)]
pub struct Stability {
    /// Largest modulus of a Floquet multiplier `|exp(lambda T)|`; 0 where no exponent is
    /// within what the harmonics resolve (contacts stuck all period that hold every DOF).
    pub max_multiplier: f64,
    /// The Floquet exponent `lambda` (rad/s) of that multiplier, on the representative strip
    /// (real part minus infinity where there is none).
    pub exponent: c64,
    /// Multipliers outside the unit circle (a complex pair counts two).
    pub unstable: usize,
    /// Every kept exponent found, sorted by decreasing real part: all of them on problems
    /// solved whole ([`DENSE_EIGEN_UP_TO`]), those near the imaginary axis above.
    pub exponents: Vec<c64>,
    /// Exponents left out because `|lambda|` is beyond what the harmonics resolve
    /// ([`RESOLVED_BAND`]): fast structural modes, and artefacts of the truncated law
    /// where a row switches between stick and slip (docs/stability.md).
    pub unresolved: usize,
    /// A cyclic sector's solution, classified against the perturbations that keep its
    /// travelling wave only (other inter-sector phases are not checked: docs/stability.md,
    /// section 2); false on ordinary models and where every other phase was classified too
    /// ([`stability_all_phases`]).
    pub travelling_wave_only: bool,
    /// With [`stability_all_phases`]: each inter-sector phase's family, `p = 0` (the
    /// travelling wave's own) to `N / 2`; the fields above then cover all of them. Empty
    /// otherwise.
    pub phases: Vec<PhaseFamily>,
}

/// One family of a cyclic sector's perturbations: those whose inter-sector phase differs from
/// the travelling wave's by `+-2 pi p / N` ([`stability_family`]), classified or why not.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseFamily {
    /// The phase offset's index `p`.
    pub p: usize,
    /// Largest multiplier modulus of the family (`None`: not classified).
    pub max_multiplier: Option<f64>,
    /// Its multipliers outside the unit circle (`None`: not classified).
    pub unstable: Option<usize>,
    /// Why the family was not classified.
    pub reason: Option<String>,
}

impl Stability {
    /// True when no multiplier is outside the unit circle.
    pub fn is_stable(&self) -> bool {
        self.unstable == 0
    }

    /// The travelling wave's classification (`self`) joined with the other inter-sector
    /// phases' families: the largest multiplier and the count outside the unit circle over
    /// every family classified, and each family kept in `phases`.
    fn with_families(mut self, families: Vec<(usize, Result<Stability, StabilityError>)>) -> Self {
        let mut phases = vec![PhaseFamily {
            p: 0,
            max_multiplier: Some(self.max_multiplier),
            unstable: Some(self.unstable),
            reason: None,
        }];
        let mut every = true;
        for (p, family) in families {
            match family {
                Ok(f) => {
                    if f.max_multiplier > self.max_multiplier {
                        self.max_multiplier = f.max_multiplier;
                        self.exponent = f.exponent;
                    }
                    self.unstable += f.unstable;
                    self.unresolved += f.unresolved;
                    self.exponents.extend_from_slice(&f.exponents);
                    phases.push(PhaseFamily {
                        p,
                        max_multiplier: Some(f.max_multiplier),
                        unstable: Some(f.unstable),
                        reason: None,
                    });
                }
                Err(e) => {
                    every = false;
                    phases.push(PhaseFamily {
                        p,
                        max_multiplier: None,
                        unstable: None,
                        reason: Some(e.to_string()),
                    });
                }
            }
        }
        self.exponents.sort_by(|a, b| b.re.total_cmp(&a.re));
        self.travelling_wave_only = !every;
        self.phases = phases;
        self
    }
}

/// Why a solution could not be classified.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StabilityError {
    /// The model or backend has no time-domain form here (cyclic sectors, large direct ones).
    #[error("{0}")]
    Unsupported(String),
    /// The pencil has more than [`MAX_PENCIL_SIZE`] unknowns or [`MAX_FORCE_UNKNOWNS`] force
    /// unknowns (or, solved whole, the eigenproblem has more than [`MAX_EIGEN_SIZE`]).
    #[error(
        "the Hill eigenproblem has {size} unknowns, {forces} of them contact forces, more than \
         stability takes (at most {MAX_PENCIL_SIZE} unknowns, {MAX_FORCE_UNKNOWNS} forces): use \
         fewer harmonics, modes or contacts"
    )]
    TooLarge {
        /// Size of the eigenproblem.
        size: usize,
        /// Its contact-force unknowns.
        forces: usize,
    },
    /// The eigensolver failed.
    #[error("the Hill eigenproblem could not be solved: {0}")]
    Numerical(String),
    /// The contact system could not be evaluated at the solution.
    #[error(transparent)]
    Solve(#[from] SolveError),
}

/// Stability of `sol` (solved with `settings` on `rec`'s model with `params`), with the
/// structure as `dynamics` ([`Receptance::dynamics`], built once per model; on a cyclic sector
/// the structure of each harmonic's nodal diameter comes from `rec`).
pub fn stability(
    rec: &Receptance,
    dynamics: &ContactDynamics,
    params: &ContactParams,
    settings: &PointSettings,
    sol: &PointSolution,
) -> Result<Stability, StabilityError> {
    stability_by(rec, dynamics, params, settings, sol, EigenMethod::Auto)
}

/// [`stability`] with the eigensolver chosen (tests compare the two).
#[doc(hidden)]
pub fn stability_by(
    rec: &Receptance,
    dynamics: &ContactDynamics,
    params: &ContactParams,
    settings: &PointSettings,
    sol: &PointSolution,
    method: EigenMethod,
) -> Result<Stability, StabilityError> {
    let _t = crate::profile::span(crate::profile::Phase::Stability);
    let (per_harmonic, lin) = linearised(rec, dynamics, params, settings, sol)?;
    let pencil = Pencil::new(&per_harmonic, &lin, &sol.set, sol.omega)?;
    // The linearisation's dense matrices are not needed any more (0.65 GB each at 9000
    // forces).
    drop((lin, per_harmonic));
    let mut st = classify(&pencil, &sol.set, sol.omega, method)?;
    st.travelling_wave_only = dynamics.cyclic;
    Ok(st)
}

/// Every finite eigenvalue of the Hill pencil at `sol`, before the Floquet exponents are
/// selected (tests compare a cyclic sector's with its annulus's).
#[doc(hidden)]
pub fn hill_eigenvalues(
    rec: &Receptance,
    dynamics: &ContactDynamics,
    params: &ContactParams,
    settings: &PointSettings,
    sol: &PointSolution,
) -> Result<Vec<c64>, StabilityError> {
    let (per_harmonic, lin) = linearised(rec, dynamics, params, settings, sol)?;
    let pencil = Pencil::new(&per_harmonic, &lin, &sol.set, sol.omega)?;
    Ok(pencil.eigen(EigenMethod::Dense)?.0)
}

/// The structure at each harmonic of `sol`'s set (on a cyclic sector taken from `rec`: it
/// differs per nodal diameter), and the law linearised at `sol`.
fn linearised(
    rec: &Receptance,
    dynamics: &ContactDynamics,
    params: &ContactParams,
    settings: &PointSettings,
    sol: &PointSolution,
) -> Result<(Vec<HarmonicDynamics>, Linearization), StabilityError> {
    if !dynamics.cyclic {
        pencil_size_check(dynamics.n_states(), &sol.set, sol.friction.len())?;
    }
    let lin = law_at(rec, params, settings, sol)?;
    let harmonics = sol.set.harmonics().iter();
    let per_harmonic = if dynamics.cyclic {
        harmonics
            .map(|&h| rec.harmonic_dynamics(h, sol.omega))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| StabilityError::Unsupported(e.to_string()))?
    } else {
        harmonics
            .map(|&h| dynamics.harmonic(h, sol.omega))
            .collect()
    };
    Ok((per_harmonic, lin))
}

/// The law linearised at `sol`, with the solve's own samples (at `lambda = 0` the Hill matrix
/// is then its Jacobian).
fn law_at(
    rec: &Receptance,
    params: &ContactParams,
    settings: &PointSettings,
    sol: &PointSolution,
) -> Result<Linearization, StabilityError> {
    let at = rec
        .prepare(sol.omega, sol.set.harmonics())
        .map_err(SolveError::from)?;
    let kind = Kind::at(&at, params, settings)?;
    let n_samples = if sol.histories.n_samples > 0 {
        sol.histories.n_samples
    } else {
        ewr_hb::default_samples(&sol.set).max(settings.n_samples)
    };
    let mut sys = kind.system(&at, &sol.set, n_samples, sol.rho_factor)?;
    Ok(sys
        .inner
        .linearization(&sol.friction)
        .map_err(SolveError::from)?)
}

/// Stability of a cyclic sector's solution against the perturbations whose inter-sector
/// phase differs from the travelling wave's by `2 pi p / N` (families `p` and `-p` together;
/// `p = 0` is [`stability`]'s travelling-wave family): each harmonic's `+h w` component on
/// nodal diameter `h EO + p`, its `-h w` component on `-h EO + p`, in the real form doubled
/// into the real and imaginary parts of a complex perturbation (docs/stability.md,
/// section 2). The union over `p = 0 ..= N / 2` is the annulus's.
pub fn stability_family(
    rec: &Receptance,
    dynamics: &ContactDynamics,
    params: &ContactParams,
    settings: &PointSettings,
    sol: &PointSolution,
    p: usize,
) -> Result<Stability, StabilityError> {
    let lin = law_at(rec, params, settings, sol)?;
    let pencil = family_pencil(rec, dynamics, &lin, sol, p)?;
    classify(&pencil, &sol.set, sol.omega, EigenMethod::Auto)
}

/// [`stability_family`] for every other inter-sector phase, `p = 1 ..= N / 2`, with the law
/// linearised once (`ewr solve --all-phases`): each family's classification or why not.
#[allow(clippy::type_complexity)]
pub fn stability_families(
    rec: &Receptance,
    dynamics: &ContactDynamics,
    params: &ContactParams,
    settings: &PointSettings,
    sol: &PointSolution,
) -> Result<Vec<(usize, Result<Stability, StabilityError>)>, StabilityError> {
    let lin = law_at(rec, params, settings, sol)?;
    Ok(families_of(rec, dynamics, &lin, sol))
}

/// Each other inter-sector phase's family classified, for the law linearised as `lin`.
fn families_of(
    rec: &Receptance,
    dynamics: &ContactDynamics,
    lin: &Linearization,
    sol: &PointSolution,
) -> Vec<(usize, Result<Stability, StabilityError>)> {
    let sectors = rec.cyclic().map_or(0, |c| c.sectors);
    (1..=sectors / 2)
        .map(|p| {
            let st = family_pencil(rec, dynamics, lin, sol, p)
                .and_then(|pencil| classify(&pencil, &sol.set, sol.omega, EigenMethod::Auto));
            (p, st)
        })
        .collect()
}

/// The nodal diameters a cyclic sector's classification against every inter-sector phase
/// reaches on `set` ([`stability_all_phases`]): harmonic `h` of family `p` lives on `h EO + p`
/// and `-h EO + p` (modulo `N`), `p` from 0 to `N / 2`. Where `h EO` is a multiple of `N / 2`
/// for every `h`, that is about half the diameters (engine order 0: `0..=N / 2`).
pub fn phase_diameters(cyclic: &ewr_model::Cyclic, set: &HarmonicSet) -> Vec<usize> {
    let n = cyclic.sectors as i128;
    let mut nds: Vec<usize> = (0..=cyclic.sectors / 2)
        .flat_map(|p| {
            set.harmonics().iter().flat_map(move |&h| {
                let heo = h as i128 * cyclic.engine_order as i128;
                [heo, -heo].map(|x| (x + p as i128).rem_euclid(n) as usize)
            })
        })
        .collect();
    nds.sort_unstable();
    nds.dedup();
    nds
}

/// A curve's cyclic-sector classification, for files: per solution 1 where it was classified
/// against the perturbations that keep the travelling wave only, 0 against every
/// inter-sector phase, -1 not classified; `None` where none is a classified cyclic sector's.
pub fn travelling_wave_flags(sols: &[&PointSolution]) -> Option<Vec<i64>> {
    let cyclic = |st: &Stability| st.travelling_wave_only || !st.phases.is_empty();
    sols.iter()
        .any(|s| s.stability.as_ref().is_some_and(cyclic))
        .then(|| {
            sols.iter()
                .map(|s| {
                    s.stability
                        .as_ref()
                        .map_or(-1, |st| i64::from(st.travelling_wave_only))
                })
                .collect()
        })
}

/// A curve's families ([`stability_all_phases`]), for files: per solution and family `p = 0
/// ..= N / 2` (row-major, with that many columns) the largest multiplier, NaN where not
/// classified; `None` where no solution has its families.
pub fn phase_multipliers(sols: &[&PointSolution]) -> Option<(Vec<f64>, usize)> {
    let families = sols
        .iter()
        .filter_map(|s| s.stability.as_ref())
        .map(|st| st.phases.len())
        .max()
        .filter(|&n| n > 0)?;
    let mut m = vec![f64::NAN; sols.len() * families];
    for (row, s) in m.chunks_mut(families).zip(sols) {
        for f in s.stability.iter().flat_map(|st| &st.phases) {
            if let Some(x) = row.get_mut(f.p) {
                *x = f.max_multiplier.unwrap_or(f64::NAN);
            }
        }
    }
    Some((m, families))
}

/// [`stability`] of a cyclic sector's solution against every inter-sector phase of the
/// perturbation (`ewr solve|frc --all-phases`): the travelling wave's family and
/// [`stability_families`] joined, each family kept in [`Stability::phases`]. On an ordinary
/// model, [`stability`].
pub fn stability_all_phases(
    rec: &Receptance,
    dynamics: &ContactDynamics,
    params: &ContactParams,
    settings: &PointSettings,
    sol: &PointSolution,
) -> Result<Stability, StabilityError> {
    if !dynamics.cyclic {
        return stability(rec, dynamics, params, settings, sol);
    }
    let _t = crate::profile::span(crate::profile::Phase::Stability);
    // The law linearised once for the travelling wave's pencil and every other family's.
    let (per_harmonic, lin) = linearised(rec, dynamics, params, settings, sol)?;
    let families = families_of(rec, dynamics, &lin, sol);
    let pencil = Pencil::new(&per_harmonic, &lin, &sol.set, sol.omega)?;
    drop((lin, per_harmonic));
    let st = classify(&pencil, &sol.set, sol.omega, EigenMethod::Auto)?;
    Ok(st.with_families(families))
}

/// Every finite eigenvalue of [`stability_family`]'s pencil (tests compare the union over
/// the families with the annulus's).
#[doc(hidden)]
pub fn hill_eigenvalues_family(
    rec: &Receptance,
    dynamics: &ContactDynamics,
    params: &ContactParams,
    settings: &PointSettings,
    sol: &PointSolution,
    p: usize,
) -> Result<Vec<c64>, StabilityError> {
    let lin = law_at(rec, params, settings, sol)?;
    let pencil = family_pencil(rec, dynamics, &lin, sol, p)?;
    Ok(pencil.eigen(EigenMethod::Dense)?.0)
}

/// The doubled pencil of [`stability_family`], of the law linearised at `sol` as `lin`.
fn family_pencil(
    rec: &Receptance,
    dynamics: &ContactDynamics,
    lin: &Linearization,
    sol: &PointSolution,
    p: usize,
) -> Result<Pencil, StabilityError> {
    let (Some(cy), true) = (rec.cyclic(), dynamics.cyclic) else {
        return Err(StabilityError::Unsupported(
            "perturbation families of other inter-sector phases belong to cyclic sectors".into(),
        ));
    };
    let n = cy.sectors as i128;
    let nd = |h: i128| (h * cy.engine_order as i128 + p as i128).rem_euclid(n) as usize;
    let unsupported = |e: ewr_hb::ReceptanceError| StabilityError::Unsupported(e.to_string());
    if (2 * p).is_multiple_of(cy.sectors) {
        // p = 0 or N / 2: the -h w component lives on the conjugate diameter (z- = conj z+),
        // the copies would not couple and every eigenvalue would come twice (which the dense
        // eigensolve takes minutes over): one copy, the real form of section 2.
        let per_harmonic = sol
            .set
            .harmonics()
            .iter()
            .map(|&h| rec.nodal_dynamics(nd(h as i128), h, sol.omega, false))
            .collect::<Result<Vec<_>, _>>()
            .map_err(unsupported)?;
        return Pencil::new(&per_harmonic, lin, &sol.set, sol.omega);
    }
    let per_harmonic = sol
        .set
        .harmonics()
        .iter()
        .map(|&h| {
            let plus = rec.nodal_dynamics(nd(h as i128), h, sol.omega, false);
            let minus = rec.nodal_dynamics(nd(-(h as i128)), h, sol.omega, true);
            Ok(doubled(
                &plus.map_err(unsupported)?,
                &minus.map_err(unsupported)?,
            ))
        })
        .collect::<Result<Vec<_>, StabilityError>>()?;
    // Refused before the doubled pencil is allocated.
    let nq = per_harmonic.first().map_or(0, |d| d.contacts.ncols());
    pencil_size_check(nq, &sol.set, 2 * lin.d_force.nrows())?;
    let lin = doubled_law(lin);
    let mut pencil = Pencil::new(&per_harmonic, &lin, &sol.set, sol.omega)?;
    // One vector a step: with blocks these pencils' multipliers moved by up to 4e-3 (a
    // family read off other members) and lost the symmetry between phases that the
    // one-vector Arnoldi shows (docs/stability.md, "Block Arnoldi").
    pencil.krylov_blocks = false;
    Ok(pencil)
}

/// The real form of a complex perturbation, `(Re, Im)` copies of every state and contact row
/// stacked: a pair of entries `z+` (acting on the `+h w` component) and `z-` (on `-h w`)
/// becomes the block `[[P, -Q], [Q, P]]` over the copies, `P = Re s + i Im d`,
/// `Q = Im s - i Re d`, `s = (z+ + z-) / 2`, `d = (z+ - z-) / 2`, which the pencil's `2 x 2`
/// blocks then act with on each copy's `(a, b)` (docs/stability.md, section 2). A travelling
/// wave (`z- = conj z+`) gives `P = z+`, `Q = 0`: two uncoupled copies.
fn doubled(plus: &HarmonicDynamics, minus: &HarmonicDynamics) -> HarmonicDynamics {
    let pair = |a: &Mat<c64>, b: &Mat<c64>| {
        let (r, c) = (a.nrows(), a.ncols());
        Mat::from_fn(2 * r, 2 * c, |i, j| {
            let (zp, zm) = (a[(i % r, j % c)], b[(i % r, j % c)]);
            let (sum, diff) = ((zp + zm) * 0.5, (zp - zm) * 0.5);
            let pp = c64::new(sum.re, diff.im);
            let qq = c64::new(sum.im, -diff.re);
            match (i < r, j < c) {
                (true, true) | (false, false) => pp,
                (true, false) => -qq,
                (false, true) => qq,
            }
        })
    };
    // The hysteretic factor differs between the two components: folded into K.
    let stiff = |d: &HarmonicDynamics| {
        let f = c64::new(1.0, d.eta);
        Mat::from_fn(d.stiffness.nrows(), d.stiffness.ncols(), |i, j| {
            f * d.stiffness[(i, j)]
        })
    };
    HarmonicDynamics {
        mass: pair(&plus.mass, &minus.mass),
        damping: pair(&plus.damping, &minus.damping),
        stiffness: pair(&stiff(plus), &stiff(minus)),
        eta: 0.0,
        contacts: pair(&plus.contacts, &minus.contacts),
        flexibility: pair(&plus.flexibility, &minus.flexibility),
    }
}

/// The law's linearisation on the `(Re, Im)` copies of every signal: the same real operator
/// on each.
fn doubled_law(lin: &Linearization) -> Linearization {
    let block = |a: &SignalBlocks| {
        let m = a.signals();
        let mut out = SignalBlocks::new(2 * m, a.coefficients());
        for copy in [0, m] {
            for (r, c, b) in a.blocks() {
                out.push(r + copy, c + copy, b.to_owned());
            }
        }
        out
    };
    Linearization {
        d_force: block(&lin.d_force),
        d_motion: block(&lin.d_motion),
        velocity: [lin.velocity.clone(), lin.velocity.clone()].concat(),
        stuck_rows: [lin.stuck_rows.clone(), lin.stuck_rows.clone()].concat(),
    }
}

/// Unknowns of the pencil of a structure with `nq` states on `set` with `n_force` force
/// unknowns (forces, then the displacement and velocity states of every coefficient).
pub(crate) fn pencil_unknowns(nq: usize, set: &HarmonicSet, n_force: usize) -> usize {
    n_force + 2 * nq * set.n_coeffs()
}

/// Refuses, before anything is allocated, a pencil above [`MAX_PENCIL_SIZE`] unknowns or
/// [`MAX_FORCE_UNKNOWNS`] force unknowns.
fn pencil_size_check(nq: usize, set: &HarmonicSet, n_force: usize) -> Result<(), StabilityError> {
    let n = pencil_unknowns(nq, set, n_force);
    if n > MAX_PENCIL_SIZE || n_force > MAX_FORCE_UNKNOWNS {
        return Err(StabilityError::TooLarge {
            size: n,
            forces: n_force,
        });
    }
    Ok(())
}

/// Most unknowns of the pencil (forces plus states): the Arnoldi basis is `n x 600` (`n x
/// 1208` grown by blocks), about 190 MB (390 MB) at this size.
pub const MAX_PENCIL_SIZE: usize = 40_000;

/// Most force unknowns: the forces' rows of the pencil and their Schur complement are dense,
/// two `n x n` matrices (about 1.3 GB) and their factors at this size (a 200-contact 3-D
/// interface at all:7: 9000).
pub const MAX_FORCE_UNKNOWNS: usize = 9000;

/// Floquet exponents of the linearisation `lin` at fundamental `omega` on `set`.
pub fn floquet(
    dynamics: &ContactDynamics,
    lin: &Linearization,
    set: &HarmonicSet,
    omega: f64,
) -> Result<Stability, StabilityError> {
    floquet_by(dynamics, lin, set, omega, EigenMethod::Auto)
}

/// [`floquet`] with the eigensolver chosen (tests compare the two).
#[doc(hidden)]
pub fn floquet_by(
    dynamics: &ContactDynamics,
    lin: &Linearization,
    set: &HarmonicSet,
    omega: f64,
    method: EigenMethod,
) -> Result<Stability, StabilityError> {
    if dynamics.cyclic {
        return Err(StabilityError::Unsupported(
            "a cyclic sector's structure differs per harmonic: use `stability`, which takes it \
             from the receptance"
                .into(),
        ));
    }
    let _t = crate::profile::span(crate::profile::Phase::Stability);
    pencil_size_check(dynamics.n_states(), set, lin.d_force.nrows())?;
    let per_harmonic: Vec<HarmonicDynamics> = set
        .harmonics()
        .iter()
        .map(|&h| dynamics.harmonic(h, omega))
        .collect();
    let pencil = Pencil::new(&per_harmonic, lin, set, omega)?;
    classify(&pencil, set, omega, method)
}

/// The Floquet exponents of `pencil`: its eigenvalues near the axis (or all), then one per
/// family.
fn classify(
    pencil: &Pencil,
    set: &HarmonicSet,
    omega: f64,
    method: EigenMethod,
) -> Result<Stability, StabilityError> {
    let found = select(pencil, pencil.eigen(method)?, set, omega);
    let small = (DENSE_EIGEN_UP_TO + 1..=MAX_EIGEN_SIZE).contains(&pencil.b_cols.len());
    match (found, method) {
        // Arnoldi met no family near the axis, or only through copies of members off their
        // centre: the modes lie far above the excitation (their members near the axis more
        // than H / 2 spacings off-centre: two-mass-damper stuck at w = 0.2, all:9). The whole
        // spectrum has their centred members.
        (Err(StabilityError::Numerical(_)), EigenMethod::Auto) if small => {
            Ok(select(pencil, pencil.eigen(EigenMethod::Dense)?, set, omega)?.0)
        }
        // Arnoldi's answer stands where the whole spectrum cannot be had (every shift fails
        // its conditioning test, as on the area contact at 5240 rad/s).
        (Ok((arnoldi, true)), EigenMethod::Auto) if small => Ok(pencil
            .eigen(EigenMethod::Dense)
            .and_then(|e| select(pencil, e, set, omega))
            .map_or(arnoldi, |(st, _)| st)),
        (found, _) => found.map(|(st, _)| st),
    }
}

/// The Floquet exponents among the pencil's eigenpairs `(lambdas, vectors)`, and whether every
/// family was known by its copies alone ([`by_members`]).
fn select(
    pencil: &Pencil,
    (lambdas, vectors): (Vec<c64>, Mat<c64>),
    set: &HarmonicSet,
    omega: f64,
) -> Result<(Stability, bool), StabilityError> {
    let spacing = family_spacing(set) as f64;
    let resolved = RESOLVED_BAND * (set.h_max() + 1) as f64 * omega;
    // (exponent, read from its centred member) per family.
    let mut families: Vec<(c64, bool)> = Vec::new();
    let mut unresolved = 0;
    // Resolved eigenvalues that stand for no family.
    let mut unplaced = 0;
    // Members of one family read from different members differ by the truncation (about 1 %
    // of the real part): one exponent per family, the centred member's if found.
    let same = |q: &c64, l: &c64| {
        (q.re - l.re).abs() <= 0.05 * q.re.abs().max(1e-9 * omega)
            && (q.im - l.im).abs() <= 0.05 * omega
    };
    // Eigenvalues whose centroid names no member, for the second pass.
    let mut between = Vec::new();
    for (k, &l) in lambdas.iter().enumerate() {
        let z: Vec<c64> = vectors.col(k).iter().copied().collect();
        let c = pencil.centroid(&z);
        let Some((l, centred)) = representative(l, c, spacing, omega, set.h_max()) else {
            if l.norm() <= resolved {
                between.push((l, c));
            }
            continue;
        };
        if l.norm() > resolved {
            unresolved += 1;
            continue;
        }
        match families.iter().position(|(q, _)| same(q, &l)) {
            None => families.push((l, centred)),
            Some(i) if centred && !families[i].1 => families[i] = (l, true),
            Some(_) => {}
        }
    }
    let first_pass = families.len();
    // A family no member's centroid names, known by copies of it that agree ([`by_members`]);
    // of its members, the one nearest its centre stands for it, whichever method found them.
    let mut by_copies: Vec<(c64, f64)> = Vec::new();
    for (l, c) in between {
        match by_members(l, c, &lambdas, spacing, omega, set.h_max()) {
            Some(l) => by_copies.push((l, c.abs())),
            None => unplaced += 1,
        }
    }
    by_copies.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.im.total_cmp(&b.0.im)));
    for (l, _) in by_copies {
        if !families.iter().any(|(q, _)| same(q, &l)) {
            families.push((l, false));
        }
    }
    let copies_only = first_pass == 0 && !families.is_empty();
    let mut kept: Vec<c64> = families.into_iter().map(|(l, _)| l).collect();
    if kept.is_empty() && unplaced == 0 && unresolved > 0 {
        // Every exponent is beyond what the harmonics resolve (the constraints of contacts
        // stuck all period that hold every DOF: 1e8 on oscillator-2d): no free motion the
        // harmonics see, stable as far as they resolve, as the left-out exponents are
        // everywhere else.
        return Ok((
            Stability {
                max_multiplier: 0.0,
                exponent: c64::new(f64::NEG_INFINITY, 0.0),
                unstable: 0,
                exponents: Vec::new(),
                unresolved,
                travelling_wave_only: false,
                phases: Vec::new(),
            },
            false,
        ));
    }
    if kept.is_empty() {
        return Err(StabilityError::Numerical(
            "no Floquet exponent was found on the representative strip".into(),
        ));
    }
    kept.sort_by(|a, b| b.re.total_cmp(&a.re));
    let period = std::f64::consts::TAU / omega;

    let unstable = kept
        .iter()
        .filter(|l| (l.re * period).exp() - 1.0 > UNSTABLE_ABOVE)
        .count();
    Ok((
        Stability {
            max_multiplier: (kept[0].re * period).exp(),
            exponent: kept[0],
            unstable,
            exponents: kept,
            unresolved,
            travelling_wave_only: false,
            phases: Vec::new(),
        },
        copies_only,
    ))
}

/// The exponent that eigenvalue `l` (eigenvector centroid `c`) stands for, and whether it is
/// its family's centred member; `None` for members that stand for no family reliably.
///
/// The centred member (`|c|` within half a spacing of 0) is the family's most accurate one
/// (Lazarus & Thomas 2010). A structural mode far above the excitation has its centred member
/// near its own frequency, where Arnoldi does not look, and the truncated problem may have
/// none: on blade-damper-blade-3d at `w = 1370`, all:15, the least damped family (multiplier
/// 0.919; `ewr simulate` measures 0.90) had no centred member and the centroid rule alone
/// reported 0.668. A member inside the strip whose eigenvector sits clearly on a whole number
/// of spacings, well inside the harmonic window, stands for it, moved by that many spacings
/// (the multiplier is the same). Members at the strip's edge (multipliers through -1) are left
/// to the centroid alone (docs/stability.md, pitfall 4).
fn representative(l: c64, c: f64, spacing: f64, omega: f64, h_max: usize) -> Option<(c64, bool)> {
    if c.abs() <= 0.5 * spacing + 1e-9 {
        return Some((l, true));
    }
    let shift = (c / spacing).round() * spacing;
    let half = 0.5 * spacing * omega;
    let at_edge = (l.im.abs() - half).abs() < 1e-6 * half;
    let inside = shift.abs() <= 0.5 * h_max as f64;
    // A centroid between two shifts belongs to no family clearly (measured: such members
    // matched none of the whole spectrum's representatives).
    let clear = (c - shift).abs() <= 0.25 * spacing;
    (l.im.abs() <= half && !at_edge && inside && clear)
        .then(|| (l + c64::new(0.0, shift * omega), false))
}

/// The exponent that eigenvalue `l` stands for when its centroid names no member (between two
/// shifts): where another eigenvalue found is a member of its family, or of the conjugate
/// family, a nonzero whole number of spacings away with the same real part to
/// [`MEMBERS_AGREE`], `l` moved into the strip.
///
/// All members of a family share the real part in the infinite problem, and the truncation
/// moves those it resolves by about 1 % (section 3 of docs/stability.md); an artefact of the
/// truncation has no such copy. On the CalculiX area contact at 5240 rad/s the resonant mode's
/// family (three members, real parts -0.01590, -0.01595, -0.01581 w) has centroids 0.57-0.69
/// on every member found: the centroid rule dropped it and reported 0.748 (or 0.253, by which
/// members Arnoldi had reached), where `ewr simulate` measures about 0.9 per period and this
/// family's multiplier is 0.905.
fn by_members(
    l: c64,
    c: f64,
    lambdas: &[c64],
    spacing: f64,
    omega: f64,
    h_max: usize,
) -> Option<c64> {
    // As for a clear shift: an eigenvector centred beyond half the harmonic window is the
    // window's edge, whose members agree trivially where the structure is linear (a contact
    // stuck all period) but stand for modes the harmonics do not reach.
    if c.abs() > 0.5 * h_max as f64 {
        return None;
    }
    let step = spacing * omega;
    // Only what Arnoldi sees: eigenvalues within a spacing of its first shift, so that it
    // and the whole spectrum read the same members.
    let seen = |q: &c64| (*q - c64::new(KRYLOV_SHIFTS[0] * step, 0.0)).norm() < step;
    if !seen(&l) {
        return None;
    }
    let shift = (l.im / step).round();
    let moved = l - c64::new(0.0, shift * step);
    // Families near the strip's edge (multipliers through -1) stay out: on single-contact-3d
    // their members at `Im = 0.49999 w` and `1.49997 w` agree (multipliers -1.5 to -2.3)
    // where `ewr simulate` stays on the solution (pitfall 4).
    if moved.im.abs() > EDGE_MARGIN * 0.5 * step {
        return None;
    }
    // `l` and its conjugate are no evidence: a real pencil always has both.
    let itself = |q: &c64| {
        let tiny = 1e-9 * l.norm().max(omega);
        (*q - l).norm() <= tiny || (*q - l.conj()).norm() <= tiny
    };
    // One copy suffices; the copies above the real axis are read, so that a copy and its
    // conjugate count once.
    let copied = lambdas.iter().any(|q| {
        q.im >= 0.0
            && seen(q)
            && !itself(q)
            && (q.re - l.re).abs() <= MEMBERS_AGREE * l.re.abs().max(1e-9 * omega)
            && [l.im, -l.im].iter().any(|&im| {
                let k = ((q.im - im) / step).round();
                k != 0.0 && (q.im - im - k * step).abs() <= MEMBERS_ALIGNED * step
            })
    });
    copied.then_some(moved)
}

/// Spacing of the harmonics a perturbation's family is shifted by: 2 on a set of odd
/// harmonics (a shift by one would leave it), 1 otherwise.
fn family_spacing(set: &HarmonicSet) -> usize {
    if set.all_odd() { 2 } else { 1 }
}

/// The real pencil `A z = lambda B z` of Hill's method, `z = (x, U, Z)`, kept in blocks.
///
/// The structure's rows couple only within one harmonic (`D`, `M`, `C` and `K (1 + i eta_h)`
/// act per harmonic) and read the forces through `W^T`; the force rows read the states through
/// `d_motion (W x I)`, kept factored; only the force-force blocks are dense. A
/// shift is inverted by eliminating the states harmonic by harmonic, which leaves a Schur
/// complement on the forces: Newton's Jacobian with the receptance at `s = sigma + i h w`
/// ([`Shifted`]). Its cost grows with the force unknowns, not with the modes or DOFs.
struct Pencil {
    /// The law's derivatives in the forces: with the flexibility terms (from `motion` and
    /// `flex`) `A` on force rows and force columns, built dense per shift
    /// ([`Pencil::a_forces`]) rather than kept (`forces x forces`, 648 MB at 9000).
    d_force: SignalBlocks,
    /// Per harmonic, `R_h` (contact rows x contact rows): `B` on force rows and force columns
    /// is `-d_motion R_h` on velocity rows, kept factored (dense it is `forces x forces`,
    /// read at every Arnoldi step).
    flex: Vec<Mat<c64>>,
    /// Largest entry of `B`.
    b_max: f64,
    /// `A` on force rows and state columns (`B` is zero there), `d_motion` times the contact
    /// rows' motion `B_h` per harmonic: per nonzero block of `d_motion`, its row and column
    /// signals, the states it reads (0: `U`, 1: `Z`) and the block. Kept factored: dense it is
    /// `forces x states`, 28 MB on a 26-contact 3-D interface with 100 modes at all:7 and
    /// read at every Arnoldi step.
    motion: Vec<(usize, usize, usize, Mat<f64>)>,
    /// Per contact row, the indices of `motion`'s blocks on its rows, in their order: the
    /// scatters into the dense complement run one contact row per task.
    motion_rows: Vec<Vec<usize>>,
    /// The states' rows, one block per harmonic.
    blocks: Vec<StateBlock>,
    /// Contact rows.
    m: usize,
    /// Per contact row (signal): its law's coefficients are the same over the whole period
    /// (its blocks of `d_force` and `d_motion` couple no two harmonics), so its rows of the
    /// forces' Schur complement are zero between harmonics ([`forces`]).
    invariant: Vec<bool>,
    /// Per state unknown (offset from the first state): its block and place in it.
    state_at: Vec<(usize, usize)>,
    /// Whether Arnoldi may grow its space by blocks on this pencil ([`Pencil::eigen_krylov`]).
    krylov_blocks: bool,
    /// The columns where `B` is not zero (the eigenproblem's size is their count).
    b_cols: Vec<usize>,
    /// Coefficients per signal.
    nco: usize,
    /// Per coefficient: its harmonic, and whether it is a sine.
    coeffs: Vec<(usize, bool)>,
    /// Force unknowns (`signals * nco`); states `U` and `Z` follow (`nq * nco` each).
    n_force: usize,
    nq: usize,
    /// Frequency scale of the dense method's shifts: the fundamental times the highest
    /// harmonic.
    omega_scale: f64,
    /// The fundamental, and the spacing of the harmonics a family is shifted by.
    omega: f64,
    spacing: usize,
}

/// The states' rows of one harmonic: `lambda U = Z - D U` and
/// `lambda M Z = -K (1 + i eta_h) U - C Z - M D Z + B_h^H x`.
struct StateBlock {
    /// The harmonic's first coefficient, and its coefficients (1 for `h = 0`, else 2).
    p: usize,
    width: usize,
    /// Its state unknowns (offsets from the first state): `U_i` then `Z_i`, coefficient
    /// `j`, at `(state * width + j)`.
    idx: Vec<usize>,
    /// `A` and `B` on those rows and columns.
    a: Mat<f64>,
    b: Mat<f64>,
    /// `B_h` (contact rows x states): the contact rows' motion, complex on a cyclic sector.
    contacts: Mat<c64>,
    /// The force columns this harmonic's `Z` rows read: contact row `s`, coefficient `j` at
    /// local column `s * width + j`.
    cols: Vec<usize>,
}

impl StateBlock {
    /// `A` on this block's rows and the force columns of `cols`: `B_h^H` on the
    /// `Z` rows.
    fn a_forces(&self, nq: usize) -> Mat<f64> {
        let (m, w) = (self.contacts.nrows(), self.width);
        let mut out = Mat::<f64>::zeros(self.idx.len(), m * w);
        for i in 0..nq {
            for s in 0..m {
                let c = self.contacts[(s, i)].conj();
                if w == 1 {
                    out[(nq + i, s)] = c.re;
                } else {
                    let blk = complex_block(c);
                    for a in 0..2 {
                        for b in 0..2 {
                            out[((nq + i) * 2 + a, s * 2 + b)] = blk[a][b];
                        }
                    }
                }
            }
        }
        out
    }

    /// Largest real or imaginary part of `B_h` (entries of `A`).
    fn contacts_max(&self) -> f64 {
        let b = &self.contacts;
        (0..b.ncols())
            .flat_map(|j| (0..b.nrows()).map(move |i| b[(i, j)]))
            .fold(0.0, |a: f64, z| a.max(z.re.abs()).max(z.im.abs()))
    }
}

/// `A - sigma B` factorised by blocks: each harmonic's states, then the Schur complement on
/// the forces.
struct Shifted<'p> {
    pencil: &'p Pencil,
    /// Per harmonic: the LU of its states' block, and that block's inverse times `A` on the
    /// forces it reads.
    blocks: Vec<(PartialPivLu<f64>, Mat<f64>)>,
    /// The Schur complement on the forces.
    schur: ForceFactor,
    /// Where the complement's `F_Vk` are applied by the pencil's blocks instead of dense.
    reads: Option<VaryingReads>,
    /// Largest entry of `A - sigma B`, for the condition test.
    a_max: f64,
}

/// What the time-varying contact rows read of the invariant forces, kept on the contact rows
/// they read: `F_Vk` (rows of the varying signals, columns of the invariant ones on harmonic
/// `k`) is `d_force` plus `d_motion` times the motion of a few contact rows, which
/// `receptance[k]` gives from those columns. Its rows are the contact rows read (times the
/// harmonic's coefficients) where `F_Vk`'s are every coefficient of every varying signal
/// (docs/stability.md, "What the invariant and the varying rows read").
struct VaryingReads {
    /// Per contact row: its place among the rows read (`usize::MAX`: not read).
    place: Vec<usize>,
    /// Per harmonic block: the invariant force unknowns on it (the columns of `F_Vk`).
    cols: Vec<Vec<usize>>,
    /// Per harmonic block and kind (`U`, `Z`): the read rows' motion from `cols`, row
    /// `place width + j`, the terms of the dense complement ([`Pencil::shifted`]):
    /// `R_h` (times `sigma + i h w` for velocities) less the states' `B_h S_h^{-1} A_sx,h`.
    receptance: Vec<[Mat<f64>; 2]>,
}

impl VaryingReads {
    /// The contact rows the varying signals' `d_motion` blocks read.
    fn rows_read(p: &Pencil) -> (Vec<usize>, Vec<usize>) {
        let mut place = vec![usize::MAX; p.m];
        let mut read = Vec::new();
        for (row, col, _, _) in &p.motion {
            if !p.invariant[*row] && place[*col] == usize::MAX {
                place[*col] = read.len();
                read.push(*col);
            }
        }
        (read, place)
    }

    /// Bytes of `receptance` for `read` rows.
    fn bytes(p: &Pencil, read: usize) -> usize {
        let invariant = p.invariant.iter().filter(|&&i| i).count();
        p.blocks
            .iter()
            .map(|b| 2 * read * b.width * invariant * b.width * std::mem::size_of::<f64>())
            .sum()
    }

    /// For the shift `sigma`, from the states' eliminated blocks `blocks` (each harmonic's LU
    /// and `S_h^{-1} A_sx,h`) and the rows [`VaryingReads::rows_read`] gives.
    fn new(
        p: &Pencil,
        blocks: &[(PartialPivLu<f64>, Mat<f64>)],
        sigma: f64,
        (read, place): (Vec<usize>, Vec<usize>),
    ) -> Self {
        let (nq, nr) = (p.nq, read.len());
        let invariant: Vec<usize> = (0..p.m).filter(|&s| p.invariant[s]).collect();
        let mut cols = Vec::with_capacity(p.blocks.len());
        let mut receptance = Vec::with_capacity(p.blocks.len());
        for (k, blk) in p.blocks.iter().enumerate() {
            let (at, width) = (blk.p, blk.width);
            let h = p.coeffs[at].0 as f64;
            cols.push(p.invariant_unknowns(blk));
            // The states' `S_h^{-1} A_sx,h` on the invariant forces' local columns (`s width
            // + j` in `blk.cols`' order).
            let local: Vec<usize> = invariant
                .iter()
                .flat_map(|&s| (0..width).map(move |j| s * width + j))
                .collect();
            let coupled = &blocks[k].1;
            let contacts = Mat::from_fn(nr, nq, |i, q| blk.contacts[(read[i], q)]);
            let kinds = [0, 1].map(|kind| {
                // The complex state `X = a - i b` per real column, then the read rows' motion.
                let states = Mat::from_fn(nq, local.len(), |q, c| {
                    let row = (kind * nq + q) * width;
                    if width == 1 {
                        c64::new(coupled[(row, local[c])], 0.0)
                    } else {
                        c64::new(coupled[(row, local[c])], -coupled[(row + 1, local[c])])
                    }
                });
                let motion = &contacts * &states;
                let factor = if kind == 1 {
                    c64::new(sigma, h * p.omega)
                } else {
                    c64::new(1.0, 0.0)
                };
                let mut out = Mat::<f64>::zeros(nr * width, local.len());
                for (c, &l) in local.iter().enumerate() {
                    let (s, j) = (invariant[c / width], l % width);
                    for i in 0..nr {
                        // A unit `a` is `X = 1`, a unit `b` is `X = -i`.
                        let unit = if j == 0 {
                            c64::new(1.0, 0.0)
                        } else {
                            c64::new(0.0, -1.0)
                        };
                        let v = factor * p.flex[k][(read[i], s)] * unit - motion[(i, c)];
                        out[(i * width, c)] = v.re;
                        if width == 2 {
                            out[(i * width + 1, c)] = -v.im;
                        }
                    }
                }
                out
            });
            receptance.push(kinds);
        }
        VaryingReads {
            place,
            cols,
            receptance,
        }
    }

    /// `F x` on the rows of the varying signals (the others zero), for `x` zero on the
    /// varying signals' unknowns: `d_force`, then `d_motion` times the read rows' motion.
    fn apply(&self, p: &Pencil, x: MatRef<'_, f64>) -> Mat<f64> {
        use faer::linalg::matmul::matmul;
        let (nf, nco) = (p.n_force, p.nco);
        let r = x.ncols();
        let par = forces::par_for(r);
        let nr = self.place.iter().filter(|&&i| i != usize::MAX).count();
        let mut out = Mat::<f64>::zeros(nf, r);
        // (`x` is zero on the varying signals' unknowns.)
        for (row, col, blk) in p.d_force.blocks() {
            if !p.invariant[row] && p.invariant[col] {
                matmul(
                    out.as_mut().subrows_mut(row * nco, nco),
                    faer::Accum::Add,
                    blk,
                    x.subrows(col * nco, nco),
                    1.0,
                    faer::Par::Seq,
                );
            }
        }
        // Per kind: the read rows' motion, laid out as the forces (`place nco + j`).
        let mut motion = [
            Mat::<f64>::zeros(nr * nco, r),
            Mat::<f64>::zeros(nr * nco, r),
        ];
        for ((blk, cols), receptance) in p.blocks.iter().zip(&self.cols).zip(&self.receptance) {
            let (at, width) = (blk.p, blk.width);
            let xk = gather_rows(x, cols, 0);
            for (motion, m) in motion.iter_mut().zip(receptance) {
                let mut y = Mat::<f64>::zeros(m.nrows(), r);
                matmul(y.as_mut(), faer::Accum::Replace, m, &xk, 1.0, par);
                for c in 0..r {
                    for i in 0..nr {
                        for j in 0..width {
                            motion[(i * nco + at + j, c)] = y[(i * width + j, c)];
                        }
                    }
                }
            }
        }
        for (row, col, kind, dm) in &p.motion {
            if !p.invariant[*row] {
                matmul(
                    out.as_mut().subrows_mut(row * nco, nco),
                    faer::Accum::Add,
                    dm,
                    motion[*kind].as_ref().subrows(self.place[*col] * nco, nco),
                    1.0,
                    faer::Par::Seq,
                );
            }
        }
        out
    }
}

/// How the pencil's eigenvalues are found ([`floquet_by`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub enum EigenMethod {
    /// Dense up to [`DENSE_EIGEN_UP_TO`] unknowns, Arnoldi above.
    Auto,
    /// Every eigenvalue by one dense eigensolve.
    Dense,
    /// The eigenvalues near the imaginary axis by Arnoldi.
    Krylov,
}

/// Eigenproblems up to this size (unknowns on `B`'s columns) are solved whole by a dense
/// eigensolve; larger ones by Arnoldi, whose cost is one LU and a few hundred solves
/// (measured: docs/performance.md, "Stability").
pub const DENSE_EIGEN_UP_TO: usize = 120;

/// Arnoldi steps before the first look at the Ritz values; then 1.5 times more each time.
const KRYLOV_FIRST: usize = 60;

/// Entries of a slab of `B_xx` built at once to find its nonzero columns.
const BXX_SLAB_ENTRIES: usize = 1 << 20;

/// Vectors per Arnoldi step on pencils of [`KRYLOV_BLOCK_FROM`] unknowns and more.
const KRYLOV_BLOCK: usize = 8;

/// Pencils from this size grow their Krylov space by blocks ([`Pencil::eigen_krylov`]).
const KRYLOV_BLOCK_FROM: usize = 2000;

/// Most vectors of a block Krylov space: a block space needs more vectors than a single
/// vector's for the same Ritz values (measured: docs/stability.md, "Cost").
const KRYLOV_MAX_BLOCKED: usize = 1200;

/// Most Arnoldi steps one vector at a time: beyond, the point is not classified (the basis is
/// `n x 600`), unless a smaller disc is covered ([`KRYLOV_LAST_DISC`]).
const KRYLOV_MAX: usize = 600;

/// Relative residual `|H_next y_last| / (|y| |theta|)` of a converged Ritz pair (one vector a
/// step: `|beta y_m| / (|y| |theta|)`): its exponent is then good to about this times
/// `|lambda - sigma|`, far below the flag's `UNSTABLE_ABOVE`.
const KRYLOV_TOL: f64 = 1e-10;

/// Relative residual to which the first Ritz value beyond the wanted disc must have converged
/// for the disc to count as covered: that value only has to be placed outside, and is not
/// kept. The copies of the near-neutral families one spacing up (`|lambda - sigma| = 1.0019
/// s w` for the first shift) sit just beyond the disc, a cluster that reaches `1e-10` long
/// after everything inside: the README's 3-D sector solved at 3440 rad/s had every value
/// inside converged at `m = 688` and the first beyond at `8e-6`, and went on to `m = 1024`.
/// At `1e-5` such a value is good to about `1e-5 |lambda - sigma|` times its condition,
/// inside that `0.0019` margin (docs/stability.md, section 2).
const KRYLOV_BOUNDARY_TOL: f64 = 1e-5;

/// At Arnoldi's last check ([`KRYLOV_MAX_BLOCKED`] or [`KRYLOV_MAX`] vectors), where the
/// point would otherwise go unclassified, the disc counts as covered down to this fraction of
/// its radius: up to the first value not converged, where that one is located (relative
/// residual under [`KRYLOV_LAST_BOUNDARY_TOL`]) beyond the smaller disc with room for its
/// error. A disc of `0.9 s w` still covers the representative strip `|Im lambda| <= s w / 2`
/// up to `|Re lambda - sigma| = 0.75 s w` (multipliers from 0.013 to 160 at one harmonic's
/// spacing); a family known only by a copy beyond it is not seen. The README's 3-D sector
/// at 3460 rad/s had, at 1200 vectors, every value converged up to a copy of a near-neutral
/// family at `0.9875 s w` (relative residual `1.6e-10`), and the first value beyond at `3e-4`
/// (docs/stability.md, section 2).
const KRYLOV_LAST_DISC: f64 = 0.9;

/// The largest relative residual of the value that bounds the disc at the last check
/// ([`KRYLOV_LAST_DISC`]): one that is located, if not converged.
const KRYLOV_LAST_BOUNDARY_TOL: f64 = 1e-3;

/// The Euclidean norm of `x`: the plain sum of squares, or faer's scaled sum where that
/// could have overflowed or underflowed. faer's takes a few microseconds on a column of a
/// few hundred entries, called three times an Arnoldi step (7 % of blade-damper-blade-3d's
/// stability).
fn norm_l2(x: faer::ColRef<'_, f64>) -> f64 {
    let sum: f64 = x.iter().map(|v| v * v).sum();
    if sum.is_finite() && sum > 1e-280 {
        sum.sqrt()
    } else {
        x.norm_l2()
    }
}

/// Arnoldi's shifts, in spacings of the harmonics (`w s`): near the imaginary axis, where the
/// eigenvalues that decide stability are, at odd fractions so that none is an eigenvalue by
/// construction; the first that is not singular is used.
const KRYLOV_SHIFTS: [f64; 4] = [0.0613, -0.0847, 0.1371, -0.1913];

/// Relative agreement of the real parts of two members of one family found by
/// [`by_members`]: the truncation moves resolved members by about 1 %, and those off centre by
/// more (1.6 % on two-mass-damper at `w = 0.35`, odd:15, where 1.5 % dropped the family).
const MEMBERS_AGREE: f64 = 0.03;

/// How far from a whole number of spacings the imaginary parts of two members found by
/// [`by_members`] may be apart, in spacings (measured: 2e-4 on the area contact, 2e-5 to 3e-3
/// on two-mass-damper).
const MEMBERS_ALIGNED: f64 = 1e-2;

/// Fraction of the half-strip within which [`by_members`] accepts a family: those beyond sit
/// at the edge of the representative window (pitfall 4).
const EDGE_MARGIN: f64 = 0.9;

/// A reproducible pseudo-random sequence in `[-0.5, 0.5)` (xorshift64), for start vectors and
/// checks that must not vary between runs.
fn xorshift(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

/// `dst += dm C` for `C` diagonal by harmonics: `z(k)` acting on the complex coefficient of
/// the harmonic whose coefficients start at `widths[k].0` (one for `h = 0`, else a cosine and
/// a sine). Only `dm`'s columns of each harmonic are read: `C` is dense `nco x nco` with a
/// few nonzeros.
fn add_times_harmonic_diagonal(
    mut dst: MatMut<'_, f64>,
    dm: MatRef<'_, f64>,
    widths: &[(usize, usize)],
    z: impl Fn(usize) -> c64,
) {
    for (k, &(p, width)) in widths.iter().enumerate() {
        let zk = z(k);
        if zk == c64::new(0.0, 0.0) {
            continue;
        }
        if width == 1 {
            for i in 0..dm.nrows() {
                dst[(i, p)] += dm[(i, p)] * zk.re;
            }
        } else {
            let c = complex_block(zk);
            for i in 0..dm.nrows() {
                let (a0, a1) = (dm[(i, p)], dm[(i, p + 1)]);
                dst[(i, p)] += a0 * c[0][0] + a1 * c[1][0];
                dst[(i, p + 1)] += a0 * c[0][1] + a1 * c[1][1];
            }
        }
    }
}

/// The real `2 x 2` action of multiplying `X = a - i b` by `z`, per coefficient pair.
fn complex_block(z: c64) -> [[f64; 2]; 2] {
    [[z.re, z.im], [-z.im, z.re]]
}

impl Pencil {
    /// The pencil of `lin` with the structure `dy`, one per harmonic of `set`.
    fn new(
        dy: &[HarmonicDynamics],
        lin: &Linearization,
        set: &HarmonicSet,
        omega: f64,
    ) -> Result<Self, StabilityError> {
        let nco = set.n_coeffs();
        let m = dy.first().map_or(0, |d| d.contacts.nrows());
        let nq = dy.first().map_or(0, |d| d.contacts.ncols());
        let n_force = lin.d_force.nrows();
        if dy.len() != set.harmonics().len()
            || dy
                .iter()
                .any(|d| d.contacts.nrows() != m || d.contacts.ncols() != nq)
        {
            return Err(StabilityError::Unsupported(
                "the structure has a different number of states at different harmonics (modes \
                 of nodal diameters)"
                    .into(),
            ));
        }
        if n_force != m * nco || lin.velocity.len() != m {
            return Err(StabilityError::Unsupported(format!(
                "the contact equations have {n_force} unknowns, the structure {m} contact rows \
                 of {nco} coefficients"
            )));
        }
        let mut coeffs = vec![(0, false); nco];
        for &h in set.harmonics() {
            let p = set.coeff_index(h).expect("h is in the set");
            coeffs[p] = (h, false);
            if h > 0 {
                coeffs[p + 1] = (h, true);
            }
        }
        pencil_size_check(nq, set, n_force)?;
        let n_state = 2 * nq * nco;
        let n = n_force + n_state;
        // Per harmonic, the blocks of D (d/dt), of K's hysteretic factor and of R_h.
        let harmonic_blocks: Vec<(usize, usize)> = set
            .harmonics()
            .iter()
            .map(|&h| (h, set.coeff_index(h).expect("h is in the set")))
            .collect();
        let deriv = |_: usize, h: usize| c64::new(0.0, h as f64 * omega);

        // The states' rows, harmonic by harmonic.
        let mut blocks = Vec::with_capacity(harmonic_blocks.len());
        let mut state_at = vec![(0, 0); n_state];
        for (k, &(h, p)) in harmonic_blocks.iter().enumerate() {
            let width = if h == 0 { 1 } else { 2 };
            let size = 2 * nq * width;
            let idx: Vec<usize> = (0..size)
                .map(|l| (l / width) * nco + p + l % width)
                .collect();
            for (l, &g) in idx.iter().enumerate() {
                state_at[g] = (k, l);
            }
            let mut a = Mat::<f64>::zeros(size, size);
            let mut b = Mat::<f64>::zeros(size, size);
            // Adds `z` (acting on the complex coefficient) at states (row, col).
            let add = |dst: &mut Mat<f64>, row: usize, col: usize, z: c64| {
                if width == 1 {
                    dst[(row, col)] += z.re;
                } else {
                    let blk = complex_block(z);
                    for i in 0..2 {
                        for j in 0..2 {
                            dst[(row * 2 + i, col * 2 + j)] += blk[i][j];
                        }
                    }
                }
            };
            let d = deriv(k, h);
            let one = c64::new(1.0, 0.0);
            let zero = c64::new(0.0, 0.0);
            let hd = &dy[k];
            let kf = c64::new(1.0, hd.eta);
            for i in 0..nq {
                // U rows: lambda U = Z - D U.
                add(&mut a, i, nq + i, one);
                add(&mut a, i, i, -d);
                add(&mut b, i, i, one);
                // Z rows: lambda M Z = -K (1 + i eta_h) U - C Z - M D Z + B^H x.
                for j in 0..nq {
                    let (kk, c, mm) = (hd.stiffness[(i, j)], hd.damping[(i, j)], hd.mass[(i, j)]);
                    if kk != zero {
                        add(&mut a, nq + i, j, -kk * kf);
                    }
                    if c != zero {
                        add(&mut a, nq + i, nq + j, -c);
                    }
                    if mm != zero {
                        add(&mut a, nq + i, nq + j, -mm * d);
                        add(&mut b, nq + i, nq + j, mm);
                    }
                }
            }
            blocks.push(StateBlock {
                p,
                width,
                idx,
                a,
                b,
                contacts: hd.contacts.clone(),
                cols: (0..m)
                    .flat_map(|s| (0..width).map(move |j| s * nco + p + j))
                    .collect(),
            });
        }

        // Force rows: d_force x + d_motion y = 0.
        let mut motion = Vec::new();
        // Row by row, then column by column: the flexibility terms of one row add up in
        // that order ([`Pencil::a_forces`]).
        let mut by_rows: Vec<(usize, usize, MatRef<'_, f64>)> = lin.d_motion.blocks().collect();
        by_rows.sort_by_key(|&(r, c, _)| (r, c));
        for (r, col, dm) in by_rows {
            if dm.norm_max() == 0.0 {
                continue;
            }
            // A stuck row's velocities read as displacements (see `Linearization`).
            let velocity = lin.velocity[col] && !lin.stuck_rows[r];
            // y_col = B_col q: U for a displacement, Z = (lambda + D) U for a velocity.
            motion.push((r, col, usize::from(velocity), dm.to_owned()));
        }
        // Per coefficient, its harmonic's block; a signal is invariant where none of its
        // blocks couples two of them (exact zeros: the Galerkin products of a constant
        // coefficient leave nothing between harmonics).
        let mut block_of = vec![usize::MAX; nco];
        for (k, blk) in blocks.iter().enumerate() {
            for j in 0..blk.width {
                block_of[blk.p + j] = k;
            }
        }
        let mut invariant = vec![true; m];
        for (r, _, b) in lin.d_force.blocks().chain(lin.d_motion.blocks()) {
            if invariant[r] {
                invariant[r] = (0..nco)
                    .all(|j| (0..nco).all(|i| block_of[i] == block_of[j] || b[(i, j)] == 0.0));
            }
        }
        let mut motion_rows = vec![Vec::new(); m];
        for (b, (row, _, _, _)) in motion.iter().enumerate() {
            motion_rows[*row].push(b);
        }
        let mut pencil = Pencil {
            d_force: lin.d_force.clone(),
            flex: dy.iter().map(|d| d.flexibility.clone()).collect(),
            b_max: 0.0,
            motion,
            motion_rows,
            blocks,
            m,
            invariant,
            krylov_blocks: true,
            state_at,
            b_cols: Vec::new(),
            nco,
            coeffs,
            n_force,
            nq,
            omega_scale: omega.abs().max(f64::MIN_POSITIVE) * set.h_max().max(1) as f64,
            omega: omega.abs().max(f64::MIN_POSITIVE),
            spacing: family_spacing(set),
        };
        // The finite eigenvalues live on the columns where B is not zero. B_xx is built a slab
        // of columns at a time: dense it is `forces x forces`.
        let mut force_cols = Vec::new();
        let mut bxx_max = 0.0f64;
        let slab = (BXX_SLAB_ENTRIES / n_force.max(1) / nco.max(1)).clamp(1, m.max(1));
        for first in (0..m).step_by(slab) {
            let signals = first..(first + slab).min(m);
            let mut bxx = Mat::<f64>::zeros(n_force, signals.len() * nco);
            pencil.add_bxx(bxx.as_mut(), 1.0, signals);
            bxx_max = bxx_max.max(bxx.norm_max());
            force_cols.extend(
                (0..bxx.ncols())
                    .filter(|&c| bxx.col(c).iter().any(|&v| v != 0.0))
                    .map(|c| first * nco + c),
            );
        }
        pencil.b_cols = force_cols;
        pencil.b_cols.extend((n_force..n).filter(|&j| {
            let (k, l) = pencil.state_at[j - n_force];
            pencil.blocks[k].b.col(l).iter().any(|&v| v != 0.0)
        }));
        pencil.b_max = pencil
            .blocks
            .iter()
            .map(|blk| blk.b.norm_max())
            .fold(bxx_max, f64::max)
            .max(f64::MIN_POSITIVE);
        Ok(pencil)
    }

    /// `A` on force rows and force columns, dense: `d_force`, and on each row the
    /// flexibility terms `+ R_h x` of the signals it reads (`(lambda + D) R_h x` for a
    /// velocity: `D`'s part here, `lambda`'s in `B_xx`).
    fn a_forces(&self) -> Mat<f64> {
        let mut axx = self.d_force.to_dense();
        self.add_flexibility(axx.as_mut(), 0..self.m, |velocity, h, flex| {
            if velocity {
                c64::new(0.0, h as f64 * self.omega) * flex
            } else {
                flex
            }
        });
        axx
    }

    /// Adds `f B_xx` (`B` on force rows and force columns: `-d_motion R_h` on the velocity
    /// rows) to `dst`, on the force columns of the contact rows `signals` (`dst`'s first
    /// column is the first one's first coefficient).
    fn add_bxx(&self, dst: MatMut<'_, f64>, f: f64, signals: std::ops::Range<usize>) {
        self.add_flexibility(dst, signals, |velocity, _, flex| {
            if velocity {
                -f * flex
            } else {
                c64::new(0.0, 0.0)
            }
        });
    }

    /// Adds, per block of `d_motion` and contact row `s` of `signals` it reaches through the
    /// flexibility, `d_motion C` on the force columns of `s`: `C` diagonal by harmonics with
    /// `z(velocity, h, R_h[col, s])` on harmonic `h` (zero: nothing added). `dst`'s first
    /// column is the first signal's first coefficient.
    fn add_flexibility(
        &self,
        mut dst: MatMut<'_, f64>,
        signals: std::ops::Range<usize>,
        z: impl Fn(bool, usize, c64) -> c64 + Sync,
    ) {
        use rayon::prelude::*;
        let nco = self.nco;
        let first = signals.start;
        let widths: Vec<(usize, usize)> = self.blocks.iter().map(|b| (b.p, b.width)).collect();
        // One contact row's force rows per task: each entry adds its terms in the same order.
        dst.as_mut()
            .par_row_chunks_mut(nco)
            .zip(&self.motion_rows)
            .for_each(|(mut dst, blocks)| {
                for &b in blocks {
                    let (_, col, kind, dm) = &self.motion[b];
                    let velocity = *kind == 1;
                    for s in signals.clone() {
                        if self.flex.iter().all(|f| f[(*col, s)] == c64::new(0.0, 0.0)) {
                            continue;
                        }
                        let d = dst.as_mut().submatrix_mut(0, (s - first) * nco, nco, nco);
                        add_times_harmonic_diagonal(d, dm.as_ref(), &widths, |k| {
                            z(
                                velocity,
                                self.coeffs[widths[k].0].0,
                                self.flex[k][(*col, s)],
                            )
                        });
                    }
                }
            });
    }

    /// The invariant signals' force unknowns on harmonic block `blk`, signal by signal.
    fn invariant_unknowns(&self, blk: &StateBlock) -> Vec<usize> {
        (0..self.m)
            .filter(|&s| self.invariant[s])
            .flat_map(|s| (0..blk.width).map(move |j| s * self.nco + blk.p + j))
            .collect()
    }

    /// `B_xx x` for the columns of `x` (`forces x r`), factored: `R_h` per harmonic on the
    /// contact rows, then `d_motion`'s velocity blocks.
    fn apply_bxx(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        let (nf, nco, m) = (self.n_force, self.nco, self.m);
        let r = x.ncols();
        let mut y = Mat::<f64>::zeros(nf, r);
        for (blk, flex) in self.blocks.iter().zip(&self.flex) {
            let p = blk.p;
            let xc = Mat::from_fn(m, r, |s, c| {
                if blk.width == 1 {
                    c64::new(x[(s * nco + p, c)], 0.0)
                } else {
                    c64::new(x[(s * nco + p, c)], -x[(s * nco + p + 1, c)])
                }
            });
            let rows = flex * &xc;
            for c in 0..r {
                for col in 0..m {
                    let v = rows[(col, c)];
                    y[(col * nco + p, c)] = v.re;
                    if blk.width == 2 {
                        y[(col * nco + p + 1, c)] = -v.im;
                    }
                }
            }
        }
        let mut out = Mat::<f64>::zeros(nf, r);
        let par = forces::par_for(r);
        for (row, col, kind, dm) in &self.motion {
            if *kind == 1 {
                faer::linalg::matmul::matmul(
                    out.as_mut().subrows_mut(row * nco, nco),
                    faer::Accum::Add,
                    dm,
                    y.as_ref().subrows(col * nco, nco),
                    -1.0,
                    par,
                );
            }
        }
        out
    }

    /// Rows (and columns) of the pencil.
    fn size(&self) -> usize {
        self.n_force + self.state_at.len()
    }

    /// `A` on force rows and state columns times `zs` (`states x r`): the contact rows' motion
    /// `B_h U_h` and `B_h Z_h` per harmonic, then `d_motion`'s blocks.
    fn apply_axs(&self, zs: MatRef<'_, f64>) -> Mat<f64> {
        let (nf, nco, nq, m) = (self.n_force, self.nco, self.nq, self.m);
        let r = zs.ncols();
        // Per kind (U, Z): the contact rows' coefficients, laid out as the forces.
        let motion: Vec<Mat<f64>> = (0..2)
            .map(|kind| {
                let mut y = Mat::<f64>::zeros(nf, r);
                for blk in &self.blocks {
                    let p = blk.p;
                    // The states' complex coefficients X = a - i b of this harmonic.
                    let x = Mat::from_fn(nq, r, |i, c| {
                        let at = (kind * nq + i) * nco + p;
                        if blk.width == 1 {
                            c64::new(zs[(at, c)], 0.0)
                        } else {
                            c64::new(zs[(at, c)], -zs[(at + 1, c)])
                        }
                    });
                    let rows = &blk.contacts * &x;
                    for c in 0..r {
                        for col in 0..m {
                            let v = rows[(col, c)];
                            y[(col * nco + p, c)] = v.re;
                            if blk.width == 2 {
                                y[(col * nco + p + 1, c)] = -v.im;
                            }
                        }
                    }
                }
                y
            })
            .collect();
        let mut out = Mat::<f64>::zeros(nf, r);
        let par = forces::par_for(r);
        for (row, col, kind, dm) in &self.motion {
            faer::linalg::matmul::matmul(
                out.as_mut().subrows_mut(row * nco, nco),
                faer::Accum::Add,
                dm,
                motion[*kind].as_ref().subrows(col * nco, nco),
                1.0,
                par,
            );
        }
        out
    }

    /// `B v` for the columns of `v` (`n x r`).
    fn apply_b(&self, v: MatRef<'_, f64>) -> Mat<f64> {
        let nf = self.n_force;
        let mut out = Mat::<f64>::zeros(v.nrows(), v.ncols());
        out.as_mut()
            .subrows_mut(0, nf)
            .copy_from(self.apply_bxx(v.subrows(0, nf)));
        for blk in &self.blocks {
            let local = gather_rows(v, &blk.idx, nf);
            let prod = &blk.b * &local;
            scatter_rows(out.as_mut(), &blk.idx, nf, prod.as_ref());
        }
        out
    }

    /// `B`'s columns `cols`, dense (`n x cols.len()`).
    fn b_columns(&self, cols: &[usize]) -> Mat<f64> {
        let nf = self.n_force;
        let mut out = Mat::<f64>::zeros(self.size(), cols.len());
        // The force columns, by B_xx on unit vectors.
        let mut units = Mat::<f64>::zeros(nf, cols.len());
        for (c, &j) in cols.iter().enumerate() {
            if j < nf {
                units[(j, c)] = 1.0;
            }
        }
        out.as_mut()
            .subrows_mut(0, nf)
            .copy_from(self.apply_bxx(units.as_ref()));
        for (c, &j) in cols.iter().enumerate() {
            if j >= nf {
                let (k, l) = self.state_at[j - nf];
                let blk = &self.blocks[k];
                for (r, &g) in blk.idx.iter().enumerate() {
                    out[(nf + g, c)] = blk.b[(r, l)];
                }
            }
        }
        out
    }

    /// `A - sigma B` factorised by blocks (a singular block shows as non-finite solves, which
    /// the callers test).
    fn shifted(&self, sigma: f64) -> Shifted<'_> {
        let _t = crate::profile::span(crate::profile::Phase::StabilityFactor);
        let (m, nco) = (self.m, self.nco);
        let mut schur = self.a_forces();
        self.add_bxx(schur.as_mut(), -sigma, 0..m);
        let mut a_max = schur.norm_max();
        let blocks: Vec<(PartialPivLu<f64>, Mat<f64>)> = self
            .blocks
            .iter()
            .enumerate()
            .map(|(k, blk)| {
                let shifted = &blk.a - sigma * &blk.b;
                a_max = a_max.max(shifted.norm_max()).max(blk.contacts_max());
                let lu = shifted.partial_piv_lu();
                let coupled = lu.solve(blk.a_forces(self.nq));
                // S -= A_xs,k (A_ss,k - sigma B_ss,k)^{-1} A_sx,k on this harmonic's forces.
                self.subtract_axs_block(k, coupled.as_ref(), schur.as_mut());
                (lu, coupled)
            })
            .collect();
        // Per harmonic block, the invariant signals' unknowns on it; the others' all.
        let groups = self
            .blocks
            .iter()
            .map(|blk| self.invariant_unknowns(blk))
            .collect();
        let varying = (0..m)
            .filter(|&s| !self.invariant[s])
            .flat_map(|s| (0..nco).map(move |j| s * nco + j))
            .collect();
        let mut schur = ForceFactor::new(schur, groups, varying);
        // The varying rows' `F_Vk` by the pencil's blocks where that reads less than half of
        // the dense ones, which every solve reads whole.
        let dense = schur.dense_reads_bytes();
        let reads = (dense > 0)
            .then(|| VaryingReads::rows_read(self))
            .filter(|(read, _)| 2 * VaryingReads::bytes(self, read.len()) < dense)
            .map(|rows| VaryingReads::new(self, &blocks, sigma, rows))
            .filter(|reads| {
                let agree = schur.read_by(&|x| reads.apply(self, x));
                // (Never seen to fail; `--profile` says where it would, since the dense `F_Vk`
                // it keeps cost time, not accuracy.)
                crate::profile::count(if agree {
                    "stability: the varying rows' F_Vk applied by the pencil's blocks"
                } else {
                    "stability: the varying rows' F_Vk kept dense (the blocks' product disagreed)"
                });
                agree
            });
        Shifted {
            pencil: self,
            blocks,
            schur,
            reads,
            a_max,
        }
    }

    /// `dst -= A_xs z` for states `z` on harmonic block `k` only (its rows in the block's
    /// order, `blk.idx`), whose columns are the block's force columns
    /// (`StateBlock::cols`): the contact rows' motion on that harmonic, then the
    /// columns of `d_motion`'s blocks on it.
    fn subtract_axs_block(&self, k: usize, z: MatRef<'_, f64>, dst: MatMut<'_, f64>) {
        let (nco, nq, m) = (self.nco, self.nq, self.m);
        let blk = &self.blocks[k];
        let (p, width) = (blk.p, blk.width);
        let r = z.ncols();
        let cols = &blk.cols;
        // Per kind (U, Z): the contact rows' coefficients on this harmonic, row `s * width + j`.
        let motion: Vec<Mat<f64>> = (0..2)
            .map(|kind| {
                let x = Mat::from_fn(nq, r, |i, c| {
                    let at = (kind * nq + i) * width;
                    if width == 1 {
                        c64::new(z[(at, c)], 0.0)
                    } else {
                        c64::new(z[(at, c)], -z[(at + 1, c)])
                    }
                });
                let rows = &blk.contacts * &x;
                let mut y = Mat::<f64>::zeros(m * width, r);
                for c in 0..r {
                    for s in 0..m {
                        let v = rows[(s, c)];
                        y[(s * width, c)] = v.re;
                        if width == 2 {
                            y[(s * width + 1, c)] = -v.im;
                        }
                    }
                }
                y
            })
            .collect();
        use rayon::prelude::*;
        // One contact row's force rows per task, as in `add_flexibility`.
        dst.par_row_chunks_mut(nco)
            .zip(&self.motion_rows)
            .for_each(|(mut dst, blocks)| {
                for &b in blocks {
                    let (_, col, kind, dm) = &self.motion[b];
                    let update = dm.subcols(p, width) * motion[*kind].subrows(col * width, width);
                    for (c, &g) in cols.iter().enumerate() {
                        for i in 0..nco {
                            dst[(i, g)] -= update[(i, c)];
                        }
                    }
                }
            });
    }

    /// Eigenvalues and eigenvectors of the pencil that decide stability, by shift and invert:
    /// the eigenvalues `theta` of `(A - sigma B)^{-1} B` are `1 / (lambda - sigma)`, the
    /// infinite ones `theta = 0`.
    ///
    /// Up to [`DENSE_EIGEN_UP_TO`] unknowns on `B`'s columns, every finite eigenvalue from one
    /// dense eigensolve. Above, Arnoldi on the same operator with a shift near the imaginary
    /// axis, until every eigenvalue within `spacing w` of the shift has converged: that
    /// covers the representative strip up to `Re lambda = 0.87 spacing w` (multipliers up
    /// to `exp(0.87 spacing 2 pi)`, over 200), which is where stability is decided and
    /// folds cross; what lies further right is not searched (docs/stability.md). Where
    /// Arnoldi runs out of vectors a disc down to [`KRYLOV_LAST_DISC`] of that may do.
    ///
    /// A contact stuck all period holds its DOFs (an index-3 constraint): its infinite
    /// eigenvalues come out as huge finite ones that depend on rounding (1.8e8 on
    /// two-mass-damper), far beyond [`RESOLVED_BAND`], which removes them. A second shift
    /// keeping only what both give removed them too and changed no multiplier on four curves
    /// (483 points) while doubling the cost.
    fn eigen(&self, method: EigenMethod) -> Result<(Vec<c64>, Mat<c64>), StabilityError> {
        let cols = &self.b_cols;
        let dense = match method {
            EigenMethod::Auto => cols.len() <= DENSE_EIGEN_UP_TO,
            EigenMethod::Dense => true,
            EigenMethod::Krylov => false,
        };
        if dense && cols.len() > MAX_EIGEN_SIZE {
            return Err(StabilityError::TooLarge {
                size: cols.len(),
                forces: self.n_force,
            });
        }
        // Dense: a shift left of the imaginary axis, at an odd fraction of the frequency scale
        // so that it is no eigenvalue by construction; others where it is singular. Krylov: a
        // shift near the axis, where the eigenvalues that decide stability are.
        let (shifts, scale) = if dense {
            ([-0.3137, -0.5531, 0.2719, -1.3791], self.omega_scale)
        } else {
            (KRYLOV_SHIFTS, self.omega * self.spacing as f64)
        };
        for f in shifts {
            let found = if dense {
                self.eigen_dense(f * scale, cols)?
            } else {
                self.eigen_krylov(f * scale, cols.len())?
            };
            if let Some(e) = found {
                return Ok(e);
            }
        }
        Err(StabilityError::Numerical(
            "the shifted Hill matrix is singular at the shifts tried".into(),
        ))
    }

    /// [`Pencil::eigen`] by one dense eigensolve at one shift; `None` where `A - sigma B` is
    /// numerically singular.
    #[allow(clippy::type_complexity)]
    fn eigen_dense(
        &self,
        sigma: f64,
        cols: &[usize],
    ) -> Result<Option<(Vec<c64>, Mat<c64>)>, StabilityError> {
        let n = self.size();
        let bs = self.b_columns(cols);
        let shifted = self.shifted(sigma);
        let _t = crate::profile::span(crate::profile::Phase::StabilityEigen);
        let x = shifted.solve(bs.as_ref());
        // ||A - sigma B|| ||x|| / ||B|| bounds the condition number from below.
        let cond = shifted.a_max * x.norm_max() / self.b_max;
        if !(x.norm_max().is_finite() && cond < 1e13) {
            return Ok(None);
        }
        let reduced = Mat::from_fn(cols.len(), cols.len(), |i, j| x[(cols[i], j)]);
        let fail = |e: faer::linalg::evd::EvdError| StabilityError::Numerical(format!("{e:?}"));
        let evd = reduced.eigen().map_err(fail)?;
        let (s, u) = (evd.S(), evd.U());
        let theta_max = (0..cols.len()).map(|k| s[k].norm()).fold(0.0, f64::max);
        let keep: Vec<usize> = (0..cols.len())
            .filter(|&k| s[k].norm() > 1e-10 * theta_max)
            .collect();
        let lambdas = keep
            .iter()
            .map(|&k| c64::new(sigma, 0.0) + s[k].inv())
            .collect();
        // Full eigenvectors: z = X B_cols w / theta.
        let xc = Mat::from_fn(n, cols.len(), |i, j| c64::new(x[(i, j)], 0.0));
        let w = Mat::from_fn(cols.len(), keep.len(), |i, j| u[(i, keep[j])] / s[keep[j]]);
        Ok(Some((lambdas, &xc * &w)))
    }

    /// [`Pencil::eigen`] by Arnoldi at one shift: the eigenvalues nearest `sigma`, until all
    /// within `spacing w` of it have converged (or the Krylov space is the operator's whole
    /// range, `rank` at most; at the last check within [`KRYLOV_LAST_DISC`] of that); `None`
    /// where `A - sigma B` is numerically singular.
    ///
    /// On large pencils the space grows by blocks of [`KRYLOV_BLOCK`] vectors: a step's
    /// solve reads the factors once for the whole block (it is bound by memory bandwidth,
    /// as the modal extraction's block Lanczos), and the projected matrix is block upper
    /// Hessenberg.
    #[allow(clippy::type_complexity)]
    fn eigen_krylov(
        &self,
        sigma: f64,
        rank: usize,
    ) -> Result<Option<(Vec<c64>, Mat<c64>)>, StabilityError> {
        let n = self.size();
        let shifted = self.shifted(sigma);
        let _t = crate::profile::span(crate::profile::Phase::StabilityEigen);
        let b_max = self.b_max;
        let a_max = shifted.a_max;
        let need = self.omega * self.spacing as f64;
        let full = rank.min(n);
        let block = if self.krylov_blocks && n >= KRYLOV_BLOCK_FROM && full > KRYLOV_MAX {
            KRYLOV_BLOCK
        } else {
            1
        };
        let m_max = if block == 1 {
            full.min(KRYLOV_MAX)
        } else {
            full.min(KRYLOV_MAX_BLOCKED) / block * block
        };
        let mut v = Mat::<f64>::zeros(n, m_max + block);
        let mut h = Mat::<f64>::zeros(m_max + block, m_max);
        // A fixed pseudo-random start, mapped once by the operator so that it lies in its
        // range (no component on the infinite eigenvalues' null space of B).
        let mut random = xorshift(0x2545_f491_4f6c_dd1d);
        let start = Mat::from_fn(n, block, |_, _| random());
        let mut w = shifted.solve(self.apply_b(start.as_ref()).as_ref());
        let mut checkpoint = KRYLOV_FIRST.min(m_max);
        let mut j = 0;
        let mut deflated = false;
        loop {
            // The new block, orthonormalised within itself: its coefficients on the new
            // vectors are the next block of H's subdiagonal.
            let mut invariant = false;
            for i in 0..block {
                let norm = norm_l2(w.col(i));
                if !norm.is_finite()
                    || (j == 0 && norm == 0.0)
                    || a_max * w.col(i).norm_max() / b_max >= 1e13 * norm.max(1e-300)
                {
                    return Ok(None);
                }
                let scale = if j > 0 {
                    norm_l2(h.col(j - block + i))
                } else {
                    norm
                };
                let mut col = w.col(i).to_owned();
                for _ in 0..2 {
                    for l in 0..i {
                        let c = v.col(j + l).transpose() * &col;
                        col -= c * v.col(j + l);
                        if j > 0 {
                            h[(j + l, j - block + i)] += c;
                        }
                    }
                }
                let norm = norm_l2(col.as_ref());
                if norm <= 1e-13 * scale.max(f64::MIN_POSITIVE) {
                    if block == 1 {
                        invariant = true;
                        break;
                    }
                    // A deflated direction: replaced by a random one in the operator's range
                    // (no component on the infinite eigenvalues), orthogonal to the basis; it
                    // is no image of the basis, so its coefficient stays zero, and the space
                    // is no longer the Krylov space of the start.
                    deflated = true;
                    let random_col = Mat::<f64>::from_fn(n, 1, |_, _| random());
                    col = shifted
                        .solve(self.apply_b(random_col.as_ref()).as_ref())
                        .col(0)
                        .to_owned();
                    for _ in 0..2 {
                        let basis = v.subcols(0, j + i);
                        let c = basis.transpose() * &col;
                        col -= basis * &c;
                    }
                    let nr = col.norm_l2();
                    v.col_mut(j + i).copy_from(&col / nr);
                    continue;
                }
                if j > 0 {
                    h[(j + i, j - block + i)] = norm;
                }
                v.col_mut(j + i).copy_from(&col / norm);
            }
            let m = j;
            if invariant || m >= checkpoint || m == m_max {
                crate::profile::count("stability: Arnoldi's Ritz checks");
                let complete = invariant || (m == full && !deflated);
                let last = m == m_max;
                let found = Self::ritz(sigma, (&v, &h), m, block, need, complete, last)?;
                if let Some(found) = found {
                    return Ok(Some(found));
                }
                if last {
                    return Err(StabilityError::Numerical(format!(
                        "Arnoldi did not converge in {m} steps"
                    )));
                }
                checkpoint = (checkpoint * 3 / 2).min(m_max);
            }
            // Next block, orthogonalised twice against the basis (classical Gram-Schmidt
            // repeated: as accurate as modified, in matrix products). One pass where it kept
            // `1 / sqrt 2` of each column's norm (DGKS) was measured, not kept: on the
            // 100-contact 3-D sector 678 of 683 blocks needed the second pass anyway.
            w = shifted.solve(self.apply_b(v.subcols(j, block)).as_ref());
            crate::profile::count_n("stability: Arnoldi's vectors (solves)", block as u64);
            for _ in 0..2 {
                let basis = v.subcols(0, j + block);
                let c = basis.transpose() * &w;
                w -= basis * &c;
                let mut hb = h.submatrix_mut(0, j, j + block, block);
                hb += &c;
            }
            j += block;
        }
    }

    /// Ritz pairs of the Arnoldi factorisation `(v, h)` of `m` vectors (basis `v`, block upper
    /// Hessenberg `h`, blocks of `block`): `Some` when every Ritz value within `need` of
    /// `sigma` (and at least one) has converged, all of them when the space is `complete`.
    /// At the `last` check a smaller disc may do, down to [`KRYLOV_LAST_DISC`] of `need`.
    #[allow(clippy::type_complexity)]
    fn ritz(
        sigma: f64,
        (v, h): (&Mat<f64>, &Mat<f64>),
        m: usize,
        block: usize,
        need: f64,
        complete: bool,
        last: bool,
    ) -> Result<Option<(Vec<c64>, Mat<c64>)>, StabilityError> {
        if m == 0 {
            return Ok(None);
        }
        // The block of H below the square part: `Op V_m = V_m H_m + V_next next E_m^T`.
        let next = h.submatrix(m, m - block, block, block);
        let hm = h.submatrix(0, 0, m, m);
        let fail = |e: faer::linalg::evd::EvdError| StabilityError::Numerical(format!("{e:?}"));
        // One vector a step (small pencils, m up to a few hundred): the eigenvalues alone (up
        // to `HQR_UP_TO` rows by `hessenberg::eigenvalues`, else or where it gives up by
        // faer's), then the eigenvectors of those the test reads, nearest the shift first,
        // until one has not converged (`hessenberg::eigenvector`). In blocks (large pencils)
        // the test reads hundreds of eigenvectors (306 at m = 688 on the 100-contact 3-D
        // sector), and inverse iteration's `O(b m^2)` each adds up to twice the full
        // eigendecomposition's cost.
        let (s, full) = if block > 1 {
            let evd = hm.to_owned().eigen().map_err(fail)?;
            let s: Vec<c64> = (0..m).map(|k| evd.S()[k]).collect();
            (s, Some(evd.U().to_owned()))
        } else {
            let own = (m <= hessenberg::HQR_UP_TO)
                .then(|| hessenberg::eigenvalues(hm))
                .flatten();
            match own {
                Some(s) => (s, None),
                None => (hm.to_owned().eigenvalues().map_err(fail)?, None),
            }
        };
        let theta_max = s.iter().map(|z| z.norm()).fold(0.0, f64::max);
        let mut order: Vec<usize> = (0..m)
            .filter(|&k| s[k].norm() > 1e-10 * theta_max)
            .collect();
        order.sort_by(|&a, &b| s[b].norm().total_cmp(&s[a].norm()));
        let mut work = Vec::new();
        let eigenvector = |k: usize, work: &mut Vec<c64>| -> Vec<c64> {
            match &full {
                Some(u) => {
                    let norm = u.col(k).norm_l2().max(f64::MIN_POSITIVE);
                    u.col(k).iter().map(|z| z / norm).collect()
                }
                None => hessenberg::eigenvector(hm, block, s[k], work),
            }
        };
        // The relative residual of the Ritz pair of the unit eigenvector `y` of `H_m` for
        // `s[k]`: `|next y_last| / |theta|` (infinite for a NaN one, from an eigenvector that
        // overflowed).
        let residual = |k: usize, y: &[c64]| {
            let tail = &y[m - block..];
            let r = (0..block)
                .map(|r| {
                    (0..block)
                        .map(|c| tail[c] * next[(r, c)])
                        .sum::<c64>()
                        .norm_sqr()
                })
                .sum::<f64>()
                .sqrt()
                / s[k].norm();
            if r.is_nan() { f64::INFINITY } else { r }
        };
        // At the last check, out of vectors: the disc covered is the largest, down to
        // `KRYLOV_LAST_DISC need`, that the first unconverged value `k` (relative residual `r`)
        // lies beyond with room for the error of the eigenvalue it approximates (within its
        // residual for a normal matrix, twice that allowed for the pencil's non-normality):
        // radius `|lambda_k - sigma| / (1 + 2 r)`, `r` at most `KRYLOV_LAST_BOUNDARY_TOL`.
        let covers_at_last = |k: usize, r: f64| {
            let radius = 1.0 / (s[k].norm() * (1.0 + 2.0 * r));
            r <= KRYLOV_LAST_BOUNDARY_TOL && radius >= KRYLOV_LAST_DISC * need
        };
        if !complete && !last {
            // The prefix below must reach the first Ritz value beyond `need`: where that one
            // is not placed (or there is none), the check fails whatever the values
            // nearer the shift do, without their eigenvectors (on the small pencils every
            // point's first check fails: blade-damper-blade-3d at m = 60, after 14 to 29
            // eigenvectors). It is no pair's second member (its conjugate, of the same
            // modulus, would come first), so the loop below computes it the same way.
            match order.iter().find(|&&k| 1.0 / s[k].norm() > need) {
                Some(&k) if residual(k, &eigenvector(k, &mut work)) <= KRYLOV_BOUNDARY_TOL => {}
                _ => return Ok(None),
            }
        }
        // The converged prefix, nearest the shift first; it must reach beyond `need`, or
        // stop at the first value beyond, placed there (or, at the last check, at a value
        // that leaves a disc of `KRYLOV_LAST_DISC need` covered).
        let mut keep = Vec::new();
        let mut ys: Vec<Vec<c64>> = Vec::new();
        let mut covered = false;
        // Whether the last kept vector was a pair's second member: a pair that occurs twice
        // (theta, conj, theta, conj) must not give its third member the first one's vector.
        let mut paired = false;
        for &k in &order {
            // A conjugate pair's second member has the conjugate eigenvector.
            let pairs = !paired
                && s[k].im != 0.0
                && keep.last().is_some_and(|&last| s[last] == s[k].conj());
            let y = match ys.last() {
                Some(prev) if pairs => prev.iter().map(|z| z.conj()).collect(),
                _ => eigenvector(k, &mut work),
            };
            let beyond = 1.0 / s[k].norm() > need;
            let r = residual(k, &y);
            if !complete && r > KRYLOV_TOL {
                // The first value beyond the disc covers it once placed there, kept or not.
                covered |= beyond && r <= KRYLOV_BOUNDARY_TOL;
                covered |= last && covers_at_last(k, r);
                break;
            }
            if beyond {
                covered = true;
            }
            keep.push(k);
            ys.push(y);
            paired = pairs;
        }
        if !(complete || covered) || keep.is_empty() {
            return Ok(None);
        }
        let lambdas = keep
            .iter()
            .map(|&k| c64::new(sigma, 0.0) + s[k].inv())
            .collect();
        // Ritz vectors V y, as two real products (V is real).
        let basis = v.subcols(0, m);
        let re = basis * Mat::from_fn(m, keep.len(), |i, j| ys[j][i].re);
        let im = basis * Mat::from_fn(m, keep.len(), |i, j| ys[j][i].im);
        let vectors = Mat::from_fn(v.nrows(), keep.len(), |i, j| {
            c64::new(re[(i, j)], im[(i, j)])
        });
        Ok(Some((lambdas, vectors)))
    }

    /// Centroid of `z` over the complex harmonics `k` (`-h .. h`), weighting the force part
    /// and the displacement states equally.
    fn centroid(&self, z: &[c64]) -> f64 {
        let mut num = 0.0;
        let mut den = 0.0;
        for (start, signals) in [(0, self.n_force / self.nco), (self.n_force, self.nq)] {
            let mut part_num = 0.0;
            let mut part_den = 0.0;
            for s in 0..signals {
                let base = start + s * self.nco;
                for (p, &(h, sine)) in self.coeffs.iter().enumerate() {
                    if sine {
                        continue;
                    }
                    let a = z[base + p];
                    if h == 0 {
                        // |c_0|^2 against 4 |c_h|^2 for the others: the static term counts a
                        // quarter of its share. With the true weight (4 |c_0|^2), families at
                        // the strip's edge come in on sets with h = 0: on single-contact-3d
                        // they called points unstable through -1 (multipliers -1.5 .. -2.3)
                        // that ewr simulate, started from them, shows stable (docs/stability.md,
                        // pitfall 4).
                        part_den += a.norm_sqr();
                        continue;
                    }
                    let b = z[base + p + 1];
                    let i = c64::new(0.0, 1.0);
                    // a cos + b sin = ((a - i b) e^{i h w t} + (a + i b) e^{-i h w t}) / 2.
                    let plus = (a - i * b).norm_sqr();
                    let minus = (a + i * b).norm_sqr();
                    part_num += h as f64 * (plus - minus);
                    part_den += plus + minus;
                }
            }
            if part_den > 0.0 {
                num += part_num / part_den;
                den += 1.0;
            }
        }
        if den > 0.0 { num / den } else { 0.0 }
    }
}

/// How a multiplier leaves the unit circle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crossing {
    /// Through +1: a fold (saddle-node, where the curve turns back) or a branch point.
    PlusOne,
    /// Through -1: a period doubling.
    MinusOne,
    /// A complex pair: a Neimark-Sacker (torus) bifurcation.
    ComplexPair,
}

impl Crossing {
    /// Code in result files: 1, 2, 3.
    pub fn code(self) -> i64 {
        match self {
            Crossing::PlusOne => 1,
            Crossing::MinusOne => 2,
            Crossing::ComplexPair => 3,
        }
    }

    /// What it is, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Crossing::PlusOne => "multiplier through +1 (fold or branch point)",
            Crossing::MinusOne => "multiplier through -1 (period doubling)",
            Crossing::ComplexPair => "complex pair through the unit circle (Neimark-Sacker)",
        }
    }
}

/// A change of stability between two consecutive classified points of a curve.
#[derive(Clone, Debug, PartialEq)]
pub struct StabilityChange {
    /// Index of the second point (the first on the new side).
    pub index: usize,
    /// Frequency midway between the two points.
    pub omega: f64,
    /// How the multiplier crosses, read on the unstable side.
    pub crossing: Crossing,
    /// True where the curve becomes unstable (false: stable again).
    pub to_unstable: bool,
}

/// The crossing of the leading multiplier `exp(lambda T)` of an unstable solution.
pub fn crossing_of(st: &Stability, omega: f64) -> Crossing {
    let period = std::f64::consts::TAU / omega;
    let angle = (st.exponent.im * period).rem_euclid(std::f64::consts::TAU);
    let from_one = angle.min(std::f64::consts::TAU - angle);
    if from_one < 0.05 * std::f64::consts::PI {
        Crossing::PlusOne
    } else if from_one > 0.95 * std::f64::consts::PI {
        Crossing::MinusOne
    } else {
        Crossing::ComplexPair
    }
}

/// Every change of stability along `points` (solutions in curve order; points without
/// multipliers are skipped).
pub fn stability_changes(points: &[&PointSolution]) -> Vec<StabilityChange> {
    let mut out = Vec::new();
    let mut last: Option<(usize, &PointSolution, bool)> = None;
    for (i, p) in points.iter().enumerate() {
        let Some(st) = &p.stability else { continue };
        let stable = st.is_stable();
        if let Some((_, q, was)) = last
            && was != stable
        {
            let unstable = if stable { q } else { p };
            let ust = unstable.stability.as_ref().expect("classified");
            out.push(StabilityChange {
                index: i,
                omega: 0.5 * (q.omega + p.omega),
                crossing: crossing_of(ust, unstable.omega),
                to_unstable: !stable,
            });
        }
        last = Some((i, p, stable));
    }
    out
}

/// Indices of the points where a curve turns back in frequency (folds of an arclength curve).
pub fn turning_points(omegas: &[f64]) -> Vec<usize> {
    (1..omegas.len().saturating_sub(1))
        .filter(|&i| (omegas[i] - omegas[i - 1]) * (omegas[i + 1] - omegas[i]) < 0.0)
        .collect()
}

impl Shifted<'_> {
    /// `(A - sigma B)^{-1} rhs` for the columns of `rhs` (`n x r`): each harmonic's states
    /// with the forces left out, the forces from the Schur complement, then the states'
    /// correction for the forces.
    fn solve(&self, rhs: MatRef<'_, f64>) -> Mat<f64> {
        use rayon::prelude::*;
        let p = self.pencil;
        let nf = p.n_force;
        let r = rhs.ncols();
        let par = forces::par_for(r);
        let mut out = Mat::<f64>::zeros(rhs.nrows(), r);
        // One harmonic per task, its kernels on one thread, as the forces' harmonics.
        let partial: Vec<Mat<f64>> = p
            .blocks
            .par_iter()
            .zip(&self.blocks)
            .map(|(blk, (lu, _))| {
                let mut y = gather_rows(rhs, &blk.idx, nf);
                forces::lu_solve_in_place_by(lu, y.as_mut(), faer::Par::Seq);
                y
            })
            .collect();
        for (blk, y) in p.blocks.iter().zip(&partial) {
            scatter_rows(out.as_mut(), &blk.idx, nf, y.as_ref());
        }
        let forces = rhs.subrows(0, nf) - p.apply_axs(out.as_ref().subrows(nf, p.state_at.len()));
        let read = self
            .reads
            .as_ref()
            .map(|reads| move |y: MatRef<'_, f64>| reads.apply(p, y));
        let x = self
            .schur
            .solve(forces.as_ref(), read.as_ref().map(|f| f as _));
        for ((blk, (_, coupled)), mut y) in p.blocks.iter().zip(&self.blocks).zip(partial) {
            let xk = gather_rows(x.as_ref(), &blk.cols, 0);
            faer::linalg::matmul::matmul(y.as_mut(), faer::Accum::Add, coupled, &xk, -1.0, par);
            scatter_rows(out.as_mut(), &blk.idx, nf, y.as_ref());
        }
        out.as_mut().subrows_mut(0, nf).copy_from(&x);
        out
    }
}

/// Rows `offset + idx[k]` of `v`, in the order of `idx`.
fn gather_rows(v: MatRef<'_, f64>, idx: &[usize], offset: usize) -> Mat<f64> {
    Mat::from_fn(idx.len(), v.ncols(), |i, j| v[(offset + idx[i], j)])
}

/// Writes the rows of `src` to rows `offset + idx[k]` of `dst`.
fn scatter_rows(mut dst: MatMut<'_, f64>, idx: &[usize], offset: usize, src: MatRef<'_, f64>) {
    for j in 0..src.ncols() {
        for (i, &r) in idx.iter().enumerate() {
            dst[(offset + r, j)] = src[(i, j)];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Harmonic `h` of family `p` on `+-h EO + p` (mod N), `p` from 0 to `N / 2`: counted by
    /// hand for 12 sectors.
    #[test]
    fn the_phases_reach_the_diameters_of_plus_and_minus_h_eo_plus_p() {
        let disk = |engine_order| ewr_model::Cyclic {
            sectors: 12,
            engine_order,
            left: Vec::new(),
            right: Vec::new(),
        };
        let odd3: HarmonicSet = "odd:3".parse().unwrap();
        // EO 0 and 6 (h EO a multiple of N / 2): p, and 6 + p, only.
        assert_eq!(phase_diameters(&disk(0), &odd3), [0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(phase_diameters(&disk(6), &odd3), [0, 6, 7, 8, 9, 10, 11]);
        // EO 5, h = 1: 5 + p (5..=11) and 7 + p (7..=13 -> 7..=11, 0, 1).
        let one: HarmonicSet = "odd:1".parse().unwrap();
        assert_eq!(
            phase_diameters(&disk(5), &one),
            [0, 1, 5, 6, 7, 8, 9, 10, 11]
        );
        // A negative engine order reaches the same set (the wave travels the other way).
        assert_eq!(
            phase_diameters(&disk(-5), &one),
            phase_diameters(&disk(5), &one)
        );
    }

    #[test]
    fn a_conjugate_pair_found_twice_gets_independent_ritz_vectors() {
        // H = diag(R, R), R a rotation-dilation: each of 0.3 +- 0.4i is a double eigenvalue
        // with two independent eigenvectors, met in the order theta, conj, theta, conj. The
        // shortcut that gives a pair's second member the conjugate vector must not give the
        // third member the first one's.
        let (a, b) = (0.3, 0.4);
        let (m, block) = (4, 2);
        let h = Mat::from_fn(m + block, m, |i, j| match (i, j) {
            (0, 0) | (1, 1) | (2, 2) | (3, 3) => a,
            (0, 1) | (2, 3) => -b,
            (1, 0) | (3, 2) => b,
            _ => 0.0,
        });
        let v = Mat::<f64>::identity(m, m);
        let sigma = 0.1;
        let (lambdas, vectors) = Pencil::ritz(sigma, (&v, &h), m, block, 0.0, true, false)
            .unwrap()
            .unwrap();
        assert_eq!(lambdas.len(), 4);
        let hc = Mat::from_fn(m, m, |i, j| c64::new(h[(i, j)], 0.0));
        for (k, lambda) in lambdas.iter().enumerate() {
            let theta = (lambda - c64::new(sigma, 0.0)).inv();
            let y = vectors.col(k);
            let r = &hc * y - y * faer::Scale(theta);
            assert!(r.norm_l2() < 1e-12 * y.norm_l2(), "{k}: {}", r.norm_l2());
        }
        // Independent: the smallest singular value of the four vectors is not zero.
        let sv = vectors.singular_values().unwrap();
        let smallest = sv.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(smallest > 1e-6, "{sv:?}");
    }

    #[test]
    fn the_first_ritz_value_beyond_the_disc_needs_placing_not_converging() {
        // H diagonal with the residual block on its last row: only the last diagonal entry's
        // Ritz pair has a residual, `beta / theta`. Shift 0, disc of radius 1: theta = 5, 3
        // and 2 inside (lambda = 0.2, 0.33, 0.5), 0.9 the first beyond (lambda = 1.11), put
        // last so that it carries the residual, and 0.5 further out (its eigenvector ends in
        // a zero: no residual beyond rounding).
        let thetas = [5.0, 3.0, 0.5, 2.0, 0.9];
        let check_with = |diagonal: [f64; 5], beta: f64| diagonal_ritz(diagonal, beta, false);
        let check = |beta: f64| check_with(thetas, beta);
        let kept = |found: Option<(Vec<c64>, Mat<c64>)>| {
            let mut l: Vec<f64> = found
                .expect("the check passes")
                .0
                .iter()
                .map(|l| l.re)
                .collect();
            l.sort_by(f64::total_cmp);
            l
        };
        // Converged: everything is kept, the values beyond the disc included.
        let all = kept(check(0.0));
        assert_eq!(all.len(), 5, "{all:?}");
        // Placed (relative residual 1.1e-7, between the two tolerances): the disc is covered
        // and the values inside are kept; the one beyond is not, nor anything after it.
        let inside = kept(check(1e-7));
        assert_eq!(inside.len(), 3, "{inside:?}");
        assert!(inside.iter().all(|&l| l <= 1.0), "{inside:?}");
        assert!((inside[0] - 0.2).abs() < 1e-14 && (inside[2] - 0.5).abs() < 1e-14);
        // Not placed (1.1e-3): the check fails.
        assert!(check(1e-3).is_none());
        // An unconverged value inside fails it however well the one beyond is placed: the
        // residual on theta = 2 (inside) instead.
        assert!(check_with([5.0, 3.0, 0.5, 0.9, 2.0], 1e-7).is_none());
    }

    #[test]
    fn at_the_last_check_a_disc_down_to_nine_tenths_is_covered_by_a_located_value() {
        // As above: H diagonal, the last entry's pair alone has a residual `beta / theta`;
        // shift 0, disc of radius 1.
        let check = |diagonal: [f64; 5], beta: f64, last: bool| {
            diagonal_ritz(diagonal, beta, last).map(|(l, _)| l.len())
        };
        // The first value beyond (lambda = 1.11) at a relative residual of 1.1e-4: not placed
        // before the last check, located at it (its margin 0.11 is far more than 2.2e-4).
        let beyond = [5.0, 3.0, 0.5, 2.0, 0.9];
        // Placed by the usual rule (1.1e-7): the last check keeps the same values.
        assert_eq!(check(beyond, 1e-7, false), Some(3));
        assert_eq!(check(beyond, 1e-7, true), Some(3));
        assert_eq!(check(beyond, 1e-4, false), None);
        assert_eq!(check(beyond, 1e-4, true), Some(3));
        // At 2.2e-3 it is not located, even at the last check.
        assert_eq!(check(beyond, 2e-3, true), None);
        // A value inside the disc at 0.95 not converged (9.5e-9): the disc of 0.95 / (1 +
        // 1.9e-8) is covered at the last check, with the two values nearer the shift.
        let edge = [5.0, 3.0, 0.5, 0.9, 1.0 / 0.95];
        assert_eq!(check(edge, 1e-8, false), None);
        assert_eq!(check(edge, 1e-8, true), Some(2));
        // At 0.5 (theta = 2) it leaves too small a disc.
        assert_eq!(check([5.0, 3.0, 0.5, 0.9, 2.0], 1e-8, true), None);
        // At 0.9005: a residual of 5e-4 (located) leaves 0.9005 / 1.001, under 0.9; 1e-4
        // leaves enough.
        let near = [5.0, 3.0, 0.5, 0.9, 1.0 / 0.9005];
        assert_eq!(check(near, 5e-4 / 0.9005, true), None);
        assert_eq!(check(near, 1e-4 / 0.9005, true), Some(2));
    }

    /// [`Pencil::ritz`] at shift 0 with `need = 1` on a diagonal `H` of five entries whose
    /// residual block `beta` sits under the last column: only the last entry's Ritz pair has
    /// a residual, `beta / theta`.
    #[allow(clippy::type_complexity)]
    fn diagonal_ritz(diagonal: [f64; 5], beta: f64, last: bool) -> Option<(Vec<c64>, Mat<c64>)> {
        let m = diagonal.len();
        let h = Mat::from_fn(m + 1, m, |i, j| match (i, j) {
            (i, j) if i == j && i < m => diagonal[i],
            (i, j) if i == m && j == m - 1 => beta,
            _ => 0.0,
        });
        let v = Mat::<f64>::identity(m, m + 1);
        Pencil::ritz(0.0, (&v, &h), m, 1, 1.0, false, last).unwrap()
    }

    /// A reproducible sequence in `[-0.5, 0.5)`.
    fn noise(seed: u64) -> impl FnMut() -> f64 {
        xorshift(seed)
    }

    /// `(A - sigma B) z`, by the pencil's blocks and without any factorisation.
    fn apply_shifted(p: &Pencil, sigma: f64, z: MatRef<'_, f64>) -> Mat<f64> {
        let nf = p.n_force;
        let ns = p.state_at.len();
        let mut out = Mat::<f64>::zeros(z.nrows(), z.ncols());
        let forces = &p.a_forces() * z.subrows(0, nf) - sigma * p.apply_bxx(z.subrows(0, nf))
            + p.apply_axs(z.subrows(nf, ns));
        out.as_mut().subrows_mut(0, nf).copy_from(&forces);
        for blk in &p.blocks {
            let states = (&blk.a - sigma * &blk.b) * gather_rows(z, &blk.idx, nf)
                + blk.a_forces(p.nq) * gather_rows(z, &blk.cols, 0);
            scatter_rows(out.as_mut(), &blk.idx, nf, states.as_ref());
        }
        out
    }

    /// A Hermitian positive definite `n x n` matrix (real where `complex` is false), plus
    /// `diag` on the diagonal.
    fn hermitian(r: &mut dyn FnMut() -> f64, n: usize, diag: f64, complex: bool) -> Mat<c64> {
        let a = Mat::from_fn(n, n, |_, _| c64::new(r(), if complex { r() } else { 0.0 }));
        let mut s = &a * a.adjoint();
        for i in 0..n {
            s[(i, i)] += c64::new(diag, 0.0);
        }
        s
    }

    /// A family is kept by [`by_members`] on one agreeing copy a whole spacing away inside
    /// Arnoldi's disc, not on its own conjugate, not at the strip's edge, not where the real
    /// parts differ by more than the truncation moves them, and not off the harmonic window.
    #[test]
    fn a_family_needs_an_agreeing_copy_of_itself() {
        let (w, spacing, h) = (1.0, 1.0, 7);
        let l = c64::new(-0.0159, 0.0623);
        let copy = c64::new(-0.01595, 1.0 - 0.06225);
        let kept = by_members(l, 0.69, &[l, l.conj(), copy, copy.conj()], spacing, w, h);
        assert_eq!(kept, Some(l));
        assert_eq!(by_members(l, 0.69, &[l, l.conj()], spacing, w, h), None);
        let far = c64::new(-0.0170, 1.0 - 0.0623);
        assert_eq!(
            by_members(l, 0.69, &[l, l.conj(), far], spacing, w, h),
            None
        );
        let misaligned = c64::new(-0.01595, 1.0 - 0.0823);
        assert_eq!(by_members(l, 0.69, &[l, misaligned], spacing, w, h), None);
        // Off the window's middle (centroid beyond h / 2) and at the strip's edge.
        assert_eq!(by_members(l, 3.6, &[l, copy], spacing, w, h), None);
        let edge = c64::new(0.0655, 0.49999);
        let edge_copy = c64::new(0.06548, 0.50003);
        assert_eq!(
            by_members(edge, 0.56, &[edge, edge_copy], spacing, w, h),
            None
        );
        // A copy the shift's disc does not reach is not looked at.
        let outside = c64::new(-0.0159, 1.0623);
        assert_eq!(by_members(l, 0.69, &[l, outside], spacing, w, h), None);
    }

    /// The block elimination solves the whole shifted pencil: `(A - sigma B) z = r` to
    /// rounding, with a dense coupled structure (`M`, `C`, `K` full), residual flexibility,
    /// a velocity row and a displacement row, on sets with and without `h = 0`; with a real
    /// structure, and with a complex one per harmonic (a cyclic sector's nodal diameters).
    /// The factored force-state coupling is checked against its dense real form.
    #[test]
    fn block_elimination_solves_the_shifted_pencil() {
        // The last two: the first contact row's law time-invariant (its blocks zero between
        // harmonics), so that the forces are eliminated by harmonics (`forces`).
        for (set, seed, complex, invariant_first) in [
            (HarmonicSet::all(3).unwrap(), 7, false, false),
            (HarmonicSet::odd(5).unwrap(), 11, false, false),
            (HarmonicSet::all(3).unwrap(), 13, true, false),
            (HarmonicSet::odd(5).unwrap(), 17, true, false),
            (HarmonicSet::all(3).unwrap(), 19, false, true),
            (HarmonicSet::odd(5).unwrap(), 23, true, true),
        ] {
            let mut r = noise(seed);
            let (nq, m, omega) = (3, 2, 1.3);
            let dy: Vec<HarmonicDynamics> = set
                .harmonics()
                .iter()
                .map(|&h| {
                    // h = 0 lives on nodal diameter 0: real.
                    let cx = complex && h > 0;
                    let flex = hermitian(&mut r, m, 0.05, cx);
                    HarmonicDynamics {
                        mass: hermitian(&mut r, nq, 1.0, cx),
                        damping: hermitian(&mut r, nq, 0.1, cx),
                        stiffness: hermitian(&mut r, nq, 4.0, cx),
                        eta: if h > 0 { 0.02 } else { 0.0 },
                        contacts: Mat::from_fn(m, nq, |_, _| {
                            c64::new(r(), if cx { r() } else { 0.0 })
                        }),
                        flexibility: flex,
                    }
                })
                .collect();
            let nf = m * set.n_coeffs();
            let nco = set.n_coeffs();
            let harmonic_of = |p: usize| {
                set.harmonics()
                    .iter()
                    .position(|&h| {
                        let c = set.coeff_index(h).unwrap();
                        p == c || (h > 0 && p == c + 1)
                    })
                    .unwrap()
            };
            // Zero between harmonics on the first row's coefficients, where it is invariant.
            let keep = |i: usize, j: usize| {
                !(invariant_first && i < nco && harmonic_of(i) != harmonic_of(j % nco))
            };
            let d_force = Mat::from_fn(nf, nf, |i, j| {
                let v = r() + if i == j { 2.0 } else { 0.0 };
                if keep(i, j) { v } else { 0.0 }
            });
            let d_motion = Mat::from_fn(nf, nf, |i, j| {
                let v = r();
                if keep(i, j) { v } else { 0.0 }
            });
            let lin = Linearization {
                d_force: SignalBlocks::from_dense(d_force.as_ref(), nco),
                d_motion: SignalBlocks::from_dense(d_motion.as_ref(), nco),
                velocity: vec![true, false],
                stuck_rows: vec![false; m],
            };
            let p = Pencil::new(&dy, &lin, &set, omega).unwrap();
            let sigma = 0.17;
            let rhs = Mat::from_fn(p.size(), 3, |_, _| r());
            assert_eq!(p.invariant, vec![invariant_first, false]);
            let shifted = p.shifted(sigma);
            assert_eq!(shifted.schur.by_harmonics(), invariant_first);
            let z = shifted.solve(rhs.as_ref());
            let back = apply_shifted(&p, sigma, z.as_ref());
            let err = (&back - &rhs).norm_max() / rhs.norm_max();
            assert!(err < 1e-10, "{set:?}: relative residual {err:e}");
            if invariant_first {
                // The varying row's reads of the invariant forces by the pencil's blocks
                // (`VaryingReads`), against the pencil applied to those forces with the
                // states that eliminate them: `F x` on the force rows, zero on the states'.
                let reads =
                    VaryingReads::new(&p, &shifted.blocks, sigma, VaryingReads::rows_read(&p));
                let x = Mat::from_fn(nf, 2, |i, _| if i < nco { r() } else { 0.0 });
                let mut full = Mat::<f64>::zeros(p.size(), 2);
                full.as_mut().subrows_mut(0, nf).copy_from(&x);
                for (blk, (_, coupled)) in p.blocks.iter().zip(&shifted.blocks) {
                    let z = -(coupled * gather_rows(x.as_ref(), &blk.cols, 0));
                    scatter_rows(full.as_mut(), &blk.idx, nf, z.as_ref());
                }
                let applied = apply_shifted(&p, sigma, full.as_ref());
                assert!(applied.subrows(nf, p.size() - nf).norm_max() < 1e-12 * applied.norm_max());
                let expected = applied.subrows(nco, nco);
                let got = reads.apply(&p, x.as_ref());
                let gap = (got.subrows(nco, nco) - expected).norm_max() / expected.norm_max();
                assert!(gap < 1e-12, "{set:?}: F_Vk by blocks off by {gap:e}");
                assert!(got.subrows(0, nco).norm_max() == 0.0);
                // And the solve with them instead of the dense `F_Vk`.
                let mut shifted = p.shifted(sigma);
                if shifted.reads.is_none() {
                    let reads =
                        VaryingReads::new(&p, &shifted.blocks, sigma, VaryingReads::rows_read(&p));
                    assert!(shifted.schur.read_by(&|x| reads.apply(&p, x)));
                    shifted.reads = Some(reads);
                }
                let z = shifted.solve(rhs.as_ref());
                let back = apply_shifted(&p, sigma, z.as_ref());
                let err = (&back - &rhs).norm_max() / rhs.norm_max();
                assert!(
                    err < 1e-10,
                    "{set:?}, F_Vk by blocks: relative residual {err:e}"
                );
            }
            // The factored force-state coupling against its dense form: `d_motion` times the
            // real form of `B_h` on the contact rows' states (`U` for a displacement row, `Z`
            // for a velocity row).
            let (nco, ns) = (set.n_coeffs(), p.state_at.len());
            let d_motion = lin.d_motion.to_dense();
            let mut dense = Mat::<f64>::zeros(nf, ns);
            for (k, &h) in set.harmonics().iter().enumerate() {
                let pc = set.coeff_index(h).unwrap();
                let w = if h == 0 { 1 } else { 2 };
                for row in 0..m {
                    for col in 0..m {
                        let dm = d_motion.submatrix(row * nco, col * nco + pc, nco, w);
                        let z0 = if lin.velocity[col] { nq * nco } else { 0 };
                        for i in 0..nq {
                            let b = dy[k].contacts[(col, i)];
                            let blk = complex_block(b);
                            let real =
                                Mat::from_fn(w, w, |a, c| if w == 1 { b.re } else { blk[a][c] });
                            let mut dst =
                                dense
                                    .as_mut()
                                    .submatrix_mut(row * nco, z0 + i * nco + pc, nco, w);
                            dst += dm * &real;
                        }
                    }
                }
            }
            let zs = Mat::from_fn(ns, 2, |_, _| r());
            let want = &dense * &zs;
            let err = (&want - p.apply_axs(zs.as_ref())).norm_max();
            assert!(err < 1e-12 * want.norm_max(), "coupling off by {err:e}");
            // B's columns and its action agree.
            let v = Mat::from_fn(p.size(), 1, |_, _| r());
            let all: Vec<usize> = (0..p.size()).collect();
            let dense = p.b_columns(&all) * &v;
            assert!((dense - p.apply_b(v.as_ref())).norm_max() < 1e-12);
        }
    }
}
