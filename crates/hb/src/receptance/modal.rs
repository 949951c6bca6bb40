//! Modal backend: lowest modes of `(K, M)` once, then the receptance by modal sum plus the
//! residual (static) flexibility of the omitted modes.
//!
//! # Modal sum
//!
//! `G_h = sum_r (W phi_r)(W phi_r)^T / d_r + R / (1 + i eta_h + i Omega beta)` with
//! `Omega = h w`, `d_r = omega_r^2 (1 + i eta_h) - Omega^2 + i Omega c_r` and
//! `c_r = phi_r^T C phi_r + 2 zeta_r omega_r`:
//! * `C = C_explicit + alpha M + beta K` is projected on the modes and only its diagonal is
//!   kept. For Rayleigh damping this is exact (`c_r = alpha + beta omega_r^2`); for a
//!   non-proportional explicit `C` it neglects the modal coupling (the usual light-damping
//!   approximation), which [`damping_coupling_errors`] estimates per mode; repeated modes are first
//!   turned to the basis that diagonalises `C` on them ([`diagonalise_repeated`];
//!   docs/receptance.md, "Non-proportional damping").
//! * `zeta_r` are the model's modal damping ratios for the first modes (none beyond the list);
//!   they add to the projected viscous damping.
//! * The residual term divides by `1 + i eta_h + i Omega beta`: the omitted modes respond
//!   quasi-statically, and for them stiffness-proportional and hysteretic damping act as a
//!   complex factor on the stiffness (exact in the limit `omega_r >> Omega`).
//!
//! # Residual flexibility (static exactness) and free-free structures
//!
//! `R = W [ sum_{omitted finite modes} phi phi^T / lambda + S ] W^T`, where `S` is the static
//! flexibility of the massless DOFs (the "infinite-frequency modes", which the `M`-inner
//! product Lanczos never sees: with `M = diag(M_aa, 0)`, `(K - sigma M)^{-1} =
//! T (K^_aa - sigma M_aa)^{-1} T^T + E K_bb^{-1} E^T` and the last term does not depend on
//! `sigma`).
//! * **`K` positive definite** (Cholesky of `K` succeeds and no eigenvalue is below
//!   `RIGID_REL * tr K / tr M`): `R = W K^{-1} W^T - sum_{retained} (W phi)(W phi)^T / lambda`,
//!   exactly; at `h w = 0` the modal receptance equals `W K^{-1} W^T` to rounding.
//!   `W K^{-1} W^T = Y^T Y` with `Y = L^{-1} P W^T`, forward solves from the contact rows
//!   through the part of the factor they reach (`gram.rs`); no backward solve.
//! * **Rigid-body modes** (`K` singular): `K^{-1}` does not exist, but the flexibility of the
//!   *elastic* omitted modes (what inertia-relief attachment modes represent) does. With
//!   `A = K - sigma M` (`sigma < 0`) the identity `1/lambda = sum_j sigma^j / (lambda -
//!   sigma)^{j+1}` (converging for `lambda > sigma / 2`) gives
//!   `sum_{omitted} phi phi^T / lambda + S = sum_{j=0}^{J} sigma^j A^{-1} (M A^{-1})^j
//!   - sum_{retained} phi phi^T sum_{j=0}^{J} sigma^j / (lambda_r - sigma)^{j+1}` up to a
//!   truncation `O((sigma / lambda_{k+1})^{J+1})` on the omitted modes, where the retained modes
//!   (rigid ones included) cancel exactly term by term. `J = 2` and `sigma = -1e-3 lambda_k`
//!   give about `1e-9` relative on `R`. The rigid-body modes must all be retained (an error
//!   tells to increase `modes` otherwise); they enter the modal sum with `omega_r = 0`, so at
//!   `h w = 0` the receptance is singular, as in the direct backends
//!   ([`ReceptanceError::Singular`]).

use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use faer::prelude::ReborrowMut;
use faer::sparse::{SparseColMat, SymbolicSparseColMat};
use faer::{Accum, Mat, MatMut, MatRef, c64};

use super::cholesky::{Cholesky, CholeskyPattern};
use super::lanczos::{LanczosModes, block_size, lowest_modes};
use super::{ReceptanceError, Structure};

/// Eigenvalues below `RIGID_REL * tr K / tr M` are rigid-body modes (`lambda = 0`).
const RIGID_REL: f64 = 1e-11;
/// Lanczos shift for a singular `K`: `sigma = -SHIFT_REL * tr K / tr M`.
const SHIFT_REL: f64 = 1e-5;
/// Residual-series shift relative to the highest retained eigenvalue.
const RESIDUAL_SHIFT_REL: f64 = 1e-3;
/// Lanczos convergence: Ritz residual `<= LANCZOS_TOL * theta`.
const LANCZOS_TOL: f64 = 1e-10;
/// Columns of `W^T` solved at once for the residual flexibility where it is solved through
/// the whole factor (a singular `K`; bounds memory to `n * CHUNK` reals).
const CHUNK: usize = 64;

/// The retained modes of the structure, as used by the modal receptance.
#[derive(Clone, Debug)]
pub struct Modes {
    /// Natural circular frequencies `omega_r`, ascending (0 for rigid-body modes).
    pub omega: Vec<f64>,
    /// Mode shapes `phi_r` (`n x modes`), `M`-orthonormal.
    pub phi: Mat<f64>,
    /// `W phi_r` (`m x modes`): the modes at the contacts.
    pub w_phi: Mat<f64>,
    /// Modal viscous damping `c_r = phi_r^T C phi_r + 2 zeta_r omega_r` (the `2 zeta omega`
    /// of `d_r`).
    pub damping: Vec<f64>,
    /// Residual flexibility of the omitted modes at the contacts (`m x m`, real symmetric).
    pub residual: Mat<f64>,
    /// How many of the retained modes are rigid-body modes.
    pub rigid_body_modes: usize,
}

/// Relative spacing of eigenvalues below which modes count as one repeated mode
/// ([`diagonalise_repeated`]); the Lanczos converges them to `LANCZOS_TOL`.
const REPEATED_REL: f64 = 1e-10;

