//! The exported CUDA-runtime subset and gpusim's own calls. Each CUDA call
//! runs the subscriber's runtime-API callbacks at enter and exit (with the
//! real `*_params` struct), produces one RUNTIME record, and gives any device
//! work it queues the same correlation id.

use std::cell::RefCell;
use std::ffi::{CStr, c_char, c_int, c_uint, c_ulonglong, c_void};

use cupti_sys::consts::*;
use cupti_sys::v12::{self, cudaStream_t, dim3};

use crate::activity;
use crate::callbacks::{self, ApiCall};
use crate::clock::{mono_now, spin_for, wait_until};
use crate::device::{DEVICE_BW, PAGEABLE_BW, PINNED_BW, transfer_ns};
use crate::init;
use crate::records::Rec;
use crate::state::{State, intern, next_correlation_id, pid, state};

/// Host time a kernel launch costs the caller.
pub const LAUNCH_COST_NS: u64 = 4_000;
/// Host cost of a device allocation: the driver reserves and maps memory.
pub const MALLOC_COST_NS: u64 = 10_000;
/// Host cost of a device free, after the implicit wait for idle: unmapping
/// and returning memory takes real CUDA tens of microseconds.
pub const FREE_COST_NS: u64 = 40_000;

const SUCCESS: c_int = v12::cudaSuccess as c_int;
const INVALID_VALUE: c_int = v12::cudaErrorInvalidValue as c_int;
const MEMORY_ALLOCATION: c_int = v12::cudaErrorMemoryAllocation as c_int;
const INVALID_DIRECTION: c_int = v12::cudaErrorInvalidMemcpyDirection as c_int;
const INVALID_HANDLE: c_int = v12::cudaErrorInvalidResourceHandle as c_int;

/// The stream index behind a handle: NULL, `cudaStreamLegacy` (1) and
/// `cudaStreamPerThread` (2) all mean the legacy default stream here.
pub fn stream_index(st: &State, handle: *mut c_void) -> Option<usize> {
    match handle as usize {
        0..=2 => Some(0),
        h => st.streams.get(&h).copied(),
    }
}

/// Runs one CUDA API call: callbacks around `body`, then its RUNTIME record.
fn api_call<P>(
    cbid: u32,
    name: &'static CStr,
    params: &P,
    body: impl FnOnce(u32) -> c_int,
) -> c_int {
    init::ensure();
    let corr = next_correlation_id();
    let start = mono_now();
    let mut correlation_data = 0u64;
    let mut call = ApiCall {
        cbid,
        name,
        params: (params as *const P).cast(),
        correlation_id: corr,
        correlation_data: &mut correlation_data,
    };
    let mut ret: c_int = SUCCESS;
    callbacks::runtime_api(CUPTI_API_ENTER, &mut call, &mut ret);
    ret = body(corr);
    callbacks::runtime_api(CUPTI_API_EXIT, &mut call, &mut ret);
    let end = mono_now();
    let mut st = state();
    let tid = st.thread_id();
    st.push(
        end,
        Rec::Api {
            kind: CUPTI_ACTIVITY_KIND_RUNTIME,
            cbid,
            start,
            end,
            pid: pid(),
            tid,
            corr,
            ret: ret as u32,
        },
    );
    activity::nudge(st.pending.len());
    ret
}

/// Sets the simulated device's name and memory size (0 keeps the current
/// size, NULL the current name). Returns 0.
///
/// # Safety
/// `device_name` must be null or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gpusim_configure(
    device_name: *const c_char,
    memory_bytes: c_ulonglong,
) -> c_int {
    let mut st = state();
    if !device_name.is_null() {
        // SAFETY: a C string per the caller.
        let name = unsafe { CStr::from_ptr(device_name) };
        st.device.name = name.to_string_lossy().into_owned();
        st.device_name = intern(name.to_bytes());
    }
    if memory_bytes > 0 {
        st.device.capacity = memory_bytes;
    }
    SUCCESS
}

