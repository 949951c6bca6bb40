//! The generated bladed-disk sector end to end (about 2 200 DOFs, 20 two-dimensional
//! contacts): modal condensation, dense and matrix-free Newton agree, friction damps the
//! first bending resonance.

use ewr_contact::{ContactParams, FrictionLaw};
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::examples::{Sector, sector};
use ewr_solve::{LinearSolve, NewtonOptions, PointSettings, solve_point};

fn settings(set: HarmonicSet, linear: LinearSolve, monitor: Vec<usize>) -> PointSettings {
    PointSettings {
        n_samples: default_samples(&set),
        set,
        law: FrictionLaw::Exact,
        newton: NewtonOptions {
            linear,
            ..NewtonOptions::default()
        },
        ramp: true,
        monitor,
        retry_rho: true,
        preconditioner: Default::default(),
        auto: None,
        amplitude: Default::default(),
    }
}

#[test]
fn small_sector_dense_and_matrix_free_agree_and_friction_damps() {
    let model = sector(&Sector::default());
    assert!(model.n_dofs() > 2000);
    let rec = Receptance::new(&model, ReceptanceKind::Modal { modes: 30 }).unwrap();
    let w1 = rec.modes().unwrap().omega[0];
    // First bending mode of the blade: a clamped steel beam 120 mm long, 10 mm thick gives
    // 580 Hz; the flexible disk lowers it, hex8 shear locking raises it.
    let f1 = w1 / (2.0 * std::f64::consts::PI);
    assert!((500.0..800.0).contains(&f1), "f1 = {f1} Hz");
    let p = ContactParams::of(&model.contacts);
    let tip = model.forcing[0].dof;
    let set = HarmonicSet::odd(3).unwrap();
    let dense = solve_point(
        &rec,
        &p,
        w1,
        &settings(set.clone(), LinearSolve::Dense, vec![tip]),
        None,
    )
    .unwrap();
    let mf = solve_point(
        &rec,
        &p,
        w1,
        &settings(set.clone(), LinearSolve::MatrixFree, vec![tip]),
        None,
    )
    .unwrap();
    assert!(dense.status.converged() && mf.status.converged());
    assert!(mf.krylov_iterations > 0 && dense.krylov_iterations == 0);
    let dr = dense
        .friction
        .iter()
        .zip(&mf.friction)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        dr < 1e-6 * p.mu_n[0],
        "friction coefficients differ by {dr:e}"
    );
    let rel = (dense.dofs.peak[0] - mf.dofs.peak[0]).abs() / dense.dofs.peak[0];
    assert!(rel < 1e-8, "tip amplitude differs by {rel:e}");
    // Without friction the same point is the linear response; friction lowers it, and the
    // contacts both stick and slip.
    let mut free = p.clone();
    free.mu_n.iter_mut().for_each(|m| *m = 0.0);
    let lin = solve_point(
        &rec,
        &free,
        w1,
        &settings(set, LinearSolve::Dense, vec![tip]),
        None,
    )
    .unwrap();
    let ratio = mf.dofs.peak[0] / lin.dofs.peak[0];
    assert!(ratio < 0.97 && ratio > 0.5, "tip amplitude ratio {ratio}");
    let stick_slip = mf
        .contacts
        .iter()
        .filter(|c| !c.stick_intervals.is_empty() && c.dissipated_energy > 0.0)
        .count();
    assert!(stick_slip >= 10, "{stick_slip} contacts stick and slip");
}
