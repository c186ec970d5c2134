//! Authorization flags (kube-apiserver's names).

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
}

impl AuthorizationOptions {
    pub fn rbac(&self) -> bool {
        self.authorization_mode.contains(&AuthorizationMode::Rbac)
    }
}
