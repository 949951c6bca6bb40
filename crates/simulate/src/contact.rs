//! The contact problem of one time step: exact set-valued Coulomb friction.
//!
//! After the linear part of a step is solved, the contact velocities are affine in the
//! friction forces, `V = V_free + D r`, with `D = h W A^-1 W^T` the Delassus operator
//! (symmetric positive definite when the contact directions are independent). With equal
//! static and dynamic bounds, Coulomb's law at the end of the step is exactly the convex
//! problem `min 1/2 r^T D r + V_free^T r` subject to `|r_c| <= muN_c` for every contact
//! (its optimality conditions say that `V_c` is in the normal cone of the disk at `r_c`:
//! stick inside the disk, slip opposite to `r_c` on its boundary). One contact is solved in
//! closed form or by a 1-D root find ([`solve_local`]); several coupled contacts by
//! projected (block) Gauss-Seidel, which is exact block-coordinate descent on that strictly
//! convex problem and therefore converges.
//!
//! Distinct bounds `f_s >= f_d` (seed 002) keep the same local rule: a contact sticks when
//! the force that keeps it stuck has a norm `<= f_s`, and otherwise slides with `|r| = f_d`.
//! That is no longer a convex problem, so the Gauss-Seidel sweeps over several contacts may
//! fail to settle; the iteration cap then reports it.
//!
//! 3-D contacts (a normal direction, [`ContactSolver::solve_normal`]) add a unilateral row per
//! contact after the tangential ones. A contact's local problem is solved normal first, then
//! tangential with the bound `mu lambda` of that normal force, inside the same Gauss-Seidel
//! sweeps, until neither changes: the normal force is the implicit, position-level Signorini
//! solution `lambda = max(0, -(g + h V_N)/c)` in closed form (see [`normal_force`]).

use crate::linear::Csr;

/// Friction force and stick flag of one contact, from [`solve_local`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalSolution {
    /// Friction force (only the first `dim` entries are used).
    pub r: [f64; 2],
    /// True when the contact sticks (zero relative velocity at the end of the step).
    pub stick: bool,
}

/// State of a contact over one step (3-D contacts report all three; contacts without a
/// normal direction are never separated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ContactState {
    /// No normal force, hence no friction force.
    #[default]
    Separated = 0,
    /// In contact and sliding, `|r| = mu lambda`.
    Slip = 1,
    /// In contact and stuck (zero relative tangential velocity at the end of the step).
    Stick = 2,
}

/// Normal force of one contact over a step, given its normal velocity without its own normal
/// force `b` (`V_N = b + d lambda`, `d > 0` the normal Delassus entry).
///
/// The gap at the end of the step is `g + h V_N` (backward Euler on the positions) plus the
/// series compliance `c lambda` (`c = 1/k_n`, 0 for a rigid contact), and Signorini's law
/// `lambda >= 0, g_end >= 0, lambda g_end = 0` holds at the end of the step, so
/// `lambda = max(0, -(g + h b) / (h d + c))`. For a rigid contact the gap is first clipped at
/// 0: a contact that is already closed obeys the velocity-level law of Moreau
/// (`V_N >= 0`, zero restitution) and a penetration left by the initial state is kept, not
/// pushed out in one step; a contact that closes within the step closes exactly instead of
/// stopping short at the gap it had (which would make it chatter open and shut).
pub fn normal_force(g: f64, b: f64, d: f64, h: f64, compliance: f64) -> f64 {
    let g = if compliance > 0.0 { g } else { g.max(0.0) };
    let lambda = -(g + h * b) / (h * d + compliance);
    if lambda > 0.0 { lambda } else { 0.0 }
}

