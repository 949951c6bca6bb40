//! Matrix-free Newton-Krylov against the dense Newton on the same periodic solutions.

use ewr_contact::{ContactParams, FrictionLaw};
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::{Model, examples};
use ewr_solve::{
    LinearSolve, NewtonOptions, PointSettings, PointSolution, Preconditioner, solve_point,
};

fn settings(set: HarmonicSet, linear: LinearSolve) -> PointSettings {
    PointSettings {
        n_samples: default_samples(&set),
        set,
        law: FrictionLaw::Exact,
        newton: NewtonOptions {
            linear,
            ..NewtonOptions::default()
        },
        ramp: true,
        monitor: vec![],
        retry_rho: true,
        preconditioner: Default::default(),
        auto: None,
        amplitude: Default::default(),
    }
}

/// Solves at `omega` with both linear solvers and checks they agree: status, friction
/// coefficients (relative to mu N) and the contact displacements.
fn agree(model: &Model, kind: ReceptanceKind, omega: f64, set: HarmonicSet) -> PointSolution {
    let rec = Receptance::new(model, kind).unwrap();
    let p = ContactParams::of(&model.contacts);
    let dense = solve_point(
        &rec,
        &p,
        omega,
        &settings(set.clone(), LinearSolve::Dense),
        None,
    )
    .unwrap();
    let mf = solve_point(
        &rec,
        &p,
        omega,
        &settings(set, LinearSolve::MatrixFree),
        None,
    )
    .unwrap();
    assert!(dense.status.converged(), "dense: {}", dense.status);
    assert!(mf.status.converged(), "matrix-free: {}", mf.status);
    assert_eq!(dense.krylov_iterations, 0);
    assert!(
        mf.krylov_iterations > 0,
        "the matrix-free path was not used"
    );
    let mu = p.mu_n.iter().copied().fold(0.0, f64::max);
    let dr = dense
        .friction
        .iter()
        .zip(&mf.friction)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(dr < 1e-7 * mu, "friction differs by {dr:e} (mu N = {mu})");
    let wmax = dense
        .displacement
        .iter()
        .map(|v| v.abs())
        .fold(0.0, f64::max);
    let dw = dense
        .displacement
        .iter()
        .zip(&mf.displacement)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        dw < 1e-6 * wmax,
        "displacement differs by {dw:e} (max {wmax:e})"
    );
    // Not a trivial solution: some contacts dissipate (they slip part of the period).
    let slipping = mf
        .contacts
        .iter()
        .filter(|c| c.dissipated_energy > 1e-6 * mu * c.displacement_amplitude.max(1e-300))
        .count();
    assert!(slipping > 0, "no contact slips at w = {omega}");
    eprintln!(
        "n = {}: dense {} it, matrix-free {} it / {} GMRES it, {slipping} slipping",
        mf.friction.len(),
        dense.iterations,
        mf.iterations,
        mf.krylov_iterations
    );
    mf
}

#[test]
fn chain_15() {
    agree(
        &examples::chain(15),
        ReceptanceKind::Dense,
        0.1,
        HarmonicSet::odd(7).unwrap(),
    );
}

#[test]
fn chain_40_modal() {
    // Four times the benchmark's force, so that several contacts slip.
    let mut m = examples::chain(40);
    m.forcing[0].cos *= 4.0;
    agree(
        &m,
        ReceptanceKind::Modal { modes: 20 },
        0.1,
        HarmonicSet::odd(5).unwrap(),
    );
}

#[test]
fn two_mass_damper_2d() {
    agree(
        &examples::two_mass_damper(1.0),
        ReceptanceKind::Dense,
        0.303,
        HarmonicSet::odd(15).unwrap(),
    );
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    // The matrix-free path runs the block preconditioner, the law and the receptance in
    // parallel: one and three threads must give bit-identical solutions.
    let model = examples::two_mass_damper(1.0);
    let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
    let p = ContactParams::of(&model.contacts);
    let run = |threads: usize, linear: LinearSolve| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                solve_point(
                    &rec,
                    &p,
                    0.303,
                    &settings(HarmonicSet::odd(15).unwrap(), linear),
                    None,
                )
                .unwrap()
            })
    };
    let mut m = examples::chain(40);
    m.forcing[0].cos *= 4.0;
    let rec40 = Receptance::new(&m, ReceptanceKind::Dense).unwrap();
    let p40 = ContactParams::of(&m.contacts);
    let run40 = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                solve_point(
                    &rec40,
                    &p40,
                    0.1,
                    &settings(HarmonicSet::odd(3).unwrap(), LinearSolve::MatrixFree),
                    None,
                )
                .unwrap()
            })
    };
    for linear in [LinearSolve::Dense, LinearSolve::MatrixFree] {
        let (a, b) = (run(1, linear), run(3, linear));
        assert_eq!(a.friction, b.friction, "{linear}");
        assert_eq!(a.iterations, b.iterations);
    }
    let (a, b) = (run40(1), run40(3));
    assert!(a.status.converged());
    assert_eq!(a.friction, b.friction);
    assert_eq!(a.krylov_iterations, b.krylov_iterations);
}

