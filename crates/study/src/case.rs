//! The model and settings a case of a study gives.

use crate::param::{Case, ParamKind, Value};
use crate::spec::{Objective, Study};
use ewr_contact::FrictionLaw;
use ewr_hb::receptance::ReceptanceKind;
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::Model;
use ewr_solve::{FrcSettings, PointSettings};

/// Everything one case's frequency sweep needs.
#[derive(Clone, Debug)]
pub struct CaseSetup {
    /// The model with the case's values applied.
    pub model: Model,
    /// Sweep settings, including how each point is solved.
    pub settings: FrcSettings,
    /// Condensation backend.
    pub kind: ReceptanceKind,
}

impl Study {
    /// The model and settings of one case; fails on a combination that cannot be solved
    /// (e.g. a harmonic set that misses the forcing, too few samples, an invalid mass matrix).
    pub fn case_setup(&self, case: &Case) -> Result<CaseSetup, String> {
        self.case_setup_with(case, None)
    }

    /// [`Study::case_setup`] with one more parameter set to a value: the optimised one of an
    /// `[optimize]` study.
    pub fn case_setup_with(
        &self,
        case: &Case,
        extra: Option<(ParamKind, f64)>,
    ) -> Result<CaseSetup, String> {
        let mut model = self.base.clone();
        let mut set = self.solver.set.clone();
        let mut auto = self.solver.auto;
        let mut law = self.solver.law;
        let values = self
            .parameters
            .iter()
            .map(|p| p.kind)
            .zip(case.values.iter().cloned())
            .chain(extra.map(|(k, x)| (k, Value::Num(x))));
        let mut mass = false;
        for (kind, v) in values {
            mass |= kind == ParamKind::Mass;
            match (kind, &v) {
                (ParamKind::Law, Value::Text(s)) => {
                    law = s.parse::<FrictionLaw>().map_err(|e| e.to_string())?;
                }
                (ParamKind::Harmonics, Value::Text(s)) => {
                    set = s.parse::<HarmonicSet>().map_err(|e| e.to_string())?;
                    auto = None;
                }
                (k, Value::Num(x)) if k.numeric() => {
                    k.apply(&mut model, *x, &self.mu_n_contacts, &self.mass_dofs)?;
                }
                (k, v) => return Err(format!("{}: invalid value {v}", k.name())),
            }
        }
        if mass {
            let problems = ewr_model::validate(&model);
            if ewr_model::has_errors(&problems) {
                let msgs: Vec<String> = problems
                    .iter()
                    .filter(|p| p.severity == ewr_model::Severity::Error)
                    .map(|p| p.to_string())
                    .collect();
                return Err(format!("invalid model: {}", msgs.join("; ")));
            }
        }
        if model.forcing.iter().all(|f| !set.contains(f.harmonic)) {
            return Err(format!("no forcing harmonic is in {set}"));
        }
        if let Some(why) = ewr_solve::harmonic_set_problem(&model, &set) {
            return Err(format!("harmonics {set}: {why}"));
        }
        let n_samples = self.solver.samples.unwrap_or_else(|| default_samples(&set));
        if let Some(why) = ewr_solve::samples_problem(&set, n_samples) {
            return Err(format!("{n_samples} samples per period for {set}: {why}"));
        }
        let f = &self.frequency;
        let settings = FrcSettings {
            omega_start: f.start,
            omega_end: f.end,
            step: f.step,
            min_step: f.min_step,
            max_step: f.max_step,
            method: f.method,
            point: PointSettings {
                set,
                n_samples,
                law,
                newton: self.solver.newton.clone(),
                ramp: self.solver.ramp,
                monitor: self.solver.monitor.clone(),
                retry_rho: true,
                preconditioner: self.solver.preconditioner,
                auto,
                amplitude: self.solver.amplitude,
            },
            max_points: f.max_points,
            // Peaks are refined in frequency anyway: a coarse sweep only has to bracket them,
            // which adaptive steps do without missing a sharp one.
            adaptive: match self.objective {
                Objective::Peak => f
                    .adaptive
                    .or(Some(ewr_solve::step_control::DEFAULT_TOLERANCE)),
                Objective::Curve => f.adaptive,
            },
            keep_histories: false,
        };
        if let Some(why) = ewr_solve::setup::memory_problem(&model.contacts, &settings.point) {
            return Err(why);
        }
        Ok(CaseSetup {
            model,
            settings,
            kind: self.solver.kind,
        })
    }
}
