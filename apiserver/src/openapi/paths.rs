//! The `paths` of a group-version document: kube's URL layout and operations for each resource.

use k8s_openapi::api::autoscaling;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use k8s_openapi::schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

use super::{Gvk, OpenApiResource};

/// Media types the server answers with (`Accept`). Add `application/yaml` or
/// `application/vnd.kubernetes.protobuf` here once the server encodes them.
const RESPONSE_MEDIA_TYPES: &[&str] = &["application/json"];
/// Media types of streamed watch responses of list operations.
const WATCH_MEDIA_TYPES: &[&str] = &["application/json;stream=watch"];
/// Patch bodies accepted. kubectl's client-side apply needs `application/strategic-merge-patch+json`
/// listed on the kind's PATCH operation to compute a strategic merge patch.
const PATCH_MEDIA_TYPES: &[&str] = &[
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];

/// A schema the documents mark with `x-kubernetes-group-version-kind`.
pub(super) type SchemaGvk<'a> = (String, Gvk<'a>);

/// Builds the paths of one group-version (all of `resources` share it), adding the schemas they
/// reference to `generator`. Also returns which schemas are top-level kinds, and their GVKs.
pub(super) fn build<'a>(
    resources: &[&'a OpenApiResource],
    generator: &mut SchemaGenerator,
) -> (Map<String, Value>, Vec<SchemaGvk<'a>>) {
    let mut paths = Map::new();
    let mut kinds = Vec::new();
    let Some(first) = resources.first() else { return (paths, kinds) };
    let gv = GroupVersion::new(&first.group, &first.version);

    let status = schema_ref(generator.subschema_for::<meta::Status>());
    let delete_options = schema_ref(generator.subschema_for::<meta::DeleteOptions>());
    let patch = schema_ref(generator.subschema_for::<meta::Patch>());
    let watch_event = schema_ref(generator.subschema_for::<meta::WatchEvent<RawExtension>>());
    let api_resource_list = schema_ref(generator.subschema_for::<meta::APIResourceList>());
    let shared =
        Shared { status: &status, delete_options: &delete_options, patch: &patch, watch_event: &watch_event };
    push_kind(&mut kinds, &status, Gvk { group: "", version: "v1", kind: "Status" });

    paths.insert(
        format!("{}/", gv.prefix),
        json!({
            "get": {
                "description": format!("get the resources served in {}", gv.api_version()),
                "operationId": format!("get{}APIResources", gv.ident),
                "tags": [gv.tag],
                "responses": responses(&[("200", "OK")], &api_resource_list, RESPONSE_MEDIA_TYPES),
            },
        }),
    );

    for resource in resources.iter().copied() {
        let kind_ref = resource.schema.reference(generator);
        let list_ref = resource.list_schema.reference(generator);
        let gvk = Gvk { group: &resource.group, version: &resource.version, kind: &resource.kind };
        push_kind(&mut kinds, &kind_ref, gvk);
        push_kind(&mut kinds, &list_ref, Gvk { kind: &resource.list_kind, ..gvk });
        let ctx = ResourceContext { gv: &gv, resource, gvk, kind_ref: &kind_ref, list_ref: &list_ref };
        ctx.add_paths(&mut paths, &shared, generator, &mut kinds);
    }
    (paths, kinds)
}

fn push_kind<'a>(kinds: &mut Vec<SchemaGvk<'a>>, schema: &Value, gvk: Gvk<'a>) {
    if let Some(name) = ref_name(schema) {
        kinds.push((name.to_owned(), gvk));
    }
}

/// The schema as a JSON value (a `$ref` for every `k8s-openapi` type).
fn schema_ref(schema: Schema) -> Value {
    schema.to_value()
}

/// The definition name a `{"$ref": "#/components/schemas/<name>"}` schema points at.
pub(super) fn ref_name(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str()?.strip_prefix("#/components/schemas/")
}

struct Shared<'a> {
    status: &'a Value,
    delete_options: &'a Value,
    patch: &'a Value,
    watch_event: &'a Value,
}

/// Names derived from a group-version, as kube derives them.
struct GroupVersion<'a> {
    group: &'a str,
    version: &'a str,
    /// `/api/v1` or `/apis/<group>/<version>`.
    prefix: String,
    /// `CoreV1`, `AppsV1`, `CoordinationV1`: the group-version part of operation ids.
    ident: String,
    /// `core_v1`, `apps_v1`, `coordination_v1`.
    tag: String,
}

