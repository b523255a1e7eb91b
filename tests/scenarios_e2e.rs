//! The diagnosis on real multi-process Python workloads driving gpusim under
//! `stallscope record`: each scenario's expected top cause, and for the
//! fixable ones, the what-if estimate against a measured fixed run.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use common::*;
use serde_json::Value;

/// Scenarios measure time; running two at once on a 2-core machine would
/// create the CPU contention they are not about.
static SERIAL: Mutex<()> = Mutex::new(());

fn run(dir: &Path, scenario: &str, fixed: bool) -> Value {
    run_with(dir, scenario, fixed, Wrap::None)
}

/// How the trainer is started under `record`: as the command itself, or
/// behind a wrapper, so the recording has processes that are no producers.
#[derive(Clone, Copy)]
enum Wrap {
    None,
    /// A shell that forks a helper (`/bin/true`) and then execs Python, as
    /// pyenv shims do: the trainer keeps the shell's pid, and the helper has
    /// that pid as its parent.
    ForkThenExec,
    /// A shell that stays the trainer's parent (as torchrun or accelerate
    /// do): an ancestor that is no producer.
    Parent,
}

fn run_with(dir: &Path, scenario: &str, fixed: bool, wrap: Wrap) -> Value {
    run_env(dir, scenario, fixed, wrap, &[])
}

