//! Scheme-level checks: energy balance, massless contact DOFs, several coupled contacts,
//! dense and sparse step matrices, Jenkins construction, damping policies, bad options.

mod common;

use common::*;
use ewr_model::examples;
use ewr_simulate::{Hysteretic, LinearSolver, Options, SimulateError, simulate, with_jenkins};

#[test]
fn energy_balance_over_a_period() {
    // Seed 000 Fig. 8 case (four stick phases per period).
    let model = examples::oscillator_2d();
    let mut ratio = Vec::new();
    for dt in [2e-3, 1e-3] {
        let s = run(&model, 0.1, dt, &[], |_| {});
        let e = s.energy;
        println!("dt {dt}: {e:?}");
        assert!(s.converged);
        // The discrete identity holds to rounding ...
        assert!(e.residual.abs() < 1e-9 * e.input, "{e:?}");
        assert!(e.storage_change.abs() < 1e-5 * e.input, "{e:?}");
        // ... and the continuous balance input = viscous + friction to the algorithmic
        // dissipation, which is first order in dt.
        let mismatch = (e.input - e.viscous - e.friction).abs() / e.input;
        assert!(mismatch < 0.5 * dt, "{mismatch}");
        ratio.push(e.numerical / e.input);
    }
    let r = ratio[1] / ratio[0];
    assert!((0.4..0.6).contains(&r), "numerical dissipation ratio {r}");
}

#[test]
fn massless_damper_matches_a_light_one() {
    // Seed 000 Fig. 23: m2 = 0. The step matrix keeps h C + h^2 K on the damper DOFs, so the
    // massless DOFs are solved quasi-statically at every step.
    let w = 0.303;
    let massless = run(
        &examples::two_mass_damper(0.0),
        w,
        1e-3,
        &[0, 1, 2, 3],
        |_| {},
    );
    let light = run(
        &examples::two_mass_damper(1e-4),
        w,
        1e-3,
        &[0, 1, 2, 3],
        |_| {},
    );
    for s in [&massless, &light] {
        assert!(s.converged, "{} periods", s.periods_run);
        let c = &s.contact_summaries()[0];
        assert!(c.max_coulomb_violation < 1e-10, "{c:?}");
    }
    let d = ewr_simulate::timeseries::compare(&massless.timeseries(), &light.timeseries()).unwrap();
    for c in &d {
        println!("{}: max rel diff {:.2e}", c.name, c.max_rel_diff);
        let tol = if c.name.starts_with('v') { 0.1 } else { 1e-2 };
        assert!(c.rms_rel_diff < tol, "{c:?}");
    }
    let c = &massless.contact_summaries()[0];
    println!("massless damper stick intervals {:?}", c.stick_intervals);
    assert_eq!(c.stick_intervals.len(), 2);
}

#[test]
fn several_coupled_contacts_reach_steady_state() {
    // Chain with 4 friction contacts, coupled through the springs and dampers; muN lowered
    // from 0.09 to 0.03 so that the contacts stick and slip in turn.
    let mut model = examples::chain(4);
    model.contacts.mu_n.iter_mut().for_each(|x| *x = 0.03);
    let s = run(&model, 0.3, 2e-3, &[], |o| o.contact_tol = 1e-12);
    assert!(s.converged, "{} periods", s.periods_run);
    assert_eq!(s.contact_solver.unconverged_steps, 0);
    assert!(s.contact_solver.max_sweeps > 1);
    let sums = s.contact_summaries();
    for c in &sums {
        println!(
            "contact {}: stick {:.3}, {} intervals, violation {:.1e}",
            c.contact,
            c.stick_fraction,
            c.stick_intervals.len(),
            c.max_coulomb_violation
        );
        assert!(c.max_coulomb_violation < 1e-9, "{c:?}");
    }
    // Contacts slide and stick in turn, so the coupling matters.
    assert!(
        sums.iter()
            .filter(|c| c.stick_fraction < 0.9 && c.stick_fraction > 0.1)
            .count()
            >= 2
    );
    let e = s.energy;
    assert!(
        e.residual.abs() < 1e-9 * e.input && e.friction > 0.0,
        "{e:?}"
    );
    // Sparse factorisation gives the same steady state.
    let sp = run(&model, 0.3, 2e-3, &[], |o| {
        o.contact_tol = 1e-12;
        o.linear_solver = LinearSolver::Sparse;
    });
    assert!(!sp.dense && s.dense);
    for c in ewr_simulate::timeseries::compare(&s.timeseries(), &sp.timeseries()).unwrap() {
        assert!(c.max_rel_diff < 1e-8, "{c:?}");
    }
    // Static bound 1.5 muN: no longer a convex problem, but the sweeps still settle here.
    let st = run(&model, 0.3, 2e-3, &[], |o| o.static_factor = 1.5);
    assert!(st.converged && st.contact_solver.unconverged_steps == 0);
    for (a, b) in st.contact_summaries().iter().zip(&sums) {
        assert!(a.stick_fraction >= b.stick_fraction - 1e-3 && a.max_coulomb_violation < 1e-9);
    }
}