/// Solves the contact problem of one contact with its own Delassus block.
///
/// `d` is the `dim x dim` block (row-major; for `dim = 1` only `d[0]`), `b` the contact
/// velocity with this contact's force removed (`V = b + D r`), `f_s >= f_d >= 0` the static
/// and dynamic bounds. Stick if the sticking force `-D^-1 b` has a norm `<= f_s`; otherwise
/// slide: `r = -f_d V/|V|`, which for `dim = 2` is `r(mu) = -(D + mu I)^-1 b` with the
/// unique `mu > 0` such that `|r(mu)| = f_d` (isotropic `D`: radial projection; anisotropic
/// `D`: a 1-D Newton root find on `1/|r(mu)| - 1/f_d`, concave in `mu`, so Newton from
/// `mu = 0` converges monotonically).
///
/// # Panics
/// If `dim` is not 1 or 2 (callers check the model first).
pub fn solve_local(dim: usize, d: &[f64; 4], b: &[f64], f_s: f64, f_d: f64) -> LocalSolution {
    match dim {
        1 => {
            let r_stick = -b[0] / d[0];
            if r_stick.abs() <= f_s {
                LocalSolution {
                    r: [r_stick, 0.0],
                    stick: true,
                }
            } else {
                LocalSolution {
                    r: [f_d * r_stick.signum(), 0.0],
                    stick: false,
                }
            }
        }
        2 => solve_local_2d(d, [b[0], b[1]], f_s, f_d),
        _ => panic!("contact dimension must be 1 or 2, got {dim}"),
    }
}

fn solve_local_2d(d: &[f64; 4], b: [f64; 2], f_s: f64, f_d: f64) -> LocalSolution {
    let (d00, d01, d11) = (d[0], 0.5 * (d[1] + d[2]), d[3]);
    let det = d00 * d11 - d01 * d01;
    let r_stick = [
        -(d11 * b[0] - d01 * b[1]) / det,
        -(d00 * b[1] - d01 * b[0]) / det,
    ];
    let norm_stick = r_stick[0].hypot(r_stick[1]);
    if norm_stick <= f_s {
        return LocalSolution {
            r: r_stick,
            stick: true,
        };
    }
    if f_d == 0.0 {
        return LocalSolution {
            r: [0.0, 0.0],
            stick: false,
        };
    }
    let trace = d00 + d11;
    if d01.abs() <= 1e-14 * trace && (d00 - d11).abs() <= 1e-14 * trace {
        // Isotropic block: the slip force is the radial projection of the sticking force.
        let s = f_d / norm_stick;
        return LocalSolution {
            r: [s * r_stick[0], s * r_stick[1]],
            stick: false,
        };
    }
    // Eigen-decomposition of the symmetric 2x2 block: e2 (angle theta) belongs to the larger
    // eigenvalue, e1 is orthogonal to it.
    let mean = 0.5 * trace;
    let rad = (0.5 * (d00 - d11)).hypot(d01);
    let (l1, l2) = (mean - rad, mean + rad);
    let theta = 0.5 * (2.0 * d01).atan2(d00 - d11);
    let (c, s) = (theta.cos(), theta.sin());
    let e1 = [-s, c];
    let e2 = [c, s];
    let beta1 = e1[0] * b[0] + e1[1] * b[1];
    let beta2 = e2[0] * b[0] + e2[1] * b[1];
    // phi(mu) = 1/|r(mu)| - 1/f_d is concave and increasing, negative at mu = 0 (the stick
    // force exceeds f_s >= f_d): Newton from 0 climbs monotonically to the root.
    let mut mu = 0.0f64;
    for _ in 0..100 {
        let (a1, a2) = (beta1 / (l1 + mu), beta2 / (l2 + mu));
        let g = a1.hypot(a2);
        let phi = 1.0 / g - 1.0 / f_d;
        if phi.abs() * f_d <= 4.0 * f64::EPSILON {
            break;
        }
        let dphi = (a1 * a1 / (l1 + mu) + a2 * a2 / (l2 + mu)) / (g * g * g);
        let next = mu - phi / dphi;
        if next.is_nan() || next <= mu {
            // Rounding: the root is reached to machine precision.
            break;
        }
        mu = next;
    }
    let (a1, a2) = (-beta1 / (l1 + mu), -beta2 / (l2 + mu));
    let mut r = [a1 * e1[0] + a2 * e2[0], a1 * e1[1] + a2 * e2[1]];
    // Put the force exactly on the circle; the root find leaves a relative error ~1e-16.
    let scale = f_d / r[0].hypot(r[1]);
    r[0] *= scale;
    r[1] *= scale;
    LocalSolution { r, stick: false }
}

/// Statistics of the contact solver over a run, for the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct ContactStats {
    /// Largest number of Gauss-Seidel sweeps in one step (1 for a single contact).
    pub max_sweeps: usize,
    /// Steps in which the sweeps hit the iteration cap without meeting the tolerance.
    pub unconverged_steps: usize,
    /// Largest final force change of an unconverged step, relative to the static bound.
    pub max_unconverged_change: f64,
}

