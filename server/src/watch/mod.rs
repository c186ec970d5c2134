//! Watches: the per-RPC stream that serves a client's watchers from the
//! hub (`crate::hub`) and the store's history, and the shaping of their
//! responses.

pub mod fragment;
pub mod requests;
pub mod stream;
pub mod watcher;