/// # Safety
/// `ptr` must be null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMalloc(ptr: *mut *mut c_void, bytes: usize) -> c_int {
    let params = v12::cudaMalloc_v3020_params {
        devPtr: ptr,
        size: bytes,
    };
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
        c"cudaMalloc",
        &params,
        |corr| {
            if ptr.is_null() {
                return INVALID_VALUE;
            }
            if bytes == 0 {
                // SAFETY: non-null, valid per the caller.
                unsafe { *ptr = std::ptr::null_mut() };
                return SUCCESS;
            }
            spin_for(MALLOC_COST_NS);
            let mut st = state();
            let Some(addr) = st.device.alloc(bytes as u64) else {
                // SAFETY: as above.
                unsafe { *ptr = std::ptr::null_mut() };
                return MEMORY_ALLOCATION;
            };
            // SAFETY: as above.
            unsafe { *ptr = addr as *mut c_void };
            let now = mono_now();
            st.push(
                now,
                Rec::Memory {
                    operation: CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                    memory_kind: CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                    corr,
                    address: addr,
                    bytes: bytes as u64,
                    at: now,
                    pid: pid(),
                    stream_id: CUPTI_INVALID_STREAM_ID,
                },
            );
            SUCCESS
        },
    )
}

/// Waits for every stream to drain, as the real cudaFree does, then frees.
///
/// # Safety
/// No pointer is dereferenced (device pointers are fake).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaFree(ptr: *mut c_void) -> c_int {
    let params = v12::cudaFree_v3020_params { devPtr: ptr };
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
        c"cudaFree",
        &params,
        |corr| {
            if ptr.is_null() {
                return SUCCESS;
            }
            let idle_at = state().device.device_busy_until();
            wait_until(idle_at);
            spin_for(FREE_COST_NS);
            let mut st = state();
            let Some(bytes) = st.device.free(ptr as u64) else {
                return INVALID_VALUE;
            };
            let now = mono_now();
            st.push(
                now,
                Rec::Memory {
                    operation: CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE,
                    memory_kind: CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                    corr,
                    address: ptr as u64,
                    bytes,
                    at: now,
                    pid: pid(),
                    stream_id: CUPTI_INVALID_STREAM_ID,
                },
            );
            SUCCESS
        },
    )
}

/// Real host memory (malloc), tracked as pinned.
///
/// # Safety
/// `ptr` must be null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMallocHost(ptr: *mut *mut c_void, bytes: usize) -> c_int {
    let params = v12::cudaMallocHost_v3020_params { ptr, size: bytes };
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020,
        c"cudaMallocHost",
        &params,
        |corr| {
            if ptr.is_null() {
                return INVALID_VALUE;
            }
            // SAFETY: plain malloc; freed by cudaFreeHost.
            let mem = unsafe { libc::malloc(bytes.max(1)) };
            if mem.is_null() {
                return MEMORY_ALLOCATION;
            }
            // SAFETY: non-null, valid per the caller.
            unsafe { *ptr = mem };
            let mut st = state();
            st.device.add_pinned(mem as usize, bytes);
            let now = mono_now();
            st.push(
                now,
                Rec::Memory {
                    operation: CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                    memory_kind: CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                    corr,
                    address: mem as u64,
                    bytes: bytes as u64,
                    at: now,
                    pid: pid(),
                    stream_id: CUPTI_INVALID_STREAM_ID,
                },
            );
            SUCCESS
        },
    )
}

/// Synchronizes with the device first, as the real cudaFreeHost does.
///
/// # Safety
/// `ptr` must be null or come from `cudaMallocHost`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaFreeHost(ptr: *mut c_void) -> c_int {
    let params = v12::cudaFreeHost_v3020_params { ptr };
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020,
        c"cudaFreeHost",
        &params,
        |corr| {
            if ptr.is_null() {
                return SUCCESS;
            }
            let idle_at = state().device.device_busy_until();
            wait_until(idle_at);
            spin_for(FREE_COST_NS);
            let mut st = state();
            let Some(bytes) = st.device.remove_pinned(ptr as usize) else {
                return INVALID_VALUE;
            };
            // SAFETY: allocated by cudaMallocHost with malloc.
            unsafe { libc::free(ptr) };
            let now = mono_now();
            st.push(
                now,
                Rec::Memory {
                    operation: CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE,
                    memory_kind: CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                    corr,
                    address: ptr as u64,
                    bytes: bytes as u64,
                    at: now,
                    pid: pid(),
                    stream_id: CUPTI_INVALID_STREAM_ID,
                },
            );
            SUCCESS
        },
    )
}

