//! etcd's gRPC services, one file each, and the peer-side service members
//! use on behalf of clients (`peer`).

pub mod cluster;
pub mod kv;
pub mod lease;
pub mod maintenance;
pub mod peer;
pub mod watch;
