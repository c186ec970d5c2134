//! rtcd-apiserver: a Kubernetes-style REST API over any etcd v3 endpoint.
//!
//! * `storage`: kube-apiserver's storage contract on etcd's KV API — objects
//!   as bytes under keys, create-if-absent, GuaranteedUpdate, deletes with
//!   preconditions, paged lists pinned to a revision.
//!
//! The REST front, watch cache and handler chain come later (issue 7).

pub mod storage;
