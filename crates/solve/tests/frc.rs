//! Frequency response curves: the linear limit against the closed form, and the two
//! continuation methods against each other.

use ewr_contact::{ContactParams, FrictionLaw};
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::{Model, examples};
use ewr_solve::{
    Continuation, FrcPoint, FrcSettings, LinearSolve, NewtonOptions, PointSettings, frc,
    solve_point,
};

fn settings(
    h_max: usize,
    law: FrictionLaw,
    method: Continuation,
    range: (f64, f64, f64),
) -> FrcSettings {
    let set = HarmonicSet::odd(h_max).unwrap();
    FrcSettings {
        omega_start: range.0,
        omega_end: range.1,
        step: range.2,
        min_step: range.2 / 64.0,
        max_step: range.2 * 4.0,
        method,
        point: PointSettings {
            n_samples: default_samples(&set),
            set,
            law,
            newton: NewtonOptions::default(),
            ramp: true,
            monitor: vec![0, 1],
            retry_rho: true,
            preconditioner: Default::default(),
            auto: None,
            amplitude: Default::default(),
        },
        max_points: 500,
        adaptive: None,
        keep_histories: true,
    }
}

fn run(model: &Model, s: &FrcSettings) -> Vec<FrcPoint> {
    let rec = Receptance::new(model, ReceptanceKind::Dense).unwrap();
    let p = ContactParams::of(&model.contacts);
    let mut seen = 0;
    let pts = frc(&rec, &p, s, &mut |_| {
        seen += 1;
        true
    })
    .unwrap();
    assert_eq!(seen, pts.len(), "every point is reported as it is computed");
    pts
}

/// A sequential sweep of seed 000's oscillator without friction (`mu N = 0`, projection law:
/// the exact law's spurious branch `r = rho v` is not a Coulomb solution there), odd:3.
fn frictionless_sweep(range: (f64, f64, f64)) -> Vec<FrcPoint> {
    let mut model = examples::oscillator_2d();
    model.contacts.mu_n = vec![0.0];
    let s = settings(3, FrictionLaw::Projection, Continuation::Sequential, range);
    run(&model, &s)
}

#[test]
fn without_friction_the_curve_is_the_linear_frf() {
    // mu N = 0 with the projection law (the exact law's spurious branch r = rho v is not a
    // Coulomb solution there): u_k = 10 / |k_k - w^2 + 0.01 i w|.
    let pts = frictionless_sweep((0.5, 1.5, 0.1));
    assert_eq!(pts.len(), 11);
    for p in &pts {
        let w = p.solution.omega;
        assert!(p.solution.status.converged());
        for (i, k) in [1.0, 2.0].into_iter().enumerate() {
            let z = ((k - w * w).powi(2) + (0.01 * w).powi(2)).sqrt();
            let exact = 10.0 / z;
            let got = p.solution.dofs.peak[i];
            assert!(
                (got - exact).abs() < 1e-7 * exact,
                "w {w}: {got} vs {exact}"
            );
        }
    }
    assert!((pts.last().unwrap().solution.omega - 1.5).abs() < 1e-12);
}

/// Linear interpolation of the total amplitude of `pts` (sorted by w) at `w`.
fn amplitude_at(pts: &[FrcPoint], w: f64) -> f64 {
    let mut v: Vec<(f64, f64)> = pts
        .iter()
        .map(|p| (p.solution.omega, p.solution.dofs.norm_peak))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let i = v.partition_point(|p| p.0 < w).clamp(1, v.len() - 1);
    let (a, b) = (v[i - 1], v[i]);
    a.1 + (b.1 - a.1) * (w - a.0) / (b.0 - a.0)
}

#[test]
fn arclength_and_sequential_trace_the_same_curve() {
    let model = examples::oscillator_2d();
    let seq = run(
        &model,
        &settings(
            15,
            FrictionLaw::Exact,
            Continuation::Sequential,
            (0.8, 1.3, 0.01),
        ),
    );
    assert!(seq.iter().all(|p| p.solution.status.converged()));
    let arc = run(
        &model,
        &settings(
            15,
            FrictionLaw::Exact,
            Continuation::Arclength,
            (0.8, 1.3, 0.05),
        ),
    );
    assert!(arc.iter().all(|p| p.solution.status.converged()));
    assert!(
        arc.last().unwrap().solution.omega >= 1.3,
        "arclength stopped early"
    );
    // Arclength points land at frequencies of their own: solve each of them again from
    // zero friction force (independently of both curves) and compare; and compare with
    // the sequential curve, interpolated, to the accuracy of its 0.01 step.
    let s = settings(
        15,
        FrictionLaw::Exact,
        Continuation::Sequential,
        (0.8, 1.3, 0.01),
    );
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let params = ContactParams::of(&model.contacts);
    for p in &arc {
        let w = p.solution.omega;
        if !(0.8..=1.3).contains(&w) {
            continue;
        }
        let a = p.solution.dofs.norm_peak;
        let fresh = solve_point(&rec, &params, w, &s.point, None).unwrap();
        assert!(
            fresh.status.converged(),
            "w {w}: {:?} {} after {}",
            fresh.status,
            fresh.residual,
            fresh.iterations
        );
        let b = fresh.dofs.norm_peak;
        assert!(
            (a - b).abs() < 1e-7 * b,
            "w {w}: arclength {a} vs direct {b}"
        );
        let c = amplitude_at(&seq, w);
        assert!(
            (a - c).abs() < 1e-2 * c,
            "w {w}: arclength {a} vs sequential {c}"
        );
    }
}

