//! rtcd's etcd v3 server: the gRPC services (one file each under
//! `services/`), the write path, response headers and the mapping of errors
//! to etcd's codes and messages.
//!
//! The command line (`config`) is validated once into `settings`, which is
//! all the rest reads. Modules depend on each other one way: leaves
//! (`settings`, `errors`, `header`, `hub`, `lessor`...) below `node`, the
//! member's duties (`leader`, `leases`, `membership`...) above it, and
//! `services` and `server` on top.

pub mod applied;
pub mod auth;
pub mod compactor;
pub mod config;
pub mod errors;
pub mod gateway;
pub mod grpc_body;
pub mod header;
pub mod http;
pub mod hub;
pub mod identity;
pub mod leader;
pub mod learner;
pub mod leases;
pub mod lessor;
pub mod listener;
pub mod membership;
pub mod metrics;
pub mod metrics_page;
pub mod node;
pub mod peer_errors;
pub mod process;
pub mod require_leader;
pub mod restore;
pub mod server;
pub mod services;
pub mod settings;
pub mod tls;
pub mod version;
pub mod watch;
