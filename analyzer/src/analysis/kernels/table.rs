//! The kernel-name table: which library wrote a kernel, what it computes, and
//! where its input type is written. Rules are tried in order; the first whose
//! pattern matches wins. Patterns are lowercase substrings (`^` anchors one at
//! the start of the name). The naming conventions behind them:
//!
//! - cuBLAS/cuBLASLt: `{arch}_{type}_{acc}{mma}gemm_...` (`ampere_sgemm_*`,
//!   `volta_h884gemm_*`, `ampere_fp16_s16816gemm_fp16_*`), `sm80_xmma_gemm_{a}{b}_{c}{acc}_*`,
//!   and the JIT kernels `nvjet_[sm90_]{types}_{tile}_...` (`tst` BF16, `hsh` FP16).
//! - cuDNN: `*_scudnn_*` (FP32 SIMT), `sm80_xmma_{fprop,dgrad,wgrad}_implicit_gemm_{types}`,
//!   `cutlass_cudnn_*::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_*>`.
//! - CUTLASS: `cutlass_{sm}_{tensorop,simt}_{type}{mma}gemm_*`; an `s1688` tensor-op
//!   GEMM with no other type tag is TF32 (16x8x8 is the TF32 MMA shape on sm80+).
//! - Tensile/hipBLASLt: `Cijk_{A}_{B}_{types}_...` with type letters (S, H, B, F8, I8).
//! - Composable Kernel: `ck::` template arguments (mangled: `t` = bhalf_t, `DF16_` = half_t).
//! - MIOpen: `igemm_{fwd,bwd,wrw}_gtc[x]_{layout}_{type}_*`, transposes, tensor ops.

use super::{Dtype, OpClass, OpRule, Tc, Vendor};

/// One row of the table.
pub struct Rule {
    /// Lowercase substrings, any of which matches (`^` anchors at the start).
    pub any: &'static [&'static str],
    pub vendor: Vendor,
    pub library: &'static str,
    pub op: OpRule,
    pub dtype: Dtype,
    pub tc: Tc,
}

use Dtype as D;
use OpClass as O;
use OpRule::{Fixed as F, GemmOrConv as GC};
use Tc::{ByType, Mfma, No};
use Vendor::{Amd, Any, Nvidia};

const fn r(
    any: &'static [&'static str],
    vendor: Vendor,
    library: &'static str,
    op: OpRule,
    dtype: Dtype,
    tc: Tc,
) -> Rule {
    Rule {
        any,
        vendor,
        library,
        op,
        dtype,
        tc,
    }
}

