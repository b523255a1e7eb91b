//! Which replays the findings need, run in one walk: the base, one per fix
//! the findings advise (each modeling that fix at its stated cost), the FP8
//! option, and the advised fixes all at once (`combined`). This is the
//! orchestration of the what-ifs; `findings` decides which fixes it will
//! advise before they run, and reads their results.
//!
//! Every estimate is a ratio of two replays over the same marks: the replay
//! with the fix over the replay without it. The finding's step after is the
//! mean step times that ratio, and its saving the window times one minus it,
//! so the two always agree.

use super::{BatchClock, Change, GRAPH_LAUNCH_NS, Replay, in_burst, is_host_work};
use crate::analysis::activity::Act;
use crate::analysis::arch::Arch;
use crate::analysis::busy::KernelMix;
use crate::analysis::context::{Context, ThreadRef};
use crate::analysis::precision::{Fp32Time, bf16_speedup};
use crate::analysis::types::Steps;
use crate::model::{Gpu, Ns, Precision, Source};

/// The boundaries the replays report: the host-side launch of each step's
/// first op (a mark also waits for the GPU work launched before it) and the
/// last step's end, else the window. A launch recorded after its op started
/// (skewed clocks, in traces from elsewhere) marks at the op's start, so the
/// marks still span the steps.
pub fn step_marks(steps: &Steps, (w0, w1): (Ns, Ns)) -> Vec<Ns> {
    if steps.steps.is_empty() {
        vec![w0, w1]
    } else {
        let mut m: Vec<Ns> = steps.steps.iter().map(|s| s.launch.min(s.start)).collect();
        m.push(steps.steps.last().map_or(w1, |s| s.end));
        m
    }
}

/// The fixes the what-ifs model, one replay lane each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fix {
    /// More DataLoader workers at the measured cost per batch.
    Data,
    /// Reads served from RAM.
    Io,
    /// CUDA graphs or torch.compile: Python dispatch at a per-launch cost.
    CpuPython,
    /// Host work outside launch bursts moved off the loop.
    HostWork,
    /// Allocator calls and offload copies out of the steady state.
    Memory,
    /// The blocking sync removed.
    Sync,
    /// Pinned, asynchronous copies.
    Transfer,
    /// Fused or graph-launched kernels.
    Launch,
    /// Cross-stream waits removed.
    Other,
    /// GEMMs in BF16 (FP16 before Ampere).
    Precision,
    /// BF16/FP16 GEMMs in FP8, where the architecture has it (an option).
    Fp8,
    /// Collectives without the wait for peers.
    Comm,
    /// Fused attention: the softmax kernels of unfused attention gone.
    Attention,
}

impl Fix {
    pub const ALL: [Fix; 13] = [
        Fix::Data,
        Fix::Io,
        Fix::CpuPython,
        Fix::HostWork,
        Fix::Memory,
        Fix::Sync,
        Fix::Transfer,
        Fix::Launch,
        Fix::Other,
        Fix::Precision,
        Fix::Fp8,
        Fix::Comm,
        Fix::Attention,
    ];

    pub fn index(self) -> usize {
        self as usize
    }
}

/// The data what-if's model: more workers at the measured cost per batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataModel {
    /// Workers in the recording (0: the main process loads its batches;
    /// None: the trace does not show them).
    pub workers: Option<usize>,
    /// Workers assumed by the fix (None: twice as many as recorded).
    pub workers_after: Option<usize>,
    /// CPU time per batch (main process), or the batch interval recorded.
    pub cost_per_batch_ns: Ns,
    /// Of a worker's `cost_per_batch_ns`, what it spent waiting for a CPU
    /// (run-queue delay): other load on the machine, which the clock leaves
    /// out, as the fix's workers are assumed to get the cores they need.
    pub cpu_wait_per_batch_ns: Ns,
    pub clock: BatchClock,
}

/// The workers the data fix assumes for `n` recorded ones: twice as many,
/// and at least 4.
pub fn workers_after(n: usize) -> usize {
    (2 * n).max(4)
}

/// Batches the DataLoader keeps in flight per worker (its default
/// prefetch_factor).
const PREFETCH: u32 = 2;

