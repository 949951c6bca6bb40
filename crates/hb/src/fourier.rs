//! Truncated Fourier series in normalised time: harmonic sets, synthesis, projection,
//! time derivative.
//!
//! # Conventions (used by every function of this crate)
//!
//! **Time.** Time is normalised, `tau = w t` in `[0, 2 pi)`, so one period is `2 pi` whatever
//! the frequency. Signals are sampled at `N_t` equally spaced instants
//! `tau_j = 2 pi j / N_t`, `j = 0 .. N_t - 1` (no endpoint: the grid is periodic, which makes
//! the trapezoidal rule a spectrally accurate quadrature and lets real FFTs do the work).
//!
//! **Coefficient layout.** A scalar signal on a [`HarmonicSet`] is
//! `x(tau) = sum_{h in set} [a_h cos(h tau) + b_h sin(h tau)]`. Its coefficient vector lists
//! the harmonics in ascending order; harmonic `h = 0` contributes only `a_0` (the mean, with
//! weight 1, not 1/2), every `h > 0` contributes the pair `(a_h, b_h)`. So `odd:3` gives
//! `[a1, b1, a3, b3]` and `all:2` gives `[a0, a1, b1, a2, b2]`. Why: the pairs match the paper's
//! eq. (23) and its 2x2 block-diagonal derivative (eq. 26), and a real-only layout keeps the
//! Newton unknowns and the Jacobian real.
//!
//! **Block layout.** Many signals (contacts x directions) are stored signal-major: signal `s`
//! occupies coefficients `s * n_coeffs .. (s + 1) * n_coeffs`, and its samples occupy
//! `s * N_t .. (s + 1) * N_t`. Why: one contiguous slice per signal is what the FFT wants and
//! makes the Jacobian block of a (contact, direction) pair a contiguous sub-matrix.
//!
//! **Projection.** [`FourierSampler::project`] is the Galerkin projection on the basis
//! `{1, cos(h tau), sin(h tau)}` scaled to be the exact left inverse of synthesis:
//! `a_0 = (1/N_t) sum_j x_j`, `a_h = (2/N_t) sum_j x_j cos(h tau_j)`,
//! `b_h = (2/N_t) sum_j x_j sin(h tau_j)`. In integral form, coefficient `i` is
//! `(1/c_i) * integral_0^{2 pi} phi_i(tau) x(tau) dtau` evaluated by the trapezoidal rule on the
//! sample grid, with `c_i = integral phi_i^2 = pi` for `cos`/`sin` and `2 pi` for the constant.
//! The weighted residual `P[Psi] = 0` of the E-WR method is unchanged by any positive diagonal
//! scaling of `P`, so this choice costs nothing and makes `project(synthesize(c)) == c`.
//!
//! **Derivative.** [`HarmonicSet::derivative`] is `d/dtau`; the physical time derivative is
//! `w d/dtau`, and the caller multiplies by `w`. Why: the operator is then independent of the
//! frequency and can be built once.
//!
//! **Number of samples.** Every constructor takes `n_samples` explicitly, and it must satisfy
//! `n_samples > 2 h_max` so that every harmonic of the set, and both its `cos` and `sin`, is
//! resolved (at `h = N_t / 2` the sine vanishes at every sample). [`default_samples`] gives a
//! recommended value; see its documentation for the rule and the reason.

use rayon::prelude::*;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use ewr_fft::{Complex, ComplexToReal, RealToComplex};
use faer::Mat;

/// Largest harmonic accepted by [`HarmonicSet`] constructors (guards against absurd inputs
/// such as `all:99999999999`, which would otherwise try to allocate terabytes).
pub const MAX_HARMONIC: usize = 1 << 20;

/// Largest number of time samples accepted by [`FourierSampler::new`] (same reason).
pub const MAX_SAMPLES: usize = 1 << 28;

/// Errors of the Fourier machinery. Every public function reports bad input with one of these
/// instead of panicking.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FourierError {
    /// A harmonic-set string such as `"odd:59"` could not be parsed.
    #[error("invalid harmonic set '{input}': {reason}")]
    ParseHarmonicSet {
        /// The string as given.
        input: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `HarmonicSet::odd` was given an even (or zero) maximum harmonic.
    #[error("an odd harmonic set needs an odd maximum harmonic (1, 3, 5, ...), got {0}")]
    EvenMaxHarmonic(usize),
    /// The maximum harmonic exceeds [`MAX_HARMONIC`].
    #[error("maximum harmonic {0} exceeds the supported limit {MAX_HARMONIC}")]
    TooManyHarmonics(usize),
    /// The number of time samples cannot resolve the harmonic set, or is absurdly large.
    #[error(
        "{n_samples} time samples per period cannot be used with maximum harmonic \
         {h_max}: need {min} <= n_samples <= {MAX_SAMPLES} (n_samples > 2*h_max \
         resolves the sine and cosine of every harmonic)"
    )]
    InvalidSampleCount {
        /// The number of samples requested.
        n_samples: usize,
        /// Highest harmonic of the set.
        h_max: usize,
        /// Smallest acceptable number of samples, `2 h_max + 1`.
        min: usize,
    },
    /// A slice does not have the length the operation needs.
    #[error("{what}: expected length {expected}, got {got}")]
    LengthMismatch {
        /// Which argument.
        what: &'static str,
        /// The length expected.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// A block-layout slice is not a whole number of signals.
    #[error("{what}: length {got} is not a multiple of the per-signal length {per_signal}")]
    NotWholeSignals {
        /// Which argument.
        what: &'static str,
        /// Length of one signal (coefficients or samples).
        per_signal: usize,
        /// The length given.
        got: usize,
    },
    /// An output matrix has the wrong shape.
    #[error(
        "{what}: expected a {}x{} matrix, got {}x{}",
        .expected.0, .expected.1, .got.0, .got.1
    )]
    ShapeMismatch {
        /// Which argument.
        what: &'static str,
        /// Expected (rows, columns).
        expected: (usize, usize),
        /// Given (rows, columns).
        got: (usize, usize),
    },
    /// The FFT library reported an error (should not happen with validated lengths).
    #[error("FFT failed: {0}")]
    Fft(String),
}

/// Checks `got == expected`.
pub(crate) fn check_len(
    what: &'static str,
    expected: usize,
    got: usize,
) -> Result<(), FourierError> {
    if expected == got {
        Ok(())
    } else {
        Err(FourierError::LengthMismatch {
            what,
            expected,
            got,
        })
    }
}

/// Number of signals in a block-layout slice of length `len` with `per_signal` entries each.
fn whole_signals(what: &'static str, per_signal: usize, len: usize) -> Result<usize, FourierError> {
    if per_signal > 0 && len.is_multiple_of(per_signal) {
        Ok(len / per_signal)
    } else {
        Err(FourierError::NotWholeSignals {
            what,
            per_signal,
            got: len,
        })
    }
}

