//! What each Kineto event category and name means for the model.
//!
//! Category names come from libkineto's ActivityType (current: `kernel`,
//! `cuda_runtime`, ...) and from the 2021 traces of PyTorch 1.8-1.9 (`Kernel`,
//! `Runtime`, `Operator`, ...). ROCm traces reuse the CUDA names.

use crate::model::{CopyKind, MemKind, SpanKind, SyncKind};

/// Where an event goes in the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Host span of this kind.
    Host(SpanKind),
    Kernel,
    Memcpy,
    Memset,
    /// `cuda_sync`: a synchronization seen by CUPTI.
    Sync,
    /// A range drawn on a GPU stream (`gpu_user_annotation`); not GPU work.
    GpuAnnotation,
    /// Profiler bookkeeping (`Trace` spans, flows, overhead): skipped.
    Skip,
}

pub fn classify(cat: &str) -> Class {
    match cat {
        "kernel" | "Kernel" => Class::Kernel,
        "gpu_memcpy" | "Memcpy" => Class::Memcpy,
        "gpu_memset" | "Memset" => Class::Memset,
        "cuda_sync" => Class::Sync,
        "gpu_user_annotation" => Class::GpuAnnotation,
        "cuda_runtime" | "Runtime" | "privateuse1_runtime" | "xpu_runtime" | "mtia_runtime" => {
            Class::Host(SpanKind::CudaRuntime)
        }
        "cuda_driver" | "Driver" | "privateuse1_driver" => Class::Host(SpanKind::CudaDriver),
        "cpu_op" | "Operator" => Class::Host(SpanKind::CpuOp),
        "python_function" | "Python" => Class::Host(SpanKind::PyFunction),
        "user_annotation" | "User annotation" | "user annotation" => {
            Class::Host(SpanKind::Annotation)
        }
        "Trace" | "overhead" | "Overhead" | "ac2g" | "async" | "async_cpu_to_gpu" | "fwdbwd" => {
            Class::Skip
        }
        // Unknown categories stay visible on their thread.
        _ => Class::Host(SpanKind::Other),
    }
}

/// NCCL and RCCL kernels (`ncclKernel_AllReduce_RING_LL_Sum_float`,
/// `ncclDevKernel_Generic`, `void rcclKernel...`): collective or point-to-point
/// communication, which the reader marks `Precision::Comm`.
pub fn is_collective_kernel(name: &str) -> bool {
    let n = name.strip_prefix("void ").unwrap_or(name).trim_start();
    let head = n.get(..4).unwrap_or("");
    head.eq_ignore_ascii_case("nccl") || head.eq_ignore_ascii_case("rccl")
}

/// Direction and memory kinds of a copy from its Kineto name, e.g.
/// `Memcpy HtoD (Pageable -> Device)`.
pub fn memcpy_kinds(name: &str) -> (CopyKind, MemKind, MemKind) {
    let rest = name.strip_prefix("Memcpy").unwrap_or(name).trim_start();
    let dir = rest.split([' ', '(']).next().unwrap_or("");
    let copy = match dir {
        "HtoD" => CopyKind::HTOD,
        "DtoH" => CopyKind::DTOH,
        "HtoA" => CopyKind(3),
        "AtoH" => CopyKind(4),
        "AtoA" => CopyKind(5),
        "AtoD" => CopyKind(6),
        "DtoA" => CopyKind(7),
        "DtoD" => CopyKind::DTOD,
        "HtoH" => CopyKind::HTOH,
        "PtoP" => CopyKind::PTOP,
        _ => CopyKind::UNKNOWN,
    };
    let (src, dst) = match paren(name).and_then(|p| p.split_once("->")) {
        Some((s, d)) => (mem_kind(s), mem_kind(d)),
        None => (MemKind::UNKNOWN, MemKind::UNKNOWN),
    };
    (copy, src, dst)
}

/// Memory kind of a memset from its name, e.g. `Memset (Device)`.
pub fn memset_kind(name: &str) -> MemKind {
    paren(name).map_or(MemKind::UNKNOWN, mem_kind)
}

fn paren(name: &str) -> Option<&str> {
    let open = name.find('(')?;
    let close = name[open..].find(')')? + open;
    Some(&name[open + 1..close])
}

fn mem_kind(s: &str) -> MemKind {
    match s.trim() {
        "Pageable" => MemKind::PAGEABLE,
        "Pinned" => MemKind::PINNED,
        "Device" => MemKind::DEVICE,
        "Array" => MemKind::ARRAY,
        "Managed" => MemKind::MANAGED,
        "Device Static" => MemKind(6),
        "Managed Static" => MemKind(7),
        // ROCm writes "Host": pageable or pinned is not said.
        _ => MemKind::UNKNOWN,
    }
}

pub fn sync_kind(name: &str) -> SyncKind {
    match name {
        "Stream Sync" => SyncKind::Stream,
        "Context Sync" => SyncKind::Context,
        "Event Sync" => SyncKind::Event,
        "Stream Wait Event" => SyncKind::StreamWaitEvent,
        _ => SyncKind::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collectives() {
        assert!(is_collective_kernel(
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"
        ));
        assert!(is_collective_kernel(
            "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"
        ));
        assert!(is_collective_kernel("void rcclKernel_AllGather"));
        assert!(!is_collective_kernel(
            "void at::native::vectorized_elementwise_kernel"
        ));
        assert!(!is_collective_kernel("ncc"));
        assert!(!is_collective_kernel(""));
    }

    #[test]
    fn copies() {
        assert_eq!(
            memcpy_kinds("Memcpy HtoD (Pageable -> Device)"),
            (CopyKind::HTOD, MemKind::PAGEABLE, MemKind::DEVICE)
        );
        assert_eq!(
            memcpy_kinds("Memcpy DtoH (Device -> Pinned)"),
            (CopyKind::DTOH, MemKind::DEVICE, MemKind::PINNED)
        );
        assert_eq!(
            memcpy_kinds("Memcpy HtoD (Host -> Device)"),
            (CopyKind::HTOD, MemKind::UNKNOWN, MemKind::DEVICE)
        );
        assert_eq!(memcpy_kinds("weird").0, CopyKind::UNKNOWN);
        assert_eq!(memset_kind("Memset (Device)"), MemKind::DEVICE);
        assert_eq!(memset_kind("Memset (Unknown)"), MemKind::UNKNOWN);
    }
}
