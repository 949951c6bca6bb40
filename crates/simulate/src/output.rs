//! The result of a run: the last period's time histories and what is derived from them
//! (stick intervals, Coulomb check, energy balance, JSON summary, CSV and HDF5 files).

use crate::State;
use crate::contact::{ContactState, ContactStats};
use crate::timeseries::TimeSeries;
use serde::Serialize;
use std::path::Path;

/// Energy balance over the reported period, from the discrete identity of the scheme.
///
/// Multiplying the step equation by `v+` gives, exactly,
/// `input = viscous + friction + numerical + storage_change` (so `residual` is rounding):
/// `input = sum h f(t+).v+`, `viscous = sum h v+.C v+`, `friction = -sum h r+.V+ >= 0`,
/// `numerical = sum (|v+ - v|_M^2 + |u+ - u|_K^2) / 2` (backward Euler's algorithmic
/// dissipation, first order in `h`), `storage_change` = kinetic + strain energy at the end
/// minus at the start (zero at a periodic state). Against the continuous balance
/// `input = viscous + friction`, `numerical` is the discretisation error.
///
/// 3-D contacts add `normal` to the identity and report `impact` (both absent otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct EnergyBalance {
    /// Work of the external forcing.
    pub input: f64,
    /// Energy dissipated by viscous damping.
    pub viscous: f64,
    /// Energy dissipated by friction.
    pub friction: f64,
    /// Algorithmic dissipation of backward Euler.
    pub numerical: f64,
    /// Change of kinetic plus strain energy over the period.
    pub storage_change: f64,
    /// `input - viscous - friction - numerical - storage_change (- normal)` (rounding only).
    pub residual: f64,
    /// 3-D contacts: energy taken from the structure by the normal forces, `-sum h
    /// lambda.V_N`. Rigid contacts: nonzero only in the steps where a contact closes
    /// (part of the impact loss); compliant contacts: the change of the contact springs'
    /// energy (zero at a periodic state) plus the implicit penalty's algorithmic loss.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub normal: Option<f64>,
    /// 3-D contacts: energy lost in impacts, `normal + numerical` summed over the steps in
    /// which a contact closes and the step after (a rigid contact closes exactly in the
    /// first and its approach velocity is stopped in the second). The scheme's impacts are
    /// inelastic (zero restitution), so a mass `m` landing at speed `v` loses `m v^2 / 2`;
    /// contacts that stay closed add nothing. A part of `normal + numerical`, not a further
    /// term of the identity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impact: Option<f64>,
}

/// The normal side of 3-D contacts over the reported period.
///
/// Arrays are sample-major: sample `j`, contact `c` is entry `j * n_contacts + c`.
#[derive(Clone, Debug, PartialEq)]
pub struct NormalHistory {
    /// Friction coefficient per contact (the bound is `mu lambda`).
    pub mu: Vec<f64>,
    /// Initial gap per contact (negative: interference).
    pub g0: Vec<f64>,
    /// Normal contact stiffness per contact, `None` for rigid contacts.
    pub k_n: Option<Vec<f64>>,
    /// Normal force `lambda >= 0` (compression), mean over the step ending at the sample.
    pub lambda: Vec<f64>,
    /// Gap of the unilateral contact at the sample, `g0 + W_N u + lambda / k_n` (positive =
    /// open; zero while loaded).
    pub gap: Vec<f64>,
    /// Separated, sliding or stuck over the step ending at the sample.
    pub state: Vec<ContactState>,
}

