//! 3-D contacts (model format v2): a unilateral normal direction whose force `lambda(t)`
//! bounds the friction by `mu lambda`, rigid or behind a normal stiffness `k_n`, and
//! tangential stiffnesses `k_t` (Jenkins elements). References: the constant-bound model
//! (constant normal load), the analytic flight of a mass that lifts off (separation), and
//! the 2-D element coefficients of `shared/notes/seed-004.md` sec. 6, table V2.

mod common;

use common::*;
use ewr_model::{Contacts, Kinematics, Model, ModelBuilder, NormalContacts};
use ewr_simulate::{ContactState, Options, Simulation, simulate, with_jenkins};
use std::f64::consts::{PI, TAU};

/// Largest `|a - b|` over two equally long histories.
fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn max_abs(a: &[f64]) -> f64 {
    a.iter().fold(0.0f64, |s, x| s.max(x.abs()))
}

/// One normal direction per contact on `dofs` against ground.
fn normal_on(
    dofs: Vec<usize>,
    g0: Vec<f64>,
    mu: Vec<f64>,
    k_n: Option<Vec<f64>>,
) -> NormalContacts {
    NormalContacts {
        kinematics: Kinematics::Dofs { dofs, other: None },
        g0,
        mu,
        k_n,
        load: None,
    }
}

/// A mass in the plane with 2-D friction against ground (DOFs 0, 1), elliptic forcing, plus
/// DOF 2: a mass on a spring `k_s` with a damper `c_s`, loaded by `-F0`, whose displacement
/// is the gap of the contact's normal direction when `normal` is given; without it the
/// contact has the constant bound `mu_n` (the old model).
fn pressed(mu_n: f64, k_s: f64, c_s: f64, f0: f64, normal: Option<NormalContacts>) -> Model {
    let mut contacts = Contacts::to_ground(2, vec![0, 1], vec![mu_n]);
    contacts.normal = normal;
    ModelBuilder::new(3)
        .mass(0, 1.0)
        .mass(1, 1.0)
        .mass(2, 1.0)
        .spring_to_ground(0, 1.0)
        .spring_to_ground(1, 1.0)
        .spring_to_ground(2, k_s)
        .damper_to_ground(0, 0.05)
        .damper_to_ground(1, 0.05)
        .damper_to_ground(2, c_s)
        .contacts(contacts)
        .force(0, 1, 1.0, 0.0)
        .force(1, 1, 0.0, 0.3)
        .force(2, 0, -f0, 0.0)
        .build()
        .expect("valid model")
}

/// The tangential histories of `a` and `b` agree within `tol` of their scale.
fn same_tangential(name: &str, a: &Simulation, b: &Simulation, tol: f64) {
    for (q, x, y) in [("w", &a.w, &b.w), ("v", &a.v, &b.v), ("r", &a.r, &b.r)] {
        let d = max_diff(x, y) / max_abs(x).max(max_abs(y));
        println!("{name}: {q} differs by {d:.2e} of its scale");
        assert!(d < tol, "{name}: {q} differs by {d:e}");
    }
    assert_eq!(a.stick, b.stick, "{name}: stick phases differ");
}