/// Within each group of repeated modes (eigenvalues within [`REPEATED_REL`] of each other;
/// rigid-body modes, whose eigenvalues are set to 0, form one) the basis is free, and an
/// explicit damping matrix's projection on it need not be diagonal: the modal sum, which keeps only its diagonal, would
/// then depend on which basis the Lanczos returned (two identical blades: every mode of the
/// pair). The group is turned to the eigenvectors of that projection, which diagonalises it
/// exactly and keeps the modes `M`-orthonormal; `cphi` (`C phi`) turns with them.
fn diagonalise_repeated(lambda: &[f64], phi: &mut Mat<f64>, cphi: &mut Mat<f64>) {
    let k = lambda.len();
    let mut r = 0;
    while r < k {
        let mut e = r + 1;
        while e < k && lambda[e] - lambda[r] <= REPEATED_REL * lambda[r].abs() {
            e += 1;
        }
        if e - r >= 2 {
            let p = e - r;
            let block = phi.as_ref().subcols(r, p).transpose() * cphi.as_ref().subcols(r, p);
            let sym = Mat::from_fn(p, p, |i, j| 0.5 * (block[(i, j)] + block[(j, i)]));
            if let Ok(evd) = sym.self_adjoint_eigen(faer::Side::Lower) {
                let u = evd.U().to_owned();
                let turned = phi.as_ref().subcols(r, p) * &u;
                phi.as_mut().subcols_mut(r, p).copy_from(&turned);
                let turned = cphi.as_ref().subcols(r, p) * &u;
                cphi.as_mut().subcols_mut(r, p).copy_from(&turned);
            }
        }
        r = e;
    }
}

/// What the modal sum's diagonal damping costs where an explicit damping matrix couples the
/// modes (`D = Phi^T C Phi` not diagonal; docs/receptance.md, "Non-proportional damping"):
/// for each retained mode `r`, the relative change of the response to a load `M phi_r` at
/// `Omega = omega_r` when the coupling is kept, to first order in the coupling. Two parts: the
/// other modes driven through `D` (`q_s / q_r = -i omega_r D_sr / (omega_s^2 - omega_r^2)`, a
/// complex mode shape), and their reaction on mode `r`, a real shift `sum_s omega_r^2 D_rs^2 /
/// (omega_s^2 - omega_r^2)` of its dynamic stiffness beside the imaginary `omega_r b_r` the sum
/// keeps at resonance (`b_r = c_r + eta omega_r`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DampingCoupling {
    /// The largest relative change over the retained elastic modes (infinite for an undamped
    /// mode that the damping couples, or for two coupled modes of one frequency).
    pub error: f64,
    /// Its mode, counted from 0 among the retained modes.
    pub mode: usize,
    /// That mode's natural frequency (rad/s).
    pub omega: f64,
}

/// The largest of `errors` ([`damping_coupling_errors`]) over the modes `omega` up to
/// `omega_max` (no error where none lies below it).
pub(crate) fn worst_coupling(errors: &[f64], omega: &[f64], omega_max: f64) -> DampingCoupling {
    let mode = (0..errors.len())
        .filter(|&r| omega[r] <= omega_max)
        .max_by(|&x, &y| errors[x].total_cmp(&errors[y]));
    match mode {
        Some(r) => DampingCoupling {
            error: errors[r],
            mode: r,
            omega: omega[r],
        },
        None => DampingCoupling {
            error: 0.0,
            mode: 0,
            omega: omega.first().copied().unwrap_or(0.0),
        },
    }
}

/// Each retained mode's relative change of [`DampingCoupling`] (0 for rigid-body modes).
/// `omitted`, per retained mode, `(a, b) = (sum D_rs^2 / lambda_s, sum D_rs^2 / lambda_s^2)`
/// over the modes the basis leaves out: their share of the shift and of the shape, each `1 /
/// (lambda_s - omega_r^2)` taken at their coupling-weighted mean `lambda = a / b`.
pub fn damping_coupling_errors(
    omega: &[f64],
    damping: &[f64],
    d: MatRef<'_, f64>,
    eta: f64,
    omitted: Option<&[(f64, f64)]>,
) -> Vec<f64> {
    let k = omega.len();
    // Couplings at rounding's level of the largest modal damping are none (a repeated mode's
    // group, diagonalised, keeps such off-diagonal residue).
    let floor = 1e-12 * (0..k).fold(0.0f64, |m, r| m.max(d[(r, r)].abs()));
    (0..k)
        .map(|r| {
            let wr = omega[r];
            if wr <= 0.0 {
                return 0.0;
            }
            let (mut shift, mut shape, mut degenerate) = (0.0, 0.0, false);
            for s in (0..k).filter(|&s| s != r) {
                let drs = 0.5 * (d[(r, s)] + d[(s, r)]);
                if drs.abs() <= floor {
                    continue;
                }
                let gap = omega[s] * omega[s] - wr * wr;
                if gap.abs() <= 1e-12 * wr * wr {
                    degenerate = true;
                    continue;
                }
                shift += wr * wr * drs * drs / gap;
                shape += (wr * drs / gap).powi(2);
            }
            if let Some(&(a, b)) = omitted.and_then(|o| o.get(r))
                && a > 0.0
            {
                // `1 / (lambda_s - omega_r^2)` at the coupling-weighted mean `lambda = a / b` of
                // the omitted modes (exact where one of them carries the coupling), at most
                // ten times `1 / lambda`: the basis should reach well above `omega_r`.
                let b = b.max(0.0);
                let f = 1.0 / (1.0 - wr * wr * b / a).max(0.1);
                shift += wr * wr * a * f;
                shape += wr * wr * b * f * f;
            }
            let kept = wr * (damping[r] + eta * wr);
            if degenerate || (shift != 0.0 && kept <= 0.0) {
                f64::INFINITY
            } else if shift == 0.0 {
                shape.sqrt()
            } else {
                ((shift / kept).powi(2) + shape).sqrt()
            }
        })
        .collect()
}

/// A cell holding what `c` holds (formed once, shared by the backends derived from it).
pub(super) fn copied<T: Clone>(c: &OnceLock<T>) -> OnceLock<T> {
    match c.get() {
        Some(v) => OnceLock::from(v.clone()),
        None => OnceLock::new(),
    }
}

