//! gpusim's process-wide state, behind one mutex. Never held while sleeping
//! for simulated work or while calling into the consumer.

use std::cell::Cell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::{CStr, CString};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard};

use cupti_sys::consts::*;
use cupti_sys::v12::{
    CUpti_BuffersCallbackCompleteFunc, CUpti_BuffersCallbackRequestFunc, CUpti_CallbackFunc,
    CUpti_TimestampCallbackFunc,
};

use crate::device::Device;
use crate::records::Rec;

/// The version reported when `GPUSIM_CUPTI_VERSION` is unset: CUDA 12.9
/// update 1, what the nvidia-cuda-cupti-cu12 12.9.79 wheel reports.
pub const DEFAULT_API_VERSION: u32 = 28;
pub const DEFAULT_DEVICE_NAME: &str = "gpusim";
pub const DEFAULT_MEMORY_BYTES: u64 = 16 << 30;
/// Records held while no buffer is available; past this they are dropped.
pub const MAX_PENDING: usize = 1 << 20;

/// What `cuptiGetVersion` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiVersion {
    Number(u32),
    /// `GPUSIM_CUPTI_VERSION=fail`: the call fails with CUPTI_ERROR_UNKNOWN,
    /// as libcupti 13.x does on a machine without a driver.
    Fail,
}

impl ApiVersion {
    /// Parses `GPUSIM_CUPTI_VERSION`; unset or empty means the default.
    pub fn from_env(value: Option<&str>) -> Result<Self, String> {
        match value.map(str::trim) {
            None | Some("") => Ok(ApiVersion::Number(DEFAULT_API_VERSION)),
            Some("fail") => Ok(ApiVersion::Fail),
            Some(s) => s
                .parse()
                .map(ApiVersion::Number)
                .map_err(|_| format!("GPUSIM_CUPTI_VERSION={s:?} is not a number or \"fail\"")),
        }
    }
}

/// Which callbacks are on: per domain, a switch for the whole domain
/// (cuptiEnableDomain) and per-callback overrides (cuptiEnableCallback).
/// Indexed, not hashed: it is read twice per API call.
#[derive(Default)]
pub struct Switches {
    domains: Vec<DomainSwitches>,
}

#[derive(Default, Clone)]
struct DomainSwitches {
    all: bool,
    by_cbid: Vec<Option<bool>>,
}

/// Callback ids at or past this are refused (real ones stay below ~1000).
pub const MAX_CBID: u32 = 4096;

impl Switches {
    fn domain(&mut self, domain: u32) -> &mut DomainSwitches {
        let i = domain as usize;
        if self.domains.len() <= i {
            self.domains.resize(i + 1, DomainSwitches::default());
        }
        &mut self.domains[i]
    }

    pub fn set_domain(&mut self, domain: u32, on: bool) {
        let d = self.domain(domain);
        d.all = on;
        d.by_cbid.clear();
    }

    /// `cbid` must be below [`MAX_CBID`].
    pub fn set(&mut self, domain: u32, cbid: u32, on: bool) {
        let d = self.domain(domain);
        let i = cbid as usize;
        if d.by_cbid.len() <= i {
            d.by_cbid.resize(i + 1, None);
        }
        d.by_cbid[i] = Some(on);
    }

    pub fn get(&self, domain: u32, cbid: u32) -> bool {
        self.domains.get(domain as usize).is_some_and(|d| {
            d.by_cbid
                .get(cbid as usize)
                .copied()
                .flatten()
                .unwrap_or(d.all)
        })
    }
}

pub struct Subscriber {
    pub callback: CUpti_CallbackFunc,
    pub userdata: usize,
}

pub struct State {
    pub api_version: ApiVersion,
    /// Layouts records are written in: those of `api_version`, or of the
    /// default version when that one is unknown (a consumer must refuse it
    /// anyway, so what it would read does not matter).
    pub layouts: cupti_sys::Layouts,
    pub device: Device,
    pub device_name: &'static CStr,
    /// Stream handle (pointer value) to stream index; NULL maps to 0.
    pub streams: HashMap<usize, usize>,
    pub subscriber: Option<Subscriber>,
    pub switches: Switches,
    pub enabled_kinds: HashSet<u32>,
    /// API records enabled function by function (cuptiActivityEnableRuntimeApi
    /// and ...DriverApi): (RUNTIME or DRIVER kind, callback id).
    pub enabled_apis: HashSet<(u32, u32)>,
    /// `GPUSIM_API_SWITCHES=inert`: those calls succeed and record nothing,
    /// a library that breaks its promise.
    pub api_switches_inert: bool,
    pub request: CUpti_BuffersCallbackRequestFunc,
    pub complete: CUpti_BuffersCallbackCompleteFunc,
    pub timestamp: CUpti_TimestampCallbackFunc,
    pub attributes: HashMap<u32, Vec<u8>>,
    /// Records waiting for delivery, with the simulation time from which
    /// they may be delivered (work ends in the future when it is queued).
    pub pending: VecDeque<(u64, Rec)>,
    pub dropped: usize,
    pub thread_id_type: u32,
    /// The device exists (the first CUDA call happened).
    pub device_ready: bool,
    pub device_record_sent: bool,
    pub next_grid_id: i64,
    pub next_marker_id: u32,
    /// The first launch of each kernel name takes this long (lazy module
    /// loading; `gpusim_set_module_load`).
    pub module_load_ns: u64,
    /// Kernel names launched so far (by interned pointer).
    pub loaded: HashSet<usize>,
}

