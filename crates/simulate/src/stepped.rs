//! A stepped sine: the frequency response as a test rig measures it. Each frequency is
//! integrated to its steady state from the state the one before ended in (the first from
//! rest), so contacts that stick all period keep the slider position their history left
//! them at: the loading history that `ewr frc`'s held contacts stand for
//! (docs/stuck-contacts.md), and the reference a sweep's stuck states are checked against.

use crate::{Options, Progress, SimulateError, Simulation, simulate};
use serde::Serialize;

/// One frequency of a stepped sine: the steady state's recorded DOFs and contacts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SteppedPoint {
    /// Forcing circular frequency.
    pub omega: f64,
    /// Whether the steady state was reached (within `Options::tol`) before the period cap.
    pub converged: bool,
    /// Whether the run was stopped there (Ctrl-C): the sweep ends with this point.
    pub interrupted: bool,
    /// Periods integrated at this frequency.
    pub periods_run: usize,
    /// Change of the state over the last period, relative (as `Simulation`).
    pub steady_state_error: f64,
    /// `max_t ||u(t)||` over the recorded DOFs (`ewr frc`'s `amp_norm` with `--amplitude
    /// max`), over the samples of the last period.
    pub amplitude: f64,
    /// Per recorded DOF: `max_t |u_i(t)|`.
    pub dof_max: Vec<f64>,
    /// Per recorded DOF: the mean over the period (the static part, held stuck contacts'
    /// offsets included).
    pub dof_mean: Vec<f64>,
    /// Per recorded DOF: the amplitude of the first harmonic, `sqrt(a_1^2 + b_1^2)`.
    pub dof_h1: Vec<f64>,
    /// Per contact: the largest `|w|` of its relative tangential displacement.
    pub displacement_amplitude: Vec<f64>,
    /// Per contact: the fraction of the period it sticks.
    pub stick_fraction: Vec<f64>,
    /// Per contact: energy dissipated by friction over the period.
    pub dissipated_energy: Vec<f64>,
}

impl SteppedPoint {
    /// The steady state `sim` reached, summarised.
    pub fn of(sim: &Simulation) -> Self {
        let nd = sim.dofs.len();
        let ns = sim.t.len();
        let (mut dof_max, mut dof_mean, mut dof_h1) = (vec![0.0; nd], vec![0.0; nd], vec![]);
        let mut amplitude = 0.0f64;
        for j in 0..ns {
            let u = &sim.u[j * nd..(j + 1) * nd];
            amplitude = amplitude.max(u.iter().map(|x| x * x).sum::<f64>().sqrt());
            for (i, &x) in u.iter().enumerate() {
                dof_max[i] = f64::max(dof_max[i], x.abs());
                dof_mean[i] += x / ns as f64;
            }
        }
        for i in 0..nd {
            let (mut a, mut b) = (0.0, 0.0);
            for j in 0..ns {
                let phase = std::f64::consts::TAU * j as f64 / ns as f64;
                a += sim.u[j * nd + i] * phase.cos();
                b += sim.u[j * nd + i] * phase.sin();
            }
            dof_h1.push(2.0 * a.hypot(b) / ns.max(1) as f64);
        }
        let contacts = sim.contact_summaries();
        SteppedPoint {
            omega: sim.omega,
            converged: sim.converged,
            interrupted: sim.interrupted,
            periods_run: sim.periods_run,
            steady_state_error: sim.steady_state_error,
            amplitude,
            dof_max,
            dof_mean,
            dof_h1,
            displacement_amplitude: contacts.iter().map(|c| c.displacement_amplitude).collect(),
            stick_fraction: contacts.iter().map(|c| c.stick_fraction).collect(),
            dissipated_energy: contacts.iter().map(|c| c.dissipated_energy).collect(),
        }
    }
}

