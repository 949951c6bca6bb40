//! `ewr peaks`: the resonance peak followed as a design parameter varies (damper friction
//! bound, forcing level, a DOF's mass), without sweeping full curves, and the parameter
//! value with the smallest peak (the optimum damper).

use crate::Failure;
use crate::paths::named;
use crate::solve_cmd::{Common, Setup, setup};
use clap::Args;
use ewr_model::h5::{atomically, create_h5, put_1d, put_2d, put_str};
use ewr_study::ParamKind;
use ewr_study::track::TrackSettings;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// Long help of `ewr peaks`.
pub const PEAKS_ABOUT: &str = "Resonance peak tracking: the maximum over frequency of the \
    monitored amplitude, followed as a parameter varies from --from to --to, and the parameter \
    value with the smallest peak (the optimum damper).\n\n\
    The first value gets one coarse sweep (--omega-start, --omega-end, --step) whose highest \
    local maximum is refined to the true maximum in frequency (Brent's method, each \
    evaluation one periodic solution warm-started from its neighbours). Every further value \
    starts from the previous peak: a few solves bracket the new maximum and refine it, so no \
    full curve is swept. If the smallest peak lies between two values, the optimum is refined \
    by golden section on the parameter.\n\n\
    Parameters: mu_n (the friction bound of every contact), forcing (a factor on every \
    forcing amplitude), mass:DOF (the diagonal mass of a DOF, by index or label).";

/// Arguments of `ewr peaks`.
#[derive(Args, Debug)]
pub struct PeaksArgs {
    #[command(flatten)]
    common: Common,
    /// The parameter: mu_n, forcing (factor on the dynamic loads) or mass:DOF; for 3-D
    /// contacts mu or normal-preload (factor on the static loads and interferences).
    #[arg(long, value_name = "PARAM")]
    param: String,
    /// First parameter value.
    #[arg(long, value_name = "A", allow_negative_numbers = true)]
    from: f64,
    /// Last parameter value.
    #[arg(long, value_name = "B", allow_negative_numbers = true)]
    to: f64,
    /// Parameter values from --from to --to, evenly spaced.
    #[arg(
        long,
        default_value_t = 11,
        value_name = "N",
        allow_negative_numbers = true
    )]
    count: usize,
    /// Lowest frequency of the first value's coarse sweep.
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    omega_start: f64,
    /// Highest frequency of the first value's coarse sweep.
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    omega_end: f64,
    /// Frequency step of the coarse sweep, and the first bracketing step after it.
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    step: f64,
    /// Adaptive steps for the coarse sweeps (tolerance TOL, default 0.01): --step may then be
    /// coarse without stepping over a sharp peak.
    #[arg(
        long,
        value_name = "TOL",
        num_args = 0..=1,
        default_missing_value = "0.01",
        allow_negative_numbers = true
    )]
    adaptive: Option<f64>,
    /// Do not refine the optimum between parameter values.
    #[arg(long)]
    no_optimum: bool,
    /// Write the peak locus (HDF5).
    #[arg(long, short, value_name = "PEAKS.h5")]
    output: Option<PathBuf>,
    /// Write the peak locus as CSV.
    #[arg(long, value_name = "PEAKS.csv")]
    csv: Option<PathBuf>,
    /// Plot the peak amplitude against the parameter, optimum marked (.png or .svg).
    #[arg(long, value_name = "FIG")]
    plot: Option<PathBuf>,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    json: bool,
}

/// The tracked parameter.
#[derive(Clone, Debug)]
enum Param {
    MuN,
    /// Friction coefficient of 3-D contacts.
    Mu,
    /// Factor on the static preload of 3-D contacts (harmonic-0 loads and interferences).
    NormalPreload,
    Forcing,
    Mass(usize),
}

impl Param {
    fn name(&self, s: &Setup) -> String {
        match self {
            Param::MuN => "mu_n".into(),
            Param::Mu => "mu".into(),
            Param::NormalPreload => "normal-preload".into(),
            Param::Forcing => "forcing".into(),
            Param::Mass(d) => match &s.model.dof_labels {
                Some(l) => format!("mass:{}", l[*d]),
                None => format!("mass:{d}"),
            },
        }
    }

    /// The study parameter it is, and the DOFs it acts on.
    fn kind(&self) -> (ParamKind, Vec<usize>) {
        match self {
            Param::MuN => (ParamKind::MuN, vec![]),
            Param::Mu => (ParamKind::Mu, vec![]),
            Param::NormalPreload => (ParamKind::NormalPreload, vec![]),
            Param::Forcing => (ParamKind::ForcingScale, vec![]),
            Param::Mass(d) => (ParamKind::Mass, vec![*d]),
        }
    }

