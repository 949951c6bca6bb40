//! Backward-Euler (Moreau-Jean, theta = 1) time stepping to the periodic steady state.
//!
//! One step from `(u_n, v_n)` to `t_{n+1} = t_n + h`:
//!
//! ```text
//! M (v+ - v) + h C v+ + h K u+ = h f(t+) + h W^T r+,     u+ = u + h v+
//! => A v+ = M v - h K u + h f(t+) + h W^T r+,            A = M + h C + h^2 K
//! => v+ = v_free + h A^-1 W^T r+,   V+ = W v+ = V_free + D r+,   D = h W A^-1 W^T
//! ```
//!
//! and `r+` solves Coulomb's law at `V+` exactly (module [`crate::contact`]). The friction
//! force is the mean force over the step (the impulse divided by `h`), so it stays bounded
//! by `muN` and jumps freely at stick-slip transitions. A massless DOF has a zero row of `M`:
//! its row of the step equation is the quasi-static balance `C v+ + K u+ = f + W^T r+`,
//! which is well posed because `A` keeps its `h C + h^2 K` part; its velocity may jump.

use crate::SimulateError;
use crate::contact::{ContactSolver, ContactState, ContactStats, NormalSpec};
use crate::linear::{Csr, Forcing, LinearSolver, Step};
use crate::model_check::check_model;
use crate::output::{EnergyBalance, NormalHistory, Simulation};
use ewr_model::Model;
use std::time::Instant;

/// Steps per period when no time step is given: `2^16`, so that `dt` is about the
/// paper's `1e-3` at `w = 0.1` (seed 000 sec. 4.3) and the cost per period does not depend
/// on the frequency.
pub const DEFAULT_STEPS_PER_PERIOD: usize = 1 << 16;

/// Fewest steps per period accepted: below this the last period is not a time history.
pub const MIN_STEPS_PER_PERIOD: usize = 16;

/// Largest `n * dim * nc` for which `A^-1 W^T` is kept in memory (128 MB); above it the
/// friction correction costs a second solve per step instead.
const MAX_STORED_RESPONSE: usize = 1 << 24;

/// What to do with hysteretic damping `i eta K`, which has no time-domain meaning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Hysteretic {
    /// Refuse models with `eta` (an error that names the option below).
    #[default]
    Refuse,
    /// Replace `i eta K` by the viscous `(eta / omega) K`, equal to it at the forcing
    /// frequency (harmonic 1) only; higher harmonics are damped more.
    EquivalentViscous,
}

/// Displacements and velocities of every DOF at one instant.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Displacements `u` (`n` entries).
    pub u: Vec<f64>,
    /// Velocities `u'` (`n` entries).
    pub v: Vec<f64>,
}

/// Settings of a run; [`Options::new`] gives the defaults for a forcing frequency.
#[derive(Clone, Debug)]
pub struct Options {
    /// Forcing circular frequency `w` (the period is `2 pi / w`).
    pub omega: f64,
    /// Time step; rounded so that a period is a whole number of steps. `None`:
    /// [`DEFAULT_STEPS_PER_PERIOD`] steps per period.
    pub dt: Option<f64>,
    /// Period cap: stop here even if the steady state is not reached.
    pub max_periods: usize,
    /// Steady state when the state at the start of two successive periods differs by less
    /// than `tol`, relative to the largest displacement (velocity) over the period.
    pub tol: f64,
    /// Static bound `f_s = static_factor * muN` (>= 1); the sliding force is `f_d = muN`.
    pub static_factor: f64,
    /// Contact iteration tolerance: largest force change of a Gauss-Seidel sweep, relative
    /// to the static bound (several contacts only).
    pub contact_tol: f64,
    /// Cap on the Gauss-Seidel sweeps of one step; reaching it is counted, not fatal.
    pub contact_max_sweeps: usize,
    /// Dense or sparse factorisation of the step matrix.
    pub linear_solver: LinearSolver,
    /// Policy for hysteretic damping.
    pub hysteretic: Hysteretic,
    /// DOFs whose displacement is recorded over the last period.
    pub record_dofs: Vec<usize>,
    /// Initial state at `t = 0` (default: at rest, `u = v = 0`). For a model with contact
    /// stiffnesses `k_t`, either the model's DOFs (the sliders start relaxed) or those
    /// followed by the slider DOFs (as in [`crate::Simulation::final_state`]).
    pub initial: Option<State>,
    /// Set by the caller to stop early (Ctrl-C): one more period is integrated and reported,
    /// with [`crate::Simulation::interrupted`] set.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Options {
    /// Defaults: `2^16` steps per period, at most 1000 periods, `tol = 1e-6`, `f_s = f_d`.
    pub fn new(omega: f64) -> Self {
        Options {
            omega,
            dt: None,
            max_periods: 1000,
            tol: 1e-6,
            static_factor: 1.0,
            contact_tol: 1e-10,
            contact_max_sweeps: 1000,
            linear_solver: LinearSolver::Auto,
            hysteretic: Hysteretic::Refuse,
            record_dofs: Vec::new(),
            initial: None,
            stop: None,
        }
    }