/// Where a stepped sine is: frequency `index` of `count`, at `omega`, and its run's progress
/// (reported after each period of that frequency).
#[derive(Clone, Debug)]
pub struct SteppedProgress<'a> {
    /// Index of the frequency being integrated.
    pub index: usize,
    /// Number of frequencies.
    pub count: usize,
    /// Its frequency.
    pub omega: f64,
    /// The run at that frequency.
    pub run: &'a Progress,
}

/// The frequencies `start + k step` from `start` towards `end` (downwards where `end <
/// start`), `end` included where the grid reaches it within round-off; `step > 0`.
pub fn stepped_frequencies(start: f64, end: f64, step: f64) -> Vec<f64> {
    let dir = if end >= start { 1.0 } else { -1.0 };
    (0..stepped_count(start, end, step))
        .map(|k| start + dir * k as f64 * step)
        .collect()
}

/// How many frequencies [`stepped_frequencies`] gives (saturating for absurd grids).
pub(crate) fn stepped_count(start: f64, end: f64, step: f64) -> usize {
    ((end - start).abs() / step * (1.0 + 1e-12) + 1e-9).floor() as usize + 1
}

/// What a stepped sine did: the frequencies done, and the error that ended it early, if any
/// (the frequencies before it are kept).
#[derive(Debug)]
pub struct SteppedRun {
    /// One summary per frequency done, in order.
    pub points: Vec<SteppedPoint>,
    /// A numerical failure (or an option no frequency before it met) at the frequency after
    /// the last point.
    pub failure: Option<SimulateError>,
}

/// Integrates `model` at each of `omegas` in turn, each from the final state of the one
/// before (the first from `opts.initial`, usually rest), with `opts` otherwise (its `omega`
/// is replaced). A frequency that reaches the period cap still hands its final state on, as
/// a rig moves on. `point` receives each frequency's summary as soon as it is done (a caller
/// writes it out) and returns whether to go on; the sweep also ends after the frequency during
/// which `opts.stop` was set, that point marked interrupted.
pub fn stepped_sine(
    model: &ewr_model::Model,
    opts: &Options,
    omegas: &[f64],
    progress: &mut dyn FnMut(&SteppedProgress<'_>),
    point: &mut dyn FnMut(&SteppedPoint, &Simulation) -> bool,
) -> SteppedRun {
    let stopped = || {
        opts.stop
            .as_ref()
            .is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst))
    };
    let mut points = Vec::with_capacity(omegas.len());
    let mut o = opts.clone();
    for (index, &omega) in omegas.iter().enumerate() {
        o.omega = omega;
        let sim = simulate(model, &o, &mut |run| {
            progress(&SteppedProgress {
                index,
                count: omegas.len(),
                omega,
                run,
            })
        });
        let sim = match sim {
            Ok(sim) => sim,
            Err(e) => {
                return SteppedRun {
                    points,
                    failure: Some(e),
                };
            }
        };
        let mut p = SteppedPoint::of(&sim);
        // Stopped during this frequency: its extra period may have settled, but the sweep
        // ends here.
        p.interrupted |= stopped();
        let go_on = point(&p, &sim) && !p.interrupted;
        points.push(p);
        if !go_on {
            break;
        }
        // A whole period ends at the forcing's phase 0, where the next frequency starts.
        o.initial = Some(sim.final_state);
    }
    SteppedRun {
        points,
        failure: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_reaches_its_end_either_way() {
        assert_eq!(stepped_frequencies(1.0, 2.0, 0.5), vec![1.0, 1.5, 2.0]);
        assert_eq!(stepped_frequencies(2.0, 1.0, 0.5), vec![2.0, 1.5, 1.0]);
        let g = stepped_frequencies(0.3, 1.2, 0.1);
        assert_eq!(g.len(), 10, "{g:?}");
        assert!((g[9] - 1.2).abs() < 1e-12);
        assert_eq!(stepped_frequencies(1.0, 1.25, 0.1).len(), 3);
        assert_eq!(stepped_frequencies(1.0, 1.0, 0.1), vec![1.0]);
    }
}
