//! Eigenvalues and eigenvectors of Arnoldi's projected matrix, for one vector a step.
//!
//! The Ritz test needs the eigenvalues of the `m x m` upper Hessenberg `H` and the
//! eigenvectors of only those nearest the shift, until one fails to converge (docs/stability.md,
//! "Ritz values"). On the small pencils that is tens of vectors: inverse iteration on
//! `H - theta I` costs `O(m^2)` for each, where a full eigendecomposition accumulates the Schur
//! vectors and back-substitutes every eigenvector. Block Arnoldi (large pencils, hundreds of
//! vectors read) takes them all from faer's eigendecomposition instead (`Pencil::ritz`).
//! [`eigenvector`] also takes a block Hessenberg `H` (lower bandwidth `b`, `O(b m^2)`);
//! [`eigenvalues`] needs `b = 1`.

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

/// The eigenvalues of the upper Hessenberg `h` (zero below its first subdiagonal), by the
/// Francis double-shift QR iteration on `h` as it is: no reduction to Hessenberg form (faer's
/// eigensolve starts with one) and, for eigenvalues alone, each sweep touches the active
/// block only. Arnoldi's one-vector checks at `m` of 60 and 90 took 2 and 5-6 ms with faer's;
/// this takes about half (random Hessenberg matrices; slower than faer's blocked QR from
/// about 200 rows, which is why [`HQR_UP_TO`] bounds its use). `None` where an eigenvalue
/// needs more than 30 sweeps or one is not finite (the caller falls back to faer).
///
/// The classical formulation (EISPACK's `hqr`): deflate where a subdiagonal entry is
/// negligible next to its diagonal neighbours, take a 1 x 1 or 2 x 2 block off the bottom,
/// else one double-shift sweep on the active window (EISPACK's exceptional shifts after 10
/// and 20 sweeps).
pub(super) fn eigenvalues(h: MatRef<'_, f64>) -> Option<Vec<c64>> {
    let n = h.nrows();
    debug_assert_eq!(n, h.ncols());
    let mut a: Vec<f64> = (0..n * n).map(|k| h[(k % n, k / n)]).collect();
    let at = |i: usize, j: usize| i + j * n;
    let mut out = vec![c64::new(0.0, 0.0); n];
    let mut norm = 0.0f64;
    for j in 0..n {
        for i in 0..n.min(j + 2) {
            norm += a[at(i, j)].abs();
        }
    }
    // `hi`: the active window's last row plus one; `t`: the exceptional shifts' sum.
    let mut hi = n;
    let mut t = 0.0f64;
    let mut sweeps = 0;
    while hi > 0 {
        let last = hi - 1;
        // The window's first row: above it a negligible subdiagonal entry.
        let mut lo = last;
        while lo > 0 {
            let mut s = a[at(lo - 1, lo - 1)].abs() + a[at(lo, lo)].abs();
            if s == 0.0 {
                s = norm;
            }
            if a[at(lo, lo - 1)].abs() + s == s {
                a[at(lo, lo - 1)] = 0.0;
                break;
            }
            lo -= 1;
        }
        let x = a[at(last, last)];
        if lo == last {
            out[last] = c64::new(x + t, 0.0);
            hi -= 1;
            sweeps = 0;
            continue;
        }
        let y = a[at(last - 1, last - 1)];
        let w = a[at(last, last - 1)] * a[at(last - 1, last)];
        if lo == last - 1 {
            let p = 0.5 * (y - x);
            let q = p * p + w;
            let z = q.abs().sqrt();
            let x = x + t;
            if q >= 0.0 {
                let z = p + z.copysign(p);
                out[last - 1] = c64::new(x + z, 0.0);
                out[last] = c64::new(if z != 0.0 { x - w / z } else { x + z }, 0.0);
            } else {
                out[last - 1] = c64::new(x + p, z);
                out[last] = c64::new(x + p, -z);
            }
            hi -= 2;
            sweeps = 0;
            continue;
        }
        if sweeps == 30 {
            return None;
        }
        let (mut x, mut y, mut w) = (x, y, w);
        if sweeps == 10 || sweeps == 20 {
            t += x;
            for i in 0..hi {
                a[at(i, i)] -= x;
            }
            let s = a[at(last, last - 1)].abs() + a[at(last - 1, last - 2)].abs();
            x = 0.75 * s;
            y = x;
            w = -0.4375 * s * s;
        }
        sweeps += 1;
        // Where the sweep starts: the lowest row from which the bulge's first column is
        // negligibly coupled to the row above.
        let mut k0 = last - 2;
        let (mut p, mut q, mut r);
        loop {
            let z = a[at(k0, k0)];
            let (r0, s0) = (x - z, y - z);
            p = (r0 * s0 - w) / a[at(k0 + 1, k0)] + a[at(k0, k0 + 1)];
            q = a[at(k0 + 1, k0 + 1)] - z - r0 - s0;
            r = a[at(k0 + 2, k0 + 1)];
            let s = p.abs() + q.abs() + r.abs();
            p /= s;
            q /= s;
            r /= s;
            if k0 == lo {
                break;
            }
            let u = a[at(k0, k0 - 1)].abs() * (q.abs() + r.abs());
            let v = p.abs() * (a[at(k0 - 1, k0 - 1)].abs() + z.abs() + a[at(k0 + 1, k0 + 1)].abs());
            if u + v == v {
                break;
            }
            k0 -= 1;
        }
        for i in k0 + 2..hi {
            a[at(i, i - 2)] = 0.0;
            if i != k0 + 2 {
                a[at(i, i - 3)] = 0.0;
            }
        }
        // The bulge chased down the window by 3 x 3 Householder reflections.
        for k in k0..last {
            let mut scale = 0.0;
            if k != k0 {
                p = a[at(k, k - 1)];
                q = a[at(k + 1, k - 1)];
                r = if k != last - 1 {
                    a[at(k + 2, k - 1)]
                } else {
                    0.0
                };
                scale = p.abs() + q.abs() + r.abs();
                if scale != 0.0 {
                    p /= scale;
                    q /= scale;
                    r /= scale;
                }
            }
            let s = (p * p + q * q + r * r).sqrt().copysign(p);
            if s == 0.0 {
                continue;
            }
            if k == k0 {
                if lo != k0 {
                    a[at(k, k - 1)] = -a[at(k, k - 1)];
                }
            } else {
                a[at(k, k - 1)] = -s * scale;
            }
            p += s;
            let (vx, vy, vz) = (p / s, q / s, r / s);
            q /= p;
            r /= p;
            for j in k..hi {
                let mut d = a[at(k, j)] + q * a[at(k + 1, j)];
                if k != last - 1 {
                    d += r * a[at(k + 2, j)];
                    a[at(k + 2, j)] -= d * vz;
                }
                a[at(k + 1, j)] -= d * vy;
                a[at(k, j)] -= d * vx;
            }
            for i in lo..=last.min(k + 3) {
                let mut d = vx * a[at(i, k)] + vy * a[at(i, k + 1)];
                if k != last - 1 {
                    d += vz * a[at(i, k + 2)];
                    a[at(i, k + 2)] -= d * r;
                }
                a[at(i, k + 1)] -= d * q;
                a[at(i, k)] -= d;
            }
        }
    }
    out.iter()
        .all(|z| z.re.is_finite() && z.im.is_finite())
        .then_some(out)
}

