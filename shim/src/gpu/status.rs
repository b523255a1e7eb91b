//! How GPU capture tells its state: a GpuStatus record, a Note for the user
//! when capture is off or partial, and at most one `stallscope:` line.

use stallscope_format::records::{GpuDropped, GpuStatus, Note, gpu_status, note};

use crate::{clock, diag, recorder};

/// Records a capture state with its reason; `say` also prints it.
pub fn report(status: u8, cupti_version: u32, reason: &str, say: bool) {
    recorder::with_writer(|w| {
        let text = w.string(reason.as_bytes());
        let ts = clock::mono_ns();
        let s = GpuStatus {
            status,
            cupti_version,
            ts,
            reason: text,
        };
        w.event(GpuStatus::LEN, &mut |b| s.encode(b));
        let code = match status {
            gpu_status::UNAVAILABLE => note::GPU_UNAVAILABLE,
            gpu_status::PARTIAL => note::GPU_PARTIAL,
            _ => return,
        };
        let n = Note {
            level: 1,
            code,
            ts,
            text,
        };
        w.event(Note::LEN, &mut |b| n.encode(b));
    });
    if say {
        let what = match status {
            gpu_status::PARTIAL => "GPU capture is partial",
            _ => "GPU capture is off",
        };
        diag::say(&format!("{what}: {reason}; host capture continues"));
    }
}

/// A note that is not a state change (kinds that could not be enabled,
/// counts of records not kept).
pub fn info(text: &str) {
    recorder::with_writer(|w| {
        let text = w.string(text.as_bytes());
        let n = Note {
            level: 0,
            code: note::INFO,
            ts: clock::mono_ns(),
            text,
        };
        w.event(Note::LEN, &mut |b| n.encode(b));
    });
}

/// Records lost on the GPU side (CUPTI's own count, or our discard buffer).
pub fn dropped(w: &mut recorder::Writer<'_>, device: u32, count: u64) {
    if count == 0 {
        return;
    }
    let d = GpuDropped {
        reserved: 0,
        device,
        ts: clock::mono_ns(),
        count,
    };
    w.event(GpuDropped::LEN, &mut |b| d.encode(b));
}
