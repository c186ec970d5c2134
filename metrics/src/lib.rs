//! What rtcd's crates count for `/metrics`, and how it is written out: a
//! histogram with fixed buckets, cheap enough to observe on the write path
//! (atomics, no lock), Prometheus's text format, and the `process_*`
//! families every Prometheus client exports. The crate that serves
//! `/metrics` decides names and help texts (etcd's).

mod histogram;
pub mod process;
pub mod text;

pub use histogram::Histogram;