/// Per forced harmonic of `s`: the modal participation `Phi^T F_h` and the static residual
/// response at the contacts `W Res F_h`.
fn forced_data(
    s: &Structure,
    stat: &StaticResidual,
    phi: MatRef<'_, f64>,
) -> BTreeMap<usize, (Vec<c64>, Vec<c64>)> {
    let (n, m, k) = (s.n, s.m, phi.ncols());
    let mut forced = BTreeMap::new();
    for &h in s.forcing.keys() {
        let f = s.force(h).expect("key of the forcing map");
        let fr = Mat::from_fn(
            n,
            2,
            |i, j| if j == 0 { f[(i, 0)].re } else { f[(i, 0)].im },
        );
        let pf = phi.transpose() * &fr;
        let x = stat.apply(&s.mass, phi, fr.as_ref());
        let wx = real_mul(&s.w, x.as_ref());
        forced.insert(
            h,
            (
                (0..k).map(|r| c64::new(pf[(r, 0)], pf[(r, 1)])).collect(),
                (0..m).map(|i| c64::new(wx[(i, 0)], wx[(i, 1)])).collect(),
            ),
        );
    }
    forced
}

/// Applies the static residual operator `sum_{omitted} phi phi^T / lambda + S`.
struct StaticResidual {
    llt: Cholesky,
    /// Shift of `llt` (0: `llt` factors `K` itself and one term is exact).
    sigma: f64,
    /// Coefficient of `phi_r phi_r^T` to subtract for each retained mode.
    g: Vec<f64>,
}

impl StaticResidual {
    fn apply(
        &self,
        mass: &faer::sparse::SparseColMat<usize, f64>,
        phi: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
    ) -> Mat<f64> {
        let par = super::par();
        let mut x = b.to_owned();
        self.llt.solve_in_place(x.as_mut());
        let mut acc = x.clone();
        if self.sigma != 0.0 {
            let mut sj = 1.0;
            for _ in 0..2 {
                let mut y = super::symmetric_times(mass.as_ref(), x.as_ref());
                self.llt.solve_in_place(y.as_mut());
                sj *= self.sigma;
                acc += sj * &y;
                x = y;
            }
        }
        if phi.ncols() > 0 {
            let mut t = phi.transpose() * b;
            for (r, &g) in self.g.iter().enumerate() {
                t.row_mut(r).iter_mut().for_each(|v| *v *= g);
            }
            faer::linalg::matmul::matmul(acc.as_mut(), Accum::Add, phi, t.as_ref(), -1.0, par);
        }
        acc
    }
}

/// Pattern union of `K` and `M` with a symbolic Cholesky, to factor `K - sigma M` for any
/// `sigma` cheaply.
struct Shifted {
    sym: SymbolicSparseColMat<usize>,
    pattern: CholeskyPattern,
    /// `K`'s and `M`'s values on the union pattern (zero where a matrix has no entry).
    k: Vec<f64>,
    m: Vec<f64>,
}

impl Shifted {
    fn new(s: &Structure) -> Result<Self, ReceptanceError> {
        let _t = crate::profile::span(crate::profile::Phase::Factor);
        // Every diagonal entry is in the pattern, as the factor needs.
        let diag = SparseColMat::new(
            SymbolicSparseColMat::new_checked(
                s.n,
                s.n,
                (0..=s.n).collect(),
                None,
                (0..s.n).collect(),
            ),
            vec![0.0; s.n],
        );
        let k = ewr_model::linear_combination(s.n, &[(&s.k, 1.0), (&s.mass, 0.0), (&diag, 0.0)]);
        let m = ewr_model::values_on(&k, &s.mass);
        let (sym, k) = k.into_parts();
        let ordering = crate::profile::span(crate::profile::Phase::Ordering);
        let pattern = CholeskyPattern::new(sym.as_ref())?;
        drop(ordering);
        Ok(Shifted { sym, pattern, k, m })
    }

    /// Cholesky factor of `K - sigma M`, or `None` if it is not positive definite.
    fn factor(&self, sigma: f64) -> Result<Option<Cholesky>, ReceptanceError> {
        let _t = crate::profile::span(crate::profile::Phase::Factor);
        let vals: Vec<f64> = self
            .k
            .iter()
            .zip(&self.m)
            .map(|(k, m)| k - sigma * m)
            .collect();
        let a = SparseColMat::new(self.sym.clone(), vals);
        self.pattern.factor(a.as_ref())
    }
}

/// Frequency-independent data of the modal backend.
pub(crate) struct ModalBackend {
    /// The retained modes (shared with derived backends).
    pub modes: Arc<Modes>,
    /// What keeping only the diagonal of an explicit damping matrix's projection costs, per
    /// retained mode ([`damping_coupling_errors`]; `None` without an explicit `C`).
    pub coupling: Option<Vec<f64>>,
    lambda: Vec<f64>,
    /// The static residual operator and its factor (shared with derived backends).
    stat: Arc<StaticResidual>,
    /// Per forced harmonic: `Phi^T F_h` and `W Res F_h`.
    forced: BTreeMap<usize, (Vec<c64>, Vec<c64>)>,
    /// Scale of the eigenvalues (`max(lambda_max, tr K / tr M)`), for singularity tests.
    scale: f64,
    /// Columns of the (symmetric) static residual operator for the DOFs recovered so far:
    /// recovering a few DOFs at every frequency point then costs `O(n)` per DOF instead of
    /// sparse solves with the whole factor.
    static_columns: Mutex<HashMap<usize, Arc<Vec<f64>>>>,
    /// The real factors of every `G_h`, shared with the products handed out.
    pub factors: Arc<ContactFactors>,
    /// [`ContactGram`], formed on first use (`None` where it would not fit).
    contact_gram: OnceLock<Option<Arc<ContactGram>>>,
    /// `G_0`, formed on the first use of any frequency's: it depends on neither the frequency
    /// nor a damping shift.
    static_g: OnceLock<Arc<Mat<c64>>>,
}

/// Most contact rows for which the modal backend forms [`ContactGram`] for
/// [`ModalHarmonic::response_norm`] (its `m x m` block: 128 MB); beyond, the response is
/// recovered at every DOF.
const CONTACT_GRAM_MAX_ROWS: usize = 4000;

/// Columns of `S W^T` (and of the modes) solved and multiplied by `M` at a time while
/// [`ContactGram`] is formed: the static solves and the mass products hold a few `n x` this
/// many blocks.
const CONTACT_GRAM_COLUMNS: usize = 64;

/// The response to contact forces alone in the modal receptance's terms: `Q = Phi eta + f_h S
/// W^T r` with `eta = diag(1 / d) (W Phi)^T r` and `S` the static residual operator, so that
/// `Q^H M Q` is a quadratic form in `v = (eta, f_h r)` with the Gram matrix `H` of `[Phi, S
/// W^T]` in `M`. Kept per backend (it does not depend on the frequency); `S W^T` itself is not
/// kept (`n x m`): the value at one DOF reads `W S e_dof` from the cached static columns.
struct ContactGram {
    /// The blocks of `H`: `Phi^T M Phi` (`p x p`), `Phi^T M S W^T` (`p x m`, zero for exact
    /// modes: kept, as the shifted static operator is a truncated series), `W S M S W^T`
    /// (`m x m`).
    phi_m_phi: Mat<f64>,
    phi_m_sw: Mat<f64>,
    sw_m_sw: Mat<f64>,
}

