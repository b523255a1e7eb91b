//! The precision fix for each architecture, and the speed-up each one is
//! assumed to bring (the precision what-if divides GEMM time by it). Which
//! kernels are FP32, TF32 or BF16 is `kernels`' business; this module says
//! what to move them to on this GPU.
//!
//! Dense peak ratios from the vendors' datasheets, discounted because real
//! GEMMs reach a smaller share of the tensor-core peak:
//! - V100: FP32 15.7, FP16 tensor 125 TFLOP/s (8x). No BF16 before Ampere.
//! - A100: FP32 19.5, TF32 156, BF16 312 (8x, 16x); H100 SXM: FP32 67, TF32 495, BF16 990.
//! - L4 and L40S (Ada): TF32 tensor only 2x FP32; GeForce Ada cards 1x.
//! - MI250X: FP32 matrix 95.7, BF16 383 (4x); MI300X: FP32 matrix 163, BF16 1307 (8x).
//! - FP8 doubles BF16's peak on Hopper, Blackwell and MI300.
//!
//! Measured on an H200 (tests/gpu/whatif.sh, 2026-12-04), GEMM time per
//! training run of an MLP in FP32, with TF32 matmuls, and under BF16 autocast:
//! 4 layers 4096 wide on 8192 tokens, 2998 / 524 / 204 ms (5.7x, then 2.6x);
//! 8 layers 2048 wide on 16384 tokens, 3012 / 512 / 194 ms (5.9x, 2.6x).
//!
//! FP32 attention is SDPA's memory-efficient kernels (`fmha_cutlass*_f32`:
//! FlashAttention and cuDNN take 16-bit inputs only), on SIMT cores whatever
//! the matmul precision. TF32 leaves them as they are: on the H200, a GPT-style
//! model's 16.5 ms of them per step took 16.7 ms with TF32 matmuls, and 1.8 ms
//! (cuDNN flash attention) under BF16 autocast.

use super::arch::Arch;
use super::busy::KernelMix;
use crate::model::{Gpu, Ns, Precision};

/// Whether the first step from FP32 on `arch` is TF32 matmuls (the fix that
/// `fix` advises there), not a 16-bit autocast.
pub fn tf32_first(arch: Arch) -> bool {
    matches!(
        arch,
        Arch::Ampere | Arch::Ada | Arch::Hopper | Arch::Blackwell
    )
}

/// The kernel time the precision fix is about: FP32 GEMM/conv, FP32 fused
/// attention and TF32 GEMM/conv, in the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fp32Time {
    pub gemm: Ns,
    pub attention: Ns,
    pub tf32: Ns,
}

impl Fp32Time {
    pub fn of(busy_by_precision: &[(Precision, Ns)], mix: &KernelMix) -> Fp32Time {
        let get = |p: Precision| {
            busy_by_precision
                .iter()
                .find(|x| x.0 == p)
                .map_or(0, |x| x.1)
        };
        let fp32 = get(Precision::Fp32);
        let attention = mix.fp32_attention_ns.min(fp32);
        Fp32Time {
            gemm: fp32 - attention,
            attention,
            tf32: get(Precision::Tf32),
        }
    }

    pub fn total(&self) -> Ns {
        self.gemm + self.attention + self.tf32
    }

    /// Where the fix starts: the matmuls' precision, FP32 or TF32 (FP32
    /// attention sits beside either: a TF32 job's SDPA runs in FP32 too).
    pub fn from(&self) -> Precision {
        if self.tf32 > self.gemm {
            Precision::Tf32
        } else {
            Precision::Fp32
        }
    }

    /// Whether FP32 attention keeps its time under the fix advised on
    /// `arch`: TF32 matmuls do not reach it; a 16-bit autocast does.
    pub fn attention_stays(&self, arch: Arch) -> bool {
        self.from() == Precision::Fp32 && tf32_first(arch) && !self.autocast_first(arch)
    }

