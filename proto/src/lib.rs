//! etcd's v3 wire contract for rtcd, generated from the `.proto` files in
//! `protos/`. Modules are named like etcd's Go packages so code reads the same
//! as etcd's: `etcdserverpb::RangeRequest`, `mvccpb::KeyValue`.
//!
//! This crate holds generated code, plus four pieces of wire logic: `codec`,
//! which decodes txns nested as deep as etcd allows, `coalesce`, which
//! batches the socket writes of a connection carrying these services (rtcd's
//! server and rtcd-bench's client both use it), `authority`, which mends
//! the HTTP/2 authority etcdctl 3.4 sends, and `pings`, which ends a
//! connection flooding the server with PINGs as etcd does.

pub mod authority;
pub mod coalesce;
pub mod codec;
mod http2;
pub mod pings;

/// Key-value records and watch events.
#[allow(clippy::all, missing_docs)]
pub mod mvccpb {
    tonic::include_proto!("mvccpb");
    include!(concat!(env!("OUT_DIR"), "/mvccpb.serde.rs"));
}

/// Users, roles and permissions.
#[allow(clippy::all, missing_docs)]
pub mod authpb {
    tonic::include_proto!("authpb");
    include!(concat!(env!("OUT_DIR"), "/authpb.serde.rs"));
}

/// The client API: KV, Watch, Lease, Cluster, Maintenance and Auth services.
#[allow(clippy::all, missing_docs)]
pub mod etcdserverpb {
    tonic::include_proto!("etcdserverpb");
    include!(concat!(env!("OUT_DIR"), "/etcdserverpb.serde.rs"));
}

/// The lock service.
#[allow(clippy::all, missing_docs)]
pub mod v3lockpb {
    tonic::include_proto!("v3lockpb");
    include!(concat!(env!("OUT_DIR"), "/v3lockpb.serde.rs"));
}

/// The election service.
#[allow(clippy::all, missing_docs)]
pub mod v3electionpb {
    tonic::include_proto!("v3electionpb");
    include!(concat!(env!("OUT_DIR"), "/v3electionpb.serde.rs"));
}

/// rtcd's member-to-member protocol on the peer URL.
#[allow(clippy::all, missing_docs)]
pub mod rtcdraftpb {
    tonic::include_proto!("rtcdraftpb");
}