impl DataModel {
    /// The model for the batch waits on the critical host timeline, if
    /// there are enough to measure a cost.
    fn measure(cx: &Context, r: &Replay, launcher: ThreadRef, marks: &[Ns]) -> Option<DataModel> {
        let waits = r.batch_waits();
        let total: Ns = waits.iter().map(|w| w.1 - w.0).sum();
        let main: Ns = waits.iter().filter(|w| w.2).map(|w| w.1 - w.0).sum();
        if waits.is_empty() {
            return None;
        }
        if 2 * main >= total {
            // Loaded in the main process: each batch costs its loading time;
            // workers would load them in the background.
            let n = waits.iter().filter(|w| w.2).count().max(1) as Ns;
            let cost = main / n;
            let after = 4;
            return Some(DataModel {
                workers: Some(0),
                workers_after: Some(after),
                cost_per_batch_ns: cost,
                cpu_wait_per_batch_ns: 0,
                clock: BatchClock {
                    period_ns: cost / after as Ns,
                    queue: PREFETCH * after as u32,
                },
            });
        }
        if waits.len() < 2 {
            return None;
        }
        // Producers finish a batch every `interval` (when they are behind);
        // each worker then spends workers x interval per batch. The loop
        // took a batch at every wait, and one a step where it found one
        // ready (too quick to record): at least a batch per step started.
        let (t0, t1) = (waits[0].1, waits[waits.len() - 1].1);
        let steps = marks.iter().filter(|&&m| m > t0 && m <= t1).count();
        let batches = (waits.len() - 1).max(steps) as Ns;
        let interval = (t1 - t0) / batches;
        let producers = match cx.tl.source {
            Source::Kineto => Vec::new(),
            _ => cx.producers(launcher.0, launcher.1),
        };
        // Workers re-created each epoch count once.
        let workers = Some(cx.at_once(launcher.0, &producers)).filter(|&n| n > 0);
        // Time the producers waited for a CPU (a build or another job on
        // the machine slows the batches down; the fix's workers are assumed
        // to get cores), per batch per worker; under a twentieth of the
        // interval, the workers' own contention, and kept.
        let cpu_wait = workers.map_or(0, |n| {
            let waited: f64 = producers
                .iter()
                .map(|&p| cx.run_delay_at(p, t1) - cx.run_delay_at(p, t0))
                .sum();
            ((waited / n as f64) as Ns / batches).clamp(0, interval)
        });
        let cpu_wait = if 20 * cpu_wait >= interval {
            cpu_wait
        } else {
            0
        };
        let (after, period) = match workers {
            Some(n) => {
                let after = workers_after(n);
                (Some(after), (interval - cpu_wait) * n as Ns / after as Ns)
            }
            None => (None, interval / 2),
        };
        Some(DataModel {
            workers,
            workers_after: after,
            cost_per_batch_ns: workers.map_or(interval, |n| interval * n as Ns),
            cpu_wait_per_batch_ns: workers.map_or(0, |n| cpu_wait * n as Ns),
            clock: BatchClock {
                period_ns: period.max(1),
                queue: PREFETCH * after.unwrap_or(4) as u32,
            },
        })
    }
}

type Lane = (Vec<Ns>, Ns);

/// What the GPU ran, as the kernel-side fixes need it: the GPU (its
/// architecture), its busy time by precision and its kernel mix.
#[derive(Clone, Copy)]
pub struct GpuKernels<'a> {
    pub gpu: &'a Gpu,
    pub busy_by_precision: &'a [(Precision, Ns)],
    pub mix: &'a KernelMix,
}

/// Replay results.
pub struct Replays {
    /// Without change (communication kernels at their transfer time).
    pub base: Lane,
    /// As recorded: communication kernels with their wait for peers; None
    /// when none waited (then it equals `base`).
    pub full: Option<Lane>,
    /// Indexed by `Fix::index()`; None where the fix is not advised, or
    /// nothing of it is on the critical host timeline (the replay would
    /// equal `base`).
    pub by_fix: [Option<Lane>; Fix::ALL.len()],
    /// Every advised fix at once.
    pub combined: Lane,
    pub data: Option<DataModel>,
    /// Host-side fixes together with the data fix (indexed as `by_fix`),
    /// where batch waits are on the critical host timeline: with batches
    /// arriving as recorded, the time a host fix frees can go to waiting
    /// for the next batch instead (see [`paced_by_batches`]).
    pub with_batches: [Option<Lane>; Fix::ALL.len()],
    /// Every advised fix and the data fix at once, where `with_batches`
    /// has lanes and the data fix is not advised (else `combined` is it).
    pub combined_with_batches: Option<Lane>,
    /// The batch waits on the critical host timeline, in all.
    pub batch_wait_ns: Ns,
    /// Every advised fix at once but the kernel-side one indexed (see
    /// [`masked_by_host`]): what that fix saves once the host keeps up.
    pub combined_without: [Option<Lane>; Fix::ALL.len()],
    /// The same, from `combined_with_batches`.
    pub combined_with_batches_without: [Option<Lane>; Fix::ALL.len()],
    /// The two fixes CUDA graphs make (`GRAPH_FIXES`) at once, where both
    /// are advised: their findings overlap, and this is what they save
    /// together.
    pub graphs: Option<Lane>,
}

