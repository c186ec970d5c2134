//! The audit policy (`--audit-policy-file`, audit.k8s.io/v1 `Policy`):
//! which requests are recorded and how much of each. Rules are tried in
//! order and the first that matches decides; a request no rule matches is
//! not recorded.

use serde::Deserialize;

use crate::request::{RequestInfo, UserInfo};

/// How much of a request is recorded, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
pub enum Level {
    None,
    Metadata,
    Request,
    RequestResponse,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "None",
            Level::Metadata => "Metadata",
            Level::Request => "Request",
            Level::RequestResponse => "RequestResponse",
        }
    }
}

/// When in a request's life an event is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Stage {
    RequestReceived,
    ResponseStarted,
    ResponseComplete,
    Panic,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::RequestReceived => "RequestReceived",
            Stage::ResponseStarted => "ResponseStarted",
            Stage::ResponseComplete => "ResponseComplete",
            Stage::Panic => "Panic",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Policy {
    api_version: String,
    kind: String,
    #[serde(default)]
    metadata: Option<serde_json::Value>,
    #[serde(default)]
    rules: Vec<Rule>,
    #[serde(default)]
    omit_stages: Vec<Stage>,
    #[serde(default)]
    omit_managed_fields: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Rule {
    level: Level,
    #[serde(default)]
    users: Vec<String>,
    #[serde(default)]
    user_groups: Vec<String>,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    resources: Vec<GroupResources>,
    #[serde(default)]
    namespaces: Vec<String>,
    #[serde(default, rename = "nonResourceURLs")]
    non_resource_urls: Vec<String>,
    #[serde(default)]
    omit_stages: Vec<Stage>,
    #[serde(default)]
    omit_managed_fields: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GroupResources {
    #[serde(default)]
    group: String,
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    resource_names: Vec<String>,
}

/// What the policy decides for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub level: Level,
    pub omit_stages: Vec<Stage>,
    pub omit_managed_fields: bool,
}

impl Decision {
    pub fn records(&self, stage: Stage) -> bool {
        self.level != Level::None && !self.omit_stages.contains(&stage)
    }
}

impl Policy {
    /// Reads a policy (YAML or JSON), refusing anything but audit.k8s.io/v1.
    pub fn parse(text: &str) -> Result<Policy, String> {
        let policy: Policy = serde_norway::from_str(text).map_err(|e| e.to_string())?;
        if policy.api_version != "audit.k8s.io/v1" || policy.kind != "Policy" {
            return Err(format!(
                "expected apiVersion audit.k8s.io/v1 and kind Policy, got {} {}",
                policy.api_version, policy.kind
            ));
        }
        let _ = &policy.metadata;
        Ok(policy)
    }

    /// The first matching rule's level (None when no rule matches); `user`
    /// is the authenticated user (None when authentication failed).
    pub fn decide(&self, user: Option<&UserInfo>, info: &RequestInfo) -> Decision {
        let Some(rule) = self.rules.iter().find(|rule| rule.matches(user, info)) else {
            return Decision { level: Level::None, omit_stages: Vec::new(), omit_managed_fields: false };
        };
        let mut omit_stages = self.omit_stages.clone();
        omit_stages.extend(rule.omit_stages.iter().copied());
        Decision {
            level: rule.level,
            omit_stages,
            omit_managed_fields: rule.omit_managed_fields.unwrap_or(self.omit_managed_fields),
        }
    }
}

impl Rule {
    fn matches(&self, user: Option<&UserInfo>, info: &RequestInfo) -> bool {
        let name = user.map(|u| u.name.as_str()).unwrap_or_default();
        if !self.users.is_empty() && !self.users.iter().any(|u| u == name) {
            return false;
        }
        let groups = user.map(|u| u.groups.as_slice()).unwrap_or_default();
        if !self.user_groups.is_empty() && !groups.iter().any(|g| self.user_groups.contains(g)) {
            return false;
        }
        if !self.verbs.is_empty() && !self.verbs.iter().any(|v| v == info.verb()) {
            return false;
        }
        if !self.resources.is_empty() || !self.namespaces.is_empty() {
            return self.matches_resource(info);
        }
        if !self.non_resource_urls.is_empty() {
            return match info {
                RequestInfo::NonResource { path, .. } => self.non_resource_urls.iter().any(|url| {
                    url == path || url.strip_suffix('*').is_some_and(|prefix| path.starts_with(prefix))
                }),
                RequestInfo::Resource(_) => false,
            };
        }
        true
    }

    fn matches_resource(&self, info: &RequestInfo) -> bool {
        let RequestInfo::Resource(r) = info else { return false };
        if !self.namespaces.is_empty() && !self.namespaces.contains(&r.namespace.clone().unwrap_or_default())
        {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        let sub = r.subresource.as_deref().unwrap_or_default();
        let combined = if sub.is_empty() { r.resource.clone() } else { format!("{}/{sub}", r.resource) };
        let name = r.name.as_deref().unwrap_or_default();
        self.resources.iter().filter(|gr| gr.group == r.group || gr.group == "*").any(|gr| {
            if gr.resources.is_empty() {
                return true;
            }
            if !gr.resource_names.is_empty() && !gr.resource_names.iter().any(|n| n == name) {
                return false;
            }
            gr.resources.iter().any(|res| {
                *res == combined
                    || res == "*"
                    || (!sub.is_empty() && res.strip_prefix("*/") == Some(sub))
                    || res.strip_suffix("/*") == Some(r.resource.as_str())
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use axum::http::Method;

    use super::*;

    const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  users: ["system:kube-proxy"]
  verbs: ["watch"]
- level: RequestResponse
  resources: [{group: "", resources: ["pods/*", "configmaps"]}]
  namespaces: ["dev"]
- level: Request
  resources: [{group: "apps", resources: ["*/scale"]}, {group: "*", resources: ["secrets"], resourceNames: ["s"]}]
- level: Metadata
  nonResourceURLs: ["/healthz*", "/version"]
- level: None
  nonResourceURLs: ["/api*"]
- level: Metadata
  userGroups: ["dev"]
"#;

    fn decide(user: &str, groups: &[&str], method: Method, path: &str) -> Level {
        let policy = Policy::parse(POLICY).unwrap();
        let user = UserInfo {
            name: user.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..UserInfo::default()
        };
        let watch = path.contains("watch=");
        let path = path.split('?').next().unwrap();
        policy.decide(Some(&user), &RequestInfo::parse(&method, path, watch)).level
    }

    #[test]
    fn the_first_matching_rule_decides() {
        assert_eq!(decide("system:kube-proxy", &[], Method::GET, "/api/v1/endpoints?watch=1"), Level::None);
        assert_eq!(
            decide("jane", &[], Method::GET, "/api/v1/namespaces/dev/configmaps/a"),
            Level::RequestResponse
        );
        assert_eq!(
            decide("jane", &[], Method::GET, "/api/v1/namespaces/dev/pods/p/log"),
            Level::RequestResponse
        );
        // `pods/*` is the pods and every subresource of theirs.
        assert_eq!(decide("jane", &[], Method::GET, "/api/v1/namespaces/dev/pods/p"), Level::RequestResponse);
        assert_eq!(decide("jane", &[], Method::GET, "/api/v1/namespaces/dev/services/s"), Level::None);
        assert_eq!(decide("jane", &[], Method::GET, "/api/v1/namespaces/prod/configmaps/a"), Level::None);
        assert_eq!(
            decide("jane", &[], Method::PUT, "/apis/apps/v1/namespaces/x/deployments/d/scale"),
            Level::Request
        );
        assert_eq!(decide("jane", &[], Method::GET, "/api/v1/namespaces/x/secrets/s"), Level::Request);
        assert_eq!(decide("jane", &[], Method::GET, "/api/v1/namespaces/x/secrets/t"), Level::None);
        assert_eq!(decide("jane", &[], Method::GET, "/healthz/etcd"), Level::Metadata);
        assert_eq!(decide("jane", &["dev"], Method::GET, "/api"), Level::None);
        assert_eq!(decide("jane", &["dev"], Method::GET, "/apis/apps/v1/deployments"), Level::Metadata);
        assert_eq!(decide("jane", &[], Method::GET, "/apis/apps/v1/deployments"), Level::None);
    }

    #[test]
    fn stages_omitted_by_the_policy_and_the_rule_are_not_recorded() {
        let policy = Policy::parse(POLICY).unwrap();
        let info = RequestInfo::parse(&Method::GET, "/version", false);
        let decision = policy.decide(None, &info);
        assert_eq!(decision.level, Level::Metadata);
        assert!(!decision.records(Stage::RequestReceived));
        assert!(decision.records(Stage::ResponseComplete));
    }

    #[test]
    fn malformed_policies_are_refused() {
        assert!(Policy::parse("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n").is_err());
        assert!(Policy::parse("apiVersion: v1\nkind: Policy\n").is_err());
        assert!(
            Policy::parse("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  userz: []\n")
                .is_err()
        );
    }
}