/// The kinetic-energy norm of a harmonic's response to contact forces `r` and its value at one
/// DOF, with their derivatives in `r` ([`crate::receptance::ReceptanceAt::response_norm`]).
#[derive(Clone, Debug)]
pub struct ResponseNorm {
    /// `Q^H M Q`.
    pub norm2: f64,
    /// `Q` at the DOF asked.
    pub at_dof: c64,
    /// `d_norm2` with `d(Q^H M Q) = 2 Re(d_norm2^T dr)`.
    pub d_norm2: Vec<c64>,
    /// `d_at_dof` with `dQ[dof] = d_at_dof^T dr`.
    pub d_at_dof: Vec<c64>,
}

/// The modal receptance's real factors at the contacts: `G_h = W Phi diag(1 / d_r) Phi^T W^T
/// + f_h R + diag(compliance)`, with `d_r` and the scalar `f_h` per harmonic.
pub(crate) struct ContactFactors {
    /// `W Phi` (`m x modes`).
    pub w_phi: Mat<f64>,
    /// The residual flexibility `R` (`m x m`, symmetric).
    pub residual: Mat<f64>,
    /// Series compliance per contact row.
    pub compliance: Vec<f64>,
    /// `W Phi` and `R` as complex matrices, for the complex products and for forming `G_h`.
    pub w_phi_c: Mat<c64>,
    pub residual_c: Mat<c64>,
}

impl ContactFactors {
    /// `G_h = W Phi diag(inv_d) Phi^T W^T + res_factor R + diag(compliance)`, symmetrised (the
    /// modal part's rounding), columns on every thread (one thread took a tenth of a
    /// preconditioner build on the 500-contact sector). `W Phi` is real: the real and imaginary
    /// parts of the modal sum are one real product of `[W Phi Re(D); W Phi Im(D)]` by
    /// `(W Phi)^T`, half the complex product's flops.
    pub fn form_g(&self, inv_d: &[c64], res_factor: c64) -> Mat<c64> {
        let (m, p) = (self.w_phi.nrows(), self.w_phi.ncols());
        let scaled = Mat::<f64>::from_fn(2 * m, p, |i, r| {
            let d = inv_d[r];
            if i < m {
                self.w_phi[(i, r)] * d.re
            } else {
                self.w_phi[(i - m, r)] * d.im
            }
        });
        let g = &scaled * self.w_phi.transpose();
        let mut out = Mat::<c64>::zeros(m, m);
        out.par_col_chunks_mut(SYMMETRISE_COLUMNS)
            .enumerate()
            .for_each(|(c, mut chunk)| {
                for jj in 0..chunk.ncols() {
                    let j = c * SYMMETRISE_COLUMNS + jj;
                    for i in 0..m {
                        let modal = c64::new(
                            0.5 * (g[(i, j)] + g[(j, i)]),
                            0.5 * (g[(m + i, j)] + g[(m + j, i)]),
                        );
                        chunk[(i, jj)] = modal + res_factor * self.residual[(i, j)];
                    }
                }
            });
        for (i, c) in self.compliance.iter().enumerate() {
            out[(i, i)] += c64::new(*c, 0.0);
        }
        out
    }
}

fn real_mul(a: &faer::sparse::SparseColMat<usize, f64>, x: MatRef<'_, f64>) -> Mat<f64> {
    super::sparse_times(a.as_ref(), x)
}