/// Fixes one remedy makes: CUDA graphs (or torch.compile) both cut the
/// Python dispatch between launches and take the launch calls off the host.
pub const GRAPH_FIXES: [Fix; 2] = [Fix::CpuPython, Fix::Launch];

/// Kernel-side fixes in `combined`, whose saving a host-bound loop masks:
/// faster kernels only make the GPU wait longer for the host. (FP8 is an
/// option, not in `combined`; the comm fix is applied to its ratio.)
pub fn masked_by_host(f: Fix) -> bool {
    matches!(f, Fix::Precision | Fix::Attention)
}

/// Host-side fixes whose saving the batch producers can swallow: the loop
/// gets to its next batch sooner, and waits there instead.
pub fn paced_by_batches(f: Fix) -> bool {
    matches!(
        f,
        Fix::Io
            | Fix::CpuPython
            | Fix::HostWork
            | Fix::Memory
            | Fix::Sync
            | Fix::Transfer
            | Fix::Launch
            | Fix::Other
    )
}

/// The length the marks of a lane span.
fn span(l: &Lane) -> f64 {
    let v = &l.0;
    (v.last().copied().unwrap_or(0) - v.first().copied().unwrap_or(0)).max(1) as f64
}

impl Replays {
    /// The what-if ratio of a fix: its replay over the replay without it
    /// (at most 1); 1 when nothing of it is on the critical timeline.
    pub fn ratio(&self, fix: Fix) -> f64 {
        let r = match (fix, &self.full) {
            (Fix::Comm, Some(full)) => span(&self.base) / span(full),
            (Fix::Comm, None) => 1.0,
            _ => self.by_fix[fix.index()]
                .as_ref()
                .map_or(1.0, |l| span(l) / span(&self.base)),
        };
        r.clamp(0.0, 1.0)
    }

    /// Whether the data fix was advised (it then has its own lane).
    pub fn data_advised(&self) -> bool {
        self.by_fix[Fix::Data.index()].is_some()
    }

    /// The ratio of `fix` together with the data fix, where that was
    /// replayed.
    pub fn ratio_with_batches(&self, fix: Fix) -> Option<f64> {
        let l = self.with_batches[fix.index()].as_ref()?;
        Some((span(l) / span(&self.base)).clamp(0.0, 1.0))
    }

    /// `combined_ratio` with the data fix among the fixes.
    pub fn combined_with_batches_ratio(&self) -> Option<f64> {
        let l = self.combined_with_batches.as_ref()?;
        Some((self.ratio(Fix::Comm) * span(l) / span(&self.base)).clamp(0.0, 1.0))
    }

    /// What the kernel-side `fix` saves once every other advised fix is
    /// made (with faster batches too where `paired`, as `combined` then
    /// is): the ratios, against the recording, of every other fix at once
    /// and of every fix at once.
    pub fn after_others(&self, fix: Fix, paired: bool) -> Option<(f64, f64)> {
        let (rest, all) = match (paired, &self.combined_with_batches) {
            (true, Some(all)) => (
                self.combined_with_batches_without[fix.index()].as_ref()?,
                all,
            ),
            _ => (self.combined_without[fix.index()].as_ref()?, &self.combined),
        };
        let to_recording =
            |l: &Lane| (self.ratio(Fix::Comm) * span(l) / span(&self.base)).clamp(0.0, 1.0);
        Some((to_recording(rest), to_recording(all)))
    }

    /// The ratio of the `GRAPH_FIXES` at once, where both were advised.
    pub fn graphs_ratio(&self) -> Option<f64> {
        let l = self.graphs.as_ref()?;
        Some((span(l) / span(&self.base)).clamp(0.0, 1.0))
    }

