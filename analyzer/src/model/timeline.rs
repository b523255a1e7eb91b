//! The whole recording: processes, GPUs, and the links between them.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use super::{Gpu, Ns, Oom, Process, SpanKind, Strings};

/// Sorts `v` stably by `key`, with the result of `sort_by_key`, but cheaply
/// when `v` is sorted already (one pass, no scratch buffer) or sorted except
/// for a short tail (the tail is sorted and merged in from the back, on every
/// core for long lists). Long unsorted lists are sorted on every core.
pub(crate) fn sort_stable<T, K, F>(v: &mut [T], key: F)
where
    T: Copy + Send + Sync,
    K: Ord,
    F: Fn(&T) -> K + Sync,
{
    let n = v.len();
    let mut p = 1;
    while p < n && key(&v[p - 1]) <= key(&v[p]) {
        p += 1;
    }
    if p >= n {
        return;
    }
    if n - p > n / 4 {
        if n >= PARALLEL_MERGE_MIN {
            v.par_sort_by_key(key);
        } else {
            v.sort_by_key(key);
        }
        return;
    }
    let mut tail = v[p..].to_vec();
    tail.sort_by_key(&key);
    merge_tail(v, p, &tail, &key, PARALLEL_MERGE_MIN);
}

/// Lists at least this long are merged (and sorted) on several cores.
const PARALLEL_MERGE_MIN: usize = 1 << 20;

/// Merges the sorted `tail` into the sorted `v[..p]`, in `v` (whose last
/// `tail.len()` slots are free); a tail element goes after prefix elements
/// with an equal key (it came after them). Lists of `par_min` or more are
/// cut in two at a tail element and the halves merged at once: the upper
/// half's first prefix elements lie where the lower half ends up, so they
/// are set aside first.
fn merge_tail<T, K, F>(v: &mut [T], p: usize, tail: &[T], key: &F, par_min: usize)
where
    T: Copy + Send + Sync,
    K: Ord,
    F: Fn(&T) -> K + Sync,
{
    debug_assert_eq!(v.len(), p + tail.len());
    if v.len() >= par_min && tail.len() >= 2 {
        let b = tail.len() / 2;
        let a = v[..p].partition_point(|x| key(x) <= key(&tail[b]));
        let aside: Vec<T> = v[a..(a + b).min(p)].to_vec();
        let in_place = p.saturating_sub(a + b);
        let (lower, upper) = v.split_at_mut(a + b);
        rayon::join(
            || merge_tail(lower, a, &tail[..b], key, par_min),
            || merge_upper(upper, &aside, in_place, &tail[b..], key),
        );
        return;
    }
    // Each tail element goes after the prefix elements with keys up to its
    // own; the prefix moves right in blocks, from the back, each block by the
    // number of tail elements after it.
    let mut end = p;
    for (j, t) in tail.iter().enumerate().rev() {
        let at = v[..end].partition_point(|x| key(x) <= key(t));
        v.copy_within(at..end, at + j + 1);
        v[at + j] = *t;
        end = at;
    }
}

