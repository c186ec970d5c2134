use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::schemas::LIST_PATCH_METADATA;
use super::*;

/// The built-in kinds' descriptions, as their registry modules give them
/// (kept here so that this module's tests need nothing above it).
fn resources() -> Vec<OpenApiResource> {
    use k8s_openapi::api::{
        admissionregistration::v1 as registration, apps::v1 as apps, autoscaling::v1 as autoscaling_v1,
        autoscaling::v2 as autoscaling_v2, batch::v1 as batch, certificates::v1 as certificates,
        coordination::v1 as coordination, core::v1 as core, discovery::v1 as discovery,
        flowcontrol::v1 as flowcontrol, networking::v1 as networking, node::v1 as node, policy::v1 as policy,
        rbac::v1 as rbac, resource::v1 as resource, scheduling::v1 as scheduling, storage::v1 as storage,
        storagemigration::v1 as storagemigration,
    };
    vec![
        OpenApiResource::of::<core::Namespace>(&["status"]),
        OpenApiResource::of::<core::ConfigMap>(&[]),
        OpenApiResource::of::<core::Secret>(&[]),
        OpenApiResource::of::<core::ServiceAccount>(&[]),
        OpenApiResource::of::<core::Service>(&["status"]),
        OpenApiResource::of::<core::Endpoints>(&[]),
        OpenApiResource::of::<core::LimitRange>(&[]),
        OpenApiResource::of::<core::ResourceQuota>(&["status"]),
        OpenApiResource::of::<core::Pod>(&["status"]),
        OpenApiResource::of::<core::Event>(&[]),
        OpenApiResource::of::<core::Node>(&["status"]),
        OpenApiResource::of::<apps::Deployment>(&["status", "scale"]),
        OpenApiResource::of::<apps::ReplicaSet>(&["status", "scale"]),
        OpenApiResource::of::<apps::StatefulSet>(&["status", "scale"]),
        OpenApiResource::of::<apps::DaemonSet>(&["status"]),
        OpenApiResource::of::<batch::Job>(&["status"]),
        OpenApiResource::of::<batch::CronJob>(&["status"]),
        OpenApiResource::of::<autoscaling_v2::HorizontalPodAutoscaler>(&["status"]),
        OpenApiResource::of::<autoscaling_v1::HorizontalPodAutoscaler>(&["status"]),
        OpenApiResource::of::<coordination::Lease>(&[]),
        OpenApiResource::of::<policy::PodDisruptionBudget>(&["status"]),
        OpenApiResource::of::<rbac::ClusterRole>(&[]),
        OpenApiResource::of::<rbac::ClusterRoleBinding>(&[]),
        OpenApiResource::of::<rbac::Role>(&[]),
        OpenApiResource::of::<rbac::RoleBinding>(&[]),
        OpenApiResource::of::<scheduling::PriorityClass>(&[]),
        OpenApiResource::of::<registration::MutatingWebhookConfiguration>(&[]),
        OpenApiResource::of::<registration::ValidatingWebhookConfiguration>(&[]),
        OpenApiResource::of::<registration::ValidatingAdmissionPolicy>(&["status"]),
        OpenApiResource::of::<registration::ValidatingAdmissionPolicyBinding>(&[]),
        OpenApiResource::of::<registration::MutatingAdmissionPolicy>(&[]),
        OpenApiResource::of::<registration::MutatingAdmissionPolicyBinding>(&[]),
        OpenApiResource::of::<core::PodTemplate>(&[]),
        OpenApiResource::of::<core::ReplicationController>(&["status", "scale"]),
        OpenApiResource::of::<core::PersistentVolumeClaim>(&["status"]),
        OpenApiResource::of::<core::PersistentVolume>(&["status"]),
        OpenApiResource::of::<apps::ControllerRevision>(&[]),
        OpenApiResource::of::<discovery::EndpointSlice>(&[]),
        OpenApiResource::of::<networking::NetworkPolicy>(&[]),
        OpenApiResource::of::<networking::Ingress>(&["status"]),
        OpenApiResource::of::<networking::IngressClass>(&[]),
        OpenApiResource::of::<node::RuntimeClass>(&[]),
        OpenApiResource::of::<certificates::CertificateSigningRequest>(&["status"]),
        OpenApiResource::of::<certificates::PodCertificateRequest>(&["status"]),
        OpenApiResource::of::<storage::StorageClass>(&[]),
        OpenApiResource::of::<storage::CSIDriver>(&[]),
        OpenApiResource::of::<storage::CSINode>(&[]),
        OpenApiResource::of::<storage::VolumeAttachment>(&["status"]),
        OpenApiResource::of::<storage::VolumeAttributesClass>(&[]),
        OpenApiResource::of::<storage::CSIStorageCapacity>(&[]),
        OpenApiResource::of::<networking::IPAddress>(&[]),
        OpenApiResource::of::<networking::ServiceCIDR>(&["status"]),
        OpenApiResource::of::<resource::DeviceClass>(&[]),
        OpenApiResource::of::<resource::ResourceClaim>(&["status"]),
        OpenApiResource::of::<resource::ResourceClaimTemplate>(&[]),
        OpenApiResource::of::<resource::ResourceSlice>(&[]),
        OpenApiResource::of::<storagemigration::StorageVersionMigration>(&["status"]),
        OpenApiResource::of::<flowcontrol::FlowSchema>(&["status"]),
        OpenApiResource::of::<flowcontrol::PriorityLevelConfiguration>(&["status"]),
        OpenApiResource::of::<k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService>(&[
            "status",
        ]),
    ]
}