pub const RULES: &[Rule] = &[
    // Collectives first: their names carry data types (`_int8_t`, `_bf16`).
    r(
        &["^nccl", "^rccl", "^msccl", "ncclkernel", "nccldevkernel"],
        Any,
        "NCCL/RCCL",
        F(O::Communication),
        D::None,
        No,
    ),
    // All-reduces over peer memory, NCCL's stand-ins in serving engines:
    // PyTorch's symmetric memory (`multimem_all_reduce_kernel`,
    // `one_shot_all_reduce_kernel`), vLLM's and SGLang's custom all-reduce
    // (`vllm::cross_device_reduce_1stage`), TensorRT-LLM's and FlashInfer's
    // (`oneShotAllReduceKernel`, `allreduce_fusion_kernel_oneshot_lamport`).
    r(
        &[
            "multimem_all_reduce",
            "multimem_one_shot",
            "multimem_all_gather",
            "one_shot_all_reduce",
            "two_shot_all_reduce",
            "oneshotallreduce",
            "twoshotallreduce",
            "cross_device_reduce",
            "allreduce_fusion",
        ],
        Any,
        "peer all-reduce",
        F(O::Communication),
        D::None,
        No,
    ),
    // Split-K reductions and epilogues of GEMM libraries: not GEMMs themselves.
    r(
        &[
            "splitkreduce",
            "reducesplitk",
            "reduce_1block_kernel",
            "^void dot_kernel",
            "^dot_kernel",
        ],
        Any,
        "cuBLAS",
        F(O::Reduction),
        D::None,
        No,
    ),
    r(
        &["epilogue::impl::globalkernel"],
        Nvidia,
        "cuBLASLt",
        F(O::Elementwise),
        D::None,
        No,
    ),
    // Attention.
    r(
        &[
            "flash_fwd",
            "flash_bwd",
            "flash::",
            "flash_attn",
            "flashattn",
            "fmha",
            "attn_fwd",
            "attn_bwd",
            "_attention",
            "^bwd_kernel_dk_dv",
            "^bwd_kernel_dq",
            "^bwd_preprocess",
            "mha_fwd",
            "mha_bwd",
            "mha_varlen",
            "paged_attention",
            "flashinfer",
            "decode_attention",
        ],
        Any,
        "attention",
        F(O::Attention),
        D::Tags,
        ByType,
    ),
    // AMD.
    r(
        &["cijk_", "^cij_"],
        Amd,
        "Tensile/hipBLASLt",
        F(O::Gemm),
        D::Cijk,
        Mfma,
    ),
    r(
        &["^_zn2ck", "^_zn7ck_tile", "ck::", "ck_tile::"],
        Amd,
        "Composable Kernel",
        GC,
        D::Ck,
        ByType,
    ),
    r(
        &[
            "^igemm_",
            "^naive_conv",
            "miopensp3asmconv",
            "miopenconv",
            "^conv_hip",
            "gridwise_convolution",
            "^gemm_wrw",
            "^conv1x1",
        ],
        Amd,
        "MIOpen",
        F(O::Conv),
        D::Tags,
        ByType,
    ),
    r(
        &[
            "batched_transpose",
            "^transpose_nchw",
            "^transpose_cnhw",
            "^transpose_nhwc",
            "^im2col",
            "^col2im",
        ],
        Amd,
        "MIOpen",
        F(O::Copy),
        D::None,
        No,
    ),
    r(
        &[
            "subtensorop",
            "^op1dtensor",
            "^op2dtensor",
            "^op3dtensor",
            "^op4dtensor",
            "^op5dtensor",
            "miopenscale",
            "^scaletensor",
        ],
        Amd,
        "MIOpen",
        F(O::Elementwise),
        D::None,
        No,
    ),
    r(
        &[
            "miopenbatchnorm",
            "miopenlrn",
            "miopensoftmax",
            "miopenpooling",
        ],
        Amd,
        "MIOpen",
        F(O::Reduction),
        D::None,
        No,
    ),
    r(
        &["rocblas_", "^hipblaslt"],
        Amd,
        "rocBLAS",
        GC,
        D::Tags,
        ByType,
    ),
    // cuDNN's own (non-GEMM) kernels.
    r(
        &["bn_fw_", "bn_bw_", "batchnorm"],
        Nvidia,
        "cuDNN",
        F(O::Reduction),
        D::None,
        No,
    ),
    r(
        &["nchwtonhwc", "nhwctonchw", "cudnn::ops::transpose"],
        Nvidia,
        "cuDNN",
        F(O::Copy),
        D::None,
        No,
    ),
    r(
        &[
            "computeoffsetskernel",
            "computeboffsetskernel",
            "computewgradboffsetskernel",
            "computewgradsplitkoffsetskernel",
            "generatewinogradtiles",
        ],
        Nvidia,
        "cuDNN",
        F(O::Other),
        D::None,
        No,
    ),
    r(
        &["scalepackedtensor"],
        Nvidia,
        "cuDNN",
        F(O::Elementwise),
        D::None,
        No,
    ),
    r(
        &[
            "winograd",
            "dgrad_engine",
            "wgrad_alg",
            "implicit_convolve",
            "fft2d_",
            "fft1d_",
            "explicit_convolve",
            "conv2d_grouped_direct",
        ],
        Nvidia,
        "cuDNN",
        F(O::Conv),
        D::Tags,
        ByType,
    ),
    // cuBLAS/cuBLASLt/cuDNN GEMM and convolution kernels named by architecture.
    r(
        &["^cudnn", "cutlass_cudnn", "_scudnn_", "_hcudnn_"],
        Nvidia,
        "cuDNN",
        GC,
        D::Tags,
        ByType,
    ),
    r(
        &[
            "^maxwell_",
            "^pascal_",
            "^volta_",
            "^turing_",
            "^ampere_",
            "^ada_",
            "^hopper_",
            "^blackwell_",
            "^sm50_",
            "^sm60_",
            "^sm70_",
            "^sm75_",
            "^sm80_",
            "^sm86_",
            "^sm89_",
            "^sm90_",
            "^sm100_",
            "^sm120_",
        ],
        Nvidia,
        "cuBLAS",
        GC,
        D::Tags,
        ByType,
    ),
    // cuBLAS's JIT kernels on Hopper and Blackwell
    // (`nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT`): type letters.
    r(&["^nvjet_"], Nvidia, "cuBLAS", F(O::Gemm), D::Nvjet, ByType),
    // TensorRT-LLM's generated batched GEMMs (MoE experts through FlashInfer
    // and vLLM on Blackwell), `bmm_{out}_{a}{b}_{acc}_...`:
    // `bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256...` is MXFP4 weights times
    // MXFP8 activations.
    r(
        &["^bmm_"],
        Nvidia,
        "TensorRT-LLM",
        F(O::Gemm),
        D::Tags,
        ByType,
    ),
    r(
        &["cutlass", "xmma", "cublaslt", "cublas"],
        Nvidia,
        "CUTLASS/cuBLAS",
        GC,
        D::Tags,
        ByType,
    ),
    // FBGEMM's names contain "gemm" but its GPU kernels here are embedding ops and permutes.
    r(
        &["fbgemm_gpu::permute", "permute_pooled_embs"],
        Any,
        "FBGEMM",
        F(O::Copy),
        D::None,
        No,
    ),
    r(
        &["fbgemm", "split_embedding", "embedding_codegen"],
        Any,
        "FBGEMM",
        F(O::Other),
        D::None,
        No,
    ),
    // Marlin: FP16/BF16 activations times 4-bit weights (vLLM's GPTQ/AWQ
    // path), `marlin::Marlin<...>`.
    r(&["marlin::"], Nvidia, "Marlin", F(O::Gemm), D::Tags, ByType),
    r(
        &[
            "gemv", "gemmsn", "gemmk1", "magma_", "sgemm", "hgemm", "gemm",
        ],
        Any,
        "BLAS",
        F(O::Gemm),
        D::Tags,
        ByType,
    ),
    // Triton (Inductor names its kernels by what they fuse).
    r(
        &["^triton_poi"],
        Any,
        "Triton",
        F(O::Elementwise),
        D::None,
        No,
    ),
    r(
        &["^triton_red", "^triton_per"],
        Any,
        "Triton",
        F(O::Reduction),
        D::None,
        No,
    ),
    r(
        &[
            "^triton_tem",
            "^triton_mm",
            "^triton_bmm",
            "_mm_kernel",
            "matmul_kernel",
            // triton_kernels' MoE GEMMs (gpt-oss in vLLM):
            // `_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu`.
            "matmul_ogs",
        ],
        Any,
        "Triton",
        GC,
        D::Tags,
        ByType,
    ),
    r(&["^triton"], Any, "Triton", F(O::Other), D::None, No),
    // PyTorch's own kernels.
    r(
        &[
            "catarraybatchedcopy",
            "copy_kernel",
            "copy_device_to_device",
            "transpose",
            "permute",
        ],
        Any,
        "PyTorch",
        F(O::Copy),
        D::None,
        No,
    ),
    r(
        &[
            "reduce_kernel",
            "softmax",
            "layer_norm",
            "batch_norm",
            "group_norm",
            "rms_norm",
            "norm_kernel",
            "nll_loss",
            "gammabetabackward",
            "cross_entropy",
            "max_pool",
            "avg_pool",
            "average_pool",
            "_pool_",
            "cunn_",
            "reduce",
        ],
        Any,
        "PyTorch",
        F(O::Reduction),
        D::None,
        No,
    ),
    r(
        &[
            "elementwise",
            "multi_tensor_apply",
            "dropout",
            "distribution",
            "fill_kernel",
            "fused_adam",
            "fused_sgd",
            "activation",
            "gelu",
            "silu",
        ],
        Any,
        "PyTorch",
        F(O::Elementwise),
        D::None,
        No,
    ),
    r(
        &["cub::", "radixsort", "fbgemm", "embedding", "index"],
        Any,
        "PyTorch",
        F(O::Other),
        D::None,
        No,
    ),
];
