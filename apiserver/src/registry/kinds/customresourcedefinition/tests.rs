use super::*;

// Expected texts are kube-apiserver's (apiextensions-apiserver's
// `pkg/apis/apiextensions/validation` and `pkg/apiserver/schema`), each
// cause written as kube renders it: `"{field}: {message}"`.

const DNS_1035: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const DNS_SUBDOMAIN: &str = r"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
/// Where a single version's (or every version's identical) schema is
/// reported: kube's v1 → internal conversion moves it to `spec.validation`.
const ROOT: &str = "spec.validation.openAPIV3Schema";

/// A small valid CRD: one version, a schema with an object `spec`.
fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}},
            }],
        },
    })
}

/// `crd` with `value` at JSON pointer `at` (missing objects on the way
/// created, an index one past the end appends, `null` removes the key).
fn with(mut crd: Value, at: &str, value: Value) -> Value {
    let (parent, key) = at.rsplit_once('/').unwrap();
    let mut node = &mut crd;
    for part in parent.split('/').skip(1) {
        node = match part.parse::<usize>() {
            Ok(i) => &mut node[i],
            Err(_) => {
                if !node.is_object() {
                    *node = json!({});
                }
                node.as_object_mut().unwrap().entry(part).or_insert(json!({}))
            }
        };
    }
    match (node, value) {
        (Value::Object(map), Value::Null) => {
            map.remove(key);
        }
        (Value::Array(list), value) => match key.parse::<usize>().unwrap() {
            i if i == list.len() => list.push(value),
            i => list[i] = value,
        },
        (node, value) => node[key] = value,
    }
    crd
}

/// [`crd`] whose only version has `schema` as its openAPIV3Schema.
fn with_schema(schema: Value) -> Value {
    with(crd(), "/spec/versions/0/schema/openAPIV3Schema", schema)
}

/// A root schema with a single property `field`.
fn with_field(field: Value) -> Value {
    with_schema(json!({"type": "object", "properties": {"field": field}}))
}

/// The causes of the strategy's refusal as `"{field}: {message}"`, checking
/// it is the 422 Invalid of kube's qualified kind for this name.
fn refusals(crd: &Value) -> Vec<String> {
    check(kind().strategy.validate(crd), crd)
}

fn check(result: Result<(), ApiError>, crd: &Value) -> Vec<String> {
    match result {
        Ok(()) => Vec::new(),
        Err(ApiError::Invalid { kind, name, causes }) => {
            assert_eq!(kind, "CustomResourceDefinition.apiextensions.k8s.io");
            assert_eq!(name, meta::name_of(crd));
            causes.iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
        }
        Err(other) => panic!("not an Invalid refusal: {other:?}"),
    }
}

/// The cause reasons (`FieldValueRequired`, ...) of a refusal.
fn reasons(crd: &Value) -> Vec<&'static str> {
    match kind().strategy.validate(crd) {
        Err(ApiError::Invalid { causes, .. }) => causes.iter().map(|c| c.reason).collect(),
        other => panic!("not an Invalid refusal: {other:?}"),
    }
}

#[test]
fn a_crd_using_every_feature_is_valid() {
    let schema = json!({
        "type": "object",
        "description": "a widget",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}},
            "spec": {
                "type": "object",
                "required": ["replicas"],
                "properties": {
                    "replicas": {"type": "integer", "minimum": 0, "default": 1},
                    "nested": {"type": "object", "properties": {"deeper": {"type": "object", "properties": {"leaf": {"type": "string", "pattern": "^[a-z]+$"}}}}},
                    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                    "anything": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": true,
                        "properties": {
                            "apiVersion": {"type": "string"},
                            "kind": {"type": "string"},
                            "metadata": {"type": "object"},
                            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        },
                    },
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name", "protocol"],
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {
                                "name": {"type": "string"},
                                "protocol": {"type": "string", "default": "TCP"},
                            },
                        },
                    },
                    "mode": {"type": "string", "enum": ["a", "b"], "allOf": [{"minLength": 1}], "not": {"pattern": "^x"}},
                },
            },
            "status": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer"},
                    "selector": {"type": "string"},
                    "conditions": {"type": "array", "items": {"type": "object", "properties": {"type": {"type": "string"}, "status": {"type": "string"}}}},
                },
            },
        },
    });
    let crd = with(
        with_schema(schema),
        "/spec/versions/0/subresources",
        json!({
            "status": {},
            "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"},
        }),
    );
    let crd = with(
        crd,
        "/spec/versions/0/additionalPrinterColumns",
        json!([
            {"name": "Replicas", "type": "integer", "format": "int32", "jsonPath": ".spec.replicas"},
            {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status", "priority": 1},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ]),
    );
    let crd = with(crd, "/spec/names/shortNames", json!(["wd"]));
    let crd = with(crd, "/spec/names/categories", json!(["all"]));
    assert_eq!(refusals(&crd), Vec::<String>::new());
    // Equally valid with defaults set as they would be on create.
    let mut defaulted = crd.clone();
    kind().strategy.set_defaults(&mut defaulted);
    assert_eq!(refusals(&defaulted), Vec::<String>::new());
}

#[test]
fn refusals_are_422_invalid_of_the_qualified_kind_with_kubes_reasons() {
    let crd = with(with(crd(), "/spec/scope", json!("Global")), "/spec/group", Value::Null);
    let err = kind().strategy.validate(&crd).unwrap_err();
    assert_eq!(err.code(), 422);
    assert_eq!(
        err.to_string(),
        r#"CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: [metadata.name: Invalid value: "widgets.example.com": must be spec.names.plural+"."+spec.group, spec.group: Required value, spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"]"#
    );
    assert_eq!(reasons(&crd), ["FieldValueInvalid", "FieldValueRequired", "FieldValueNotSupported"]);
    assert_eq!(reasons(&with_field(json!({"$ref": "#/x", "type": "string"}))), ["FieldValueForbidden"]);
}

#[test]
fn set_defaults_fill_singular_list_kind_and_conversion() {
    // kube's v1 defaults: singular is the lower-cased kind, listKind the
    // kind + "List", conversion None.
    let mut bare =
        with(with(crd(), "/spec/names/singular", Value::Null), "/spec/names/listKind", Value::Null);
    kind().strategy.set_defaults(&mut bare);
    assert_eq!(bare["spec"]["names"]["singular"], "widget");
    assert_eq!(bare["spec"]["names"]["listKind"], "WidgetList");
    assert_eq!(bare["spec"]["conversion"], json!({"strategy": "None"}));
    // What is set is kept.
    let set = with(crd(), "/spec/names/singular", json!("gadget"));
    let set = with(set, "/spec/names/listKind", json!("Widgets"));
    let webhook = json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}});
    let mut set = with(set, "/spec/conversion", webhook.clone());
    kind().strategy.set_defaults(&mut set);
    assert_eq!(set["spec"]["names"]["singular"], "gadget");
    assert_eq!(set["spec"]["names"]["listKind"], "Widgets");
    assert_eq!(set["spec"]["conversion"], webhook);
    // Nothing to default from (no kind, no spec) is left alone.
    let mut kindless = with(crd(), "/spec/names/kind", Value::Null);
    kind().strategy.set_defaults(&mut kindless);
    assert_eq!(
        kindless["spec"]["names"],
        json!({"plural": "widgets", "singular": "widget", "listKind": "WidgetList"})
    );
    let mut empty = json!({"metadata": {"name": "x"}});
    kind().strategy.set_defaults(&mut empty);
    assert_eq!(empty, json!({"metadata": {"name": "x"}}));
}

