use super::*;
use crate::model::{Gpu, GpuOp, GpuOpKind, Source, Stream};

/// One GPU running `n` kernels, with a long gap every 50th kernel.
fn timeline(n: usize, name: &str) -> Timeline {
    let mut tl = Timeline::new(Source::Kineto, name);
    let k = [
        tl.strings.intern("sm80_xmma_gemm_bf16bf16_bf16f32"),
        tl.strings.intern("vectorized_elementwise_kernel"),
    ];
    let mut ops = Vec::with_capacity(n);
    let mut t = 1_000_000;
    for i in 0..n {
        let d = 20_000 + (i as i64 % 7) * 1_000;
        ops.push(GpuOp::new(GpuOpKind::Kernel, t, t + d, 0, k[i % 2]));
        t += d + if i % 50 == 49 { 400_000 } else { 2_000 };
    }
    tl.gpus.push(Gpu {
        id: 0,
        name: "Test GPU".into(),
        streams: vec![Stream { id: 7, ops }],
        ..Gpu::default()
    });
    tl.finalize();
    tl
}

fn page(tl: &Timeline) -> String {
    let d = crate::analysis::diagnose(tl);
    let r = Report::build(tl, &d);
    render(
        &[Part {
            tl,
            diag: &d,
            report: &r,
        }],
        None,
    )
}

#[test]
fn the_page_is_bounded_whatever_the_trace_holds() {
    let small = page(&timeline(2_000, "small"));
    let big = page(&timeline(400_000, "big"));
    let elements = |s: &str| s.matches('<').count();
    assert!(big.len() < 300_000, "{} bytes", big.len());
    assert!(elements(&big) < 2_500, "{} elements", elements(&big));
    // Not proportional to the trace: 200x the ops, about the same page.
    assert!(
        elements(&big) < elements(&small) * 2,
        "{} vs {}",
        elements(&big),
        elements(&small)
    );
    for chart in [
        "strip",
        "idle-by-cause",
        "kernels-precision",
        "kernels-op-class",
    ] {
        assert!(
            big.contains(&format!("data-chart=\"{chart}\"")),
            "{chart} missing"
        );
    }
}

#[test]
fn the_page_fetches_nothing_and_escapes_what_the_trace_says() {
    let s = page(&timeline(500, "<img src=x onerror=alert(1)>"));
    assert!(!s.contains("<img"), "trace text reached the markup");
    assert!(s.contains("&lt;img src=x"));
    for bad in [
        "<script",
        "src=\"http",
        "href=\"http",
        "url(http",
        "@import",
    ] {
        assert!(!s.contains(bad), "found {bad}");
    }
}

#[test]
fn each_cause_uses_the_shared_colour() {
    let s = page(&timeline(500, "t"));
    for c in crate::analysis::Cause::ALL {
        let decl = format!("--c-{}: {};", c.name(), crate::output::colors::cause(c));
        assert!(s.contains(&decl), "{decl} missing");
    }
}

#[test]
fn workers_started_each_epoch_say_how_many_ran_at_once() {
    let tl = timeline(200, "epochs");
    let d = crate::analysis::diagnose(&tl);
    let mut r = Report::build(&tl, &d);
    let html = |r: &Report| {
        render(
            &[Part {
                tl: &tl,
                diag: &d,
                report: r,
            }],
            None,
        )
    };
    (r.processes.count, r.processes.trainers, r.processes.workers) = (10, 1, 8);
    r.processes.workers_at_once = 2;
    assert!(html(&r).contains("(1 launching GPU work, 8 feeding them, 2 at a time)"));
    r.processes.workers_at_once = 8;
    assert!(html(&r).contains("(1 launching GPU work, 8 feeding them)"));
}