    /// The model at value `v`.
    fn model(&self, base: &ewr_model::Model, v: f64) -> Result<ewr_model::Model, String> {
        let (kind, dofs) = self.kind();
        let mut m = base.clone();
        let contacts: Vec<usize> = (0..m.contacts.len()).collect();
        kind.apply(&mut m, v, &contacts, &dofs)?;
        Ok(m)
    }

    /// Whether a value changes the structure (so the receptance is rebuilt).
    fn structural(&self) -> bool {
        self.kind().0.structural()
    }
}

/// One point of the locus.
#[derive(Serialize)]
struct LocusPoint {
    value: f64,
    omega: f64,
    amplitude: f64,
    evaluations: usize,
    stick_fraction: Vec<f64>,
}

/// Runs `ewr peaks`: exit 0 when every peak was found, 1 when some was not (the locus so far
/// is written), 2 on bad input.
pub fn peaks(a: &PeaksArgs) -> Result<(), Failure> {
    for (name, x) in [
        ("--omega-start", a.omega_start),
        ("--omega-end", a.omega_end),
        ("--step", a.step),
    ] {
        crate::args::finite(name, x, 0.0, false)?;
    }
    if let Some(tol) = a.adaptive {
        crate::args::finite("--adaptive", tol, 0.0, false)?;
    }
    if !a.from.is_finite() || !a.to.is_finite() {
        return Err(Failure::input(format!(
            "--from {} --to {}: the parameter range must be finite",
            a.from, a.to
        )));
    }
    if a.count < 1 {
        return Err(Failure::input("--count 0: give at least 1 value"));
    }
    crate::probe::readable(crate::probe::Kind::Model, &a.common.model)?;
    let base = setup(&a.common, None)?;
    let param = match a.param.as_str() {
        "mu_n" | "mu" | "normal-preload" => {
            let normal = base.model.contacts.has_normal();
            match (a.param.as_str(), normal) {
                ("mu_n", false) => Param::MuN,
                ("mu", true) => Param::Mu,
                ("normal-preload", true) => Param::NormalPreload,
                ("mu_n", true) => {
                    return Err(Failure::input(
                        "--param mu_n: the model's contacts are 3-D (normal direction), whose \
                         bound is mu times the normal force: track mu or normal-preload",
                    ));
                }
                (p, _) => {
                    return Err(Failure::input(format!(
                        "--param {p}: only for models with 3-D contacts (normal direction); \
                         track mu_n"
                    )));
                }
            }
        }
        "forcing" => Param::Forcing,
        other => match other.strip_prefix("mass:") {
            Some(dof) => {
                let d = crate::args::parse_dofs(dof, &base.model)?;
                Param::Mass(d[0])
            }
            None => {
                return Err(Failure::input(format!(
                    "--param {other:?}: use mu_n, forcing or mass:DOF (3-D contacts: mu, \
                     normal-preload)"
                )));
            }
        },
    };
    let lowest_ok = match param {
        Param::MuN | Param::Mu | Param::NormalPreload | Param::Mass(_) => 0.0,
        Param::Forcing => f64::MIN_POSITIVE,
    };
    if a.from.min(a.to) < lowest_ok {
        return Err(Failure::input(format!(
            "--from {} --to {}: {} must be >= 0{}",
            a.from,
            a.to,
            param.name(&base),
            if lowest_ok > 0.0 { " and not 0" } else { "" }
        )));
    }
    crate::args::prepare_outputs(
        &[named("MODEL", &a.common.model)],
        &[
            ("-o", a.output.as_deref(), &[]),
            ("--csv", a.csv.as_deref(), &[]),
            ("--plot", a.plot.as_deref(), &["png", "svg"]),
        ],
    )?;
    let t0 = Instant::now();
    let values = ewr_study::track::values(a.from, a.to, a.count);
    let settings = TrackSettings {
        omega_start: a.omega_start,
        omega_end: a.omega_end,
        step: a.step,
        adaptive: a.adaptive,
        point: base.point.clone(),
        kind: base.kind,
        structural: param.structural(),
    };
    let model_at = |v: f64| param.model(&base.model, v);
    let bar = crate::progress::bar(values.len() as u64 + 1, "parameter values");
    let result = ewr_study::track::track(&model_at, &settings, &values, !a.no_optimum, &mut || {
        bar.inc(1)
    });
    bar.finish_and_clear();
    let name = param.name(&base);
    let failure = result.failure.map(|e| format!("{name} = {e}"));
    let optimum = result.optimum;
    let locus = result.points;
    let elapsed = t0.elapsed().as_secs_f64();
    let points: Vec<LocusPoint> = locus
        .iter()
        .map(|e| LocusPoint {
            value: e.value,
            omega: e.peak.omega,
            amplitude: e.peak.amplitude,
            evaluations: e.peak.evaluations,
            stick_fraction: e.peak.solution.stick_fractions(),
        })
        .collect();
    write_outputs(a, &name, &points, optimum)?;
    if a.json {
        let s = serde_json::json!({
            "parameter": name,
            "locus": points,
            "optimum": optimum.map(|(v, amp, w)| serde_json::json!({
                "value": v, "amplitude": amp, "omega": w
            })),
            "solves": result.solves,
            "elapsed_s": elapsed,
            "error": failure,
        });
        say!("{s:#}");
    } else {
        say!(
            "{:>14} {:>14} {:>14} {:>7}  stuck (per contact)",
            name,
            "w peak",
            "amplitude",
            "solves"
        );
        for p in &points {
            let stick: Vec<String> = p
                .stick_fraction
                .iter()
                .map(|f| format!("{:.0}%", 100.0 * f))
                .collect();
            say!(
                "{:>14.6e} {:>14.8} {:>14.6e} {:>7}  {}",
                p.value,
                p.omega,
                p.amplitude,
                p.evaluations,
                stick.join(" ")
            );
        }
        if let Some((v, amp, w)) = optimum {
            say!("optimum: {name} = {v:.6e}, peak amplitude {amp:.6e} at w = {w:.8}");
        }
        say!(
            "{} parameter values, {} periodic solutions, {elapsed:.3} s",
            points.len(),
            result.solves
        );
    }
    match failure {
        Some(e) => Err(Failure::work(format!(
            "the peak was lost at {e}; the locus up to there was written"
        ))),
        None => Ok(()),
    }
}