/// `run_with`, with `env` set for `record` and the job.
fn run_env(dir: &Path, scenario: &str, fixed: bool, wrap: Wrap, env: &[(&str, &str)]) -> Value {
    let gpusim = built_lib("libgpusim.so");
    let rec = dir.join(if fixed {
        format!("{scenario}-fixed")
    } else {
        scenario.to_string()
    });
    let mut args = vec![gpusim.to_str().unwrap().to_string(), scenario.to_string()];
    if fixed {
        args.push("fixed".into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = Command::new(stallscope());
    cmd.arg("record")
        .arg("-o")
        .arg(&rec)
        .arg("--cupti")
        .arg(&gpusim)
        .arg("--");
    match wrap {
        Wrap::None => {}
        Wrap::ForkThenExec => {
            cmd.args(["sh", "-c", "/bin/true; exec \"$0\" \"$@\""]);
        }
        Wrap::Parent => {
            // Not `exec`: the shell stays the trainer's parent.
            cmd.arg("sh").arg("-c").arg(r#""$@"; exit $?"#).arg("sh");
        }
    }
    let out = cmd
        .arg(python())
        .arg(workload("scenario.py"))
        .args(&args)
        .env("SCENARIO_DIR", dir)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{scenario}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = dir.join(format!(
        "{scenario}{}.json",
        if fixed { "-fixed" } else { "" }
    ));
    let a = Command::new(stallscope())
        .arg("analyze")
        .arg(&rec)
        .arg("-q")
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        a.status.success(),
        "analyze {scenario}: {}",
        String::from_utf8_lossy(&a.stderr)
    );
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

fn text_report(r: &Value) -> String {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}/{} share {}% saving {} ns after {} ns",
                f["cause"],
                f["sub_cause"],
                f["share_pct"],
                f["est_saving_ns"],
                f["est_step_ns_after"]
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts the top finding, and returns it.
fn top(r: &Value, cause: &str, sub: Option<&str>) -> Value {
    let findings = r["findings"].as_array().unwrap();
    let f = findings
        .first()
        .unwrap_or_else(|| panic!("no findings; expected {cause}"));
    assert_eq!(
        f["cause"],
        cause,
        "top finding is not {cause}:\n{}",
        text_report(r)
    );
    if let Some(sub) = sub {
        assert_eq!(
            f["sub_cause"],
            sub,
            "top finding is not {cause}/{sub}:\n{}",
            text_report(r)
        );
    }
    assert!(
        r["steps"]["count"].as_u64().unwrap() >= 10,
        "steps: {}",
        r["steps"]
    );
    f.clone()
}

/// The what-if: the estimated mean step after the fix is within 15% of the
/// mean step measured with the fix applied.
fn check_estimate(scenario: &str, cause: &str, sub: &str) {
    check_estimate_with(scenario, cause, Some(sub), Wrap::None);
}

/// `check_estimate`, started as `wrap` says; returns the reports of the run
/// to fix and of the fixed run. Step times are GPU-side means.
fn check_estimate_with(
    scenario: &str,
    cause: &str,
    sub: Option<&str>,
    wrap: Wrap,
) -> (Value, Value) {
    check_estimate_env(scenario, cause, sub, wrap, &[])
}

/// `check_estimate_with`, both runs with `env` set.
fn check_estimate_env(
    scenario: &str,
    cause: &str,
    sub: Option<&str>,
    wrap: Wrap,
    env: &[(&str, &str)],
) -> (Value, Value) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = disk_tempdir();
    let slow = run_env(tmp.path(), scenario, false, wrap, env);
    let f = top(&slow, cause, sub);
    let fixed = run_env(tmp.path(), scenario, true, wrap, env);
    let measured = fixed["steps"]["mean_ns"].as_f64().unwrap();
    let estimated = f["est_step_ns_after"].as_f64().unwrap();
    let before = slow["steps"]["mean_ns"].as_f64().unwrap();
    let err = (estimated - measured).abs() / measured;
    eprintln!(
        "{scenario}: step {:.1} ms, estimated after fix {:.1} ms, measured fixed {:.1} ms ({:.1}% off)",
        before / 1e6,
        estimated / 1e6,
        measured / 1e6,
        100.0 * err
    );
    assert!(
        err <= 0.15,
        "{scenario}: estimate {estimated} vs measured {measured}"
    );
    assert!(
        measured < before * 0.9,
        "{scenario}: the fixed run is not faster; the scenario is broken"
    );
    assert!(
        !f["assumption"].as_str().unwrap().is_empty(),
        "{scenario}: no assumption"
    );
    (slow, fixed)
}

/// A scratch directory on the project's disk (not a tmpfs /tmp): the I/O
/// scenarios evict their files from the page cache, which tmpfs cannot do.
fn disk_tempdir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// The filesystem name stallscope gives the disk the scenarios read from.
fn scratch_fs() -> &'static str {
    let magic = fs_magic(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let magic = u32::from_str_radix(magic.trim_start_matches("0x"), 16).unwrap();
    stallscope_format::fs_name(magic)
}

#[test]
fn a_gpu_bound_baseline_has_no_big_finding() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let r = run(tmp.path(), "baseline", false);
    let wall = r["wall_ns"].as_f64().unwrap();
    for f in r["findings"].as_array().unwrap() {
        let saving = 100.0 * f["est_saving_ns"].as_f64().unwrap() / wall;
        assert!(
            f["share_pct"].as_f64().unwrap() <= 5.0 && saving <= 5.0,
            "baseline finding over 5%:\n{}",
            text_report(&r)
        );
    }
    let busy = r["devices"][0]["busy_ns"].as_f64().unwrap();
    assert!(
        busy / wall > 0.9,
        "baseline GPU busy only {:.0}%",
        100.0 * busy / wall
    );
}

#[test]
fn b_slow_cpu_workers_are_data_cpu() {
    let (slow, _) = check_estimate_with("data_cpu", "data", Some("cpu"), Wrap::None);
    // Its one worker lives through every step: keeping workers across
    // epochs would save nothing, and is not advised.
    let fix = slow["findings"][0]["fix"].as_str().unwrap();
    assert!(!fix.contains("persistent_workers"), "{fix}");
}

#[test]
fn c_workers_reading_evicted_files_are_data_io() {
    check_estimate("data_io", "data", "io");
}

#[test]
fn d_the_loop_reading_files_is_io() {
    check_estimate("io", "io", scratch_fs());
}

/// As on a fast disk (a CI machine's read these 4 KiB pieces in 8 µs): every
/// read is shorter than the span threshold, so the loop's reads are known
/// only as runs of short calls. They are still I/O on the file, not page
/// faults or the sync after them.
#[test]
fn d2_a_loop_of_reads_too_short_for_spans_is_still_io_on_the_file() {
    let (slow, _) = check_estimate_env(
        "io",
        "io",
        Some(scratch_fs()),
        Wrap::None,
        &[("STALLSCOPE_MIN_SPAN_US", "500")],
    );
    let file = &slow["host"]["io_by_file"][0];
    assert!(
        file["what"].as_str().unwrap().contains("scenario-data-"),
        "{file}"
    );
    // 600 reads a step, counted one by one, though each run is one span.
    let calls = file["calls"].as_u64().unwrap();
    assert!(calls >= 600 * 10, "{file}");
    let below = slow["host"]["io_below_threshold"]["calls"]
        .as_u64()
        .unwrap();
    assert!(
        below < calls / 4,
        "runs counted as shorter calls too: {below}"
    );
}

/// The loop opens, reads and closes 600 small files a step (an image
/// folder, a sample per file), each read too short to be a span: the shim
/// keeps them as runs over files, named by their folder.
#[test]
fn d3_small_files_read_one_after_another_are_io_on_their_folder() {
    let (slow, _) = check_estimate_env(
        "io_files",
        "io",
        Some(scratch_fs()),
        Wrap::None,
        &[("STALLSCOPE_MIN_SPAN_US", "500")],
    );
    let file = &slow["host"]["io_by_file"][0];
    let what = file["what"].as_str().unwrap();
    assert!(
        what.contains("/scenario-files-") && what.ends_with("/*"),
        "{file}"
    );
    let calls = file["calls"].as_u64().unwrap();
    assert!(calls >= 600 * 10, "{file}");
    let f = &slow["findings"][0];
    let (evidence, fix) = (f["evidence"].as_str().unwrap(), f["fix"].as_str().unwrap());
    assert!(
        evidence.contains(" small files, one after another"),
        "{evidence}"
    );
    assert!(fix.contains("shards"), "{fix}");
}

/// 100 ms of Python after each step's sync: host work outside the launch
/// bursts, which moving it off the loop removes (CUDA graphs would not).
#[test]
fn e_python_work_between_launches_is_cpu() {
    check_estimate("cpu", "cpu", "host-work");
}

#[test]
fn f_fp32_gemm_is_precision() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let r = run(tmp.path(), "precision", false);
    let f = top(&r, "precision", Some("fp32"));
    assert!(
        f["evidence"].as_str().unwrap().contains("ampere_sgemm"),
        "{}",
        f["evidence"]
    );
    let fp32 = r["devices"][0]["busy_by_precision_ns"]["fp32"]
        .as_f64()
        .unwrap();
    assert!(fp32 > 0.5 * r["devices"][0]["busy_ns"].as_f64().unwrap());
}

