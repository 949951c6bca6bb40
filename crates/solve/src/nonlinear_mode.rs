//! Nonlinear modes by the extended periodic motion concept (Krack, Comput. Struct. 154, 2015)
//! with the exact E-WR friction law: the autonomous structure with a negative mass-proportional
//! damping `-xi M` that makes its friction-damped free motion periodic,
//! `M q'' + (C - xi M) q' + K q = f_static + W^T r`, solved for the contact forces' harmonics,
//! the frequency `w` and `xi` at a prescribed modal amplitude `a = sqrt(Q_1^H M Q_1)` (`Q_1`
//! the fundamental harmonic of all DOFs) with the phase fixed by `Im Q_1[ref] = 0`. The modal
//! damping ratio is `xi / (2 w)`. Derivation and pitfalls: docs/nonlinear-modes.md.
//!
//! Each amplitude is solved by Newton on the bordered system (the E-WR residual and the two
//! normalisations): the law's analytical Jacobian for the forces, the normalisations' exact
//! derivatives (the fundamental is linear in the forces), finite differences in `w` and `xi`.
//! On the modal receptance, and with 3-D contacts on any, the steps are matrix-free as the
//! forced solves' are (from 500 unknowns by default): GMRES on the bordered Jacobian's
//! products, preconditioned by block elimination of the border on the forced solves'
//! preconditioner. The modal receptance gives the normalisations from modal coordinates
//! ([`ReceptanceAt::response_norm`]) without recovering every DOF.
//! The structure is condensed by a dense receptance rebuilt for each `xi` up to 500 DOFs;
//! above, or with modal damping ratios, by the modes that cover the harmonics (the rest in
//! the residual flexibility), extracted once, with `-xi` on each modal damping.

use crate::periodic::{PointSettings, SolveError};
use crate::point::Kind;
use crate::scaled::ScaledContacts;
use ewr_contact::{CondensedContacts, ContactParams, UnilateralParams};
use ewr_hb::HarmonicSet;
use ewr_hb::receptance::{Receptance, ReceptanceAt, ReceptanceKind};
use ewr_model::{Model, SparseMatrix};
use faer::linalg::solvers::Solve;
use faer::{Mat, c64};

/// Modes a backbone above [`MODE_DENSE_MAX_DOFS`] starts with; doubled until the highest
/// reaches `h_max w0 / AUTO_MODAL_COVERAGE` (the forced solves' rule for modal condensation).
pub const MODE_TRUNCATED_MODES: usize = 100;

/// Most modes the doubling of [`MODE_TRUNCATED_MODES`] reaches (or the number of modal damping
/// ratios, if larger): beyond, the harmonics above the highest mode are left to the residual
/// flexibility, a quasi-static term.
pub const MODE_MAX_MODES: usize = 1600;

/// Largest model (DOFs) whose backbone condenses by a dense receptance at every evaluation
/// and whose stuck mode comes from a dense eigensolve; above, the stuck mode comes from a
/// sparse Lanczos and the backbone condenses by modes extracted once
/// ([`Receptance::prepare_damped`]), as many as cover its harmonics
/// ([`MODE_TRUNCATED_MODES`]), the rest in the residual flexibility.
pub const MODE_DENSE_MAX_DOFS: usize = 500;

/// The amplitude the backbone's start (the stuck mode) is taken at, as a share of the first
/// amplitude asked. The first amplitude is solved from it scaled up, as from any point; where
/// that fails (a first amplitude beyond the onset of slip), the intermediate amplitudes below
/// follow the mode from the stuck state instead of retrying from the same start
/// (docs/nonlinear-modes.md, section 2).
const START_BELOW: f64 = 1e-3;

/// Most intermediate amplitudes tried between two requested ones where Newton fails.
const MAX_SUBSTEPS: usize = 16;

/// Most solves of the adaptive steps in amplitude after every grid of intermediate ones
/// failed, and the finest of those steps as a share of the whole (in `ln a`).
const ADAPTIVE_SOLVES: usize = 24;
const ADAPTIVE_FINEST: f64 = 1024.0;

/// Relative steps of the finite differences in `w` and `xi` where the residual is mildly
/// sensitive to them; and the sensitivity (largest `|dg / d ln w|` or its `xi` analogue)
/// above which the step shrinks in proportion. Far into slip the friction forces stay bounded
/// while the motion grows, so `(w, xi)` sits within a relative distance of about `1 / S` of
/// the free structure's resonance: a step of `1e-7` crossed it on blade-damper-blade from `a`
/// = 316, and Newton stalled at residuals of 0.5-0.98 (docs/nonlinear-modes.md, pitfall 9).
/// With the step at `1e-3 / S` the linearisation error stays at `1e-3` and the rounding's at
/// `eps / step`.
const FD_STEP: f64 = 1e-7;
const FD_SENSITIVITY: f64 = 1e4;

/// The residual's rounding floor as a multiple of `eps S`: the rounding of `w` alone moves the
/// residual by `eps S`. The tolerance is raised to it where it is above the asked one, and a
/// stall below it is a converged point. (On blade-damper-blade, odd:15, `a` = 10..1e4, every
/// amplitude then converges in 2-4 iterations.)
const ROUNDING_FLOOR: f64 = 10.0;

/// The most the rounding floor raises the tolerance to: a sensitivity measured across the
/// resonance by a poor finite difference must not let a far point pass.
const FLOOR_CAP: f64 = 1e-5;

/// The last converged point, where the next amplitude starts.
#[derive(Clone)]
struct Continued {
    x: Vec<f64>,
    omega: f64,
    xi: f64,
    amplitude: f64,
    sensitivity: f64,
}

impl Continued {
    fn of(p: &ModePoint) -> Self {
        Continued {
            x: p.friction.clone(),
            omega: p.omega,
            xi: p.xi,
            amplitude: p.amplitude,
            sensitivity: p.sensitivity,
        }
    }
}

/// One point of a nonlinear mode's backbone.
#[derive(Clone, Debug)]
pub struct ModePoint {
    /// Modal amplitude `sqrt(Q_1^H M Q_1)`.
    pub amplitude: f64,
    /// Natural circular frequency.
    pub omega: f64,
    /// The mass-proportional damping `xi` that makes the motion periodic.
    pub xi: f64,
    /// Modal damping ratio `xi / (2 w)`.
    pub damping_ratio: f64,
    /// Whether Newton converged to a free oscillation ([`is_oscillation`]); only such a
    /// point is a point of the backbone (starts the next amplitude, enters the synthesis).
    pub converged: bool,
    /// Newton converged, but to no oscillation (a damping ratio of 1 or more, or no positive
    /// frequency): `converged` is false there.
    pub no_oscillation: bool,
    /// Newton iterations.
    pub iterations: usize,
    /// GMRES products of its Newton steps: the matrix-free ones (the modal receptance or 3-D
    /// contacts, from 500 unknowns and more than one contact under `--linear auto`, or
    /// `matrix-free`) and the dense ones from 1000 unknowns, which GMRES solves with an older
    /// LU ([`crate::newton::DENSE_REUSE_MIN_UNKNOWNS`]); 0 where every step was an LU solve.
    pub krylov_iterations: usize,
    /// Final scaled residual (E-WR equations and normalisations, largest entry); the friction
    /// rows carry the amplitude's slip factor (docs/nonlinear-modes.md, pitfall 8), so it
    /// compares across amplitudes only in stick.
    pub residual: f64,
    /// The residual's largest change per relative change of `w` or `xi` at the last Jacobian
    /// (`S`): in slip the motion grows as `(w, xi)` nears the free structure's resonance, and
    /// `eps S` is the residual's rounding floor (docs/nonlinear-modes.md, pitfall 9).
    pub sensitivity: f64,
    /// The harmonic set of `friction`.
    pub set: HarmonicSet,
    /// Contact-force coefficients (hb block layout).
    pub friction: Vec<f64>,
    /// The fundamental harmonic `Q_1` of every DOF (complex, `x = Re(Q_1 e^{i w t})`).
    pub shape: Vec<c64>,
    /// Every harmonic of `set` of every DOF's periodic motion: `n_dofs x n_coeffs`
    /// coefficients, row-major, in the hb layout (`a_0`, then `a_h, b_h` of `a_h cos h w t +
    /// b_h sin h w t`); the static deflection and the higher harmonics the friction forces
    /// put into the mode. Empty where it could not be recovered.
    pub displacement: Vec<f64>,
}

/// Every point's [`ModePoint::displacement`] as one row of `n_dofs x n_coeffs` coefficients
/// (NaN where it could not be recovered), with `n_coeffs`; `None` where no point has it.
pub fn displacement_rows(points: &[ModePoint], n_dofs: usize) -> Option<(Vec<f64>, usize)> {
    let nco = points.first().map_or(0, |p| p.set.n_coeffs());
    let has = |p: &ModePoint| p.displacement.len() == n_dofs * nco;
    points.iter().any(has).then(|| {
        let rows = points
            .iter()
            .flat_map(|p| {
                if has(p) {
                    p.displacement.clone()
                } else {
                    vec![f64::NAN; n_dofs * nco]
                }
            })
            .collect();
        (rows, nco)
    })
}

