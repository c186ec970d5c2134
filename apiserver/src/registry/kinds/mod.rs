//! The built-in kinds, one module each: its [`Resource`] description and its
//! [`Strategy`] (and for Services, the cluster IP allocator's hooks). To add
//! a kind: write its module and add one line to [`builtin`].

use std::sync::Arc;

use k8s_openapi::schemars::JsonSchema;
use k8s_openapi::{ListableResource, Resource as KubeResource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Codec, Resource, Resources, Strategy, WriteHooks};
use crate::admission;
use crate::cacher::CacheConfig;
use crate::errors::ApiError;
use crate::openapi::OpenApiResource;
use crate::storage::{ReadView, Storage};

pub mod admissionregistration;
pub mod apiservice;
pub mod certificatesigningrequest;
pub mod configmap;
pub mod controllerrevision;
pub mod cronjob;
pub mod customresourcedefinition;
pub mod daemonset;
pub mod deployment;
pub mod endpoints;
pub mod endpointslice;
pub mod event;
pub mod events_api;
pub mod field;
pub mod flowcontrol;
pub mod horizontalpodautoscaler;
pub mod job;
pub mod lease;
pub mod limitrange;
pub mod namespace;
pub mod networking;
pub mod node;
pub mod persistentvolume;
pub mod persistentvolumeclaim;
pub mod pod;
pub mod pod_resize;
pub mod podcertificaterequest;
pub mod poddisruptionbudget;
pub mod podtemplate;
pub mod priorityclass;
pub mod rbac;
pub mod replicaset;
pub mod replicationcontroller;
pub mod resource;
pub mod resourcequota;
pub mod runtimeclass;
pub mod secret;
pub mod service;
pub mod serviceaccount;
pub mod statefulset;
pub mod storage;
pub mod storageversionmigration;
pub mod webhook_client;

/// One kind, as registered with [`super::Resources`].
#[derive(Debug, Clone)]
pub struct Kind {
    pub resource: Resource,
    pub codec: Codec,
    pub strategy: Arc<dyn Strategy>,
    pub hooks: Option<Arc<dyn WriteHooks>>,
    /// What reading does to stored objects (custom resource versions).
    pub view: ReadView,
}

impl Kind {
    /// A kind whose objects are kept as sent (no type to decode them with).
    pub fn new(resource: Resource, strategy: impl Strategy + 'static) -> Kind {
        Kind {
            resource,
            codec: Codec::untyped(),
            strategy: Arc::new(strategy),
            hooks: None,
            view: ReadView::default(),
        }
    }

