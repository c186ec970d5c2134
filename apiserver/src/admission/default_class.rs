//! DefaultStorageClass and DefaultIngressClass (kube's
//! `plugin/pkg/admission/storage/storageclass/setdefault` and
//! `network/defaultingressclass`): a new PersistentVolumeClaim or Ingress
//! that names no class gets the class its cluster marked as default, so
//! install manifests that leave the class out are served by whatever
//! provisioner or ingress controller the cluster runs.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::lookup::Lookup;
use super::{Attributes, Operation, Plugin};
use crate::errors::ApiError;
use crate::runtime::meta;

/// Which kind of class a plugin defaults, and how it is marked default.
#[derive(Debug)]
struct Defaulted {
    plugin: &'static str,
    group: &'static str,
    resource: &'static str,
    /// Annotations that mark a class default (value `"true"`).
    markers: &'static [&'static str],
    /// An annotation on the object that names its class the old way.
    legacy_annotation: &'static str,
    field: &'static str,
}

const STORAGE: Defaulted = Defaulted {
    plugin: "DefaultStorageClass",
    group: "",
    resource: "persistentvolumeclaims",
    markers: &[
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
    ],
    legacy_annotation: "volume.beta.kubernetes.io/storage-class",
    field: "storageClassName",
};

const INGRESS: Defaulted = Defaulted {
    plugin: "DefaultIngressClass",
    group: "networking.k8s.io",
    resource: "ingresses",
    markers: &["ingressclass.kubernetes.io/is-default-class"],
    legacy_annotation: "kubernetes.io/ingress.class",
    field: "ingressClassName",
};

#[derive(Debug)]
pub struct DefaultClass {
    what: Defaulted,
    classes: Lookup,
}

impl DefaultClass {
    /// DefaultStorageClass over the StorageClasses.
    pub fn storage(classes: Lookup) -> Self {
        DefaultClass { what: STORAGE, classes }
    }

    /// DefaultIngressClass over the IngressClasses.
    pub fn ingress(classes: Lookup) -> Self {
        DefaultClass { what: INGRESS, classes }
    }

    /// The default class: the newest of those marked, by name when made
    /// in the same instant (kube's `GetDefaultClass`).
    async fn default_class(&self) -> Result<Option<String>, ApiError> {
        let classes = self.classes.get()?.list(None, true).await?;
        let marked = |class: &Value| {
            self.what.markers.iter().any(|key| class["metadata"]["annotations"][key] == "true")
        };
        let newest = classes.iter().filter(|class| marked(class)).max_by(|a, b| {
            let created =
                |c: &Value| c["metadata"]["creationTimestamp"].as_str().unwrap_or_default().to_string();
            created(a).cmp(&created(b)).then_with(|| meta::name_of(b).cmp(meta::name_of(a)))
        });
        Ok(newest.map(|class| meta::name_of(class).to_string()))
    }
}

#[async_trait]
impl Plugin for DefaultClass {
    fn name(&self) -> &'static str {
        self.what.plugin
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        if attributes.operation != Operation::Create || !attributes.is(self.what.group, self.what.resource) {
            return Ok(());
        }
        let Some(object) = attributes.object.as_ref() else { return Ok(()) };
        let named = !object["spec"][self.what.field].is_null();
        let legacy = object["metadata"]["annotations"].get(self.what.legacy_annotation).is_some();
        if named || legacy {
            return Ok(());
        }
        let class = match self.default_class().await {
            Ok(class) => class,
            Err(e) => return Err(attributes.forbidden(e.to_string())),
        };
        if let (Some(class), Some(spec)) = (class, attributes.spec_mut()) {
            spec[self.what.field] = json!(class);
        }
        Ok(())
    }
}