#[test]
fn constant_normal_load_equals_the_constant_bound() {
    let (mu, f0, omega, dt) = (0.3, 2.0, 0.5, 2e-3);
    // Reference: the old model, bound mu_n = mu F0.
    let old = pressed(mu * f0, 1.0, 0.5, f0, None);
    // Tight steady state: the penalty case below reaches it through another transient.
    let tight = |o: &mut Options| o.tol = 1e-11;
    let reference = run(&old, omega, dt, &[], tight);
    assert!(reference.converged && reference.normal.is_none());
    let sticks = reference.contact_summaries()[0].stick_fraction;
    assert!(sticks > 0.05 && sticks < 0.95, "stick fraction {sticks}");

    // A rigid contact pressed by a static force F0: lambda = F0 from the first step on.
    let normal = |g0: f64, k_n: Option<Vec<f64>>| Some(normal_on(vec![2], vec![g0], vec![mu], k_n));
    let rigid = pressed(0.0, 1.0, 0.5, f0, normal(0.0, None));
    let sim = run(&rigid, omega, dt, &[], tight);
    assert!(sim.converged);
    let nh = sim.normal.as_ref().unwrap();
    let dl = nh.lambda.iter().map(|l| (l - f0).abs()).fold(0.0, f64::max);
    assert!(dl < 1e-12 * f0, "lambda differs from F0 by {dl:e}");
    assert!(nh.state.iter().all(|&s| s != ContactState::Separated));
    same_tangential("rigid, static force", &sim, &reference, 1e-10);
    let s = &sim.contact_summaries()[0];
    let n = s.normal.as_ref().unwrap();
    assert!(n.separation_intervals.is_empty() && n.separation_fraction == 0.0);
    assert!((n.normal_force_mean - f0).abs() < 1e-12);
    assert!(
        s.max_coulomb_violation < 1e-12,
        "{}",
        s.max_coulomb_violation
    );

    // Interference g0 < 0 behind a normal stiffness k_n, no force: the spring k_s and the
    // contact spring share the interference, lambda = k_s k_n delta / (k_s + k_n) = F0.
    let (k_s, k_n) = (1.0, 1e3);
    let delta = f0 * (k_s + k_n) / (k_s * k_n);
    let penalty = pressed(0.0, k_s, 20.0, 0.0, normal(-delta, Some(vec![k_n])));
    let sim = run(&penalty, omega, dt, &[2], tight);
    assert!(sim.converged);
    let nh = sim.normal.as_ref().unwrap();
    let dl = nh.lambda.iter().map(|l| (l - f0).abs()).fold(0.0, f64::max);
    println!("penalty: lambda within {dl:.1e} of F0");
    assert!(dl < 1e-8 * f0, "lambda differs from F0 by {dl:e}");
    // The unilateral gap (spring included) is closed while loaded.
    assert!(nh.gap.iter().all(|g| g.abs() < 1e-12), "gap not closed");
    same_tangential("penalty, interference", &sim, &reference, 1e-7);
    // The energy identity closes with the contact spring's work included.
    let e = sim.energy;
    println!("penalty: energy {e:?}");
    assert!(e.residual.abs() < 1e-9 * e.input, "{e:?}");
    assert!(e.normal.unwrap().abs() < 1e-8 * e.input, "{e:?}");
}

/// Flight of the normal DOF of [`lifting`] from lift-off at `t1` (rest on the ground) under
/// `m y'' = -F0 + F1 cos(w t)`: `y(t)`.
fn flight(t1: f64, t: f64, f0: f64, f1: f64, w: f64) -> f64 {
    let s = t - t1;
    -f0 * s * s / 2.0
        - f1 / (w * w) * ((w * t).cos() - (w * t1).cos())
        - f1 / w * (w * t1).sin() * s
}

/// DOF 0: a damped oscillator with 1-D friction against ground; DOF 1: a unit mass without
/// spring pressed on a rigid ground by `F0` and pulled by `F1 cos(w t)`, `F1 > F0`, so that
/// it lifts off once per period.
fn lifting(mu: f64, f0: f64, f1: f64) -> Model {
    let mut contacts = Contacts::to_ground(1, vec![0], vec![0.0]);
    contacts.normal = Some(normal_on(vec![1], vec![0.0], vec![mu], None));
    ModelBuilder::new(2)
        .mass(0, 1.0)
        .mass(1, 1.0)
        .spring_to_ground(0, 4.0)
        .damper_to_ground(0, 0.1)
        .contacts(contacts)
        .force(0, 1, 3.0, 0.0)
        .force(1, 0, -f0, 0.0)
        .force(1, 1, f1, 0.0)
        .build()
        .expect("valid model")
}