#[test]
fn independent_contacts_match_single_runs() {
    // Two copies of oscillator_2d in one model: the coupled solver must reproduce the
    // single-contact solution exactly (block-diagonal Delassus operator).
    let one = examples::oscillator_2d();
    let two = ewr_model::ModelBuilder::new(4)
        .mass(0, 1.0)
        .mass(1, 1.0)
        .mass(2, 1.0)
        .mass(3, 1.0)
        .spring_to_ground(0, 1.0)
        .spring_to_ground(1, 2.0)
        .spring_to_ground(2, 1.0)
        .spring_to_ground(3, 2.0)
        .damper_to_ground(0, 0.01)
        .damper_to_ground(1, 0.01)
        .damper_to_ground(2, 0.01)
        .damper_to_ground(3, 0.01)
        .contacts(ewr_model::Contacts::to_ground(
            2,
            vec![0, 1, 2, 3],
            vec![8.0, 8.0],
        ))
        .force(0, 1, 10.0, 0.0)
        .force(1, 1, 10.0, 0.0)
        .force(2, 1, 10.0, 0.0)
        .force(3, 1, 10.0, 0.0)
        .build()
        .unwrap();
    let a = run(&one, 0.17, 4e-3, &[], |_| {});
    let b = run(&two, 0.17, 4e-3, &[], |_| {});
    let (ta, tb) = (a.timeseries(), b.timeseries());
    for name in ["w0_1", "w0_2", "v0_1", "r0_1", "r0_2"] {
        let (x, y, z) = (
            ta.column(name).unwrap(),
            tb.column(name).unwrap(),
            tb.column(&name.replace('0', "1")).unwrap(),
        );
        for j in 0..x.len() {
            assert!(
                (x[j] - y[j]).abs() < 1e-9 && (x[j] - z[j]).abs() < 1e-9,
                "{name} {j}"
            );
        }
    }
    // Seed 000 sec. 4.2: at w = 0.17 the mass sticks on [0, 9.1] and [18.4, 27.5].
    println!(
        "w = 0.17 stick intervals {:?}",
        a.contact_summaries()[0].stick_intervals
    );
}

#[test]
fn jenkins_helper_rebuilds_the_blade_damper_blade_example() {
    use examples::{BladeDamperBlade, blade_damper_blade};
    let rigid = blade_damper_blade(&BladeDamperBlade {
        k_contact: (None, 1e5),
        ..Default::default()
    });
    let built_in = blade_damper_blade(&BladeDamperBlade::default());
    let ours = with_jenkins(&rigid, &[1e5]).unwrap();
    assert_eq!(ours.n_dofs(), built_in.n_dofs());
    // Same steady state at a frequency near the first mode.
    let w = 1500.0;
    let a = run(&ours, w, std::f64::consts::TAU / w / 2048.0, &[], |_| {});
    let b = run(
        &built_in,
        w,
        std::f64::consts::TAU / w / 2048.0,
        &[],
        |_| {},
    );
    assert!(a.converged && b.converged);
    for c in ewr_simulate::timeseries::compare(&a.timeseries(), &b.timeseries()).unwrap() {
        assert!(c.max_rel_diff < 1e-8, "{c:?}");
    }
    assert!(with_jenkins(&rigid, &[1.0, 2.0, 3.0]).is_err());
    assert!(with_jenkins(&rigid, &[-1.0]).is_err());
}

