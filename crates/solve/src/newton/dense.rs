//! The dense path's linear algebra: the LU workspace kept across Newton steps, the
//! Levenberg-Marquardt fallback for a (nearly) singular Jacobian, and GMRES with an older LU.

use super::gmres::gmres;
use super::{DENSE_SEQUENTIAL_BELOW, EvalError, KrylovOptions, Linearization, Residual, norm};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::matmul::matmul;
use faer::{Accum, Conj, Mat, MatMut, MatRef, Par};

/// The dense path's workspace, allocated once per solve: the LU factors (in place, `L`
/// strictly below the diagonal, `U` on and above), the row permutation, faer's scratch and a
/// right-hand side, so that no Newton iteration allocates an `n x n` matrix.
pub(super) struct DenseWork {
    lu: Mat<f64>,
    fwd: Vec<usize>,
    bwd: Vec<usize>,
    mem: MemBuffer,
    rhs: Mat<f64>,
    par: Par,
    /// True once `lu` holds a factorisation.
    pub(super) factored: bool,
}

impl DenseWork {
    pub(super) fn new(n: usize) -> Self {
        let par = if n < DENSE_SEQUENTIAL_BELOW {
            Par::Seq
        } else {
            faer::get_global_parallelism()
        };
        let scratch =
            faer::linalg::lu::partial_pivoting::factor::lu_in_place_scratch::<usize, f64>(
                n,
                n,
                par,
                Default::default(),
            )
            .or(
                faer::linalg::lu::partial_pivoting::solve::solve_in_place_scratch::<usize, f64>(
                    n, 1, par,
                ),
            );
        DenseWork {
            lu: Mat::zeros(n, n),
            fwd: vec![0; n],
            bwd: vec![0; n],
            mem: MemBuffer::new(scratch),
            rhs: Mat::zeros(n, 1),
            par,
            factored: false,
        }
    }

    /// Factorises `jac` (partial pivoting, as `Mat::partial_piv_lu`).
    fn factor(&mut self, jac: MatRef<'_, f64>) {
        let _t = crate::profile::span(crate::profile::Phase::Jacobian);
        self.lu.copy_from(jac);
        pin_empty_rows(self.lu.as_mut(), f64::abs, |v| v);
        faer::linalg::lu::partial_pivoting::factor::lu_in_place(
            self.lu.as_mut(),
            &mut self.fwd,
            &mut self.bwd,
            self.par,
            MemStack::new(&mut self.mem),
            Default::default(),
        );
        self.factored = true;
    }

    /// `-J^{-1} g` from the last factorisation, `None` when not finite (singular `J`).
    pub(super) fn newton_step(&mut self, g: &[f64]) -> Option<Vec<f64>> {
        let n = g.len();
        for (i, v) in g.iter().enumerate() {
            self.rhs[(i, 0)] = *v;
        }
        let perm = faer::perm::PermRef::new_checked(&self.fwd, &self.bwd, n);
        faer::linalg::lu::partial_pivoting::solve::solve_in_place_with_conj(
            self.lu.as_ref(),
            self.lu.as_ref(),
            perm,
            Conj::No,
            self.rhs.as_mut(),
            self.par,
            MemStack::new(&mut self.mem),
        );
        let p: Vec<f64> = (0..n).map(|i| -self.rhs[(i, 0)]).collect();
        p.iter().all(|v| v.is_finite()).then_some(p)
    }

    /// `out = op(J) v` with `op` the identity or the transpose.
    fn product(&self, jac: MatRef<'_, f64>, v: &[f64], out: &mut [f64]) {
        let n = v.len();
        let vc = MatRef::from_column_major_slice(v, n, 1);
        let oc = MatMut::from_column_major_slice_mut(out, n, 1);
        matmul(oc, Accum::Replace, jac, vc, 1.0, self.par);
    }
}

/// A dense Newton step longer than this many times `max(||x||, Cauchy step)` is taken as
/// coming from a (nearly) singular Jacobian and replaced by a Levenberg-Marquardt step.
const NEAR_SINGULAR_STEP: f64 = 1e3;

