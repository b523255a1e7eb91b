//! What ../shared/corpus/EXPECTED.md says about steps, windows and start-up,
//! checked on the real traces: GPU-side steps, truncated steps dropped, steps
//! from the loop's own calls, and start-up reported apart from the steady
//! state.
//!
//! The corpus lives beside the repository (`../shared/corpus`) or wherever
//! `STALLSCOPE_CORPUS` points.

use std::path::PathBuf;

use serde_json::Value;
use stallscope_analyzer::analysis::diagnose;
use stallscope_analyzer::output::report::Report;
use stallscope_analyzer::read::kineto;

mod corpus_support;
use corpus_support::corpus;

/// The JSON report of one corpus trace (or the only trace in a directory).
fn report(rel: &str) -> Value {
    let mut p = corpus().join(rel);
    if p.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&p)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        p = files.remove(0);
    }
    let tl = kineto::read_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let d = diagnose(&tl);
    serde_json::from_str(&Report::build(&tl, &d).to_json()).unwrap()
}

fn notes(r: &Value) -> String {
    r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn mi250_truncated_last_step_is_dropped_and_said() {
    let r = report(
        "HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    );
    let s = &r["steps"];
    let dropped = s["dropped"].as_array().unwrap();
    assert!(
        dropped.iter().any(|d| d["reason"] == "truncated-last"),
        "steps: {s}"
    );
    // The 49 µs stub is never a step, nor the median.
    assert!(s["median_ns"].as_i64().unwrap() == 0 || s["median_ns"].as_i64().unwrap() > 1_000_000);
    assert!(notes(&r).contains("last step was cut off"), "{}", notes(&r));
    // The one full step is its first iteration: lazy module loading makes it
    // start-up, and the report says the trace is mostly that.
    assert!(
        r["startup"]["mostly"].as_bool().unwrap(),
        "{}",
        r["startup"]
    );
    // What follows start-up is 440 µs without a step: too little to advise
    // on, and the report says so rather than "CUDA graphs save 93%".
    assert_eq!(r["startup"]["short_rest"], true, "{}", r["startup"]);
    assert!(
        r["findings"].as_array().unwrap().is_empty(),
        "{}",
        r["findings"]
    );
    assert!(
        r["options"].as_array().unwrap().is_empty(),
        "{}",
        r["options"]
    );
    assert!(
        notes(&r).contains("too little follows it to diagnose (440 µs)"),
        "{}",
        notes(&r)
    );
}

#[test]
fn resnet_steps_come_from_dataloader_and_optimizer_calls() {
    let r = report("param/et_replay/tests/inputs/resnet_kineto.json.gz");
    let s = &r["steps"];
    // 30 `__next__` and 30 `SGD.step` calls; the first iteration holds the
    // start-up (the first cudaFree, lazy module loading).
    let n = s["count"].as_u64().unwrap();
    assert!((28..=30).contains(&n), "steps: {s}");
    assert_eq!(s["source"], "loop_calls", "steps: {s}");
    assert!(s["marked_by"].as_str().unwrap().contains("__next__"));
    let mean = s["mean_ns"].as_f64().unwrap();
    let median = s["median_ns"].as_f64().unwrap();
    assert!(mean >= median && median > 50e6, "steps: {s}");
    let st = &r["startup"];
    assert!(!st["mostly"].as_bool().unwrap(), "{st}");
    assert!(st["ns"].as_f64().unwrap() > 1e9, "{st}");
}

/// alexnet and simple_add: 1% busy over 13-16 s, nearly all of it start-up.
fn mostly_start_up(rel: &str) -> Value {
    let r = report(rel);
    let st = &r["startup"];
    assert!(st["mostly"].as_bool().unwrap(), "{rel}: {st}");
    assert!(st["ns"].as_f64().unwrap() > 10e9, "{rel}: {st}");
    let items = st["items"].as_array().unwrap();
    assert!(
        items
            .iter()
            .any(|i| i["what"] == "cudaFree" && i["kind"] == "context"),
        "{rel}: {st}"
    );
    assert!(
        items.iter().any(|i| i["kind"] == "module-load"),
        "{rel}: {st}"
    );
    assert!(notes(&r).contains("start-up"), "{rel}: {}", notes(&r));
    // The steady-state window starts after start-up.
    assert!(
        r["window_ns"][0].as_i64().unwrap() >= st["until_ns"].as_i64().unwrap()
            || st["all"] == true,
        "{rel}: window {} start-up {st}",
        r["window_ns"]
    );
    // The multi-second cudaFree is start-up, not a steady-state memory stall.
    for f in r["findings"].as_array().unwrap() {
        assert!(
            !(f["cause"] == "memory" && f["sub_cause"] == "free"),
            "{rel}: {f}"
        );
    }
    r
}

#[test]
fn alexnet_is_mostly_start_up() {
    mostly_start_up("HolisticTraceAnalysis/tests/data/critical_path/alexnet");
}

#[test]
fn simple_add_is_all_start_up_with_no_steady_state_findings() {
    let r = mostly_start_up("HolisticTraceAnalysis/tests/data/critical_path/simple_add");
    assert_eq!(r["startup"]["all"], true, "{}", r["startup"]);
    assert!(r["findings"].as_array().unwrap().is_empty());
    assert!(
        notes(&r).contains("no GPU work follows start-up"),
        "{}",
        notes(&r)
    );
}

/// The advice half of the start-up expectation: no model-fitting advice
/// without OOM, retries or offload (analysis/advice.rs gates it).
#[test]
fn start_up_traces_get_no_model_fitting_advice() {
    for rel in [
        "HolisticTraceAnalysis/tests/data/critical_path/alexnet",
        "HolisticTraceAnalysis/tests/data/critical_path/simple_add",
    ] {
        let r = report(rel);
        for f in r["findings"].as_array().unwrap() {
            let fix = f["fix"].as_str().unwrap();
            assert!(
                !fix.contains("make the model fit") && !fix.contains("QLoRA"),
                "{rel}: {f}"
            );
        }
    }
}

/// Kineto's 2021 layout (the TensorBoard plugin's ResNet-50 samples) files
/// `record_function` ranges under "Operator" with the aten ops: the loop's
/// DataLoader and optimizer calls there still mark its iterations.
#[test]
fn loop_calls_filed_as_operators_mark_the_steps() {
    // `both`: each call filed twice, as an operator and as an annotation.
    let steps = |both: bool| {
        let mut ev = Vec::new();
        let op = |name: &str, ts: u64, dur: u64| {
            let mut v = vec![format!(
                r#"{{"ph": "X", "cat": "Operator", "name": "{name}", "pid": 1, "tid": "7", "ts": {ts}, "dur": {dur}}}"#
            )];
            if both {
                v.push(format!(
                    r#"{{"ph": "X", "cat": "user_annotation", "name": "{name}", "pid": 1, "tid": "7", "ts": {ts}, "dur": {dur}}}"#
                ));
            }
            v
        };
        for i in 0..6u64 {
            let t = 1_000_000 + i * 100_000;
            ev.extend(op(
                "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                t,
                20_000,
            ));
            ev.push(format!(
                r#"{{"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": "7", "ts": {}, "dur": 10, "args": {{"correlation": {}}}}}"#,
                t + 20_000,
                i + 1
            ));
            ev.push(format!(
                r#"{{"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": "stream 7", "ts": {}, "dur": 60000, "args": {{"stream": 7, "correlation": {}, "device": 0}}}}"#,
                t + 20_100,
                i + 1
            ));
            ev.extend(op("Optimizer.step#SGD.step", t + 85_000, 5_000));
        }
        let json = format!(
            r#"{{"schemaVersion": 1, "traceEvents": [{}]}}"#,
            ev.join(",\n")
        );
        let tl = kineto::read_bytes("legacy.json", json.into_bytes()).unwrap();
        let d = diagnose(&tl);
        let r: Value = serde_json::from_str(&Report::build(&tl, &d).to_json()).unwrap();
        r["steps"].clone()
    };
    let s = steps(false);
    assert_eq!(s["source"], "loop_calls", "steps: {s}");
    assert_eq!(s["count"], 6, "steps: {s}");
    assert_eq!(steps(true), s);
}

#[test]
fn mi300_resnet18_has_its_5_steps_from_optimizer_calls() {
    // No ProfilerStep and no DataLoader: 5 `zero_grad` ... `step` iterations,
    // whose hipMalloc/hipFree churn lies inside the steps.
    let r = report("TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz");
    let s = &r["steps"];
    assert_eq!(s["count"], 5, "steps: {s}");
    assert_eq!(s["source"], "loop_calls", "steps: {s}");
    assert!(s["dropped"].as_array().unwrap().is_empty(), "steps: {s}");
    assert!(r.get("startup").is_none(), "{}", r["startup"]);
}

#[test]
fn no_corpus_step_is_a_stub() {
    // A step shorter than a tenth of the median is a cut-off marker that
    // was kept.
    for rel in [
        "HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        "HolisticTraceAnalysis/tests/data/trace_diff/test/test.json.gz",
        "HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz",
        "param/et_replay/tests/inputs/linear_kineto.json.gz",
    ] {
        let r = report(rel);
        let s = &r["steps"];
        let (mean, median) = (
            s["mean_ns"].as_f64().unwrap(),
            s["median_ns"].as_f64().unwrap(),
        );
        assert!(mean >= 0.1 * median && median >= 0.1 * mean, "{rel}: {s}");
        // The window never reaches back into start-up.
        if let Some(st) = r.get("startup") {
            assert!(
                r["window_ns"][0].as_i64().unwrap() >= st["until_ns"].as_i64().unwrap()
                    || st["all"] == true,
                "{rel}: {st}"
            );
        }
    }
}
