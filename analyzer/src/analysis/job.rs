//! What kind of job the trace shows, so that advice fits it: training or
//! inference, a serving engine, CUDA/HIP graphs, a DataLoader and its workers.
//! Everything comes from names the framework writes into the trace (Kineto
//! `cpu_op`/`python_function`/annotations, NVTX ranges, runtime API names)
//! and from the processes' command lines.

use rayon::prelude::*;
use serde::Serialize;

use crate::model::{Ns, Timeline};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Backward (autograd) ops or optimizer steps, or where the trace has
    /// no framework ops, backward or optimizer kernels.
    Training,
    /// Framework ops but neither backward ops nor optimizer steps, or a serving engine.
    Inference,
    /// The trace has no framework op names to tell.
    #[default]
    Unknown,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JobContext {
    pub mode: Mode,
    pub backward_ops: bool,
    pub optimizer_steps: bool,
    /// Backward or optimizer kernels (`kernels::training_only`), looked for
    /// where no framework op tells.
    pub backward_kernels: bool,
    /// "vLLM", "SGLang" or "TGI".
    pub serving_engine: Option<&'static str>,
    /// CUDA/HIP graph capture or instantiation calls.
    pub graph_capture: bool,
    /// Graph launches (replays).
    pub graph_replay: bool,
    /// A PyTorch DataLoader iterator in the trace.
    pub dataloader: bool,
    /// Its worker count where the trace tells: 0 for the single-process
    /// iterator, else the worker processes recorded.
    pub dataloader_workers: Option<u32>,
}

impl JobContext {
    pub fn inference(&self) -> bool {
        self.mode == Mode::Inference
    }

    /// A trace without framework ops (a shim recording) is training when
    /// its kernels are: at least 0.5% of kernel time in backward or
    /// optimizer kernels.
    pub fn from_kernels(&mut self, training_ns: Ns, kernel_ns: Ns) {
        if self.mode == Mode::Unknown && training_ns > 0 && training_ns * 200 >= kernel_ns {
            self.backward_kernels = true;
            self.mode = Mode::Training;
        }
    }

    /// Whether the job uses graphs already (CUDA graphs advice is moot).
    pub fn graphs(&self) -> bool {
        self.graph_capture || self.graph_replay
    }
}

/// Names worth a look: the distinct name ids of named host spans, in id
/// order (so the first engine named is the same on every run). Marked in a
/// bit set: a hash set took longer than the rest of the job's detection.
fn span_names(tl: &Timeline) -> Vec<u32> {
    let words = tl.strings.len().div_ceil(64);
    let seen = tl
        .processes
        .par_iter()
        .flat_map(|p| p.threads.par_iter())
        .fold(
            || vec![0u64; words],
            |mut seen, t| {
                for sp in t.spans.iter().filter(|s| s.kind.is_named()) {
                    if let Some(w) = seen.get_mut(sp.id as usize / 64) {
                        *w |= 1 << (sp.id % 64);
                    }
                }
                seen
            },
        )
        .reduce(
            || vec![0u64; words],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(a, b)| *a |= b);
                a
            },
        );
    let mut ids = Vec::new();
    for (i, &w) in seen.iter().enumerate() {
        let mut w = w;
        while w != 0 {
            ids.push((i * 64) as u32 + w.trailing_zeros());
            w &= w - 1;
        }
    }
    ids
}

const ENGINES: [(&str, &str); 4] = [
    ("vllm", "vLLM"),
    ("sglang", "SGLang"),
    ("text_generation_server", "TGI"),
    ("text-generation-launcher", "TGI"),
];