    /// The ratio of every fix at once, against the recording: over `base`,
    /// as every other fix's is, then brought to the recording by the comm
    /// fix's ratio. (Taken over `full` directly, a wait for peers before the
    /// first mark, which delays that mark and so shortens `full`'s span,
    /// made every fix at once save less than the precision fix alone.)
    pub fn combined_ratio(&self) -> f64 {
        (self.ratio(Fix::Comm) * span(&self.combined) / span(&self.base)).clamp(0.0, 1.0)
    }

    /// Replays the fixes the findings advise (`findings::advised`), each
    /// alone and all at once, and the FP8 option, in one walk over the ops;
    /// where batches pace the loop, also those of `pairable` with faster
    /// batches (`with_batches`).
    /// Fixes with nothing on the critical host timeline replay as the base
    /// does, and are not walked.
    pub fn run(
        cx: &Context,
        r: &Replay,
        launcher: ThreadRef,
        marks: &[Ns],
        kernels: &GpuKernels,
        advised: &[Fix],
        pairable: &[Fix],
    ) -> Replays {
        let GpuKernels {
            gpu,
            busy_by_precision,
            mix,
        } = *kernels;
        let unfused_attention = crate::analysis::attention::unfused(mix, busy_by_precision);
        let present = r.present();
        let data = DataModel::measure(cx, r, launcher, marks);
        let prec = precision_speedups(gpu, busy_by_precision);
        let speedup = |p: Precision| match (&prec, p) {
            (Some(x), Precision::Fp32) => x.0,
            (Some(x), Precision::Tf32) => x.1,
            _ => 1.0,
        };
        let keep_fp32_attention =
            Fp32Time::of(busy_by_precision, mix).attention_stays(Arch::of(gpu));
        let fp8 = fp8_speedup(gpu, busy_by_precision, mix.low_bit_gemm_ns);
        let fp8_speed = |p: Precision| match (fp8, p) {
            (Some(x), Precision::Bf16 | Precision::Fp16) => x,
            _ => 1.0,
        };
        let fix_change = |f: Fix| -> Option<Change> {
            let none = Change::none();
            let c = match f {
                Fix::Data if data.is_some() => Change {
                    batches: data.map(|d| d.clock),
                    ..none
                },
                Fix::Data => Change {
                    remove: &[Act::Data],
                    ..none
                },
                Fix::Io => Change {
                    remove: &[Act::Io],
                    ..none
                },
                Fix::CpuPython => Change {
                    per_launch_ns: Some(GRAPH_LAUNCH_NS),
                    ..none
                },
                Fix::HostWork => Change {
                    drop_host_work: true,
                    ..none
                },
                Fix::Memory => Change {
                    remove: &[Act::Memory],
                    drop_offload: true,
                    ..none
                },
                Fix::Sync => Change {
                    remove: &[Act::Sync],
                    ..none
                },
                Fix::Transfer => Change {
                    remove: &[Act::Transfer],
                    ..none
                },
                Fix::Launch => Change {
                    remove: &[Act::Launch],
                    ..none
                },
                Fix::Other => Change {
                    remove: &[Act::Wait],
                    drop_deps: true,
                    ..none
                },
                Fix::Precision => Change {
                    speedup: &speedup,
                    keep_fp32_attention,
                    ..none
                },
                Fix::Fp8 => Change {
                    speedup: &fp8_speed,
                    ..none
                },
                Fix::Comm => Change {
                    comm_wait: true,
                    ..none
                },
                Fix::Attention => Change {
                    drop_softmax: true,
                    ..none
                },
            };
            let on = match f {
                Fix::Data => present(&[Act::Data], false),
                Fix::Io => present(&[Act::Io], false),
                Fix::CpuPython => r.has_segment(in_burst),
                Fix::HostWork => r.has_segment(is_host_work),
                Fix::Memory => present(&[Act::Memory], true),
                Fix::Sync => present(&[Act::Sync], false),
                Fix::Transfer => present(&[Act::Transfer], false),
                Fix::Launch => present(&[Act::Launch], false),
                Fix::Other => true,
                Fix::Precision => prec.is_some(),
                Fix::Fp8 => fp8.is_some(),
                Fix::Comm => r.comm_waits(),
                Fix::Attention => unfused_attention,
            };
            // FP8 is an option, not advised: its lane runs wherever it applies.
            (on && (f == Fix::Fp8 || advised.contains(&f))).then_some(c)
        };
        let fixes: Vec<(Fix, Change)> = Fix::ALL
            .into_iter()
            .filter_map(|f| fix_change(f).map(|c| (f, c)))
            .collect();
        // Every advised fix at once: the union of their lanes' changes. FP8
        // is an option, not advised; the comm fix is applied to the ratio
        // instead (see `combined_ratio`).
        let together: Vec<&Change> = fixes
            .iter()
            .filter(|(f, _)| !matches!(f, Fix::Fp8 | Fix::Comm))
            .map(|(_, c)| c)
            .collect();
        let remove: Vec<Act> = removed(&together);
        let unchanged: &(dyn Fn(Precision) -> f64 + Sync) = &|_| 1.0;
        // Of the advised fixes, only the precision fix changes kernel speeds.
        let speedup = fixes
            .iter()
            .find(|(f, _)| *f == Fix::Precision)
            .map_or(unchanged, |(_, c)| c.speedup);
        let combined = union(&together, &remove, speedup);
        // Where batches pace the loop, each host-side fix with faster
        // batches, and, when the data fix is not advised (the batch waits
        // idle no GPU), all of them with it (see `paced_by_batches`); an
        // advised data fix is in `combined` already.
        let data_advised = fixes.iter().any(|(f, _)| *f == Fix::Data);
        let batch_fix = data.map(|d| Change {
            batches: Some(d.clock),
            ..Change::none()
        });
        let pairs: Vec<(Fix, [&Change; 2])> = match &batch_fix {
            Some(b) => fixes
                .iter()
                .filter(|(f, _)| paced_by_batches(*f) && pairable.contains(f))
                .map(|(f, c)| (*f, [c, b]))
                .collect(),
            None => Vec::new(),
        };
        let all: Vec<&Change> = match &batch_fix {
            Some(b) if !pairs.is_empty() && !data_advised => {
                together.iter().copied().chain([b]).collect()
            }
            _ => Vec::new(),
        };
        let removes: Vec<Vec<Act>> = pairs.iter().map(|(_, p)| removed(p)).collect();
        let all_removed = removed(&all);
        let mut extra: Vec<Change> = pairs
            .iter()
            .zip(&removes)
            .map(|((_, p), rm)| union(p, rm, unchanged))
            .collect();
        if !all.is_empty() {
            extra.push(union(&all, &all_removed, speedup));
        }
        // Every advised fix at once but one kernel-side fix, from each
        // combined lane there is (see `masked_by_host`); only where other
        // fixes are left to make.
        let masked: Vec<Fix> = fixes
            .iter()
            .map(|(f, _)| *f)
            .filter(|f| masked_by_host(*f) && together.len() > 1)
            .collect();
        let own = |f: Fix| fixes.iter().find(|(g, _)| *g == f).map(|(_, c)| c);
        let rests: Vec<(Fix, bool, Vec<&Change>)> = masked
            .iter()
            .flat_map(|&f| {
                let from_all = (!all.is_empty()).then(|| (f, true, but(own(f), &all)));
                [Some((f, false, but(own(f), &together))), from_all]
            })
            .flatten()
            .collect();
        let rest_removed: Vec<Vec<Act>> = rests.iter().map(|(_, _, p)| removed(p)).collect();
        let rest_changes: Vec<Change> = rests
            .iter()
            .zip(&rest_removed)
            .map(|((f, _, p), rm)| {
                union(
                    p,
                    rm,
                    if *f == Fix::Precision {
                        unchanged
                    } else {
                        speedup
                    },
                )
            })
            .collect();
        let graph_parts: Vec<&Change> = GRAPH_FIXES.iter().filter_map(|&f| own(f)).collect();
        let graph_removed = removed(&graph_parts);
        let graphs = (graph_parts.len() == GRAPH_FIXES.len())
            .then(|| union(&graph_parts, &graph_removed, unchanged));
        let base = Change::none();
        let mut refs: Vec<&Change> = vec![&base, &combined];
        refs.extend(fixes.iter().map(|(_, c)| c));
        refs.extend(extra.iter());
        refs.extend(rest_changes.iter());
        refs.extend(graphs.iter());
        let mut out = r.run_all(&refs, marks).into_iter();
        let base = out.next().expect("the base lane");
        let combined = out.next().expect("the combined lane");
        let mut by_fix: [Option<Lane>; Fix::ALL.len()] = Default::default();
        for (f, _) in &fixes {
            by_fix[f.index()] = out.next();
        }
        let mut with_batches: [Option<Lane>; Fix::ALL.len()] = Default::default();
        for (f, _) in &pairs {
            with_batches[f.index()] = out.next();
        }
        let combined_with_batches = if all.is_empty() { None } else { out.next() };
        let mut combined_without: [Option<Lane>; Fix::ALL.len()] = Default::default();
        let mut combined_with_batches_without: [Option<Lane>; Fix::ALL.len()] = Default::default();
        for (f, batches, _) in &rests {
            let slot = if *batches {
                &mut combined_with_batches_without
            } else {
                &mut combined_without
            };
            slot[f.index()] = out.next();
        }
        let graphs = graphs.and_then(|_| out.next());
        Replays {
            base,
            full: by_fix[Fix::Comm.index()].take(),
            by_fix,
            combined,
            data,
            with_batches,
            combined_with_batches,
            batch_wait_ns: r.batch_waits().iter().map(|w| w.1 - w.0).sum(),
            combined_without,
            combined_with_batches_without,
            graphs,
        }
    }
}