/// Entries of the Delassus operator below this fraction of `sqrt(D_aa D_bb)` are dropped:
/// far-apart contacts interact through `A^-1`, whose entries decay quickly away from the
/// diagonal when `h` is small, so the operator is numerically sparse. The error this makes
/// in a contact velocity is below `m * DROP` of its own scale, i.e. rounding.
pub(crate) const DROP: f64 = 1e-15;

/// The coupled contact problem of a step: Delassus operator, bounds and iteration control.
#[derive(Clone, Debug)]
pub(crate) struct ContactSolver {
    pub dim: usize,
    pub nc: usize,
    /// Delassus operator `h W A^-1 W^T` (`m x m`, `m = dim * nc`, symmetric), by rows,
    /// without its negligible entries (see [`DROP`]).
    d: Csr,
    /// Diagonal blocks of `d`, one per contact.
    pub blocks: Vec<[f64; 4]>,
    pub f_s: Vec<f64>,
    pub f_d: Vec<f64>,
    pub tol: f64,
    pub max_sweeps: usize,
    /// The normal rows of 3-D contacts (rows `dim * nc + c` of `d`), if any.
    pub normal: Option<NormalPart>,
}

/// What the contact solver needs to know about the normal rows of 3-D contacts.
#[derive(Clone, Debug)]
pub(crate) struct NormalPart {
    /// Friction coefficient per contact.
    pub mu: Vec<f64>,
    /// Per contact, a normal force held constant (no normal direction), `None`: unilateral.
    pub load: Vec<Option<f64>>,
    /// Series compliance `1/k_n` per contact, 0 for a rigid contact.
    pub compliance: Vec<f64>,
    /// `f_s / f_d`.
    pub static_factor: f64,
    /// Time step (the gap at the end of the step is `g + h V_N`).
    pub h: f64,
    /// Normal Delassus entry `D_NN` per contact.
    pub dnn: Vec<f64>,
    /// Coupling `D_TN` of each contact's tangential rows with its own normal row.
    pub dtn: Vec<[f64; 2]>,
}

/// The normal data given to [`ContactSolver::new`]: friction coefficients, compliances
/// (0 = rigid), `f_s / f_d` and the time step.
pub(crate) struct NormalSpec {
    pub mu: Vec<f64>,
    /// Per contact, a normal force held constant (no normal direction), `None`: unilateral.
    pub load: Vec<Option<f64>>,
    pub compliance: Vec<f64>,
    pub static_factor: f64,
    pub h: f64,
}

impl ContactSolver {
    /// From the dense Delassus operator `d` (`rows x rows` row-major, symmetric; `rows = dim *
    /// nc` tangential rows, then `nc` normal rows when `normal` is given).
    pub fn new(
        dim: usize,
        d: Vec<f64>,
        f_s: Vec<f64>,
        f_d: Vec<f64>,
        tol: f64,
        max_sweeps: usize,
        normal: Option<NormalSpec>,
    ) -> Self {
        let nc = f_s.len();
        let m = dim * nc;
        let rows = m + if normal.is_some() { nc } else { 0 };
        // The contact a row belongs to.
        let owner = |a: usize| if a < m { a / dim } else { a - m };
        let diag: Vec<f64> = (0..rows).map(|a| d[a * rows + a].abs()).collect();
        let kept = (0..rows)
            .map(|a| {
                (0..rows)
                    .filter(|&b| {
                        // Keep every entry of the contact's own block.
                        owner(a) == owner(b)
                            || d[a * rows + b].abs() > DROP * (diag[a] * diag[b]).sqrt()
                    })
                    .map(|b| (b, d[a * rows + b]))
                    .collect()
            })
            .collect();
        let sparse = Csr::from_rows(rows, kept);
        let blocks = (0..nc)
            .map(|c| {
                let mut b = [0.0; 4];
                for i in 0..dim {
                    for j in 0..dim {
                        b[i * dim + j] = d[(c * dim + i) * rows + c * dim + j];
                    }
                }
                b
            })
            .collect();
        let normal = normal.map(|s| NormalPart {
            dnn: (0..nc).map(|c| d[(m + c) * rows + m + c]).collect(),
            dtn: (0..nc)
                .map(|c| {
                    let mut x = [0.0; 2];
                    for (i, xi) in x.iter_mut().enumerate().take(dim) {
                        *xi = d[(c * dim + i) * rows + m + c];
                    }
                    x
                })
                .collect(),
            mu: s.mu,
            load: if s.load.is_empty() {
                vec![None; nc]
            } else {
                s.load
            },
            compliance: s.compliance,
            static_factor: s.static_factor,
            h: s.h,
        });
        ContactSolver {
            dim,
            nc,
            d: sparse,
            blocks,
            f_s,
            f_d,
            tol,
            max_sweeps,
            normal,
        }
    }