/// Which harmonics a [`HarmonicSet`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HarmonicKind {
    /// Odd harmonics `{1, 3, ..., H}` (odd forcing, symmetric law, no preload: the paper's case).
    Odd,
    /// All harmonics `{0, 1, ..., H}` (static preload, even-harmonic forcing, asymmetric laws).
    All,
    /// An explicit list, e.g. `1,3,5,7` or `0,1,2,5` (see [`HarmonicSet::list`]).
    List,
}

/// A set of harmonics on which every periodic unknown is expanded; see the module
/// documentation for the coefficient layout.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HarmonicSet {
    kind: HarmonicKind,
    h_max: usize,
    harmonics: Vec<usize>,
}

impl HarmonicSet {
    /// Odd harmonics `{1, 3, ..., h_max}`; `h_max` must be odd. The paper's `N_phi` is
    /// `n_coeffs()`, e.g. `N_phi = 60` is `odd(59)`.
    pub fn odd(h_max: usize) -> Result<Self, FourierError> {
        if h_max > MAX_HARMONIC {
            return Err(FourierError::TooManyHarmonics(h_max));
        }
        if h_max.is_multiple_of(2) {
            return Err(FourierError::EvenMaxHarmonic(h_max));
        }
        Ok(Self {
            kind: HarmonicKind::Odd,
            h_max,
            harmonics: (1..=h_max).step_by(2).collect(),
        })
    }

    /// All harmonics `{0, 1, ..., h_max}` (`all(0)` is the constant signal only).
    pub fn all(h_max: usize) -> Result<Self, FourierError> {
        if h_max > MAX_HARMONIC {
            return Err(FourierError::TooManyHarmonics(h_max));
        }
        Ok(Self {
            kind: HarmonicKind::All,
            h_max,
            harmonics: (0..=h_max).collect(),
        })
    }

    /// An explicit list of harmonics, in any order (sorted, duplicates dropped). A list that
    /// is `odd:H` or `all:H` becomes that set, so that `1,3,5` and `odd:5` are one set.
    pub fn list(harmonics: &[usize]) -> Result<Self, FourierError> {
        let mut h = harmonics.to_vec();
        h.sort_unstable();
        h.dedup();
        let Some(&h_max) = h.last() else {
            return Err(FourierError::ParseHarmonicSet {
                input: String::new(),
                reason: "the list of harmonics is empty".into(),
            });
        };
        if h_max > MAX_HARMONIC {
            return Err(FourierError::TooManyHarmonics(h_max));
        }
        if h.iter().copied().eq(0..=h_max) {
            return Self::all(h_max);
        }
        if h_max % 2 == 1 && h.iter().copied().eq((1..=h_max).step_by(2)) {
            return Self::odd(h_max);
        }
        Ok(Self {
            kind: HarmonicKind::List,
            h_max,
            harmonics: h,
        })
    }

    /// Builds a set of the given kind (dispatches to [`HarmonicSet::odd`] or
    /// [`HarmonicSet::all`]); a list needs its harmonics ([`HarmonicSet::list`]).
    pub fn new(kind: HarmonicKind, h_max: usize) -> Result<Self, FourierError> {
        match kind {
            HarmonicKind::Odd => Self::odd(h_max),
            HarmonicKind::All => Self::all(h_max),
            HarmonicKind::List => Err(FourierError::ParseHarmonicSet {
                input: format!("list up to {h_max}"),
                reason: "a list of harmonics is built from its harmonics".into(),
            }),
        }
    }

    /// The subset of harmonics up to `h` (`None` when it is empty): the stages of a ramp.
    pub fn up_to(&self, h: usize) -> Option<Self> {
        match self.kind {
            HarmonicKind::Odd => Self::odd(h.min(self.h_max) | 1).ok(),
            HarmonicKind::All => Self::all(h.min(self.h_max)).ok(),
            HarmonicKind::List => {
                let sub: Vec<usize> = self.harmonics.iter().copied().filter(|&x| x <= h).collect();
                Self::list(&sub).ok()
            }
        }
    }

    /// Odd or all harmonics.
    pub fn kind(&self) -> HarmonicKind {
        self.kind
    }

    /// The harmonics, ascending.
    pub fn harmonics(&self) -> &[usize] {
        &self.harmonics
    }

    /// Number of harmonics in the set.
    pub fn len(&self) -> usize {
        self.harmonics.len()
    }

    /// Always false (every set holds at least one harmonic); present for API symmetry with `len`.
    pub fn is_empty(&self) -> bool {
        self.harmonics.is_empty()
    }

    /// Number of real coefficients per scalar signal: 2 per harmonic `h > 0`, 1 for `h = 0`.
    pub fn n_coeffs(&self) -> usize {
        if self.contains_zero() {
            2 * self.len() - 1
        } else {
            2 * self.len()
        }
    }

    /// Highest harmonic of the set.
    pub fn h_max(&self) -> usize {
        self.h_max
    }

    /// Whether the constant (`h = 0`) term is in the set.
    pub fn contains_zero(&self) -> bool {
        self.harmonics.first() == Some(&0)
    }

    /// Whether every harmonic of the set is odd (half-wave symmetric signals).
    pub fn all_odd(&self) -> bool {
        self.harmonics.iter().all(|h| h % 2 == 1)
    }

    /// Whether harmonic `h` is in the set.
    pub fn contains(&self, h: usize) -> bool {
        self.coeff_index(h).is_some()
    }

    /// Position of `a_h` in the coefficient vector (`b_h` follows it when `h > 0`), or `None`
    /// when `h` is not in the set. O(1) for `odd`/`all`, a binary search for a list.
    pub fn coeff_index(&self, h: usize) -> Option<usize> {
        if h > self.h_max {
            return None;
        }
        match self.kind {
            HarmonicKind::Odd => (h % 2 == 1).then(|| h - 1),
            HarmonicKind::All => Some(if h == 0 { 0 } else { 2 * h - 1 }),
            HarmonicKind::List => self
                .harmonics
                .binary_search(&h)
                .ok()
                .map(|k| self.offset_of(k)),
        }
    }

    /// Position of `a_h` for the `k`-th harmonic of the set (`k` indexes [`Self::harmonics`]):
    /// `a_0` takes one slot, every other harmonic two.
    #[inline]
    pub(crate) fn offset_of(&self, k: usize) -> usize {
        if self.contains_zero() && k > 0 {
            2 * k - 1
        } else {
            2 * k
        }
    }

    /// Evaluates the series with coefficients `coeffs` at normalised time `tau` by direct
    /// summation (for output at arbitrary instants; use [`FourierSampler`] on grids).
    pub fn evaluate(&self, coeffs: &[f64], tau: f64) -> Result<f64, FourierError> {
        check_len("coefficients", self.n_coeffs(), coeffs.len())?;
        let mut x = 0.0;
        for (k, &h) in self.harmonics.iter().enumerate() {
            let i = self.offset_of(k);
            if h == 0 {
                x += coeffs[i];
            } else {
                let (s, c) = (h as f64 * tau).sin_cos();
                x += coeffs[i] * c + coeffs[i + 1] * s;
            }
        }
        Ok(x)
    }

