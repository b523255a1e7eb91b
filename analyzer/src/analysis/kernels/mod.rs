//! What a GPU kernel is, from its name: vendor, library, op class, input
//! precision and tensor-core use. The patterns are data (`table::RULES`);
//! this module holds the parsers for the type tags the libraries write into
//! their names. A name no rule knows is [`OpClass::Other`] with an unknown
//! precision, never FP32 by default.
//!
//! [`classify`] runs once per distinct kernel name (busy time keeps a map
//! per name id), so it may allocate.

mod table;

use crate::model::Precision;
use table::RULES;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vendor {
    Nvidia,
    Amd,
    /// Names used on both (PyTorch, Triton, NCCL/RCCL).
    Any,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpClass {
    Gemm,
    Conv,
    Attention,
    Elementwise,
    Reduction,
    Communication,
    Copy,
    Other,
}

impl OpClass {
    pub fn name(self) -> &'static str {
        match self {
            OpClass::Gemm => "gemm",
            OpClass::Conv => "conv",
            OpClass::Attention => "attention",
            OpClass::Elementwise => "elementwise",
            OpClass::Reduction => "reduction",
            OpClass::Communication => "communication",
            OpClass::Copy => "copy",
            OpClass::Other => "other",
        }
    }
}

/// How a rule finds its op class.
#[derive(Debug, Clone, Copy)]
pub enum OpRule {
    Fixed(OpClass),
    /// Convolution when the name says so (conv, fprop, dgrad, wgrad, ...), else GEMM.
    GemmOrConv,
}

/// Where a rule finds the input type.
#[derive(Debug, Clone, Copy)]
pub enum Dtype {
    /// The name carries no type that matters.
    None,
    /// Type tags in the name (`bf16`, `tf32`, `h884`, `sgemm`, `float`...).
    Tags,
    /// Tensile/hipBLASLt type letters after the layouts (`Cijk_Ailk_Bljk_BBS_...`).
    Cijk,
    /// Composable Kernel template arguments.
    Ck,
    /// cuBLAS's JIT kernels: type letters after `nvjet_[smNN_]` (`tst`).
    Nvjet,
}

/// Whether a rule's kernels run on tensor (matrix) cores.
#[derive(Debug, Clone, Copy)]
pub enum Tc {
    No,
    /// Yes for TF32, FP16, BF16, FP8 and INT8 inputs.
    ByType,
    /// AMD Tensile: yes when the name has a matrix-instruction tile (`_MI16x16x1_`).
    Mfma,
}

/// What a kernel is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelClass {
    pub vendor: Vendor,
    pub library: &'static str,
    pub op: OpClass,
    /// Input precision of a GEMM, convolution or attention kernel; `Unknown`
    /// when the name does not say, or for other op classes.
    pub precision: Precision,
    pub tensor_cores: bool,
}

impl KernelClass {
    /// The busy-time class (`busy_by_precision`): communication, the input
    /// precision of GEMM/conv/attention kernels whose type is known, else non-GEMM.
    pub fn bucket(&self) -> Precision {
        match self.op {
            OpClass::Communication => Precision::Comm,
            OpClass::Gemm | OpClass::Conv | OpClass::Attention
                if self.precision != Precision::Unknown =>
            {
                self.precision
            }
            _ => Precision::NonGemm,
        }
    }
}

fn matches(n: &str, pat: &str) -> bool {
    match pat.strip_prefix('^') {
        Some(p) => n.starts_with(p),
        None => n.contains(pat),
    }
}

/// What a kernel is to attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttnPart {
    None = 0,
    /// A fused attention kernel (FlashAttention, SDPA's memory-efficient
    /// kernels, cuDNN or CK attention).
    Fused = 1,
    /// A softmax on its own: the middle of attention run as separate
    /// kernels (QK^T, softmax, PV), whose score matrix goes through memory.
    /// A log-softmax (the loss) or a router's gating softmax is not one.
    Softmax = 2,
}

impl AttnPart {
    pub fn from_code(c: u8) -> AttnPart {
        match c {
            1 => AttnPart::Fused,
            2 => AttnPart::Softmax,
            _ => AttnPart::None,
        }
    }
}

/// Whether a GEMM's weights are stored in 4 bits (MXFP4/NVFP4, INT4 with
/// AWQ, GPTQ or Marlin): a model quantized past FP8 already, whatever type
/// its activations and math use. (`int4` is no tag: CUDA's 16-byte vector
/// type, in many kernels' parameters.)
pub fn low_bit_weights(name: &str, class: &KernelClass) -> bool {
    const TAGS: [&str; 9] = [
        "mxfp4", "nvfp4", "fp4", "e2m1", "w4a16", "w4a8", "marlin", "gptq", "awq",
    ];
    class.op == OpClass::Gemm && {
        let n = name.to_ascii_lowercase();
        TAGS.iter().any(|t| n.contains(t))
    }
}

