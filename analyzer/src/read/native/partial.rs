//! Accumulators for decoding chunks in parallel: each run of consecutive chunks
//! fills a `Partial`, and the partials are joined once, in order, at the end.
//!
//! Lookups are per record on the hottest path, so they avoid hashing where they
//! can: threads and streams live in small vectors with a last-hit cache (a
//! chunk has one owner, and the CUPTI thread's chunks hold one device's
//! records), and launch configurations are deduplicated as they are decoded
//! (kernels share a handful of grid/block shapes; one 32-byte config per kernel
//! was a third of the model's size).

use rustc_hash::FxHashMap;
use stallscope_format::records::{GpuStatus, Marker, Note};

use crate::model::{
    GpuOp, HostSpan, LaunchConfig, MemEvent, Ns, Oom, RunSpan, Sample, StrId, SyncEvent,
};

#[derive(Default)]
pub struct ThreadAcc {
    pub spans: Vec<HostSpan>,
    pub samples: Vec<Sample>,
    /// The spans as the batched decoder keeps them, one list per chunk owner
    /// (see `batch::OwnedSpans`); `spans` is then empty.
    pub owned: super::batch::OwnedSpans,
    /// Latest (ts, name) seen.
    pub name: Option<(u64, StrId)>,
    /// The runs of short calls among `spans` (or `owned`).
    pub runs: Vec<RunSpan>,
}

#[derive(Default)]
pub struct GpuAcc {
    /// (stream id, ops), in order of first appearance.
    pub streams: Vec<(u32, Vec<GpuOp>)>,
    /// Distinct launch configurations; ops index into it.
    pub launch_configs: Vec<LaunchConfig>,
    config_ids: FxHashMap<LaunchConfig, u32>,
    pub syncs: Vec<SyncEvent>,
    pub memory: Vec<MemEvent>,
    pub dropped: u64,
    pub name: StrId,
    pub memory_bytes: u64,
    pub sm_count: u32,
    pub cc: (u32, u32),
}

impl GpuAcc {
    /// Index of stream `id`, added if new.
    pub fn stream(&mut self, id: u32) -> usize {
        match self.streams.iter().position(|s| s.0 == id) {
            Some(i) => i,
            None => {
                self.streams.push((id, Vec::new()));
                self.streams.len() - 1
            }
        }
    }

    /// Replaces the distinct configurations (ops already index into `list`).
    pub fn set_configs(&mut self, list: Vec<LaunchConfig>) {
        self.config_ids = list
            .iter()
            .enumerate()
            .map(|(i, c)| (*c, i as u32))
            .collect();
        self.launch_configs = list;
    }

    /// The index of `c` in this GPU's distinct configurations.
    pub fn config(&mut self, c: LaunchConfig) -> u32 {
        if let Some(&i) = self.config_ids.get(&c) {
            return i;
        }
        let i = self.launch_configs.len() as u32;
        self.launch_configs.push(c);
        self.config_ids.insert(c, i);
        i
    }
}

#[derive(Default)]
pub struct Partial {
    /// (tid, accumulator), in order of first appearance.
    pub threads: Vec<(u32, ThreadAcc)>,
    thread_index: FxHashMap<u32, usize>,
    /// (device, accumulator), in order of first appearance.
    pub gpus: Vec<(u32, GpuAcc)>,
    pub markers: Vec<Marker>,
    pub ooms: Vec<Oom>,
    pub statuses: Vec<GpuStatus>,
    pub notes: Vec<Note>,
    /// (mono, real) pairs.
    pub clocks: Vec<(u64, u64)>,
    pub end: Option<u64>,
    /// Latest end of any span decoded.
    pub last: Option<Ns>,
    /// Damage found while decoding, already worded for the user.
    pub errors: Vec<String>,
    /// Some API call's span is tagged `decode::UNNAMED`.
    pub unnamed: bool,
}

impl Partial {
    /// Index of thread `tid`, added if new.
    pub fn thread_index(&mut self, tid: u32) -> usize {
        if let Some(&i) = self.thread_index.get(&tid) {
            return i;
        }
        let i = self.threads.len();
        self.threads.push((tid, ThreadAcc::default()));
        self.thread_index.insert(tid, i);
        i
    }

