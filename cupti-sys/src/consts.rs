//! The constants a CUPTI consumer needs, valid for 12.x and 13.x alike.
//!
//! They are re-exported from [`crate::v12`]; the test below checks that every
//! constant the two header sets share has the same value in both, so these
//! names mean the same thing whichever library was loaded. Anything not listed
//! here is still reachable as `cupti_sys::v12::NAME` or `v13::NAME`.

pub use crate::v12::{
    // What functionReturnValue holds on allocation failure.
    CUDA_ERROR_OUT_OF_MEMORY,
    CUDA_SUCCESS,
    // Activity attributes (cuptiActivitySetAttribute).
    CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT,
    CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE,
    CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
    // Record flags.
    CUPTI_ACTIVITY_FLAG_FLUSH_FORCED,
    CUPTI_ACTIVITY_FLAG_MARKER_END,
    CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS,
    CUPTI_ACTIVITY_FLAG_MARKER_START,
    CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC,
    CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC,
    CUPTI_ACTIVITY_FLAG_NONE,
    // Activity kinds (CUpti_ActivityKind).
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_DEVICE,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_INVALID,
    CUPTI_ACTIVITY_KIND_KERNEL,
    CUPTI_ACTIVITY_KIND_MARKER,
    CUPTI_ACTIVITY_KIND_MARKER_DATA,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMORY2,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_OVERHEAD,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    // Memcpy directions (CUpti_ActivityMemcpyKind, the record's copyKind).
    CUPTI_ACTIVITY_MEMCPY_KIND_ATOA,
    CUPTI_ACTIVITY_MEMCPY_KIND_ATOD,
    CUPTI_ACTIVITY_MEMCPY_KIND_ATOH,
    CUPTI_ACTIVITY_MEMCPY_KIND_DTOA,
    CUPTI_ACTIVITY_MEMCPY_KIND_DTOD,
    CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
    CUPTI_ACTIVITY_MEMCPY_KIND_HTOA,
    CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
    CUPTI_ACTIVITY_MEMCPY_KIND_HTOH,
    CUPTI_ACTIVITY_MEMCPY_KIND_PTOP,
    CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN,
    // Memory kinds (srcKind/dstKind, memset and MEMORY2 memoryKind).
    CUPTI_ACTIVITY_MEMORY_KIND_ARRAY,
    CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
    CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC,
    CUPTI_ACTIVITY_MEMORY_KIND_MANAGED,
    CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC,
    CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
    CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
    CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN,
    // MEMORY2 operation.
    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID,
    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE,
    // Object kinds (overhead and marker records).
    CUPTI_ACTIVITY_OBJECT_CONTEXT,
    CUPTI_ACTIVITY_OBJECT_DEVICE,
    CUPTI_ACTIVITY_OBJECT_PROCESS,
    CUPTI_ACTIVITY_OBJECT_STREAM,
    CUPTI_ACTIVITY_OBJECT_THREAD,
    CUPTI_ACTIVITY_OBJECT_UNKNOWN,
    // Overhead kinds.
    CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST,
    CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL,
    CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH,
    CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION,
    CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE,
    CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER,
    CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING,
    CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING,
    CUPTI_ACTIVITY_OVERHEAD_UNKNOWN,
    // Synchronization types.
    CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE,
    CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE,
    CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
    CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT,
    CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN,
    // Thread id types.
    CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT,
    CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM,
    // Callback sites and domains.
    CUPTI_API_ENTER,
    CUPTI_API_EXIT,
    CUPTI_CB_DOMAIN_DRIVER_API,
    CUPTI_CB_DOMAIN_INVALID,
    CUPTI_CB_DOMAIN_NVTX,
    CUPTI_CB_DOMAIN_RESOURCE,
    CUPTI_CB_DOMAIN_RUNTIME_API,
    CUPTI_CB_DOMAIN_SYNCHRONIZE,
    // Resource callbacks.
    CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
    CUPTI_CBID_RESOURCE_STREAM_CREATED,
    CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING,
    // Driver API callbacks: allocations, launches, syncs.
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemCreate,
    CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz,
    // Result codes.
    CUPTI_ERROR_DISABLED,
    CUPTI_ERROR_INSUFFICIENT_PRIVILEGES,
    CUPTI_ERROR_INVALID_KIND,
    CUPTI_ERROR_INVALID_OPERATION,
    CUPTI_ERROR_INVALID_PARAMETER,
    CUPTI_ERROR_MAX_LIMIT_REACHED,
    CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
    CUPTI_ERROR_NOT_COMPATIBLE,
    CUPTI_ERROR_NOT_INITIALIZED,
    CUPTI_ERROR_NOT_READY,
    CUPTI_ERROR_NOT_SUPPORTED,
    CUPTI_ERROR_OUT_OF_MEMORY,
    CUPTI_ERROR_QUEUE_EMPTY,
    CUPTI_ERROR_UNKNOWN,
    // Runtime API callbacks: allocations, copies, launches, syncs.
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemGetInfo_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
    CUPTI_SUCCESS,
    cudaErrorMemoryAllocation,
    cudaSuccess,
};