    /// A kind whose objects decode into the k8s-openapi type `T`, described
    /// by its schema.
    pub fn typed<T>(resource: Resource, strategy: impl Strategy + 'static) -> Kind
    where
        T: KubeResource + ListableResource + JsonSchema + DeserializeOwned + Serialize + 'static,
    {
        let codec = Codec::typed::<T>(&resource);
        Kind { resource, codec, strategy: Arc::new(strategy), hooks: None, view: ReadView::default() }
    }

    /// With this OpenAPI description.
    pub fn described_by(mut self, openapi: OpenApiResource) -> Kind {
        self.codec = self.codec.described_by(openapi);
        self
    }

    pub fn with_hooks(mut self, hooks: impl WriteHooks + 'static) -> Kind {
        self.hooks = Some(Arc::new(hooks));
        self
    }
}

/// What kinds need from the server's configuration.
#[derive(Debug, Clone)]
pub struct KindContext {
    pub storage: Arc<dyn Storage>,
    /// `/registry`: where every key lives.
    pub etcd_prefix: String,
    pub services: service::Ranges,
}

/// Every built-in kind, in discovery order.
pub fn builtin(context: &KindContext) -> Vec<Kind> {
    let mut kinds = vec![
        namespace::kind(),
        configmap::kind(),
        secret::kind(),
        serviceaccount::kind(),
        service::kind(context),
        endpoints::kind(),
        endpointslice::kind(),
        pod::kind(),
        podtemplate::kind(),
        replicationcontroller::kind(),
        persistentvolumeclaim::kind(),
        persistentvolume::kind(),
        event::kind(),
        events_api::kind(),
        node::kind(),
        deployment::kind(),
        replicaset::kind(),
        statefulset::kind(),
        daemonset::kind(),
        controllerrevision::kind(),
        job::kind(),
        cronjob::kind(),
        horizontalpodautoscaler::v2(),
        horizontalpodautoscaler::v1(),
        lease::kind(),
        limitrange::kind(),
        resourcequota::kind(),
        poddisruptionbudget::kind(),
        priorityclass::kind(),
        runtimeclass::kind(),
        certificatesigningrequest::kind(),
        podcertificaterequest::kind(),
        admissionregistration::webhooks::mutating(),
        admissionregistration::webhooks::validating(),
        admissionregistration::policies::policy(),
        admissionregistration::policies::binding(),
        admissionregistration::mutating_policies::policy(),
        admissionregistration::mutating_policies::binding(),
        customresourcedefinition::kind(),
        storageversionmigration::kind(),
        apiservice::kind(),
    ];
    kinds.extend(rbac::kinds());
    kinds.extend(networking::kinds());
    kinds.extend(storage::kinds());
    kinds.extend(flowcontrol::kinds());
    kinds.extend(resource::kinds(context));
    kinds
}

/// Every built-in kind served over `storage`, through kube's default
/// admission plugins, registered the way a CustomResourceDefinition's
/// resource will be.
pub fn serve(
    storage: Arc<dyn Storage>,
    etcd_prefix: &str,
    services: impl Into<service::Ranges>,
) -> Result<Resources, ApiError> {
    serve_with(storage, etcd_prefix, services, admission::Setup::default_plugins(), CacheConfig::default())
}

/// As `serve`, through the admission `setup` given, with these watch
/// caches.
pub fn serve_with(
    storage: Arc<dyn Storage>,
    etcd_prefix: &str,
    services: impl Into<service::Ranges>,
    admission: admission::Setup,
    cache: CacheConfig,
) -> Result<Resources, ApiError> {
    let resources = Resources::new(storage.clone(), admission.chain, cache, etcd_prefix)
        .with_webhook_caller(admission.webhook_caller);
    let context =
        KindContext { storage, etcd_prefix: resources.etcd_prefix().to_string(), services: services.into() };
    for kind in builtin(&context) {
        resources.add(kind)?;
    }
    admission.lookups.namespaces.set(Arc::new(resources.store("", "namespaces")?));
    admission.lookups.service_accounts.set(Arc::new(resources.store("", "serviceaccounts")?));
    admission.lookups.limit_ranges.set(Arc::new(resources.store("", "limitranges")?));
    admission.lookups.resource_quotas.set(Arc::new(resources.store("", "resourcequotas")?));
    admission.lookups.services.set(Arc::new(resources.store("", "services")?));
    admission.lookups.endpoints.set(Arc::new(resources.store("", "endpoints")?));
    let registration = "admissionregistration.k8s.io";
    let mutating = resources.store(registration, "mutatingwebhookconfigurations")?;
    admission.lookups.mutating_webhooks.set(Arc::new(mutating));
    let validating = resources.store(registration, "validatingwebhookconfigurations")?;
    admission.lookups.validating_webhooks.set(Arc::new(validating));
    admission.lookups.policies.set(Arc::new(resources.store(registration, "validatingadmissionpolicies")?));
    let bindings = resources.store(registration, "validatingadmissionpolicybindings")?;
    admission.lookups.policy_bindings.set(Arc::new(bindings));
    let mutating_policies = resources.store(registration, "mutatingadmissionpolicies")?;
    admission.lookups.mutating_policies.set(Arc::new(mutating_policies));
    let mutating_bindings = resources.store(registration, "mutatingadmissionpolicybindings")?;
    admission.lookups.mutating_policy_bindings.set(Arc::new(mutating_bindings));
    admission.lookups.kinds.set(Arc::new(resources.clone()));
    admission
        .lookups
        .priority_classes
        .set(Arc::new(resources.store("scheduling.k8s.io", "priorityclasses")?));
    let lookups = &admission.lookups;
    lookups.storage_classes.set(Arc::new(resources.store("storage.k8s.io", "storageclasses")?));
    lookups.ingress_classes.set(Arc::new(resources.store("networking.k8s.io", "ingressclasses")?));
    lookups.runtime_classes.set(Arc::new(resources.store("node.k8s.io", "runtimeclasses")?));
    Ok(resources)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::storage::Etcd3Store;
    use serde_json::Value;

    /// Every built-in kind served over a storage that is never reached
    /// (for tests of what is derived from the served set).
    pub(crate) fn builtin_resources() -> crate::registry::Resources {
        let channel = tonic::transport::Endpoint::from_static("http://127.0.0.1:1").connect_lazy();
        serve(
            Arc::new(Etcd3Store::new(channel)),
            "/registry",
            service::IpRange::parse("10.0.0.0/24").unwrap(),
        )
        .unwrap()
    }

    /// Checks a kind's defaulting against `testdata/defaults/<name>.json`:
    /// an object as a client sends it (`sent`, with the uid the server
    /// would have given it) and what kube stores for it (`stored`), as
    /// decoding, defaulting and the kind's preparation of a new object
    /// leave it. Differences are listed by path.
    pub(crate) fn golden(kind: &Kind, name: &str) {
        let path = format!("{}/src/registry/kinds/testdata/defaults/{name}.json", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let case: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut object = kind.codec.roundtrip(case["sent"].clone()).unwrap();
        kind.strategy.set_defaults(&mut object);
        kind.strategy.prepare_for_create(&mut object);
        let mut differences = Vec::new();
        diff("", &case["stored"], &object, &mut differences);
        assert!(differences.is_empty(), "{name}: stored differs from kube's:\n{}", differences.join("\n"));
    }

    fn diff(path: &str, want: &Value, got: &Value, out: &mut Vec<String>) {
        match (want, got) {
            (Value::Object(w), Value::Object(g)) => {
                for key in w.keys().chain(g.keys().filter(|k| !w.contains_key(*k))) {
                    let at = format!("{path}.{key}");
                    diff(&at, w.get(key).unwrap_or(&Value::Null), g.get(key).unwrap_or(&Value::Null), out);
                }
            }
            (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
                for (i, (w, g)) in w.iter().zip(g).enumerate() {
                    diff(&format!("{path}[{i}]"), w, g, out);
                }
            }
            (w, g) if w != g => out.push(format!("{path}: kube {w}, rtcd {g}")),
            _ => {}
        }
    }

    #[test]
    fn roundtrip_drops_unknown_fields_and_rejects_wrong_types() {
        let cm = configmap::kind();
        let out = cm
            .codec
            .roundtrip(serde_json::json!({
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}, "bogus": 1
            }))
            .unwrap();
        assert_eq!(out["data"]["k"], "v");
        assert!(out.get("bogus").is_none());
        let err = cm.codec.roundtrip(serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "data": 5}));
        assert!(err.is_err());
    }

    #[tokio::test]
    async fn builtin_kinds_have_distinct_names_and_openapi() {
        let channel = tonic::transport::Endpoint::from_static("http://127.0.0.1:1").connect_lazy();
        let context = KindContext {
            storage: Arc::new(Etcd3Store::new(channel)),
            etcd_prefix: "/registry".into(),
            services: service::IpRange::parse("10.0.0.0/24").unwrap().into(),
        };
        let kinds = builtin(&context);
        for (i, a) in kinds.iter().enumerate() {
            assert!(a.codec.openapi().is_some(), "{}", a.resource.kind);
            let openapi = a.codec.openapi().unwrap();
            // The OpenAPI description serves the subresources the resource does.
            assert_eq!(openapi.subresources.to_vec(), a.resource.subresources().to_vec());
            for b in &kinds[i + 1..] {
                // a resource may be served in several versions, never twice in one
                let same = a.resource.is(&b.resource.group, &b.resource.plural);
                assert!(!same || a.resource.version != b.resource.version, "{}", a.resource.qualified_name());
            }
        }
        let endpoints = kinds.iter().find(|k| k.resource.plural == "endpoints").unwrap();
        assert_eq!(endpoints.resource.singular(), "endpoints");
    }
}