    /// Whether the fix skips the TF32 step where TF32 comes first: that
    /// step reaches the FP32 GEMMs only, and here FP32 attention (SDPA on
    /// FP32 inputs, outside autocast) outweighs them, so the fix is a
    /// 16-bit autocast with attention inside it. Advising TF32 there would
    /// leave most of the FP32 time where it is.
    pub fn autocast_first(&self, arch: Arch) -> bool {
        self.from() == Precision::Fp32 && tf32_first(arch) && self.attention > self.gemm
    }

    /// The advised move on `arch` for this time: the module's `fix` from
    /// where it starts, but BF16 autocast where [`Self::autocast_first`].
    pub fn fix(&self, arch: Arch, inference: bool) -> Option<PrecisionFix> {
        if !self.autocast_first(arch) {
            return fix(self.from(), arch, inference);
        }
        // The GEMMs keep the TF32 step's ratio (BF16 gives more: they are
        // the lesser part here); the text is BF16 autocast's, as BF16 is
        // there on every TF32-first architecture.
        let first = fix(Precision::Fp32, arch, inference)?;
        let autocast = fix(Precision::Tf32, arch, inference)?.fix;
        Some(PrecisionFix {
            fix: format!(
                "{autocast}, with attention inside it: scaled_dot_product_attention on FP32 \
                 q, k, v runs its FP32 kernels, which TF32 matmuls \
                 (set_float32_matmul_precision) do not reach"
            ),
            ..first
        })
    }
}

/// The advised move for one class of GEMM time.
#[derive(Debug, Clone, PartialEq)]
pub struct PrecisionFix {
    /// GEMM time divides by this.
    pub speedup: f64,
    /// What the what-if assumed, for the finding's `assumption`.
    pub assumption: String,
    pub fix: String,
}

