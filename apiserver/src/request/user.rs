//! The authenticated user of a request (kube's `user.Info`).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// Who a request acts as: set by authentication (later impersonation), read
/// by authorization, admission and audit.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The user as authentication.k8s.io and audit.k8s.io write it
    /// (`username`, `uid`, `groups`, `extra`; empty ones left out).
    pub fn to_json(&self) -> serde_json::Value {
        let mut out = serde_json::Map::new();
        if !self.name.is_empty() {
            out.insert("username".into(), self.name.clone().into());
        }
        if !self.uid.is_empty() {
            out.insert("uid".into(), self.uid.clone().into());
        }
        if !self.groups.is_empty() {
            out.insert("groups".into(), serde_json::json!(self.groups));
        }
        if !self.extra.is_empty() {
            out.insert("extra".into(), serde_json::json!(self.extra));
        }
        serde_json::Value::Object(out)
    }

    /// The user every request is served as until real authenticators come:
    /// a cluster administrator, as kube's loopback client is. Shared: a
    /// request carries its user by reference count, not by copy.
    pub fn admin() -> Arc<UserInfo> {
        static ADMIN: OnceLock<Arc<UserInfo>> = OnceLock::new();
        ADMIN.get_or_init(|| Arc::new(UserInfo::master("system:admin"))).clone()
    }

    /// The server's own controllers (namespace finalizer, bootstrap).
    pub fn apiserver() -> Arc<UserInfo> {
        static APISERVER: OnceLock<Arc<UserInfo>> = OnceLock::new();
        APISERVER.get_or_init(|| Arc::new(UserInfo::master("system:apiserver"))).clone()
    }

    /// A member of `system:masters`, which every authorizer allows.
    fn master(name: &str) -> UserInfo {
        UserInfo {
            name: name.into(),
            uid: String::new(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            extra: BTreeMap::new(),
        }
    }
}
