//! The whole recording: processes, GPUs, and the links between them.

use rayon::prelude::*;

use super::{Gpu, IdTable, Ns, Oom, Process, SpanKind, Strings, fits_a_table};

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

/// The order of a thread's spans: by start, outer ranges first when two
/// spans start together.
pub(crate) fn span_order(s: &super::HostSpan) -> (Ns, std::cmp::Reverse<Ns>) {
    (s.ts, std::cmp::Reverse(s.dur))
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
        self.finalize_with(false);
    }

    /// [`Self::finalize`] for a reader that put every thread's spans in
    /// [`span_order`] already (stably: ties in their first order): checking
    /// that order reads all of them again, 0.2 s of CPU on the 50M-event
    /// benchmark's 22M trainer spans.
    pub(crate) fn finalize_spans_sorted(&mut self) {
        self.finalize_with(true);
    }

    fn finalize_with(&mut self, spans_sorted: bool) {
        for p in &mut self.processes {
            p.objects.sort_by_key(|o| o.id);
            p.threads.sort_by_key(|t| t.tid);
        }
        self.processes
            .par_iter_mut()
            .flat_map(|p| p.threads.par_iter_mut())
            .for_each(|t| {
                if spans_sorted {
                    debug_assert!(t.spans.is_sorted_by_key(span_order), "a reader's promise");
                } else {
                    sort_stable(&mut t.spans, span_order);
                }
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
    /// Dense: slot `corr` holds the call's span number + 1; 0 means absent.
    dense: IdTable<u32>,
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
        if let Some(dense) = Self::build_dense(tl, &is_api) {
            return dense;
        }
        // Too sparse for a table: (corr, thread, span), sorted.
        let mut threads = Vec::new();
        let mut first_span = Vec::new();
        let mut entries: Vec<(u32, u32, u32)> = Vec::new();
        let mut n = 0u64;
        for (pi, p) in tl.processes.iter().enumerate() {
            for (ti, t) in p.threads.iter().enumerate() {
                let tix = threads.len() as u32;
                let before = entries.len();
                for (si, s) in t.spans.iter().enumerate() {
                    if is_api(s) {
                        entries.push((s.arg as u32, tix, si as u32));
                    }
                }
                if entries.len() > before {
                    threads.push((pi as u32, ti as u32));
                    first_span.push(n as u32);
                    n += t.spans.len() as u64;
                }
            }
        }
        entries.sort_unstable();
        entries.dedup_by_key(|e| e.0);
        CorrIndex {
            threads,
            first_span,
            dense: IdTable::new(0),
            sparse: entries,
        }
    }

    /// The dense table, in one pass over the spans in (process, thread,
    /// span) order, where the first call with an id fills its slot: no
    /// atomics, and the spans are read once (with the slots filled on all
    /// cores by `fetch_min` after a pass that found the largest id, this
    /// index cost four times the CPU time on 50M events). None when the ids
    /// are too sparse for a table, or the spans too many to number in a u32.
    fn build_dense(tl: &Timeline, is_api: &impl Fn(&super::HostSpan) -> bool) -> Option<CorrIndex> {
        let all: usize = tl
            .processes
            .iter()
            .flat_map(|p| &p.threads)
            .map(|t| t.spans.len())
            .sum();
        // The slots a dense table may have at most (see below).
        let mut threads = Vec::new();
        let mut first_span = Vec::new();
        let mut dense = IdTable::new(0u32);
        let (mut total, mut n) = (0usize, 0u64);
        for (pi, p) in tl.processes.iter().enumerate() {
            for (ti, t) in p.threads.iter().enumerate() {
                let base = n + 1;
                let mut calls = 0usize;
                for (si, s) in t.spans.iter().enumerate() {
                    if !is_api(s) {
                        continue;
                    }
                    let id = s.arg as u32;
                    if !fits_a_table(dense.range_with(id), all) {
                        return None;
                    }
                    calls += 1;
                    let slot = dense.slot(id);
                    if *slot == 0 {
                        // Truncated only where the spans are too many,
                        // and then the table is not used.
                        *slot = (base + si as u64) as u32;
                    }
                }
                if calls > 0 {
                    if n + t.spans.len() as u64 >= u32::MAX as u64 {
                        return None;
                    }
                    threads.push((pi as u32, ti as u32));
                    first_span.push(n as u32);
                    n += t.spans.len() as u64;
                    total += calls;
                }
            }
        }
        // Checked against every span above, as the calls were not counted yet.
        fits_a_table(dense.range(), total).then_some(CorrIndex {
            threads,
            first_span,
            dense,
            sparse: Vec::new(),
        })
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
            let n = self.dense.get(corr)? - 1;
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
            self.dense.filled()
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
    use super::{CorrIndex, LaunchRef, Source, Timeline, merge_tail, sort_stable};
    use crate::model::{HostSpan, Process, SpanKind, Thread};

    /// The index links each id to its first call in (process, thread, span)
    /// order, as a search over every span does: with ids shared by calls
    /// on one thread and on several, threads and processes without calls,
    /// non-API spans with an argument, and ids dense (a table) or sparse (a
    /// sorted list).
    #[test]
    fn corr_index_links_each_id_to_its_first_call() {
        let mut x = 777u64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for case in 0..300 {
            let sparse = case % 3 == 2;
            let mut tl = Timeline::new(Source::Native, "t");
            for _ in 0..1 + rnd(3) {
                let mut p = Process::default();
                for _ in 0..rnd(4) {
                    let mut t = Thread::default();
                    for _ in 0..rnd(40) {
                        let kind = match rnd(4) {
                            0 => SpanKind::CudaRuntime,
                            1 => SpanKind::CudaDriver,
                            2 => SpanKind::CpuOp,
                            _ => SpanKind::CudaRuntime,
                        };
                        let arg = if sparse && rnd(2) == 0 {
                            1 + rnd(3) * 1_000_000_000
                        } else {
                            rnd(30)
                        };
                        t.spans.push(HostSpan {
                            ts: 0,
                            dur: 0,
                            arg,
                            id: 0,
                            kind,
                        });
                    }
                    p.threads.push(t);
                }
                tl.processes.push(p);
            }
            let idx = CorrIndex::build(&tl);
            let want = |corr: u32| -> Option<LaunchRef> {
                for (pi, p) in tl.processes.iter().enumerate() {
                    for (ti, t) in p.threads.iter().enumerate() {
                        for (si, s) in t.spans.iter().enumerate() {
                            let api =
                                matches!(s.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver);
                            if api && corr != 0 && s.arg == corr as u64 {
                                return Some(LaunchRef {
                                    process: pi as u32,
                                    thread: ti as u32,
                                    span: si as u32,
                                });
                            }
                        }
                    }
                }
                None
            };
            let ids = (0..40).chain((0..4).map(|k| 1 + k * 1_000_000_000));
            for corr in ids {
                assert_eq!(idx.get(corr), want(corr), "case {case}, id {corr}");
            }
            // A table unless the calls' ids spread far past their count.
            let ids: Vec<u64> = tl
                .processes
                .iter()
                .flat_map(|p| &p.threads)
                .flat_map(|t| &t.spans)
                .filter(|s| {
                    matches!(s.kind, SpanKind::CudaRuntime | SpanKind::CudaDriver) && s.arg != 0
                })
                .map(|s| s.arg)
                .collect();
            let far = ids.iter().max().unwrap_or(&0) - ids.iter().min().unwrap_or(&0) > 1000;
            assert_eq!(idx.sparse.is_empty(), !far, "case {case}");
            assert!(!far || idx.dense.range() == 0, "case {case}");
        }
    }

    /// Ids that start far above 0, as in a Kineto trace of later steps,
    /// still get a table, which spans their range only.
    #[test]
    fn ids_far_from_zero_get_a_table() {
        let mut tl = Timeline::new(Source::Kineto, "t");
        let spans = (0..1000u64)
            .map(|k| HostSpan {
                ts: k as i64,
                dur: 1,
                arg: 900_000 + k,
                id: 0,
                kind: SpanKind::CudaRuntime,
            })
            .collect();
        tl.processes.push(Process {
            threads: vec![Thread {
                spans,
                ..Thread::default()
            }],
            ..Process::default()
        });
        let idx = CorrIndex::build(&tl);
        assert!(idx.sparse.is_empty() && idx.dense.range() == 1000);
        assert_eq!(idx.get(900_999).map(|r| r.span), Some(999));
        assert_eq!(idx.get(899_999), None);
        assert_eq!(idx.get(901_000), None);
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
