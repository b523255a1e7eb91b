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

/// The allocator. Small blocks come from mimalloc. The analyzer's large event
/// vectors (tens to hundreds of MB) get their own 2 MiB-aligned mappings with
/// transparent huge pages, and grow with `mremap`:
/// - first-touch page faults dominate the cost of a fresh vector (on these VMs
///   faulting in 4 KiB pages runs at under 1 GB/s, 2 MiB pages at ~8 GB/s);
/// - a growing vector is moved by remapping its pages, never copied;
/// - a freed vector goes straight back to the kernel, so the peak RSS is what
///   is live, not what the allocator cached.
mod alloc {
    use std::alloc::{GlobalAlloc, Layout};
    use std::ptr::null_mut;

    use mimalloc::MiMalloc;

    pub struct Alloc;

    /// Blocks at least this large are mapped directly.
    const BIG: usize = 4 << 20;
    const HUGE_PAGE: usize = 2 << 20;

    fn is_big(size: usize, align: usize) -> bool {
        size >= BIG && align <= 4096
    }

    fn round(n: usize) -> usize {
        (n + HUGE_PAGE - 1) & !(HUGE_PAGE - 1)
    }

    /// Reserves `len` bytes (a multiple of HUGE_PAGE) at a 2 MiB boundary.
    unsafe fn reserve(len: usize) -> *mut u8 {
        // SAFETY: plain anonymous mappings; the slack around the aligned part
        // is unmapped again.
        unsafe {
            let p = libc::mmap(
                null_mut(),
                len + HUGE_PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                return null_mut();
            }
            let start = p as usize;
            let aligned = (start + HUGE_PAGE - 1) & !(HUGE_PAGE - 1);
            if aligned > start {
                libc::munmap(p, aligned - start);
            }
            let tail = start + len + HUGE_PAGE - (aligned + len);
            if tail > 0 {
                libc::munmap((aligned + len) as *mut libc::c_void, tail);
            }
            aligned as *mut u8
        }
    }

    unsafe fn map(len: usize) -> *mut u8 {
        // SAFETY: see `reserve`.
        unsafe {
            let p = reserve(len);
            if !p.is_null() {
                libc::madvise(p.cast(), len, libc::MADV_HUGEPAGE);
            }
            p
        }
    }

    unsafe fn unmap(p: *mut u8, len: usize) {
        // SAFETY: `p` came from `map` or `remap` with this rounded length.
        unsafe {
            libc::munmap(p.cast(), len);
        }
    }

    /// Grows or shrinks a mapping, keeping it 2 MiB-aligned when it moves.
    unsafe fn remap(p: *mut u8, old: usize, new: usize) -> *mut u8 {
        // SAFETY: `p` maps `old` bytes; on success the old range is gone.
        unsafe {
            if new <= old {
                if new < old {
                    libc::munmap(p.add(new).cast(), old - new);
                }
                return p;
            }
            // In place when the address space after it is free.
            let q = libc::mremap(p.cast(), old, new, 0);
            if q != libc::MAP_FAILED {
                return q.cast();
            }
            let target = reserve(new);
            if target.is_null() {
                return null_mut();
            }
            let q = libc::mremap(
                p.cast(),
                old,
                new,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                target,
            );
            if q == libc::MAP_FAILED {
                libc::munmap(target.cast(), new);
                return null_mut();
            }
            libc::madvise(q, new, libc::MADV_HUGEPAGE);
            q.cast()
        }
    }

    // SAFETY: large blocks are whole private mappings owned by one allocation;
    // everything else is forwarded to mimalloc unchanged.
    unsafe impl GlobalAlloc for Alloc {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            unsafe {
                if is_big(l.size(), l.align()) {
                    map(round(l.size()))
                } else {
                    MiMalloc.alloc(l)
                }
            }
        }

        unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
            unsafe {
                if is_big(l.size(), l.align()) {
                    // Fresh anonymous pages are zero.
                    map(round(l.size()))
                } else {
                    MiMalloc.alloc_zeroed(l)
                }
            }
        }

        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            unsafe {
                if is_big(l.size(), l.align()) {
                    unmap(p, round(l.size()))
                } else {
                    MiMalloc.dealloc(p, l)
                }
            }
        }

        unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
            unsafe {
                let old_big = is_big(l.size(), l.align());
                let new_big = is_big(new_size, l.align());
                match (old_big, new_big) {
                    (false, false) => MiMalloc.realloc(p, l, new_size),
                    (true, true) => remap(p, round(l.size()), round(new_size)),
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
