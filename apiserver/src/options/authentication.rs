//! Authentication flags (kube-apiserver's names). `--client-ca-file` is a
//! serving flag: the TLS listener verifies client certificates with it.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct AuthenticationOptions {
    /// Requests with no credential are served as `system:anonymous` (group
    /// `system:unauthenticated`); with false they answer 401.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub anonymous_auth: bool,
    /// Static bearer tokens: CSV rows `token,user,uid[,"group1,group2"]`.
    #[arg(long)]
    pub token_auth_file: Option<PathBuf>,
}
