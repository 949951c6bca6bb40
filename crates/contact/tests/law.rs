//! Tests of the friction laws on sampled histories (`ewr_contact::law`).
//!
//! Most tests put many independent points into the samples of one contact: the law is
//! pointwise in time, so a contact with `n` samples is `n` independent evaluations.

// Index loops mirror the component formulas (Psi_m, dPsi_m/dr_n) being checked.
#![allow(clippy::needless_range_loop)]

use ewr_contact::law::{
    Bound, FrictionLaw, LawError, LawInput, LawOutput, PARALLEL_THRESHOLD, evaluate,
    evaluate_residual, mat_index, vec_index,
};

/// splitmix64: deterministic, dependency-free random numbers for the tests.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.uniform()
    }
    fn log_range(&mut self, a: f64, b: f64) -> f64 {
        (a.ln() + (b.ln() - a.ln()) * self.uniform()).exp()
    }
    /// A random unit vector of dimension `d` (a random sign in 1-D).
    fn unit(&mut self, d: usize) -> Vec<f64> {
        if d == 1 {
            vec![if self.uniform() < 0.5 { -1.0 } else { 1.0 }]
        } else {
            let t = self.range(0.0, std::f64::consts::TAU);
            vec![t.cos(), t.sin()]
        }
    }
}

const ALL_LAWS: [FrictionLaw; 5] = [
    FrictionLaw::Exact,
    FrictionLaw::Projection,
    FrictionLaw::Tanh { alpha: 3.0 },
    FrictionLaw::PiecewiseLinear { delta: 0.5 },
    FrictionLaw::MaxEps { eps: 0.1 },
];

/// Independent points stored as the samples of one contact (`x[k][j]` in the layout).
#[derive(Clone, Default)]
struct Points {
    d: usize,
    r: Vec<Vec<f64>>,
    v: Vec<Vec<f64>>,
    mu: Vec<f64>,
}

impl Points {
    fn new(d: usize) -> Self {
        Points {
            d,
            r: vec![Vec::new(); d],
            v: vec![Vec::new(); d],
            mu: Vec::new(),
        }
    }
    fn push(&mut self, r: &[f64], v: &[f64], mu: f64) {
        for k in 0..self.d {
            self.r[k].push(r[k]);
            self.v[k].push(v[k]);
        }
        self.mu.push(mu);
    }
    fn len(&self) -> usize {
        self.mu.len()
    }
    fn r_at(&self, j: usize) -> Vec<f64> {
        (0..self.d).map(|k| self.r[k][j]).collect()
    }
    fn v_at(&self, j: usize) -> Vec<f64> {
        (0..self.d).map(|k| self.v[k][j]).collect()
    }
}

/// Result of evaluating [`Points`]: `psi[k][j]`, `dr[m][n][j]`, `dv[m][n][j]`.
struct Eval {
    psi: Vec<Vec<f64>>,
    dr: Vec<Vec<Vec<f64>>>,
    dv: Vec<Vec<Vec<f64>>>,
}

fn eval_points(law: FrictionLaw, p: &Points, rho: f64) -> Eval {
    let (d, n) = (p.d, p.len());
    let r: Vec<f64> = p.r.concat();
    let v: Vec<f64> = p.v.concat();
    let mut psi = vec![0.0; d * n];
    let mut d_r = vec![0.0; d * d * n];
    let mut d_v = vec![0.0; d * d * n];
    let input = LawInput {
        dim: d,
        n_samples: n,
        r: &r,
        v: &v,
        mu_n: Bound::Sampled(&p.mu),
        rho: &[rho],
    };
    let mut out = LawOutput {
        psi: &mut psi,
        d_r: &mut d_r,
        d_v: &mut d_v,
    };
    evaluate(law, &input, &mut out).expect("evaluation");
    let mut psi_only = vec![0.0; d * n];
    evaluate_residual(law, &input, &mut psi_only).expect("residual");
    assert_eq!(psi_only, psi, "residual-only and full evaluation differ");
    let row = |x: &[f64], i: usize| x[i * n..(i + 1) * n].to_vec();
    Eval {
        psi: (0..d).map(|k| row(&psi, k)).collect(),
        dr: (0..d)
            .map(|m| (0..d).map(|q| row(&d_r, m * d + q)).collect())
            .collect(),
        dv: (0..d)
            .map(|m| (0..d).map(|q| row(&d_v, m * d + q)).collect())
            .collect(),
    }
}

fn norm(x: &[f64]) -> f64 {
    x.iter().map(|a| a * a).sum::<f64>().sqrt()
}

fn psi_norm(e: &Eval, j: usize) -> f64 {
    norm(&e.psi.iter().map(|row| row[j]).collect::<Vec<_>>())
}

/// The natural magnitude of `Psi` at a point: force^2 for the exact law, force for the
/// projection law.
fn scale(law: FrictionLaw, r: &[f64], v: &[f64], mu: f64, rho: f64) -> f64 {
    let f = norm(r) + rho * norm(v) + mu;
    match law {
        FrictionLaw::Exact | FrictionLaw::MaxEps { .. } => mu.max(1e-300) * f,
        _ => f,
    }
}

