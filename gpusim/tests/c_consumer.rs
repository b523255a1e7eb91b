//! libgpusim.so seen from outside, the way the shim sees libcupti: loaded
//! with dlopen, every function resolved with dlsym, records read by offset
//! from the cupti-sys registry. A `CUDA_INJECTION64_PATH` library (built here
//! from C) subscribes from `InitializeInjection`, as the shim's does.
//!
//! One test per process: gpusim reads its environment once, at first use.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::ptr::null_mut;
use std::sync::{Mutex, OnceLock};

use cupti_sys::consts::*;
use cupti_sys::read::Record;
use cupti_sys::v13 as cu;

const VERSION: u32 = 130_500;

/// libgpusim.so from the same build as this test binary (target/*/deps).
fn gpusim_path() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps.join("libgpusim.so"), deps.join("../libgpusim.so")]
        .into_iter()
        .find(|p| p.exists())
        .expect("cargo builds libgpusim.so beside the test binaries")
}

fn build_injection_library(dir: &Path) -> PathBuf {
    let src = dir.join("inject.c");
    std::fs::write(
        &src,
        r#"
#include <dlfcn.h>
#include <stdint.h>
typedef void (*cb_t)(void *, uint32_t, uint32_t, const void *);
typedef int (*subscribe_t)(void **, cb_t, void *);
typedef int (*enable_domain_t)(uint32_t, void *, uint32_t);
int injected, contexts_created, runtime_callbacks, subscribe_rc = -1;
static void on_callback(void *ud, uint32_t domain, uint32_t cbid, const void *data) {
    (void)ud; (void)data;
    if (domain == DOMAIN_RESOURCE && cbid == CBID_CONTEXT_CREATED) contexts_created++;
    if (domain == DOMAIN_RUNTIME) runtime_callbacks++;
}
int InitializeInjection(void) {
    injected++;
    subscribe_t subscribe = (subscribe_t)dlsym(RTLD_DEFAULT, "cuptiSubscribe");
    enable_domain_t enable = (enable_domain_t)dlsym(RTLD_DEFAULT, "cuptiEnableDomain");
    if (!subscribe || !enable) return 0;
    void *handle = 0;
    subscribe_rc = subscribe(&handle, on_callback, 0);
    enable(1, handle, DOMAIN_RESOURCE);
    enable(1, handle, DOMAIN_RUNTIME);
    return 1;
}
"#,
    )
    .unwrap();
    let out = dir.join("libinject.so");
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(&src)
        .arg(format!("-DDOMAIN_RESOURCE={CUPTI_CB_DOMAIN_RESOURCE}"))
        .arg(format!("-DDOMAIN_RUNTIME={CUPTI_CB_DOMAIN_RUNTIME_API}"))
        .arg(format!(
            "-DCBID_CONTEXT_CREATED={CUPTI_CBID_RESOURCE_CONTEXT_CREATED}"
        ))
        .arg("-ldl")
        .status()
        .expect("a C compiler (cc) is needed to build the injection library");
    assert!(status.success());
    out
}

struct Lib(*mut c_void);

impl Lib {
    fn open(path: &Path, flags: c_int) -> Self {
        let c = CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        let h = unsafe { libc::dlopen(c.as_ptr(), flags) };
        assert!(!h.is_null(), "dlopen {}", path.display());
        Lib(h)
    }

    /// # Safety
    /// `T` must be the symbol's true type.
    unsafe fn sym<T: Copy>(&self, name: &CStr) -> T {
        // SAFETY: a valid handle and name.
        let p = unsafe { libc::dlsym(self.0, name.as_ptr()) };
        assert!(!p.is_null(), "missing {name:?}");
        assert_eq!(size_of::<T>(), size_of::<*mut c_void>());
        // SAFETY: the caller names the right type.
        unsafe { std::mem::transmute_copy(&p) }
    }

    fn int(&self, name: &CStr) -> c_int {
        // SAFETY: an `int` global of the injection library.
        unsafe { *self.sym::<*const c_int>(name) }
    }
}

struct Cupti {
    next_record: cu::PFN_cuptiActivityGetNextRecord,
}

static CUPTI: OnceLock<Cupti> = OnceLock::new();
static RECORDS: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

