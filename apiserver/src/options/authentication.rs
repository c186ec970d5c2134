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
    /// Who ServiceAccount tokens say issued them (repeatable; the first
    /// signs, any verifies).
    #[arg(long = "service-account-issuer")]
    pub service_account_issuers: Vec<String>,
    /// Private key (PEM; ECDSA P-256 or RSA) that signs ServiceAccount
    /// tokens; without it `.../serviceaccounts/<name>/token` is not served.
    #[arg(long)]
    pub service_account_signing_key_file: Option<PathBuf>,
    /// Public (or private) keys that verify ServiceAccount tokens
    /// (repeatable); the signing key's when none is given.
    #[arg(long = "service-account-key-file")]
    pub service_account_key_files: Vec<PathBuf>,
    /// Audiences a token must be meant for (comma-separated); the issuers
    /// when not given.
    #[arg(long, value_delimiter = ',')]
    pub api_audiences: Vec<String>,
    /// Makes this an extension API server that asks the main server named
    /// by this kubeconfig who bearer tokens stand for (TokenReview), and
    /// reads which client CAs and front proxies to trust from its
    /// `kube-system/extension-apiserver-authentication` ConfigMap.
    #[arg(long)]
    pub authentication_kubeconfig: Option<PathBuf>,
    /// Do not read that ConfigMap: trust only what the flags say.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub authentication_skip_lookup: bool,
    /// Front proxies' client CA (PEM): a client certificate it signed may
    /// say in request headers who the request is for.
    #[arg(long)]
    pub requestheader_client_ca_file: Option<PathBuf>,
    /// The common names front proxies' certificates may have
    /// (comma-separated); any, when none are given.
    #[arg(long, value_delimiter = ',')]
    pub requestheader_allowed_names: Vec<String>,
    /// Headers naming the user, the first one set wins (kube's
    /// `X-Remote-User` is what front proxies send).
    #[arg(long, value_delimiter = ',')]
    pub requestheader_username_headers: Vec<String>,
    /// Headers whose every value is a group of the user.
    #[arg(long, value_delimiter = ',')]
    pub requestheader_group_headers: Vec<String>,
    /// Prefixes of headers that carry the user's extra values.
    #[arg(long, value_delimiter = ',')]
    pub requestheader_extra_headers_prefix: Vec<String>,
    /// Headers naming the user's uid, the first one set wins.
    #[arg(long, value_delimiter = ',')]
    pub requestheader_uid_headers: Vec<String>,
}

impl AuthenticationOptions {
    /// ServiceAccount tokens are on when there is a key and an issuer.
    pub fn service_accounts(&self) -> bool {
        (self.service_account_signing_key_file.is_some() || !self.service_account_key_files.is_empty())
            && !self.service_account_issuers.is_empty()
    }
}
