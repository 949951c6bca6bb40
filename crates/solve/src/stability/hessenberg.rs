//! Eigenvectors of Arnoldi's projected matrix, one eigenvalue at a time.
//!
//! The Ritz test needs the eigenvalues of the `m x m` block upper Hessenberg `H` and the
//! eigenvectors of only those nearest the shift, until one fails to converge (docs/stability.md,
//! "Ritz values"). A full eigendecomposition accumulates the Schur vectors and back-substitutes
//! every eigenvector, `O(m^3)` several times over; inverse iteration on `H - theta I`, whose
//! lower bandwidth is the block size `b`, costs `O(b m^2)` for each eigenvector asked for.

use faer::{MatRef, c64};

/// The unit eigenvector of `h` (zero below its `band`-th subdiagonal) for its eigenvalue
/// `theta`, by two steps of inverse iteration on `h - theta I` (`work` is reused between calls).
///
/// `theta` is an eigenvalue to rounding, so `h - theta I` is singular to rounding and one solve
/// from any start is the eigenvector to about the eigenvalue's condition times the rounding;
/// a second solve removes what the start's other components left. A pivot that is zero to
/// rounding is replaced by `eps ||h||`, as LAPACK's `dlaein` does.
pub(super) fn eigenvector(
    h: MatRef<'_, f64>,
    band: usize,
    theta: c64,
    work: &mut Vec<c64>,
) -> Vec<c64> {
    let m = h.nrows();
    debug_assert_eq!(m, h.ncols());
    let band = band.max(1);
    // Row-major: the elimination and the back substitution read rows.
    work.clear();
    work.resize(m * m, c64::new(0.0, 0.0));
    let mut norm = 0.0f64;
    for i in 0..m {
        for j in i.saturating_sub(band)..m {
            let v = h[(i, j)];
            norm = norm.max(v.abs());
            work[i * m + j] = c64::new(v, 0.0);
        }
        work[i * m + i] -= theta;
    }
    let tiny = f64::EPSILON * norm.max(theta.norm()).max(f64::MIN_POSITIVE);
    // LU with row pivoting among the `band` rows below the diagonal: `L` keeps that bandwidth.
    let mut pivots = vec![0usize; m];
    for j in 0..m {
        let last = (j + band).min(m - 1);
        let p = (j..=last)
            .max_by(|&a, &b| work[a * m + j].norm().total_cmp(&work[b * m + j].norm()))
            .expect("a nonempty range");
        pivots[j] = p;
        if p != j {
            for k in j..m {
                work.swap(j * m + k, p * m + k);
            }
        }
        if work[j * m + j].norm() < tiny {
            work[j * m + j] = c64::new(tiny, 0.0);
        }
        let pivot = work[j * m + j];
        for i in j + 1..=last {
            let l = work[i * m + j] / pivot;
            work[i * m + j] = l;
            if l != c64::new(0.0, 0.0) {
                let (upper, lower) = work.split_at_mut(i * m);
                let row_j = &upper[j * m + j + 1..j * m + m];
                for (x, &u) in lower[j + 1..m].iter_mut().zip(row_j) {
                    *x -= l * u;
                }
            }
        }
    }
    let mut y = vec![c64::new(1.0, 0.0); m];
    for _ in 0..2 {
        // L, with the row exchanges in the order they were made.
        for j in 0..m {
            y.swap(j, pivots[j]);
            let yj = y[j];
            for i in j + 1..=(j + band).min(m - 1) {
                y[i] -= work[i * m + j] * yj;
            }
        }
        // U.
        for i in (0..m).rev() {
            let row = &work[i * m + i + 1..i * m + m];
            let s: c64 = row.iter().zip(&y[i + 1..]).map(|(&u, &x)| u * x).sum();
            y[i] = (y[i] - s) / work[i * m + i];
        }
        let scale = y.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        if !(scale.is_finite() && scale > 0.0) {
            break;
        }
        for z in &mut y {
            *z /= scale;
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    /// Eigenvectors of random block Hessenberg matrices (blocks 1 and 3) for each of faer's
    /// eigenvalues, complex and real: unit, with the residual `||H y - theta y||` at rounding.
    #[test]
    fn inverse_iteration_gives_the_eigenvectors_of_a_block_hessenberg_matrix() {
        let mut r = super::super::xorshift(0x9e37_79b9_7f4a_7c15);
        for (m, band) in [(40, 1), (61, 3), (7, 1), (1, 1)] {
            let h = Mat::<f64>::from_fn(m, m, |i, j| if i > j + band { 0.0 } else { r() });
            let thetas = h.eigenvalues().unwrap();
            let mut work = Vec::new();
            let scale = h.norm_max();
            for &theta in &thetas {
                let y = eigenvector(h.as_ref(), band, theta, &mut work);
                let norm: f64 = y.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
                assert!((norm - 1.0).abs() < 1e-12, "unit vector, got {norm}");
                let residual = (0..m)
                    .map(|i| {
                        let hy: c64 = (0..m).map(|j| y[j] * h[(i, j)]).sum();
                        (hy - theta * y[i]).norm_sqr()
                    })
                    .sum::<f64>()
                    .sqrt();
                assert!(
                    residual < 1e-10 * scale,
                    "m = {m}, band = {band}, theta = {theta}: residual {residual:e}"
                );
            }
        }
    }
}