extern "C" fn request(buffer: *mut *mut u8, size: *mut usize, max_records: *mut usize) {
    const N: usize = 32 << 10;
    let mem = Box::into_raw(vec![0u64; N / 8].into_boxed_slice()).cast::<u8>();
    // SAFETY: valid out-pointers from gpusim.
    unsafe {
        *buffer = mem;
        *size = N;
        *max_records = 0;
    }
}

extern "C" fn complete(_c: cu::CUcontext, _s: u32, buffer: *mut u8, size: usize, valid: usize) {
    let layouts = cupti_sys::layouts(VERSION).unwrap();
    let next = CUPTI.get().unwrap().next_record;
    let mut rec: *mut cu::CUpti_Activity = null_mut();
    // SAFETY: a buffer just filled by gpusim.
    while unsafe { next(buffer, valid, &mut rec) } == CUPTI_SUCCESS {
        // SAFETY: the record starts with its kind.
        let kind = unsafe { rec.cast::<u32>().read() };
        let n = match kind {
            CUPTI_ACTIVITY_KIND_RUNTIME => layouts.api.size,
            CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL => layouts.kernel.size,
            CUPTI_ACTIVITY_KIND_MEMCPY => layouts.memcpy.size,
            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION => layouts.sync.size,
            CUPTI_ACTIVITY_KIND_MEMORY2 => layouts.memory.size,
            other => panic!("unexpected kind {other}"),
        };
        // SAFETY: within the valid bytes.
        RECORDS
            .lock()
            .unwrap()
            .push(unsafe { std::slice::from_raw_parts(rec.cast::<u8>(), n) }.to_vec());
    }
    // SAFETY: allocated by `request` with this size.
    drop(unsafe {
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            buffer.cast::<u64>(),
            size / 8,
        ))
    });
}