/// `merge_tail` for the upper half of a cut: the prefix is `aside` followed
/// by `v[..in_place]`.
fn merge_upper<T, K, F>(v: &mut [T], aside: &[T], in_place: usize, tail: &[T], key: &F)
where
    T: Copy,
    K: Ord,
    F: Fn(&T) -> K,
{
    debug_assert_eq!(v.len(), aside.len() + in_place + tail.len());
    let (mut end, mut aside_end) = (in_place, aside.len());
    for (j, t) in tail.iter().enumerate().rev() {
        // In-place elements after `t` move right past it; once they are all
        // placed, the set-aside ones follow.
        let at = v[..end].partition_point(|x| key(x) <= key(t));
        v.copy_within(at..end, aside.len() + at + j + 1);
        end = at;
        let before = if end > 0 {
            aside.len() + end
        } else {
            let s = aside[..aside_end].partition_point(|x| key(x) <= key(t));
            v[s + j + 1..aside_end + j + 1].copy_from_slice(&aside[s..aside_end]);
            aside_end = s;
            s
        };
        v[before + j] = *t;
    }
    v.copy_within(..end, aside.len());
    v[..aside_end].copy_from_slice(&aside[..aside_end]);
}

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
    ///
    /// The lists are usually sorted already (or nearly: NVTX ranges are paired
    /// after decoding and appended), so each is checked first and only the
    /// out-of-order part is sorted; the result is what a stable sort gives.
    pub fn finalize(&mut self) {
        for p in &mut self.processes {
            p.objects.sort_by_key(|o| o.id);
            p.threads.sort_by_key(|t| t.tid);
        }
        self.processes
            .par_iter_mut()
            .flat_map(|p| p.threads.par_iter_mut())
            .for_each(|t| {
                // Outer ranges first when two spans start together.
                sort_stable(&mut t.spans, |s| (s.ts, std::cmp::Reverse(s.dur)));
                sort_stable(&mut t.samples, |s| s.ts);
            });
        self.processes.sort_by_key(|p| (p.start, p.pid));
        self.gpus.sort_by_key(|g| g.id);
        for g in &mut self.gpus {
            g.streams.sort_by_key(|s| s.id);
            g.syncs.sort_by_key(|s| s.start);
            g.memory.sort_by_key(|m| m.ts);
        }
        self.gpus
            .par_iter_mut()
            .flat_map(|g| g.streams.par_iter_mut())
            .for_each(|s| sort_stable(&mut s.ops, |o| (o.start, o.end)));
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

/// An empty slot of [`CorrIndex`]'s table (span numbers stay below it).
const NO_CALL: u32 = u32::MAX;

/// Correlation id -> the CUDA API call that launched the work.
///
/// CUPTI and Kineto hand out correlation ids in sequence, so the index is a
/// dense table (no hashing on the analyses' hottest lookup); sparse ids fall
/// back to a sorted list.
#[derive(Debug, Default)]
pub struct CorrIndex {
    /// (process, thread) of each thread that made API calls.
    threads: Vec<(u32, u32)>,
    /// Where each of those threads' spans start in one numbering of all
    /// their spans (thread after thread).
    first_span: Vec<u32>,
    /// The smallest id: Kineto traces of a process's later steps start far
    /// from 0.
    base: u32,
    /// Dense: slot `corr - base` holds the call's span number, or
    /// [`NO_CALL`]. Left atomic as filled: a relaxed load is a plain load,
    /// and converting would copy the table (80 MB for 20 M ids).
    dense: Vec<AtomicU32>,
    /// Sparse: (corr, thread, span), sorted by corr.
    sparse: Vec<(u32, u32, u32)>,
}

impl CorrIndex {
    /// Links every CUDA API call by its correlation id. When several calls
    /// share an id (a runtime call and the driver call beneath it), the first
    /// in (process, thread, span) order keeps it: on one thread that is the
    /// outer call, as spans are sorted outer first.
    pub fn build(tl: &Timeline) -> CorrIndex {
        let is_api = |s: &super::HostSpan| {
            matches!(s.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver)
                && s.arg != 0
                && s.arg <= u32::MAX as u64
        };
        // Pass 1: which threads made calls, how many, and the largest id.
        let mut threads = Vec::new();
        let mut counts = Vec::new();
        let (mut min, mut max) = (u32::MAX, 0u32);
        for (pi, p) in tl.processes.iter().enumerate() {
            for (ti, t) in p.threads.iter().enumerate() {
                let (n, lo, hi) = t
                    .spans
                    .par_iter()
                    .with_min_len(1 << 16)
                    .filter(|s| is_api(s))
                    .fold(
                        || (0usize, u32::MAX, 0u32),
                        |(n, lo, hi), s| (n + 1, lo.min(s.arg as u32), hi.max(s.arg as u32)),
                    )
                    .reduce(
                        || (0, u32::MAX, 0),
                        |a, b| (a.0 + b.0, a.1.min(b.1), a.2.max(b.2)),
                    );
                if n > 0 {
                    threads.push((pi as u32, ti as u32));
                    counts.push(n);
                    min = min.min(lo);
                    max = max.max(hi);
                }
            }
        }
        let base = min.min(max);
        let total: usize = counts.iter().sum();
        let spans_of = |tix: usize| {
            let (pi, ti) = threads[tix];
            &tl.processes[pi as usize].threads[ti as usize].spans
        };
        let mut first_span = Vec::with_capacity(threads.len());
        let mut n = 0u64;
        for tix in 0..threads.len() {
            first_span.push(n as u32);
            n += spans_of(tix).len() as u64;
        }
        // A table of 4 bytes per id in the range is cheaper to build than
        // sorting 12 bytes per call, even when only some ids are calls.
        if ((max - base) as usize) < 16 * total + (1 << 16) && n < u32::MAX as u64 {
            // Span numbers grow in (thread, span) order, so the first call
            // with an id is the smallest number: the slots are filled on all
            // cores, keeping the minimum.
            let dense: Vec<AtomicU32> = (0..=(max - base) as usize)
                .into_par_iter()
                .map(|_| AtomicU32::new(NO_CALL))
                .collect();
            for (tix, &first) in first_span.iter().enumerate() {
                spans_of(tix)
                    .par_iter()
                    .enumerate()
                    .with_min_len(1 << 16)
                    .filter(|(_, s)| is_api(s))
                    .for_each(|(si, s)| {
                        dense[(s.arg as u32 - base) as usize]
                            .fetch_min(first + si as u32, Ordering::Relaxed);
                    });
            }
            CorrIndex {
                threads,
                first_span,
                base,
                dense,
                sparse: Vec::new(),
            }
        } else {
            let mut entries: Vec<(u32, u32, u32)> = Vec::with_capacity(total);
            for tix in 0..threads.len() {
                for (si, s) in spans_of(tix).iter().enumerate() {
                    if is_api(s) {
                        entries.push((s.arg as u32, tix as u32, si as u32));
                    }
                }
            }
            entries.sort_unstable();
            entries.dedup_by_key(|e| e.0);
            CorrIndex {
                threads,
                first_span,
                base: 0,
                dense: Vec::new(),
                sparse: entries,
            }
        }
    }

    /// The index (into `threads()`) of the thread whose call has id `corr`.
    #[inline]
    pub fn thread_of(&self, corr: u32) -> Option<u32> {
        self.get_raw(corr).map(|r| r.0)
    }

    /// (process, thread) of each thread that made API calls.
    pub fn threads(&self) -> &[(u32, u32)] {
        &self.threads
    }

    #[inline]
    pub fn get(&self, corr: u32) -> Option<LaunchRef> {
        let (t, span) = self.get_raw(corr)?;
        let (process, thread) = self.threads[t as usize];
        Some(LaunchRef {
            process,
            thread,
            span,
        })
    }

    /// (index into `threads()`, span index) of the call with id `corr`.
    #[inline]
    pub fn get_raw(&self, corr: u32) -> Option<(u32, u32)> {
        if corr == 0 {
            return None;
        }
        if self.sparse.is_empty() {
            let n = self
                .dense
                .get(corr.checked_sub(self.base)? as usize)?
                .load(Ordering::Relaxed);
            if n == NO_CALL {
                return None;
            }
            let t = if self.first_span.len() == 1 {
                0
            } else {
                self.first_span.partition_point(|&f| f <= n) - 1
            };
            Some((t as u32, n - self.first_span[t]))
        } else {
            let i = self.sparse.binary_search_by_key(&corr, |e| e.0).ok()?;
            Some((self.sparse[i].1, self.sparse[i].2))
        }
    }

    pub fn len(&self) -> usize {
        if self.sparse.is_empty() {
            self.dense
                .iter()
                .filter(|e| e.load(Ordering::Relaxed) != NO_CALL)
                .count()
        } else {
            self.sparse.len()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::{CorrIndex, LaunchRef, merge_tail, sort_stable};
    use crate::model::{HostSpan, Process, Source, SpanKind, Thread, Timeline};
    use proptest::prelude::*;

    /// The first call with each id in (process, thread, span) order, found by
    /// looking at every span.
    fn first_call(tl: &Timeline, corr: u32) -> Option<LaunchRef> {
        tl.processes.iter().enumerate().find_map(|(p, proc)| {
            proc.threads.iter().enumerate().find_map(|(t, th)| {
                th.spans
                    .iter()
                    .position(|s| {
                        matches!(s.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver)
                            && s.arg == u64::from(corr)
                            && corr != 0
                    })
                    .map(|s| LaunchRef {
                        process: p as u32,
                        thread: t as u32,
                        span: s as u32,
                    })
            })
        })
    }

    proptest! {
        /// Every id is found where the first call with it is, whether the
        /// ids are dense, start far from 0 (a Kineto trace's later steps),
        /// or are spread thinly (the sorted list).
        #[test]
        fn corr_index_finds_the_first_call_with_each_id(
            base in prop::sample::select(vec![0u64, 1, 73_689, 4_000_000_000]),
            spread in prop::sample::select(vec![1u64, 3, 40, 100_000]),
            threads in prop::collection::vec(
                prop::collection::vec((0u64..60, 0u8..4), 0..40), 1..4),
        ) {
            let kinds = [SpanKind::CudaRuntime, SpanKind::CudaDriver, SpanKind::Other, SpanKind::CudaRuntime];
            let mut tl = Timeline::new(Source::Native, "t");
            let mut ids = vec![];
            tl.processes = threads.chunks(2).map(|chunk| Process {
                threads: chunk.iter().map(|spans| Thread {
                    spans: spans.iter().enumerate().map(|(i, &(k, kind))| {
                        // k == 0: no id at all.
                        let arg = if k == 0 { 0 } else { (base + k * spread).min(u64::from(u32::MAX)) };
                        ids.push(arg as u32);
                        HostSpan { ts: i as i64, dur: 1, arg, id: 0, kind: kinds[kind as usize] }
                    }).collect(),
                    ..Thread::default()
                }).collect(),
                ..Process::default()
            }).collect();
            let corr = CorrIndex::build(&tl);
            ids.extend([0, 1, 2, (base as u32).wrapping_sub(1), u32::MAX]);
            for id in ids {
                prop_assert_eq!(corr.get(id), first_call(&tl, id), "id {}", id);
            }
        }
    }

    /// The result of a stable sort, for sorted lists, lists with a short
    /// unsorted tail, and shuffled ones.
    #[test]
    fn sort_stable_is_a_stable_sort() {
        let mut x = 12345u64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for case in 0..500 {
            let n = rnd(200) as usize;
            // (key, original position); keys repeat.
            let mut v: Vec<(u64, usize)> = (0..n).map(|i| (rnd(30), i)).collect();
            match case % 3 {
                0 => v.sort_by_key(|e| e.0),
                1 => {
                    let p = n - n / (2 + rnd(8) as usize);
                    v[..p].sort_by_key(|e| e.0);
                }
                _ => {}
            }
            for (i, e) in v.iter_mut().enumerate() {
                e.1 = i;
            }
            let mut want = v.clone();
            want.sort_by_key(|e| e.0);
            let mut cut = v.clone();
            sort_stable(&mut v, |e| e.0);
            assert_eq!(v, want, "case {case}");
            // The same merges, cut in halves down to a few elements.
            let p = (1..cut.len())
                .find(|&i| cut[i - 1].0 > cut[i].0)
                .unwrap_or(cut.len());
            let mut tail = cut[p..].to_vec();
            tail.sort_by_key(|e| e.0);
            if cut[..p].is_sorted_by_key(|e| e.0) {
                merge_tail(&mut cut, p, &tail, &|e: &(u64, usize)| e.0, 3);
                assert_eq!(cut, want, "case {case}, cut");
            }
        }
    }
}