    /// Solves for `r` given the free contact velocity; `r` holds the warm start on entry.
    ///
    /// On return `vel = v_free + D r` and `stick` has one flag per contact. Returns the
    /// number of sweeps and, when the cap was hit, the last relative force change.
    pub fn solve(
        &self,
        v_free: &[f64],
        r: &mut [f64],
        vel: &mut [f64],
        stick: &mut [bool],
    ) -> (usize, Option<f64>) {
        let dim = self.dim;
        if self.nc == 0 {
            return (0, None);
        }
        if self.nc == 1 {
            let s = solve_local(dim, &self.blocks[0], v_free, self.f_s[0], self.f_d[0]);
            r[..dim].copy_from_slice(&s.r[..dim]);
            stick[0] = s.stick;
            self.velocity(v_free, r, vel);
            return (1, None);
        }
        self.velocity(v_free, r, vel);
        let mut last = 0.0;
        for sweep in 1..=self.max_sweeps {
            let mut change = 0.0f64;
            for (c, stick_c) in stick.iter_mut().enumerate() {
                let o = c * dim;
                let blk = &self.blocks[c];
                // Velocity of contact c without its own force.
                let mut b = [0.0; 2];
                for i in 0..dim {
                    let mut x = vel[o + i];
                    for j in 0..dim {
                        x -= blk[i * dim + j] * r[o + j];
                    }
                    b[i] = x;
                }
                let s = solve_local(dim, blk, &b[..dim], self.f_s[c], self.f_d[c]);
                *stick_c = s.stick;
                let mut dr = [0.0; 2];
                let mut dn = 0.0f64;
                for k in 0..dim {
                    dr[k] = s.r[k] - r[o + k];
                    dn = dn.max(dr[k].abs());
                }
                if dn == 0.0 {
                    continue;
                }
                r[o..o + dim].copy_from_slice(&s.r[..dim]);
                // Keep vel = v_free + D r up to date: add column block c of D (= row block
                // c, D being symmetric) times dr.
                for (k, &drk) in dr[..dim].iter().enumerate() {
                    for (i, a) in self.d.row(o + k) {
                        vel[i] += a * drk;
                    }
                }
                change = change.max(dn / self.f_s[c].max(f64::MIN_POSITIVE));
            }
            last = change;
            if change <= self.tol {
                // Recompute to remove the drift of the incremental updates.
                self.velocity(v_free, r, vel);
                return (sweep, None);
            }
        }
        self.velocity(v_free, r, vel);
        (self.max_sweeps, Some(last))
    }

