//! What several of these tests share.

use ewr_contact::FrictionLaw;
use ewr_hb::HarmonicSet;
use ewr_solve::newton::NewtonOptions;
use ewr_solve::{PointSettings, Preconditioner};

/// Point settings on the harmonic set `set` with the exact law, a scaled residual tolerance of
/// `1e-10`, the harmonic ramp and DOF 0 monitored.
pub fn exact_settings(set: &str) -> PointSettings {
    let set: HarmonicSet = set.parse().unwrap();
    PointSettings {
        n_samples: ewr_hb::default_samples(&set),
        set,
        law: FrictionLaw::Exact,
        newton: NewtonOptions {
            tol_residual: 1e-10,
            ..NewtonOptions::default()
        },
        ramp: true,
        monitor: vec![0],
        retry_rho: true,
        preconditioner: Preconditioner::default(),
        auto: None,
        amplitude: Default::default(),
    }
}