impl<'a> GroupVersion<'a> {
    fn new(group: &'a str, version: &'a str) -> Self {
        let prefix = format!("/{}", super::group_version_path(group, version));
        let words: Vec<&str> = if group.is_empty() {
            vec!["core"]
        } else {
            group.trim_end_matches(".k8s.io").split('.').filter(|w| !w.is_empty()).collect()
        };
        let group_ident: String = words.iter().map(|w| capitalize(w)).collect();
        let mut group_tag = String::new();
        for (i, word) in words.iter().enumerate() {
            group_tag.push_str(&if i == 0 { (*word).to_owned() } else { capitalize(word) });
        }
        Self {
            group,
            version,
            prefix,
            ident: format!("{group_ident}{}", capitalize(version)),
            tag: format!("{group_tag}_{version}"),
        }
    }

    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

struct ResourceContext<'c, 'a> {
    gv: &'c GroupVersion<'a>,
    resource: &'a OpenApiResource,
    gvk: Gvk<'a>,
    kind_ref: &'c Value,
    list_ref: &'c Value,
}

impl<'a> ResourceContext<'_, 'a> {
    fn add_paths(
        &self,
        paths: &mut Map<String, Value>,
        shared: &Shared<'_>,
        generator: &mut SchemaGenerator,
        kinds: &mut Vec<SchemaGvk<'a>>,
    ) {
        let r = self.resource;
        let kind = &r.kind;
        let gv = self.gv;
        let scope = if r.namespaced { "Namespaced" } else { "" };
        let collection = if r.namespaced {
            format!("{}/namespaces/{{namespace}}/{}", gv.prefix, r.plural)
        } else {
            format!("{}/{}", gv.prefix, r.plural)
        };
        let item = format!("{collection}/{{name}}");

        // The collection: list (and watch), create, delete a collection.
        let mut scope_params = Vec::new();
        if r.namespaced {
            scope_params.push(namespace_param());
        }
        scope_params.push(pretty_param());
        let mut delete_collection_params = delete_params();
        delete_collection_params.extend(list_params().into_iter().filter(|p| {
            !matches!(p.get("name").and_then(Value::as_str), Some("watch" | "allowWatchBookmarks"))
        }));
        paths.insert(
            collection.clone(),
            json!({
                "parameters": scope_params,
                "get": self.list_operation(format!("list{}{scope}{kind}", gv.ident), shared),
                "post": self.operation(
                    "post",
                    format!("create a {kind}"),
                    format!("create{}{scope}{kind}", gv.ident),
                    self.gvk,
                    write_params(false),
                    Some(body(self.kind_ref)),
                    responses(&[("200", "OK"), ("201", "Created"), ("202", "Accepted")], self.kind_ref, RESPONSE_MEDIA_TYPES),
                ),
                "delete": self.operation(
                    "deletecollection",
                    format!("delete a collection of {kind}"),
                    format!("delete{}Collection{scope}{kind}", gv.ident),
                    self.gvk,
                    delete_collection_params,
                    Some(delete_body(shared.delete_options)),
                    responses(&[("200", "OK")], shared.status, RESPONSE_MEDIA_TYPES),
                ),
            }),
        );

        // Namespaced kinds are also listed across all namespaces.
        if r.namespaced {
            paths.insert(
                format!("{}/{}", gv.prefix, r.plural),
                json!({
                    "parameters": [pretty_param()],
                    "get": self.list_operation(format!("list{}{kind}ForAllNamespaces", gv.ident), shared),
                }),
            );
        }

        // One object: read, replace, patch, delete.
        let mut item_params = vec![name_param(kind)];
        if r.namespaced {
            item_params.push(namespace_param());
        }
        item_params.push(pretty_param());
        let mut item_path = self.object_operations(
            &format!("{scope}{kind}"),
            &format!("the specified {kind}"),
            self.gvk,
            self.kind_ref,
            shared,
        );
        item_path.insert("parameters".into(), Value::Array(item_params.clone()));
        item_path.insert(
            "delete".into(),
            self.operation(
                "delete",
                format!("delete a {kind}"),
                format!("delete{}{scope}{kind}", gv.ident),
                self.gvk,
                delete_params(),
                Some(delete_body(shared.delete_options)),
                responses(&[("200", "OK"), ("202", "Accepted")], shared.status, RESPONSE_MEDIA_TYPES),
            ),
        );
        paths.insert(item.clone(), Value::Object(item_path));

        // Subresources: read, replace, patch.
        for subresource in r.subresources.iter().copied() {
            let (gvk, schema) = match subresource {
                "status" => (self.gvk, self.kind_ref.clone()),
                "scale" => {
                    let scale = schema_ref(generator.subschema_for::<autoscaling::v1::Scale>());
                    let gvk = Gvk { group: "autoscaling", version: "v1", kind: "Scale" };
                    push_kind(kinds, &scale, gvk);
                    (gvk, scale)
                }
                _ => continue,
            };
            let mut sub_path = self.object_operations(
                &format!("{scope}{kind}{}", capitalize(subresource)),
                &format!("{subresource} of the specified {kind}"),
                gvk,
                &schema,
                shared,
            );
            sub_path.insert("parameters".into(), Value::Array(item_params.clone()));
            paths.insert(format!("{item}/{subresource}"), Value::Object(sub_path));
        }
    }

