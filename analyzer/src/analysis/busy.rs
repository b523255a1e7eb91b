//! GPU busy time: the union of kernel, copy and memset activity per device, the
//! active window, and busy time per precision class.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU8, Ordering};

use rayon::prelude::*;

use super::kernels::{self, AttnPart};
use crate::model::{Gpu, GpuOp, GpuOpKind, Ns, Precision, StrId, Strings};

/// Precision class per interned name, worked out on first use: only
/// kernels' names are ever asked, and a Kineto trace interns tens of
/// thousands of other names (Python functions, CPU ops) that classifying
/// up front would cost a millisecond or two, on the diagnosis's first,
/// serial phase.
pub struct PrecisionMap<'s> {
    strings: &'s Strings,
    /// `Precision as u8` per name ([`PRECISION`]), its `kernels::AttnPart`
    /// ([`ATTN_SHIFT`]) and [`LOW_BIT`]; or [`UNSEEN`]. Two threads asking at once both classify
    /// and store the same code.
    codes: Vec<AtomicU8>,
}

/// What `PrecisionMap::facts` says of an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpClassFacts {
    pub precision: Precision,
    pub attention: AttnPart,
    /// A GEMM with 4-bit weights (`kernels::low_bit_weights`).
    pub low_bit: bool,
    /// A backward or optimizer kernel (`kernels::training_only`).
    pub training: bool,
}

/// No name's class yet.
const UNSEEN: u8 = u8::MAX;
/// The precision's bits of a code.
const PRECISION: u8 = 0x0f;
/// Where the `AttnPart` sits in a code (two bits).
const ATTN_SHIFT: u8 = 4;
/// A GEMM with 4-bit weights.
const LOW_BIT: u8 = 1 << 6;
/// A kernel only training runs (`kernels::training_only`). The highest code
/// is then 0xf8: never `UNSEEN`.
const TRAINING: u8 = 1 << 7;

impl<'s> PrecisionMap<'s> {
    pub fn new(strings: &'s Strings) -> PrecisionMap<'s> {
        PrecisionMap {
            strings,
            codes: (0..strings.len()).map(|_| AtomicU8::new(UNSEEN)).collect(),
        }
    }

    /// The class of an op: its own if a reader set one, else by name (kernels).
    pub fn of(&self, op: &GpuOp) -> Precision {
        self.facts(op).precision
    }

    /// `of`, with what the op's kernel is to attention and whether its
    /// weights are 4-bit, from one lookup (per op, on the busy pass and in
    /// the replay's walk).
    #[inline]
    pub fn facts(&self, op: &GpuOp) -> OpClassFacts {
        if op.kind() != GpuOpKind::Kernel {
            let own = op.precision();
            return OpClassFacts {
                precision: if own == Precision::Unknown {
                    Precision::NonGemm
                } else {
                    own
                },
                attention: AttnPart::None,
                low_bit: false,
                training: false,
            };
        }
        let c = self.code(op.name);
        OpClassFacts {
            precision: match op.precision() {
                Precision::Unknown => Precision::from_code(c & PRECISION),
                own => own,
            },
            attention: AttnPart::from_code((c >> ATTN_SHIFT) & 3),
            low_bit: c & LOW_BIT != 0,
            training: c & TRAINING != 0,
        }
    }

    #[inline]
    pub fn by_name(&self, name: StrId) -> Precision {
        Precision::from_code(self.code(name) & PRECISION)
    }

    /// What a kernel of this name is to attention.
    #[inline]
    pub fn attention_part(&self, name: StrId) -> AttnPart {
        AttnPart::from_code((self.code(name) >> ATTN_SHIFT) & 3)
    }

    #[inline]
    fn code(&self, name: StrId) -> u8 {
        let Some(code) = self.codes.get(name as usize) else {
            return Precision::NonGemm as u8;
        };
        match code.load(Ordering::Relaxed) {
            UNSEEN => self.classify(name, code),
            c => c,
        }
    }

    #[cold]
    fn classify(&self, name: StrId, code: &AtomicU8) -> u8 {
        let n = self.strings.get(name);
        let class = kernels::classify(n);
        let low_bit = if kernels::low_bit_weights(n, &class) {
            LOW_BIT
        } else {
            0
        };
        let attn = (kernels::attention_part(n, &class) as u8) << ATTN_SHIFT;
        let training = if kernels::training_only(n) {
            TRAINING
        } else {
            0
        };
        let c = class.bucket() as u8 | attn | low_bit | training;
        code.store(c, Ordering::Relaxed);
        c
    }
}

/// The ops of all streams of a GPU in (start, end) order, ties in stream
/// order (as a stable sort of the streams' lists, one after another, gives),
/// with their stream index. Each stream's list is sorted already, so this is
/// a merge: no list of all ops is built.
pub struct OpsByStart<'a> {
    /// For few streams: the streams with ops left, in stream order.
    live: Vec<Run<'a>>,
    /// For many streams: (start, end, stream) of each stream's next op.
    heap: Option<BinaryHeap<Reverse<(Ns, Ns, usize)>>>,
    streams: Vec<&'a [GpuOp]>,
    pos: Vec<usize>,
}