#[test]
fn global_preconditioners_beat_block_jacobi_on_the_chain() {
    // Stuck contacts couple through the whole chain: block-Jacobi over contacts needs
    // hundreds of GMRES iterations per Newton step, the harmonic-averaged and two-level
    // preconditioners see the coupling.
    let mut m = examples::chain(40);
    m.forcing[0].cos *= 4.0;
    let rec = Receptance::new(&m, ReceptanceKind::Dense).unwrap();
    let p = ContactParams::of(&m.contacts);
    let set = HarmonicSet::odd(7).unwrap();
    let run = |pre: Preconditioner| {
        let mut s = settings(set.clone(), LinearSolve::MatrixFree);
        s.preconditioner = pre;
        let sol = solve_point(&rec, &p, 0.1, &s, None).unwrap();
        assert!(sol.status.converged(), "{pre}: {}", sol.status);
        eprintln!(
            "{pre}: {} Newton, {} GMRES",
            sol.iterations, sol.krylov_iterations
        );
        sol
    };
    let contact = run(Preconditioner::Contact);
    let harmonic = run(Preconditioner::Harmonic);
    let two = run(Preconditioner::TwoLevel);
    let per = |s: &PointSolution| s.krylov_iterations as f64 / s.iterations as f64;
    assert!(per(&harmonic) * 10.0 < per(&contact));
    assert!(per(&two) * 10.0 < per(&contact));
    assert!(per(&two) < per(&harmonic));
    for s in [&contact, &harmonic] {
        let d = s
            .friction
            .iter()
            .zip(&two.friction)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(d < 1e-7 * p.mu_n[0], "{d:e}");
    }
}

#[test]
fn a_stalled_matrix_free_solve_is_finished_with_dense_steps() {
    // Block-Jacobi over contacts is blind to the chain's coupling through the structure
    // (hundreds of GMRES products a step, above): with GMRES capped at 10 products, the
    // matrix-free Newton steps are too inexact to converge in the budget. `auto` then
    // finishes the solve with dense steps and gets the dense answer; an explicit
    // `matrix-free` is left as asked.
    let mut m = examples::chain(40);
    m.forcing[0].cos *= 4.0;
    let rec = Receptance::new(&m, ReceptanceKind::Dense).unwrap();
    let p = ContactParams::of(&m.contacts);
    // 40 contacts x 16 coefficients = 640 unknowns: `auto` goes matrix-free.
    let set = HarmonicSet::odd(15).unwrap();
    let weak = |linear: LinearSolve| {
        let mut s = settings(set.clone(), linear);
        s.preconditioner = Preconditioner::Contact;
        s.newton.krylov.max_iterations = 10;
        s.newton.max_iterations = 30;
        s.retry_rho = false;
        s
    };
    let mf = solve_point(&rec, &p, 0.1, &weak(LinearSolve::MatrixFree), None).unwrap();
    assert!(
        !mf.status.converged(),
        "matrix-free converged: {}",
        mf.status
    );
    // The profile counts the points that fell back (no other test of this file does).
    ewr_solve::profile::enable();
    let fallback = "matrix-free solves finished with dense Newton steps";
    let fell_back = || {
        ewr_solve::profile::counts()
            .iter()
            .find(|(what, _)| *what == fallback)
            .map_or(0, |&(_, n)| n)
    };
    let before = fell_back();
    let auto = solve_point(&rec, &p, 0.1, &weak(LinearSolve::Auto), None).unwrap();
    assert!(auto.status.converged(), "auto: {}", auto.status);
    assert!(auto.krylov_iterations > 0, "auto did not start matrix-free");
    assert!(
        fell_back() > before,
        "auto converged without the dense steps"
    );
    let dense = solve_point(&rec, &p, 0.1, &settings(set, LinearSolve::Dense), None).unwrap();
    assert!(dense.status.converged());
    let mu = p.mu_n.iter().copied().fold(0.0, f64::max);
    let dr = dense
        .friction
        .iter()
        .zip(&auto.friction)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(dr < 1e-7 * mu, "friction differs by {dr:e} (mu N = {mu})");
    eprintln!(
        "matrix-free: {} after {} Newton; auto: {} Newton, {} GMRES",
        mf.status, mf.iterations, auto.iterations, auto.krylov_iterations
    );
}
