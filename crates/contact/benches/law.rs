//! Throughput of friction-law evaluation (2-D, exact law) on batches of contacts.
//!
//! `cargo bench -p ewr-contact --bench law`. Prints one table row per batch shape, for
//! the residual alone and with both Jacobian blocks, on all threads and on one thread.
//! "GB/s" counts the bytes of `r`, `v` read and `psi` (and `d_r`, `d_v`) written once.

use std::hint::black_box;
use std::time::{Duration, Instant};

use ewr_contact::law::{Bound, FrictionLaw, LawInput, LawOutput, evaluate, evaluate_residual};

/// splitmix64, to fill the inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Best time per evaluation over 3 rounds of about `target` each.
fn time_it(target: Duration, mut f: impl FnMut()) -> f64 {
    f();
    let t0 = Instant::now();
    f();
    let once = t0.elapsed().as_secs_f64().max(1e-9);
    let reps = ((target.as_secs_f64() / once) as usize).clamp(1, 100_000);
    (0..3)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..reps {
                f();
            }
            t.elapsed().as_secs_f64() / reps as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let d = 2;
    let law = FrictionLaw::Exact;
    let target = Duration::from_millis(120);
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("thread pool");
    println!(
        "friction law `{law}`, d = {d}, {} rayon threads; throughput in contact-samples/s",
        rayon::current_num_threads()
    );
    println!(
        "{:>8} {:>7} {:>6} | {:>10} {:>12} {:>7} | {:>10} {:>12} {:>7}",
        "contacts", "samples", "deriv", "time", "all threads", "GB/s", "time", "1 thread", "GB/s"
    );
    for nc in [1usize, 100, 1000] {
        for n in [512usize, 4096] {
            let mut rng = Rng(nc as u64 * 7919 + n as u64);
            let len = nc * d * n;
            let r: Vec<f64> = (0..len).map(|_| 4.0 * rng.uniform() - 2.0).collect();
            // A third of the velocity samples are zero (stick), the rest slip or stick.
            let v: Vec<f64> = (0..len)
                .map(|i| {
                    if i % 3 == 0 {
                        0.0
                    } else {
                        2.0 * rng.uniform() - 1.0
                    }
                })
                .collect();
            let mu = vec![1.0; nc];
            let rho = vec![1.0; nc];
            let input = LawInput {
                dim: d,
                n_samples: n,
                r: &r,
                v: &v,
                mu_n: Bound::PerContact(&mu),
                rho: &rho,
            };
            let mut psi = vec![0.0; len];
            let mut d_r = vec![0.0; len * d];
            let mut d_v = vec![0.0; len * d];
            for deriv in [false, true] {
                let mut run = || {
                    let res = if deriv {
                        evaluate(
                            law,
                            black_box(&input),
                            &mut LawOutput {
                                psi: &mut psi,
                                d_r: &mut d_r,
                                d_v: &mut d_v,
                            },
                        )
                    } else {
                        evaluate_residual(law, black_box(&input), &mut psi)
                    };
                    res.expect("evaluation");
                    black_box(&psi);
                };
                let t_all = time_it(target, &mut run);
                let t_one = single.install(|| time_it(target, &mut run));
                let points = (nc * n) as f64;
                let bytes = 8.0 * (3 * len + if deriv { 2 * len * d } else { 0 }) as f64;
                println!(
                    "{nc:>8} {n:>7} {:>6} | {:>8.1}us {:>10.1}M/s {:>7.2} | {:>8.1}us {:>10.1}M/s {:>7.2}",
                    if deriv { "yes" } else { "no" },
                    t_all * 1e6,
                    points / t_all / 1e6,
                    bytes / t_all / 1e9,
                    t_one * 1e6,
                    points / t_one / 1e6,
                    bytes / t_one / 1e9,
                );
            }
        }
    }
}
