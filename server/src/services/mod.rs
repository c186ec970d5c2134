//! etcd's gRPC services, one file each, the peer-side service members use
//! on behalf of clients (`peer`), and the member as its own client
//! (`local_client`) for the services etcd builds from client recipes.

pub mod auth;
pub mod cluster;
pub mod election;
pub mod kv;
pub mod lease;
pub mod local_client;
pub mod lock;
pub mod maintenance;
pub mod peer;
pub mod watch;