fn docs() -> OpenApiDocs {
    OpenApiDocs::build(&resources())
}

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("valid JSON")
}

fn gv_doc(docs: &OpenApiDocs, path: &str) -> Value {
    parse(docs.group_version(path).unwrap_or_else(|| panic!("no document for {path}")))
}

const GROUP_VERSIONS: [&str; 19] = [
    "api/v1",
    "apis/admissionregistration.k8s.io/v1",
    "apis/apiregistration.k8s.io/v1",
    "apis/apps/v1",
    "apis/autoscaling/v1",
    "apis/autoscaling/v2",
    "apis/batch/v1",
    "apis/certificates.k8s.io/v1",
    "apis/coordination.k8s.io/v1",
    "apis/discovery.k8s.io/v1",
    "apis/flowcontrol.apiserver.k8s.io/v1",
    "apis/networking.k8s.io/v1",
    "apis/node.k8s.io/v1",
    "apis/policy/v1",
    "apis/rbac.authorization.k8s.io/v1",
    "apis/resource.k8s.io/v1",
    "apis/scheduling.k8s.io/v1",
    "apis/storage.k8s.io/v1",
    "apis/storagemigration.k8s.io/v1",
];

type Row =
    (&'static str, &'static str, &'static str, &'static str, &'static str, bool, &'static [&'static str]);

#[test]
fn resource_table() {
    let all = resources();
    let table: Vec<_> = all
        .iter()
        .map(|r| {
            let names = (r.group.as_str(), r.version.as_str(), r.kind.as_str(), r.list_kind.as_str());
            (names.0, names.1, names.2, names.3, r.plural.as_str(), r.namespaced, r.subresources)
        })
        .collect();
    let expected: Vec<Row> = vec![
        ("", "v1", "Namespace", "NamespaceList", "namespaces", false, &["status"]),
        ("", "v1", "ConfigMap", "ConfigMapList", "configmaps", true, &[]),
        ("", "v1", "Secret", "SecretList", "secrets", true, &[]),
        ("", "v1", "ServiceAccount", "ServiceAccountList", "serviceaccounts", true, &[]),
        ("", "v1", "Service", "ServiceList", "services", true, &["status"]),
        ("", "v1", "Endpoints", "EndpointsList", "endpoints", true, &[]),
        ("", "v1", "LimitRange", "LimitRangeList", "limitranges", true, &[]),
        ("", "v1", "ResourceQuota", "ResourceQuotaList", "resourcequotas", true, &["status"]),
        ("", "v1", "Pod", "PodList", "pods", true, &["status"]),
        ("", "v1", "Event", "EventList", "events", true, &[]),
        ("", "v1", "Node", "NodeList", "nodes", false, &["status"]),
        ("apps", "v1", "Deployment", "DeploymentList", "deployments", true, &["status", "scale"]),
        ("apps", "v1", "ReplicaSet", "ReplicaSetList", "replicasets", true, &["status", "scale"]),
        ("apps", "v1", "StatefulSet", "StatefulSetList", "statefulsets", true, &["status", "scale"]),
        ("apps", "v1", "DaemonSet", "DaemonSetList", "daemonsets", true, &["status"]),
        ("batch", "v1", "Job", "JobList", "jobs", true, &["status"]),
        ("batch", "v1", "CronJob", "CronJobList", "cronjobs", true, &["status"]),
        (
            "autoscaling",
            "v2",
            "HorizontalPodAutoscaler",
            "HorizontalPodAutoscalerList",
            "horizontalpodautoscalers",
            true,
            &["status"],
        ),
        (
            "autoscaling",
            "v1",
            "HorizontalPodAutoscaler",
            "HorizontalPodAutoscalerList",
            "horizontalpodautoscalers",
            true,
            &["status"],
        ),
        ("coordination.k8s.io", "v1", "Lease", "LeaseList", "leases", true, &[]),
        (
            "policy",
            "v1",
            "PodDisruptionBudget",
            "PodDisruptionBudgetList",
            "poddisruptionbudgets",
            true,
            &["status"],
        ),
        ("rbac.authorization.k8s.io", "v1", "ClusterRole", "ClusterRoleList", "clusterroles", false, &[]),
        (
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "ClusterRoleBindingList",
            "clusterrolebindings",
            false,
            &[],
        ),
        ("rbac.authorization.k8s.io", "v1", "Role", "RoleList", "roles", true, &[]),
        ("rbac.authorization.k8s.io", "v1", "RoleBinding", "RoleBindingList", "rolebindings", true, &[]),
        ("scheduling.k8s.io", "v1", "PriorityClass", "PriorityClassList", "priorityclasses", false, &[]),
        (
            "admissionregistration.k8s.io",
            "v1",
            "MutatingWebhookConfiguration",
            "MutatingWebhookConfigurationList",
            "mutatingwebhookconfigurations",
            false,
            &[],
        ),
        (
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
            "ValidatingWebhookConfigurationList",
            "validatingwebhookconfigurations",
            false,
            &[],
        ),
        (
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyList",
            "validatingadmissionpolicies",
            false,
            &["status"],
        ),
        (
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingAdmissionPolicyBinding",
            "ValidatingAdmissionPolicyBindingList",
            "validatingadmissionpolicybindings",
            false,
            &[],
        ),
        (
            "admissionregistration.k8s.io",
            "v1",
            "MutatingAdmissionPolicy",
            "MutatingAdmissionPolicyList",
            "mutatingadmissionpolicies",
            false,
            &[],
        ),
        (
            "admissionregistration.k8s.io",
            "v1",
            "MutatingAdmissionPolicyBinding",
            "MutatingAdmissionPolicyBindingList",
            "mutatingadmissionpolicybindings",
            false,
            &[],
        ),
        ("", "v1", "PodTemplate", "PodTemplateList", "podtemplates", true, &[]),
        (
            "",
            "v1",
            "ReplicationController",
            "ReplicationControllerList",
            "replicationcontrollers",
            true,
            &["status", "scale"],
        ),
        (
            "",
            "v1",
            "PersistentVolumeClaim",
            "PersistentVolumeClaimList",
            "persistentvolumeclaims",
            true,
            &["status"],
        ),
        ("", "v1", "PersistentVolume", "PersistentVolumeList", "persistentvolumes", false, &["status"]),
        ("apps", "v1", "ControllerRevision", "ControllerRevisionList", "controllerrevisions", true, &[]),
        ("discovery.k8s.io", "v1", "EndpointSlice", "EndpointSliceList", "endpointslices", true, &[]),
        ("networking.k8s.io", "v1", "NetworkPolicy", "NetworkPolicyList", "networkpolicies", true, &[]),
        ("networking.k8s.io", "v1", "Ingress", "IngressList", "ingresses", true, &["status"]),
        ("networking.k8s.io", "v1", "IngressClass", "IngressClassList", "ingressclasses", false, &[]),
        ("node.k8s.io", "v1", "RuntimeClass", "RuntimeClassList", "runtimeclasses", false, &[]),
        (
            "certificates.k8s.io",
            "v1",
            "CertificateSigningRequest",
            "CertificateSigningRequestList",
            "certificatesigningrequests",
            false,
            &["status"],
        ),
        (
            "certificates.k8s.io",
            "v1",
            "PodCertificateRequest",
            "PodCertificateRequestList",
            "podcertificaterequests",
            true,
            &["status"],
        ),
        ("storage.k8s.io", "v1", "StorageClass", "StorageClassList", "storageclasses", false, &[]),
        ("storage.k8s.io", "v1", "CSIDriver", "CSIDriverList", "csidrivers", false, &[]),
        ("storage.k8s.io", "v1", "CSINode", "CSINodeList", "csinodes", false, &[]),
        (
            "storage.k8s.io",
            "v1",
            "VolumeAttachment",
            "VolumeAttachmentList",
            "volumeattachments",
            false,
            &["status"],
        ),
        (
            "storage.k8s.io",
            "v1",
            "VolumeAttributesClass",
            "VolumeAttributesClassList",
            "volumeattributesclasses",
            false,
            &[],
        ),
        (
            "storage.k8s.io",
            "v1",
            "CSIStorageCapacity",
            "CSIStorageCapacityList",
            "csistoragecapacities",
            true,
            &[],
        ),
        ("networking.k8s.io", "v1", "IPAddress", "IPAddressList", "ipaddresses", false, &[]),
        ("networking.k8s.io", "v1", "ServiceCIDR", "ServiceCIDRList", "servicecidrs", false, &["status"]),
        ("resource.k8s.io", "v1", "DeviceClass", "DeviceClassList", "deviceclasses", false, &[]),
        ("resource.k8s.io", "v1", "ResourceClaim", "ResourceClaimList", "resourceclaims", true, &["status"]),
        (
            "resource.k8s.io",
            "v1",
            "ResourceClaimTemplate",
            "ResourceClaimTemplateList",
            "resourceclaimtemplates",
            true,
            &[],
        ),
        ("resource.k8s.io", "v1", "ResourceSlice", "ResourceSliceList", "resourceslices", false, &[]),
        (
            "storagemigration.k8s.io",
            "v1",
            "StorageVersionMigration",
            "StorageVersionMigrationList",
            "storageversionmigrations",
            false,
            &["status"],
        ),
        (
            "flowcontrol.apiserver.k8s.io",
            "v1",
            "FlowSchema",
            "FlowSchemaList",
            "flowschemas",
            false,
            &["status"],
        ),
        (
            "flowcontrol.apiserver.k8s.io",
            "v1",
            "PriorityLevelConfiguration",
            "PriorityLevelConfigurationList",
            "prioritylevelconfigurations",
            false,
            &["status"],
        ),
        ("apiregistration.k8s.io", "v1", "APIService", "APIServiceList", "apiservices", false, &["status"]),
    ];
    assert_eq!(table, expected);
}

#[test]
fn root_lists_every_group_version_with_its_hash() {
    let docs = docs();
    let root = parse(docs.root());
    let paths = root["paths"].as_object().expect("paths");
    assert_eq!(paths.keys().map(String::as_str).collect::<Vec<_>>(), GROUP_VERSIONS);
    for gv in GROUP_VERSIONS {
        let hash = docs.group_version_hash(gv).expect("hash");
        assert_eq!(hash.len(), 32);
        assert!(hash.chars().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()));
        assert_eq!(paths[gv]["serverRelativeURL"], format!("/openapi/v3/{gv}?hash={hash}"));
        assert_eq!(docs.group_version(&format!("/{gv}/")), docs.group_version(gv));
    }
    assert!(docs.group_version("apis/apps/v2").is_none());
    // Same input, same bytes and hashes.
    let again = OpenApiDocs::build(&resources());
    assert_eq!(again.root(), docs.root());
    assert_eq!(again.group_version("apis/apps/v1"), docs.group_version("apis/apps/v1"));
}

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    serde_json::json!({ "group": group, "kind": kind, "version": version })
}

