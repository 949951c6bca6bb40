//! `ewr peaks`: the resonance peak followed as a design parameter varies (damper friction
//! bound, forcing level, a DOF's mass), without sweeping full curves, and the parameter
//! value with the smallest peak (the optimum damper).

use crate::Failure;
use crate::paths::named;
use crate::solve_cmd::{Common, setup};
use clap::Args;
use ewr_results::LocusPoint;
use ewr_solve::{Setup, SweepOptions};
use ewr_study::track::{PeakParam, TrackSettings};
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
    forcing amplitude), mass:DOF (the diagonal mass of a DOF, by index or label); for 3-D \
    contacts mu and normal-preload. On a modal receptance (auto's above 500 DOFs; a cyclic \
    sector's diameters too) a value of forcing or normal-preload keeps the modes extracted \
    for the first and solves only for its forced response; a mass, and the direct \
    backends, condense the model anew.";

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
    #[arg(long, value_name = "A", allow_hyphen_values = true)]
    from: f64,
    /// Last parameter value.
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    to: f64,
    /// Parameter values from --from to --to, evenly spaced.
    #[arg(
        long,
        default_value_t = 11,
        value_name = "N",
        allow_hyphen_values = true
    )]
    count: usize,
    /// Lowest frequency of the first value's coarse sweep.
    #[arg(long, value_name = "W", allow_hyphen_values = true)]
    omega_start: f64,
    /// Highest frequency of the first value's coarse sweep.
    #[arg(long, value_name = "W", allow_hyphen_values = true)]
    omega_end: f64,
    /// Frequency step of the coarse sweep, and the first bracketing step after it.
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
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
    /// Friction bound mu*N of every contact while another parameter is tracked, overriding
    /// the model's.
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    mu_n: Option<f64>,
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
    /// Floquet multipliers of every peak (Hill's method, docs/stability.md): a peak past a
    /// fold lies on a branch a sweep jumps off. Columns stable and max_multiplier in the
    /// table, CSV and HDF5.
    #[arg(long)]
    stability: bool,
    /// With --stability on a cyclic sector: every peak against perturbations of every
    /// inter-sector phase (docs/stability.md, section 2), not only the travelling wave's.
    #[arg(long, requires = "stability")]
    all_phases: bool,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    json: bool,
}

