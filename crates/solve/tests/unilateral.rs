//! 3-D contacts (normal load that varies and lifts off): the analytical Jacobian against
//! finite differences, and the 2-D contact element under prescribed motion against an
//! independent time-marching reference (seed 004 digest, table V2).

use ewr_contact::{CondensedContacts, ContactSystem, UnilateralParams, UnilateralResidual};
use ewr_hb::HarmonicSet;
use ewr_solve::newton::{self, NewtonOptions};
use ewr_solve::{Policy, ScaledContacts};
use faer::{Mat, c64};

/// Contact stiffnesses and friction of table V2: k_x = k_y = 1e5 N/m, mu = 0.3, N0 = 50 N.
const K: f64 = 1e5;
const MU: f64 = 0.3;
const N0: f64 = 50.0;

/// A prescribed motion: `(h, cos, sin)` amplitudes of its harmonics.
type Motion = Vec<(usize, f64, f64)>;

/// Harmonic 1 only.
fn first(a: (f64, f64)) -> Motion {
    vec![(1, a.0, a.1)]
}

/// One 2-D element (one tangential direction, one normal) whose structure side moves as
/// prescribed: `x(tau)` tangential, `y(tau)` normal (positive = pressing). The structure is
/// rigid, so `G_h` is the contact compliance `diag(1/k_t, 1/k_n)`, and `Q_h` is the
/// prescribed motion, with the normal row's sign flipped (the gap closes when the structure
/// presses) and the preload as an interference `g0 = -N0 / k_n`.
fn element(set: &HarmonicSet, x: &Motion, y: &Motion) -> (CondensedContacts, UnilateralParams) {
    // x(t) = a cos + b sin is the complex amplitude a - i b.
    let amplitude = |m: &Motion, h: usize| {
        m.iter()
            .filter(|&&(k, _, _)| k == h)
            .map(|&(_, a, b)| c64::new(a, -b))
            .fold(c64::new(0.0, 0.0), |s, v| s + v)
    };
    let harmonics = set
        .harmonics()
        .iter()
        .map(|&h| {
            let g = Mat::from_fn(2, 2, |i, j| {
                if i == j {
                    c64::new(1.0 / K, 0.0)
                } else {
                    c64::new(0.0, 0.0)
                }
            });
            (h, g, vec![amplitude(x, h), -amplitude(y, h)])
        })
        .collect();
    let cond = CondensedContacts::new(1.0, harmonics, None, true);
    let params = UnilateralParams {
        dim: 1,
        mu: vec![MU],
        g0: vec![-N0 / K],
        rho_t: vec![K],
        rho_n: vec![K],
        force_scale: vec![MU * N0],
        load: Vec::new(),
    };
    (cond, params)
}

fn solve(set: &HarmonicSet, n_samples: usize, x: &Motion, y: &Motion) -> Vec<f64> {
    solve_from(set, n_samples, x, y, None)
}

/// Solves from zero, or from the solution `start` on a smaller set (prolonged).
fn solve_from(
    set: &HarmonicSet,
    n_samples: usize,
    x: &Motion,
    y: &Motion,
    start: Option<(&HarmonicSet, &[f64])>,
) -> Vec<f64> {
    let (cond, params) = element(set, x, y);
    let inner = UnilateralResidual::new(cond, set.clone(), n_samples, params).unwrap();
    let mut sys = ScaledContacts::new(
        Box::new(inner),
        1.0 / (MU * N0).powi(2),
        Policy::unilateral(),
    );
    let opts = NewtonOptions {
        tol_residual: 1e-9,
        max_iterations: 200,
        ..NewtonOptions::default()
    };
    let x0 = match start {
        Some((from, x)) => set.prolong(x, from).unwrap(),
        None => vec![0.0; 2 * set.n_coeffs()],
    };
    let r = newton::solve(&mut sys, &x0, &opts);
    assert!(
        r.status.converged(),
        "{:?} residual {}",
        r.status,
        r.residual
    );
    r.x
}

/// `(cos, sin)` coefficients of harmonic `h` of signal `s` (hb layout: mean, then cos/sin).
fn coeff(x: &[f64], set: &HarmonicSet, s: usize, h: usize) -> (f64, f64) {
    let nco = set.n_coeffs();
    let p = set.coeff_index(h).unwrap();
    if h == 0 {
        (x[s * nco + p], 0.0)
    } else {
        (x[s * nco + p], x[s * nco + p + 1])
    }
}

/// Table V2 of the seed 004 digest: the spring force on the contact side, `Fx = k (x - s)`
/// (s the slider), and the normal force `Fy = max(0, N0 + k y)`, from a return-map time march
/// converged to about 1e-5 N. Our friction unknown is the force on the structure, `r = -Fx`.
struct Case {
    x: (f64, f64),
    y: (f64, f64),
    fx: [(f64, f64); 4],
    fy0: f64,
    fy1: (f64, f64),
}

fn cases() -> Vec<(&'static str, Case)> {
    vec![
        (
            "B (in phase, no separation)",
            Case {
                x: (1e-3, 0.0),
                y: (2e-4, 0.0),
                fx: [
                    (2.85754, 0.0),
                    (9.73912, -15.90144),
                    (3.66462, -1.52255),
                    (5.08323, 0.43727),
                ],
                fy0: 50.0,
                fy1: (20.0, 0.0),
            },
        ),
        (
            "C (quadrature, no separation)",
            Case {
                x: (1e-3, 0.0),
                y: (0.0, 2e-4),
                fx: [
                    (-3.24973, 0.0),
                    (9.38154, -16.20980),
                    (3.06812, 0.92374),
                    (5.32483, 0.09848),
                ],
                fy0: 50.0,
                fy1: (0.0, 20.0),
            },
        ),
        (
            "D (separation)",
            Case {
                x: (1e-3, 0.0),
                y: (0.0, 8e-4),
                fx: [
                    (-11.48474, 0.0),
                    (9.03157, -18.97763),
                    (9.53326, 3.48434),
                    (4.13558, 1.50040),
                ],
                fy0: 55.62350,
                fy1: (0.0, 69.61611),
            },
        ),
    ]
}

