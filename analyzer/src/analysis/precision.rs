//! Numeric class of a kernel from its name, and the speed-up a move to BF16
//! tensor cores would bring.
//!
//! Names follow the libraries' conventions: cuBLAS/CUTLASS kernels carry their
//! input types (`sgemm`, `gemm_fp16`, `bf16bf16_bf16f32`, `tf32`, `e4m3`,
//! `i8816`...), cuDNN convolutions carry theirs (`xmma_fprop_..._f16f16`), and
//! SIMT FP32 GEMMs are `sgemm`/`_sgemm_`/`gemmSN`. Anything that is not a GEMM
//! or convolution is `NonGemm`; NCCL/RCCL collectives are `Comm`.

use crate::model::Precision;

/// Classifies a kernel name.
pub fn classify(name: &str) -> Precision {
    let n = name.to_ascii_lowercase();
    if n.contains("nccl") || n.contains("rccl") {
        return Precision::Comm;
    }
    let gemm_like = [
        "gemm", "xmma", "cutlass", "conv", "fprop", "dgrad", "wgrad", "hmma", "imma", "wgmma",
        "matmul", "mma_",
    ]
    .iter()
    .any(|k| n.contains(k))
        || n.starts_with("sm80_")
        || n.starts_with("sm90_")
        || n.starts_with("sm100_");
    if !gemm_like {
        return Precision::NonGemm;
    }
    if n.contains("e4m3") || n.contains("e5m2") || n.contains("fp8") {
        return Precision::Fp8;
    }
    if n.contains("int8")
        || n.contains("i8816")
        || n.contains("imma")
        || n.contains("s8s8")
        || n.contains("i8i8")
    {
        return Precision::Int8;
    }
    if n.contains("bf16") {
        return Precision::Bf16;
    }
    if n.contains("tf32") {
        return Precision::Tf32;
    }
    if n.contains("fp16")
        || n.contains("f16")
        || n.contains("h884")
        || n.contains("h1688")
        || n.contains("h16816")
        || n.contains("hgemm")
        || n.contains("hmma")
        || n.contains("half")
    {
        return Precision::Fp16;
    }
    if n.contains("sgemm")
        || n.contains("fp32")
        || n.contains("f32f32")
        || n.contains("s1688")
        || n.contains("gemmsn")
        || n.contains("scudnn")
        || n.contains("float")
    {
        return Precision::Fp32;
    }
    // A GEMM/conv with no type in its name: the CUDA default is FP32 SIMT.
    Precision::Fp32
}

/// The speed-up assumed for moving `from` GEMM/conv time to BF16 tensor cores
/// on a GPU of compute capability `cc`, with a sentence saying why.
pub fn bf16_speedup(from: Precision, cc: (u32, u32)) -> (f64, String) {
    // Dense peak ratios from the vendors' datasheets (A100: FP32 19.5, TF32 156,
    // BF16 312 TFLOP/s; H100 SXM: FP32 67, TF32 495, BF16 990), discounted
    // because real GEMMs reach a smaller share of the tensor-core peak.
    let arch = match cc.0 {
        0 => "an unknown GPU",
        7 => "Volta/Turing",
        8 => "Ampere/Ada",
        9 => "Hopper",
        _ => "Blackwell or newer",
    };
    match (from, cc.0) {
        (Precision::Fp32, 7) => (
            2.5,
            format!("FP32 -> FP16 tensor cores ~2.5x on {arch} (no BF16 before Ampere)"),
        ),
        (Precision::Fp32, 0) => (
            4.0,
            format!("FP32 -> BF16 tensor cores ~4x assumed on {arch}"),
        ),
        (Precision::Fp32, _) => (
            6.0,
            format!("FP32 SIMT -> BF16 tensor cores ~6x on {arch} (peak ratio ~15x, discounted)"),
        ),
        (Precision::Tf32, 7) | (Precision::Tf32, 0) => {
            (1.6, format!("TF32 -> BF16 ~1.6x assumed on {arch}"))
        }
        (Precision::Tf32, _) => (
            1.8,
            format!("TF32 -> BF16 ~1.8x on {arch} (peak ratio 2x, discounted)"),
        ),
        _ => (1.0, "already reduced precision".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_real_kernel_names() {
        let cases = [
            ("ampere_sgemm_128x64_nn", Precision::Fp32),
            ("volta_sgemm_128x32_tn", Precision::Fp32),
            (
                "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
                Precision::Bf16,
            ),
            (
                "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn",
                Precision::Fp16,
            ),
            (
                "sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_stage4",
                Precision::Tf32,
            ),
            (
                "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_nn_align8>(Params)",
                Precision::Bf16,
            ),
            ("sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32", Precision::Fp8),
            (
                "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
                Precision::NonGemm,
            ),
            (
                "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
                Precision::Comm,
            ),
            ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", Precision::Comm),
            (
                "void cudnn::detail::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false, false, true>",
                Precision::Fp32,
            ),
            (
                "sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc",
                Precision::Fp16,
            ),
            ("Memcpy HtoD (Pageable -> Device)", Precision::NonGemm),
        ];
        for (name, want) in cases {
            assert_eq!(classify(name), want, "{name}");
        }
    }

    #[test]
    fn speedups_state_their_assumption() {
        let (f, why) = bf16_speedup(Precision::Fp32, (9, 0));
        assert!(f > 1.0 && why.contains("Hopper"));
        assert_eq!(bf16_speedup(Precision::Bf16, (9, 0)).0, 1.0);
        assert!(bf16_speedup(Precision::Tf32, (8, 0)).0 < f);
    }
}