    /// `d/dtau` of one signal or of many in block layout: `(a_h, b_h) -> (h b_h, -h a_h)`,
    /// `a_0 -> 0`. The physical derivative is `w` times this.
    pub fn derivative(&self, coeffs: &[f64], out: &mut [f64]) -> Result<(), FourierError> {
        let n = self.n_coeffs();
        whole_signals("coefficients", n, coeffs.len())?;
        check_len("derivative output", coeffs.len(), out.len())?;
        for (c, o) in coeffs.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
            for (k, &h) in self.harmonics.iter().enumerate() {
                let i = self.offset_of(k);
                if h == 0 {
                    o[i] = 0.0;
                } else {
                    let hf = h as f64;
                    let (a, b) = (c[i], c[i + 1]);
                    o[i] = hf * b;
                    o[i + 1] = -hf * a;
                }
            }
        }
        Ok(())
    }

    /// The `d/dtau` operator as a dense `n_coeffs x n_coeffs` matrix: block diagonal with
    /// blocks `[[0, h], [-h, 0]]` (and a zero for `h = 0`), as the paper's eq. (26) divided by
    /// `w`. For Jacobian assembly.
    pub fn derivative_matrix(&self) -> Mat<f64> {
        let n = self.n_coeffs();
        let mut d = Mat::zeros(n, n);
        for (k, &h) in self.harmonics.iter().enumerate() {
            if h > 0 {
                let i = self.offset_of(k);
                d[(i, i + 1)] = h as f64;
                d[(i + 1, i)] = -(h as f64);
            }
        }
        d
    }

    /// Maps coefficients given on the set `from` to this set: harmonics present in both are
    /// copied, harmonics new to `self` are zero, harmonics missing from `self` are dropped.
    /// Works on one signal or many in block layout. Used for harmonic ramping (solve with few
    /// harmonics first, then prolong the solution as the initial guess).
    pub fn prolong(&self, coeffs: &[f64], from: &HarmonicSet) -> Result<Vec<f64>, FourierError> {
        let n_sig = whole_signals("coefficients to prolong", from.n_coeffs(), coeffs.len())?;
        let mut out = vec![0.0; n_sig * self.n_coeffs()];
        self.prolong_into(coeffs, from, &mut out)?;
        Ok(out)
    }

    /// As [`HarmonicSet::prolong`], writing into a caller-provided slice (no allocation).
    pub fn prolong_into(
        &self,
        coeffs: &[f64],
        from: &HarmonicSet,
        out: &mut [f64],
    ) -> Result<(), FourierError> {
        let (n_from, n_to) = (from.n_coeffs(), self.n_coeffs());
        let n_sig = whole_signals("coefficients to prolong", n_from, coeffs.len())?;
        check_len("prolonged coefficients", n_sig * n_to, out.len())?;
        for (c, o) in coeffs.chunks_exact(n_from).zip(out.chunks_exact_mut(n_to)) {
            for (k, &h) in self.harmonics.iter().enumerate() {
                let i = self.offset_of(k);
                let width = if h == 0 { 1 } else { 2 };
                match from.coeff_index(h) {
                    Some(j) => o[i..i + width].copy_from_slice(&c[j..j + width]),
                    None => o[i..i + width].fill(0.0),
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for HarmonicSet {
    /// Writes `odd:H` or `all:H`, the form [`FromStr`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            HarmonicKind::Odd => "odd",
            HarmonicKind::All => "all",
            HarmonicKind::List => {
                let l: Vec<String> = self.harmonics.iter().map(usize::to_string).collect();
                return f.write_str(&l.join(","));
            }
        };
        write!(f, "{kind}:{}", self.h_max)
    }
}

impl FromStr for HarmonicSet {
    type Err = FourierError;

    /// Parses `odd:H` (H odd), `all:H` (H >= 0) or a comma-separated list, e.g. `odd:59`,
    /// `all:20`, `1,3,5,7`, `0,1,2,5`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason: String| FourierError::ParseHarmonicSet {
            input: s.to_string(),
            reason,
        };
        if !s.contains(':') && s.contains(',') {
            let list = s
                .split(',')
                .map(|x| {
                    x.trim()
                        .parse::<usize>()
                        .map_err(|_| err(format!("'{}' is not a non-negative integer", x.trim())))
                })
                .collect::<Result<Vec<usize>, _>>()?;
            return HarmonicSet::list(&list).map_err(|e| err(e.to_string()));
        }
        let Some((kind, h)) = s.trim().split_once(':') else {
            return Err(err(
                "expected '<kind>:<h_max>' such as 'odd:59' or 'all:20', or a list such as '1,3,5'"
                    .to_string(),
            ));
        };
        let kind = match kind.trim() {
            "odd" => HarmonicKind::Odd,
            "all" => HarmonicKind::All,
            other => {
                return Err(err(format!(
                    "unknown kind '{other}' (expected 'odd' or 'all', as in 'odd:59' or 'all:20')"
                )));
            }
        };
        let h = h.trim();
        if h.is_empty() {
            return Err(err(
                "missing maximum harmonic after ':' (e.g. 'odd:59')".to_string()
            ));
        }
        let h_max: usize = h.parse().map_err(|_| {
            err(format!(
                "maximum harmonic '{h}' is not a non-negative integer"
            ))
        })?;
        HarmonicSet::new(kind, h_max).map_err(|e| err(e.to_string()))
    }
}

/// Recommended number of time samples per period for a harmonic set:
/// `N_t = next_power_of_two(max(64, 8 (h_max + 1)))`.
///
/// Why: the smooth part of the friction law and of its Jacobian coefficients is at most
/// quadratic in band-limited signals, so the Galerkin integrands `phi_i * a * phi_j` reach
/// harmonic `4 h_max`; they are integrated exactly by the `N_t`-point rule when
/// `N_t > 4 h_max`. The factor 8 doubles that, to push the aliasing of the nonsmooth
/// (slowly decaying) part of the spectrum further away, and places the stick-slip switches
/// on a grid finer than the shortest retained period by the same factor. A power of two
/// keeps the FFTs fast. This reproduces the paper's own choices (`N_phi = 60` -> 512,
/// `N_phi = 400` -> 4096). Always overridable: every constructor takes `n_samples`.
pub fn default_samples(set: &HarmonicSet) -> usize {
    (8 * (set.h_max() + 1)).max(64).next_power_of_two()
}

