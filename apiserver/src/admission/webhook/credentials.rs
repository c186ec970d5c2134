//! What rtcd-apiserver presents to webhooks that ask who is calling: the
//! kubeconfig named by `kubeConfigFile` in the webhook plugins'
//! WebhookAdmissionConfiguration, whose `users` are named for the hosts
//! they are for (`host:port`, `host` for port 443, `*.domain`, `*`), as in
//! kube.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::kubeconfig;
pub use crate::kubeconfig::Identity;

/// The users of the kubeconfig, by the host name they are for.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    users: Vec<(String, Identity)>,
}

impl Credentials {
    /// From a WebhookAdmissionConfiguration (its `kubeConfigFile` resolved
    /// with `resolve`).
    pub fn from_configuration(
        configuration: &Value,
        resolve: impl Fn(&str) -> PathBuf,
    ) -> Result<Credentials, String> {
        match configuration["kubeConfigFile"].as_str().filter(|f| !f.is_empty()) {
            Some(file) => Credentials::from_kubeconfig(&resolve(file)),
            None => Ok(Credentials::default()),
        }
    }

    pub fn from_kubeconfig(path: &Path) -> Result<Credentials, String> {
        let config = kubeconfig::read(path)?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut users = Vec::new();
        for entry in config["users"].as_array().into_iter().flatten() {
            let name = entry["name"].as_str().unwrap_or_default().to_string();
            let identity = kubeconfig::user_identity(&entry["user"], &dir)
                .map_err(|why| format!("{}: user {name}: {why}", path.display()))?;
            users.push((name, identity));
        }
        Ok(Credentials { users })
    }

    /// The credentials for `host:port`: the most specific user name that
    /// covers it.
    pub fn for_host(&self, host: &str, port: u16) -> Option<&Identity> {
        let find = |name: &str| self.users.iter().find(|(n, _)| n == name).map(|(_, identity)| identity);
        if let Some(found) = find(&format!("{host}:{port}")) {
            return Some(found);
        }
        if port == 443
            && let Some(found) = find(host)
        {
            return Some(found);
        }
        let mut rest = host;
        while let Some((_, parent)) = rest.split_once('.') {
            if let Some(found) = find(&format!("*.{parent}")) {
                return Some(found);
            }
            rest = parent;
        }
        find("*")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_are_found_by_the_most_specific_name_and_read_from_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token"), "from-file\n").unwrap();
        let kubeconfig = dir.path().join("creds.kubeconfig");
        std::fs::write(
            &kubeconfig,
            "apiVersion: v1\nkind: Config\nusers:\n\
             - name: hooks.example.com:8443\n  user: {token: exact}\n\
             - name: hooks.example.com\n  user: {token: host}\n\
             - name: '*.webhooks.svc'\n  user: {tokenFile: token}\n\
             - name: '*'\n  user: {username: u, password: p}\n",
        )
        .unwrap();
        let creds = Credentials::from_kubeconfig(&kubeconfig).unwrap();
        let token = |host: &str, port: u16| creds.for_host(host, port).and_then(|i| i.token.clone());
        assert_eq!(token("hooks.example.com", 8443).as_deref(), Some("exact"));
        assert_eq!(token("hooks.example.com", 443).as_deref(), Some("host"));
        assert_eq!(token("injector.webhooks.svc", 443).as_deref(), Some("from-file"));
        assert_eq!(creds.for_host("elsewhere.org", 443).unwrap().basic, Some(("u".into(), "p".into())));
        std::fs::write(&kubeconfig, "users:\n- name: x\n  user: {client-certificate: absent.crt}\n").unwrap();
        assert!(
            Credentials::from_kubeconfig(&kubeconfig).unwrap_err().contains("client-certificate absent.crt")
        );
    }
}