/// What the kernel `name`, classified as `class`, is to attention.
pub fn attention_part(name: &str, class: &KernelClass) -> AttnPart {
    if class.op == OpClass::Attention {
        return AttnPart::Fused;
    }
    let n = name.to_ascii_lowercase();
    // Nor is a MoE router's top-k gating softmax (vLLM's topkGatingSoftmax).
    if !n.contains("softmax")
        || ["logsoftmax", "log_softmax", "topk", "gating"]
            .iter()
            .any(|k| n.contains(k))
    {
        return AttnPart::None;
    }
    // PyTorch's warp softmax says log-softmax only by its fifth template
    // argument: softmax_warp_forward<in, out, acc, log2_elements,
    // is_log_softmax, is_masked> (aten/src/ATen/native/cuda/PersistentSoftmax.cuh).
    if let Some(at) = n.find("softmax_warp_")
        && let Some((_, args)) = n[at..].split_once('<')
        && let Some((args, _)) = args.split_once('>')
        && args.split(',').nth(4).is_some_and(|a| a.trim() == "true")
    {
        return AttnPart::None;
    }
    AttnPart::Softmax
}

/// Whether only training runs this kernel: a backward pass (PyTorch's
/// `*Backward*` and `*_backward_*` kernels, FlashAttention's `_bwd`, SDPA's
/// `fmha_cutlassB`, cuDNN's `bprop`, `dgrad` and `wgrad` convolutions) or an
/// optimizer step (`multi_tensor_apply` of the foreach/fused optimizers,
/// Adam/SGD kernels). A shim recording has no autograd ops to say training;
/// its kernels do.
pub fn training_only(name: &str) -> bool {
    const TAGS: [&str; 10] = [
        "backward",
        "_bwd",
        "bwd_",
        "cutlassb_",
        "bprop",
        "dgrad",
        "wgrad",
        "multi_tensor_apply",
        "adam",
        "sgd_",
    ];
    let n = name.to_ascii_lowercase();
    TAGS.iter().any(|t| n.contains(t))
}

/// Classifies one kernel name.
pub fn classify(name: &str) -> KernelClass {
    let n = name.to_ascii_lowercase();
    let Some(rule) = RULES.iter().find(|r| r.any.iter().any(|p| matches(&n, p))) else {
        return KernelClass {
            vendor: Vendor::Any,
            library: "",
            op: OpClass::Other,
            precision: Precision::Unknown,
            tensor_cores: false,
        };
    };
    let op = match rule.op {
        OpRule::Fixed(o) => o,
        OpRule::GemmOrConv => {
            const CONV: [&str; 9] = [
                "conv",
                "fprop",
                "dgrad",
                "wgrad",
                "implicit_gemm",
                "scudnn",
                "hcudnn",
                "igemm_",
                "winograd",
            ];
            if CONV.iter().any(|k| n.contains(k)) {
                OpClass::Conv
            } else {
                OpClass::Gemm
            }
        }
    };
    let precision = match rule.dtype {
        Dtype::None => Precision::Unknown,
        Dtype::Tags => tags(&n),
        Dtype::Cijk => cijk(name),
        Dtype::Ck => ck(name),
        Dtype::Nvjet => nvjet(&n),
    };
    let reduced = matches!(
        precision,
        Precision::Tf32 | Precision::Fp16 | Precision::Bf16 | Precision::Fp8 | Precision::Int8
    );
    let tensor_cores = match rule.tc {
        Tc::No => false,
        Tc::ByType => reduced,
        Tc::Mfma => has_mfma_tile(name) || reduced,
    };
    let library = if rule.vendor == Vendor::Nvidia && n.contains("cudnn") {
        "cuDNN"
    } else {
        rule.library
    };
    KernelClass {
        vendor: rule.vendor,
        library,
        op,
        precision,
        tensor_cores,
    }
}

