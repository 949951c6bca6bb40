//! Plain timing of the receptance backends (no criterion):
//! `cargo bench -p ewr-hb --bench receptance`.
//!
//! Per frequency point: `prepare(w, odd harmonics 1..9)` plus `contact_receptance(h)` for each
//! harmonic, on generated 2-D lattices (two DOFs per node, consistent-like mass, Rayleigh
//! damping, 2-D contacts to ground spread over the nodes) of about 1k, 10k and 100k DOFs with
//! 10 and 100 contacts (`m = 20` and `200`). Also the one-time cost of `Receptance::new`
//! (the modal extraction for the modal backend). Wall clock on a possibly shared machine.
//! Cases that would take too long are skipped and the reason printed.

use std::hint::black_box;
use std::time::Instant;

use ewr_hb::{Receptance, ReceptanceKind};
use ewr_model::{Contacts, Model, ModelBuilder};

const HARMONICS: [usize; 5] = [1, 3, 5, 7, 9];

/// `nx * nx` nodes, two DOFs each, clamped on the left edge, `nc` contacts.
fn lattice(nx: usize, nc: usize) -> Model {
    let ny = nx;
    let n = 2 * nx * ny;
    let dof = |ix: usize, iy: usize, d: usize| 2 * (iy * nx + ix) + d;
    let mut b = ModelBuilder::new(n).rayleigh(0.01, 1e-3);
    let s = std::f64::consts::FRAC_1_SQRT_2;
    for iy in 0..ny {
        for ix in 0..nx {
            let mass = 1.0 + 0.3 * ((ix * 7 + iy * 3) as f64).sin();
            for d in 0..2 {
                b = b.mass(dof(ix, iy, d), mass);
                if ix == 0 {
                    b = b.spring_to_ground(dof(ix, iy, d), 5.0);
                }
                for (jx, jy, axial) in [(ix + 1, iy, 0), (ix, iy + 1, 1)] {
                    if jx < nx && jy < ny {
                        let k = if d == axial { 1.0 } else { 0.3 };
                        b = b.spring(dof(ix, iy, d), dof(jx, jy, d), k).mass_entry(
                            dof(ix, iy, d),
                            dof(jx, jy, d),
                            1.0 / 12.0,
                        );
                    }
                }
            }
            if ix + 1 < nx && iy + 1 < ny {
                b = b.spring_along(
                    &[
                        (dof(ix, iy, 0), s),
                        (dof(ix, iy, 1), s),
                        (dof(ix + 1, iy + 1, 0), -s),
                        (dof(ix + 1, iy + 1, 1), -s),
                    ],
                    0.2,
                );
            }
        }
    }
    let nodes = nx * ny;
    let cdofs: Vec<usize> = (0..nc)
        .flat_map(|i| {
            let node = (2 * i + 1) * nodes / (2 * nc);
            [2 * node, 2 * node + 1]
        })
        .collect();
    b.contacts(Contacts::to_ground(2, cdofs, vec![1.0; nc]))
        .force(dof(nx - 1, 0, 0), 1, 1.0, 0.0)
        .build()
        .expect("valid lattice")
}

/// Seconds per frequency point (prepare + G_h for every harmonic), best of `reps`.
fn per_point(r: &Receptance, w: f64, reps: usize) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        let at = r.prepare(w, &HARMONICS).expect("prepare");
        for h in HARMONICS {
            black_box(at.contact_receptance(h).expect("G_h"));
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

fn main() {
    println!("| DOFs | contacts (m) | backend | setup (s) | per point, h = 1,3,5,7,9 (s) |");
    println!("|---:|---:|---|---:|---:|");
    let mut skipped = Vec::new();
    for nx in [22, 71, 224] {
        for nc in [10, 100] {
            let t = Instant::now();
            let model = lattice(nx, nc);
            let n = model.n_dofs();
            let build = t.elapsed().as_secs_f64();
            eprintln!("model {n} DOFs built in {build:.2} s");
            // A frequency inside the lowest modes, taken from the modal backend.
            let t = Instant::now();
            let modal =
                Receptance::new(&model, ReceptanceKind::Modal { modes: 100 }).expect("modal");
            let setup = t.elapsed().as_secs_f64();
            let w = 1.5 * modal.modes().expect("modes").omega[0];
            let reps = if n > 50_000 { 1 } else { 3 };
            let row = |name: &str, setup: f64, point: f64| {
                println!(
                    "| {n} | {nc} ({}) | {name} | {setup:.3} | {point:.4} |",
                    2 * nc
                )
            };
            row("modal, 100 modes", setup, per_point(&modal, w, reps));
            drop(modal);
            if n <= 2_000 {
                let t = Instant::now();
                let dense = Receptance::new(&model, ReceptanceKind::Dense).expect("dense");
                let setup = t.elapsed().as_secs_f64();
                row("dense", setup, per_point(&dense, w, reps));
            } else if nc == 10 {
                skipped.push(format!(
                    "dense at {n} DOFs: O(n^3) complex LU per harmonic (minutes per point)"
                ));
            }
            let t = Instant::now();
            let sparse = Receptance::new(&model, ReceptanceKind::Sparse).expect("sparse");
            let setup = t.elapsed().as_secs_f64();
            if n > 50_000 {
                // One harmonic first: skip the full point if that alone is too slow.
                let t = Instant::now();
                let at = sparse.prepare(w, &[1]).expect("prepare");
                black_box(at.contact_receptance(1).expect("G_1"));
                let one = t.elapsed().as_secs_f64();
                if one > 30.0 {
                    skipped.push(format!(
                        "sparse at {n} DOFs, {nc} contacts: one harmonic took {one:.1} s"
                    ));
                    continue;
                }
            }
            row("sparse", setup, per_point(&sparse, w, reps));
        }
    }
    for s in skipped {
        println!("\nskipped: {s}");
    }
}