/// Solution with `all:h_max`, reached by a harmonic ramp from 8 harmonics as `solve_point`
/// does (Newton from zero force with many harmonics and lift-off may stall).
fn ramp_solve(h_max: usize, x: &Motion, y: &Motion) -> (HarmonicSet, Vec<f64>) {
    let mut prev: Option<(HarmonicSet, Vec<f64>)> = None;
    let mut hm = 8;
    loop {
        let set: HarmonicSet = format!("all:{}", hm.min(h_max)).parse().unwrap();
        let nt = (16 * set.h_max()).next_power_of_two().max(1024);
        let start = prev.as_ref().map(|(s, x)| (s, x.as_slice()));
        let sol = solve_from(&set, nt, x, y, start);
        if hm >= h_max {
            return (set, sol);
        }
        prev = Some((set, sol));
        hm *= 2;
    }
}

/// Largest deviation (N) of the first four friction harmonics, the mean normal force and the
/// first normal harmonic from the reference, with `h_max` harmonics.
fn deviation(h_max: usize, c: &Case) -> f64 {
    let (set, x) = ramp_solve(h_max, &first(c.x), &first(c.y));
    let mut worst: f64 = 0.0;
    for (h, &(fc, fs)) in c.fx.iter().enumerate() {
        let (a, b) = coeff(&x, &set, 0, h);
        worst = worst.max((-a - fc).abs()).max((-b - fs).abs());
    }
    let (l0, _) = coeff(&x, &set, 1, 0);
    let (l1a, l1b) = coeff(&x, &set, 1, 1);
    worst
        .max((l0 - c.fy0).abs())
        .max((l1a - c.fy1.0).abs())
        .max((l1b - c.fy1.1).abs())
}

#[test]
fn prescribed_motion_converges_to_the_time_marching_reference_with_separation() {
    // The Galerkin solution converges to the exact force history as harmonics are added
    // (about as 1/H: the force has kinks at every stick-slip and lift-off transition).
    for (name, c) in cases() {
        let coarse = deviation(32, &c);
        let fine = deviation(128, &c);
        println!("case {name}: deviation {coarse:.2e} N with all:32, {fine:.2e} N with all:128");
        assert!(fine < 5e-2, "case {name}: deviation {fine} N with all:128");
        assert!(
            fine < coarse / 2.5,
            "case {name}: {coarse} -> {fine} is not converging"
        );
    }
}

#[test]
fn normal_force_is_zero_while_separated_and_friction_vanishes_with_it() {
    let set: HarmonicSet = "all:64".parse().unwrap();
    let c = &cases()[2].1;
    let (cond, params) = element(&set, &first(c.x), &first(c.y));
    let x = solve(&set, 2048, &first(c.x), &first(c.y));
    let mut sys = UnilateralResidual::new(cond, set.clone(), 2048, params).unwrap();
    let h = sys.histories(&x).unwrap();
    let nt = h.n_samples;
    let sep = (0..nt)
        .filter(|&j| h.state[j] == ewr_contact::SampleState::Separated)
        .count();
    // y = 8e-4 sin: N0 + k y < 0 for sin < -0.625, about 28 % of the period.
    let pi = std::f64::consts::PI;
    let expected = (pi - 2.0 * (0.625f64).asin()) / (2.0 * pi);
    let frac = sep as f64 / nt as f64;
    assert!(
        (frac - expected).abs() < 0.01,
        "separated fraction {frac}, expected {expected}"
    );
    for j in 0..nt {
        if h.state[j] == ewr_contact::SampleState::Separated {
            // Truncated series ring around the transitions; away from them, force ~ 0.
            assert!(
                h.normal_force[j].abs() < 2.0,
                "lambda {}",
                h.normal_force[j]
            );
            assert!(h.force[j].abs() < 2.0, "r {}", h.force[j]);
        } else {
            assert!(h.normal_force[j] > -2.0);
        }
    }
}

/// The largest `|J_ij|`.
fn largest_entry(j: &Mat<f64>) -> f64 {
    (0..j.nrows())
        .flat_map(|a| (0..j.ncols()).map(move |b| (a, b)))
        .map(|(a, b)| j[(a, b)].abs())
        .fold(0.0, f64::max)
}

/// Fills `j` with the dense Jacobian at `x` and returns its largest difference from central
/// differences of step `eps`, relative to its largest entry.
fn jacobian_against_differences(
    sys: &mut UnilateralResidual,
    x: &[f64],
    eps: f64,
    j: &mut Mat<f64>,
) -> f64 {
    let n = sys.len();
    let mut g = vec![0.0; n];
    sys.residual_and_jacobian(x, &mut g, j.as_mut()).unwrap();
    let scale = largest_entry(j);
    let mut worst: f64 = 0.0;
    for col in 0..n {
        let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
        xp[col] += eps;
        xm[col] -= eps;
        let (mut gp, mut gm) = (vec![0.0; n], vec![0.0; n]);
        sys.residual(&xp, &mut gp).unwrap();
        sys.residual(&xm, &mut gm).unwrap();
        for row in 0..n {
            let fd = (gp[row] - gm[row]) / (2.0 * eps);
            worst = worst.max((fd - j[(row, col)]).abs() / scale);
        }
    }
    worst
}

