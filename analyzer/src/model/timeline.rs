//! The whole recording: processes, GPUs, and the links between them.

use std::collections::HashMap;

use super::{Gpu, Ns, Oom, Process, SpanKind, Strings};

/// Where a timeline came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// A stallscope recording (a directory of per-process trace files).
    Native,
    /// A PyTorch-profiler (Kineto) Chrome-trace JSON file.
    Kineto,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Native => "native",
            Source::Kineto => "kineto",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NoteLevel {
    Info,
    Warning,
}

/// Something the reader wants the user to know (partial capture, dropped
/// records, skipped corrupt chunks...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub level: NoteLevel,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct Timeline {
    pub source: Source,
    /// A label for reports: the recording directory or trace file name.
    pub name: String,
    pub strings: Strings,
    pub processes: Vec<Process>,
    pub gpus: Vec<Gpu>,
    pub ooms: Vec<Oom>,
    pub notes: Vec<Note>,
    /// CLOCK_REALTIME minus the timeline clock, when known (for wall-clock labels).
    pub realtime_offset_ns: Option<i64>,
}

impl Timeline {
    pub fn new(source: Source, name: impl Into<String>) -> Timeline {
        Timeline {
            source,
            name: name.into(),
            strings: Strings::new(),
            processes: vec![],
            gpus: vec![],
            ooms: vec![],
            notes: vec![],
            realtime_offset_ns: None,
        }
    }

    pub fn warn(&mut self, text: impl Into<String>) {
        self.notes.push(Note {
            level: NoteLevel::Warning,
            text: text.into(),
        });
    }

    pub fn info(&mut self, text: impl Into<String>) {
        self.notes.push(Note {
            level: NoteLevel::Info,
            text: text.into(),
        });
    }

    /// Sorts every event list by time. Readers call this once when done.
    pub fn finalize(&mut self) {
        for p in &mut self.processes {
            p.objects.sort_by_key(|o| o.id);
            p.threads.sort_by_key(|t| t.tid);
            for t in &mut p.threads {
                // Outer ranges first when two spans start together.
                t.spans.sort_by_key(|s| (s.ts, std::cmp::Reverse(s.dur)));
                t.samples.sort_by_key(|s| s.ts);
            }
        }
        self.processes.sort_by_key(|p| (p.start, p.pid));
        self.gpus.sort_by_key(|g| g.id);
        for g in &mut self.gpus {
            g.streams.sort_by_key(|s| s.id);
            for s in &mut g.streams {
                s.ops.sort_by_key(|o| (o.start, o.end));
            }
            g.syncs.sort_by_key(|s| s.start);
            g.memory.sort_by_key(|m| m.ts);
        }
        self.ooms.sort_by_key(|o| o.ts);
    }

    /// First and last timestamp of anything in the timeline.
    pub fn extent(&self) -> Option<(Ns, Ns)> {
        let mut lo = Ns::MAX;
        let mut hi = Ns::MIN;
        for p in &self.processes {
            for t in &p.threads {
                if let (Some(a), Some(b)) = (t.spans.first(), t.spans.iter().map(|s| s.end()).max())
                {
                    lo = lo.min(a.ts);
                    hi = hi.max(b);
                }
                if let (Some(a), Some(b)) = (t.samples.first(), t.samples.last()) {
                    lo = lo.min(a.ts);
                    hi = hi.max(b.ts);
                }
            }
        }
        for g in &self.gpus {
            for s in &g.streams {
                if let (Some(a), Some(b)) = (s.ops.first(), s.ops.iter().map(|o| o.end).max()) {
                    lo = lo.min(a.start);
                    hi = hi.max(b);
                }
            }
        }
        (lo <= hi).then_some((lo, hi))
    }

    /// Total GPU ops over all devices.
    pub fn gpu_op_count(&self) -> usize {
        self.gpus.iter().map(|g| g.op_count()).sum()
    }

    /// Total host spans over all threads.
    pub fn host_span_count(&self) -> usize {
        self.processes
            .iter()
            .flat_map(|p| &p.threads)
            .map(|t| t.spans.len())
            .sum()
    }
}

/// Where an API call lives: process, thread and span indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchRef {
    pub process: u32,
    pub thread: u32,
    pub span: u32,
}

/// Correlation id -> the CUDA API call that launched the work.
#[derive(Debug, Default)]
pub struct CorrIndex {
    map: HashMap<u32, LaunchRef>,
}

impl CorrIndex {
    pub fn build(tl: &Timeline) -> CorrIndex {
        let mut map = HashMap::new();
        for (pi, p) in tl.processes.iter().enumerate() {
            for (ti, t) in p.threads.iter().enumerate() {
                for (si, s) in t.spans.iter().enumerate() {
                    if matches!(s.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver) && s.arg != 0
                    {
                        // A runtime call and the driver call beneath it can share a
                        // correlation id; keep the outer (earlier) runtime call.
                        map.entry(s.arg as u32).or_insert(LaunchRef {
                            process: pi as u32,
                            thread: ti as u32,
                            span: si as u32,
                        });
                    }
                }
            }
        }
        CorrIndex { map }
    }

    pub fn get(&self, corr: u32) -> Option<LaunchRef> {
        self.map.get(&corr).copied()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}
