//! The what-if savings on the shared corpus, against what an expert expects
//! (../shared/corpus/EXPECTED.md, "Savings"): a step after and a saving
//! from one replay, ranked by saving, nothing above the combined what-if;
//! savings that add up to no more than the idle time; a fair part of each
//! large cause recovered by its fix; a cpu/python what-if
//! that models the fix it names; collectives whose waiting is not taken for
//! a sync's.
//!
//! The corpus lives beside the repository (`../shared/corpus`) or wherever
//! `STALLSCOPE_CORPUS` points; without it these tests fail.

use std::path::PathBuf;

use stallscope_analyzer::analysis::ranks::compare_ranks;
use stallscope_analyzer::analysis::{Cause, Diagnosis, Finding, diagnose};
use stallscope_analyzer::read::kineto;

mod corpus_support;
use corpus_support::{all_traces, corpus, trace};

fn wall(d: &Diagnosis) -> i64 {
    (d.window.1 - d.window.0).max(1)
}

fn all(d: &Diagnosis) -> Vec<&Finding> {
    d.findings.iter().chain(&d.minor).collect()
}

fn table(d: &Diagnosis) -> String {
    let w = wall(d) as f64;
    all(d)
        .iter()
        .map(|f| {
            format!(
                "{}/{} share {:.1}% saves {:.1}% after {} ns",
                f.cause,
                f.sub_cause,
                f.share_pct,
                100.0 * f.est_saving_ns as f64 / w,
                f.est_step_ns_after
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every finding's step after and saving come from one ratio; findings are
/// ranked by saving; the combined what-if saves at least as much as any.
fn check_consistent(name: &str, d: &Diagnosis) {
    let w = wall(d);
    let mean = if d.steps.steps.is_empty() {
        w
    } else {
        d.steps.mean_ns.max(1)
    };
    for f in all(d) {
        let want = mean as f64 * (1.0 - f.est_saving_ns as f64 / w as f64);
        assert!(
            (f.est_step_ns_after as f64 - want).abs() <= 2.0 + 1e-6 * mean as f64,
            "{name}: {}/{} after {} disagrees with its saving:\n{}",
            f.cause,
            f.sub_cause,
            f.est_step_ns_after,
            table(d)
        );
        assert!(
            !f.assumption.is_empty(),
            "{name}: {}/{} states no assumption",
            f.cause,
            f.sub_cause
        );
    }
    for p in d.findings.windows(2) {
        assert!(
            p[0].est_saving_ns >= p[1].est_saving_ns,
            "{name}: not ranked by saving:\n{}",
            table(d)
        );
    }
    for f in &d.minor {
        assert!(
            200 * f.est_saving_ns < w,
            "{name}: minor {}/{}",
            f.cause,
            f.sub_cause
        );
    }
    // A cause the breakdown gives much of the window has a finding that
    // recovers a fair part of it: attribution and replay agree on what the
    // idle time is for (a sync before the window once took 51% with a fix
    // that saved nothing).
    if let Some(dev) = d.devices.first().filter(|_| !all(d).is_empty()) {
        for c in Cause::ALL {
            let idle = dev.idle_by_cause[c.index()];
            if idle * 100 < 8 * w {
                continue;
            }
            let best = all(d)
                .iter()
                .filter(|f| f.cause == c.name())
                .map(|f| f.est_saving_ns)
                .max()
                .unwrap_or(0);
            assert!(
                4 * best >= idle,
                "{name}: {} takes {idle} ns of idle time, its best fix saves {best}:\n{}",
                c.name(),
                table(d)
            );
        }
    }
    if !all(d).is_empty() {
        let c = d
            .combined
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: no combined what-if"));
        for f in all(d) {
            assert!(
                f.est_saving_ns <= c.est_saving_ns,
                "{name}: {}/{} saves {} > combined {}:\n{}",
                f.cause,
                f.sub_cause,
                f.est_saving_ns,
                c.est_saving_ns,
                table(d)
            );
        }
        // Nor more than the idle time plus the kernel time the kernel-side
        // fixes cut (each at most its busy share): the host-side fixes leave
        // the GPU's work as it is. On an MI300X trace whose findings were
        // 2% and 0.5%, every fix at once claimed 13%.
        if let [dev] = d.devices.as_slice() {
            let kernel_side: f64 = all(d)
                .iter()
                .filter(|f| matches!(f.cause.as_str(), "precision" | "attention" | "comm"))
                .map(|f| f.share_pct)
                .sum();
            let bound = dev.idle_ns as f64 + (kernel_side + 0.5) * w as f64 / 100.0;
            assert!(
                c.est_saving_ns as f64 <= bound,
                "{name}: every fix at once saves {} ns, over the {} ns idle and {kernel_side:.1}% of \
                 kernel time the kernel-side fixes cut:\n{}",
                c.est_saving_ns,
                dev.idle_ns,
                table(d)
            );
        }
    }
}

#[test]
fn every_trace_has_consistent_savings() {
    let paths = all_traces();
    assert!(paths.len() >= 20, "{} traces", paths.len());
    for p in paths {
        let tl = kineto::read_file(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        check_consistent(&p.display().to_string(), &diagnose(&tl));
    }
}

#[test]
fn negative_queue_savings_do_not_add_up_to_twice_the_idle_time() {
    let d = diagnose(&trace(
        "HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz",
    ));
    let idle: i64 = d.devices.iter().map(|g| g.idle_ns).max().unwrap();
    // The host-side causes' savings (precision and comm save busy time).
    let host: i64 = all(&d)
        .iter()
        .filter(|f| f.cause != "precision" && f.cause != "comm")
        .map(|f| f.est_saving_ns)
        .sum();
    assert!(
        host <= idle + idle / 20,
        "single-cause savings {host} vs idle {idle}:\n{}",
        table(&d)
    );
    // The dependency what-if is a replay, capped at the dependency's own
    // idle time: with the GPU no longer held, the launch calls that waited
    // for room in the full launch queue (about 960 ops pending, twice a step)
    // return sooner too, and the replay then saves more than the cap.
    let other = all(&d)
        .into_iter()
        .find(|f| f.cause == "other")
        .expect("other/dependency");
    let share_ns = (other.share_pct / 100.0 * wall(&d) as f64) as i64;
    assert!(
        other.est_saving_ns > 0 && other.est_saving_ns <= share_ns + wall(&d) / 1000,
        "other saves more than its share, or nothing:\n{}",
        table(&d)
    );
    assert!(other.assumption.contains("streams"), "{}", other.assumption);
}

/// A cpu/python what-if that models CUDA graphs or torch.compile at a
/// stated per-launch cost, and so saves no more than the Python and launch
/// idle time.
/// TraceLens's MI300X ResNet (rank 0 of 8): one RCCL kernel name runs 15 µs
/// broadcasts and 6.7-9.2 ms all-reduces, and the trace gives each one's
/// message size. Each all-reduce size takes within 5% of the same time every
/// step, so little of it is waiting; measured against the broadcasts, the
/// report said "comm/wait saves 60%".
#[test]
fn collectives_are_compared_with_their_own_size() {
    let tl = trace("TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz");
    let sized = tl.gpus.iter().map(|g| g.comm_elems.len()).sum::<usize>();
    assert_eq!(sized, 12, "collectives with a message size");
    let d = diagnose(&tl);
    let comm = all(&d)
        .into_iter()
        .find(|f| f.cause == "comm")
        .expect("a comm finding");
    assert!(
        comm.est_saving_ns < wall(&d) / 10,
        "comm saves {} of {}:\n{}",
        comm.est_saving_ns,
        wall(&d),
        table(&d)
    );
}

fn check_cpu_python(rel: &str) {
    let d = diagnose(&trace(rel));
    let w = wall(&d) as f64;
    let f = all(&d)
        .into_iter()
        .find(|f| f.cause == "cpu" && f.sub_cause == "python")
        .unwrap_or_else(|| panic!("{rel}: no cpu/python:\n{}", table(&d)));
    assert!(
        f.assumption.contains("per launch") && f.assumption.contains("kept"),
        "{rel}: {}",
        f.assumption
    );
    let launch = all(&d)
        .into_iter()
        .filter(|f| f.cause == "launch")
        .map(|f| f.share_pct)
        .sum::<f64>();
    assert!(
        100.0 * f.est_saving_ns as f64 / w <= f.share_pct + launch + 0.01,
        "{rel}: cpu/python saves more than its idle share:\n{}",
        table(&d)
    );
    check_consistent(rel, &d);
}

#[test]
fn nccl_data_cpu_python_models_graphs() {
    check_cpu_python("HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz");
    // The recorded step was 222 ms; deleting every CPU nanosecond claimed
    // 41 ms, and so would any what-if that keeps no Python.
    let d = diagnose(&trace(
        "HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz",
    ));
    let f = all(&d)
        .into_iter()
        .find(|f| f.cause == "cpu" && f.sub_cause == "python")
        .unwrap();
    assert!(f.est_step_ns_after > 60_000_000, "{}", table(&d));
}

#[test]
fn df_index_resolver_cpu_python_models_graphs() {
    check_cpu_python(
        "HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz",
    );
}

fn dlrm_dir() -> PathBuf {
    corpus().join("param/et_replay/tests/inputs/dlrm_kineto")
}

#[test]
fn dlrm_sync_does_not_claim_the_collectives_waiting() {
    let tls = kineto::read_paths(&[dlrm_dir()]).unwrap();
    assert_eq!(tls.len(), 8);
    for tl in &tls {
        let d = diagnose(tl);
        let w = wall(&d) as f64;
        for f in all(&d).into_iter().filter(|f| f.cause == "sync") {
            assert!(
                100.0 * f.est_saving_ns as f64 / w <= f.share_pct + 1.0,
                "{}: sync at {}% of idle claims more:\n{}",
                tl.name,
                f.share_pct,
                table(&d)
            );
        }
        // One rank alone: the collectives' waiting is an estimate, said so.
        let comm = all(&d)
            .into_iter()
            .find(|f| f.cause == "comm")
            .unwrap_or_else(|| panic!("{}: no comm finding:\n{}", tl.name, table(&d)));
        assert_eq!(comm.sub_cause, "wait");
        assert!(comm.evidence.contains("estimated"), "{}", comm.evidence);
        check_consistent(&tl.name, &d);
    }
}

#[test]
fn dlrm_ranks_together_name_the_straggler() {
    let tls = kineto::read_paths(&[dlrm_dir()]).unwrap();
    let cmp = compare_ranks(&tls);
    let f = cmp
        .findings
        .iter()
        .find(|f| f.cause == "comm" && f.sub_cause == "straggler")
        .expect("comm/straggler");
    assert_eq!(f.rank, 7);
    assert!(f.others_waited_ns > 0);
    assert!(f.evidence.contains("rank 7"), "{}", f.evidence);
    // The others waited; the straggler barely did.
    let me = cmp.lateness.iter().find(|l| l.rank == 7).unwrap();
    let max_other = cmp
        .lateness
        .iter()
        .filter(|l| l.rank != 7)
        .map(|l| l.waited_ns)
        .max()
        .unwrap();
    assert!(me.waited_ns < max_other, "{:?}", cmp.lateness);
}

/// ns_resolution_trace (V100) is 97% busy with FP32 GEMMs: the precision
/// finding is the one that matters, it ranks first, and before Ampere it is
/// FP16 autocast with a GradScaler, never BF16. Its saving comes from the
/// replay (the GPU-bound steps end when the GPU is done).
#[test]
fn gpu_bound_fp32_v100_ranks_precision_first() {
    let tl = trace(
        "HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    );
    let d = diagnose(&tl);
    let f = d
        .findings
        .first()
        .unwrap_or_else(|| panic!("no findings:\n{}", table(&d)));
    assert_eq!(
        (f.cause.as_str(), f.sub_cause.as_str()),
        ("precision", "fp32"),
        "{}",
        table(&d)
    );
    assert!(
        f.est_saving_ns as f64 > 0.05 * wall(&d) as f64,
        "{}",
        table(&d)
    );
    assert!(
        f.fix.contains("float16") && f.fix.contains("GradScaler") && !f.fix.contains("bfloat16"),
        "{}",
        f.fix
    );
    assert!(f.assumption.contains("Volta"), "{}", f.assumption);
}

/// `combined` applies the fixes the report advises, and only those. On
/// ns_resolution_trace those are FP16 and a minor dependency fix; a combined
/// what-if built from every fix the replay can model also put CUDA graphs
/// and host work moved off the loop in, and promised 37% against the 15% of
/// the fixes it listed (and `diff` checks a run after all of them against
/// it).
#[test]
fn combined_models_only_the_advised_fixes() {
    let d = diagnose(&trace(
        "HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    ));
    let w = wall(&d) as f64;
    let advised: Vec<String> = all(&d)
        .iter()
        .map(|f| format!("{}/{}", f.cause, f.sub_cause))
        .collect();
    assert!(
        advised
            .iter()
            .all(|a| a == "precision/fp32" || a == "other/dependency"),
        "{}",
        table(&d)
    );
    let sum: i64 = all(&d).iter().map(|f| f.est_saving_ns).sum();
    let c = d.combined.as_ref().expect("a combined what-if");
    assert!(
        c.est_saving_ns as f64 <= 1.2 * sum as f64 + 0.005 * w,
        "combined saves {:.1}%, the advised fixes {:.1}% together:\n{}",
        100.0 * c.est_saving_ns as f64 / w,
        100.0 * sum as f64 / w,
        table(&d)
    );
}

/// CUDA graphs are the fix of both cpu/python and launch/tiny-kernels, and
/// each what-if alone takes much of the other's idle time: on the trace_diff
/// control trace they said 13% and 12%, and together save 16%. Both say
/// what they save together, which is at least what either saves, at most
/// every fix at once, and less than their sum.
#[test]
fn findings_that_cuda_graphs_fix_say_what_they_save_together() {
    for rel in [
        "HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz",
        "HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz",
    ] {
        let d = diagnose(&trace(rel));
        let w = wall(&d) as f64;
        let pct = |f: &Finding| 100.0 * f.est_saving_ns as f64 / w;
        let find = |cause: &str, sub: &str| {
            all(&d)
                .into_iter()
                .find(|f| f.cause == cause && f.sub_cause == sub)
                .unwrap_or_else(|| panic!("{rel}: no {cause}/{sub}:\n{}", table(&d)))
        };
        let (python, launch) = (find("cpu", "python"), find("launch", "tiny-kernels"));
        let together = |f: &Finding, other: &str| -> (f64, f64) {
            let tail = f
                .evidence
                .split(&format!("CUDA graphs cut {other} too: the two save "))
                .nth(1)
                .unwrap_or_else(|| panic!("{rel}: no overlap in {:?}", f.evidence));
            let num = |s: &str| s.trim_end_matches('%').parse::<f64>().unwrap();
            let words: Vec<&str> = tail.split_whitespace().collect();
            (num(words[0]), num(words[3]))
        };
        let (both, sum) = together(python, "launch/tiny-kernels");
        assert_eq!((both, sum), together(launch, "cpu/python"), "{rel}");
        assert_eq!(sum, pct(python).round() + pct(launch).round(), "{rel}");
        let combined = 100.0 * d.combined.as_ref().unwrap().est_saving_ns as f64 / w;
        assert!(
            both >= pct(python).max(pct(launch)).round()
                && both <= combined.round()
                && both + 1.0 <= sum,
            "{rel}: together {both}%, sum {sum}%, all fixes {combined:.1}%:\n{}",
            table(&d)
        );
    }
}
