//! Authorization asked of the main API server (kube's delegated
//! authorization, `--authorization-kubeconfig`): a SubjectAccessReview
//! per question, its answer kept 10 s (kube's
//! `--authorization-webhook-cache-authorized-ttl` and `-unauthorized-ttl`).
//! kube's always-allowed paths (`/healthz`, `/readyz`, `/livez` by default,
//! `--authorization-always-allow-paths`) are never asked about.
//!
//! Authorizers answer synchronously (as kube's do); the review is an HTTP
//! call, so the asking worker thread hands its other tasks over while it
//! waits (`block_in_place`), as a Go handler's goroutine would block.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::{Attributes, Authorizer, Decision, Rules, Target};
use crate::delegation::MainServer;
use crate::request::UserInfo;

const CACHE_TTL: Duration = Duration::from_secs(10);
const CACHE_ENTRIES: usize = 10_000;
const ACCESS_REVIEWS: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

#[derive(Debug)]
pub struct Delegated {
    server: MainServer,
    always_allowed: Vec<String>,
    answers: Mutex<HashMap<String, (Instant, Decision, String)>>,
}

impl Delegated {
    /// Asking `server`, never about `always_allowed` paths (a trailing `*`
    /// allows what starts with the rest).
    pub fn new(server: MainServer, always_allowed: Vec<String>) -> Delegated {
        Delegated { server, always_allowed, answers: Mutex::default() }
    }

    fn always_allows(&self, path: &str) -> bool {
        self.always_allowed.iter().any(|allowed| match allowed.strip_suffix('*') {
            Some(prefix) => path.starts_with(prefix),
            None => path == allowed,
        })
    }

    fn ask(&self, review: &Value) -> (Decision, String) {
        use tokio::runtime::{Handle, RuntimeFlavor};
        let answer = match Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| handle.block_on(self.server.post(ACCESS_REVIEWS, review)))
            }
            _ => Err("no runtime to ask the main server on".to_string()),
        };
        match answer {
            Ok(answer) => decision_in(&answer["status"]),
            Err(why) => {
                tracing::warn!(%why, "cannot ask the main server for a SubjectAccessReview");
                (Decision::NoOpinion, format!("the main server could not be asked: {why}"))
            }
        }
    }
}

impl Authorizer for Delegated {
    fn authorize(&self, attributes: &Attributes) -> (Decision, String) {
        if let Target::Path(path) = &attributes.target
            && self.always_allows(path)
        {
            return (Decision::Allow, String::new());
        }
        let review = review_of(attributes);
        let key = review.to_string();
        {
            let answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((at, decision, reason)) = answers.get(&key)
                && at.elapsed() < CACHE_TTL
            {
                return (*decision, reason.clone());
            }
        }
        let (decision, reason) = self.ask(&review);
        let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        if answers.len() >= CACHE_ENTRIES {
            answers.clear();
        }
        answers.insert(key, (Instant::now(), decision, reason.clone()));
        (decision, reason)
    }

    /// kube's webhook authorizer cannot list rules either.
    fn rules_for(&self, _: &UserInfo, _: &str) -> Rules {
        Rules {
            incomplete: true,
            errors: vec!["webhook authorizer does not support user rule resolution".to_string()],
            ..Rules::default()
        }
    }
}

/// The SubjectAccessReview of `attributes` (empty fields left out, as Go
/// leaves them).
fn review_of(attributes: &Attributes) -> Value {
    let mut spec = Map::new();
    let user = &attributes.user;
    let put = |map: &mut Map<String, Value>, key: &str, value: &str| {
        if !value.is_empty() {
            map.insert(key.to_string(), json!(value));
        }
    };
    put(&mut spec, "user", &user.name);
    put(&mut spec, "uid", &user.uid);
    if !user.groups.is_empty() {
        spec.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        spec.insert("extra".into(), json!(user.extra));
    }
    let mut target = Map::new();
    match &attributes.target {
        Target::Resource { group, version, resource, subresource, namespace, name } => {
            for (key, value) in [
                ("namespace", namespace),
                ("verb", &attributes.verb),
                ("group", group),
                ("version", version),
                ("resource", resource),
                ("subresource", subresource),
                ("name", name),
            ] {
                put(&mut target, key, value);
            }
            spec.insert("resourceAttributes".into(), Value::Object(target));
        }
        Target::Path(path) => {
            put(&mut target, "path", path);
            put(&mut target, "verb", &attributes.verb);
            spec.insert("nonResourceAttributes".into(), Value::Object(target));
        }
    }
    json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec})
}

/// The decision a SubjectAccessReview's status gives, and its reason.
fn decision_in(status: &Value) -> (Decision, String) {
    let reason = status["reason"].as_str().unwrap_or_default().to_string();
    if status["allowed"] == true {
        (Decision::Allow, reason)
    } else if status["denied"] == true {
        (Decision::Deny, reason)
    } else {
        (Decision::NoOpinion, reason)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn reviews_say_what_is_asked_as_kube_spells_it() {
        let user =
            Arc::new(UserInfo { name: "alice".into(), groups: vec!["dev".into()], ..UserInfo::default() });
        let attributes =
            Attributes::resource(user.clone(), "list", "wardle.example.com", "widgets", "ns", "");
        let review = review_of(&attributes);
        assert_eq!(review["spec"]["user"], "alice");
        assert_eq!(review["spec"]["groups"], json!(["dev"]));
        assert!(review["spec"].get("uid").is_none(), "left out when empty");
        let target = &review["spec"]["resourceAttributes"];
        assert_eq!(
            (&target["verb"], &target["resource"], &target["namespace"]),
            (&json!("list"), &json!("widgets"), &json!("ns"))
        );
        assert!(target.get("name").is_none());

        assert_eq!(
            decision_in(&json!({"allowed": true, "reason": "rbac"})),
            (Decision::Allow, "rbac".into())
        );
        assert_eq!(decision_in(&json!({"allowed": false, "denied": true})).0, Decision::Deny);
        assert_eq!(decision_in(&json!({"allowed": false})).0, Decision::NoOpinion);
    }
}
