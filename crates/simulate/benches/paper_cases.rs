//! Time to the periodic steady state for the two cases the paper validates by implicit Euler
//! (seed 000 sec. 4.3: oscillator-2d, w = 0.1, muN = 8, h = 1e-3, "about 30 s"; sec. 5.3:
//! two-mass-damper, w = 0.303, "approximately 2100 s"), plus the massless damper and two
//! larger sparse chains to show the cost per step.
//!
//! `cargo bench -p ewr-simulate --bench paper_cases`. Best of 3 runs from rest, tol 1e-6.

use ewr_model::{Model, examples};
use ewr_simulate::{LinearSolver, Options, simulate};
use std::time::Instant;

fn case(name: &str, model: &Model, omega: f64, dt: f64, solver: LinearSolver) {
    let mut o = Options::new(omega);
    o.dt = Some(dt);
    o.linear_solver = solver;
    o.max_periods = 5000;
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..3 {
        let t = Instant::now();
        let s = simulate(model, &o, &mut |_| {}).expect("simulation runs");
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(s);
    }
    let s = last.expect("ran");
    let steps = s.periods_run * s.steps_per_period;
    let sticks: Vec<String> = s
        .contact_summaries()
        .iter()
        .take(1)
        .flat_map(|c| {
            c.stick_intervals
                .iter()
                .map(|i| format!("[{:.2}, {:.2}]", i[0], i[1]))
        })
        .collect();
    println!(
        "{name:<34} {:>6} {:>9.2e} {:>5} {:>7} {:>9.3} {:>9.0} {:>6}  {}",
        model.n_dofs(),
        s.dt,
        s.periods_run,
        if s.converged { "yes" } else { "NO" },
        best,
        best / steps as f64 * 1e9,
        if s.dense { "dense" } else { "sparse" },
        sticks.join(" ")
    );
}

fn main() {
    println!(
        "{:<34} {:>6} {:>9} {:>5} {:>7} {:>9} {:>9} {:>6}  contact 0 stick intervals",
        "case", "DOFs", "dt", "per.", "steady", "time [s]", "ns/step", "A"
    );
    let osc = examples::oscillator_2d();
    case(
        "oscillator-2d w=0.1 (Fig. 13)",
        &osc,
        0.1,
        1e-3,
        LinearSolver::Auto,
    );
    case(
        "  same, dt = T/2^16 (default)",
        &osc,
        0.1,
        0.1f64.recip() * std::f64::consts::TAU / 65536.0,
        LinearSolver::Auto,
    );
    let two = examples::two_mass_damper(1.0);
    case(
        "two-mass-damper w=0.303 (Fig. 22)",
        &two,
        0.303,
        1e-3,
        LinearSolver::Auto,
    );
    case(
        "  same, massless damper (Fig. 23)",
        &examples::two_mass_damper(0.0),
        0.303,
        1e-3,
        LinearSolver::Auto,
    );
    let mut chain = examples::chain(50);
    chain.contacts.mu_n.iter_mut().for_each(|x| *x = 0.03);
    case(
        "chain 60 DOFs, 50 contacts, w=0.3",
        &chain,
        0.3,
        2e-3,
        LinearSolver::Dense,
    );
    case(
        "  same, sparse step matrix",
        &chain,
        0.3,
        2e-3,
        LinearSolver::Sparse,
    );
    let mut big = examples::chain(200);
    big.contacts.mu_n.iter_mut().for_each(|x| *x = 0.03);
    case(
        "chain 210 DOFs, 200 contacts, w=0.3",
        &big,
        0.3,
        2e-3,
        LinearSolver::Sparse,
    );
}