/// The changes of `from` but `own` (which `from` holds by reference).
fn but<'a, 'c>(own: Option<&Change<'c>>, from: &[&'a Change<'c>]) -> Vec<&'a Change<'c>> {
    from.iter()
        .copied()
        .filter(|c| !own.is_some_and(|o| std::ptr::eq(*c, o)))
        .collect()
}

/// The activities any of `parts` removes.
fn removed(parts: &[&Change]) -> Vec<Act> {
    parts
        .iter()
        .flat_map(|c| c.remove.iter().copied())
        .collect()
}

/// The changes of `parts` at once, with kernel speeds from `speedup`;
/// `remove` is [`removed`] of them.
fn union<'c>(
    parts: &[&Change<'c>],
    remove: &'c [Act],
    speedup: &'c (dyn Fn(Precision) -> f64 + Sync),
) -> Change<'c> {
    Change {
        remove,
        drop_offload: parts.iter().any(|c| c.drop_offload),
        speedup,
        keep_fp32_attention: parts.iter().any(|c| c.keep_fp32_attention),
        drop_softmax: parts.iter().any(|c| c.drop_softmax),
        per_launch_ns: parts.iter().find_map(|c| c.per_launch_ns),
        drop_host_work: parts.iter().any(|c| c.drop_host_work),
        batches: parts.iter().find_map(|c| c.batches),
        drop_deps: parts.iter().any(|c| c.drop_deps),
        comm_wait: false,
    }
}

