//! What kind of job the trace shows, so that advice fits it: training or
//! inference, a serving engine, CUDA/HIP graphs, a DataLoader and its workers.
//! Everything comes from names the framework writes into the trace (Kineto
//! `cpu_op`/`python_function`/annotations, NVTX ranges, runtime API names)
//! and from the processes' command lines.

use rayon::prelude::*;
use rustc_hash::FxHashSet;
use serde::Serialize;

use crate::model::Timeline;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Backward (autograd) ops or optimizer steps.
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

    /// Whether the job uses graphs already (CUDA graphs advice is moot).
    pub fn graphs(&self) -> bool {
        self.graph_capture || self.graph_replay
    }
}

/// Names worth a look: the distinct name ids of named host spans.
fn span_names(tl: &Timeline) -> FxHashSet<u32> {
    tl.processes
        .par_iter()
        .flat_map(|p| p.threads.par_iter())
        .map(|t| {
            let mut s = FxHashSet::default();
            let mut last = u32::MAX;
            for sp in t.spans.iter().filter(|s| s.kind.is_named()) {
                if sp.id != last {
                    s.insert(sp.id);
                    last = sp.id;
                }
            }
            s
        })
        .reduce(FxHashSet::default, |mut a, b| {
            a.extend(b);
            a
        })
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
}
