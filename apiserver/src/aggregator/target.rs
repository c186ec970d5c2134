//! What an APIService naming a Service says about where its group version
//! is served.

use base64::Engine;
use serde_json::Value;

use crate::registry::kinds::apiservice;

/// A Service of the cluster, by name and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceRef {
    pub namespace: String,
    pub name: String,
    pub port: u16,
}

/// An extension server's group version, as its APIService describes it.
#[derive(Debug, Clone)]
pub struct Target {
    /// The APIService's name (`version.group`).
    pub name: String,
    pub group: String,
    pub version: String,
    pub service: ServiceRef,
    /// PEM certificates the server's certificate must chain to; empty
    /// means the system's roots.
    pub ca_bundle: Vec<u8>,
    pub insecure_skip_tls_verify: bool,
    /// Discovery's order: groups by their highest `groupPriorityMinimum`,
    /// versions by `versionPriority`.
    pub group_priority: i64,
    pub version_priority: i64,
    /// Whether its `Available` condition is True: kube proxies nothing to
    /// a group version that is not.
    pub available: bool,
}

impl Target {
    /// The target of `service`, an APIService object; None for a local one.
    pub fn of(service: &Value) -> Option<Target> {
        if apiservice::is_local(service) {
            return None;
        }
        let spec = &service["spec"];
        let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
        let reference = &spec["service"];
        let ca_bundle = spec["caBundle"].as_str().unwrap_or_default();
        Some(Target {
            name: text(&service["metadata"]["name"]),
            group: text(&spec["group"]),
            version: text(&spec["version"]),
            service: ServiceRef {
                namespace: text(&reference["namespace"]),
                name: text(&reference["name"]),
                // Validation keeps it within 1..=65535; 443 is kube's default.
                port: reference["port"].as_u64().and_then(|p| u16::try_from(p).ok()).unwrap_or(443),
            },
            ca_bundle: base64::engine::general_purpose::STANDARD.decode(ca_bundle).unwrap_or_default(),
            insecure_skip_tls_verify: spec["insecureSkipTLSVerify"] == Value::Bool(true),
            group_priority: spec["groupPriorityMinimum"].as_i64().unwrap_or_default(),
            version_priority: spec["versionPriority"].as_i64().unwrap_or_default(),
            available: apiservice::available(service).is_some_and(|c| c["status"] == "True"),
        })
    }

    /// The name the server's certificate must carry (and the SNI sent):
    /// the Service's DNS name, as kube's proxy transport sets it.
    pub fn server_name(&self) -> String {
        format!("{}.{}.svc", self.service.name, self.service.namespace)
    }

    /// How it is reached and trusted, to tell when that changed.
    pub fn reached_as(&self) -> String {
        let ServiceRef { namespace, name, port } = &self.service;
        format!("{namespace}/{name}:{port} {:?} {}", self.ca_bundle, self.insecure_skip_tls_verify)
    }

    /// The path of its discovery document, which an extension server must
    /// serve: `/apis/<group>/<version>` (`/api/<version>` for the legacy
    /// group).
    pub fn discovery_path(&self) -> String {
        match self.group.is_empty() {
            true => format!("/api/{}", self.version),
            false => format!("/apis/{}/{}", self.group, self.version),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_apiservice_naming_a_service_is_a_target() {
        let service = json!({
            "metadata": {"name": "v1alpha1.wardle.example.com"},
            "spec": {
                "group": "wardle.example.com", "version": "v1alpha1",
                "service": {"namespace": "wardle", "name": "api"},
                "caBundle": base64::engine::general_purpose::STANDARD.encode("PEM"),
            },
            "status": {"conditions": [{"type": "Available", "status": "True"}]},
        });
        let target = Target::of(&service).unwrap();
        assert_eq!(target.service, ServiceRef { namespace: "wardle".into(), name: "api".into(), port: 443 });
        assert_eq!(target.ca_bundle, b"PEM");
        assert!(target.available && !target.insecure_skip_tls_verify);
        assert_eq!(target.server_name(), "api.wardle.svc");
        assert_eq!(target.discovery_path(), "/apis/wardle.example.com/v1alpha1");

        let local = json!({"metadata": {"name": "v1.apps"}, "spec": {"group": "apps", "version": "v1"}});
        assert!(Target::of(&local).is_none());
    }
}