#[test]
fn separation_matches_the_analytic_flight() {
    let (mu, f0, f1, w) = (0.5, 1.0, 2.0, 1.0);
    let period = TAU / w;
    let dt = period / 8192.0;
    let sim = run(&lifting(mu, f0, f1), w, dt, &[1], |_| {});
    assert!(sim.converged, "{} periods", sim.periods_run);
    let nh = sim.normal.as_ref().unwrap();

    // Reference: lift-off when F1 cos(w t) rises above F0, landing at the next root of y.
    let t1 = period - (f0 / f1).acos() / w;
    let mut a = t1 + 1e-6;
    while flight(t1, a + 1e-3, f0, f1, w) > 0.0 {
        a += 1e-3;
    }
    let mut b = a + 1e-3;
    for _ in 0..100 {
        let mid = 0.5 * (a + b);
        if flight(t1, mid, f0, f1, w) > 0.0 {
            a = mid;
        } else {
            b = mid;
        }
    }
    let t2 = 0.5 * (a + b);
    // Zero restitution: the mass stays down only if the net force presses it at landing.
    assert!((w * t2).cos() < f0 / f1 && t2 < t1 + period);
    let s = &sim.contact_summaries()[0];
    let n = s.normal.as_ref().unwrap();
    println!(
        "separation: simulated {:?}, analytic [{t1:.5}, {t2:.5}]; summary {s:?}",
        n.separation_intervals
    );
    assert_eq!(n.separation_intervals.len(), 1);
    let [s1, s2] = n.separation_intervals[0];
    assert!(
        (s1 - t1).abs() < 2.0 * dt,
        "lift-off at {s1}, expected {t1}"
    );
    // The landing time carries backward Euler's first-order error of the flight.
    assert!(
        (s2 - t2).abs() < 1e-3 * period,
        "landing at {s2}, expected {t2}"
    );

    // Signorini and Coulomb at every sample; no force while separated.
    let (ns, mut seen) = (sim.t.len(), [false; 3]);
    let mut lambda_err = 0.0f64;
    for j in 0..ns {
        let (l, g, r) = (nh.lambda[j], nh.gap[j], sim.r[j]);
        assert!(l >= 0.0 && g >= -1e-12, "sample {j}: lambda {l}, gap {g}");
        assert!(l == 0.0 || g.abs() < 1e-12, "sample {j}: loaded at gap {g}");
        assert!(
            r.abs() <= mu * l * (1.0 + 1e-12),
            "sample {j}: |r| {r} > mu lambda"
        );
        seen[nh.state[j] as usize] = true;
        match nh.state[j] {
            ContactState::Separated => assert!(l == 0.0 && r == 0.0, "sample {j}"),
            ContactState::Stick => assert!(sim.v[j].abs() < 1e-12, "sample {j}"),
            ContactState::Slip => assert!((r.abs() - mu * l).abs() < 1e-12, "sample {j}"),
        }
        // Resting on the ground, the normal force balances the load exactly (away from the
        // landing impulse).
        let t = sim.t[j];
        // On the ground from t2 - period to t1 (t2 > period).
        let resting = t > t2 - period + 5.0 * dt && t < t1 - 5.0 * dt;
        if resting {
            lambda_err = lambda_err.max((l - (f0 - f1 * (w * t).cos())).abs());
        }
    }
    println!("resting normal force within {lambda_err:.1e} of F0 - F1 cos(w t)");
    assert!(lambda_err < 1e-9, "{lambda_err}");
    assert_eq!(seen, [true; 3], "separated / slip / stick seen: {seen:?}");
    assert!(!s.stick_intervals.is_empty() && s.max_coulomb_violation < 1e-12);
    assert!(n.min_gap >= -1e-12 && n.max_loaded_gap < 1e-12);

    // Energy: the identity closes; the landing is an inelastic impact whose loss
    // m v^2 / 2 (v the landing speed) the report shows.
    let e = sim.energy;
    let v_land = (flight(t1, t2 + 1e-7, f0, f1, w) - flight(t1, t2 - 1e-7, f0, f1, w)) / 2e-7;
    println!(
        "energy {e:?}; landing loss m v^2/2 = {:.6}",
        0.5 * v_land * v_land
    );
    assert!(
        e.residual.abs() < 1e-9 * e.input.abs().max(e.numerical),
        "{e:?}"
    );
    let impact = e.impact.unwrap();
    assert!(
        (impact - 0.5 * v_land * v_land).abs() < 0.02 * 0.5 * v_land * v_land,
        "impact loss {impact}, expected {}",
        0.5 * v_land * v_land
    );
    assert!(e.normal.unwrap() >= 0.0 && e.normal.unwrap() <= impact);

    // Outputs: the time series keeps the old columns and adds n0, g0, state0.
    let ts = sim.timeseries();
    assert_eq!(
        ts.names,
        ["t", "w0_1", "v0_1", "r0_1", "n0", "g0", "state0", "u1"]
    );
    assert_eq!(ts.column("n0").unwrap(), &nh.lambda[..]);
}

/// Seed 004, V2: the 2-D element (k_x = k_y = 1e5 N/m, mu = 0.3, N0 = 50 N) under
/// prescribed relative motions `x(tau)`, `y(tau)` (`y` positive into compression, `f_y = N0
/// + k_y y`). The motion is imposed through stiff massless springs (1e12 N/m) loaded by
/// `1e12 x(t)`: the contact forces (< 200 N) move the DOFs by 2e-10 m, i.e. 2e-5 N of
/// contact force. The element is a Jenkins slider (`k_t`) with a penalty normal (`k_n`,
/// interference `g0 = -N0 / k_n`).
fn v2_element(x: [f64; 2], y: [f64; 2]) -> Model {
    const STIFF: f64 = 1e12;
    let (k, mu, n0) = (1e5, 0.3, 50.0);
    let mut contacts = Contacts::to_ground(1, vec![0], vec![0.0]);
    contacts.k_t = Some(vec![k]);
    // The gap closes as y grows: g = g0 + u1 with u1 = -y.
    contacts.normal = Some(normal_on(vec![1], vec![-n0 / k], vec![mu], Some(vec![k])));
    ModelBuilder::new(2)
        .spring_to_ground(0, STIFF)
        .spring_to_ground(1, STIFF)
        .contacts(contacts)
        .force(0, 1, STIFF * x[0], STIFF * x[1])
        .force(1, 1, -STIFF * y[0], -STIFF * y[1])
        .build()
        .expect("valid model")
}

