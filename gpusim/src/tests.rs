//! Behaviour tests through the exported C API, with a consumer written the
//! way the shim's is: extern "C" buffer callbacks, records walked with
//! cuptiActivityGetNextRecord and read by offset from the cupti-sys registry.
//! gpusim's state is process-wide, so the tests take turns.

use std::ffi::{CStr, c_void};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use cupti_sys::consts::*;
use cupti_sys::read::Record;
use cupti_sys::v12::{CUcontext, CUpti_Activity, CUpti_CallbackData, CUpti_SubscriberHandle};

use crate::clock::{mono_now, own_now};
use crate::cuda::*;
use crate::cupti::*;
use crate::records::record_size;
use crate::state::{ApiVersion, reset, system_tid};

static TURN: Mutex<()> = Mutex::new(());
static RECORDS: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
static BUFFER_SIZE: AtomicUsize = AtomicUsize::new(64 << 10);
static REFUSE_BUFFERS: AtomicBool = AtomicBool::new(false);
static BUFFERS_COMPLETED: AtomicUsize = AtomicUsize::new(0);

extern "C" fn request(buffer: *mut *mut u8, size: *mut usize, max_records: *mut usize) {
    let n = BUFFER_SIZE.load(Ordering::Relaxed);
    let mem = if REFUSE_BUFFERS.load(Ordering::Relaxed) {
        null_mut()
    } else {
        Box::into_raw(vec![0u64; n / 8].into_boxed_slice()).cast::<u8>()
    };
    // SAFETY: valid out-pointers from gpusim.
    unsafe {
        *buffer = mem;
        *size = if mem.is_null() { 0 } else { n };
        *max_records = 0;
    }
}

extern "C" fn complete(_ctx: CUcontext, _stream: u32, buffer: *mut u8, size: usize, valid: usize) {
    let mut version = 0;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { cuptiGetVersion(&mut version) }, CUPTI_SUCCESS);
    let layouts = cupti_sys::layouts(version).expect("tests use known versions");
    let mut rec: *mut CUpti_Activity = null_mut();
    let mut out = RECORDS.lock().unwrap();
    loop {
        // SAFETY: a buffer gpusim just filled.
        match unsafe { cuptiActivityGetNextRecord(buffer, valid, &mut rec) } {
            CUPTI_SUCCESS => {
                // SAFETY: the record starts with its kind.
                let kind = unsafe { rec.cast::<u32>().read() };
                let n = record_size(kind, &layouts).expect("known kind");
                // SAFETY: the record lies within the valid bytes.
                out.push(unsafe { std::slice::from_raw_parts(rec.cast::<u8>(), n) }.to_vec());
            }
            CUPTI_ERROR_MAX_LIMIT_REACHED => break,
            e => panic!("cuptiActivityGetNextRecord: {e}"),
        }
    }
    BUFFERS_COMPLETED.fetch_add(1, Ordering::Relaxed);
    // SAFETY: allocated by `request` with this size.
    drop(unsafe {
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            buffer.cast::<u64>(),
            size / 8,
        ))
    });
}

/// Takes the test's turn on a fresh device reporting `version`, with the
/// buffer callbacks registered and `kinds` enabled.
fn session(version: u32, kinds: &[u32]) -> MutexGuard<'static, ()> {
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    reset(ApiVersion::Number(version));
    RECORDS.lock().unwrap().clear();
    CALLBACKS.lock().unwrap().clear();
    BUFFER_SIZE.store(64 << 10, Ordering::Relaxed);
    REFUSE_BUFFERS.store(false, Ordering::Relaxed);
    // SAFETY: plain calls with valid callbacks.
    unsafe {
        assert_eq!(
            cuptiActivityRegisterCallbacks(Some(request), Some(complete)),
            CUPTI_SUCCESS
        );
        for &k in kinds {
            assert_eq!(cuptiActivityEnable(k), CUPTI_SUCCESS);
        }
    }
    turn
}

