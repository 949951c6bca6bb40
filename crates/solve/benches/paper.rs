//! Seed 000 benchmarks (issue "Solver and CLI"), printed as a table; run with
//! `cargo bench -p ewr-solve --bench paper`. Times are wall-clock on this machine in one run.
//!
//! (a) Fig. 5: oscillator-2d, odd:59, w = 0.001 .. 1.5 step 0.001, mu N in {0, 5, 8, 10, 12}
//!     (the paper: about 72 min per curve in MATLAB);
//! (b) Table 1 point: w = 0.1, mu N = 8, f1 = 10 cos wt, f2 = 10 cos 3wt, odd:199, 4096
//!     samples, rho = 1 (the paper: 17.8 s);
//! (c) Fig. 21: two-mass-damper, w = 0.115, f11 = 20 cos wt, f12 = 20 cos 3wt, odd:1799.

use ewr_contact::{ContactParams, FrictionLaw};
use ewr_hb::receptance::{Receptance, ReceptanceKind};
use ewr_hb::{HarmonicSet, default_samples};
use ewr_model::{Model, examples};
use ewr_solve::{Continuation, FrcSettings, NewtonOptions, PointSettings, frc, solve_point};
use rayon::prelude::*;
use std::time::Instant;

fn settings(set: HarmonicSet, n_samples: usize, model: &Model) -> PointSettings {
    PointSettings {
        set,
        n_samples,
        law: FrictionLaw::Exact,
        newton: NewtonOptions {
            tol_residual: 1e-10,
            max_iterations: 500,
            ..NewtonOptions::default()
        },
        ramp: true,
        monitor: (0..model.n_dofs()).collect(),
        retry_rho: true,
        preconditioner: Default::default(),
        auto: None,
        amplitude: Default::default(),
    }
}

fn fig5() {
    let mu = [0.0, 5.0, 8.0, 10.0, 12.0];
    let t0 = Instant::now();
    let rows: Vec<(f64, usize, usize, usize, f64)> = mu
        .par_iter()
        .map(|&m| {
            let mut model = examples::oscillator_2d();
            model.contacts.mu_n = vec![m];
            let set = HarmonicSet::odd(59).unwrap();
            let point = settings(set.clone(), default_samples(&set), &model);
            let rec = Receptance::new(&model, ReceptanceKind::Dense).unwrap();
            let s = FrcSettings {
                omega_start: 0.001,
                omega_end: 1.5,
                step: 0.001,
                min_step: 0.001 / 64.0,
                max_step: 0.001,
                method: Continuation::Sequential,
                point,
                max_points: 10_000,
                adaptive: None,
                keep_histories: true,
            };
            let t = Instant::now();
            let pts = frc(&rec, &ContactParams::of(&model.contacts), &s, &mut |_| true).unwrap();
            let failed = pts
                .iter()
                .filter(|p| !p.solution.status.converged())
                .count();
            let iters = pts.iter().map(|p| p.solution.iterations).sum();
            (m, pts.len(), failed, iters, t.elapsed().as_secs_f64())
        })
        .collect();
    let total = t0.elapsed().as_secs_f64();
    println!("(a) seed 000 Fig. 5: oscillator-2d, odd:59 (512 samples), w 0.001..1.5 step 0.001");
    println!("| mu N | points | not converged | Newton iterations | s per curve | ms per point |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for (m, n, f, it, t) in rows {
        println!(
            "| {m} | {n} | {f} | {it} | {t:.2} | {:.3} |",
            1e3 * t / n as f64
        );
    }
    println!("all five curves (2 threads): {total:.2} s wall (paper: about 72 min per curve)\n");
}

fn point(name: &str, model: &Model, omega: f64, set: HarmonicSet, n_samples: usize, paper: &str) {
    let rec = Receptance::new(model, ReceptanceKind::Dense).unwrap();
    let p = ContactParams::of(&model.contacts);
    let s = settings(set.clone(), n_samples, model);
    let t = Instant::now();
    let sol = solve_point(&rec, &p, omega, &s, None).unwrap();
    let dt = t.elapsed().as_secs_f64();
    println!(
        "| {name} | {set} | {n_samples} | {} | {} | {:.2e} | {} | {dt:.3} | {paper} |",
        sol.status,
        sol.iterations,
        sol.residual,
        sol.contacts[0].stick_intervals.len()
    );
}

fn main() {
    // `cargo bench` passes --bench; filters select parts: `-- fig5`, `-- table1`, `-- fig21`.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let want = |k: &str| args.is_empty() || args.iter().any(|a| k.contains(a.as_str()));
    if want("fig5") {
        fig5();
    }
    println!("(b), (c) single points, from zero friction force with harmonic ramping");
    println!(
        "| case | harmonics | samples | status | iterations | residual | stick phases | s | paper |"
    );
    println!("|---|---|---:|---|---:|---:|---:|---:|---|");
    if want("table1") {
        let mut m = examples::oscillator_2d();
        m.forcing[1].harmonic = 3;
        point(
            "Table 1, rho = 1",
            &m,
            0.1,
            HarmonicSet::odd(199).unwrap(),
            4096,
            "17.8 s",
        );
    }
    if want("fig21") {
        let mut m = examples::two_mass_damper(1.0);
        m.forcing[1].harmonic = 3;
        point(
            "Fig. 21",
            &m,
            0.115,
            HarmonicSet::odd(1799).unwrap(),
            16384,
            "not given",
        );
    }
}
