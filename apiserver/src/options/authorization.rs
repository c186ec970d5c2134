//! Authorization flags (kube-apiserver's names).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuthorizationMode {
    #[value(name = "AlwaysAllow")]
    AlwaysAllow,
    #[value(name = "AlwaysDeny")]
    AlwaysDeny,
    #[value(name = "RBAC")]
    Rbac,
}

#[derive(Debug, Clone, Args)]
pub struct AuthorizationOptions {
    /// Authorizers in the order they are asked, comma-separated; the first
    /// to allow decides. kube-apiserver's default without flags is
    /// AlwaysAllow; kubeadm and `scripts/up.sh` use RBAC.
    #[arg(long, value_delimiter = ',', default_value = "AlwaysAllow")]
    pub authorization_mode: Vec<AuthorizationMode>,
    /// Makes this an extension API server whose authorization is the main
    /// server's: a kubeconfig naming it, with rights to create
    /// SubjectAccessReviews. `--authorization-mode` is then not used.
    #[arg(long)]
    pub authorization_kubeconfig: Option<PathBuf>,
    /// Paths allowed without asking the main server (comma-separated; a
    /// trailing `*` allows what starts with the rest).
    #[arg(long, value_delimiter = ',', default_value = "/healthz,/readyz,/livez")]
    pub authorization_always_allow_paths: Vec<String>,
}

impl AuthorizationOptions {
    pub fn rbac(&self) -> bool {
        self.authorization_mode.contains(&AuthorizationMode::Rbac)
    }
}
