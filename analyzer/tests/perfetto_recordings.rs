//! Perfetto output for real inputs: the checked-in native recordings under
//! traces/ and a PyTorch-profiler trace from the corpus, decoded with the
//! official schema, plus a golden file for one recording.

mod perfetto_support;

use std::path::{Path, PathBuf};

use perfetto_support::{expected, run_checker, write};
use stallscope_analyzer::analysis::diagnose;
use stallscope_analyzer::model::Timeline;
use stallscope_analyzer::read::{kineto, native};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(p)
}

fn corpus() -> PathBuf {
    let p = std::env::var_os("STALLSCOPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo("../shared/corpus"));
    assert!(
        p.is_dir(),
        "the trace corpus is missing at {} (set STALLSCOPE_CORPUS)",
        p.display()
    );
    p
}

/// Writes, decodes and checks counts against the model; returns the bytes.
fn decode_and_compare(tl: &Timeline, name: &str) -> Vec<u8> {
    let diag = diagnose(tl);
    let (bytes, stats) = write(tl, Some(&diag));
    assert!(stats.kernels > 0, "{name}: no kernels written");
    assert_eq!(
        stats.idle_gaps as usize,
        diag.devices.iter().map(|d| d.gaps.len()).sum::<usize>()
    );
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join(format!("{name}.pftrace"));
    std::fs::write(&trace, &bytes).unwrap();
    let exp = dir.path().join(format!("{name}.json"));
    std::fs::write(
        &exp,
        serde_json::to_string(&expected(tl, Some(&diag))).unwrap(),
    )
    .unwrap();
    let (ok, out) = run_checker(&trace, Some(&exp), &[]);
    assert!(ok, "check_trace.py rejected {name}:\n{out}");
    bytes
}

#[test]
fn native_recordings_decode_and_match_the_model() {
    for rec in ["traces/dataloader-cpu", "traces/item-sync"] {
        let tl = native::read_recording(&repo(rec)).unwrap();
        assert!(
            tl.gpu_op_count() > 100 && tl.host_span_count() > 10,
            "{rec}"
        );
        decode_and_compare(&tl, rec.rsplit('/').next().unwrap());
    }
}

#[test]
fn kineto_trace_decodes_and_matches_the_model() {
    let path = corpus().join("kineto/param/et_replay/tests/inputs/resnet_kineto.json.gz");
    let tl = kineto::read_file(&path).unwrap();
    decode_and_compare(&tl, "resnet_kineto");
}

#[test]
fn golden_perfetto_of_a_checked_in_recording() {
    let tl = native::read_recording(&repo("traces/item-sync")).unwrap();
    let (bytes, _) = write(&tl, Some(&diagnose(&tl)));
    let golden =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/perfetto/item-sync.pftrace");
    if std::env::var_os("STALLSCOPE_BLESS").is_some() {
        std::fs::write(&golden, &bytes).unwrap();
    }
    let want = std::fs::read(&golden).expect("golden missing: run with STALLSCOPE_BLESS=1");
    assert!(
        bytes == want,
        "Perfetto output of traces/item-sync changed ({} bytes, golden {}); if intended, re-run with STALLSCOPE_BLESS=1",
        bytes.len(),
        want.len()
    );
}
