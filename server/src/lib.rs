//! rtcd's etcd v3 server: the gRPC services (one file each under
//! `services/`), the write path, response headers and the mapping of errors
//! to etcd's codes and messages.

pub mod applied;
pub mod compactor;
pub mod config;
pub mod duration;
pub mod errors;
pub mod header;
pub mod http;
pub mod identity;
pub mod leader;
pub mod leases;
pub mod lessor;
pub mod membership;
pub mod node;
pub mod require_leader;
pub mod restore;
pub mod server;
pub mod services;
pub mod watch;
