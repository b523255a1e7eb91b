//! Strings from CUPTI records (kernel, device and NVTX names) interned into
//! the trace's string table, and the CUDA API functions the analysis keeps.
//!
//! Both live on the buffer-processing path, never on a CUDA API call.

use std::collections::HashMap;
use std::ffi::{CStr, c_char};

use cupti_sys::v12 as c;
use stallscope_format::records::{ApiName, api_domain};

use crate::recorder::Writer;

/// Content-keyed: CUPTI shares one name pointer per kernel, but a pointer
/// can be reused after a module unloads.
#[derive(Default)]
pub struct Interner {
    ids: HashMap<Box<[u8]>, u32>,
}

impl Interner {
    /// The string id of `text`, defining it on first use (0 if it could not
    /// be written, e.g. past the size cap; retried next time).
    pub fn id(&mut self, w: &mut Writer<'_>, text: &[u8]) -> u32 {
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        let id = w.string(text);
        if id != 0 {
            self.ids.insert(text.into(), id);
        }
        id
    }

    /// Same, from a C string that may be null (id 0).
    ///
    /// # Safety
    /// `p` must be null or a C string.
    pub unsafe fn id_of(&mut self, w: &mut Writer<'_>, p: *const c_char) -> u32 {
        if p.is_null() {
            return 0;
        }
        // SAFETY: upheld by the caller.
        let text = unsafe { CStr::from_ptr(p) }.to_bytes();
        self.id(w, text)
    }
}

/// A function name without CUPTI's runtime version suffix
/// (`cudaLaunchKernel_ptsz_v7000` → `cudaLaunchKernel_ptsz`); driver names keep
/// theirs, which are part of the symbol (`cuMemAlloc_v2`).
pub fn strip_version(name: &str) -> &str {
    if let Some(i) = name.rfind("_v") {
        let digits = &name[i + 2..];
        if digits.len() >= 4 && digits.bytes().all(|b| b.is_ascii_digit()) {
            return &name[..i];
        }
    }
    name
}

/// Whether the analysis uses calls to this function: launches, copies,
/// memsets, synchronizations, event records and stream waits, allocations
/// and frees. Everything else is counted and dropped.
pub fn kept(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "cudaLaunch",
        "cudaGraphLaunch",
        "cudaMemcpy",
        "cudaMemset",
        "cudaDeviceSynchronize",
        "cudaThreadSynchronize",
        "cudaStreamSynchronize",
        "cudaEventSynchronize",
        "cudaStreamWaitEvent",
        "cudaEventRecord",
        "cudaMalloc",
        "cudaFree",
        "cudaHostAlloc",
        "cudaMemPrefetchAsync",
        "cuLaunch",
        "cuGraphLaunch",
        "cuMemcpy",
        "cuMemset",
        "cuCtxSynchronize",
        "cuStreamSynchronize",
        "cuEventSynchronize",
        "cuStreamWaitEvent",
        "cuEventRecord",
        "cuMemAlloc",
        "cuMemFree",
        "cuMemHostAlloc",
        "cuMemCreate",
        "cuMemRelease",
        "cuMemPrefetchAsync",
    ];
    const NOT: &[&str] = &["Node", "Attribute", "Occupancy", "GetInfo", "Params"];
    PREFIXES.iter().any(|p| name.starts_with(p)) && !NOT.iter().any(|n| name.contains(n))
}

/// Names for libraries without `cuptiGetCallbackName` (gpusim): the
/// functions a CUDA program calls most, from the bindings' callback ids.
macro_rules! fallback_names {
    ($($id:ident),* $(,)?) => {
        &[$((c::$id, stringify!($id))),*]
    };
}

const RUNTIME_FALLBACK: &[(u32, &str)] = fallback_names![
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemGetInfo_v3020,
];

const DRIVER_FALLBACK: &[(u32, &str)] = fallback_names![
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemCreate,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent,
];

/// The callback ids of the built-in table.
pub fn fallback_cbids(domain: u8) -> impl Iterator<Item = u32> {
    let table = match domain {
        api_domain::RUNTIME => RUNTIME_FALLBACK,
        api_domain::DRIVER => DRIVER_FALLBACK,
        _ => &[],
    };
    table.iter().map(|(c, _)| *c)
}

