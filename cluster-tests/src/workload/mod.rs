//! Workloads: concurrent clients that record what they did.

pub mod register;
pub mod watch;
