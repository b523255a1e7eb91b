//! Every real trace of the shared corpus reads, with the counts it really has.
//!
//! The corpus lives beside the repository (`../shared/corpus`) or wherever
//! `STALLSCOPE_CORPUS` points. Without it these tests fail: they are the
//! evidence that the reader handles real traces.

use stallscope_analyzer::analysis::ranks::compare_ranks;
use stallscope_analyzer::model::{GpuOpKind, SpanKind, Timeline};
use stallscope_analyzer::read::kineto::{self, ReadOptions};

mod corpus_support;
use corpus_support::{all_traces, corpus, trace};

/// The number of Kineto traces in the corpus (see ../shared/corpus/README.md).
const CORPUS_TRACES: usize = 27;

struct Counts {
    kernels: usize,
    memcpy: usize,
    memset: usize,
    runtime: usize,
    steps: usize,
}

fn counts(tl: &Timeline) -> Counts {
    let ops = || tl.gpus.iter().flat_map(|g| &g.streams).flat_map(|s| &s.ops);
    let spans = || {
        tl.processes
            .iter()
            .flat_map(|p| &p.threads)
            .flat_map(|t| &t.spans)
    };
    Counts {
        kernels: ops().filter(|o| o.kind() == GpuOpKind::Kernel).count(),
        memcpy: ops().filter(|o| o.kind() == GpuOpKind::Memcpy).count(),
        memset: ops().filter(|o| o.kind() == GpuOpKind::Memset).count(),
        runtime: spans().filter(|s| s.kind == SpanKind::CudaRuntime).count(),
        steps: spans()
            .filter(|s| {
                s.kind == SpanKind::Annotation && tl.strings.get(s.id).starts_with("ProfilerStep#")
            })
            .count(),
    }
}

#[test]
fn every_corpus_trace_reads() {
    let files = all_traces();
    assert_eq!(
        files.len(),
        CORPUS_TRACES,
        "corpus traces found: {files:#?}"
    );
    for f in &files {
        let tl = kineto::read_file(f).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            tl.host_span_count() > 0 || tl.gpu_op_count() > 0,
            "{}: empty",
            f.display()
        );
        for g in &tl.gpus {
            for s in &g.streams {
                assert!(
                    s.ops.windows(2).all(|w| w[0].start <= w[1].start),
                    "{}: unsorted",
                    f.display()
                );
                assert!(s.ops.iter().all(|o| o.end >= o.start));
            }
        }
        for t in tl.processes.iter().flat_map(|p| &p.threads) {
            assert!(t.spans.windows(2).all(|w| w[0].ts <= w[1].ts));
            assert!(t.spans.iter().all(|s| s.dur >= 0));
        }
    }
}

#[test]
fn expected_counts() {
    // (trace, kernels, memcpy, memset, runtime calls, ProfilerSteps), counted
    // independently from the JSON with Python.
    let cases = [
        (
            "HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz",
            19370,
            2040,
            880,
            42373,
            5,
        ),
        (
            "HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz",
            2700,
            960,
            114,
            8740,
            3,
        ),
        (
            "HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz",
            8568,
            228,
            654,
            24692,
            6,
        ),
        (
            "HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
            4350,
            1600,
            145,
            15329,
            5,
        ),
        (
            "HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
            14,
            2,
            0,
            21,
            2,
        ),
        (
            "HolisticTraceAnalysis/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz",
            0,
            0,
            0,
            1862,
            0,
        ),
        ("kineto/docs/traces/before_fix_trace.json", 1, 0, 0, 1, 0),
    ];
    for (rel, kernels, memcpy, memset, runtime, steps) in cases {
        let c = counts(&trace(rel));
        assert_eq!(
            (c.kernels, c.memcpy, c.memset, c.runtime, c.steps),
            (kernels, memcpy, memset, runtime, steps),
            "{rel}"
        );
    }
}