    /// get, put and patch of one object (or of one of its subresources).
    fn object_operations(
        &self,
        id_suffix: &str,
        what: &str,
        gvk: Gvk<'a>,
        schema: &Value,
        shared: &Shared<'_>,
    ) -> Map<String, Value> {
        let ident = &self.gv.ident;
        let mut ops = Map::new();
        ops.insert(
            "get".into(),
            self.operation(
                "get",
                format!("read {what}"),
                format!("read{ident}{id_suffix}"),
                gvk,
                Vec::new(),
                None,
                responses(&[("200", "OK")], schema, RESPONSE_MEDIA_TYPES),
            ),
        );
        ops.insert(
            "put".into(),
            self.operation(
                "put",
                format!("replace {what}"),
                format!("replace{ident}{id_suffix}"),
                gvk,
                write_params(false),
                Some(body(schema)),
                responses(&[("200", "OK"), ("201", "Created")], schema, RESPONSE_MEDIA_TYPES),
            ),
        );
        let mut patch_body = Map::new();
        let strategic = "application/strategic-merge-patch+json";
        for media in PATCH_MEDIA_TYPES.iter().filter(|m| self.resource.strategic_patch || **m != strategic) {
            patch_body.insert((*media).to_owned(), json!({ "schema": shared.patch }));
        }
        ops.insert(
            "patch".into(),
            self.operation(
                "patch",
                format!("partially update {what}"),
                format!("patch{ident}{id_suffix}"),
                gvk,
                write_params(true),
                Some(json!({ "content": patch_body, "required": true })),
                responses(&[("200", "OK"), ("201", "Created")], schema, RESPONSE_MEDIA_TYPES),
            ),
        );
        ops
    }