/// The last period of a run and how it was obtained.
///
/// Contact arrays are sample-major: sample `j` (time `t[j]`), contact `c`, direction `k`
/// is entry `j * dim * n_contacts + c * dim + k`.
#[derive(Clone, Debug)]
pub struct Simulation {
    /// Forcing circular frequency.
    pub omega: f64,
    /// Period `2 pi / omega`.
    pub period: f64,
    /// Time step actually used (`period / steps_per_period`).
    pub dt: f64,
    /// Steps (and samples) per period.
    pub steps_per_period: usize,
    /// Periods integrated, the reported one included.
    pub periods_run: usize,
    /// True when the reported period differs from the one before by less than `tol`.
    pub converged: bool,
    /// True when the caller stopped the run before the steady state or the period cap
    /// (`Options::stop`): the reported period is the last one integrated.
    pub interrupted: bool,
    /// That difference (relative; see `Options::tol`).
    pub steady_state_error: f64,
    /// The tolerance asked for.
    pub tol: f64,
    /// Wall time of the run (s).
    pub elapsed_s: f64,
    /// `f_s / f_d`.
    pub static_factor: f64,
    /// Tangential directions per contact.
    pub dim: usize,
    /// Number of contacts.
    pub n_contacts: usize,
    /// Dynamic (sliding) bound `f_d = muN` per contact.
    pub mu_n: Vec<f64>,
    /// The model's E-WR scaling `rho` per contact (used by the Coulomb check).
    pub rho: Vec<f64>,
    /// Sample times within the period, `j * dt` for `j = 0 .. steps_per_period`.
    pub t: Vec<f64>,
    /// Relative tangential displacement `w = W u`.
    pub w: Vec<f64>,
    /// Relative tangential velocity `W u'`.
    pub v: Vec<f64>,
    /// Friction force on the structure (mean over the step ending at the sample).
    pub r: Vec<f64>,
    /// Stick flag per sample and contact (`j * n_contacts + c`): the step ending at the
    /// sample stuck.
    pub stick: Vec<bool>,
    /// Recorded DOFs.
    pub dofs: Vec<usize>,
    /// Their displacements, sample-major (`j * dofs.len() + i`).
    pub u: Vec<f64>,
    /// Energy balance over the reported period.
    pub energy: EnergyBalance,
    /// Contact-solver statistics over the whole run.
    pub contact_solver: ContactStats,
    /// True when the step matrix was inverted densely.
    pub dense: bool,
    /// Normal forces, gaps and contact states of 3-D contacts, `None` for contacts with a
    /// constant bound `mu_n`.
    pub normal: Option<NormalHistory>,
    /// State at the end of the run (= start of the reported period at steady state); for a
    /// model with contact stiffnesses `k_t`, the slider DOFs follow the model's DOFs.
    pub final_state: State,
}

/// Per-contact findings over the reported period (the fields that `ewr solve` also reports
/// have the same names).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ContactSummary {
    /// Contact index.
    pub contact: usize,
    /// Sliding bound `f_d = muN` (3-D contacts: its largest value `mu max(lambda)`).
    pub mu_n: f64,
    /// Static bound `f_s` (3-D contacts: its largest value).
    pub static_bound: f64,
    /// Stick intervals `[start, end]` within the period: `0 <= start < period` and
    /// `end <= start + period` (an interval running over the end of the period continues
    /// past `period`). The step ending at a stuck sample `t_j` covers `[t_j - dt, t_j]`.
    /// A single stuck step is not listed: it is how a velocity reversal shows in the
    /// discrete scheme (the velocity crosses zero within the step), not a stick phase.
    pub stick_intervals: Vec<[f64; 2]>,
    /// Fraction of the period covered by `stick_intervals`.
    pub stick_fraction: f64,
    /// Largest `|r - P(r - rho V)| / muN` over the samples, `P` the projection on the disk of
    /// radius `f_s` (stuck samples) or `f_d` (sliding samples): zero iff Coulomb's law holds.
    pub max_coulomb_violation: f64,
    /// Energy dissipated by the contact over the period, `-sum dt r . V` (>= 0).
    pub dissipated_energy: f64,
    /// Largest `|w|`.
    pub displacement_amplitude: f64,
    /// Largest `|V|`.
    pub velocity_amplitude: f64,
    /// Largest `|r|`.
    pub force_amplitude: f64,
    /// The normal side of a 3-D contact (absent for contacts with a constant bound).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub normal: Option<NormalSummary>,
}

