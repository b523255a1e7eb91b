//! Finding and loading libcupti, and telling whether the program uses CUDA.
//!
//! Search order (issue 3): the `STALLSCOPE_CUPTI` override; a libcupti the
//! program already loaded; the CUPTI folder of the pip wheels beside a loaded
//! libcudart (`nvidia/cuda_cupti/lib`, `nvidia/cu13/lib`);
//! `$CUDA_HOME/extras/CUPTI/lib64`; the loader's own path. The library is
//! never unloaded.

use core::ffi::{CStr, c_char, c_int, c_void};
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A loaded libcupti (or stand-in).
pub struct Loaded {
    pub handle: usize,
    /// Where it was loaded from, for messages.
    pub path: String,
}

fn dlerror() -> String {
    // SAFETY: dlerror returns NULL or a C string owned by the loader.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

fn open(name: &[u8], flags: c_int) -> Option<usize> {
    let c = CString::new(name).ok()?;
    // SAFETY: a valid C string.
    let h = unsafe { libc::dlopen(c.as_ptr(), flags) };
    (!h.is_null()).then_some(h as usize)
}

/// The file a handle was loaded from.
fn path_of(handle: usize, fallback: &str) -> String {
    let mut map: *mut libc::c_void = core::ptr::null_mut();
    // SAFETY: a valid handle; RTLD_DI_LINKMAP writes a `struct link_map *`,
    // whose second field is `char *l_name`.
    let ok = unsafe {
        libc::dlinfo(
            handle as *mut c_void,
            libc::RTLD_DI_LINKMAP,
            (&raw mut map).cast(),
        )
    } == 0;
    if ok && !map.is_null() {
        let name = unsafe { *(map as *const *const c_char).add(1) };
        if !name.is_null() {
            let s = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            if !s.is_empty() {
                return s.into_owned();
            }
        }
    }
    fallback.into()
}

/// Paths of every loaded object whose file name starts with `prefix`.
pub fn loaded_objects(prefix: &str) -> Vec<PathBuf> {
    struct Acc<'a> {
        prefix: &'a [u8],
        out: Vec<PathBuf>,
    }
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
        // SAFETY: called by dl_iterate_phdr with our accumulator.
        let acc = unsafe { &mut *(data as *mut Acc<'_>) };
        let name = unsafe { (*info).dlpi_name };
        if !name.is_null() {
            let bytes = unsafe { CStr::from_ptr(name) }.to_bytes();
            let p = Path::new(OsStr::from_bytes(bytes));
            if p.file_name()
                .is_some_and(|f| f.as_bytes().starts_with(acc.prefix))
            {
                acc.out.push(p.to_path_buf());
            }
        }
        0
    }
    let mut acc = Acc {
        prefix: prefix.as_bytes(),
        out: Vec::new(),
    };
    // SAFETY: the callback only reads the entries it is given.
    unsafe { libc::dl_iterate_phdr(Some(each), (&raw mut acc).cast()) };
    acc.out
}

/// CUPTI majors to try, the loaded CUDA runtime's first.
fn majors(cudarts: &[PathBuf]) -> [&'static str; 2] {
    let has13 = cudarts
        .iter()
        .any(|p| p.to_string_lossy().contains("libcudart.so.13"));
    let has12 = cudarts
        .iter()
        .any(|p| p.to_string_lossy().contains("libcudart.so.12"));
    if has12 && !has13 {
        ["12", "13"]
    } else {
        ["13", "12"]
    }
}

/// Loads libcupti, or says where it looked.
pub fn load(override_path: Option<&OsStr>) -> Result<Loaded, String> {
    const FLAGS: c_int = libc::RTLD_NOW | libc::RTLD_LOCAL;
    if let Some(p) = override_path {
        return match open(p.as_bytes(), FLAGS) {
            Some(h) => Ok(Loaded {
                handle: h,
                path: path_of(h, &p.to_string_lossy()),
            }),
            None => Err(format!(
                "cannot load STALLSCOPE_CUPTI={}: {}",
                p.to_string_lossy(),
                dlerror()
            )),
        };
    }
    let cudarts = loaded_objects("libcudart.so");
    let majors = majors(&cudarts);
    let mut names: Vec<String> = majors.iter().map(|m| format!("libcupti.so.{m}")).collect();
    names.push("libcupti.so".into());

    // Already loaded by the program (PyTorch links it through kineto).
    for n in &names {
        if let Some(h) = open(n.as_bytes(), FLAGS | libc::RTLD_NOLOAD) {
            return Ok(Loaded {
                handle: h,
                path: path_of(h, n),
            });
        }
    }
    // Beside a loaded libcudart: pip wheels put CUDA 12's in
    // nvidia/cuda_runtime/lib and its CUPTI in nvidia/cuda_cupti/lib; CUDA 13
    // puts both in nvidia/cu13/lib. A toolkit has extras/CUPTI/lib64.
    let mut candidates: Vec<PathBuf> = Vec::new();
    for rt in &cudarts {
        let Some(dir) = rt.parent() else { continue };
        let nvidia = dir.parent().and_then(Path::parent);
        for m in majors {
            let so = format!("libcupti.so.{m}");
            candidates.push(dir.join(&so));
            if let Some(nv) = nvidia {
                candidates.push(nv.join("cuda_cupti/lib").join(&so));
                candidates.push(nv.join("cu13/lib").join(&so));
            }
            if let Some(top) = dir.parent() {
                candidates.push(top.join("extras/CUPTI/lib64").join(&so));
            }
        }
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let home = PathBuf::from(home);
            for n in &names {
                candidates.push(home.join("extras/CUPTI/lib64").join(n));
                candidates.push(home.join("lib64").join(n));
            }
        }
    }
    for c in candidates.iter().filter(|c| c.is_file()) {
        if let Some(h) = open(c.as_os_str().as_bytes(), FLAGS) {
            return Ok(Loaded {
                handle: h,
                path: path_of(h, &c.to_string_lossy()),
            });
        }
    }
    for n in &names {
        if let Some(h) = open(n.as_bytes(), FLAGS) {
            return Ok(Loaded {
                handle: h,
                path: path_of(h, n),
            });
        }
    }
    Err(format!(
        "no libcupti found (tried a loaded one, the CUPTI folder beside {}, \
         $CUDA_HOME/extras/CUPTI/lib64 and the loader path for {}); \
         set STALLSCOPE_CUPTI or `stallscope record --cupti PATH`",
        if cudarts.is_empty() {
            "libcudart (none loaded)".to_string()
        } else {
            cudarts[0].display().to_string()
        },
        names.join(", ")
    ))
}