/// Rows up to which [`eigenvalues`] is used instead of faer's eigensolve.
pub(super) const HQR_UP_TO: usize = 150;

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
    /// The Francis QR's eigenvalues against faer's on random Hessenberg matrices, and exact
    /// ones on a block triangular matrix with known real eigenvalues and complex pairs.
    #[test]
    fn francis_qr_gives_the_eigenvalues_of_a_hessenberg_matrix() {
        let mut r = super::super::xorshift(0x2545_f491_4f6c_dd1d);
        for m in [1, 2, 3, 7, 40, 61, 90, 140] {
            let h = Mat::<f64>::from_fn(m, m, |i, j| if i > j + 1 { 0.0 } else { r() });
            let mine = eigenvalues(h.as_ref()).expect("converged");
            let theirs = h.eigenvalues().unwrap();
            let scale = theirs.iter().map(|z| z.norm()).fold(0.0, f64::max);
            // Each of faer's has one of ours nearby and the other way round (the random
            // matrices' eigenvalues are ill-conditioned: agreement to 1e-11 of the largest at
            // 140 rows, 1e-13 at 90).
            for (a, b) in [(&mine, &theirs), (&theirs, &mine)] {
                for z in a.iter() {
                    let d = b
                        .iter()
                        .map(|w| (z - w).norm())
                        .fold(f64::INFINITY, f64::min);
                    assert!(d <= 1e-9 * scale, "m = {m}: {z} is {d:e} from the nearest");
                }
            }
            let sum: c64 = mine.iter().sum();
            let trace: f64 = (0..m).map(|i| h[(i, i)]).sum();
            assert!((sum.re - trace).abs() < 1e-10 * scale * m as f64 && sum.im.abs() < 1e-9);
        }
        // Block upper triangular with 2 x 2 blocks [[a, b], [-b, a]] (eigenvalues a +- i b)
        // and 1 x 1 blocks, a dense upper part: Hessenberg with known eigenvalues.
        let known = [
            (0.5, 2.0),
            (-1.0, 0.0),
            (3.0, 0.25),
            (0.0, 0.0),
            (-2.0, 1.0),
        ];
        let m: usize = known
            .iter()
            .map(|&(_, b)| if b == 0.0 { 1 } else { 2 })
            .sum();
        let mut h = Mat::<f64>::from_fn(m, m, |i, j| if j > i { r() } else { 0.0 });
        let mut at = 0;
        for &(a, b) in &known {
            h[(at, at)] = a;
            if b != 0.0 {
                h[(at, at + 1)] = b;
                h[(at + 1, at)] = -b;
                h[(at + 1, at + 1)] = a;
                at += 2;
            } else {
                at += 1;
            }
        }
        let mine = eigenvalues(h.as_ref()).expect("converged");
        for &(a, b) in &known {
            for z in [c64::new(a, b), c64::new(a, -b)] {
                let d = mine
                    .iter()
                    .map(|w| (z - w).norm())
                    .fold(f64::INFINITY, f64::min);
                assert!(d < 1e-12, "{z} is {d:e} from the nearest");
            }
        }
    }
}
