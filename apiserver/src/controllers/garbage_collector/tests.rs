use serde_json::{Value, json};

use super::*;
use crate::registry::Deleted;
use crate::registry::tests::{Cluster, configmap, ctx, deployment, eventually};

/// A ConfigMap `name` in `default` owned by `owners` (`(kind, apiVersion,
/// object)`, blocking owner deletion when `blocks`).
fn owned(name: &str, owners: &[(&Value, bool)]) -> Value {
    let mut cm = configmap(name);
    let refs: Vec<Value> = owners
        .iter()
        .map(|(owner, blocks)| {
            json!({
                "apiVersion": owner["apiVersion"],
                "kind": owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "blockOwnerDeletion": blocks,
            })
        })
        .collect();
    cm["metadata"]["ownerReferences"] = json!(refs);
    cm
}

async fn exists(c: &Cluster, group: &str, plural: &str, name: &str) -> bool {
    c.get(group, plural, Some("default"), name).await.is_ok()
}

async fn delete_with(
    c: &Cluster,
    group: &str,
    plural: &str,
    name: &str,
    propagation: Propagation,
) -> Deleted {
    let opts = DeleteOptions { propagation: Some(propagation), ..DeleteOptions::default() };
    c.store(group, plural).delete(&ctx(), Some("default"), name, &opts).await.unwrap()
}

fn owner_uids(object: &Value) -> Vec<String> {
    owners_of(object).into_iter().map(|o| o.uid).collect()
}

#[tokio::test]
async fn background_deletes_dependents_whose_owners_are_all_gone() {
    let c = Cluster::new().await;
    tokio::spawn(run(c.resources.clone()));
    let web = c.create("apps", "deployments", Some("default"), deployment("web")).await.unwrap();
    let keeper = c.create("", "configmaps", Some("default"), configmap("keeper")).await.unwrap();
    c.create("", "configmaps", Some("default"), owned("a", &[(&web, true)])).await.unwrap();
    c.create("", "configmaps", Some("default"), owned("b", &[(&web, false)])).await.unwrap();
    c.create("", "configmaps", Some("default"), owned("shared", &[(&web, true), (&keeper, false)]))
        .await
        .unwrap();
    let grandchild = c.get("", "configmaps", Some("default"), "a").await.unwrap();
    c.create("", "configmaps", Some("default"), owned("a-child", &[(&grandchild, false)])).await.unwrap();

    let gone = delete_with(&c, "apps", "deployments", "web", Propagation::Background).await;
    assert!(matches!(gone, Deleted::Gone(_)), "Background: the owner goes at once");
    for name in ["a", "b", "a-child"] {
        eventually(name, || async { !exists(&c, "", "configmaps", name).await }).await;
    }
    // An owner left holds its dependent, which loses the reference to the
    // one that went.
    eventually("shared to lose its reference to web", || async {
        let shared = c.get("", "configmaps", Some("default"), "shared").await.unwrap();
        owner_uids(&shared) == vec![meta::uid_of(&keeper).to_string()]
    })
    .await;
}

#[tokio::test]
async fn orphan_keeps_dependents_and_drops_their_references() {
    let c = Cluster::new().await;
    tokio::spawn(run(c.resources.clone()));
    let web = c.create("apps", "deployments", Some("default"), deployment("web")).await.unwrap();
    c.create("", "configmaps", Some("default"), owned("a", &[(&web, true)])).await.unwrap();
    let Deleted::Pending(marked) = delete_with(&c, "apps", "deployments", "web", Propagation::Orphan).await
    else {
        panic!("Orphan: the owner waits for its finalizer");
    };
    assert_eq!(meta::finalizers(&marked), vec![ORPHAN]);
    eventually("web to go", || async { !exists(&c, "apps", "deployments", "web").await }).await;
    let a = c.get("", "configmaps", Some("default"), "a").await.unwrap();
    assert!(a["metadata"].get("ownerReferences").is_none(), "{a}");
}

