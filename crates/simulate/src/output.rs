//! The result of a run: the last period's time histories and what is derived from them
//! (stick intervals, Coulomb check, energy balance, JSON summary, CSV and HDF5 files).

use crate::State;
use crate::contact::ContactStats;
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
    /// `input - viscous - friction - numerical - storage_change` (rounding only).
    pub residual: f64,
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
    /// State at the end of the run (= start of the reported period at steady state).
    pub final_state: State,
}

/// Per-contact findings over the reported period (the fields that `ewr solve` also reports
/// have the same names).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ContactSummary {
    /// Contact index.
    pub contact: usize,
    /// Sliding bound `f_d = muN`.
    pub mu_n: f64,
    /// Static bound `f_s`.
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
}

/// The JSON summary of `ewr simulate --json`.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Steady state reached (last period within `tol` of the one before).
    pub converged: bool,
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
                let f_d = self.mu_n[c];
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
                    let bound = if self.stick[j * nc + c] { f_s } else { f_d };
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
                let stick_intervals = intervals(&flags, self.dt, self.period);
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
                }
            })
            .collect()
    }

    /// The JSON-ready summary.
    pub fn summary(&self) -> Summary {
        Summary {
            converged: self.converged,
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
        f.flush()?;
        f.close()
    }
}

/// Runs of at least two `true` in a periodic sequence of flags, as time intervals (see
/// [`ContactSummary::stick_intervals`]).
fn intervals(flags: &[bool], dt: f64, period: f64) -> Vec<[f64; 2]> {
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
            if j - j0 < 2 {
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
        let iv = intervals(&f, dt, 8.0);
        // Samples 6, 7, 0, 1 form one run: steps [5, 9]; samples 3, 4: [2, 4].
        assert_eq!(iv, vec![[2.0, 4.0], [5.0, 9.0]]);
        // A single stuck step is a velocity reversal, not listed.
        let iv = intervals(&[false, true, false, true, true, false], dt, 6.0);
        assert_eq!(iv, vec![[2.0, 4.0]]);
        assert!(intervals(&[false; 4], dt, 4.0).is_empty());
        assert_eq!(intervals(&[true; 4], dt, 4.0), vec![[0.0, 4.0]]);
        let iv = intervals(&[false, true, true, false], dt, 4.0);
        assert_eq!(iv, vec![[0.0, 2.0]]);
    }
}
