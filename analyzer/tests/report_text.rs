//! The text report on real traces: golden files for six corpus traces (one
//! multi-rank job, two AMD runs), each line within 100 columns; and every fix
//! printed only with the evidence that calls for it, on every corpus trace.
//!
//! The goldens pin today's diagnosis numbers, which change as the diagnosis
//! improves. To re-bless them after a deliberate change, run
//!
//!     STALLSCOPE_BLESS=1 cargo test -p stallscope-analyzer --test report_text
//!
//! and review the diff of `tests/golden/text/` like any other change.
//! The corpus lives at `../shared/corpus` (or `STALLSCOPE_CORPUS`).

use std::path::{Path, PathBuf};

use stallscope_analyzer::analysis;
use stallscope_analyzer::model::Timeline;
use stallscope_analyzer::output::report::Report;
use stallscope_analyzer::output::{markdown, text};
use stallscope_analyzer::read::kineto;

mod corpus_support;
use corpus_support::{all_traces, corpus};

fn report(tl: &Timeline) -> Report {
    Report::build(tl, &analysis::diagnose(tl))
}

/// What `stallscope analyze` prints for these files (without Perfetto).
fn analyze_text(files: &[PathBuf]) -> String {
    let tls = kineto::read_paths(files).unwrap_or_else(|e| panic!("{e}"));
    let mut reports: Vec<Report> = tls.iter().map(report).collect();
    if tls.len() > 1 {
        let cmp = stallscope_analyzer::output::report::compare_ranks(&tls, &mut reports);
        text::render_multi(&reports, Some(&cmp), &[])
    } else {
        text::render(&reports[0], None)
    }
}

fn golden(name: &str, rel: &[&str]) {
    let files: Vec<PathBuf> = rel.iter().map(|r| corpus().join(r)).collect();
    let got = analyze_text(&files);
    for l in got.lines() {
        assert!(
            l.chars().count() <= text::WIDTH,
            "{name}: a line of {} columns:\n{l}",
            l.chars().count()
        );
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/text/{name}.txt"));
    if std::env::var_os("STALLSCOPE_BLESS").is_some() {
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with STALLSCOPE_BLESS=1 to write it)",
            path.display()
        )
    });
    assert!(
        got == want,
        "{name}: the text report changed (STALLSCOPE_BLESS=1 re-blesses it):\n{got}"
    );
}

#[test]
fn golden_v100_fp32_gemms() {
    golden(
        "ns_resolution_trace",
        &[
            "HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
        ],
    );
}

#[test]
fn golden_a100_tf32_and_nccl() {
    golden(
        "nccl_data",
        &["HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"],
    );
}

#[test]
fn golden_a100_startup() {
    golden(
        "alexnet",
        &[
            "HolisticTraceAnalysis/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
        ],
    );
}

#[test]
fn golden_mi300_allocator_churn() {
    golden(
        "mi300_ddp_resnet18_no_pool",
        &["TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz"],
    );
}

#[test]
fn golden_mi300_act_checkpoint() {
    golden(
        "mi300_resnet_act_checkpoint",
        &["TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"],
    );
}

#[test]
fn golden_dlrm_eight_ranks() {
    let dir = corpus().join("param/et_replay/tests/inputs/dlrm_kineto");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            format!(
                "param/et_replay/tests/inputs/dlrm_kineto/{}",
                e.unwrap().file_name().to_string_lossy()
            )
        })
        .collect();
    files.sort();
    assert_eq!(files.len(), 8);
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    golden("dlrm_8_ranks", &refs);
}