#[test]
fn sequential_sweep_down_lands_on_the_end() {
    let model = examples::two_mass_damper(1.0);
    let mut s = settings(
        7,
        FrictionLaw::Exact,
        Continuation::Sequential,
        (1.2, 0.3, 0.1),
    );
    s.point.monitor = vec![0, 1, 2, 3];
    let pts = run(&model, &s);
    assert!(pts.iter().all(|p| p.solution.status.converged()));
    assert!((pts.last().unwrap().solution.omega - 0.3).abs() < 1e-12);
    assert!(
        pts.windows(2)
            .all(|w| w[1].solution.omega < w[0].solution.omega)
    );
}

#[test]
fn matrix_free_arclength_follows_the_dense_curve() {
    // A chain with several contacts slipping: the bordered corrector and the tangent go
    // through GMRES with the bordered two-level preconditioner. Every point must be a
    // solution (checked by a fresh dense solve at its frequency) and lie on the curve the
    // dense arclength traces.
    let mut model = examples::chain(15);
    model.forcing[0].cos *= 4.0;
    let mut s = settings(
        3,
        FrictionLaw::Exact,
        Continuation::Arclength,
        (0.1, 0.5, 0.05),
    );
    s.point.monitor = vec![model.forcing[0].dof];
    let dense = run(&model, &s);
    let mut smf = s.clone();
    smf.point.newton.linear = LinearSolve::MatrixFree;
    let mf = run(&model, &smf);
    for (name, c) in [("dense", &dense), ("matrix-free", &mf)] {
        assert!(
            c.iter().all(|p| p.solution.status.converged()),
            "{name}: a point failed"
        );
        assert!(
            c.last().unwrap().solution.omega >= 0.5,
            "{name} stopped early"
        );
    }
    let krylov: usize = mf.iter().map(|p| p.solution.krylov_iterations).sum();
    assert!(krylov > 0, "the matrix-free path was not used");
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let params = ContactParams::of(&model.contacts);
    let mut point = s.point.clone();
    point.newton.linear = LinearSolve::Dense;
    let mut checked = 0;
    for p in &mf {
        let w = p.solution.omega;
        if !(0.1..=0.5).contains(&w) {
            continue;
        }
        let a = p.solution.dofs.norm_peak;
        let fresh = solve_point(&rec, &params, w, &point, None).unwrap();
        assert!(fresh.status.converged(), "w {w}: {}", fresh.status);
        let b = fresh.dofs.norm_peak;
        assert!(
            (a - b).abs() < 1e-6 * b,
            "w {w}: matrix-free {a} vs direct {b}"
        );
        let c = amplitude_at(&dense, w);
        assert!(
            (a - c).abs() < 2e-2 * c,
            "w {w}: matrix-free {a} vs dense curve {c}"
        );
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} points in range");
}

#[test]
fn a_sweep_whose_steps_add_up_to_its_end_only_to_rounding_stops_there() {
    // 3524.71 + 8 x 7.07, added step by step, is 3581.2700000000013: past the end by more
    // than 1e-12 but within rounding of it. The sweep used to land on the end with a step of
    // 1.3e-12 and then creep on by steps growing 1.5x, 18 more points at the same frequency.
    let pts = frictionless_sweep((3524.71, 3581.27, 7.07));
    let ws: Vec<f64> = pts.iter().map(|p| p.solution.omega).collect();
    assert_eq!(ws.len(), 9, "{ws:?}");
    assert!(ws.windows(2).all(|w| w[1] - w[0] > 7.0), "{ws:?}");
    assert!((ws[8] - 3581.27).abs() < 1e-9, "{ws:?}");
}

