//! Friction laws on sampled time histories and the multi-contact E-WR weighted residual.

mod columns;
mod disc;
mod error;
mod kinds;
pub mod law;
pub mod residual;
mod stuck;
pub mod system;

pub use error::ResidualError;
pub use kinds::{ContactHistories, ContactParams, NormalHistories, NormalParams, SampleState};
pub use law::{Bound, FrictionLaw, LawError, LawInput, LawOutput, ParseLawError};
pub use residual::EwrResidual;
pub mod unilateral;
pub use stuck::{HOLD_MARGIN, STICK_MARGIN};
pub use system::{ContactSystem, Linearization, SignalBlocks};
pub use unilateral::{
    CondensedContacts, UnilateralHistories, UnilateralParams, UnilateralResidual,
};