// The next three are `((uint32_t) 0xFFFFFFFFU)` macros in `cupti_activity.h`;
// bindgen skips macros with casts.

/// `streamId` (and other ids) of a synchronization record that has none,
/// e.g. a context synchronization.
pub const CUPTI_SYNCHRONIZATION_INVALID_VALUE: u32 = u32::MAX;
/// A context id that names no context.
pub const CUPTI_INVALID_CONTEXT_ID: u32 = u32::MAX;
/// A stream id that names no stream.
pub const CUPTI_INVALID_STREAM_ID: u32 = u32::MAX;

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    /// `pub const NAME: TYPE = VALUE;` items of a generated file.
    fn consts(src: &str) -> HashMap<&str, &str> {
        let mut out = HashMap::new();
        let mut rest = src;
        while let Some(i) = rest.find("pub const ") {
            rest = &rest[i + "pub const ".len()..];
            let Some(colon) = rest.find(':') else { break };
            let name = &rest[..colon];
            let Some(eq) = rest.find('=') else { break };
            let Some(semi) = rest[eq..].find(';') else {
                break;
            };
            out.insert(name, rest[eq + 1..eq + semi].trim());
        }
        out
    }

    #[test]
    fn shared_constants_have_the_same_value_in_12_and_13() {
        let a = consts(include_str!("v12.rs"));
        let b = consts(include_str!("v13.rs"));
        assert!(a.len() > 1000 && b.len() > 1000, "parser found too little");
        // Counts and sizes grow by design; everything else must match.
        let grows =
            |n: &str| n.ends_with("_SIZE") || n.ends_with("_COUNT") || n == "CUPTI_API_VERSION";
        let differ: Vec<_> = a
            .iter()
            .filter(|(n, v)| !grows(n) && b.get(*n).is_some_and(|w| w != *v))
            .collect();
        assert!(differ.is_empty(), "{differ:?}");
        // The parser must see real values, or the check above proves nothing.
        assert_eq!(a["CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"], "10");
        assert_eq!(b["CUPTI_API_VERSION"], "130500");
    }

    #[test]
    fn values_the_shim_relies_on() {
        use super::*;
        assert_eq!(CUPTI_ACTIVITY_KIND_MEMCPY, 1);
        assert_eq!(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 10);
        assert_eq!(CUPTI_ACTIVITY_KIND_MEMORY2, 49);
        assert_eq!(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 20);
        assert_eq!(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 211);
        assert_eq!(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, 1);
        assert_eq!(CUPTI_ERROR_NOT_INITIALIZED, 15);
        assert_eq!(CUPTI_ERROR_UNKNOWN, 999);
        assert_eq!(cudaErrorMemoryAllocation, 2);
        assert_eq!(CUDA_ERROR_OUT_OF_MEMORY, 2);
        assert_eq!(CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 2);
    }
}