    /// Period `2 pi / w`.
    pub fn period(&self) -> f64 {
        std::f64::consts::TAU / self.omega
    }

    /// Steps per period: `round(T / dt)`, or the default.
    pub fn steps_per_period(&self) -> usize {
        match self.dt {
            Some(dt) => (self.period() / dt).round().max(1.0) as usize,
            None => DEFAULT_STEPS_PER_PERIOD,
        }
    }

    fn check(&self, n: usize) -> Result<(), SimulateError> {
        let bad = |s: String| Err(SimulateError::Option(s));
        if !(self.omega.is_finite() && self.omega > 0.0) {
            return bad(format!("omega = {}: must be finite and > 0", self.omega));
        }
        if let Some(dt) = self.dt
            && !(dt.is_finite() && dt > 0.0)
        {
            return bad(format!("dt = {dt}: must be finite and > 0"));
        }
        let steps = self.steps_per_period();
        if steps < MIN_STEPS_PER_PERIOD {
            return bad(format!(
                "dt = {}: only {steps} steps per period {}; at least {MIN_STEPS_PER_PERIOD} are needed",
                self.dt.unwrap_or(f64::NAN),
                self.period()
            ));
        }
        if steps > u32::MAX as usize {
            return bad(format!("dt: {steps} steps per period is too many"));
        }
        if self.max_periods == 0 {
            return bad("the period cap must be at least 1".into());
        }
        if !(self.tol.is_finite() && self.tol > 0.0) {
            return bad(format!("tol = {}: must be finite and > 0", self.tol));
        }
        if !(self.static_factor.is_finite() && self.static_factor >= 1.0) {
            return bad(format!(
                "static factor = {}: must be finite and >= 1 (f_s >= f_d)",
                self.static_factor
            ));
        }
        if !(self.contact_tol.is_finite() && self.contact_tol > 0.0) || self.contact_max_sweeps == 0
        {
            return bad("contact tolerance must be > 0 and the sweep cap >= 1".into());
        }
        if let Some(&d) = self.record_dofs.iter().find(|&&d| d >= n) {
            return bad(format!("recorded DOF {d} is out of range 0..{n}"));
        }
        if let Some(s) = &self.initial {
            if s.u.len() != n || s.v.len() != n {
                return bad(format!(
                    "initial state has {} displacements and {} velocities for {n} DOFs",
                    s.u.len(),
                    s.v.len()
                ));
            }
            if s.u.iter().chain(&s.v).any(|x| !x.is_finite()) {
                return bad("initial state is not finite".into());
            }
        }
        Ok(())
    }
}

/// Reported at the end of every period, for progress bars.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Periods completed.
    pub period: usize,
    /// The period cap.
    pub max_periods: usize,
    /// Relative difference between the states at the start and the end of this period.
    pub error: f64,
    /// Wall time since the start of the run (s).
    pub elapsed_s: f64,
}

/// Everything recorded over the reported period.
struct Recorder {
    w: Vec<f64>,
    v: Vec<f64>,
    r: Vec<f64>,
    stick: Vec<bool>,
    u: Vec<f64>,
    energy: EnergyBalance,
    v_old: Vec<f64>,
    /// 3-D contacts: normal force, gap and state per sample (`j * nc + c`).
    lambda: Vec<f64>,
    gap: Vec<f64>,
    state: Vec<ContactState>,
}

