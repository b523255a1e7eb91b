//! Readers: each turns a trace source into a [`Timeline`](crate::model::Timeline).

pub mod kineto;
pub mod native;