/// Puts the matrix's largest magnitude on the diagonal of every row that is empty (below
/// `1e-12` of it) before a factorisation. Such a row is an equation that holds identically,
/// e.g. the `h = 0` friction equation of a contact stuck all period, whose mean force no
/// equation fixes (its residual entry is zero too): with the pivot the step leaves that
/// unknown where it is, instead of a singular factorisation (and, in a preconditioner block,
/// a fallback to the identity for the whole block).
pub(crate) fn pin_empty_rows<T: Copy>(
    a: faer::MatMut<'_, T>,
    abs: impl Fn(T) -> f64,
    from: impl Fn(f64) -> T,
) {
    let n = a.nrows().min(a.ncols());
    let mut rows = vec![0.0f64; a.nrows()];
    for j in 0..a.ncols() {
        // A contiguous column is read as a slice (it vectorises; the preconditioner's harmonic
        // level scans `m^2` entries per harmonic at every build).
        match a.as_ref().col(j).try_as_col_major() {
            Some(col) => {
                for (r, &v) in rows.iter_mut().zip(col.as_slice()) {
                    *r = r.max(abs(v));
                }
            }
            None => {
                for (i, r) in rows.iter_mut().enumerate() {
                    *r = r.max(abs(a[(i, j)]));
                }
            }
        }
    }
    pin_diagonal(a, &rows, n, from);
}

/// The largest of `norms` (each row's or column's largest magnitude) put on the first `n`
/// diagonal entries of `a` whose norm is below `1e-12` of it; nothing where all vanish or one
/// is not finite.
fn pin_diagonal<T>(mut a: faer::MatMut<'_, T>, norms: &[f64], n: usize, from: impl Fn(f64) -> T) {
    let big = norms.iter().fold(0.0f64, |b, &r| b.max(r));
    if !(big > 0.0 && big.is_finite()) {
        return;
    }
    for (i, &r) in norms.iter().enumerate().take(n) {
        if r <= 1e-12 * big {
            a[(i, i)] = from(big);
        }
    }
}

/// [`pin_empty_rows`] of `a^T`, in place in `a`: the empty columns of `a` pinned on the
/// diagonal (for a matrix factorised transposed).
pub(crate) fn pin_empty_columns<T: Copy>(
    a: faer::MatMut<'_, T>,
    abs: impl Fn(T) -> f64,
    from: impl Fn(f64) -> T,
) {
    let n = a.nrows().min(a.ncols());
    let cols: Vec<f64> = (0..a.ncols())
        .map(|j| match a.as_ref().col(j).try_as_col_major() {
            Some(col) => col.as_slice().iter().fold(0.0f64, |b, &v| b.max(abs(v))),
            None => (0..a.nrows()).fold(0.0f64, |b, i| b.max(abs(a[(i, j)]))),
        })
        .collect();
    pin_diagonal(a, &cols, n, from);
}

/// `-(J^T J + mu I)^{-1} J^T g` with `mu = 1e-10 ||J||_F^2 / n`: the Gauss-Newton step,
/// regularised along directions the equations do not determine. `None` if it fails.
fn levenberg_marquardt_step(jac: &Mat<f64>, g: &[f64], par: Par) -> Option<Vec<f64>> {
    let n = g.len();
    let mut jtj = Mat::<f64>::zeros(n, n);
    matmul(
        jtj.as_mut(),
        Accum::Replace,
        jac.transpose(),
        jac.as_ref(),
        1.0,
        par,
    );
    let fro: f64 = (0..n).map(|i| jtj[(i, i)]).sum();
    let mu = 1e-10 * fro / n.max(1) as f64;
    if !(mu > 0.0 && mu.is_finite()) {
        return None;
    }
    for i in 0..n {
        jtj[(i, i)] += mu;
    }
    let gc = MatRef::from_column_major_slice(g, n, 1);
    let mut rhs = Mat::<f64>::zeros(n, 1);
    matmul(rhs.as_mut(), Accum::Replace, jac.transpose(), gc, -1.0, par);
    use faer::linalg::solvers::Solve;
    let llt = jtj.llt(faer::Side::Lower).ok()?;
    let p = llt.solve(&rhs);
    let p: Vec<f64> = (0..n).map(|i| p[(i, 0)]).collect();
    p.iter().all(|v| v.is_finite()).then_some(p)
}

/// Krylov vectors GMRES may spend with an older LU before a fresh factorisation is cheaper:
/// each costs two `n x n` triangular solves and one product (about `6 n^2` flops against the
/// `2 n^3 / 3` of a factorisation, so 40 of them are 2 % of one at 3600 unknowns, memory
/// traffic aside).
pub(super) const OLD_LU_GMRES_MAX: usize = 40;

