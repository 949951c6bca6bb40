//! What every built-in example ends with: building the model, which cannot fail.

use crate::builder::ModelBuilder;
use crate::model::Model;

pub(super) fn built(b: ModelBuilder) -> Model {
    // The examples are fixed, valid constructions; a failure is a bug in this file.
    b.build()
        .unwrap_or_else(|p| panic!("built-in example is invalid: {p:?}"))
}
