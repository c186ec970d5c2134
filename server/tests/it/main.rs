//! rtcd-server end-to-end tests: real `rtcd` processes, real etcd and real
//! `etcdctl` (Debian's etcd-server / etcd-client).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod auth_tokens;
mod cluster;
mod cluster_leases;
mod cluster_membership;
mod crash;
mod differential;
mod etcd_client;
mod etcdctl_auth;
mod etcdctl_concurrency;
mod etcdctl_kv;
mod etcdctl_lease;
mod etcdctl_watch;
mod gateway;
mod harness;
mod hostile;
mod lock_election;
mod maintenance;
mod metrics;
mod prometheus;
mod tls;
mod watch_grpc;