/// # Safety
/// `stream` must be null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamCreate(stream: *mut *mut c_void) -> c_int {
    let params = v12::cudaStreamCreate_v3020_params {
        pStream: stream.cast(),
    };
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020,
        c"cudaStreamCreate",
        &params,
        |_| {
            if stream.is_null() {
                return INVALID_VALUE;
            }
            let handle = {
                let mut st = state();
                let idx = st.device.create_stream();
                // A real, never-freed address, so the handle is unique and safe
                // to read for anyone who tries.
                let handle = Box::into_raw(Box::new(idx)) as usize;
                st.streams.insert(handle, idx);
                handle as *mut c_void
            };
            // SAFETY: non-null, valid per the caller.
            unsafe { *stream = handle };
            init::announce_stream(handle.cast());
            SUCCESS
        },
    )
}

struct Copy {
    copy_kind: u8,
    src_kind: u8,
    dst_kind: u8,
    duration: u64,
    /// Pageable host memory: the caller waits for the copy to finish.
    pageable: bool,
}

fn plan_copy(
    st: &State,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: c_int,
) -> Option<Copy> {
    let host_kind = |p: usize| {
        if st.device.is_pinned(p) {
            CUPTI_ACTIVITY_MEMORY_KIND_PINNED
        } else {
            CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE
        }
    };
    let device = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE as u8;
    let (copy_kind, src_kind, dst_kind) = match kind as u32 {
        v12::cudaMemcpyHostToDevice => (
            CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
            host_kind(src as usize) as u8,
            device,
        ),
        v12::cudaMemcpyDeviceToHost => (
            CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
            device,
            host_kind(dst as usize) as u8,
        ),
        v12::cudaMemcpyDeviceToDevice => (CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, device, device),
        _ => return None,
    };
    let pageable = src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE as u8
        || dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE as u8;
    let pinned = src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED as u8
        || dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED as u8;
    let bw = if pageable {
        PAGEABLE_BW
    } else if pinned {
        PINNED_BW
    } else {
        DEVICE_BW
    };
    Some(Copy {
        copy_kind: copy_kind as u8,
        src_kind,
        dst_kind,
        duration: transfer_ns(bytes as u64, bw),
        pageable,
    })
}

/// Queues a copy; returns when the caller may go on. No bytes move.
fn do_copy(
    corr: u32,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: c_int,
    stream: *mut c_void,
    is_async: bool,
) -> c_int {
    let (end, wait) = {
        let mut st = state();
        let Some(copy) = plan_copy(&st, dst, src, bytes, kind) else {
            return INVALID_DIRECTION;
        };
        let Some(idx) = stream_index(&st, stream) else {
            return INVALID_HANDLE;
        };
        let stream_id = st.device.stream(idx).expect("known index").id;
        let (start, end) = st.device.schedule(idx, mono_now(), copy.duration);
        st.push(
            end,
            Rec::Memcpy {
                copy_kind: copy.copy_kind,
                src_kind: copy.src_kind,
                dst_kind: copy.dst_kind,
                is_async,
                bytes: bytes as u64,
                start,
                end,
                stream_id,
                corr,
            },
        );
        // cudaMemcpy returns once a host-side copy is done; pageable memory
        // makes even cudaMemcpyAsync wait (CUDA runtime API docs, "API
        // synchronization behavior").
        let host_side = copy.copy_kind != CUPTI_ACTIVITY_MEMCPY_KIND_DTOD as u8;
        (end, copy.pageable || (!is_async && host_side))
    };
    if wait {
        wait_until(end);
    }
    SUCCESS
}

/// Kinds: 1 host to device, 2 device to host, 3 device to device.
///
/// # Safety
/// No pointer is dereferenced (no bytes move).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: c_int,
    stream: *mut c_void,
) -> c_int {
    let params = v12::cudaMemcpyAsync_v3020_params {
        dst,
        src,
        count: bytes,
        kind: kind as c_uint,
        stream: stream.cast(),
    };
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
        c"cudaMemcpyAsync",
        &params,
        |corr| do_copy(corr, dst, src, bytes, kind, stream, true),
    )
}

/// On the default stream; waits for host-side copies to finish.
///
/// # Safety
/// No pointer is dereferenced (no bytes move).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: c_int,
) -> c_int {
    let params = v12::cudaMemcpy_v3020_params {
        dst,
        src,
        count: bytes,
        kind: kind as c_uint,
    };
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
        c"cudaMemcpy",
        &params,
        |corr| do_copy(corr, dst, src, bytes, kind, std::ptr::null_mut(), false),
    )
}