impl ModalBackend {
    pub fn new(s: &Structure, nev: usize) -> Result<Self, ReceptanceError> {
        let n = s.n;
        let mut tr_k = 0.0;
        let mut tr_m = 0.0;
        let mut rank_bound = 0;
        for j in 0..n {
            let mjj = diag(&s.mass, j);
            tr_k += diag(&s.k, j);
            tr_m += mjj;
            if mjj != 0.0 {
                rank_bound += 1;
            }
        }
        let lam_scale = if tr_m > 0.0 && tr_k > 0.0 {
            tr_k / tr_m
        } else {
            1.0
        };
        let shifted = Shifted::new(s)?;
        let lanczos = |llt: &Cholesky, sigma: f64| {
            let _t = crate::profile::span(crate::profile::Phase::Lanczos);
            lowest_modes(
                &|x: MatMut<'_, f64>| llt.solve_in_place(x),
                llt.entries(),
                s.mass.as_ref(),
                rank_bound,
                nev,
                sigma,
                LANCZOS_TOL,
                block_size(llt.entries()),
            )
        };
        let rigid_tol = RIGID_REL * lam_scale;
        // K positive definite: one factorisation serves the Lanczos and the exact residual.
        let mut spd = None;
        if let Some(llt) = shifted.factor(0.0)? {
            let modes = lanczos(&llt, 0.0)?;
            if modes.lambda.first().is_none_or(|&l| l > rigid_tol) {
                spd = Some((llt, modes));
            }
        }
        let (stat, lm, rigid) = match spd {
            Some((llt, lm)) => {
                let g = lm.lambda.iter().map(|l| 1.0 / l).collect();
                (StaticResidual { llt, sigma: 0.0, g }, lm, 0)
            }
            None => {
                let sigma_l = -SHIFT_REL * lam_scale;
                let llt = shifted.factor(sigma_l)?.ok_or_else(|| {
                    ReceptanceError::Factorization(
                        "K - sigma M is not positive definite (negative stiffness, or a massless \
                         DOF without stiffness)"
                            .into(),
                    )
                })?;
                let mut lm = lanczos(&llt, sigma_l)?;
                if let Some(&l) = lm.lambda.first()
                    && l < -rigid_tol
                {
                    return Err(ReceptanceError::Factorization(format!(
                        "K is not positive semi-definite (eigenvalue {l:e})"
                    )));
                }
                let rigid = lm.lambda.iter().filter(|&&l| l <= rigid_tol).count();
                lm.lambda
                    .iter_mut()
                    .filter(|l| **l <= rigid_tol)
                    .for_each(|l| *l = 0.0);
                let k = lm.lambda.len();
                if k == 0 || (rigid == k && k < rank_bound) {
                    return Err(ReceptanceError::Lanczos(format!(
                        "K is singular and all {k} retained modes are rigid-body modes: retain \
                         more modes than the structure has rigid-body modes"
                    )));
                }
                let lam_k = lm.lambda[k - 1];
                let sigma = if lam_k > 0.0 {
                    -RESIDUAL_SHIFT_REL * lam_k
                } else {
                    sigma_l
                };
                let llt_r = if sigma == sigma_l {
                    llt
                } else {
                    shifted.factor(sigma)?.ok_or_else(|| {
                        ReceptanceError::Factorization("K - sigma M lost definiteness".into())
                    })?
                };
                let g = lm
                    .lambda
                    .iter()
                    .map(|&l| {
                        let d = l - sigma;
                        1.0 / d + sigma / (d * d) + sigma * sigma / (d * d * d)
                    })
                    .collect();
                (
                    StaticResidual {
                        llt: llt_r,
                        sigma,
                        g,
                    },
                    lm,
                    rigid,
                )
            }
        };
        let LanczosModes { lambda, mut phi } = lm;
        let k = lambda.len();
        let omega: Vec<f64> = lambda.iter().map(|l| l.max(0.0).sqrt()).collect();

        // Projected viscous damping (diagonal only) plus modal damping ratios.
        // C is symmetric and FE-sized (tens of entries a row): read once for all the modes.
        let mut cphi = super::symmetric_times(s.c.as_ref(), phi.as_ref());
        if s.explicit_c {
            diagonalise_repeated(&lambda, &mut phi, &mut cphi);
        }
        let zeta = s.modal_zeta.as_deref().unwrap_or(&[]);
        let damping: Vec<f64> = (0..k)
            .map(|r| {
                let proj: f64 = (0..n).map(|i| phi[(i, r)] * cphi[(i, r)]).sum();
                proj + 2.0 * zeta.get(r).copied().unwrap_or(0.0) * omega[r]
            })
            .collect();
        let coupling = s.explicit_c.then(|| {
            let d = phi.transpose() * &cphi;
            // The omitted modes' coupling through the static residual operator: `z_r = R (C
            // phi_r)` sums `phi_s D_sr / lambda_s` over them (`R`'s retained part cancels).
            // None omitted where every mode is retained.
            // In blocks of CHUNK columns, as the residual flexibility's solves (memory).
            let omitted: Option<Vec<(f64, f64)>> = (k < n).then(|| {
                let mut ab = Vec::with_capacity(k);
                for c0 in (0..k).step_by(CHUNK) {
                    let cols = CHUNK.min(k - c0);
                    let y = cphi.as_ref().subcols(c0, cols);
                    let z = stat.apply(&s.mass, phi.as_ref(), y);
                    let mz = super::symmetric_times(s.mass.as_ref(), z.as_ref());
                    ab.extend((0..cols).map(|j| {
                        let (mut a, mut b) = (0.0, 0.0);
                        for i in 0..n {
                            a += y[(i, j)] * z[(i, j)];
                            b += z[(i, j)] * mz[(i, j)];
                        }
                        (a, b)
                    }));
                }
                ab
            });
            damping_coupling_errors(&omega, &damping, d.as_ref(), s.eta, omitted.as_deref())
        });
        let w_phi = real_mul(&s.w, phi.as_ref());

        // Residual flexibility at the contacts, a chunk of W^T columns at a time.
        let residual_span = crate::profile::span(crate::profile::Phase::ResidualFlexibility);
        let m = s.m;
        // With `K` itself factored, `W K^{-1} W^T` is a Gram matrix of forward solves from
        // the contact rows, which reach a fraction of the factor (`gram.rs`); the shifted
        // factor of a singular `K` needs its series, through the whole factor.
        let gram = if stat.sigma == 0.0 {
            // `Y` no larger than half the factor: the solves' own memory, about.
            stat.llt
                .inverse_between(s.w.as_ref(), stat.llt.entries() / 2)
        } else {
            None
        };
        let mut residual = Mat::zeros(m, m);
        let mut c0 = match gram {
            Some(wkw) => {
                let mut wg = w_phi.clone();
                for (r, &g) in stat.g.iter().enumerate() {
                    wg.col_mut(r).iter_mut().for_each(|v| *v *= g);
                }
                residual.copy_from(&wkw);
                faer::linalg::matmul::matmul(
                    residual.as_mut(),
                    Accum::Add,
                    wg.as_ref(),
                    w_phi.transpose(),
                    -1.0,
                    super::par(),
                );
                m
            }
            None => 0,
        };
        while c0 < m {
            let c1 = (c0 + CHUNK).min(m);
            let mut b = Mat::zeros(n, c1 - c0);
            let w = s.w.as_ref();
            for j in 0..n {
                for (i, v) in w.row_idx_of_col(j).zip(w.val_of_col(j)) {
                    if (c0..c1).contains(&i) {
                        b[(j, i - c0)] = *v;
                    }
                }
            }
            let x = stat.apply(&s.mass, phi.as_ref(), b.as_ref());
            let wx = real_mul(&s.w, x.as_ref());
            residual.subcols_mut(c0, c1 - c0).copy_from(&wx);
            c0 = c1;
        }
        let residual = Mat::from_fn(m, m, |i, j| 0.5 * (residual[(i, j)] + residual[(j, i)]));

        // Forced harmonics: modal participation and static residual response at the contacts.
        let forced = forced_data(s, &stat, phi.as_ref());
        drop(residual_span);
        let scale = lambda.iter().fold(lam_scale, |a, &l| a.max(l));
        let to_c =
            |a: &Mat<f64>| Mat::from_fn(a.nrows(), a.ncols(), |i, j| c64::new(a[(i, j)], 0.0));
        let factors = Arc::new(ContactFactors {
            w_phi: w_phi.clone(),
            residual: residual.clone(),
            compliance: s.compliance.clone(),
            w_phi_c: to_c(&w_phi),
            residual_c: to_c(&residual),
        });
        Ok(ModalBackend {
            modes: Arc::new(Modes {
                omega,
                phi,
                w_phi,
                damping,
                residual,
                rigid_body_modes: rigid,
            }),
            coupling,
            lambda,
            stat: Arc::new(stat),
            forced,
            scale,
            static_columns: Mutex::new(HashMap::new()),
            factors,
            contact_gram: OnceLock::new(),
            static_g: OnceLock::new(),
        })
    }

