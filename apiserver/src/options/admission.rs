//! Admission flags, as kube-apiserver's.

use clap::Args;

use crate::admission::PluginConfig;

#[derive(Debug, Clone, Args)]
pub struct AdmissionOptions {
    /// Plugins to run besides the default ones (comma-separated). They run
    /// in kube's fixed order whatever the order here.
    #[arg(long, value_delimiter = ',')]
    pub enable_admission_plugins: Vec<String>,
    /// Default plugins not to run (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub disable_admission_plugins: Vec<String>,
    /// DefaultTolerationSeconds: seconds a pod tolerates a not-ready node.
    #[arg(long, default_value_t = 300)]
    pub default_not_ready_toleration_seconds: i64,
    /// DefaultTolerationSeconds: seconds a pod tolerates an unreachable node.
    #[arg(long, default_value_t = 300)]
    pub default_unreachable_toleration_seconds: i64,
    /// An AdmissionConfiguration (apiserver.config.k8s.io/v1) giving
    /// plugins their configuration, e.g. the webhooks' kubeConfigFile.
    #[arg(long)]
    pub admission_control_config_file: Option<std::path::PathBuf>,
}

impl AdmissionOptions {
    /// The plugins' configuration; what is wrong with the configuration
    /// file otherwise.
    pub fn plugin_config(&self) -> Result<PluginConfig, String> {
        let configurations = match &self.admission_control_config_file {
            Some(path) => crate::admission::config_file::read(path)?,
            None => Default::default(),
        };
        Ok(PluginConfig {
            not_ready_toleration_seconds: self.default_not_ready_toleration_seconds,
            unreachable_toleration_seconds: self.default_unreachable_toleration_seconds,
            configurations,
        })
    }
}
