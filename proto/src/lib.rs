//! etcd's v3 wire contract for rtcd, generated from the `.proto` files in
//! `protos/`. Modules are named like etcd's Go packages so code reads the same
//! as etcd's: `etcdserverpb::RangeRequest`, `mvccpb::KeyValue`.
//!
//! This crate holds generated code and re-exports only; no logic.

#![allow(clippy::all, missing_docs)]

/// Key-value records and watch events.
pub mod mvccpb {
    tonic::include_proto!("mvccpb");
}

/// Users, roles and permissions.
pub mod authpb {
    tonic::include_proto!("authpb");
}

/// The client API: KV, Watch, Lease, Cluster, Maintenance and Auth services.
pub mod etcdserverpb {
    tonic::include_proto!("etcdserverpb");
}

/// The lock service.
pub mod v3lockpb {
    tonic::include_proto!("v3lockpb");
}

/// The election service.
pub mod v3electionpb {
    tonic::include_proto!("v3electionpb");
}

/// rtcd's member-to-member protocol on the peer URL.
pub mod rtcdraftpb {
    tonic::include_proto!("rtcdraftpb");
}
