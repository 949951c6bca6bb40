//! Powell's dogleg step inside the trust region, from one linearisation's Newton step,
//! gradient and stored products.

use super::{Linearization, dot, norm};

/// A dogleg step and `||g + J p||^2`, the squared residual the linear model predicts.
pub(super) struct Step {
    pub(super) p: Vec<f64>,
    pub(super) model_norm_sq: f64,
}

/// Powell's dogleg: Newton if inside the radius, else Cauchy-to-Newton on the boundary; the
/// steepest-descent step alone when there is no Newton step. `J p` is combined from the
/// stored `J p_N` and `J grad`, so no product is needed here.
pub(super) fn dogleg(lin: &Linearization, g: &[f64], radius: f64) -> Step {
    let n = g.len();
    let grad = &lin.grad;
    let grad_sq = dot(grad, grad);
    let jg_sq = dot(&lin.j_grad, &lin.j_grad);
    let cauchy_len = if jg_sq > 0.0 { grad_sq / jg_sq } else { 0.0 };
    // p = a * grad + b * p_N, J p = a * J grad + b * J p_N.
    let (a, b) = match &lin.newton {
        Some(pn) if norm(pn) <= radius => (0.0, 1.0),
        Some(pn) => {
            let cn = cauchy_len * grad_sq.sqrt();
            if cn >= radius {
                (-cauchy_len * radius / cn, 0.0)
            } else {
                // Point on the segment cauchy -> newton at distance `radius` from the origin.
                let cauchy: Vec<f64> = grad.iter().map(|v| -cauchy_len * v).collect();
                let d: Vec<f64> = pn.iter().zip(&cauchy).map(|(a, b)| a - b).collect();
                let (qa, qb, qc) = (
                    dot(&d, &d),
                    2.0 * dot(&cauchy, &d),
                    dot(&cauchy, &cauchy) - radius * radius,
                );
                let tau = (-qb + (qb * qb - 4.0 * qa * qc).max(0.0).sqrt()) / (2.0 * qa);
                (-cauchy_len * (1.0 - tau), tau)
            }
        }
        None => {
            let gn = grad_sq.sqrt();
            if gn == 0.0 {
                (0.0, 0.0)
            } else {
                (-cauchy_len.min(radius / gn), 0.0)
            }
        }
    };
    let zero = vec![0.0; n];
    let pn = lin.newton.as_deref().unwrap_or(&zero);
    let p: Vec<f64> = (0..n).map(|i| a * grad[i] + b * pn[i]).collect();
    let model_norm_sq = (0..n)
        .map(|i| {
            let r = g[i] + a * lin.j_grad[i] + b * lin.j_newton[i];
            r * r
        })
        .sum();
    Step { p, model_norm_sq }
}