#[test]
fn set_defaults_write_integral_schema_bounds_as_integers_at_any_depth() {
    // The typed decoding reads numbers as f64; Go writes 10.0 back as 10.
    // Only the numeric keywords change; default and enum data are the
    // user's and stay as sent.
    let bounds = json!({"maximum": 10.0, "minimum": -2.0, "multipleOf": 2.0});
    let node = |extra: Value| {
        let mut node = bounds.clone();
        node.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        node
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "n": node(json!({"type": "number", "default": 4.0, "enum": [2.0, 4.0]})),
            "half": {"type": "number", "maximum": 2.5, "minimum": 0.5},
            "list": {"type": "array", "items": node(json!({"type": "integer"}))},
            "map": {"type": "object", "additionalProperties": node(json!({"type": "integer"}))},
            "either": {"x-kubernetes-int-or-string": true, "anyOf": [node(json!({"type": "integer"})), {"type": "string"}]},
            "deep": {"type": "object", "properties": {"deeper": node(json!({"type": "integer", "allOf": [{"maximum": 8.0}], "not": {"minimum": 3.0}}))}},
        },
    });
    let mut crd = with_schema(schema);
    kind().strategy.set_defaults(&mut crd);
    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
    let integral = json!({"maximum": 10, "minimum": -2, "multipleOf": 2});
    let bounds_of = |node: &Value| json!({"maximum": node["maximum"], "minimum": node["minimum"], "multipleOf": node["multipleOf"]});
    // Compare the serialized text: 10.0 and 10 are equal as serde_json values.
    let text = |v: &Value| serde_json::to_string(v).unwrap();
    for node in [
        &schema["n"],
        &schema["list"]["items"],
        &schema["map"]["additionalProperties"],
        &schema["either"]["anyOf"][0],
        &schema["deep"]["properties"]["deeper"],
    ] {
        assert_eq!(text(&bounds_of(node)), text(&integral), "{node}");
    }
    assert_eq!(text(&schema["deep"]["properties"]["deeper"]["allOf"][0]["maximum"]), "8");
    assert_eq!(text(&schema["deep"]["properties"]["deeper"]["not"]["minimum"]), "3");
    assert_eq!(text(&schema["half"]), r#"{"maximum":2.5,"minimum":0.5,"type":"number"}"#);
    assert_eq!(text(&schema["n"]["default"]), "4.0");
    assert_eq!(text(&schema["n"]["enum"]), "[2.0,4.0]");
}

