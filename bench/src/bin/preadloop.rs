//! Cost of the shim on a small cached pread, measured inside one process.
//!
//! `preadloop FILE BATCHES` alternates batches of two kinds of calls: through the
//! normal symbol (`pread64`, which the preloaded shim interposes) and straight
//! to libc's own `pread64`, found with dlsym on libc's handle (which bypasses
//! interposition). Measuring both in the same process, interleaved, cancels the
//! run-to-run noise of this machine (tens of ns between processes). Prints
//! "direct_ns hooked_ns", medians over batches. Without the shim both are the
//! same call, which shows the method's own bias.

use std::os::fd::AsRawFd;
use std::time::Instant;

type Pread = unsafe extern "C" fn(i32, *mut libc::c_void, usize, i64) -> isize;

const BATCH: u64 = 2000;

fn batch(f: Pread, fd: i32, buf: &mut [u8; 64]) -> f64 {
    let t = Instant::now();
    for i in 0..BATCH {
        let r = unsafe { f(fd, buf.as_mut_ptr().cast(), 64, ((i & 63) * 64) as i64) };
        assert_eq!(r, 64);
    }
    t.elapsed().as_nanos() as f64 / BATCH as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let file = std::fs::File::open(&args[1]).expect("open the data file");
    let batches: usize = args[2].parse().expect("batch count");
    let fd = file.as_raw_fd();
    // SAFETY: looking up libc's own definition of a well-known symbol.
    let direct: Pread = unsafe {
        let h = libc::dlopen(c"libc.so.6".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        assert!(!h.is_null(), "libc.so.6 is not loaded");
        let p = libc::dlsym(h, c"pread64".as_ptr());
        assert!(!p.is_null());
        std::mem::transmute::<*mut libc::c_void, Pread>(p)
    };
    let hooked: Pread = libc::pread64;
    let mut buf = [0u8; 64];
    for _ in 0..20 {
        batch(hooked, fd, &mut buf);
        batch(direct, fd, &mut buf);
    }
    let (mut d, mut h) = (Vec::new(), Vec::new());
    for i in 0..batches {
        if i % 2 == 0 {
            d.push(batch(direct, fd, &mut buf));
            h.push(batch(hooked, fd, &mut buf));
        } else {
            h.push(batch(hooked, fd, &mut buf));
            d.push(batch(direct, fd, &mut buf));
        }
    }
    println!(
        "{:.2} {:.2}",
        stallscope_bench::median(&mut d),
        stallscope_bench::median(&mut h)
    );
}
