//! Analyses over a [`Timeline`](crate::model::Timeline): GPU busy and idle time,
//! steps, idle-time attribution along the critical path, precision, memory, and
//! the ranked findings with what-if savings.

mod types;

pub use types::{Cause, DeviceDiagnosis, Diagnosis, Finding, IdleGap, Step, StepSource, Steps};

pub mod hta;
pub mod ranks;
