//! The generic store and the kinds' strategies against in-memory storage,
//! served as `kinds::serve` serves them (every built-in kind,
//! NamespaceLifecycle admission): each test checks what a kube client would
//! see — objects, status codes and messages — and what storage holds.

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::{Value, json};

use super::kinds::{self, Kind};
use super::{DeleteOptions, Deleted, Resource, Resources, Store, Strategy, WriteContext};
use crate::cacher::{Delivery, Filter, ReadAt, WatchSpec, WatchStart};
use crate::errors::ApiError;
use crate::patch::PatchType;
use crate::request::UserInfo;
use crate::runtime::FieldValidation;
use crate::storage::{
    ListPage, MemoryStorage, Object, Preconditions, Storage, StorageError, StorageWatch, Swap,
};

const CONFLICT: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// Every built-in kind served over one storage, with a `default` namespace.
pub(crate) struct Cluster {
    memory: MemoryStorage,
    pub(crate) resources: Resources,
}

impl Cluster {
    pub(crate) async fn new() -> Cluster {
        let memory = MemoryStorage::new();
        Cluster::on(memory.clone(), Arc::new(memory)).await
    }

    /// Served over `storage`, which reads and writes `memory`.
    async fn on(memory: MemoryStorage, storage: Arc<dyn Storage>) -> Cluster {
        let ips = kinds::service::IpRange::parse("10.0.0.0/24").unwrap();
        let resources = kinds::serve(storage, "/registry", ips).unwrap();
        let cluster = Cluster { memory, resources };
        eventually("the watch caches to load", || async { cluster.resources.caches_ready() }).await;
        cluster.create("", "namespaces", None, json!({"metadata": {"name": "default"}})).await.unwrap();
        cluster
    }

    pub(crate) fn store(&self, group: &str, plural: &str) -> Store {
        self.resources.store(group, plural).unwrap()
    }

    /// Decodes `body` as the handlers do, then creates it.
    pub(crate) async fn create(
        &self,
        group: &str,
        plural: &str,
        namespace: Option<&str>,
        body: Value,
    ) -> Result<Value, ApiError> {
        let store = self.store(group, plural);
        let (object, _) = store.decode(body, FieldValidation::Strict)?;
        store.create(&ctx(), namespace, object).await
    }

    async fn update(
        &self,
        group: &str,
        plural: &str,
        namespace: Option<&str>,
        subresource: Option<&str>,
        body: Value,
    ) -> Result<Value, ApiError> {
        let store = self.store(group, plural);
        let (object, _) = store.decode(body, FieldValidation::Strict)?;
        let name = object["metadata"]["name"].as_str().unwrap_or_default().to_string();
        store.update(&ctx(), namespace, &name, subresource, object).await
    }

    pub(crate) async fn get(
        &self,
        group: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        self.store(group, plural).get(namespace, name, &ReadAt::default()).await
    }

    pub(crate) async fn delete(
        &self,
        group: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Deleted, ApiError> {
        self.store(group, plural).delete(&ctx(), namespace, name, &DeleteOptions::default()).await
    }

    /// The keys under `/registry/ipaddresses/`, and what each holds.
    pub(crate) async fn ip_addresses(&self) -> Vec<(String, Value)> {
        let page = self.memory.list("/registry/ipaddresses/", 0, 0, None).await.unwrap();
        page.items
            .iter()
            .map(|(key, o)| {
                (String::from_utf8_lossy(key).into_owned(), serde_json::from_slice(&o.value).unwrap())
            })
            .collect()
    }
}

pub(crate) fn ctx() -> WriteContext {
    WriteContext::new(UserInfo::admin(), false)
}

fn dry_run() -> WriteContext {
    WriteContext::new(UserInfo::admin(), true)
}

pub(crate) async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let give_up = Instant::now() + Duration::from_secs(10);
    while !check().await {
        assert!(Instant::now() < give_up, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(crate) fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
}

pub(crate) fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
            },
        },
    })
}

pub(crate) fn service(name: &str, cluster_ip: Option<&str>) -> Value {
    let mut svc = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"ports": [{"port": 80}], "selector": {"app": name}},
    });
    if let Some(ip) = cluster_ip {
        svc["spec"]["clusterIP"] = json!(ip);
    }
    svc
}

fn rv(object: &Value) -> i64 {
    object["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap()
}

#[tokio::test]
async fn create_fills_server_metadata_and_generates_names() {
    let c = Cluster::new().await;
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "cfg-", "uid": "mine", "resourceVersion": "77"}});
    let cm = c.create("", "configmaps", Some("default"), body).await.unwrap();
    let name = cm["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("cfg-") && name.len() == 9, "{name}");
    assert_eq!(cm["metadata"]["namespace"], "default");
    let uid = cm["metadata"]["uid"].as_str().unwrap();
    assert!(uid != "mine" && uuid::Uuid::parse_str(uid).is_ok(), "{uid}");
    let created = cm["metadata"]["creationTimestamp"].as_str().unwrap();
    assert!(created.parse::<jiff::Timestamp>().is_ok() && created.ends_with('Z'), "{created}");
    // The resourceVersion is the revision of the write, and reads say so.
    assert_eq!(rv(&cm), c.memory.revision());
    assert_eq!(c.get("", "configmaps", Some("default"), name).await.unwrap(), cm);
    // No spec, no generation; a Deployment starts at generation 1.
    assert!(cm["metadata"].get("generation").is_none());
    let deploy = c.create("apps", "deployments", Some("default"), deployment("web")).await.unwrap();
    assert_eq!(deploy["metadata"]["generation"], 1);
    assert_eq!(deploy["spec"]["replicas"], 1);
}

