//! Planned real FFTs of `f64` signals, with one planner per thread.
//!
//! Why a crate of its own: planning instantiates every rustfft algorithm (scalar, SSE and AVX
//! butterflies, mixed radix, Bluestein) for `f64`. That was a quarter of the generic items
//! compiled into `ewr-hb`, and it was compiled twice per build (the library and its unit
//! tests) at the test profile's low optimisation. Behind this non-generic function it is
//! compiled once, fully optimised; callers use the plans through trait objects.

use std::cell::RefCell;
use std::sync::Arc;

use realfft::RealFftPlanner;
pub use realfft::num_complex::Complex;
pub use realfft::{ComplexToReal, RealToComplex};

thread_local! {
    /// This thread's planner: it keeps every plan it made, so a length seen before reuses
    /// its plan (and twiddles) instead of computing them again.
    static PLANNER: RefCell<RealFftPlanner<f64>> = RefCell::new(RealFftPlanner::new());
}

/// The forward (real to half spectrum) and inverse real FFTs of length `n > 0`, from this
/// thread's planner. Neither is normalised: forward then inverse multiplies by `n`.
pub fn plan_real(n: usize) -> (Arc<dyn RealToComplex<f64>>, Arc<dyn ComplexToReal<f64>>) {
    PLANNER.with(|p| {
        let mut planner = p.borrow_mut();
        (planner.plan_fft_forward(n), planner.plan_fft_inverse(n))
    })
}
