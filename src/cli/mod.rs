//! Subcommands. Each lives in its own module; this one only dispatches.

mod analyze;
mod check;
mod diff;
pub mod dump;
mod export;
mod live_helper;
mod load;
mod metrics_http;
mod progress;
mod record;
mod shim_path;
mod top;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Why is my GPU idle, and what is each fix worth?
///
/// stallscope records a training job without code changes (host I/O and waits,
/// thread samples, and GPU activity through CUPTI), then attributes every idle
/// GPU nanosecond to a cause and estimates what each fix would save.
///
///   stallscope record -o run1 -- python train.py
///   stallscope analyze run1 --perfetto run1.pftrace
///   stallscope check run1 --max-idle 20
///   stallscope analyze run1 --html run1.html
///   stallscope diff run1 run2          (after a fix: was the prediction right?)
///
/// It also reads PyTorch-profiler traces: stallscope analyze trace.json.gz
#[derive(Debug, Parser)]
#[command(name = "stallscope", version, verbatim_doc_comment)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Record(record::RecordArgs),
    Analyze(analyze::AnalyzeArgs),
    Check(check::CheckArgs),
    Diff(diff::DiffArgs),
    Dump(dump::DumpArgs),
    Top(top::TopArgs),
    Export(export::ExportArgs),
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Record(a) => record::run(a),
        Command::Analyze(a) => analyze::run(a),
        Command::Check(a) => check::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Dump(a) => dump::run(a),
        Command::Top(a) => top::run(a),
        Command::Export(a) => export::run(a),
    }
}