/// The linear mode the backbone starts from: mode `mode` (1-based) of the structure with every
/// contact stuck, its frequency and `M`-normalised shape (its damping is the receptance's
/// business: the backbone applies it as the receptance does).
pub fn stuck_mode(model: &Model, mode: usize) -> Result<(f64, Vec<f64>), SolveError> {
    if mode == 0 || mode > model.n_dofs() {
        return Err(SolveError::Start(format!(
            "mode {mode} does not exist: modes are counted from 1, at most one per DOF ({})",
            model.n_dofs()
        )));
    }
    let stuck = model
        .stuck_default()
        .map_err(SolveError::Start)?
        .unwrap_or_else(|| model.clone());
    let (w, phi) = if model.n_dofs() <= MODE_DENSE_MAX_DOFS {
        ewr_hb::modes::natural_modes(&stuck.stiffness, &stuck.mass)
            .map_err(|e| SolveError::Start(format!("modes of the stuck structure: {e}")))?
    } else {
        // A few modes beyond the one asked: the Lanczos's highest converge last.
        let rec = Receptance::new(&stuck, ReceptanceKind::Modal { modes: mode + 4 })
            .map_err(|e| SolveError::Start(format!("modes of the stuck structure: {e}")))?;
        let modes = rec
            .modes()
            .ok_or_else(|| SolveError::Start("modes of the stuck structure".into()))?;
        (modes.omega.clone(), modes.phi.clone())
    };
    if mode > w.len() {
        return Err(SolveError::Start(format!(
            "mode {mode} does not exist: the stuck structure has modes 1..{}",
            w.len()
        )));
    }
    let shape: Vec<f64> = (0..phi.nrows()).map(|i| phi[(i, mode - 1)]).collect();
    Ok((w[mode - 1], shape))
}

/// `A x` for a sparse `A` (stored whole where it is symmetric; `W` is `m x n`).
fn sparse_times<T>(a: &SparseMatrix, x: &[T]) -> Vec<T>
where
    T: Copy + Default + std::ops::AddAssign + std::ops::Mul<f64, Output = T>,
{
    let mut y = vec![T::default(); a.nrows()];
    for t in a.triplet_iter() {
        y[t.row] += x[t.col] * *t.val;
    }
    y
}

/// Where mode `mode` of the stuck structure owes its stiffness to rigid contact rows (no
/// contact stiffness: `Model::stuck_default`'s penalty stands for `w . u = 0`), its frequency
/// and the share of `w0^2` the penalty gives (more than [`PENALTY_SHARE`]); `None` for a mode
/// the structure and the contacts' own stiffnesses carry. Such a mode is an artefact of the
/// penalty: a mass on a rigid friction contact does not move while it sticks, so the
/// backbone has no point below the onset of slip (docs/nonlinear-modes.md, pitfall 7).
pub fn penalty_mode(model: &Model, mode: usize) -> Result<Option<(f64, f64)>, SolveError> {
    let (w0, shape) = stuck_mode(model, mode)?;
    let Some(without) = model.stuck(0.0).map_err(SolveError::Start)? else {
        return Ok(None);
    };
    let k_phi: f64 = without
        .stiffness
        .triplet_iter()
        .map(|t| shape[t.row] * t.val * shape[t.col])
        .sum();
    let share = 1.0 - k_phi / (w0 * w0);
    Ok((share > PENALTY_SHARE).then_some((w0, share)))
}

/// What a front end says where a backbone has amplitudes that did not converge and mode
/// `mode` is the penalty's ([`penalty_mode`]); `None` otherwise. An eigensolve of the
/// stuck structure: call it after the run, only where points failed.
pub fn penalty_mode_hint(model: &Model, mode: usize) -> Option<String> {
    let (w0, _) = penalty_mode(model, mode).ok().flatten()?;
    Some(format!(
        "mode {mode} of the stuck structure (w = {w0:.6e}) is held by rigid contact rows, whose \
         stiffness is a penalty standing for w . u = 0: nothing moves while such a contact \
         sticks, so this mode has no amplitude below the onset of slip (start above it; \
         docs/nonlinear-modes.md, pitfall 7)"
    ))
}

/// The share of a stuck mode's `w0^2` above which [`penalty_mode`] calls it the penalty's.
pub const PENALTY_SHARE: f64 = 0.999;

/// The contact forces that hold the stuck mode `phi` (unit amplitude) at `w`: the least-squares
/// `R` of `W^T R = (K - w^2 M + i w (C - xi M)) phi`, with `C phi` given (`c_phi`: the
/// damping as the receptance applies it).
fn stuck_reactions(
    model: &Model,
    phi: &[f64],
    c_phi: &[f64],
    w: f64,
    xi: f64,
) -> Result<Vec<c64>, SolveError> {
    let n = model.n_dofs();
    let wm = model
        .contacts
        .contact_matrix(n)
        .map_err(SolveError::Start)?
        .to_dense();
    let (k_phi, m_phi) = (
        sparse_times(&model.stiffness, phi),
        sparse_times(&model.mass, phi),
    );
    let z_phi = Mat::from_fn(n, 1, |i, _| {
        c64::new(k_phi[i] - w * w * m_phi[i], w * (c_phi[i] - xi * m_phi[i]))
    });
    let wc = Mat::from_fn(wm.nrows(), n, |i, j| c64::new(wm[(i, j)], 0.0));
    // Least squares with a tiny ridge: a row without DOFs (a fixed normal load) or dependent
    // rows leave W W^T singular; those forces start at zero.
    let mut wwt = &wc * wc.transpose();
    let ridge = 1e-12
        * (0..wwt.nrows())
            .map(|i| wwt[(i, i)].re)
            .fold(0.0f64, f64::max)
            .max(f64::MIN_POSITIVE);
    for i in 0..wwt.nrows() {
        wwt[(i, i)] += c64::new(ridge, 0.0);
    }
    let rhs = &wc * &z_phi;
    let r = wwt.partial_piv_lu().solve(&rhs);
    Ok((0..r.nrows()).map(|i| r[(i, 0)]).collect())
}

/// `M Phi diag(c) Phi^T M x`: the damping of `modes` (every `c_r`, modal ratios included)
/// applied to `x`, as the modal receptance damps the structure.
fn modal_damping_times(
    modes: &ewr_hb::receptance::Modes,
    mass: &SparseMatrix,
    x: &[f64],
) -> Vec<f64> {
    let n = x.len();
    let mx = sparse_times(mass, x);
    let phi = &modes.phi;
    let q: Vec<f64> = (0..phi.ncols())
        .map(|r| modes.damping[r] * (0..n).map(|i| phi[(i, r)] * mx[i]).sum::<f64>())
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| (0..phi.ncols()).map(|r| phi[(i, r)] * q[r]).sum())
        .collect();
    sparse_times(mass, &y)
}

/// The model of the autonomous motion at `xi`: viscous damping `C - xi M`, only the static
/// forcing kept.
fn autonomous(model: &Model, xi: f64) -> Result<Model, SolveError> {
    let mut m = model.clone();
    let c = model.viscous_damping();
    let n = m.n_dofs();
    let trips: Vec<faer::sparse::Triplet<usize, usize, f64>> = c
        .triplet_iter()
        .map(|t| faer::sparse::Triplet::new(t.row, t.col, *t.val))
        .chain(
            model
                .mass
                .triplet_iter()
                .map(|t| faer::sparse::Triplet::new(t.row, t.col, -xi * *t.val)),
        )
        .collect();
    m.damping_matrix = Some(
        SparseMatrix::try_new_from_triplets(n, n, &trips)
            .map_err(|_| SolveError::Start("damping matrix of the autonomous model".into()))?,
    );
    m.damping.rayleigh = None;
    m.forcing.retain(|t| t.harmonic == 0);
    Ok(m)
}

/// The scalings of 3-D contacts' equations for a whole backbone (`None` for other contacts):
/// as a forced solve's ([`crate::unilateral::auto_params`]) but from the static receptance
/// of the autonomous model, `rec` (the frequency `w0` only turns `rho_T` into a force per
/// velocity). A forced solve rescales at each frequency; here `w` is an unknown, and
/// `G_1,NN` vanishes at the mode of a contact that carries it (docs/nonlinear-modes.md,
/// pitfall 6).
fn scalings(
    rec: &Receptance,
    params: &ContactParams,
    set: &HarmonicSet,
    w0: f64,
) -> Result<Option<UnilateralParams>, SolveError> {
    if params.normal.is_none() {
        return Ok(None);
    }
    let at = rec.prepare(w0, set.harmonics())?;
    let cond = CondensedContacts::from_receptance(&at, set)?;
    Ok(Some(crate::unilateral::scaled_params(params, &cond, 0)))
}

/// The bordered residual `[g; e_1; e_2]` and, on request, its Jacobian.
struct Bordered<'a> {
    /// Force unknowns.
    len: usize,
    model: &'a Model,
    /// `M`, for the amplitude `Q_1^H M Q_1`.
    mass: &'a SparseMatrix,
    /// The contact matrix `W` (`m x n`).
    contact_rows: &'a SparseMatrix,
    params: &'a ContactParams,
    settings: &'a PointSettings,
    /// 3-D contacts' scalings, fixed for the whole backbone ([`scalings`]).
    unilateral: Option<&'a UnilateralParams>,
    /// The autonomous structure's modal receptance (without `-xi M`), where the backbone
    /// condenses by modes; `None`: a dense receptance at every evaluation.
    modal: Option<&'a Receptance>,
    /// Factor on the friction rows, fixed for one amplitude's solve
    /// ([`Bordered::slip_scale`] at its start).
    row_scale: f64,
    reference: usize,
    amplitude: f64,
}