/// A stream's next op, and the ones after it.
struct Run<'a> {
    key: (Ns, Ns),
    stream: usize,
    op: &'a GpuOp,
    rest: std::slice::Iter<'a, GpuOp>,
}

impl<'a> OpsByStart<'a> {
    /// Streams beyond this many are merged with a heap.
    const LINEAR: usize = 8;

    pub fn new(g: &'a Gpu) -> OpsByStart<'a> {
        let streams: Vec<&[GpuOp]> = g.streams.iter().map(|s| &s.ops[..]).collect();
        if streams.len() <= Self::LINEAR {
            let live = streams
                .iter()
                .enumerate()
                .filter_map(|(stream, ops)| {
                    let mut rest = ops.iter();
                    let op = rest.next()?;
                    Some(Run {
                        key: (op.start, op.end),
                        stream,
                        op,
                        rest,
                    })
                })
                .collect();
            return OpsByStart {
                live,
                heap: None,
                streams: Vec::new(),
                pos: Vec::new(),
            };
        }
        let heap = streams
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.first().map(|o| Reverse((o.start, o.end, i))))
            .collect();
        OpsByStart {
            live: Vec::new(),
            heap: Some(heap),
            pos: vec![0; streams.len()],
            streams,
        }
    }
}

impl<'a> Iterator for OpsByStart<'a> {
    type Item = (usize, &'a GpuOp);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, &'a GpuOp)> {
        let Some(h) = &mut self.heap else {
            // The earliest head; the first stream on ties.
            let (first, rest) = self.live.split_first()?;
            let (mut k, mut best) = (0, first.key);
            for (j, r) in rest.iter().enumerate() {
                if r.key < best {
                    (k, best) = (j + 1, r.key);
                }
            }
            let r = &mut self.live[k];
            let out = (r.stream, r.op);
            match r.rest.next() {
                Some(o) => {
                    r.op = o;
                    r.key = (o.start, o.end);
                }
                None => {
                    self.live.remove(k);
                }
            }
            return Some(out);
        };
        let Reverse((_, _, s)) = h.pop()?;
        if let Some(o) = self.streams[s].get(self.pos[s] + 1) {
            h.push(Reverse((o.start, o.end, s)));
        }
        let op = &self.streams[s][self.pos[s]];
        self.pos[s] += 1;
        Some((s, op))
    }
}

/// Busy time of one GPU inside [lo, hi); `gap` is called, in order, with the
/// gaps between busy stretches there (what `intervals::gaps` of the ops'
/// union gives).
/// `op` is called with every op, in the same order.
pub fn for_each_gap(
    g: &Gpu,
    lo: Ns,
    hi: Ns,
    mut gap: impl FnMut(Ns, Ns),
    mut op: impl FnMut(&GpuOp),
) -> Ns {
    let mut busy = 0;
    // The union's current stretch, and the end of what has been gapped.
    let mut cur: Option<(Ns, Ns)> = None;
    let mut t = lo;
    let mut close = |(a, b): (Ns, Ns), t: &mut Ns| {
        busy += (b.min(hi) - a.max(lo)).max(0);
        if b > *t && a < hi {
            if a > *t {
                gap(*t, a.min(hi));
            }
            *t = (*t).max(b);
        }
    };
    for (_, o) in OpsByStart::new(g) {
        op(o);
        if o.end <= o.start {
            continue;
        }
        match &mut cur {
            Some(c) if o.start <= c.1 => c.1 = c.1.max(o.end),
            _ => {
                if let Some(c) = cur {
                    close(c, &mut t);
                }
                cur = Some((o.start, o.end));
            }
        }
    }
    if let Some(c) = cur {
        close(c, &mut t);
    }
    if t < hi {
        gap(t, hi);
    }
    busy
}