pub fn detect(tl: &Timeline) -> JobContext {
    let mut j = JobContext::default();
    let mut framework_ops = false;
    let mut multi_worker_iter = false;
    for id in span_names(tl) {
        let n = tl.strings.get(id);
        // Framework ops show that backward ops would have been seen too; a
        // step marker alone does not (native recordings carry ProfilerStep
        // through NVTX, but no aten ops).
        if n.starts_with("aten::") || n.starts_with("nn.Module") {
            framework_ops = true;
        }
        if n.contains("Backward") || n.starts_with("autograd::") || n.contains("aten::backward") {
            j.backward_ops = true;
        }
        if n.starts_with("Optimizer.step")
            || n.contains("optimizer.step")
            || n.contains("Optimizer.zero_grad")
        {
            j.optimizer_steps = true;
        }
        if n.contains("GraphLaunch") {
            j.graph_replay = true;
        }
        if n.contains("StreamBeginCapture") || n.contains("GraphInstantiate") {
            j.graph_capture = true;
        }
        if n.contains("DataLoader") {
            j.dataloader = true;
            if n.contains("_MultiProcessingDataLoaderIter") {
                multi_worker_iter = true;
            } else if n.contains("_SingleProcessDataLoaderIter") {
                j.dataloader_workers.get_or_insert(0);
            }
        }
        if j.serving_engine.is_none() {
            let l = n.to_ascii_lowercase();
            j.serving_engine = ENGINES.iter().find(|e| l.contains(e.0)).map(|e| e.1);
        }
    }
    for p in &tl.processes {
        let l = p.cmdline.to_ascii_lowercase();
        if let Some(e) = ENGINES.iter().find(|e| l.contains(e.0)) {
            j.serving_engine.get_or_insert(e.1);
        }
    }
    if multi_worker_iter {
        // Worker processes show up only in native recordings (children of the trainer).
        let trainers: Vec<u32> = tl
            .processes
            .iter()
            .filter(|p| {
                p.threads
                    .iter()
                    .any(|t| t.spans.iter().any(|s| s.kind.is_named() && s.arg != 0))
            })
            .map(|p| p.pid)
            .collect();
        let children = tl
            .processes
            .iter()
            .filter(|p| trainers.contains(&p.ppid))
            .count() as u32;
        j.dataloader_workers = (children > 0).then_some(children);
    }
    j.mode = if j.backward_ops || j.optimizer_steps {
        Mode::Training
    } else if j.serving_engine.is_some() || framework_ops {
        Mode::Inference
    } else {
        Mode::Unknown
    };
    j
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HostSpan, Process, Source, SpanKind, Thread};

    fn tl(names: &[&str], cmd: &str) -> Timeline {
        let mut tl = Timeline::new(Source::Kineto, "t");
        let spans = names
            .iter()
            .enumerate()
            .map(|(i, n)| HostSpan {
                ts: i as i64,
                dur: 1,
                arg: 0,
                id: tl.strings.intern(n),
                kind: SpanKind::CpuOp,
            })
            .collect();
        tl.processes.push(Process {
            pid: 1,
            cmdline: cmd.into(),
            threads: vec![Thread {
                tid: 1,
                spans,
                ..Thread::default()
            }],
            ..Process::default()
        });
        tl
    }

    #[test]
    fn training_inference_and_engines() {
        let t = detect(&tl(
            &[
                "aten::mm",
                "autograd::engine::evaluate_function: MmBackward0",
                "Optimizer.step#SGD.step",
            ],
            "",
        ));
        assert_eq!(t.mode, Mode::Training);
        let i = detect(&tl(&["aten::mm", "aten::softmax"], "python generate.py"));
        assert_eq!(i.mode, Mode::Inference);
        let v = detect(&tl(
            &["aten::mm"],
            "python -m vllm.entrypoints.openai.api_server",
        ));
        assert_eq!((v.mode, v.serving_engine), (Mode::Inference, Some("vLLM")));
        let g = detect(&tl(
            &[
                "cudaGraphLaunch",
                "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            ],
            "",
        ));
        assert!(g.graph_replay && g.dataloader && g.dataloader_workers == Some(0));
        assert_eq!(detect(&tl(&[], "")).mode, Mode::Unknown);
        assert_eq!(detect(&tl(&["ProfilerStep#3"], "")).mode, Mode::Unknown);
    }

    #[test]
    fn span_names_are_distinct_and_in_id_order() {
        // More than 64 names, so the set spans several words.
        let names: Vec<String> = (0..70).map(|i| format!("n{i}")).collect();
        let mut order: Vec<&str> = names.iter().rev().map(String::as_str).collect();
        order.extend(["n3", "n69", "n3"]);
        let t = tl(&order, "");
        let ids = span_names(&t);
        assert_eq!(ids.len(), 70);
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        let got: Vec<&str> = ids.iter().map(|&i| t.strings.get(i)).collect();
        assert!(got.contains(&"n0") && got.contains(&"n69"));
        // Unnamed (I/O) spans name no string.
        let mut io = tl(&["n0"], "");
        io.processes[0].threads[0].spans[0].kind = SpanKind::Host(stallscope_format::HostOp::Read);
        assert!(span_names(&io).is_empty());
    }

    #[test]
    fn the_first_engine_named_wins_whatever_the_order_of_spans() {
        // "sglang" is interned first, so it has the lower id.
        let a = detect(&tl(&["sglang::scheduler", "vllm::worker"], ""));
        let b = detect(&tl(
            &["sglang::scheduler", "vllm::worker", "sglang::scheduler"],
            "",
        ));
        assert_eq!(a.serving_engine, Some("SGLang"));
        assert_eq!(b.serving_engine, Some("SGLang"));
    }

    /// Without framework ops, backward or optimizer kernels make a job
    /// training from half a percent of kernel time; a stray one does not,
    /// and framework ops keep their word.
    #[test]
    fn kernels_tell_training_where_ops_do_not() {
        let mut j = JobContext::default();
        j.from_kernels(4, 1000);
        assert_eq!(j.mode, Mode::Unknown);
        j.from_kernels(5, 1000);
        assert_eq!((j.mode, j.backward_kernels), (Mode::Training, true));
        let mut inference = JobContext {
            mode: Mode::Inference,
            ..JobContext::default()
        };
        inference.from_kernels(500, 1000);
        assert_eq!(inference.mode, Mode::Inference);
    }
}
