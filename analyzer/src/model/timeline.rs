//! The whole recording: processes, GPUs, and the links between them.

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
///
/// CUPTI and Kineto hand out correlation ids in sequence, so the index is a
/// dense table (no hashing on the analyses' hottest lookup); sparse ids fall
/// back to a sorted list.
#[derive(Debug, Default)]
pub struct CorrIndex {
    /// (process, thread) of each thread that made API calls.
    threads: Vec<(u32, u32)>,
    /// Dense: slot `corr` holds (thread + 1, span); thread 0 means absent.
    dense: Vec<(u32, u32)>,
    /// Sparse: (corr, thread, span), sorted by corr.
    sparse: Vec<(u32, u32, u32)>,
}

impl CorrIndex {
    pub fn build(tl: &Timeline) -> CorrIndex {
        let mut threads = Vec::new();
        let mut entries: Vec<(u32, u32, u32)> = Vec::new();
        for (pi, p) in tl.processes.iter().enumerate() {
            for (ti, t) in p.threads.iter().enumerate() {
                let before = entries.len();
                let tix = threads.len() as u32;
                for (si, s) in t.spans.iter().enumerate() {
                    if matches!(s.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver)
                        && s.arg != 0
                        && s.arg <= u32::MAX as u64
                    {
                        entries.push((s.arg as u32, tix, si as u32));
                    }
                }
                if entries.len() > before {
                    threads.push((pi as u32, ti as u32));
                }
            }
        }
        let max = entries.iter().map(|e| e.0).max().unwrap_or(0) as usize;
        if max <= 4 * entries.len() + 1024 {
            let mut dense = vec![(0u32, 0u32); max + 1];
            for &(c, t, s) in &entries {
                // A runtime call and the driver call beneath it can share an
                // id; keep the outer (earlier) runtime call.
                let slot = &mut dense[c as usize];
                let earlier = slot.0 == 0 || {
                    let (pi, ti) = threads[(slot.0 - 1) as usize];
                    let (npi, nti) = threads[t as usize];
                    let old =
                        &tl.processes[pi as usize].threads[ti as usize].spans[slot.1 as usize];
                    let new = &tl.processes[npi as usize].threads[nti as usize].spans[s as usize];
                    new.ts < old.ts
                };
                if earlier {
                    *slot = (t + 1, s);
                }
            }
            CorrIndex {
                threads,
                dense,
                sparse: Vec::new(),
            }
        } else {
            entries.sort_unstable();
            entries.dedup_by_key(|e| e.0);
            CorrIndex {
                threads,
                dense: Vec::new(),
                sparse: entries,
            }
        }
    }

    #[inline]
    pub fn get(&self, corr: u32) -> Option<LaunchRef> {
        if corr == 0 {
            return None;
        }
        let (t, span) = if self.sparse.is_empty() {
            match self.dense.get(corr as usize) {
                Some(&(t, s)) if t != 0 => (t - 1, s),
                _ => return None,
            }
        } else {
            let i = self.sparse.binary_search_by_key(&corr, |e| e.0).ok()?;
            (self.sparse[i].1, self.sparse[i].2)
        };
        let (process, thread) = self.threads[t as usize];
        Some(LaunchRef {
            process,
            thread,
            span,
        })
    }

    pub fn len(&self) -> usize {
        if self.sparse.is_empty() {
            self.dense.iter().filter(|e| e.0 != 0).count()
        } else {
            self.sparse.len()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