#[test]
fn seed004_v2_element_coefficients() {
    // (case, x [cos, sin], y [cos, sin], Fx h0..h3, Fy h0..h3), h0 as [mean, 0].
    type Coefs = [[f64; 2]; 4];
    type Case = (&'static str, [f64; 2], [f64; 2], Coefs, Coefs);
    let cases: [Case; 3] = [
        (
            "B",
            [1e-3, 0.0],
            [2e-4, 0.0],
            [
                [2.85754, 0.0],
                [9.73912, -15.90144],
                [3.66462, -1.52255],
                [5.08323, 0.43727],
            ],
            [[50.0, 0.0], [20.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
        ),
        (
            "C",
            [1e-3, 0.0],
            [0.0, 2e-4],
            [
                [-3.24973, 0.0],
                [9.38154, -16.20980],
                [3.06812, 0.92374],
                [5.32483, 0.09848],
            ],
            [[50.0, 0.0], [0.0, 20.0], [0.0, 0.0], [0.0, 0.0]],
        ),
        (
            "D",
            [1e-3, 0.0],
            [0.0, 8e-4],
            [
                [-11.48474, 0.0],
                [9.03157, -18.97763],
                [9.53326, 3.48434],
                [4.13558, 1.50040],
            ],
            [
                [55.62350, 0.0],
                [0.0, 69.61611],
                [-8.07562, 0.0],
                [0.0, 5.04726],
            ],
        ),
    ];
    let w = 1.0;
    let mut worst = 0.0f64;
    for (name, x, y, fx_ref, fy_ref) in cases {
        let model = v2_element(x, y);
        let sim = run(&model, w, TAU / 16384.0, &[0, 1], |o| o.max_periods = 20);
        assert!(sim.converged, "case {name}: {} periods", sim.periods_run);
        // The imposed motion is reproduced.
        let ux = sim.dof_history(0).unwrap();
        let (a, b) = harmonic(&ux, 1);
        assert!(
            (a - x[0]).abs() < 1e-9 && (b - x[1]).abs() < 1e-9,
            "{name}: x"
        );
        // r is the force on the structure; the element force is its opposite.
        let fx: Vec<f64> = sim.r.iter().map(|r| -r).collect();
        let fy = &sim.normal.as_ref().unwrap().lambda;
        let mut dev = 0.0f64;
        for h in 0..4 {
            let (cx, sx) = harmonic(&fx, h);
            let (cy, sy) = harmonic(fy, h);
            println!(
                "V2 {name} h{h}: Fx [{cx:.5}, {sx:.5}] ref {:?}; Fy [{cy:.5}, {sy:.5}] ref {:?}",
                fx_ref[h], fy_ref[h]
            );
            for (got, want) in [
                (cx, fx_ref[h][0]),
                (sx, fx_ref[h][1]),
                (cy, fy_ref[h][0]),
                (sy, fy_ref[h][1]),
            ] {
                dev = dev.max((got - want).abs());
            }
        }
        println!("V2 case {name}: largest deviation {dev:.2e} N");
        // The table is converged to about 1e-5 N and printed to 5 decimals.
        assert!(dev < 1e-4, "case {name}: deviation {dev} N");
        worst = worst.max(dev);
        let s = &sim.contact_summaries()[0];
        let n = s.normal.as_ref().unwrap();
        if name == "D" {
            // Separated where N0 + k_y y < 0: sin(tau) < -5/8.
            let a = PI + (5.0f64 / 8.0).asin();
            let b = TAU - (5.0f64 / 8.0).asin();
            assert_eq!(n.separation_intervals.len(), 1, "{n:?}");
            let [s1, s2] = n.separation_intervals[0];
            let dt = sim.dt;
            assert!(
                (s1 - a).abs() < 2.0 * dt && (s2 - b).abs() < 2.0 * dt,
                "{n:?}"
            );
        } else {
            assert!(n.separation_intervals.is_empty());
        }
        assert!(
            s.max_coulomb_violation < 1e-9,
            "{name}: {}",
            s.max_coulomb_violation
        );
    }
    println!("V2: largest deviation over cases B, C, D: {worst:.2e} N");
}

#[test]
fn model_k_t_is_the_jenkins_model_and_with_jenkins_refuses_it() {
    let base = circular(1.0, 0.05, 1.0, 0.6, 1.0);
    let mut elastic = base.clone();
    elastic.contacts.k_t = Some(vec![5.0]);
    let a = run(&elastic, 0.8, 4e-3, &[0], |_| {});
    let b = run(
        &with_jenkins(&base, &[5.0]).unwrap(),
        0.8,
        4e-3,
        &[0],
        |_| {},
    );
    assert!(a.converged && a.periods_run == b.periods_run);
    assert_eq!(a.r, b.r);
    assert_eq!(a.w, b.w);
    assert_eq!(a.u, b.u);
    assert_eq!(a.final_state.u.len(), base.n_dofs() + 2);
    assert!(with_jenkins(&elastic, &[5.0]).is_err());
    // An initial state of the model's own DOFs is extended with relaxed sliders.
    let mut o = Options::new(0.8);
    o.dt = Some(4e-3);
    o.max_periods = 1;
    o.initial = Some(ewr_simulate::State {
        u: vec![0.1, 0.0],
        v: vec![0.0, 0.0],
    });
    assert!(simulate(&elastic, &o, &mut |_| {}).is_ok());
}

#[test]
fn inclined_coupled_contact_satisfies_signorini_and_coulomb() {
    // A mass in the plane, anisotropic support, on a plane inclined by 20 degrees: the
    // tangential and normal rows couple through the structure (D_TN != 0).
    let a = 20f64.to_radians();
    let (t, n) = ([a.cos(), -a.sin()], [a.sin(), a.cos()]);
    let mk = |rows: &[[f64; 2]]| {
        let trip: Vec<_> = rows
            .iter()
            .enumerate()
            .flat_map(|(i, r)| {
                [
                    faer::sparse::Triplet::new(i, 0, r[0]),
                    faer::sparse::Triplet::new(i, 1, r[1]),
                ]
            })
            .collect();
        ewr_model::SparseMatrix::try_new_from_triplets(rows.len(), 2, &trip).unwrap()
    };
    let mut contacts = Contacts::from_matrix(1, mk(&[t]), vec![0.0]);
    contacts.normal = Some(NormalContacts {
        kinematics: Kinematics::Matrix(mk(&[n])),
        g0: vec![0.0],
        mu: vec![0.4],
        k_n: None,
        load: None,
    });
    let model = ModelBuilder::new(2)
        .mass(0, 1.0)
        .mass(1, 1.0)
        .spring_to_ground(0, 1.0)
        .spring_to_ground(1, 3.0)
        .spring(0, 1, 0.5)
        .damper_to_ground(0, 0.05)
        .damper_to_ground(1, 0.05)
        .contacts(contacts)
        .force(0, 0, -0.5 * n[0], 0.0)
        .force(1, 0, -0.5 * n[1], 0.0)
        .force(0, 1, 1.0, 0.0)
        .force(1, 1, 0.6, 0.3)
        .build()
        .expect("valid model");
    let sim = run(&model, 1.2, 1e-3, &[], |_| {});
    assert!(sim.converged);
    assert_eq!(sim.contact_solver.unconverged_steps, 0);
    let nh = sim.normal.as_ref().unwrap();
    let s = &sim.contact_summaries()[0];
    let ns_ = s.normal.as_ref().unwrap();
    println!("inclined: {s:?}, sweeps {}", sim.contact_solver.max_sweeps);
    assert!(
        sim.contact_solver.max_sweeps > 2,
        "the coupling should need sweeps"
    );
    assert!(
        s.max_coulomb_violation < 1e-8,
        "{}",
        s.max_coulomb_violation
    );
    assert!(
        ns_.min_gap >= -1e-12 && ns_.max_loaded_gap < 1e-12,
        "{ns_:?}"
    );
    for j in 0..sim.t.len() {
        assert!(nh.lambda[j] >= 0.0);
        assert!(sim.r[j].abs() <= 0.4 * nh.lambda[j] * (1.0 + 1e-9) + 1e-15);
    }
    let e = sim.energy;
    assert!(e.residual.abs() < 1e-9 * e.input, "{e:?}");
}
