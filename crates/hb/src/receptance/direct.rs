//! Direct backends: factorise `Z_h` (dense or sparse complex LU) and solve for the `m`
//! columns of `W^T` and for `F_h` at once.

use ewr_model::linalg_error::Sentence;
use faer::linalg::solvers::{PartialPivLu, Solve};
use faer::sparse::linalg::LuError;
use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::sparse::linalg::solvers::{Lu, SymbolicLu};
use faer::sparse::{Argsort, Pair, SparseColMat, SymbolicSparseColMat};
use faer::{Accum, Mat, c64};

use super::nd_modes::NdSolve;
use super::{ReceptanceError, Structure};

/// A condition number estimate above which `Z_h` is reported singular. A singular matrix
/// factorised in floating point gives `~1/eps = 4.5e15`; lightly damped structures near
/// resonance stay many orders of magnitude below.
const SINGULAR_COND: f64 = 1e14;

/// Per-harmonic result of a direct backend.
pub(crate) struct DirectHarmonic {
    pub g: Mat<c64>,
    pub forced: Vec<c64>,
    pub(crate) solver: Solver,
}

pub(crate) enum Solver {
    Dense(PartialPivLu<c64>),
    Sparse(Lu<usize, c64>),
    /// Modal sum plus static residual of one nodal diameter (cyclic sectors).
    CyclicModal(NdSolve),
}

impl DirectHarmonic {
    /// `Z_h^{-1} b` with the stored factorisation.
    pub fn solve(&self, mut b: Mat<c64>) -> Mat<c64> {
        match &self.solver {
            Solver::Dense(lu) => lu.solve_in_place(b.as_mut()),
            Solver::Sparse(lu) => lu.solve_in_place(b.as_mut()),
            Solver::CyclicModal(m) => return m.solve(&b),
        }
        b
    }

    /// Entries `rows` of `Z_h^{-1} b` (one column) without a full solve, where the solver
    /// can (the cyclic modal one, from cached static columns); `None` otherwise.
    pub fn solve_at(&self, b: &Mat<c64>, rows: &[usize]) -> Option<Vec<c64>> {
        match &self.solver {
            Solver::CyclicModal(m) => Some(m.solve_at(b, rows)),
            _ => None,
        }
    }

    /// Solves for `[W^T | F_h]`, checks the result and keeps `G_h = W X` and `W x_F`.
    fn build(
        s: &Structure,
        w: f64,
        h: usize,
        z_norm1: f64,
        solver: Solver,
    ) -> Result<Self, ReceptanceError> {
        let force = s.force(h);
        let forced = force.is_some();
        let mut b = s.wt_dense_h(h, usize::from(forced));
        if let Some(f) = force {
            let f = s.reduce(h, f);
            b.col_mut(s.m).copy_from(f.col(0));
        }
        let b_norms: Vec<f64> = (0..b.ncols()).map(|j| b.col(j).norm_l1()).collect();
        let mut this = DirectHarmonic {
            g: Mat::zeros(0, 0),
            forced: vec![c64::new(0.0, 0.0); s.m],
            solver,
        };
        let x = this.solve(b);
        // ||Z||_1 ||x_j||_1 / ||b_j||_1 is a lower bound of cond_1(Z): a backward-stable
        // solve gives a small residual even for a singular Z, so size is the only symptom.
        for (j, &bn) in b_norms.iter().enumerate() {
            let xn = x.col(j).norm_l1();
            if !xn.is_finite() || (bn > 0.0 && z_norm1 * xn / bn > SINGULAR_COND) {
                return Err(ReceptanceError::Singular {
                    harmonic: h,
                    frequency: w,
                });
            }
        }
        let mut wx = Mat::zeros(s.m, x.ncols());
        let w_cyclic = s.w_cyclic(h);
        sparse_dense_matmul(
            wx.as_mut(),
            Accum::Replace,
            w_cyclic.as_ref().unwrap_or(&s.w_c).as_ref(),
            x.as_ref(),
            c64::new(1.0, 0.0),
            super::par(),
        );
        let half = c64::new(0.5, 0.0);
        // Z_h is complex symmetric, so G_h is: symmetrising removes rounding. Not on a cyclic
        // sector, whose T_h^H Z_h T_h is not.
        this.g = if s.cyclic.is_some() {
            wx.as_ref().submatrix(0, 0, s.m, s.m).to_owned()
        } else {
            Mat::from_fn(s.m, s.m, |i, j| (wx[(i, j)] + wx[(j, i)]) * half)
        };
        for (i, c) in s.compliance.iter().enumerate() {
            this.g[(i, i)] += c64::new(*c, 0.0);
        }
        if forced {
            this.forced = (0..s.m).map(|i| wx[(i, s.m)]).collect();
        }
        Ok(this)
    }
}

/// `(Omega, eta_h)` of harmonic `h` at fundamental `w`.
fn omega_eta(s: &Structure, w: f64, h: usize) -> (f64, f64) {
    (h as f64 * w, s.eta_h(h))
}

/// Dense copies of `K`, `M`, `C`.
pub(crate) struct DenseBackend {
    k: Mat<f64>,
    m: Mat<f64>,
    c: Mat<f64>,
}

impl DenseBackend {
    pub fn new(s: &Structure) -> Self {
        DenseBackend {
            k: s.k.to_dense(),
            m: s.mass.to_dense(),
            c: s.c.to_dense(),
        }
    }