impl<'a> Bordered<'a> {
    /// The same backbone's equations on `settings` (a ramp stage or the target set) at the
    /// modal amplitude `amplitude`, before an amplitude's solve fixes its row scale.
    fn on<'s>(&self, settings: &'s PointSettings, amplitude: f64) -> Bordered<'s>
    where
        'a: 's,
    {
        Bordered {
            len: self.params.rows() * settings.set.n_coeffs(),
            model: self.model,
            mass: self.mass,
            contact_rows: self.contact_rows,
            params: self.params,
            settings,
            unilateral: self.unilateral,
            modal: self.modal,
            row_scale: 1.0,
            reference: self.reference,
            amplitude,
        }
    }

    /// Runs `f` on the contacts' scaled system at `(w, xi)` and the receptance it condenses.
    fn on_system<T>(
        &self,
        w: f64,
        xi: f64,
        f: impl FnOnce(&ReceptanceAt<'_>, &mut ScaledContacts<'_>) -> Result<T, SolveError>,
    ) -> Result<T, SolveError> {
        self.on_receptance(w, xi, |at| self.system_on(at, f))
    }

    /// Runs `f` on the autonomous structure's receptance at `(w, xi)`.
    fn on_receptance<T>(
        &self,
        w: f64,
        xi: f64,
        f: impl FnOnce(&ReceptanceAt<'_>) -> Result<T, SolveError>,
    ) -> Result<T, SolveError> {
        let set = &self.settings.set;
        match self.modal {
            Some(rec) => f(&rec.prepare_damped(w, set.harmonics(), xi)?),
            None => {
                let model = autonomous(self.model, xi)?;
                let rec = Receptance::new(&model, ReceptanceKind::Dense)?;
                f(&rec.prepare(w, set.harmonics())?)
            }
        }
    }

    /// [`on_system`](Self::on_system) at the prepared receptance `at`.
    fn system_on<T>(
        &self,
        at: &ReceptanceAt<'_>,
        f: impl FnOnce(&ReceptanceAt<'_>, &mut ScaledContacts<'_>) -> Result<T, SolveError>,
    ) -> Result<T, SolveError> {
        let set = &self.settings.set;
        // No hold of contacts stuck all period (docs/stuck-contacts.md): held at the static
        // state, the stuck limit came out 2 % below the stuck structure's frequency on
        // blade-damper-blade-3d and Newton failed through the onset of slip; the free mean
        // forces are left to the trust region, which keeps them where they start.
        let mut sys = match self.unilateral {
            Some(p) => {
                // The `G_h` formed only where a Jacobian asks for them: an evaluation of the
                // residual alone (the finite differences in `w` and `xi`, a rejected step)
                // multiplies through the modal products (28 % of a backbone on the README's
                // 3-D sector went to forming them for those).
                let cond = CondensedContacts::for_products(at, set)?;
                crate::point::unilateral_system(cond, set, self.settings.n_samples, p.clone())?
            }
            None => Kind::at(at, self.params, self.settings)?.system(
                at,
                set,
                self.settings.n_samples,
                1.0,
            )?,
        };
        f(at, &mut sys)
    }

    /// The factor on the friction rows that keeps their tolerance a relative accuracy of the
    /// forces at any amplitude: `F / max(F, V)`, `F` the force scale of the residual's
    /// `1 / F^2` and `V` the largest `rho |v|` of a friction signal at `(x, w, xi)` (bounded by
    /// `rho w sum_h h |U_h|`). In slip the constant-bound law's row `r |r - rho v| - F (r -
    /// rho v)` moves by `rho |v|` per unit of force, so `1 / F^2` asked `rho |v| / F` times
    /// more of the forces at large amplitude than in stick: rounding. The 3-D law's rows move
    /// by at most `FACTOR_CAP F`, where `V` is capped (docs/nonlinear-modes.md, pitfall 8).
    fn slip_scale(&self, x: &[f64], w: f64, xi: f64) -> Result<f64, SolveError> {
        let set = &self.settings.set;
        self.on_system(w, xi, |_, sys| {
            let u = sys.inner.displacement_coeffs(x)?;
            let rho = sys.inner.tangential_rho();
            let (nco, dim) = (set.n_coeffs(), self.params.dim);
            let mut v_max = 0.0f64;
            for (c, r) in rho.iter().enumerate() {
                for k in 0..dim {
                    let s = c * dim + k;
                    let v: f64 = set
                        .harmonics()
                        .iter()
                        .filter(|&&h| h > 0)
                        .filter_map(|&h| set.coeff_index(h).map(|p| (h, p)))
                        .map(|(h, p)| h as f64 * w * u[s * nco + p].hypot(u[s * nco + p + 1]))
                        .sum();
                    v_max = v_max.max(r * v);
                }
            }
            let f = 1.0 / sys.scale.sqrt();
            if self.unilateral.is_some() {
                // The 3-D law's friction rows are `k (r - proj_b z)`, `k` at most
                // `FACTOR_CAP F`: they move by no more than that per unit of force.
                v_max = v_max.min(ewr_contact::unilateral::FACTOR_CAP * f);
            }
            Ok(if v_max > f && v_max.is_finite() {
                f / v_max
            } else {
                1.0
            })
        })
    }

    /// Residual at `(x, w, xi)`: the scaled E-WR residual (the friction rows times
    /// `row_scale`), then `(sqrt(Q_1^H M Q_1) - a) / a` and `Im Q_1[ref] / a`; with `jac`,
    /// `dF/dx`; with `shape`, `Q_1` of every DOF (else empty where the receptance gives the
    /// normalisations without it).
    #[allow(clippy::type_complexity)]
    fn eval(
        &self,
        x: &[f64],
        w: f64,
        xi: f64,
        jac: bool,
        shape: bool,
    ) -> Result<(Vec<f64>, Option<Mat<f64>>, Vec<c64>), SolveError> {
        let set = &self.settings.set;
        let n = x.len();
        let mut f = vec![0.0; n + 2];
        let mut j = jac.then(|| Mat::<f64>::zeros(n + 2, n + 2));
        let friction_rows = self.params.dim * self.params.len() * set.n_coeffs();
        let q = self.on_system(w, xi, |at, sys| {
            match &mut j {
                Some(j) => sys.inner.residual_and_jacobian(
                    x,
                    &mut f[..n],
                    j.as_mut().submatrix_mut(0, 0, n, n),
                )?,
                None => sys.inner.residual(x, &mut f[..n])?,
            }
            let row = |r: usize| {
                sys.scale
                    * if r < friction_rows {
                        self.row_scale
                    } else {
                        1.0
                    }
            };
            for (r, v) in f[..n].iter_mut().enumerate() {
                *v *= row(r);
            }
            if let Some(j) = &mut j {
                for c in 0..n {
                    for r in 0..n {
                        j[(r, c)] *= row(r);
                    }
                }
            }
            let nz = self.normalisations(at, x, j.is_some(), shape)?;
            f[n] = nz.amplitude;
            f[n + 1] = nz.phase;
            if let Some(j) = &mut j {
                for &(i, da, dp) in &nz.rows {
                    j[(n, i)] = da;
                    j[(n + 1, i)] = dp;
                }
            }
            let q = nz.fundamental;
            Ok(q)
        })?;
        Ok((f, j, q))
    }
}

/// The two normalisations of the bordered system at one evaluation ([`Bordered::normalisations`]).
struct Normalised {
    /// `(sqrt(Q_1^H M Q_1) - a) / a`.
    amplitude: f64,
    /// `Im Q_1[ref] / a`.
    phase: f64,
    /// `Q_1`, every DOF's fundamental.
    fundamental: Vec<c64>,
    /// Their derivatives in the forces, nonzero only at the fundamental's coefficients:
    /// `(unknown, d amplitude, d phase)` (empty where not asked for).
    rows: Vec<(usize, f64, f64)>,
}

impl Bordered<'_> {
    /// The normalisations at the prepared receptance `at` for the forces `x`, with their
    /// derivatives where `rows` is set.
    fn normalisations(
        &self,
        at: &ReceptanceAt<'_>,
        x: &[f64],
        rows: bool,
        shape: bool,
    ) -> Result<Normalised, SolveError> {
        let set = &self.settings.set;
        let n = x.len();
        // The fundamental of every DOF, linear in the forces' first harmonic.
        let nco = set.n_coeffs();
        let p1 = set.coeff_index(1).ok_or_else(|| {
            SolveError::Start("nonlinear modes need harmonic 1 in the set".into())
        })?;
        let m = n / nco;
        let r1: Vec<c64> = (0..m)
            .map(|s| c64::new(x[s * nco + p1], -x[s * nco + p1 + 1]))
            .collect();
        let a = self.amplitude;
        // `wy` with `d(Q^H M Q) = 2 Re(wy^T dr)` and `wz` with `dQ[ref] = wz^T dr`.
        let derivatives = |out: &mut Normalised, norm: f64, wy: &[c64], wz: &[c64]| {
            out.rows.reserve(2 * m);
            for s in 0..m {
                // Columns of Re and Im of the force's fundamental: `du` and `-i du`.
                let (dn_re, dn_im) = if norm > 0.0 {
                    (wy[s].re / norm, wy[s].im / norm)
                } else {
                    (0.0, 0.0)
                };
                out.rows.push((s * nco + p1, dn_re / a, wz[s].im / a));
                out.rows.push((s * nco + p1 + 1, dn_im / a, -wz[s].re / a));
            }
        };
        if !shape && let Some(rn) = at.response_norm(1, &r1, self.reference)? {
            // The modal receptance's shortcut: no DOF recovered (docs/nonlinear-modes.md,
            // section 6).
            let norm = rn.norm2.max(0.0).sqrt();
            let mut out = Normalised {
                amplitude: (norm - a) / a,
                phase: rn.at_dof.im / a,
                fundamental: Vec::new(),
                rows: Vec::new(),
            };
            if rows {
                derivatives(&mut out, norm, &rn.d_norm2, &rn.d_at_dof);
            }
            return Ok(out);
        }
        let q = at.recover(1, &r1, None)?;
        let mq1 = sparse_times(self.mass, &q);
        let norm2: f64 = q.iter().zip(&mq1).map(|(a, b)| (a.conj() * b).re).sum();
        let norm = norm2.max(0.0).sqrt();
        let mut out = Normalised {
            amplitude: (norm - a) / a,
            phase: q[self.reference].im / a,
            fundamental: Vec::new(),
            rows: Vec::new(),
        };
        if rows {
            // `Z_1` is complex symmetric, so each contact row's part of the two
            // normalisations comes from two solves, not one per row: `(M q)^H Z^{-1} W^T e_s
            // = (W Z^{-1} conj(M q))_s` and `(Z^{-1} W^T e_s)_ref = (W Z^{-1} e_ref)_s`.
            let conj_mq: Vec<c64> = mq1.iter().map(|v| v.conj()).collect();
            let mut e_ref = vec![c64::new(0.0, 0.0); q.len()];
            e_ref[self.reference] = c64::new(1.0, 0.0);
            let wy = sparse_times(self.contact_rows, &at.solve_load(1, &conj_mq)?);
            let wz = sparse_times(self.contact_rows, &at.solve_load(1, &e_ref)?);
            derivatives(&mut out, norm, &wy, &wz);
        }
        out.fundamental = q;
        Ok(out)
    }
}

