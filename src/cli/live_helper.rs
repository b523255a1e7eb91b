//! `record --metrics` and `record --live`: the exporter or the live view runs
//! as a separate process beside the job, never inside it (the shim only
//! writes the recording). Like record's closing-line helper, it is a
//! grandchild adopted by init, in a session of its own: never the job's
//! child, so a program that waits for any child does not find it. It learns
//! the job's pid (record's own, kept across exec) and stops after it.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::Context;

/// What to start beside the job.
pub struct Helper {
    argv: Vec<CString>,
}

impl Helper {
    /// `stallscope export --metrics ADDR --pid PID [--label k=v]... DIR`
    pub fn exporter(addr: &str, labels: &[(String, String)], dir: &Path) -> anyhow::Result<Helper> {
        let mut args = vec!["export".to_string(), "--metrics".into(), addr.into()];
        for (k, v) in labels {
            args.push("--label".into());
            args.push(format!("{k}={v}"));
        }
        Helper::new(args, dir)
    }

    /// `stallscope top --pid PID DIR`
    pub fn top(dir: &Path) -> anyhow::Result<Helper> {
        Helper::new(vec!["top".to_string()], dir)
    }

    fn new(mut args: Vec<String>, dir: &Path) -> anyhow::Result<Helper> {
        let exe = std::env::current_exe().context("finding stallscope's own executable")?;
        // SAFETY: getpid has no preconditions; after exec the job keeps it.
        let pid = unsafe { libc::getpid() };
        args.push("--pid".into());
        args.push(pid.to_string());
        let mut argv = vec![CString::new(exe.as_os_str().as_bytes())?];
        for a in args {
            argv.push(CString::new(a)?);
        }
        argv.push(CString::new(dir.as_os_str().as_bytes())?);
        Ok(Helper { argv })
    }

    /// Starts it (detached); false if it could not be.
    pub fn start(self) -> bool {
        let mut ptrs: Vec<*const libc::c_char> = self.argv.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        // SAFETY: record is single-threaded here, so fork is safe; the
        // children only call setsid, fork, execv and _exit, with arguments
        // prepared before the fork.
        unsafe {
            match libc::fork() {
                -1 => false,
                0 => {
                    libc::setsid();
                    if libc::fork() == 0 {
                        libc::execv(ptrs[0], ptrs.as_ptr());
                    }
                    libc::_exit(0);
                }
                child => {
                    let mut st = 0;
                    libc::waitpid(child, &mut st, 0);
                    true
                }
            }
        }
    }
}