fn write_outputs(
    a: &PeaksArgs,
    name: &str,
    points: &[LocusPoint],
    optimum: Option<(f64, f64, f64)>,
) -> Result<(), Failure> {
    let nc = points.first().map_or(0, |p| p.stick_fraction.len());
    if let Some(p) = &a.csv {
        atomically(p, |tmp| {
            let mut s = format!("{name},omega,amplitude,evaluations");
            for c in 0..nc {
                s.push_str(&format!(",stick_fraction{c}"));
            }
            s.push('\n');
            for q in points {
                s.push_str(&format!(
                    "{},{},{},{}",
                    q.value, q.omega, q.amplitude, q.evaluations
                ));
                for f in &q.stick_fraction {
                    s.push_str(&format!(",{f}"));
                }
                s.push('\n');
            }
            std::fs::write(tmp, s).map_err(|e| e.to_string())
        })
        .map_err(Failure::work)?;
    }
    if let Some(p) = &a.output {
        atomically(p, |tmp| {
            let f = create_h5(tmp)?;
            put_str(&f, "format", "ewr-result")?;
            put_str(&f, "kind", "peaks")?;
            put_str(&f, "model", &a.common.model.display().to_string())?;
            put_str(&f, "parameter", name)?;
            put_1d(
                &f,
                "value",
                &points.iter().map(|q| q.value).collect::<Vec<_>>(),
            )?;
            put_1d(
                &f,
                "omega",
                &points.iter().map(|q| q.omega).collect::<Vec<_>>(),
            )?;
            put_1d(
                &f,
                "amplitude",
                &points.iter().map(|q| q.amplitude).collect::<Vec<_>>(),
            )?;
            put_1d(
                &f,
                "evaluations",
                &points
                    .iter()
                    .map(|q| q.evaluations as i64)
                    .collect::<Vec<_>>(),
            )?;
            let stick: Vec<f64> = points
                .iter()
                .flat_map(|q| q.stick_fraction.iter().copied())
                .collect();
            put_2d(&f, "stick_fraction", points.len(), nc, &stick)?;
            let (v, amp, w) = optimum.unwrap_or((f64::NAN, f64::NAN, f64::NAN));
            put_1d(&f, "optimum", &[v, amp, w])?;
            Ok(())
        })
        .map_err(Failure::work)?;
    }
    if let Some(p) = &a.plot {
        let panel = crate::plot::DesignPanel {
            parameter: name.to_string(),
            series: vec![(
                "peak amplitude".to_string(),
                points.iter().map(|q| (q.value, q.amplitude)).collect(),
            )],
            optimum: optimum.map_or((f64::NAN, f64::NAN), |(v, amp, _)| (v, amp)),
        };
        crate::plot::design(
            p,
            "ewr peaks: resonance peak against the parameter",
            &[panel],
        )
        .map_err(Failure::work)?;
    }
    Ok(())
}
