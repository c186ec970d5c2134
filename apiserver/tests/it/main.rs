//! rtcd-apiserver's integration tests: real etcd members (rtcd and etcd),
//! the real rtcd-apiserver binary, real kubectl and the official Python
//! client.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod admission;
mod aggregation;
mod apply;
mod certificates;
mod clients;
mod common;
mod crds;
mod discovery;
mod drain;
mod etcd_tls;
mod extension_servers;
mod failover;
mod fanout;
mod flowcontrol;
mod front_proxy;
mod hostile_cel;
mod https;
mod injector;
mod kubectl;
mod limits;
mod metrics;
mod mutating_policies;
mod node_client;
mod object_semantics;
mod openapi;
mod pod_security;
mod policies;
mod prometheus;
mod protobuf;
mod quota;
mod refusals;
mod resource_allocation;
mod runtime_resources;
mod security;
mod semantics;
mod storage;
mod webhook_server;
mod webhooks;
