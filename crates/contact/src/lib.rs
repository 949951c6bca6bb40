//! Friction laws on sampled time histories and the multi-contact E-WR weighted residual.

pub mod law;
pub mod residual;
pub mod system;

pub use law::{Bound, FrictionLaw, LawError, LawInput, LawOutput, ParseLawError};
pub use residual::{
    ContactHistories, ContactParams, EwrResidual, NormalHistories, NormalParams, ResidualError,
};
pub mod unilateral;
pub use system::ContactSystem;
pub use unilateral::{
    CondensedContacts, SampleState, UnilateralHistories, UnilateralParams, UnilateralResidual,
};
