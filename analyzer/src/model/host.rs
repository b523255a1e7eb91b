//! Host side: processes, threads, their spans and samples.

use stallscope_format::{FdClass, HostOp};

use super::{Ns, StrId};

/// What a host span is. For `Io`/`Wait` spans `HostSpan::id` is an [`IoObject`]
/// id (0 = none); for the named kinds it is a string id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpanKind {
    /// A hooked libc call (read, poll, sem_wait, ...).
    Host(HostOp),
    /// A CUDA runtime API call; `arg` is the correlation id.
    CudaRuntime,
    /// A CUDA driver API call; `arg` is the correlation id.
    CudaDriver,
    /// A framework operator (Kineto `cpu_op`, e.g. `aten::mm`).
    CpuOp,
    /// A Python function (Kineto `python_function`).
    PyFunction,
    /// A user or framework range: NVTX, `record_function`, Kineto `user_annotation`.
    Annotation,
    /// Anything else a reader keeps.
    Other,
}

impl SpanKind {
    /// True if `HostSpan::id` names a string (not an I/O object).
    pub fn is_named(self) -> bool {
        !matches!(self, SpanKind::Host(_))
    }
}

/// One host span. `arg` is bytes moved (I/O), the address waited on (semaphores
/// and condition variables) or the correlation id (CUDA API calls).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostSpan {
    pub ts: Ns,
    pub dur: Ns,
    pub arg: u64,
    pub id: u32,
    pub kind: SpanKind,
}

impl HostSpan {
    pub fn end(&self) -> Ns {
        self.ts + self.dur
    }
}

/// One sampler observation; counters are cumulative for the thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sample {
    pub ts: Ns,
    pub cpu_ns: u64,
    pub run_delay_ns: u64,
    pub majflt: u32,
    pub minflt: u32,
    /// The /proc state letter: b'R', b'S', b'D', ...
    pub state: u8,
}

/// Totals of one op for one thread, from the shim's counters (all calls,
/// including those below the span threshold).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpTotals {
    pub calls: u64,
    pub bytes: u64,
    pub ns: u64,
}

/// A span the shim made of a run of short calls on one file (a `Burst`
/// record): where it is among the thread's spans, and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSpan {
    pub ts: Ns,
    /// The run's extent, gaps between calls included (the span's `dur`).
    pub dur: Ns,
    pub op: HostOp,
    pub obj: u32,
    pub calls: u64,
    /// Files read one after another (`obj` is then their folder).
    pub files: u32,
    /// Time inside the calls.
    pub busy_ns: u64,
}

impl RunSpan {
    /// Whether `s` is this run's span.
    #[inline]
    pub fn is(&self, s: &HostSpan) -> bool {
        s.ts == self.ts && s.id == self.obj && s.kind == SpanKind::Host(self.op)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Thread {
    pub tid: u32,
    pub name: StrId,
    /// Sorted by `ts`. Spans of named kinds may nest (ranges around ops).
    pub spans: Vec<HostSpan>,
    /// Sorted by `ts`.
    pub samples: Vec<Sample>,
    /// Indexed by `HostOp as usize`; empty when the source has no counters.
    pub totals: Vec<OpTotals>,
    /// Which of `spans` are runs of short calls, sorted by `ts`.
    pub runs: Vec<RunSpan>,
    pub dropped_records: u64,
}

/// An fd's classification, referred to by I/O spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoObject {
    pub id: u32,
    pub class: FdClass,
    /// statfs f_type; see `stallscope_format::fs_name`.
    pub fs_magic: u32,
    pub dev: u64,
    pub ino: u64,
    pub path: StrId,
    pub fd: i32,
}

impl IoObject {
    /// How reports name it: its path; a folder (the object of a run over
    /// small files read one after another) as the files in it.
    pub fn label<'a>(&self, strings: &'a super::Strings) -> std::borrow::Cow<'a, str> {
        let path = strings.get(self.path);
        match self.class {
            FdClass::Dir if path.ends_with('/') => format!("{path}*").into(),
            FdClass::Dir if !path.is_empty() => format!("{path}/*").into(),
            _ => path.into(),
        }
    }

    /// Whether reads and writes on it wait for storage: a file, a block
    /// device, or a folder's files.
    pub fn is_storage(&self) -> bool {
        matches!(
            self.class,
            FdClass::File | FdClass::BlockDevice | FdClass::Dir
        )
    }
}

/// How GPU capture went in one process.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum GpuCapture {
    /// The process never used CUDA (or capture was not attempted).
    #[default]
    NotAttempted,
    Active,
    /// Capture could not start; the reason says why.
    Unavailable(String),
    /// Capture covered part of the process only.
    Partial(String),
    /// Turned off by the user (STALLSCOPE_GPU=0).
    Disabled,
}

#[derive(Debug, Clone, Default)]
pub struct Process {
    pub pid: u32,
    pub ppid: u32,
    pub cmdline: String,
    pub hostname: String,
    /// Distributed rank, when the source says.
    pub rank: Option<u32>,
    pub start: Ns,
    /// Clean-exit time, else the last event seen.
    pub end: Ns,
    pub exited_cleanly: bool,
    pub threads: Vec<Thread>,
    /// Sorted by id.
    pub objects: Vec<IoObject>,
    pub gpu_capture: GpuCapture,
    pub dropped_records: u64,
    pub span_threshold_ns: u64,
    pub sample_hz: u32,
}

impl Process {
    pub fn object(&self, id: u32) -> Option<&IoObject> {
        self.objects
            .binary_search_by_key(&id, |o| o.id)
            .ok()
            .map(|i| &self.objects[i])
    }

    pub fn thread(&self, tid: u32) -> Option<&Thread> {
        self.threads.iter().find(|t| t.tid == tid)
    }
}
