use std::time::Instant;
fn main() {
    let p = std::path::PathBuf::from(std::env::args().nth(1).unwrap());
    let bytes = std::fs::read(&p).unwrap();
    for _ in 0..3 {
        let t1 = Instant::now();
        let v: serde::de::IgnoredAny = serde_json::from_slice(&bytes).unwrap();
        let t2 = Instant::now();
        let _ = v;
        #[derive(serde::Deserialize)]
        struct D<'a> {
            #[serde(borrow, rename = "traceEvents")]
            _e: &'a serde_json::value::RawValue,
        }
        let d: D = serde_json::from_slice(&bytes).unwrap();
        let t3 = Instant::now();
        let _ = d;
        let tl = stallscope_analyzer::read::kineto::read_file(&p).unwrap();
        let t4 = Instant::now();
        let _ = stallscope_analyzer::analysis::hta::hta_compat(&tl);
        let t5 = Instant::now();
        eprintln!(
            "ignored {:?} raw {:?} kineto {:?} hta {:?}",
            t2 - t1,
            t3 - t2,
            t4 - t3,
            t5 - t4
        );
    }
}