/// Flushes and returns the records of `kind` collected so far.
fn records(kind: u32) -> Vec<Vec<u8>> {
    // SAFETY: no pointers.
    assert_eq!(
        unsafe { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) },
        CUPTI_SUCCESS
    );
    RECORDS
        .lock()
        .unwrap()
        .iter()
        .filter(|r| Record::new(r).kind() == Some(kind))
        .cloned()
        .collect()
}

fn layouts() -> cupti_sys::Layouts {
    let mut v = 0;
    // SAFETY: valid out-pointer.
    unsafe { cuptiGetVersion(&mut v) };
    cupti_sys::layouts(v).unwrap()
}

#[derive(Debug, Clone, Copy)]
struct Span {
    start: u64,
    end: u64,
    stream: u32,
    corr: u32,
}

fn kernels() -> Vec<(String, Span)> {
    let k = layouts().kernel;
    records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        .iter()
        .map(|b| {
            let r = Record::new(b);
            // SAFETY: gpusim keeps kernel names alive forever.
            let name = unsafe { CStr::from_ptr(r.ptr(k.name).unwrap()) };
            let span = Span {
                start: r.u64(k.start).unwrap(),
                end: r.u64(k.end).unwrap(),
                stream: r.u32(k.stream_id).unwrap(),
                corr: r.u32(k.correlation_id).unwrap(),
            };
            (name.to_str().unwrap().to_owned(), span)
        })
        .collect()
}

/// RUNTIME records as (cbid, span with tid in `stream`, return value).
fn api_records() -> Vec<(u32, Span, u32)> {
    let a = layouts().api;
    records(CUPTI_ACTIVITY_KIND_RUNTIME)
        .iter()
        .map(|b| {
            let r = Record::new(b);
            let span = Span {
                start: r.u64(a.start).unwrap(),
                end: r.u64(a.end).unwrap(),
                stream: r.u32(a.thread_id).unwrap(),
                corr: r.u32(a.correlation_id).unwrap(),
            };
            (r.u32(a.cbid).unwrap(), span, r.u32(a.return_value).unwrap())
        })
        .collect()
}

fn stream() -> *mut c_void {
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { cudaStreamCreate(&mut s) }, 0);
    s
}

fn launch(name: &CStr, ns: u64, s: *mut c_void) {
    // SAFETY: a C string and a gpusim stream.
    assert_eq!(unsafe { gpusim_launch(name.as_ptr(), ns, s) }, 0);
}

fn assert_no_overlap_per_stream(spans: &[Span]) {
    let mut by_stream = std::collections::HashMap::<u32, Vec<Span>>::new();
    for s in spans {
        by_stream.entry(s.stream).or_default().push(*s);
    }
    for (id, mut v) in by_stream {
        v.sort_by_key(|s| s.start);
        for w in v.windows(2) {
            assert!(w[0].end <= w[1].start, "overlap on stream {id}: {w:?}");
        }
    }
}

