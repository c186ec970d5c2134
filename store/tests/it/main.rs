//! rtcd-store integration tests: one binary, a module per concern.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agreement;
mod crash;
mod model;
mod model_check;
mod reopen;
mod snapshot;
mod strategies;