/// What a 3-D contact's normal side did over the reported period.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NormalSummary {
    /// Friction coefficient.
    pub mu: f64,
    /// Separation intervals `[start, end]` (no normal force), with the conventions of the
    /// stick intervals, but a single separated step is listed too.
    pub separation_intervals: Vec<[f64; 2]>,
    /// Fraction of the period spent separated.
    pub separation_fraction: f64,
    /// Fraction of the period spent sliding (in contact).
    pub slip_fraction: f64,
    /// Largest normal force.
    pub normal_force_max: f64,
    /// Mean normal force over the period.
    pub normal_force_mean: f64,
    /// Smallest gap (Signorini: >= 0; a negative value is a penetration).
    pub min_gap: f64,
    /// Largest gap at a sample that carries normal force (Signorini: 0).
    pub max_loaded_gap: f64,
}

/// The JSON summary of `ewr simulate --json`.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Steady state reached (last period within `tol` of the one before).
    pub converged: bool,
    /// Stopped by the user before the steady state (Ctrl-C): the last period integrated.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Periods integrated.
    pub periods_run: usize,
    /// Relative difference between the last two periods.
    pub steady_state_error: f64,
    /// The tolerance.
    pub tol: f64,
    /// Wall time (s).
    pub elapsed_s: f64,
    /// Forcing circular frequency.
    pub omega: f64,
    /// Period.
    pub period: f64,
    /// Time step used.
    pub dt: f64,
    /// Steps per period.
    pub steps_per_period: usize,
    /// `f_s / f_d`.
    pub static_factor: f64,
    /// `dense` or `sparse` step matrix.
    pub linear_solver: &'static str,
    /// Energy balance over the last period.
    pub energy: EnergyBalance,
    /// Contact-solver statistics.
    pub contact_solver: ContactStats,
    /// Per contact: stick intervals, Coulomb check.
    pub contacts: Vec<ContactSummary>,
}

impl Simulation {
    /// `dim * n_contacts`.
    pub fn n_rows(&self) -> usize {
        self.dim * self.n_contacts
    }

    /// Value of contact array `a` (one of `w`, `v`, `r`) at sample `j`, contact `c`,
    /// direction `k`.
    pub fn at(&self, a: &[f64], j: usize, c: usize, k: usize) -> f64 {
        a[j * self.n_rows() + c * self.dim + k]
    }

    /// Time history of recorded DOF `dof` over the period, if it was recorded.
    pub fn dof_history(&self, dof: usize) -> Option<Vec<f64>> {
        let i = self.dofs.iter().position(|&d| d == dof)?;
        let nd = self.dofs.len();
        Some((0..self.t.len()).map(|j| self.u[j * nd + i]).collect())
    }

    /// Stick intervals, Coulomb check and extremes of every contact.
    pub fn contact_summaries(&self) -> Vec<ContactSummary> {
        let (ns, nc, dim) = (self.t.len(), self.n_contacts, self.dim);
        (0..nc)
            .map(|c| {
                let normal = self.normal.as_ref();
                // The sliding bound of sample j: constant, or mu lambda for 3-D contacts.
                let bound_at = |j: usize| match normal {
                    None => self.mu_n[c],
                    Some(nh) => nh.mu[c] * nh.lambda[j * nc + c],
                };
                let f_d = (0..ns).map(bound_at).fold(self.mu_n[c], f64::max);
                let f_s = f_d * self.static_factor;
                let rho = self.rho.get(c).copied().unwrap_or(1.0);
                let (mut viol, mut max_r, mut max_v, mut max_w) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
                let mut dissipated = 0.0;
                for j in 0..ns {
                    let mut r = [0.0; 2];
                    let mut v = [0.0; 2];
                    let mut w = [0.0; 2];
                    for k in 0..dim {
                        r[k] = self.at(&self.r, j, c, k);
                        v[k] = self.at(&self.v, j, c, k);
                        w[k] = self.at(&self.w, j, c, k);
                    }
                    let nr = r[0].hypot(r[1]);
                    max_r = max_r.max(nr);
                    max_v = max_v.max(v[0].hypot(v[1]));
                    max_w = max_w.max(w[0].hypot(w[1]));
                    dissipated -= self.dt * (r[0] * v[0] + r[1] * v[1]);
                    let bound = if self.stick[j * nc + c] {
                        self.static_factor * bound_at(j)
                    } else {
                        bound_at(j)
                    };
                    let z = [r[0] - rho * v[0], r[1] - rho * v[1]];
                    let nz = z[0].hypot(z[1]);
                    let p = if nz > bound {
                        [z[0] * bound / nz, z[1] * bound / nz]
                    } else {
                        z
                    };
                    let e = (r[0] - p[0]).hypot(r[1] - p[1]);
                    viol = viol.max(if f_d > 0.0 { e / f_d } else { e });
                }
                let flags: Vec<bool> = (0..ns).map(|j| self.stick[j * nc + c]).collect();
                let stick_intervals = intervals(&flags, self.dt, self.period, 2);
                let normal = normal.map(|nh| self.normal_summary(nh, c));
                let stuck = stick_intervals.iter().fold(0.0, |s, i| s + (i[1] - i[0]));
                ContactSummary {
                    contact: c,
                    mu_n: f_d,
                    static_bound: f_s,
                    stick_intervals,
                    stick_fraction: stuck / self.period,
                    max_coulomb_violation: viol,
                    dissipated_energy: dissipated,
                    displacement_amplitude: max_w,
                    velocity_amplitude: max_v,
                    force_amplitude: max_r,
                    normal,
                }
            })
            .collect()
    }