fn do_memset(corr: u32, value: c_int, bytes: usize, stream: *mut c_void, is_async: bool) -> c_int {
    let mut st = state();
    let Some(idx) = stream_index(&st, stream) else {
        return INVALID_HANDLE;
    };
    let stream_id = st.device.stream(idx).expect("known index").id;
    let duration = transfer_ns(bytes as u64, DEVICE_BW);
    let (start, end) = st.device.schedule(idx, mono_now(), duration);
    st.push(
        end,
        Rec::Memset {
            value: value as u32,
            bytes: bytes as u64,
            is_async,
            start,
            end,
            stream_id,
            corr,
        },
    );
    SUCCESS
}

/// Device memset on the default stream; does not wait.
///
/// # Safety
/// No pointer is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMemset(ptr: *mut c_void, value: c_int, bytes: usize) -> c_int {
    let params = v12::cudaMemset_v3020_params {
        devPtr: ptr,
        value,
        count: bytes,
    };
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,
        c"cudaMemset",
        &params,
        |corr| do_memset(corr, value, bytes, std::ptr::null_mut(), false),
    )
}

/// # Safety
/// No pointer is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMemsetAsync(
    ptr: *mut c_void,
    value: c_int,
    bytes: usize,
    stream: *mut c_void,
) -> c_int {
    let params = v12::cudaMemsetAsync_v3020_params {
        devPtr: ptr,
        value,
        count: bytes,
        stream: stream.cast(),
    };
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
        c"cudaMemsetAsync",
        &params,
        |corr| do_memset(corr, value, bytes, stream, true),
    )
}

/// # Safety
/// No pointer is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamSynchronize(stream: *mut c_void) -> c_int {
    let params = v12::cudaStreamSynchronize_v3020_params {
        stream: stream.cast(),
    };
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
        c"cudaStreamSynchronize",
        &params,
        |corr| {
            let start = mono_now();
            let (until, stream_id) = {
                let st = state();
                let Some(idx) = stream_index(&st, stream) else {
                    return INVALID_HANDLE;
                };
                let s = st.device.stream(idx).expect("known index");
                (s.busy_until, s.id)
            };
            wait_until(until);
            let end = mono_now();
            state().push(
                end,
                Rec::Sync {
                    sync_type: CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
                    start,
                    end,
                    stream_id,
                    corr,
                },
            );
            SUCCESS
        },
    )
}

/// # Safety
/// No preconditions.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaDeviceSynchronize() -> c_int {
    // The call has no parameters; its params pointer is to an empty struct.
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
        c"cudaDeviceSynchronize",
        &(),
        |corr| {
            let start = mono_now();
            let until = state().device.device_busy_until();
            wait_until(until);
            let end = mono_now();
            state().push(
                end,
                Rec::Sync {
                    sync_type: CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE,
                    start,
                    end,
                    stream_id: CUPTI_SYNCHRONIZATION_INVALID_VALUE,
                    corr,
                },
            );
            SUCCESS
        },
    )
}

/// # Safety
/// `free` and `total` must be null or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMemGetInfo(free: *mut usize, total: *mut usize) -> c_int {
    let params = v12::cudaMemGetInfo_v3020_params { free, total };
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaMemGetInfo_v3020,
        c"cudaMemGetInfo",
        &params,
        |_| {
            if free.is_null() || total.is_null() {
                return INVALID_VALUE;
            }
            let (f, t) = state().device.mem_info();
            // SAFETY: non-null, valid per the caller.
            unsafe {
                *free = f as usize;
                *total = t as usize;
            }
            SUCCESS
        },
    )
}

/// A kernel that occupies `stream` for `duration_ns` of real time. Appears
/// to CUPTI as cudaLaunchKernel.
///
/// # Safety
/// `kernel_name` must be a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gpusim_launch(
    kernel_name: *const c_char,
    duration_ns: c_ulonglong,
    stream: *mut c_void,
) -> c_int {
    let params = v12::cudaLaunchKernel_v7000_params {
        func: kernel_name.cast(),
        gridDim: dim3 { x: 1, y: 1, z: 1 },
        blockDim: dim3 { x: 128, y: 1, z: 1 },
        args: std::ptr::null_mut(),
        sharedMem: 0,
        stream: stream as cudaStream_t,
    };
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
        c"cudaLaunchKernel",
        &params,
        |corr| {
            if kernel_name.is_null() {
                return INVALID_VALUE;
            }
            // SAFETY: a C string per the caller.
            let name = intern(unsafe { CStr::from_ptr(kernel_name) }.to_bytes());
            spin_for(LAUNCH_COST_NS);
            // Lazy module loading: the first launch of a kernel loads its
            // module inside the launch call (the state is not held, as the
            // driver would not block other threads).
            let load = {
                let mut st = state();
                let first = st.loaded.insert(name.as_ptr() as usize);
                if first { st.module_load_ns } else { 0 }
            };
            if load > 0 {
                std::thread::sleep(std::time::Duration::from_nanos(load));
            }
            let mut st = state();
            let Some(idx) = stream_index(&st, stream) else {
                return INVALID_HANDLE;
            };
            let stream_id = st.device.stream(idx).expect("known index").id;
            let (start, end) = st.device.schedule(idx, mono_now(), duration_ns);
            let grid_id = st.next_grid_id;
            st.next_grid_id += 1;
            if let Some(kind) = st.kernel_kind() {
                st.push(
                    end,
                    Rec::Kernel {
                        kind,
                        name,
                        start,
                        end,
                        stream_id,
                        corr,
                        grid_id,
                    },
                );
            }
            SUCCESS
        },
    )
}

