//! Watches: the hub that fans committed events out, the per-RPC stream
//! that serves a client's watchers, and the shaping of their responses.

pub mod fragment;
pub mod hub;
pub mod stream;
pub mod watcher;

pub use hub::Hub;