/// Fixes and the evidence each needs, checked on one report.
fn fix_evidence_violations(r: &Report) -> Vec<String> {
    let mut bad = vec![];
    let arch = r.devices.iter().map(|d| d.arch).next().unwrap_or("");
    let pre_ampere = ["Volta", "Turing", "Pascal", "pre-Pascal"]
        .iter()
        .any(|a| arch.contains(a));
    let fp8_arch = ["Hopper", "Blackwell", "CDNA3", "CDNA4"]
        .iter()
        .any(|a| arch.contains(a));
    let tf32_arch = ["Ampere", "Ada", "Hopper", "Blackwell"]
        .iter()
        .any(|a| arch.contains(a));
    for f in r.findings.iter().chain(&r.options) {
        let (fix, ev) = (&f.fix, &f.evidence);
        let mut need = |cond: bool, what: &str| {
            if !cond {
                bad.push(format!(
                    "{}/{}: {what}\n  fix: {fix}\n  why: {ev}",
                    f.cause, f.sub_cause
                ));
            }
        };
        if fix.contains("pin_memory") {
            let seen = ev
                .split(" pageable")
                .next()
                .and_then(|s| s.rsplit(' ').next())
                .and_then(|n| n.parse::<u64>().ok())
                .is_some_and(|n| n > 0);
            need(seen, "pin_memory without pageable copies seen");
        }
        if fix.contains("QLoRA")
            || fix.contains("make the model fit")
            || fix.contains("checkpointing")
        {
            need(
                ev.contains("out-of-memory") || ev.contains("offload"),
                "model-fitting advice without OOM or offload",
            );
        }
        if fix.contains("caching allocator is bypassed") {
            need(
                ev.contains("per step"),
                "allocator advice without per-step churn",
            );
        }
        if fix.contains("DataLoader") || fix.contains("num_workers") {
            need(
                r.job.dataloader || ev.contains(" producer"),
                "DataLoader advice without a DataLoader or producer",
            );
        }
        if r.job.mode == analysis::job::Mode::Inference {
            // DataLoader advice only to an inference job that has one
            // (batch inference over a dataset, as TraceLens's OWLv2 traces).
            need(
                !fix.contains("GradScaler")
                    && !fix.contains("training")
                    && !f.assumption.contains("training")
                    && (!fix.contains("DataLoader") || r.job.dataloader),
                "training advice on an inference trace",
            );
            // Transformer Engine is a training library: inference gets FP8
            // from its serving engine or torchao.
            need(
                !fix.contains("Transformer Engine"),
                "Transformer Engine advised for inference",
            );
        }
        if pre_ampere {
            need(!fix.contains("bfloat16"), "BF16 advised before Ampere");
        }
        if fix.contains("set_float32_matmul_precision") {
            need(tf32_arch, "TF32 advised where there is none");
        }
        if fix.contains("FP8") {
            need(fp8_arch, "FP8 advised where there is none");
        }
        if fix.contains("CUDA graphs") && !fix.contains("graphs are in use") {
            need(
                !r.job.graphs(),
                "CUDA graphs advised to a job that uses them",
            );
        }
    }
    bad
}

#[test]
fn every_fix_comes_with_its_evidence_on_every_corpus_trace() {
    let files = all_traces();
    assert_eq!(files.len(), 27);
    let mut bad = vec![];
    for f in &files {
        let tl = kineto::read_file(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let r = report(&tl);
        for b in fix_evidence_violations(&r) {
            bad.push(format!("{}: {b}", f.display()));
        }
        // Whatever the trace, the text stays within the width.
        for l in text::render(&r, None).lines() {
            assert!(l.chars().count() <= text::WIDTH, "{}: {l}", f.display());
        }
        // Without findings, Markdown says what the text says instead.
        if r.findings.is_empty() {
            let line = text::no_findings_line(&r).expect("a GPU trace");
            let md = markdown::render(&r);
            assert!(
                md.contains(&line.replace('\n', " ")),
                "{}: {line}\n{md}",
                f.display()
            );
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn amd_devices_are_cdna_not_hopper() {
    for rel in [
        "TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz",
        "TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz",
    ] {
        let tl = kineto::read_file(&corpus().join(rel)).unwrap();
        let r = report(&tl);
        assert!(r.devices.iter().all(|d| d.arch == "AMD CDNA3"), "{rel}");
        let text = text::render(&r, None);
        assert!(!text.contains("Hopper"), "{text}");
        // Tensile BF16 GEMMs and CK/MIOpen BF16 convolutions are BF16, not non-GEMM.
        let bf16: i64 = r
            .devices
            .iter()
            .map(|d| d.busy_by_precision_ns["bf16"].as_i64().unwrap())
            .sum();
        assert!(bf16 > 0, "{rel}");
    }
}

#[test]
fn allocator_churn_gets_allocator_advice() {
    let tl = kineto::read_file(
        &corpus().join("TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz"),
    )
    .unwrap();
    let r = report(&tl);
    let all: String = r
        .findings
        .iter()
        .map(|f| format!("{}\n{}\n", f.fix, f.evidence))
        .collect();
    assert!(
        !all.contains("QLoRA") && !all.contains("make the model fit"),
        "{all}"
    );
    if let Some(m) = r.findings.iter().find(|f| f.cause == "memory") {
        assert!(m.fix.contains("caching allocator"), "{}", m.fix);
        assert!(m.evidence.contains("hipMalloc"), "{}", m.evidence);
        // The what-if names the calls it removes as the trace does.
        assert!(
            m.assumption.contains("hipMalloc/hipFree") && !m.assumption.contains("cuda"),
            "{}",
            m.assumption
        );
    }
}