    pub fn thread(&mut self, tid: u32) -> &mut ThreadAcc {
        let i = self.thread_index(tid);
        &mut self.threads[i].1
    }

    /// Index of GPU `id`, added if new.
    pub fn gpu_index(&mut self, id: u32) -> usize {
        match self.gpus.iter().position(|g| g.0 == id) {
            Some(i) => i,
            None => {
                self.gpus.push((id, GpuAcc::default()));
                self.gpus.len() - 1
            }
        }
    }

    pub fn gpu(&mut self, id: u32) -> &mut GpuAcc {
        let i = self.gpu_index(id);
        &mut self.gpus[i].1
    }

    /// Joins partials in order. Each list keeps the first partial's vector and
    /// appends the others once (sized up front), freeing them as it goes, so
    /// the peak is the joined data plus one partial's list, and no event is
    /// copied more than once.
    pub fn concat(parts: Vec<Partial>) -> Partial {
        let mut parts = parts.into_iter();
        let Some(mut out) = parts.next() else {
            return Partial::default();
        };
        let rest: Vec<Partial> = parts.collect();
        // Final sizes, to reserve once.
        let mut span_len: FxHashMap<u32, (usize, usize)> = FxHashMap::default();
        let mut op_len: FxHashMap<(u32, u32), usize> = FxHashMap::default();
        for p in &rest {
            for (tid, t) in &p.threads {
                let e = span_len.entry(*tid).or_default();
                e.0 += t.spans.len();
                e.1 += t.samples.len();
            }
            for (gid, g) in &p.gpus {
                for (sid, ops) in &g.streams {
                    *op_len.entry((*gid, *sid)).or_default() += ops.len();
                }
            }
        }
        for (tid, (spans, samples)) in span_len {
            let t = out.thread(tid);
            t.spans.reserve_exact(spans);
            t.samples.reserve_exact(samples);
        }
        for ((gid, sid), n) in op_len {
            let g = out.gpu(gid);
            let s = g.stream(sid);
            g.streams[s].1.reserve_exact(n);
        }
        for p in rest {
            out.append(p);
        }
        out
    }

    fn append(&mut self, other: Partial) {
        for (tid, t) in other.threads {
            let mine = self.thread(tid);
            mine.spans.extend_from_slice(&t.spans);
            drop(t.spans);
            mine.samples.extend_from_slice(&t.samples);
            mine.runs.extend_from_slice(&t.runs);
            if t.name.map(|n| n.0) > mine.name.map(|n| n.0) {
                mine.name = t.name;
            }
        }
        for (id, g) in other.gpus {
            let mine = self.gpu(id);
            // Their config indices, in ours.
            let remap: Vec<u32> = g.launch_configs.iter().map(|&c| mine.config(c)).collect();
            for (sid, ops) in g.streams {
                let s = mine.stream(sid);
                let dst = &mut mine.streams[s].1;
                dst.extend(ops.iter().map(|op| {
                    let mut op = *op;
                    if op.launch() != u32::MAX {
                        op.set_launch(remap.get(op.launch() as usize).copied().unwrap_or(u32::MAX));
                    }
                    op
                }));
            }
            mine.syncs.extend(g.syncs);
            mine.memory.extend(g.memory);
            mine.dropped += g.dropped;
            if mine.name == 0 && g.name != 0 {
                mine.name = g.name;
                mine.memory_bytes = g.memory_bytes;
                mine.sm_count = g.sm_count;
                mine.cc = g.cc;
            }
        }
        self.markers.extend(other.markers);
        self.ooms.extend(other.ooms);
        self.statuses.extend(other.statuses);
        self.notes.extend(other.notes);
        self.clocks.extend(other.clocks);
        self.end = self.end.max(other.end);
        self.last = self.last.max(other.last);
        self.errors.extend(other.errors);
        self.unnamed |= other.unnamed;
    }
}
