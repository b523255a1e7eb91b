//! The stallscope command line: record a training job, dump a trace, analyze
//! it, and gate CI on the result.

mod cli;

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