/// The largest difference of `J v` and `J^T v` (matrix-free, at the last point evaluated with
/// derivatives) from the dense `j` times a generic `v`.
fn products_against_dense(sys: &mut UnilateralResidual, j: &Mat<f64>) -> f64 {
    let n = sys.len();
    let v: Vec<f64> = (0..n).map(|i| (i as f64 * 1.31).cos()).collect();
    let (mut jv, mut jtv) = (vec![0.0; n], vec![0.0; n]);
    sys.jacobian_product(&v, &mut jv).unwrap();
    sys.jacobian_transpose_product(&v, &mut jtv).unwrap();
    // The product finished contact by contact (in the product's own pass over the contacts)
    // is the product with the finish applied to each contact's unknowns, to the last bit.
    let mut expected = jv.clone();
    for c in 0..ewr_contact::ContactSystem::contact_count(sys) {
        for (k, i) in ewr_contact::ContactSystem::contact_unknowns(sys, c)
            .into_iter()
            .enumerate()
        {
            expected[i] = 2.0 * jv[i] + (c + k) as f64;
        }
    }
    let mut finished = vec![0.0; n];
    let finish = |c: usize, part: &mut [f64]| {
        for (k, p) in part.iter_mut().enumerate() {
            *p = 2.0 * *p + (c + k) as f64;
        }
    };
    ewr_contact::ContactSystem::jacobian_product_then(sys, &v, &mut finished, &finish).unwrap();
    assert_eq!(finished, expected);
    let mut worst: f64 = 0.0;
    for r in 0..n {
        let dense: f64 = (0..n).map(|c| j[(r, c)] * v[c]).sum();
        let dense_t: f64 = (0..n).map(|c| j[(c, r)] * v[c]).sum();
        worst = worst
            .max((dense - jv[r]).abs())
            .max((dense_t - jtv[r]).abs());
    }
    worst
}

#[test]
fn jacobian_equals_finite_differences_in_stick_slip_and_separation() {
    let set: HarmonicSet = "all:5".parse().unwrap();
    let nt = 256;
    for (name, c) in cases() {
        let (cond, params) = element(&set, &first(c.x), &first(c.y));
        let mut sys = UnilateralResidual::new(cond, set.clone(), nt, params).unwrap();
        let n = sys.len();
        // A point near the solution (so that every state occurs), made generic.
        let x_sol = solve(&set, nt, &first(c.x), &first(c.y));
        let x: Vec<f64> = x_sol
            .iter()
            .enumerate()
            .map(|(i, v)| v + 0.3 * ((i as f64 * 1.7).sin()))
            .collect();
        let mut j = Mat::zeros(n, n);
        let worst = jacobian_against_differences(&mut sys, &x, 1e-6, &mut j);
        println!("case {name}: largest |J - FD| / max|J| = {worst:.2e}");
        assert!(worst < 1e-4, "case {name}: {worst}");
    }
}

/// Two 2-D contacts (two tangential directions each) coupled through a complex symmetric
/// receptance with damping, both pressed and shaken: every law branch and every coupling
/// term of the matrix-free products occurs.
fn coupled_pair(set: &HarmonicSet) -> (CondensedContacts, UnilateralParams) {
    let m = 6; // rows: 4 friction (c0 t1, c0 t2, c1 t1, c1 t2), then 2 normal
    let harmonics = set
        .harmonics()
        .iter()
        .map(|&h| {
            let hf = h as f64;
            let g = Mat::from_fn(m, m, |i, j| {
                let (a, b) = (i.min(j) as f64, i.max(j) as f64);
                let off = 0.2 / K * ((a + 2.0 * b + hf).sin());
                let damp = if h > 0 {
                    -0.05 / K * ((a * b + 1.0).cos())
                } else {
                    0.0
                };
                if i == j {
                    c64::new(1.0 / K * (1.0 + 0.1 * hf), damp)
                } else {
                    c64::new(off, damp * 0.3)
                }
            });
            let q = if h == 1 {
                vec![
                    c64::new(1e-3, 0.0),
                    c64::new(0.0, 5e-4),
                    c64::new(-8e-4, 2e-4),
                    c64::new(3e-4, 0.0),
                    c64::new(0.0, 6e-4),
                    c64::new(-1e-4, 0.0),
                ]
            } else {
                vec![c64::new(0.0, 0.0); m]
            };
            (h, g, q)
        })
        .collect();
    (
        CondensedContacts::new(1.3, harmonics, None, true),
        UnilateralParams {
            dim: 2,
            mu: vec![0.3, 0.5],
            g0: vec![-N0 / K, -0.5 * N0 / K],
            rho_t: vec![K, 2.0 * K],
            rho_n: vec![K, K],
            force_scale: vec![MU * N0, MU * N0],
            load: Vec::new(),
        },
    )
}

#[test]
fn matrix_free_products_and_contact_blocks_equal_the_dense_jacobian() {
    // At 8192 samples each contact is a task of its own (`ewr_hb::fourier::parallel_task`).
    for samples in [64, 8192] {
        check_products_and_blocks(samples);
    }
}

fn check_products_and_blocks(samples: usize) {
    let set: HarmonicSet = "all:4".parse().unwrap();
    let (cond, params) = coupled_pair(&set);
    let mut sys = UnilateralResidual::new(cond, set.clone(), samples, params).unwrap();
    let n = sys.len();
    let nco = set.n_coeffs();
    let x: Vec<f64> = (0..n).map(|i| 20.0 * ((i as f64 * 0.77).sin())).collect();
    let mut g = vec![0.0; n];
    let mut j = Mat::zeros(n, n);
    sys.residual_and_jacobian(&x, &mut g, j.as_mut()).unwrap();
    let mut g2 = vec![0.0; n];
    sys.residual_keep_derivatives(&x, &mut g2).unwrap();
    assert_eq!(g, g2);
    let scale = largest_entry(&j);
    let worst = products_against_dense(&mut sys, &j);
    assert!(
        worst < 1e-11 * scale * n as f64,
        "products: {worst} (|J| {scale})"
    );
    // Contact blocks: signals (c*2, c*2+1, 4 + c).
    let blocks = sys.contact_jacobian_blocks().unwrap();
    for (c, b) in blocks.iter().enumerate() {
        let sigs = [c * 2, c * 2 + 1, 4 + c];
        for (bi, &si) in sigs.iter().enumerate() {
            for (bj, &sj) in sigs.iter().enumerate() {
                for p in 0..nco {
                    for q in 0..nco {
                        let d = j[(si * nco + p, sj * nco + q)];
                        let e = b[(bi * nco + p, bj * nco + q)];
                        assert!((d - e).abs() <= 1e-12 * scale, "contact {c}: {d} vs {e}");
                    }
                }
            }
        }
    }
}

