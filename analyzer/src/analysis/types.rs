//! What the analyses produce; outputs render these.

use crate::model::{Ns, Precision};

/// Why the GPU sat idle. Every idle nanosecond gets exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cause {
    /// Waiting for batches from producer threads or processes.
    Data,
    /// Reading files, page faults on mapped files, D state.
    Io,
    /// The launching thread was busy on a CPU.
    Cpu,
    /// Allocation, cudaFree storms, OOM-and-retry, offload copies, UM faults.
    Memory,
    /// The host blocked on the GPU (stream/device/event sync, D2H copy, .item()).
    Sync,
    /// Pageable or unoverlapped host-to-device input copies.
    Transfer,
    /// Tiny kernels launched back to back as fast as the host can launch them.
    Launch,
    /// Launched early but started late: waiting on another stream or event.
    Other,
}

impl Cause {
    pub const ALL: [Cause; 8] = [
        Cause::Data,
        Cause::Io,
        Cause::Cpu,
        Cause::Memory,
        Cause::Sync,
        Cause::Transfer,
        Cause::Launch,
        Cause::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Cause::Data => "data",
            Cause::Io => "io",
            Cause::Cpu => "cpu",
            Cause::Memory => "memory",
            Cause::Sync => "sync",
            Cause::Transfer => "transfer",
            Cause::Launch => "launch",
            Cause::Other => "other",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn from_name(s: &str) -> Option<Cause> {
        Cause::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// One attributed stretch of idle GPU time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleGap {
    pub start: Ns,
    pub end: Ns,
    pub cause: Cause,
    /// e.g. "cpu", "io", "starved" under data; "" when there is none.
    pub sub: &'static str,
    /// The thread on the critical path during the gap (0 when none).
    pub pid: u32,
    pub tid: u32,
}

impl IdleGap {
    pub fn dur(&self) -> Ns {
        self.end - self.start
    }

    /// "data/cpu", or just "sync".
    pub fn label(&self) -> String {
        if self.sub.is_empty() {
            self.cause.name().to_string()
        } else {
            format!("{}/{}", self.cause.name(), self.sub)
        }
    }
}

/// Where the step boundaries came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepSource {
    /// PyTorch's ProfilerStep#N ranges (NVTX or Kineto annotations).
    ProfilerStep,
    /// Other NVTX ranges that repeat once per iteration.
    Nvtx,
    /// DataLoader `__next__` or `optimizer.step` calls.
    LoopCalls,
    /// Detected from the repeating pattern of GPU work.
    Detected,
    /// No steps found: the whole window is one step.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub index: u32,
    /// GPU side: the first op launched inside the step's marker starts.
    pub start: Ns,
    pub end: Ns,
    /// Host side: when that first op was launched (the replays' mark).
    pub launch: Ns,
    /// Much slower than the median (see `Steps::outlier_factor`).
    pub outlier: bool,
}

impl Step {
    pub fn dur(&self) -> Ns {
        self.end - self.start
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Steps {
    pub source: StepSource,
    /// What marked the steps: "ProfilerStep#", an NVTX range name, a kernel name.
    pub label: String,
    /// GPU-side steps: from the first GPU op launched inside marker N to the
    /// first launched inside marker N+1. Truncated ones are in `dropped`.
    pub steps: Vec<Step>,
    /// The headline (throughput): a stall every N steps shows here, not in
    /// the median.
    pub mean_ns: Ns,
    pub median_ns: Ns,
    pub p90_ns: Ns,
    /// Markers that gave no step, and why.
    pub dropped: Vec<DroppedStep>,
    /// Outlier steps that recur with a period, and what they waited on.
    pub periodic: Option<Periodic>,
}

impl Default for Steps {
    fn default() -> Steps {
        Steps {
            source: StepSource::None,
            label: String::new(),
            steps: vec![],
            mean_ns: 0,
            median_ns: 0,
            p90_ns: 0,
            dropped: vec![],
            periodic: None,
        }
    }
}

/// A step marker that gave no step.
#[derive(Debug, Clone, PartialEq)]
pub struct DroppedStep {
    /// The marker's position among all markers.
    pub index: u32,
    /// The marker's host-side range.
    pub start: Ns,
    pub end: Ns,
    /// "truncated-first", "truncated-last", "no-gpu-work", "start-up".
    pub reason: &'static str,
}

/// Slow steps that recur every `every` steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Periodic {
    pub every: u32,
    /// Indices (into `Steps::steps`) of the slow steps.
    pub steps: Vec<u32>,
    /// Mean extra time of a slow step over the others.
    pub extra_ns: Ns,
    /// The idle cause that takes most of the slow steps' idle time ("" when
    /// unknown), and its sub-cause.
    pub cause: &'static str,
    pub sub: &'static str,
    /// What the cause was about: a file for io ("" when unknown).
    pub what: String,
}

/// Start-up cost before the steady state: context creation, first
/// allocations, lazy module loading, autotuning, compilation, graph capture.
#[derive(Debug, Clone, PartialEq)]
pub struct Startup {
    /// Start of the trace.
    pub start: Ns,
    /// Where the steady state begins.
    pub until: Ns,
    /// In time order.
    pub items: Vec<StartupItem>,
    /// Share of the trace (first event to last) spent in start-up, in percent.
    pub share_pct: f64,
    /// No GPU work starts after start-up: the trace has no steady state.
    pub all: bool,
    /// Start-up is most of the trace, and what follows it is too short to
    /// diagnose: no steps, and under `MIN_STEADY_NS` of window (a graph
    /// capture that ends in one replay; a toy run cut off after its first
    /// iteration).
    pub short_rest: bool,
}

/// The least steady state, without steps, that findings may be drawn from.
pub const MIN_STEADY_NS: Ns = 10_000_000;

impl Startup {
    pub fn ns(&self) -> Ns {
        self.until - self.start
    }