/// cudaStreamWaitEvent's parameters (not in the checked-in bindings).
#[repr(C)]
struct StreamWaitEventParams {
    stream: *mut c_void,
    event: *mut c_void,
    flags: c_uint,
}

/// `stream` waits for an event of a peer (another device or rank) that
/// completes `delay_ns` after the work queued on `stream` so far: a
/// cudaStreamWaitEvent (the CUPTI API record, and its SYNCHRONIZATION
/// record of type STREAM_WAIT_EVENT) whose event no stream of this device
/// records. The stream's next work starts when the event completes.
///
/// # Safety
/// No pointer is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gpusim_stream_wait_peer(
    stream: *mut c_void,
    delay_ns: c_ulonglong,
) -> c_int {
    let params = StreamWaitEventParams {
        stream,
        event: std::ptr::null_mut(),
        flags: 0,
    };
    api_call(
        CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
        c"cudaStreamWaitEvent",
        &params,
        |corr| {
            let start = mono_now();
            let mut st = state();
            let Some(idx) = stream_index(&st, stream) else {
                return INVALID_HANDLE;
            };
            let s = st.device.stream(idx).expect("known index");
            let (ready, stream_id) = (s.busy_until.max(start) + delay_ns, s.id);
            st.device.hold(idx, ready);
            let end = mono_now();
            st.push(
                end,
                Rec::Sync {
                    sync_type: CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT,
                    start,
                    end,
                    stream_id,
                    corr,
                },
            );
            SUCCESS
        },
    )
}

/// Makes the first launch of each kernel name take `ns` more (lazy module
/// loading), from now on. Returns 0.
#[unsafe(no_mangle)]
pub extern "C" fn gpusim_set_module_load(ns: c_ulonglong) -> c_int {
    state().module_load_ns = ns;
    SUCCESS
}

thread_local! {
    static NVTX_STACK: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Starts an NVTX range on this thread (a MARKER start record carrying the
/// name). Returns the new range's zero-based depth, like nvtxRangePushA.
///
/// # Safety
/// `name` must be null or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gpusim_nvtx_push(name: *const c_char) -> c_int {
    let name = if name.is_null() {
        None
    } else {
        // SAFETY: a C string per the caller.
        Some(intern(unsafe { CStr::from_ptr(name) }.to_bytes()))
    };
    let now = mono_now();
    let mut st = state();
    let id = st.next_marker_id;
    st.next_marker_id += 1;
    let tid = st.thread_id();
    st.push(
        now,
        Rec::Marker {
            flags: CUPTI_ACTIVITY_FLAG_MARKER_START,
            at: now,
            id,
            pid: pid(),
            tid,
            name,
        },
    );
    NVTX_STACK.with_borrow_mut(|s| {
        s.push(id);
        s.len() as c_int - 1
    })
}

/// Ends this thread's innermost NVTX range (a MARKER end record with the same
/// id). Returns the depth left, or -1 if no range was open.
#[unsafe(no_mangle)]
pub extern "C" fn gpusim_nvtx_pop() -> c_int {
    let Some((id, depth)) = NVTX_STACK.with_borrow_mut(|s| s.pop().map(|id| (id, s.len()))) else {
        return -1;
    };
    let now = mono_now();
    let mut st = state();
    let tid = st.thread_id();
    st.push(
        now,
        Rec::Marker {
            flags: CUPTI_ACTIVITY_FLAG_MARKER_END,
            at: now,
            id,
            pid: pid(),
            tid,
            name: None,
        },
    );
    depth as c_int
}