#[test]
fn deployment_patch_supports_field_validation_and_strategic_merge() {
    let doc = gv_doc(&docs(), "apis/apps/v1");
    assert_eq!(doc["openapi"], "3.0.0");
    let patch = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert_eq!(patch["x-kubernetes-group-version-kind"], gvk("apps", "v1", "Deployment"));
    assert_eq!(patch["x-kubernetes-action"], "patch");
    let params: BTreeSet<_> = patch["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .filter(|p| p["in"] == "query")
        .map(|p| p["name"].as_str().expect("name"))
        .collect();
    for name in ["fieldValidation", "dryRun", "fieldManager", "force"] {
        assert!(params.contains(name), "{name} missing from {params:?}");
    }
    assert!(patch["requestBody"]["content"]["application/strategic-merge-patch+json"].is_object());
    let scale = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["patch"];
    assert_eq!(scale["x-kubernetes-group-version-kind"], gvk("autoscaling", "v1", "Scale"));
}

/// kubectl takes the first PATCH operation whose GVK matches (in map order), so all of them
/// must carry fieldValidation and accept strategic merge patches.
#[test]
fn every_operation_is_complete() {
    let docs = docs();
    for gv in GROUP_VERSIONS {
        let doc = gv_doc(&docs, gv);
        let mut operation_ids = BTreeSet::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("path item") {
                if method == "parameters" {
                    continue;
                }
                let id = op["operationId"].as_str().expect("operationId");
                assert!(operation_ids.insert(id.to_owned()), "duplicate operationId {id}");
                assert!(op["responses"]["200"].is_object(), "{method} {path}");
                if path.ends_with('/') {
                    continue;
                }
                assert!(op["x-kubernetes-action"].is_string(), "{method} {path}");
                assert!(op["x-kubernetes-group-version-kind"]["kind"].is_string(), "{method} {path}");
                let query: BTreeSet<&str> = op["parameters"]
                    .as_array()
                    .map(|ps| {
                        ps.iter().filter(|p| p["in"] == "query").filter_map(|p| p["name"].as_str()).collect()
                    })
                    .unwrap_or_default();
                if matches!(method.as_str(), "patch" | "put" | "post") {
                    for name in ["fieldValidation", "dryRun", "fieldManager"] {
                        assert!(query.contains(name), "{method} {path} lacks {name}");
                    }
                }
                if method == "patch" {
                    assert!(
                        op["requestBody"]["content"]["application/strategic-merge-patch+json"].is_object()
                    );
                }
            }
        }
    }
}

