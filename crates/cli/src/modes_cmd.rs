//! `ewr modes`: nonlinear modes by the extended periodic motion concept with the exact E-WR
//! friction law (docs/nonlinear-modes.md): the backbone of one mode, its natural frequency and
//! modal damping ratio against the modal amplitude.

use crate::Failure;
use crate::paths::named;
use crate::solve_cmd::{Common, setup};
use clap::Args;
use ewr_solve::nonlinear_mode::{ModePoint, backbone_noting};
use std::path::PathBuf;

/// Arguments of `ewr modes`. The backbone uses the exact law and a dense receptance (above 500
/// DOFs, or with modal damping ratios, the modes that cover its harmonics, extracted once)
/// whatever the solver options say, and dense Newton steps but on the modal receptance or with
/// 3-D contacts, where `--linear` chooses as for a forced solve; `--receptance` applies to
/// `--frc`.
#[derive(Args, Debug)]
pub struct ModesArgs {
    #[command(flatten)]
    pub common: Common,
    /// Which mode, counted from 1 in the structure with every contact stuck (the small
    /// amplitude limit the backbone starts from).
    #[arg(long, default_value_t = 1, value_name = "K")]
    pub mode: usize,
    /// Smallest modal amplitude sqrt(Q1^H M Q1) (Q1 the fundamental harmonic of every DOF).
    #[arg(long, value_name = "A", allow_hyphen_values = true)]
    pub from: f64,
    /// Largest modal amplitude.
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    pub to: f64,
    /// Amplitudes, evenly spaced on a logarithmic scale from --from to --to.
    #[arg(long, default_value_t = 30, value_name = "N")]
    pub points: usize,
    /// Friction bound mu*N for every contact, overriding the model's.
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    pub mu_n: Option<f64>,
    /// Write the backbone (frequency, damping, fundamental of every DOF, contact forces per
    /// amplitude) to this HDF5 file.
    #[arg(long, short, value_name = "MODES.h5")]
    pub output: Option<PathBuf>,
    /// Write the backbone as a CSV table.
    #[arg(long, value_name = "MODES.csv")]
    pub csv: Option<PathBuf>,
    /// Plot frequency and damping ratio against amplitude: .png or .svg.
    #[arg(long, value_name = "FIG")]
    pub plot: Option<PathBuf>,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also sweep the forced response with the model's forcing (as `ewr frc`, all modes)
    /// through the resonance synthesised from this mode, and compare: its peak in the output,
    /// its curve on the figure (the first harmonic of the forced DOF the mode moves most; a
    /// mode that softens past its resonance's width is also swept down from above).
    #[arg(long)]
    pub frc: bool,
}

