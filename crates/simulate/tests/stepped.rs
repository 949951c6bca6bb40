//! The stepped sine (`ewr_simulate::stepped_sine`): each frequency from the state the one
//! before ended in, so a contact stuck all period keeps the slider position its history left.

use ewr_model::{Contacts, Kinematics, Model, ModelBuilder, NormalContacts};
use ewr_simulate::{Options, stepped_sine};

/// A unit mass on `x` (spring 1, damper 0.2) on a Jenkins contact `k_t = 3`, pressed by
/// `10 - 3 sin(w t)` on `z` (rigid normal, `mu = 0.5`), loaded by 1 and `1.5 cos(w t)` on
/// `x`: crates/solve/tests/stuck.rs's model. Stuck, its resonance is at 2; it slips there.
fn jenkins_mass() -> Model {
    let mut contacts = Contacts::to_ground(1, vec![0], vec![0.0]);
    contacts.k_t = Some(vec![3.0]);
    contacts.normal = Some(NormalContacts {
        kinematics: Kinematics::Dofs {
            dofs: vec![1],
            other: None,
        },
        g0: vec![0.0],
        mu: vec![0.5],
        k_n: None,
        load: None,
    });
    ModelBuilder::new(2)
        .mass(0, 1.0)
        .mass(1, 1.0)
        .spring_to_ground(0, 1.0)
        .spring_to_ground(1, 1.0)
        .damper_to_ground(0, 0.2)
        .damper_to_ground(1, 0.2)
        .contacts(contacts)
        .force(0, 0, 1.0, 0.0)
        .force(0, 1, 1.5, 0.0)
        .force(1, 0, -10.0, 0.0)
        .force(1, 1, 0.0, 3.0)
        .build()
        .expect("valid model")
}

fn options(w: f64) -> Options {
    let mut o = Options::new(w);
    o.dt = Some(o.period() / 1024.0);
    o.max_periods = 3000;
    o.tol = 1e-8;
    o.record_dofs = vec![0];
    o
}

#[test]
fn the_next_frequency_starts_where_the_last_one_ended() {
    // The same frequency twice: the second run starts on the steady state (slider DOF of the
    // Jenkins element included) and settles at once, on the same motion.
    let m = jenkins_mass();
    let run = stepped_sine(&m, &options(2.5), &[2.5, 2.5], &mut |_| {}, &mut |_, _| {
        true
    });
    assert!(run.failure.is_none());
    let [a, b] = &run.points[..] else {
        panic!("two points expected")
    };
    assert!(a.converged && b.converged);
    assert!(a.periods_run > 20, "from rest: {} periods", a.periods_run);
    assert!(
        b.periods_run <= 3,
        "from the steady state: {} periods",
        b.periods_run
    );
    assert!((a.dof_mean[0] - b.dof_mean[0]).abs() < 1e-6 * a.dof_max[0]);
    assert!((a.amplitude - b.amplitude).abs() < 1e-6 * a.amplitude);
}

#[test]
fn a_stuck_contact_keeps_the_position_its_history_left() {
    // Swept up from the slipping resonance, the contact re-sticks and keeps its slider where
    // the last slip left it; started from rest at the same frequency it sticks at rest. The
    // two steady states are both exact (stuck all period) and differ by the slider's offset.
    let m = jenkins_mass();
    let ws = [1.8, 2.0, 2.2, 2.4, 2.6, 2.8, 3.0];
    let mut seen = Vec::new();
    let run = stepped_sine(&m, &options(3.0), &ws, &mut |_| {}, &mut |p, _| {
        seen.push(p.omega);
        true
    });
    assert!(run.failure.is_none());
    assert_eq!(seen, ws);
    let swept = run.points.last().unwrap();
    assert!(
        swept.converged && swept.stick_fraction[0] > 0.99,
        "{swept:?}"
    );
    let rest = stepped_sine(&m, &options(3.0), &[3.0], &mut |_| {}, &mut |_, _| true);
    let rest = &rest.points[0];
    assert!(rest.converged && rest.stick_fraction[0] > 0.99, "{rest:?}");
    // Stuck both, the same dynamic motion about different means (the slider's offset).
    assert!((swept.dof_h1[0] - rest.dof_h1[0]).abs() < 1e-3 * rest.dof_h1[0]);
    assert!(
        (swept.dof_mean[0] - rest.dof_mean[0]).abs() > 0.1 * rest.dof_max[0],
        "means {} and {}",
        swept.dof_mean[0],
        rest.dof_mean[0]
    );
    // The point callback ends the sweep when it says so.
    let run = stepped_sine(&m, &options(3.0), &ws, &mut |_| {}, &mut |_, _| false);
    assert_eq!(run.points.len(), 1);
}