#[test]
fn resource_paths_and_actions() {
    let docs = docs();
    let core = gv_doc(&docs, "api/v1");
    let actions = |doc: &Value, path: &str| -> BTreeMap<String, String> {
        doc["paths"][path]
            .as_object()
            .unwrap_or_else(|| panic!("no path {path}"))
            .iter()
            .filter(|(method, _)| *method != "parameters")
            .map(|(method, op)| (method.clone(), op["x-kubernetes-action"].as_str().unwrap_or("").to_owned()))
            .collect()
    };
    let map = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
    };
    let collection = map(&[("delete", "deletecollection"), ("get", "list"), ("post", "post")]);
    let item = map(&[("delete", "delete"), ("get", "get"), ("patch", "patch"), ("put", "put")]);
    let sub = map(&[("get", "get"), ("patch", "patch"), ("put", "put")]);
    assert_eq!(actions(&core, "/api/v1/namespaces/{namespace}/configmaps"), collection);
    assert_eq!(actions(&core, "/api/v1/namespaces/{namespace}/configmaps/{name}"), item);
    assert_eq!(actions(&core, "/api/v1/configmaps"), map(&[("get", "list")]));
    assert_eq!(actions(&core, "/api/v1/namespaces"), collection);
    assert_eq!(actions(&core, "/api/v1/namespaces/{name}"), item);
    assert_eq!(actions(&core, "/api/v1/namespaces/{name}/status"), sub);
    assert_eq!(actions(&core, "/api/v1/nodes/{name}/status"), sub);
    assert!(core["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}/status"].is_null());
    let ns_params = &core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["parameters"];
    let names: Vec<_> = ns_params.as_array().expect("params").iter().map(|p| p["name"].clone()).collect();
    assert_eq!(names, ["name", "namespace", "pretty"]);
    let list = &core["paths"]["/api/v1/pods"]["get"];
    assert_eq!(list["x-kubernetes-group-version-kind"], gvk("", "v1", "Pod"));
    assert_eq!(
        list["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/io.k8s.api.core.v1.PodList"
    );
    let coordination = gv_doc(&docs, "apis/coordination.k8s.io/v1");
    assert_eq!(
        coordination["paths"]["/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"]["get"]["operationId"],
        "readCoordinationV1NamespacedLease"
    );
    assert_eq!(core["paths"]["/api/v1/nodes/{name}"]["put"]["operationId"], "replaceCoreV1Node");
    let apps = gv_doc(&docs, "apis/apps/v1");
    assert_eq!(
        apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["patch"]["operationId"],
        "patchAppsV1NamespacedDeploymentScale"
    );
}

