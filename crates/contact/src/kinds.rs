//! The types shared by every contact kind (constant bounds and 3-D contacts): the contact
//! parameters as the residuals need them and the sampled histories they give back.

/// Friction parameters of the contacts, as the residual needs them.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactParams {
    /// Tangential directions per contact (1 or 2).
    pub dim: usize,
    /// Friction bound `mu N` per contact.
    pub mu_n: Vec<f64>,
    /// Scaling `rho` per contact (for 3-D contacts, and with `rho_auto`, a factor on the
    /// automatic scaling).
    pub rho: Vec<f64>,
    /// Constant bounds: `rho` is a factor on `1 / (h w |G_h|)` at the solve's frequency
    /// (`ewr_model::Contacts::rho_auto`); the solver resolves it, the residual never sees it.
    pub rho_auto: bool,
    /// The normal side of 3-D contacts (`None`: constant bounds `mu_n`).
    pub normal: Option<NormalParams>,
}

/// The normal side of 3-D contacts: friction bound `mu lambda(t)`, gap `g0 + W_N u`.
#[derive(Clone, Debug, PartialEq)]
pub struct NormalParams {
    /// Friction coefficient per contact.
    pub mu: Vec<f64>,
    /// Initial gap per contact (negative: interference).
    pub g0: Vec<f64>,
    /// Per contact, a normal force held constant (no normal direction), `None` for a
    /// unilateral contact.
    pub load: Vec<Option<f64>>,
}

impl ContactParams {
    /// The parameters of a model's contacts.
    pub fn of(contacts: &ewr_model::Contacts) -> Self {
        ContactParams {
            dim: contacts.dim,
            mu_n: contacts.mu_n.clone(),
            rho: contacts.rho.clone(),
            rho_auto: contacts.rho_auto,
            normal: contacts.normal.as_ref().map(|n| NormalParams {
                mu: n.mu.clone(),
                g0: n.g0.clone(),
                load: (0..n.mu.len()).map(|c| n.fixed_load(c)).collect(),
            }),
        }
    }

    /// Rows of the condensed structure: `dim * nc`, plus `nc` normal rows for 3-D contacts.
    pub fn rows(&self) -> usize {
        (self.dim + usize::from(self.normal.is_some())) * self.len()
    }

    /// Number of contacts.
    pub fn len(&self) -> usize {
        self.mu_n.len()
    }

    /// True without contacts.
    pub fn is_empty(&self) -> bool {
        self.mu_n.is_empty()
    }
}

/// Sampled time histories of every contact over one period, signal-major
/// (`(c * dim + k) * n_samples + j`), at `tau_j = 2 pi j / n_samples`.
#[derive(Clone, Debug)]
pub struct ContactHistories {
    /// Samples per period.
    pub n_samples: usize,
    /// Relative tangential displacement `w = W u`.
    pub displacement: Vec<f64>,
    /// Relative tangential velocity `v = w'`.
    pub velocity: Vec<f64>,
    /// Friction force `r` on the structure.
    pub force: Vec<f64>,
    /// Normal force, gap and state of 3-D contacts (`None` for constant bounds).
    pub normal: Option<NormalHistories>,
}

impl ContactHistories {
    /// The same sample count with no samples stored: for results that keep only summaries.
    pub fn emptied(&self) -> ContactHistories {
        ContactHistories {
            n_samples: self.n_samples,
            displacement: Vec::new(),
            velocity: Vec::new(),
            force: Vec::new(),
            normal: None,
        }
    }
}

/// The normal side of 3-D contacts over one period, `c * n_samples + j`.
#[derive(Clone, Debug)]
pub struct NormalHistories {
    /// Normal force `lambda >= 0` (compression).
    pub force: Vec<f64>,
    /// Gap `g >= 0` at the rigid contact.
    pub gap: Vec<f64>,
    /// Stick, slip or separated per sample.
    pub state: Vec<SampleState>,
}

/// State of one contact at one sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleState {
    /// Closed, friction force inside the disc: no sliding.
    Stick,
    /// Closed and sliding at the bound `mu lambda`.
    Slip,
    /// Open: no normal and no friction force.
    Separated,
}
