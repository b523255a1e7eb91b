//! Track layout: which tracks exist, their uuids and their descriptors.
//!
//! Processes and threads get process/thread tracks, so the UI groups them with
//! their pids. Each GPU is a top-level group track ("GPU 0: `<name>`") whose
//! children (in this order) are the idle-cause track, its counters and one
//! track per stream. Steps are a top-level track. Uuids are small sequential
//! numbers: they are written with every event, so short varints matter.

use super::Cx;
use super::proto::*;
use crate::analysis::StepSource;
use crate::model::{GpuCapture, Timeline};

pub(super) struct Layout {
    last_uuid: u64,
    /// Descriptors made so far, written once the clock header is out.
    pub descs: Vec<TrackDescriptor>,
    /// Per process index.
    pub processes: Vec<u64>,
    /// Per process index, per thread index.
    pub threads: Vec<Vec<u64>>,
    pub gpus: Vec<GpuTracks>,
    pub steps: Option<u64>,
}

pub(super) struct GpuTracks {
    /// Index into `Timeline::gpus`, if the timeline has this device.
    pub gpu: Option<usize>,
    /// Index into `Diagnosis::devices`, if diagnosed.
    pub device: Option<usize>,
    pub group: u64,
    pub idle: Option<u64>,
    /// Per stream index of the timeline's `Gpu`.
    pub streams: Vec<u64>,
}

/// Ranks of a GPU group's children (child_ordering EXPLICIT).
pub(super) const RANK_IDLE: i32 = 0;
pub(super) const RANK_BUSY: i32 = 1;
pub(super) const RANK_MEMORY: i32 = 2;
const RANK_STREAMS: i32 = 10;

impl Layout {
    pub fn build(cx: &Cx) -> Layout {
        let mut l = Layout {
            last_uuid: 0,
            descs: vec![],
            processes: vec![],
            threads: vec![],
            gpus: vec![],
            steps: None,
        };
        for p in &cx.tl.processes {
            let uuid = l.alloc();
            l.processes.push(uuid);
            l.descs.push(process_desc(uuid, p));
            let mut threads = vec![];
            for t in &p.threads {
                let uuid = l.alloc();
                threads.push(uuid);
                let name = cx.tl.strings.get(t.name);
                l.descs.push(TrackDescriptor {
                    uuid: Some(uuid),
                    thread: Some(ThreadDescriptor {
                        pid: Some(p.pid as i32),
                        tid: Some(t.tid as i64),
                        thread_name: (!name.is_empty()).then(|| name.to_string()),
                    }),
                    ..TrackDescriptor::default()
                });
            }
            l.threads.push(threads);
        }
        l.add_gpus(cx);
        if let Some(d) = cx.diag.filter(|d| d.steps.source != StepSource::None) {
            let uuid = l.alloc();
            l.steps = Some(uuid);
            l.descs.push(TrackDescriptor {
                uuid: Some(uuid),
                name: Some("steps".into()),
                description: Some(format!(
                    "Training steps ({:?}); median {} us, p90 {} us",
                    d.steps.source,
                    d.steps.median_ns / 1000,
                    d.steps.p90_ns / 1000
                )),
                ..TrackDescriptor::default()
            });
        }
        l
    }

    /// One group per GPU of the timeline, plus any diagnosed device the
    /// timeline lacks (so its idle gaps still show).
    fn add_gpus(&mut self, cx: &Cx) {
        let devices = cx.diag.map(|d| d.devices.as_slice()).unwrap_or(&[]);
        let mut ids: Vec<(u32, Option<usize>, Option<usize>)> = vec![];
        for (gi, g) in cx.tl.gpus.iter().enumerate() {
            if !ids.iter().any(|e| e.0 == g.id) {
                ids.push((g.id, Some(gi), None));
            }
        }
        for (di, d) in devices.iter().enumerate() {
            match ids.iter_mut().find(|e| e.0 == d.gpu) {
                Some(e) if e.2.is_none() => e.2 = Some(di),
                Some(_) => {}
                None => ids.push((d.gpu, None, Some(di))),
            }
        }
        for (id, gpu, device) in ids {
            let group = self.alloc();
            let g = gpu.map(|i| &cx.tl.gpus[i]);
            let name = match g.map(|g| g.name.as_str()).filter(|n| !n.is_empty()) {
                Some(n) => format!("GPU {id}: {n}"),
                None => format!("GPU {id}"),
            };
            self.descs.push(TrackDescriptor {
                uuid: Some(group),
                name: Some(name),
                description: g.map(gpu_description),
                child_ordering: Some(CHILD_ORDERING_EXPLICIT),
                ..TrackDescriptor::default()
            });
            let idle = device.map(|_| {
                let uuid = self.alloc();
                self.descs.push(TrackDescriptor {
                    uuid: Some(uuid),
                    parent_uuid: Some(group),
                    name: Some("idle: cause".into()),
                    description: Some(
                        "GPU idle time inside the active window; each gap is named by the \
                         cause stallscope attributed it to (cause/sub-cause)"
                            .into(),
                    ),
                    sibling_order_rank: Some(RANK_IDLE),
                    ..TrackDescriptor::default()
                });
                uuid
            });
            let mut streams = vec![];
            for (si, s) in g
                .map(|g| g.streams.as_slice())
                .unwrap_or(&[])
                .iter()
                .enumerate()
            {
                let uuid = self.alloc();
                streams.push(uuid);
                self.descs.push(TrackDescriptor {
                    uuid: Some(uuid),
                    parent_uuid: Some(group),
                    name: Some(format!("stream {}", s.id)),
                    sibling_order_rank: Some(RANK_STREAMS.saturating_add(si as i32)),
                    ..TrackDescriptor::default()
                });
            }
            self.gpus.push(GpuTracks {
                gpu,
                device,
                group,
                idle,
                streams,
            });
        }
    }