impl Bordered<'_> {
    /// Every DOF's displacement coefficients for the forces `x` at `(w, xi)`
    /// ([`ModePoint::displacement`]).
    fn displacement(&self, x: &[f64], w: f64, xi: f64) -> Result<Vec<f64>, SolveError> {
        let set = &self.settings.set;
        let every: Vec<usize> = (0..self.model.n_dofs()).collect();
        let m = x.len() / set.n_coeffs();
        self.on_receptance(w, xi, |at| {
            crate::point::dof_coefficients(at, set, m, x, &every)
        })
    }
}

/// Force coefficients `x` (`rows` signals on `from`) on the set `to`: the harmonics both
/// have, the others zero.
fn on_set(x: &[f64], from: &HarmonicSet, to: &HarmonicSet, rows: usize) -> Vec<f64> {
    if from == to {
        return x.to_vec();
    }
    let (nf, nt) = (from.n_coeffs(), to.n_coeffs());
    let mut out = vec![0.0; rows * nt];
    for &h in to.harmonics() {
        let (Some(i), Some(j)) = (from.coeff_index(h), to.coeff_index(h)) else {
            continue;
        };
        let width = if h == 0 { 1 } else { 2 };
        for r in 0..rows {
            out[r * nt + j..r * nt + j + width].copy_from_slice(&x[r * nf + i..r * nf + i + width]);
        }
    }
    out
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// The bordered system as a [`crate::newton::Residual`] in `y = (x, w / s, xi / s)`, `s` the
/// starting frequency (so that the trust region sees unknowns of like size), for the
/// solver's trust-region Newton.
struct BorderedResidual<'a> {
    b: Bordered<'a>,
    scale: f64,
    /// The fundamental of every DOF at the last evaluation that recovered it (`want_shape`:
    /// the Newton iterations read the normalisations alone, where the receptance can).
    shape: Vec<c64>,
    want_shape: bool,
    /// The sensitivity `S` expected at this amplitude (the last point's, grown with the
    /// amplitude), the largest measured by this solve's Jacobians (the finite differences'
    /// step follows the larger of the two) and the last measured (the rounding floor's).
    expected: f64,
    largest: f64,
    last: f64,
    /// The last matrix-free linearisation ([`crate::newton::Residual::linearize`]).
    linear: Option<BorderedLinearization<'a>>,
}

/// The bordered Jacobian `[[A, B], [C, D]]` kept for the matrix-free path: `A` the contacts'
/// scaled system (`sys`, its friction rows times `row_scale`), `B` and `D` the finite
/// differences in `w` and `xi`, `C` the normalisations' rows. It is preconditioned by block
/// elimination on `A`'s own preconditioner `P`: `Y = P^{-1} B` and the `2 x 2` complement `S =
/// D - C Y` are formed once, so GMRES sees the border exactly (docs/nonlinear-modes.md,
/// section 6).
struct BorderedLinearization<'a> {
    sys: ScaledContacts<'a>,
    /// Friction rows (the first ones) and their factor.
    friction_rows: usize,
    row_scale: f64,
    /// `dg / d(w / s)` and `dg / d(xi / s)`, `n + 2` rows each.
    col_w: Vec<f64>,
    col_xi: Vec<f64>,
    /// `C` by its nonzeros: `(unknown, amplitude row, phase row)`.
    rows: Vec<(usize, f64, f64)>,
    /// `P^{-1} B[..n]`, by column.
    y_w: Vec<f64>,
    y_xi: Vec<f64>,
    /// `S^{-1}`.
    s_inv: [[f64; 2]; 2],
}

impl BorderedLinearization<'_> {
    /// `P^{-1} v` for `A`: the friction rows' factor undone, then the system's preconditioner.
    fn precondition_a(&mut self, v: &mut [f64]) -> Result<(), crate::newton::EvalError> {
        v[..self.friction_rows]
            .iter_mut()
            .for_each(|x| *x /= self.row_scale);
        crate::newton::Residual::precondition(&mut self.sys, v)
    }
}

/// `S^{-1}` for the `2 x 2` `s`; the identity where `s` is singular (the elimination still
/// runs, with the border's own residual in place of its exact correction).
fn inverse_2x2(s: [[f64; 2]; 2]) -> [[f64; 2]; 2] {
    let det = s[0][0] * s[1][1] - s[0][1] * s[1][0];
    let size = s.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    if !(det.is_finite() && det.abs() > 1e-14 * size * size) {
        return [[1.0, 0.0], [0.0, 1.0]];
    }
    [
        [s[1][1] / det, -s[0][1] / det],
        [-s[1][0] / det, s[0][0] / det],
    ]
}

impl BorderedResidual<'_> {
    /// The finite-difference step of `w` and `xi` at `w`, within the distance to the
    /// resonance (FD_SENSITIVITY).
    fn fd_steps(&self, w: f64, xi: f64) -> (f64, f64) {
        let step = FD_STEP * (FD_SENSITIVITY / self.expected.max(self.largest)).min(1.0);
        (step * w.abs(), step * w.abs().max(xi.abs()))
    }

    /// The columns of `(w, xi)` from the residual `f0` at `(x, w, xi)`, by finite differences;
    /// records the sensitivity they measure.
    #[allow(clippy::type_complexity)]
    fn fd_columns(
        &mut self,
        x: &[f64],
        w: f64,
        xi: f64,
        f0: &[f64],
    ) -> Result<(Vec<f64>, Vec<f64>), SolveError> {
        let (dw, dxi) = self.fd_steps(w, xi);
        let (fw, _, _) = self.b.eval(x, w + dw, xi, false, false)?;
        let (fx, _, _) = self.b.eval(x, w, xi + dxi, false, false)?;
        let col_w: Vec<f64> = (0..f0.len())
            .map(|r| (fw[r] - f0[r]) / dw * self.scale)
            .collect();
        let col_xi: Vec<f64> = (0..f0.len())
            .map(|r| (fx[r] - f0[r]) / dxi * self.scale)
            .collect();
        let s = col_w
            .iter()
            .chain(&col_xi)
            .fold(0.0f64, |m, v| m.max(v.abs()));
        if s.is_finite() {
            self.largest = self.largest.max(s);
            self.last = s;
        }
        Ok((col_w, col_xi))
    }
}