#[test]
fn matrix_free_newton_reaches_the_dense_solution() {
    let set: HarmonicSet = "all:8".parse().unwrap();
    let run = |linear: ewr_solve::LinearSolve| {
        let (cond, params) = coupled_pair(&set);
        let inner = UnilateralResidual::new(cond, set.clone(), 256, params).unwrap();
        let mut sys = ScaledContacts::new(
            Box::new(inner),
            1.0 / (MU * N0).powi(2),
            Policy::unilateral(),
        );
        let opts = NewtonOptions {
            tol_residual: 1e-10,
            max_iterations: 300,
            linear,
            ..NewtonOptions::default()
        };
        let x0 = vec![0.0; sys.inner.len()];
        let r = newton::solve(&mut sys, &x0, &opts);
        assert!(
            r.status.converged(),
            "{linear}: {:?} {}",
            r.status,
            r.residual
        );
        (r.x, r.matrix_free)
    };
    let (xd, mfd) = run(ewr_solve::LinearSolve::Dense);
    let (xm, mfm) = run(ewr_solve::LinearSolve::MatrixFree);
    assert!(!mfd && mfm);
    let worst = xd
        .iter()
        .zip(&xm)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        worst < 1e-6 * N0,
        "dense and matrix-free solutions differ by {worst} N"
    );
}

/// The 2-D element with contact stiffnesses (Yang, Chu & Menq 1998, J. Sound Vib. 210(4))
/// under prescribed motion, solved exactly phase by phase: in stick the tangential force is
/// `T0 + k_t (x - x0)`, in slip `+-mu N`, separated `0`, with `N = max(0, N0 + k_n y)`; the
/// transition angles are the roots of the phase's end condition (bisection to round-off).
/// Independent of the harmonic balance: no Fourier series, no residual, no Newton.
mod closed_form {
    use super::Motion;
    use std::f64::consts::PI;

    #[derive(Clone, Copy, Debug)]
    enum Phase {
        Stick { t0: f64, f0: f64 },
        Slip(f64),
        Separated,
    }

    /// The periodic steady state over one period `[0, 2 pi)`, as phases with their spans.
    pub struct Loop {
        x: Motion,
        y: Motion,
        k_t: f64,
        k_n: f64,
        mu: f64,
        n0: f64,
        pieces: Vec<(f64, f64, Phase)>,
    }

    fn value(m: &Motion, t: f64) -> f64 {
        m.iter()
            .map(|&(h, a, b)| a * (h as f64 * t).cos() + b * (h as f64 * t).sin())
            .sum()
    }

    fn rate(m: &Motion, t: f64) -> f64 {
        m.iter()
            .map(|&(h, a, b)| h as f64 * (-a * (h as f64 * t).sin() + b * (h as f64 * t).cos()))
            .sum()
    }

    impl Loop {
        /// Marches three periods from rest (memory is erased by the first slip or
        /// separation) and keeps the last.
        pub fn new(x: Motion, y: Motion, k_t: f64, k_n: f64, mu: f64, n0: f64) -> Loop {
            let mut l = Loop {
                x,
                y,
                k_t,
                k_n,
                mu,
                n0,
                pieces: Vec::new(),
            };
            let mut phase = if l.pressure(0.0) > 0.0 {
                Phase::Stick { t0: 0.0, f0: 0.0 }
            } else {
                Phase::Separated
            };
            let (mut t, end) = (0.0, 6.0 * PI);
            let mut all = Vec::new();
            while t < end {
                let te = l.phase_end(t, phase, end);
                all.push((t, te, phase));
                assert!(
                    all.len() < 10_000,
                    "phase chatter near t = {t}: {:?}",
                    &all[all.len() - 6..]
                );
                phase = l.next(te, phase);
                t = te;
            }
            l.pieces = all
                .into_iter()
                .filter(|&(a, b, _)| b > 4.0 * PI && a < end)
                .map(|(a, b, p)| (a.max(4.0 * PI) - 4.0 * PI, b.min(end) - 4.0 * PI, p))
                .collect();
            l
        }

        /// `N0 + k_n y`: the normal force if in contact, negative when separated.
        fn pressure(&self, t: f64) -> f64 {
            self.n0 + self.k_n * value(&self.y, t)
        }

        fn tangential_in(&self, t: f64, p: Phase) -> f64 {
            match p {
                Phase::Stick { t0, f0 } => f0 + self.k_t * (value(&self.x, t) - value(&self.x, t0)),
                Phase::Slip(s) => s * self.mu * self.pressure(t).max(0.0),
                Phase::Separated => 0.0,
            }
        }

        /// Positive while phase `p` lasts.
        fn lasts(&self, t: f64, p: Phase) -> f64 {
            match p {
                Phase::Stick { .. } => self.mu * self.pressure(t) - self.tangential_in(t, p).abs(),
                // Slip goes on while the slider moves in the direction of the force.
                Phase::Slip(s) => (s * self.k_t * rate(&self.x, t)
                    - self.mu * self.k_n * rate(&self.y, t))
                .min(self.pressure(t)),
                Phase::Separated => -self.pressure(t),
            }
        }

        fn phase_end(&self, t0: f64, p: Phase, end: f64) -> f64 {
            let dt = 2.0 * PI / 20_000.0;
            // The first test point is a whole scan step ahead: a phase starts where its
            // criterion is zero, and just after the start the criterion is below round-off
            // (a stick that begins where the slip velocity reverses grows quadratically), so
            // testing it there would end every phase at once and chatter.
            let (mut a, mut b) = (t0, t0 + dt);
            while self.lasts(b, p) > 0.0 {
                if b >= end {
                    return end;
                }
                a = b;
                b = (b + dt).min(end + dt);
            }
            for _ in 0..200 {
                let m = 0.5 * (a + b);
                if m <= a || m >= b {
                    break;
                }
                if self.lasts(m, p) > 0.0 {
                    a = m;
                } else {
                    b = m;
                }
            }
            b
        }

