//! The chain of unit masses with 1-D friction to ground (the DLFT-vs-WR benchmark), of any
//! number of contacts.

use super::built::built;
use crate::builder::ModelBuilder;
use crate::model::{Contacts, Model};

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