#[tokio::test]
async fn creating_an_existing_name_is_already_exists() {
    let c = Cluster::new().await;
    c.create("", "configmaps", Some("default"), configmap("a")).await.unwrap();
    let revision = c.memory.revision();
    let err = c.create("", "configmaps", Some("default"), configmap("a")).await.unwrap_err();
    assert_eq!((err.code(), err.to_string()), (409, "configmaps \"a\" already exists".to_string()));
    c.create("apps", "deployments", Some("default"), deployment("web")).await.unwrap();
    let err = c.create("apps", "deployments", Some("default"), deployment("web")).await.unwrap_err();
    assert_eq!(err.to_string(), "deployments.apps \"web\" already exists");
    assert_eq!(c.memory.revision(), revision + 1);
}

#[tokio::test]
async fn new_objects_need_a_live_namespace() {
    let c = Cluster::new().await;
    let err = c.create("", "configmaps", Some("nope"), configmap("a")).await.unwrap_err();
    assert_eq!((err.code(), err.to_string()), (404, "namespaces \"nope\" not found".to_string()));
    // A namespace being deleted (no controller runs here to finish it).
    c.create("", "namespaces", None, json!({"metadata": {"name": "doomed"}})).await.unwrap();
    c.create("", "configmaps", Some("doomed"), configmap("before")).await.unwrap();
    assert!(matches!(c.delete("", "namespaces", None, "doomed").await, Ok(Deleted::Pending(_))));
    let err = c.create("", "configmaps", Some("doomed"), configmap("after")).await.unwrap_err();
    assert_eq!(
        (err.code(), err.to_string()),
        (
            403,
            "configmaps \"after\" is forbidden: unable to create new content in namespace doomed because it is being terminated"
                .to_string()
        )
    );
    assert_eq!(
        err.status()["details"],
        json!({"name": "after", "kind": "configmaps", "causes": [{
            "reason": "NamespaceTerminating", "field": "metadata.namespace", "message": "namespace doomed is being terminated",
        }]})
    );
    // What was there may still change.
    let mut before = c.get("", "configmaps", Some("doomed"), "before").await.unwrap();
    before["data"]["k"] = json!("changed");
    assert!(c.update("", "configmaps", Some("doomed"), None, before).await.is_ok());
}