#[test]
fn streams_run_in_order_and_records_correlate() {
    for version in [28, 130_001, 130_500] {
        let _t = session(
            version,
            &[
                CUPTI_ACTIVITY_KIND_RUNTIME,
                CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                CUPTI_ACTIVITY_KIND_MEMCPY,
                CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
            ],
        );
        let (s1, s2) = (stream(), stream());
        let host = 0u64;
        for i in 0..40 {
            launch(c"k_a", 100_000, s1);
            launch(c"k_b", 50_000, s2);
            if i % 10 == 0 {
                // SAFETY: pageable host memory; nothing is dereferenced.
                let rc = unsafe { cudaMemcpyAsync(null_mut(), (&raw const host).cast(), 8, 1, s1) };
                assert_eq!(rc, 0);
            }
        }
        // SAFETY: gpusim streams.
        unsafe {
            assert_eq!(cudaStreamSynchronize(s1), 0);
            assert_eq!(cudaDeviceSynchronize(), 0);
        }

        let ks = kernels();
        assert_eq!(ks.len(), 80, "version {version}");
        assert_eq!(ks.iter().filter(|(n, _)| n == "k_a").count(), 40);
        let spans: Vec<Span> = ks.iter().map(|(_, s)| *s).collect();
        assert_no_overlap_per_stream(&spans);
        let streams: std::collections::HashSet<u32> = spans.iter().map(|s| s.stream).collect();
        assert_eq!(streams.len(), 2);
        for (name, s) in &ks {
            let want = if name == "k_a" { 100_000 } else { 50_000 };
            assert_eq!(s.end - s.start, want);
        }

        let apis = api_records();
        let by_corr: std::collections::HashMap<u32, (u32, Span)> = apis
            .iter()
            .map(|(cbid, s, _)| (s.corr, (*cbid, *s)))
            .collect();
        assert_eq!(by_corr.len(), apis.len(), "correlation ids are unique");
        for (_, k) in &ks {
            let (cbid, api) = by_corr[&k.corr];
            assert_eq!(cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
            assert!(
                k.start >= api.start,
                "kernel before its launch: {k:?} {api:?}"
            );
        }
        let m = layouts().memcpy;
        let copies = records(CUPTI_ACTIVITY_KIND_MEMCPY);
        assert_eq!(copies.len(), 4);
        let mut all = spans.clone();
        for b in &copies {
            let r = Record::new(b);
            let corr = r.u32(m.correlation_id).unwrap();
            assert_eq!(
                by_corr[&corr].0,
                CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020
            );
            assert_eq!(
                r.u8(m.copy_kind),
                Some(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD as u8)
            );
            assert_eq!(
                r.u8(m.src_kind),
                Some(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE as u8)
            );
            assert_eq!(
                r.u8(m.dst_kind),
                Some(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE as u8)
            );
            all.push(Span {
                start: r.u64(m.start).unwrap(),
                end: r.u64(m.end).unwrap(),
                stream: r.u32(m.stream_id).unwrap(),
                corr,
            });
        }
        assert_no_overlap_per_stream(&all);
        let y = layouts().sync;
        let syncs = records(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
        let types: Vec<u32> = syncs
            .iter()
            .map(|b| {
                let r = Record::new(b);
                let corr = r.u32(y.correlation_id).unwrap();
                assert!(by_corr.contains_key(&corr));
                r.u32(y.sync_type).unwrap()
            })
            .collect();
        assert_eq!(
            types,
            [
                CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
                CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE
            ]
        );
    }
}

#[test]
fn allocation_past_capacity_fails_with_2() {
    let _t = session(
        28,
        &[CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_MEMORY2],
    );
    // SAFETY: valid pointers throughout.
    unsafe {
        assert_eq!(gpusim_configure(c"tiny".as_ptr(), 1 << 20), 0);
        let mut a = null_mut();
        assert_eq!(cudaMalloc(&mut a, 600 << 10), 0);
        assert!(!a.is_null());
        let mut b = null_mut();
        assert_eq!(cudaMalloc(&mut b, 600 << 10), 2);
        assert!(b.is_null());
        let (mut free, mut total) = (0, 0);
        assert_eq!(cudaMemGetInfo(&mut free, &mut total), 0);
        assert_eq!((free, total), ((1 << 20) - (600 << 10), 1 << 20));
        assert_eq!(cudaFree(a), 0);
        assert_eq!(cudaFree(a), 1, "double free");
        assert_eq!(cudaMalloc(&mut b, 600 << 10), 0);
    }
    let apis = api_records();
    let failed: Vec<_> = apis.iter().filter(|(_, _, ret)| *ret == 2).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].0, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
    let m = layouts().memory;
    let ops: Vec<(u32, u64)> = records(CUPTI_ACTIVITY_KIND_MEMORY2)
        .iter()
        .map(|b| {
            let r = Record::new(b);
            (r.u32(m.operation_type).unwrap(), r.u64(m.bytes).unwrap())
        })
        .collect();
    assert_eq!(
        ops,
        [
            (CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 600 << 10),
            (CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 600 << 10),
            (CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 600 << 10),
        ]
    );
}

static TS_OFFSET: u64 = 1_000_000_000_000_000;

extern "C" fn consumer_clock() -> u64 {
    mono_now() + TS_OFFSET
}

#[test]
fn timestamp_callback_is_honoured_and_own_clock_is_not_monotonic() {
    let _t = session(
        28,
        &[
            CUPTI_ACTIVITY_KIND_RUNTIME,
            CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
        ],
    );
    let (own_before, mono_before) = (own_now(), mono_now());
    launch(c"own", 10_000, null_mut());
    let (own_after, mono_after) = (own_now(), mono_now());
    // SAFETY: no pointers.
    unsafe { cudaDeviceSynchronize() };
    let apis = api_records();
    let (_, own_span, _) = apis[0];
    assert!(own_before <= own_span.start && own_span.end <= own_after);
    assert!(own_span.start > mono_after || own_span.end < mono_before);

    RECORDS.lock().unwrap().clear();
    // SAFETY: a valid clock function.
    assert_eq!(
        unsafe { cuptiActivityRegisterTimestampCallback(Some(consumer_clock)) },
        CUPTI_SUCCESS
    );
    let before = consumer_clock();
    launch(c"theirs", 10_000, null_mut());
    // SAFETY: no pointers.
    unsafe { cudaDeviceSynchronize() };
    let after = consumer_clock();
    let ks = kernels();
    assert_eq!(ks.len(), 1);
    let (name, k) = &ks[0];
    assert_eq!(name, "theirs");
    let (_, api, _) = api_records()[0];
    // gpusim keeps its own clock and converts to the consumer's through an
    // offset read once; reading two clocks is not atomic, so allow a little.
    let slack = 2_000;
    for t in [k.start, k.end, api.start, api.end] {
        assert!(
            (before - slack..=after + slack).contains(&t),
            "{before} <= {t} <= {after}"
        );
    }
    assert!(k.start >= api.start);
    let mut ts = 0;
    // SAFETY: valid out-pointer.
    unsafe { cuptiGetTimestamp(&mut ts) };
    assert!(ts < TS_OFFSET, "cuptiGetTimestamp keeps gpusim's own clock");
    // SAFETY: unregisters.
    unsafe { cuptiActivityRegisterTimestampCallback(None) };
}

#[test]
fn flush_delivers_everything_across_buffers() {
    let _t = session(
        130_001,
        &[
            CUPTI_ACTIVITY_KIND_RUNTIME,
            CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
        ],
    );
    BUFFER_SIZE.store(4096, Ordering::Relaxed);
    BUFFERS_COMPLETED.store(0, Ordering::Relaxed);
    let s = stream();
    for _ in 0..500 {
        launch(c"tiny", 0, s);
    }
    // SAFETY: a gpusim stream.
    unsafe { cudaStreamSynchronize(s) };
    assert_eq!(kernels().len(), 500);
    // cudaStreamCreate + 500 launches + the sync.
    assert_eq!(api_records().len(), 502);
    let per_buffer = 4096 / layouts().kernel.size;
    assert!(BUFFERS_COMPLETED.load(Ordering::Relaxed) >= 500 / per_buffer);
    let mut dropped = 1;
    // SAFETY: valid out-pointer.
    unsafe { cuptiActivityGetNumDroppedRecords(null_mut(), 0, &mut dropped) };
    assert_eq!(dropped, 0);
}

#[test]
fn refused_buffers_count_as_dropped_and_the_count_resets() {
    let _t = session(28, &[CUPTI_ACTIVITY_KIND_RUNTIME]);
    REFUSE_BUFFERS.store(true, Ordering::Relaxed);
    for _ in 0..10 {
        launch(c"lost", 0, null_mut());
    }
    assert!(records(CUPTI_ACTIVITY_KIND_RUNTIME).is_empty());
    let mut dropped = 0;
    // SAFETY: valid out-pointers.
    unsafe {
        cuptiActivityGetNumDroppedRecords(null_mut(), 0, &mut dropped);
        assert_eq!(dropped, 10);
        cuptiActivityGetNumDroppedRecords(null_mut(), 0, &mut dropped);
    }
    assert_eq!(dropped, 0);
}

#[test]
fn records_wait_until_their_work_is_done() {
    let _t = session(28, &[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]);
    launch(c"slow", 300_000_000, null_mut());
    assert!(kernels().is_empty(), "a running kernel has no record yet");
    // SAFETY: no pointers.
    unsafe { cudaDeviceSynchronize() };
    assert_eq!(kernels().len(), 1);
}

#[test]
fn copies_and_frees_block_like_the_real_thing() {
    let _t = session(28, &[CUPTI_ACTIVITY_KIND_MEMCPY]);
    let mb = 1 << 20;
    let s = stream();
    // SAFETY: valid pointers; device pointers are never dereferenced.
    unsafe {
        let mut dev = null_mut();
        assert_eq!(cudaMalloc(&mut dev, 64 * mb), 0);
        let mut pinned = null_mut();
        assert_eq!(cudaMallocHost(&mut pinned, 64 * mb), 0);
        let pageable = [0u8; 64];

        // 60 MB pageable at 6 GB/s: about 10 ms, and the caller waits.
        let t = mono_now();
        assert_eq!(
            cudaMemcpyAsync(dev, pageable.as_ptr().cast(), 60 * mb, 1, s),
            0
        );
        assert!(mono_now() - t >= 10_000_000);

        // 1000 MB pinned at 25 GB/s: about 40 ms, and the caller does not wait.
        let t = mono_now();
        assert_eq!(cudaMemcpyAsync(dev, pinned, 1000 * mb, 1, s), 0);
        let queued = mono_now() - t;
        assert!(queued < 30_000_000, "{queued}");
        assert_eq!(cudaStreamSynchronize(s), 0);
        assert!(mono_now() - t >= 40_000_000);

        // D2H with cudaMemcpy into pinned memory still waits.
        let t = mono_now();
        assert_eq!(cudaMemcpy(pinned, dev, 25 * mb, 2), 0);
        assert!(mono_now() - t >= 1_000_000);

        assert_eq!(cudaMemcpyAsync(dev, dev, 8, 7, s), 21, "bad direction");

        // cudaFree waits for the device to go idle.
        launch(c"long", 20_000_000, s);
        let t = mono_now();
        assert_eq!(cudaFree(dev), 0);
        assert!(mono_now() - t >= 19_000_000);
        assert_eq!(cudaFreeHost(pinned), 0);
    }
    let m = layouts().memcpy;
    let kinds: Vec<(u8, u8, u8)> = records(CUPTI_ACTIVITY_KIND_MEMCPY)
        .iter()
        .map(|b| {
            let r = Record::new(b);
            (
                r.u8(m.copy_kind).unwrap(),
                r.u8(m.src_kind).unwrap(),
                r.u8(m.dst_kind).unwrap(),
            )
        })
        .collect();
    let (pg, pn, dv) = (
        CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE as u8,
        CUPTI_ACTIVITY_MEMORY_KIND_PINNED as u8,
        CUPTI_ACTIVITY_MEMORY_KIND_DEVICE as u8,
    );
    let (htod, dtoh) = (
        CUPTI_ACTIVITY_MEMCPY_KIND_HTOD as u8,
        CUPTI_ACTIVITY_MEMCPY_KIND_DTOH as u8,
    );
    assert_eq!(kinds, [(htod, pg, dv), (htod, pn, dv), (dtoh, dv, pn)]);
}

#[derive(Debug, Clone, PartialEq)]
struct CallbackEvent {
    domain: u32,
    cbid: u32,
    site: u32,
    name: String,
    corr: u32,
    corr_data: u64,
    /// cudaMalloc's requested size, from its params.
    size: usize,
    ret: i32,
}

static CALLBACKS: Mutex<Vec<CallbackEvent>> = Mutex::new(Vec::new());

extern "C" fn on_callback(_ud: *mut c_void, domain: u32, cbid: u32, data: *const c_void) {
    let mut ev = CallbackEvent {
        domain,
        cbid,
        site: 0,
        name: String::new(),
        corr: 0,
        corr_data: 0,
        size: 0,
        ret: -1,
    };
    if domain == CUPTI_CB_DOMAIN_RUNTIME_API {
        // SAFETY: runtime API callbacks get CUpti_CallbackData.
        let d = unsafe { &*data.cast::<CUpti_CallbackData>() };
        assert!(d.symbolName.is_null());
        ev.site = d.callbackSite;
        // SAFETY: a C string from gpusim.
        ev.name = unsafe { CStr::from_ptr(d.functionName) }
            .to_str()
            .unwrap()
            .to_owned();
        ev.corr = d.correlationId;
        // SAFETY: per-call scratch shared by enter and exit.
        unsafe {
            if d.callbackSite == CUPTI_API_ENTER {
                *d.correlationData = u64::from(d.correlationId) * 3;
            }
            ev.corr_data = *d.correlationData;
        }
        if cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020 {
            // SAFETY: cudaMalloc's params.
            ev.size = unsafe {
                (*d.functionParams
                    .cast::<cupti_sys::v12::cudaMalloc_v3020_params>())
                .size
            };
        }
        // SAFETY: the call's cudaError_t.
        ev.ret = unsafe { *d.functionReturnValue.cast::<i32>() };
    }
    CALLBACKS.lock().unwrap().push(ev);
}

#[test]
fn runtime_and_resource_callbacks() {
    let _t = session(28, &[CUPTI_ACTIVITY_KIND_RUNTIME]);
    let mut sub: CUpti_SubscriberHandle = null_mut();
    // SAFETY: valid pointers and callback.
    unsafe {
        assert_eq!(
            cuptiSubscribe(&mut sub, Some(on_callback), null_mut()),
            CUPTI_SUCCESS
        );
        let mut other: CUpti_SubscriberHandle = null_mut();
        assert_eq!(
            cuptiSubscribe(&mut other, Some(on_callback), null_mut()),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
        );
        assert_eq!(
            cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RESOURCE),
            CUPTI_SUCCESS
        );
        assert_eq!(
            cuptiEnableCallback(
                1,
                sub,
                CUPTI_CB_DOMAIN_RUNTIME_API,
                CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020
            ),
            CUPTI_SUCCESS
        );
        gpusim_configure(std::ptr::null(), 1 << 30);
        let mut p = null_mut();
        assert_eq!(cudaMalloc(&mut p, 4 << 30), 2);
        assert_eq!(cudaMalloc(&mut p, 4096), 0);
        let mut free = 0;
        let mut total = 0;
        cudaMemGetInfo(&mut free, &mut total);
        assert_eq!(cuptiUnsubscribe(sub), CUPTI_SUCCESS);
        cudaMalloc(&mut p, 4096);
    }
    let evs = CALLBACKS.lock().unwrap().clone();
    let names: Vec<(u32, u32, u32)> = evs.iter().map(|e| (e.domain, e.cbid, e.site)).collect();
    let malloc = CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020;
    let rt = CUPTI_CB_DOMAIN_RUNTIME_API;
    assert_eq!(
        names,
        [
            (
                CUPTI_CB_DOMAIN_RESOURCE,
                CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
                0
            ),
            (rt, malloc, CUPTI_API_ENTER),
            (rt, malloc, CUPTI_API_EXIT),
            (rt, malloc, CUPTI_API_ENTER),
            (rt, malloc, CUPTI_API_EXIT),
        ],
        "memGetInfo not enabled; nothing after unsubscribe"
    );
    let failed = &evs[2];
    assert_eq!(
        (failed.name.as_str(), failed.size, failed.ret),
        ("cudaMalloc", 4 << 30, 2)
    );
    assert_eq!(failed.corr, evs[1].corr);
    assert_eq!(failed.corr_data, u64::from(failed.corr) * 3);
    assert_eq!(evs[4].ret, 0);
    let apis = api_records();
    assert_eq!(
        apis[0].1.corr, failed.corr,
        "the RUNTIME record has the callback's id"
    );
}