#[test]
fn prepare_for_create_starts_status_with_the_storage_version_only() {
    let two = with(crd(), "/spec/versions/1", json!({"name": "v2", "served": true, "storage": false}));
    let mut crd = with(
        two,
        "/status",
        json!({"conditions": [{"type": "Established", "status": "True"}], "storedVersions": ["v0"]}),
    );
    kind().strategy.prepare_for_create(&mut crd);
    assert_eq!(crd["status"], json!({"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]}));
}

#[test]
fn prepare_for_update_adds_a_new_storage_version_once() {
    let old = with(crd(), "/status/storedVersions", json!(["v1"]));
    let mut new = with(old.clone(), "/spec/versions/0/storage", json!(false));
    new = with(new, "/spec/versions/1", json!({"name": "v2", "served": true, "storage": true}));
    kind().strategy.prepare_for_update(&mut new, &old);
    assert_eq!(new["status"]["storedVersions"], json!(["v1", "v2"]));
    // Already there: not repeated.
    let again = new.clone();
    kind().strategy.prepare_for_update(&mut new, &again);
    assert_eq!(new["status"]["storedVersions"], json!(["v1", "v2"]));
    // No storedVersions yet: the storage version starts them.
    let mut bare = crd();
    kind().strategy.prepare_for_update(&mut bare, &crd());
    assert_eq!(bare["status"]["storedVersions"], json!(["v1"]));
}

#[test]
fn prepare_for_delete_adds_the_cleanup_finalizer_once_and_a_terminating_condition() {
    let mut deleted = with(crd(), "/metadata/finalizers", json!(["example.com/keep"]));
    kind().strategy.prepare_for_delete(&mut deleted);
    kind().strategy.prepare_for_delete(&mut deleted);
    assert_eq!(
        deleted["metadata"]["finalizers"],
        json!(["example.com/keep", "customresourcecleanup.apiextensions.k8s.io"])
    );
    let conditions = deleted["status"]["conditions"].as_array().unwrap();
    assert_eq!(conditions.len(), 1);
    let terminating = &conditions[0];
    assert_eq!(terminating["type"], "Terminating");
    assert_eq!(terminating["status"], "True");
    assert_eq!(terminating["reason"], "InstanceDeletionPending");
    assert_eq!(
        terminating["message"],
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
    );
    assert!(terminating["lastTransitionTime"].is_string());
    assert!(condition_is_true(&deleted, "Terminating"));
    // Without finalizers yet, the list is created.
    let mut bare = crd();
    kind().strategy.prepare_for_delete(&mut bare);
    assert_eq!(bare["metadata"]["finalizers"], json!(["customresourcecleanup.apiextensions.k8s.io"]));
}

#[test]
fn group_and_plural_never_change_scope_and_kind_once_established() {
    let update = |new: &Value, old: &Value| check(kind().strategy.validate_update(new, old), new);
    let old = crd();
    // The same CRD, or any other change, is fine.
    assert_eq!(update(&old, &old), Vec::<String>::new());
    assert_eq!(
        update(&with(old.clone(), "/spec/names/shortNames", json!(["wd"])), &old),
        Vec::<String>::new()
    );
    // Renamed group (the name following it so that only immutability is
    // in question).
    let regrouped = with(
        with(old.clone(), "/spec/group", json!("other.example.com")),
        "/metadata/name",
        json!("widgets.other.example.com"),
    );
    assert_eq!(
        update(&regrouped, &old),
        [r#"spec.group: Invalid value: "other.example.com": field is immutable"#]
    );
    let replural = with(
        with(old.clone(), "/spec/names/plural", json!("gadgets")),
        "/metadata/name",
        json!("gadgets.example.com"),
    );
    assert_eq!(
        update(&replural, &old),
        [r#"spec.names.plural: Invalid value: "gadgets": field is immutable"#]
    );
    // Scope and kind may change until the CRD is established...
    let moved = with(with(old.clone(), "/spec/scope", json!("Cluster")), "/spec/names/kind", json!("Gadget"));
    assert_eq!(update(&moved, &old), Vec::<String>::new());
    let not_yet =
        with(old.clone(), "/status/conditions", json!([{"type": "Established", "status": "False"}]));
    assert_eq!(update(&moved, &not_yet), Vec::<String>::new());
    // ...but not after.
    let established =
        with(old.clone(), "/status/conditions", json!([{"type": "Established", "status": "True"}]));
    assert_eq!(
        update(&moved, &established),
        [
            r#"spec.scope: Invalid value: "Cluster": field is immutable"#,
            r#"spec.names.kind: Invalid value: "Gadget": field is immutable"#,
        ]
    );
    // The create checks still apply on update, before immutability.
    let broken = with(regrouped, "/spec/scope", Value::Null);
    assert_eq!(
        update(&broken, &old),
        [
            "spec.scope: Required value",
            r#"spec.group: Invalid value: "other.example.com": field is immutable"#
        ]
    );
}

#[test]
fn the_name_must_be_plural_dot_group() {
    let crd = with(crd(), "/metadata/name", json!("gadgets.example.com"));
    assert_eq!(
        refusals(&crd),
        [r#"metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group"#]
    );
}

#[test]
fn the_group_is_required_and_a_dns_subdomain_with_a_dot() {
    // Renaming the CRD to match, so that only the group is in question.
    let grouped = |group: &str| {
        with(with(crd(), "/spec/group", json!(group)), "/metadata/name", json!(format!("widgets.{group}")))
    };
    let missing = with(grouped(""), "/metadata/name", json!("widgets."));
    assert_eq!(refusals(&missing), ["spec.group: Required value"]);
    // (The name's own DNS checks are the generic metadata validation's.)
    assert_eq!(
        refusals(&grouped("Example.com")),
        [format!(r#"spec.group: Invalid value: "Example.com": {DNS_SUBDOMAIN}"#)]
    );
    assert_eq!(
        refusals(&grouped("example")),
        [r#"spec.group: Invalid value: "example": should be a domain with at least one dot"#]
    );
}

#[test]
fn the_scope_is_required_and_cluster_or_namespaced() {
    assert_eq!(refusals(&with(crd(), "/spec/scope", Value::Null)), ["spec.scope: Required value"]);
    assert_eq!(
        refusals(&with(crd(), "/spec/scope", json!("Global"))),
        [r#"spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced""#]
    );
    assert_eq!(refusals(&with(crd(), "/spec/scope", json!("Cluster"))), Vec::<String>::new());
}

#[test]
fn names_are_required_and_dns_1035_labels_kinds_in_mixed_case() {
    let crd = with(crd(), "/spec/names", json!({}));
    let crd = with(crd, "/metadata/name", json!(".example.com"));
    assert_eq!(
        refusals(&crd),
        [
            "spec.names.plural: Required value",
            "spec.names.singular: Required value",
            "spec.names.kind: Required value",
            "spec.names.listKind: Required value",
        ]
    );
    let named = |names: Value| {
        let plural = names["plural"].as_str().unwrap().to_string();
        with(
            with(self::crd(), "/spec/names", names),
            "/metadata/name",
            json!(format!("{plural}.example.com")),
        )
    };
    let bad =
        named(json!({"plural": "Foos", "singular": "foo!", "kind": "My_Kind", "listKind": "My_KindList"}));
    assert_eq!(
        refusals(&bad),
        [
            format!(r#"spec.names.plural: Invalid value: "Foos": {DNS_1035}"#),
            format!(r#"spec.names.singular: Invalid value: "foo!": {DNS_1035}"#),
            format!(
                r#"spec.names.kind: Invalid value: "My_Kind": may have mixed case, but should otherwise match: {DNS_1035}"#
            ),
            format!(
                r#"spec.names.listKind: Invalid value: "My_KindList": may have mixed case, but should otherwise match: {DNS_1035}"#
            ),
        ]
    );
    // Mixed case alone is fine for kinds; the same kind and listKind is not.
    let same = named(json!({"plural": "foos", "singular": "foo", "kind": "FooBar", "listKind": "FooBar"}));
    assert_eq!(
        refusals(&same),
        [r#"spec.names.listKind: Invalid value: "FooBar": kind and listKind may not be the same"#]
    );
    let long = "a".repeat(64);
    let too_long = named(json!({"plural": "foos", "singular": long, "kind": "Foo", "listKind": "FooList"}));
    assert_eq!(
        refusals(&too_long),
        [format!(r#"spec.names.singular: Invalid value: "{long}": must be no more than 63 characters"#)]
    );
}

#[test]
fn short_names_and_categories_are_dns_1035_labels() {
    let crd = with(crd(), "/spec/names/shortNames", json!(["wd", "W-D", "ok"]));
    let crd = with(crd, "/spec/names/categories", json!(["all", "my_things"]));
    assert_eq!(
        refusals(&crd),
        [
            format!(r#"spec.names.shortNames[1]: Invalid value: "W-D": {DNS_1035}"#),
            format!(r#"spec.names.categories[1]: Invalid value: "my_things": {DNS_1035}"#),
        ]
    );
}

/// A second version `v2` of [`crd`], its schema the same.
fn two_versions(v2: Value) -> Value {
    let first = crd()["spec"]["versions"][0].clone();
    let mut second = first.clone();
    second.as_object_mut().unwrap().extend(v2.as_object().unwrap().clone());
    with(crd(), "/spec/versions", json!([first, second]))
}

/// How kube prints a version in `spec.versions` errors: its internal
/// type as JSON, Go field names in declared order, the shared schema moved
/// out (so null).
fn shown(name: &str, storage: bool) -> String {
    format!(
        r#"{{"Name":"{name}","Served":true,"Storage":{storage},"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}}"#
    )
}

#[test]
fn versions_have_unique_dns_1035_names_exactly_one_storage_and_a_schema() {
    let duplicate = two_versions(json!({"name": "v1", "storage": false}));
    assert_eq!(
        refusals(&duplicate),
        [format!(
            "spec.versions: Invalid value: [{},{}]: must contain unique version names",
            shown("v1", true),
            shown("v1", false)
        )]
    );
    let two_storage = two_versions(json!({"name": "v2"}));
    assert_eq!(
        refusals(&two_storage),
        [format!(
            "spec.versions: Invalid value: [{},{}]: must have exactly one version marked as storage version",
            shown("v1", true),
            shown("v2", true)
        )]
    );
    let no_storage = with(crd(), "/spec/versions/0/storage", json!(false));
    assert_eq!(
        refusals(&no_storage),
        [format!(
            "spec.versions: Invalid value: [{}]: must have exactly one version marked as storage version",
            shown("v1", false)
        )]
    );
    assert_eq!(
        refusals(&with(crd(), "/spec/versions/0/name", json!("V1"))),
        [format!(r#"spec.versions[0].name: Invalid value: "V1": {DNS_1035}"#)]
    );
    // kube lists every missing schema first, then each version's name.
    let schemaless = two_versions(json!({"name": "2", "storage": false, "schema": null}));
    let schemaless = with(schemaless, "/spec/versions/0/schema", Value::Null);
    assert_eq!(
        refusals(&schemaless),
        [
            "spec.versions[0].schema.openAPIV3Schema: Required value".to_string(),
            "spec.versions[1].schema.openAPIV3Schema: Required value".to_string(),
            format!(r#"spec.versions[1].name: Invalid value: "2": {DNS_1035}"#),
        ]
    );
}

#[test]
fn the_root_of_a_schema_is_an_object_with_a_type() {
    assert_eq!(
        refusals(&with_schema(json!({"properties": {"spec": {"type": "object"}}}))),
        [format!("{ROOT}.type: Required value: must not be empty at the root")]
    );
    // Sorted by their text, as kube sorts structural errors.
    assert_eq!(
        refusals(&with_schema(json!({"type": "array"}))),
        [
            format!("{ROOT}.items: Required value: must be specified"),
            format!(r#"{ROOT}.type: Invalid value: "array": must be object at the root"#),
        ]
    );
    assert_eq!(
        refusals(&with_schema(json!({"type": "object", "additionalProperties": {"type": "string"}}))),
        [format!("{ROOT}.additionalProperties: Forbidden: must not be used at the root")]
    );
    assert_eq!(
        refusals(&with_schema(json!({"type": "object", "nullable": true}))),
        [format!("{ROOT}.nullable: Forbidden: nullable cannot be true at the root")]
    );
}

#[test]
fn every_field_and_array_item_has_a_type_and_arrays_have_items() {
    assert_eq!(
        refusals(&with_field(json!({"description": "untyped"}))),
        [format!(
            "{ROOT}.properties[field].type: Required value: must not be empty for specified object fields"
        )]
    );
    assert_eq!(
        refusals(&with_field(json!({"type": "array"}))),
        [format!("{ROOT}.properties[field].items: Required value: must be specified")]
    );
    assert_eq!(
        refusals(&with_field(json!({"type": "array", "items": {"minLength": 1}}))),
        [format!(
            "{ROOT}.properties[field].items.type: Required value: must not be empty for specified array items"
        )]
    );
    assert_eq!(
        refusals(&with_field(json!({"type": "object", "additionalProperties": {"maxLength": 3}}))),
        [format!(
            "{ROOT}.properties[field].additionalProperties.type: Required value: must not be empty for specified object fields"
        )]
    );
}

#[test]
fn root_metadata_kind_and_api_version_are_the_servers() {
    let root = |properties: Value| with_schema(json!({"type": "object", "properties": properties}));
    // name and generateName may be constrained; nothing else.
    let names = json!({"metadata": {"type": "object", "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}}});
    assert_eq!(refusals(&root(names)), Vec::<String>::new());
    let labels = json!({"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}});
    let why =
        "must not specify anything other than name and generateName, but metadata is implicitly specified";
    assert_eq!(refusals(&root(labels)), [format!("{ROOT}.properties[metadata]: Forbidden: {why}")]);
    let described = json!({"metadata": {"type": "object", "description": "mine"}});
    assert_eq!(refusals(&root(described)), [format!("{ROOT}.properties[metadata]: Forbidden: {why}")]);
    assert_eq!(
        refusals(&root(json!({"metadata": {"type": "string"}}))),
        [format!(r#"{ROOT}.properties[metadata].type: Invalid value: "string": must be object"#)]
    );
    assert_eq!(
        refusals(&root(json!({"kind": {"type": "integer"}, "apiVersion": {"type": "boolean"}}))),
        [
            format!(r#"{ROOT}.properties[apiVersion].type: Invalid value: "boolean": must be string"#),
            format!(r#"{ROOT}.properties[kind].type: Invalid value: "integer": must be string"#),
        ]
    );
    // Deeper down, kind and metadata are ordinary fields.
    let nested = json!({"spec": {"type": "object", "properties": {"kind": {"type": "integer"}, "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}});
    assert_eq!(refusals(&root(nested)), Vec::<String>::new());
}

#[test]
fn junctors_only_constrain_values() {
    assert_eq!(
        refusals(&with_field(
            json!({"type": "string", "anyOf": [{"type": "string", "maxLength": 3}, {"minLength": 5}]})
        )),
        [format!("{ROOT}.properties[field].anyOf[0].type: Forbidden: must be empty to be structural")]
    );
    assert_eq!(
        refusals(&with_field(json!({"type": "string", "allOf": [{"default": "x"}]}))),
        [format!("{ROOT}.properties[field].allOf[0].default: Forbidden: must be undefined to be structural")]
    );
    assert_eq!(
        refusals(&with_field(
            json!({"type": "object", "oneOf": [{"description": "a", "properties": {"metadata": {"minProperties": 1}}}]})
        )),
        [
            format!(
                "{ROOT}.properties[field].oneOf[0].description: Forbidden: must be empty to be structural"
            ),
            format!(
                "{ROOT}.properties[field].oneOf[0].properties[metadata]: Forbidden: must not be specified in a nested context"
            ),
        ]
    );
    assert_eq!(
        refusals(&with_field(
            json!({"type": "string", "not": {"x-kubernetes-preserve-unknown-fields": true}})
        )),
        [format!(
            "{ROOT}.properties[field].not.x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural"
        )]
    );
    assert_eq!(
        refusals(&with_field(
            json!({"type": "array", "items": {"type": "string"}, "allOf": [{"x-kubernetes-list-type": "atomic"}]})
        )),
        // The OpenAPI checks also look into allOf: a list type needs a type.
        [
            format!(
                "{ROOT}.properties[field].allOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural"
            ),
            format!(
                "{ROOT}.properties[field].allOf[0].type: Required value: must be array if x-kubernetes-list-type is specified"
            ),
        ]
    );
    // int-or-string's own patterns are the exception.
    let int_or_string = json!([{"type": "integer"}, {"type": "string"}]);
    assert_eq!(
        refusals(&with_field(json!({"x-kubernetes-int-or-string": true, "anyOf": int_or_string}))),
        Vec::<String>::new()
    );
    assert_eq!(
        refusals(&with_field(
            json!({"x-kubernetes-int-or-string": true, "allOf": [{"anyOf": int_or_string}, {"pattern": "^[0-9]+%?$"}]})
        )),
        Vec::<String>::new()
    );
}

#[test]
fn kubernetes_extensions_go_together_as_kube_requires() {
    assert_eq!(
        refusals(&with_field(
            json!({"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true})
        )),
        [format!(
            "{ROOT}.properties[field].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"
        )]
    );
    assert_eq!(
        refusals(&with_field(json!({"type": "object", "x-kubernetes-embedded-resource": true}))),
        [format!(
            "{ROOT}.properties[field].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
        )]
    );
    // Embedded and preserving: no properties needed.
    assert_eq!(
        refusals(&with_field(
            json!({"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true})
        )),
        Vec::<String>::new()
    );
    assert_eq!(
        refusals(&with_field(
            json!({"x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true})
        )),
        [format!(
            "{ROOT}.properties[field].type: Required value: must be object if x-kubernetes-embedded-resource is true"
        )]
    );
    // An embedded resource's kind is a string, as at the root.
    assert_eq!(
        refusals(&with_field(
            json!({"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"kind": {"type": "integer"}}})
        )),
        [format!(
            r#"{ROOT}.properties[field].properties[kind].type: Invalid value: "integer": must be string"#
        )]
    );
}

#[test]
fn openapi_keywords_kube_does_not_support_are_refused() {
    assert_eq!(
        refusals(&with_field(json!({"type": "foo"}))),
        [format!(
            r#"{ROOT}.properties[field].type: Unsupported value: "foo": supported values: "array", "boolean", "integer", "number", "object", "string""#
        )]
    );
    // `null` is not a type kube knows, and it says what to use instead.
    assert_eq!(
        refusals(&with_field(json!({"type": "null"}))),
        [
            format!(
                r#"{ROOT}.properties[field].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string""#
            ),
            format!(
                "{ROOT}.properties[field].type: Forbidden: type cannot be set to null, use nullable as an alternative"
            ),
        ]
    );
    // kube cannot build a structural schema with $ref in it, so only the
    // keyword is named (not the missing type).
    assert_eq!(
        refusals(&with_field(json!({"$ref": "#/definitions/thing"}))),
        [format!("{ROOT}.properties[field].$ref: Forbidden: $ref is not supported")]
    );
    assert_eq!(
        refusals(&with_field(json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}))),
        [format!(
            "{ROOT}.properties[field].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
        )]
    );
    assert_eq!(
        refusals(&with_field(
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}})
        )),
        [format!(
            "{ROOT}.properties[field].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
        )]
    );
    // additionalProperties: true adds nothing to properties, so is allowed.
    assert_eq!(
        refusals(&with_field(
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true})
        )),
        Vec::<String>::new()
    );
    assert_eq!(
        refusals(&with_field(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": false}))),
        [format!(
            "{ROOT}.properties[field].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"
        )]
    );
    assert_eq!(
        refusals(&with_field(json!({"type": "array", "items": [{"type": "string"}]}))),
        [format!(
            "{ROOT}.properties[field].items: Forbidden: items must be a schema object and not an array"
        )]
    );
    assert_eq!(
        refusals(&with_field(json!({"type": "object", "patternProperties": {"^a": {"type": "string"}}}))),
        [format!(
            "{ROOT}.properties[field].patternProperties: Forbidden: patternProperties is not supported"
        )]
    );
}

#[test]
fn list_types_are_known_and_map_lists_have_keys() {
    let items = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    assert_eq!(
        refusals(&with_field(json!({"type": "array", "x-kubernetes-list-type": "map", "items": items}))),
        [format!(
            "{ROOT}.properties[field].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"
        )]
    );
    assert_eq!(
        refusals(&with_field(
            json!({"type": "array", "x-kubernetes-list-type": "bag", "items": {"type": "string"}})
        )),
        [format!(
            r#"{ROOT}.properties[field].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map""#
        )]
    );
    assert_eq!(
        refusals(&with_field(json!({"type": "object", "x-kubernetes-list-type": "set"}))),
        [format!(
            r#"{ROOT}.properties[field].type: Invalid value: "object": must be array if x-kubernetes-list-type is specified"#
        )]
    );
    // A key must be a property, and required or defaulted.
    let optional = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    assert_eq!(
        refusals(&with_field(
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": optional})
        )),
        [format!(
            "{ROOT}.properties[field].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
        )]
    );
    assert_eq!(
        refusals(&with_field(
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"], "items": items})
        )),
        [format!(
            r#"{ROOT}.properties[field].x-kubernetes-list-map-keys: Invalid value: ["id"]: entries must all be names of item properties"#
        )]
    );
    assert_eq!(
        refusals(&with_field(
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": {"type": "string"}})
        )),
        [format!(
            r#"{ROOT}.properties[field].items.type: Invalid value: "string": must be object if parent array's x-kubernetes-list-type is map"#
        )]
    );
    // Untyped items: the structural error first, then the map list's (an
    // absent type shown as "", as Go prints its empty string).
    let untyped = json!({"properties": {"name": {"type": "string"}}, "required": ["name"]});
    assert_eq!(
        refusals(&with_field(
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": untyped})
        )),
        [
            format!(
                "{ROOT}.properties[field].items.type: Required value: must not be empty for specified array items"
            ),
            format!(
                r#"{ROOT}.properties[field].items.type: Invalid value: "": must be object if parent array's x-kubernetes-list-type is map"#
            ),
        ]
    );
}

/// [`crd`] with these printer columns.
fn with_columns(columns: Value) -> Value {
    with(crd(), "/spec/versions/0/additionalPrinterColumns", columns)
}

#[test]
fn printer_columns_need_a_name_a_known_type_and_format_and_a_dotted_path() {
    let at = "spec.additionalPrinterColumns[0]";
    assert_eq!(
        refusals(&with_columns(json!([{}]))),
        [
            format!("{at}.name: Required value"),
            format!("{at}.type: Required value: must be one of boolean,date,integer,number,string"),
            format!("{at}.JSONPath: Required value"),
        ]
    );
    assert_eq!(
        refusals(&with_columns(
            json!([{"name": "A", "type": "int", "format": "uint8", "jsonPath": "spec.a"}])
        )),
        [
            format!(r#"{at}.type: Invalid value: "int": must be one of boolean,date,integer,number,string"#),
            format!(
                r#"{at}.format: Invalid value: "uint8": must be one of byte,date,date-time,double,float,int32,int64,password"#
            ),
            format!(r#"{at}.JSONPath: Invalid value: "spec.a": must be a simple json path starting with ."#),
        ]
    );
    // Each column is checked, at its own index.
    let good = json!({"name": "A", "type": "string", "jsonPath": ".spec.a"});
    assert_eq!(
        refusals(&with_columns(json!([good, {"name": "B", "type": "string", "jsonPath": "x"}]))),
        [
            r#"spec.additionalPrinterColumns[1].JSONPath: Invalid value: "x": must be a simple json path starting with ."#
        ]
    );
}

/// [`crd`] with this scale subresource.
fn with_scale(scale: Value) -> Value {
    with(crd(), "/spec/versions/0/subresources", json!({"scale": scale}))
}

#[test]
fn scale_paths_are_required_and_under_spec_and_status() {
    let at = "spec.subresources.scale";
    assert_eq!(
        refusals(&with_scale(json!({}))),
        [
            format!("{at}.specReplicasPath: Required value"),
            format!("{at}.statusReplicasPath: Required value")
        ]
    );
    assert_eq!(
        refusals(&with_scale(
            json!({"specReplicasPath": ".status.replicas", "statusReplicasPath": ".spec.replicas", "labelSelectorPath": ".metadata.labels"})
        )),
        [
            format!(
                r#"{at}.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec"#
            ),
            format!(
                r#"{at}.statusReplicasPath: Invalid value: ".spec.replicas": should be a json path under .status"#
            ),
            format!(
                r#"{at}.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status"#
            ),
        ]
    );
    assert_eq!(
        refusals(&with_scale(
            json!({"specReplicasPath": "spec.replicas", "statusReplicasPath": ".status.replicas"})
        )),
        [format!(
            r#"{at}.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path starting with ."#
        )]
    );
}

#[test]
fn protected_groups_need_the_api_approval_annotation() {
    let protected =
        with(with(crd(), "/spec/group", json!("foo.k8s.io")), "/metadata/name", json!("widgets.foo.k8s.io"));
    assert_eq!(
        refusals(&protected),
        [
            r#"metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111"#
        ]
    );
    let approved = with(
        protected.clone(),
        "/metadata/annotations",
        json!({"api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/78458"}),
    );
    assert_eq!(refusals(&approved), Vec::<String>::new());
    let bypassed = with(
        protected.clone(),
        "/metadata/annotations",
        json!({"api-approved.kubernetes.io": "unapproved, testing"}),
    );
    assert_eq!(refusals(&bypassed), Vec::<String>::new());
    // kube checks the approval before spec.preserveUnknownFields.
    let both = with(protected, "/spec/preserveUnknownFields", json!(true));
    let refused = refusals(&both);
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert!(refused[0].starts_with("metadata.annotations[api-approved.kubernetes.io]: Required value"));
    assert!(refused[1].starts_with("spec.preserveUnknownFields: Invalid value: true"));
    // Only k8s.io and kubernetes.io themselves and their subdomains.
    let lookalike =
        with(with(crd(), "/spec/group", json!("notk8s.io")), "/metadata/name", json!("widgets.notk8s.io"));
    assert_eq!(refusals(&lookalike), Vec::<String>::new());
}

#[test]
fn schema_errors_are_reported_where_kube_moved_the_schema() {
    let untyped = json!({"type": "object", "properties": {"spec": {"description": "untyped"}}});
    let missing_type = "properties[spec].type: Required value: must not be empty for specified object fields";
    // Identical schemas: once, at the top of the spec.
    let same = with(
        two_versions(json!({"name": "v2", "storage": false})),
        "/spec/versions/0/schema/openAPIV3Schema",
        untyped.clone(),
    );
    let same = with(same, "/spec/versions/1/schema/openAPIV3Schema", untyped.clone());
    assert_eq!(refusals(&same), [format!("{ROOT}.{missing_type}")]);
    // Differing schemas: under the version that has the problem.
    let differ = with(
        two_versions(json!({"name": "v2", "storage": false})),
        "/spec/versions/1/schema/openAPIV3Schema",
        untyped.clone(),
    );
    assert_eq!(refusals(&differ), [format!("spec.versions[1].schema.openAPIV3Schema.{missing_type}")]);
    // Same for columns and subresources.
    let column = json!([{"name": "A", "type": "string", "jsonPath": "a"}]);
    let differ = with(
        two_versions(json!({"name": "v2", "storage": false})),
        "/spec/versions/0/additionalPrinterColumns",
        column,
    );
    assert_eq!(
        refusals(&differ),
        [
            r#"spec.versions[0].additionalPrinterColumns[0].JSONPath: Invalid value: "a": must be a simple json path starting with ."#
        ]
    );
    let differ = with(
        two_versions(json!({"name": "v2", "storage": false})),
        "/spec/versions/1/subresources",
        json!({"scale": {}}),
    );
    assert_eq!(
        refusals(&differ),
        [
            "spec.versions[1].subresources.scale.specReplicasPath: Required value",
            "spec.versions[1].subresources.scale.statusReplicasPath: Required value",
        ]
    );
    // Per-version problems come with their version, before the checks of
    // all versions together.
    let both = with(differ, "/spec/versions/1/storage", json!(true));
    let refused = refusals(&both);
    assert_eq!(refused.len(), 3);
    assert!(refused[2].starts_with("spec.versions: Invalid value: ["), "{refused:?}");
}

#[test]
fn with_a_status_subresource_the_root_type_must_be_object() {
    let crd = with_schema(json!({"type": "array", "items": {"type": "string"}}));
    let crd = with(crd, "/spec/versions/0/subresources", json!({"status": {}}));
    assert_eq!(
        refusals(&crd),
        [
            format!(
                r#"{ROOT}.type: Invalid value: "array": only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#
            ),
            format!(r#"{ROOT}.type: Invalid value: "array": must be object at the root"#),
        ]
    );
}

#[test]
fn preserve_unknown_fields_true_is_refused_in_v1() {
    let crd = with(crd(), "/spec/preserveUnknownFields", json!(true));
    assert_eq!(
        refusals(&crd),
        [
            "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
        ]
    );
}

/// [`crd`] with this `spec.conversion`.
fn with_conversion(conversion: Value) -> Value {
    with(crd(), "/spec/conversion", conversion)
}

fn webhook(client_config: Value) -> Value {
    json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": client_config}})
}

#[test]
fn conversion_strategies_and_their_webhooks_are_checked_as_kube_checks_them() {
    let at = "spec.conversion";
    assert_eq!(refusals(&with_conversion(json!({"strategy": "None"}))), Vec::<String>::new());
    assert_eq!(
        refusals(&with_conversion(webhook(json!({"url": "https://hooks.example.com/convert"})))),
        Vec::<String>::new()
    );
    assert_eq!(refusals(&with_conversion(json!({}))), [format!("{at}.strategy: Required value")]);
    assert_eq!(
        refusals(&with_conversion(json!({"strategy": "Magic"}))),
        [format!(r#"{at}.strategy: Unsupported value: "Magic": supported values: "None", "Webhook""#)]
    );
    // Kube's internal field names, both problems at once.
    assert_eq!(
        refusals(&with_conversion(json!({"strategy": "Webhook"}))),
        [
            format!("{at}.webhookClientConfig: Required value: required when strategy is set to Webhook"),
            format!("{at}.conversionReviewVersions: Required value"),
        ]
    );
    assert_eq!(
        refusals(&with_conversion(
            json!({"strategy": "None", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://h"}}})
        )),
        [
            format!(
                "{at}.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook"
            ),
            format!(
                "{at}.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook"
            ),
        ]
    );
    let cc = format!("{at}.webhookClientConfig");
    assert_eq!(
        refusals(&with_conversion(webhook(json!({})))),
        [format!("{cc}: Required value: exactly one of url or service is required")]
    );
    assert_eq!(
        refusals(&with_conversion(webhook(json!({"url": "http://u:p@h/x?a=b#f"})))),
        [
            format!(
                r#"{cc}.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]"#
            ),
            format!(r#"{cc}.url: Invalid value: "u:p": user information is not permitted in the URL"#),
            format!(r#"{cc}.url: Invalid value: "f": fragments are not permitted in the URL"#),
            format!(r#"{cc}.url: Invalid value: "a=b": query parameters are not permitted in the URL"#),
        ]
    );
    // kube swaps the Service's name and namespace when it checks them.
    assert_eq!(
        refusals(&with_conversion(webhook(
            json!({"service": {"name": "hooks", "port": 0, "path": "/a//b"}})
        ))),
        [
            format!("{cc}.service.name: Required value"),
            format!(
                "{cc}.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"
            ),
            format!(r#"{cc}.service.path: Invalid value: "/a//b": segment[1] may not be empty"#),
        ]
    );
    let versions = |v: Value| {
        let mut conversion = webhook(json!({"url": "https://h"}));
        conversion["webhook"]["conversionReviewVersions"] = v;
        refusals(&with_conversion(conversion))
    };
    let rv = format!("{at}.conversionReviewVersions");
    assert_eq!(versions(json!([])), [format!("{rv}: Required value")]);
    assert_eq!(versions(json!(["v2", "v1beta1"])), Vec::<String>::new(), "unknown ones beside a known one");
    assert_eq!(
        versions(json!(["v2", "v2", "V3"])),
        [
            format!(r#"{rv}[1]: Invalid value: "v2": duplicate version"#),
            format!(r#"{rv}[2]: Invalid value: "V3": {DNS_1035}"#),
            format!(r#"{rv}: Invalid value: ["v2","v2","V3"]: must include at least one of v1, v1beta1"#),
        ]
    );
}

#[test]
fn an_update_keeps_what_kube_lets_an_update_keep() {
    let update = |new: &Value, old: &Value| check(kind().strategy.validate_update(new, old), new);
    let mut unknown = webhook(json!({"url": "https://h", "caBundle": "bm90IHBlbQ=="}));
    unknown["webhook"]["conversionReviewVersions"] = json!(["v2"]);
    let old = with_conversion(unknown);
    // Review versions this server never spoke, and a caBundle that is not
    // PEM on a CRD that is not established: kept.
    assert_eq!(update(&old, &old), Vec::<String>::new());
    // Once established with no bundle, a bundle must be PEM; a create
    // never checks it.
    let mut established = with_conversion(webhook(json!({"url": "https://h"})));
    established["status"]["conditions"] = json!([{"type": "Established", "status": "True"}]);
    let bad_bundle =
        with(established.clone(), "/spec/conversion/webhook/clientConfig/caBundle", json!("bm90IHBlbQ=="));
    assert_eq!(
        update(&bad_bundle, &established),
        [
            r#"spec.conversion.webhookClientConfig.caBundle: Invalid value: "bm90IHBlbQ==": unable to load root certificates: unable to parse bytes as PEM block"#
        ]
    );
    assert_eq!(refusals(&bad_bundle), Vec::<String>::new());
    // A Service gets kube's default port.
    let mut defaulted = with_conversion(webhook(json!({"service": {"namespace": "ns", "name": "hooks"}})));
    kind().strategy.set_defaults(&mut defaulted);
    assert_eq!(defaulted["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"], 443);
}
