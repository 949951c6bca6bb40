//! The example models of the papers we reproduce, built in code.
//!
//! Sources and parameters are listed in `models/README.md`; each function's doc names its
//! source. Every example is also shipped as an HDF5 file in `models/` and can be regenerated
//! with `ewr model example NAME -o FILE`.

use crate::builder::ModelBuilder;
use crate::model::{Contacts, Model};
use std::fmt;
use std::str::FromStr;

/// The built-in example models, by the name the CLI uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Example {
    /// One mass in the plane with 2-D friction (seed 000, sections 3-4).
    Oscillator2d,
    /// Two masses in the plane, 2-D friction on the damper mass (seed 000, section 5).
    TwoMassDamper,
    /// Two-DOF chain with 1-D friction on mass 2 (seed 003).
    TwoDof1d,
    /// Chain of unit masses with 1-D friction to ground on the first N (DLFT-vs-WR benchmark).
    Chain,
    /// Lumped blade-damper-blade model at constant normal load (seed 004, Table 2).
    BladeDamperBlade,
}

impl Example {
    /// Every example, in the order `ewr model example --list` prints them.
    pub const ALL: [Example; 5] = [
        Example::Oscillator2d,
        Example::TwoMassDamper,
        Example::TwoDof1d,
        Example::Chain,
        Example::BladeDamperBlade,
    ];

    /// The CLI name, also the file stem in `models/`.
    pub fn name(self) -> &'static str {
        match self {
            Example::Oscillator2d => "oscillator-2d",
            Example::TwoMassDamper => "two-mass-damper",
            Example::TwoDof1d => "two-dof-1d",
            Example::Chain => "chain",
            Example::BladeDamperBlade => "blade-damper-blade",
        }
    }

    /// One line saying what the model is and where it comes from.
    pub fn summary(self) -> &'static str {
        match self {
            Example::Oscillator2d => {
                "one mass, 2-D friction to ground, k1=1 k2=2 c=0.01 muN=8 f=10cos(wt) (seed 000 sec. 3-4)"
            }
            Example::TwoMassDamper => {
                "blade mass + damper mass, 2-D friction on the damper, muN=8 f=20cos(wt) (seed 000 sec. 5)"
            }
            Example::TwoDof1d => "2-DOF chain, 1-D friction on mass 2, muN=9 (seed 003)",
            Example::Chain => {
                "N+10 unit masses, 1-D friction to ground on the first N, muN=0.09 (DLFT-vs-WR chain)"
            }
            Example::BladeDamperBlade => {
                "8-DOF blade-damper-blade, two inclined Jenkins contacts, muN=15 N (seed 004 Table 2)"
            }
        }
    }

    /// Builds the example with its published parameters and the given options.
    pub fn build(self, opts: &ExampleOptions) -> Model {
        let mut m = match self {
            Example::Oscillator2d => oscillator_2d(),
            Example::TwoMassDamper => two_mass_damper(opts.damper_mass.unwrap_or(1.0)),
            Example::TwoDof1d => two_dof_1d(),
            Example::Chain => chain(opts.contacts.unwrap_or(15)),
            Example::BladeDamperBlade => blade_damper_blade(&BladeDamperBlade::default()),
        };
        if let Some(mu_n) = opts.mu_n {
            m.contacts.mu_n.iter_mut().for_each(|x| *x = mu_n);
        }
        m
    }
}

impl fmt::Display for Example {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Example {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Example::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Example::ALL.iter().map(|e| e.name()).collect();
                format!("unknown example {s:?}; available: {}", names.join(", "))
            })
    }
}

/// Options that change an example away from its published parameters.
#[derive(Clone, Debug, Default)]
pub struct ExampleOptions {
    /// Friction bound for every contact (default: the published value).
    pub mu_n: Option<f64>,
    /// Number of friction contacts of `chain` (default 15).
    pub contacts: Option<usize>,
    /// Damper mass of `two-mass-damper` (default 1; 0 gives the massless damper of Fig. 23).
    pub damper_mass: Option<f64>,
}

fn built(b: ModelBuilder) -> Model {
    // The examples are fixed, valid constructions; a failure is a bug in this file.
    b.build()
        .unwrap_or_else(|p| panic!("built-in example is invalid: {p:?}"))
}

/// Seed 000 sections 3-4: `m = 1`, `c1 = c2 = 0.01`, `k1 = 1`, `k2 = 2`, `muN = 8`,
/// `f1 = f2 = 10 cos(w t)`; DOFs `u1`, `u2`, one 2-D contact to ground.
pub fn oscillator_2d() -> Model {
    built(
        ModelBuilder::new(2)
            .title(
                "oscillator-2d: one mass with 2-D friction (Pierre & Legrand, JSD 2025, sec. 3-4)",
            )
            .units("consistent, non-dimensional")
            .dof_labels(["u1", "u2"])
            .mass(0, 1.0)
            .mass(1, 1.0)
            .spring_to_ground(0, 1.0)
            .spring_to_ground(1, 2.0)
            .damper_to_ground(0, 0.01)
            .damper_to_ground(1, 0.01)
            .contacts(Contacts::to_ground(2, vec![0, 1], vec![8.0]))
            .force(0, 1, 10.0, 0.0)
            .force(1, 1, 10.0, 0.0),
    )
}