#[test]
fn nvtx_markers_device_record_and_thread_ids() {
    let _t = session(
        130_500,
        &[
            CUPTI_ACTIVITY_KIND_MARKER,
            CUPTI_ACTIVITY_KIND_DEVICE,
            CUPTI_ACTIVITY_KIND_RUNTIME,
        ],
    );
    // SAFETY: C strings and no pointers.
    unsafe {
        gpusim_configure(c"NVIDIA H200 (gpusim)".as_ptr(), 141 << 30);
        assert_eq!(gpusim_nvtx_push(c"ProfilerStep#1".as_ptr()), 0);
        assert_eq!(gpusim_nvtx_push(c"forward".as_ptr()), 1);
        assert_eq!(gpusim_nvtx_pop(), 1);
        assert_eq!(gpusim_nvtx_pop(), 0);
        assert_eq!(gpusim_nvtx_pop(), -1);
    }
    let mk = layouts().marker;
    let marks: Vec<(u32, u32, Option<String>, u32)> = records(CUPTI_ACTIVITY_KIND_MARKER)
        .iter()
        .map(|b| {
            let r = Record::new(b);
            let p = r.ptr(mk.name).unwrap();
            // SAFETY: interned names live forever.
            let name =
                (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned());
            (
                r.u32(mk.flags).unwrap(),
                r.u32(mk.id).unwrap(),
                name,
                r.u32(mk.object_id + 4).unwrap(),
            )
        })
        .collect();
    let (s, e) = (
        CUPTI_ACTIVITY_FLAG_MARKER_START,
        CUPTI_ACTIVITY_FLAG_MARKER_END,
    );
    let pthread = unsafe { libc::pthread_self() } as u32;
    assert_eq!(
        marks,
        [
            (s, 1, Some("ProfilerStep#1".into()), pthread),
            (s, 2, Some("forward".into()), pthread),
            (e, 2, None, pthread),
            (e, 1, None, pthread),
        ],
        "DEFAULT thread ids are pthread_self, not the tid"
    );

    assert!(
        records(CUPTI_ACTIVITY_KIND_DEVICE).is_empty(),
        "no device before the first call"
    );
    // SAFETY: valid pointers.
    unsafe {
        assert_eq!(
            cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM),
            CUPTI_SUCCESS
        );
        let mut free = 0;
        let mut total = 0;
        cudaMemGetInfo(&mut free, &mut total);
        assert_eq!(total, 141 << 30);
    }
    let d = layouts().device;
    let devs = records(CUPTI_ACTIVITY_KIND_DEVICE);
    assert_eq!(devs.len(), 1);
    let r = Record::new(&devs[0]);
    // SAFETY: interned name.
    let name = unsafe { CStr::from_ptr(r.ptr(d.name).unwrap()) };
    assert_eq!(name, c"NVIDIA H200 (gpusim)");
    assert_eq!(r.u64(d.global_memory_size), Some(141 << 30));
    assert_eq!(r.u32(d.num_multiprocessors), Some(132));
    assert_eq!(r.u32(d.compute_capability_major), Some(9));
    let (_, api, _) = api_records()[0];
    assert_eq!(api.stream, system_tid(), "SYSTEM thread ids are the tid");
}

