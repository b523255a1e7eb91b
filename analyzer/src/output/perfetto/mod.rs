//! Perfetto trace writer: the timeline and its diagnosis as protobuf
//! `TracePacket`s with `TrackEvent`s, for ui.perfetto.dev.
//!
//! What the trace holds:
//! - a process track per process (named after its command line) and a thread
//!   track per thread, with host spans: file I/O (path, bytes, filesystem),
//!   waits, CUDA API calls, CPU ops, Python functions and annotations (NVTX,
//!   `record_function`); spans that overlap without nesting go to "overlap"
//!   lane tracks;
//! - a group track per GPU ("GPU 0: `<name>`") holding the "idle: cause" track
//!   (the diagnosis' idle gaps, named cause/sub-cause), counters and one track
//!   per stream with kernels (grid, block, precision), copies and memsets
//!   (bytes, memory kinds);
//! - a "steps" track; flows from each launching API call to its GPU work;
//!   OOM instants;
//! - counters: GPU busy %, allocated device memory, file reads MB/s per
//!   process, CPU % and major faults/s per sampled thread.
//!
//! The trace is one packet sequence. Its first packet clears incremental state
//! and carries the clock snapshot; names, categories and arg names/strings are
//! interned. Events are merged into time order and written one packet at a
//! time, so memory does not grow with the trace beyond the interning tables,
//! the flow index (8 bytes per linked GPU op, see `flows.rs`) and bounded
//! counter bins.
//!
//! Native timelines are on CLOCK_MONOTONIC, which is the trace clock here;
//! Kineto timelines keep their own clock (still labelled MONOTONIC, as there is
//! nothing else to line up with).

mod args;
mod counters;
mod flows;
mod intern;
mod merge;
mod proto;
mod render;
mod slices;
mod tracks;
mod writer;

use std::io::{self, Write};

use crate::analysis::Diagnosis;
use crate::model::Timeline;
use flows::FlowIndex;

/// What a write produced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PerfettoStats {
    /// Trace packets, and the bytes written.
    pub packets: u64,
    pub bytes: u64,
    /// Track descriptors, including overlap lanes.
    pub tracks: u64,
    /// Extra lanes made for slices that overlap without nesting.
    pub lanes: u64,
    /// All slices: host spans, GPU ops, idle gaps and steps.
    pub slices: u64,
    /// Host spans (every `SpanKind`).
    pub spans: u64,
    /// GPU ops (kernels, copies, memsets), and kernels alone.
    pub gpu_ops: u64,
    pub kernels: u64,
    pub idle_gaps: u64,
    pub steps: u64,
    /// Flows from launch calls to GPU ops.
    pub flows: u64,
    /// Counter points.
    pub counters: u64,
    /// Instant events (OOMs).
    pub instants: u64,
}

/// Writes `tl` (and `diag`, when given) to `out` as a Perfetto protobuf trace.
/// `progress(done, total)` is called now and then, counting model items
/// (spans, ops, gaps, steps, samples, memory events, counter bins).
/// `out` gets large writes; it needs no buffering of its own.
pub fn write_perfetto<W: Write>(
    tl: &Timeline,
    diag: Option<&Diagnosis>,
    mut out: W,
    progress: &dyn Fn(u64, u64),
) -> io::Result<PerfettoStats> {
    let cx = Cx {
        tl,
        diag,
        flows: FlowIndex::build(tl),
    };
    let mut layout = tracks::Layout::build(&cx);
    let mut sources = merge::sources(&cx, &mut layout);
    let origin = sources
        .iter()
        .filter_map(|s| s.peek(&cx))
        .min()
        .unwrap_or(0);
    let mut w = writer::PacketWriter::new(&mut out, tl, progress);
    w.set_total(sources.iter().map(|s| s.units(&cx)).sum());
    w.header(origin, tl.realtime_offset_ns)?;
    for desc in std::mem::take(&mut layout.descs) {
        w.descriptor(desc)?;
    }
    merge::run(&cx, &mut w, &mut layout, &mut sources)?;
    w.finish()
}

/// What every part of the writer reads.
struct Cx<'a> {
    tl: &'a Timeline,
    diag: Option<&'a Diagnosis>,
    flows: FlowIndex,
}
