//! rtcd-apiserver as an extension API server (kube's delegated
//! authentication and authorization, as sample-apiserver and
//! metrics-server use them): the main API server named by a kubeconfig
//! (`--authentication-kubeconfig`, `--authorization-kubeconfig`) reviews
//! bearer tokens (TokenReview) and decides what callers may do
//! (SubjectAccessReview), and its `kube-system/extension-apiserver-
//! authentication` ConfigMap says which front proxies and client CAs to
//! trust.
//!
//! * `client`: JSON requests to the main server.
//! * `trust`: the ConfigMap read into this server's authentication flags.
//!
//! The reviewers themselves are `authn::token_review` and
//! `authz::delegated`.

pub mod client;
pub mod trust;

pub use client::MainServer;