    /// Start-up covers at least half of the trace.
    pub fn mostly(&self) -> bool {
        self.share_pct >= 50.0
    }

    /// No steady state to advise on: none at all, or too little.
    pub fn no_steady_state(&self) -> bool {
        self.all || self.short_rest
    }

    /// Sets `short_rest`, once the steps and the analysis window are known.
    pub fn judge_rest(&mut self, has_steps: bool, (w0, w1): (Ns, Ns)) {
        self.short_rest = !self.all && self.mostly() && !has_steps && w1 - w0 < MIN_STEADY_NS;
    }

    pub fn contains(&self, t: Ns) -> bool {
        self.start <= t && t < self.until
    }
}

/// One start-up cost.
#[derive(Debug, Clone, PartialEq)]
pub struct StartupItem {
    /// "context", "module-load", "autotune", "compile", "graph-capture".
    pub kind: &'static str,
    /// The call or range: "cudaFree", "cuModuleLoadData", a kernel name.
    pub what: String,
    pub start: Ns,
    pub end: Ns,
    pub pid: u32,
    pub tid: u32,
}

impl StartupItem {
    pub fn dur(&self) -> Ns {
        self.end - self.start
    }
}

/// Per-GPU results.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeviceDiagnosis {
    pub gpu: u32,
    /// The active window: first GPU op start to last GPU op end.
    pub window: (Ns, Ns),
    pub busy_ns: Ns,
    pub idle_ns: Ns,
    /// Sorted by start, disjoint, covering exactly the idle time in the window.
    pub gaps: Vec<IdleGap>,
    /// Indexed by `Cause::index()`.
    pub idle_by_cause: [Ns; 8],
    /// Busy time per precision class (kernels only; union within a class).
    pub busy_by_precision: Vec<(Precision, Ns)>,
    /// Time in GEMMs whose weights are 4-bit (`kernels::low_bit_weights`),
    /// summed over their ops; counted in `busy_by_precision` by activation type.
    pub low_bit_gemm_ns: Ns,
}

/// One ranked finding: a cause, its evidence, a fix, and what fixing it is worth.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Finding {
    /// A cause name, or "precision".
    pub cause: String,
    pub sub_cause: String,
    /// Share of the analyzed window's wall time, in percent.
    pub share_pct: f64,
    /// Share of step time, in percent (equal to share_pct without steps).
    pub step_share_pct: f64,
    /// What-if saving over the whole window: window x (1 - r), where r is
    /// the replay with the fix over the replay without it.
    pub est_saving_ns: Ns,
    /// Predicted mean step time once fixed: mean step x r (the same r).
    pub est_step_ns_after: Ns,
    /// What the what-if assumed about the fix (its model and costs).
    pub assumption: String,
    pub evidence: String,
    pub fix: String,
    /// Kernel names the evidence cites, whole (the evidence shortens them).
    pub kernels: Vec<String>,
}

/// Everything the analyses concluded about one timeline.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Diagnosis {
    /// The analyzed window (GPU active window, or steps when present).
    pub window: (Ns, Ns),
    pub steps: Steps,
    /// Start-up cost, when the trace shows any; the window and the steps
    /// leave it out. Attribution may give idle time inside it to start-up.
    pub startup: Option<Startup>,
    /// GPU work launched before the trace began, left out of the window.
    pub lead_in: Vec<super::lead_in::LeadIn>,
    pub devices: Vec<DeviceDiagnosis>,
    /// Ranked by est_saving_ns, largest first; each saves at least
    /// `findings::MINOR_STEP_PCT` of the step.
    pub findings: Vec<Finding>,
    /// Training or inference, engines, graphs, DataLoader (advice reads it).
    pub job: super::job::JobContext,
    /// Findings that save less than that, ranked the same way.
    pub minor: Vec<Finding>,
    /// Fixes that change the numerics (FP8 where BF16 runs already): not
    /// ranked with the findings, nor part of `combined`.
    pub options: Vec<Finding>,
    /// Every advised fix at once.
    pub combined: Option<Combined>,
    /// The host side over `window`, computed beside the GPU analyses (the
    /// report builds it when absent).
    pub host: Option<super::host::HostSummary>,
}

/// The what-if with every advised fix applied together.
#[derive(Debug, Clone, PartialEq)]
pub struct Combined {
    pub est_saving_ns: Ns,
    pub est_step_ns_after: Ns,
    pub assumption: String,
}
