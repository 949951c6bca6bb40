//! `ewr._ewr`, the extension module behind the `ewr` Python package: models built from numpy
//! and scipy.sparse arrays or read from model files, periodic solutions, frequency response
//! curves and the time-domain reference, with results as numpy arrays.
//!
//! Numerics stay in the library crates; this crate only converts arguments and results and
//! releases the GIL while they work. The Python-facing documentation is in
//! `python/ewr/_ewr.pyi` and `docs/python.md`.

mod convert;
mod model;
mod options;
mod results;
mod run;
mod study;

use pyo3::prelude::*;

pyo3::create_exception!(
    ewr,
    InputError,
    pyo3::exceptions::PyValueError,
    "Bad input: a missing or malformed file, an invalid model or option. The message is the \
     one the `ewr` command prints."
);
pyo3::create_exception!(
    ewr,
    SolveError,
    pyo3::exceptions::PyRuntimeError,
    "A computation that could not be done (a singular structure, a numerical failure)."
);

/// Runs the `ewr` command line with `argv` (the program's name first) and returns its exit
/// code; `relaunch` starts a copy of it (the interpreter and `-m ewr`). Behind the `ewr`
/// command the package installs, so that one build gives both.
#[pyfunction]
fn cli_main(
    py: Python<'_>,
    argv: Vec<std::ffi::OsString>,
    relaunch: Vec<std::ffi::OsString>,
) -> u8 {
    py.detach(|| ewr_cli::run(argv, Some(relaunch)))
}

#[pymodule]
fn _ewr(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("SolveError", m.py().get_type::<SolveError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<model::PyModel>()?;
    m.add_class::<results::PySolution>()?;
    m.add_class::<results::PyFrc>()?;
    m.add_class::<results::PySimulation>()?;
    m.add_class::<results::PySteppedSine>()?;
    m.add_class::<study::PyStudy>()?;
    m.add_class::<study::PyStudyResult>()?;
    m.add_function(wrap_pyfunction!(model::examples, m)?)?;
    m.add_function(wrap_pyfunction!(study::read_result, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    Ok(())
}
