//! Workloads: concurrent clients that record what they did.

pub mod append;
pub mod lease;
pub mod register;
pub mod watch;