/// The CUDA driver, if the program loaded it (never loaded by us).
fn driver() -> Option<usize> {
    static DRIVER: AtomicUsize = AtomicUsize::new(0);
    match DRIVER.load(Ordering::Relaxed) {
        0 => {
            // By its bare name, dlopen searches the library path when the
            // driver is not loaded, opening each candidate even with
            // RTLD_NOLOAD: an fd taken on every poll of the GPU watcher, which
            // a program at its fd limit lacked. The loaded objects are listed
            // without one.
            let path = loaded_objects("libcuda.so").into_iter().next()?;
            let h = open(
                path.as_os_str().as_bytes(),
                libc::RTLD_LAZY | libc::RTLD_NOLOAD,
            )?;
            DRIVER.store(h, Ordering::Relaxed);
            Some(h)
        }
        h => Some(h),
    }
}

pub fn driver_loaded() -> bool {
    driver().is_some()
}

/// A symbol of the loaded driver.
pub fn driver_symbol(name: &CStr) -> Option<usize> {
    let h = driver()?;
    // SAFETY: a valid handle and C string.
    let p = unsafe { libc::dlsym(h as *mut c_void, name.as_ptr()) };
    (!p.is_null()).then_some(p as usize)
}

/// True once the program has initialized the CUDA driver. cuDeviceGetCount
/// answers CUDA_ERROR_NOT_INITIALIZED before cuInit and initializes nothing
/// (CUDA driver API reference), so asking never initializes CUDA on the
/// program's behalf: a driver initialized before a fork breaks CUDA in the
/// children.
pub fn cuda_initialized() -> bool {
    let Some(f) = driver_symbol(c"cuDeviceGetCount") else {
        return false;
    };
    // SAFETY: the driver's `CUresult cuDeviceGetCount(int *)`.
    let f: unsafe extern "C" fn(*mut c_int) -> c_int = unsafe { core::mem::transmute(f) };
    let mut n: c_int = 0;
    unsafe { f(&mut n) == 0 }
}