#[tokio::test]
async fn the_system_namespaces_cannot_be_deleted_even_in_a_dry_run() {
    let c = Cluster::new().await;
    for name in ["kube-system", "kube-public"] {
        c.create("", "namespaces", None, json!({"metadata": {"name": name}})).await.unwrap();
    }
    let revision = c.memory.revision();
    let namespaces = c.store("", "namespaces");
    for name in ["default", "kube-system", "kube-public"] {
        for ctx in [dry_run(), WriteContext::new(UserInfo::apiserver(), false)] {
            let err = namespaces.delete(&ctx, None, name, &DeleteOptions::default()).await.unwrap_err();
            assert_eq!(
                (err.code(), err.to_string()),
                (403, format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted"))
            );
        }
    }
    assert_eq!(c.memory.revision(), revision, "nothing changed");
    // Their contents may go.
    c.create("", "configmaps", Some("kube-system"), configmap("a")).await.unwrap();
    assert!(c.delete("", "configmaps", Some("kube-system"), "a").await.is_ok());
}

#[tokio::test]
async fn stale_updates_conflict_and_generation_follows_the_spec() {
    let c = Cluster::new().await;
    let created = c.create("apps", "deployments", Some("default"), deployment("web")).await.unwrap();
    // Labels are metadata: generation stays.
    let mut labelled = created.clone();
    labelled["metadata"]["labels"] = json!({"tier": "front"});
    let labelled = c.update("apps", "deployments", Some("default"), None, labelled).await.unwrap();
    assert_eq!(labelled["metadata"]["generation"], 1);
    assert_eq!(labelled["metadata"]["labels"]["tier"], "front");
    assert!(rv(&labelled) > rv(&created));
    // The first read's resourceVersion is stale now.
    let mut stale = created.clone();
    stale["spec"]["replicas"] = json!(3);
    let err = c.update("apps", "deployments", Some("default"), None, stale).await.unwrap_err();
    assert_eq!(err.code(), 409);
    assert_eq!(
        err.to_string(),
        format!("Operation cannot be fulfilled on deployments.apps \"web\": {CONFLICT}")
    );
    // From the latest, a spec change bumps generation.
    let mut scaled = labelled.clone();
    scaled["spec"]["replicas"] = json!(3);
    let scaled = c.update("apps", "deployments", Some("default"), None, scaled).await.unwrap();
    assert_eq!(
        (scaled["metadata"]["generation"].clone(), scaled["spec"]["replicas"].clone()),
        (json!(2), json!(3))
    );
    // A patch naming a stale resourceVersion conflicts the same way.
    let stale_patch =
        format!(r#"{{"metadata":{{"resourceVersion":"{}"}},"spec":{{"replicas":5}}}}"#, rv(&created));
    let err = c
        .store("apps", "deployments")
        .patch(
            &ctx(),
            Some("default"),
            "web",
            None,
            PatchType::Merge,
            stale_patch.as_bytes(),
            FieldValidation::Strict,
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("Operation cannot be fulfilled on deployments.apps \"web\": {CONFLICT}")
    );
    // An update of an object that is not there.
    let mut missing = deployment("nope");
    missing["metadata"]["resourceVersion"] = json!("1");
    let err = c.update("apps", "deployments", Some("default"), None, missing).await.unwrap_err();
    assert_eq!((err.code(), err.to_string()), (404, "deployments.apps \"nope\" not found".to_string()));
    // Without a resourceVersion the update is unconditional.
    let mut blind = scaled.clone();
    crate::runtime::meta::metadata_mut(&mut blind).remove("resourceVersion");
    blind["spec"]["replicas"] = json!(4);
    let blind = c.update("apps", "deployments", Some("default"), None, blind).await.unwrap();
    assert_eq!(blind["metadata"]["generation"], 3);
}

#[tokio::test]
async fn status_is_written_only_through_its_subresource() {
    let c = Cluster::new().await;
    let mut body = deployment("web");
    body["status"] = json!({"replicas": 5});
    let created = c.create("apps", "deployments", Some("default"), body).await.unwrap();
    assert!(created.get("status").is_none(), "status is dropped on create: {created}");
    // The main resource keeps the stored status whatever the body says.
    let mut main = created.clone();
    main["status"] = json!({"replicas": 9});
    let main = c.update("apps", "deployments", Some("default"), None, main).await.unwrap();
    assert!(main.get("status").is_none(), "{main}");
    assert_eq!(rv(&main), rv(&created), "nothing changed, nothing written");
    // The status subresource changes status only: not spec, not generation.
    let mut status = main.clone();
    status["status"] = json!({"replicas": 2, "readyReplicas": 1});
    status["spec"]["replicas"] = json!(7);
    status["metadata"]["labels"] = json!({"sneaky": "yes"});
    let updated = c.update("apps", "deployments", Some("default"), Some("status"), status).await.unwrap();
    assert_eq!(updated["status"], json!({"replicas": 2, "readyReplicas": 1}));
    assert_eq!(updated["spec"]["replicas"], 1);
    assert_eq!(updated["metadata"]["generation"], 1);
    assert!(updated["metadata"].get("labels").is_none());
    // And the main resource leaves it be.
    let mut spec = updated.clone();
    spec["spec"]["replicas"] = json!(2);
    spec["status"] = json!({});
    let spec = c.update("apps", "deployments", Some("default"), None, spec).await.unwrap();
    assert_eq!(spec["status"]["readyReplicas"], 1);
    assert_eq!(spec["metadata"]["generation"], 2);
}

#[tokio::test]
async fn an_update_that_changes_nothing_writes_nothing() {
    let c = Cluster::new().await;
    let cm = c.create("", "configmaps", Some("default"), configmap("a")).await.unwrap();
    let revision = c.memory.revision();
    let same = c.update("", "configmaps", Some("default"), None, cm.clone()).await.unwrap();
    assert_eq!(same, cm);
    let store = c.store("", "configmaps");
    let (patched, _) = store
        .patch(
            &ctx(),
            Some("default"),
            "a",
            None,
            PatchType::Merge,
            br#"{"data":{"k":"v"}}"#,
            FieldValidation::Strict,
        )
        .await
        .unwrap();
    assert_eq!(patched, cm);
    assert_eq!(c.memory.revision(), revision);
}

/// Storage that makes one concurrent write to a key just before the next
/// compare-and-swap on it, as another client racing the request would.
#[derive(Debug)]
struct Racing {
    inner: MemoryStorage,
    meddle: Mutex<Option<Meddle>>,
}

/// The key to write, and the change the other client makes to it.
type Meddle = (String, fn(&mut Value));

#[async_trait]
impl Storage for Racing {
    async fn create(&self, key: &str, value: Bytes, ttl: Option<i64>) -> Result<i64, StorageError> {
        self.inner.create(key, value, ttl).await
    }

    async fn get(&self, key: &str) -> Result<Option<Object>, StorageError> {
        self.inner.get(key).await
    }

    async fn current_revision(&self, prefix: &str) -> Result<i64, StorageError> {
        self.inner.current_revision(prefix).await
    }

    async fn put_if(&self, key: &str, value: Bytes, expected: i64) -> Result<Swap, StorageError> {
        let meddle = {
            let mut meddle = self.meddle.lock().unwrap();
            if meddle.as_ref().is_some_and(|(k, _)| k == key) { meddle.take() } else { None }
        };
        if let Some((_, change)) = meddle
            && let Some(current) = self.inner.get(key).await?
        {
            let mut object: Value = serde_json::from_slice(&current.value).unwrap();
            change(&mut object);
            let bytes = Bytes::from(serde_json::to_vec(&object).unwrap());
            let raced = self.inner.put_if(key, bytes, current.resource_version).await?;
            assert!(matches!(raced, Swap::Done(_)));
        }
        self.inner.put_if(key, value, expected).await
    }

    async fn delete(&self, key: &str, preconditions: &Preconditions) -> Result<Object, StorageError> {
        self.inner.delete(key, preconditions).await
    }

    async fn list(
        &self,
        prefix: &str,
        limit: i64,
        resource_version: i64,
        token: Option<&str>,
    ) -> Result<ListPage, StorageError> {
        self.inner.list(prefix, limit, resource_version, token).await
    }

    async fn watch(&self, prefix: &str, start: i64) -> Result<Box<dyn StorageWatch>, StorageError> {
        self.inner.watch(prefix, start).await
    }
}

#[tokio::test]
async fn patches_apply_to_the_latest_object_after_a_concurrent_write() {
    let memory = MemoryStorage::new();
    let racing = Arc::new(Racing { inner: memory.clone(), meddle: Mutex::new(None) });
    let c = Cluster::on(memory, racing.clone()).await;
    let deployments = c.store("apps", "deployments");
    c.create("apps", "deployments", Some("default"), deployment("web")).await.unwrap();

    // Strategic merge: containers merge by name, so the image change and the
    // sidecar another client added meanwhile are both kept.
    *racing.meddle.lock().unwrap() = Some(("/registry/deployments/default/web".into(), |d| {
        d["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "sidecar", "image": "busybox"}));
    }));
    let before = c.memory.revision();
    let body = br#"{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2"}]}}}}"#;
    let (patched, warnings) = deployments
        .patch(&ctx(), Some("default"), "web", None, PatchType::Strategic, body, FieldValidation::Strict)
        .await
        .unwrap();
    assert!(warnings.is_empty());
    assert_eq!(c.memory.revision(), before + 2, "the racing write, then the patch");
    assert_eq!(rv(&patched), before + 2);
    let mut containers: Vec<(String, String)> = patched["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap().into(), c["image"].as_str().unwrap().into()))
        .collect();
    containers.sort();
    assert_eq!(containers, [("app".into(), "nginx:2".into()), ("sidecar".into(), "busybox".into())]);
    // The racing write went to storage directly: only the patch bumped it.
    assert_eq!(patched["metadata"]["generation"], 2);

    // Merge patch: the key another client added survives.
    c.create("", "configmaps", Some("default"), configmap("cfg")).await.unwrap();
    *racing.meddle.lock().unwrap() =
        Some(("/registry/configmaps/default/cfg".into(), |cm| cm["data"]["theirs"] = json!("1")));
    let (merged, _) = c
        .store("", "configmaps")
        .patch(
            &ctx(),
            Some("default"),
            "cfg",
            None,
            PatchType::Merge,
            br#"{"data":{"ours":"2"}}"#,
            FieldValidation::Strict,
        )
        .await
        .unwrap();
    assert_eq!(merged["data"], json!({"k": "v", "theirs": "1", "ours": "2"}));

    // JSON patch: its test op is checked against the fresh object.
    *racing.meddle.lock().unwrap() =
        Some(("/registry/configmaps/default/cfg".into(), |cm| cm["data"]["k"] = json!("changed")));
    let guarded = br#"[{"op":"test","path":"/data/k","value":"v"},{"op":"remove","path":"/data/k"}]"#;
    let err = c
        .store("", "configmaps")
        .patch(&ctx(), Some("default"), "cfg", None, PatchType::Json, guarded, FieldValidation::Strict)
        .await
        .unwrap_err();
    assert_eq!(err.code(), 422, "{err}");
    let cm = c.get("", "configmaps", Some("default"), "cfg").await.unwrap();
    assert_eq!(cm["data"]["k"], "changed");
    // Without a race it applies.
    let unguarded = br#"[{"op":"remove","path":"/data/k"}]"#;
    let (removed, _) = c
        .store("", "configmaps")
        .patch(&ctx(), Some("default"), "cfg", None, PatchType::Json, unguarded, FieldValidation::Strict)
        .await
        .unwrap();
    assert_eq!(removed["data"], json!({"theirs": "1", "ours": "2"}));
}

#[tokio::test]
async fn deletes_honour_uid_and_resource_version_preconditions() {
    let c = Cluster::new().await;
    let cm = c.create("", "configmaps", Some("default"), configmap("a")).await.unwrap();
    let uid = cm["metadata"]["uid"].as_str().unwrap().to_string();
    let store = c.store("", "configmaps");
    let wrong_uid = DeleteOptions {
        preconditions: Preconditions { uid: Some("other".into()), resource_version: None },
        propagation: None,
        grace_period_seconds: None,
    };
    let err = store.delete(&ctx(), Some("default"), "a", &wrong_uid).await.unwrap_err();
    assert_eq!(err.code(), 409);
    assert_eq!(
        err.to_string(),
        format!(
            "Operation cannot be fulfilled on configmaps \"a\": Precondition failed: UID in precondition: other, UID in object meta: {uid}"
        )
    );
    let stale = DeleteOptions {
        preconditions: Preconditions { uid: None, resource_version: Some(rv(&cm) - 1) },
        propagation: None,
        grace_period_seconds: None,
    };
    let err = store.delete(&ctx(), Some("default"), "a", &stale).await.unwrap_err();
    assert_eq!(err.code(), 409);
    assert_eq!(
        err.to_string(),
        format!(
            "Operation cannot be fulfilled on configmaps \"a\": Precondition failed: ResourceVersion in precondition: {}, ResourceVersion in object meta: {}",
            rv(&cm) - 1,
            rv(&cm)
        )
    );
    let right = DeleteOptions {
        preconditions: Preconditions { uid: Some(uid), resource_version: Some(rv(&cm)) },
        propagation: None,
        grace_period_seconds: None,
    };
    let Deleted::Gone(gone) = store.delete(&ctx(), Some("default"), "a", &right).await.unwrap() else {
        panic!("a configmap without finalizers goes at once")
    };
    assert_eq!(gone["metadata"]["name"], "a");
    let err = c.get("", "configmaps", Some("default"), "a").await.unwrap_err();
    assert_eq!((err.code(), err.to_string()), (404, "configmaps \"a\" not found".to_string()));
    let err = store.delete(&ctx(), Some("default"), "a", &DeleteOptions::default()).await.unwrap_err();
    assert_eq!(err.code(), 404);
}

#[tokio::test]
async fn finalizers_hold_a_deleted_object_until_the_last_goes() {
    let c = Cluster::new().await;
    let mut body = configmap("held");
    body["metadata"]["finalizers"] = json!(["example.com/a", "example.com/b"]);
    c.create("", "configmaps", Some("default"), body).await.unwrap();
    let Deleted::Pending(marked) = c.delete("", "configmaps", Some("default"), "held").await.unwrap() else {
        panic!("finalizers hold it")
    };
    assert!(marked["metadata"]["deletionTimestamp"].is_string(), "{marked}");
    assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 0);
    // Still readable; deleting again changes nothing.
    let revision = c.memory.revision();
    assert!(matches!(c.delete("", "configmaps", Some("default"), "held").await, Ok(Deleted::Pending(_))));
    assert_eq!(c.memory.revision(), revision);
    // Clients cannot take the deletionTimestamp off.
    let mut current = c.get("", "configmaps", Some("default"), "held").await.unwrap();
    current["metadata"]["finalizers"] = json!(["example.com/b"]);
    crate::runtime::meta::metadata_mut(&mut current).remove("deletionTimestamp");
    let one_left = c.update("", "configmaps", Some("default"), None, current).await.unwrap();
    assert_eq!(one_left["metadata"]["deletionTimestamp"], marked["metadata"]["deletionTimestamp"]);
    assert!(c.get("", "configmaps", Some("default"), "held").await.is_ok());
    // The last finalizer removed: the object is gone.
    let mut last = one_left.clone();
    last["metadata"]["finalizers"] = json!([]);
    c.update("", "configmaps", Some("default"), None, last).await.unwrap();
    let err = c.get("", "configmaps", Some("default"), "held").await.unwrap_err();
    assert_eq!(err.code(), 404);
}

#[tokio::test]
async fn namespaces_are_always_deleted_gracefully() {
    let c = Cluster::new().await;
    let ns = c.create("", "namespaces", None, json!({"metadata": {"name": "team"}})).await.unwrap();
    assert_eq!(ns["status"]["phase"], "Active");
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    assert!(ns["metadata"].get("finalizers").is_none());
    let Deleted::Pending(marked) = c.delete("", "namespaces", None, "team").await.unwrap() else {
        panic!("a namespace is never deleted at once")
    };
    assert_eq!(marked["status"]["phase"], "Terminating");
    assert!(marked["metadata"]["deletionTimestamp"].is_string());
    let still = c.get("", "namespaces", None, "team").await.unwrap();
    assert_eq!(still["status"]["phase"], "Terminating");
    // spec.finalizers is the controller's: an update cannot clear it.
    let mut cleared = still.clone();
    cleared["spec"]["finalizers"] = json!([]);
    let kept = c.update("", "namespaces", None, None, cleared).await.unwrap();
    assert_eq!(kept["spec"]["finalizers"], json!(["kubernetes"]));
    assert!(c.get("", "namespaces", None, "team").await.is_ok());
}

#[tokio::test]
async fn dry_runs_write_nothing() {
    let c = Cluster::new().await;
    let cm = c.create("", "configmaps", Some("default"), configmap("a")).await.unwrap();
    c.create("", "namespaces", None, json!({"metadata": {"name": "scratch"}})).await.unwrap();
    let revision = c.memory.revision();
    let store = c.store("", "configmaps");

    let (object, _) = store.decode(configmap("b"), FieldValidation::Strict).unwrap();
    let tried = store.create(&dry_run(), Some("default"), object).await.unwrap();
    assert_eq!(tried["metadata"]["name"], "b");
    assert!(tried["metadata"]["uid"].is_string());
    assert!(tried["metadata"].get("resourceVersion").is_none(), "{tried}");
    assert_eq!(c.get("", "configmaps", Some("default"), "b").await.unwrap_err().code(), 404);
    // A dry run still says what the write would meet.
    let (object, _) = store.decode(configmap("a"), FieldValidation::Strict).unwrap();
    assert_eq!(store.create(&dry_run(), Some("default"), object).await.unwrap_err().code(), 409);

    let mut changed = cm.clone();
    changed["data"]["k"] = json!("new");
    let tried = store.update(&dry_run(), Some("default"), "a", None, changed).await.unwrap();
    assert_eq!(tried["data"]["k"], "new");
    assert_eq!(c.get("", "configmaps", Some("default"), "a").await.unwrap(), cm);

    let tried = store.delete(&dry_run(), Some("default"), "a", &DeleteOptions::default()).await.unwrap();
    assert!(matches!(tried, Deleted::Gone(_)));
    assert_eq!(c.get("", "configmaps", Some("default"), "a").await.unwrap(), cm);

    // A Service dry run takes no cluster IP; a namespace's is not marked.
    let services = c.store("", "services");
    let (svc, _) = services.decode(service("web", None), FieldValidation::Strict).unwrap();
    services.create(&dry_run(), Some("default"), svc).await.unwrap();
    assert!(c.ip_addresses().await.is_empty());
    let tried = c
        .store("", "namespaces")
        .delete(&dry_run(), None, "scratch", &DeleteOptions::default())
        .await
        .unwrap();
    assert!(matches!(tried, Deleted::Pending(_)));
    assert!(
        c.get("", "namespaces", None, "scratch").await.unwrap()["metadata"]["deletionTimestamp"].is_null()
    );

    assert_eq!(c.memory.revision(), revision);
}

#[tokio::test]
async fn services_take_a_cluster_ip_from_the_range_and_free_it() {
    let c = Cluster::new().await;
    let svc = c.create("", "services", Some("default"), service("web", None)).await.unwrap();
    let ip: Ipv4Addr = svc["spec"]["clusterIP"].as_str().unwrap().parse().unwrap();
    assert_eq!(ip.octets()[..3], [10, 0, 0]);
    assert!(ip.octets()[3] != 0 && ip.octets()[3] != 255, "{ip}");
    assert_eq!(svc["spec"]["clusterIPs"], json!([ip.to_string()]));
    assert_eq!(svc["spec"]["type"], "ClusterIP");
    assert_eq!(svc["spec"]["ports"][0], json!({"port": 80, "protocol": "TCP", "targetPort": 80}));
    let addresses = c.ip_addresses().await;
    assert_eq!(addresses.len(), 1);
    assert_eq!(addresses[0].0, format!("/registry/ipaddresses/{ip}"));
    assert_eq!(
        addresses[0].1["spec"]["parentRef"],
        json!({"group": "", "resource": "services", "namespace": "default", "name": "web"})
    );
    // The address is kept across updates, whatever the body says.
    let mut moved = svc.clone();
    moved["spec"]["clusterIP"] = json!("10.0.0.77");
    moved["spec"]["clusterIPs"] = json!(["10.0.0.77"]);
    let kept = c.update("", "services", Some("default"), None, moved).await.unwrap();
    assert_eq!(kept["spec"]["clusterIP"], ip.to_string());
    // Taken: another Service asking for it is refused, and a second
    // Service of the same name gives its new address back.
    let err =
        c.create("", "services", Some("default"), service("copy", Some(&ip.to_string()))).await.unwrap_err();
    assert_eq!(err.code(), 422);
    assert_eq!(
        err.to_string(),
        format!(
            "Service \"copy\" is invalid: spec.clusterIPs: Invalid value: [\"{ip}\"]: failed to allocate IP {ip}: provided IP is already allocated"
        )
    );
    let err = c.create("", "services", Some("default"), service("web", None)).await.unwrap_err();
    assert_eq!(err.code(), 409);
    assert_eq!(c.ip_addresses().await.len(), 1);
    // Outside the range.
    let err =
        c.create("", "services", Some("default"), service("out", Some("192.168.0.1"))).await.unwrap_err();
    assert_eq!(err.code(), 422);
    assert_eq!(
        err.to_string(),
        "Service \"out\" is invalid: spec.clusterIPs: Invalid value: [\"192.168.0.1\"]: failed to allocate IP 192.168.0.1: the provided IP (192.168.0.1) is not in the valid range"
    );
    // Headless: no address.
    let headless = c.create("", "services", Some("default"), service("h", Some("None"))).await.unwrap();
    assert_eq!(headless["spec"]["clusterIP"], "None");
    assert_eq!(c.ip_addresses().await.len(), 1);
    // Deleting the Service frees it: another may ask for it now.
    assert!(matches!(c.delete("", "services", Some("default"), "web").await, Ok(Deleted::Gone(_))));
    assert!(c.ip_addresses().await.is_empty());
    let again =
        c.create("", "services", Some("default"), service("next", Some(&ip.to_string()))).await.unwrap();
    assert_eq!(again["spec"]["clusterIP"], ip.to_string());
}

#[tokio::test]
async fn a_service_held_by_a_finalizer_keeps_its_ip_until_it_goes() {
    let c = Cluster::new().await;
    let mut body = service("web", None);
    body["metadata"]["finalizers"] = json!(["example.com/hold"]);
    let svc = c.create("", "services", Some("default"), body).await.unwrap();
    assert!(matches!(c.delete("", "services", Some("default"), "web").await, Ok(Deleted::Pending(_))));
    assert_eq!(c.ip_addresses().await.len(), 1, "still held");
    let mut released = c.get("", "services", Some("default"), "web").await.unwrap();
    released["metadata"]["finalizers"] = json!([]);
    c.update("", "services", Some("default"), None, released).await.unwrap();
    assert_eq!(c.get("", "services", Some("default"), "web").await.unwrap_err().code(), 404);
    assert!(c.ip_addresses().await.is_empty(), "{} freed with the Service", svc["spec"]["clusterIP"]);
}

/// A kind with every default: what a custom resource gets.
#[derive(Debug)]
pub(crate) struct Plain;

impl Strategy for Plain {}

fn watch_all() -> WatchSpec {
    WatchSpec {
        filter: Filter::default(),
        start: WatchStart::Now,
        not_older_than: 0,
        bookmarks: false,
        initial_events_end: false,
        deadline: Instant::now() + Duration::from_secs(60),
    }
}

#[tokio::test]
async fn a_custom_kind_named_services_gets_no_cluster_ip_and_can_be_removed() {
    let c = Cluster::new().await;
    let resource = Resource::new("example.com", "Service", "services").stored_under("example.com/services");
    let served = c.resources.add(Kind::new(resource.clone(), Plain)).unwrap();
    let err = c.resources.add(Kind::new(resource, Plain)).unwrap_err();
    assert_eq!(err.code(), 409);
    let store = served.store.clone();
    eventually("its cache to load", || async { store.reads().cacher().is_ready() }).await;
    let body = json!({"apiVersion": "example.com/v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}});
    let (object, _) = store.decode(body, FieldValidation::Strict).unwrap();
    let created = store.create(&ctx(), Some("default"), object).await.unwrap();
    assert_eq!(created["spec"], json!({"ports": [{"port": 80}]}), "no Service defaults, no address");
    assert!(c.ip_addresses().await.is_empty());
    assert!(c.memory.get("/registry/example.com/services/default/web").await.unwrap().is_some());
    // The built-in Services are untouched by it.
    c.create("", "services", Some("default"), service("web", None)).await.unwrap();
    assert_eq!(c.ip_addresses().await.len(), 1);

    let mut watch = store.watch(watch_all()).unwrap();
    let removed = c.resources.remove("example.com", "v1", "services");
    assert!(removed.is_some());
    assert!(c.resources.get("example.com", "v1", "services").is_none());
    assert!(c.resources.all().iter().all(|s| !s.store.resource().is("example.com", "services")));
    assert!(!c.resources.groups().contains(&"example.com".to_string()));
    assert!(c.resources.get("", "v1", "services").is_some());
    let end = tokio::time::timeout(Duration::from_secs(5), watch.live.recv()).await;
    assert!(matches!(end, Ok(None)), "its watches end: {end:?}");
    // Its objects stay in storage.
    assert!(c.memory.get("/registry/example.com/services/default/web").await.unwrap().is_some());
}

#[tokio::test]
async fn a_kind_whose_keys_overlap_another_is_refused() {
    let c = Cluster::new().await;
    // Under `/registry/services/` it would list the core Services (kept
    // under `services/specs`) as its own.
    let err =
        c.resources.add(Kind::new(Resource::new("example.com", "Service", "services"), Plain)).unwrap_err();
    assert_eq!(err.code(), 409);
    assert!(err.to_string().contains("its storage prefix \"services\" overlaps"), "{err}");
    assert!(c.resources.get("example.com", "v1", "services").is_none());
}

#[tokio::test]
async fn watches_of_a_store_see_its_writes() {
    let c = Cluster::new().await;
    let store = c.store("", "configmaps");
    let mut watch = store.watch(watch_all()).unwrap();
    let cm = c.create("", "configmaps", Some("default"), configmap("a")).await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(5), watch.live.recv()).await.unwrap().unwrap();
    let Delivery::Event { kind, object, .. } = got else { panic!("an event") };
    assert_eq!(kind.as_str(), "ADDED");
    assert_eq!(object.value(), cm);
}

/// A pod bound to a node is given its grace period and left to the
/// kubelet; a delete with a shorter period (the kubelet's 0) finishes it; a
/// pod never scheduled goes at once, answered with the pod as last stored.
#[tokio::test]
async fn pods_are_deleted_gracefully_as_kube_deletes_them() {
    let c = Cluster::new().await;
    let pod = |name: &str, node: &str| json!({"metadata": {"name": name}, "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]}});
    c.create("", "serviceaccounts", Some("default"), json!({"metadata": {"name": "default"}})).await.unwrap();
    c.create("", "pods", Some("default"), pod("bound", "node-1")).await.unwrap();
    c.create("", "pods", Some("default"), pod("unscheduled", "")).await.unwrap();
    let store = c.store("", "pods");
    let with_grace =
        |seconds: Option<i64>| DeleteOptions { grace_period_seconds: seconds, ..DeleteOptions::default() };

    let Deleted::Pending(marked) =
        store.delete(&ctx(), Some("default"), "bound", &with_grace(None)).await.unwrap()
    else {
        panic!("a bound pod waits for its kubelet")
    };
    assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 30, "the pod's own period");
    assert_eq!(marked["metadata"]["generation"], 2, "marking bumps the generation");
    let deadline: jiff::Timestamp =
        marked["metadata"]["deletionTimestamp"].as_str().unwrap().parse().unwrap();
    let ahead = deadline.duration_since(jiff::Timestamp::now()).as_secs();
    assert!((25..=31).contains(&ahead), "the deadline is the period ahead: {ahead}s");
    // A longer period changes nothing; a shorter one moves the deadline.
    let Deleted::Pending(same) =
        store.delete(&ctx(), Some("default"), "bound", &with_grace(Some(60))).await.unwrap()
    else {
        panic!("still waiting")
    };
    assert_eq!(same["metadata"], marked["metadata"]);
    let Deleted::Pending(shorter) =
        store.delete(&ctx(), Some("default"), "bound", &with_grace(Some(10))).await.unwrap()
    else {
        panic!("still waiting")
    };
    assert_eq!(shorter["metadata"]["deletionGracePeriodSeconds"], 10);
    let moved: jiff::Timestamp = shorter["metadata"]["deletionTimestamp"].as_str().unwrap().parse().unwrap();
    assert_eq!(deadline.duration_since(moved).as_secs(), 20);
    assert!(c.get("", "pods", Some("default"), "bound").await.is_ok());
    // The kubelet's final delete.
    let Deleted::Gone(gone) =
        store.delete(&ctx(), Some("default"), "bound", &with_grace(Some(0))).await.unwrap()
    else {
        panic!("a zero period deletes")
    };
    assert_eq!(gone["metadata"]["deletionGracePeriodSeconds"], 0);
    assert!(matches!(c.get("", "pods", Some("default"), "bound").await, Err(ApiError::NotFound { .. })));

    let Deleted::Gone(gone) =
        store.delete(&ctx(), Some("default"), "unscheduled", &with_grace(None)).await.unwrap()
    else {
        panic!("a pod no node ran goes at once")
    };
    assert_eq!(gone["metadata"]["name"], "unscheduled");
    assert_eq!(gone["metadata"]["deletionGracePeriodSeconds"], 0);
    assert!(matches!(
        c.get("", "pods", Some("default"), "unscheduled").await,
        Err(ApiError::NotFound { .. })
    ));
}

/// A pod held by a finalizer keeps its grace period running after the
/// finalizer goes; the update that clears the last finalizer of a pod whose
/// period is zero removes it (kube's `shouldDeleteDuringUpdate`).
#[tokio::test]
async fn a_finalized_pod_goes_when_its_finalizer_and_grace_period_are_both_done() {
    let c = Cluster::new().await;
    let pod = json!({"metadata": {"name": "held", "finalizers": ["example.com/keep"]},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}});
    c.create("", "serviceaccounts", Some("default"), json!({"metadata": {"name": "default"}})).await.unwrap();
    c.create("", "pods", Some("default"), pod).await.unwrap();
    let store = c.store("", "pods");
    let forced = DeleteOptions { grace_period_seconds: Some(0), ..DeleteOptions::default() };
    let Deleted::Pending(marked) = store.delete(&ctx(), Some("default"), "held", &forced).await.unwrap()
    else {
        panic!("the finalizer holds it")
    };
    assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 0);
    let mut released = marked.clone();
    released["metadata"]["finalizers"] = json!([]);
    c.update("", "pods", Some("default"), None, released).await.unwrap();
    assert!(matches!(c.get("", "pods", Some("default"), "held").await, Err(ApiError::NotFound { .. })));
}

/// A pod stored before kube's defaults were applied (an older server's
/// data) can still be relabelled: what it is compared with is defaulted as
/// kube defaults what it reads, so its spec does not seem changed.
#[tokio::test]
async fn objects_stored_without_defaults_update_as_if_defaulted() {
    let c = Cluster::new().await;
    let bare = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "old", "namespace": "default", "uid": "u-1", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}, "status": {"phase": "Pending"}});
    let bytes = Bytes::from(serde_json::to_vec(&bare).unwrap());
    c.memory.create("/registry/pods/default/old", bytes, None).await.unwrap();
    let mut relabelled = c.get("", "pods", Some("default"), "old").await.unwrap();
    relabelled["metadata"]["labels"] = json!({"team": "a"});
    let updated = c.update("", "pods", Some("default"), None, relabelled).await.unwrap();
    assert_eq!(updated["metadata"]["labels"], json!({"team": "a"}));
    assert_eq!(updated["spec"]["containers"][0]["imagePullPolicy"], "Always", "stored defaulted now");
}
