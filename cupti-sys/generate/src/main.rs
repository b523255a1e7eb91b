//! Generates one `cupti-sys/src/vNN.rs` from a set of CUPTI + CUDA headers.
//!
//! Usage: `cupti-sys-generate --out FILE --banner TEXT -I DIR [-I DIR ...]`
//!
//! The include dirs must cover the CUPTI headers, the CUDA runtime headers and
//! `crt/host_defines.h`. `../regen.sh` downloads the wheels and calls this.
//!
//! Functions are emitted as `PFN_<name>` function-pointer types instead of
//! `extern` declarations: the shim resolves CUPTI with dlsym and must never
//! link against it, and gpusim checks its exports against the same types.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};

const FUNCTIONS: &[&str] = &[
    "cuptiGetVersion",
    "cuptiGetResultString",
    "cuptiSubscribe",
    "cuptiUnsubscribe",
    "cuptiEnableCallback",
    "cuptiEnableDomain",
    "cuptiActivityEnable",
    "cuptiActivityDisable",
    "cuptiActivityRegisterCallbacks",
    "cuptiActivityFlushAll",
    "cuptiActivityGetNextRecord",
    "cuptiActivityGetNumDroppedRecords",
    "cuptiActivitySetAttribute",
    "cuptiActivityRegisterTimestampCallback",
    "cuptiGetTimestamp",
    "cuptiSetThreadIdType",
    "cuptiGetThreadIdType",
    "cuptiGetDeviceId",
    "cuptiGetContextId",
    "cuptiGetStreamId",
    "cuptiGetStreamIdEx",
];

/// Anchored regexes (bindgen anchors allowlist patterns itself).
const TYPES: &[&str] = &[
    "CUpti_Activity",
    "CUpti_ActivityKind",
    "CUpti_ActivityKernel[0-9]+",
    "CUpti_ActivityMemcpy[0-9]*",
    "CUpti_ActivityMemset[0-9]*",
    "CUpti_ActivitySynchronization[0-9]*",
    "CUpti_ActivityAPI",
    "CUpti_ActivityMemory[2-4]",
    "CUpti_ActivityOverhead[0-9]*",
    "CUpti_ActivityMarker2",
    "CUpti_ActivityMarkerData[0-9]*",
    "CUpti_ActivityDevice[0-9]*",
    "CUpti_ActivityMemcpyKind",
    "CUpti_ActivityMemoryKind",
    "CUpti_ActivityMemoryOperationType",
    "CUpti_ActivitySynchronizationType",
    "CUpti_ActivityOverheadKind",
    "CUpti_ActivityObjectKind",
    "CUpti_ActivityFlag",
    "CUpti_ActivityAttribute",
    "CUpti_ActivityThreadIdType",
    "CUpti_CallbackDomain",
    "CUpti_ApiCallbackSite",
    "CUpti_CallbackData",
    "CUpti_ResourceData",
    "CUpti_CallbackId",
    "CUpti_CallbackFunc",
    "CUpti_runtime_api_trace_cbid",
    "CUpti_driver_api_trace_cbid",
    "CUpti_CallbackIdResource",
    "CUpti_SubscriberHandle",
    "CUpti_BuffersCallbackRequestFunc",
    "CUpti_BuffersCallbackCompleteFunc",
    "CUpti_TimestampCallbackFunc",
    "CUptiResult",
    // What functionReturnValue points at, for the allocation-failure check.
    "cudaError_t",
    "CUresult",
    // Runtime API parameter structs (generated_cuda_runtime_api_meta.h).
    "cudaMalloc_v3020_params",
    "cudaMallocHost_v3020_params",
    "cudaMallocManaged_v6000_params",
    "cudaMallocAsync_v11020_params",
    "cudaMallocPitch_v3020_params",
    "cudaMemGetInfo_v3020_params",
    "cudaFree_v3020_params",
    "cudaFreeHost_v3020_params",
    "cudaStreamCreate_v3020_params",
    "cudaMemcpy_v3020_params",
    "cudaMemcpyAsync_v3020_params",
    "cudaMemset_v3020_params",
    "cudaMemsetAsync_v3020_params",
    "cudaStreamSynchronize_v3020_params",
    "cudaLaunchKernel_v7000_params",
    // Driver API parameter structs (generated_cuda_meta.h).
    "cuMemAlloc_v2_params",
    "cuMemAllocManaged_params",
    "cuMemAllocAsync_params",
    "cuMemCreate_params",
    "cuMemAllocPitch_v2_params",
];