/// Seed 000 section 5: `m1 = m2 = 1`, every `c = 0.02`, `k11 = k21 = 1`, `k12 = k22 = 2`,
/// `muN = 8` on mass 2, `f11 = f12 = 20 cos(w t)` on mass 1.
///
/// DOFs `u11, u12` (mass 1, directions 1 and 2) and `u21, u22` (mass 2, the damper).
/// `damper_mass` replaces `m2` (section 5.4; 0 is the massless damper of Fig. 23).
pub fn two_mass_damper(damper_mass: f64) -> Model {
    built(
        ModelBuilder::new(4)
            .title("two-mass-damper: blade mass + damper mass with 2-D friction (Pierre & Legrand, JSD 2025, sec. 5)")
            .units("consistent, non-dimensional")
            .dof_labels(["u11", "u12", "u21", "u22"])
            .mass(0, 1.0)
            .mass(1, 1.0)
            .mass(2, damper_mass)
            .mass(3, damper_mass)
            .spring_to_ground(0, 1.0)
            .spring_to_ground(1, 2.0)
            .spring(0, 2, 1.0)
            .spring(1, 3, 2.0)
            .damper_to_ground(0, 0.02)
            .damper_to_ground(1, 0.02)
            .damper(0, 2, 0.02)
            .damper(1, 3, 0.02)
            .contacts(Contacts::to_ground(2, vec![2, 3], vec![8.0]))
            .force(0, 1, 20.0, 0.0)
            .force(1, 1, 20.0, 0.0),
    )
}

/// Seed 003 (IDETC 2023 slides): `m x1'' + d(2x1' - x2') + k(2x1 - x2) = f1 cos(w t)`,
/// `m x2'' + d(x2' - x1') + k(x2 - x1) = r`, 1-D friction on mass 2 with `muN = 9`.
///
/// The slides print only `muN = 9` (and `w = 0.308`); `m = k = 1`, `d = 0.02` and `f1 = 20`
/// are taken from seed 000 section 5, which continues this work with the same chain.
pub fn two_dof_1d() -> Model {
    built(
        ModelBuilder::new(2)
            .title("two-dof-1d: 2-DOF chain with 1-D friction on mass 2 (Pierre & Legrand, IDETC 2023)")
            .units("consistent, non-dimensional")
            .dof_labels(["x1", "x2"])
            .mass(0, 1.0)
            .mass(1, 1.0)
            .spring_to_ground(0, 1.0)
            .spring(0, 1, 1.0)
            .damper_to_ground(0, 0.02)
            .damper(0, 1, 0.02)
            .contacts(Contacts::to_ground(1, vec![1], vec![9.0]))
            .force(0, 1, 20.0, 0.0),
    )
}

/// `n_contacts + 10` unit masses in a chain (`m = c = k = 1`), the first attached to ground,
/// 1-D friction to ground with `muN = 0.09` on the first `n_contacts` masses, and
/// `0.1 cos(w t)` on the last mass.
pub fn chain(n_contacts: usize) -> Model {
    let n = n_contacts + 10;
    let mut b = ModelBuilder::new(n)
        .title(format!(
            "chain: {n} unit masses, 1-D friction to ground on the first {n_contacts}"
        ))
        .units("consistent, non-dimensional")
        .spring_to_ground(0, 1.0)
        .damper_to_ground(0, 1.0);
    for i in 0..n {
        b = b.mass(i, 1.0);
        if i + 1 < n {
            b = b.spring(i, i + 1, 1.0).damper(i, i + 1, 1.0);
        }
    }
    b.dof_labels((0..n).map(|i| format!("x{}", i + 1)))
        .contacts(Contacts::to_ground(
            1,
            (0..n_contacts).collect(),
            vec![0.09; n_contacts],
        ))
        .force(n - 1, 1, 0.1, 0.0)
        .pipe(built)
}

trait Pipe: Sized {
    fn pipe<R>(self, f: impl FnOnce(Self) -> R) -> R {
        f(self)
    }
}
impl Pipe for ModelBuilder {}

/// Parameters of the lumped blade-damper-blade model (seed 004, Table 2).
#[derive(Clone, Debug, PartialEq)]
pub struct BladeDamperBlade {
    /// Blade spring `k_x1` between blade and platform, and platform springs `k_x`, `k_y` (N/m).
    pub k_blade: f64,
    /// Damper springs to ground `k_xd`, `k_yd` (N/m).
    pub k_damper: (f64, f64),
    /// Contact stiffness, tangential (in series with the slider) and normal (N/m).
    /// `None` for the tangential one makes the contact rigid (pure Coulomb).
    pub k_contact: (Option<f64>, f64),
    /// Blade mass `m1`, platform mass `m2`, damper mass `m_d` (kg).
    pub masses: (f64, f64, f64),
    /// Inclinations `alpha_1`, `alpha_2` of the two damper faces (rad).
    pub angles: (f64, f64),
    /// Stiffness-proportional damping factor `beta` on the structural springs (s).
    pub beta: f64,
    /// Friction coefficient times normal preload, `mu N0` (N).
    pub mu_n: f64,
    /// Amplitude of the force `F cos(w t)` on the left platform x-DOF `x2` (N).
    pub force: f64,
}