/// First start and last end of any op.
pub fn active_window(g: &Gpu) -> Option<(Ns, Ns)> {
    let lo = g
        .streams
        .iter()
        .filter_map(|s| s.ops.first())
        .map(|o| o.start)
        .min()?;
    let hi = g
        .streams
        .par_iter()
        .map(|s| s.ops.iter().map(|o| o.end).max().unwrap_or(Ns::MIN))
        .max()?;
    Some((lo, hi))
}

/// Busy time of kernels per class inside [lo, hi) (union within a class),
/// summed as ops come in start order, in a pass over them that does
/// something else too (`attribution::idle_gaps`). It also sums the FP32 and TF32 GEMM time
/// of each kernel name (all of it, not only the window's), for the
/// precision finding's evidence.
pub struct PrecisionBusy {
    lo: Ns,
    hi: Ns,
    /// Per class: the union's current stretch and the total so far.
    cur: [Option<(Ns, Ns)>; Precision::ALL.len() + 1],
    total: [Ns; Precision::ALL.len() + 1],
    /// Indexed by name id.
    fp32_tf32_by_name: Vec<Ns>,
    mix: KernelMix,
}

/// What some kernels are beyond their precision, as time in the window
/// (summed, clipped to it): attention's kernels, fused ones and softmax
/// kernels on their own, as attention leaves them when it runs unfused
/// (`kernels::AttnPart`); and GEMMs whose weights are 4-bit
/// (`kernels::low_bit_weights`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelMix {
    pub fused_ns: Ns,
    /// Of `fused_ns`, the FP32 kernels (SDPA's memory-efficient ones).
    pub fp32_attention_ns: Ns,
    /// Backward and optimizer kernels (`kernels::training_only`).
    pub training_ns: Ns,
    pub softmax_ns: Ns,
    /// Softmax time per kernel name id (all of it), for the evidence.
    pub softmax_by_name: Vec<(StrId, Ns)>,
    pub low_bit_gemm_ns: Ns,
}

impl PrecisionBusy {
    pub fn new(lo: Ns, hi: Ns) -> PrecisionBusy {
        PrecisionBusy {
            lo,
            hi,
            cur: [None; Precision::ALL.len() + 1],
            total: [0; Precision::ALL.len() + 1],
            fp32_tf32_by_name: Vec::new(),
            mix: KernelMix::default(),
        }
    }

    /// The next op in start order (clipping to [lo, hi) keeps that order).
    #[inline]
    pub fn add(&mut self, o: &GpuOp, pm: &PrecisionMap) {
        if o.kind() != GpuOpKind::Kernel {
            return;
        }
        let facts = pm.facts(o);
        let class = facts.precision;
        if matches!(class, Precision::Fp32 | Precision::Tf32) {
            let n = o.name as usize;
            if self.fp32_tf32_by_name.len() <= n {
                self.fp32_tf32_by_name.resize(n + 1, 0);
            }
            self.fp32_tf32_by_name[n] += o.dur();
        }
        if facts.attention == AttnPart::Softmax {
            let by = &mut self.mix.softmax_by_name;
            match by.iter_mut().find(|x| x.0 == o.name) {
                Some(x) => x.1 += o.dur(),
                None => by.push((o.name, o.dur())),
            }
        }
        let (a, b) = (o.start.max(self.lo), o.end.min(self.hi));
        if b <= a {
            return;
        }
        match facts.attention {
            AttnPart::Fused => {
                self.mix.fused_ns += b - a;
                if class == Precision::Fp32 {
                    self.mix.fp32_attention_ns += b - a;
                }
            }
            AttnPart::Softmax => self.mix.softmax_ns += b - a,
            AttnPart::None => {}
        }
        if facts.low_bit {
            self.mix.low_bit_gemm_ns += b - a;
        }
        if facts.training {
            self.mix.training_ns += b - a;
        }
        let p = class as usize;
        match &mut self.cur[p] {
            Some(c) if a <= c.1 => c.1 = c.1.max(b),
            c => {
                if let Some((x, y)) = *c {
                    self.total[p] += y - x;
                }
                *c = Some((a, b));
            }
        }
    }

