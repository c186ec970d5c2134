use serde_json::json;

use super::*;
use crate::admission::Lookups;

fn caller() -> Arc<Caller> {
    Arc::new(Caller::new(&Lookups::default()))
}

fn crd(conversion: Value) -> Value {
    json!({"spec": {"group": "example.com", "conversion": conversion,
        "versions": [{"name": "v1beta1"}, {"name": "v1"}]}})
}

fn thing(version: &str) -> Value {
    json!({"apiVersion": format!("example.com/{version}"), "kind": "Thing",
           "metadata": {"name": "t", "namespace": "ns", "uid": "u1", "generation": 3, "labels": {"a": "1"}},
           "spec": {"size": 2}})
}

fn reply(response: Value) -> Vec<u8> {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": response})
        .to_string()
        .into_bytes()
}

#[tokio::test]
async fn none_changes_the_version_only_and_knows_the_crds_versions() {
    let none = Converter::of_crd(&crd(json!({"strategy": "None"})), &caller());
    let converted = none.convert(vec![thing("v1beta1"), thing("v1")], "example.com/v1").await.unwrap();
    assert_eq!(converted, [thing("v1"), thing("v1")]);
    assert_eq!(
        none.convert(vec![thing("v1")], "example.com/v2").await.unwrap_err(),
        "request to convert CR to an invalid group/version: example.com/v2"
    );
    // An object stored in a version since removed stays readable.
    assert_eq!(none.convert(vec![thing("v0")], "example.com/v1").await.unwrap(), [thing("v1")]);
}

#[tokio::test]
async fn a_webhook_is_not_called_for_objects_already_in_the_version_asked_for() {
    // Nothing listens on port 1: a call would fail.
    let hook = json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
        "clientConfig": {"url": "https://127.0.0.1:1/convert"}}});
    let webhook = Converter::of_crd(&crd(hook.clone()), &caller());
    assert_eq!(webhook.convert(vec![thing("v1")], "example.com/v1").await.unwrap(), [thing("v1")]);
    let failed = webhook.convert(vec![thing("v1beta1")], "example.com/v1").await.unwrap_err();
    assert!(
        failed.starts_with(
            "conversion webhook for example.com/v1beta1, Kind=Thing failed: Post \"https://127.0.0.1:1/convert?timeout=30s\": dial tcp 127.0.0.1:1: "
        ),
        "{failed}"
    );
    // No review version this server speaks: every conversion fails.
    let mut unknown = hook;
    unknown["webhook"]["conversionReviewVersions"] = json!(["v2"]);
    let unknown = Converter::of_crd(&crd(unknown), &caller());
    assert_eq!(
        unknown.convert(vec![thing("v1")], "example.com/v1").await.unwrap_err(),
        "no supported conversion review versions"
    );
}

#[test]
fn answers_are_checked_as_kube_checks_them() {
    let ok = json!({"uid": "u", "result": {"status": "Success"}, "convertedObjects": [thing("v1")]});
    assert_eq!(converted_objects("v1", "u", &reply(ok.clone())).unwrap(), [thing("v1")]);
    let untyped = serde_json::to_vec(&json!({"response": ok})).unwrap();
    assert_eq!(
        converted_objects("v1", "u", &untyped).unwrap_err(),
        "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got /, Kind="
    );
    assert_eq!(
        converted_objects("v1beta1", "other", &untyped).unwrap(),
        [thing("v1")],
        "v1beta1 checks neither"
    );
    assert_eq!(converted_objects("v1", "u", &reply(Value::Null)).unwrap_err(), "no response provided");
    assert_eq!(
        converted_objects("v1", "x", &reply(ok.clone())).unwrap_err(),
        "expected response.uid=\"x\", got \"u\""
    );
    let refused = json!({"uid": "u", "result": {"status": "Failure", "message": "cannot convert size"}});
    assert_eq!(converted_objects("v1", "u", &reply(refused)).unwrap_err(), "cannot convert size");
    let silent = json!({"uid": "u", "result": {}});
    assert_eq!(
        converted_objects("v1", "u", &reply(silent)).unwrap_err(),
        "response.result.status was '', not 'Success'"
    );
}

