//! rtcd-apiserver: a Kubernetes-style REST API over any etcd v3 endpoint
//! (rtcd or etcd), split the way k8s.io/apiserver is.
//!
//! A request walks: `server` (TCP/TLS, the client's certificate) →
//! `filters` (panic recovery, request info, metrics, authentication, max in
//! flight) → `endpoints` (the verb's handler, discovery, OpenAPI) →
//! `registry` (the resource's generic `Store` and its kind's `Strategy`,
//! with `admission` on writes) → `storage` for writes and the latest reads,
//! `cacher` (one watch cache per resource) for lists and watches.
//!
//! * `options`: command-line flags, one group per concern.
//! * `request`: what a request is about and who sent it.
//! * `runtime`: objects as JSON: metadata access, decoding.
//! * `controllers`: the namespace finalizer and bootstrap objects.
//! * `patch`, `selector`, `table`, `protobuf`, `openapi`: JSON, merge and
//!   strategic patches; label and field selectors; `kubectl get` columns;
//!   protobuf request bodies; the OpenAPI documents.
//! * `fieldmanager`: `managedFields` on every write, and server-side apply.
//! * `errors`: every client-visible error as a `metav1.Status`.
//! * `metrics`: `/metrics`.
//! * `aggregator`: group versions of extension API servers, proxied.
//! * `tls_client`: TLS for the server's own outgoing connections.
//! * `delegation`: as an extension server, the main server asked who
//!   callers are and what they may do.

pub mod admission;
pub mod aggregator;
pub mod audit;
pub mod authn;
pub mod authz;
pub mod cacher;
pub mod controllers;
pub mod customresource;
pub mod delegation;
pub mod endpoints;
pub mod errors;
pub mod fieldmanager;
pub mod filters;
pub mod flowcontrol;
pub mod kubeconfig;
pub mod metrics;
pub mod openapi;
pub mod options;
pub mod patch;
pub mod pki;
pub mod protobuf;
pub mod registry;
pub mod request;
pub mod runtime;
pub mod selector;
pub mod server;
pub mod storage;
pub mod table;
pub mod tls_client;