#[test]
fn a_sweep_past_the_end_of_its_branch_finds_the_branch_from_the_far_side() {
    // single-contact-3d's upper branch folds back at w = 6.48 (arclength turns there): from
    // its last point no start converges ahead, and cold starts fail up to about 7.2. The
    // sweep finds a cold start that converges further on and fills the gap back from it; the
    // filled points are the branch a downward sweep from 8 follows (an independent path),
    // and where a stepped sine (`ewr simulate` from the branch's last state) lands.
    let model = examples::single_contact_3d();
    let all = |h| HarmonicSet::all(h).unwrap();
    let sweep = |from: f64, to: f64, step: f64| {
        let mut s = settings(
            1,
            FrictionLaw::Exact,
            Continuation::Sequential,
            (from, to, step),
        );
        s.point.set = all(15);
        s.point.n_samples = default_samples(&s.point.set);
        s.point.newton.tol_residual = 1e-9;
        s.point.monitor = (0..model.n_dofs()).collect();
        s.keep_histories = false;
        run(&model, &s)
    };
    let up = sweep(6.3, 7.5, 0.05);
    assert!(
        up.iter().all(|p| p.solution.status.converged()),
        "{:?}",
        up.iter()
            .filter(|p| !p.solution.status.converged())
            .map(|p| p.solution.omega)
            .collect::<Vec<_>>()
    );
    assert!(
        up.windows(2)
            .all(|w| w[1].solution.omega > w[0].solution.omega)
    );
    // A band that ends at 6.9, inside the gap, gives its points as the longer band does: the
    // search looks past the band's end (it used to search only inside the band, and gave up
    // the last ten points).
    let short = sweep(6.3, 6.9, 0.05);
    assert!((short.last().unwrap().solution.omega - 6.9).abs() < 1e-9);
    let mut past_fold = 0;
    for p in &short {
        let (w, a) = (p.solution.omega, p.solution.dofs.norm_peak);
        assert!(p.solution.status.converged(), "w = {w} not converged");
        let q = up
            .iter()
            .find(|q| (q.solution.omega - w).abs() < 1e-9)
            .unwrap_or_else(|| panic!("w = {w} is not a point of the longer band"));
        let b = q.solution.dofs.norm_peak;
        assert!((a - b).abs() <= 1e-9 * b, "w = {w}: {a} against {b}");
        past_fold += usize::from(w > 6.49);
    }
    assert!(past_fold >= 9, "{past_fold}");
    let down = sweep(8.0, 6.45, 0.005);
    assert!(down.iter().all(|p| p.solution.status.converged()));
    // The upper branch's end jumps down onto the other branch.
    let top = up
        .iter()
        .map(|p| p.solution.dofs.norm_peak)
        .fold(0.0, f64::max);
    let mut filled = 0;
    for p in up.iter().filter(|p| p.solution.omega > 6.5) {
        let (w, a) = (p.solution.omega, p.solution.dofs.norm_peak);
        let b = amplitude_at(&down, w);
        assert!((a - b).abs() < 1e-3 * b, "w = {w}: {a} up, {b} down");
        assert!(a < 0.85 * top, "w = {w}: {a} against the fold's {top}");
        filled += 1;
    }
    assert!(filled >= 18, "{filled}");
    // Past the gap the sweep is back on its grid 6.3 + 0.05 k (it reached the fold by halved
    // steps): curves of one grid share their frequencies.
    for p in up.iter().filter(|p| p.solution.omega > 6.5) {
        let k = (p.solution.omega - 6.3) / 0.05;
        assert!(
            (k - k.round()).abs() < 1e-6,
            "w = {} is off the grid",
            p.solution.omega
        );
    }
    // A stepped sine: `ewr simulate` from the last state of the branch that ends, at the
    // next frequency, settles on the filled point (to the truncation of all:15).
    let last = up
        .iter()
        .filter(|p| p.solution.omega < 6.49)
        .max_by(|a, b| {
            a.solution
                .dofs
                .norm_peak
                .total_cmp(&b.solution.dofs.norm_peak)
        })
        .unwrap();
    let next = up.iter().find(|p| p.solution.omega > 6.6).unwrap();
    let sol = &last.solution;
    let (n, nco) = (model.n_dofs(), sol.set.n_coeffs());
    let mut state = ewr_simulate::State {
        u: vec![0.0; n],
        v: vec![0.0; n],
    };
    for i in 0..n {
        for &h in sol.set.harmonics() {
            let p = sol.set.coeff_index(h).unwrap();
            state.u[i] += sol.dofs.coeffs[i * nco + p];
            if h > 0 {
                state.v[i] += h as f64 * sol.omega * sol.dofs.coeffs[i * nco + p + 1];
            }
        }
    }
    let mut o = ewr_simulate::Options::new(next.solution.omega);
    o.dt = Some(o.period() / 4096.0);
    o.max_periods = 4000;
    o.tol = 1e-6;
    o.initial = Some(state);
    o.record_dofs = (0..n).collect();
    let sim = ewr_simulate::simulate(&model, &o, &mut |_| {}).unwrap();
    assert!(sim.converged, "{} periods", sim.periods_run);
    let stepped = sim
        .u
        .chunks(n)
        .map(|x| x.iter().map(|a| a * a).sum::<f64>().sqrt())
        .fold(0.0, f64::max);
    let hb = next.solution.dofs.norm_peak;
    println!(
        "w = {}: stepped sine {stepped} after {} periods, filled point {hb}",
        next.solution.omega, sim.periods_run
    );
    assert!((stepped - hb).abs() < 0.03 * hb, "{stepped} against {hb}");
}
