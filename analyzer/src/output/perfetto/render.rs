//! What a slice says: its name, category and args, for each kind of model item.
//! Categories let the UI and SQL (`slice.category`) filter by kind.

use std::fmt::Write as _;
use std::io;

use stallscope_format::{FdClass, HostOp, fs_name};

use super::proto::TYPE_SLICE_BEGIN;
use super::slices::List;
use super::writer::PacketWriter;
use super::{Cx, FlowIndex};
use crate::model::{GpuOpKind, Precision, SpanKind, StrId};

/// Writes the BEGIN of item `i` of `list` on track `uuid`.
pub(super) fn begin(
    cx: &Cx,
    w: &mut PacketWriter,
    list: List,
    i: usize,
    uuid: u64,
    ts: i64,
) -> io::Result<()> {
    w.stats.slices += 1;
    match list {
        List::Spans { p, t } => host_span(cx, w, p, t, i, uuid),
        List::Ops { g, s, first_op } => {
            // Ordinals wrap at u32 like FlowIndex's.
            let ordinal = first_op.wrapping_add(i as u64) as u32;
            gpu_op(cx, w, g, s, i, ordinal, uuid)
        }
        List::Gaps { d } => gap(cx, w, d, i, uuid),
        List::Steps => step(cx, w, i, uuid),
    }
    w.emit(ts)
}

/// The name for string `id`, or `fallback` when it is empty or unknown.
fn name(cx: &Cx, w: &mut PacketWriter, id: StrId, fallback: &str) -> u64 {
    if cx.tl.strings.get(id).is_empty() {
        w.intern.name_text(fallback)
    } else {
        w.intern.name_str(id, &cx.tl.strings)
    }
}

fn host_span(cx: &Cx, w: &mut PacketWriter, p: usize, t: usize, i: usize, uuid: u64) {
    let proc = &cx.tl.processes[p];
    let sp = proc.threads[t].spans[i];
    w.stats.spans += 1;
    let (fallback, category) = match sp.kind {
        SpanKind::Host(op) => {
            let cat = if op.is_wait() || op == HostOp::Recv {
                "wait"
            } else {
                "io"
            };
            let n = w.intern.name_text(op.name());
            w.start(TYPE_SLICE_BEGIN, uuid, n, cat);
            host_op_args(cx, w, p, op, sp.arg, sp.id);
            // A run of short calls (the shim's `Burst`): one slice over its
            // extent, and how many calls it holds.
            let runs = &proc.threads[t].runs;
            if !runs.is_empty() {
                let k = runs.partition_point(|r| r.ts < sp.ts);
                if let Some(r) = runs[k..]
                    .iter()
                    .take_while(|r| r.ts == sp.ts)
                    .find(|r| r.is(&sp))
                {
                    w.arg_uint("calls", r.calls);
                    w.arg_uint("time in calls (ns)", r.busy_ns);
                    if r.files > 1 {
                        w.arg_uint("files", r.files.into());
                    }
                }
            }
            return;
        }
        SpanKind::CudaRuntime | SpanKind::CudaDriver => ("cuda API", "cuda_api"),
        SpanKind::CpuOp => ("cpu op", "cpu_op"),
        SpanKind::PyFunction => ("python", "python"),
        SpanKind::Annotation => ("annotation", "annotation"),
        SpanKind::Other => ("other", "other"),
    };
    let n = name(cx, w, sp.id, fallback);
    w.start(TYPE_SLICE_BEGIN, uuid, n, category);
    if category == "cuda_api" && sp.arg != 0 {
        let corr = sp.arg as u32;
        w.arg_uint("correlation", corr as u64);
        if cx.flows.is_launch(p, t, i) {
            w.te().flow_ids.extend(cx.flows.targets(corr));
        }
    }
}

fn host_op_args(cx: &Cx, w: &mut PacketWriter, p: usize, op: HostOp, arg: u64, object: u32) {
    if op.is_read() || op.is_write() {
        w.arg_uint("bytes", arg);
    }
    if matches!(op, HostOp::SemWait | HostOp::CondWait) && arg != 0 {
        w.arg_pointer("address", arg);
    }
    if object == 0 {
        return;
    }
    let Some(obj) = cx.tl.processes[p].object(object) else {
        return;
    };
    if obj.path != 0 {
        w.arg_str("path", obj.path, &cx.tl.strings);
    }
    w.arg_text("fd class", obj.class.name());
    if obj.class == FdClass::File || obj.fs_magic != 0 {
        w.arg_text("filesystem", fs_name(obj.fs_magic));
    }
    w.arg_int("fd", obj.fd as i64);
}