const VARS: &[&str] = &["CUPTI_API_VERSION"];

// cupti.h pulls in the runtime and driver `*_params` headers itself, and they
// have no include guards, so nothing else may include them.
const WRAPPER: &str = "#include <cupti.h>\n";

struct Args {
    out: PathBuf,
    banner: String,
    includes: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut out = None;
    let mut banner = String::new();
    let mut includes = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(value()?)),
            "--banner" => banner = value()?,
            "-I" => includes.push(value()?),
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    let out = out.ok_or("--out is required")?;
    if includes.is_empty() {
        return Err("at least one -I DIR is required".into());
    }
    Ok(Args {
        out,
        banner,
        includes,
    })
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cupti-sys-generate: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let mut b = bindgen::Builder::default()
        .header_contents("stallscope_cupti_wrapper.h", WRAPPER)
        .rust_target(bindgen::RustTarget::stable(85, 0).map_err(|e| e.to_string())?)
        .rust_edition(bindgen::RustEdition::Edition2024)
        .formatter(bindgen::Formatter::None)
        // NVIDIA's header prose stays out of the repo; the headers are not
        // redistributed, and the docs live in the CUPTI manual.
        .generate_comments(false)
        .prepend_enum_name(false)
        .derive_default(true)
        .layout_tests(true);
    for inc in &args.includes {
        b = b.clang_arg(format!("-I{inc}"));
    }
    for f in FUNCTIONS {
        b = b.allowlist_function(f);
    }
    for t in TYPES {
        b = b.allowlist_type(t);
    }
    for v in VARS {
        b = b.allowlist_var(v);
    }
    let bindings = b.generate().map_err(|e| format!("bindgen: {e}"))?;
    let tokens: TokenStream = bindings
        .to_string()
        .parse()
        .map_err(|e| format!("re-parsing bindgen output: {e}"))?;
    let (tokens, found) = extern_fns_to_pointer_types(tokens);
    let missing: Vec<_> = FUNCTIONS
        .iter()
        .filter(|f| !found.iter().any(|g| g == *f))
        .collect();
    if !missing.is_empty() {
        // Not fatal: an older header may lack a newer function.
        eprintln!("cupti-sys-generate: not in these headers: {missing:?}");
    }
    let text = format!("{}\n{}\n", banner_comment(&args.banner), tokens);
    std::fs::write(&args.out, text).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let status = Command::new("rustfmt")
        .args(["--edition", "2024"])
        .arg(&args.out)
        .status()
        .map_err(|e| format!("running rustfmt: {e}"))?;
    if !status.success() {
        return Err(format!("rustfmt failed on {}", args.out.display()));
    }
    Ok(())
}