    /// This backend under another forcing (`s`, whose dynamics the caller has checked): all
    /// but the forced harmonics' data shared or copied, that data solved anew.
    pub fn with_forcing(&self, s: &Structure) -> ModalBackend {
        // Copied in a statement of its own: no lock held across the solves on the pool.
        let columns = self
            .static_columns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        ModalBackend {
            modes: Arc::clone(&self.modes),
            coupling: self.coupling.clone(),
            lambda: self.lambda.clone(),
            stat: Arc::clone(&self.stat),
            forced: forced_data(s, &self.stat, self.modes.phi.as_ref()),
            scale: self.scale,
            static_columns: Mutex::new(columns),
            factors: Arc::clone(&self.factors),
            contact_gram: copied(&self.contact_gram),
            static_g: copied(&self.static_g),
        }
    }

    /// [`ContactGram`], formed on first use: two static solves per contact row (`S W^T` and
    /// `S M S W^T`, a block of columns at a time) and the mass products; `None` beyond
    /// [`CONTACT_GRAM_MAX_ROWS`].
    fn contact_gram(&self, s: &Structure) -> Option<Arc<ContactGram>> {
        if let Some(gram) = self.contact_gram.get() {
            return gram.clone();
        }
        // Formed outside the cell's lock, as `G_h` is ([`ModalHarmonic::g`]): the static
        // solves run on the thread pool, and a worker waiting inside `get_or_init` could take
        // a task asking for the same cell. Two that race form the same bits.
        let _ = self.contact_gram.set(self.form_contact_gram(s));
        self.contact_gram.get().cloned().flatten()
    }

    /// [`ContactGram`] formed (see [`Self::contact_gram`]).
    fn form_contact_gram(&self, s: &Structure) -> Option<Arc<ContactGram>> {
        let (n, m) = (s.n, s.m);
        if m > CONTACT_GRAM_MAX_ROWS {
            return None;
        }
        let phi = self.modes.phi.as_ref();
        let p = phi.ncols();
        let (mut phi_m_sw, mut sw_m_sw) = (Mat::zeros(p, m), Mat::zeros(m, m));
        for j0 in (0..m).step_by(CONTACT_GRAM_COLUMNS) {
            let c = CONTACT_GRAM_COLUMNS.min(m - j0);
            let mut wt = Mat::<f64>::zeros(n, c);
            for t in s.w.triplet_iter() {
                if (j0..j0 + c).contains(&t.row) {
                    wt[(t.col, t.row - j0)] += *t.val;
                }
            }
            let sw = self.stat.apply(&s.mass, phi, wt.as_ref());
            let m_sw = super::symmetric_times(s.mass.as_ref(), sw.as_ref());
            phi_m_sw
                .submatrix_mut(0, j0, p, c)
                .copy_from(phi.transpose() * &m_sw);
            let s_m_sw = self.stat.apply(&s.mass, phi, m_sw.as_ref());
            sw_m_sw
                .submatrix_mut(0, j0, m, c)
                .copy_from(super::sparse_times(s.w.as_ref(), s_m_sw.as_ref()));
        }
        let mut phi_m_phi = Mat::zeros(p, p);
        for j0 in (0..p).step_by(CONTACT_GRAM_COLUMNS) {
            let c = CONTACT_GRAM_COLUMNS.min(p - j0);
            let m_phi = super::symmetric_times(s.mass.as_ref(), phi.submatrix(0, j0, n, c));
            phi_m_phi
                .submatrix_mut(0, j0, p, c)
                .copy_from(phi.transpose() * &m_phi);
        }
        Some(Arc::new(ContactGram {
            phi_m_phi,
            phi_m_sw,
            sw_m_sw,
        }))
    }

    /// Columns `dofs` of the static residual operator, computed (in one multi-column solve)
    /// for the DOFs not seen before.
    fn static_columns(&self, s: &Structure, dofs: &[usize]) -> Vec<Arc<Vec<f64>>> {
        let lock = || {
            self.static_columns
                .lock()
                .unwrap_or_else(|e| e.into_inner())
        };
        let mut missing: Vec<usize> = {
            let cache = lock();
            dofs.iter()
                .copied()
                .filter(|d| !cache.contains_key(d))
                .collect()
        };
        missing.sort_unstable();
        missing.dedup();
        // Solved without the lock: the solve runs on the thread pool, and a worker holding
        // the lock while it waits could take a task that asks for it (a deadlock). Of two
        // that race, the first to finish keeps its columns.
        if !missing.is_empty() {
            let e = Mat::from_fn(
                s.n,
                missing.len(),
                |i, j| {
                    if i == missing[j] { 1.0 } else { 0.0 }
                },
            );
            let x = self
                .stat
                .apply(&s.mass, self.modes.phi.as_ref(), e.as_ref());
            let mut cache = lock();
            for (j, &d) in missing.iter().enumerate() {
                cache
                    .entry(d)
                    .or_insert_with(|| Arc::new((0..s.n).map(|i| x[(i, j)]).collect()));
            }
        }
        let cache = lock();
        dofs.iter().map(|d| Arc::clone(&cache[d])).collect()
    }

    /// Harmonic `h` at `w`, with `-xi` on every modal damping (`-xi M` on the structure;
    /// 0 for the structure as it is).
    pub fn harmonic(
        &self,
        s: &Structure,
        w: f64,
        h: usize,
        xi: f64,
    ) -> Result<ModalHarmonic, ReceptanceError> {
        let om = h as f64 * w;
        let eta = s.eta_h(h);
        let tiny = 1e-13 * self.scale.max(om * om);
        let mut inv_d = Vec::with_capacity(self.lambda.len());
        for (&l, &c) in self.lambda.iter().zip(&self.modes.damping) {
            let d = c64::new(l - om * om, eta * l + om * (c - xi));
            if d.norm() <= tiny {
                return Err(ReceptanceError::Singular {
                    harmonic: h,
                    frequency: w,
                });
            }
            inv_d.push(d.inv());
        }
        Ok(ModalHarmonic {
            inv_d,
            res_factor: c64::new(1.0, eta + om * s.rayleigh_beta).inv(),
            g: OnceLock::new(),
            is_static: h == 0,
        })
    }
}

fn diag(a: &faer::sparse::SparseColMat<usize, f64>, j: usize) -> f64 {
    let a = a.as_ref();
    a.row_idx_of_col(j)
        .zip(a.val_of_col(j))
        .filter(|(i, _)| *i == j)
        .map(|(_, v)| *v)
        .sum()
}

