//! The stallscope command line: record a training job, dump a trace, analyze
//! it, and gate CI on the result.

mod cli;

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static GLOBAL: alloc::Alloc = alloc::Alloc;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("stallscope: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The allocator. Small blocks come from the system allocator. The analyzer's
/// large event vectors (tens to hundreds of MB) get mappings of their own:
/// - a growing vector is moved by remapping its pages (`mremap`), never
///   copied, so growth costs neither time nor a second copy's memory;
/// - a freed vector goes straight back to the kernel, so the peak RSS is what
///   is live, not what the allocator keeps cached.
///
/// Measured on the 50M-event benchmark (2 cores, a VM where first-touch page
/// faults dominate): 3.6-4.0 s and 2.28 GB peak, against 5.5-7.3 s and 2.60 GB
/// with mimalloc for everything (which also held 75 MB instead of 20 MB on a
/// 3 MB Kineto trace). glibc alone keeps large freed blocks cached as its mmap
/// threshold adapts upwards. Transparent huge pages (MADV_HUGEPAGE) were tried
/// for these mappings and left out: faulting in fresh 2 MiB pages cost 2-3x
/// more system time here than 4 KiB pages.
mod alloc {
    use std::alloc::{GlobalAlloc, Layout};
    use std::ptr::null_mut;

    pub struct Alloc;

    /// Blocks at least this large are mapped directly.
    const BIG: usize = 4 << 20;
    const PAGE: usize = 4096;

    fn is_big(size: usize, align: usize) -> bool {
        size >= BIG && align <= PAGE
    }

    fn round(n: usize) -> usize {
        (n + PAGE - 1) & !(PAGE - 1)
    }

    /// A fresh private mapping of `len` bytes (a multiple of PAGE).
    unsafe fn map(len: usize) -> *mut u8 {
        // SAFETY: a plain anonymous mapping.
        let p = unsafe {
            libc::mmap(
                null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            null_mut()
        } else {
            p.cast()
        }
    }

    // SAFETY: large blocks are whole private mappings owned by one allocation
    // (their length is the layout's size rounded up to a page); everything
    // else is forwarded to the system allocator unchanged.
    unsafe impl GlobalAlloc for Alloc {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            unsafe {
                if is_big(l.size(), l.align()) {
                    map(round(l.size()))
                } else {
                    std::alloc::System.alloc(l)
                }
            }
        }

        unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
            unsafe {
                if is_big(l.size(), l.align()) {
                    // Fresh anonymous pages are zero.
                    map(round(l.size()))
                } else {
                    std::alloc::System.alloc_zeroed(l)
                }
            }
        }

        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            unsafe {
                if is_big(l.size(), l.align()) {
                    libc::munmap(p.cast(), round(l.size()));
                } else {
                    std::alloc::System.dealloc(p, l)
                }
            }
        }

        unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
            unsafe {
                match (is_big(l.size(), l.align()), is_big(new_size, l.align())) {
                    (false, false) => std::alloc::System.realloc(p, l, new_size),
                    (true, true) => {
                        // The pages move; their contents are not copied.
                        let q = libc::mremap(
                            p.cast(),
                            round(l.size()),
                            round(new_size),
                            libc::MREMAP_MAYMOVE,
                        );
                        if q == libc::MAP_FAILED {
                            null_mut()
                        } else {
                            q.cast()
                        }
                    }
                    _ => {
                        let nl = Layout::from_size_align_unchecked(new_size, l.align());
                        let q = self.alloc(nl);
                        if !q.is_null() {
                            std::ptr::copy_nonoverlapping(p, q, l.size().min(new_size));
                            self.dealloc(p, l);
                        }
                        q
                    }
                }
            }
        }
    }
}