    pub fn alloc(&mut self) -> u64 {
        self.last_uuid += 1;
        self.last_uuid
    }

    /// A counter track under `parent` (a process, thread or GPU group track).
    pub fn counter(&mut self, parent: u64, name: String, unit: Unit, rank: Option<i32>) -> u64 {
        let uuid = self.alloc();
        let (unit, unit_name) = match unit {
            Unit::Bytes => (Some(UNIT_SIZE_BYTES), None),
            Unit::Named(n) => (None, Some(n.to_string())),
        };
        self.descs.push(TrackDescriptor {
            uuid: Some(uuid),
            parent_uuid: Some(parent),
            name: Some(name),
            counter: Some(CounterDescriptor { unit, unit_name }),
            sibling_order_rank: rank,
            ..TrackDescriptor::default()
        });
        uuid
    }

    /// An extra track for slices that cannot nest on `parent` (see slices.rs).
    pub fn lane(&mut self, parent: u64, name: String) -> (u64, TrackDescriptor) {
        let uuid = self.alloc();
        let desc = TrackDescriptor {
            uuid: Some(uuid),
            parent_uuid: Some(parent),
            name: Some(name),
            description: Some(
                "Slices that overlap others on the parent track without nesting".into(),
            ),
            ..TrackDescriptor::default()
        };
        (uuid, desc)
    }
}

pub(super) enum Unit {
    Bytes,
    Named(&'static str),
}

/// "name tid", the way the Perfetto UI labels threads; used for tracks that
/// sit next to a thread's own track.
pub(super) fn thread_label(tl: &Timeline, p: usize, t: usize) -> String {
    let th = &tl.processes[p].threads[t];
    match tl.strings.get(th.name) {
        "" => format!("thread {}", th.tid),
        n => format!("{n} {}", th.tid),
    }
}

fn process_desc(uuid: u64, p: &crate::model::Process) -> TrackDescriptor {
    // The UI shows process_name next to the pid; keep it to one readable line.
    let name: String = p.cmdline.chars().take(160).collect();
    let mut description = format!("pid {}, parent {}", p.pid, p.ppid);
    if !p.hostname.is_empty() {
        description += &format!(", host {}", p.hostname);
    }
    match &p.gpu_capture {
        GpuCapture::NotAttempted | GpuCapture::Active => {}
        GpuCapture::Unavailable(why) => description += &format!("; GPU capture unavailable: {why}"),
        GpuCapture::Partial(why) => description += &format!("; GPU capture partial: {why}"),
        GpuCapture::Disabled => description += "; GPU capture disabled",
    }
    if p.dropped_records > 0 {
        description += &format!("; {} records dropped", p.dropped_records);
    }
    TrackDescriptor {
        uuid: Some(uuid),
        process: Some(ProcessDescriptor {
            pid: Some(p.pid as i32),
            cmdline: if p.cmdline.is_empty() {
                vec![]
            } else {
                vec![p.cmdline.clone()]
            },
            process_name: (!name.is_empty()).then_some(name),
            process_labels: p.rank.map(|r| format!("rank {r}")).into_iter().collect(),
        }),
        description: Some(description),
        ..TrackDescriptor::default()
    }
}

fn gpu_description(g: &crate::model::Gpu) -> String {
    let mut s = g.name.clone();
    if g.memory_bytes > 0 {
        s += &format!(", {:.1} GiB", g.memory_bytes as f64 / (1u64 << 30) as f64);
    }
    if g.sm_count > 0 {
        s += &format!(", {} SMs", g.sm_count);
    }
    if g.cc != (0, 0) {
        s += &format!(", compute capability {}.{}", g.cc.0, g.cc.1);
    }
    if g.dropped_records > 0 {
        s += &format!("; {} records dropped", g.dropped_records);
    }
    s
}
