//! The example models of the papers we reproduce, built in code.
//!
//! Sources and parameters are listed in `models/README.md`; each function's doc names its
//! source. Every example is also shipped as an HDF5 file in `models/` and can be regenerated
//! with `ewr model example NAME -o FILE`.

use crate::builder::ModelBuilder;
use crate::model::{Contacts, Kinematics, Model, NormalContacts};
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
    /// The same with 2-D contact elements: normal load that varies, lift-off, preload.
    BladeDamperBlade3d,
    /// One point mass on a 3-D contact (2 tangential directions + normal) to ground.
    SingleContact3d,
    /// The wedge damper of `BladeDamperBlade3d` with an axial direction: 2 tangential
    /// directions per face, varying normal load and lift-off.
    WedgeDamper3d,
    /// Generated bladed-disk-like sector (hexahedral FE mesh, under-platform contacts).
    Sector,
    /// One sector of a lumped tuned bladed disk with shroud contacts between neighbouring
    /// blades (cyclic symmetry, engine-order excitation).
    BladedDisk,
}

impl Example {
    /// Every example, in the order `ewr model example --list` prints them.
    pub const ALL: [Example; 10] = [
        Example::Oscillator2d,
        Example::TwoMassDamper,
        Example::TwoDof1d,
        Example::Chain,
        Example::BladeDamperBlade,
        Example::BladeDamperBlade3d,
        Example::SingleContact3d,
        Example::WedgeDamper3d,
        Example::Sector,
        Example::BladedDisk,
    ];

