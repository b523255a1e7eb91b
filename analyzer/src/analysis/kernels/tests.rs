//! The classifier against real kernel names: each with the op class, input
//! precision and tensor-core use an expert reads from it.
//!
//! Sources:
//! - `CORPUS`: every GEMM, convolution, attention, copy and collective kernel
//!   (and a few of each other class) from the Kineto traces of the shared
//!   corpus (`../shared/corpus/kineto/`, listed in its README: HolisticTraceAnalysis
//!   `tests/data`, PARAM `et_replay/tests/inputs`, TraceLens `tests/traces`,
//!   Kineto `docs/traces`), pulled from events with `cat` "kernel"; each group
//!   is headed by the trace it first appears in. GPUs: V100, RTX 2080 Ti,
//!   A100, H100, GP100, MI210, MI250, MI300X.
//! - `PUBLIC`: names from public code, cited per group.

use super::*;

#[rustfmt::skip]
const CORPUS: &[(&str, &str, &str, bool)] = &[
    // HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz
    (r#"Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_EPS0_GRVWA1_GRVWB1_GSUAMB_ISA90a_IU1_K1_LBSPPA0_LBSPPB0_LBSPPM0_LPA0_LPB0_LPM0_LRVW1_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS2_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO1_SRVW0_SSO0_SVW1_TLDS0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG64_4_1"#, "gemm", "fp32", true),
    (r#"Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_EPS0_GRVWA2_GRVWB2_GSUAMB_ISA90a_IU1_K1_LBSPPA128_LBSPPB128_LBSPPM0_LPA8_LPB8_LPM0_LRVW4_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS2_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO1_SRVW0_SSO0_SVW1_TLDS1_USFGROn1_VSn1_VWA1_VWB1_WSGRA1_WSGRB1_WS64_WG64_4_1"#, "gemm", "fp32", true),
    (r#"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})"#, "copy", "unknown", false),
    (r#"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::mse_backward_cuda_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float, float)#1}>(at::TensorIteratorBase&, at::native::mse_backward_cuda_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float, float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::mse_backward_cuda_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float, float)#1}>(at::TensorIteratorBase&, at::native::mse_backward_cuda_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float, float)#1} const&)::{lambda(int)#1})"#, "elementwise", "unknown", false),
    // HolisticTraceAnalysis/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz
    (r#"ampere_gcgemm_64x64_nt"#, "gemm", "fp32", false),
    (r#"ampere_sgemm_32x32_sliced1x4_tn"#, "gemm", "fp32", false),
    (r#"cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1"#, "conv", "fp32", false),
    (r#"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_alignc4_execute_kernel_cudnn"#, "conv", "tf32", true),
    (r#"void at::native::(anonymous namespace)::adaptive_average_pool<float>(float const*, float*, int, int, int, int, long, long, long)"#, "reduction", "unknown", false),
    (r#"void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, at::native::templates::cuda::uniform_and_transform<float, float, 4ul, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(curandStatePhilox4_32_10*)#2}, at::native::(anonymous namespace)::distribution_nullary_kernel<float, float, 4, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_and_transform<float, float, 4ul, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(curandStatePhilox4_32_10*)#2}, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_and_transform<float, float, 4ul, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(curandStatePhilox4_32_10*)#2} const&, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(int, float)#1}>(int, at::PhiloxCudaState, at::native::templates::cuda::uniform_and_transform<float, float, 4ul, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(curandStatePhilox4_32_10*)#2}, at::native::(anonymous namespace)::distribution_nullary_kernel<float, float, 4, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_and_transform<float, float, 4ul, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(curandStatePhilox4_32_10*)#2}, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_and_transform<float, float, 4ul, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(curandStatePhilox4_32_10*)#2} const&, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(int, float)#1})"#, "elementwise", "unknown", false),
    (r#"void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)"#, "elementwise", "unknown", false),
    (r#"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)"#, "copy", "unknown", false),
    (r#"void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*, cublasLtEpilogue_t, int, float*, long, void*, long, long, long, float*, long, int*)"#, "elementwise", "unknown", false),
    (r#"void fft2d_c2r_32x32<float, false, false, 0u, false, false>(float*, float2 const*, int, int, int, int, int, int, int, int, int, float, float, cudnn::reduced_divisor, bool, float*, float*, int2, int, int)"#, "conv", "fp32", false),
    (r#"void fft2d_r2c_32x32<float, false, 0u, false>(float2*, float const*, int, int, int, int, int, int, int, int, int, cudnn::reduced_divisor, bool, int2, int, int)"#, "conv", "fp32", false),
    (r#"void fft2d_r2c_32x32<float, false, 5u, true>(float2*, float const*, int, int, int, int, int, int, int, int, int, cudnn::reduced_divisor, bool, int2, int, int)"#, "conv", "fp32", false),
    // HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz
    (r#"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})"#, "copy", "unknown", false),
    (r#"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::WelfordOps<float, float, int, float, thrust::pair<float, float> >, unsigned int, float, 2> >(at::native::ReduceOp<float, at::native::WelfordOps<float, float, int, float, thrust::pair<float, float> >, unsigned int, float, 2>)"#, "reduction", "unknown", false),
    (r#"volta_sgemm_128x32_sliced1x4_tn"#, "gemm", "fp32", false),
    (r#"volta_sgemm_64x64_tt"#, "gemm", "fp32", false),
    // HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz
    (r#"_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22ImplicitGemmMultistageINS_4gemm9GemmShapeILi128ELi128ELi32EEENS4_52Conv2dWgradOutputGradientTileAccessIteratorOptimizedINS_11MatrixShapeILi128ELi32EEENS_10tfloat32_tENS_9transform29PitchLinearWarpRakedThreadMapINS_16PitchLinearShapeILi128ELi32EEELi128ENSF_ILi8ELi4EEELi4EEENS_12AlignedArrayISC_Li4ELi16EEEEENSD_11threadblock25RegularTileAccessIteratorISB_SC_NS_6layout40ColumnMajorTensorOpMultiplicandCongruousILi32ELi32EEELi1ESI_Li16EEELNS_4arch14CacheOperation4KindE0ENS4_48Conv2dWgradActivationTileAccessIteratorOptimizedINSA_ILi32ELi128EEESC_SI_SK_EENSN_ISW_SC_NSO_37RowMajorTensorOpMultiplicandCongruousILi32ELi32EEELi0ESI_Li16EEELSU_0ENS6_11threadblock9MmaPolicyINS6_4warp11MmaTensorOpINS7_ILi64ELi64ELi32EEESC_SQ_SC_SZ_fNSO_8RowMajorENS13_17MmaTensorOpPolicyINSS_3MmaINS7_ILi16ELi8ELi8EEELi32ESC_S16_SC_NSO_11ColumnMajorEfS16_NSS_13OpMultiplyAddEEENSA_ILi1ELi1EEEEELi1ELb0EbEENSA_ILi0ELi0EEES1G_Li1EEELi4EbEENS_8epilogue11threadblock8EpilogueIS8_S1F_Li1ENS1K_22PredicatedTileIteratorINS1K_26OutputTileOptimalThreadMapINS1K_15OutputTileShapeILi128ELi8ELi2ELi1ELi1EEENS1O_ILi1ELi8ELi1ELi1ELi8EEELi128ELi4ELi32EEEfLb0ENSO_9NoPermuteELb0EEENS1J_4warp24FragmentIteratorTensorOpIS15_S19_fNS_5ArrayIfLi4ELb1EEES16_EENS1U_20TileIteratorTensorOpIS15_S19_fS16_EENS1K_18SharedLoadIteratorINS1R_18CompactedThreadMapEfLi16EEENS1J_6thread17LinearCombinationIfLi4EffLNS24_9ScaleType4KindE0ELNS_15FloatRoundStyleE2EEENSA_ILi0ELi8EEELi2ELi1EEENS11_30GemmIdentityThreadblockSwizzleILi4EEELNS1_8OperatorE2ENS1_17Conv2dProblemSizeELNS1_9GroupModeE0EEEEEvNT_6ParamsE"#, "conv", "tf32", true),
    (r#"_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22ImplicitGemmMultistageINS_4gemm9GemmShapeILi64ELi128ELi32EEENS4_52Conv2dWgradOutputGradientTileAccessIteratorOptimizedINS_11MatrixShapeILi64ELi32EEENS_10tfloat32_tENS_9transform29PitchLinearWarpRakedThreadMapINS_16PitchLinearShapeILi64ELi32EEELi128ENSF_ILi8ELi4EEELi4EEENS_12AlignedArrayISC_Li4ELi16EEEEENSD_11threadblock25RegularTileAccessIteratorISB_SC_NS_6layout40ColumnMajorTensorOpMultiplicandCongruousILi32ELi32EEELi1ESI_Li16EEELNS_4arch14CacheOperation4KindE0ENS4_48Conv2dWgradActivationTileAccessIteratorOptimizedINSA_ILi32ELi128EEESC_NSE_INSF_ILi128ELi32EEELi128ESH_Li4EEESK_EENSN_ISW_SC_NSO_37RowMajorTensorOpMultiplicandCongruousILi32ELi32EEELi0ESY_Li16EEELSU_0ENS6_11threadblock9MmaPolicyINS6_4warp11MmaTensorOpINS7_ILi32ELi64ELi32EEESC_SQ_SC_S11_fNSO_8RowMajorENS15_17MmaTensorOpPolicyINSS_3MmaINS7_ILi16ELi8ELi8EEELi32ESC_S18_SC_NSO_11ColumnMajorEfS18_NSS_13OpMultiplyAddEEENSA_ILi1ELi1EEEEELi1ELb0EbEENSA_ILi0ELi0EEES1I_Li1EEELi3EbEENS_8epilogue11threadblock8EpilogueIS8_S1H_Li1ENS1M_22PredicatedTileIteratorINS1M_26OutputTileOptimalThreadMapINS1M_15OutputTileShapeILi128ELi8ELi2ELi1ELi1EEENS1Q_ILi1ELi4ELi1ELi1ELi4EEELi128ELi4ELi32EEEfLb0ENSO_9NoPermuteELb0EEENS1L_4warp24FragmentIteratorTensorOpIS17_S1B_fNS_5ArrayIfLi4ELb1EEES18_EENS1W_20TileIteratorTensorOpIS17_S1B_fS18_EENS1M_18SharedLoadIteratorINS1T_18CompactedThreadMapEfLi16EEENS1L_6thread17LinearCombinationIfLi4EffLNS26_9ScaleType4KindE0ELNS_15FloatRoundStyleE2EEENSA_ILi0ELi8EEELi2ELi1EEENS13_30GemmIdentityThreadblockSwizzleILi4EEELNS1_8OperatorE2ENS1_17Conv2dProblemSizeELNS1_9GroupModeE0EEEEEvNT_6ParamsE"#, "conv", "tf32", true),
    (r#"ampere_sgemm_32x128_nt"#, "gemm", "fp32", false),
    (r#"cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1"#, "conv", "fp32", false),
    (r#"ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"#, "communication", "unknown", false),
    (r#"sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer"#, "conv", "tf32", true),
    (r#"sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer"#, "conv", "tf32", true),
    (r#"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_alignc4_execute_kernel_cudnn_infer"#, "conv", "tf32", true),
    (r#"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer"#, "conv", "tf32", true),
    (r#"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize256x64x32_stage3_warpsize4x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer"#, "conv", "tf32", true),
    (r#"sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer"#, "conv", "tf32", true),
    (r#"sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_train"#, "conv", "tf32", true),
    (r#"sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_split_k_kernel_cudnn_train"#, "conv", "tf32", true),
    (r#"sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_tensor16x8x8_t1r1s1_execute_kernel_cudnn_train"#, "conv", "tf32", true),
    (r#"sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x64x64_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_train"#, "conv", "tf32", true),
    (r#"void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 1, 128, 1>(at::native::(anonymous namespace)::OpaqueType<4u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"#, "copy", "unknown", false),
    (r#"void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<8u>, unsigned int, 1, 128, 1>(at::native::(anonymous namespace)::OpaqueType<8u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<8u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"#, "copy", "unknown", false),
    (r#"void cask_cudnn_infer::computeOffsetsKernel<false, false>(cask_cudnn_infer::ComputeOffsetsParams)"#, "other", "unknown", false),
    (r#"void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*, float const*, float*, void*, long, float*, int*)"#, "reduction", "unknown", false),
    (r#"void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, true, true, false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*, float const*, float*, void*, long, float*, int*)"#, "reduction", "unknown", false),
    (r#"void cudnn::ops::nhwcToNchwKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>(cudnn::ops::nhwc2nchw_params_t<float>, float const*, float*)"#, "copy", "unknown", false),
    (r#"void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)"#, "gemm", "fp32", false),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nt_align4>(cutlass_80_tensorop_s1688gemm_256x64_16x4_nt_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align4>(cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_128x128_16x4_nhwc_unity_stride_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_128x128_16x4_nhwc_unity_stride_align4::Params)"#, "conv", "tf32", true),
    (r#"void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_256x64_16x4_nhwc_unity_stride_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_256x64_16x4_nhwc_unity_stride_align4::Params)"#, "conv", "tf32", true),
    (r#"void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_32x3_nhwc_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_32x3_nhwc_align4::Params)"#, "conv", "tf32", true),
    (r#"void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_64x256_16x4_nhwc_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_64x256_16x4_nhwc_align4::Params)"#, "conv", "tf32", true),
    (r#"void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_64x256_32x4_nhwc_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_64x256_32x4_nhwc_align4::Params)"#, "conv", "tf32", true),
    (r#"void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_align4>(cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_align4::Params)"#, "conv", "tf32", true),
    (r#"void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_128x128_32x4_nhwc_align4>(cutlass_tensorop_s1688fprop_optimized_tf32_128x128_32x4_nhwc_align4::Params)"#, "conv", "tf32", true),
    (r#"void cutlass_cudnn_train::Kernel<cutlass_tensorop_s1688wgrad_optimized_tf32_256x128_16x3_nhwc_align4>(cutlass_tensorop_s1688wgrad_optimized_tf32_256x128_16x3_nhwc_align4::Params)"#, "conv", "tf32", true),
    (r#"void cutlass_cudnn_train::Kernel<cutlass_tensorop_s1688wgrad_optimized_tf32_256x64_16x4_nhwc_align4>(cutlass_tensorop_s1688wgrad_optimized_tf32_256x64_16x4_nhwc_align4::Params)"#, "conv", "tf32", true),
    // HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz
    (r#"ampere_sgemm_128x64_nn"#, "gemm", "fp32", false),
    (r#"split_embedding_backward_codegen_find_long_segments(at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, int, int, bool)"#, "other", "unknown", false),
    (r#"triton__0d1d23d"#, "other", "unknown", false),
    (r#"triton__0d1d2d"#, "other", "unknown", false),
    (r#"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 1, 64, 64>(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"#, "copy", "unknown", false),
    (r#"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#6}::operator()() const::{lambda(double)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#6}::operator()() const::{lambda(double)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)"#, "copy", "unknown", false),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_16x6_tn_align4>(cutlass_80_tensorop_s1688gemm_128x64_16x6_tn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align1>(cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nt_align1>(cutlass_80_tensorop_s1688gemm_256x128_32x3_nt_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_tn_align1>(cutlass_80_tensorop_s1688gemm_256x128_32x3_tn_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1>(cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align1>(cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align1>(cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align1::Params)"#, "gemm", "tf32", true),
    (r#"void fbgemm_gpu::permute_2D_data_kernel<true, int, int, float>(int, int, int, int const*, float const*, int const*, int const*, int const*, int*, float*)"#, "copy", "unknown", false),
    (r#"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false, false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>, float, float)"#, "gemm", "fp32", false),
    (r#"void permute_pooled_embs_kernel<float>(float const*, long const*, long const*, long const*, float*, long, long, long)"#, "copy", "unknown", false),
    // HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz
    (r#"cudnn_infer_volta_scudnn_128x128_relu_medium_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_infer_volta_scudnn_128x128_relu_small_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_infer_volta_scudnn_128x128_stridedB_small_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_infer_volta_scudnn_128x32_sliced1x4_ldg4_relu_exp_medium_nhwc_tn_v1"#, "conv", "fp32", false),
    (r#"cudnn_infer_volta_scudnn_128x32_sliced1x4_ldg4_relu_exp_small_nhwc_tn_v1"#, "conv", "fp32", false),
    (r#"cudnn_infer_volta_scudnn_128x64_3dconv_fprop_medium_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_infer_volta_scudnn_128x64_relu_small_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_infer_volta_scudnn_128x64_relu_xregs_large_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_infer_volta_scudnn_128x64_stridedB_interior_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_infer_volta_scudnn_128x64_stridedB_small_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_infer_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1"#, "conv", "fp32", false),
    (r#"cudnn_train_volta_scudnn_128x128_stridedB_splitK_interior_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_train_volta_scudnn_128x128_stridedB_splitK_medium_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_train_volta_scudnn_128x64_stridedB_splitK_xregs_large_nn_v1"#, "conv", "fp32", false),
    (r#"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)0>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)"#, "copy", "unknown", false),
    (r#"void wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)"#, "conv", "fp32", false),
    // HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz
    (r#"ampere_sgemm_128x128_tn"#, "gemm", "fp32", false),
    (r#"ampere_sgemm_128x128_tt"#, "gemm", "fp32", false),
    (r#"ampere_sgemm_128x32_nn"#, "gemm", "fp32", false),
    (r#"ampere_sgemm_32x128_nn"#, "gemm", "fp32", false),
    (r#"ampere_sgemm_32x128_tn"#, "gemm", "fp32", false),
    (r#"ampere_sgemm_32x32_sliced1x4_nn"#, "gemm", "fp32", false),
    (r#"ampere_sgemm_32x32_sliced1x4_nt"#, "gemm", "fp32", false),
    (r#"ampere_sgemm_64x32_sliced1x4_nt"#, "gemm", "fp32", false),
    (r#"ampere_sgemm_64x64_nn"#, "gemm", "fp32", false),
    (r#"std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, float, false, true, false, false, 7, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)"#, "gemm", "fp32", false),
    (r#"std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, float, false, true, true, false, 7, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)"#, "gemm", "fp32", false),
    (r#"void at::native::index_elementwise_kernel<128, 4, at::native::index_copy_kernel_impl<at::native::OpaqueType<4> >(at::TensorIterator&, long, long, long)::{lambda(int)#1}>(int, at::native::index_copy_kernel_impl<at::native::OpaqueType<4> >(at::TensorIterator&, long, long, long)::{lambda(int)#1})"#, "copy", "unknown", false),
    (r#"void at::native::index_elementwise_kernel<128, 4, at::native::index_copy_kernel_impl<at::native::OpaqueType<8> >(at::TensorIterator&, long, long, long)::{lambda(int)#1}>(int, at::native::index_copy_kernel_impl<at::native::OpaqueType<8> >(at::TensorIterator&, long, long, long)::{lambda(int)#1})"#, "copy", "unknown", false),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align1>(cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align1>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nt_align1>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nt_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nt_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nt_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align1>(cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x5_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x5_nn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x5_nt_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x5_nt_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x256_32x3_nn_align1>(cutlass_80_tensorop_s1688gemm_128x256_32x3_nn_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x256_32x3_tn_align1>(cutlass_80_tensorop_s1688gemm_128x256_32x3_tn_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_16x6_nn_align4>(cutlass_80_tensorop_s1688gemm_128x64_16x6_nn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_16x6_nt_align1>(cutlass_80_tensorop_s1688gemm_128x64_16x6_nt_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_16x6_nt_align4>(cutlass_80_tensorop_s1688gemm_128x64_16x6_nt_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x6_nn_align4>(cutlass_80_tensorop_s1688gemm_128x64_32x6_nn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_align1>(cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x6_tn_align4>(cutlass_80_tensorop_s1688gemm_128x64_32x6_tn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4>(cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_16x3_nt_align4>(cutlass_80_tensorop_s1688gemm_256x128_16x3_nt_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nt_align4>(cutlass_80_tensorop_s1688gemm_256x128_32x3_nt_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_tn_align4>(cutlass_80_tensorop_s1688gemm_256x128_32x3_tn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_32x3_nt_align1>(cutlass_80_tensorop_s1688gemm_256x64_32x3_nt_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x128_32x3_nt_align4>(cutlass_80_tensorop_s1688gemm_64x128_32x3_nt_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x128_32x3_tn_align1>(cutlass_80_tensorop_s1688gemm_64x128_32x3_tn_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x128_32x6_nn_align4>(cutlass_80_tensorop_s1688gemm_64x128_32x6_nn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x128_32x6_nt_align4>(cutlass_80_tensorop_s1688gemm_64x128_32x6_nt_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x10_nt_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x10_nt_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align1>(cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x4_nt_align1>(cutlass_80_tensorop_s1688gemm_64x64_32x4_nt_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x4_nt_align4>(cutlass_80_tensorop_s1688gemm_64x64_32x4_nt_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x4_tn_align4>(cutlass_80_tensorop_s1688gemm_64x64_32x4_tn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>(cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nt_align1>(cutlass_80_tensorop_s1688gemm_64x64_32x6_nt_align1::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nt_align4>(cutlass_80_tensorop_s1688gemm_64x64_32x6_nt_align4::Params)"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4::Params)"#, "gemm", "tf32", true),
    // HolisticTraceAnalysis/tests/data/trace_diff/test/test.json.gz
    (r#"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"#, "communication", "unknown", false),
    (r#"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)"#, "communication", "unknown", false),
    (r#"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})"#, "copy", "unknown", false),
    (r#"void at::native::unrolled_elementwise_kernel<at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#12}::operator()() const::{lambda(double)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#12}::operator()() const::{lambda(double)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)"#, "copy", "unknown", false),
    (r#"void at::native::unrolled_elementwise_kernel<at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)"#, "copy", "unknown", false),
    (r#"void at::native::unrolled_elementwise_kernel<at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#6}::operator()() const::{lambda(int)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#6}::operator()() const::{lambda(int)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)"#, "copy", "unknown", false),
    (r#"void at::native::unrolled_elementwise_kernel<at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#8}::operator()() const::{lambda(long)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#8}::operator()() const::{lambda(long)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)"#, "copy", "unknown", false),
    (r#"void fbgemm_gpu::permute_indices_weights_kernel<false, int, decltype(nullptr)>(int, int, int, int const*, decltype(nullptr) const*, int const*, int const*, int const*, int*, decltype(nullptr)*)"#, "copy", "unknown", false),
    (r#"void fbgemm_gpu::permute_indices_weights_kernel<true, int, float>(int, int, int, int const*, float const*, int const*, int const*, int const*, int*, float*)"#, "copy", "unknown", false),
    (r#"void gemmk1_kernel<float, 256, 5, false, false, false, false, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float, true, true>(cublasGemmk1Params<float, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float, biasType<cublasGemvTensorStridedBatched<float>::value_type, float>::type>)"#, "gemm", "fp32", false),
    (r#"void gemv2N_kernel<int, int, float, float, float, float, 128, 8, 4, 4, 1, false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)"#, "gemm", "fp32", false),
    (r#"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>, float, float)"#, "gemm", "fp32", false),
    (r#"void magma_sgemmEx_kernel<float, float, float, false, false, 6, 3, 5, 3, 3>(int, int, int, Tensor, int, Tensor, int, Tensor, int, Tensor, int, int, int, float const*, float const*, float, float, int, cublasLtEpilogue_t, int, void const*, long)"#, "gemm", "fp32", false),
    (r#"void magma_sgemmEx_kernel<float, float, float, true, false, 6, 4, 6, 3, 4>(int, int, int, Tensor, int, Tensor, int, Tensor, int, Tensor, int, int, int, float const*, float const*, float, float, int, cublasLtEpilogue_t, int, void const*, long)"#, "gemm", "fp32", false),
    (r#"volta_sgemm_128x128_tn"#, "gemm", "fp32", false),
    (r#"volta_sgemm_128x32_sliced1x4_nn"#, "gemm", "fp32", false),
    (r#"volta_sgemm_128x32_sliced1x4_nt"#, "gemm", "fp32", false),
    (r#"volta_sgemm_128x64_tn"#, "gemm", "fp32", false),
    (r#"volta_sgemm_32x128_nn"#, "gemm", "fp32", false),
    (r#"volta_sgemm_32x128_nt"#, "gemm", "fp32", false),
    (r#"volta_sgemm_32x128_tn"#, "gemm", "fp32", false),
    (r#"volta_sgemm_32x128_tt"#, "gemm", "fp32", false),
    (r#"volta_sgemm_32x32_sliced1x4_nn"#, "gemm", "fp32", false),
    (r#"volta_sgemm_32x32_sliced1x4_nt"#, "gemm", "fp32", false),
    (r#"volta_sgemm_64x32_sliced1x4_nt"#, "gemm", "fp32", false),
    (r#"volta_sgemm_64x32_sliced1x4_tn"#, "gemm", "fp32", false),
    // HolisticTraceAnalysis/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz
    (r#"void gemv2N_kernel<int, int, float, float, float, float, 128, 1, 4, 4, 1, false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)"#, "gemm", "fp32", false),
    // TraceLens/tests/traces/mi210/gpu_only_trace/gpu_only_trace.json.gz
    (r#"Cijk_Ailk_Bjlk_BBS_BH_Bias_HAS_SAV_UserArgs_MT128x64x32_MI32x32x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA90a_IU1_K1_LBSPPA0_LBSPPB0_LBSPPM0_LPA0_LPB0_LPM0_LRVW4_LWPMn1_MIAV0_MIWT2_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS2_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO1_SRVW0_SSO0_SVW1_SK0_SKXCCM0_TLDS0_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA2_VWB1_WSGRA0_WSGRB0_WS64_WG64_4_1"#, "gemm", "bf16", true),
    (r#"Cijk_Ailk_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs_MT16x64x64_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA4_GRVWB4_GSUAMB_GLS0_ISA90a_IU1_K1_LBSPPA256_LBSPPB128_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS2_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO1_SRVW0_SSO0_SVW1_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB1_WS64_WG16_16_1"#, "gemm", "bf16", true),
    (r#"Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs_MT32x32x64_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA90a_IU1_K1_LBSPPA128_LBSPPB128_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS2_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO1_SRVW0_SSO0_SVW1_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA1_WSGRB1_WS64_WG32_8_1"#, "gemm", "bf16", true),
    (r#"SubTensorOpWithCastTensor1d"#, "elementwise", "unknown", false),
    (r#"SubTensorOpWithScalar1d"#, "elementwise", "unknown", false),
    (r#"batched_transpose_16x64_pack_1x4_ediv_1x2_half"#, "copy", "unknown", false),
    (r#"batched_transpose_256x4_half"#, "copy", "unknown", false),
    (r#"batched_transpose_32x64_pack_2x4_ediv_1x2_half"#, "copy", "unknown", false),
    (r#"batched_transpose_4x64_half"#, "copy", "unknown", false),
    (r#"batched_transpose_64x16_pack_4x1_ediv_2x1_half"#, "copy", "unknown", false),
    (r#"batched_transpose_64x32_pack_4x2_ediv_2x1_half"#, "copy", "unknown", false),
    (r#"batched_transpose_64x4_half"#, "copy", "unknown", false),
    (r#"batched_transpose_64x64_pack_4x4_ediv_4x4_half"#, "copy", "unknown", false),
    (r#"igemm_bwd_gtcx2_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x1x2_1x4x1x64_mh_gkgs"#, "conv", "bf16", true),
    (r#"igemm_bwd_gtcx2_nhwc_bf16_bx0_ex1_bt128x64x32_wt32x32x8_ws1x1_wr1x2_ta1x8x2x1_1x4x1x64_tb1x4x1x2_1x8x1x32_mh_gkgs"#, "conv", "bf16", true),
    (r#"igemm_bwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x128x32_wt16x64x4_ws1x1_wr1x1_ta1x4x1x1_1x8x1x32_tb1x4x1x4_1x8x1x32_mh_gkgs"#, "conv", "bf16", true),
    (r#"igemm_bwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x64x32_wt16x64x4_ws1x1_wr1x1_ta1x8x1x1_1x4x1x32_tb1x8x1x2_1x4x1x32_mh_gkgs"#, "conv", "bf16", true),
    (r#"igemm_bwd_gtcx2_nhwc_bf16_bx0_ex1_bt64x128x32_wt32x32x8_ws1x1_wr2x1_ta1x8x1x1_1x4x1x64_tb1x8x1x2_1x4x1x64_mh_gkgs"#, "conv", "bf16", true),
    (r#"igemm_bwd_gtcx2_nhwc_bf16_bx0_ex1_bt64x64x64_wt16x16x16_ws1x1_wr2x2_ta1x8x2x1_1x8x1x32_tb1x8x1x2_1x8x1x32_mh"#, "conv", "bf16", true),
    (r#"igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x2x1_1x4x1x64_gkgs"#, "conv", "bf16", true),
    (r#"igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt256x64x8_wt64x16x4_ws1x1_wr2x2_ta1x1x8x1_1x8x1x32_tb1x1x2x1_1x8x1x32_me"#, "conv", "bf16", true),
    (r#"igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x128x32_wt16x64x4_ws1x1_wr1x1_ta1x4x1x1_1x8x1x32_tb1x4x4x1_1x8x1x32_gkgs"#, "conv", "bf16", true),
    (r#"igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x256x32_wt16x64x4_ws1x1_wr1x2_ta1x4x1x1_1x8x1x32_tb1x4x8x1_1x8x1x32_gkgs"#, "conv", "bf16", true),
    (r#"igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt64x64x64_wt16x16x16_ws1x1_wr2x2_ta1x8x2x1_1x8x1x32_tb1x8x2x1_1x8x1x32"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt128x128x16_wt32x32x8_ws1x1_wr2x2_ta1x4x1x2_1x4x1x64_tb1x4x1x2_1x4x1x64_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt128x64x32_wt32x32x8_ws1x1_wr1x2_ta1x4x1x4_1x8x1x32_tb1x4x1x2_1x8x1x32_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8_ws2x1_wr2x2_ta1x4x1x4_1x4x1x64_tb1x4x1x2_1x4x1x64_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt64x32x32_wt16x16x16_ws1x1_wr2x1_ta1x4x1x2_1x8x1x32_tb1x4x1x1_1x8x1x32_vs1_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt64x64x64_wt32x32x8_ws1x1_wr1x1_ta1x4x1x4_1x16x1x16_tb1x4x1x4_1x16x1x16_gkgs"#, "conv", "bf16", true),
    (r#"void at::native::(anonymous namespace)::max_pool_backward_nchw<c10::BFloat16, float>(c10::BFloat16 const*, long const*, int, long, long, long, int, int, int, int, int, int, int, int, int, int, c10::BFloat16*)"#, "reduction", "unknown", false),
    (r#"void at::native::(anonymous namespace)::max_pool_forward_nchw<c10::BFloat16>(int, c10::BFloat16 const*, long, long, long, int, int, int, int, int, int, int, int, int, int, c10::BFloat16*, long*)"#, "reduction", "unknown", false),
    (r#"void at::native::(anonymous namespace)::unrolled_elementwise_kernel_for_multi_outputs<3, at::native::(anonymous namespace)::batch_norm_update_stats_and_invert(at::Tensor const&, at::Tensor const&, at::Tensor const&, at::Tensor const&, double, double, long)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(float, float, c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 7ul>, TrivialOffsetCalculator<4, unsigned int>, TrivialOffsetCalculator<3, unsigned int> >(int, at::native::(anonymous namespace)::batch_norm_update_stats_and_invert(at::Tensor const&, at::Tensor const&, at::Tensor const&, at::Tensor const&, double, double, long)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(float, float, c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 7ul>, TrivialOffsetCalculator<4, unsigned int>, TrivialOffsetCalculator<3, unsigned int>)"#, "reduction", "unknown", false),
    (r#"void at::native::batch_norm_backward_kernel<c10::BFloat16, c10::BFloat16, float, int>(at::GenericPackedTensorAccessor<c10::BFloat16 const, 3ul, at::DefaultPtrTraits, int>, at::GenericPackedTensorAccessor<c10::BFloat16 const, 3ul, at::DefaultPtrTraits, int>, at::GenericPackedTensorAccessor<c10::BFloat16, 3ul, at::DefaultPtrTraits, int>, at::GenericPackedTensorAccessor<c10::BFloat16, 1ul, at::DefaultPtrTraits, int>, at::GenericPackedTensorAccessor<c10::BFloat16, 1ul, at::DefaultPtrTraits, int>, at::GenericPackedTensorAccessor<c10::BFloat16 const, 1ul, at::DefaultPtrTraits, int>, at::GenericPackedTensorAccessor<c10::BFloat16 const, 1ul, at::DefaultPtrTraits, int>, at::GenericPackedTensorAccessor<c10::BFloat16 const, 1ul, at::DefaultPtrTraits, int>, at::GenericPackedTensorAccessor<float const, 1ul, at::DefaultPtrTraits, int>, at::GenericPackedTensorAccessor<float const, 1ul, at::DefaultPtrTraits, int>, bool, float)"#, "reduction", "unknown", false),
    (r#"void at::native::elementwise_kernel_manual_unroll<128, 8, at::native::gpu_kernel_impl_nocast<at::native::BUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int, bool)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int, bool)#1})"#, "elementwise", "unknown", false),
    (r#"void at::native::elementwise_kernel_manual_unroll<128, 8, at::native::gpu_kernel_impl_nocast<at::native::mse_backward_cuda_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16, c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::mse_backward_cuda_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16, c10::BFloat16)#1} const&)::{lambda(int, bool)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::mse_backward_cuda_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16, c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::mse_backward_cuda_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16, c10::BFloat16)#1} const&)::{lambda(int, bool)#1})"#, "elementwise", "unknown", false),
    // TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz
    (r#"Cijk_Ailk_Bjlk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x32x64_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI1_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1_LDSTI0_LBSPPA512_LBSPPB256_LBSPPM0_LPA0_LPB16_LPM0_LRVW4_LWPMn1_MIAV0_MIWT4_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS8_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW4_SK0_SKFTR0_SKXCCM0_TLDS0_ULSGRO1_USL1_UIOFGRO0_USFGROn1_VSn1_VWA4_VWB1_WSGRA0_WSGRB0_WS64_WG16_8_2"#, "gemm", "bf16", true),
    (r#"Cijk_Ailk_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x128_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1_LDSTI0_LBSPPA512_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS8_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKFTR0_SKXCCM0_TLDS1_ULSGRO1_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG32_8_1"#, "gemm", "bf16", true),
    (r#"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x32x128_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1_LDSTI0_LBSPPA512_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT2_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW2_SK0_SKFTR0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA2_VWB1_WSGRA0_WSGRB0_WS64_WG32_8_1"#, "gemm", "bf16", true),
    (r#"_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_v3INS_34GridwiseGemmMultiD_xdl_cshuffle_v3INS_13tensor_layout4gemm8RowMajorENS6_11ColumnMajorENS_5TupleIJEEES7_ttftSA_tNS0_12element_wise11PassThroughESC_SC_LNS1_18GemmSpecializationE7ELi256ELi128ELi128ELi64ELi8ELi8ELi32ELi32ELi2ELi2ENS_8SequenceIJLi8ELi32ELi1EEEENSE_IJLi1ELi0ELi2EEEESG_Li2ELi8ELi8ELb0ELi0ESF_SG_SG_Li2ELi8ELi8ELb0ELi0ELi1ELi1ENSE_IJLi1ELi32ELi1ELi8EEEENSE_IJLi8EEEELNS_26BlockGemmPipelineSchedulerE0ELNS_24BlockGemmPipelineVersionE2EttttLb0ELb0EEENS1_30ComputePtrOffsetOfStridedBatchILi1ELi1ELi0EvEENS_16TensorDescriptorINS9_IJNS_5EmbedINS9_IJiiiiEEESQ_Lb0EEENS_11PassThroughIiEENS_3PadIiiiLb0EEESV_ST_ST_NSP_INS9_IJiiEEESW_Lb0EEESX_ST_NS_23Merge_v2_magic_divisionINS9_IJiiiEEEEES10_NS_8RightPadIiiLb0EEES12_NS_7UnMergeISW_Lb0EEEST_EEENS9_IJNSE_IJLi0EEEENSE_IJLi1EEEENSE_IJLi2EEEENSE_IJLi3EEEENSE_IJLi4EEEENSE_IJLi5EEEENSE_IJLi6EEEENSE_IJLi7EEEESI_NSE_IJLi9ELi11ELi13EEEENSE_IJLi10ELi12ELi14EEEENSE_IJLi15EEEENSE_IJLi16EEEENSE_IJLi18EEEENSE_IJLi17EEEEEEENS9_IJNSE_IJLi1ELi2ELi3ELi4EEEES1B_S1C_S1D_SI_NSE_IJLi9EEEENSE_IJLi10ELi11EEEENSE_IJLi12ELi13EEEENSE_IJLi14EEEES1G_S1H_S1J_S1I_NSE_IJLi19ELi20EEEENSE_IJLi21EEEEEEENSE_IJLi19ELi21ELi20EEEElEENSO_INS9_IJS14_S12_S12_S14_ST_EEENS9_IJS16_S17_S18_S1A_S19_EEENS9_IJNSE_IJLi1ELi2EEEES19_S1A_NSE_IJLi5ELi6EEEES1D_EEENSE_IJLi5ELi7ELi6EEEElEESA_NSO_INS9_IJSX_S12_S12_EEENS9_IJS16_S17_S18_EEENS9_IJS1X_S19_S1A_EEENSE_IJLi3ELi4EEEElEELb1ELNS_25InMemoryDataOperationEnumE0ELi1ELNS_10TailNumberE10EEEvNT_8ArgumentET1_T2_T3_T4_T0_S2F_"#, "conv", "bf16", true),
    (r#"_ZN2ck16tensor_operation6device12_GLOBAL__N_149kernel_grouped_conv_fwd_multiple_abd_xdl_cshuffleINS_34GridwiseGemmMultipleD_xdl_cshuffleItttftNS_5TupleIJEEEtNS0_12element_wise11PassThroughES8_S8_Li1ELi256ELi128ELi128ELi32ELi8ELi8ELi32ELi32ELi2ELi2ENS_8SequenceIJLi4ELi64ELi1EEEENS9_IJLi1ELi0ELi2EEEESB_Li2ELi8ELi8ELb0ELi1ESA_SB_SB_Li2ELi8ELi8ELb0ELi1ELi1ELi1ENS9_IJLi1ELi32ELi1ELi8EEEELi8ELNS_13LoopSchedulerE0ELNS_15PipelineVersionE0EtLb0EEEPKtSH_S6_tS8_S8_S8_NS_16TensorDescriptorINS5_IJNS_5EmbedINS5_IJiiiiEEESK_Lb0EEENS_11PassThroughIiEENS_3PadIiiiLb0EEESP_SN_SN_NSJ_INS5_IJiiEEESQ_Lb0EEESR_SN_NS_23Merge_v2_magic_divisionINS5_IJiiiEEEEESU_NS_8RightPadIiiLb0EEESW_NS_7UnMergeINS5_IJiNS_17integral_constantIiLi8EEEEEELb0EEESN_EEENS5_IJNS9_IJLi0EEEENS9_IJLi1EEEENS9_IJLi2EEEENS9_IJLi3EEEENS9_IJLi4EEEENS9_IJLi5EEEENS9_IJLi6EEEENS9_IJLi7EEEENS9_IJLi8EEEENS9_IJLi9ELi11ELi13EEEENS9_IJLi10ELi12ELi14EEEENS9_IJLi15EEEENS9_IJLi16EEEENS9_IJLi18EEEENS9_IJLi17EEEEEEENS5_IJNS9_IJLi1ELi2ELi3ELi4EEEES18_S19_S1A_S1B_NS9_IJLi9EEEENS9_IJLi10ELi11EEEENS9_IJLi12ELi13EEEENS9_IJLi14EEEES1E_S1F_S1H_S1G_NS9_IJLi19ELi20EEEENS9_IJLi21EEEEEEENS9_IJLi19ELi21ELi20EEEElEENSI_INS5_IJNSX_ISQ_Lb0EEESW_SW_S11_SN_EEENS5_IJS13_S14_S15_S17_S16_EEENS5_IJNS9_IJLi1ELi2EEEES16_S17_NS9_IJLi5ELi6EEEES1A_EEENS9_IJLi5ELi7ELi6EEEElEES6_NSI_INS5_IJSR_SW_SW_NSX_INS5_IJiNSY_IiLi128EEEEEELb0EEES23_EEENS5_IJS13_S14_S15_S16_S17_EEENS5_IJS1W_S16_S17_S1X_NS9_IJLi7ELi8EEEEEEENS9_IJLi5ELi6ELi7ELi8EEEElEENS_31BlockToCTileMap_M00_N0_M01AdaptILi128ELi128ENSI_INS5_IJSR_SW_SW_EEENS5_IJS13_S14_S15_EEENS5_IJS1W_S16_S17_EEENS9_IJLi3ELi4EEEElEEEENS1_30ComputePtrOffsetOfStridedBatchILi1ELi1ELi0EvEES2I_Lb1ELb0ELb0ELb0EEEvT0_T1_T2_PT3_T4_T5_T6_T7_T8_T9_T10_T11_T12_T13_"#, "conv", "bf16", true),
    (r#"batched_transpose_16x32_half"#, "copy", "unknown", false),
    (r#"batched_transpose_32x16_half"#, "copy", "unknown", false),
    (r#"batched_transpose_32x32_half"#, "copy", "unknown", false),
    (r#"batched_transpose_4x256_half"#, "copy", "unknown", false),
    (r#"igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x1x2_1x4x1x64_mh"#, "conv", "bf16", true),
    (r#"igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x256x32_wt32x32x8_ws1x2_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x1x4_1x4x1x64_mh"#, "conv", "bf16", true),
    (r#"igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt256x128x32_wt32x32x8_ws2x1_wr2x2_ta1x8x4x1_1x4x1x64_tb1x8x1x2_1x4x1x64_mh"#, "conv", "bf16", true),
    (r#"igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt256x64x32_wt32x32x8_ws1x1_wr2x2_ta1x8x4x1_1x4x1x64_tb1x4x1x2_1x8x1x32_mh"#, "conv", "bf16", true),
    (r#"igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt64x128x32_wt32x32x8_ws1x1_wr2x1_ta1x8x1x1_1x4x1x64_tb1x8x1x2_1x4x1x64_mh"#, "conv", "bf16", true),
    (r#"igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x2x1_1x4x1x64"#, "conv", "bf16", true),
    (r#"igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x256x32_wt32x32x8_ws1x2_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x4x1_1x4x1x64"#, "conv", "bf16", true),
    (r#"igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x64x32_wt32x32x8_ws1x1_wr1x2_ta1x16x1x1_1x2x4x32_tb1x8x1x1_1x4x1x64_pta"#, "conv", "bf16", true),
    (r#"igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt256x128x32_wt32x32x8_ws2x1_wr2x2_ta1x8x4x1_1x4x1x64_tb1x8x2x1_1x4x1x64"#, "conv", "bf16", true),
    (r#"igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt256x64x8_wt64x16x4_ws1x1_wr2x2_ta1x1x8x1_1x8x1x32_tb1x1x2x1_1x8x1x32_me"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x16_wt32x32x8_ws1x1_wr2x2_ta1x4x1x2_1x4x1x64_tb1x4x1x2_1x4x1x64_vs1_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x4x1x4_1x8x1x32_tb1x4x1x4_1x8x1x32_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt128x256x32_wt32x32x8_ws1x2_wr2x2_ta1x4x1x4_1x8x1x32_tb1x4x1x8_1x8x1x32_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt128x256x32_wt32x32x8_ws1x2_wr2x2_ta1x4x1x4_1x8x1x32_tb1x4x1x8_1x8x1x32_vs1_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt256x128x32_wt32x32x8_ws2x1_wr2x2_ta1x4x1x8_1x8x1x32_tb1x4x1x4_1x8x1x32_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt256x128x32_wt32x32x8_ws2x1_wr2x2_ta1x4x1x8_1x8x1x32_tb1x4x1x4_1x8x1x32_vs1_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt64x256x32_wt32x32x8_ws1x1_wr2x2_ta1x4x1x2_1x8x1x32_tb1x4x1x8_1x8x1x32_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt64x64x32_wt32x32x8_ws1x1_wr1x1_ta1x8x1x1_1x4x1x64_tb1x8x1x1_1x4x1x64_vs1_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt64x64x64_wt32x32x8_ws1x1_wr1x1_ta1x4x1x4_1x16x1x16_tb1x4x1x4_1x16x1x16_gkgs"#, "conv", "bf16", true),
    // TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz
    (r#"Cijk_Ailk_Bjlk_BBS_BH_Bias_HAS_SAV_UserArgs_MT64x32x64_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA512_LBSPPB256_LBSPPM0_LPA32_LPB16_LPM0_LRVW4_LWPMn1_MIAV0_MIWT2_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW2_SK0_SKXCCM0_TLDS0_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA2_VWB1_WSGRA0_WSGRB0_WS64_WG32_8_1"#, "gemm", "bf16", true),
    (r#"Cijk_Ailk_Bjlk_BBS_BH_MT32x32x64_MI16x16x16x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASE_ASGT3128_ASLT_ASM_ASAE01_ASCE01_ASEM1_AAC0_BL1_BS1_CLR1_DTLA0_DTLB0_DTVA0_DTVB0_DVO0_ETSP_EPS1_ELFLR0_EMLL0_FSSC10_FL0_GLVWA2_GLVWB2_GRCGA1_GRCGB1_GRPM1_GRVW2_GSU1_GSUASB_GLS1_ISA942_IU1_K1_KLA_LBSPPA256_LBSPPB256_LPA32_LPB16_LDL1_LRVW4_LWPMn1_LDW0_FMA_MIAV1_MDA2_MO40_MMFSC_MKFGSU256_NTA0_NTB0_NTC0_NTD0_NEPBS16_NLCA1_NLCB1_ONLL1_OPLV0_PK0_PAP0_PGR2_PLR3_PKA0_SIA3_SLW1_SS1_SU0_SUM0_SUS0_SCIUI1_SPO0_SRVW0_SSO4_SVW2_SNLL0_TSGRA0_TSGRB0_TT2_16_TLDS0_UMLDSA0_UMLDSB0_U64SL1_USFGROn1_VAW1_VSn1_VW2_VWB1_VFLRP1_WSGRA1_WSGRB0_WS64_WG16_8_2_WGM16"#, "gemm", "bf16", true),
    (r#"Cijk_Ailk_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs_MT16x16x256_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1_LBSPPA256_LBSPPB512_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA4_NTB0_NTC0_NTD0_NTM0_NEPBS0_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG16_4_4"#, "gemm", "bf16", true),
    (r#"Cijk_Ailk_Bljk_BBS_BH_MT32x32x64_MI16x16x16x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS0_ASE_ASGT_ASLT_ASM_ASAE01_ASCE01_ASEM1_AAC0_BL1_BS1_CLR0_DTLA0_DTLB0_DTVA0_DTVB0_DVO0_ETSP_EPS1_ELFLR0_EMLL0_FSSC10_FL0_GLVWA2_GLVWB2_GRCGA1_GRCGB1_GRPM1_GRVWn1_GSU1_GSUASB_GLS0_ISA942_IU1_K1_KLA_LBSPPA512_LBSPPB128_LPA16_LPB16_LDL1_LRVW8_LWPMn1_LDW0_FMA_MIAV1_MDA2_MO40_MMFSC_MKFGSU256_NTA0_NTB0_NTC2_NTD2_NEPBS8_NLCA1_NLCB1_ONLL1_OPLV0_PK0_PAP0_PGR2_PLR5_PKA0_SIA3_SLW1_SS1_SU64_SUM0_SUS128_SCIUI1_SPO1_SRVW0_SSO1_SVW1_SNLL0_TSGRA0_TSGRB0_TT1_16_TLDS1_UMLDSA0_UMLDSB1_U64SL1_USFGROn1_VAW1_VSn1_VW1_VWB1_VFLRP1_WSGRA0_WSGRB0_WS64_WG32_8_1_WGMn16"#, "gemm", "bf16", true),
    (r#"Cijk_Ailk_Bljk_BBS_BH_MT32x32x64_MI16x16x16x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS0_ASE_ASGT_ASLT_ASM_ASAE01_ASCE01_ASEM1_AAC0_BL1_BS1_CLR0_DTLA0_DTLB0_DTVA0_DTVB0_DVO0_ETSP_EPS1_ELFLR8_EMLL0_FSSC10_FL0_GLVWA2_GLVWB8_GRCGA1_GRCGB1_GRPM1_GRVWn1_GSU1_GSUASB_GLS1_ISA942_IU1_K1_KLA_LBSPPA512_LBSPPB128_LPA16_LPB16_LDL1_LRVW8_LWPMn1_LDW0_FMA_MIAV0_MDA2_MO40_MMFSC_MKFGSU256_NTA0_NTB0_NTC0_NTD0_NEPBS0_NLCA1_NLCB1_ONLL1_OPLV0_PK0_PAP0_PGR1_PLR5_PKA0_SIA3_SLW1_SS0_SU64_SUM0_SUS128_SCIUI1_SPO0_SRVW0_SSO0_SVW4_SNLL0_TSGRA0_TSGRB0_TT1_16_TLDS1_UMLDSA0_UMLDSB1_U64SL1_USFGROn1_VAW1_VSn1_VW1_VWB1_VFLRP1_WSGRA0_WSGRB0_WS64_WG32_8_1_WGM16"#, "gemm", "bf16", true),
    (r#"Cijk_Ailk_Bljk_BBS_BH_MT64x64x64_MI16x16x16x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASE_ASGT_ASLT_ASM_ASAE01_ASCE01_ASEM1_AAC0_BL1_BS1_CLR0_DTLA0_DTLB0_DTVA0_DTVB0_DVO0_ETSP_EPS1_ELFLR4_EMLL0_FSSC10_FL0_GLVWA2_GLVWB2_GRCGA1_GRCGB1_GRPM1_GRVWn1_GSU1_GSUASB_GLS1_ISA942_IU1_K1_KLA_LBSPPA512_LBSPPB256_LPA32_LPB4_LDL1_LRVW4_LWPMn1_LDW0_FMA_MIAV0_MDA2_MO40_MMFSC_MKFGSU256_NTA0_NTB0_NTC2_NTD2_NEPBS0_NLCA1_NLCB1_ONLL1_OPLV0_PK0_PAP0_PGR2_PLR1_PKA0_SIA3_SLW1_SS1_SU64_SUM0_SUS512_SCIUI1_SPO1_SRVW0_SSO4_SVW2_SNLL0_TSGRA0_TSGRB0_TT2_32_TLDS1_UMLDSA0_UMLDSB1_U64SL1_USFGROn1_VAW1_VSn1_VW2_VWB2_VFLRP1_WSGRA0_WSGRB0_WS64_WG32_8_1_WGMn16"#, "gemm", "bf16", true),
    (r#"Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs_MT16x16x256_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA512_LBSPPB512_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA4_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG16_4_4"#, "gemm", "bf16", true),
    (r#"_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_v3INS_28GridwiseGemm_xdl_cshuffle_v3INS_13tensor_layout4gemm8RowMajorENS6_11ColumnMajorES7_ttfttNS0_12element_wise11PassThroughESA_SA_LNS1_18GemmSpecializationE7ELi128ELi16ELi32ELi64ELi8ELi8ELi16ELi16ELi1ELi1ENS_8SequenceIJLi8ELi16ELi1EEEENSC_IJLi1ELi0ELi2EEEESE_Li2ELi8ELi8ELb0ELi0ESD_SE_SE_Li2ELi8ELi8ELb0ELi0ELi1ELi1ENSC_IJLi1ELi16ELi1ELi8EEEELi4ELNS_26BlockGemmPipelineSchedulerE1ELNS_24BlockGemmPipelineVersionE0EttLb0ELb0EEENS_16TensorDescriptorINS_5TupleIJNS_5EmbedINSK_IJiiiiEEESM_Lb0EEENS_11PassThroughIiEENS_3PadIiiiLb0EEESR_SP_SP_NSL_INSK_IJiiEEESS_Lb0EEEST_SP_NS_23Merge_v2_magic_divisionINSK_IJiiiEEEEESW_NS_8RightPadIiiLb0EEESY_NS_7UnMergeISS_Lb0EEESP_EEENSK_IJNSC_IJLi0EEEENSC_IJLi1EEEENSC_IJLi2EEEENSC_IJLi3EEEENSC_IJLi4EEEENSC_IJLi5EEEENSC_IJLi6EEEENSC_IJLi7EEEENSC_IJLi8EEEENSC_IJLi9ELi11ELi13EEEENSC_IJLi10ELi12ELi14EEEENSC_IJLi15EEEENSC_IJLi16EEEENSC_IJLi18EEEENSC_IJLi17EEEEEEENSK_IJNSC_IJLi1ELi2ELi3ELi4EEEES17_S18_S19_S1A_NSC_IJLi9EEEENSC_IJLi10ELi11EEEENSC_IJLi12ELi13EEEENSC_IJLi14EEEES1D_S1E_S1G_S1F_NSC_IJLi19ELi20EEEENSC_IJLi21EEEEEEENSC_IJLi19ELi21ELi20EEEElEENSJ_INSK_IJS10_SY_SY_S10_SP_EEENSK_IJS12_S13_S14_S16_S15_EEENSK_IJNSC_IJLi1ELi2EEEES15_S16_NSC_IJLi5ELi6EEEES19_EEENSC_IJLi5ELi7ELi6EEEElEENSJ_INSK_IJST_SY_SY_NSZ_INSK_IJiNS_17integral_constantIiLi16EEEEEELb0EEENSZ_INSK_IJiNS1Z_IiLi32EEEEEELb0EEEEEENSK_IJS12_S13_S14_S15_S16_EEENSK_IJS1U_S15_S16_S1V_NSC_IJLi7ELi8EEEEEEENSC_IJLi5ELi6ELi7ELi8EEEElEENS1_30ComputePtrOffsetOfStridedBatchILi1ELi1ELi0EvEELb1ELNS_25InMemoryDataOperationEnumE0ELi2ELNS_10TailNumberE10EEEvNT_8ArgumentET0_T1_T2_T3_S2L_i"#, "conv", "bf16", true),
    (r#"_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_v3INS_28GridwiseGemm_xdl_cshuffle_v3INS_13tensor_layout4gemm8RowMajorENS6_11ColumnMajorES7_ttfttNS0_12element_wise11PassThroughESA_SA_LNS1_18GemmSpecializationE7ELi256ELi64ELi64ELi64ELi8ELi8ELi32ELi32ELi1ELi1ENS_8SequenceIJLi8ELi32ELi1EEEENSC_IJLi1ELi0ELi2EEEESE_Li2ELi8ELi8ELb0ELi0ESD_SE_SE_Li2ELi8ELi8ELb0ELi0ELi1ELi1ENSC_IJLi1ELi32ELi1ELi8EEEELi8ELNS_26BlockGemmPipelineSchedulerE0ELNS_24BlockGemmPipelineVersionE2EttLb0ELb0EEENS_16TensorDescriptorINS_5TupleIJNS_5EmbedINSK_IJiiiiEEESM_Lb0EEENS_11PassThroughIiEENS_3PadIiiiLb0EEESR_SP_SP_NSL_INSK_IJiiEEESS_Lb0EEEST_SP_NS_23Merge_v2_magic_divisionINSK_IJiiiEEEEESW_NS_8RightPadIiiLb0EEESY_NS_7UnMergeISS_Lb0EEESP_EEENSK_IJNSC_IJLi0EEEENSC_IJLi1EEEENSC_IJLi2EEEENSC_IJLi3EEEENSC_IJLi4EEEENSC_IJLi5EEEENSC_IJLi6EEEENSC_IJLi7EEEENSC_IJLi8EEEENSC_IJLi9ELi11ELi13EEEENSC_IJLi10ELi12ELi14EEEENSC_IJLi15EEEENSC_IJLi16EEEENSC_IJLi18EEEENSC_IJLi17EEEEEEENSK_IJNSC_IJLi1ELi2ELi3ELi4EEEES17_S18_S19_S1A_NSC_IJLi9EEEENSC_IJLi10ELi11EEEENSC_IJLi12ELi13EEEENSC_IJLi14EEEES1D_S1E_S1G_S1F_NSC_IJLi19ELi20EEEENSC_IJLi21EEEEEEENSC_IJLi19ELi21ELi20EEEElEENSJ_INSK_IJS10_SY_SY_S10_SP_EEENSK_IJS12_S13_S14_S16_S15_EEENSK_IJNSC_IJLi1ELi2EEEES15_S16_NSC_IJLi5ELi6EEEES19_EEENSC_IJLi5ELi7ELi6EEEElEENSJ_INSK_IJST_SY_SY_NSZ_INSK_IJiNS_17integral_constantIiLi64EEEEEELb0EEES22_EEENSK_IJS12_S13_S14_S15_S16_EEENSK_IJS1U_S15_S16_S1V_NSC_IJLi7ELi8EEEEEEENSC_IJLi5ELi6ELi7ELi8EEEElEENS1_30ComputePtrOffsetOfStridedBatchILi1ELi1ELi0EvEELb1ELNS_25InMemoryDataOperationEnumE0ELi1ELNS_10TailNumberE10EEEvNT_8ArgumentET0_T1_T2_T3_S2I_i"#, "conv", "bf16", true),
    (r#"_ZN2ck16tensor_operation6device12_GLOBAL__N_149kernel_grouped_conv_fwd_multiple_abd_xdl_cshuffleINS_34GridwiseGemmMultipleD_xdl_cshuffleItttftNS_5TupleIJEEEtNS0_12element_wise11PassThroughES8_S8_LNS_25InMemoryDataOperationEnumE0ELi1ELi256ELi128ELi64ELi32ELi8ELi8ELi32ELi32ELi2ELi1ENS_8SequenceIJLi4ELi64ELi1EEEENSA_IJLi1ELi0ELi2EEEESC_Li2ELi8ELi8ELb0ELi1ESB_SC_SC_Li2ELi8ELi8ELb0ELi1ELi1ELi1ENSA_IJLi1ELi32ELi1ELi8EEEELi8ELNS_13LoopSchedulerE0ELNS_15PipelineVersionE0EtEEPKtSI_S6_tS8_S8_S8_NS_16TensorDescriptorINS5_IJNS_5EmbedINS5_IJiiiiEEESL_Lb0EEENS_11PassThroughIiEENS_3PadIiiiLb0EEESQ_SO_SO_NSK_INS5_IJiiEEESR_Lb0EEESS_SO_NS_23Merge_v2_magic_divisionINS5_IJiiiEEEEESV_NS_8RightPadIiiLb0EEESX_NS_7UnMergeINS5_IJiNS_17integral_constantIiLi8EEEEEELb0EEESO_EEENS5_IJNSA_IJLi0EEEENSA_IJLi1EEEENSA_IJLi2EEEENSA_IJLi3EEEENSA_IJLi4EEEENSA_IJLi5EEEENSA_IJLi6EEEENSA_IJLi7EEEENSA_IJLi8EEEENSA_IJLi9ELi11ELi13EEEENSA_IJLi10ELi12ELi14EEEENSA_IJLi15EEEENSA_IJLi16EEEENSA_IJLi18EEEENSA_IJLi17EEEEEEENS5_IJNSA_IJLi1ELi2ELi3ELi4EEEES19_S1A_S1B_S1C_NSA_IJLi9EEEENSA_IJLi10ELi11EEEENSA_IJLi12ELi13EEEENSA_IJLi14EEEES1F_S1G_S1I_S1H_NSA_IJLi19ELi20EEEENSA_IJLi21EEEEEEENSA_IJLi19ELi21ELi20EEEElEENSJ_INS5_IJNSY_ISR_Lb0EEESX_SX_S12_SO_EEENS5_IJS14_S15_S16_S18_S17_EEENS5_IJNSA_IJLi1ELi2EEEES17_S18_NSA_IJLi5ELi6EEEES1B_EEENSA_IJLi5ELi7ELi6EEEElEES6_NSJ_INS5_IJSS_SX_SX_NSY_INS5_IJiNSZ_IiLi128EEEEEELb0EEENSY_INS5_IJiNSZ_IiLi64EEEEEELb0EEEEEENS5_IJS14_S15_S16_S17_S18_EEENS5_IJS1X_S17_S18_S1Y_NSA_IJLi7ELi8EEEEEEENSA_IJLi5ELi6ELi7ELi8EEEElEENS_31BlockToCTileMap_M00_N0_M01AdaptILi128ELi64ENSJ_INS5_IJSS_SX_SX_EEENS5_IJS14_S15_S16_EEENS5_IJS1X_S17_S18_EEENSA_IJLi3ELi4EEEElEEEENS1_30ComputePtrOffsetOfStridedBatchILi1ELi1ELi0EvEES2M_Lb1ELb0ELb0EEEvT0_T1_T2_PT3_T4_T5_T6_T7_T8_T9_T10_T11_T12_T13_"#, "conv", "bf16", true),
    (r#"_ZN2ck16tensor_operation6device37kernel_batched_gemm_xdlops_bwd_weightINS_47GridwiseGemm_bk0mk1_bk0nk1_mn_xdlops_bwd_weightILi64EttftLNS_25InMemoryDataOperationEnumE1ENS_16TensorDescriptorINS_5TupleIJNS_5EmbedINS6_IJiiEEENS6_IJiNS_17integral_constantIiLi1EEEEEELb0EEENS_8RightPadIiiLb0EEENS_11PassThroughIiEENS_7UnMergeINS6_IJiiiEEELb0EEESG_SG_SG_SE_SG_EEENS6_IJNS_8SequenceIJLi0EEEENSL_IJLi1EEEENSL_IJLi2EEEENSL_IJLi3EEEENSL_IJLi4EEEENSL_IJLi5EEEENSL_IJLi6EEEENSL_IJLi8EEEENSL_IJLi7EEEEEEENS6_IJNSL_IJLi1ELi2EEEESP_SQ_NSL_IJLi5ELi6ELi7EEEEST_NSL_IJLi9EEEENSL_IJLi10EEEENSL_IJLi11EEEENSL_IJLi12EEEEEEENSL_IJLi9ELi10ELi11ELi12EEEElEENS5_INS6_IJNS7_INS6_IJiiiiEEES15_Lb0EEESG_NS_3PadIiiiLb0EEES18_SG_SG_NS7_IS8_S8_Lb0EEES19_SG_NS_23Merge_v2_magic_divisionISI_EES1B_SE_SG_SJ_SG_SG_SG_SE_SG_EEENS6_IJSM_SN_SO_SP_SQ_SR_SS_SU_ST_NSL_IJLi10ELi12ELi14EEEENSL_IJLi9ELi11ELi13EEEENSL_IJLi16EEEENSL_IJLi15EEEENSL_IJLi17EEEENSL_IJLi18EEEENSL_IJLi19EEEENSL_IJLi20EEEENSL_IJLi22EEEENSL_IJLi21EEEEEEENS6_IJNSL_IJLi1ELi2ELi3ELi4EEEESR_SS_SU_ST_SY_NSL_IJLi10ELi11EEEENSL_IJLi12ELi13EEEENSL_IJLi14EEEES1G_S1F_S1H_S1I_NSL_IJLi19ELi20ELi21EEEES1L_NSL_IJLi23EEEENSL_IJLi24EEEENSL_IJLi25EEEENSL_IJLi26EEEEEEENSL_IJLi23ELi24ELi25ELi26EEEElEENS5_INS6_IJSC_SE_SE_EEENS6_IJSM_SN_SO_EEENS6_IJSW_SP_SQ_EEENSL_IJLi3ELi4EEEElEENS0_12element_wise11PassThroughES26_S26_Li64ELi32ELi4ELi32ELi32ELi8ELi2ELi1ENSL_IJLi1ELi4ELi8ELi2EEEENSL_IJLi0ELi3ELi1ELi2EEEENSL_IJLi0ELi2ELi1ELi3EEEELi2ELi8ELi4ELb0ELb1ELi8ELi8ELi4ENSL_IJLi1ELi4ELi4ELi4EEEES28_S29_Li2ELi8ELi2ELb0ELb1ELi8ELi4ELi4ELi1ELi1ELi8ENSL_IJLi1ELi16ELi1ELi4EEEELb1ELb1ELi1ELNS_15PipelineVersionE0EttEEtttS26_S26_S26_S14_S1Z_NS5_INS6_IJSC_SE_SE_NSH_INS6_IJiNS9_IiLi64EEEEEELb0EEENSH_INS6_IJiNS9_IiLi32EEEEEELb0EEEEEENS6_IJSM_SN_SO_SP_SQ_EEENS6_IJSW_SP_SQ_NSL_IJLi5ELi6EEEENSL_IJLi7ELi8EEEEEEENSL_IJLi5ELi6ELi7ELi8EEEElEENS_38BlockToCTileMap_KSplit_M00_N00_M01_N01ILi64ELi32ES24_Lb0EEENS1_30ComputePtrOffsetOfStridedBatchILi1ELi1ELi0EvEELb1EEEvPKT0_PKT1_PT2_T3_T4_T5_iT6_T7_T8_T9_T10_"#, "gemm", "bf16", true),
    (r#"_ZN2ck16tensor_operation6device37kernel_batched_gemm_xdlops_bwd_weightINS_47GridwiseGemm_bk0mk1_bk0nk1_mn_xdlops_bwd_weightILi64EttftLNS_25InMemoryDataOperationEnumE1ENS_16TensorDescriptorINS_5TupleIJNS_5EmbedINS6_IJiiEEENS6_IJiNS_17integral_constantIiLi1EEEEEELb0EEENS_8RightPadIiiLb0EEENS_11PassThroughIiEENS_7UnMergeINS6_IJiiiEEELb0EEESG_SG_SG_SE_SG_EEENS6_IJNS_8SequenceIJLi0EEEENSL_IJLi1EEEENSL_IJLi2EEEENSL_IJLi3EEEENSL_IJLi4EEEENSL_IJLi5EEEENSL_IJLi6EEEENSL_IJLi8EEEENSL_IJLi7EEEEEEENS6_IJNSL_IJLi1ELi2EEEESP_SQ_NSL_IJLi5ELi6ELi7EEEEST_NSL_IJLi9EEEENSL_IJLi10EEEENSL_IJLi11EEEENSL_IJLi12EEEEEEENSL_IJLi9ELi10ELi11ELi12EEEElEENS5_INS6_IJNS7_INS6_IJiiiiEEES15_Lb0EEESG_NS_3PadIiiiLb0EEES18_SG_SG_NS7_IS8_S8_Lb0EEES19_SG_NS_23Merge_v2_magic_divisionISI_EES1B_SE_SG_SJ_SG_SG_SG_SE_SG_EEENS6_IJSM_SN_SO_SP_SQ_SR_SS_SU_ST_NSL_IJLi10ELi12ELi14EEEENSL_IJLi9ELi11ELi13EEEENSL_IJLi16EEEENSL_IJLi15EEEENSL_IJLi17EEEENSL_IJLi18EEEENSL_IJLi19EEEENSL_IJLi20EEEENSL_IJLi22EEEENSL_IJLi21EEEEEEENS6_IJNSL_IJLi1ELi2ELi3ELi4EEEESR_SS_SU_ST_SY_NSL_IJLi10ELi11EEEENSL_IJLi12ELi13EEEENSL_IJLi14EEEES1G_S1F_S1H_S1I_NSL_IJLi19ELi20ELi21EEEES1L_NSL_IJLi23EEEENSL_IJLi24EEEENSL_IJLi25EEEENSL_IJLi26EEEEEEENSL_IJLi23ELi24ELi25ELi26EEEElEENS5_INS6_IJSC_SE_SE_EEENS6_IJSM_SN_SO_EEENS6_IJSW_SP_SQ_EEENSL_IJLi3ELi4EEEElEENS0_12element_wise11PassThroughES26_S26_Li64ELi64ELi4ELi32ELi32ELi8ELi2ELi2ENSL_IJLi1ELi4ELi8ELi2EEEENSL_IJLi0ELi3ELi1ELi2EEEENSL_IJLi0ELi2ELi1ELi3EEEELi2ELi8ELi4ELb0ELb1ELi8ELi8ELi4ES27_S28_S29_Li2ELi8ELi4ELb0ELb1ELi8ELi8ELi4ELi1ELi1ELi8ENSL_IJLi1ELi16ELi1ELi4EEEELb1ELb1ELi1ELNS_15PipelineVersionE0EttEEtttS26_S26_S26_S14_S1Z_NS5_INS6_IJSC_SE_SE_NSH_INS6_IJiNS9_IiLi64EEEEEELb0EEES2F_EEENS6_IJSM_SN_SO_SP_SQ_EEENS6_IJSW_SP_SQ_NSL_IJLi5ELi6EEEENSL_IJLi7ELi8EEEEEEENSL_IJLi5ELi6ELi7ELi8EEEElEENS_38BlockToCTileMap_KSplit_M00_N00_M01_N01ILi64ELi64ES24_Lb0EEENS1_30ComputePtrOffsetOfStridedBatchILi1ELi1ELi0EvEELb1EEEvPKT0_PKT1_PT2_T3_T4_T5_iT6_T7_T8_T9_T10_"#, "gemm", "bf16", true),
    (r#"igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x1x2_1x4x1x64_mh_gkgs"#, "conv", "bf16", true),
    (r#"igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x64x32_wt32x32x8_ws1x1_wr1x2_ta1x8x2x1_1x4x1x64_tb1x4x1x2_1x8x1x32_mh_gkgs"#, "conv", "bf16", true),
    (r#"igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt32x128x32_wt16x64x4_ws1x1_wr1x1_ta1x4x1x1_1x8x1x32_tb1x4x1x4_1x8x1x32_mh_gkgs"#, "conv", "bf16", true),
    (r#"igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt32x64x32_wt16x64x4_ws1x1_wr1x1_ta1x8x1x1_1x4x1x32_tb1x8x1x2_1x4x1x32_mh"#, "conv", "bf16", true),
    (r#"igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt64x128x32_wt32x32x8_ws1x1_wr2x1_ta1x8x1x1_1x4x1x64_tb1x8x1x2_1x4x1x64_mh_gkgs"#, "conv", "bf16", true),
    (r#"igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x2x1_1x4x1x64_gkgs"#, "conv", "bf16", true),
    (r#"igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt64x128x32_wt32x32x8_ws1x1_wr2x1_ta1x8x1x1_1x4x1x64_tb1x8x2x1_1x4x1x64_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt128x64x32_wt32x32x8_ws1x1_wr1x2_ta1x4x1x4_1x8x1x32_tb1x4x1x2_1x8x1x32_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8_ws2x1_wr2x2_ta1x4x1x4_1x4x1x64_tb1x4x1x2_1x4x1x64_gkgs"#, "conv", "bf16", true),
    (r#"igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt64x32x32_wt16x16x16_ws1x1_wr2x1_ta1x4x1x2_1x8x1x32_tb1x4x1x1_1x8x1x32_vs1_gkgs"#, "conv", "bf16", true),
    (r#"ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"#, "communication", "unknown", false),
    (r#"transpose_CNHW2NCHW_V2_2D_WG_off64"#, "copy", "unknown", false),
    (r#"transpose_NCHW2CNHW_V2_2D_WG_off64"#, "copy", "unknown", false),
    (r#"void at::native::(anonymous namespace)::CatArrayBatchedCopy_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 1, 128, 1>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"#, "copy", "unknown", false),
    (r#"void at::native::(anonymous namespace)::CatArrayBatchedCopy_contig<at::native::(anonymous namespace)::OpaqueType<8u>, unsigned int, 1, 128, 1>(at::native::(anonymous namespace)::OpaqueType<8u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<8u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"#, "copy", "unknown", false),
    // TraceLens/tests/traces/torch_compile_triton/trace.json.gz
    (r#"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1_LDSTI0_LBSPPA1024_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT8_6_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW8_SK0_SKFTR0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA8_VWB2_WSGRA0_WSGRB0_WS64_WG32_8_1"#, "gemm", "bf16", true),
    (r#"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1_LDSTI0_LBSPPA1024_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT8_6_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW8_SK0_SKFTR0_SKXCCM0_TLDS1_ULSGRO1_USL1_UIOFGRO0_USFGROn1_VSn1_VWA8_VWB2_WSGRA0_WSGRB0_WS64_WG32_8_1"#, "gemm", "bf16", true),
    (r#"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1_LDSTI0_LBSPPA512_LBSPPB512_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT4_12_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW4_SK0_SKFTR0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA4_VWB4_WSGRA0_WSGRB0_WS64_WG64_4_1"#, "gemm", "bf16", true),
    (r#"attn_fwd"#, "attention", "unknown", false),
    // param/et_replay/tests/inputs/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json.gz
    (r#"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"#, "communication", "unknown", false),
    (r#"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"#, "communication", "unknown", false),
    (r#"split_embedding_backward_codegen_adagrad_unweighted_find_long_segments(at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, int, int, bool)"#, "other", "unknown", false),
    (r#"split_embedding_backward_codegen_dense_unweighted_find_long_segments(at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, at::GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>, int, int, bool)"#, "other", "unknown", false),
    (r#"void (anonymous namespace)::elementwise_kernel_with_index<int, at::native::arange_cuda_out(c10::Scalar const&, c10::Scalar const&, c10::Scalar const&, at::Tensor&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(long)#1}>(int, at::native::arange_cuda_out(c10::Scalar const&, c10::Scalar const&, c10::Scalar const&, at::Tensor&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(long)#1}, function_traits<at::native::arange_cuda_out(c10::Scalar const&, c10::Scalar const&, c10::Scalar const&, at::Tensor&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(long)#1}>::result_type*)"#, "elementwise", "unknown", false),
    (r#"void (anonymous namespace)::indexing_backward_kernel<float, 4>(long*, long*, float*, float*, long, long, long, long, bool)"#, "other", "unknown", false),
    (r#"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 1, 128, 1>(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"#, "copy", "unknown", false),
    (r#"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"#, "copy", "unknown", false),
    (r#"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 64, 64>(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"#, "copy", "unknown", false),
    (r#"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 3, 128, 1>(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"#, "copy", "unknown", false),
    (r#"void at::native::(anonymous namespace)::CatArrayBatchedCopy<long, unsigned int, 2, 128, 1>(long*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<long, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"#, "copy", "unknown", false),
    (r#"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})"#, "elementwise", "unknown", false),
    (r#"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1})"#, "elementwise", "unknown", false),
    (r#"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})"#, "copy", "unknown", false),
    (r#"void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char*, long)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char*, long)#1} const&)::{lambda(int)#1})"#, "elementwise", "unknown", false),
    (r#"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)"#, "reduction", "unknown", false),
    (r#"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<long, at::native::func_wrapper_t<long, at::native::sum_functor<long, long, long>::operator()(at::TensorIterator&)::{lambda(long, long)#1}>, unsigned int, long, 4> >(at::native::ReduceOp<long, at::native::func_wrapper_t<long, at::native::sum_functor<long, long, long>::operator()(at::TensorIterator&)::{lambda(long, long)#1}>, unsigned int, long, 4>)"#, "reduction", "unknown", false),
    (r#"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(long)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(long)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)"#, "copy", "unknown", false),
    (r#"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)"#, "copy", "unknown", false),
    (r#"void at_cuda_detail::cub::DeviceRadixSortSingleTileKernel<at_cuda_detail::cub::DeviceRadixSortPolicy<long, at::cuda::cub::detail::OpaqueType<8>, int>::Policy800, false, long, at::cuda::cub::detail::OpaqueType<8>, int>(long const*, long*, at::cuda::cub::detail::OpaqueType<8> const*, at::cuda::cub::detail::OpaqueType<8>*, int, int, int)"#, "other", "unknown", false),
    (r#"void cub::DeviceCompactInitKernel<cub::ReduceByKeyScanTileState<int, int, true>, int*>(cub::ReduceByKeyScanTileState<int, int, true>, int, int*)"#, "reduction", "unknown", false),
    (r#"void cub::DeviceReduceByKeyKernel<cub::DispatchReduceByKey<long*, long*, cub::ConstantInputIterator<int, int>, int*, int*, cub::Equality, cub::Sum, int>::PtxReduceByKeyPolicy, long*, long*, cub::ConstantInputIterator<int, int>, int*, int*, cub::ReduceByKeyScanTileState<int, int, true>, cub::Equality, cub::Sum, int>(long*, long*, cub::ConstantInputIterator<int, int>, int*, int*, cub::ReduceByKeyScanTileState<int, int, true>, int, cub::Equality, cub::Sum, int)"#, "reduction", "unknown", false),
    (r#"void fbgemm_gpu::permute_2D_data_kernel<false, int, int, decltype(nullptr)>(int, int, int, int const*, decltype(nullptr) const*, int const*, int const*, int const*, int*, decltype(nullptr)*)"#, "copy", "unknown", false),
    (r#"void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)"#, "copy", "unknown", false),
    (r#"void gemmSN_NN_kernel<float, 256, 4, 2, 8, 4, 4, false, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)"#, "gemm", "fp32", false),
    (r#"void gemmSN_TN_kernel<float, 128, 16, 2, 4, 8, 9, false, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)"#, "gemm", "fp32", false),
    (r#"void gemmk1_kernel<int, float, 256, 5, false, false, false, false, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float, 0>(cublasGemmk1Params<float, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float, biasType<cublasGemvTensorStridedBatched<float>::value_type, float>::type>)"#, "gemm", "fp32", false),
    (r#"void gemvNSP_kernel<float, float, float, float, 1, 16, 4, 1024, false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)"#, "gemm", "fp32", false),
    (r#"volta_sgemm_128x32_nn"#, "gemm", "fp32", false),
    (r#"volta_sgemm_128x32_nt"#, "gemm", "fp32", false),
    (r#"volta_sgemm_32x32_sliced1x4_tn"#, "gemm", "fp32", false),
    (r#"volta_sgemm_64x32_sliced1x4_nn"#, "gemm", "fp32", false),
    // param/et_replay/tests/inputs/linear_kineto.json.gz
    (r#"volta_sgemm_128x128_nt"#, "gemm", "fp32", false),
    (r#"volta_sgemm_64x64_tn"#, "gemm", "fp32", false),
    // param/et_replay/tests/inputs/resnet_kineto.json.gz
    (r#"cudnn_turing_scudnn_128x64_stridedB_splitK_xregs_large_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_volta_scudnn_128x128_relu_medium_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_volta_scudnn_128x128_relu_small_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_volta_scudnn_128x64_relu_small_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_volta_scudnn_128x64_relu_xregs_large_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_volta_scudnn_128x64_stridedB_splitK_xregs_large_nn_v1"#, "conv", "fp32", false),
    (r#"cudnn_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1"#, "conv", "fp32", false),
    (r#"void cudnn::cnn::wgrad_alg1_engine<float, float, 128, 6, 7, 3, 3, 5, false, true>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, float, int, int, int*, int*, int, int)"#, "conv", "fp32", false),
    (r#"void cudnn::detail::dgrad_engine<float, 128, 6, 7, 3, 3, 5, false>(int, int, int, float const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int, int, int)"#, "conv", "fp32", false),
    (r#"void cudnn::detail::dgrad_engine<float, 128, 6, 8, 3, 3, 5, false>(int, int, int, float const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int, int, int)"#, "conv", "fp32", false),
    (r#"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int, int, int)"#, "conv", "fp32", false),
    (r#"void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::WinogradDataParams<float, float>)"#, "conv", "fp32", false),
    (r#"void cudnn::winograd_nonfused::winogradForwardFilter4x4<float, float>(cudnn::winograd_nonfused::WinogradFilterParams<float, float>)"#, "conv", "fp32", false),
    (r#"void cudnn::winograd_nonfused::winogradForwardOutput4x4<float, float>(cudnn::winograd_nonfused::WinogradOutputParams<float, float>)"#, "conv", "fp32", false),
    (r#"void cudnn::winograd_nonfused::winogradWgradData4x4<float, float>(cudnn::winograd_nonfused::WinogradDataParams<float, float>)"#, "conv", "fp32", false),
    (r#"void cudnn::winograd_nonfused::winogradWgradDelta4x4<float, float>(cudnn::winograd_nonfused::WinogradDeltaParams<float, float>)"#, "conv", "fp32", false),
    (r#"void cudnn::winograd_nonfused::winogradWgradOutput4x4<float, float>(cudnn::winograd_nonfused::WinogradWgradOutputParams<float, float>)"#, "conv", "fp32", false),
    (r#"void wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)"#, "conv", "fp32", false),
    (r#"void wgrad_alg0_engine<float, 128, 6, 8, 3, 3, 5, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)"#, "conv", "fp32", false),
    (r#"volta_sgemm_128x32_tn"#, "gemm", "fp32", false),
    (r#"volta_sgemm_128x64_nn"#, "gemm", "fp32", false),
    (r#"volta_sgemm_128x64_nt"#, "gemm", "fp32", false),
    (r#"volta_sgemm_64x64_nn"#, "gemm", "fp32", false),
    (r#"volta_sgemm_64x64_nt"#, "gemm", "fp32", false),
];

#[rustfmt::skip]
const PUBLIC: &[(&str, &str, &str, bool)] = &[
    // cuBLAS Volta kernel list in public driver test code (a code-search excerpt
    // headed `#ifdef LW_MODS`; the index does not name its repository).
    (r#"volta_h884gemm_256x128_ldg8_mods_nt"#, "gemm", "fp16", true),
    (r#"volta_fp16_s884gemm_fp16_256x128_ldg8_f2f_mods_nt"#, "gemm", "fp16", true),
    (r#"volta_int8_i8816gemm_int8_256x128_ldg16_relu_mods_nt"#, "gemm", "int8", true),
    (r#"volta_sgemm_128x128_mods_nt"#, "gemm", "fp32", false),
    // github.com/rioyokotalab/cutlass run.sh (CUTLASS profiler kernel name).
    (r#"cutlass_tensorop_s16816gemm_f16_128x128_32x5_nt_align8"#, "gemm", "fp16", true),
    // github.com/feifei14119/TensileLite test/work/feifei_rpk/*.s (Tensile kernel).
    (r#"Cijk_Alik_Bljk_HBH_MT32x256x32_SE_K1"#, "gemm", "fp16", true),
    // hipBLASLt custom kernels for gfx942 (code-search excerpt, `.amdgcn_target gfx942`).
    (r#"CustomGSUs_Cijk_Ailk_Bljk_HHS_BH_MT32x16x16_MI16x16x1_prefetch"#, "gemm", "fp16", true),
    // github.com/ROCm/MISA test/fwd_cnhwc_test/kernel/ (MIOpen implicit-GEMM conv).
    (r#"igemm_fwd_cnhwc_gfx908_fp16_128x256x32"#, "conv", "fp16", true),
    // AOTriton flash attention kernels (code-search excerpt, tritonsrc/flash.py list).
    (r#"bwd_kernel_dk_dv"#, "attention", "unknown", false),
    (r#"bwd_kernel_dq"#, "attention", "unknown", false),
    // The kernels stallscope's earlier classifier was tested with (H100/A100
    // cuBLAS and cuDNN names).
    (r#"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"#, "gemm", "bf16", true),
    (r#"ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn"#, "gemm", "fp16", true),
    (r#"sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_stage4"#, "gemm", "tf32", true),
    (r#"void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_nn_align8>(Params)"#, "gemm", "bf16", true),
    (r#"sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32"#, "gemm", "fp8", true),
    (r#"sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc"#, "conv", "fp16", true),
    (r#"void cudnn::detail::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false, false, true>"#, "conv", "fp32", false),
    (r#"ncclDevKernel_AllReduce_Sum_f32_RING_LL"#, "communication", "unknown", false),
    // TraceLens tests/traces/b200_eager_trace.json.gz (vLLM serving gpt-oss on
    // 8 B200s): MoE expert GEMMs, cuBLAS JIT GEMMs and the tensor-parallel
    // all-reduce over symmetric memory, 55% of its kernel time between them.
    (r#"bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f"#, "gemm", "fp8", true),
    (r#"bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f"#, "gemm", "fp8", true),
    (r#"nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT"#, "gemm", "bf16", true),
    (r#"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)"#, "communication", "unknown", false),
    // Built from the kernels' declarations: vLLM csrc/custom_all_reduce.cuh,
    // PyTorch's symmetric memory (CUDASymmetricMemoryOps.cu), TensorRT-LLM
    // customAllReduceKernels.cu.
    (r#"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)"#, "communication", "unknown", false),
    (r#"void (anonymous namespace)::one_shot_all_reduce_kernel<c10::BFloat16, 16, 8>(c10::BFloat16**, c10::BFloat16*, c10::BFloat16*, unsigned long, unsigned long, unsigned int**, unsigned long, unsigned long)"#, "communication", "unknown", false),
    (r#"void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16, 8, true, false>(tensorrt_llm::kernels::AllReduceParams)"#, "communication", "unknown", false),
];

/// cuBLAS's JIT GEMMs (CUDA 12.8 and later), named in public profiles and
/// kernel studies with their types: every GEMM of a PyTorch job on Hopper or
/// Blackwell with a recent cuBLAS is one of these.
#[rustfmt::skip]
const NVJET: &[(&str, &str, &str, bool)] = &[
    // BF16 in and out, FP32 accumulation (o_proj, lm_head of BF16 models).
    (r#"nvjet_sm90_tst_192x8_64x8_2x1_v_bz_TNT"#, "gemm", "bf16", true),
    (r#"nvjet_sm100_tst_64x8_64x16_2x4_h_bz_splitK_TNT"#, "gemm", "bf16", true),
    (r#"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"#, "gemm", "bf16", true),
    // FP16.
    (r#"nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT"#, "gemm", "fp16", true),
    (r#"nvjet_hsh_96x128_64x7_2x1_v_bz_TNN"#, "gemm", "fp16", true),
    // FP8 (`_scaled_mm`), also with MXFP8 block scales.
    (r#"nvjet_qqtst_128x256_128x6_2x1_2cta_v_bz_TNT"#, "gemm", "fp8", true),
    (r#"nvjet_sm100_qqtst_128x256_128x6_2x1_2cta_v_bz_bias_TNT"#, "gemm", "fp8", true),
    (r#"nvjet_qqtst_128x256_128x6_2x2_2cta_h_bz_Avec32UE8M0_Bvec32UE8M0_TNT"#, "gemm", "fp8", true),
    // (`nvjet_qqhsh_*` in a profile; the tile here is made up.)
    (r#"nvjet_qqhsh_128x128_128x6_2x1_v_bz_TNT"#, "gemm", "fp8", true),
    // FP32 inputs run in TF32 (allow_tf32), and (built by the same letters)
    // in FP32.
    (r#"nvjet_sss_tf32_128x256_TNT"#, "gemm", "tf32", true),
    (r#"nvjet_sss_128x128_32x4_1x2_h_bz_TNT"#, "gemm", "fp32", false),
    // Letters it does not know, or none: a GEMM of unknown type, never FP32.
    (r#"nvjet_sm90_gemm"#, "gemm", "unknown", false),
    (r#"nvjet_zzz_64x64_TNT"#, "gemm", "unknown", false),
];

#[test]
fn nvjet_type_letters() {
    let bad = check(NVJET);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn check(cases: &[(&str, &str, &str, bool)]) -> Vec<String> {
    let mut bad = vec![];
    for &(name, op, prec, tc) in cases {
        let k = classify(name);
        if (k.op.name(), k.precision.name(), k.tensor_cores) != (op, prec, tc) {
            bad.push(format!(
                "{}: got {} {} tc={}, want {op} {prec} tc={tc}",
                short_name(name, 100),
                k.op.name(),
                k.precision.name(),
                k.tensor_cores
            ));
        }
    }
    bad
}

#[test]
fn real_kernel_names() {
    let n = CORPUS.len() + PUBLIC.len();
    assert!(n >= 150, "{n} names");
    let amd = CORPUS
        .iter()
        .chain(PUBLIC)
        .filter(|c| classify(c.0).vendor == Vendor::Amd)
        .count();
    assert!(amd >= 50, "{amd} AMD names");
    let mut bad = check(CORPUS);
    bad.extend(check(PUBLIC));
    assert!(
        bad.is_empty(),
        "{} misclassified:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn unknown_names_are_other_not_fp32() {
    for n in ["Kernel", "my_custom_kernel", "foo(float*)"] {
        let k = classify(n);
        assert_eq!(
            (k.op, k.precision),
            (OpClass::Other, Precision::Unknown),
            "{n}"
        );
        assert_eq!(k.bucket(), Precision::NonGemm);
    }
    // An unnamed-type GEMM is a GEMM of unknown precision: not FP32 either.
    let k = classify("triton_tem_fused_mm_0");
    assert_eq!((k.op, k.precision), (OpClass::Gemm, Precision::Unknown));
    assert_eq!(k.bucket(), Precision::NonGemm);
}

#[test]
fn buckets() {
    let b = |n: &str| classify(n).bucket();
    assert_eq!(b("ampere_sgemm_128x64_nn"), Precision::Fp32);
    assert_eq!(
        b(
            "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>(cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4::Params)"
        ),
        Precision::Tf32
    );
    assert_eq!(
        b("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"),
        Precision::Comm
    );
    assert_eq!(b("triton_poi_fused_add_0"), Precision::NonGemm);
}

#[test]
fn short_names() {
    assert_eq!(
        short_name(
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
            100
        ),
        "at::native::vectorized_elementwise_kernel<…>"
    );
    assert_eq!(
        short_name(
            "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>(cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4::Params)",
            100
        ),
        "cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4"
    );
    assert_eq!(
        short_name(
            "std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, float, false, true, false, false, 7, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)",
            100
        ),
        "internal::gemvx::kernel<…>"
    );
    assert_eq!(
        short_name(
            "_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_v3INS_28GridwiseGemm",
            100
        ),
        // As for demangled names: the anonymous namespace says nothing.
        "ck::tensor_operation::device::kernel_grouped_conv_fwd_xdl_cshuffle_v3<…>"
    );
    assert_eq!(
        short_name(
            "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
            100
        ),
        "at::native::cunn_SoftMaxForward<…>"
    );
    let long = short_name(&format!("Cijk_Ailk_Bljk_BBS_BH_{}", "X".repeat(300)), 60);
    assert_eq!(long.chars().count(), 60);
    assert!(long.ends_with('…'));
}

/// Softmax kernels from the corpus and the public traces: attention's
/// softmax, unless it is a log-softmax (the loss); fused attention kernels.
#[test]
fn softmax_on_its_own_is_unfused_attention_and_log_softmax_is_not() {
    let part = |n: &str| attention_part(n, &classify(n));
    for n in [
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
        "void at::native::(anonymous namespace)::cunn_SoftMaxForwardReg<c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue, long, 6>(c10::BFloat16*, c10::BFloat16 const*, long)",
        "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 3, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)",
        "void (anonymous namespace)::softmax_warp_backward<float, float, float, 10, false, false>(float*, float const*, float const*, int, int, int, bool const*)",
    ] {
        assert_eq!(part(n), AttnPart::Softmax, "{n}");
    }
    for n in [
        "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true>(float*, float const*, int, int, int)",
        "void (anonymous namespace)::softmax_warp_backward<float, float, float, 10, true, false>(float*, float const*, float const*, int, int, int, bool const*)",
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
        "void vllm::moe::topkGatingSoftmax<4, 128, 4, 16, int>(float const*, bool const*, float*, int, int*, int*, int, int, int)",
        "ampere_sgemm_128x64_nn",
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
    ] {
        assert_eq!(part(n), AttnPart::None, "{n}");
    }
    for n in [
        "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, false, false, false, false, true, true, false, false>(Flash_fwd_params)",
        "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
    ] {
        assert_eq!(part(n), AttnPart::Fused, "{n}");
    }
}

/// triton_kernels' MoE GEMMs (vLLM serving gpt-oss on MI300X, TraceLens's
/// public traces) are BF16 GEMMs with MXFP4 weights; Marlin's are INT4
/// weights. Plain BF16 GEMMs have full-width weights.
#[test]
fn gemms_with_4_bit_weights() {
    let ogs = "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu";
    let c = classify(ogs);
    assert_eq!((c.op, c.precision), (OpClass::Gemm, Precision::Bf16));
    assert!(low_bit_weights(ogs, &c));
    // TensorRT-LLM's MoE GEMMs on Blackwell: MXFP4 weights, MXFP8 activations.
    let bmm = "bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f";
    assert!(low_bit_weights(bmm, &classify(bmm)), "{:?}", classify(bmm));
    let marlin = "void marlin::Marlin<256, 1, 8, 8, 4, 8>(int4 const*, int4 const*, int4*, int4 const*, int, int, int, int*)";
    assert!(
        low_bit_weights(marlin, &classify(marlin)),
        "{:?}",
        classify(marlin)
    );
    for n in [
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI16x16x1_SN_LDSB1",
        // Not a GEMM, whatever its name holds.
        "_finalize_matmul_scatter_bf16",
    ] {
        assert!(!low_bit_weights(n, &classify(n)), "{n}");
    }
}

/// Kernels only training runs, from an H200 recording of a GPT-style model,
/// a conv net's cuDNN kernels and FlashAttention; a forward pass's are not.
#[test]
fn backward_and_optimizer_kernels_say_training() {
    for n in [
        "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, std::basic_string_view<char, std::char_traits<char> >)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float)#1}, std::array<char*, 3ul> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, std::basic_string_view<char, std::char_traits<char> >)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float)#1}, std::array<char*, 3ul>)",
        "fmha_cutlassB_f32_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<cutlass::arch::Sm80, float, true, false, false, 64, 64, 64, false>::Params)",
        "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_1x4x1_cga1x1x1_kernel0_0",
        "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >, true, false, false, false, false, false, false, false>(Flash_bwd_params)",
        "sm90_xmma_dgrad_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize256x32x32_warpgroupsize1x1x1_g1_execute_kernel__5x_cudnn",
        "_ZN2at6native43_GLOBAL__N__b6de9c8c_10_SoftMax_cu_9f978f6320cunn_SoftMaxBackwardILi4EfffNS1_26LogSoftMaxBackwardEpilogueEEEvPT0_PKT2_S8_l",
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, float, float, float, float, float, bool, float*, float*>(T1, T2, T3...)",
    ] {
        assert!(training_only(n), "{n}");
    }
    for n in [
        "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
        "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x64x64_4x1x1_cga1x1x1_kernel0_0",
        "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, false, false, false, false, true, true, false, false>(Flash_fwd_params)",
        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
        "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x64x32_stage5_warpsize2x2x1_g1_tensor16x8x8_kernel",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
    ] {
        assert!(!training_only(n), "{n}");
    }
}