// ---------------------------------------------------------------- zero set = Coulomb

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Stick,
    Slip,
    Off,
}

/// Random points on the stick set, on the slip set and off Coulomb's graph.
fn coulomb_points(rng: &mut Rng, d: usize, n_each: usize) -> (Points, Vec<Kind>) {
    let mut p = Points::new(d);
    let mut kinds = Vec::new();
    let zero = vec![0.0; d];
    for i in 0..n_each {
        let mu = rng.log_range(0.1, 10.0);
        let u = rng.unit(d);
        // Stick: v = 0, |r| <= muN, with |r| = muN exactly every fourth point, and r = 0.
        let a = match i % 4 {
            0 => mu,
            1 => 0.0,
            _ => mu * rng.uniform(),
        };
        p.push(&u.iter().map(|x| a * x).collect::<Vec<_>>(), &zero, mu);
        kinds.push(Kind::Stick);

        // Slip: v != 0, r = -muN v/|v|, computed literally from v.
        let sv = rng.log_range(1e-3, 10.0);
        let v: Vec<f64> = rng.unit(d).iter().map(|x| sv * x).collect();
        let nv = norm(&v);
        p.push(&v.iter().map(|x| -mu * x / nv).collect::<Vec<_>>(), &v, mu);
        kinds.push(Kind::Slip);

        // Off the graph: (a) v = 0 and |r| > muN; (b) v != 0 and r not opposed to v;
        // (c) v != 0, r opposed but |r| < muN.
        let b = mu * rng.range(1.1, 3.0);
        p.push(&u.iter().map(|x| b * x).collect::<Vec<_>>(), &zero, mu);
        kinds.push(Kind::Off);

        let sv = rng.log_range(0.1, 10.0);
        let w = rng.unit(d);
        let v: Vec<f64> = w.iter().map(|x| sv * x).collect();
        let b = mu * rng.range(0.0, 1.0);
        let r: Vec<f64> = if d == 1 {
            vec![b * w[0]]
        } else {
            // Rotate by an angle at least 0.3 rad away from the opposite direction.
            let t = rng.range(-std::f64::consts::PI + 0.3, std::f64::consts::PI - 0.3);
            vec![
                b * (t.cos() * w[0] - t.sin() * w[1]),
                b * (t.sin() * w[0] + t.cos() * w[1]),
            ]
        };
        p.push(&r, &v, mu);
        kinds.push(Kind::Off);

        let b = mu * rng.range(0.0, 0.9);
        p.push(&w.iter().map(|x| -b * x).collect::<Vec<_>>(), &v, mu);
        kinds.push(Kind::Off);
    }
    (p, kinds)
}