#[test]
fn shim_style_consumer_with_injection() {
    let dir = std::env::temp_dir().join(format!("gpusim-c-consumer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let injection = build_injection_library(&dir);
    // SAFETY: set before anything reads the environment; this test is alone
    // in its process.
    unsafe {
        std::env::set_var("GPUSIM_CUPTI_VERSION", VERSION.to_string());
        std::env::set_var("CUDA_INJECTION64_PATH", &injection);
    }
    // RTLD_GLOBAL, as the injection library finds CUPTI with RTLD_DEFAULT.
    let gpusim = Lib::open(&gpusim_path(), libc::RTLD_NOW | libc::RTLD_GLOBAL);

    // SAFETY: every symbol is resolved with its generated C signature.
    unsafe {
        let get_version: cu::PFN_cuptiGetVersion = gpusim.sym(c"cuptiGetVersion");
        let enable: cu::PFN_cuptiActivityEnable = gpusim.sym(c"cuptiActivityEnable");
        let register: cu::PFN_cuptiActivityRegisterCallbacks =
            gpusim.sym(c"cuptiActivityRegisterCallbacks");
        let flush: cu::PFN_cuptiActivityFlushAll = gpusim.sym(c"cuptiActivityFlushAll");
        let thread_ids: cu::PFN_cuptiSetThreadIdType = gpusim.sym(c"cuptiSetThreadIdType");
        let stream_id: cu::PFN_cuptiGetStreamId = gpusim.sym(c"cuptiGetStreamId");
        CUPTI.get_or_init(|| Cupti {
            next_record: gpusim.sym(c"cuptiActivityGetNextRecord"),
        });
        type Malloc = unsafe extern "C" fn(*mut *mut c_void, usize) -> c_int;
        type StreamCreate = unsafe extern "C" fn(*mut *mut c_void) -> c_int;
        type Launch = unsafe extern "C" fn(*const c_char, u64, *mut c_void) -> c_int;
        type Copy =
            unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int, *mut c_void) -> c_int;
        type Sync = unsafe extern "C" fn(*mut c_void) -> c_int;
        let malloc: Malloc = gpusim.sym(c"cudaMalloc");
        let malloc_host: Malloc = gpusim.sym(c"cudaMallocHost");
        let stream_create: StreamCreate = gpusim.sym(c"cudaStreamCreate");
        let launch: Launch = gpusim.sym(c"gpusim_launch");
        let copy: Copy = gpusim.sym(c"cudaMemcpyAsync");
        let stream_sync: Sync = gpusim.sym(c"cudaStreamSynchronize");

        let mut v = 0;
        assert_eq!(get_version(&mut v), CUPTI_SUCCESS);
        assert_eq!(v, VERSION);
        assert_eq!(
            thread_ids(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM),
            CUPTI_SUCCESS
        );
        assert_eq!(register(Some(request), Some(complete)), CUPTI_SUCCESS);
        for k in [
            CUPTI_ACTIVITY_KIND_RUNTIME,
            CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
            CUPTI_ACTIVITY_KIND_MEMCPY,
            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
            CUPTI_ACTIVITY_KIND_MEMORY2,
        ] {
            assert_eq!(enable(k), CUPTI_SUCCESS);
        }

        let path = CString::new(injection.to_str().unwrap()).unwrap();
        let loaded = || !libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD).is_null();
        assert!(!loaded(), "not loaded before the first CUDA call");

        let mut dev = null_mut();
        assert_eq!(malloc(&mut dev, 1 << 20), 0);
        assert!(loaded(), "loaded by the first CUDA call");
        let inject = Lib::open(&injection, libc::RTLD_NOW | libc::RTLD_NOLOAD);
        let mut host = null_mut();
        assert_eq!(malloc_host(&mut host, 1 << 20), 0);
        let (mut s1, mut s2) = (null_mut(), null_mut());
        assert_eq!(stream_create(&mut s1), 0);
        assert_eq!(stream_create(&mut s2), 0);
        for _ in 0..20 {
            assert_eq!(launch(c"fwd".as_ptr(), 30_000, s1), 0);
            assert_eq!(launch(c"bwd".as_ptr(), 30_000, s2), 0);
            assert_eq!(copy(dev, host, 1 << 20, 1, s1), 0);
        }
        assert_eq!(stream_sync(s1), 0);
        assert_eq!(stream_sync(s2), 0);
        let mut id = 0;
        assert_eq!(stream_id(null_mut(), s2.cast(), &mut id), CUPTI_SUCCESS);
        assert_eq!(flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);

        assert_eq!(inject.int(c"injected"), 1, "InitializeInjection runs once");
        assert_eq!(inject.int(c"subscribe_rc"), CUPTI_SUCCESS as c_int);
        assert_eq!(inject.int(c"contexts_created"), 1);
        // Enter and exit of: 2 mallocs, 2 stream creates, 60 calls, 2 syncs.
        assert_eq!(inject.int(c"runtime_callbacks"), 2 * 66);

        let l = cupti_sys::layouts(VERSION).unwrap();
        let recs = RECORDS.lock().unwrap().clone();
        let of = |kind| {
            recs.iter()
                .filter(move |r| Record::new(r).kind() == Some(kind))
        };
        let apis: std::collections::HashMap<u32, (u64, u32)> = of(CUPTI_ACTIVITY_KIND_RUNTIME)
            .map(|b| {
                let r = Record::new(b);
                (
                    r.u32(l.api.correlation_id).unwrap(),
                    (r.u64(l.api.start).unwrap(), r.u32(l.api.thread_id).unwrap()),
                )
            })
            .collect();
        assert_eq!(apis.len(), 66);
        assert!(apis.values().all(|&(_, tid)| tid == libc::gettid() as u32));
        let mut on_s2 = 0;
        for b in of(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            let r = Record::new(b);
            let name = CStr::from_ptr(r.ptr(l.kernel.name).unwrap());
            assert!(name == c"fwd" || name == c"bwd");
            let (api_start, _) = apis[&r.u32(l.kernel.correlation_id).unwrap()];
            assert!(r.u64(l.kernel.start).unwrap() >= api_start);
            on_s2 += usize::from(r.u32(l.kernel.stream_id) == Some(id));
        }
        assert_eq!(of(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).count(), 40);
        assert_eq!(on_s2, 20);
        for b in of(CUPTI_ACTIVITY_KIND_MEMCPY) {
            let r = Record::new(b);
            assert_eq!(
                r.u8(l.memcpy.src_kind),
                Some(CUPTI_ACTIVITY_MEMORY_KIND_PINNED as u8)
            );
            assert!(apis.contains_key(&r.u32(l.memcpy.correlation_id).unwrap()));
        }
        assert_eq!(of(CUPTI_ACTIVITY_KIND_MEMCPY).count(), 20);
        assert_eq!(of(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION).count(), 2);
        assert_eq!(of(CUPTI_ACTIVITY_KIND_MEMORY2).count(), 2);
    }
    std::fs::remove_dir_all(&dir).ok();
}