/// The input type from the tags NVIDIA's libraries, MIOpen and C++ template
/// arguments write into names (`n` is lowercase). The most specific tag wins:
/// FP8 and BF16 before TF32, TF32 before the `f32` it contains.
fn tags(n: &str) -> Precision {
    let any = |ks: &[&str]| ks.iter().any(|k| n.contains(k));
    if any(&["e4m3", "e5m2", "fp8", "f8f8", "_f8_"]) {
        Precision::Fp8
    } else if any(&["bf16", "bfloat16"]) {
        Precision::Bf16
    } else if any(&["tf32", "tfloat32"]) {
        Precision::Tf32
    } else if any(&[
        "int8", "i8816", "i16832", "imma", "s8s8", "i8i8", "u8u8", "_i8_",
    ]) {
        Precision::Int8
    } else if any(&[
        "fp16", "f16f16", "_f16", "h884", "h1688", "h16816", "hgemm", "hmma", "half", "hcudnn",
        "s884",
    ]) {
        // `s884` (Volta) is FP16 inputs with FP32 accumulation.
        Precision::Fp16
    } else if any(&["s16816"]) {
        // The 16x8x16 MMA takes only 16-bit inputs; untagged, CUTLASS means FP16.
        Precision::Fp16
    } else if any(&["s1688gemm", "s1688fprop", "s1688dgrad", "s1688wgrad"])
        && any(&["tensorop", "sm8", "sm9"])
    {
        // CUTLASS sm80+ tensor-op `s1688` with no other tag: TF32 (16x8x8 is its MMA shape).
        Precision::Tf32
    } else if any(&[
        "sgemm", "scudnn", "gemmsn", "f32f32", "fp32", "float", "gcgemm", "cgemm", "_f32",
    ]) {
        Precision::Fp32
    } else {
        Precision::Unknown
    }
}

/// Tensile/hipBLASLt type letters: the token after the A and B layouts starts
/// with the input type (`S` FP32, `H` FP16, `B` BF16, `X` XF32, `F8`/`B8` FP8,
/// `I8` INT8; `D`, `C`, `Z` are FP64 and complex: unknown here).
fn cijk(name: &str) -> Precision {
    let at = name.find("Cijk_").unwrap_or(0);
    let Some(t) = name[at..].split('_').nth(3) else {
        return Precision::Unknown;
    };
    if t.starts_with("F8") || t.starts_with("B8") {
        Precision::Fp8
    } else if t.starts_with("I8") || t.starts_with("4xi8") {
        Precision::Int8
    } else if t.starts_with('H') {
        Precision::Fp16
    } else if t.starts_with('B') {
        Precision::Bf16
    } else if t.starts_with('X') {
        Precision::Tf32
    } else if t.starts_with('S') {
        Precision::Fp32
    } else {
        Precision::Unknown
    }
}

/// cuBLAS's JIT kernels (CUDA 12.8 and later, Hopper and Blackwell) name
/// their types in letters after `nvjet_` and an optional `smNN_`: the input
/// type, the compute type and the output type, with one letter per input
/// when the two differ or take scales. `s` FP32, `h` FP16, `t` BF16, `q` FP8
/// (`nvjet_sm90_tst_*` is BF16, `nvjet_hsh_*` FP16, `nvjet_qqtst_*` FP8,
/// `nvjet_sss_tf32_*` FP32 run in TF32). Other letters are unknown here.
/// `n` is the lowercased name.
fn nvjet(n: &str) -> Precision {
    let rest = n.strip_prefix("nvjet_").unwrap_or(n);
    let is_arch = |a: &str| {
        a.strip_prefix("sm")
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    };
    let rest = match rest.split_once('_') {
        Some((arch, tail)) if is_arch(arch) => tail,
        _ => rest,
    };
    let letters = rest.split('_').next().unwrap_or("");
    if !(3..=5).contains(&letters.len()) || !letters.bytes().all(|b| b.is_ascii_lowercase()) {
        return tags(n);
    }
    match letters.as_bytes()[0] {
        b'q' => Precision::Fp8,
        b't' => Precision::Bf16,
        b'h' => Precision::Fp16,
        b's' if n.contains("tf32") => Precision::Tf32,
        b's' => Precision::Fp32,
        _ => tags(n),
    }
}

/// A Tensile matrix-instruction tile (`_MI16x16x1_`): the kernel uses MFMA.
fn has_mfma_tile(name: &str) -> bool {
    name.split('_')
        .any(|t| t.len() > 2 && t.starts_with("MI") && t.as_bytes()[2].is_ascii_digit())
}

/// Composable Kernel: the first data type among the template arguments.
fn ck(name: &str) -> Precision {
    if name.starts_with("_Z") {
        return ck_mangled(name);
    }
    // Demangled: the earliest type name wins.
    const TYPES: [(&str, Precision); 10] = [
        ("ck::bhalf_t", Precision::Bf16),
        ("unsigned short", Precision::Bf16),
        ("ck::half_t", Precision::Fp16),
        ("_Float16", Precision::Fp16),
        ("ck::f8_t", Precision::Fp8),
        ("ck::bf8_t", Precision::Fp8),
        ("f8_fnuz_t", Precision::Fp8),
        ("signed char", Precision::Int8),
        ("int8_t", Precision::Int8),
        ("float", Precision::Fp32),
    ];
    TYPES
        .iter()
        .filter_map(|(k, p)| name.find(k).map(|i| (i, *p)))
        .min_by_key(|x| x.0)
        .map_or(Precision::Unknown, |x| x.1)
}