impl crate::newton::Residual for BorderedResidual<'_> {
    fn len(&self) -> usize {
        self.b.len + 2
    }

    fn evaluate(
        &mut self,
        y: &[f64],
        g: &mut [f64],
        jacobian: Option<faer::MatMut<'_, f64>>,
    ) -> Result<(), crate::newton::EvalError> {
        let n = self.b.len;
        let err = |e: SolveError| crate::newton::EvalError(e.to_string());
        let (x, w, xi) = (&y[..n], y[n] * self.scale, y[n + 1] * self.scale);
        // With the Jacobian: the finite differences in `w` and `xi` included.
        let _t = crate::profile::span(if jacobian.is_some() {
            crate::profile::Phase::Jacobian
        } else {
            crate::profile::Phase::Residual
        });
        if w.is_nan() || w <= 0.0 {
            return Err(crate::newton::EvalError(format!("frequency {w}")));
        }
        let (f0, j, q) = self
            .b
            .eval(x, w, xi, jacobian.is_some(), self.want_shape)
            .map_err(err)?;
        g.copy_from_slice(&f0);
        self.shape = q;
        if let (Some(mut out), Some(j)) = (jacobian, j) {
            out.copy_from(&j);
            // Finite differences in w and xi (the receptance is rebuilt for each).
            let (col_w, col_xi) = self.fd_columns(x, w, xi, &f0).map_err(err)?;
            for r in 0..n + 2 {
                out[(r, n)] = col_w[r];
                out[(r, n + 1)] = col_xi[r];
            }
        }
        Ok(())
    }

    fn supports_matrix_free(&self) -> bool {
        // A system kept from `linearize` to the products must own what it condenses: 3-D
        // contacts' systems own their condensation, constant-bound ones the receptance
        // prepared from the backbone's modes (the dense receptance is built per evaluation).
        self.b.unilateral.is_some() || self.b.modal.is_some()
    }

    fn prefers_matrix_free(&self) -> bool {
        self.supports_matrix_free() && self.b.params.len() > 1
    }

    fn linearize(&mut self, y: &[f64], g: &mut [f64]) -> Result<(), crate::newton::EvalError> {
        let n = self.b.len;
        let err = |e: SolveError| crate::newton::EvalError(e.to_string());
        let (x, w, xi) = (&y[..n], y[n] * self.scale, y[n + 1] * self.scale);
        if w.is_nan() || w <= 0.0 {
            return Err(crate::newton::EvalError(format!("frequency {w}")));
        }
        self.linear = None;
        let b = &self.b;
        let set = &b.settings.set;
        let (sys, nz) = match (b.unilateral, b.modal) {
            (Some(params), _) => b
                .on_receptance(w, xi, |at| {
                    let cond = CondensedContacts::from_receptance(at, set)?;
                    let mut sys = crate::point::unilateral_system(
                        cond,
                        set,
                        b.settings.n_samples,
                        params.clone(),
                    )?;
                    crate::newton::Residual::linearize(&mut sys, x, &mut g[..n])
                        .map_err(|e| SolveError::Start(e.0))?;
                    let _t = crate::profile::span(crate::profile::Phase::Jacobian);
                    Ok((sys, b.normalisations(at, x, true, false)?))
                })
                .map_err(err)?,
            (None, Some(rec)) => {
                let at = rec
                    .prepare_damped(w, set.harmonics(), xi)
                    .map_err(|e| err(e.into()))?;
                let nz = {
                    let _t = crate::profile::span(crate::profile::Phase::Jacobian);
                    b.normalisations(&at, x, true, false).map_err(err)?
                };
                let kind = Kind::at(&at, b.params, b.settings).map_err(err)?;
                let mut sys = kind
                    .system_owning(at, set, b.settings.n_samples)
                    .map_err(err)?
                    .ok_or_else(|| {
                        crate::newton::EvalError("no system owns the receptance".into())
                    })?;
                crate::newton::Residual::linearize(&mut sys, x, &mut g[..n])?;
                (sys, nz)
            }
            (None, None) => {
                return Err(crate::newton::EvalError(
                    "the matrix-free bordered system needs 3-D contacts or the modal receptance"
                        .into(),
                ));
            }
        };
        let friction_rows = b.params.dim * b.params.len() * set.n_coeffs();
        let row_scale = b.row_scale;
        g[..friction_rows].iter_mut().for_each(|v| *v *= row_scale);
        g[n] = nz.amplitude;
        g[n + 1] = nz.phase;
        self.shape = nz.fundamental;
        let (col_w, col_xi) = {
            let _t = crate::profile::span(crate::profile::Phase::Jacobian);
            self.fd_columns(x, w, xi, g).map_err(err)?
        };
        // The block elimination's `Y = P^{-1} B` and `S = D - C Y`.
        let (mut y_w, mut y_xi) = (col_w[..n].to_vec(), col_xi[..n].to_vec());
        let mut lin = BorderedLinearization {
            sys,
            friction_rows,
            row_scale,
            y_w: Vec::new(),
            y_xi: Vec::new(),
            col_w,
            col_xi,
            rows: nz.rows,
            s_inv: [[1.0, 0.0], [0.0, 1.0]],
        };
        lin.precondition_a(&mut y_w)?;
        lin.precondition_a(&mut y_xi)?;
        let (mut cy_w, mut cy_xi) = ([0.0; 2], [0.0; 2]);
        for &(i, da, dp) in &lin.rows {
            cy_w[0] += da * y_w[i];
            cy_w[1] += dp * y_w[i];
            cy_xi[0] += da * y_xi[i];
            cy_xi[1] += dp * y_xi[i];
        }
        lin.s_inv = inverse_2x2([
            [lin.col_w[n] - cy_w[0], lin.col_xi[n] - cy_xi[0]],
            [lin.col_w[n + 1] - cy_w[1], lin.col_xi[n + 1] - cy_xi[1]],
        ]);
        (lin.y_w, lin.y_xi) = (y_w, y_xi);
        self.linear = Some(lin);
        Ok(())
    }

    fn jacobian_product(
        &mut self,
        v: &[f64],
        out: &mut [f64],
    ) -> Result<(), crate::newton::EvalError> {
        let n = self.b.len;
        let lin = self.linear.as_mut().ok_or_else(not_linearized)?;
        crate::newton::Residual::jacobian_product(&mut lin.sys, &v[..n], &mut out[..n])?;
        let rs = lin.row_scale;
        out[..lin.friction_rows].iter_mut().for_each(|y| *y *= rs);
        let (vw, vxi) = (v[n], v[n + 1]);
        out[n] = 0.0;
        out[n + 1] = 0.0;
        for ((o, cw), cx) in out.iter_mut().zip(&lin.col_w).zip(&lin.col_xi) {
            *o += cw * vw + cx * vxi;
        }
        for &(i, da, dp) in &lin.rows {
            out[n] += da * v[i];
            out[n + 1] += dp * v[i];
        }
        Ok(())
    }

    fn jacobian_transpose_product(
        &mut self,
        v: &[f64],
        out: &mut [f64],
    ) -> Result<(), crate::newton::EvalError> {
        let n = self.b.len;
        let lin = self.linear.as_mut().ok_or_else(not_linearized)?;
        let mut scaled = v[..n].to_vec();
        let rs = lin.row_scale;
        scaled[..lin.friction_rows]
            .iter_mut()
            .for_each(|y| *y *= rs);
        crate::newton::Residual::jacobian_transpose_product(&mut lin.sys, &scaled, &mut out[..n])?;
        for &(i, da, dp) in &lin.rows {
            out[i] += da * v[n] + dp * v[n + 1];
        }
        out[n] = lin.col_w.iter().zip(v).map(|(c, x)| c * x).sum();
        out[n + 1] = lin.col_xi.iter().zip(v).map(|(c, x)| c * x).sum();
        Ok(())
    }

    fn precondition(&mut self, v: &mut [f64]) -> Result<(), crate::newton::EvalError> {
        let n = self.b.len;
        let lin = self.linear.as_mut().ok_or_else(not_linearized)?;
        let (r_a, r_p) = (v[n], v[n + 1]);
        lin.precondition_a(&mut v[..n])?;
        let (mut t_a, mut t_p) = (r_a, r_p);
        for &(i, da, dp) in &lin.rows {
            t_a -= da * v[i];
            t_p -= dp * v[i];
        }
        let s = lin.s_inv;
        let (z_w, z_xi) = (s[0][0] * t_a + s[0][1] * t_p, s[1][0] * t_a + s[1][1] * t_p);
        for ((x, yw), yx) in v[..n].iter_mut().zip(&lin.y_w).zip(&lin.y_xi) {
            *x -= yw * z_w + yx * z_xi;
        }
        v[n] = z_w;
        v[n + 1] = z_xi;
        Ok(())
    }
}

fn not_linearized() -> crate::newton::EvalError {
    crate::newton::EvalError("the bordered system has not been linearised".into())
}

/// Whether a solution of the bordered equations at frequency `w` with damping ratio `zeta` is
/// a free oscillation: `w > 0` and `|zeta| < 1`. The equations have other roots: where no
/// periodic free motion exists at an amplitude (a mass on a rigid friction contact below
/// `mu N / k`, whose motion stops at its first reversal however much energy `-xi M` feeds
/// in), Newton found `w` of `1e-15` with `zeta` of `-1e16`, or `zeta` of 100-4000, and
/// such a point seeded the next amplitude (docs/nonlinear-modes.md, pitfall 7).
pub fn is_oscillation(w: f64, zeta: f64) -> bool {
    w > 0.0 && w.is_finite() && zeta.abs() < 1.0
}

/// Solves the nonlinear mode at one amplitude from `(x, w, xi)`. A `first_try` (a requested
/// amplitude from the last point, which the backbone retries from nearer where it fails) gives
/// a matrix-free solve up where it stops gaining; a retry has the whole budget, and under
/// `--linear auto` dense steps after a stalled matrix-free solve, as a forced solve does.
fn solve_amplitude(
    mut b: Bordered<'_>,
    x: Vec<f64>,
    w: f64,
    xi: f64,
    expected: f64,
    first_try: bool,
) -> Result<ModePoint, SolveError> {
    let n = x.len();
    b.row_scale = b.slip_scale(&x, w, xi)?;
    let amplitude = b.amplitude;
    let set = b.settings.set.clone();
    let mut opts = b.settings.newton.clone();
    if b.unilateral.is_some() {
        // The run's linear solver: matrix-free from AUTO_MATRIX_FREE_MIN_UNKNOWNS unknowns
        // by default, with the forced solves' stagnation window for 3-D contacts.
        opts = crate::unilateral::with_stagnation_window(&opts);
    } else if b.modal.is_none() {
        // A dense receptance is built per evaluation: no system outlives one.
        opts.linear = crate::newton::LinearSolve::Dense;
    }
    let tol = opts.tol_residual;
    let floor = |s: f64| (ROUNDING_FLOOR * f64::EPSILON * s).min(FLOOR_CAP);
    opts.tol_residual = tol.max(floor(expected));
    let mut res = BorderedResidual {
        b,
        scale: w,
        shape: Vec::new(),
        expected,
        largest: 0.0,
        last: 0.0,
        linear: None,
        want_shape: false,
    };
    let mut y = x;
    y.push(1.0);
    y.push(xi / w);
    // A first try that stops gaining is given up after STALL_WINDOW_3D iterations, as a
    // forced solve's first `rho` is: the backbone retries the amplitude from nearer
    // (intermediate amplitudes). On the area contact at all:15 the amplitude 1e-4 from 3.2e-5
    // ran 200 matrix-free iterations and 50 dense ones (LUs of 2420 rows) without converging,
    // and converged in 9 from 5.6e-5 (docs/nonlinear-modes.md, section 6).
    let matrix_free = crate::newton::uses_matrix_free(&res, opts.linear);
    if first_try && matrix_free && opts.stall_window == 0 {
        opts.stall_window = crate::unilateral::STALL_WINDOW_3D;
    }
    let mut report = crate::newton::solve(&mut res, &y, &opts);
    // The residual at the solution, with the fundamental of every DOF (the last evaluation
    // may have been a trial point, and the iterations read the normalisations alone); and
    // whether a stall there is at the rounding floor of the last Jacobian, so a converged
    // point.
    let finish = |res: &mut BorderedResidual<'_>,
                  report: &crate::newton::NewtonReport|
     -> Result<(Vec<f64>, bool), SolveError> {
        let mut g = vec![0.0; n + 2];
        res.want_shape = true;
        let evaluated = crate::newton::Residual::evaluate(res, &report.x, &mut g, None);
        res.want_shape = false;
        evaluated.map_err(|e| SolveError::Start(e.0))?;
        let g_norm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
        let at_floor = matches!(
            report.status,
            crate::newton::NewtonStatus::Stalled | crate::newton::NewtonStatus::MaxIterations
        ) && g_norm <= tol.max(floor(res.last));
        Ok((g, at_floor))
    };
    let (mut g, mut at_floor) = finish(&mut res, &report)?;
    if !first_try
        && report.matrix_free
        && opts.linear == crate::newton::LinearSolve::Auto
        && !(report.status.converged() || at_floor)
        && crate::point::dense_fits(n + 2)
    {
        // A retry's stalled matrix-free solve is finished with dense steps from where it
        // stopped, as a forced solve is under `auto` (crate::point::DENSE_FALLBACK_MAX_UNKNOWNS),
        // and their result kept where it converged or came closer.
        crate::profile::count("matrix-free solves finished with dense Newton steps");
        let mut dense = opts.clone();
        dense.linear = crate::newton::LinearSolve::Dense;
        dense.max_iterations = dense
            .max_iterations
            .min(crate::point::DENSE_FALLBACK_ITERATIONS);
        let again = crate::newton::solve(&mut res, &report.x, &dense);
        let (iterations, krylov) = (
            report.iterations + again.iterations,
            report.krylov_iterations + again.krylov_iterations,
        );
        if again.status.converged() || again.residual < report.residual {
            report = again;
        }
        report.iterations = iterations;
        report.krylov_iterations = krylov;
        // (Again: the dense steps' evaluations moved the fundamental kept.)
        (g, at_floor) = finish(&mut res, &report)?;
    }
    let (w, xi) = (report.x[n] * w, report.x[n + 1] * w);
    let newton = report.status.converged() || at_floor;
    let oscillates = is_oscillation(w, xi / (2.0 * w));
    Ok(ModePoint {
        amplitude,
        omega: w,
        xi,
        damping_ratio: xi / (2.0 * w),
        converged: newton && oscillates,
        no_oscillation: newton && !oscillates,
        iterations: report.iterations,
        krylov_iterations: report.krylov_iterations,
        residual: max_abs(&g),
        sensitivity: res.last,
        set,
        friction: report.x[..n].to_vec(),
        shape: res.shape,
        // Recovered for the amplitude's final point only ([`with_displacement`]).
        displacement: Vec::new(),
    })
}