/// The normal side of 3-D contacts during a run.
struct NormalRun {
    /// Initial gap per contact.
    g0: Vec<f64>,
    /// Series compliance `1/k_n` per contact (0 = rigid).
    compliance: Vec<f64>,
    mu: Vec<f64>,
    k_n: Option<Vec<f64>>,
    /// Gap `g0 + W_N u` at the start of the current step.
    gap: Vec<f64>,
    /// State of each contact over the last step.
    state: Vec<ContactState>,
    /// Steps since the contact closed (1 in the step where it closes), 0 when separated:
    /// a rigid contact that closes within a step closes exactly in it and stops the
    /// approach velocity in the next, so an impact spans the steps aged 1 and 2.
    closed_for: Vec<u32>,
}

/// The integrator: operators built once, state advanced step by step.
struct Integrator<'a> {
    opts: &'a Options,
    n: usize,
    /// Tangential contact rows `dim * nc`.
    m: usize,
    /// All contact rows: `m`, then `nc` normal rows for 3-D contacts.
    rows: usize,
    nc: usize,
    h: f64,
    steps: usize,
    mass: Csr,
    stiffness: Csr,
    damping: Csr,
    forcing: Forcing,
    w: Csr,
    step: Step,
    /// `A^-1 W^T` by columns (as rows of a `Csr`), without negligible entries, when small
    /// enough to keep.
    g: Option<Csr>,
    contact: ContactSolver,
    normal: Option<NormalRun>,
    stats: ContactStats,
    u: Vec<f64>,
    v: Vec<f64>,
    r: Vec<f64>,
    vel_c: Vec<f64>,
    stick: Vec<bool>,
    v_free: Vec<f64>,
    v_free_c: Vec<f64>,
    scratch: Vec<f64>,
}

/// Runs the model to its periodic steady state and returns the last period.
///
/// `progress` is called after every period (periods completed, cap, current difference).
/// Fails on invalid options, on models the scheme cannot represent (hysteretic or modal
/// damping, contact dimension other than 1 or 2) and on a singular step matrix or
/// Delassus block; a run that reaches the period cap is returned with `converged = false`.
pub fn simulate(
    model: &Model,
    opts: &Options,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Simulation, SimulateError> {
    simulate_with(model, opts, progress, MAX_STORED_RESPONSE)
}

/// [`simulate`] with the memory limit of `A^-1 W^T` as a parameter (tests use 0 to run the
/// second-solve path on small models).
fn simulate_with(
    model: &Model,
    opts: &Options,
    progress: &mut dyn FnMut(&Progress),
    max_stored: usize,
) -> Result<Simulation, SimulateError> {
    let start = Instant::now();
    if let Some(cy) = &model.cyclic {
        // The sector's right DOFs lag its left ones by a fraction of the period: a delay
        // equation in time, which this scheme does not integrate.
        return Err(SimulateError::Model(format!(
            "the model is one cyclic sector of {} (engine order {}): simulate its full \
             annulus instead (`ewr model annulus SECTOR -o DISK.h5`)",
            cy.sectors, cy.engine_order
        )));
    }
    // Tangential contact stiffnesses become massless slider DOFs (a Jenkins element).
    let expanded = crate::jenkins::expand_k_t(model)?;
    let widened;
    let (model, opts) = match &expanded {
        None => (model, opts),
        Some(m2) => {
            let mut o = opts.clone();
            if let Some(s) = &opts.initial {
                o.initial = Some(crate::jenkins::extend_state(model, s)?);
            }
            widened = o;
            (m2, &widened)
        }
    };
    let mut it = Integrator::new(model, opts, max_stored)?;
    if let Some(s) = &opts.initial {
        it.u.copy_from_slice(&s.u);
        it.v.copy_from_slice(&s.v);
    }
    let mut want_record = false;
    let mut k = 0;
    let (rec, err) = loop {
        k += 1;
        let record = want_record || k == opts.max_periods;
        let prev = (it.u.clone(), it.v.clone());
        let mut rec = record.then(|| it.recorder());
        let (max_u, max_v) = it.run_period(rec.as_mut());
        let diff = |a: &[f64], b: &[f64], scale: f64| {
            let d = a
                .iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max);
            if d == 0.0 {
                0.0
            } else {
                d / scale.max(f64::MIN_POSITIVE)
            }
        };
        let err = diff(&it.u, &prev.0, max_u).max(diff(&it.v, &prev.1, max_v));
        progress(&Progress {
            period: k,
            max_periods: opts.max_periods,
            error: err,
            elapsed_s: start.elapsed().as_secs_f64(),
        });
        let stopping = opts
            .stop
            .as_ref()
            .is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst));
        if let Some(rec) = rec
            && (err <= opts.tol || k >= opts.max_periods || stopping)
        {
            break (rec, err);
        }
        // A stop request records the next period, which is then reported.
        want_record = err <= opts.tol || stopping;
        if !err.is_finite() {
            return Err(SimulateError::Numerical(format!(
                "the solution blew up (non-finite state) in period {k}"
            )));
        }
    };
    Ok(it.finish(model, rec, k, err, start.elapsed().as_secs_f64()))
}