        fn next(&self, t: f64, p: Phase) -> Phase {
            match p {
                Phase::Stick { .. } => {
                    let f = self.tangential_in(t, p);
                    if self.pressure(t) <= 0.0 && f.abs() < 1e-9 {
                        Phase::Separated
                    } else {
                        Phase::Slip(f.signum())
                    }
                }
                Phase::Slip(s) => {
                    if self.pressure(t) <= 1e-9 * self.n0 {
                        Phase::Separated
                    } else {
                        Phase::Stick {
                            t0: t,
                            f0: s * self.mu * self.pressure(t),
                        }
                    }
                }
                // Contact closes with the slider where the spring is relaxed.
                Phase::Separated => Phase::Stick { t0: t, f0: 0.0 },
            }
        }

        fn piece_at(&self, t: f64) -> Phase {
            let t = t.rem_euclid(2.0 * PI);
            self.pieces
                .iter()
                .find(|&&(a, b, _)| t >= a && t < b)
                .or(self.pieces.last())
                .unwrap()
                .2
        }

        /// Tangential spring force on the element side (`Fx` of the seed 004 digest).
        pub fn tangential(&self, t: f64) -> f64 {
            let p = self.piece_at(t);
            self.tangential_in(t.rem_euclid(2.0 * PI), p)
        }

        /// Normal force.
        pub fn normal(&self, t: f64) -> f64 {
            self.pressure(t).max(0.0)
        }

        /// Fraction of the period in each phase: (stick, slip, separated).
        pub fn fractions(&self) -> (f64, f64, f64) {
            let mut f = (0.0, 0.0, 0.0);
            for &(a, b, p) in &self.pieces {
                let d = (b - a) / (2.0 * PI);
                match p {
                    Phase::Stick { .. } => f.0 += d,
                    Phase::Slip(_) => f.1 += d,
                    Phase::Separated => f.2 += d,
                }
            }
            f
        }

        /// `(cos, sin)` Fourier coefficients of harmonic `h` of the tangential (`normal =
        /// false`) or normal force, by Simpson's rule on each smooth phase.
        pub fn coefficients(&self, h: usize, normal: bool) -> (f64, f64) {
            let n = 2000;
            let (mut c, mut s) = (0.0, 0.0);
            for &(a, b, p) in &self.pieces {
                if b <= a {
                    continue;
                }
                let step = (b - a) / n as f64;
                for i in 0..=n {
                    let t = a + i as f64 * step;
                    let w = if i == 0 || i == n {
                        1.0
                    } else if i % 2 == 1 {
                        4.0
                    } else {
                        2.0
                    } * step
                        / 3.0;
                    let f = if normal {
                        self.normal(t)
                    } else {
                        self.tangential_in(t, p)
                    };
                    c += w * f * (h as f64 * t).cos();
                    s += w * f * (h as f64 * t).sin();
                }
            }
            if h == 0 {
                (c / (2.0 * PI), 0.0)
            } else {
                (c / PI, s / PI)
            }
        }
    }
}

#[test]
fn closed_form_loops_reproduce_the_time_marching_table() {
    // Two independent references of the same element agree: the exact phase-by-phase
    // solution and the seed 004 digest's converged time march (about 1e-5 N).
    for (name, c) in cases() {
        let l = closed_form::Loop::new(first(c.x), first(c.y), K, K, MU, N0);
        let mut worst: f64 = 0.0;
        for (h, &(fc, fs)) in c.fx.iter().enumerate() {
            let (a, b) = l.coefficients(h, false);
            worst = worst.max((a - fc).abs()).max((b - fs).abs());
        }
        let (n0, _) = l.coefficients(0, true);
        let (n1a, n1b) = l.coefficients(1, true);
        worst = worst
            .max((n0 - c.fy0).abs())
            .max((n1a - c.fy1.0).abs())
            .max((n1b - c.fy1.1).abs());
        println!("case {name}: closed form vs table {worst:.1e} N");
        assert!(worst < 1e-4, "case {name}: {worst} N");
    }
}

/// Relative rms difference between the harmonic-balance force histories (friction on the
/// structure `r = -T`, normal `lambda = N`) and the closed-form loop, over `2048` instants.
fn history_error(set: &HarmonicSet, x_sol: &[f64], l: &closed_form::Loop) -> (f64, f64) {
    let eval = |s: usize, t: f64| -> f64 {
        set.harmonics()
            .iter()
            .map(|&h| {
                let (a, b) = coeff(x_sol, set, s, h);
                if h == 0 {
                    a
                } else {
                    a * (h as f64 * t).cos() + b * (h as f64 * t).sin()
                }
            })
            .sum()
    };
    let n = 2048;
    let (mut et, mut en, mut st, mut sn) = (0.0, 0.0, 0.0, 0.0);
    for j in 0..n {
        let t = 2.0 * std::f64::consts::PI * j as f64 / n as f64;
        let (tt, nn) = (l.tangential(t), l.normal(t));
        et += (eval(0, t) + tt).powi(2);
        en += (eval(1, t) - nn).powi(2);
        st += tt * tt;
        sn += nn * nn;
    }
    ((et / st).sqrt(), (en / sn).sqrt())
}

