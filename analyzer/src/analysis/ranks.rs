//! Comparison across the ranks of a distributed job.