#[test]
fn many_threads_many_streams() {
    let _t = session(
        28,
        &[
            CUPTI_ACTIVITY_KIND_RUNTIME,
            CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
        ],
    );
    // SAFETY: no pointers.
    unsafe { cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) };
    let handles: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                let s = stream() as usize;
                for _ in 0..50 {
                    launch(c"worker", 20_000, s as *mut c_void);
                }
                // SAFETY: a gpusim stream.
                unsafe { cudaStreamSynchronize(s as *mut c_void) };
                system_tid()
            })
        })
        .collect();
    let tids: std::collections::HashSet<u32> =
        handles.into_iter().map(|h| h.join().unwrap()).collect();
    let ks = kernels();
    assert_eq!(ks.len(), 200);
    assert_no_overlap_per_stream(&ks.iter().map(|(_, s)| *s).collect::<Vec<_>>());
    let api_tids: std::collections::HashSet<u32> =
        api_records().iter().map(|(_, s, _)| s.stream).collect();
    assert_eq!(api_tids, tids);
}

#[test]
fn failing_and_unknown_versions() {
    let _t = session(28, &[]);
    reset(ApiVersion::Fail);
    let mut v = 0;
    // SAFETY: valid pointers.
    unsafe {
        assert_eq!(cuptiGetVersion(&mut v), CUPTI_ERROR_UNKNOWN);
        assert_eq!(
            cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME),
            CUPTI_ERROR_UNKNOWN
        );
        let mut p = null_mut();
        assert_eq!(cudaMalloc(&mut p, 16), 0, "CUDA itself still works");
    }
    reset(ApiVersion::Number(25));
    // SAFETY: valid pointers.
    unsafe {
        assert_eq!(cuptiGetVersion(&mut v), CUPTI_SUCCESS);
        assert_eq!(v, 25, "reported as is, for the consumer to refuse");
        assert_eq!(cuptiActivityEnable(0), CUPTI_ERROR_INVALID_KIND);
        let mut s: *const std::ffi::c_char = std::ptr::null();
        assert_eq!(
            cuptiGetResultString(CUPTI_ERROR_NOT_INITIALIZED, &mut s),
            CUPTI_SUCCESS
        );
        assert_eq!(CStr::from_ptr(s), c"CUPTI_ERROR_NOT_INITIALIZED");
        let mut size = 8usize;
        let mut value = 8u64 << 20;
        assert_eq!(
            cuptiActivitySetAttribute(
                CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE,
                &mut size,
                (&raw mut value).cast()
            ),
            CUPTI_SUCCESS
        );
    }
    assert_eq!(
        crate::stored_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE),
        Some((8u64 << 20).to_ne_bytes().to_vec())
    );
}