    pub fn harmonic(
        &self,
        s: &Structure,
        w: f64,
        h: usize,
    ) -> Result<DirectHarmonic, ReceptanceError> {
        let (om, eta) = omega_eta(s, w, h);
        let entry = |i: usize, j: usize| {
            let k = self.k[(i, j)];
            c64::new(k - om * om * self.m[(i, j)], eta * k + om * self.c[(i, j)])
        };
        let z = match &s.cyclic {
            None => Mat::from_fn(s.n, s.n, entry),
            Some(cm) => {
                // T_h^H Z_h T_h: right DOFs fold onto their left partners with c_h.
                let c = s.phase(h);
                let mut z = Mat::<c64>::zeros(cm.nr, cm.nr);
                for j in 0..s.n {
                    let (rj, fj) = cm.of(j, c);
                    for i in 0..s.n {
                        let v = entry(i, j);
                        if v != c64::new(0.0, 0.0) {
                            let (ri, fi) = cm.of(i, c);
                            z[(ri, rj)] += fi.conj() * v * fj;
                        }
                    }
                }
                z
            }
        };
        let z_norm1 = (0..z.ncols())
            .map(|j| z.col(j).norm_l1())
            .fold(0.0, f64::max);
        DirectHarmonic::build(s, w, h, z_norm1, Solver::Dense(z.partial_piv_lu()))
    }
}

/// Source of one entry of the pattern union: which matrix it comes from and its value.
#[derive(Clone, Copy)]
enum Src {
    K(f64),
    M(f64),
    C(f64),
}

/// Pattern union of `K`, `M`, `C` with its symbolic LU, shared by all harmonics/frequencies.
pub(crate) struct SparseBackend {
    sym: SymbolicSparseColMat<usize>,
    argsort: Argsort<usize>,
    sym_lu: SymbolicLu<usize>,
    /// One entry per triplet of `K`, `M`, `C`, in the order of the argsort.
    src: Vec<Src>,
    /// Per entry, the power of `c_h` it takes on a cyclic sector (`T_h^H Z T_h`: +1 for a
    /// right column, -1 for a right row); empty otherwise.
    phase_power: Vec<i8>,
}

impl SparseBackend {
    pub fn new(s: &Structure) -> Result<Self, ReceptanceError> {
        let mut pairs = Vec::new();
        let mut src = Vec::new();
        let mut phase_power = Vec::new();
        let nr = s.n_independent();
        for (a, tag) in [(&s.k, 0), (&s.mass, 1), (&s.c, 2)] {
            for t in a.triplet_iter() {
                match &s.cyclic {
                    None => pairs.push(Pair::new(t.row, t.col)),
                    Some(cm) => {
                        pairs.push(Pair::new(cm.red[t.row], cm.red[t.col]));
                        phase_power.push(i8::from(cm.right[t.col]) - i8::from(cm.right[t.row]));
                    }
                }
                src.push(match tag {
                    0 => Src::K(*t.val),
                    1 => Src::M(*t.val),
                    _ => Src::C(*t.val),
                });
            }
        }
        // Diagonal entries even where all three matrices are empty, so that a DOF with no
        // entry at all is reported singular numerically rather than failing the analysis.
        for i in 0..nr {
            pairs.push(Pair::new(i, i));
            src.push(Src::K(0.0));
            if s.cyclic.is_some() {
                phase_power.push(0);
            }
        }
        let (sym, argsort) =
            SymbolicSparseColMat::try_new_from_indices(nr, nr, &pairs).map_err(|e| {
                ReceptanceError::BadInput(format!("sparsity pattern: {}", e.sentence()))
            })?;
        let sym_lu = SymbolicLu::try_new(sym.as_ref()).map_err(|e| {
            ReceptanceError::Factorization(format!("symbolic LU: {}", e.sentence()))
        })?;
        Ok(SparseBackend {
            sym,
            argsort,
            sym_lu,
            src,
            phase_power,
        })
    }

    pub fn harmonic(
        &self,
        s: &Structure,
        w: f64,
        h: usize,
    ) -> Result<DirectHarmonic, ReceptanceError> {
        let (om, eta) = omega_eta(s, w, h);
        let mut vals: Vec<c64> = self
            .src
            .iter()
            .map(|v| match *v {
                Src::K(k) => c64::new(k, eta * k),
                Src::M(m) => c64::new(-om * om * m, 0.0),
                Src::C(c) => c64::new(0.0, om * c),
            })
            .collect();
        if !self.phase_power.is_empty() {
            let c = s.phase(h);
            for (v, &p) in vals.iter_mut().zip(&self.phase_power) {
                match p {
                    1 => *v *= c,
                    -1 => *v *= c.conj(),
                    _ => {}
                }
            }
        }
        let z = SparseColMat::new_from_argsort(self.sym.clone(), &self.argsort, &vals)
            .map_err(|e| ReceptanceError::Factorization(e.sentence()))?;
        let z_norm1 = (0..z.ncols())
            .map(|j| z.val_of_col(j).iter().map(|v| v.norm()).sum::<f64>())
            .fold(0.0, f64::max);
        let lu =
            Lu::try_new_with_symbolic(self.sym_lu.clone(), z.as_ref()).map_err(|e| match e {
                LuError::SymbolicSingular { .. } => ReceptanceError::Singular {
                    harmonic: h,
                    frequency: w,
                },
                LuError::Generic(e) => ReceptanceError::Factorization(e.sentence()),
            })?;
        DirectHarmonic::build(s, w, h, z_norm1, Solver::Sparse(lu))
    }
}
