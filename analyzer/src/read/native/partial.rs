//! Accumulators for decoding chunks in parallel: each batch of chunks fills a
//! `Partial`, and partials are merged pairwise.

use std::collections::HashMap;

use stallscope_format::records::{GpuStatus, Marker, Note};

use crate::model::{GpuOp, HostSpan, LaunchConfig, MemEvent, Oom, Sample, StrId, SyncEvent};

#[derive(Default)]
pub struct ThreadAcc {
    pub spans: Vec<HostSpan>,
    pub samples: Vec<Sample>,
    /// Latest (ts, name) seen.
    pub name: Option<(u64, StrId)>,
}

#[derive(Default)]
pub struct GpuAcc {
    pub streams: HashMap<u32, Vec<GpuOp>>,
    pub launch_configs: Vec<LaunchConfig>,
    pub syncs: Vec<SyncEvent>,
    pub memory: Vec<MemEvent>,
    pub dropped: u64,
    pub name: StrId,
    pub memory_bytes: u64,
    pub sm_count: u32,
    pub cc: (u32, u32),
}

#[derive(Default)]
pub struct Partial {
    pub threads: HashMap<u32, ThreadAcc>,
    pub gpus: HashMap<u32, GpuAcc>,
    pub markers: Vec<Marker>,
    pub ooms: Vec<Oom>,
    pub statuses: Vec<GpuStatus>,
    pub notes: Vec<Note>,
    /// (mono, real) pairs.
    pub clocks: Vec<(u64, u64)>,
    pub end: Option<u64>,
    /// Damage found while decoding, already worded for the user.
    pub errors: Vec<String>,
}

impl Partial {
    pub fn thread(&mut self, tid: u32) -> &mut ThreadAcc {
        self.threads.entry(tid).or_default()
    }

    pub fn gpu(&mut self, id: u32) -> &mut GpuAcc {
        self.gpus.entry(id).or_default()
    }

    /// Joins partials in order, sizing every list once.
    pub fn concat(parts: Vec<Partial>) -> Partial {
        let mut span_len: HashMap<u32, (usize, usize)> = HashMap::new();
        let mut op_len: HashMap<(u32, u32), usize> = HashMap::new();
        for p in &parts {
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
        let mut out = Partial::default();
        for (tid, (spans, samples)) in span_len {
            let t = out.thread(tid);
            t.spans.reserve_exact(spans);
            t.samples.reserve_exact(samples);
        }
        for ((gid, sid), n) in op_len {
            out.gpu(gid)
                .streams
                .entry(sid)
                .or_default()
                .reserve_exact(n);
        }
        for p in parts {
            out = out.merge(p);
        }
        out
    }

    pub fn merge(mut self, other: Partial) -> Partial {
        for (tid, t) in other.threads {
            let mine = self.thread(tid);
            mine.spans.extend(t.spans);
            mine.samples.extend(t.samples);
            if t.name.map(|n| n.0) > mine.name.map(|n| n.0) {
                mine.name = t.name;
            }
        }
        for (id, g) in other.gpus {
            let mine = self.gpu(id);
            let base = mine.launch_configs.len() as u32;
            mine.launch_configs.extend(g.launch_configs);
            for (sid, mut ops) in g.streams {
                for op in &mut ops {
                    if op.launch != u32::MAX {
                        op.launch += base;
                    }
                }
                mine.streams.entry(sid).or_default().extend(ops);
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
        self.errors.extend(other.errors);
        self
    }
}