    /// Solves the 3-D contact problem of a step: `r` holds the friction forces (`dim * nc`)
    /// then the normal forces (`nc`), warm start on entry; `gap` is each contact's gap
    /// `g0 + W_N u` at the start of the step.
    ///
    /// Each contact in turn: its normal force by [`normal_force`] with its friction and the
    /// other contacts' forces fixed, then its friction by [`solve_local`] with the bounds
    /// `f_s = static_factor mu lambda`, `f_d = mu lambda`; sweeps until no force changes by
    /// more than `tol` of the largest `(1 + mu) lambda`. On return `vel = v_free + D r`, and
    /// `state` and `stick` hold each contact's state. Returns the number of sweeps and, when
    /// the cap was hit, the last relative change.
    ///
    /// # Panics
    /// If the solver was built without normal rows.
    pub fn solve_normal(
        &self,
        v_free: &[f64],
        gap: &[f64],
        r: &mut [f64],
        vel: &mut [f64],
        stick: &mut [bool],
        state: &mut [ContactState],
    ) -> (usize, Option<f64>) {
        let np = self.normal.as_ref().expect("a solver with normal rows");
        let (dim, m) = (self.dim, self.dim * self.nc);
        self.velocity(v_free, r, vel);
        let mut last = 0.0;
        for sweep in 1..=self.max_sweeps {
            let (mut change, mut scale) = (0.0f64, 0.0f64);
            for c in 0..self.nc {
                let (o, on) = (c * dim, m + c);
                let (blk, dtn, dnn) = (&self.blocks[c], &np.dtn[c], np.dnn[c]);
                // Velocities of contact c without its own forces.
                let mut bt = [0.0; 2];
                for i in 0..dim {
                    let mut x = vel[o + i] - dtn[i] * r[on];
                    for j in 0..dim {
                        x -= blk[i * dim + j] * r[o + j];
                    }
                    bt[i] = x;
                }
                // Normal first, with this contact's current friction kept.
                let bn = vel[on] - dnn * r[on];
                let lambda = match np.load[c] {
                    Some(n) => n,
                    None => normal_force(gap[c], bn, dnn, np.h, np.compliance[c]),
                };
                for i in 0..dim {
                    bt[i] += dtn[i] * lambda;
                }
                let f_d = np.mu[c] * lambda;
                let s = solve_local(dim, blk, &bt[..dim], np.static_factor * f_d, f_d);
                state[c] = if lambda == 0.0 {
                    ContactState::Separated
                } else if s.stick {
                    ContactState::Stick
                } else {
                    ContactState::Slip
                };
                stick[c] = state[c] == ContactState::Stick;
                scale = scale.max((1.0 + np.mu[c]) * lambda);
                let mut dn = (lambda - r[on]).abs();
                let dl = lambda - r[on];
                let mut dr = [0.0; 2];
                for k in 0..dim {
                    dr[k] = s.r[k] - r[o + k];
                    dn = dn.max(dr[k].abs());
                }
                if dn == 0.0 {
                    continue;
                }
                r[o..o + dim].copy_from_slice(&s.r[..dim]);
                r[on] = lambda;
                for (k, &drk) in dr[..dim].iter().enumerate() {
                    if drk != 0.0 {
                        for (i, a) in self.d.row(o + k) {
                            vel[i] += a * drk;
                        }
                    }
                }
                if dl != 0.0 {
                    for (i, a) in self.d.row(on) {
                        vel[i] += a * dl;
                    }
                }
                change = change.max(dn);
            }
            let rel = if change == 0.0 {
                0.0
            } else {
                change / scale.max(f64::MIN_POSITIVE)
            };
            last = rel;
            if rel <= self.tol {
                self.velocity(v_free, r, vel);
                return (sweep, None);
            }
        }
        self.velocity(v_free, r, vel);
        (self.max_sweeps, Some(last))
    }