/// `pt` with every DOF's displacement coefficients ([`ModePoint::displacement`], empty where
/// they cannot be recovered), at its own `(w, xi)` on `b`'s receptance (the amplitude `b` was
/// made for does not enter): the final point of
/// each amplitude only. The intermediate amplitudes and the failed attempts of the backbone
/// read none of it, and each recovery is a static solve of every DOF (0.5 s on the README's
/// 108k-DOF sector, 28 of them for its 9 amplitudes before).
fn with_displacement(b: &Bordered<'_>, mut pt: ModePoint) -> ModePoint {
    let _post = crate::profile::span(crate::profile::Phase::Post);
    pt.displacement = b
        .displacement(&pt.friction, pt.omega, pt.xi)
        .unwrap_or_default();
    pt
}

/// The backbone of mode `mode` (1-based, of the structure with every contact stuck) at each
/// of `amplitudes` (ascending), each point started from the last; `on_point` sees every point
/// as it is computed and may stop the run by returning `false`. Condensed by a dense
/// receptance up to [`MODE_DENSE_MAX_DOFS`] DOFs, by the modes that cover the harmonics
/// ([`MODE_TRUNCATED_MODES`]) above or where the model has modal damping ratios.
pub fn backbone(
    model: &Model,
    params: &ContactParams,
    settings: &PointSettings,
    mode: usize,
    amplitudes: &[f64],
    on_point: &mut dyn FnMut(&ModePoint) -> bool,
) -> Result<Vec<ModePoint>, SolveError> {
    backbone_noting(
        model,
        params,
        settings,
        mode,
        amplitudes,
        on_point,
        &mut |_| {},
    )
}

/// [`backbone`], telling `note` what the user should hear about its condensation: where the
/// modal path drops an explicit damping matrix's coupling of the modes
/// ([`crate::setup::receptance_warnings`]; above [`MODE_DENSE_MAX_DOFS`] DOFs that path is
/// the only one).
pub fn backbone_noting(
    model: &Model,
    params: &ContactParams,
    settings: &PointSettings,
    mode: usize,
    amplitudes: &[f64],
    on_point: &mut dyn FnMut(&ModePoint) -> bool,
    note: &mut dyn FnMut(String),
) -> Result<Vec<ModePoint>, SolveError> {
    // Modal damping ratios exist only in a modal receptance.
    let n = model.n_dofs();
    let kind = if n <= MODE_DENSE_MAX_DOFS && model.damping.modal_zeta.is_none() {
        ReceptanceKind::Dense
    } else {
        ReceptanceKind::Modal {
            modes: MODE_TRUNCATED_MODES.min(n),
        }
    };
    backbone_body(
        model, params, settings, mode, amplitudes, kind, on_point, note,
    )
}

/// [`backbone`] condensed by `receptance`: `Dense` (a dense receptance of `K - h^2 w^2 M + i h
/// w (C - xi M)` at every evaluation) or `Modal` (the modes extracted once, `-xi` on each
/// modal damping: [`Receptance::prepare_damped`]; every harmonic condensed by modes).
pub fn backbone_with(
    model: &Model,
    params: &ContactParams,
    settings: &PointSettings,
    mode: usize,
    amplitudes: &[f64],
    receptance: ReceptanceKind,
    on_point: &mut dyn FnMut(&ModePoint) -> bool,
) -> Result<Vec<ModePoint>, SolveError> {
    backbone_body(
        model,
        params,
        settings,
        mode,
        amplitudes,
        receptance,
        on_point,
        &mut |_| {},
    )
}

