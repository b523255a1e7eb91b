//! Per-thread state. Const-initialized, no destructor: the compiler then uses
//! plain ELF TLS, with no lazy registration and no allocation on first use.

use core::cell::{Cell, UnsafeCell};

use stallscope_format::writer::{ChunkWriter, ThreadSlot};

use crate::burst::{Folder, Run};

pub struct ThreadState {
    /// Reentrancy guard: set while the shim itself runs on this thread, so the
    /// calls it makes (and calls from signal handlers meanwhile) pass straight through.
    pub busy: Cell<bool>,
    /// This thread's counters in the file; NULL until the first hooked call.
    pub slot: Cell<ThreadSlot>,
    /// This thread's current chunk.
    pub chunk: Cell<ChunkWriter>,
    /// Kernel thread id, cached.
    pub tid: Cell<u32>,
    /// The run of short calls on a file in progress (`burst`).
    pub run: Cell<Run>,
    /// The folder of the run's files, when it reads files one after another.
    pub folder: UnsafeCell<Folder>,
}

thread_local! {
    pub static STATE: ThreadState = const {
        ThreadState {
            busy: Cell::new(false),
            slot: Cell::new(ThreadSlot::NULL),
            chunk: Cell::new(ChunkWriter::EMPTY),
            tid: Cell::new(0),
            run: Cell::new(Run::EMPTY),
            folder: UnsafeCell::new(Folder::EMPTY),
        }
    };
}

/// The kernel thread id of the caller.
pub fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}