    /// Separation, loads and Signorini check of 3-D contact `c`.
    fn normal_summary(&self, nh: &NormalHistory, c: usize) -> NormalSummary {
        let (ns, nc) = (self.t.len(), self.n_contacts);
        let at = |a: &[f64], j: usize| a[j * nc + c];
        let state = |j: usize| nh.state[j * nc + c];
        let flags: Vec<bool> = (0..ns)
            .map(|j| state(j) == ContactState::Separated)
            .collect();
        let separated = flags.iter().filter(|&&s| s).count();
        let slipping = (0..ns).filter(|&j| state(j) == ContactState::Slip).count();
        let (mut max_l, mut sum_l, mut min_g, mut loaded_g) = (0.0f64, 0.0, f64::INFINITY, 0.0f64);
        for j in 0..ns {
            let (l, g) = (at(&nh.lambda, j), at(&nh.gap, j));
            max_l = max_l.max(l);
            sum_l += l;
            min_g = min_g.min(g);
            if l > 0.0 {
                loaded_g = loaded_g.max(g);
            }
        }
        NormalSummary {
            mu: nh.mu[c],
            separation_intervals: intervals(&flags, self.dt, self.period, 1),
            separation_fraction: separated as f64 / ns.max(1) as f64,
            slip_fraction: slipping as f64 / ns.max(1) as f64,
            normal_force_max: max_l,
            normal_force_mean: sum_l / ns.max(1) as f64,
            min_gap: if ns == 0 { 0.0 } else { min_g },
            max_loaded_gap: loaded_g,
        }
    }

    /// The JSON-ready summary.
    pub fn summary(&self) -> Summary {
        Summary {
            converged: self.converged,
            interrupted: self.interrupted,
            periods_run: self.periods_run,
            steady_state_error: self.steady_state_error,
            tol: self.tol,
            elapsed_s: self.elapsed_s,
            omega: self.omega,
            period: self.period,
            dt: self.dt,
            steps_per_period: self.steps_per_period,
            static_factor: self.static_factor,
            linear_solver: if self.dense { "dense" } else { "sparse" },
            energy: self.energy,
            contact_solver: self.contact_solver,
            contacts: self.contact_summaries(),
        }
    }