#[tokio::test]
async fn foreground_deletes_dependents_first() {
    let c = Cluster::new().await;
    tokio::spawn(run(c.resources.clone()));
    let web = c.create("apps", "deployments", Some("default"), deployment("web")).await.unwrap();
    let a = c.create("", "configmaps", Some("default"), owned("a", &[(&web, true)])).await.unwrap();
    // A finalizer of someone else's holds `a`, and with it `web`.
    let mut held = owned("held", &[(&web, true)]);
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    c.create("", "configmaps", Some("default"), held).await.unwrap();
    c.create("", "configmaps", Some("default"), owned("a-child", &[(&a, true)])).await.unwrap();

    let Deleted::Pending(marked) =
        delete_with(&c, "apps", "deployments", "web", Propagation::Foreground).await
    else {
        panic!("Foreground: the owner waits for its dependents");
    };
    assert_eq!(meta::finalizers(&marked), vec![FOREGROUND]);
    for name in ["a", "a-child"] {
        eventually(name, || async { !exists(&c, "", "configmaps", name).await }).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(exists(&c, "apps", "deployments", "web").await, "a blocking dependent is left");
    // Its finalizer cleared, the last blocking dependent goes, then the owner.
    c.store("", "configmaps")
        .update_with(&ctx(), Some("default"), "held", None, |old| {
            let mut new = old.clone();
            new["metadata"]["finalizers"] = json!([]);
            meta::metadata_mut(&mut new).remove("resourceVersion");
            Ok(new)
        })
        .await
        .unwrap();
    eventually("web to go", || async { !exists(&c, "apps", "deployments", "web").await }).await;
}

#[tokio::test]
async fn after_a_restart_dangling_references_are_collected() {
    let c = Cluster::new().await;
    // Owned by what no longer exists: a uid no object has, or a name made
    // again since (another uid).
    let ghost = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ghost", "uid": "0000-gone"}});
    c.create("", "configmaps", Some("default"), owned("orphaned", &[(&ghost, false)])).await.unwrap();
    c.create("apps", "deployments", Some("default"), deployment("reborn")).await.unwrap();
    let old_reborn = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "reborn", "uid": "1111-old"}});
    c.create("", "configmaps", Some("default"), owned("stale", &[(&old_reborn, false)])).await.unwrap();
    // An owner of a kind this server does not serve is never guessed gone.
    let widget =
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "uid": "2222"}});
    c.create("", "configmaps", Some("default"), owned("unknown-owner", &[(&widget, false)])).await.unwrap();

    tokio::spawn(run(c.resources.clone()));
    for name in ["orphaned", "stale"] {
        eventually(name, || async { !exists(&c, "", "configmaps", name).await }).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(exists(&c, "", "configmaps", "unknown-owner").await);
    assert!(exists(&c, "apps", "deployments", "reborn").await);
}

/// Resources registered while the collector runs are followed, also when
/// removed and registered again.
#[tokio::test]
async fn resources_added_at_runtime_are_followed() {
    use crate::registry::Resource;
    use crate::registry::kinds::Kind;
    use crate::registry::tests::Plain;
    use crate::runtime::FieldValidation;

    let c = Cluster::new().await;
    tokio::spawn(run(c.resources.clone()));
    let widgets = || {
        Kind::new(
            Resource::new("example.com", "Widget", "widgets").stored_under("example.com/widgets"),
            Plain,
        )
    };
    c.resources.add(widgets()).unwrap();
    c.resources.remove("example.com", "v1", "widgets").unwrap();
    let served = c.resources.add(widgets()).unwrap();
    let store = served.store.clone();
    eventually("its cache to load", || async { store.reads().cacher().is_ready() }).await;

    let web = c.create("apps", "deployments", Some("default"), deployment("web")).await.unwrap();
    let mut widget = owned("w", &[(&web, false)]);
    widget["apiVersion"] = json!("example.com/v1");
    widget["kind"] = json!("Widget");
    let (object, _) = store.decode(widget, FieldValidation::Strict).unwrap();
    store.create(&ctx(), Some("default"), object).await.unwrap();
    delete_with(&c, "apps", "deployments", "web", Propagation::Background).await;
    eventually("the widget to go", || async { !exists(&c, "example.com", "widgets", "w").await }).await;
}