#[test]
fn harmonic_balance_converges_to_the_closed_form_loops() {
    // Motions beyond the digest's table: phase-shifted elliptic motion with separation and a
    // third normal harmonic (even tangential harmonics: `all:H` is needed), and a normal
    // motion on harmonic 2 (a contact breathing at twice the tangential frequency), without
    // and with separation.
    let cases: Vec<(&str, Motion, Motion)> = vec![
        (
            "elliptic, 40 deg, separation",
            vec![(1, 1.2e-3, 0.3e-3)],
            vec![(1, 5e-4 * 0.766, 5e-4 * 0.643), (3, 1e-4, 0.0)],
        ),
        (
            "normal on harmonic 2, no separation",
            vec![(1, 1e-3, 0.0)],
            vec![(2, 3e-4, 0.0)],
        ),
        (
            "normal on harmonic 2, separation",
            vec![(1, 1e-3, 0.0)],
            vec![(2, 0.0, 7e-4)],
        ),
    ];
    for (name, x, y) in cases {
        let l = closed_form::Loop::new(x.clone(), y.clone(), K, K, MU, N0);
        let (stick, slip, sep) = l.fractions();
        let mut errs = Vec::new();
        for h_max in [16, 64] {
            let (set, sol) = ramp_solve(h_max, &x, &y);
            errs.push(history_error(&set, &sol, &l));
            if h_max == 64 {
                // Harmonics 0..4 of the tangential force against the exact loop. A normal
                // motion with a component at the excitation frequency breaks the half-wave
                // symmetry T(t + T/2) = -T(t) and creates even tangential harmonics (the
                // static term included), which only `all:H` carries; a normal motion on
                // harmonic 2 alone keeps the symmetry, and the even harmonics vanish.
                let (a1, b1) = l.coefficients(1, false);
                let tol = 2e-2 * a1.hypot(b1);
                let mut even = 0.0f64;
                for h in 0..=4 {
                    let (a, b) = l.coefficients(h, false);
                    let (p, q) = coeff(&sol, &set, 0, h);
                    println!(
                        "  {name}: T harmonic {h}: exact ({a:.4}, {b:.4}), HB ({:.4}, {:.4})",
                        -p, -q
                    );
                    assert!(
                        (a + p).hypot(b + q) < tol,
                        "{name}: harmonic {h} differs by more than {tol:.3}"
                    );
                    if h % 2 == 0 {
                        even = even.max(a.hypot(b));
                    }
                }
                if y.iter().any(|&(h, a, b)| h == 1 && a.hypot(b) > 0.0) {
                    assert!(even > 1.0, "{name}: even harmonics expected, {even}");
                } else {
                    assert!(
                        even < 1e-3 * tol,
                        "{name}: half-wave symmetry broken, {even}"
                    );
                }
            }
        }
        println!(
            "case {name}: stick {stick:.3} slip {slip:.3} separated {sep:.3}; rms error T, N: all:16 {:.1e} {:.1e}, all:64 {:.1e} {:.1e}",
            errs[0].0, errs[0].1, errs[1].0, errs[1].1
        );
        assert!(
            slip > 0.05 && stick > 0.05,
            "{name}: the loop should stick and slip"
        );
        if name.contains("separation") && !name.contains("no separation") {
            assert!(sep > 0.05, "{name}: the element should lift off");
        }
        // The force histories have kinks (stick-slip) and corners (lift-off): the error
        // falls like H^-1.5 or faster, to 1-2 % at all:64 where the element lifts off twice
        // per period.
        assert!(
            errs[1].0 < 2e-2 && errs[1].1 < 1e-2,
            "{name}: {:?}",
            errs[1]
        );
        assert!(
            errs[1].0 < errs[0].0 / 3.0,
            "{name}: not converging {errs:?}"
        );
    }
}

#[test]
fn twice_lifting_off_at_all_128_converges_with_the_retried_rho() {
    // The element breathing on harmonic 2 with separation lifts off twice per period. From
    // the all:64 solution, Newton with the default scalings stalls at all:128 in a local
    // minimum of ||g|| (residual 7e-4 after 200 iterations), as the paper's Table 1 reports
    // for some rho. The point solver then retries with both scalings times 10 and 1/10
    // (`RHO_RETRIES`): the zero set is the same, and from there Newton converges in a few
    // iterations. The all:128 solution is closer to the exact loop than the all:64 one.
    let x = vec![(1, 1e-3, 0.0)];
    let y = vec![(2, 0.0, 7e-4)];
    let l = closed_form::Loop::new(x.clone(), y.clone(), K, K, MU, N0);
    let (s64, x64) = ramp_solve(64, &x, &y);
    let set: HarmonicSet = "all:128".parse().unwrap();
    let solve = |factor: f64| {
        let (cond, mut params) = element(&set, &x, &y);
        params.rho_t[0] *= factor;
        params.rho_n[0] *= factor;
        let inner = UnilateralResidual::new(cond, set.clone(), 2048, params).unwrap();
        let mut sys = ScaledContacts::new(
            Box::new(inner),
            1.0 / (MU * N0).powi(2),
            Policy::unilateral(),
        );
        let opts = NewtonOptions {
            tol_residual: 1e-9,
            max_iterations: 200,
            ..NewtonOptions::default()
        };
        newton::solve(&mut sys, &set.prolong(&x64, &s64).unwrap(), &opts)
    };
    for factor in [10.0, 0.1] {
        let r = solve(factor);
        assert!(r.status.converged(), "rho x {factor}: {:?}", r.status);
        assert!(
            r.iterations < 20,
            "rho x {factor}: {} iterations",
            r.iterations
        );
        let (e128, e64) = (history_error(&set, &r.x, &l), history_error(&s64, &x64, &l));
        assert!(
            e128.0 < e64.0 && e128.1 < e64.1,
            "rho x {factor}: all:128 {e128:?} against all:64 {e64:?}"
        );
    }
}

/// The hold of stuck contacts (docs/stuck-contacts.md) in `J`: against central differences,
/// and the products and transpose products against the dense `J`, with contact 0 held away
/// from where it is and contact 1 left to the law.
#[test]
fn the_hold_of_stuck_contacts_has_a_consistent_jacobian() {
    let set: HarmonicSet = "all:3".parse().unwrap();
    let nt = 128;
    let (cond, params) = coupled_pair(&set);
    let mut sys = UnilateralResidual::new(cond, set.clone(), nt, params).unwrap();
    let n = sys.len();
    let nco = set.n_coeffs();
    // Friction forces small and generic; normal forces pressing.
    let x: Vec<f64> = (0..n)
        .map(|i| {
            let sig = i / nco;
            if sig >= 4 {
                if i % nco == 0 { N0 } else { 0.0 }
            } else {
                0.5 * ((i as f64 * 0.91).sin())
            }
        })
        .collect();
    // Held where the mean friction forces were 40 % larger.
    let mut other = x.clone();
    for s in 0..4 {
        other[s * nco] += 0.4 * (1.0 + s as f64);
    }
    let held = sys.mean_slip(&other).unwrap();
    let mut g0 = vec![0.0; n];
    sys.residual(&x, &mut g0).unwrap();
    sys.hold_mean_slip(&held, &[true, false]).unwrap();
    let mut g = vec![0.0; n];
    sys.residual(&x, &mut g).unwrap();
    // The hold moves contact 0's h = 0 friction rows only.
    for (i, (a, b)) in g.iter().zip(&g0).enumerate() {
        let moved = (a - b).abs() > 1e-12 * (1.0 + b.abs());
        assert_eq!(
            moved,
            i % nco == 0 && i / nco < 2,
            "row {i}: {a} against {b}"
        );
    }
    let mut j = Mat::zeros(n, n);
    let worst = jacobian_against_differences(&mut sys, &x, 1e-7, &mut j);
    let scale = largest_entry(&j);
    println!("largest |J - FD| / max|J| = {worst:.2e}");
    assert!(worst < 1e-5, "{worst}");
    let mut g2 = vec![0.0; n];
    sys.residual_keep_derivatives(&x, &mut g2).unwrap();
    let worst = products_against_dense(&mut sys, &j);
    assert!(worst < 1e-11 * scale * n as f64, "products: {worst}");
}