/// Synthesis (coefficients -> samples) and projection (samples -> coefficients) for one
/// [`HarmonicSet`] on a grid of `n_samples` instants, with planned real FFTs and owned
/// scratch so that no call allocates. Also computes Galerkin matrices (see
/// [`crate::galerkin`]). Clone one per thread for parallel use.
#[derive(Clone)]
pub struct FourierSampler {
    pub(crate) set: HarmonicSet,
    pub(crate) n_samples: usize,
    pub(crate) forward: Arc<dyn RealToComplex<f64>>,
    pub(crate) inverse: Arc<dyn ComplexToReal<f64>>,
    /// Real scratch, `n_samples` long (forward FFT input, which the FFT overwrites).
    pub(crate) real_buf: Vec<f64>,
    /// Half spectrum scratch, `n_samples / 2 + 1` long.
    pub(crate) spec_buf: Vec<Complex<f64>>,
    /// FFT scratch, long enough for both plans.
    pub(crate) fft_scratch: Vec<Complex<f64>>,
    /// `C_m / N_t` for `m = 0 ..= 2 h_max` (Galerkin matrices).
    pub(crate) cos_sums: Vec<f64>,
    /// `S_m / N_t` for `m = 0 ..= 2 h_max` (Galerkin matrices).
    pub(crate) sin_sums: Vec<f64>,
    /// One matrix column, for outputs that are not column-major.
    pub(crate) col_buf: Vec<f64>,
}

impl fmt::Debug for FourierSampler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FourierSampler")
            .field("set", &self.set)
            .field("n_samples", &self.n_samples)
            .finish_non_exhaustive()
    }
}

impl FourierSampler {
    /// Plans the FFTs for `set` on `n_samples` instants per period. Needs
    /// `2 h_max < n_samples <= MAX_SAMPLES`; any length works, powers of two are fastest.
    pub fn new(set: HarmonicSet, n_samples: usize) -> Result<Self, FourierError> {
        let min = 2 * set.h_max() + 1;
        if n_samples < min || n_samples > MAX_SAMPLES {
            return Err(FourierError::InvalidSampleCount {
                n_samples,
                h_max: set.h_max(),
                min,
            });
        }
        // Plans are cached per thread: a frequency sweep builds several samplers per point
        // (one per residual, one for the peaks), and planning recomputes every twiddle.
        let (forward, inverse) = ewr_fft::plan_real(n_samples);
        let scratch_len = forward.get_scratch_len().max(inverse.get_scratch_len());
        let n_sums = 2 * set.h_max() + 1;
        let n_coeffs = set.n_coeffs();
        Ok(Self {
            real_buf: forward.make_input_vec(),
            spec_buf: forward.make_output_vec(),
            fft_scratch: vec![Complex::new(0.0, 0.0); scratch_len],
            cos_sums: vec![0.0; n_sums],
            sin_sums: vec![0.0; n_sums],
            col_buf: vec![0.0; n_coeffs],
            set,
            n_samples,
            forward,
            inverse,
        })
    }

    /// As [`FourierSampler::new`] with [`default_samples`].
    pub fn with_default_samples(set: HarmonicSet) -> Result<Self, FourierError> {
        let n = default_samples(&set);
        Self::new(set, n)
    }

    /// The harmonic set.
    pub fn set(&self) -> &HarmonicSet {
        &self.set
    }

    /// Number of time samples per period, `N_t`.
    pub fn n_samples(&self) -> usize {
        self.n_samples
    }

    /// Coefficients per scalar signal (same as `set().n_coeffs()`).
    pub fn n_coeffs(&self) -> usize {
        self.set.n_coeffs()
    }

    /// Length of a half spectrum as produced by [`FourierSampler::spectrum`]: `N_t / 2 + 1`.
    pub fn spectrum_len(&self) -> usize {
        self.n_samples / 2 + 1
    }

    /// Normalised sample time `tau_j = 2 pi j / N_t`.
    pub fn tau(&self, j: usize) -> f64 {
        2.0 * std::f64::consts::PI * j as f64 / self.n_samples as f64
    }

    /// One signal, coefficients (`n_coeffs`) -> samples (`N_t`) at `tau_j`.
    pub fn synthesize(&mut self, coeffs: &[f64], samples: &mut [f64]) -> Result<(), FourierError> {
        check_len("coefficients", self.set.n_coeffs(), coeffs.len())?;
        check_len("samples", self.n_samples, samples.len())?;
        let (plan, buffers) = self.plan_and_buffers();
        plan.synthesize(buffers, coeffs, samples)
    }

    /// One signal, samples (`N_t`) -> coefficients (`n_coeffs`): the Galerkin projection
    /// described in the module documentation (left inverse of synthesis; harmonics outside
    /// the set are dropped).
    pub fn project(&mut self, samples: &[f64], coeffs: &mut [f64]) -> Result<(), FourierError> {
        check_len("coefficients", self.set.n_coeffs(), coeffs.len())?;
        check_len("samples", self.n_samples, samples.len())?;
        let (plan, buffers) = self.plan_and_buffers();
        plan.project(buffers, samples, coeffs)
    }

    /// Scratch for [`synthesize_with`](Self::synthesize_with) and
    /// [`project_with`](Self::project_with): one per parallel task, so that a task can
    /// transform its own signals and go on with them in the same task (one pass over the
    /// threads where the `_many` transforms and the work between them took several).
    pub fn scratch(&self) -> SignalScratch {
        SignalScratch {
            real: self.forward.make_input_vec(),
            spec: self.forward.make_output_vec(),
            fft: vec![Complex::new(0.0, 0.0); self.fft_scratch.len()],
        }
    }

    /// [`synthesize`](Self::synthesize) with the caller's scratch: the same arithmetic,
    /// callable from several threads at once.
    pub fn synthesize_with(
        &self,
        scratch: &mut SignalScratch,
        coeffs: &[f64],
        samples: &mut [f64],
    ) -> Result<(), FourierError> {
        check_len("coefficients", self.set.n_coeffs(), coeffs.len())?;
        check_len("samples", self.n_samples, samples.len())?;
        self.plan().synthesize(scratch.buffers(), coeffs, samples)
    }

    /// [`project`](Self::project) with the caller's scratch: the same arithmetic, callable
    /// from several threads at once.
    pub fn project_with(
        &self,
        scratch: &mut SignalScratch,
        samples: &[f64],
        coeffs: &mut [f64],
    ) -> Result<(), FourierError> {
        check_len("coefficients", self.set.n_coeffs(), coeffs.len())?;
        check_len("samples", self.n_samples, samples.len())?;
        self.plan().project(scratch.buffers(), samples, coeffs)
    }