impl State {
    pub fn new(api_version: ApiVersion) -> Self {
        let layouts = match api_version {
            ApiVersion::Number(v) => cupti_sys::layouts(v),
            ApiVersion::Fail => None,
        }
        .or_else(|| cupti_sys::layouts(DEFAULT_API_VERSION))
        .expect("the default version is in the registry");
        State {
            api_version,
            layouts,
            device: Device::new(DEFAULT_DEVICE_NAME, DEFAULT_MEMORY_BYTES),
            device_name: intern(DEFAULT_DEVICE_NAME.as_bytes()),
            streams: HashMap::from([(0, 0)]),
            subscriber: None,
            switches: Switches::default(),
            enabled_kinds: HashSet::new(),
            enabled_apis: HashSet::new(),
            api_switches_inert: std::env::var("GPUSIM_API_SWITCHES").is_ok_and(|v| v == "inert"),
            request: None,
            complete: None,
            timestamp: None,
            attributes: HashMap::new(),
            pending: VecDeque::new(),
            dropped: 0,
            thread_id_type: CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT,
            device_ready: false,
            device_record_sent: false,
            next_grid_id: 1,
            next_marker_id: 1,
            module_load_ns: 0,
            loaded: HashSet::new(),
        }
    }

    pub fn kind_enabled(&self, kind: u32) -> bool {
        self.enabled_kinds.contains(&kind)
    }

    /// The kind a kernel record is filed under, if any.
    pub fn kernel_kind(&self) -> Option<u32> {
        [
            CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
            CUPTI_ACTIVITY_KIND_KERNEL,
        ]
        .into_iter()
        .find(|k| self.kind_enabled(*k))
    }

    pub fn callback_enabled(&self, domain: u32, cbid: u32) -> bool {
        self.subscriber.is_some() && self.switches.get(domain, cbid)
    }

    /// Queues a record if its kind is enabled; `ready_at` is when it may be
    /// delivered (simulation clock).
    pub fn push(&mut self, ready_at: u64, rec: Rec) {
        let wanted = match rec {
            Rec::Api { kind, cbid, .. } => {
                self.kind_enabled(kind) || self.enabled_apis.contains(&(kind, cbid))
            }
            _ => self.kind_enabled(rec.kind()),
        };
        if !wanted {
            return;
        }
        if self.pending.len() >= MAX_PENDING {
            self.dropped += 1;
        } else {
            self.pending.push_back((ready_at, rec));
        }
    }

    /// Queues the DEVICE record once the device exists and the kind is on.
    pub fn maybe_push_device_record(&mut self) {
        if self.device_ready
            && !self.device_record_sent
            && self.kind_enabled(CUPTI_ACTIVITY_KIND_DEVICE)
        {
            self.device_record_sent = true;
            let rec = Rec::Device {
                name: self.device_name,
                memory_bytes: self.device.capacity,
            };
            self.push(0, rec);
        }
    }