fn banner_comment(banner: &str) -> String {
    banner
        .lines()
        .map(|l| {
            if l.is_empty() {
                "//".to_string()
            } else {
                format!("// {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Replaces every `extern "C" { pub fn f(args) -> R; ... }` block with
/// `pub type PFN_f = unsafe extern "C" fn(args) -> R;` items. Returns the new
/// stream and the names of the functions found.
fn extern_fns_to_pointer_types(input: TokenStream) -> (TokenStream, Vec<String>) {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let mut out = Vec::with_capacity(tokens.len());
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if let Some((body, consumed)) = extern_block_at(&tokens[i..]) {
            // Drop attributes emitted just before the block (e.g. #[link]).
            while ends_with_attribute(&out) {
                out.truncate(out.len() - 2);
            }
            for (name, item) in pointer_types(body) {
                found.push(name);
                out.extend(item);
            }
            i += consumed;
        } else {
            out.push(tokens[i].clone());
            i += 1;
        }
    }
    (out.into_iter().collect(), found)
}

fn ends_with_attribute(out: &[TokenTree]) -> bool {
    matches!(
        out,
        [.., TokenTree::Punct(p), TokenTree::Group(g)]
            if p.as_char() == '#' && g.delimiter() == Delimiter::Bracket
    )
}

/// Matches `[unsafe] extern "C" { ... }` at the start of `t`.
fn extern_block_at(t: &[TokenTree]) -> Option<(TokenStream, usize)> {
    let skip = usize::from(matches!(t.first(), Some(TokenTree::Ident(i)) if i == "unsafe"));
    match &t[skip..] {
        [
            TokenTree::Ident(e),
            TokenTree::Literal(abi),
            TokenTree::Group(g),
            ..,
        ] if e == "extern" && abi.to_string() == "\"C\"" && g.delimiter() == Delimiter::Brace => {
            Some((g.stream(), skip + 3))
        }
        _ => None,
    }
}

/// Turns the `pub fn name(args) -> R;` items of an extern block into
/// `pub type PFN_name = unsafe extern "C" fn(args) -> R;`.
fn pointer_types(body: TokenStream) -> Vec<(String, Vec<TokenTree>)> {
    let mut items = Vec::new();
    let mut current: Vec<TokenTree> = Vec::new();
    for tt in body {
        let end = matches!(&tt, TokenTree::Punct(p) if p.as_char() == ';');
        current.push(tt);
        if end {
            if let Some(item) = pointer_type(&current) {
                items.push(item);
            }
            current.clear();
        }
    }
    items
}

fn pointer_type(item: &[TokenTree]) -> Option<(String, Vec<TokenTree>)> {
    let fn_pos = item
        .iter()
        .position(|t| matches!(t, TokenTree::Ident(i) if i == "fn"))?;
    let TokenTree::Ident(name) = item.get(fn_pos + 1)? else {
        return None;
    };
    let TokenTree::Group(params) = item.get(fn_pos + 2)? else {
        return None;
    };
    // Everything after the parameters up to the `;`: `-> Ret` or nothing.
    let ret = &item[fn_pos + 3..item.len() - 1];
    let alias = Ident::new(&format!("PFN_{name}"), Span::call_site());
    let decl: TokenStream = format!("pub type {alias} = unsafe extern \"C\" fn")
        .parse()
        .ok()?;
    let mut out: Vec<TokenTree> = decl.into_iter().collect();
    out.push(TokenTree::Group(Group::new(
        Delimiter::Parenthesis,
        params.stream(),
    )));
    out.extend(ret.iter().cloned());
    out.extend(";".parse::<TokenStream>().ok()?);
    Some((name.to_string(), out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extern_block_becomes_pointer_types() {
        let src: TokenStream = r#"
            pub type CUptiResult = u32;
            unsafe extern "C" {
                pub fn cuptiGetVersion(version: *mut u32) -> CUptiResult;
                pub fn cuptiNoReturn(x: i32);
            }
            pub const A: u32 = 1;
        "#
        .parse()
        .unwrap();
        let (out, found) = extern_fns_to_pointer_types(src);
        let s = out.to_string();
        assert_eq!(found, ["cuptiGetVersion", "cuptiNoReturn"]);
        assert!(!s.contains("extern \"C\" {"), "{s}");
        assert!(
            s.contains(
                "pub type PFN_cuptiGetVersion = unsafe extern \"C\" fn (version : * mut u32) -> CUptiResult ;"
            ),
            "{s}"
        );
        assert!(
            s.contains("pub type PFN_cuptiNoReturn = unsafe extern \"C\" fn (x : i32) ;"),
            "{s}"
        );
        assert!(s.contains("pub const A : u32 = 1 ;"), "{s}");
    }
}