/// A stuck contact held toward a mean slip position it cannot stick at (its mean friction
/// force would pass the bound) is held where it just sticks: solved there, its stick margin
/// is zero, the state a stepped sine's shakedown ends in (docs/stuck-contacts.md, section 3).
/// A position it can stick at is kept.
#[test]
fn a_contact_held_toward_an_unreachable_position_is_held_on_the_bound() {
    let set: HarmonicSet = "all:7".parse().unwrap();
    let nt = 128;
    // Stuck: the dynamic force K a = 0.4 mu N0 swings inside the cone.
    let a = 0.4 * MU * N0 / K;
    let (x, y) = (first((a, 0.0)), Motion::new());
    let solved = solve(&set, nt, &x, &y);
    let (cond, params) = element(&set, &x, &y);
    let mut sys = UnilateralResidual::new(cond, set.clone(), nt, params).unwrap();
    let mut g = vec![0.0; sys.len()];
    sys.residual(&solved, &mut g).unwrap();
    assert!(sys.stick_margins()[0] > 0.5, "{}", sys.stick_margins()[0]);
    let current = sys.mean_slip(&solved).unwrap();
    // The mean force may move by 0.6 mu N0 either way before the force touches the bound.
    let reachable = [current[0] + 0.3 * MU * N0 / K];
    assert_eq!(
        sys.stuck_toward(0, &current, &reachable),
        reachable.to_vec()
    );
    let far = [current[0] + 2.0 * MU * N0 / K];
    let at = sys.stuck_toward(0, &current, &far);
    assert!(at[0] > current[0] && at[0] < far[0], "{at:?}");
    sys.hold_mean_slip(&at, &[true]).unwrap();
    let mut scaled =
        ScaledContacts::new(Box::new(sys), 1.0 / (MU * N0).powi(2), Policy::unilateral());
    let opts = NewtonOptions {
        tol_residual: 1e-11,
        max_iterations: 200,
        ..NewtonOptions::default()
    };
    let r = newton::solve(&mut scaled, &solved, &opts);
    assert!(r.status.converged(), "{:?}", r.status);
    scaled.inner.residual(&r.x, &mut g).unwrap();
    let m = scaled.inner.stick_margins()[0];
    let held = scaled.inner.mean_slip(&r.x).unwrap();
    println!(
        "held at {:.6e} (from {:.6e}): margin {m:.3e}",
        held[0], current[0]
    );
    assert!(m.abs() < 1e-6, "margin {m}");
    assert!(
        (held[0] - at[0]).abs() < 1e-9 * (MU * N0 / K),
        "{held:?} {at:?}"
    );
}

/// Couples every contact row with the others through `G_h` (below the diagonal, and above
/// it too when `symmetric`; damped for `h > 0`), as a structure between the contacts would.
fn couple_rows(cond: &mut CondensedContacts, symmetric: bool) {
    let harmonics = cond
        .harmonic_list()
        .into_iter()
        .enumerate()
        .map(|(k, h)| {
            let mut g = cond.g(k).clone();
            for i in 0..g.nrows() {
                for j in 0..i {
                    let damp = if h > 0 { 0.02 / K } else { 0.0 };
                    let v = c64::new(0.07 / K * (i + 3 * j + h) as f64, damp);
                    g[(i, j)] += v;
                    if symmetric {
                        g[(j, i)] += v;
                    }
                }
            }
            (h, g, cond.q(k).to_vec())
        })
        .collect();
    *cond = CondensedContacts::new(cond.omega, harmonics, cond.product.clone(), symmetric);
}

#[test]
fn averaged_harmonic_jacobians_are_the_complex_part_of_the_dense_jacobians_diagonal_blocks() {
    // With every law derivative replaced by its period mean, J's block for harmonic h is
    // K_h: the part of the dense J's (h, h) block that commutes with the complex structure
    // ((cc + ss) / 2 real, (cs - sc) / 2 imaginary), whatever the derivatives do in time (the
    // Galerkin terms of their higher harmonics cancel there pointwise). A receptance that is
    // not symmetric (as for a cyclic sector) tells rows from columns; G_0 stays real.
    let set: HarmonicSet = "all:4".parse().unwrap();
    let (mut cond, params) = coupled_pair(&set);
    couple_rows(&mut cond, false);
    let mut sys = UnilateralResidual::new(cond, set.clone(), 64, params).unwrap();
    let n = sys.len();
    let nco = set.n_coeffs();
    let m = n / nco;
    // A state with stick, slip and lift-off in the period (as in the products test).
    let x: Vec<f64> = (0..n).map(|i| 20.0 * ((i as f64 * 0.77).sin())).collect();
    let mut g = vec![0.0; n];
    let mut j = Mat::zeros(n, n);
    sys.residual_and_jacobian(&x, &mut g, j.as_mut()).unwrap();
    sys.residual_keep_derivatives(&x, &mut g).unwrap();
    let ks = sys.averaged_harmonic_jacobians();
    let scale = largest_entry(&j);
    let mut worst = 0.0f64;
    for (k, &h) in ks.iter().zip(set.harmonics()) {
        let p = set.coeff_index(h).unwrap();
        for s in 0..m {
            for t in 0..m {
                let (re, im) = if h == 0 {
                    (j[(s * nco + p, t * nco + p)], 0.0)
                } else {
                    let (r, c) = (s * nco + p, t * nco + p);
                    (
                        (j[(r, c)] + j[(r + 1, c + 1)]) / 2.0,
                        (j[(r, c + 1)] - j[(r + 1, c)]) / 2.0,
                    )
                };
                worst = worst.max((k[(s, t)] - c64::new(re, im)).norm());
            }
        }
    }
    assert!(worst < 1e-12 * scale, "{worst:e} against |J| {scale:e}");
}