#[test]
fn kind_schemas_carry_gvk_and_descriptions() {
    let doc = gv_doc(&docs(), "apis/apps/v1");
    let schemas = &doc["components"]["schemas"];
    let deployment = &schemas["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(
        deployment["x-kubernetes-group-version-kind"],
        serde_json::json!([gvk("apps", "v1", "Deployment")])
    );
    assert!(deployment["description"].as_str().is_some_and(|d| d.contains("Deployment")));
    assert!(deployment.get("required").is_none(), "metadata must not be required");
    // A field that is a reference keeps its own description beside `allOf: [{$ref}]`.
    let spec = &deployment["properties"]["spec"];
    assert!(spec["description"].is_string());
    assert_eq!(spec["allOf"][0]["$ref"], "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec");
    let containers = &schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
    assert!(containers["description"].is_string());
    assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
    assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
    assert!(schemas["io.k8s.api.core.v1.Container"]["properties"]["image"]["description"].is_string());

    let list = &schemas["io.k8s.api.apps.v1.DeploymentList"];
    assert_eq!(
        list["x-kubernetes-group-version-kind"],
        serde_json::json!([gvk("apps", "v1", "DeploymentList")])
    );
    assert_eq!(
        list["properties"]["items"]["items"]["$ref"],
        "#/components/schemas/io.k8s.api.apps.v1.Deployment"
    );
    assert!(list["properties"]["kind"]["description"].is_string());
    assert_eq!(
        schemas["io.k8s.api.autoscaling.v1.Scale"]["x-kubernetes-group-version-kind"],
        serde_json::json!([gvk("autoscaling", "v1", "Scale")])
    );
    assert_eq!(
        schemas["io.k8s.apimachinery.pkg.apis.meta.v1.Status"]["x-kubernetes-group-version-kind"],
        serde_json::json!([gvk("", "v1", "Status")])
    );
    let delete_options =
        schemas["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"]["x-kubernetes-group-version-kind"]
            .as_array()
            .expect("gvks")
            .clone();
    assert!(delete_options.contains(&gvk("apps", "v1", "DeleteOptions")));
    assert!(delete_options.contains(&gvk("", "v1", "DeleteOptions")));
}