#[test]
fn zero_set_is_coulomb_for_exact_and_projection() {
    let mut rng = Rng(1);
    for law in [FrictionLaw::Exact, FrictionLaw::Projection] {
        for d in [1, 2] {
            for rho in [1e-3, 1.0, 1e3] {
                let (p, kinds) = coulomb_points(&mut rng, d, 500);
                let e = eval_points(law, &p, rho);
                for (j, kind) in kinds.iter().enumerate() {
                    let (r, v) = (p.r_at(j), p.v_at(j));
                    let rel = psi_norm(&e, j) / scale(law, &r, &v, p.mu[j], rho);
                    match kind {
                        Kind::Stick | Kind::Slip => assert!(
                            rel <= 1e-12,
                            "{law} d={d} rho={rho} {kind:?} point r={r:?} v={v:?} mu={}: |Psi|/scale = {rel:e}",
                            p.mu[j]
                        ),
                        Kind::Off => assert!(
                            rel >= 1e-8,
                            "{law} d={d} rho={rho} off-graph point r={r:?} v={v:?} mu={}: |Psi|/scale = {rel:e}",
                            p.mu[j]
                        ),
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------- derivatives

/// Whether a point is at least `gap` away from the law's kinks (relative to O(1) data).
fn away_from_kinks(law: FrictionLaw, r: &[f64], v: &[f64], mu: f64, rho: f64, gap: f64) -> bool {
    let z: Vec<f64> = r.iter().zip(v).map(|(a, b)| a - rho * b).collect();
    let s = norm(&z);
    match law {
        FrictionLaw::Exact | FrictionLaw::Projection => (s - mu).abs() > gap && s > gap,
        FrictionLaw::MaxEps { .. } => s > gap,
        FrictionLaw::PiecewiseLinear { delta } => (norm(v) - delta).abs() > gap && norm(v) > gap,
        FrictionLaw::Tanh { .. } => true,
    }
}

#[test]
fn derivatives_match_central_differences() {
    let mut rng = Rng(2);
    let h = 1e-6;
    for law in ALL_LAWS {
        for d in [1, 2] {
            for rho in [0.5, 1.0, 3.0] {
                let mut p = Points::new(d);
                while p.len() < 400 {
                    // v scaled by 1/rho where rho enters, so that both sides of
                    // the kinks are sampled for every rho.
                    let vs = if law.is_single_valued() {
                        0.5
                    } else {
                        1.0 / rho
                    };
                    let r: Vec<f64> = (0..d).map(|_| rng.range(-3.0, 3.0)).collect();
                    let v: Vec<f64> = (0..d).map(|_| rng.range(-2.0, 2.0) * vs).collect();
                    let mu = rng.range(0.5, 2.0);
                    if away_from_kinks(law, &r, &v, mu, rho, 0.05) {
                        p.push(&r, &v, mu);
                    }
                }
                // Both sides of the kinks must be sampled, or the test proves little
                // (tanh has no kink).
                let zn = |j: usize| {
                    let z: Vec<f64> = (0..d).map(|k| p.r[k][j] - rho * p.v[k][j]).collect();
                    norm(&z)
                };
                let n_out = match law {
                    FrictionLaw::Tanh { .. } => None,
                    FrictionLaw::PiecewiseLinear { delta } => {
                        Some((0..p.len()).filter(|&j| norm(&p.v_at(j)) > delta).count())
                    }
                    _ => Some((0..p.len()).filter(|&j| zn(j) > p.mu[j]).count()),
                };
                if let Some(n_out) = n_out {
                    assert!(
                        n_out > p.len() / 10 && p.len() - n_out > p.len() / 10,
                        "{law} d={d} rho={rho}: {n_out} of {} points beyond the kink",
                        p.len()
                    );
                }
                let base = eval_points(law, &p, rho);
                for which in ["r", "v"] {
                    for q in 0..d {
                        let shifted = |sign: f64| {
                            let mut s = p.clone();
                            let x = if which == "r" { &mut s.r } else { &mut s.v };
                            for a in x[q].iter_mut() {
                                *a += sign * h;
                            }
                            eval_points(law, &s, rho)
                        };
                        let (plus, minus) = (shifted(1.0), shifted(-1.0));
                        for j in 0..p.len() {
                            let jac = if which == "r" { &base.dr } else { &base.dv };
                            let jscale = (0..d)
                                .flat_map(|m| (0..d).map(move |n| (m, n)))
                                .map(|(m, n)| jac[m][n][j].abs())
                                .fold(1.0, f64::max);
                            for m in 0..d {
                                let fd = (plus.psi[m][j] - minus.psi[m][j]) / (2.0 * h);
                                let an = jac[m][q][j];
                                assert!(
                                    (fd - an).abs() <= 1e-6 * jscale,
                                    "{law} d={d} rho={rho} dPsi_{m}/d{which}_{q} at r={:?} v={:?} mu={}: analytic {an}, FD {fd}",
                                    p.r_at(j),
                                    p.v_at(j),
                                    p.mu[j]
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn exact_derivatives_are_paper_eq_33() {
    // One 2-D slip point checked entry by entry against eq. 33.
    let (r, v, mu, rho) = ([1.5, -0.5], [0.25, 0.75], 1.0, 2.0);
    let mut p = Points::new(2);
    p.push(&r, &v, mu);
    let e = eval_points(FrictionLaw::Exact, &p, rho);
    let z = [r[0] - rho * v[0], r[1] - rho * v[1]];
    let s = norm(&z);
    assert!(s > mu);
    for m in 0..2 {
        let want_psi = r[m] * s.max(mu) - mu * z[m];
        assert!((e.psi[m][0] - want_psi).abs() < 1e-14);
        for n in 0..2 {
            let kd = if m == n { 1.0 } else { 0.0 };
            let want_r = r[m] * z[n] / s + (s.max(mu) - mu) * kd;
            let want_v = -rho * r[m] * z[n] / s + rho * mu * kd;
            assert!((e.dr[m][n][0] - want_r).abs() < 1e-14);
            assert!((e.dv[m][n][0] - want_v).abs() < 1e-14);
        }
    }
}

// ---------------------------------------------------------------- limits

/// Slip points with |v| in [0.01, 10] and stick points with 0 < |r| <= muN.
fn slip_and_stick(rng: &mut Rng, d: usize, n: usize) -> (Points, Points) {
    let (mut slip, mut stick) = (Points::new(d), Points::new(d));
    for _ in 0..n {
        let mu = rng.range(0.5, 2.0);
        let sv = rng.log_range(0.01, 10.0);
        let u = rng.unit(d);
        let v: Vec<f64> = u.iter().map(|x| sv * x).collect();
        slip.push(&u.iter().map(|x| -mu * x).collect::<Vec<_>>(), &v, mu);
        let a = mu * rng.range(0.01, 1.0);
        stick.push(
            &u.iter().map(|x| a * x).collect::<Vec<_>>(),
            &vec![0.0; d],
            mu,
        );
    }
    (slip, stick)
}

fn max_rel_residual(law: FrictionLaw, p: &Points) -> f64 {
    let e = eval_points(law, p, 1.0);
    (0..p.len())
        .map(|j| psi_norm(&e, j) / p.mu[j])
        .fold(0.0, f64::max)
}

#[test]
fn single_valued_laws_tend_to_coulomb_on_slip_but_never_stick() {
    let mut rng = Rng(4);
    for d in [1, 2] {
        let (slip, stick) = slip_and_stick(&mut rng, d, 300);
        let tanh: Vec<f64> = [1.0, 10.0, 100.0, 1e3, 1e4]
            .iter()
            .map(|&alpha| max_rel_residual(FrictionLaw::Tanh { alpha }, &slip))
            .collect();
        let pwl: Vec<f64> = [1.0, 0.1, 0.03, 1e-3, 1e-5]
            .iter()
            .map(|&delta| max_rel_residual(FrictionLaw::PiecewiseLinear { delta }, &slip))
            .collect();
        for seq in [&tanh, &pwl] {
            assert!(seq.windows(2).all(|w| w[1] <= w[0]), "d={d}: {seq:?}");
            assert!(
                seq[0] > 0.1,
                "d={d}: coarse regularisation should be far off: {seq:?}"
            );
        }
        assert!(tanh[3] < 1e-3 && tanh[4] < 1e-12, "d={d}: {tanh:?}");
        // Once delta < min |v| the slip points are exactly on the pwl law.
        assert!(pwl[3] < 1e-3 && pwl[4] < 1e-14, "d={d}: {pwl:?}");

        // At v = 0 both give Psi = r: the only zero is r = 0, whatever the parameter.
        for law in [
            FrictionLaw::Tanh { alpha: 1e6 },
            FrictionLaw::PiecewiseLinear { delta: 1e-6 },
        ] {
            let e = eval_points(law, &stick, 1.0);
            for j in 0..stick.len() {
                for k in 0..d {
                    assert_eq!(e.psi[k][j], stick.r[k][j], "{law} d={d}");
                }
            }
        }
    }
}

#[test]
fn max_eps_tends_to_exact() {
    let mut rng = Rng(5);
    for d in [1, 2] {
        let mut p = Points::new(d);
        for _ in 0..2000 {
            let r: Vec<f64> = (0..d).map(|_| rng.range(-3.0, 3.0)).collect();
            let v: Vec<f64> = (0..d).map(|_| rng.range(-2.0, 2.0)).collect();
            p.push(&r, &v, rng.range(0.0, 2.0));
        }
        for rho in [1e-3, 1.0, 1e3] {
            let exact = eval_points(FrictionLaw::Exact, &p, rho);
            let mut sups = Vec::new();
            for eps in [1e-2, 1e-6, 1e-10, 1e-14, 1e-20] {
                let e = eval_points(FrictionLaw::MaxEps { eps }, &p, rho);
                let mut sup: f64 = 0.0;
                for j in 0..p.len() {
                    let bound = norm(&p.r_at(j)) * eps.sqrt() / 2.0;
                    for k in 0..d {
                        let diff = (e.psi[k][j] - exact.psi[k][j]).abs();
                        // |max_eps - max| <= sqrt(eps)/2, plus rounding of Psi.
                        let tol = bound
                            + 1e-15
                                * scale(FrictionLaw::Exact, &p.r_at(j), &p.v_at(j), p.mu[j], rho);
                        assert!(diff <= tol, "d={d} rho={rho} eps={eps}: {diff} > {tol}");
                        sup = sup.max(diff);
                    }
                }
                sups.push(sup);
            }
            // Non-increasing; at tiny eps the difference can be exactly 0 (eps below the
            // rounding of (s - muN)^2).
            assert!(
                sups.windows(2).all(|w| w[1] <= w[0]),
                "d={d} rho={rho}: {sups:?}"
            );
            assert!(
                sups[0] > sups[1] && sups[1] > sups[2],
                "d={d} rho={rho}: {sups:?}"
            );
            assert!(sups[4] < 1e-8, "d={d} rho={rho}: {sups:?}");
        }
    }
}

#[test]
fn max_eps_derivatives_tend_to_exact_away_from_kinks() {
    let mut rng = Rng(6);
    for d in [1, 2] {
        let mut p = Points::new(d);
        while p.len() < 500 {
            let r: Vec<f64> = (0..d).map(|_| rng.range(-3.0, 3.0)).collect();
            let v: Vec<f64> = (0..d).map(|_| rng.range(-2.0, 2.0)).collect();
            let mu = rng.range(0.5, 2.0);
            if away_from_kinks(FrictionLaw::Exact, &r, &v, mu, 1.0, 0.05) {
                p.push(&r, &v, mu);
            }
        }
        let exact = eval_points(FrictionLaw::Exact, &p, 1.0);
        let smooth = eval_points(FrictionLaw::MaxEps { eps: 1e-16 }, &p, 1.0);
        for j in 0..p.len() {
            for m in 0..d {
                for n in 0..d {
                    assert!((exact.dr[m][n][j] - smooth.dr[m][n][j]).abs() < 1e-8);
                    assert!((exact.dv[m][n][j] - smooth.dv[m][n][j]).abs() < 1e-8);
                }
            }
        }
    }
}

// ---------------------------------------------------------------- degenerate points

#[test]
fn z_zero_is_stick_and_finite() {
    // rho a power of two so that z = r - rho (r/rho) is exactly zero.
    let (mu, rho) = (1.0, 2.0);
    for d in [1, 2] {
        let mut p = Points::new(d);
        p.push(&vec![0.0; d], &vec![0.0; d], mu);
        let r: Vec<f64> = [0.3, -0.2][..d].to_vec();
        p.push(&r, &r.iter().map(|x| x / rho).collect::<Vec<_>>(), mu);
        for law in ALL_LAWS {
            let e = eval_points(law, &p, rho);
            for j in 0..2 {
                for m in 0..d {
                    assert!(e.psi[m][j].is_finite());
                    for n in 0..d {
                        assert!(e.dr[m][n][j].is_finite() && e.dv[m][n][j].is_finite());
                    }
                }
            }
        }
        let ex = eval_points(FrictionLaw::Exact, &p, rho);
        let pr = eval_points(FrictionLaw::Projection, &p, rho);
        for m in 0..d {
            // Exact stick branch: Psi = muN rho v, dPsi/dr = 0, dPsi/dv = rho muN I.
            assert_eq!(ex.psi[m][1], mu * r[m]);
            assert_eq!(pr.psi[m][1], r[m]);
            for n in 0..d {
                let kd = if m == n { 1.0 } else { 0.0 };
                for j in 0..2 {
                    assert_eq!(ex.dr[m][n][j], 0.0);
                    assert_eq!(ex.dv[m][n][j], rho * mu * kd);
                    assert_eq!(pr.dr[m][n][j], 0.0);
                    assert_eq!(pr.dv[m][n][j], rho * kd);
                }
            }
        }
    }
}

#[test]
fn kink_at_z_norm_equal_mu_takes_stick_side() {
    // 1-D: r = 0.5, v = -0.5, rho = 1 gives z = 1 = muN exactly.
    let mut p = Points::new(1);
    p.push(&[0.5], &[-0.5], 1.0);
    let ex = eval_points(FrictionLaw::Exact, &p, 1.0);
    assert_eq!(
        (ex.psi[0][0], ex.dr[0][0][0], ex.dv[0][0][0]),
        (-0.5, 0.0, 1.0)
    );
    let pr = eval_points(FrictionLaw::Projection, &p, 1.0);
    assert_eq!(
        (pr.psi[0][0], pr.dr[0][0][0], pr.dv[0][0][0]),
        (-0.5, 0.0, 1.0)
    );
    // pwl: |v| == delta takes the linear branch, dPsi/dv = muN/delta.
    let pw = eval_points(FrictionLaw::PiecewiseLinear { delta: 0.5 }, &p, 1.0);
    assert_eq!((pw.psi[0][0], pw.dv[0][0][0]), (-0.5, 2.0));
}

#[test]
fn zero_bound_spurious_branch_exact_vs_projection() {
    // With muN = 0 eq. 2 reads Psi = r |r - rho v|, which also vanishes on r = rho v:
    // a non-zero "friction force" with zero bound. The projection law r - proj_{0}(z) = r
    // does not have that zero, which is why it exists (varying normal loads reach 0).
    let rho = 4.0;
    for d in [1, 2] {
        let mut p = Points::new(d);
        let r: Vec<f64> = [1.0, -2.0][..d].to_vec();
        p.push(&r, &r.iter().map(|x| x / rho).collect::<Vec<_>>(), 0.0);
        p.push(&r, &vec![0.7; d], 0.0);
        let ex = eval_points(FrictionLaw::Exact, &p, rho);
        let pr = eval_points(FrictionLaw::Projection, &p, rho);
        for m in 0..d {
            assert_eq!(ex.psi[m][0], 0.0, "exact law: spurious zero at r = rho v");
            assert_eq!(pr.psi[m][0], r[m], "projection law: Psi = r when muN = 0");
            assert_eq!(pr.psi[m][1], r[m]);
            for n in 0..d {
                let kd = if m == n { 1.0 } else { 0.0 };
                assert_eq!((ex.dr[m][n][0], ex.dv[m][n][0]), (0.0, 0.0));
                for j in 0..2 {
                    assert_eq!((pr.dr[m][n][j], pr.dv[m][n][j]), (kd, 0.0));
                }
            }
        }
        // Exact law off the spurious branch: Psi = r |z|.
        let z: Vec<f64> = r.iter().map(|x| x - rho * 0.7).collect();
        for m in 0..d {
            assert!((ex.psi[m][1] - r[m] * norm(&z)).abs() < 1e-14);
        }
        // Single-valued laws: Psi = r.
        for law in [
            FrictionLaw::Tanh { alpha: 5.0 },
            FrictionLaw::PiecewiseLinear { delta: 0.1 },
        ] {
            let e = eval_points(law, &p, rho);
            for m in 0..d {
                assert_eq!(e.psi[m][1], r[m]);
            }
        }
    }
}

#[test]
fn single_valued_laws_at_zero_velocity() {
    let mut p = Points::new(2);
    p.push(&[0.2, 0.1], &[0.0, 0.0], 1.5);
    let t = eval_points(FrictionLaw::Tanh { alpha: 4.0 }, &p, 1.0);
    let w = eval_points(FrictionLaw::PiecewiseLinear { delta: 0.25 }, &p, 1.0);
    for m in 0..2 {
        for n in 0..2 {
            let kd = if m == n { 1.0 } else { 0.0 };
            assert_eq!(t.dv[m][n][0], 1.5 * 4.0 * kd);
            assert_eq!(w.dv[m][n][0], 1.5 / 0.25 * kd);
            assert_eq!((t.dr[m][n][0], w.dr[m][n][0]), (kd, kd));
        }
    }
}

// ---------------------------------------------------------------- errors

/// A valid batch of `nc` contacts with `n` samples: (r, v, mu per contact, rho).
fn batch(rng: &mut Rng, d: usize, nc: usize, n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let r: Vec<f64> = (0..nc * d * n).map(|_| rng.range(-2.0, 2.0)).collect();
    // Every third velocity sample exactly zero, so that stick occurs.
    let v: Vec<f64> = (0..nc * d * n)
        .map(|i| {
            if i % 3 == 0 {
                0.0
            } else {
                rng.range(-1.0, 1.0)
            }
        })
        .collect();
    let mu: Vec<f64> = (0..nc).map(|_| rng.range(0.5, 1.5)).collect();
    let rho: Vec<f64> = (0..nc).map(|_| rng.log_range(0.1, 10.0)).collect();
    (r, v, mu, rho)
}

/// `(psi, d_r, d_v)` of a whole batch, in the library's layout.
type Outputs = (Vec<f64>, Vec<f64>, Vec<f64>);

fn run(
    law: FrictionLaw,
    d: usize,
    n: usize,
    r: &[f64],
    v: &[f64],
    mu: Bound<'_>,
    rho: &[f64],
) -> Result<Outputs, LawError> {
    let nc = rho.len();
    let mut psi = vec![0.0; nc * d * n];
    let mut d_r = vec![0.0; nc * d * d * n];
    let mut d_v = vec![0.0; nc * d * d * n];
    let input = LawInput {
        dim: d,
        n_samples: n,
        r,
        v,
        mu_n: mu,
        rho,
    };
    let full = evaluate(
        law,
        &input,
        &mut LawOutput {
            psi: &mut psi,
            d_r: &mut d_r,
            d_v: &mut d_v,
        },
    );
    let mut psi2 = vec![0.0; nc * d * n];
    let res = evaluate_residual(law, &input, &mut psi2);
    // Debug, not ==, so that errors carrying a NaN value compare equal.
    assert_eq!(
        format!("{:?}", full.as_ref().err()),
        format!("{:?}", res.as_ref().err()),
        "both entry points agree on errors"
    );
    full?;
    assert_eq!(psi, psi2);
    Ok((psi, d_r, d_v))
}

#[test]
fn non_finite_input_names_contact_and_sample() {
    let mut rng = Rng(7);
    // Serial (3 contacts) and parallel (24 x 4096) batches; 2-D.
    for (nc, n) in [(3, 600), (24, 4096)] {
        let d = 2;
        let (r, v, mu, rho) = batch(&mut rng, d, nc, n);
        for law in ALL_LAWS {
            let mut vv = v.clone();
            vv[vec_index(d, n, 1, 1, 300)] = f64::NAN;
            let mut rr = r.clone();
            rr[vec_index(d, n, 2, 0, 5)] = f64::NAN;
            let e = run(law, d, n, &rr, &vv, Bound::PerContact(&mu), &rho).unwrap_err();
            assert_eq!(
                e,
                LawError::NonFinite {
                    contact: 1,
                    sample: 300
                },
                "{law}"
            );
            assert!(e.to_string().contains("contact 1, sample 300"), "{e}");

            let mut rr = r.clone();
            rr[vec_index(d, n, nc - 1, 0, n - 1)] = f64::INFINITY;
            let e = run(law, d, n, &rr, &v, Bound::PerContact(&mu), &rho).unwrap_err();
            assert_eq!(
                e,
                LawError::NonFinite {
                    contact: nc - 1,
                    sample: n - 1
                },
                "{law}"
            );
        }
    }
    // A NaN velocity is reported even where Psi does not depend on v (projection, muN = 0).
    let e = run(
        FrictionLaw::Projection,
        1,
        4,
        &[1.0, 2.0, 3.0, 4.0],
        &[0.0, 0.0, f64::NAN, 0.0],
        Bound::PerContact(&[0.0]),
        &[1.0],
    )
    .unwrap_err();
    assert_eq!(
        e,
        LawError::NonFinite {
            contact: 0,
            sample: 2
        }
    );
    // Overflow of a finite input is reported, not returned as inf.
    let e = run(
        FrictionLaw::Exact,
        1,
        2,
        &[1.0, 1e200],
        &[0.0, 0.0],
        Bound::PerContact(&[1.0]),
        &[1.0],
    )
    .unwrap_err();
    assert_eq!(
        e,
        LawError::NonFinite {
            contact: 0,
            sample: 1
        }
    );
}

#[test]
fn invalid_bound_rho_and_parameters_are_rejected() {
    let mut rng = Rng(8);
    let (d, nc, n) = (2, 3, 8);
    let (r, v, mu, rho) = batch(&mut rng, d, nc, n);
    let law = FrictionLaw::Exact;

    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let mut m = mu.clone();
        m[2] = bad;
        let e = run(law, d, n, &r, &v, Bound::PerContact(&m), &rho).unwrap_err();
        assert!(
            matches!(
                e,
                LawError::InvalidBound {
                    contact: 2,
                    sample: None,
                    ..
                }
            ),
            "{e:?}"
        );
        let mut ms: Vec<f64> = (0..nc * n).map(|i| mu[i / n]).collect();
        ms[n + 5] = bad;
        let e = run(law, d, n, &r, &v, Bound::Sampled(&ms), &rho).unwrap_err();
        assert!(
            matches!(
                e,
                LawError::InvalidBound {
                    contact: 1,
                    sample: Some(5),
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("contact 1, sample 5"), "{e}");
    }
    for bad in [0.0, -2.0, f64::NAN, f64::INFINITY] {
        let mut rh = rho.clone();
        rh[1] = bad;
        let e = run(law, d, n, &r, &v, Bound::PerContact(&mu), &rh).unwrap_err();
        assert!(
            matches!(e, LawError::InvalidRho { contact: 1, .. }),
            "{e:?}"
        );
    }
    for bad_law in [
        FrictionLaw::Tanh { alpha: -1.0 },
        FrictionLaw::Tanh { alpha: f64::NAN },
        FrictionLaw::PiecewiseLinear { delta: 0.0 },
        FrictionLaw::MaxEps { eps: f64::INFINITY },
    ] {
        let e = run(bad_law, d, n, &r, &v, Bound::PerContact(&mu), &rho).unwrap_err();
        assert!(matches!(e, LawError::InvalidParameter { .. }), "{e:?}");
        assert!(bad_law.validate().is_err());
    }
    for dim in [0, 3] {
        let e = run(law, dim, n, &r, &v, Bound::PerContact(&mu), &rho).unwrap_err();
        assert_eq!(e, LawError::InvalidDim { dim });
    }
}

#[test]
fn mismatched_lengths_are_rejected() {
    let mut rng = Rng(9);
    let (d, nc, n) = (2, 3, 8);
    let (r, v, mu, rho) = batch(&mut rng, d, nc, n);
    let law = FrictionLaw::Projection;
    let len_err = |e: LawError| match e {
        LawError::Length { what, .. } => what,
        other => panic!("expected a length error, got {other:?}"),
    };
    let e = run(law, d, n, &r[1..], &v, Bound::PerContact(&mu), &rho).unwrap_err();
    assert_eq!(len_err(e), "r");
    let e = run(
        law,
        d,
        n,
        &r,
        &v[..v.len() - 2],
        Bound::PerContact(&mu),
        &rho,
    )
    .unwrap_err();
    assert_eq!(len_err(e), "v");
    let e = run(law, d, n, &r, &v, Bound::PerContact(&mu[1..]), &rho).unwrap_err();
    assert_eq!(len_err(e), "mu_n");
    let e = run(law, d, n, &r, &v, Bound::Sampled(&mu), &rho).unwrap_err();
    assert_eq!(len_err(e), "mu_n");
    // One contact fewer in rho: r and v no longer match.
    let e = run(law, d, n, &r, &v, Bound::PerContact(&mu), &rho[1..]).unwrap_err();
    assert_eq!(len_err(e), "r");

    let input = LawInput {
        dim: d,
        n_samples: n,
        r: &r,
        v: &v,
        mu_n: Bound::PerContact(&mu),
        rho: &rho,
    };
    let mut psi = vec![0.0; nc * d * n];
    let mut short = vec![0.0; nc * d * n + 1];
    let mut d_v = vec![0.0; nc * d * d * n];
    let e = evaluate_residual(law, &input, &mut short).unwrap_err();
    assert_eq!(len_err(e), "psi");
    let mut out = LawOutput {
        psi: &mut psi,
        d_r: &mut short,
        d_v: &mut d_v,
    };
    let e = evaluate(law, &input, &mut out).unwrap_err();
    assert_eq!(len_err(e.clone()), "d_r");
    assert!(e.to_string().contains("d_r"));

    // Empty batches are fine.
    let ok = LawInput {
        dim: 2,
        n_samples: 0,
        r: &[],
        v: &[],
        mu_n: Bound::PerContact(&mu),
        rho: &rho,
    };
    assert!(evaluate_residual(law, &ok, &mut []).is_ok());
}

// ---------------------------------------------------------------- bounds and batches

#[test]
fn sampled_bound_equals_per_contact_bound() {
    let mut rng = Rng(10);
    for d in [1, 2] {
        let (nc, n) = (5, 300);
        let (r, v, mu, rho) = batch(&mut rng, d, nc, n);
        let sampled: Vec<f64> = (0..nc * n).map(|i| mu[i / n]).collect();
        for law in ALL_LAWS {
            let a = run(law, d, n, &r, &v, Bound::PerContact(&mu), &rho).unwrap();
            let b = run(law, d, n, &r, &v, Bound::Sampled(&sampled), &rho).unwrap();
            assert!(a == b, "{law} d={d}");
        }
    }
}

#[test]
fn time_varying_bound_is_applied_per_sample() {
    // A bound that varies in time (reaching 0) must act as the per-contact bound of a
    // one-sample batch at each (contact, sample).
    let mut rng = Rng(11);
    for d in [1, 2] {
        let (nc, n) = (3, 50);
        let (r, v, _, rho) = batch(&mut rng, d, nc, n);
        let mu: Vec<f64> = (0..nc * n)
            .map(|i| if i % 7 == 0 { 0.0 } else { rng.range(0.0, 1.5) })
            .collect();
        for law in ALL_LAWS {
            let (psi, d_r, d_v) = run(law, d, n, &r, &v, Bound::Sampled(&mu), &rho).unwrap();
            for c in 0..nc {
                for j in 0..n {
                    let rj: Vec<f64> = (0..d).map(|k| r[vec_index(d, n, c, k, j)]).collect();
                    let vj: Vec<f64> = (0..d).map(|k| v[vec_index(d, n, c, k, j)]).collect();
                    let (p1, a1, b1) = run(
                        law,
                        d,
                        1,
                        &rj,
                        &vj,
                        Bound::PerContact(&[mu[c * n + j]]),
                        &[rho[c]],
                    )
                    .unwrap();
                    for k in 0..d {
                        assert_eq!(psi[vec_index(d, n, c, k, j)], p1[k]);
                        for l in 0..d {
                            assert_eq!(d_r[mat_index(d, n, c, k, l, j)], a1[k * d + l]);
                            assert_eq!(d_v[mat_index(d, n, c, k, l, j)], b1[k * d + l]);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn parallel_batch_equals_contact_by_contact_bitwise() {
    let mut rng = Rng(12);
    for (d, nc, n) in [(2, 24, 4096), (1, 40, 2048)] {
        assert!(
            nc * n >= PARALLEL_THRESHOLD,
            "the batch must take the parallel path"
        );
        let (r, v, mu, rho) = batch(&mut rng, d, nc, n);
        for law in ALL_LAWS {
            let whole = run(law, d, n, &r, &v, Bound::PerContact(&mu), &rho).unwrap();
            let (vl, ml) = (d * n, d * d * n);
            for c in 0..nc {
                let one = run(
                    law,
                    d,
                    n,
                    &r[c * vl..(c + 1) * vl],
                    &v[c * vl..(c + 1) * vl],
                    Bound::PerContact(&mu[c..c + 1]),
                    &rho[c..c + 1],
                )
                .unwrap();
                let same =
                    |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(
                    same(&whole.0[c * vl..(c + 1) * vl], &one.0),
                    "{law} psi c={c}"
                );
                assert!(
                    same(&whole.1[c * ml..(c + 1) * ml], &one.1),
                    "{law} d_r c={c}"
                );
                assert!(
                    same(&whole.2[c * ml..(c + 1) * ml], &one.2),
                    "{law} d_v c={c}"
                );
            }
            // Same bits for any number of threads.
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let other = pool
                    .install(|| run(law, d, n, &r, &v, Bound::PerContact(&mu), &rho))
                    .unwrap();
                assert!(whole == other, "{law} with {threads} threads");
            }
        }
    }
}

// ---------------------------------------------------------------- parsing

#[test]
fn parse_and_display_round_trip() {
    let laws = [
        FrictionLaw::Exact,
        FrictionLaw::Projection,
        FrictionLaw::Tanh { alpha: 1000.0 },
        FrictionLaw::Tanh { alpha: 0.1 },
        FrictionLaw::PiecewiseLinear { delta: 1e-12 },
        FrictionLaw::MaxEps { eps: 3.0 },
        FrictionLaw::MaxEps { eps: 1.5e300 },
    ];
    for law in laws {
        let s = law.to_string();
        assert_eq!(s.parse::<FrictionLaw>().unwrap(), law, "{s}");
    }
    assert_eq!(FrictionLaw::default(), FrictionLaw::Exact);
    assert_eq!("exact".parse(), Ok(FrictionLaw::Exact));
    assert_eq!(" Projection ".parse(), Ok(FrictionLaw::Projection));
    assert_eq!("TANH:2".parse(), Ok(FrictionLaw::Tanh { alpha: 2.0 }));
    assert_eq!(
        "pwl:1e-3".parse(),
        Ok(FrictionLaw::PiecewiseLinear { delta: 1e-3 })
    );
    assert_eq!("maxeps:0.1".parse(), Ok(FrictionLaw::MaxEps { eps: 0.1 }));
    assert!(FrictionLaw::Tanh { alpha: 1.0 }.is_single_valued());
    assert!(!FrictionLaw::MaxEps { eps: 1.0 }.is_single_valued());
}

#[test]
fn parse_errors_are_clear() {
    for (input, needle) in [
        ("", "empty"),
        ("coulomb", "unknown law name"),
        ("tanh", "needs a parameter"),
        ("tanh:", "not a number"),
        ("tanh:abc", "not a number"),
        ("tanh:-1", "finite and > 0"),
        ("pwl:0", "finite and > 0"),
        ("pwl:inf", "finite and > 0"),
        ("maxeps:NaN", "finite and > 0"),
        ("exact:1", "takes no parameter"),
    ] {
        let e = input.parse::<FrictionLaw>().unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(needle), "`{input}`: {msg}");
        assert!(msg.contains(&format!("`{input}`")), "`{input}`: {msg}");
        assert!(
            msg.contains("tanh:ALPHA"),
            "lists the accepted forms: {msg}"
        );
    }
}