/// [`backbone_with`], telling `note` what [`backbone_noting`] does.
#[allow(clippy::too_many_arguments)]
fn backbone_body(
    model: &Model,
    params: &ContactParams,
    settings: &PointSettings,
    mode: usize,
    amplitudes: &[f64],
    receptance: ReceptanceKind,
    on_point: &mut dyn FnMut(&ModePoint) -> bool,
    note: &mut dyn FnMut(String),
) -> Result<Vec<ModePoint>, SolveError> {
    if !matches!(
        receptance,
        ReceptanceKind::Dense | ReceptanceKind::Modal { .. }
    ) {
        return Err(SolveError::Start(
            "nonlinear modes condense by a dense or a modal receptance".into(),
        ));
    }
    if model.cyclic.is_some() {
        return Err(SolveError::Start(
            "nonlinear modes of cyclic sectors are not available yet: expand the sector to its \
             full annulus (`ewr model annulus`, in Python `Model.annulus()`) and compute the \
             modes of that, standing waves of the whole disk (the annulus has N times the \
             sector's DOFs and contacts)"
                .into(),
        ));
    }
    if settings.auto.is_some() {
        return Err(SolveError::Start(
            "nonlinear modes take a fixed harmonic set, not auto".into(),
        ));
    }
    if settings.set.coeff_index(1).is_none() {
        return Err(SolveError::Start(format!(
            "the harmonic set {} has no harmonic 1, which carries the modal amplitude",
            settings.set
        )));
    }
    if let Some(bad) = amplitudes.iter().find(|a| !(a.is_finite() && **a > 0.0)) {
        return Err(SolveError::Start(format!(
            "amplitude {bad}: amplitudes must be positive"
        )));
    }
    // The stuck mode and the modal extraction are the run's setup.
    let setup = crate::profile::span(crate::profile::Phase::Setup);
    let (w0, shape) = stuck_mode(model, mode)?;
    let reference = (0..shape.len())
        .max_by(|&i, &j| shape[i].abs().total_cmp(&shape[j].abs()))
        .unwrap_or(0);
    // The static state (preload) first: the autonomous model at w0 without motion.
    let m_rows = params.rows();
    let n = m_rows * settings.set.n_coeffs();
    // The modal receptance of the structure without its dynamic forcing, its damping as the
    // model gives it (Rayleigh kept: its `beta K` also damps the residual flexibility),
    // extracted once; `-xi M` is added per evaluation.
    let modal = match receptance {
        ReceptanceKind::Modal { modes } => {
            let mut unforced = model.clone();
            unforced.forcing.retain(|t| t.harmonic == 0);
            // A truncated basis leaves the modes above it to the residual flexibility, a
            // quasi-static term: doubled until its highest mode reaches the highest harmonic
            // at the stuck frequency by the forced solves' margin (the backbone softens
            // from there).
            // At most MODE_MAX_MODES; a model with fewer modes than asked (massless DOFs)
            // has them all. Modal damping ratios: at least as many modes as ratios.
            let reach = settings.set.h_max() as f64 * w0 / ewr_hb::receptance::AUTO_MODAL_COVERAGE;
            let ratios = model.damping.modal_zeta.as_ref().map_or(0, Vec::len);
            let cap = MODE_MAX_MODES.max(ratios).max(modes).min(model.n_dofs());
            let mut k = modes.max(ratios).clamp(1, cap);
            loop {
                let rec = Receptance::new(&unforced, ReceptanceKind::Modal { modes: k })?;
                let (got, top) = rec.modes().map_or((0, 0.0), |m| {
                    (m.omega.len(), m.omega.last().copied().unwrap_or(0.0))
                });
                if top >= reach || k >= cap || got < k {
                    break Some(rec);
                }
                k = (2 * k).min(cap);
            }
        }
        _ => None,
    };
    drop(setup);
    if let Some(rec) = &modal {
        let advice = format!(
            "a backbone condenses by modes above {MODE_DENSE_MAX_DOFS} DOFs or with modal \
             damping ratios, and otherwise by a dense receptance"
        );
        // The backbone softens from the stuck frequency: its harmonics reach no higher.
        crate::setup::damping_coupling_warnings(rec, settings, w0, &advice)
            .into_iter()
            .for_each(&mut *note);
    }
    let mass = &model.mass;
    let contact_rows = model
        .contacts
        .contact_matrix(model.n_dofs())
        .map_err(SolveError::Start)?;
    // `C phi` for the start: with modal damping ratios, which live only in the modes, as the
    // modal receptance damps the structure, `M Phi diag(c_r) Phi^T M` (each mode's `phi_r^T C
    // phi_r + 2 zeta_r omega_r`); otherwise the viscous matrix's.
    let c_phi = match (&modal, &model.damping.modal_zeta) {
        (Some(rec), Some(_)) => {
            let modes = rec
                .modes()
                .ok_or_else(|| SolveError::Start("the modal receptance has no modes".into()))?;
            modal_damping_times(modes, mass, &shape)
        }
        _ => sparse_times(&model.viscous_damping(), &shape),
    };
    let c0: f64 = shape.iter().zip(&c_phi).map(|(p, c)| p * c).sum();
    let static_model = autonomous(model, c0)?;
    let dense_static;
    let static_rec = match &modal {
        Some(rec) => rec,
        None => {
            dense_static = Receptance::new(&static_model, ReceptanceKind::Dense)?;
            &dense_static
        }
    };
    let static_x = if static_model.forcing.is_empty() {
        vec![0.0; n]
    } else {
        let sol = crate::point::solve_point(static_rec, params, w0, settings, None)?;
        if !sol.status.converged() {
            return Err(SolveError::Start(format!(
                "the static state (preload) did not converge ({}): the backbone has no start",
                sol.status
            )));
        }
        sol.friction
    };
    // The backbone starts from the stuck mode's reactions, W^T R_1 = Z_1 (a phi), at an
    // amplitude below the first asked: the first amplitude is tried from them directly, and
    // where it slips, the intermediate amplitudes carry the stuck state there.
    let mut start = static_x.clone();
    let first = amplitudes.first().copied().unwrap_or(1.0) * START_BELOW;
    let r1 = stuck_reactions(model, &shape, &c_phi, w0, c0)?;
    let nco = settings.set.n_coeffs();
    let p1 = settings
        .set
        .coeff_index(1)
        .ok_or_else(|| SolveError::Start("nonlinear modes need harmonic 1 in the set".into()))?;
    for (s, r) in r1.iter().enumerate() {
        start[s * nco + p1] = first * r.re;
        start[s * nco + p1 + 1] = -first * r.im;
    }
    let unilateral = scalings(static_rec, params, &settings.set, w0)?;
    let mut out = Vec::with_capacity(amplitudes.len());
    let mut state = Continued {
        x: start,
        omega: w0,
        xi: c0,
        amplitude: first,
        sensitivity: 0.0,
    };
    // The backbone's equations on the target set; [`Bordered::on`] moves them to a stage.
    let template = Bordered {
        len: n,
        model,
        mass,
        contact_rows: &contact_rows,
        params,
        settings,
        unilateral: unilateral.as_ref(),
        modal: modal.as_ref(),
        row_scale: 1.0,
        reference,
        amplitude: first,
    };
    // Solves amplitude `a` on `on` (the target set or a ramp stage) from `state` on `from`.
    // `first_try`: [`solve_amplitude`]'s.
    let solve_on = |state: &Continued,
                    from: &HarmonicSet,
                    on: &PointSettings,
                    a: f64,
                    first_try: bool|
     -> Result<ModePoint, SolveError> {
        let b = template.on(on, a);
        // Dynamic harmonics scaled with the amplitude; the static ones kept.
        let factor = a / state.amplitude;
        let (from_nco, from_p0) = (from.n_coeffs(), from.coeff_index(0));
        let x0: Vec<f64> = state
            .x
            .iter()
            .enumerate()
            .map(|(i, v)| {
                if Some(i % from_nco) == from_p0 {
                    *v
                } else {
                    v * factor
                }
            })
            .collect();
        let x0 = on_set(&x0, from, &on.set, m_rows);
        // In gross slip the distance to the resonance shrinks as `1 / a`.
        let expected = state.sensitivity * (a / state.amplitude).max(1.0);
        solve_amplitude(b, x0, state.omega, state.xi, expected, first_try)
    };
    let solve_at = |state: &Continued, a: f64| solve_on(state, &settings.set, settings, a, false);
    // Where neither the start nor intermediate amplitudes converge (the onset of slip of a
    // lightly damped structure: blade-damper-blade-3d at beta = 3e-6, all:15), the harmonic
    // ramp from the last converged state: each stage at amplitude `a` starts the next.
    let ramped = |state: &Continued, a: f64| -> Result<ModePoint, SolveError> {
        let stages = crate::ramp::ramp_sets(&settings.set);
        let mut from = settings.set.clone();
        let mut s = state.clone();
        let mut last = None;
        for stage in stages {
            let on = PointSettings {
                n_samples: crate::ramp::stage_samples(&stage, &settings.set, settings.n_samples),
                set: stage.clone(),
                ..settings.clone()
            };
            let p = solve_on(&s, &from, &on, a, false)?;
            if !p.converged {
                return Ok(p);
            }
            s = Continued::of(&p);
            from = stage;
            last = Some(p);
        }
        last.ok_or_else(|| SolveError::Start("an empty harmonic ramp".into()))
    };
    for &a in amplitudes {
        let mut pt = solve_on(&state, &settings.set, settings, a, true)?;
        // Where the start is too far (stick turning into slip), intermediate amplitudes on a
        // geometric grid carry the solution there.
        let mut sub = 2;
        while !pt.converged && sub <= MAX_SUBSTEPS {
            let mut s = state.clone();
            let ratio = (a / s.amplitude).powf(1.0 / sub as f64);
            let mut ok = true;
            for _ in 1..sub {
                let ai = s.amplitude * ratio;
                let p = solve_at(&s, ai)?;
                if !p.converged {
                    ok = false;
                    break;
                }
                s = Continued::of(&p);
            }
            if ok {
                pt = solve_at(&s, a)?;
            }
            sub *= 2;
        }
        // Where every grid has an amplitude that fails, a step in `ln a` halved where Newton
        // fails and grown by half where it converges, each from the last amplitude reached.
        // At the onset of slip the start (the last point, its motion scaled) is poor, and
        // steps of a few per cent fail where steps of one per cent pass: blade-damper-blade-3d
        // from 1e-6 to 1e-2 in 10 amplitudes lost 2 or 3 near a = 1.2e-4 (all:7, 15 and 59),
        // where steps of 1 % from 1e-4 converge in 4-11 iterations each.
        let mut reached = state.clone();
        if !pt.converged {
            let total = (a / reached.amplitude).ln();
            let mut step = 0.5 * total;
            let mut solves = 0;
            while !pt.converged
                && solves < ADAPTIVE_SOLVES
                && step.abs() >= total.abs() / ADAPTIVE_FINEST
            {
                let remaining = (a / reached.amplitude).ln();
                let last = step.abs() >= remaining.abs();
                let ai = if last {
                    a
                } else {
                    reached.amplitude * step.exp()
                };
                let p = solve_at(&reached, ai)?;
                solves += 1;
                if !p.converged {
                    // (Halved from what was tried: a last step is the remaining one.)
                    step = 0.5 * if last { remaining } else { step };
                } else if last {
                    pt = p;
                } else {
                    reached = Continued::of(&p);
                    step *= 1.5;
                }
            }
        }
        if !pt.converged && settings.set.h_max() > 1 {
            let mut p = ramped(&state, a)?;
            if !p.converged && reached.amplitude != state.amplitude {
                // Along the ramp from the largest amplitude the steps reached too.
                p = ramped(&reached, a)?;
            }
            if p.converged && p.set == settings.set {
                pt = p;
            }
        }
        let pt = with_displacement(&template, pt);
        let keep_going = on_point(&pt);
        if pt.converged {
            state = Continued::of(&pt);
        }
        out.push(pt);
        if !keep_going {
            break;
        }
    }
    Ok(out)
}

/// The forced response near a resonance synthesised from one nonlinear mode (single
/// nonlinear mode theory, Krack et al.): with the mass-normalised shape `psi = Q_1 / a` and
/// the modal force `f = psi^H F_1` of the model's first-harmonic forcing, each backbone point
/// answers at the frequencies `W` of `(w^2 - W^2)^2 + (2 zeta w W)^2 = (|f| / a)^2`.
#[derive(Clone, Debug, PartialEq)]
pub struct Synthesis {
    /// Points `(W, a)` of the synthesised response curve: up the branch below the backbone
    /// by increasing amplitude, then down the branch above it, one polyline round the peak.
    pub curve: Vec<(f64, f64)>,
    /// `|Q_1|` of every DOF at each point of `curve` (`a |psi|`).
    pub curve_dofs: Vec<Vec<f64>>,
    /// The resonance: modal amplitude, frequency and `|Q_1|` of every DOF where
    /// `2 zeta w^2 a = |f|` (interpolated between backbone points), if reached.
    pub peak: Option<(f64, f64, Vec<f64>)>,
}

