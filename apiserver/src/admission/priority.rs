//! Priority (kube's `plugin/pkg/admission/priority`): a new pod's
//! `priorityClassName` is resolved to `spec.priority` and
//! `spec.preemptionPolicy` (the global default class when it names none,
//! else priority 0); a pod may not state other values itself. Updates keep
//! what creation set. Only one PriorityClass may be the global default.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::lookup::Lookup;
use super::{Attributes, Operation, Plugin};
use crate::errors::ApiError;

#[derive(Debug)]
pub struct Priority {
    classes: Lookup,
}

impl Priority {
    pub fn new(classes: Lookup) -> Self {
        Priority { classes }
    }

    /// The global default class; the lowest value if a race made several.
    /// Pods take it from the cache (as kube's informer); a class that would
    /// become the default is checked against storage.
    async fn default_class(&self, any_version: bool) -> Result<Option<Value>, ApiError> {
        let classes = self.classes.get()?.list(None, any_version).await?;
        let defaults = classes.into_iter().filter(|c| c["globalDefault"].as_bool() == Some(true));
        Ok(defaults.min_by_key(|c| c["value"].as_i64().unwrap_or_default()))
    }

    async fn admit_new_pod(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        let Some(pod) = attributes.object.as_ref() else { return Ok(()) };
        let named = pod["spec"]["priorityClassName"].as_str().filter(|n| !n.is_empty()).map(str::to_string);
        let (class_name, priority, policy) = match &named {
            None => match self.default_class(true).await? {
                Some(class) => (
                    class["metadata"]["name"].as_str().unwrap_or_default().to_string(),
                    class["value"].as_i64().unwrap_or_default(),
                    class["preemptionPolicy"].as_str().map(str::to_string),
                ),
                None => (String::new(), 0, Some("PreemptLowerPriority".to_string())),
            },
            Some(name) => {
                let Some(class) = self.classes.find(None, name).await? else {
                    return Err(attributes.forbidden(format!("no PriorityClass with name {name} was found")));
                };
                (
                    name.clone(),
                    class["value"].as_i64().unwrap_or_default(),
                    class["preemptionPolicy"].as_str().map(str::to_string),
                )
            }
        };
        if let Some(stated) = pod["spec"]["priority"].as_i64().filter(|p| *p != priority) {
            return Err(attributes.forbidden(format!(
                "the integer value of priority ({stated}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name"
            )));
        }
        if let (Some(stated), Some(policy)) = (pod["spec"]["preemptionPolicy"].as_str(), policy.as_deref())
            && stated != policy
        {
            return Err(attributes.forbidden(format!(
                "the string value of PreemptionPolicy ({stated}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
            )));
        }
        let Some(spec) = attributes.spec_mut() else {
            return Ok(());
        };
        if named.is_none() && !class_name.is_empty() {
            spec["priorityClassName"] = json!(class_name);
        }
        spec["priority"] = json!(priority);
        if let Some(policy) = policy {
            spec["preemptionPolicy"] = json!(policy);
        }
        Ok(())
    }
}

#[async_trait]
impl Plugin for Priority {
    fn name(&self) -> &'static str {
        "Priority"
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        if !attributes.is("", "pods") {
            return Ok(());
        }
        match attributes.operation {
            Operation::Create => self.admit_new_pod(attributes).await,
            Operation::Update => {
                // What creation set is kept when an update leaves it out.
                let old = attributes.old_object.as_ref().map(|o| o["spec"].clone()).unwrap_or_default();
                if let Some(spec) = attributes.spec_mut() {
                    for field in ["priority", "preemptionPolicy"] {
                        if spec[field].is_null() && !old[field].is_null() {
                            spec[field] = old[field].clone();
                        }
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        let writes_class = matches!(attributes.operation, Operation::Create | Operation::Update)
            && attributes.is("scheduling.k8s.io", "priorityclasses");
        let Some(class) = attributes.object.as_ref().filter(|_| writes_class) else { return Ok(()) };
        if class["globalDefault"].as_bool() != Some(true) {
            return Ok(());
        }
        let Some(existing) = self.default_class(false).await? else { return Ok(()) };
        let existing_name = existing["metadata"]["name"].as_str().unwrap_or_default();
        if attributes.operation == Operation::Create || existing_name != attributes.name {
            return Err(attributes.forbidden(format!(
                "PriorityClass {existing_name} is already marked as default. Only one default can exist"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::registry::tests::{Cluster, eventually};

    fn pod(name: &str, spec: Value) -> Value {
        let mut spec = spec;
        spec["automountServiceAccountToken"] = json!(false);
        spec["containers"] = json!([{"name": "c", "image": "i"}]);
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
    }

    fn class(name: &str, value: i64, global_default: bool) -> Value {
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": global_default})
    }

    #[tokio::test]
    async fn pods_get_their_class_priority_and_may_not_claim_another() {
        let c = Cluster::new().await;
        c.create("", "serviceaccounts", Some("default"), json!({"metadata": {"name": "default"}}))
            .await
            .unwrap();
        let created = c.create("", "pods", Some("default"), pod("plain", json!({}))).await.unwrap();
        assert_eq!(
            (created["spec"]["priority"].clone(), created["spec"]["preemptionPolicy"].clone()),
            (json!(0), json!("PreemptLowerPriority"))
        );
        assert!(created["spec"].get("priorityClassName").is_none());

        c.create("scheduling.k8s.io", "priorityclasses", None, class("high", 1000, false)).await.unwrap();
        let mut never = class("batch", 10, true);
        never["preemptionPolicy"] = json!("Never");
        c.create("scheduling.k8s.io", "priorityclasses", None, never).await.unwrap();
        let err = c
            .create("scheduling.k8s.io", "priorityclasses", None, class("second", 5, true))
            .await
            .unwrap_err();
        assert_eq!(
            (err.code(), err.to_string()),
            (403, "priorityclasses.scheduling.k8s.io \"second\" is forbidden: PriorityClass batch is already marked as default. Only one default can exist".to_string())
        );

        eventually("the cache to see the default class", || async {
            let classes = c.store("scheduling.k8s.io", "priorityclasses");
            let cached = crate::cacher::ListOptions {
                at: crate::cacher::ReadAt { resource_version: Some(0), exact: false },
                ..Default::default()
            };
            classes.list(&cached).await.is_ok_and(|l| l.items.len() == 2)
        })
        .await;
        let high = c
            .create("", "pods", Some("default"), pod("high", json!({"priorityClassName": "high"})))
            .await
            .unwrap();
        assert_eq!(high["spec"]["priority"], 1000);
        let defaulted = c.create("", "pods", Some("default"), pod("defaulted", json!({}))).await.unwrap();
        assert_eq!(
            (
                defaulted["spec"]["priorityClassName"].clone(),
                defaulted["spec"]["priority"].clone(),
                defaulted["spec"]["preemptionPolicy"].clone()
            ),
            (json!("batch"), json!(10), json!("Never"))
        );
        let err = c
            .create("", "pods", Some("default"), pod("ghost", json!({"priorityClassName": "ghost"})))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "pods \"ghost\" is forbidden: no PriorityClass with name ghost was found"
        );
        let err = c
            .create(
                "",
                "pods",
                Some("default"),
                pod("claims", json!({"priorityClassName": "high", "priority": 7})),
            )
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "pods \"claims\" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name"
        );
        let err = c
            .create(
                "",
                "pods",
                Some("default"),
                pod(
                    "eager",
                    json!({"priorityClassName": "batch", "preemptionPolicy": "PreemptLowerPriority"}),
                ),
            )
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "pods \"eager\" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name"
        );
    }
}