#[test]
fn converted_objects_must_be_the_ones_sent_in_the_version_asked_for() {
    let original = thing("v1beta1");
    let text = |converted: Value, single: bool| {
        checked(&original, converted, "example.com/v1")
            .err()
            .map(|p| p.text("example.com/v1beta1, Kind=Thing", 1, single))
    };
    let source = "conversion webhook for example.com/v1beta1, Kind=Thing";
    assert_eq!(
        text(thing("v1beta1"), true).unwrap(),
        format!(
            "{source} returned invalid object at index 0: invalid groupVersion (expected example.com/v1, received example.com/v1beta1)"
        )
    );
    assert_eq!(
        text(thing("v1beta1"), false).unwrap(),
        format!(
            "{source} returned invalid converted object at index 1: invalid groupVersion (expected example.com/v1, received example.com/v1beta1)"
        )
    );
    let mut renamed = thing("v1");
    renamed["metadata"]["name"] = json!("other");
    assert_eq!(
        text(renamed, true).unwrap(),
        format!("{source} returned invalid object: must have the same name: t != other")
    );
    let mut other_kind = thing("v1");
    other_kind["kind"] = json!("Gizmo");
    assert_eq!(
        text(other_kind, true).unwrap(),
        format!("{source} returned invalid object at index 0: invalid kind (expected Thing, received Gizmo)")
    );
    assert_eq!(
        text(json!({"apiVersion": "example.com/v1"}), true).unwrap(),
        "Object 'Kind' is missing in '{\"apiVersion\":\"example.com/v1\"}'"
    );
    let mut no_metadata = thing("v1");
    no_metadata.as_object_mut().unwrap().remove("metadata");
    no_metadata["metadata"] = Value::Null;
    // The identity checks come first: a missing name differs.
    assert_eq!(
        text(no_metadata, true).unwrap(),
        format!("{source} returned invalid object: must have the same name: t != ")
    );
}

#[test]
fn only_labels_and_annotations_of_the_metadata_may_change() {
    let original = thing("v1beta1");
    let mut converted = thing("v1");
    converted["metadata"]["generation"] = json!(9);
    converted["metadata"]["finalizers"] = json!(["x"]);
    converted["metadata"]["labels"] = json!({"a": "2", "b": "3"});
    converted["metadata"]["annotations"] = json!({"note": "converted"});
    let kept = checked(&original, converted, "example.com/v1").ok().unwrap();
    assert_eq!(
        kept["metadata"],
        json!({"name": "t", "namespace": "ns", "uid": "u1", "generation": 3, "labels": {"a": "2", "b": "3"},
               "annotations": {"note": "converted"}})
    );
    // Labels dropped by the webhook go.
    let mut dropped = thing("v1");
    dropped["metadata"].as_object_mut().unwrap().remove("labels");
    let kept = checked(&original, dropped, "example.com/v1").ok().unwrap();
    assert!(kept["metadata"].get("labels").is_none(), "{kept}");
    let metadata_text = |converted: Value| {
        checked(&original, converted, "example.com/v1").err().map(|p| p.text("X", 0, true)).unwrap()
    };
    let mut bad = thing("v1");
    bad["metadata"]["labels"] = json!({"a": 1});
    assert_eq!(
        metadata_text(bad),
        "conversion webhook for X returned invalid metadata: metadata.labels[a] must be a string, but is int64 in converted object"
    );
    let mut bad = thing("v1");
    bad["metadata"]["annotations"] = json!(["x"]);
    assert_eq!(
        metadata_text(bad),
        "conversion webhook for X returned invalid metadata: invalid metadata.annotations of type []interface {} in converted object"
    );
    let mut bad = thing("v1");
    bad["metadata"]["labels"] = json!({"bad key!": "v"});
    let text = metadata_text(bad);
    assert!(
        text.starts_with("conversion webhook for X returned invalid metadata: metadata.labels: Invalid value: \"bad key!\": name part must consist of"),
        "{text}"
    );
    let mut bad = thing("v1");
    bad["metadata"]["annotations"] = json!({"bad key!": "v"});
    let text = metadata_text(bad);
    assert!(text.contains(": metadata.annotation: Invalid value: \"bad key!\""), "kube's path, sic: {text}");
}

#[test]
fn long_lists_go_in_several_reviews() {
    let big = json!({"apiVersion": "example.com/v1beta1", "data": "x".repeat(MAX_REVIEW_BYTES / 2)});
    let objects = vec![big.clone(), big.clone(), big.clone(), json!({})];
    assert_eq!(batches(&objects, &[0, 1, 2, 3]), [vec![0], vec![1], vec![2, 3]]);
    assert_eq!(batches(&objects, &[3]), [vec![3]]);
    assert!(batches(&objects, &[]).is_empty());
}