#[test]
fn g_oom_free_storm_and_offload_are_memory() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let r = run(tmp.path(), "memory", false);
    let f = top(&r, "memory", None);
    let ev = f["evidence"].as_str().unwrap();
    assert!(
        ev.contains("out-of-memory") && ev.contains("cudaFree") && ev.contains("offload"),
        "{ev}"
    );
}

#[test]
fn h_item_every_step_is_sync() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let r = run(tmp.path(), "sync", false);
    top(&r, "sync", None);
}

#[test]
fn i_a_checkpoint_every_4th_step_is_a_periodic_io_stall() {
    let r = check_estimate_with("ckpt", "io", Some(scratch_fs()), Wrap::ForkThenExec).0;
    // A save, not a read: the advice is to save asynchronously, and its
    // what-if takes the pickling between the writes away with them.
    let f = &r["findings"][0];
    assert!(
        f["fix"]
            .as_str()
            .unwrap()
            .starts_with("save asynchronously"),
        "{}",
        f["fix"]
    );
    assert!(
        f["assumption"].as_str().unwrap().contains("saves move"),
        "{}",
        f["assumption"]
    );
    let steps = &r["steps"];
    // The launches are asynchronous: host-side ranges would say 100 µs.
    let (mean, median) = (
        steps["mean_ns"].as_f64().unwrap(),
        steps["median_ns"].as_f64().unwrap(),
    );
    assert!(median > 10e6 && mean > 1.3 * median, "steps: {steps}");
    let p = &steps["periodic"];
    assert_eq!(p["every"], 4, "steps: {steps}");
    assert_eq!(p["cause"], "io", "steps: {steps}");
    assert_eq!(p["what"], "ckpt.bin", "steps: {steps}");
    assert!(p["extra_ns"].as_f64().unwrap() > 10e6, "steps: {steps}");
    // The wrapper's helper is not a worker.
    assert_eq!(r["processes"]["workers"], 0, "{}", r["processes"]);
}

#[test]
fn j_slow_workers_behind_a_pin_memory_thread_are_data_cpu() {
    let r = check_estimate_with("pin_workers", "data", Some("cpu"), Wrap::ForkThenExec).0;
    // The two workers, not the wrapper's helper forked before the exec.
    assert_eq!(r["processes"]["workers"], 2, "{}", r["processes"]);
}