fn gpu_op(cx: &Cx, w: &mut PacketWriter, g: usize, s: usize, i: usize, ordinal: u32, uuid: u64) {
    let gpu = &cx.tl.gpus[g];
    let op = gpu.streams[s].ops[i];
    w.stats.gpu_ops += 1;
    match op.kind() {
        GpuOpKind::Kernel => {
            w.stats.kernels += 1;
            let n = name(cx, w, op.name, "kernel");
            w.start(TYPE_SLICE_BEGIN, uuid, n, "kernel");
            if let Some(lc) = gpu.launch_configs.get(op.launch() as usize) {
                let [grid, block] = w.intern.launch(g, op.launch(), lc);
                w.arg_interned("grid", grid);
                w.arg_interned("block", block);
                if lc.shared_mem > 0 {
                    w.arg_uint("shared mem", lc.shared_mem as u64);
                }
                if lc.registers > 0 {
                    w.arg_uint("registers", lc.registers as u64);
                }
            }
            if op.precision() != Precision::Unknown {
                w.arg_text("precision", op.precision().name());
            }
        }
        GpuOpKind::Memcpy => {
            let n = if cx.tl.strings.get(op.name).is_empty() {
                w.scratch.clear();
                let _ = write!(w.scratch, "Memcpy {}", op.copy().name());
                w.intern.name_text(&w.scratch)
            } else {
                w.intern.name_str(op.name, &cx.tl.strings)
            };
            w.start(TYPE_SLICE_BEGIN, uuid, n, "memcpy");
            w.arg_uint("bytes", op.bytes());
            w.arg_text("kind", op.copy().name());
            w.arg_text("src", op.src().name());
            w.arg_text("dst", op.dst().name());
            let dur = op.end.saturating_sub(op.start);
            if dur > 0 {
                w.arg_double("GB/s", op.bytes() as f64 / dur as f64);
            }
        }
        GpuOpKind::Memset => {
            let n = name(cx, w, op.name, "Memset");
            w.start(TYPE_SLICE_BEGIN, uuid, n, "memset");
            w.arg_uint("bytes", op.bytes());
            w.arg_text("dst", op.dst().name());
        }
    }
    if op.corr != 0 {
        w.arg_uint("correlation", op.corr as u64);
        if cx.flows.is_linked(ordinal) {
            w.te()
                .terminating_flow_ids
                .push(FlowIndex::flow_id(ordinal));
            w.stats.flows += 1;
        }
    }
}

fn gap(cx: &Cx, w: &mut PacketWriter, d: usize, i: usize, uuid: u64) {
    let Some(diag) = cx.diag else { return };
    let gap = diag.devices[d].gaps[i];
    w.stats.idle_gaps += 1;
    w.scratch.clear();
    w.scratch.push_str(gap.cause.name());
    if !gap.sub.is_empty() {
        w.scratch.push('/');
        w.scratch.push_str(gap.sub);
    }
    let n = w.intern.name_text(&w.scratch);
    w.start(TYPE_SLICE_BEGIN, uuid, n, "idle");
    if gap.pid != 0 || gap.tid != 0 {
        w.arg_uint("pid", gap.pid as u64);
        w.arg_uint("tid", gap.tid as u64);
        let th = cx
            .tl
            .processes
            .iter()
            .filter(|p| p.pid == gap.pid)
            .find_map(|p| p.thread(gap.tid));
        if let Some(th) = th.filter(|th| th.name != 0) {
            w.arg_str("thread", th.name, &cx.tl.strings);
        }
    }
}

fn step(cx: &Cx, w: &mut PacketWriter, i: usize, uuid: u64) {
    let Some(diag) = cx.diag else { return };
    let st = diag.steps.steps[i];
    w.stats.steps += 1;
    w.scratch.clear();
    let _ = write!(w.scratch, "step {}", st.index);
    let n = w.intern.name_text(&w.scratch);
    w.start(TYPE_SLICE_BEGIN, uuid, n, "step");
    if st.outlier {
        w.arg_bool("outlier", true);
    }
}