    /// The time series of the CSV file: `t`, the contact columns (see
    /// [`crate::timeseries`]), then `u<dof>` for each recorded DOF.
    pub fn timeseries(&self) -> TimeSeries {
        let mut ts = TimeSeries::from_contacts(
            &self.t,
            self.dim,
            self.n_contacts,
            &self.w,
            &self.v,
            &self.r,
        );
        if let Some(nh) = &self.normal {
            let nc = self.n_contacts;
            let col = |a: &[f64], c: usize| (0..self.t.len()).map(|j| a[j * nc + c]).collect();
            for c in 0..nc {
                let state = (0..self.t.len())
                    .map(|j| nh.state[j * nc + c] as u8 as f64)
                    .collect();
                let [n, g, s] = crate::timeseries::normal_column_names(c);
                for (name, data) in [(n, col(&nh.lambda, c)), (g, col(&nh.gap, c)), (s, state)] {
                    ts.push(name, data).expect("one value per sample");
                }
            }
        }
        if self.normal.is_none() {
            let nc = self.n_contacts;
            for c in 0..nc {
                let state = (0..self.t.len())
                    .map(|j| if self.stick[j * nc + c] { 2.0 } else { 1.0 })
                    .collect();
                ts.push(crate::timeseries::state_column_name(c), state)
                    .expect("one value per sample");
            }
        }
        for &d in &self.dofs {
            let h = self.dof_history(d).expect("recorded DOF");
            ts.push(format!("u{d}"), h).expect("one value per sample");
        }
        ts
    }

    /// Writes the HDF5 result file (layout in `docs/simulate.md`, with the conventions of
    /// `ewr solve`'s result files), atomically: a partial file is never left under the
    /// final name. `model_file` is recorded as the `model` attribute.
    pub fn write_h5(&self, path: &Path, model_file: &str) -> Result<(), String> {
        ewr_model::h5::atomically(path, |tmp| {
            self.write_h5_to(tmp, model_file).map_err(|e| e.to_string())
        })
    }