    fn list_operation(&self, operation_id: String, shared: &Shared<'_>) -> Value {
        let mut responses = responses(&[("200", "OK")], self.list_ref, RESPONSE_MEDIA_TYPES);
        if let Some(content) = responses.pointer_mut("/200/content").and_then(Value::as_object_mut) {
            for media in WATCH_MEDIA_TYPES {
                content.insert((*media).to_owned(), json!({ "schema": shared.watch_event }));
            }
        }
        self.operation(
            "list",
            format!("list or watch objects of kind {}", self.resource.kind),
            operation_id,
            self.gvk,
            list_params(),
            None,
            responses,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn operation(
        &self,
        action: &str,
        description: String,
        operation_id: String,
        gvk: Gvk<'a>,
        parameters: Vec<Value>,
        request_body: Option<Value>,
        responses: Value,
    ) -> Value {
        let mut op = Map::new();
        op.insert("description".into(), description.into());
        op.insert("operationId".into(), operation_id.into());
        if !parameters.is_empty() {
            op.insert("parameters".into(), Value::Array(parameters));
        }
        if let Some(request_body) = request_body {
            op.insert("requestBody".into(), request_body);
        }
        op.insert("responses".into(), responses);
        op.insert("tags".into(), json!([self.gv.tag]));
        op.insert("x-kubernetes-action".into(), action.into());
        op.insert("x-kubernetes-group-version-kind".into(), gvk.to_value());
        Value::Object(op)
    }
}

fn body(schema: &Value) -> Value {
    json!({ "content": { "*/*": { "schema": schema } }, "required": true })
}

fn delete_body(delete_options: &Value) -> Value {
    json!({ "content": { "*/*": { "schema": delete_options } } })
}

/// `{"200": {"description": "OK", "content": {...}}, ..., "401": {"description": "Unauthorized"}}`.
fn responses(codes: &[(&str, &str)], schema: &Value, media_types: &[&str]) -> Value {
    let mut content = Map::new();
    for media in media_types {
        content.insert((*media).to_owned(), json!({ "schema": schema }));
    }
    let mut out = Map::new();
    for (code, description) in codes {
        out.insert((*code).to_owned(), json!({ "description": description, "content": content }));
    }
    out.insert("401".into(), json!({ "description": "Unauthorized" }));
    Value::Object(out)
}

fn param(location: &str, name: &str, ty: &str, description: &str) -> Value {
    let mut p = json!({ "name": name, "in": location, "description": description, "schema": { "type": ty } });
    if location == "path" {
        p["required"] = true.into();
    }
    p
}

fn name_param(kind: &str) -> Value {
    param("path", "name", "string", &format!("name of the {kind}"))
}

fn namespace_param() -> Value {
    param("path", "namespace", "string", "the namespace the object is in")
}

fn pretty_param() -> Value {
    param("query", "pretty", "string", "'true' asks for indented JSON in the response.")
}

fn dry_run_param() -> Value {
    param(
        "query",
        "dryRun",
        "string",
        "'All' runs every stage of the request without persisting anything. Any other value is rejected.",
    )
}

/// Parameters of create (POST), replace (PUT) and, with `force`, patch (PATCH).
fn write_params(patch: bool) -> Vec<Value> {
    let mut params = vec![
        dry_run_param(),
        param(
            "query",
            "fieldManager",
            "string",
            "The name of the actor making the change, recorded in managedFields. Printable characters, at \
             most 128 of them. Required for server-side apply (application/apply-patch+yaml).",
        ),
        param(
            "query",
            "fieldValidation",
            "string",
            "How the server treats unknown or duplicate fields in the request body: 'Ignore' drops them \
             silently, 'Warn' (the default) drops them and returns a Warning header for each, 'Strict' \
             fails the request with a BadRequest listing them.",
        ),
    ];
    if patch {
        params.push(param(
            "query",
            "force",
            "boolean",
            "Server-side apply only: take ownership of fields other managers own instead of failing with a \
             conflict. Must be unset for other patch types.",
        ));
    }
    params
}

fn delete_params() -> Vec<Value> {
    vec![
        dry_run_param(),
        param(
            "query",
            "gracePeriodSeconds",
            "integer",
            "Seconds to wait before the object is deleted; 0 deletes at once. Unset uses the kind's default.",
        ),
        param(
            "query",
            "ignoreStoreReadErrorWithClusterBreakingPotential",
            "boolean",
            "Delete an object that cannot be read from storage (corrupt or undecryptable), skipping \
             finalizers and preconditions. Dangerous.",
        ),
        param(
            "query",
            "orphanDependents",
            "boolean",
            "Deprecated, use propagationPolicy. true adds the 'orphan' finalizer, false removes it.",
        ),
        param(
            "query",
            "propagationPolicy",
            "string",
            "What happens to the object's dependents: 'Orphan' leaves them, 'Background' lets the garbage \
             collector delete them after the object, 'Foreground' deletes them before the object.",
        ),
    ]
}

/// Parameters of list (and watch) operations.
fn list_params() -> Vec<Value> {
    vec![
        param(
            "query",
            "allowWatchBookmarks",
            "boolean",
            "Watch only: ask for BOOKMARK events carrying the latest resourceVersion. The server may send \
             them at any time or never.",
        ),
        param(
            "query",
            "continue",
            "string",
            "The continue token of the previous page of this list. An expired token fails with 410 Gone \
             (and a fresh token to go on from the next key at the latest revision). Not for watches.",
        ),
        param("query", "fieldSelector", "string", "Only objects whose fields match this selector."),
        param("query", "labelSelector", "string", "Only objects whose labels match this selector."),
        param(
            "query",
            "limit",
            "integer",
            "At most this many objects; if more remain, the list's metadata.continue has a token for the \
             next page.",
        ),
        param(
            "query",
            "resourceVersion",
            "string",
            "The revision to read at; its meaning depends on resourceVersionMatch. Unset reads the latest \
             (quorum) state. For a watch, events after this revision.",
        ),
        param(
            "query",
            "resourceVersionMatch",
            "string",
            "How resourceVersion applies to a list: 'Exact' or 'NotOlderThan'. Needs resourceVersion set.",
        ),
        param(
            "query",
            "sendInitialEvents",
            "boolean",
            "Watch only: start with synthetic ADDED events for the current objects, then a BOOKMARK \
             annotated k8s.io/initial-events-end. Needs resourceVersionMatch=NotOlderThan.",
        ),
        param("query", "timeoutSeconds", "integer", "How long the call may take, whether it watches or not."),
        param(
            "query",
            "watch",
            "boolean",
            "Stream add, update and delete events of the matching objects instead of listing them.",
        ),
    ]
}