/// The assumed speed-up of BF16/FP16 GEMM time moved to FP8, where that is
/// the next step: nothing left in FP32/TF32, FP8 not in use yet and no
/// tenth of those GEMMs with 4-bit weights already (`low_bit_ns`: a model
/// quantized past FP8), on an architecture that runs FP8 faster, with at
/// least a tenth of the kernel time in BF16/FP16 GEMMs.
pub fn fp8_speedup(
    gpu: &Gpu,
    busy_by_precision: &[(Precision, Ns)],
    low_bit_ns: Ns,
) -> Option<f64> {
    let get = |p: Precision| {
        busy_by_precision
            .iter()
            .find(|x| x.0 == p)
            .map_or(0, |x| x.1)
    };
    let kernels: Ns = busy_by_precision.iter().map(|x| x.1).sum();
    let half = get(Precision::Bf16) + get(Precision::Fp16);
    if get(Precision::Fp32) + get(Precision::Tf32) > 0
        || get(Precision::Fp8) > 0
        || kernels == 0
        || half * 10 < kernels
        || low_bit_ns * 10 >= half
    {
        return None;
    }
    crate::analysis::precision::fix(Precision::Bf16, crate::analysis::arch::Arch::of(gpu), false)
        .map(|f| f.speedup)
}

/// The assumed speed-ups of FP32 and TF32 GEMM time when moved to BF16, if
/// the GPU ran any.
pub fn precision_speedups(gpu: &Gpu, busy_by_precision: &[(Precision, Ns)]) -> Option<(f64, f64)> {
    let get = |p: Precision| {
        busy_by_precision
            .iter()
            .find(|x| x.0 == p)
            .map_or(0, |x| x.1)
    };
    let kernels: Ns = busy_by_precision.iter().map(|x| x.1).sum();
    if get(Precision::Fp32) + get(Precision::Tf32) == 0 || kernels == 0 {
        return None;
    }
    Some((
        bf16_speedup(Precision::Fp32, gpu).0,
        bf16_speedup(Precision::Tf32, gpu).0,
    ))
}