    /// Busy time per class, FP32 and TF32 GEMM time per name id, and
    /// attention's kernels.
    pub fn finish(mut self) -> (Vec<(Precision, Ns)>, Vec<Ns>, KernelMix) {
        for (p, c) in self.cur.iter().enumerate() {
            if let Some((x, y)) = c {
                self.total[p] += y - x;
            }
        }
        let by_class = Precision::ALL
            .iter()
            .map(|&p| (p, self.total[p as usize]))
            .collect();
        self.mix.softmax_by_name.sort_by_key(|x| Reverse(x.1));
        (by_class, self.fp32_tf32_by_name, self.mix)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::model::Stream;

    /// Names are classified when first asked, each as `kernels::classify`
    /// does, and no other name is classified meanwhile.
    #[test]
    fn precision_map_classifies_names_when_asked() {
        let mut strings = Strings::new();
        let names = [
            "ampere_sgemm_128x64_nn",
            "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn",
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
            "nn.Module: Conv2d_1",
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
        ];
        let ids: Vec<StrId> = names.iter().map(|n| strings.intern(n)).collect();
        let pm = PrecisionMap::new(&strings);
        let seen = |pm: &PrecisionMap| {
            pm.codes
                .iter()
                .filter(|c| c.load(Ordering::Relaxed) != UNSEEN)
                .count()
        };
        assert_eq!(seen(&pm), 0);
        assert_eq!(pm.by_name(ids[1]), kernels::classify(names[1]).bucket());
        assert_eq!(seen(&pm), 1);
        for (&id, name) in ids.iter().zip(names) {
            assert_eq!(pm.by_name(id), kernels::classify(name).bucket(), "{name}");
            // Asked again: the stored class.
            assert_eq!(pm.by_name(id), kernels::classify(name).bucket(), "{name}");
        }
        assert_eq!(pm.by_name(ids[0]), Precision::Fp32);
        assert_eq!(pm.by_name(ids[2]), Precision::Comm);
        assert_eq!(pm.by_name(StrId::MAX), Precision::NonGemm);
    }

    proptest! {
        /// The merge gives what a stable sort of the streams' lists, one
        /// after another, by (start, end) gives: ties in stream order, empty
        /// streams skipped, with few streams (linear) and many (heap).
        #[test]
        fn ops_by_start_is_the_stable_sort(
            streams in prop::collection::vec(
                prop::collection::vec((0..4i64, 0..3i64), 0..40),
                1..13,
            )
        ) {
            let mut g = Gpu::default();
            for (id, gaps) in streams.iter().enumerate() {
                let mut t = 0;
                let mut ops: Vec<GpuOp> = gaps
                    .iter()
                    .enumerate()
                    .map(|(k, &(gap, dur))| {
                        t += gap;
                        GpuOp::new(GpuOpKind::Kernel, t, t + dur, 0, k as u32)
                    })
                    .collect();
                // As `Timeline::finalize` leaves them.
                ops.sort_by_key(|o| (o.start, o.end));
                g.streams.push(Stream { id: id as u64, ops });
            }
            let mut want: Vec<(usize, GpuOp)> = g
                .streams
                .iter()
                .enumerate()
                .flat_map(|(i, s)| s.ops.iter().map(move |o| (i, *o)))
                .collect();
            want.sort_by_key(|(_, o)| (o.start, o.end));
            let got: Vec<(usize, GpuOp)> = OpsByStart::new(&g).map(|(i, o)| (i, *o)).collect();
            prop_assert_eq!(got, want);
        }
    }
}