    fn plan(&self) -> Plan<'_> {
        Plan {
            set: &self.set,
            n_samples: self.n_samples,
            forward: &*self.forward,
            inverse: &*self.inverse,
        }
    }

    /// Many signals in block layout: `coeffs` holds `n_sig * n_coeffs`, `samples` receives
    /// `n_sig * N_t` (signal `s` at `s * N_t .. (s + 1) * N_t`).
    pub fn synthesize_many(
        &mut self,
        coeffs: &[f64],
        samples: &mut [f64],
    ) -> Result<(), FourierError> {
        let (nc, nt) = (self.set.n_coeffs(), self.n_samples);
        let n_sig = whole_signals("coefficients", nc, coeffs.len())?;
        check_len("samples", n_sig * nt, samples.len())?;
        self.each_signal((coeffs, nc), (samples, nt), |plan, buffers, c, x| {
            plan.synthesize(buffers, c, x)
        })
    }

    /// Many signals in block layout: `samples` holds `n_sig * N_t`, `coeffs` receives
    /// `n_sig * n_coeffs`.
    pub fn project_many(
        &mut self,
        samples: &[f64],
        coeffs: &mut [f64],
    ) -> Result<(), FourierError> {
        let (nc, nt) = (self.set.n_coeffs(), self.n_samples);
        let n_sig = whole_signals("samples", nt, samples.len())?;
        check_len("coefficients", n_sig * nc, coeffs.len())?;
        self.each_signal((samples, nt), (coeffs, nc), |plan, buffers, x, c| {
            plan.project(buffers, x, c)
        })
    }

    /// The plans, and this sampler's scratch buffers beside them.
    fn plan_and_buffers(&mut self) -> (Plan<'_>, Buffers<'_>) {
        let plan = Plan {
            set: &self.set,
            n_samples: self.n_samples,
            forward: &*self.forward,
            inverse: &*self.inverse,
        };
        let buffers = (
            &mut self.real_buf[..],
            &mut self.spec_buf[..],
            &mut self.fft_scratch[..],
        );
        (plan, buffers)
    }

    /// `op` on each signal, `input` and `output` in block layout (`width`s per signal): in
    /// tasks of [`parallel_task`] signals with their own scratch buffers where there are
    /// many, else on this thread with the sampler's.
    fn each_signal(
        &mut self,
        (input, in_width): (&[f64], usize),
        (output, out_width): (&mut [f64], usize),
        op: impl Fn(&Plan<'_>, Buffers<'_>, &[f64], &mut [f64]) -> Result<(), FourierError> + Sync,
    ) -> Result<(), FourierError> {
        let n_sig = input.len() / in_width.max(1);
        let per_task = parallel_task(n_sig, self.n_samples);
        let (plan, (real, spec, fft)) = self.plan_and_buffers();
        if per_task >= n_sig {
            for (a, b) in input
                .chunks_exact(in_width)
                .zip(output.chunks_exact_mut(out_width))
            {
                op(&plan, (&mut *real, &mut *spec, &mut *fft), a, b)?;
            }
            return Ok(());
        }
        let lens = (real.len(), spec.len(), fft.len());
        input
            .par_chunks(in_width * per_task)
            .zip(output.par_chunks_mut(out_width * per_task))
            .try_for_each(|(inputs, outputs)| {
                let mut real = vec![0.0; lens.0];
                let mut spec = vec![Complex::new(0.0, 0.0); lens.1];
                let mut fft = vec![Complex::new(0.0, 0.0); lens.2];
                for (a, b) in inputs
                    .chunks_exact(in_width)
                    .zip(outputs.chunks_exact_mut(out_width))
                {
                    op(&plan, (&mut real, &mut spec, &mut fft), a, b)?;
                }
                Ok(())
            })
    }

    /// Unnormalised half spectrum `A_m = sum_j x_j e^{-i m tau_j}`, `m = 0 ..= N_t / 2`, of one
    /// sampled signal (the input of
    /// [`FourierSampler::galerkin_matrix_from_spectrum`]).
    pub fn spectrum(
        &mut self,
        samples: &[f64],
        spectrum: &mut [Complex<f64>],
    ) -> Result<(), FourierError> {
        check_len("spectrum", self.spectrum_len(), spectrum.len())?;
        check_len("samples", self.n_samples, samples.len())?;
        self.real_buf.copy_from_slice(samples);
        self.forward
            .process_with_scratch(&mut self.real_buf, spectrum, &mut self.fft_scratch)
            .map_err(|e| FourierError::Fft(e.to_string()))
    }

    /// Forward FFT of `samples` into the internal half-spectrum buffer.
    pub(crate) fn forward_into_spec_buf(&mut self, samples: &[f64]) -> Result<(), FourierError> {
        check_len("samples", self.n_samples, samples.len())?;
        self.real_buf.copy_from_slice(samples);
        self.forward
            .process_with_scratch(
                &mut self.real_buf,
                &mut self.spec_buf,
                &mut self.fft_scratch,
            )
            .map_err(|e| FourierError::Fft(e.to_string()))
    }
}

/// Least samples handled by one task where signals are processed in parallel (the `_many`
/// transforms, the contacts' laws): one FFT of a few dozen samples costs less than handing a
/// task to another thread, and a few thousand samples (tens of microseconds) more. The
/// 500-contact 2-D sector's 1000 signals of 64 samples make 15 tasks, enough to balance a
/// workstation's threads.
pub const PARALLEL_MIN_SAMPLES: usize = 4 * 1024;

/// Items (signals, contacts) per parallel task, for `n` items of `samples` samples each: as
/// many tasks of equal size as hold [`PARALLEL_MIN_SAMPLES`] each, and `n` (one task, on this
/// thread) where the items hold fewer than twice that. The split depends on the sizes only,
/// and each item's arithmetic is the same whichever thread runs it, so results do not depend
/// on the number of threads.
pub fn parallel_task(n: usize, samples: usize) -> usize {
    let tasks = (n * samples / PARALLEL_MIN_SAMPLES).max(1);
    n.div_ceil(tasks).max(1)
}

/// One task's scratch for a sampler's single-signal transforms
/// ([`FourierSampler::scratch`]).
pub struct SignalScratch {
    real: Vec<f64>,
    spec: Vec<Complex<f64>>,
    fft: Vec<Complex<f64>>,
}

impl SignalScratch {
    fn buffers(&mut self) -> Buffers<'_> {
        (&mut self.real, &mut self.spec, &mut self.fft)
    }
}

/// A sampler's scratch buffers: real samples, half spectrum, FFT scratch.
type Buffers<'a> = (
    &'a mut [f64],
    &'a mut [Complex<f64>],
    &'a mut [Complex<f64>],
);

/// A sampler's plans without its scratch buffers, shared by the tasks of the `_many`
/// transforms.
#[derive(Clone, Copy)]
struct Plan<'a> {
    set: &'a HarmonicSet,
    n_samples: usize,
    forward: &'a dyn RealToComplex<f64>,
    inverse: &'a dyn ComplexToReal<f64>,
}

