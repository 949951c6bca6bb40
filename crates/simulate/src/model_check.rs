//! The check of the model that every run starts with: shared by the integrator and by the
//! Jenkins expansion, which reports the user's model before building sliders on it.

use crate::SimulateError;
use ewr_model::Model;

/// Fails with every problem of an invalid model.
pub(crate) fn check_model(model: &Model) -> Result<(), SimulateError> {
    let problems = ewr_model::validate(model);
    if ewr_model::has_errors(&problems) {
        let msgs: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(SimulateError::Model(format!(
            "invalid model: {}",
            msgs.join("; ")
        )));
    }
    Ok(())
}
