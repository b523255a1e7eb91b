//! The timeline model every reader produces and every analysis consumes.
//!
//! Times are nanoseconds on one clock per timeline ([`Ns`]): CLOCK_MONOTONIC for
//! native recordings (all processes of a recording share it), the trace's own
//! clock for Kineto traces. Per-event structs are kept small (32-48 bytes) since
//! a recording can hold tens of millions of events.

mod gpu;
mod host;
mod id_table;
mod strings;
mod timeline;

pub use gpu::{
    CopyKind, Gpu, GpuOp, GpuOpKind, LaunchConfig, MemEvent, MemKind, Oom, Precision, Stream,
    SyncEvent, SyncKind,
};
pub use host::{
    GpuCapture, HostSpan, IoObject, OpTotals, Process, RunSpan, Sample, SpanKind, Thread,
};
pub(crate) use id_table::{IdTable, fits_a_table};
pub use strings::{StrId, Strings};
pub use timeline::{CorrIndex, LaunchRef, Note, NoteLevel, Source, Timeline};
pub(crate) use timeline::{sort_stable, span_order};

/// Nanoseconds on the timeline's clock.
pub type Ns = i64;
