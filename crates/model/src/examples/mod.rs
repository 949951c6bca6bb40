//! The example models of the papers we reproduce, built in code.
//!
//! Sources and parameters are listed in `models/README.md`; each function's doc names its
//! source. Every example is also shipped as an HDF5 file in `models/` and can be regenerated
//! with `ewr model example NAME -o FILE`.
//!
//! One module per paper or family: `seed000` (the oscillator and the two-mass damper),
//! `seed003` (the 1-D two-DOF chain), `blade_damper_blade` (seed 004's lumped wedge damper),
//! `contact_3d` (the 3-D contact examples), and the generated `chain`, `bladed_disk` (cyclic
//! symmetry) and `sector` (a hexahedral FE mesh). This module is the catalogue: [`Example`]
//! names them for the CLI and builds them with [`ExampleOptions`].

mod blade_damper_blade;
mod bladed_disk;
mod built;
mod chain;
mod contact_3d;
mod sector;
mod seed000;
mod seed003;

pub use blade_damper_blade::{
    BladeDamperBlade, BladeDamperBlade3d, blade_damper_blade, blade_damper_blade_3d,
};
pub use bladed_disk::{BladedDisk, bladed_disk};
pub use chain::chain;
pub use contact_3d::{single_contact_3d, wedge_damper_3d};
pub use sector::{SECTOR_K_CONTACT, SECTOR_MU, Sector, sector, sector_disk};
pub use seed000::{oscillator_2d, two_mass_damper};
pub use seed003::two_dof_1d;

use crate::model::Model;
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