/// Runs `ewr peaks`: exit 0 when every peak was found, 1 when some was not (the locus so far
/// is written), 2 on bad input.
pub fn peaks(a: &PeaksArgs) -> Result<(), Failure> {
    let t_all = std::time::Instant::now();
    // The coarse sweeps obey the rules of a sweep: positive band, the point cap.
    SweepOptions {
        adaptive: a.adaptive,
        ..SweepOptions::new(a.omega_start, a.omega_end, a.step)
    }
    .check()?;
    if !a.from.is_finite() || !a.to.is_finite() {
        return Err(Failure::input(format!(
            "--from {} --to {}: the parameter range must be finite",
            a.from, a.to
        )));
    }
    if a.count < 1 {
        return Err(Failure::input("--count 0: give at least 1 value"));
    }
    if a.count > ewr_study::track::MAX_VALUES {
        return Err(Failure::input(format!(
            "--count {}: at most {} values",
            a.count,
            ewr_study::track::MAX_VALUES
        )));
    }
    crate::probe::readable(crate::probe::Kind::Model, &a.common.model)?;
    let base = setup(&a.common, a.mu_n)?;
    let param = PeakParam::parse(&a.param, &base.model)?;
    if a.all_phases && base.model.cyclic.is_none() {
        return Err(Failure::input(
            "--all-phases: the model is not a cyclic sector (its stability has no other \
             inter-sector phases)",
        ));
    }
    if let Some(why) = param.range_problem(a.from, a.to) {
        return Err(Failure::input(format!(
            "--from {} --to {}: {why}",
            a.from, a.to
        )));
    }
    let _claims = crate::args::prepare_outputs(
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
        structural: param.kind.structural(),
        stability: a.stability,
        all_phases: a.all_phases,
    };
    let model_at = |v: f64| param.model_at(&base.model, v);
    let bar = crate::progress::bar(values.len() as u64 + 1, "parameter values");
    crate::interrupt::install();
    let result = ewr_study::track::track(
        &model_at,
        &settings,
        &values,
        !a.no_optimum,
        &mut || bar.inc(1),
        &crate::interrupt::requested,
    );
    bar.finish_and_clear();
    for w in &result.warnings {
        say_err!("{w}");
    }
    let name = param.name.clone();
    let interrupted = result.interrupted;
    let failure = result.failure.map(|e| format!("{name} = {e}"));
    let optimum = result.optimum;
    let plateau = result.plateau;
    for e in result.points.iter() {
        if let Some(why) = &e.unclassified {
            say_err!(
                "warning: no stability at {} = {}: {why}",
                param.name,
                e.value
            );
        }
    }
    let locus = result.points;
    let elapsed = t0.elapsed().as_secs_f64();
    let points = ewr_results::locus_points(&locus);
    let status = match (&failure, interrupted) {
        (_, true) => "interrupted".to_string(),
        (Some(e), false) => format!("stopped: the peak was lost at {e}"),
        (None, false) => "complete".to_string(),
    };
    write_outputs(a, &base, &name, &points, optimum, plateau, &status)?;
    if a.json {
        let s = serde_json::json!({
            "parameter": name,
            "locus": points,
            "optimum": optimum.map(|(v, amp, w)| serde_json::json!({
                "value": v, "amplitude": amp, "omega": w, "interior": result.interior,
                "plateau": plateau.map(|(lo, hi)| [lo, hi]),
            })),
            "solves": result.solves,
            "elapsed_s": elapsed,
            "error": failure,
        });
        say!("{s:#}");
    } else {
        let stab_head = if a.stability { "  stable |mu|max" } else { "" };
        say!(
            "{:>14} {:>14} {:>14} {:>7}{stab_head}  stuck (per contact)",
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
            let stab = match (a.stability, p.stable, p.max_multiplier) {
                (false, _, _) => String::new(),
                (true, Some(s), Some(m)) => {
                    format!("  {:>6} {m:>7.4}", if s { "yes" } else { "NO" })
                }
                (true, _, _) => format!("  {:>6} {:>7}", "-", "-"),
            };
            let switch = if p.switched {
                "  <- another resonance"
            } else {
                ""
            };
            say!(
                "{:>14.6e} {:>14.8} {:>14.6e} {:>7}{stab}  {}{switch}",
                p.value,
                p.omega,
                p.amplitude,
                p.evaluations,
                stick.join(" ")
            );
        }
        for w in points.windows(2).filter(|w| w[1].switched) {
            say!(
                "note: between {name} = {:.6e} and {:.6e} the highest peak changes resonance \
                 (w = {:.6} -> {:.6})",
                w[0].value,
                w[1].value,
                w[0].omega,
                w[1].omega
            );
        }
        let unstable = points.iter().filter(|p| p.stable == Some(false)).count();
        if unstable > 0 {
            say!(
                "note: {unstable} peak(s) are unstable (a multiplier outside the unit circle): past a fold, a sweep jumps off before reaching them"
            );
        }
        if let Some((v, amp, w)) = optimum {
            say!("optimum: {name} = {v:.6e}, peak amplitude {amp:.6e} at w = {w:.8}");
            if let Some((lo, hi)) = plateau {
                let stuck = points.iter().find(|p| p.value == v).is_some_and(|p| {
                    p.stick_fraction
                        .iter()
                        .all(|&f| f >= ewr_solve::periodic::FULLY_STUCK)
                });
                let why = if stuck {
                    ": every contact sticks the whole period at the optimum, and any value of the \
                     range does as well"
                } else {
                    ""
                };
                say!(
                    "note: the optimum is flat: the peak is within 1% of it from {name} = \
                     {lo:.6e} to {hi:.6e}{why}"
                );
            } else if !result.interior && points.len() > 1 {
                say!(
                    "note: the smallest peak is at the end of the range ({name} = {v:.6e}): the \
                     optimum may lie beyond it; widen --from/--to"
                );
            }
        }
        say!(
            "{} parameter values, {} periodic solutions, {elapsed:.3} s",
            points.len(),
            result.solves
        );
    }
    crate::solve_cmd::print_profile(&a.common, t_all);
    if interrupted {
        return Err(Failure::work(format!(
            "interrupted: the locus of the {} values computed was written",
            points.len()
        )));
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
    base: &Setup,
    name: &str,
    points: &[LocusPoint],
    optimum: Option<(f64, f64, f64)>,
    plateau: Option<(f64, f64)>,
    status: &str,
) -> Result<(), Failure> {
    if let Some(p) = &a.csv {
        ewr_results::write_peaks_csv(p, name, points).map_err(Failure::work)?;
    }
    if let Some(p) = &a.output {
        ewr_results::write_peaks_h5(p, &a.common.model, name, points, optimum, plateau, status)
            .map_err(Failure::work)?;
    }
    if let Some(p) = &a.plot {
        let axis =
            ewr_results::figures::FrequencyAxis::of_model(&base.model, base.point.amplitude, false);
        ewr_results::plot_peaks(p, name, points, optimum, axis).map_err(Failure::work)?;
    }
    Ok(())
}