/// (iii) num_workers=0: the loop loads its batches (40 ms of CPU each) and
/// dispatches 100 kernels from Python. Four workers at the measured cost per
/// batch is the fix, and it ranks first; CUDA graphs would save little.
#[test]
fn k_main_thread_loading_batches_is_data_first() {
    let (slow, _) = check_estimate_with("main_loader", "data", Some("cpu"), Wrap::Parent);
    let f = &slow["findings"][0];
    assert!(
        f["assumption"]
            .as_str()
            .unwrap()
            .contains("4 DataLoader workers"),
        "{}",
        f["assumption"]
    );
    // Whatever cpu/python claims, it is less than data.
    for g in slow["findings"].as_array().unwrap().iter().skip(1) {
        assert!(g["est_saving_ns"].as_f64() <= f["est_saving_ns"].as_f64());
    }
}

/// (iv) Workers that keep up, and a main thread bound by Python dispatch
/// (150 us before each of 200 kernels of 100 us). The cpu/python what-if
/// (3 us per launch) matches the run whose dispatch costs 3 us; the batch
/// waits (the batches were ready) claim nothing.
#[test]
fn l_dispatch_bound_loop_with_workers_that_keep_up_is_cpu_python() {
    // On a busy machine the dispatch also waits for a CPU (cpu/contention):
    // the same what-if.
    let (slow, _) = check_estimate_with("dispatch", "cpu", None, Wrap::Parent);
    let f = &slow["findings"][0];
    assert!(
        f["assumption"].as_str().unwrap().contains("per launch"),
        "{}",
        text_report(&slow)
    );
    let wall = slow["wall_ns"].as_f64().unwrap();
    for f in slow["findings"].as_array().unwrap() {
        if f["cause"] == "data" {
            let saving = f["est_saving_ns"].as_f64().unwrap();
            assert!(saving < 0.05 * wall, "{}", text_report(&slow));
        }
    }
}

/// (v) A slow first launch (lazy module loading inside cudaLaunchKernel,
/// 150 ms, in each of the first steps, after 40 ms of queued work): the
/// whole launch call counts, though it began before the GPU went idle, and
/// it lands in start-up (not other/dependency, nor steady-state advice).
/// And a wait for a peer's event every step: other/dependency, naming the
/// stream.
#[test]
fn m_slow_first_launch_is_start_up() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let r = run_with(tmp.path(), "startup", false, Wrap::Parent);
    let other = r["devices"][0]["idle_by_cause_ns"]["other"]
        .as_f64()
        .unwrap();
    // 4 module loads of 150 ms: start-up, apart from the steady state.
    let items = r["startup"]["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no start-up: {}", r["startup"]));
    let loads: f64 = items
        .iter()
        .filter(|i| i["kind"] == "module-load")
        .map(|i| i["ns"].as_f64().unwrap())
        .sum();
    assert!(loads > 4.0 * 100e6, "start-up: {}", r["startup"]);
    for f in r["findings"].as_array().unwrap() {
        assert_ne!(f["cause"], "launch", "{}", text_report(&r));
    }
    // Every step's last kernels waited 10 ms for a peer's event: that is
    // other/dependency, and the evidence names the stream made to wait.
    let steps = r["steps"]["count"].as_f64().unwrap();
    assert!(steps >= 2.0 && other > steps * 8e6, "{}", text_report(&r));
    let f = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["cause"] == "other")
        .unwrap_or_else(|| panic!("{}", text_report(&r)));
    assert_eq!(f["sub_cause"], "dependency");
    let ev = f["evidence"].as_str().unwrap();
    assert!(
        ev.contains("stream") && ev.contains("cudaStreamWaitEvent"),
        "{ev}"
    );
}