/// `ewr modes`: exit 0 every amplitude converged, 1 some did not (all written), 2 bad input.
pub fn modes(a: &ModesArgs) -> Result<(), Failure> {
    let t_all = std::time::Instant::now();
    if !(a.from.is_finite() && a.from > 0.0 && a.to.is_finite() && a.to >= a.from) {
        return Err(Failure::input(format!(
            "--from {} --to {}: the modal amplitudes must be positive, --to at least --from",
            a.from, a.to
        )));
    }
    if a.points == 0 || a.points > ewr_solve::MAX_POINTS {
        return Err(Failure::input(format!(
            "--points {}: between 1 and {}",
            a.points,
            ewr_solve::MAX_POINTS
        )));
    }
    ewr_solve::nonlinear_mode::check_options(&a.common.options(a.mu_n))
        .map_err(|e| Failure::input(e.render(ewr_solve::setup::Spelling::Cli)))?;
    crate::probe::readable(crate::probe::Kind::Model, &a.common.model)?;
    let setup = setup(&a.common, a.mu_n)?;
    let _claims = crate::args::prepare_outputs(
        &[named("MODEL", &a.common.model)],
        &[
            ("-o", a.output.as_deref(), &[]),
            ("--csv", a.csv.as_deref(), &[]),
            ("--plot", a.plot.as_deref(), &["png", "svg"]),
        ],
    )?;
    let amps = ewr_solve::nonlinear_mode::modal_amplitudes(a.from, a.to, a.points);
    crate::interrupt::install();
    let bar = crate::progress::bar(amps.len() as u64, "amplitudes");
    let t0 = std::time::Instant::now();
    let params = setup.params();
    let result = backbone_noting(
        &setup.model,
        &params,
        &setup.point,
        a.mode,
        &amps,
        &mut |_| {
            bar.inc(1);
            !crate::interrupt::requested()
        },
        &mut |w| bar.suspend(|| say_err!("{w}")),
    );
    bar.finish_and_clear();
    // A bad mode number, set or start is the user's to fix; a numerical failure is not.
    let points: Vec<ModePoint> = result.map_err(|e| match e {
        ewr_solve::SolveError::Start(_) => Failure::input(format!("mode {}: {e}", a.mode)),
        e => Failure::work(format!("mode {}: {e}", a.mode)),
    })?;
    let elapsed = t0.elapsed().as_secs_f64();
    let interrupted = crate::interrupt::requested();
    let status = if interrupted {
        "interrupted".to_string()
    } else {
        "complete".to_string()
    };
    let failed = points.iter().filter(|p| !p.converged).count();
    let synthesis = ewr_solve::nonlinear_mode::synthesise(&setup.model, &points);
    let forced = ewr_solve::nonlinear_mode::forced_dofs(&setup.model);
    if let Some(p) = &a.output {
        ewr_results::modes::write_modes_h5(
            p,
            &a.common.model,
            &setup,
            (a.mode, &points, &synthesis),
            &status,
        )
        .map_err(Failure::work)?;
    }
    if let Some(p) = &a.csv {
        ewr_results::modes::write_modes_csv(p, &points).map_err(Failure::work)?;
    }
    // The forced response swept through the synthesised resonance (--frc).
    let resonates = synthesis.peak.is_some() && !forced.is_empty();
    let swept: Option<(usize, Vec<(f64, f64)>)> = if a.frc && resonates {
        let rec = setup
            .receptance()
            .map_err(|e| Failure::input(format!("cannot condense the model: {e}")))?;
        let top = ewr_solve::nonlinear_mode::forced_sweep_top(&points);
        for w in ewr_solve::setup::receptance_warnings(&rec, &setup.point, top) {
            say_err!("{w}");
        }
        // Minutes on an FE model where the mode is also swept from above: a counter.
        let bar = crate::progress::counter("forced-response points (--frc)");
        let swept =
            ewr_solve::nonlinear_mode::forced_sweep(&rec, &setup, &points, &synthesis, &mut || {
                bar.inc(1);
                !crate::interrupt::requested()
            });
        bar.finish_and_clear();
        let swept = swept.map_err(|e| Failure::work(format!("--frc: {e}")))?;
        swept.map(|s| (s.dof, s.curve))
    } else {
        if a.frc {
            say_err!(
                "warning: --frc: no synthesised resonance (or no forcing at harmonic 1) to sweep \
                 through"
            );
        }
        None
    };
    // The sweep's own DOF (`response_dof`), where its curve and peak are read.
    let (frc_dof, frc_curve) = match swept {
        Some((dof, curve)) => (Some(dof), curve),
        None => (None, Vec::new()),
    };
    let frc_peak = frc_curve.iter().copied().max_by(|x, y| x.1.total_cmp(&y.1));
    // Ctrl-C during the forced sweep: the backbone and its files are whole, the sweep is not.
    let interrupted = interrupted || crate::interrupt::requested();
    let status = if interrupted {
        "interrupted".to_string()
    } else {
        status
    };
    if let Some(p) = &a.plot {
        let title = ewr_results::figures::backbone_title(&setup.model, a.mode);
        let panel = ewr_results::figures::ResponsePanel::of_mode(
            &setup.model,
            &points,
            &synthesis,
            frc_curve.clone(),
        );
        ewr_results::figures::backbone(p, &title, &points, &panel).map_err(Failure::work)?;
    }
    if a.json {
        let v = serde_json::json!({
            "mode": a.mode,
            "points": points.len(),
            "failed_points": failed,
            "elapsed_s": elapsed,
            "peak_memory_mb": crate::progress::peak_memory_mb(),
            "status": status,
            "profile": a.common.profile.then(ewr_solve::profile::report),
            "frc_peak": frc_peak.map(|(w, amp)| serde_json::json!({
                "omega": w,
                "forced_dof": frc_dof,
                "amplitude": amp,
            })),
            "synthesis_peak": synthesis.peak.as_ref().map(|(a, w, dofs)| serde_json::json!({
                "modal_amplitude": a,
                "omega": w,
                "forced_dofs": forced,
                "forced_dof_amplitudes": forced.iter().map(|&d| dofs[d]).collect::<Vec<_>>(),
            })),
            "backbone": points.iter().map(|p| serde_json::json!({
                "amplitude": p.amplitude,
                "omega": p.omega,
                "damping_ratio": p.damping_ratio,
                "xi": p.xi,
                "converged": p.converged,
                "no_oscillation": p.no_oscillation,
                "iterations": p.iterations,
                "gmres_iterations": p.krylov_iterations,
                "residual": p.residual,
            })).collect::<Vec<_>>(),
        });
        say!("{v:#}");
    } else {
        say!(
            "mode {}: {} amplitudes ({failed} not converged), {elapsed:.3} s",
            a.mode,
            points.len()
        );
        say!("  amplitude      omega          damping ratio");
        for p in &points {
            say!(
                "  {:<13.6e}  {:<13.6e}  {:.6e}{}",
                p.amplitude,
                p.omega,
                p.damping_ratio,
                if p.converged {
                    ""
                } else if p.no_oscillation {
                    "  (no oscillation: |damping ratio| of 1 or more, or no positive frequency)"
                } else {
                    "  (not converged)"
                }
            );
        }
        match &synthesis.peak {
            Some((a, w, dofs)) => say!(
                "single-mode synthesis of the model's forcing: resonance at w = {w:.6e}, modal \
                 amplitude {a:.6e}, first harmonic {}",
                forced
                    .iter()
                    .map(|&d| format!("{:.6e} at DOF {d}", dofs[d]))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None if !forced.is_empty() => say!(
                "single-mode synthesis: the forced resonance lies outside the amplitudes \
                 computed (widen --from/--to)"
            ),
            None => {}
        }
        if let Some((w, amp)) = frc_peak {
            say!(
                "ewr frc through it: peak first harmonic {amp:.6e} at DOF {} at w = {w:.6e}",
                frc_dof.unwrap_or(0)
            );
        }
    }
    crate::solve_cmd::print_profile(&a.common, t_all);
    if interrupted {
        return Err(Failure::work(format!(
            "interrupted: the {} amplitudes computed were written",
            points.len()
        )));
    }
    if failed > 0 {
        let rigid = ewr_solve::nonlinear_mode::penalty_mode_hint(&setup.model, a.mode)
            .map(|h| format!(". The {h}"))
            .unwrap_or_default();
        return Err(Failure::work(format!(
            "{failed} of {} amplitudes did not converge{}; every point was written with its \
             status{rigid}",
            points.len(),
            match points.iter().filter(|p| p.no_oscillation).count() {
                0 => String::new(),
                n => format!(
                    " ({n} to no oscillation: no free motion there, see docs/nonlinear-modes.md, \
                     pitfall 7)"
                ),
            }
        )));
    }
    Ok(())
}