fn collect_refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if key == "$ref" {
                    if let Some(reference) = child.as_str() {
                        out.push(reference);
                    }
                } else {
                    collect_refs(child, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_refs(item, out)),
        _ => {}
    }
}

/// OpenAPI 3.0 ignores keywords beside `$ref`; kube (and schemars' openapi3 settings) move them
/// beside an `allOf`. And schemas must be objects, not JSON Schema booleans.
fn check_schema_shape(value: &Value, at: &str) {
    match value {
        Value::Object(map) => {
            if map.contains_key("$ref") {
                assert_eq!(map.len(), 1, "$ref with siblings at {at}");
            }
            for (key, child) in map {
                if matches!(key.as_str(), "items" | "additionalProperties" | "schema") {
                    assert!(child.is_object() || key == "additionalProperties", "{key} at {at} is {child}");
                }
                check_schema_shape(child, &format!("{at}/{key}"));
            }
        }
        Value::Array(items) => items.iter().for_each(|item| check_schema_shape(item, at)),
        _ => {}
    }
}

#[test]
fn references_resolve_within_each_document() {
    let docs = docs();
    for gv in GROUP_VERSIONS {
        let doc = gv_doc(&docs, gv);
        let schemas = doc["components"]["schemas"].as_object().expect("schemas");
        let mut refs = Vec::new();
        collect_refs(&doc, &mut refs);
        assert!(refs.len() > 20, "{gv}: {} refs", refs.len());
        for reference in refs {
            let name =
                reference.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("{reference}"));
            assert!(schemas.contains_key(name), "{gv}: unresolved {reference}");
        }
        for (name, schema) in schemas {
            assert!(schema.is_object(), "{gv}: {name} is {schema}");
            assert!(!name.contains(char::is_whitespace) && name.starts_with("io.k8s."), "{gv}: {name}");
        }
        check_schema_shape(&doc, gv);
    }
}