    /// The thread id records carry, per `cuptiSetThreadIdType`.
    pub fn thread_id(&self) -> u32 {
        if self.thread_id_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM {
            system_tid()
        } else {
            // DEFAULT is pthread_self(), as real CUPTI reports it: a consumer
            // that forgets to ask for SYSTEM ids sees values that match no tid.
            // SAFETY: no preconditions.
            unsafe { libc::pthread_self() as u32 }
        }
    }
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(|| {
    let env = std::env::var("GPUSIM_CUPTI_VERSION").ok();
    let v = ApiVersion::from_env(env.as_deref()).unwrap_or_else(|e| {
        eprintln!("gpusim: {e}; using {DEFAULT_API_VERSION}");
        ApiVersion::Number(DEFAULT_API_VERSION)
    });
    Mutex::new(State::new(v))
});

/// Locks the state. A panic while it was held leaves plain data behind, so a
/// poisoned lock is taken as is.
pub fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Replaces the state with a fresh one (tests only: a process normally keeps
/// one simulated device for its lifetime).
pub fn reset(api_version: ApiVersion) {
    let _paused = crate::activity::pause_delivery();
    *state() = State::new(api_version);
    SUBSCRIBED.store(false, Ordering::Relaxed);
    crate::init::forget_device();
}

/// Mirrors `State::subscriber.is_some()`, so calls skip the lock when nobody
/// listens.
pub static SUBSCRIBED: AtomicBool = AtomicBool::new(false);

static NEXT_CORRELATION: AtomicU32 = AtomicU32::new(1);

pub fn next_correlation_id() -> u32 {
    NEXT_CORRELATION.fetch_add(1, Ordering::Relaxed)
}

/// Names handed out in records stay valid for the life of the process, as
/// real CUPTI's do; the table is never freed.
pub fn intern(name: &[u8]) -> &'static CStr {
    static NAMES: LazyLock<Mutex<HashMap<Vec<u8>, &'static CStr>>> =
        LazyLock::new(Default::default);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = names.get(name) {
        return s;
    }
    let owned = CString::new(
        name.iter()
            .copied()
            .filter(|&b| b != 0)
            .collect::<Vec<u8>>(),
    )
    .expect("NULs removed");
    let s: &'static CStr = Box::leak(owned.into_boxed_c_str());
    names.insert(name.to_vec(), s);
    s
}

pub fn system_tid() -> u32 {
    thread_local! {
        static TID: Cell<u32> = const { Cell::new(0) };
    }
    TID.with(|t| {
        if t.get() == 0 {
            // SAFETY: gettid has no preconditions.
            t.set(unsafe { libc::gettid() } as u32);
        }
        t.get()
    })
}

/// The process id, cached: getpid is a real system call, and every record
/// carries it. A fork clears the cache in the child.
pub fn pid() -> u32 {
    static PID: AtomicU32 = AtomicU32::new(0);
    static AT_FORK: std::sync::Once = std::sync::Once::new();
    extern "C" fn forget() {
        PID.store(0, Ordering::Relaxed);
    }
    AT_FORK.call_once(|| {
        // SAFETY: registers a handler that only touches an atomic.
        unsafe { libc::pthread_atfork(None, None, Some(forget)) };
    });
    match PID.load(Ordering::Relaxed) {
        0 => {
            let p = std::process::id();
            PID.store(p, Ordering::Relaxed);
            p
        }
        p => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_from_env() {
        assert_eq!(ApiVersion::from_env(None), Ok(ApiVersion::Number(28)));
        assert_eq!(ApiVersion::from_env(Some("")), Ok(ApiVersion::Number(28)));
        assert_eq!(
            ApiVersion::from_env(Some(" 130001 ")),
            Ok(ApiVersion::Number(130_001))
        );
        assert_eq!(ApiVersion::from_env(Some("fail")), Ok(ApiVersion::Fail));
        assert!(ApiVersion::from_env(Some("12.9")).is_err());
    }

    #[test]
    fn unknown_versions_still_write_the_default_layout() {
        let s = State::new(ApiVersion::Number(25));
        assert_eq!(s.layouts.api_version, DEFAULT_API_VERSION);
        let s = State::new(ApiVersion::Number(130_401));
        assert_eq!(s.layouts.versions.kernel, 13);
    }

    #[test]
    fn pid_is_cached_and_forgotten_in_a_forked_child() {
        assert_eq!(pid(), std::process::id());
        // SAFETY: the child only calls async-signal-safe functions and pid(),
        // whose cache is already set up, then exits.
        let child = unsafe { libc::fork() };
        if child == 0 {
            let ok = pid() == std::process::id() && pid() != 0;
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for our own child.
        unsafe { libc::waitpid(child, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }

    #[test]
    fn interned_names_are_stable() {
        let a = intern(b"kernel_a");
        let b = intern(b"kernel_a");
        assert_eq!(a.as_ptr(), b.as_ptr());
        assert_eq!(a.to_bytes(), b"kernel_a");
        assert_eq!(intern(b"x\0y").to_bytes(), b"xy");
    }

    #[test]
    fn callback_enabling_rules() {
        let mut s = State::new(ApiVersion::Number(28));
        assert!(!s.callback_enabled(2, 20), "no subscriber");
        s.subscriber = Some(Subscriber {
            callback: None,
            userdata: 0,
        });
        assert!(!s.callback_enabled(2, 20));
        s.switches.set_domain(2, true);
        assert!(s.callback_enabled(2, 20));
        s.switches.set(2, 20, false);
        assert!(!s.callback_enabled(2, 20));
        assert!(s.callback_enabled(2, 21));
        s.switches.set(3, 1, true);
        assert!(s.callback_enabled(3, 1) && !s.callback_enabled(3, 2));
        assert!(!s.callback_enabled(9, 1), "unknown domain");
        s.switches.set_domain(2, false);
        assert!(!s.callback_enabled(2, 21));
        s.switches.set_domain(2, true);
        assert!(
            s.callback_enabled(2, 20),
            "a domain switch clears overrides"
        );
    }

    #[test]
    fn push_respects_enabled_kinds_and_the_bound() {
        let mut s = State::new(ApiVersion::Number(28));
        let rec = Rec::Sync {
            sync_type: 0,
            start: 0,
            end: 0,
            stream_id: 0,
            corr: 0,
        };
        s.push(0, rec.clone());
        assert!(s.pending.is_empty());
        s.enabled_kinds.insert(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
        s.push(0, rec.clone());
        assert_eq!(s.pending.len(), 1);
        s.pending.resize(MAX_PENDING, (0, rec.clone()));
        s.push(0, rec);
        assert_eq!((s.pending.len(), s.dropped), (MAX_PENDING, 1));
    }
}