#[test]
fn metadata() {
    let tl = trace("HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz");
    assert_eq!(kineto::rank_of(&tl), Some(1));
    let g = &tl.gpus[0];
    assert_eq!(
        (g.name.as_str(), g.cc, g.sm_count),
        ("Tesla V100-SXM2-32GB", (7, 0), 80)
    );
    assert!(g.memory.len() > 1000, "[memory] events become allocations");

    let ns = trace(
        "HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    );
    let sub_us = ns
        .gpus
        .iter()
        .flat_map(|g| &g.streams)
        .flat_map(|s| &s.ops)
        .filter(|o| o.start % 1000 != 0)
        .count();
    assert!(sub_us > 1000, "nanosecond digits kept ({sub_us})");
    assert_eq!(
        ns.processes[0].hostname,
        "twshared39868.02.pnb3.facebook.com"
    );

    let mi = trace("TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz");
    assert!(mi.gpus[0].name.contains("MI300X"));
    let py = mi
        .processes
        .iter()
        .flat_map(|p| &p.threads)
        .flat_map(|t| &t.spans);
    assert_eq!(py.filter(|s| s.kind == SpanKind::PyFunction).count(), 34405);

    // Its kernels run on device 2; deviceProperties describes device 0 only.
    let tc = trace("TraceLens/tests/traces/torch_compile_triton/trace.json.gz");
    assert_eq!(
        (tc.gpus[0].id, tc.gpus[0].name.as_str(), tc.gpus[0].hip),
        (2, "AMD Instinct MI300X", true)
    );

    let none = trace("param/et_replay/tests/inputs/linear_kineto.json.gz");
    assert_eq!(kineto::rank_of(&none), None, "no distributedInfo");
}

/// Pieces parsed on several threads give exactly what one pass gives.
#[test]
fn parallel_parse_matches_single_pass() {
    let mut files = all_traces();
    files.sort_by_key(|f| std::cmp::Reverse(std::fs::metadata(f).map(|m| m.len()).unwrap_or(0)));
    for f in files.iter().take(3) {
        let one = kineto::read_file_with(f, &ReadOptions { threads: 1 }).unwrap();
        let four = kineto::read_file_with(f, &ReadOptions { threads: 4 }).unwrap();
        assert_eq!(fingerprint(&one), fingerprint(&four), "{}", f.display());
    }
}

fn fingerprint(tl: &Timeline) -> Vec<String> {
    let mut v = vec![];
    for p in &tl.processes {
        for t in &p.threads {
            v.push(format!(
                "thread {} {} {}",
                p.pid,
                t.tid,
                tl.strings.get(t.name)
            ));
            for s in &t.spans {
                v.push(format!(
                    "{} {} {} {:?} {}",
                    s.ts,
                    s.dur,
                    s.arg,
                    s.kind,
                    tl.strings.get(s.id)
                ));
            }
        }
    }
    for g in &tl.gpus {
        for s in &g.streams {
            for o in &s.ops {
                let lc = g.launch_configs.get(o.launch() as usize);
                v.push(format!(
                    "{} {} {} {} {:?} {:?} {}",
                    s.id,
                    o.start,
                    o.end,
                    o.corr,
                    o.kind(),
                    lc,
                    tl.strings.get(o.name)
                ));
            }
        }
        v.push(format!("{:?} {:?}", g.syncs, g.memory.len()));
    }
    v
}

#[test]
fn dlrm_ranks() {
    let dir = corpus().join("param/et_replay/tests/inputs/dlrm_kineto");
    let tls = kineto::read_paths(&[dir]).unwrap();
    let ranks: Vec<Option<u32>> = tls.iter().map(kineto::rank_of).collect();
    assert_eq!(ranks, (0..8).map(Some).collect::<Vec<_>>());
    let cmp = compare_ranks(&tls);
    assert_eq!(cmp.ranks.len(), 8);
    assert!(
        cmp.ranks
            .iter()
            .all(|r| r.comm_kernels == 8 && r.comm_ns > 0)
    );
    // Rank 1's ProfilerStep is the longest, but it is the rank whose
    // collectives waited most (11 ms): the slowest is the one waited for.
    let slowest = cmp.slowest.as_ref().expect("a slowest rank");
    assert_eq!((slowest.rank, slowest.by), (7, "collectives"));
    assert_eq!(
        cmp.ranks[1].step_median_ns,
        cmp.ranks.iter().filter_map(|r| r.step_median_ns).max()
    );
    assert!(
        slowest.value_ns > 40_000_000 && slowest.comm_share_pct > Some(90.0),
        "{slowest:?}"
    );
    // The text names it once, with the others' waiting.
    let reports: Vec<_> = tls
        .iter()
        .map(|t| {
            stallscope_analyzer::output::report::Report::build(
                t,
                &stallscope_analyzer::analysis::diagnose(t),
            )
        })
        .collect();
    let text = stallscope_analyzer::output::text::render_ranks(&reports, Some(&cmp));
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("slowest")).collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].trim_start().starts_with("7 ") && lines[0].ends_with("<- slowest"));
    assert!(
        lines[1].contains("slowest: rank 7, the others waited 45 ms for it at collectives"),
        "{text}"
    );
    assert!(!text.contains("stragglers at collectives"), "{text}");
    let names: Vec<&str> = cmp.collectives.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "ncclKernel_AllReduce_RING_LL_Sum_float",
            "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"
        ]
    );
    // Rank 7 arrives last at 5 of the 8 collectives: everyone else waits for it.
    assert_eq!(cmp.stragglers, [7]);
    let r7 = &cmp.lateness[7];
    assert_eq!(r7.last_count, 5);
    assert!(
        serde_json::to_string(&cmp)
            .unwrap()
            .contains("\"stragglers\":[7]")
    );
}
