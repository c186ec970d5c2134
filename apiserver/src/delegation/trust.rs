//! The main server's `kube-system/extension-apiserver-authentication`
//! ConfigMap read into this server's authentication flags, as kube's
//! delegating authentication reads it: what a flag already says stays;
//! the rest (the client CA, the front-proxy CA, its allowed names and
//! headers) comes from the ConfigMap. The CAs are written under
//! `--cert-dir` and used as if given as files.

use std::path::Path;

use serde_json::Value;

use super::MainServer;
use crate::options::Options;

const CONFIG_MAP: &str = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";

/// Fills the authentication flags left unset from the main server's
/// ConfigMap, writing its CAs into `dir`.
pub async fn look_up(server: &MainServer, options: &mut Options, dir: &Path) -> Result<(), String> {
    let config_map = server.get(CONFIG_MAP).await?;
    apply(&config_map["data"], options, dir)
}

fn apply(data: &Value, options: &mut Options, dir: &Path) -> Result<(), String> {
    let write = |file: &str, pem: &str| -> Result<std::path::PathBuf, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = dir.join(file);
        std::fs::write(&path, pem).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(path)
    };
    if options.serving.client_ca_file.is_none()
        && let Some(pem) = data["client-ca-file"].as_str()
    {
        options.serving.client_ca_file = Some(write("delegated-client-ca.crt", pem)?);
    }
    let authn = &mut options.authentication;
    if authn.requestheader_client_ca_file.is_some() {
        return Ok(());
    }
    let Some(pem) = data["requestheader-client-ca-file"].as_str() else { return Ok(()) };
    authn.requestheader_client_ca_file = Some(write("delegated-requestheader-client-ca.crt", pem)?);
    // Each a JSON list in a string, as kube publishes them.
    let list = |key: &str| -> Vec<String> {
        data[key].as_str().and_then(|text| serde_json::from_str(text).ok()).unwrap_or_default()
    };
    let fill = |flag: &mut Vec<String>, key: &str| {
        if flag.is_empty() {
            *flag = list(key);
        }
    };
    fill(&mut authn.requestheader_allowed_names, "requestheader-allowed-names");
    fill(&mut authn.requestheader_username_headers, "requestheader-username-headers");
    fill(&mut authn.requestheader_uid_headers, "requestheader-uid-headers");
    fill(&mut authn.requestheader_group_headers, "requestheader-group-headers");
    fill(&mut authn.requestheader_extra_headers_prefix, "requestheader-extra-headers-prefix");
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::json;

    use super::*;

    #[test]
    fn unset_flags_are_filled_from_the_config_map() {
        let dir = tempfile::tempdir().unwrap();
        let data = json!({
            "client-ca-file": "CLIENT CA",
            "requestheader-client-ca-file": "PROXY CA",
            "requestheader-allowed-names": "[\"front-proxy-client\"]",
            "requestheader-username-headers": "[\"X-Remote-User\"]",
            "requestheader-group-headers": "[\"X-Remote-Group\"]",
            "requestheader-extra-headers-prefix": "[\"X-Remote-Extra-\"]",
        });
        let mut options = Options::parse_from(["rtcd-apiserver", "--requestheader-group-headers=X-Mine"]);
        apply(&data, &mut options, dir.path()).unwrap();
        let client_ca = options.serving.client_ca_file.unwrap();
        assert_eq!(std::fs::read_to_string(client_ca).unwrap(), "CLIENT CA");
        let authn = &options.authentication;
        let proxy_ca = authn.requestheader_client_ca_file.clone().unwrap();
        assert_eq!(std::fs::read_to_string(proxy_ca).unwrap(), "PROXY CA");
        assert_eq!(authn.requestheader_allowed_names, ["front-proxy-client"]);
        assert_eq!(authn.requestheader_username_headers, ["X-Remote-User"]);
        assert_eq!(authn.requestheader_group_headers, ["X-Mine"], "a flag given stays");
        assert!(authn.requestheader_uid_headers.is_empty(), "not published");
    }
}
