//! kubeconfig files as client-go reads them: users' credentials, and the
//! cluster and user of the current context.

use std::path::Path;

use base64::Engine;
use serde_json::Value;

/// One user's credentials.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Identity {
    pub token: Option<String>,
    pub basic: Option<(String, String)>,
    /// PEM client certificate and key, for TLS client authentication.
    pub certificate: Vec<u8>,
    pub key: Vec<u8>,
}

impl Identity {
    /// The Authorization header of a token or basic-auth identity.
    pub fn authorization(&self) -> Option<String> {
        if let Some(token) = &self.token {
            return Some(format!("Bearer {token}"));
        }
        let (user, password) = self.basic.as_ref()?;
        Some(format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
        ))
    }

    /// The client certificate, when it has one.
    pub fn certificate(&self) -> Option<crate::tls_client::ClientCertificate> {
        (!self.certificate.is_empty()).then(|| crate::tls_client::ClientCertificate {
            certificate: self.certificate.clone(),
            key: self.key.clone(),
        })
    }
}

/// A kubeconfig (YAML or JSON).
pub fn read(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// A cluster entry: where its server is and whom it trusts.
#[derive(Debug, Clone, Default)]
pub struct Cluster {
    /// `https://host:port`.
    pub server: String,
    /// PEM roots; empty means the system's.
    pub certificate_authority: Vec<u8>,
    pub insecure_skip_tls_verify: bool,
}

/// The cluster and user of the kubeconfig's current context (the only
/// ones when it names none).
pub fn current(path: &Path) -> Result<(Cluster, Identity), String> {
    let config = read(path)?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let named = |list: &str, name: &str| -> Option<Value> {
        let entries = config[list].as_array()?;
        match name {
            "" if entries.len() == 1 => Some(entries[0].clone()),
            _ => entries.iter().find(|e| e["name"] == name).cloned(),
        }
    };
    let current = config["current-context"].as_str().unwrap_or_default();
    let context = named("contexts", current).map(|c| c["context"].clone()).unwrap_or(Value::Null);
    let missing = |what: &str| format!("{}: no {what} for the current context", path.display());
    let cluster = named("clusters", context["cluster"].as_str().unwrap_or_default())
        .ok_or_else(|| missing("cluster"))?;
    let user = named("users", context["user"].as_str().unwrap_or_default()).map(|u| u["user"].clone());
    let identity = match user {
        Some(user) => user_identity(&user, &dir).map_err(|why| format!("{}: {why}", path.display()))?,
        None => Identity::default(),
    };
    let cluster = &cluster["cluster"];
    let certificate_authority =
        match (cluster["certificate-authority-data"].as_str(), cluster["certificate-authority"].as_str()) {
            (Some(data), _) => base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|e| format!("{}: certificate-authority-data: {e}", path.display()))?,
            (None, Some(file)) => std::fs::read(dir.join(file))
                .map_err(|e| format!("{}: certificate-authority {file}: {e}", path.display()))?,
            (None, None) => Vec::new(),
        };
    let server = cluster["server"].as_str().unwrap_or_default().trim_end_matches('/').to_string();
    if server.is_empty() {
        return Err(missing("server"));
    }
    let insecure_skip_tls_verify = cluster["insecure-skip-tls-verify"] == Value::Bool(true);
    Ok((Cluster { server, certificate_authority, insecure_skip_tls_verify }, identity))
}

/// A kubeconfig `user`: token (inline or file), basic auth, client
/// certificate and key (inline data or files beside the kubeconfig).
pub fn user_identity(user: &Value, dir: &Path) -> Result<Identity, String> {
    let file = |key: &str| -> Result<Option<Vec<u8>>, String> {
        match user[key].as_str() {
            Some(path) => std::fs::read(dir.join(path)).map(Some).map_err(|e| format!("{key} {path}: {e}")),
            None => Ok(None),
        }
    };
    let data = |key: &str| -> Result<Option<Vec<u8>>, String> {
        match user[key].as_str() {
            Some(encoded) => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map(Some)
                .map_err(|e| format!("{key}: {e}")),
            None => Ok(None),
        }
    };
    let token = match (user["token"].as_str(), file("tokenFile")?) {
        (Some(token), _) => Some(token.to_string()),
        (None, Some(bytes)) => Some(String::from_utf8_lossy(&bytes).trim().to_string()),
        (None, None) => None,
    };
    let basic = match (user["username"].as_str(), user["password"].as_str()) {
        (Some(name), Some(password)) => Some((name.to_string(), password.to_string())),
        _ => None,
    };
    let certificate = data("client-certificate-data")?.or(file("client-certificate")?).unwrap_or_default();
    let key = data("client-key-data")?.or(file("client-key")?).unwrap_or_default();
    if certificate.is_empty() != key.is_empty() {
        return Err("a client certificate needs its key, and a key its certificate".into());
    }
    Ok(Identity { token, basic, certificate, key })
}
