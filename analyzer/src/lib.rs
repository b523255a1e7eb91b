//! stallscope's analyzer: reads traces (native recordings and PyTorch-profiler
//! Kineto JSON) into one [`model::Timeline`], diagnoses why the GPU was idle, and
//! writes reports (text, JSON, Markdown) and Perfetto traces.
//!
//! Data flows one way: `read` -> `model` -> `analysis` -> `output`. Outputs never
//! reach back into readers, and nothing here depends on CUDA.

pub mod analysis;
pub mod live;
pub mod model;
pub mod output;
pub mod read;
