//! Measures candidate truncation-error estimates against the true error (a solution on a
//! much larger harmonic set), for choosing the estimator of issue 29.
//! cargo run --release -p ewr-solve --example estimate_probe
use ewr_contact::ContactParams;
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_hb::{HarmonicSet, default_samples};
use ewr_solve::{NewtonOptions, PointSettings, solve_point};

fn settings(set: &HarmonicSet, monitor: Vec<usize>, tol: f64) -> PointSettings {
    PointSettings {
        set: set.clone(),
        n_samples: default_samples(set),
        law: ewr_contact::FrictionLaw::Exact,
        newton: NewtonOptions {
            tol_residual: tol,
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

fn enriched(set: &HarmonicSet) -> HarmonicSet {
    let h = 2 * set.h_max() + 1;
    match set.kind() {
        ewr_hb::HarmonicKind::Odd => HarmonicSet::odd(h).unwrap(),
        _ => HarmonicSet::all(h).unwrap(),
    }
}

/// A model, its frequencies, the harmonic sets measured and the reference set.
type Case<'a> = (&'a str, ewr_model::Model, Vec<f64>, Vec<&'a str>, &'a str);

fn main() {
    let cases: Vec<Case<'_>> = vec![
        (
            "oscillator-2d",
            ewr_model::examples::oscillator_2d(),
            vec![0.3, 0.7, 1.0, 1.3],
            vec!["odd:1", "odd:3", "odd:5", "odd:9", "odd:15"],
            "odd:255",
        ),
        (
            "two-mass-damper",
            ewr_model::examples::two_mass_damper(1.0),
            vec![0.4, 0.62, 0.9],
            vec!["odd:1", "odd:3", "odd:7", "odd:15"],
            "odd:255",
        ),
        (
            "single-contact-3d",
            ewr_model::examples::single_contact_3d(),
            vec![2.0, 4.0, 6.0],
            vec!["all:3", "all:7", "all:15"],
            "all:127",
        ),
        (
            "blade-damper-blade-3d",
            ewr_model::examples::blade_damper_blade_3d(&Default::default()),
            vec![0.9, 1.0, 1.1],
            vec!["all:3", "all:7", "all:15"],
            "all:127",
        ),
    ];
    for (name, model, omegas, sets, reference) in cases {
        let rec = Receptance::new(&model, ReceptanceKind::Auto).unwrap();
        let params = ContactParams::of(&model.contacts);
        let monitor: Vec<usize> = (0..model.n_dofs().min(16)).collect();
        let tol = ewr_solve::default_tolerance(&model);
        for &w in &omegas {
            let rset: HarmonicSet = reference.parse().unwrap();
            let truth = solve_point(
                &rec,
                &params,
                w,
                &settings(&rset, monitor.clone(), tol),
                None,
            )
            .unwrap();
            let a_true = truth.dofs.norm_peak;
            for s in &sets {
                let set: HarmonicSet = s.parse().unwrap();
                let t0 = std::time::Instant::now();
                let base = solve_point(
                    &rec,
                    &params,
                    w,
                    &settings(&set, monitor.clone(), tol),
                    None,
                )
                .unwrap();
                let t_base = t0.elapsed().as_secs_f64();
                let e_set = enriched(&set);
                let st = settings(&e_set, monitor.clone(), tol);
                let t1 = std::time::Instant::now();
                let full =
                    solve_point(&rec, &params, w, &st, Some((&base.set, &base.friction))).unwrap();
                let t_full = t1.elapsed().as_secs_f64();
                let mut one = st.clone();
                one.newton.max_iterations = 1;
                one.retry_rho = false;
                let t2 = std::time::Instant::now();
                let step =
                    solve_point(&rec, &params, w, &one, Some((&base.set, &base.friction))).unwrap();
                let t_one = t2.elapsed().as_secs_f64();
                let a = base.dofs.norm_peak;
                println!(
                    "{name:22} w={w:<5} {s:8} A={a:<12.6} true={:<10.3e} full={:<10.3e} ({}it, x{:.1}) one-step={:<10.3e} (x{:.1})  conv={} {}",
                    (a - a_true).abs(),
                    (full.dofs.norm_peak - a).abs(),
                    full.iterations,
                    t_full / t_base,
                    (step.dofs.norm_peak - a).abs(),
                    t_one / t_base,
                    base.status.converged(),
                    full.status.converged(),
                );
            }
        }
    }
}
