//! The law columns of a contacts CSV file, shared by both styles: a constant friction bound
//! `mu_n`, or a 3-D contact (`mu`, gap `g0`, fixed `load`), the scaling `rho` and the
//! contact stiffnesses `k_t`, `k_n` (docs/importing.md, "3-D contacts").

use crate::ImportError;
use crate::csv::{Row, Table};
use ewr_model::{Contacts, Kinematics, NormalContacts};

/// Columns that only 3-D contacts (column `mu`) have.
pub(crate) const NORMAL_ONLY: [&str; 6] = ["g0", "k_n", "load", "eqn", "othern", "eqn_sign"];

/// The law data of every row, in row order.
pub(crate) struct Laws {
    /// True for 3-D contacts (column `mu`).
    pub three_d: bool,
    mu_n: Vec<f64>,
    rho: Vec<f64>,
    any_rho: bool,
    mu: Vec<f64>,
    g0: Vec<f64>,
    /// Fixed normal force per row, `NaN` for a unilateral contact.
    load: Vec<f64>,
    k_t: Option<Vec<f64>>,
    k_n: Option<Vec<f64>>,
}

impl Laws {
    /// Checks which law columns the header has.
    pub fn from_header(t: &Table<'_>) -> Result<Self, ImportError> {
        let three_d = match (t.has("mu_n"), t.has("mu")) {
            (true, false) => false,
            (false, true) => true,
            (true, true) => {
                return Err(t.header_err(
                    "give `mu_n` (a constant friction bound mu*N) or `mu` (the friction \
                     coefficient of 3-D contacts, whose normal load varies), not both",
                ));
            }
            (false, false) => {
                return Err(t.header_err(
                    "column `mu_n` (friction bound mu*N of each contact) is missing; for 3-D \
                     contacts, whose normal load varies and lifts off, give `mu` (friction \
                     coefficient) and the normal direction instead",
                ));
            }
        };
        if !three_d && let Some(c) = NORMAL_ONLY.iter().find(|c| t.has(c)) {
            return Err(t.header_err(format!(
                "column `{c}` belongs to 3-D contacts, which have a friction coefficient `mu` \
                 instead of the constant bound `mu_n`"
            )));
        }
        Ok(Laws {
            three_d,
            mu_n: Vec::new(),
            rho: Vec::new(),
            any_rho: false,
            mu: Vec::new(),
            g0: Vec::new(),
            load: Vec::new(),
            k_t: t.has("k_t").then(Vec::new),
            k_n: t.has("k_n").then(Vec::new),
        })
    }

    /// Reads and checks one row's law fields.
    pub fn push(&mut self, t: &Table<'_>, row: &Row) -> Result<(), ImportError> {
        let err = |m: String| t.file.err(row.line, m);
        if self.three_d {
            let mu = t.f64(row, "mu")?;
            if mu < 0.0 {
                return Err(err(format!(
                    "mu = {mu}: the friction coefficient must be >= 0"
                )));
            }
            self.mu.push(mu);
            self.mu_n.push(0.0);
            self.g0.push(t.f64_opt(row, "g0")?.unwrap_or(0.0));
            let load = t.f64_opt(row, "load")?;
            if let Some(l) = load
                && l < 0.0
            {
                return Err(err(format!(
                    "load = {l}: a fixed normal force must be >= 0 (compressive); leave it \
                     empty for a contact that lifts off"
                )));
            }
            self.load.push(load.unwrap_or(f64::NAN));
        } else {
            let mu_n = t.f64(row, "mu_n")?;
            if mu_n < 0.0 {
                return Err(err(format!(
                    "mu_n = {mu_n}: the friction bound must be >= 0"
                )));
            }
            self.mu_n.push(mu_n);
        }
        let given = t.f64_opt(row, "rho")?;
        let rho = given.unwrap_or(1.0);
        if rho <= 0.0 {
            return Err(err(format!(
                "rho = {rho}: the E-WR scaling must be > 0 (leave it empty for automatic)"
            )));
        }
        self.rho.push(rho);
        self.any_rho |= given.is_some();
        for (name, ks) in [("k_t", &mut self.k_t), ("k_n", &mut self.k_n)] {
            let Some(ks) = ks else { continue };
            let k = t.f64_opt(row, name)?.ok_or_else(|| {
                err(format!(
                    "column `{name}` is empty: give every contact's stiffness, or drop the \
                     column for rigid contacts"
                ))
            })?;
            if k <= 0.0 {
                return Err(err(format!(
                    "{name} = {k}: a contact stiffness must be > 0 (drop the column for a \
                     rigid contact)"
                )));
            }
            ks.push(k);
        }
        Ok(())
    }

    /// Whether contact `c` (a row already pushed) has a fixed normal force instead of a
    /// normal direction.
    pub fn has_load(&self, c: usize) -> bool {
        self.load.get(c).is_some_and(|l| !l.is_nan())
    }

    /// The friction bounds `mu_n` (zeros for 3-D contacts), to build the contacts with.
    pub fn mu_n(&self) -> Vec<f64> {
        self.mu_n.clone()
    }

    /// Sets `rho`, the contact stiffnesses and, for 3-D contacts, the normal side with the
    /// normal map `normal` (`nc` rows).
    pub fn apply(self, contacts: &mut Contacts, normal: Option<Kinematics>) {
        contacts.rho = self.rho;
        // An FE model is in physical units, where `rho = 1` can be many decades off the
        // contact's force per velocity (blade-ccx: 4x the Newton iterations of the automatic
        // scaling), so a contacts file that gives no `rho` at all gets the automatic one.
        contacts.rho_auto = !self.any_rho;
        contacts.k_t = self.k_t;
        if let Some(kinematics) = normal {
            let any_load = self.load.iter().any(|l| !l.is_nan());
            contacts.normal = Some(NormalContacts {
                kinematics,
                g0: self.g0,
                mu: self.mu,
                k_n: self.k_n,
                load: any_load.then_some(self.load),
            });
        }
    }
}
