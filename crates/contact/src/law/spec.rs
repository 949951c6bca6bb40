//! The choice of friction law, its parameters and its command-line spelling.

use std::fmt;
use std::str::FromStr;

use super::LawError;

/// Which equality represents the friction condition `Psi(r, v) = 0` (see [`crate::law`]
/// for the formulas). `Exact` and `Projection` are exact Coulomb; the others are the
/// approximations of paper section 2.3, kept for comparison.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum FrictionLaw {
    /// Paper eq. 2, `r max(muN, |z|) - muN z`, `z = r - rho v`: the E-WR default.
    #[default]
    Exact,
    /// Paper eq. 3/5, `r - proj_disk(muN)(z)`: no spurious zero when `muN = 0`.
    Projection,
    /// Paper eq. 14, `r + muN tanh(alpha |v|) v/|v|`: smooth, single-valued, never sticks.
    Tanh {
        /// Regularisation slope (1/velocity), `> 0`; Coulomb is the limit `alpha -> inf`.
        alpha: f64,
    },
    /// Paper eq. 16, `r + muN min(|v|, delta)/delta v/|v|`: single-valued, never sticks.
    PiecewiseLinear {
        /// Velocity width of the linear "stick" region, `> 0`; Coulomb as `delta -> 0`.
        delta: f64,
    },
    /// Paper eq. 17: eq. 2 with `max` replaced by `max_eps(a, b) = (a + b + sqrt((b-a)^2 + eps))/2`.
    MaxEps {
        /// Smoothing of the max, in units of force squared, `> 0`; exact law as `eps -> 0`.
        eps: f64,
    },
}

impl FrictionLaw {
    /// Checks that the law's parameter is finite and positive, so that a law built
    /// directly (not parsed) is rejected by [`crate::law::evaluate`] rather than
    /// producing NaN.
    pub fn validate(&self) -> Result<(), LawError> {
        match *self {
            FrictionLaw::Exact | FrictionLaw::Projection => Ok(()),
            FrictionLaw::Tanh { alpha } => check_param("tanh", "alpha", alpha),
            FrictionLaw::PiecewiseLinear { delta } => check_param("pwl", "delta", delta),
            FrictionLaw::MaxEps { eps } => check_param("maxeps", "eps", eps),
        }
    }

    /// Whether `r` is a single-valued function of `v` (no true stick can be represented).
    pub fn is_single_valued(&self) -> bool {
        matches!(
            self,
            FrictionLaw::Tanh { .. } | FrictionLaw::PiecewiseLinear { .. }
        )
    }
}

fn check_param(law: &'static str, name: &'static str, value: f64) -> Result<(), LawError> {
    if value > 0.0 && value.is_finite() {
        Ok(())
    } else {
        Err(LawError::InvalidParameter { law, name, value })
    }
}

/// The forms accepted by [`FrictionLaw::from_str`], for error messages and help texts.
pub const FRICTION_LAW_FORMS: &str = "exact, projection, tanh:ALPHA, pwl:DELTA, maxeps:EPS";

impl fmt::Display for FrictionLaw {
    /// Writes the command-line form; `{:?}` on the parameter keeps it exact and short
    /// (e.g. `1e-12`), so that `parse(to_string(law)) == law`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrictionLaw::Exact => f.write_str("exact"),
            FrictionLaw::Projection => f.write_str("projection"),
            FrictionLaw::Tanh { alpha } => write!(f, "tanh:{alpha:?}"),
            FrictionLaw::PiecewiseLinear { delta } => write!(f, "pwl:{delta:?}"),
            FrictionLaw::MaxEps { eps } => write!(f, "maxeps:{eps:?}"),
        }
    }
}

/// Why a string is not a friction law: the input and a human-readable reason.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("invalid friction law `{input}`: {reason} (expected one of: {FRICTION_LAW_FORMS})")]
pub struct ParseLawError {
    /// The rejected input, as given.
    pub input: String,
    /// What is wrong with it.
    pub reason: String,
}

impl FromStr for FrictionLaw {
    type Err = ParseLawError;

    /// Parses `exact`, `projection`, `tanh:A`, `pwl:D` or `maxeps:E` (names are
    /// case-insensitive, surrounding whitespace ignored); parameters must be finite and
    /// strictly positive.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let err = |reason: String| ParseLawError {
            input: input.to_string(),
            reason,
        };
        let text = input.trim();
        let (name, param) = match text.split_once(':') {
            Some((n, p)) => (n.trim(), Some(p.trim())),
            None => (text, None),
        };
        let name = name.to_ascii_lowercase();
        let parse_param = |pname: &str| -> Result<f64, ParseLawError> {
            let p = param.ok_or_else(|| {
                err(format!(
                    "`{name}` needs a parameter: {name}:{}",
                    pname.to_uppercase()
                ))
            })?;
            let value: f64 = p
                .parse()
                .map_err(|_| err(format!("parameter {pname} `{p}` is not a number")))?;
            if value > 0.0 && value.is_finite() {
                Ok(value)
            } else {
                Err(err(format!(
                    "parameter {pname} must be finite and > 0, got {p}"
                )))
            }
        };
        let law = match name.as_str() {
            "exact" | "projection" => {
                if param.is_some() {
                    return Err(err(format!("`{name}` takes no parameter")));
                }
                if name == "exact" {
                    FrictionLaw::Exact
                } else {
                    FrictionLaw::Projection
                }
            }
            "tanh" => FrictionLaw::Tanh {
                alpha: parse_param("alpha")?,
            },
            "pwl" => FrictionLaw::PiecewiseLinear {
                delta: parse_param("delta")?,
            },
            "maxeps" => FrictionLaw::MaxEps {
                eps: parse_param("eps")?,
            },
            "" => return Err(err("empty law name".to_string())),
            _ => return Err(err(format!("unknown law name `{name}`"))),
        };
        Ok(law)
    }
}