impl<'a> Integrator<'a> {
    fn new(model: &Model, opts: &'a Options, max_stored: usize) -> Result<Self, SimulateError> {
        let n = model.n_dofs();
        opts.check(n)?;
        check_model(model)?;
        if model.damping.modal_zeta.is_some() {
            return Err(SimulateError::Model(
                "modal damping ratios (/damping/modal_zeta) belong to the modal receptance and \
                 have no time-domain form here; give a viscous C or Rayleigh damping instead"
                    .into(),
            ));
        }
        let contacts = &model.contacts;
        let (dim, nc) = (contacts.dim, contacts.len());
        if nc > 0 && !(dim == 1 || dim == 2) {
            return Err(SimulateError::Model(format!(
                "contact dimension {dim}: only 1 or 2 tangential directions are supported"
            )));
        }
        let m = dim * nc;
        let rows = contacts.rows();
        let mut damping = Csr::from_sparse(&model.viscous_damping());
        if let Some(eta) = model.damping.hysteretic_eta.filter(|&e| e != 0.0) {
            match opts.hysteretic {
                Hysteretic::Refuse => {
                    return Err(SimulateError::Model(format!(
                        "hysteretic damping eta = {eta} has no time-domain meaning; ask for the \
                         equivalent viscous damping (eta / omega) K (CLI: --eta-as-viscous)"
                    )));
                }
                Hysteretic::EquivalentViscous => {
                    let k = Csr::from_sparse(&model.stiffness);
                    let s = eta / opts.omega;
                    let rows = (0..n)
                        .map(|i| {
                            damping
                                .row(i)
                                .chain(k.row(i).map(|(j, x)| (j, s * x)))
                                .collect()
                        })
                        .collect();
                    damping = Csr::from_rows(n, rows);
                }
            }
        }
        let steps = opts.steps_per_period();
        let h = opts.period() / steps as f64;
        let mass = Csr::from_sparse(&model.mass);
        let stiffness = Csr::from_sparse(&model.stiffness);
        let forcing = Forcing::from_model(model);
        let w = Csr::from_sparse(&contacts.contact_matrix(n).map_err(SimulateError::Model)?);
        let step = Step::new(&mass, &stiffness, &damping, &forcing, h, opts.linear_solver)?;

        // Contact operators: A^-1 W^T column by column, then D = h W A^-1 W^T (normal rows
        // included for 3-D contacts).
        let keep = n * rows <= max_stored;
        let mut g_cols = Vec::with_capacity(if keep { rows } else { 0 });
        let mut d = vec![0.0; rows * rows];
        let mut col = vec![0.0; n];
        for kk in 0..rows {
            col.fill(0.0);
            for (j, a) in w.row(kk) {
                col[j] += a;
            }
            step.solve_in_place(&mut col);
            if col.iter().any(|x| !x.is_finite()) {
                return Err(SimulateError::Numerical(
                    "the step matrix M + h C + h^2 K is singular".into(),
                ));
            }
            for a in 0..rows {
                d[a * rows + kk] = h * w.row_dot(a, &col);
            }
            if keep {
                // The response to a unit contact force decays away from the contact; drop
                // what is rounding next to its largest entry.
                let big = col.iter().fold(0.0f64, |s, x| s.max(x.abs()));
                g_cols.push(
                    col.iter()
                        .enumerate()
                        .filter(|(_, x)| x.abs() > crate::contact::DROP * big)
                        .map(|(i, &x)| (i, x))
                        .collect(),
                );
            }
        }
        for a in 0..rows {
            for b in 0..a {
                let s = 0.5 * (d[a * rows + b] + d[b * rows + a]);
                d[a * rows + b] = s;
                d[b * rows + a] = s;
            }
        }
        for c in 0..nc {
            let o = c * dim;
            let at = |i: usize, j: usize| d[(o + i) * rows + o + j];
            let ok = if dim == 1 {
                at(0, 0) > 0.0
            } else {
                at(0, 0) > 0.0
                    && at(0, 0) * at(1, 1) - at(0, 1) * at(1, 0) > 1e-14 * at(0, 0) * at(1, 1)
            };
            if !ok {
                return Err(SimulateError::Model(format!(
                    "contact {c}: its Delassus block h W A^-1 W^T is singular (its directions \
                     are not independent, or move no DOF)"
                )));
            }
        }
        let normal = match &contacts.normal {
            None => None,
            Some(nc_) => {
                let compliance: Vec<f64> = contacts
                    .compliance()
                    .map_or_else(|| vec![0.0; nc], |c| c[m..].to_vec());
                for c in 0..nc {
                    let dnn = d[(m + c) * rows + m + c];
                    if nc_.fixed_load(c).is_none()
                        && compliance[c] == 0.0
                        && dnn.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
                    {
                        return Err(SimulateError::Model(format!(
                            "contact {c}: its normal direction moves no DOF (the normal \
                             Delassus entry h W_N A^-1 W_N^T is {dnn:e}), so a rigid normal \
                             contact cannot be enforced; check its W_N row"
                        )));
                    }
                }
                Some(NormalRun {
                    // A contact with a fixed load has no normal direction, hence no gap.
                    g0: (0..nc)
                        .map(|c| match nc_.fixed_load(c) {
                            Some(_) => 0.0,
                            None => nc_.g0[c],
                        })
                        .collect(),
                    compliance,
                    mu: nc_.mu.clone(),
                    k_n: nc_.k_n.clone(),
                    gap: vec![0.0; nc],
                    state: vec![ContactState::Separated; nc],
                    closed_for: vec![0; nc],
                })
            }
        };
        let f_d: Vec<f64> = contacts.mu_n.clone();
        let f_s: Vec<f64> = f_d.iter().map(|x| x * opts.static_factor).collect();
        let spec = normal.as_ref().map(|nr| NormalSpec {
            mu: nr.mu.clone(),
            load: contacts
                .normal
                .as_ref()
                .map(|n| (0..nc).map(|c| n.fixed_load(c)).collect())
                .unwrap_or_default(),
            compliance: nr.compliance.clone(),
            static_factor: opts.static_factor,
            h,
        });
        let contact = ContactSolver::new(
            dim,
            d,
            f_s,
            f_d,
            opts.contact_tol,
            opts.contact_max_sweeps,
            spec,
        );
        Ok(Integrator {
            opts,
            n,
            m,
            rows,
            nc,
            h,
            steps,
            mass,
            stiffness,
            damping,
            forcing,
            w,
            step,
            g: keep.then(|| Csr::from_rows(n, g_cols)),
            contact,
            normal,
            stats: ContactStats::default(),
            u: vec![0.0; n],
            v: vec![0.0; n],
            r: vec![0.0; rows],
            vel_c: vec![0.0; rows],
            stick: vec![false; nc],
            v_free: vec![0.0; n],
            v_free_c: vec![0.0; rows],
            scratch: vec![0.0; n],
        })
    }

