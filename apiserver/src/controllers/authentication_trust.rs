//! kube's cluster authentication trust controller: publishes how this
//! server authenticates clients in `kube-system/extension-apiserver-authentication`,
//! the ConfigMap extension API servers read to trust the same client CA
//! and front proxies (`client-ca-file`; with a front-proxy CA,
//! `requestheader-client-ca-file` and the header lists as JSON arrays).
//! What is there already is kept and added to, as kube does, so servers
//! with different CAs can share the cluster.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::cacher::ReadAt;
use crate::errors::ApiError;
use crate::registry::{Resources, Store, WriteContext};

const NAMESPACE: &str = "kube-system";
const NAME: &str = "extension-apiserver-authentication";
/// kube looks every minute, in case something else changed it.
const PERIOD: Duration = Duration::from_secs(60);

/// What this server says about its client authentication.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// `--client-ca-file`'s PEM.
    pub client_ca: Option<String>,
    /// `--requestheader-client-ca-file`'s PEM, and the header lists.
    pub request_header_ca: Option<String>,
    pub allowed_names: Vec<String>,
    pub username_headers: Vec<String>,
    pub uid_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_prefixes: Vec<String>,
}

pub async fn run(resources: Resources, trust: Trust) {
    let Ok(configmaps) = resources.store("", "configmaps") else { return };
    let mut period = tokio::time::interval(PERIOD);
    loop {
        period.tick().await;
        if let Err(e) = publish(&configmaps, &trust).await {
            tracing::debug!(error = %e, "publishing {NAMESPACE}/{NAME}; retrying");
            // The namespace may not be made yet: look again soon.
            period.reset_after(Duration::from_secs(2));
        }
    }
}

async fn publish(configmaps: &Store, trust: &Trust) -> Result<(), ApiError> {
    let ctx = WriteContext::server();
    let current = match configmaps.get(Some(NAMESPACE), NAME, &ReadAt::default()).await {
        Ok(current) => Some(current),
        Err(ApiError::NotFound { .. }) => None,
        Err(e) => return Err(e),
    };
    let existing: BTreeMap<String, String> =
        current.as_ref().and_then(|c| serde_json::from_value(c["data"].clone()).ok()).unwrap_or_default();
    let data = combined(&existing, trust);
    match current {
        Some(current) if current["data"] == json!(data) => Ok(()),
        Some(mut current) => {
            current["data"] = json!(data);
            match configmaps.update(&ctx, Some(NAMESPACE), NAME, None, current).await {
                Ok(_) | Err(ApiError::Conflict { .. }) => Ok(()),
                Err(e) => Err(e),
            }
        }
        None => {
            let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": NAME, "namespace": NAMESPACE}, "data": data});
            match configmaps.create(&ctx, Some(NAMESPACE), object).await {
                Ok(_) | Err(ApiError::AlreadyExists { .. }) => Ok(()),
                Err(e) => Err(e),
            }
        }
    }
}

/// What is published: `existing`'s entries with this server's added.
fn combined(existing: &BTreeMap<String, String>, trust: &Trust) -> BTreeMap<String, String> {
    let mut data = BTreeMap::new();
    let client_ca = merge_pem(existing.get("client-ca-file"), trust.client_ca.as_deref());
    if !client_ca.is_empty() {
        data.insert("client-ca-file".to_string(), client_ca);
    }
    let proxy_ca =
        merge_pem(existing.get("requestheader-client-ca-file"), trust.request_header_ca.as_deref());
    if proxy_ca.is_empty() {
        return data;
    }
    data.insert("requestheader-client-ca-file".to_string(), proxy_ca);
    let lists = [
        ("requestheader-username-headers", &trust.username_headers),
        ("requestheader-uid-headers", &trust.uid_headers),
        ("requestheader-group-headers", &trust.group_headers),
        ("requestheader-extra-headers-prefix", &trust.extra_prefixes),
        ("requestheader-allowed-names", &trust.allowed_names),
    ];
    for (key, ours) in lists {
        let mut merged: Vec<String> =
            existing.get(key).and_then(|text| serde_json::from_str(text).ok()).unwrap_or_default();
        for item in ours {
            if !merged.contains(item) {
                merged.push(item.clone());
            }
        }
        data.insert(key.to_string(), Value::from(merged).to_string());
    }
    data
}

/// The certificates of both bundles, each once, in order.
fn merge_pem(existing: Option<&String>, ours: Option<&str>) -> String {
    let mut blocks: Vec<String> = Vec::new();
    for bundle in existing.map(String::as_str).into_iter().chain(ours) {
        for block in pem_blocks(bundle) {
            if !blocks.contains(&block) {
                blocks.push(block);
            }
        }
    }
    blocks.concat()
}

/// The `CERTIFICATE` blocks of a PEM bundle, each ending in a newline.
fn pem_blocks(bundle: &str) -> Vec<String> {
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let mut blocks = Vec::new();
    let mut rest = bundle;
    while let Some(start) = rest.find(BEGIN) {
        let Some(end) = rest[start..].find(END) else { break };
        let block = &rest[start..start + end + END.len()];
        blocks.push(format!("{block}\n"));
        rest = &rest[start + end + END.len()..];
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    const B: &str = "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n";

    #[test]
    fn kubes_keys_are_published_and_what_is_there_is_kept() {
        let trust = Trust {
            client_ca: Some(A.into()),
            request_header_ca: Some(B.into()),
            allowed_names: vec!["front-proxy-client".into()],
            username_headers: vec!["X-Remote-User".into()],
            uid_headers: Vec::new(),
            group_headers: vec!["X-Remote-Group".into()],
            extra_prefixes: vec!["X-Remote-Extra-".into()],
        };
        let data = combined(&BTreeMap::new(), &trust);
        assert_eq!(data["client-ca-file"], A);
        assert_eq!(data["requestheader-client-ca-file"], B);
        assert_eq!(data["requestheader-allowed-names"], r#"["front-proxy-client"]"#);
        assert_eq!(data["requestheader-username-headers"], r#"["X-Remote-User"]"#);
        assert_eq!(data["requestheader-uid-headers"], "[]");
        // Another server's CA and names stay, ours are added once.
        let other = BTreeMap::from([
            ("client-ca-file".to_string(), B.to_string()),
            ("requestheader-client-ca-file".to_string(), B.to_string()),
            ("requestheader-allowed-names".to_string(), r#"["aggregator"]"#.to_string()),
        ]);
        let data = combined(&other, &trust);
        assert_eq!(data["client-ca-file"], format!("{B}{A}"));
        assert_eq!(data["requestheader-client-ca-file"], B);
        assert_eq!(data["requestheader-allowed-names"], r#"["aggregator","front-proxy-client"]"#);
        // Without a front-proxy CA only the client CA is published.
        let users_only = Trust { client_ca: Some(A.into()), ..Trust::default() };
        assert_eq!(combined(&BTreeMap::new(), &users_only).keys().collect::<Vec<_>>(), ["client-ca-file"]);
    }
}
