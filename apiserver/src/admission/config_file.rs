//! `--admission-control-config-file`: kube's AdmissionConfiguration, which
//! gives plugins their configuration, inline or from a file of its own
//! (a path relative to the configuration file's directory):
//!
//! ```yaml
//! apiVersion: apiserver.config.k8s.io/v1
//! kind: AdmissionConfiguration
//! plugins:
//! - name: ValidatingAdmissionWebhook
//!   configuration:
//!     apiVersion: apiserver.config.k8s.io/v1
//!     kind: WebhookAdmissionConfiguration
//!     kubeConfigFile: /etc/rtcd/webhook-credentials.kubeconfig
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The API versions kube reads the file in.
const API_VERSIONS: [&str; 3] =
    ["apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1alpha1", "apiserver.k8s.io/v1alpha1"];

/// Each plugin's configuration object, by plugin name, and where relative
/// paths inside it start.
#[derive(Debug, Clone, Default)]
pub struct PluginConfigurations {
    pub by_plugin: BTreeMap<String, Value>,
    pub base: PathBuf,
}

impl PluginConfigurations {
    pub fn get(&self, plugin: &str) -> Option<&Value> {
        self.by_plugin.get(plugin)
    }

    /// A path given inside a configuration, as kube resolves it.
    pub fn resolve(&self, path: &str) -> PathBuf {
        self.base.join(path)
    }
}

/// Reads the file; what is wrong with it, naming the file, otherwise.
pub fn read(path: &Path) -> Result<PluginConfigurations, String> {
    let failed = |why: String| format!("failed to read plugin config: {}: {why}", path.display());
    let document = read_document(path).map_err(&failed)?;
    let api_version = document["apiVersion"].as_str().unwrap_or_default();
    if document["kind"] != "AdmissionConfiguration" || !API_VERSIONS.contains(&api_version) {
        return Err(failed(format!(
            "expected kind AdmissionConfiguration in one of {}, got {}, kind {}",
            API_VERSIONS.join(", "),
            if api_version.is_empty() { "no apiVersion" } else { api_version },
            document["kind"].as_str().unwrap_or("none")
        )));
    }
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut by_plugin = BTreeMap::new();
    for plugin in document["plugins"].as_array().into_iter().flatten() {
        let name = plugin["name"]
            .as_str()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| failed("a plugin has no name".into()))?;
        let configuration = match (plugin["configuration"].is_object(), plugin["path"].as_str()) {
            (true, _) => plugin["configuration"].clone(),
            (false, Some(file)) => read_document(&base.join(file)).map_err(&failed)?,
            (false, None) => continue,
        };
        by_plugin.insert(name.to_string(), configuration);
    }
    Ok(PluginConfigurations { by_plugin, base })
}

/// A YAML (or JSON) file as JSON.
pub fn read_document(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_file_configurations_are_read_and_wrong_files_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("webhook.yaml"),
            "apiVersion: apiserver.config.k8s.io/v1\nkind: WebhookAdmissionConfiguration\nkubeConfigFile: creds.kubeconfig\n",
        )
        .unwrap();
        let main = dir.path().join("admission.yaml");
        std::fs::write(
            &main,
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n\
             - name: ValidatingAdmissionWebhook\n  path: webhook.yaml\n\
             - name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n",
        )
        .unwrap();
        let read = read(&main).unwrap();
        assert_eq!(read.get("ValidatingAdmissionWebhook").unwrap()["kubeConfigFile"], "creds.kubeconfig");
        assert_eq!(read.get("PodSecurity").unwrap()["kind"], "PodSecurityConfiguration");
        assert_eq!(read.resolve("creds.kubeconfig"), dir.path().join("creds.kubeconfig"));
        std::fs::write(&main, "kind: Something\n").unwrap();
        assert!(super::read(&main).unwrap_err().contains("expected kind AdmissionConfiguration"));
        assert!(
            super::read(&dir.path().join("absent.yaml"))
                .unwrap_err()
                .starts_with("failed to read plugin config: ")
        );
    }
}
