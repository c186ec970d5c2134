//! Custom resources: what a CustomResourceDefinition's versions become once
//! its names are accepted — one served resource per served version, whose
//! objects are pruned, defaulted and validated by that version's
//! `openAPIV3Schema` and printed by its `additionalPrinterColumns`
//! (kube's apiextensions-apiserver custom resource handler).
//!
//! * `runtime::schema_view`: a view over one schema node (shared with the
//!   CRD kind's own checks).
//! * `prune`, `defaults`, `validation`, `rules`: what the schema does to an
//!   object (`rules`: its `x-kubernetes-validations`, in CEL).
//! * `conversion`: objects between versions (`None`, or the CRD's
//!   conversion webhook).
//! * `printer`: `kubectl get` columns.
//! * `openapi`: the version in the OpenAPI documents (`kubectl explain`).
//! * `strategy`: the [`crate::registry::Strategy`] of a custom resource.

mod conversion;
mod defaults;
mod openapi;
mod printer;
mod prune;
mod rules;
mod strategy;
pub mod validation;

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use crate::admission::webhook::Caller;
use crate::registry::kinds::Kind;
use crate::registry::scale::ScalePaths;
use crate::registry::{Codec, Resource};
use crate::runtime::schema_view::Node;
use crate::storage::ReadView;
use conversion::{Converter, VersionConversion};
use printer::Columns;
use strategy::CustomResourceStrategy;

/// A CRD's served versions as kinds to serve (the CRD is valid: its
/// validation ran when it was stored); a CRD being deleted takes no new
/// objects.
pub fn kinds(crd: &Value, caller: &Arc<Caller>) -> Vec<Kind> {
    let terminating = crd["metadata"]["deletionTimestamp"].is_string();
    let spec = &crd["spec"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let names = &spec["names"];
    let list = |v: &Value| -> Vec<String> {
        v.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect()
    };
    let group = text(&spec["group"]);
    let plural = text(&names["plural"]);
    let kind = text(&names["kind"]);
    let versions = spec["versions"].as_array().map(Vec::as_slice).unwrap_or_default();
    let storage =
        versions.iter().find(|v| v["storage"] == true).map(|v| text(&v["name"])).unwrap_or_default();
    let storage_api_version = format!("{group}/{storage}");
    let converter = Arc::new(Converter::of_crd(crd, caller));
    let schemas: Arc<HashMap<String, Value>> = Arc::new(
        versions
            .iter()
            .map(|v| (format!("{group}/{}", text(&v["name"])), v["schema"]["openAPIV3Schema"].clone()))
            .collect(),
    );
    versions
        .iter()
        .filter(|v| v["served"].as_bool().unwrap_or(false))
        .map(|version| {
            let resource = Resource {
                group: group.clone(),
                version: text(&version["name"]),
                kind: kind.clone(),
                plural: plural.clone(),
                namespaced: spec["scope"] == "Namespaced",
                short_names: list(&names["shortNames"]),
                categories: list(&names["categories"]),
                storage_prefix: format!("{group}/{plural}"),
                has_status: version["subresources"]["status"].is_object(),
                scale: ScalePaths::of_crd(&version["subresources"]["scale"]),
                ttl_seconds: None,
                returns_deleted: false,
                actions: &[],
                shares_storage_of: None,
            };
            let schema = version["schema"]["openAPIV3Schema"].clone();
            let columns = Columns::of_version(version);
            let mut strategy =
                CustomResourceStrategy::new(resource.qualified_kind(), schema.clone(), columns)
                    .with_scale(resource.scale.clone());
            if terminating {
                strategy = strategy.terminating(resource.qualified_name());
            }
            let codec = pruning_codec(schema.clone()).described_by(openapi::describe(&resource, &schema));
            let view = read_view(&resource, &storage_api_version, &converter, &schemas);
            Kind { resource, codec, strategy: Arc::new(strategy), hooks: None, view }
        })
        .collect()
}

/// Objects are stored in the storage version and read in the version
/// read through, converted by the CRD's strategy, pruned and defaulted as
/// kube does it (so a default added to a CRD shows on objects stored
/// before).
fn read_view(
    resource: &Resource,
    storage_api_version: &str,
    converter: &Arc<Converter>,
    schemas: &Arc<HashMap<String, Value>>,
) -> ReadView {
    ReadView::new(Arc::new(VersionConversion::new(
        converter.clone(),
        resource.api_version(),
        storage_api_version.to_string(),
        schemas.clone(),
    )))
}

/// Decoding a custom resource: the schema prunes it, ObjectMeta its
/// metadata; the decoder warns about (or refuses) what went.
fn pruning_codec(schema: Value) -> Codec {
    Codec::with_roundtrip(move |mut object| {
        prune::prune_object(&mut object, Node(&schema));
        if let Some(metadata) = object.get_mut("metadata") {
            let typed: ObjectMeta = serde_json::from_value(metadata.take()).map_err(|e| e.to_string())?;
            *metadata = serde_json::to_value(typed).map_err(|e| e.to_string())?;
        }
        Ok(object)
    })
}