/// Columns per task where `G_h` is formed.
const SYMMETRISE_COLUMNS: usize = 32;

/// Per-harmonic data of the modal backend.
pub(crate) struct ModalHarmonic {
    inv_d: Vec<c64>,
    res_factor: c64,
    g: OnceLock<Arc<Mat<c64>>>,
    /// `h = 0`: `G_0` depends on neither `w` nor a damping shift (`d_r = lambda_r`, hysteretic
    /// damping acting on `h > 0` only), and is shared through [`ModalBackend`]'s cache.
    is_static: bool,
}

impl ModalHarmonic {
    /// `1 / d_r` per mode.
    pub fn inv_d(&self) -> &[c64] {
        &self.inv_d
    }

    /// The residual flexibility's factor `f_h`.
    pub fn res_factor(&self) -> c64 {
        self.res_factor
    }

    /// `G_h`, formed on first use (`G_0` once per backend: every evaluation of a nonlinear
    /// mode, at a new `w` and `xi`, formed it again).
    pub fn g(&self, b: &ModalBackend) -> &Mat<c64> {
        if let Some(g) = self.g.get() {
            return g;
        }
        // Formed outside the cells' locks: forming runs on the thread pool, and a worker
        // waiting inside `get_or_init` could take a task (another curve, a study case) that
        // asks for the same cell: a reentrant initialisation, a deadlock. Two that race form
        // the same bits.
        let cached = if self.is_static {
            b.static_g.get().cloned()
        } else {
            None
        };
        let g = cached.unwrap_or_else(|| {
            let g = Arc::new(b.factors.form_g(&self.inv_d, self.res_factor));
            if self.is_static {
                let _ = b.static_g.set(Arc::clone(&g));
            }
            g
        });
        let _ = self.g.set(g);
        self.g.get().expect("set above")
    }

    /// The `size x size` diagonal block of `G_h` starting at row and column `first`,
    /// without forming `G_h` (`O(size^2 modes)`).
    pub fn block(&self, b: &ModalBackend, first: usize, size: usize) -> Mat<c64> {
        let wp = b.factors.w_phi_c.as_ref();
        Mat::from_fn(size, size, |i, j| {
            let (ri, rj) = (first + i, first + j);
            let modal: c64 = (0..self.inv_d.len())
                .map(|r| wp[(ri, r)] * wp[(rj, r)] * self.inv_d[r])
                .sum();
            modal + self.res_factor * b.factors.residual_c[(ri, rj)]
        })
    }

    /// `out = G_h x` without forming `G_h`.
    pub fn apply(&self, b: &ModalBackend, x: MatRef<'_, c64>, mut out: MatMut<'_, c64>) {
        let par = super::par();
        let mut t = b.factors.w_phi_c.transpose() * x;
        for (r, &d) in self.inv_d.iter().enumerate() {
            t.row_mut(r).iter_mut().for_each(|v| *v *= d);
        }
        faer::linalg::matmul::matmul(
            out.rb_mut(),
            Accum::Replace,
            b.factors.w_phi_c.as_ref(),
            t.as_ref(),
            c64::new(1.0, 0.0),
            par,
        );
        faer::linalg::matmul::matmul(
            out,
            Accum::Add,
            b.factors.residual_c.as_ref(),
            x,
            self.res_factor,
            par,
        );
    }

    /// `W Z_h^{-1} F_h` (zeros when harmonic `h` is not forced).
    pub fn forced(&self, b: &ModalBackend, s: &Structure, h: usize) -> Vec<c64> {
        let Some((pf, wres)) = b.forced.get(&h) else {
            return vec![c64::new(0.0, 0.0); s.m];
        };
        (0..s.m)
            .map(|i| {
                let modal: c64 = (0..pf.len())
                    .map(|r| b.factors.w_phi_c[(i, r)] * self.inv_d[r] * pf[r])
                    .sum();
                modal + self.res_factor * wres[i]
            })
            .collect()
    }

    /// [`ResponseNorm`] of the response `Q = Z_h^{-1} W^T r` to the contact forces `r` alone,
    /// from modal coordinates and the backend's [`ContactGram`] (`O(m p + m^2)`, where
    /// recovering every DOF costs a static solve); `None` where the backend keeps no Gram.
    pub fn response_norm(
        &self,
        mb: &ModalBackend,
        s: &Structure,
        r: &[c64],
        dof: usize,
    ) -> Option<ResponseNorm> {
        let gram = mb.contact_gram(s)?;
        let (wphi, phi) = (&mb.modes.w_phi, &mb.modes.phi);
        // `(S W^T)[dof, :] = (W S e_dof)^T`, `S` symmetric: one cached static column.
        let column = &mb.static_columns(s, &[dof])[0];
        let mut sw_row = vec![0.0; r.len()];
        for t in s.w.triplet_iter() {
            sw_row[t.row] += *t.val * column[t.col];
        }
        let (p, m, f) = (self.inv_d.len(), r.len(), self.res_factor);
        let eta: Vec<c64> = (0..p)
            .map(|k| self.inv_d[k] * (0..m).map(|i| r[i] * wphi[(i, k)]).sum::<c64>())
            .collect();
        let fr: Vec<c64> = r.iter().map(|&x| f * x).collect();
        // `H conj(v)`, `v = (eta, f r)`.
        let (ce, cf): (Vec<c64>, Vec<c64>) = (
            eta.iter().map(|x| x.conj()).collect(),
            fr.iter().map(|x| x.conj()).collect(),
        );
        let top: Vec<c64> = (0..p)
            .map(|k| {
                (0..p).map(|l| ce[l] * gram.phi_m_phi[(k, l)]).sum::<c64>()
                    + (0..m).map(|i| cf[i] * gram.phi_m_sw[(k, i)]).sum::<c64>()
            })
            .collect();
        let bottom: Vec<c64> = (0..m)
            .map(|i| {
                (0..p).map(|k| ce[k] * gram.phi_m_sw[(k, i)]).sum::<c64>()
                    + (0..m).map(|j| cf[j] * gram.sw_m_sw[(i, j)]).sum::<c64>()
            })
            .collect();
        let norm2 = (eta.iter().zip(&top).map(|(a, b)| a * b).sum::<c64>()
            + fr.iter().zip(&bottom).map(|(a, b)| a * b).sum::<c64>())
        .re;
        // The derivatives: `L^T (H conj v)` and `L^T e`, `L = [diag(1 / d) (W Phi)^T; f I]`.
        let through = |t: &dyn Fn(usize) -> c64, tail: &dyn Fn(usize) -> c64| -> Vec<c64> {
            (0..m)
                .map(|i| {
                    (0..p)
                        .map(|k| wphi[(i, k)] * self.inv_d[k] * t(k))
                        .sum::<c64>()
                        + f * tail(i)
                })
                .collect()
        };
        let d_norm2 = through(&|k| top[k], &|i| bottom[i]);
        let d_at_dof = through(&|k| c64::new(phi[(dof, k)], 0.0), &|i| {
            c64::new(sw_row[i], 0.0)
        });
        let at_dof = (0..p).map(|k| eta[k] * phi[(dof, k)]).sum::<c64>()
            + (0..m).map(|i| fr[i] * sw_row[i]).sum::<c64>();
        Some(ResponseNorm {
            norm2,
            at_dof,
            d_norm2,
            d_at_dof,
        })
    }