    fn recorder(&self) -> Recorder {
        let (ns, m) = (self.steps, self.m);
        let e0 = 0.5 * (self.mass.quad(&self.v) + self.stiffness.quad(&self.u));
        Recorder {
            w: vec![0.0; ns * m],
            v: vec![0.0; ns * m],
            r: vec![0.0; ns * m],
            stick: vec![false; ns * self.nc],
            u: vec![0.0; ns * self.opts.record_dofs.len()],
            energy: EnergyBalance {
                storage_change: -e0,
                ..Default::default()
            },
            v_old: vec![0.0; self.n],
            lambda: vec![
                0.0;
                if self.normal.is_some() {
                    ns * self.nc
                } else {
                    0
                }
            ],
            gap: vec![
                0.0;
                if self.normal.is_some() {
                    ns * self.nc
                } else {
                    0
                }
            ],
            state: vec![
                ContactState::Separated;
                if self.normal.is_some() {
                    ns * self.nc
                } else {
                    0
                }
            ],
        }
    }

    /// Advances one period; returns the largest `|u|` and `|v|` met.
    fn run_period(&mut self, mut rec: Option<&mut Recorder>) -> (f64, f64) {
        let (n, h, omega) = (self.n, self.h, self.opts.omega);
        let (mut max_u, mut max_v) = (0.0f64, 0.0f64);
        for j in 1..=self.steps {
            // Phase time: exact periodicity of the forcing, no drift over many periods.
            let t = j as f64 * h;
            self.step.free_velocity(
                &self.u,
                &self.v,
                omega,
                t,
                &mut self.v_free,
                &mut self.scratch,
            );
            for a in 0..self.rows {
                self.v_free_c[a] = self.w.row_dot(a, &self.v_free);
            }
            let (sweeps, fail) = match &mut self.normal {
                None => self.contact.solve(
                    &self.v_free_c,
                    &mut self.r,
                    &mut self.vel_c,
                    &mut self.stick,
                ),
                Some(nr) => {
                    for (c, g) in nr.gap.iter_mut().enumerate() {
                        *g = nr.g0[c] + self.w.row_dot(self.m + c, &self.u);
                    }
                    let out = self.contact.solve_normal(
                        &self.v_free_c,
                        &nr.gap,
                        &mut self.r,
                        &mut self.vel_c,
                        &mut self.stick,
                        &mut nr.state,
                    );
                    for (age, s) in nr.closed_for.iter_mut().zip(&nr.state) {
                        *age = if *s == ContactState::Separated {
                            0
                        } else {
                            age.saturating_add(1)
                        };
                    }
                    out
                }
            };
            self.stats.max_sweeps = self.stats.max_sweeps.max(sweeps);
            if let Some(c) = fail {
                self.stats.unconverged_steps += 1;
                self.stats.max_unconverged_change = self.stats.max_unconverged_change.max(c);
            }
            if let Some(rec) = rec.as_deref_mut() {
                rec.v_old.copy_from_slice(&self.v);
            }
            // v+ = v_free + h A^-1 W^T r.
            match &self.g {
                Some(g) => {
                    self.v.copy_from_slice(&self.v_free);
                    for (kk, &rk) in self.r.iter().enumerate() {
                        if rk != 0.0 {
                            let s = h * rk;
                            for (i, gi) in g.row(kk) {
                                self.v[i] += s * gi;
                            }
                        }
                    }
                }
                None => {
                    self.scratch.fill(0.0);
                    for (kk, &rk) in self.r.iter().enumerate() {
                        for (i, a) in self.w.row(kk) {
                            self.scratch[i] += h * rk * a;
                        }
                    }
                    self.step.solve_in_place(&mut self.scratch);
                    for i in 0..n {
                        self.v[i] = self.v_free[i] + self.scratch[i];
                    }
                }
            }
            for i in 0..n {
                self.u[i] += h * self.v[i];
                max_u = max_u.max(self.u[i].abs());
                max_v = max_v.max(self.v[i].abs());
            }
            if let Some(rec) = rec.as_deref_mut() {
                self.record(rec, j % self.steps, t);
            }
        }
        if let Some(rec) = rec {
            rec.energy.storage_change +=
                0.5 * (self.mass.quad(&self.v) + self.stiffness.quad(&self.u));
            rec.energy.residual = rec.energy.input
                - rec.energy.viscous
                - rec.energy.friction
                - rec.energy.numerical
                - rec.energy.storage_change;
            if let Some(x) = rec.energy.normal {
                rec.energy.residual -= x;
            }
        }
        (max_u, max_v)
    }