/// `J` (assembled, current) with the LU of an earlier Jacobian as preconditioner: the Newton
/// system of a large dense step solved by GMRES. The stick/slip pattern of a friction contact
/// changes at a few samples from one Newton step to the next, so `J_old^{-1} J` is the
/// identity plus a low-rank part and GMRES needs a few products where a new LU costs `n^3`.
pub(super) struct OldLu<'a> {
    pub(super) jac: MatRef<'a, f64>,
    pub(super) work: &'a mut DenseWork,
}

impl Residual for OldLu<'_> {
    fn len(&self) -> usize {
        self.jac.nrows()
    }

    fn evaluate(
        &mut self,
        _: &[f64],
        _: &mut [f64],
        _: Option<MatMut<'_, f64>>,
    ) -> Result<(), EvalError> {
        Err(EvalError("a linear operator has no residual".into()))
    }

    fn supports_matrix_free(&self) -> bool {
        true
    }

    fn jacobian_product(&mut self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        self.work.product(self.jac, v, out);
        Ok(())
    }

    fn precondition(&mut self, v: &mut [f64]) -> Result<(), EvalError> {
        // newton_step gives -J_old^{-1} v.
        let p = self
            .work
            .newton_step(v)
            .ok_or_else(|| EvalError("the old factorisation is singular".into()))?;
        v.iter_mut().zip(p).for_each(|(a, b)| *a = -b);
        Ok(())
    }
}

/// Newton step by dense LU, gradient and products by dense matrix-vector products. With
/// `reuse` (a relative tolerance, the Newton forcing term) and an earlier factorisation at
/// hand, the step is first sought by GMRES preconditioned with it ([`OldLu`]); only if that
/// does not converge within [`OLD_LU_GMRES_MAX`] products is `J` factorised.
/// `krylov_iterations` counts the products.
///
/// A singular or ill-conditioned Jacobian gives a non-finite Newton step; the steepest-descent
/// direction is then used alone, which always exists while the gradient is non-zero.
pub(super) fn linearize_dense(
    jac: &Mat<f64>,
    g: &[f64],
    x_norm: f64,
    work: &mut DenseWork,
    reuse: Option<f64>,
    krylov_iterations: &mut usize,
) -> Linearization {
    let n = g.len();
    let mut newton = None;
    if let (Some(rtol), true) = (reuse, work.factored) {
        let rhs: Vec<f64> = g.iter().map(|v| -v).collect();
        let opts = KrylovOptions {
            restart: OLD_LU_GMRES_MAX,
            max_iterations: OLD_LU_GMRES_MAX,
            ..KrylovOptions::default()
        };
        let mut op = OldLu {
            jac: jac.as_ref(),
            work,
        };
        if let Ok(sol) = gmres(&mut op, &rhs, rtol, &opts) {
            *krylov_iterations += sol.iterations;
            if sol.converged && sol.x.iter().all(|v| v.is_finite()) {
                newton = Some(sol.x);
            }
        }
    }
    if newton.is_none() {
        work.factor(jac.as_ref());
        newton = work.newton_step(g);
    }
    let mut grad = vec![0.0; n];
    work.product(jac.transpose(), g, &mut grad);
    let mut j_grad = vec![0.0; n];
    work.product(jac.as_ref(), &grad, &mut j_grad);
    // A (nearly) rank-deficient J, e.g. the mean friction force of a contact stuck all
    // period, which no equation fixes, gives a Newton step that is huge along the null
    // space; the dogleg then crawls along it. The Levenberg-Marquardt step (nearly the
    // minimum-norm Gauss-Newton step) keeps what the equations decide and leaves the rest.
    let cauchy = {
        let (gs, js) = (norm(&grad).powi(2), norm(&j_grad).powi(2));
        if js > 0.0 { gs / js * gs.sqrt() } else { 0.0 }
    };
    let too_long = newton
        .as_ref()
        .is_none_or(|p| norm(p) > NEAR_SINGULAR_STEP * x_norm.max(cauchy));
    if too_long && let Some(p) = levenberg_marquardt_step(jac, g, work.par) {
        newton = Some(p);
    }
    let mut j_newton = vec![0.0; n];
    if let Some(p) = &newton {
        work.product(jac.as_ref(), p, &mut j_newton);
    }
    Linearization {
        newton,
        j_newton,
        grad,
        j_grad,
    }
}