    /// [`recover`](Self::recover) for several harmonics at once, `(harmonic, b)` pairs: one
    /// static residual solve for all their right-hand sides, which reads the factor once
    /// instead of once per harmonic.
    pub fn recover_many(
        mb: &ModalBackend,
        s: &Structure,
        parts: &[(&ModalHarmonic, Mat<c64>)],
    ) -> Vec<Mat<c64>> {
        let n = s.n;
        let k = parts.len();
        let br = Mat::from_fn(n, 2 * k, |i, j| {
            let b = parts[j / 2].1[(i, 0)];
            if j % 2 == 0 { b.re } else { b.im }
        });
        let phi = mb.modes.phi.as_ref();
        let pb = phi.transpose() * &br;
        let x = mb.stat.apply(&s.mass, phi, br.as_ref());
        parts
            .iter()
            .enumerate()
            .map(|(j, (hd, _))| {
                let q: Vec<c64> = (0..phi.ncols())
                    .map(|r| hd.inv_d[r] * c64::new(pb[(r, 2 * j)], pb[(r, 2 * j + 1)]))
                    .collect();
                Mat::from_fn(n, 1, |i, _| {
                    let modal: c64 = (0..q.len()).map(|r| phi[(i, r)] * q[r]).sum();
                    modal + hd.res_factor * c64::new(x[(i, 2 * j)], x[(i, 2 * j + 1)])
                })
            })
            .collect()
    }

    /// `Z_h^{-1} b` by modal sum plus static residual (`b` is `n x 1`).
    pub fn recover(&self, mb: &ModalBackend, s: &Structure, b: Mat<c64>) -> Mat<c64> {
        let n = b.nrows();
        let br = Mat::from_fn(
            n,
            2,
            |i, j| if j == 0 { b[(i, 0)].re } else { b[(i, 0)].im },
        );
        let phi = mb.modes.phi.as_ref();
        let pb = phi.transpose() * &br;
        let q: Vec<c64> = (0..phi.ncols())
            .map(|r| self.inv_d[r] * c64::new(pb[(r, 0)], pb[(r, 1)]))
            .collect();
        let x = mb.stat.apply(&s.mass, phi, br.as_ref());
        Mat::from_fn(n, 1, |i, _| {
            let modal: c64 = (0..q.len()).map(|r| phi[(i, r)] * q[r]).sum();
            modal + self.res_factor * c64::new(x[(i, 0)], x[(i, 1)])
        })
    }

    /// `Z_h^{-1} b` at the DOFs `dofs` only: the modal sum at those rows plus the static
    /// residual through its cached columns (the operator is symmetric), without a solve once
    /// the columns are known.
    pub fn recover_at(
        &self,
        mb: &ModalBackend,
        s: &Structure,
        b: &Mat<c64>,
        dofs: &[usize],
    ) -> Vec<c64> {
        let phi = mb.modes.phi.as_ref();
        let nz: Vec<(usize, c64)> = (0..b.nrows())
            .filter(|&i| b[(i, 0)] != c64::new(0.0, 0.0))
            .map(|i| (i, b[(i, 0)]))
            .collect();
        let q: Vec<c64> = (0..phi.ncols())
            .map(|r| {
                let pb: c64 = nz.iter().map(|&(i, v)| v * phi[(i, r)]).sum();
                self.inv_d[r] * pb
            })
            .collect();
        let cols = mb.static_columns(s, dofs);
        dofs.iter()
            .zip(&cols)
            .map(|(&i, col)| {
                let modal: c64 = (0..q.len()).map(|r| phi[(i, r)] * q[r]).sum();
                let stat: c64 = nz.iter().map(|&(j, v)| v * col[j]).sum();
                modal + self.res_factor * stat
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_from_the_real_modal_product_is_the_complex_sum_and_symmetric() {
        // `G_h = U diag(d) U^T + f R + diag(c)` term by term in complex arithmetic, against
        // `form_g`'s one real product of the stacked real and imaginary parts.
        let (m, p) = (37, 11);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let w_phi = Mat::<f64>::from_fn(m, p, |_, _| random());
        let half = Mat::<f64>::from_fn(m, m, |_, _| random());
        let residual = Mat::<f64>::from_fn(m, m, |i, j| half[(i, j)] + half[(j, i)]);
        let compliance: Vec<f64> = (0..m).map(|_| random().abs()).collect();
        let inv_d: Vec<c64> = (0..p).map(|_| c64::new(random(), random())).collect();
        let f = c64::new(0.3, -0.7);
        let factors = ContactFactors {
            w_phi_c: Mat::from_fn(m, p, |i, j| c64::new(w_phi[(i, j)], 0.0)),
            residual_c: Mat::from_fn(m, m, |i, j| c64::new(residual[(i, j)], 0.0)),
            w_phi,
            residual,
            compliance,
        };
        let g = factors.form_g(&inv_d, f);
        let mut worst = 0.0f64;
        for i in 0..m {
            for j in 0..m {
                let modal: c64 = (0..p)
                    .map(|r| inv_d[r] * factors.w_phi[(i, r)] * factors.w_phi[(j, r)])
                    .sum();
                let diag = if i == j { factors.compliance[i] } else { 0.0 };
                let want = modal + f * factors.residual[(i, j)] + c64::new(diag, 0.0);
                worst = worst.max((g[(i, j)] - want).norm());
                assert_eq!(g[(i, j)], g[(j, i)], "({i}, {j})");
            }
        }
        assert!(worst < 1e-14, "{worst:e}");
    }
}
