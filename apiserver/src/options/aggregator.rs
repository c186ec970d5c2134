//! The aggregation layer's flags (kube-apiserver's names and defaults).

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct AggregatorOptions {
    /// The client certificate (PEM) presented to extension API servers, so
    /// they trust the user this server names in front-proxy headers; its
    /// CA is their `--requestheader-client-ca-file`.
    #[arg(long, requires = "proxy_client_key_file")]
    pub proxy_client_cert_file: Option<PathBuf>,
    /// That certificate's private key (PEM).
    #[arg(long, requires = "proxy_client_cert_file")]
    pub proxy_client_key_file: Option<PathBuf>,
    /// Reach extension servers at a ready endpoint of their Service rather
    /// than its cluster IP (which needs kube-proxy or the like on this
    /// machine).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_aggregator_routing: bool,
}