/// The advised fix for `from` GEMM/conv time on `arch`; None where there is
/// nothing to move to (already reduced precision, or no faster math).
pub fn fix(from: Precision, arch: Arch, inference: bool) -> Option<PrecisionFix> {
    let an = arch.name();
    let fp16 = |speedup: f64, peak: &str| PrecisionFix {
        speedup,
        assumption: format!(
            "FP32 -> FP16 tensor cores ~{speedup}x on {an} ({peak}; no BF16 before Ampere)"
        ),
        fix: if inference {
            "run the model in FP16: model.half(), or torch.autocast(\"cuda\", dtype=torch.float16) \
             around inference (BF16 needs Ampere or newer)"
                .into()
        } else {
            "mixed precision in FP16: torch.autocast(\"cuda\", dtype=torch.float16) around the \
             forward pass and loss, with torch.cuda.amp.GradScaler for the backward pass (BF16 \
             needs Ampere or newer)"
                .into()
        },
    };
    let bf16_fix = if inference {
        "run the model in BF16: torch.autocast(\"cuda\", dtype=torch.bfloat16) around inference, \
         or model.to(torch.bfloat16)"
    } else {
        "torch.autocast(\"cuda\", dtype=torch.bfloat16) around the forward pass and loss (no \
         GradScaler needed with BF16)"
    };
    let p = match (from, arch) {
        (Precision::Fp32, Arch::Volta | Arch::Turing) => fp16(2.5, "peak ratio 8x, discounted"),
        (Precision::Fp32, Arch::Cdna1) => fp16(2.5, "peak ratio ~8x, discounted"),
        (Precision::Fp32, Arch::Pascal) => fp16(1.5, "no tensor cores; GP100 runs FP16 at 2x"),
        (Precision::Fp32, Arch::PrePascal) => return None,
        (Precision::Fp32, a) if tf32_first(a) => {
            let (speedup, why) = match arch {
                Arch::Hopper => (5.5, "measured 5.7-5.9x on H200 GEMMs; peak ratio 7.4x"),
                Arch::Blackwell => (5.5, "as measured on Hopper; peak ratio ~14x"),
                Arch::Ada => (1.5, "peak ratio 2x on L4/L40S, 1x on GeForce cards"),
                _ => (3.0, "peak ratio 8x, discounted"),
            };
            PrecisionFix {
                speedup,
                assumption: format!(
                    "FP32 SIMT -> TF32 tensor cores ~{speedup}x on {an} ({why}); BF16 would \
                     add ~{}x",
                    tf32_to_bf16(arch).0
                ),
                fix: format!(
                    "smallest step: torch.set_float32_matmul_precision(\"high\") (TF32 tensor \
                     cores for FP32 matmuls, one line); then {bf16_fix}"
                ),
            }
        }
        (Precision::Fp32, Arch::Cdna2 | Arch::Cdna3 | Arch::Cdna4) => {
            let s = if arch == Arch::Cdna2 { 3.0 } else { 4.0 };
            PrecisionFix {
                speedup: s,
                assumption: format!(
                    "FP32 matrix cores -> BF16 ~{s}x on {an} (peak ratio {}x, discounted)",
                    if arch == Arch::Cdna2 { 4 } else { 8 }
                ),
                fix: bf16_fix.to_string(),
            }
        }
        (Precision::Fp32, Arch::Unknown) => PrecisionFix {
            speedup: 2.0,
            assumption: "FP32 -> reduced-precision tensor cores ~2x assumed on an unknown GPU \
                         (the trace does not name it)"
                .into(),
            fix: format!(
                "{bf16_fix} on Ampere/CDNA2 or newer; FP16 autocast with a GradScaler on older GPUs"
            ),
        },
        (Precision::Tf32, a) if a.has_bf16() => {
            let (speedup, why) = tf32_to_bf16(a);
            PrecisionFix {
                speedup,
                assumption: format!("TF32 -> BF16 ~{speedup}x on {an} ({why})"),
                fix: bf16_fix.to_string(),
            }
        }
        (Precision::Tf32, _) => PrecisionFix {
            speedup: 1.6,
            assumption: format!("TF32 -> 16-bit ~1.6x assumed on {an}"),
            fix: bf16_fix.to_string(),
        },
        (
            Precision::Bf16 | Precision::Fp16,
            Arch::Hopper | Arch::Blackwell | Arch::Cdna3 | Arch::Cdna4,
        ) => PrecisionFix {
            speedup: 1.3,
            assumption: format!(
                "BF16/FP16 -> FP8 ~1.3x on the GEMMs on {an} (peak ratio 2x, discounted for \
                     scaling casts and the layers FP8 does not cover)"
            ),
            fix: "optional: FP8 GEMMs with Transformer Engine (te.Linear layers under \
                      te.fp8_autocast); validate accuracy against a BF16 run first"
                .into(),
        },
        _ => return None,
    };
    Some(p)
}

/// TF32 -> BF16 on a GPU with both: the peak ratio is 2x everywhere; on an
/// H200 the GEMM time fell 2.6x (TF32 GEMMs reach less of their peak than
/// BF16 ones), elsewhere it is discounted.
fn tf32_to_bf16(arch: Arch) -> (f64, &'static str) {
    match arch {
        Arch::Hopper | Arch::Blackwell => (
            2.5,
            "peak ratio 2x, but TF32 runs further below its peak: measured 2.6x on H200 GEMMs",
        ),
        _ => (1.8, "peak ratio 2x, discounted"),
    }
}