    fn record(&mut self, rec: &mut Recorder, j: usize, t: f64) {
        let (m, h) = (self.m, self.h);
        for a in 0..m {
            rec.w[j * m + a] = self.w.row_dot(a, &self.u);
            rec.v[j * m + a] = self.w.row_dot(a, &self.v);
            rec.r[j * m + a] = self.r[a];
        }
        rec.stick[j * self.nc..(j + 1) * self.nc].copy_from_slice(&self.stick);
        let nd = self.opts.record_dofs.len();
        for (i, &d) in self.opts.record_dofs.iter().enumerate() {
            rec.u[j * nd + i] = self.u[d];
        }
        // Discrete energy identity of the step (multiply the step equation by v+):
        // dE + |dv|_M^2/2 + |du|_K^2/2 + h v.C v = h f.v + h r.V.
        let e = &mut rec.energy;
        e.input += h * self.forcing.dot(self.opts.omega, t, &self.v);
        e.viscous += h * self.damping.quad(&self.v);
        e.friction -= h * self.r[..m]
            .iter()
            .zip(&self.vel_c[..m])
            .map(|(r, v)| r * v)
            .sum::<f64>();
        // Energy taken by the normal forces in this step, and whether a contact closed in it.
        let mut closing = None;
        if let Some(nr) = &self.normal {
            let nc = self.nc;
            let (lambda, vn) = (&self.r[m..], &self.vel_c[m..]);
            let mut work = 0.0;
            let mut closes = false;
            for c in 0..nc {
                rec.lambda[j * nc + c] = lambda[c];
                rec.gap[j * nc + c] =
                    nr.g0[c] + self.w.row_dot(m + c, &self.u) + nr.compliance[c] * lambda[c];
                rec.state[j * nc + c] = nr.state[c];
                work -= h * lambda[c] * vn[c];
                closes |= matches!(nr.closed_for[c], 1 | 2);
            }
            *e.normal.get_or_insert(0.0) += work;
            e.impact.get_or_insert(0.0);
            closing = closes.then_some(work);
        }
        for (a, b) in rec.v_old.iter_mut().zip(&self.v) {
            *a = b - *a;
        }
        self.scratch
            .iter_mut()
            .zip(&self.v)
            .for_each(|(s, v)| *s = h * v);
        let numerical = 0.5 * (self.mass.quad(&rec.v_old) + self.stiffness.quad(&self.scratch));
        e.numerical += numerical;
        // An inelastic impact: what the normal forces and the scheme's dissipation take in
        // the steps where a contact closes (see EnergyBalance::impact).
        if let (Some(work), Some(impact)) = (closing, e.impact.as_mut()) {
            *impact += work + numerical;
        }
    }

