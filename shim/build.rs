//! Links the unwinder into libstallscope.so statically (libgcc_eh.a, as
//! `gcc -static-libgcc` does for shared libraries), instead of loading
//! libgcc_s.so.1 into every traced process. Loading that second library, and
//! running its constructor (CPUID probes, slow in a VM), cost each process
//! about 55 us of the 200 us it may add (issue 18, item 2; measured with a
//! preloaded empty Rust library: 120 us added with libgcc_s, 62 us without).
//!
//! The shim still unwinds (every exported function runs under
//! `catch_unwind`); its copy of the unwinder stays private (the cdylib's
//! version script exports only the hooks). Where libgcc_eh.a cannot be
//! found, or the target is not Linux with glibc, the shim links libgcc_s as
//! before.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    println!("cargo:rerun-if-env-changed=CC");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" {
        return;
    }
    // The constructor's and exit hook's code is marked `.text.startup`
    // (shim/src/lifecycle.rs). LLD, rustc's default linker here, keeps input
    // sections in input order unless told to group these prefixes; GNU ld
    // groups them anyway and takes the flag too.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,keep-text-section-prefix");
    if var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    // The linker rustc runs is a C compiler driver (`cc` unless configured).
    let cc = [var("RUSTC_LINKER"), var("CC")]
        .into_iter()
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| "cc".into());
    let found = Command::new(&cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| PathBuf::from(s.trim()))
        // Without the library, the driver prints the bare name back.
        .filter(|p| p.is_absolute() && p.is_file());
    let Some(eh) = found else {
        println!(
            "cargo:warning=libgcc_eh.a not found through `{cc}`; libstallscope.so links libgcc_s \
             (each traced process then loads one more library)"
        );
        return;
    };
    // Whole archive: its definitions must be in place before std's
    // references to _Unwind_* reach -lgcc_s, which --as-needed then drops.
    println!("cargo:rustc-cdylib-link-arg=-Wl,--whole-archive");
    println!("cargo:rustc-cdylib-link-arg={}", eh.display());
    println!("cargo:rustc-cdylib-link-arg=-Wl,--no-whole-archive");
}