#[test]
fn patch_metadata_table_applies() {
    let docs = docs();
    let all: Vec<Value> = GROUP_VERSIONS.iter().map(|gv| gv_doc(&docs, gv)).collect();
    for patch in LIST_PATCH_METADATA {
        let property = all
            .iter()
            .map(|doc| &doc["components"]["schemas"][patch.schema]["properties"][patch.property])
            .find(|property| property.is_object())
            .unwrap_or_else(|| panic!("{}.{} not in any document", patch.schema, patch.property));
        if let Some(strategy) = patch.strategy {
            assert_eq!(property["x-kubernetes-patch-strategy"], strategy);
        }
        if let Some(key) = patch.merge_key {
            assert_eq!(property["x-kubernetes-patch-merge-key"], key);
            // The merge key must be a field of the items.
            let items = &property["items"];
            let item_name = items["$ref"]
                .as_str()
                .or_else(|| items["allOf"][0]["$ref"].as_str())
                .and_then(|r| r.strip_prefix("#/components/schemas/"))
                .unwrap_or_else(|| panic!("{}.{} items", patch.schema, patch.property));
            let doc =
                all.iter().find(|doc| doc["components"]["schemas"][item_name].is_object()).expect("doc");
            assert!(
                doc["components"]["schemas"][item_name]["properties"][key].is_object(),
                "{item_name}.{key}"
            );
        }
    }
    let core = &all[0]["components"]["schemas"];
    let ports = &core["io.k8s.api.core.v1.ServiceSpec"]["properties"]["ports"];
    assert_eq!(ports["x-kubernetes-list-map-keys"], serde_json::json!(["port", "protocol"]));
    assert_eq!(ports["x-kubernetes-list-type"], "map");
}