impl Plan<'_> {
    fn synthesize(
        &self,
        (_, spec, scratch): Buffers<'_>,
        coeffs: &[f64],
        samples: &mut [f64],
    ) -> Result<(), FourierError> {
        // x_j = sum_k X_k e^{+i k tau_j} over the Hermitian spectrum (realfft does not
        // normalise), so X_0 = a_0 and X_h = (a_h - i b_h) / 2 give the series exactly.
        spec.fill(Complex::new(0.0, 0.0));
        for (k, &h) in self.set.harmonics.iter().enumerate() {
            let i = self.set.offset_of(k);
            spec[h] = if h == 0 {
                Complex::new(coeffs[i], 0.0)
            } else {
                Complex::new(0.5 * coeffs[i], -0.5 * coeffs[i + 1])
            };
        }
        self.inverse
            .process_with_scratch(spec, samples, scratch)
            .map_err(|e| FourierError::Fft(e.to_string()))
    }

    fn project(
        &self,
        (real, spec, scratch): Buffers<'_>,
        samples: &[f64],
        coeffs: &mut [f64],
    ) -> Result<(), FourierError> {
        real.copy_from_slice(samples);
        self.forward
            .process_with_scratch(real, spec, scratch)
            .map_err(|e| FourierError::Fft(e.to_string()))?;
        let n = self.n_samples as f64;
        let (w0, w) = (1.0 / n, 2.0 / n);
        for (k, &h) in self.set.harmonics.iter().enumerate() {
            let i = self.set.offset_of(k);
            let z = spec[h];
            if h == 0 {
                coeffs[i] = w0 * z.re;
            } else {
                coeffs[i] = w * z.re;
                coeffs[i + 1] = -w * z.im;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::f64::consts::PI;

    /// Small deterministic generator (xorshift64*) for test data in [-1, 1).
    pub(crate) struct Rng(u64);
    impl Rng {
        pub(crate) fn new(seed: u64) -> Self {
            Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
        }
        pub(crate) fn next(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let v = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
            (v >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        }
        pub(crate) fn vec(&mut self, n: usize) -> Vec<f64> {
            (0..n).map(|_| self.next()).collect()
        }
    }

    pub(crate) fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }

    fn sets() -> Vec<(HarmonicSet, usize)> {
        vec![
            (HarmonicSet::odd(1).unwrap(), 3),
            (HarmonicSet::odd(7).unwrap(), 16),
            (HarmonicSet::odd(59).unwrap(), 512),
            (HarmonicSet::odd(9).unwrap(), 19), // odd N, minimal
            (HarmonicSet::all(0).unwrap(), 1),
            (HarmonicSet::all(5).unwrap(), 12),
            (HarmonicSet::all(20).unwrap(), 41), // odd N, minimal
            (HarmonicSet::all(20).unwrap(), 256),
        ]
    }

    #[test]
    fn layout_and_sizes() {
        let o = HarmonicSet::odd(3).unwrap();
        assert_eq!(o.harmonics(), &[1, 3]);
        assert_eq!((o.len(), o.n_coeffs(), o.h_max()), (2, 4, 3));
        assert!(!o.contains_zero());
        assert_eq!(o.coeff_index(3), Some(2));
        assert_eq!(o.coeff_index(2), None);
        let a = HarmonicSet::all(2).unwrap();
        assert_eq!(a.harmonics(), &[0, 1, 2]);
        assert_eq!((a.len(), a.n_coeffs()), (3, 5));
        assert!(a.contains_zero());
        assert_eq!(
            [0, 1, 2, 3].map(|h| a.coeff_index(h)),
            [Some(0), Some(1), Some(3), None]
        );
        // x = a0 + a1 cos + b1 sin + a2 cos 2 + b2 sin 2 at tau = 0.3
        let c = [0.5, 1.0, 2.0, 3.0, 4.0];
        let t: f64 = 0.3;
        let expect = 0.5 + t.cos() + 2.0 * t.sin() + 3.0 * (2.0 * t).cos() + 4.0 * (2.0 * t).sin();
        assert!((a.evaluate(&c, t).unwrap() - expect).abs() < 1e-15);
    }

    #[test]
    fn synthesis_matches_direct_sum() {
        let mut rng = Rng::new(1);
        for (set, n) in sets() {
            let mut s = FourierSampler::new(set.clone(), n).unwrap();
            let c = rng.vec(set.n_coeffs());
            let mut x = vec![0.0; n];
            s.synthesize(&c, &mut x).unwrap();
            let direct: Vec<f64> = (0..n)
                .map(|j| {
                    let tau = 2.0 * PI * j as f64 / n as f64;
                    let mut v = 0.0;
                    for (k, &h) in set.harmonics().iter().enumerate() {
                        let i = set.offset_of(k);
                        if h == 0 {
                            v += c[i];
                        } else {
                            v += c[i] * (h as f64 * tau).cos() + c[i + 1] * (h as f64 * tau).sin();
                        }
                    }
                    v
                })
                .collect();
            let err = max_abs_diff(&x, &direct);
            assert!(err < 1e-12, "{set} N={n}: synthesis error {err}");
        }
    }

    #[test]
    fn projection_inverts_synthesis() {
        let mut rng = Rng::new(2);
        for (set, n) in sets() {
            let mut s = FourierSampler::new(set.clone(), n).unwrap();
            let c = rng.vec(set.n_coeffs());
            let mut x = vec![0.0; n];
            let mut back = vec![0.0; set.n_coeffs()];
            s.synthesize(&c, &mut x).unwrap();
            s.project(&x, &mut back).unwrap();
            let err = max_abs_diff(&c, &back);
            assert!(err < 1e-13, "{set} N={n}: round trip error {err}");
        }
    }

    #[test]
    fn projection_of_pure_tones() {
        let set = HarmonicSet::odd(7).unwrap();
        let n = 64;
        let mut s = FourierSampler::new(set.clone(), n).unwrap();
        let mut c = vec![0.0; set.n_coeffs()];
        // cos(3 tau) -> a_3 = 1, everything else 0.
        let x: Vec<f64> = (0..n).map(|j| (3.0 * s.tau(j)).cos()).collect();
        s.project(&x, &mut c).unwrap();
        let mut expect = vec![0.0; set.n_coeffs()];
        expect[set.coeff_index(3).unwrap()] = 1.0;
        assert!(max_abs_diff(&c, &expect) < 1e-14, "{c:?}");
        // -2 sin(5 tau) -> b_5 = -2.
        let x: Vec<f64> = (0..n).map(|j| -2.0 * (5.0 * s.tau(j)).sin()).collect();
        s.project(&x, &mut c).unwrap();
        let mut expect = vec![0.0; set.n_coeffs()];
        expect[set.coeff_index(5).unwrap() + 1] = -2.0;
        assert!(max_abs_diff(&c, &expect) < 1e-14, "{c:?}");
        // Harmonics outside the set are dropped: cos 2, sin 4, a constant, and cos 9 (> h_max).
        let x: Vec<f64> = (0..n)
            .map(|j| {
                let t = s.tau(j);
                (2.0 * t).cos() + (4.0 * t).sin() + 0.7 + (9.0 * t).cos()
            })
            .collect();
        s.project(&x, &mut c).unwrap();
        assert!(c.iter().all(|v| v.abs() < 1e-14), "{c:?}");
        // The mean is a_0 with weight 1 on an `all` set.
        let all = HarmonicSet::all(3).unwrap();
        let mut s = FourierSampler::new(all.clone(), n).unwrap();
        let mut c = vec![0.0; all.n_coeffs()];
        let x: Vec<f64> = (0..n).map(|j| 0.7 + (2.0 * s.tau(j)).cos()).collect();
        s.project(&x, &mut c).unwrap();
        assert!(
            max_abs_diff(&c, &[0.7, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]) < 1e-14,
            "{c:?}"
        );
    }

    #[test]
    fn batched_equals_one_by_one() {
        let mut rng = Rng::new(3);
        for (set, n) in sets() {
            let mut s = FourierSampler::new(set.clone(), n).unwrap();
            let nc = set.n_coeffs();
            let n_sig = 5;
            let c = rng.vec(n_sig * nc);
            let mut x = vec![0.0; n_sig * n];
            s.synthesize_many(&c, &mut x).unwrap();
            let x_in = rng.vec(n_sig * n);
            let mut p = vec![0.0; n_sig * nc];
            s.project_many(&x_in, &mut p).unwrap();
            for k in 0..n_sig {
                let mut xs = vec![0.0; n];
                s.synthesize(&c[k * nc..(k + 1) * nc], &mut xs).unwrap();
                assert_eq!(&x[k * n..(k + 1) * n], &xs[..]);
                let mut ps = vec![0.0; nc];
                s.project(&x_in[k * n..(k + 1) * n], &mut ps).unwrap();
                assert_eq!(&p[k * nc..(k + 1) * nc], &ps[..]);
            }
        }
    }

    #[test]
    fn derivative_matches_analytic_and_finite_differences() {
        let mut rng = Rng::new(4);
        for set in [HarmonicSet::odd(9).unwrap(), HarmonicSet::all(6).unwrap()] {
            let n = 64;
            let mut s = FourierSampler::new(set.clone(), n).unwrap();
            let c = rng.vec(set.n_coeffs());
            let mut dc = vec![0.0; set.n_coeffs()];
            set.derivative(&c, &mut dc).unwrap();
            let mut dx = vec![0.0; n];
            s.synthesize(&dc, &mut dx).unwrap();
            // Analytic derivative of the series at the samples.
            for (j, &dxj) in dx.iter().enumerate() {
                let t = s.tau(j);
                let mut v = 0.0;
                for (k, &h) in set.harmonics().iter().enumerate() {
                    if h > 0 {
                        let i = set.offset_of(k);
                        let hf = h as f64;
                        v += -hf * c[i] * (hf * t).sin() + hf * c[i + 1] * (hf * t).cos();
                    }
                }
                assert!((v - dxj).abs() < 1e-12, "{set}: {v} vs {dxj}");
                // Central finite difference of the evaluated series.
                let eps = 1e-5;
                let fd = (set.evaluate(&c, t + eps).unwrap() - set.evaluate(&c, t - eps).unwrap())
                    / (2.0 * eps);
                assert!(
                    (fd - dxj).abs() < 1e-6 * (1.0 + dxj.abs()),
                    "{set}: fd {fd} vs {dxj}"
                );
            }
            // Matrix form equals the function form.
            let d = set.derivative_matrix();
            for (i, &dci) in dc.iter().enumerate() {
                let row: f64 = (0..set.n_coeffs()).map(|j| d[(i, j)] * c[j]).sum();
                assert!((row - dci).abs() < 1e-14);
            }
        }
        // Block layout.
        let set = HarmonicSet::odd(3).unwrap();
        let mut out = vec![0.0; 8];
        set.derivative(&[1.0, 2.0, 3.0, 4.0, 0.0, 1.0, 0.0, 0.0], &mut out)
            .unwrap();
        assert_eq!(out, vec![2.0, -1.0, 12.0, -9.0, 1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn prolong_between_sets() {
        let small = HarmonicSet::odd(3).unwrap();
        let big = HarmonicSet::all(4).unwrap();
        let c = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]; // two signals
        let p = big.prolong(&c, &small).unwrap();
        assert_eq!(
            p,
            vec![
                0.0, 1.0, 2.0, 0.0, 0.0, 3.0, 4.0, 0.0, 0.0, 0.0, 5.0, 6.0, 0.0, 0.0, 7.0, 8.0,
                0.0, 0.0
            ]
        );
        // Restriction drops what is missing and gives back the original.
        assert_eq!(small.prolong(&p, &big).unwrap(), c.to_vec());
        let one = HarmonicSet::odd(1).unwrap();
        assert_eq!(one.prolong(&c[..4], &small).unwrap(), vec![1.0, 2.0]);
        assert!(matches!(
            big.prolong(&c[..3], &small),
            Err(FourierError::NotWholeSignals { .. })
        ));
    }

    #[test]
    fn parse_and_display() {
        let s: HarmonicSet = "odd:59".parse().unwrap();
        assert_eq!(s, HarmonicSet::odd(59).unwrap());
        assert_eq!(s.n_coeffs(), 60);
        assert_eq!(s.to_string(), "odd:59");
        let a: HarmonicSet = " all:20 ".parse().unwrap();
        assert_eq!(a, HarmonicSet::all(20).unwrap());
        assert_eq!(a.n_coeffs(), 41);
        assert_eq!(a.to_string(), "all:20");
        for (input, needle) in [
            ("odd:4", "odd maximum harmonic"),
            ("odd:0", "odd maximum harmonic"),
            ("even:3", "unknown kind 'even'"),
            ("all:-1", "'-1' is not a non-negative integer"),
            ("odd:", "missing maximum harmonic"),
            ("odd", "expected '<kind>:<h_max>'"),
            ("all:99999999999", "exceeds the supported limit"),
        ] {
            let e = input.parse::<HarmonicSet>().unwrap_err();
            let msg = e.to_string();
            assert!(
                matches!(e, FourierError::ParseHarmonicSet { .. }),
                "{input}: {e:?}"
            );
            assert!(msg.contains(needle), "{input}: message '{msg}'");
            assert!(msg.contains(input.trim()), "{input}: message '{msg}'");
        }
    }

    #[test]
    fn harmonic_lists() {
        // Lists that are odd:H or all:H are those sets.
        assert_eq!(
            "7,5,3,1".parse::<HarmonicSet>().unwrap(),
            HarmonicSet::odd(7).unwrap()
        );
        assert_eq!(
            "0,1,2,3".parse::<HarmonicSet>().unwrap(),
            HarmonicSet::all(3).unwrap()
        );
        let s: HarmonicSet = "5, 0,2,2".parse().unwrap();
        assert_eq!(s.kind(), HarmonicKind::List);
        assert_eq!(s.to_string(), "0,2,5");
        assert_eq!(s.to_string().parse::<HarmonicSet>().unwrap(), s);
        assert_eq!(s.harmonics(), &[0, 2, 5]);
        assert_eq!(s.n_coeffs(), 5);
        let idx: Vec<Option<usize>> = (0..7).map(|h| s.coeff_index(h)).collect();
        assert_eq!(idx, [Some(0), None, Some(1), None, None, Some(3), None]);
        assert!(s.contains_zero() && !s.all_odd());
        assert_eq!(s.up_to(3).unwrap().to_string(), "0,2");
        assert_eq!(s.up_to(1).unwrap().to_string(), "all:0");
        // Synthesis and analysis are inverse on the list's harmonics.
        let c = [0.5, 1.0, -2.0, 0.25, 3.0];
        let mut sampler = FourierSampler::new(s.clone(), 64).unwrap();
        let mut x = vec![0.0; 64];
        sampler.synthesize(&c, &mut x).unwrap();
        for (j, xj) in x.iter().enumerate() {
            let t = std::f64::consts::TAU * j as f64 / 64.0;
            let want = 0.5 + (2.0 * t).cos() - 2.0 * (2.0 * t).sin()
                + 0.25 * (5.0 * t).cos()
                + 3.0 * (5.0 * t).sin();
            assert!((xj - want).abs() < 1e-12);
        }
        let mut back = [0.0; 5];
        sampler.project(&x, &mut back).unwrap();
        assert!(back.iter().zip(&c).all(|(a, b)| (a - b).abs() < 1e-12));
        // Prolongation from odd:5 keeps the common harmonics.
        let odd = HarmonicSet::odd(5).unwrap();
        let p = s.prolong(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &odd).unwrap();
        assert_eq!(p, [0.0, 0.0, 0.0, 5.0, 6.0]);
        for (input, needle) in [("1,x", "'x' is not"), ("1,99999999", "exceeds")] {
            let msg = input.parse::<HarmonicSet>().unwrap_err().to_string();
            assert!(msg.contains(needle), "{input}: {msg}");
        }
    }

    #[test]
    fn bad_sizes_are_errors() {
        let set = HarmonicSet::odd(59).unwrap();
        for n in [0, 1, 64, 118] {
            let e = FourierSampler::new(set.clone(), n).unwrap_err();
            assert!(
                matches!(e, FourierError::InvalidSampleCount { min: 119, .. }),
                "{e:?}"
            );
            assert!(e.to_string().contains("2*h_max"));
        }
        assert!(FourierSampler::new(set.clone(), 119).is_ok());
        assert!(FourierSampler::new(set.clone(), MAX_SAMPLES + 1).is_err());
        let mut s = FourierSampler::new(set.clone(), 128).unwrap();
        let mut x = vec![0.0; 128];
        let mut c = vec![0.0; 60];
        assert!(matches!(
            s.synthesize(&c[..59], &mut x),
            Err(FourierError::LengthMismatch { .. })
        ));
        assert!(s.synthesize(&c, &mut x[..127]).is_err());
        assert!(s.project(&x[..100], &mut c).is_err());
        assert!(s.project(&x, &mut c[..3]).is_err());
        let mut xx = vec![0.0; 256];
        assert!(s.synthesize_many(&c[..50], &mut xx).is_err());
        assert!(s.synthesize_many(&c, &mut xx).is_err()); // 1 signal, 2 signals' samples
        assert!(s.project_many(&xx[..200], &mut c).is_err());
        assert!(set.derivative(&c, &mut x[..10]).is_err());
    }

    #[test]
    fn many_signals_in_parallel_tasks_are_each_signal_s_own_transform() {
        // 700 signals of 64 samples: ten tasks of 70 signals (`parallel_task`).
        let set: HarmonicSet = "all:7".parse().unwrap();
        let (nc, nt, n_sig) = (set.n_coeffs(), 64, 700);
        assert!(parallel_task(n_sig, nt) < n_sig);
        let mut rng = Rng::new(11);
        let coeffs = rng.vec(nc * n_sig);
        let samples = rng.vec(nt * n_sig);
        // One signal at a time.
        let mut one = FourierSampler::new(set.clone(), nt).unwrap();
        let mut x_ref = vec![0.0; nt * n_sig];
        let mut c_ref = vec![0.0; nc * n_sig];
        for s in 0..n_sig {
            let (c, x) = (&coeffs[s * nc..][..nc], &mut x_ref[s * nt..][..nt]);
            one.synthesize(c, x).unwrap();
            one.project(&samples[s * nt..][..nt], &mut c_ref[s * nc..][..nc])
                .unwrap();
        }
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut many = FourierSampler::new(set.clone(), nt).unwrap();
            let (mut x, mut c) = (vec![0.0; nt * n_sig], vec![0.0; nc * n_sig]);
            pool.install(|| {
                many.synthesize_many(&coeffs, &mut x).unwrap();
                many.project_many(&samples, &mut c).unwrap();
            });
            assert!(x == x_ref && c == c_ref, "{threads} threads");
        }
        // A task's own scratch: the same transforms, on several threads at once.
        let shared = FourierSampler::new(set.clone(), nt).unwrap();
        let (mut x, mut c) = (vec![0.0; nt * n_sig], vec![0.0; nc * n_sig]);
        x.par_chunks_mut(nt)
            .zip(c.par_chunks_mut(nc))
            .enumerate()
            .for_each(|(s, (x, c))| {
                let mut scratch = shared.scratch();
                shared
                    .synthesize_with(&mut scratch, &coeffs[s * nc..][..nc], x)
                    .unwrap();
                shared
                    .project_with(&mut scratch, &samples[s * nt..][..nt], c)
                    .unwrap();
            });
        assert!(x == x_ref && c == c_ref, "with a task's scratch");
        let mut scratch = shared.scratch();
        assert!(
            shared
                .synthesize_with(&mut scratch, &coeffs[..nc - 1], &mut x[..nt])
                .is_err()
        );
        // Projection inverts synthesis on the set (a check that the tasks' signals line up).
        let mut back = vec![0.0; nc * n_sig];
        one.project_many(&x_ref, &mut back).unwrap();
        let err = back
            .iter()
            .zip(&coeffs)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-13, "round trip {err:e}");
    }

    #[test]
    fn default_sample_rule() {
        let d = |s: &str| default_samples(&s.parse().unwrap());
        assert_eq!(d("odd:1"), 64);
        assert_eq!(d("odd:59"), 512);
        assert_eq!(d("odd:159"), 2048);
        assert_eq!(d("odd:399"), 4096);
        assert_eq!(d("all:20"), 256);
        for h in [1usize, 3, 63, 201, 999] {
            let set = HarmonicSet::odd(h).unwrap();
            let n = default_samples(&set);
            assert!(n.is_power_of_two() && n > 4 * h);
            assert!(FourierSampler::with_default_samples(set).is_ok());
        }
    }
}