    /// The CLI name, also the file stem in `models/`.
    pub fn name(self) -> &'static str {
        match self {
            Example::Oscillator2d => "oscillator-2d",
            Example::TwoMassDamper => "two-mass-damper",
            Example::TwoDof1d => "two-dof-1d",
            Example::Chain => "chain",
            Example::BladeDamperBlade => "blade-damper-blade",
            Example::BladeDamperBlade3d => "blade-damper-blade-3d",
            Example::SingleContact3d => "single-contact-3d",
            Example::WedgeDamper3d => "wedge-damper-3d",
            Example::Sector => "sector",
            Example::BladedDisk => "bladed-disk",
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
            Example::BladeDamperBlade3d => {
                "blade-damper-blade with 2-D contact elements: k_t=k_n=1e5, mu=0.3, preload N0=50 N, f=40cos(wt), lifts off (seed 004)"
            }
            Example::WedgeDamper3d => {
                "blade-damper-blade-3d with axial DOFs: 2 tangential directions per face (Coulomb disc mu lambda), axial push 20 sin(wt), lifts off"
            }
            Example::SingleContact3d => {
                "one mass, 3-D contact to ground (2 tangential + normal, k_n=100), mu=0.4, static load 20, lifts off above w=5.5"
            }
            Example::Sector => {
                "generated steel bladed-disk sector (hex8), N 2-D under-platform contacts, --refine R"
            }
            Example::BladedDisk => {
                "one sector of a lumped tuned bladed disk (N=12, EO 3): 2-D shroud contact to the next blade and a platform contact, cyclic symmetry"
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
            Example::BladeDamperBlade3d => blade_damper_blade_3d(&BladeDamperBlade3d::default()),
            Example::SingleContact3d => single_contact_3d(),
            Example::WedgeDamper3d => wedge_damper_3d(),
            Example::BladedDisk => bladed_disk(&BladedDisk {
                sectors: opts.sectors.unwrap_or(BladedDisk::default().sectors),
                engine_order: opts
                    .engine_order
                    .unwrap_or(BladedDisk::default().engine_order),
            }),
            Example::Sector => {
                let p = Sector {
                    refine: opts.refine.unwrap_or(1),
                    contacts: opts.contacts.unwrap_or(Sector::default().contacts),
                    contact_3d: opts.contact_3d,
                    mu_n: opts.mu_n.unwrap_or(Sector::default().mu_n),
                    ..Sector::default()
                };
                match opts.sectors {
                    Some(ns) => sector_disk(&p, ns, opts.engine_order.unwrap_or(3)),
                    None => sector(&p),
                }
            }
        };
        if let Some(mu_n) = opts.mu_n
            && !m.contacts.has_normal()
        {
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
    /// Number of friction contacts of `chain` (default 15) or `sector` (default 20).
    pub contacts: Option<usize>,
    /// Mesh refinement level of `sector` (default 1, about 2 000 DOFs; 4 gives about
    /// 108 000).
    pub refine: Option<usize>,
    /// 3-D contacts (normal direction, preload, contact stiffness) for `sector`.
    pub contact_3d: bool,
    /// Damper mass of `two-mass-damper` (default 1; 0 gives the massless damper of Fig. 23).
    pub damper_mass: Option<f64>,
    /// Number of sectors of `bladed-disk` (default 12); for `sector`, closes it into a disk
    /// of that many sectors with inter-sector contacts ([`sector_disk`]).
    pub sectors: Option<usize>,
    /// Engine order of `bladed-disk` and of `sector` with `sectors` (default 3).
    pub engine_order: Option<i64>,
}

/// Parameters of [`bladed_disk`].
#[derive(Clone, Debug, PartialEq)]
pub struct BladedDisk {
    /// Number of sectors `N`.
    pub sectors: usize,
    /// Engine order of the excitation.
    pub engine_order: i64,
}

impl Default for BladedDisk {
    fn default() -> Self {
        BladedDisk {
            sectors: 12,
            engine_order: 3,
        }
    }
}

/// One sector of a lumped tuned bladed disk, the cyclic-symmetry example: a disk mass
/// (`m = 2`, circumferential `x` and axial `y`) on ground springs (4, 6) coupled to the next
/// sector's disk (2, 1), a blade mass (`m = 1`) on the disk (1, 1.5), Rayleigh damping
/// `0.005 K`. Two 2-D friction contacts: the shroud, blade against the next sector's blade
/// (`muN = 0.5`), and the platform, blade against its own disk (`muN = 0.3`). Forcing
/// `cos(w t)` circumferential and `0.5 sin(w t)` axial on the blade, engine order `EO`.
///
/// DOFs 4..8 are the next sector's disk and blade (the right boundary, matched with
/// DOFs 0..4): the next disk carries the coupling springs, the next blade only the shroud
/// contact. Built for this project (no published source); small enough to compare with its
/// full annulus (`Model::annulus`).
pub fn bladed_disk(p: &BladedDisk) -> Model {
    let labels = [
        "disk_x",
        "disk_y",
        "blade_x",
        "blade_y",
        "next_disk_x",
        "next_disk_y",
        "next_blade_x",
        "next_blade_y",
    ];
    built(
        ModelBuilder::new(8)
            .title(format!(
                "bladed-disk: one sector of a lumped tuned bladed disk, N = {}, EO {}",
                p.sectors, p.engine_order
            ))
            .units("consistent, non-dimensional")
            .dof_labels(labels)
            .mass(0, 2.0)
            .mass(1, 2.0)
            .mass(2, 1.0)
            .mass(3, 1.0)
            .spring_to_ground(0, 4.0)
            .spring_to_ground(1, 6.0)
            .spring(0, 4, 2.0)
            .spring(1, 5, 1.0)
            .spring(0, 2, 1.0)
            .spring(1, 3, 1.5)
            .rayleigh(0.0, 0.005)
            .contacts(Contacts {
                k_t: Some(vec![1.0, 1.0]),
                ..Contacts::between(
                    2,
                    vec![2, 3, 2, 3],
                    vec![Some(6), Some(7), Some(0), Some(1)],
                    vec![0.5, 0.3],
                )
            })
            .force(2, 1, 1.0, 0.0)
            .force(3, 1, 0.0, 0.5)
            .cyclic(crate::Cyclic {
                sectors: p.sectors,
                engine_order: p.engine_order,
                left: vec![0, 1, 2, 3],
                right: vec![4, 5, 6, 7],
            }),
    )
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

/// A sparse contact map from its rows, each a list of `(DOF, coefficient)` within `n` DOFs.
fn rows_matrix(rows: &[Vec<(usize, f64)>], n: usize) -> crate::SparseMatrix {
    let trip: Vec<_> = rows
        .iter()
        .enumerate()
        .flat_map(|(r, row)| {
            row.iter()
                .map(move |&(j, v)| faer::sparse::Triplet::new(r, j, v))
        })
        .collect();
    crate::SparseMatrix::try_new_from_triplets(rows.len(), n, &trip)
        .expect("contact rows use DOFs of the model")
}

/// DOF labels of the blade-damper-blade structure.
const BDB_LABELS: [&str; 8] = [
    "x1 blade L",
    "x2 platform L",
    "y3 platform L",
    "x4 damper",
    "y5 damper",
    "x6 platform R",
    "y7 platform R",
    "x8 blade R",
];

/// A damper face: platform x DOF, platform y DOF, tangent, normal.
type Face = (usize, usize, (f64, f64), (f64, f64));

/// The damper faces as `(platform x, platform y, tangent, normal)`, left then right: the left
/// face has tangent `(cos a1, sin a1)` and normal `(sin a1, -cos a1)`, the right one is its
/// mirror image.
fn wedge_faces((a1, a2): (f64, f64)) -> [Face; 2] {
    [
        (1, 2, (a1.cos(), a1.sin()), (a1.sin(), -a1.cos())),
        (5, 6, (-a2.cos(), a2.sin()), (-a2.sin(), -a2.cos())),
    ]
}

/// The row `s d . (platform - damper)` of a face (damper DOFs `x4`, `y5`).
fn face_row(px: usize, py: usize, d: (f64, f64), s: f64) -> Vec<(usize, f64)> {
    vec![(px, s * d.0), (py, s * d.1), (3, -s * d.0), (4, -s * d.1)]
}

/// The unilateral side of the wedge damper's 2-D contact elements: normal rows `w_n`, the
/// interference `-N0 / k_n` that preloads each face, `mu`, `k_n`.
fn wedge_normal(p: &BladeDamperBlade3d, w_n: crate::SparseMatrix) -> NormalContacts {
    let k_n = p.base.k_contact.1;
    NormalContacts {
        kinematics: Kinematics::Matrix(w_n),
        g0: vec![-p.preload / k_n; 2],
        mu: vec![p.mu; 2],
        k_n: Some(vec![k_n; 2]),
        load: None,
    }
}

/// The structure shared by [`blade_damper_blade`] and [`blade_damper_blade_3d`]: masses,
/// springs and dampers of DOFs `x1 x2 y3 x4 y5 x6 y7 x8`, and the forcing on `x2`, in a model
/// of `n` DOFs.
fn blade_damper_blade_structure(p: &BladeDamperBlade, n: usize, title: &str) -> ModelBuilder {
    let (x1, x2, y3, x4, y5, x6, y7, x8) = (0, 1, 2, 3, 4, 5, 6, 7);
    let (m1, m2, md) = p.masses;
    let kb = p.k_blade;
    let (kxd, kyd) = p.k_damper;
    let c = |k: f64| p.beta * k;
    ModelBuilder::new(n)
        .title(title)
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
        .force(x2, 1, p.force, 0.0)
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
    let jenkins = p.k_contact.0.is_some();
    let n = if jenkins { 10 } else { 8 };
    let mut b = blade_damper_blade_structure(
        p,
        n,
        "blade-damper-blade: lumped wedge-damper model (Wen, Qi & Wen, Table 2), constant normal load",
    );
    let rel = |px: usize, py: usize, d: (f64, f64)| face_row(px, py, d, 1.0);
    let mut w_rows = Vec::new();
    for (i, &(px, py, t, nrm)) in wedge_faces(p.angles).iter().enumerate() {
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
    let mut labels = BDB_LABELS.to_vec();
    let contacts = if jenkins {
        labels.extend(["slider L", "slider R"]);
        Contacts::to_ground(1, vec![8, 9], vec![p.mu_n; 2])
    } else {
        let w = rows_matrix(&w_rows, n);
        Contacts::from_matrix(1, w, vec![p.mu_n; 2])
    };
    built(b.dof_labels(labels).contacts(contacts))
}

/// Parameters of [`blade_damper_blade_3d`]: the structure of [`BladeDamperBlade`] (its
/// `k_contact` are the element's tangential and normal stiffnesses; its `mu_n` is unused)
/// with a friction coefficient and a normal preload per face.
#[derive(Clone, Debug, PartialEq)]
pub struct BladeDamperBlade3d {
    /// Structure, masses, damping, forcing and contact stiffnesses.
    pub base: BladeDamperBlade,
    /// Friction coefficient of both faces.
    pub mu: f64,
    /// Normal preload `N0` of each face (N): the element's force at zero relative motion.
    pub preload: f64,
}

impl Default for BladeDamperBlade3d {
    fn default() -> Self {
        BladeDamperBlade3d {
            // 40 N (chosen; the paper gives no level): both faces slip near the first
            // resonance and lift off part of the period at its peak.
            base: BladeDamperBlade {
                force: 40.0,
                ..BladeDamperBlade::default()
            },
            mu: 0.3,
            preload: 50.0,
        }
    }
}

/// Seed 004 section 5.2 with its 2-D contact element (Yang, Chu & Menq): on each damper face
/// a tangential stiffness `k_t` in series with Coulomb friction of bound `mu lambda(t)`, and a
/// normal stiffness `k_n` in series with a unilateral contact, preloaded by an interference
/// `g0 = -N0 / k_n` so that the element carries `lambda = N0 + k_n (compression)` as in the
/// paper's element and lifts off when that reaches zero. DOFs `x1 x2 y3 x4 y5 x6 y7 x8` as in
/// [`blade_damper_blade`], without slider DOFs (the compliance is part of the contacts).
///
/// The normal row of a face reads `n . (damper - platform)` with `n` the face normal of
/// [`blade_damper_blade`] (`(sin a1, -cos a1)`, `(-sin a2, -cos a2)`), so that the gap closes
/// when the damper moves up into the platforms (the centrifugal direction) and the normal
/// force pushes the damper down and the platforms up.
pub fn blade_damper_blade_3d(p: &BladeDamperBlade3d) -> Model {
    let b0 = &p.base;
    let b = blade_damper_blade_structure(
        b0,
        8,
        "blade-damper-blade-3d: lumped wedge-damper model with 2-D contact elements (Wen, Qi & Wen, Table 2), normal load varies and lifts off",
    );
    let faces = wedge_faces(b0.angles);
    // d . (platform - damper) for the tangent, n . (damper - platform) for the normal.
    let matrix = |rows: Vec<Vec<(usize, f64)>>| rows_matrix(&rows, 8);
    let w_t = matrix(faces.iter().map(|f| face_row(f.0, f.1, f.2, 1.0)).collect());
    let w_n = matrix(
        faces
            .iter()
            .map(|f| face_row(f.0, f.1, f.3, -1.0))
            .collect(),
    );
    let mut contacts = Contacts::from_matrix(1, w_t, vec![0.0; 2]);
    if let Some(k_t) = b0.k_contact.0 {
        contacts.k_t = Some(vec![k_t; 2]);
    }
    contacts.normal = Some(wedge_normal(p, w_n));
    built(b.dof_labels(BDB_LABELS).contacts(contacts))
}

/// The wedge damper of [`blade_damper_blade_3d`] (its default parameters) moving out of
/// plane as well: the platforms and the damper also move along the blade axis (DOFs `z2`,
/// `z4`, `z6`: platform axial springs `k_blade`, damper axial spring `k_damper.1`, masses as
/// in plane), each face has two tangential directions, its in-plane tangent and the axis,
/// with the Coulomb disc of radius `mu lambda(t)`, and the left platform is also pushed
/// axially by `F/2 sin(w t)`. The faces slide along elliptical paths, so the friction force
/// turns (2-D friction) while the normal load varies and lifts off.
pub fn wedge_damper_3d() -> Model {
    let p = BladeDamperBlade3d::default();
    let b0 = &p.base;
    let (z2, z4, z6) = (8, 9, 10);
    let (_, m2, md) = b0.masses;
    let (kb, kzd) = (b0.k_blade, b0.k_damper.1);
    let c = |k: f64| b0.beta * k;
    let b = blade_damper_blade_structure(
        b0,
        11,
        "wedge-damper-3d: lumped wedge damper between two blade platforms, in plane and axial (2 tangential directions per face), normal load varies and lifts off",
    )
    .mass(z2, m2)
    .mass(z6, m2)
    .mass(z4, md)
    .spring_to_ground(z2, kb)
    .damper_to_ground(z2, c(kb))
    .spring_to_ground(z6, kb)
    .damper_to_ground(z6, c(kb))
    .spring_to_ground(z4, kzd)
    .damper_to_ground(z4, c(kzd))
    .force(z2, 1, 0.0, 0.5 * b0.force);
    let faces = wedge_faces(b0.angles);
    let axial = [z2, z6];
    // Per face: its in-plane tangent, then the axis, both as platform - damper.
    let w_t = rows_matrix(
        &faces
            .iter()
            .zip(axial)
            .flat_map(|(f, z)| [face_row(f.0, f.1, f.2, 1.0), vec![(z, 1.0), (z4, -1.0)]])
            .collect::<Vec<_>>(),
        11,
    );
    let w_n = rows_matrix(
        &faces
            .iter()
            .map(|f| face_row(f.0, f.1, f.3, -1.0))
            .collect::<Vec<_>>(),
        11,
    );
    let k_t = b0.k_contact.0.unwrap_or(f64::INFINITY);
    let mut contacts = Contacts::from_matrix(2, w_t, vec![0.0; 2]);
    contacts.k_t = Some(vec![k_t; 2]);
    contacts.normal = Some(wedge_normal(&p, w_n));
    let mut labels = BDB_LABELS.to_vec();
    labels.extend([
        "z2 platform L axial",
        "z4 damper axial",
        "z6 platform R axial",
    ]);
    built(b.dof_labels(labels).contacts(contacts))
}

/// One unit mass with DOFs `x, y` (tangential, springs 1 and 2) and `z` (normal, spring 3),
/// damping 0.01 on each, on a 3-D contact to ground: 2 tangential directions with friction
/// coefficient `mu = 0.4`, and a unilateral normal contact behind a contact stiffness
/// `k_n = 100`, pressed by a static load of 20 on `z` (so `mu lambda = 8` at rest, as in
/// seed 000's oscillator), shaken by `10 cos(w t)` on `x`, `y` and `15 cos(w t)` on `z`:
/// the normal force swings more as `w` approaches the contact resonance (about 10), and the
/// mass lifts off part of the period above `w` about 5.5.
pub fn single_contact_3d() -> Model {
    let mut contacts = Contacts::to_ground(2, vec![0, 1], vec![0.0]);
    contacts.normal = Some(NormalContacts {
        kinematics: Kinematics::Dofs {
            dofs: vec![2],
            other: None,
        },
        g0: vec![0.0],
        mu: vec![0.4],
        k_n: Some(vec![100.0]),
        load: None,
    });
    built(
        ModelBuilder::new(3)
            .title("single-contact-3d: one mass on a 3-D friction contact to ground (2 tangential directions + unilateral normal)")
            .units("consistent, non-dimensional")
            .dof_labels(["x", "y", "z"])
            .mass(0, 1.0)
            .mass(1, 1.0)
            .mass(2, 1.0)
            .spring_to_ground(0, 1.0)
            .spring_to_ground(1, 2.0)
            .spring_to_ground(2, 3.0)
            .damper_to_ground(0, 0.01)
            .damper_to_ground(1, 0.01)
            .damper_to_ground(2, 0.01)
            .contacts(contacts)
            .force(0, 1, 10.0, 0.0)
            .force(1, 1, 10.0, 0.0)
            .force(2, 0, -20.0, 0.0)
            .force(2, 1, 15.0, 0.0),
    )
}

/// Parameters of the generated bladed-disk-like [`sector`] (see `models/README.md`).
#[derive(Clone, Debug, PartialEq)]
pub struct Sector {
    /// Mesh refinement level `R >= 1`: the disk sector has `8R x 5R x 8R` and the blade
    /// `2R x 12R x 8R` hexahedra (tangential x radial x axial). `R = 1` gives about 2 000
    /// DOFs, `R = 4` about 108 000, `R = 5` about 190 000.
    pub refine: usize,
    /// Number of 2-D friction contacts to ground (under-platform dampers), spread evenly
    /// over the platform's top face and then the disk sector's side faces.
    pub contacts: usize,
    /// Friction bound `mu N` of every contact (N).
    pub mu_n: f64,
    /// Amplitude of the tangential force `F cos(w t)` at the blade tip (N).
    pub force: f64,
    /// 3-D contacts instead of constant bounds: each contact gets its node's third DOF as
    /// normal direction, friction coefficient [`SECTOR_MU`], contact stiffnesses
    /// [`SECTOR_K_CONTACT`] and an interference preload of `mu_n / mu` (N).
    pub contact_3d: bool,
}

impl Default for Sector {
    fn default() -> Self {
        Sector {
            refine: 1,
            contacts: 20,
            mu_n: 100.0,
            force: 50.0,
            contact_3d: false,
        }
    }
}

/// Friction coefficient of the 3-D contacts of [`sector`].
pub const SECTOR_MU: f64 = 0.3;
/// Tangential and normal contact stiffness of the 3-D contacts of [`sector`] (N/m): about the
/// nodal stiffness of the mesh at refinement 1.
pub const SECTOR_K_CONTACT: f64 = 1e8;

/// Geometry and material of [`sector`]: steel, SI units.
const SECTOR_E: f64 = 210e9;
const SECTOR_NU: f64 = 0.3;
const SECTOR_RHO: f64 = 7850.0;
/// Disk sector: tangential width, radial height, axial depth (m).
const SECTOR_DISK: [f64; 3] = [0.04, 0.03, 0.04];
/// Blade: radial length (m); its thickness is a quarter of the sector width, its chord the
/// disk's axial depth.
const SECTOR_BLADE_LENGTH: f64 = 0.12;
/// Rayleigh damping `C = alpha M + beta K` (about 0.4 % of critical at the first bending
/// mode, rising with frequency).
const SECTOR_RAYLEIGH: (f64, f64) = (5.0, 2e-6);
/// The friction law's `rho` on every contact (N s/m).
const SECTOR_RHO_LAW: f64 = 1e4;

impl Sector {
    fn dims(&self) -> ([usize; 3], [usize; 2]) {
        let r = self.refine.max(1);
        // Disk: nx, ny, nz elements; blade: x-columns (thickness) and radial rows.
        ([8 * r, 5 * r, 8 * r], [2 * r, 12 * r])
    }

    /// The largest number of contacts the mesh has candidate nodes for.
    pub fn max_contacts(&self) -> usize {
        let ([nx, ny, nz], [nbx, _]) = self.dims();
        // Platform top face without the blade footprint, then the two side faces above the
        // clamped hub row.
        (nx - nbx) * (nz + 1) + 2 * (ny - 1) * (nz + 1)
    }

    /// The largest number of inter-sector contacts of [`sector_disk`]: nodes on the outer
    /// half of the blade face.
    pub fn max_snubber_contacts(&self) -> usize {
        let ([_, _, nz], [_, nby]) = self.dims();
        (nby - nby / 2) * (nz + 1)
    }

    /// Number of DOFs of the mesh (3 per node, the hub face clamped).
    pub fn n_dofs(&self) -> usize {
        let ([nx, ny, nz], [nbx, nby]) = self.dims();
        3 * ((nx + 1) * ny * (nz + 1) + (nbx + 1) * nby * (nz + 1))
    }
}

/// Stiffness and consistent mass of an 8-node trilinear hexahedron that is an `a x b x c`
/// box (2 x 2 x 2 Gauss points, exact for the mass), DOFs node-major `(x, y, z)` with the
/// corners in the order of [`HEX_CORNERS`].
#[allow(clippy::needless_range_loop)] // index notation mirrors the B^T D B formulas
fn hex8_box(a: f64, b: f64, c: f64) -> ([[f64; 24]; 24], [[f64; 24]; 24]) {
    let (e, nu) = (SECTOR_E, SECTOR_NU);
    let lam = e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    let mu = e / (2.0 * (1.0 + nu));
    let mut k = [[0.0; 24]; 24];
    let mut m = [[0.0; 24]; 24];
    let gp = 1.0 / 3f64.sqrt();
    let det = a * b * c / 8.0;
    for &gx in &[-gp, gp] {
        for &gy in &[-gp, gp] {
            for &gz in &[-gp, gp] {
                let mut nval = [0.0; 8];
                let mut dn = [[0.0; 3]; 8];
                for (i, s) in HEX_CORNERS.iter().enumerate() {
                    let (fx, fy, fz) = (1.0 + s[0] * gx, 1.0 + s[1] * gy, 1.0 + s[2] * gz);
                    nval[i] = fx * fy * fz / 8.0;
                    dn[i] = [
                        s[0] * fy * fz / 8.0 * 2.0 / a,
                        fx * s[1] * fz / 8.0 * 2.0 / b,
                        fx * fy * s[2] / 8.0 * 2.0 / c,
                    ];
                }
                // Strain (xx, yy, zz, xy, yz, zx) = B u.
                let mut bm = [[0.0; 24]; 6];
                for i in 0..8 {
                    let [dx, dy, dz] = dn[i];
                    bm[0][3 * i] = dx;
                    bm[1][3 * i + 1] = dy;
                    bm[2][3 * i + 2] = dz;
                    bm[3][3 * i] = dy;
                    bm[3][3 * i + 1] = dx;
                    bm[4][3 * i + 1] = dz;
                    bm[4][3 * i + 2] = dy;
                    bm[5][3 * i] = dz;
                    bm[5][3 * i + 2] = dx;
                }
                let d = |p: usize, q: usize| -> f64 {
                    match (p < 3, q < 3) {
                        (true, true) => lam + if p == q { 2.0 * mu } else { 0.0 },
                        (false, false) if p == q => mu,
                        _ => 0.0,
                    }
                };
                let mut db = [[0.0; 24]; 6];
                for p in 0..6 {
                    for j in 0..24 {
                        db[p][j] = (0..6).map(|q| d(p, q) * bm[q][j]).sum();
                    }
                }
                for i in 0..24 {
                    for j in 0..24 {
                        k[i][j] += det * (0..6).map(|p| bm[p][i] * db[p][j]).sum::<f64>();
                    }
                }
                for i in 0..8 {
                    for j in 0..8 {
                        let v = SECTOR_RHO * det * nval[i] * nval[j];
                        for dir in 0..3 {
                            m[3 * i + dir][3 * j + dir] += v;
                        }
                    }
                }
            }
        }
    }
    (k, m)
}

/// The generated [`sector`] closed into a tuned disk of `sectors` sectors under engine order
/// `engine_order` (cyclic symmetry, docs/cyclic.md). The disk block's faces `x = 0` (left)
/// and `x = wd` (right) are the cut faces: the disk is unrolled, so matched nodes share their
/// Cartesian directions and no rotation is needed. Instead of contacts to ground, `contacts`
/// 2-D inter-sector contacts join the blade's face `x = x1` to the next blade's face
/// `x = x0` on the outer half of the blade (part-span snubbers; slip radial and axial,
/// `mu N` each). The next blade's contact DOFs are appended as right DOFs without mass or
/// stiffness, paired with this blade's face-`x0` DOFs.
///
/// # Panics
/// When `refine` is 0, `sectors < 2`, or `contacts` exceeds
/// [`Sector::max_snubber_contacts`].
pub fn sector_disk(p: &Sector, sectors: usize, engine_order: i64) -> Model {
    assert!(sectors >= 2, "sector_disk: at least 2 sectors");
    assert!(
        p.contacts <= p.max_snubber_contacts(),
        "sector_disk: {} contacts requested, the blade has room for {}",
        p.contacts,
        p.max_snubber_contacts()
    );
    let mut m = sector(&Sector {
        contacts: 0,
        contact_3d: false,
        ..p.clone()
    });
    let ([nx, ny, nz], [nbx, nby]) = p.dims();
    let (ix0, ix1) = ((nx - nbx) / 2, (nx - nbx) / 2 + nbx);
    let labels = m.dof_labels.clone().expect("sector labels its DOFs");
    let index: std::collections::HashMap<&str, usize> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();
    let dof =
        |ix: usize, iy: usize, iz: usize, d: &str| index[format!("{ix}.{iy}.{iz}.{d}").as_str()];
    let n = m.n_dofs();
    let mut left = Vec::new();
    let mut right = Vec::new();
    for iy in 1..=ny {
        for iz in 0..=nz {
            for d in ["x", "y", "z"] {
                left.push(dof(0, iy, iz, d));
                right.push(dof(nx, iy, iz, d));
            }
        }
    }
    // Snubber contacts spread over the outer half of the blade face.
    let rows: Vec<(usize, usize)> = (ny + nby / 2 + 1..=ny + nby)
        .flat_map(|iy| (0..=nz).map(move |iz| (iy, iz)))
        .collect();
    let nc = p.contacts;
    let mut own = Vec::with_capacity(2 * nc);
    let mut next = Vec::with_capacity(2 * nc);
    let mut new_labels = labels.clone();
    for c in 0..nc {
        let (iy, iz) = rows[c * rows.len() / nc.max(1)];
        for d in ["y", "z"] {
            own.push(dof(ix1, iy, iz, d));
            let phantom = n + next.len();
            next.push(Some(phantom));
            left.push(dof(ix0, iy, iz, d));
            right.push(phantom);
            new_labels.push(format!("next:{ix0}.{iy}.{iz}.{d}"));
        }
    }
    let n2 = n + next.len();
    let widen = |a: &crate::model::SparseMatrix| {
        let trip: Vec<faer::sparse::Triplet<usize, usize, f64>> = a
            .triplet_iter()
            .map(|t| faer::sparse::Triplet::new(t.row, t.col, *t.val))
            .collect();
        crate::model::SparseMatrix::try_new_from_triplets(n2, n2, &trip).expect("indices < n")
    };
    m.mass = widen(&m.mass);
    m.stiffness = widen(&m.stiffness);
    m.contacts = Contacts::between(2, own, next, vec![p.mu_n; nc]).with_rho(SECTOR_RHO_LAW);
    m.dof_labels = Some(new_labels);
    m.title = Some(format!(
        "sector disk: the generated sector closed into {sectors} sectors, EO {engine_order}, \
         {n2} DOFs per sector, {nc} inter-sector snubber contacts"
    ));
    m.cyclic = Some(crate::Cyclic {
        sectors,
        engine_order,
        left,
        right,
    });
    let problems = crate::validate::validate(&m);
    assert!(
        !crate::validate::has_errors(&problems),
        "generated sector disk is invalid: {problems:?}"
    );
    m
}

/// Corner signs of the reference hexahedron `[-1, 1]^3`.
const HEX_CORNERS: [[f64; 3]; 8] = [
    [-1.0, -1.0, -1.0],
    [1.0, -1.0, -1.0],
    [1.0, 1.0, -1.0],
    [-1.0, 1.0, -1.0],
    [-1.0, -1.0, 1.0],
    [1.0, -1.0, 1.0],
    [1.0, 1.0, 1.0],
    [-1.0, 1.0, 1.0],
];

/// A bladed-disk-like sector: a steel disk-sector block clamped at the hub with a plate-like
/// blade on top, meshed with 8-node hexahedra (consistent mass), Rayleigh damping, `contacts`
/// 2-D friction contacts to ground on the platform (under-platform dampers: the tangential
/// and axial directions of a node), and a tangential force at the blade tip. Coordinates:
/// `x` tangential, `y` radial (hub at `y = 0`), `z` axial. See `models/README.md`.
///
/// # Panics
/// When `contacts` exceeds [`Sector::max_contacts`] or `refine` is 0.
pub fn sector(p: &Sector) -> Model {
    use crate::model::{Damping, ForcingTerm};
    use faer::sparse::{SparseColMat, Triplet};
    assert!(p.refine >= 1, "sector: refine must be at least 1");
    assert!(
        p.contacts <= p.max_contacts(),
        "sector: {} contacts requested, the mesh has room for {}",
        p.contacts,
        p.max_contacts()
    );
    let ([nx, ny, nz], [nbx, nby]) = p.dims();
    let ix0 = (nx - nbx) / 2;
    let ix1 = ix0 + nbx;
    // Node numbering: (ix, iy, iz) with iy <= ny everywhere and iy > ny only for
    // ix0 <= ix <= ix1; the hub row iy = 0 is clamped and gets no DOFs.
    let (nxp, nzp) = (nx + 1, nz + 1);
    let disk_nodes = nxp * ny * nzp; // rows 1..=ny
    let node = |ix: usize, iy: usize, iz: usize| -> Option<usize> {
        if iy == 0 {
            None
        } else if iy <= ny {
            Some(((iy - 1) * nxp + ix) * nzp + iz)
        } else {
            debug_assert!((ix0..=ix1).contains(&ix));
            Some(disk_nodes + ((iy - ny - 1) * (nbx + 1) + (ix - ix0)) * nzp + iz)
        }
    };
    let n = p.n_dofs();
    let [wd, hd, dd] = SECTOR_DISK;
    let disk_el = hex8_box(wd / nx as f64, hd / ny as f64, dd / nz as f64);
    let blade_el = hex8_box(
        wd / nx as f64,
        SECTOR_BLADE_LENGTH / nby as f64,
        dd / nz as f64,
    );
    let mut elements: Vec<([usize; 3], bool)> = Vec::new();
    for iy in 0..ny + nby {
        let (xs, blade) = if iy < ny {
            (0..nx, false)
        } else {
            (ix0..ix1, true)
        };
        for ix in xs {
            for iz in 0..nz {
                elements.push(([ix, iy, iz], blade));
            }
        }
    }
    let assemble = |which: usize| -> SparseColMat<usize, f64> {
        let mut trip: Vec<Triplet<usize, usize, f64>> = Vec::with_capacity(elements.len() * 300);
        for &([ix, iy, iz], blade) in &elements {
            let el = if blade { &blade_el } else { &disk_el };
            let mat = if which == 0 { &el.0 } else { &el.1 };
            let dofs: Vec<Option<usize>> = HEX_CORNERS
                .iter()
                .flat_map(|s| {
                    let (cx, cy, cz) = (
                        ix + usize::from(s[0] > 0.0),
                        iy + usize::from(s[1] > 0.0),
                        iz + usize::from(s[2] > 0.0),
                    );
                    let nd = node(cx, cy, cz);
                    (0..3).map(move |d| nd.map(|k| 3 * k + d))
                })
                .collect();
            for (i, di) in dofs.iter().enumerate() {
                let Some(di) = *di else { continue };
                for (j, dj) in dofs.iter().enumerate() {
                    // Lower triangle only, mirrored after summation.
                    if let Some(dj) = *dj
                        && dj <= di
                    {
                        trip.push(Triplet::new(di, dj, mat[i][j]));
                    }
                }
            }
        }
        let lower = SparseColMat::try_new_from_triplets(n, n, &trip).expect("indices < n");
        drop(trip);
        // Full symmetric matrix from the summed lower triangle.
        let mut full: Vec<Triplet<usize, usize, f64>> = Vec::with_capacity(2 * lower.val().len());
        for t in lower.triplet_iter() {
            full.push(Triplet::new(t.row, t.col, *t.val));
            if t.row != t.col {
                full.push(Triplet::new(t.col, t.row, *t.val));
            }
        }
        SparseColMat::try_new_from_triplets(n, n, &full).expect("indices < n")
    };
    let stiffness = assemble(0);
    let mass = assemble(1);
    // Contact candidates: platform top face outside the blade footprint, then the side
    // faces x = 0 and x = wd above the hub row.
    let mut cand: Vec<usize> = Vec::new();
    for ix in (0..=nx).filter(|&ix| ix < ix0 || ix > ix1) {
        for iz in 0..=nz {
            cand.push(node(ix, ny, iz).expect("above the hub"));
        }
    }
    for ix in [0, nx] {
        for iy in 1..ny {
            for iz in 0..=nz {
                cand.push(node(ix, iy, iz).expect("above the hub"));
            }
        }
    }
    let nc = p.contacts;
    let top = cand.len() - 2 * (ny - 1) * (nz + 1);
    let mut dofs = Vec::with_capacity(2 * nc);
    let mut normal = Vec::with_capacity(nc);
    for c in 0..nc {
        let i = c * cand.len() / nc.max(1);
        let k = cand[i];
        if p.contact_3d && i >= top {
            // Side faces: the face normal is x; slip in the radial and axial directions.
            dofs.extend([3 * k + 1, 3 * k + 2]);
            normal.push(3 * k);
        } else {
            // Platform top: tangential (x) and axial (z) directions, radial normal.
            dofs.extend([3 * k, 3 * k + 2]);
            normal.push(3 * k + 1);
        }
    }
    let mut contacts = Contacts::to_ground(2, dofs, vec![p.mu_n; nc]).with_rho(SECTOR_RHO_LAW);
    if p.contact_3d {
        contacts.mu_n = vec![0.0; nc];
        contacts.rho = vec![1.0; nc];
        contacts.k_t = Some(vec![SECTOR_K_CONTACT; nc]);
        contacts.normal = Some(crate::model::NormalContacts {
            kinematics: Kinematics::Dofs {
                dofs: normal,
                other: None,
            },
            g0: vec![-p.mu_n / SECTOR_MU / SECTOR_K_CONTACT; nc],
            mu: vec![SECTOR_MU; nc],
            k_n: Some(vec![SECTOR_K_CONTACT; nc]),
            load: None,
        });
    }
    let tip = node((ix0 + ix1) / 2, ny + nby, nz / 2).expect("blade tip");
    let mut labels = vec![String::new(); n];
    for iy in 1..=ny + nby {
        let xs = if iy <= ny { 0..=nx } else { ix0..=ix1 };
        for ix in xs {
            for iz in 0..=nz {
                let k = node(ix, iy, iz).expect("above the hub");
                for (d, name) in ["x", "y", "z"].iter().enumerate() {
                    labels[3 * k + d] = format!("{ix}.{iy}.{iz}.{name}");
                }
            }
        }
    }
    let model = Model {
        title: Some(format!(
            "sector: bladed-disk-like sector, {} hex8, {n} DOFs, {nc} under-platform contacts",
            elements.len()
        )),
        units: Some("SI (m, kg, s, N)".into()),
        mass,
        stiffness,
        damping_matrix: None,
        damping: Damping {
            rayleigh: Some(SECTOR_RAYLEIGH),
            ..Damping::default()
        },
        // rho ~ force / velocity scale of the contacts (N per m/s): Newton converges in a
        // few iterations with it, in hundreds with rho = 1 (the solution does not depend on
        // rho for the exact law).
        contacts,
        forcing: vec![ForcingTerm {
            dof: 3 * tip,
            harmonic: 1,
            cos: p.force,
            sin: 0.0,
        }],
        dof_labels: Some(labels),
        cyclic: None,
    };
    let problems = crate::validate::validate(&model);
    assert!(
        !crate::validate::has_errors(&problems),
        "generated sector is invalid: {problems:?}"
    );
    model
}

#[cfg(test)]
mod sector_tests {
    use super::*;

    #[test]
    fn hex8_has_six_rigid_body_modes_and_the_right_mass() {
        let (a, b, c) = (0.02, 0.01, 0.03);
        let (k, m) = hex8_box(a, b, c);
        let kmax = k.iter().flatten().map(|v| v.abs()).fold(0.0, f64::max);
        // Translations and infinitesimal rotations (about the box centre) give no force.
        let mut modes: Vec<[f64; 24]> = Vec::new();
        for d in 0..3 {
            let mut u = [0.0; 24];
            (0..8).for_each(|i| u[3 * i + d] = 1.0);
            modes.push(u);
        }
        for (p, q) in [(0, 1), (1, 2), (2, 0)] {
            let mut u = [0.0; 24];
            for (i, s) in HEX_CORNERS.iter().enumerate() {
                let x = [s[0] * a / 2.0, s[1] * b / 2.0, s[2] * c / 2.0];
                u[3 * i + p] = -x[q];
                u[3 * i + q] = x[p];
            }
            modes.push(u);
        }
        for u in &modes {
            for row in &k {
                let f: f64 = row.iter().zip(u).map(|(k, u)| k * u).sum();
                assert!(f.abs() < 1e-9 * kmax * a, "{f}");
            }
        }
        // A pure stretch is not free.
        let mut u = [0.0; 24];
        for (i, s) in HEX_CORNERS.iter().enumerate() {
            u[3 * i] = s[0];
        }
        let e: f64 = (0..24)
            .map(|i| u[i] * (0..24).map(|j| k[i][j] * u[j]).sum::<f64>())
            .sum();
        // Uniaxial strain 2/a... energy = (lam + 2 mu) eps^2 V with eps = 2 / a.
        let nu = SECTOR_NU;
        let c11 = SECTOR_E * (1.0 - nu) / ((1.0 + nu) * (1.0 - 2.0 * nu));
        let expect = c11 * (2.0 / a).powi(2) * a * b * c;
        assert!((e - expect).abs() < 1e-9 * expect, "{e} vs {expect}");
        // Consistent mass: the x-x entries sum to the element mass.
        let total: f64 = (0..8)
            .flat_map(|i| (0..8).map(move |j| (i, j)))
            .map(|(i, j)| m[3 * i][3 * j])
            .sum();
        assert!((total - SECTOR_RHO * a * b * c).abs() < 1e-12 * total);
    }

    #[test]
    fn sector_sizes_and_contacts() {
        let p = Sector::default();
        let m = sector(&p);
        assert_eq!(m.n_dofs(), p.n_dofs());
        assert!(m.n_dofs() > 1500 && m.n_dofs() < 3000, "{}", m.n_dofs());
        assert_eq!(m.contacts.len(), 20);
        assert_eq!(m.contacts.dim, 2);
        // 108k DOFs at refine 4, with room for 1000 contacts.
        let big = Sector {
            refine: 4,
            ..Sector::default()
        };
        assert!(big.n_dofs() >= 100_000, "{}", big.n_dofs());
        assert!(big.max_contacts() >= 1000, "{}", big.max_contacts());
        // Contacts are on distinct nodes.
        let max = Sector {
            contacts: p.max_contacts(),
            ..p.clone()
        };
        let m = sector(&max);
        let ewr_model_dofs = match &m.contacts.kinematics {
            crate::model::Kinematics::Dofs { dofs, .. } => dofs.clone(),
            _ => unreachable!(),
        };
        let mut d = ewr_model_dofs.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), ewr_model_dofs.len());
    }
}