/// The Swagger 2.0 document: every reference resolves, nothing OpenAPI 3 only is left, fields
/// written `allOf: [{$ref}]` in v3 are plain `$ref`s, bodies are parameters.
#[test]
fn swagger_document_is_self_contained_v2() {
    let docs = docs();
    let swagger: Value = parse(&docs.swagger().json);
    assert_eq!(swagger["swagger"], "2.0");
    let text = serde_json::to_string(&swagger).expect("serializable");
    for v3_only in ["#/components/", "\"nullable\"", "\"requestBody\"", "\"anyOf\"", "\"oneOf\""] {
        assert!(!text.contains(v3_only), "{v3_only} left in the v2 document");
    }
    let definitions = swagger["definitions"].as_object().expect("definitions");
    let mut stack = vec![&swagger];
    let mut references = 0;
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let Some(target) = map.get("$ref").and_then(Value::as_str) {
                    let name = target.strip_prefix("#/definitions/").expect("a definitions reference");
                    assert!(definitions.contains_key(name), "{target} not defined");
                    references += 1;
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    assert!(references > 1000, "{references}");

    let strategy = &definitions["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["strategy"];
    assert_eq!(strategy["$ref"], "#/definitions/io.k8s.api.apps.v1.DeploymentStrategy");
    assert!(strategy.get("allOf").is_none() && strategy["description"].is_string(), "{strategy}");
    let int_or_string = &definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"];
    assert_eq!(
        (&int_or_string["type"], &int_or_string["format"]),
        (&json!("string"), &json!("int-or-string"))
    );

    let create = &swagger["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"]["post"];
    let parameters = create["parameters"].as_array().expect("parameters");
    assert_eq!(
        parameters[0],
        json!({"in": "body", "name": "body", "required": true,
               "schema": {"$ref": "#/definitions/io.k8s.api.apps.v1.Deployment"}})
    );
    let dry_run = parameters.iter().find(|p| p["name"] == "dryRun").expect("dryRun");
    assert_eq!((&dry_run["in"], &dry_run["type"]), (&json!("query"), &json!("string")));
    assert!(dry_run.get("schema").is_none());
    assert_eq!(create["responses"]["201"]["schema"]["$ref"], "#/definitions/io.k8s.api.apps.v1.Deployment");
    assert_eq!(create["consumes"], json!(["*/*"]));
    assert!(create["produces"].as_array().is_some_and(|p| p.contains(&json!("application/json"))));
}

/// The protobuf form holds what the JSON does, under gnostic's field numbers (decoded here with
/// the same declarations; kubectl's v2 explain decodes it with gnostic's Go code in the
/// integration tests).
#[test]
fn swagger_protobuf_carries_the_json() {
    use super::v2::gnostic::{self, AdditionalProperties, NonBodyParameterOneof, ParameterOneof};
    use prost::Message as _;
    let docs = docs();
    let swagger: Value = parse(&docs.swagger().json);
    let decoded = gnostic::Document::decode(&docs.swagger().protobuf[..]).expect("decodes");
    assert_eq!(decoded.swagger, "2.0");
    let definitions = decoded.definitions.expect("definitions").additional_properties;
    assert_eq!(definitions.len(), swagger["definitions"].as_object().map_or(0, |d| d.len()));
    let deployment =
        definitions.iter().find(|d| d.name == "io.k8s.api.apps.v1.Deployment").and_then(|d| d.value.as_ref());
    let gvk = deployment
        .and_then(|d| d.vendor_extension.iter().find(|e| e.name == "x-kubernetes-group-version-kind"));
    let yaml = gvk.and_then(|e| e.value.as_ref()).map(|v| v.yaml.as_str()).unwrap_or_default();
    assert_eq!(
        serde_json::from_str::<Value>(yaml).ok(),
        Some(json!([{"group": "apps", "kind": "Deployment", "version": "v1"}]))
    );

    let labels = definitions
        .iter()
        .find(|d| d.name == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        .and_then(|d| {
            d.value.as_ref()?.properties.as_ref()?.additional_properties.iter().find(|p| p.name == "labels")
        })
        .and_then(|p| p.value.clone())
        .expect("ObjectMeta.labels");
    assert_eq!(labels.r#type.map(|t| t.value), Some(vec!["object".to_string()]));
    let values = labels.additional_properties.and_then(|a| a.oneof);
    assert!(
        matches!(values, Some(AdditionalProperties::Schema(s)) if s.r#type.as_ref().is_some_and(|t| t.value == ["string"]))
    );

    let paths = decoded.paths.expect("paths").path;
    assert_eq!(paths.len(), swagger["paths"].as_object().map_or(0, |p| p.len()));
    let item = paths.iter().find(|p| p.name == "/apis/apps/v1/namespaces/{namespace}/deployments/{name}");
    let item = item.and_then(|p| p.value.as_ref()).expect("deployment path");
    let path_kinds: Vec<&str> = item
        .parameters
        .iter()
        .filter_map(|p| match parameter_of(p)? {
            ParameterOneof::NonBodyParameter(gnostic::NonBodyParameter {
                oneof: Some(NonBodyParameterOneof::Path(path)),
            }) => Some(path.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(path_kinds, ["name", "namespace"]);
    let replace = item.put.as_ref().expect("put");
    assert_eq!(replace.operation_id, "replaceAppsV1NamespacedDeployment");
    let body = replace.parameters.iter().find_map(|p| match parameter_of(p)? {
        ParameterOneof::BodyParameter(body) => Some(body),
        ParameterOneof::NonBodyParameter(_) => None,
    });
    assert_eq!(
        body.and_then(|b| b.schema.as_ref()).map(|s| s.r#ref.as_str()),
        Some("#/definitions/io.k8s.api.apps.v1.Deployment")
    );
}

fn parameter_of(item: &super::v2::gnostic::ParametersItem) -> Option<&super::v2::gnostic::ParameterOneof> {
    match item.oneof.as_ref()? {
        super::v2::gnostic::ParametersItemOneof::Parameter(parameter) => parameter.oneof.as_ref(),
        super::v2::gnostic::ParametersItemOneof::JsonReference(_) => None,
    }
}