    fn write_h5_to(&self, path: &Path, model_file: &str) -> hdf5::Result<()> {
        use hdf5::types::VarLenUnicode;
        let f = hdf5::File::create(path)?;
        let text = |loc: &hdf5::Location, name: &str, s: &str| -> hdf5::Result<()> {
            let v: VarLenUnicode = s.parse().map_err(|_| hdf5::Error::from("bad string"))?;
            loc.new_attr::<VarLenUnicode>()
                .create(name)?
                .write_scalar(&v)
        };
        let float = |loc: &hdf5::Location, name: &str, x: f64| -> hdf5::Result<()> {
            loc.new_attr::<f64>().create(name)?.write_scalar(&x)
        };
        let int = |loc: &hdf5::Location, name: &str, x: i64| -> hdf5::Result<()> {
            loc.new_attr::<i64>().create(name)?.write_scalar(&x)
        };
        let (ns, nc, m) = (self.t.len(), self.n_contacts, self.n_rows());
        text(&f, "format", "ewr-result")?;
        int(&f, "version", 1)?;
        text(&f, "kind", "simulate")?;
        text(
            &f,
            "creator",
            concat!("ewr-simulate ", env!("CARGO_PKG_VERSION")),
        )?;
        text(&f, "model", model_file)?;
        int(&f, "contact_dim", self.dim as i64)?;
        int(&f, "n_contacts", nc as i64)?;
        float(&f, "omega", self.omega)?;
        float(&f, "period", self.period)?;
        int(&f, "converged", self.converged as i64)?;
        // Only where it happened, so that the files of completed runs keep their layout.
        if self.interrupted {
            text(&f, "status", "interrupted")?;
        }
        float(&f, "dt", self.dt)?;
        int(&f, "n_samples", ns as i64)?;
        int(&f, "periods_run", self.periods_run as i64)?;
        float(&f, "steady_state_error", self.steady_state_error)?;
        float(&f, "tol", self.tol)?;
        float(&f, "elapsed_s", self.elapsed_s)?;
        float(&f, "static_factor", self.static_factor)?;
        text(
            &f,
            "linear_solver",
            if self.dense { "dense" } else { "sparse" },
        )?;
        let d1 = |g: &hdf5::Group, name: &str, v: &[f64]| -> hdf5::Result<()> {
            g.new_dataset::<f64>()
                .shape([v.len()])
                .create(name)?
                .write_raw(v)
        };
        // Sample-major in memory, one row per contact direction (or DOF) in the file.
        let rows = |a: &[f64], nr: usize| -> Vec<f64> {
            let mut out = vec![0.0; a.len()];
            for j in 0..ns {
                for i in 0..nr {
                    out[i * ns + j] = a[j * nr + i];
                }
            }
            out
        };
        let root = f.as_group()?;
        d1(&root, "mu_n", &self.mu_n)?;
        d1(&root, "rho", &self.rho)?;
        let fs: Vec<f64> = self.mu_n.iter().map(|x| x * self.static_factor).collect();
        d1(&root, "static_bound", &fs)?;
        if let Some(nh) = &self.normal {
            int(&f, "normal", 1)?;
            d1(&root, "mu", &nh.mu)?;
            d1(&root, "g0", &nh.g0)?;
            if let Some(k) = &nh.k_n {
                d1(&root, "k_n", k)?;
            }
        }
        let dofs: Vec<i64> = self.dofs.iter().map(|&x| x as i64).collect();
        root.new_dataset::<i64>()
            .shape([dofs.len()])
            .create("monitored_dofs")?
            .write_raw(&dofs)?;
        let g = f.create_group("time")?;
        d1(&g, "t", &self.t)?;
        for (name, a) in [("w", &self.w), ("v", &self.v), ("r", &self.r)] {
            g.new_dataset::<f64>()
                .shape([m, ns])
                .create(name)?
                .write_raw(&rows(a, m))?;
        }
        let mut stick = vec![0u8; nc * ns];
        for j in 0..ns {
            for c in 0..nc {
                stick[c * ns + j] = self.stick[j * nc + c] as u8;
            }
        }
        g.new_dataset::<u8>()
            .shape([nc, ns])
            .create("stick")?
            .write_raw(&stick)?;
        if let Some(nh) = &self.normal {
            for (name, a) in [("lambda", &nh.lambda), ("gap", &nh.gap)] {
                g.new_dataset::<f64>()
                    .shape([nc, ns])
                    .create(name)?
                    .write_raw(&rows(a, nc))?;
            }
            let mut state = vec![0u8; nc * ns];
            for j in 0..ns {
                for c in 0..nc {
                    state[c * ns + j] = nh.state[j * nc + c] as u8;
                }
            }
            g.new_dataset::<u8>()
                .shape([nc, ns])
                .create("state")?
                .write_raw(&state)?;
        }
        let nd = self.dofs.len();
        g.new_dataset::<f64>()
            .shape([nd, ns])
            .create("u")?
            .write_raw(&rows(&self.u, nd))?;
        let sums = self.contact_summaries();
        let g = f.create_group("contacts")?;
        let col = |f: fn(&ContactSummary) -> f64| sums.iter().map(f).collect::<Vec<f64>>();
        d1(
            &g,
            "max_coulomb_violation",
            &col(|c| c.max_coulomb_violation),
        )?;
        d1(&g, "dissipated_energy", &col(|c| c.dissipated_energy))?;
        d1(
            &g,
            "displacement_amplitude",
            &col(|c| c.displacement_amplitude),
        )?;
        d1(&g, "velocity_amplitude", &col(|c| c.velocity_amplitude))?;
        d1(&g, "force_amplitude", &col(|c| c.force_amplitude))?;
        d1(&g, "stick_fraction", &col(|c| c.stick_fraction))?;
        let iv: Vec<f64> = sums
            .iter()
            .flat_map(|c| c.stick_intervals.iter().flatten().copied())
            .collect();
        let ic: Vec<i64> = sums
            .iter()
            .flat_map(|c| c.stick_intervals.iter().map(|_| c.contact as i64))
            .collect();
        g.new_dataset::<f64>()
            .shape([ic.len(), 2])
            .create("stick_intervals")?
            .write_raw(&iv)?;
        g.new_dataset::<i64>()
            .shape([ic.len()])
            .create("stick_interval_contact")?
            .write_raw(&ic)?;
        if self.normal.is_some() {
            let ns_: Vec<&NormalSummary> = sums.iter().filter_map(|c| c.normal.as_ref()).collect();
            let col = |f: fn(&NormalSummary) -> f64| ns_.iter().map(|c| f(c)).collect::<Vec<f64>>();
            d1(&g, "separation_fraction", &col(|c| c.separation_fraction))?;
            d1(&g, "slip_fraction", &col(|c| c.slip_fraction))?;
            d1(&g, "normal_force_max", &col(|c| c.normal_force_max))?;
            d1(&g, "normal_force_mean", &col(|c| c.normal_force_mean))?;
            d1(&g, "min_gap", &col(|c| c.min_gap))?;
            d1(&g, "max_loaded_gap", &col(|c| c.max_loaded_gap))?;
            let iv: Vec<f64> = ns_
                .iter()
                .flat_map(|c| c.separation_intervals.iter().flatten().copied())
                .collect();
            let ic: Vec<i64> = ns_
                .iter()
                .enumerate()
                .flat_map(|(k, c)| c.separation_intervals.iter().map(move |_| k as i64))
                .collect();
            g.new_dataset::<f64>()
                .shape([ic.len(), 2])
                .create("separation_intervals")?
                .write_raw(&iv)?;
            g.new_dataset::<i64>()
                .shape([ic.len()])
                .create("separation_interval_contact")?
                .write_raw(&ic)?;
        }
        let e = f.create_group("energy")?;
        let eb = &self.energy;
        for (name, x) in [
            ("input", eb.input),
            ("viscous", eb.viscous),
            ("friction", eb.friction),
            ("numerical", eb.numerical),
            ("storage_change", eb.storage_change),
            ("residual", eb.residual),
        ] {
            float(&e, name, x)?;
        }
        for (name, x) in [("normal", eb.normal), ("impact", eb.impact)] {
            if let Some(x) = x {
                float(&e, name, x)?;
            }
        }
        f.flush()?;
        f.close()
    }
}