/// The speed-up assumed for `from` GEMM/conv time on `gpu` once the advised
/// fix is applied, with a sentence saying why (1.0 when nothing is advised).
/// Training is assumed; the assumption does not depend on it.
pub fn bf16_speedup(from: Precision, gpu: &Gpu) -> (f64, String) {
    match fix(from, Arch::of(gpu), false) {
        Some(f) if matches!(from, Precision::Fp32 | Precision::Tf32) => (f.speedup, f.assumption),
        _ => (1.0, "already reduced precision".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_architecture_has_its_fix() {
        let v = fix(Precision::Fp32, Arch::Volta, false).unwrap();
        assert!(v.fix.contains("float16") && v.fix.contains("GradScaler"));
        assert!(!v.fix.contains("torch.bfloat16") && !v.assumption.contains("BF16 tensor"));
        let a = fix(Precision::Fp32, Arch::Ampere, false).unwrap();
        assert!(a.fix.contains("set_float32_matmul_precision(\"high\")"));
        let m = fix(Precision::Fp32, Arch::Cdna3, false).unwrap();
        assert!(m.fix.contains("bfloat16") && m.assumption.contains("CDNA3"));
        assert!(!m.assumption.contains("Hopper"));
        let t = fix(Precision::Tf32, Arch::Ampere, false).unwrap();
        assert!(t.speedup < a.speedup * 1.8);
        let f8 = fix(Precision::Bf16, Arch::Hopper, false).unwrap();
        assert!(f8.fix.contains("Transformer Engine") && f8.assumption.contains("FP8"));
        assert!(fix(Precision::Bf16, Arch::Ampere, false).is_none());
        let inf = fix(Precision::Fp32, Arch::Volta, true).unwrap();
        assert!(!inf.fix.contains("GradScaler"));
    }

    /// A TF32 job's SDPA runs in FP32: however long its attention, the fix
    /// starts from TF32 (BF16 autocast, which moves attention too); an FP32
    /// job's attention stays put under TF32 matmuls, not under autocast.
    #[test]
    fn fp32_attention_follows_the_matmuls() {
        let mix = |attention| KernelMix {
            fp32_attention_ns: attention,
            ..KernelMix::default()
        };
        let tf32_job = Fp32Time::of(&[(Precision::Fp32, 60), (Precision::Tf32, 40)], &mix(60));
        assert_eq!((tf32_job.gemm, tf32_job.attention), (0, 60));
        assert_eq!(tf32_job.from(), Precision::Tf32);
        assert!(!tf32_job.attention_stays(Arch::Hopper));
        let fp32_job = Fp32Time::of(&[(Precision::Fp32, 100)], &mix(10));
        assert_eq!(fp32_job.from(), Precision::Fp32);
        assert!(fp32_job.attention_stays(Arch::Hopper) && fp32_job.attention_stays(Arch::Ampere));
        // Autocast is the first step there.
        assert!(!fp32_job.attention_stays(Arch::Volta) && !fp32_job.attention_stays(Arch::Cdna3));
        // Sums of overlapping kernels never exceed the union.
        assert_eq!(Fp32Time::of(&[(Precision::Fp32, 5)], &mix(9)).gemm, 0);
        // FP32 attention beside BF16 GEMMs: TF32 would reach nothing.
        let sdpa_only = Fp32Time::of(&[(Precision::Fp32, 30), (Precision::Bf16, 70)], &mix(30));
        assert!(sdpa_only.autocast_first(Arch::Hopper) && !sdpa_only.attention_stays(Arch::Hopper));
        let f = sdpa_only.fix(Arch::Hopper, false).unwrap().fix;
        assert!(
            f.contains("torch.bfloat16") && !f.starts_with("smallest step"),
            "{f}"
        );
        assert!(!fp32_job.autocast_first(Arch::Hopper));
        assert!(!sdpa_only.autocast_first(Arch::Volta) && !tf32_job.autocast_first(Arch::Hopper));
    }

    #[test]
    fn speedups_state_their_assumption() {
        let h100 = Gpu {
            name: "NVIDIA H100".into(),
            cc: (9, 0),
            ..Gpu::default()
        };
        let (f, why) = bf16_speedup(Precision::Fp32, &h100);
        assert!(f > 1.0 && why.contains("Hopper"));
        assert_eq!(bf16_speedup(Precision::Bf16, &h100).0, 1.0);
        let mi300 = Gpu {
            name: "AMD Instinct MI300X".into(),
            cc: (9, 4),
            ..Gpu::default()
        };
        assert!(bf16_speedup(Precision::Fp32, &mi300).1.contains("CDNA3"));
    }
}