/// (vi) One worker paces the loop (a batch every 100 ms), which waits for
/// it while the GPU runs the last step's 40 ms, then reads files for about
/// 40 ms while the GPU idles. Serving the reads from RAM alone only moves
/// the wait to the next batch; with four workers too, the GPU sets the
/// pace. The io finding says what its fix saves alone and with faster
/// batches (or advises both, when the batch waits idle no GPU), and every
/// fix at once predicts the run with both fixed.
#[test]
fn n_reads_between_paced_batches_pay_off_only_with_faster_batches() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = disk_tempdir();
    let slow = run(tmp.path(), "paced_io", false);
    let fixed = run(tmp.path(), "paced_io", true);
    let all: Vec<&Value> = slow["findings"]
        .as_array()
        .unwrap()
        .iter()
        .chain(slow["minor"].as_array().unwrap())
        .collect();
    let io = all
        .iter()
        .find(|f| f["cause"] == "io")
        .unwrap_or_else(|| panic!("no io finding:\n{}", text_report(&slow)));
    let evidence = io["evidence"].as_str().unwrap();
    assert!(
        evidence.contains("alone, this fix saves"),
        "{evidence}\n{}",
        text_report(&slow)
    );
    let before = slow["steps"]["mean_ns"].as_f64().unwrap();
    let measured = fixed["steps"]["mean_ns"].as_f64().unwrap();
    let predicted = slow["combined"]["est_step_ns_after"].as_f64().unwrap();
    eprintln!(
        "paced_io: step {:.1} ms, every fix at once {:.1} ms, measured fixed {:.1} ms",
        before / 1e6,
        predicted / 1e6,
        measured / 1e6
    );
    assert!(measured < before * 0.7, "the scenario is broken");
    assert!(
        (predicted - measured).abs() <= 0.15 * measured,
        "every fix at once {predicted} vs measured {measured}:\n{}",
        text_report(&slow)
    );
}

/// (x) A DataLoader without persistent_workers: two workers at 100 ms of CPU
/// a batch, started again for each of four epochs of four steps. The
/// recording holds eight worker processes, but the loop had two at a time:
/// the fix doubles two, and, with the later epochs' workers as evidence,
/// keeps them across epochs. The what-if matches a run with four workers
/// kept throughout.
#[test]
fn o_workers_started_each_epoch_count_once_and_are_kept() {
    let (r, _) = check_estimate_with("epochs", "data", Some("cpu"), Wrap::None);
    let f = &r["findings"][0];
    let (fix, evidence, assumption) = (
        f["fix"].as_str().unwrap(),
        f["evidence"].as_str().unwrap(),
        f["assumption"].as_str().unwrap(),
    );
    assert!(fix.contains("num_workers 2 -> 4"), "{fix}");
    assert!(fix.contains("persistent_workers=True"), "{fix}");
    assert!(evidence.contains("; 2 producers on CPU"), "{evidence}");
    assert!(
        evidence.contains("6 worker processes started after the first step"),
        "{evidence}"
    );
    assert!(
        assumption.contains("num_workers 2 -> 4") && assumption.contains("kept across epochs"),
        "{assumption}"
    );
    let procs = &r["processes"];
    assert_eq!(
        (&procs["workers"], &procs["workers_at_once"]),
        (&8.into(), &2.into()),
        "{procs}"
    );
}

/// torch.compile's worker pool (a subprocess of the trainer, on a CPU 10% of
/// the time as a metrics service is, and the eight compile workers it
/// forked, idle) and an idle fork of the trainer waiting on a Unix socket,
/// beside two DataLoader workers whose batches cost 100 ms of CPU. None of
/// the helpers feeds batches: they are neither counted among the producers
/// (which made the two busy workers look starved, 12 of them on CPU 19% of
/// the wait) nor in the worker count the fix doubles.
#[test]
fn p_an_idle_compile_worker_pool_is_not_the_data_loader() {
    let (r, _) = check_estimate_with("compile_pool", "data", Some("cpu"), Wrap::None);
    let f = &r["findings"][0];
    let (fix, evidence) = (f["fix"].as_str().unwrap(), f["evidence"].as_str().unwrap());
    assert!(fix.contains("num_workers 2 -> 4"), "{fix}");
    assert!(!fix.contains("persistent_workers"), "{fix}");
    assert!(evidence.contains("; 2 producers on CPU"), "{evidence}");
    let procs = &r["processes"];
    assert_eq!(
        (&procs["workers"], &procs["workers_at_once"]),
        (&2.into(), &2.into()),
        "{procs}"
    );
    // The pool's nine processes are helpers, not workers.
    let pool: Vec<&Value> = r["host"]["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["command"].as_str().unwrap().contains(" -c "))
        .collect();
    assert_eq!(pool.len(), 9, "{pool:?}");
    assert!(pool.iter().all(|p| p["role"] == "other"), "{pool:?}");
    // Of the trainer's forks, the idle one is a helper too.
    let forks: Vec<&Value> = r["host"]["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["command"] == r["command"] && p["role"] != "trainer")
        .collect();
    let roles: Vec<&str> = forks.iter().map(|p| p["role"].as_str().unwrap()).collect();
    assert_eq!(roles.len(), 3, "{forks:?}");
    assert_eq!(
        roles.iter().filter(|&&r| r == "other").count(),
        1,
        "{forks:?}"
    );
}