/// True if the override library is loaded by the program and implements
/// CUDA itself (a stand-in such as gpusim, which has no driver to ask).
pub fn standin_loaded(path: &OsStr) -> bool {
    // Not dlopen first: it opens the file to compare it with the loaded
    // objects (see `driver`).
    let Some(name) = Path::new(path).file_name().and_then(OsStr::to_str) else {
        return false;
    };
    if loaded_objects(name).is_empty() {
        return false;
    }
    let Some(h) = open(path.as_bytes(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) else {
        return false;
    };
    // SAFETY: a valid handle and C string.
    !unsafe { libc::dlsym(h as *mut c_void, c"cudaMalloc".as_ptr()) }.is_null()
}

/// Whether calling into this library without a CUDA driver is known to be
/// safe. libcupti 13.2.86 crashes (SIGSEGV) in cuptiGetVersion when no
/// driver is loaded, while every 12.x wheel (12.0-12.9) returns errors
/// (measured on the CI machines, see DESIGN.md "Facts measured"); a library
/// that is not libcupti (a stand-in) carries its own CUDA.
pub fn safe_without_driver(path: &str) -> bool {
    let file = Path::new(path)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    !file.starts_with("libcupti") || file.contains(".so.12")
}

/// The file this library (the shim) was loaded from.
pub fn own_path() -> Option<PathBuf> {
    let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
    // SAFETY: any address inside this library identifies it.
    let ok = unsafe { libc::dladdr(own_path as *const c_void, &mut info) } != 0;
    if !ok || info.dli_fname.is_null() {
        return None;
    }
    let bytes = unsafe { CStr::from_ptr(info.dli_fname) }.to_bytes();
    Some(PathBuf::from(OsStr::from_bytes(bytes)))
}

/// True if `CUDA_INJECTION64_PATH` names this very library, so the driver
/// will call our `InitializeInjection` at cuInit.
pub fn injection_expected() -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(inj) = std::env::var_os("CUDA_INJECTION64_PATH").filter(|v| !v.is_empty()) else {
        return false;
    };
    let (Ok(a), Some(Ok(b))) = (std::fs::metadata(&inj), own_path().map(std::fs::metadata)) else {
        return false;
    };
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_12x_libcupti_is_called_without_a_driver() {
        assert!(safe_without_driver(
            "/x/nvidia/cuda_cupti/lib/libcupti.so.12"
        ));
        assert!(safe_without_driver("/x/target/debug/libgpusim.so"));
        assert!(!safe_without_driver("/x/nvidia/cu13/lib/libcupti.so.13"));
        assert!(!safe_without_driver(
            "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"
        ));
    }

    #[test]
    fn majors_follow_the_loaded_runtime() {
        let p = |s: &str| vec![PathBuf::from(s)];
        assert_eq!(majors(&p("/a/libcudart.so.12")), ["12", "13"]);
        assert_eq!(majors(&p("/a/libcudart.so.13")), ["13", "12"]);
        assert_eq!(majors(&[]), ["13", "12"]);
    }

    #[test]
    fn finds_loaded_objects_and_itself() {
        assert!(!loaded_objects("libc.so").is_empty());
        assert!(loaded_objects("libcudart-none").is_empty());
        assert!(own_path().is_some());
    }
}
