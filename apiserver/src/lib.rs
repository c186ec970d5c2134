//! rtcd-apiserver: a Kubernetes-style REST API over any etcd v3 endpoint
//! (rtcd or etcd).
//!
//! Data flow: HTTP request → `http` (handler chain, request info, verbs) →
//! `registry` (what each verb does to an object) → `storage` (kube's etcd3
//! store: Txns on etcd's KV API) for writes, `cache` (one etcd watch per
//! resource, fanned out to every watcher) for lists and watches.
//!
//! * `resources`: the kinds served, in one table.
//! * `object`: decoding with field validation; server-owned metadata.
//! * `patch`: JSON, merge and strategic merge patches.
//! * `protobuf`: request bodies in Kubernetes' protobuf encoding (client-go's
//!   typed clients send them), decoded into JSON.
//! * `selector`: label and field selectors.
//! * `table`: `kubectl get` columns per kind.
//! * `openapi`: the OpenAPI v3 documents kubectl validates and explains with.
//! * `errors`: every client-visible error as a `metav1.Status`.

pub mod cache;
pub mod config;
pub mod errors;
pub mod http;
pub mod namespaces;
pub mod object;
pub mod openapi;
pub mod patch;
pub mod protobuf;
pub mod registry;
pub mod resources;
pub mod selector;
pub mod server;
pub mod services;
pub mod storage;
pub mod table;
pub mod tls;