#[test]
fn the_averaged_jacobians_are_factorised_transposed_where_the_receptance_is_symmetric() {
    // With a symmetric G_h the preconditioner forms K_h^T from columns of G_h (contiguous)
    // and solves transposed: K_h^T must be the transpose of the K_h checked above against
    // the dense Jacobian, entry for entry; with a G_h that is not symmetric it gets K_h.
    let set: HarmonicSet = "all:4".parse().unwrap();
    let (mut cond, params) = coupled_pair(&set);
    couple_rows(&mut cond, true);
    let mut sys = UnilateralResidual::new(cond.clone(), set.clone(), 64, params.clone()).unwrap();
    let n = sys.len();
    let x: Vec<f64> = (0..n).map(|i| 20.0 * ((i as f64 * 0.77).sin())).collect();
    let mut g = vec![0.0; n];
    sys.residual_keep_derivatives(&x, &mut g).unwrap();
    let ks = sys.averaged_harmonic_jacobians();
    let (kts, transposed) = ContactSystem::averaged_harmonic_jacobians_to_factor(&sys).unwrap();
    assert!(transposed);
    let mut worst = 0.0f64;
    let mut scale = 0.0f64;
    for (k, kt) in ks.iter().zip(&kts) {
        for s in 0..k.nrows() {
            for t in 0..k.ncols() {
                worst = worst.max((kt[(t, s)] - k[(s, t)]).norm());
                scale = scale.max(k[(s, t)].norm());
            }
        }
    }
    assert!(worst <= 1e-14 * scale, "{worst:e} against {scale:e}");
    cond.symmetric = false;
    let mut sys = UnilateralResidual::new(cond, set, 64, params).unwrap();
    sys.residual_keep_derivatives(&x, &mut g).unwrap();
    let (k2, transposed) = ContactSystem::averaged_harmonic_jacobians_to_factor(&sys).unwrap();
    assert!(!transposed);
    assert_eq!(k2.len(), ks.len());
    for (a, b) in k2.iter().zip(&ks) {
        assert!((a - b).norm_l2() <= 1e-14 * scale * a.nrows() as f64);
    }
}

/// A condensation for products only (`CondensedContacts::for_products`: the `G_h` left to be
/// formed on first use, the residual through the modal products) solves the same equations
/// as the one with every `G_h` formed: on the generated FE sector (2187 DOFs, 20 3-D
/// contacts, 40 modes) at an arbitrary force state, the residual and the Jacobian are the
/// same to the bit, each `G_h` formed late is the one formed at once, and the diagonals a
/// fresh condensation for products reads are that `G_h`'s.
#[test]
fn a_condensation_for_products_solves_the_same_equations() {
    use ewr_model::examples::{Sector, sector};
    use ewr_solve::setup::{SolveOptions, resolve};
    let model = sector(&Sector {
        contacts: 20,
        contact_3d: true,
        ..Sector::default()
    });
    let options = SolveOptions {
        harmonics: "all:3".into(),
        receptance: "modal:40".into(),
        ..SolveOptions::default()
    };
    let setup = resolve(model, &options).unwrap();
    let rec = setup.receptance().unwrap();
    let set: HarmonicSet = "all:3".parse().unwrap();
    let at = rec.prepare(3800.0, set.harmonics()).unwrap();
    let eager = CondensedContacts::from_receptance(&at, &set).unwrap();
    let lazy = CondensedContacts::for_products(&at, &set).unwrap();
    let params = ewr_solve::unilateral::auto_params(&setup.params(), &eager);
    let n_samples = 64;
    let mut a =
        UnilateralResidual::new(eager.clone(), set.clone(), n_samples, params.clone()).unwrap();
    let mut b = UnilateralResidual::new(lazy.clone(), set.clone(), n_samples, params).unwrap();
    let n = a.len();
    // Forces of the preload's size with every harmonic present: contacts stick, slip and
    // open over the period.
    let x: Vec<f64> = (0..n)
        .map(|i| 40.0 * ((i as f64 * 0.7).sin() + 0.3 * (i as f64 * 1.3).cos()))
        .collect();
    let (mut ga, mut gb) = (vec![0.0; n], vec![0.0; n]);
    a.residual(&x, &mut ga).unwrap();
    b.residual(&x, &mut gb).unwrap();
    assert_eq!(ga, gb);
    let (mut ja, mut jb) = (Mat::<f64>::zeros(n, n), Mat::<f64>::zeros(n, n));
    a.residual_and_jacobian(&x, &mut ga, ja.as_mut()).unwrap();
    b.residual_and_jacobian(&x, &mut gb, jb.as_mut()).unwrap();
    assert_eq!(ga, gb);
    assert!(ja == jb, "the Jacobians differ");
    for (j, h) in eager.harmonic_list().into_iter().enumerate() {
        assert!(eager.g(j) == lazy.g(j), "G_{h} differs");
        let fresh = CondensedContacts::for_products(&at, &set).unwrap();
        for i in 0..eager.g(j).nrows() {
            let (d, e) = (fresh.g_diagonal(j, i), eager.g(j)[(i, i)]);
            assert!(
                (d - e).norm() <= 1e-12 * e.norm(),
                "G_{h}[{i}, {i}]: {d} against {e}"
            );
        }
    }
}
