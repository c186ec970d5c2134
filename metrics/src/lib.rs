//! What rtcd's crates count for `/metrics`, and how it is written out: a
//! histogram with fixed buckets, cheap enough to observe on the write path
//! (atomics, no lock), and Prometheus's text format. The crate that serves
//! `/metrics` decides names and help texts (etcd's).

mod histogram;
pub mod text;

pub use histogram::Histogram;