impl Default for BladeDamperBlade {
    fn default() -> Self {
        BladeDamperBlade {
            k_blade: 3.95e5,
            k_damper: (2e5, 1e5),
            k_contact: (Some(1e5), 1e5),
            masses: (0.1, 0.1, 0.0044),
            angles: (std::f64::consts::FRAC_PI_6, std::f64::consts::FRAC_PI_6),
            beta: 1.5e-5,
            mu_n: 0.3 * 50.0,
            force: 10.0,
        }
    }
}

/// Seed 004 section 5.2, Eq. 66, at constant normal load: DOFs `x1 x2 y3 x4 y5 x6 y7 x8`
/// (blade L, platform L, damper, platform R, blade R), plus one massless slider DOF per
/// contact when the tangential contact stiffness is finite (a Jenkins element: contact spring
/// in series with the Coulomb slider, the slider's DOF against ground).
///
/// The left face has tangent `(cos a1, sin a1)`, normal `(sin a1, -cos a1)`; the right face is
/// its mirror image, tangent `(-cos a2, sin a2)`, normal `(-sin a2, -cos a2)`. The normal
/// contact springs stay closed (constant normal load, so separation is not modelled).
pub fn blade_damper_blade(p: &BladeDamperBlade) -> Model {
    let (x1, x2, y3, x4, y5, x6, y7, x8) = (0, 1, 2, 3, 4, 5, 6, 7);
    let jenkins = p.k_contact.0.is_some();
    let n = if jenkins { 10 } else { 8 };
    let (m1, m2, md) = p.masses;
    let kb = p.k_blade;
    let (kxd, kyd) = p.k_damper;
    let c = |k: f64| p.beta * k;
    let mut b = ModelBuilder::new(n)
        .title("blade-damper-blade: lumped wedge-damper model (Wen, Qi & Wen, Table 2), constant normal load")
        .units("SI: kg, N/m, N, s")
        .mass(x1, m1)
        .mass(x8, m1)
        .mass(x2, m2)
        .mass(y3, m2)
        .mass(x6, m2)
        .mass(y7, m2)
        .mass(x4, md)
        .mass(y5, md)
        .spring(x1, x2, kb)
        .damper(x1, x2, c(kb))
        .spring(x6, x8, kb)
        .damper(x6, x8, c(kb))
        .spring_to_ground(x2, kb)
        .damper_to_ground(x2, c(kb))
        .spring_to_ground(y3, kb)
        .damper_to_ground(y3, c(kb))
        .spring_to_ground(x6, kb)
        .damper_to_ground(x6, c(kb))
        .spring_to_ground(y7, kb)
        .damper_to_ground(y7, c(kb))
        .spring_to_ground(x4, kxd)
        .damper_to_ground(x4, c(kxd))
        .spring_to_ground(y5, kyd)
        .damper_to_ground(y5, c(kyd))
        .force(x2, 1, p.force, 0.0);
    let (a1, a2) = p.angles;
    // (platform x, platform y, tangent, normal) for the left and right faces.
    let faces = [
        (x2, y3, (a1.cos(), a1.sin()), (a1.sin(), -a1.cos())),
        (x6, y7, (-a2.cos(), a2.sin()), (-a2.sin(), -a2.cos())),
    ];
    let rel =
        |px: usize, py: usize, d: (f64, f64)| vec![(px, d.0), (py, d.1), (x4, -d.0), (y5, -d.1)];
    let mut w_rows = Vec::new();
    for (i, &(px, py, t, nrm)) in faces.iter().enumerate() {
        b = b.spring_along(&rel(px, py, nrm), p.k_contact.1);
        match p.k_contact.0 {
            Some(kt) => {
                let mut bt = rel(px, py, t);
                bt.push((8 + i, -1.0));
                b = b.spring_along(&bt, kt);
            }
            None => w_rows.push(rel(px, py, t)),
        }
    }
    let mut labels = vec![
        "x1 blade L",
        "x2 platform L",
        "y3 platform L",
        "x4 damper",
        "y5 damper",
        "x6 platform R",
        "y7 platform R",
        "x8 blade R",
    ];
    let contacts = if jenkins {
        labels.extend(["slider L", "slider R"]);
        Contacts::to_ground(1, vec![8, 9], vec![p.mu_n; 2])
    } else {
        let trip: Vec<_> = w_rows
            .iter()
            .enumerate()
            .flat_map(|(r, row)| {
                row.iter()
                    .map(move |&(j, v)| faer::sparse::Triplet::new(r, j, v))
            })
            .collect();
        let w = crate::SparseMatrix::try_new_from_triplets(2, n, &trip)
            .expect("W indices are within the 8 DOFs");
        Contacts::from_matrix(1, w, vec![p.mu_n; 2])
    };
    built(b.dof_labels(labels).contacts(contacts))
}
