//! The stallscope command line: record a training job, dump a trace, analyze
//! it, and gate CI on the result.

mod cli;

// The analyzer builds and drops large vectors; mimalloc reuses that memory
// instead of returning it to the kernel and taking fresh zeroed pages back.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("stallscope: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