/// The function name for a callback id from the built-in table.
pub fn fallback_name(domain: u8, cbid: u32) -> Option<&'static str> {
    let (table, prefix) = match domain {
        api_domain::RUNTIME => (RUNTIME_FALLBACK, "CUPTI_RUNTIME_TRACE_CBID_"),
        api_domain::DRIVER => (DRIVER_FALLBACK, "CUPTI_DRIVER_TRACE_CBID_"),
        _ => return None,
    };
    let (_, id) = table.iter().find(|(c, _)| *c == cbid)?;
    Some(strip_version(id.strip_prefix(prefix).unwrap_or(id)))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Unseen,
    Dropped,
    Kept,
}

/// Per (domain, callback id): keep or drop, decided on first sight; kept
/// ones get an [`ApiName`] record then.
#[derive(Default)]
pub struct ApiFilter {
    verdicts: [Vec<Verdict>; 2],
}

impl ApiFilter {
    /// Whether to keep an API record. `lookup` gives the function's name
    /// (from CUPTI, or the fallback table), asked once per function.
    pub fn keep(
        &mut self,
        w: &mut Writer<'_>,
        strings: &mut Interner,
        domain: u8,
        cbid: u32,
        lookup: impl FnOnce() -> Option<String>,
    ) -> bool {
        let slot = match domain {
            api_domain::RUNTIME => 0,
            api_domain::DRIVER => 1,
            _ => return false,
        };
        let table = &mut self.verdicts[slot];
        let i = cbid as usize;
        if i >= 1 << 16 {
            return false;
        }
        if table.len() <= i {
            table.resize(i + 1, Verdict::Unseen);
        }
        if table[i] == Verdict::Unseen {
            let name = lookup();
            let keep = name.as_deref().is_some_and(kept);
            if keep {
                let name = name.unwrap_or_default();
                let id = strings.id(w, strip_version(&name).as_bytes());
                let rec = ApiName {
                    domain,
                    cbid,
                    name: id,
                };
                w.meta(ApiName::LEN, &mut |b| rec.encode(b));
            }
            table[i] = if keep {
                Verdict::Kept
            } else {
                Verdict::Dropped
            };
        }
        table[i] == Verdict::Kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_suffixes() {
        assert_eq!(strip_version("cudaMalloc_v3020"), "cudaMalloc");
        assert_eq!(
            strip_version("cudaLaunchKernel_ptsz_v7000"),
            "cudaLaunchKernel_ptsz"
        );
        assert_eq!(strip_version("cudaMallocAsync_v11020"), "cudaMallocAsync");
        assert_eq!(strip_version("cuMemAlloc_v2"), "cuMemAlloc_v2");
        assert_eq!(strip_version("cuLaunchKernel"), "cuLaunchKernel");
    }

    #[test]
    fn the_analysis_functions_are_kept() {
        for n in [
            "cudaLaunchKernel",
            "cudaLaunchKernel_ptsz",
            "cudaGraphLaunch",
            "cudaMemcpyAsync",
            "cudaMemsetAsync",
            "cudaStreamSynchronize",
            "cudaDeviceSynchronize",
            "cudaEventSynchronize",
            "cudaEventRecord",
            "cudaStreamWaitEvent",
            "cudaMalloc",
            "cudaMallocAsync",
            "cudaMallocFromPoolAsync",
            "cudaFree",
            "cudaFreeHost",
            "cuLaunchKernelEx",
            "cuMemAlloc_v2",
            "cuMemCreate",
            "cuMemcpyHtoDAsync_v2",
            "cuCtxSynchronize",
        ] {
            assert!(kept(n), "{n}");
        }
        for n in [
            "cudaGetDevice",
            "cudaStreamCreate",
            "cudaMemGetInfo",
            "cudaFuncGetAttributes",
            "cudaGraphAddMemcpyNode",
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
            "cudaEventQuery",
            "cuCtxGetCurrent",
            "cuMemGetInfo_v2",
        ] {
            assert!(!kept(n), "{n}");
        }
    }

    #[test]
    fn fallback_table() {
        assert_eq!(
            fallback_name(api_domain::RUNTIME, 211),
            Some("cudaLaunchKernel")
        );
        assert_eq!(fallback_name(api_domain::RUNTIME, 20), Some("cudaMalloc"));
        assert_eq!(fallback_name(api_domain::DRIVER, 245), Some("cuMemFree_v2"));
        assert_eq!(fallback_name(api_domain::RUNTIME, 9999), None);
        assert_eq!(fallback_name(7, 20), None);
    }
}