    fn finish(
        self,
        model: &Model,
        rec: Recorder,
        periods: usize,
        err: f64,
        elapsed: f64,
    ) -> Simulation {
        let ns = self.steps;
        let normal = self.normal.map(|nr| NormalHistory {
            mu: nr.mu,
            g0: nr.g0,
            k_n: nr.k_n,
            lambda: rec.lambda,
            gap: rec.gap,
            state: rec.state,
        });
        Simulation {
            omega: self.opts.omega,
            period: self.opts.period(),
            dt: self.h,
            steps_per_period: ns,
            periods_run: periods,
            converged: err <= self.opts.tol,
            interrupted: err > self.opts.tol
                && periods < self.opts.max_periods
                && self
                    .opts
                    .stop
                    .as_ref()
                    .is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst)),
            steady_state_error: err,
            tol: self.opts.tol,
            elapsed_s: elapsed,
            static_factor: self.opts.static_factor,
            dim: model.contacts.dim,
            n_contacts: self.nc,
            mu_n: model.contacts.mu_n.clone(),
            rho: model.contacts.rho.clone(),
            t: (0..ns).map(|j| j as f64 * self.h).collect(),
            w: rec.w,
            v: rec.v,
            r: rec.r,
            stick: rec.stick,
            dofs: self.opts.record_dofs.clone(),
            u: rec.u,
            energy: rec.energy,
            contact_solver: self.stats,
            dense: self.step.is_dense(),
            normal,
            final_state: State {
                u: self.u,
                v: self.v,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_solve_path_matches_stored_response() {
        // Friction correction by a second solve per step (big models) against the stored
        // A^-1 W^T (small models): same steady state.
        let mut model = ewr_model::examples::chain(3);
        model.contacts.mu_n.iter_mut().for_each(|x| *x = 0.03);
        for solver in [LinearSolver::Dense, LinearSolver::Sparse] {
            let mut o = Options::new(0.3);
            o.dt = Some(1e-2);
            o.linear_solver = solver;
            let a = simulate_with(&model, &o, &mut |_| {}, MAX_STORED_RESPONSE).unwrap();
            let b = simulate_with(&model, &o, &mut |_| {}, 0).unwrap();
            assert!(a.converged && b.converged);
            assert_eq!(a.periods_run, b.periods_run);
            for (x, y) in a.r.iter().zip(&b.r).chain(a.w.iter().zip(&b.w)) {
                assert!((x - y).abs() < 1e-10, "{solver:?}: {x} {y}");
            }
        }
    }
}