/// Mangled CK names: the first run of at least three builtin-type codes
/// (`t` unsigned short = bhalf_t, `DF16_` = half_t, `f` float, `a` int8,
/// `DB8_`/`DU8_` 8-bit floats) that starts a template argument list or follows
/// one (`I`, `E` or `_` before it, no lowercase letter after it). Its first
/// code is the A type.
fn ck_mangled(name: &str) -> Precision {
    const CODES: [(&str, Precision); 8] = [
        ("DF16_", Precision::Fp16),
        ("Dh", Precision::Fp16),
        ("DB8_", Precision::Fp8),
        ("DU8_", Precision::Fp8),
        ("t", Precision::Bf16),
        ("f", Precision::Fp32),
        ("a", Precision::Int8),
        ("i", Precision::Unknown),
    ];
    let b = name.as_bytes();
    for i in 1..b.len() {
        if !matches!(b[i - 1], b'I' | b'E' | b'_') {
            continue;
        }
        let (mut j, mut run) = (i, Vec::new());
        while let Some((k, p)) = CODES.iter().find(|(k, _)| name[j..].starts_with(k)) {
            run.push(*p);
            j += k.len();
        }
        let ends_clean = b.get(j).is_none_or(|c| !c.is_ascii_lowercase());
        if run.len() >= 3 && ends_clean && run[0] != Precision::Unknown {
            return run[0];
        }
    }
    Precision::Unknown
}

/// A kernel name for people: demangled where it is mangled, template
/// arguments and parameter lists elided, at most `max` characters. A
/// template's lone plain argument is kept (`cutlass::Kernel<cutlass_80_...>`
/// says nothing without it).
pub fn short_name(name: &str, max: usize) -> String {
    let s = if name.starts_with("_Z") {
        demangle_prefix(name).map_or_else(
            || name.to_string(),
            |d| d.replace("(anonymous namespace)::", ""),
        )
    } else {
        elide(name)
    };
    if s.chars().count() <= max {
        s
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// `void a::b<...>(...)` -> `a::b<…>`; `std::enable_if<...>::type a::f<...>(...)` -> `a::f<…>`.
/// An anonymous namespace is dropped: its `(` is not the parameter list.
fn elide(name: &str) -> String {
    let name = name.replace("(anonymous namespace)::", "");
    let mut out = String::new();
    let mut depth = 0usize;
    let mut arg = String::new();
    for c in name.chars() {
        match c {
            '<' => {
                if depth == 0 {
                    arg.clear();
                } else {
                    arg.push(c);
                }
                depth += 1;
            }
            '>' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    let plain = !arg.is_empty()
                        && arg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    if plain && arg.len() > 3 && out.ends_with("::Kernel") {
                        // CUTLASS's wrapper adds nothing: the argument names the kernel.
                        return arg;
                    } else if plain && arg.len() > 3 {
                        out.push('<');
                        out.push_str(&arg);
                        out.push('>');
                    } else {
                        out.push_str("<…>");
                    }
                } else {
                    arg.push(c);
                }
            }
            '(' if depth == 0 => break,
            _ if depth > 0 => arg.push(c),
            _ => out.push(c),
        }
    }
    // Drop a return type: everything up to the last space outside templates.
    let out = out.trim();
    let out = out.rsplit(' ').next().unwrap_or(out);
    out.to_string()
}

/// The nested name of an Itanium-mangled symbol (`_ZN2ck6kernelI...` ->
/// `ck::kernel<…>`), enough to say which function it is.
fn demangle_prefix(name: &str) -> Option<String> {
    let rest = name
        .strip_prefix("_ZN")
        .or_else(|| name.strip_prefix("_Z"))?;
    let b = rest.as_bytes();
    let mut i = 0;
    let mut parts: Vec<String> = Vec::new();
    // CV-qualifiers and ref-qualifiers of member functions.
    while i < b.len() && matches!(b[i], b'K' | b'V' | b'r') {
        i += 1;
    }
    loop {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if start == i {
            break;
        }
        let len: usize = rest[start..i].parse().ok()?;
        let id = rest.get(i..i + len)?;
        i += len;
        parts.push(if id.starts_with("_GLOBAL__N") {
            "(anonymous namespace)".into()
        } else {
            id.to_string()
        });
    }
    if parts.is_empty() {
        return None;
    }
    let mut s = parts.join("::");
    if b.get(i) == Some(&b'I') {
        s.push_str("<…>");
    }
    Some(s)
}

#[cfg(test)]
mod tests;
