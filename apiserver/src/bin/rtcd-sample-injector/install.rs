//! `install`: the injector's certificate (from a CA of its own, made once
//! and kept in the directory) and the manifests that put it in the
//! cluster, printed for `kubectl apply -f -`: its namespace, a Service and
//! the Endpoints where it runs on this machine, and the
//! MutatingWebhookConfiguration.

use std::path::Path;

use base64::Engine;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use serde_json::{Value, json};

pub const NAME: &str = "rtcd-sample-injector";
pub const WEBHOOK: &str = "rtcd-sample-injector.rtcd.dev";
pub const CONFIGURATION: &str = "rtcd-sample-injector-webhook-config";

/// The files `install` writes in its directory.
pub const CA: &str = "ca.crt";
pub const CERT: &str = "tls.crt";
pub const KEY: &str = "tls.key";

pub struct Options<'a> {
    pub dir: &'a Path,
    pub port: u16,
    pub namespace: &'a str,
    pub address: &'a str,
}

/// Writes the certificates (unless there already) and returns the
/// manifests as one YAML stream.
pub fn run(options: &Options<'_>) -> Result<String, String> {
    let ca_pem = certificates(options.dir, &format!("{NAME}.{}.svc", options.namespace))?;
    let manifests = manifests(options, &ca_pem);
    Ok(manifests.iter().map(|m| format!("---\n{m}\n")).collect())
}

/// The CA's PEM; the serving certificate for `host` beside it.
fn certificates(dir: &Path, host: &str) -> Result<String, String> {
    let error = |e: &dyn std::fmt::Display| format!("{}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(|e| error(&e))?;
    let (ca_path, cert_path, key_path) = (dir.join(CA), dir.join(CERT), dir.join(KEY));
    if ca_path.exists() && cert_path.exists() && key_path.exists() {
        return std::fs::read_to_string(&ca_path).map_err(|e| error(&e));
    }
    let ca_key = KeyPair::generate().map_err(|e| error(&e))?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(|e| error(&e))?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(rcgen::DnType::CommonName, "rtcd-sample-injector-ca");
    let ca_pem = ca.self_signed(&ca_key).map_err(|e| error(&e))?.pem();
    let issuer = Issuer::from_ca_cert_pem(&ca_pem, ca_key).map_err(|e| error(&e))?;
    let key = KeyPair::generate().map_err(|e| error(&e))?;
    let cert = CertificateParams::new(vec![host.to_string()]).map_err(|e| error(&e))?;
    let cert = cert.signed_by(&key, &issuer).map_err(|e| error(&e))?;
    std::fs::write(&ca_path, &ca_pem).map_err(|e| error(&e))?;
    std::fs::write(&cert_path, cert.pem()).map_err(|e| error(&e))?;
    std::fs::write(&key_path, key.serialize_pem()).map_err(|e| error(&e))?;
    Ok(ca_pem)
}

fn manifests(options: &Options<'_>, ca_pem: &str) -> Vec<Value> {
    let namespace = options.namespace;
    let labels = json!({"rtcd.dev/control-plane-component": "injector"});
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}}),
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": NAME, "namespace": namespace, "labels": labels},
            "spec": {"ports": [{"name": "webhook", "port": 443, "targetPort": options.port}]}}),
        json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": NAME, "namespace": namespace, "labels": labels},
            "subsets": [{"addresses": [{"ip": options.address}], "ports": [{"name": "webhook", "port": options.port}]}]}),
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": CONFIGURATION, "labels": labels},
        "webhooks": [{
            "name": WEBHOOK,
            "clientConfig": {
                "service": {"namespace": namespace, "name": NAME, "path": "/inject", "port": 443},
                "caBundle": base64::engine::general_purpose::STANDARD.encode(ca_pem),
            },
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "scope": "Namespaced"}],
            "objectSelector": {"matchExpressions": [{"key": "rtcd.dev/control-plane-component", "operator": "DoesNotExist"}]},
            "failurePolicy": "Ignore",
            "sideEffects": "None",
            "timeoutSeconds": 10,
            "admissionReviewVersions": ["v1", "v1beta1"],
            "reinvocationPolicy": "Never",
        }]}),
    ]
}
