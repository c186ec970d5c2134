//! Custom resources: what a CustomResourceDefinition's versions become once
//! its names are accepted — one served resource per served version, whose
//! objects are pruned, defaulted and validated by that version's
//! `openAPIV3Schema` and printed by its `additionalPrinterColumns`
//! (kube's apiextensions-apiserver custom resource handler).
//!
//! * `schema`: a view over one schema node.
//! * `prune`, `defaults`, `validation`, `rules`: what the schema does to an
//!   object (`rules`: its `x-kubernetes-validations`, in CEL).
//! * `printer`: `kubectl get` columns.
//! * `openapi`: the version in the OpenAPI documents (`kubectl explain`).
//! * `strategy`: the [`crate::registry::Strategy`] of a custom resource.

mod defaults;
mod openapi;
mod printer;
mod prune;
mod rules;
pub mod schema;
mod strategy;
pub mod validation;

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use crate::registry::kinds::Kind;
use crate::registry::scale::ScalePaths;
use crate::registry::{Codec, Resource};
use crate::storage::ReadView;
use printer::Columns;
use schema::Node;
use strategy::CustomResourceStrategy;

/// A CRD's served versions as kinds to serve (the CRD is valid: its
/// validation ran when it was stored); a CRD being deleted takes no new
/// objects.
pub fn kinds(crd: &Value) -> Vec<Kind> {
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
            };
            let schema = version["schema"]["openAPIV3Schema"].clone();
            let columns = Columns::of_version(version);
            let mut strategy = CustomResourceStrategy::new(
                resource.qualified_kind(),
                storage_api_version.clone(),
                schema.clone(),
                columns,
            )
            .with_scale(resource.scale.clone());
            if terminating {
                strategy = strategy.terminating(resource.qualified_name());
            }
            let codec = pruning_codec(schema.clone()).described_by(openapi::describe(&resource, &schema));
            let view = read_view(&resource, schema);
            Kind { resource, codec, strategy: Arc::new(strategy), hooks: None, view }
        })
        .collect()
}

/// Objects are stored in the storage version; read through a version they
/// are that version's (conversion `None`: only apiVersion changes), and
/// its schema defaults apply on reading, so a default added to a CRD shows
/// on objects stored before (as in kube).
fn read_view(resource: &Resource, schema: Value) -> ReadView {
    // Always: objects stored before the storage version changed carry the
    // old one.
    let api_version = Value::from(resource.api_version());
    ReadView::new(Arc::new(move |object: &mut Value| {
        object["apiVersion"] = api_version.clone();
        defaults::apply_defaults(object, Node(&schema));
    }))
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