#[test]
fn damping_policies_and_bad_options() {
    let mut model = examples::oscillator_2d();
    model.damping.hysteretic_eta = Some(0.02);
    let mut o = Options::new(0.5);
    o.dt = Some(1e-2);
    let e = simulate(&model, &o, &mut |_| {}).unwrap_err();
    assert!(matches!(e, SimulateError::Model(_)), "{e}");
    assert!(e.to_string().contains("eta"));
    o.hysteretic = Hysteretic::EquivalentViscous;
    assert!(simulate(&model, &o, &mut |_| {}).unwrap().converged);
    let model = examples::oscillator_2d();
    for bad in [
        |o: &mut Options| o.omega = 0.0,
        |o: &mut Options| o.omega = f64::NAN,
        |o: &mut Options| o.dt = Some(-1.0),
        |o: &mut Options| o.dt = Some(f64::NAN),
        |o: &mut Options| o.dt = Some(10.0),
        |o: &mut Options| o.tol = 0.0,
        |o: &mut Options| o.static_factor = 0.9,
        |o: &mut Options| o.max_periods = 0,
        |o: &mut Options| o.record_dofs = vec![7],
    ] {
        let mut o = Options::new(0.5);
        o.dt = Some(1e-2);
        bad(&mut o);
        let e = simulate(&model, &o, &mut |_| {}).unwrap_err();
        assert!(matches!(e, SimulateError::Option(_)), "{e}");
    }
}

#[test]
fn static_load_and_initial_state() {
    // A constant (harmonic 0) load on a 1-D oscillator with friction: the mean position
    // follows it. Checks the h = 0 forcing path, dense and sparse.
    let model = ewr_model::ModelBuilder::new(1)
        .mass(0, 1.0)
        .spring_to_ground(0, 4.0)
        .damper_to_ground(0, 0.1)
        .contacts(ewr_model::Contacts::to_ground(1, vec![0], vec![0.5]))
        .force(0, 0, 2.0, 0.0)
        .force(0, 1, 3.0, 0.0)
        .build()
        .unwrap();
    for ls in [LinearSolver::Dense, LinearSolver::Sparse] {
        let s = run(&model, 1.0, 1e-3, &[0], |o| o.linear_solver = ls);
        let (mean, _) = harmonic(&s.dof_history(0).unwrap(), 0);
        assert!(s.converged);
        // Sliding most of the time: the mean is the static deflection 2/4.
        assert!((mean - 0.5).abs() < 0.05, "{ls:?}: mean {mean}");
    }
}

#[test]
fn hdf5_and_csv_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let s = run(&examples::oscillator_2d(), 0.1, 4e-3, &[1], |_| {});
    let h5 = dir.path().join("sim.h5");
    s.write_h5(&h5, "oscillator-2d.h5").unwrap();
    let f = hdf5::File::open(&h5).unwrap();
    let kind: hdf5::types::VarLenUnicode = f.attr("kind").unwrap().read_scalar().unwrap();
    assert_eq!(kind.as_str(), "simulate");
    let ns = s.t.len();
    let r = f.dataset("time/r").unwrap().read_2d::<f64>().unwrap();
    assert_eq!(r.shape(), &[2, ns]);
    assert_eq!(r[[1, 7]], s.at(&s.r, 7, 0, 1));
    let u = f.dataset("time/u").unwrap().read_2d::<f64>().unwrap();
    assert_eq!(u[[0, 9]], s.dof_history(1).unwrap()[9]);
    let iv = f
        .dataset("contacts/stick_intervals")
        .unwrap()
        .read_2d::<f64>()
        .unwrap();
    assert_eq!(iv.shape(), &[4, 2]);
    let csv = dir.path().join("ts.csv");
    s.timeseries().save(&csv).unwrap();
    let back = ewr_simulate::timeseries::TimeSeries::load(&csv).unwrap();
    assert_eq!(back, s.timeseries());
    assert_eq!(back.names.last().unwrap(), "u1");
    // Nothing but the result under the final names.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn singular_step_matrix_and_dependent_contact_directions_are_errors() {
    let o = Options {
        dt: Some(1e-2),
        ..Options::new(1.0)
    };
    // DOF 1 has no mass, damping or stiffness: M + h C + h^2 K is singular.
    let loose = ewr_model::ModelBuilder::new(2)
        .mass(0, 1.0)
        .spring_to_ground(0, 1.0)
        .force(0, 1, 1.0, 0.0)
        .build()
        .expect("a DOF with nothing attached is a valid model");
    let e = simulate(&loose, &o, &mut |_| {}).unwrap_err();
    assert!(matches!(e, SimulateError::Numerical(_)), "{e}");
    // A 2-D contact whose two directions read the same DOF.
    let twice = ewr_model::ModelBuilder::new(1)
        .mass(0, 1.0)
        .spring_to_ground(0, 1.0)
        .contacts(ewr_model::Contacts::to_ground(2, vec![0, 0], vec![1.0]))
        .force(0, 1, 1.0, 0.0)
        .build()
        .unwrap();
    let e = simulate(&twice, &o, &mut |_| {}).unwrap_err();
    assert!(matches!(e, SimulateError::Model(_)), "{e}");
    assert!(e.to_string().contains("Delassus"), "{e}");
}