/// Runs of at least `min_run` `true` in a periodic sequence of flags, as time intervals (see
/// [`ContactSummary::stick_intervals`]).
fn intervals(flags: &[bool], dt: f64, period: f64, min_run: usize) -> Vec<[f64; 2]> {
    let ns = flags.len();
    if ns == 0 || flags.iter().all(|&s| !s) {
        return Vec::new();
    }
    if flags.iter().all(|&s| s) {
        return vec![[0.0, period]];
    }
    // Start scanning just after a sliding sample, so that no run is cut by the wrap.
    let first_slip = flags.iter().position(|&s| !s).expect("some sample slides");
    let mut out = Vec::new();
    let mut j = first_slip + 1;
    let end = first_slip + 1 + ns;
    while j < end {
        if flags[j % ns] {
            let j0 = j;
            while j < end && flags[j % ns] {
                j += 1;
            }
            if j - j0 < min_run {
                continue;
            }
            // Samples j0 .. j-1 stuck: the steps cover [t_{j0} - dt, t_{j-1}].
            let mut a = j0 as f64 * dt - dt;
            let mut b = (j - 1) as f64 * dt;
            while a >= period - 0.5 * dt {
                a -= period;
                b -= period;
            }
            if a < -0.5 * dt {
                a += period;
                b += period;
            }
            out.push([a.max(0.0), b]);
        } else {
            j += 1;
        }
    }
    out.sort_by(|x, y| x[0].total_cmp(&y[0]));
    out
}

#[cfg(test)]
mod tests {
    use super::intervals;

    #[test]
    fn stick_intervals_wrap_around_the_period() {
        let dt = 1.0;
        let f = [true, true, false, true, true, false, true, true];
        let iv = intervals(&f, dt, 8.0, 2);
        // Samples 6, 7, 0, 1 form one run: steps [5, 9]; samples 3, 4: [2, 4].
        assert_eq!(iv, vec![[2.0, 4.0], [5.0, 9.0]]);
        // A single stuck step is a velocity reversal, not listed.
        let iv = intervals(&[false, true, false, true, true, false], dt, 6.0, 2);
        assert_eq!(iv, vec![[2.0, 4.0]]);
        assert!(intervals(&[false; 4], dt, 4.0, 2).is_empty());
        assert_eq!(intervals(&[true; 4], dt, 4.0, 2), vec![[0.0, 4.0]]);
        let iv = intervals(&[false, true, true, false], dt, 4.0, 2);
        assert_eq!(iv, vec![[0.0, 2.0]]);
    }
}
