//! etcd's gRPC services, one file each.

pub mod cluster;
pub mod kv;
pub mod lease;
pub mod maintenance;
pub mod watch;
