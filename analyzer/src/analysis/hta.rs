//! HolisticTraceAnalysis-compatible figures (`--hta-compat`).
