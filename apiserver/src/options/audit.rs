//! Audit flags (kube-apiserver's `--audit-*`): no policy file, no auditing.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct AuditOptions {
    /// An audit.k8s.io/v1 Policy (YAML or JSON); without it nothing is audited.
    #[arg(long)]
    pub audit_policy_file: Option<PathBuf>,
    /// Where the log backend writes events, one JSON object per line; `-`
    /// is standard output. Without it there is no log backend.
    #[arg(long)]
    pub audit_log_path: Option<PathBuf>,
    /// Days to keep rotated log files (0: no limit).
    #[arg(long, default_value_t = 366)]
    pub audit_log_maxage: u32,
    /// Rotated log files to keep (0: no limit).
    #[arg(long, default_value_t = 100)]
    pub audit_log_maxbackup: u32,
    /// Megabytes a log file may reach before it is rotated (0: never).
    #[arg(long, default_value_t = 100)]
    pub audit_log_maxsize: u32,
    /// Only `json` (kube's default) is written.
    #[arg(long, default_value = "json", value_parser = ["json"])]
    pub audit_log_format: String,
}
