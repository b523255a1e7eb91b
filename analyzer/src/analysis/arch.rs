//! The GPU's vendor and architecture, from what the trace says about the
//! device (Kineto `deviceProperties`, the native recording's device records):
//! NVIDIA compute capability, AMD gfx target. HIP reports a compute
//! capability too: gfx90a (MI200) is 9.0 and gfx942 (MI300X) is 9.4, so a
//! major version of 9 is Hopper only on an NVIDIA device.

use crate::model::Gpu;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Arch {
    Unknown,
    /// Pascal and older: no tensor cores.
    PrePascal,
    Pascal,
    Volta,
    Turing,
    Ampere,
    Ada,
    Hopper,
    Blackwell,
    /// AMD MI100 (gfx908).
    Cdna1,
    /// AMD MI200 (gfx90a).
    Cdna2,
    /// AMD MI300 (gfx940/941/942).
    Cdna3,
    /// AMD MI350 (gfx950).
    Cdna4,
}

impl Arch {
    /// From a device's name, compute capability and gfx target (if known).
    pub fn of(gpu: &Gpu) -> Arch {
        Arch::from_parts(&gpu.name, gpu.cc, &gpu.arch_name, gpu.hip)
    }

    /// `hip`: the device runs HIP, so it is AMD whatever its name says.
    pub fn from_parts(name: &str, cc: (u32, u32), gfx: &str, hip: bool) -> Arch {
        let n = name.to_ascii_lowercase();
        let amd = hip
            || gfx.starts_with("gfx")
            || n.contains("amd")
            || n.contains("instinct")
            || n.contains("radeon");
        if amd {
            let gfx = gfx.split(':').next().unwrap_or(gfx);
            return match gfx {
                "gfx908" => Arch::Cdna1,
                "gfx90a" => Arch::Cdna2,
                "gfx940" | "gfx941" | "gfx942" => Arch::Cdna3,
                "gfx950" => Arch::Cdna4,
                _ if n.contains("mi100") => Arch::Cdna1,
                _ if n.contains("mi35") => Arch::Cdna4,
                _ if n.contains("mi3") => Arch::Cdna3,
                _ if n.contains("mi2") => Arch::Cdna2,
                // HIP's compute capability: 9.0 gfx90a/gfx908, 9.4 gfx94x, 9.5 gfx950.
                _ => match cc {
                    (9, 4) => Arch::Cdna3,
                    (9, 5) => Arch::Cdna4,
                    (9, 0) => Arch::Cdna2,
                    _ => Arch::Unknown,
                },
            };
        }
        match cc {
            (0, _) => Arch::Unknown,
            (1..=5, _) => Arch::PrePascal,
            (6, _) => Arch::Pascal,
            (7, 5) => Arch::Turing,
            (7, _) => Arch::Volta,
            (8, 9) => Arch::Ada,
            (8, _) => Arch::Ampere,
            (9, _) => Arch::Hopper,
            _ => Arch::Blackwell,
        }
    }

    pub fn is_amd(self) -> bool {
        matches!(self, Arch::Cdna1 | Arch::Cdna2 | Arch::Cdna3 | Arch::Cdna4)
    }

    /// BF16 matrix math at full rate: NVIDIA Ampere and later, AMD CDNA2 and later.
    pub fn has_bf16(self) -> bool {
        matches!(
            self,
            Arch::Ampere
                | Arch::Ada
                | Arch::Hopper
                | Arch::Blackwell
                | Arch::Cdna2
                | Arch::Cdna3
                | Arch::Cdna4
        )
    }

    /// TF32 (NVIDIA Ampere+) or XF32 (CDNA3) tensor-core math for FP32 matmuls.
    pub fn has_tf32(self) -> bool {
        matches!(
            self,
            Arch::Ampere | Arch::Ada | Arch::Hopper | Arch::Blackwell | Arch::Cdna3
        )
    }

    /// FP8 matrix math: Hopper, Ada, Blackwell, CDNA3+.
    pub fn has_fp8(self) -> bool {
        matches!(
            self,
            Arch::Ada | Arch::Hopper | Arch::Blackwell | Arch::Cdna3 | Arch::Cdna4
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Arch::Unknown => "an unknown GPU",
            Arch::PrePascal => "pre-Pascal NVIDIA",
            Arch::Pascal => "NVIDIA Pascal",
            Arch::Volta => "NVIDIA Volta",
            Arch::Turing => "NVIDIA Turing",
            Arch::Ampere => "NVIDIA Ampere",
            Arch::Ada => "NVIDIA Ada",
            Arch::Hopper => "NVIDIA Hopper",
            Arch::Blackwell => "NVIDIA Blackwell",
            Arch::Cdna1 => "AMD CDNA1",
            Arch::Cdna2 => "AMD CDNA2",
            Arch::Cdna3 => "AMD CDNA3",
            Arch::Cdna4 => "AMD CDNA4",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures_of_the_corpus_devices() {
        let a = |name, cc, gfx| Arch::from_parts(name, cc, gfx, false);
        assert_eq!(a("AMD Instinct MI300X", (9, 4), ""), Arch::Cdna3);
        assert_eq!(a("AMD Instinct MI210", (9, 0), ""), Arch::Cdna2);
        assert_eq!(a("AMD Radeon Graphics", (9, 0), ""), Arch::Cdna2);
        assert_eq!(
            a("AMD Radeon Graphics", (9, 4), "gfx942:sramecc+:xnack-"),
            Arch::Cdna3
        );
        assert_eq!(a("NVIDIA H100", (9, 0), ""), Arch::Hopper);
        assert_eq!(a("NVIDIA A100-SXM4-80GB", (8, 0), ""), Arch::Ampere);
        assert_eq!(a("Tesla V100-SXM2-32GB", (7, 0), ""), Arch::Volta);
        assert_eq!(a("NVIDIA GeForce RTX 2080 Ti", (7, 5), ""), Arch::Turing);
        assert_eq!(a("NVIDIA L4", (8, 9), ""), Arch::Ada);
        assert_eq!(a("NVIDIA B200", (10, 0), ""), Arch::Blackwell);
        assert_eq!(a("Quadro GP100", (6, 0), ""), Arch::Pascal);
        assert_eq!(a("", (0, 0), ""), Arch::Unknown);
        // vLLM's MI300X traces: no names, HIP's compute capability, HIP calls.
        assert_eq!(a("", (9, 4), ""), Arch::Hopper);
        assert_eq!(Arch::from_parts("", (9, 4), "", true), Arch::Cdna3);
        assert_eq!(Arch::from_parts("", (0, 0), "", true), Arch::Unknown);
        assert!(!Arch::Volta.has_bf16() && Arch::Ampere.has_bf16() && Arch::Cdna3.has_fp8());
    }
}