/// Per-function API records: switched on before the context exists, only
/// those functions are recorded; switched on after, with the kind off,
/// nothing is; before 12.5 the switch does not exist.
#[test]
fn per_function_api_records() {
    let _t = session(28, &[]);
    let malloc = CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020;
    let stream_create = CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020;
    // SAFETY: plain ids and flags.
    assert_eq!(
        unsafe { cuptiActivityEnableRuntimeApi(malloc, 1) },
        CUPTI_SUCCESS
    );
    let mut p = null_mut();
    // SAFETY: valid out-pointers.
    unsafe { assert_eq!(cudaMalloc(&mut p, 16), 0) };
    stream();
    let cbids: Vec<u32> = api_records().iter().map(|r| r.0).collect();
    assert_eq!(cbids, [malloc]);
    // The context exists now: accepted, and inert.
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            cuptiActivityEnableRuntimeApi(stream_create, 1),
            CUPTI_SUCCESS
        );
        assert_eq!(cudaMalloc(&mut p, 16), 0);
    }
    stream();
    let cbids: Vec<u32> = api_records().iter().map(|r| r.0).collect();
    assert_eq!(cbids, [malloc, malloc]);
    drop(_t);
    let _t = session(22, &[]);
    // SAFETY: as above.
    assert_eq!(
        unsafe { cuptiActivityEnableRuntimeApi(malloc, 1) },
        CUPTI_ERROR_NOT_SUPPORTED
    );
}
