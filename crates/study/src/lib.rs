//! Parameter studies of friction dampers: a study file (TOML, `docs/study.md`) names a
//! model, a frequency band and a grid (or list) of parameter values; every case is a
//! frequency response curve whose peak gives the damper design curve.
//!
//! Robust for overnight and cluster runs: each finished case is written atomically to its
//! own file before it is reported ([`run::run`]), so a killed run loses no finished case and
//! a rerun resumes; a study can be split into shards ([`Shard`]) run as separate processes
//! (a Slurm job array) and merged ([`store::merge`]) into the same file a single process
//! writes.

pub mod case;
pub mod hash;
pub mod param;
pub mod result;
pub mod run;
pub mod shard;
pub mod shared;
pub mod spec;
pub mod store;
pub mod track;

pub use case::CaseSetup;
pub use param::{Case, ParamKind, Value};
pub use result::{CaseResult, CaseStatus, compute_case};
pub use run::{Event, OutputLock, RunOptions, cases_dir_for, lock_output, run};
pub use shard::Shard;
pub use spec::{
    Frequency, Objective, Optimize, Parameter, STUDY_FORMAT_VERSION, Solver, Study, StudyError,
};
pub use store::{
    StudyFile, StudyInfo, merge, read_study_file, write_study_file, write_summary_csv,
};
