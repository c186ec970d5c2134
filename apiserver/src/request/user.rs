//! The authenticated user of a request (kube's `user.Info`).

use std::collections::BTreeMap;

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
    /// The user every request is served as until real authenticators come:
    /// a cluster administrator, as kube's loopback client is.
    pub fn admin() -> UserInfo {
        UserInfo {
            name: "system:admin".into(),
            uid: String::new(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            extra: BTreeMap::new(),
        }
    }

    /// The server's own controllers (namespace finalizer, bootstrap).
    pub fn apiserver() -> UserInfo {
        UserInfo {
            name: "system:apiserver".into(),
            uid: String::new(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            extra: BTreeMap::new(),
        }
    }
}