/// [`Synthesis`] of `model`'s forcing at harmonic 1 from the converged `points` of a backbone.
pub fn synthesise(model: &Model, points: &[ModePoint]) -> Synthesis {
    let n = model.n_dofs();
    let mut force = vec![c64::new(0.0, 0.0); n];
    for t in model.forcing.iter().filter(|t| t.harmonic == 1) {
        if t.dof < n {
            force[t.dof] += c64::new(t.cos, -t.sin);
        }
    }
    let pts: Vec<&ModePoint> = points.iter().filter(|p| p.converged).collect();
    let modal_force = |p: &ModePoint| -> f64 {
        let a = p.amplitude;
        p.shape
            .iter()
            .zip(&force)
            .map(|(q, f)| (q / a).conj() * f)
            .sum::<c64>()
            .norm()
    };
    let mut curve = Vec::new();
    let mut curve_dofs = Vec::new();
    for sign in [-1.0, 1.0] {
        let order: Vec<&&ModePoint> = if sign < 0.0 {
            pts.iter().collect()
        } else {
            pts.iter().rev().collect()
        };
        for p in order {
            let (w, z, a) = (p.omega, p.damping_ratio, p.amplitude);
            let r = modal_force(p) / a;
            let b = w * w * (1.0 - 2.0 * z * z);
            let disc = b * b - w.powi(4) + r * r;
            if disc >= 0.0 {
                let x = b + sign * disc.sqrt();
                if x > 0.0 {
                    curve.push((x.sqrt(), a));
                    curve_dofs.push(p.shape.iter().map(|q| q.norm()).collect());
                }
            }
        }
    }
    let balance =
        |p: &ModePoint| 2.0 * p.damping_ratio * p.omega * p.omega * p.amplitude - modal_force(p);
    let mut peak = None;
    for w in pts.windows(2) {
        let (g0, g1) = (balance(w[0]), balance(w[1]));
        if g0 <= 0.0 && g1 > 0.0 {
            let t = -g0 / (g1 - g0);
            let la = (1.0 - t) * w[0].amplitude.ln() + t * w[1].amplitude.ln();
            let lerp = |u: f64, v: f64| (1.0 - t) * u + t * v;
            let a = la.exp();
            let dofs = w[0]
                .shape
                .iter()
                .zip(&w[1].shape)
                .map(|(q0, q1)| a * lerp(q0.norm() / w[0].amplitude, q1.norm() / w[1].amplitude))
                .collect();
            peak = Some((a, lerp(w[0].omega, w[1].omega), dofs));
            break;
        }
    }
    Synthesis {
        curve,
        curve_dofs,
        peak,
    }
}

/// The options a backbone accepts, checked before any work: the exact law (the EPMC equations
/// are written with it), a fixed harmonic set, and the `max` amplitude measure, since a mode's
/// amplitude is its modal amplitude, not a forced response's measure.
pub fn check_options(o: &crate::setup::SolveOptions) -> Result<(), crate::setup::OptionError> {
    use crate::setup::{Opt, OptionError};
    if o.law != "exact" {
        return Err(OptionError::text(
            Opt::Law,
            &o.law,
            "nonlinear modes use the exact friction law",
        ));
    }
    if o.harmonics.trim_start().starts_with("auto") {
        return Err(OptionError::text(
            Opt::Harmonics,
            &o.harmonics,
            "nonlinear modes take a fixed set (e.g. odd:31, all:15)",
        ));
    }
    if o.amplitude != "max" {
        return Err(OptionError::text(
            Opt::Amplitude,
            &o.amplitude,
            "measures forced responses; a nonlinear mode's amplitude is its modal amplitude \
             sqrt(Q1^H M Q1)",
        ));
    }
    Ok(())
}

/// `points` modal amplitudes from `from` to `to`, evenly spaced on a logarithmic scale (a
/// backbone spans decades, from the stuck structure to the free one); `from` alone for one.
pub fn modal_amplitudes(from: f64, to: f64, points: usize) -> Vec<f64> {
    (0..points)
        .map(|i| {
            if points == 1 {
                from
            } else {
                from * (to / from).powf(i as f64 / (points - 1) as f64)
            }
        })
        .collect()
}

/// The highest fundamental frequency [`forced_sweep`] reaches near the backbone `points`,
/// about: a tenth above their highest natural frequency (for the receptance's warnings).
pub fn forced_sweep_top(points: &[ModePoint]) -> f64 {
    1.1 * points.iter().map(|p| p.omega).fold(0.0f64, f64::max)
}

/// The DOFs `model` forces at harmonic 1, ascending: where the single-mode synthesis is read
/// and compared with a forced response.
pub fn forced_dofs(model: &Model) -> Vec<usize> {
    let mut d: Vec<usize> = model
        .forcing
        .iter()
        .filter(|t| t.harmonic == 1)
        .map(|t| t.dof)
        .collect();
    d.sort_unstable();
    d.dedup();
    d
}

/// The forced DOF where a mode's forced response is read ([`forced_sweep`], the figure's
/// panel): of the DOFs forced at harmonic 1, the one the mode moves most (`|Q_1|` at the
/// synthesised resonance, or else at the largest converged amplitude; the lowest on a tie),
/// the first without either; `None` without forcing at harmonic 1. The first forced DOF can
/// be one the mode does not move: single-contact-3d's mode is its normal motion, its forcing
/// starts tangential.
pub fn response_dof(model: &Model, points: &[ModePoint], synthesis: &Synthesis) -> Option<usize> {
    let forced = forced_dofs(model);
    let sizes: Option<Vec<f64>> = match &synthesis.peak {
        Some((_, _, dofs)) => Some(dofs.clone()),
        None => points
            .iter()
            .rev()
            .find(|p| p.converged)
            .map(|p| p.shape.iter().map(|q| q.norm()).collect()),
    };
    match sizes {
        None => forced.first().copied(),
        Some(sizes) => forced.iter().copied().max_by(|&a, &b| {
            let size = |d: usize| sizes.get(d).copied().unwrap_or(0.0);
            size(a).total_cmp(&size(b)).then(b.cmp(&a))
        }),
    }
}

/// A forced response swept through a synthesised resonance ([`forced_sweep`]).
#[derive(Clone, Debug)]
pub struct ForcedSweep {
    /// The forced DOF where the response is read ([`response_dof`]).
    pub dof: usize,
    /// `(w, |Q_1|)` at `dof` of the converged points in the order computed: the upward sweep,
    /// then the one from above where there is one (two branches: not one curve by frequency).
    pub curve: Vec<(f64, f64)>,
}

/// The forced response (`frc` with the model's forcing and all its modes, the run's own
/// settings) swept through the resonance synthesised from one mode, to compare with it: 300
/// fixed steps over `w_p (1 +- 8 zeta)`, `zeta` the modal damping of the converged backbone
/// point nearest the synthesised peak `w_p`. Where the mode's small-amplitude frequency lies
/// above that band (it softens past the resonance's width), also downward from `8 zeta` above
/// that frequency to `w_p (1 - 8 zeta)`, to follow an upper branch to the peak, with adaptive
/// steps (up to six times as long where the curve is straight, at most 2000 points); the
/// points of both, each sweep's in its order. `None` where nothing resonates (no synthesised
/// peak within the amplitudes computed, or no forcing at harmonic 1). `keep_going` is asked
/// after each point.
pub fn forced_sweep(
    rec: &Receptance,
    setup: &crate::setup::Setup,
    points: &[ModePoint],
    synthesis: &Synthesis,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<Option<ForcedSweep>, SolveError> {
    let (Some((_, wp, _)), Some(dof)) = (
        &synthesis.peak,
        response_dof(&setup.model, points, synthesis),
    ) else {
        return Ok(None);
    };
    let zeta = points
        .iter()
        .filter(|p| p.converged)
        .min_by(|x, y| (x.omega - wp).abs().total_cmp(&(y.omega - wp).abs()))
        .map_or(0.01, |p| p.damping_ratio.max(1e-4));
    let (w0, w1) = (wp * (1.0 - 8.0 * zeta), wp * (1.0 + 8.0 * zeta));
    // A mode that softens beyond its resonance's width (stick to slip lowers the frequency)
    // can lean its forced response to the left: the peak then lies on an upper branch that an
    // upward sweep never reaches (it stays on the lower branch up to the fold, then jumps).
    // Such a mode is also swept down from above its small-amplitude resonance, as a stepped
    // sine from above would be, and both sweeps' points are kept.
    let from_above = points
        .iter()
        .find(|p| p.converged)
        .filter(|p| p.omega > w1)
        .map(|p| p.omega * (1.0 + 8.0 * p.damping_ratio.max(1e-4)));
    let mut point = setup.point.clone();
    point.monitor = vec![dof];
    point.amplitude = crate::Amplitude::H1;
    // 300 steps through `w_p (1 +- 8 zeta)`; coming down from above, the same steps where the
    // curve bends (the adaptive control of `ewr frc --adaptive`) and up to six times longer
    // where it does not.
    let step = (w1 - w0) / 300.0;
    let up = crate::FrcSettings {
        omega_start: w0.max(step),
        omega_end: w1,
        step,
        min_step: step / 64.0,
        max_step: step,
        method: crate::Continuation::Sequential,
        point,
        max_points: 1000,
        adaptive: None,
        keep_histories: false,
    };
    let mut sweeps = vec![up.clone()];
    if let Some(top) = from_above {
        // Steps at most six times the upward ones: at 1/300 of the way down, single-contact-3d
        // (all:7) jumped across its lift-off fold onto a converged point of 2.1e6 at 2.944
        // rad/s, where a fresh solve gives 0.35. A long way down may stop at the point cap.
        sweeps.push(crate::FrcSettings {
            omega_start: top,
            omega_end: w0.max(step),
            max_step: 6.0 * step,
            max_points: 2000,
            adaptive: Some(1e-3),
            ..up
        });
    }
    let mut curve = Vec::new();
    for f in &sweeps {
        let pts = crate::frc(rec, &setup.params(), f, &mut |_| keep_going())?;
        curve.extend(
            pts.iter()
                .filter(|p| p.solution.status.converged())
                .map(|p| (p.solution.omega, p.solution.dofs.peak[0])),
        );
        if !keep_going() {
            break;
        }
    }
    Ok(Some(ForcedSweep { dof, curve }))
}