    fn velocity(&self, v_free: &[f64], r: &[f64], vel: &mut [f64]) {
        for (i, v) in vel.iter_mut().enumerate() {
            *v = v_free[i] + self.d.row_dot(i, r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vel(d: &[f64; 4], b: &[f64; 2], r: &[f64; 2]) -> [f64; 2] {
        [
            b[0] + d[0] * r[0] + d[1] * r[1],
            b[1] + d[2] * r[0] + d[3] * r[1],
        ]
    }

    #[test]
    fn one_d_stick_and_slip() {
        let d = [0.5, 0.0, 0.0, 0.0];
        let s = solve_local(1, &d, &[0.4], 1.0, 1.0);
        assert!(s.stick);
        assert!((s.r[0] + 0.8).abs() < 1e-15);
        let s = solve_local(1, &d, &[-2.0], 1.0, 1.0);
        assert!(!s.stick);
        assert_eq!(s.r[0], 1.0);
        // Static bound above the dynamic one: sticks up to f_s, slides with f_d.
        let s = solve_local(1, &d, &[0.55], 1.2, 1.0);
        assert!(s.stick);
        let s = solve_local(1, &d, &[0.65], 1.2, 1.0);
        assert!(!s.stick);
        assert_eq!(s.r[0], -1.0);
    }

    #[test]
    fn anisotropic_slip_satisfies_coulomb_and_maximises_dissipation() {
        let d = [2.0, 0.7, 0.7, 0.5];
        for (i, b) in [[3.0, -1.0], [0.1, 4.0], [-5.0, -5.0], [1e-3, 2.0]]
            .iter()
            .enumerate()
        {
            let f = 1.3;
            let s = solve_local(2, &d, b, f, f);
            assert!(!s.stick, "case {i}");
            let r = s.r;
            assert!((r[0].hypot(r[1]) - f).abs() < 1e-14);
            // Slip: r = -f V/|V|.
            let v = vel(&d, b, &r);
            let nv = v[0].hypot(v[1]);
            assert!(
                (r[0] + f * v[0] / nv).abs() < 1e-12 && (r[1] + f * v[1] / nv).abs() < 1e-12,
                "case {i}: r {r:?} v {v:?}"
            );
            // It minimises 1/2 r.D r + b.r on the circle (brute force over angles).
            let q = |r: [f64; 2]| {
                0.5 * (d[0] * r[0] * r[0] + 2.0 * d[1] * r[0] * r[1] + d[3] * r[1] * r[1])
                    + b[0] * r[0]
                    + b[1] * r[1]
            };
            let best = (0..100_000)
                .map(|k| {
                    let a = k as f64 * std::f64::consts::TAU / 100_000.0;
                    q([f * a.cos(), f * a.sin()])
                })
                .fold(f64::INFINITY, f64::min);
            assert!(q(r) <= best + 1e-9, "case {i}");
        }
    }

    #[test]
    fn isotropic_slip_is_radial_and_stick_is_exact() {
        let d = [0.25, 0.0, 0.0, 0.25];
        let s = solve_local(2, &d, &[3.0, 4.0], 2.0, 2.0);
        assert!(!s.stick);
        assert!((s.r[0] + 1.2).abs() < 1e-15 && (s.r[1] + 1.6).abs() < 1e-15);
        let s = solve_local(2, &d, &[0.3, 0.4], 2.0, 2.0);
        assert!(s.stick);
        let v = vel(&d, &[0.3, 0.4], &s.r);
        assert!(v[0].abs() < 1e-16 && v[1].abs() < 1e-16);
    }

    #[test]
    fn normal_force_is_signorini_at_the_end_of_the_step() {
        let (d, h) = (0.5, 0.1);
        // Open and not closing within the step: no force.
        assert_eq!(normal_force(1.0, -1.0, d, h, 0.0), 0.0);
        // Closing within the step: the end gap g + h (b + d lambda) is exactly 0.
        let l = normal_force(0.05, -1.0, d, h, 0.0);
        assert!(l > 0.0 && (0.05 + h * (-1.0 + d * l)).abs() < 1e-15);
        // Closed and pulled apart: no force; pressed: the velocity is stopped.
        assert_eq!(normal_force(0.0, 2.0, d, h, 0.0), 0.0);
        assert!((-1.0 + d * normal_force(0.0, -1.0, d, h, 0.0)).abs() < 1e-15);
        // A rigid penetration is kept, not pushed out.
        assert!((-1.0 + d * normal_force(-0.3, -1.0, d, h, 0.0)).abs() < 1e-15);
        assert_eq!(normal_force(-0.3, 0.0, d, h, 0.0), 0.0);
        // Compliant: lambda = k_n max(0, -g_end) with g_end = g + h V.
        let (k, g) = (200.0, -0.01);
        let l = normal_force(g, 0.0, d, h, 1.0 / k);
        assert!((l - k * -(g + h * d * l)).abs() < 1e-12);
    }

    #[test]
    fn gauss_seidel_solves_coupled_contacts() {
        // Three coupled 1-D contacts; check the Coulomb conditions at the solution.
        let d = vec![2.0, -0.5, 0.1, -0.5, 1.5, -0.4, 0.1, -0.4, 1.0];
        let f = vec![0.3, 0.5, 10.0];
        let cs = ContactSolver::new(1, d, f.clone(), f.clone(), 1e-14, 1000, None);
        let vf = [1.0, -0.2, 0.3];
        let mut r = [0.0; 3];
        let mut v = [0.0; 3];
        let mut st = [false; 3];
        let (sweeps, fail) = cs.solve(&vf, &mut r, &mut v, &mut st);
        assert!(fail.is_none() && sweeps > 1);
        for c in 0..3 {
            if st[c] {
                assert!(v[c].abs() < 1e-12 && r[c].abs() <= f[c]);
            } else {
                assert!((r[c] + f[c] * v[c].signum()).abs() < 1e-14 && v[c].abs() > 0.0);
            }
        }
        assert!(st[2] && !st[0]);
        // A sweep cap that is too small is reported, not hidden.
        let cs = ContactSolver {
            max_sweeps: 1,
            ..cs
        };
        let mut r = [0.0; 3];
        let (sweeps, fail) = cs.solve(&vf, &mut r, &mut v, &mut st);
        assert_eq!(sweeps, 1);
        assert!(fail.unwrap() > 0.0);
    }
}
