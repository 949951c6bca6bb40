//! Plain timing of the Fourier machinery (no criterion): `cargo bench -p ewr-hb --bench fourier`.
//!
//! Prints, for the paper's sizes, synthesis+projection pairs per second and the cost of one
//! Galerkin matrix by the FFT formula against the direct sampled quadrature (a naive loop over
//! a precomputed basis table, and a dense matrix product `P diag(a) S`), with their ratios
//! measured in the same run. Timings are wall clock on a possibly shared machine.

use std::hint::black_box;
use std::time::Instant;

use ewr_hb::{DenseGalerkin, FourierSampler, HarmonicSet};
use faer::Mat;

/// Seconds per call of `f`, repeating until at least `min_secs` have elapsed.
fn time_per_call(min_secs: f64, mut f: impl FnMut()) -> f64 {
    f(); // warm-up
    let mut reps = 1usize;
    loop {
        let t0 = Instant::now();
        for _ in 0..reps {
            f();
        }
        let dt = t0.elapsed().as_secs_f64();
        if dt >= min_secs {
            return dt / reps as f64;
        }
        reps = (reps * 2).max((reps as f64 * min_secs / dt.max(1e-9) * 1.1) as usize);
    }
}

/// Direct quadrature `G_ij = w_i sum_k phi_i(tau_k) a_k phi_j(tau_k)` from a basis table
/// stored one basis function per contiguous row (`table[i * n + k]`).
fn naive_quadrature(table: &[f64], weights: &[f64], a: &[f64], g: &mut Mat<f64>, tmp: &mut [f64]) {
    let n = a.len();
    let nc = weights.len();
    for j in 0..nc {
        let phi_j = &table[j * n..(j + 1) * n];
        for ((t, &p), &ak) in tmp.iter_mut().zip(phi_j).zip(a) {
            *t = p * ak;
        }
        for i in 0..nc {
            let phi_i = &table[i * n..(i + 1) * n];
            let s: f64 = phi_i.iter().zip(tmp.iter()).map(|(x, y)| x * y).sum();
            g[(i, j)] = weights[i] * s;
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let min_secs = 0.5;
    println!(
        "{:<9} {:>6} {:>6} | {:>12} {:>12} | {:>11} {:>11} {:>11} {:>11} | {:>9} {:>9} | {:>8}",
        "set",
        "N_t",
        "n_c",
        "S+P pair us",
        "pairs/s",
        "G fft us",
        "G spec us",
        "G gemm us",
        "G naive us",
        "gemm/fft",
        "naive/fft",
        "max rel"
    );
    for (spec, n) in [("odd:59", 512usize), ("odd:159", 2048)] {
        let set: HarmonicSet = spec.parse()?;
        let nc = set.n_coeffs();
        let mut s = FourierSampler::new(set.clone(), n)?;
        let mut dense = DenseGalerkin::new(set.clone(), n)?;

        // Synthesis + projection of one signal.
        let c: Vec<f64> = (0..nc)
            .map(|i| ((i * 7919) % 101) as f64 / 101.0 - 0.5)
            .collect();
        let mut x = vec![0.0; n];
        let mut back = vec![0.0; nc];
        let t_pair = time_per_call(min_secs, || {
            s.synthesize(black_box(&c), &mut x)
                .expect("sizes are valid");
            s.project(black_box(&x), &mut back)
                .expect("sizes are valid");
        });

        // A nonsmooth coefficient, as a slip/stick Heaviside gives.
        let a: Vec<f64> = (0..n)
            .map(|j| {
                let t = s.tau(j);
                if (t + 0.4).sin() + 0.3 * (3.0 * t).cos() > 0.2 {
                    1.3 + t.cos()
                } else {
                    0.1
                }
            })
            .collect();
        let mut g_fft = Mat::zeros(nc, nc);
        let t_fft = time_per_call(min_secs, || {
            s.galerkin_matrix(black_box(&a), g_fft.as_mut())
                .expect("sizes are valid");
        });
        let mut spectrum = vec![Default::default(); s.spectrum_len()];
        s.spectrum(&a, &mut spectrum)?;
        let mut g_spec = Mat::zeros(nc, nc);
        let t_spec = time_per_call(min_secs, || {
            s.galerkin_matrix_from_spectrum(black_box(&spectrum), g_spec.as_mut())
                .expect("sizes are valid");
        });
        let mut g_gemm = Mat::zeros(nc, nc);
        let t_gemm = time_per_call(min_secs, || {
            dense
                .galerkin_matrix(black_box(&a), g_gemm.as_mut())
                .expect("sizes are valid");
        });

        let sm = dense.synthesis_matrix();
        let table: Vec<f64> = (0..nc)
            .flat_map(|i| (0..n).map(move |k| sm[(k, i)]))
            .collect();
        let weights: Vec<f64> = (0..nc)
            .map(|i| if set.contains_zero() && i == 0 { 1.0 } else { 2.0 } / n as f64)
            .collect();
        let mut g_naive = Mat::zeros(nc, nc);
        let mut tmp = vec![0.0; n];
        let t_naive = time_per_call(min_secs, || {
            naive_quadrature(&table, &weights, black_box(&a), &mut g_naive, &mut tmp);
        });

        let scale = g_naive.norm_max();
        let err = [&g_fft, &g_spec, &g_gemm]
            .iter()
            .map(|g| (*g - &g_naive).norm_max() / scale)
            .fold(0.0, f64::max);
        println!(
            "{:<9} {:>6} {:>6} | {:>12.2} {:>12.0} | {:>11.1} {:>11.1} {:>11.1} {:>11.1} | {:>9.1} {:>9.1} | {:>8.1e}",
            spec,
            n,
            nc,
            t_pair * 1e6,
            1.0 / t_pair,
            t_fft * 1e6,
            t_spec * 1e6,
            t_gemm * 1e6,
            t_naive * 1e6,
            t_gemm / t_fft,
            t_naive / t_fft,
            err
        );
    }
    println!(
        "G fft: galerkin_matrix (one real FFT + O(n_c^2)); G spec: from a precomputed spectrum;\n\
         G gemm: DenseGalerkin, P diag(a) S by faer matmul (1 thread); G naive: loop over a\n\
         precomputed basis table. max rel: largest |G - G_naive| / max|G_naive| of the three."
    );
    Ok(())
}
