use serde_json::{Value, json};

use super::*;

fn custom(selector: Option<&str>) -> ScalePaths {
    ScalePaths::Custom {
        spec_replicas: ".spec.size".into(),
        status_replicas: ".status.size".into(),
        label_selector: selector.map(str::to_string),
    }
}

fn object(spec: Value, status: Value) -> Value {
    json!({
        "apiVersion": "example.com/v1", "kind": "Pool",
        "metadata": {"name": "p", "namespace": "ns", "uid": "u-1", "resourceVersion": "7",
                     "creationTimestamp": "2026-11-26T00:00:00Z", "labels": {"x": "y"}},
        "spec": spec, "status": status,
    })
}

fn message(e: ApiError) -> String {
    e.to_string()
}

#[test]
fn a_workloads_scale_shows_its_replicas_and_prints_its_selector() {
    let deployment = json!({
        "metadata": {"name": "web", "namespace": "default", "uid": "u", "resourceVersion": "3"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"},
                 "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]}},
        "status": {"replicas": 2},
    });
    let scale = read(&ScalePaths::Workload, &deployment).unwrap();
    assert_eq!(
        scale,
        json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
               "metadata": {"name": "web", "namespace": "default", "uid": "u", "resourceVersion": "3",
                            "creationTimestamp": null},
               "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=web,tier in (front)"}})
    );
}

#[test]
fn a_custom_resources_scale_reads_the_crds_paths_and_its_selector_text() {
    let pool = object(json!({"size": 4}), json!({"size": 1, "sel": "app=pool"}));
    let scale = read(&custom(Some(".status.sel")), &pool).unwrap();
    assert_eq!(
        (&scale["spec"], &scale["status"]),
        (&json!({"replicas": 4}), &json!({"replicas": 1, "selector": "app=pool"}))
    );
    assert_eq!(scale["metadata"]["uid"], "u-1");
    assert!(scale["metadata"].get("labels").is_none(), "a Scale carries no labels: {scale}");
    // No selector path, or none written yet: no selector; zeros left out
    // of the spec as autoscaling/v1 leaves them.
    let scale = read(&custom(None), &object(json!({"size": 0}), json!({}))).unwrap();
    assert_eq!((&scale["spec"], &scale["status"]), (&json!({}), &json!({"replicas": 0})));
    let scale = read(&custom(Some(".status.sel")), &object(json!({"size": 2}), Value::Null)).unwrap();
    assert_eq!(scale["status"], json!({"replicas": 0}));
}

#[test]
fn replicas_nobody_set_are_kubes_500_on_read_and_a_400_when_a_write_leaves_them_unset() {
    let paths = custom(None);
    let pool = object(json!({}), json!({}));
    let e = read(&paths, &pool).unwrap_err();
    assert_eq!(e.code(), 500);
    assert_eq!(message(e), "Internal error occurred: the spec replicas field \".spec.size\" does not exist");
    // A patch starts from the unset marker; leaving it is refused, setting
    // replicas works, and the objects on the way are made.
    let start = current(&paths, &pool).unwrap();
    assert_eq!(start["spec"]["replicas"], json!(i32::MIN));
    let e = requested_replicas(&paths, &start).unwrap_err();
    assert_eq!(
        (e.code(), message(e)),
        (400, "the spec replicas field \".spec.size\" cannot be empty".to_string())
    );
    let mut bare = json!({"metadata": {"name": "p"}});
    set_replicas(&paths, &mut bare, 5).unwrap();
    assert_eq!(bare["spec"], json!({"size": 5}));
    let mut wrong = object(json!("text"), json!({}));
    let e = set_replicas(&paths, &mut wrong, 5).unwrap_err();
    assert_eq!(
        (e.code(), message(e)),
        (500, "value cannot be set because .spec is not a map[string]interface{}".to_string())
    );
    assert_eq!(wrong["spec"], "text", "nothing changed");
}

#[test]
fn values_of_the_wrong_type_are_named_as_kubes_accessors_name_them() {
    let paths = custom(Some(".status.sel"));
    let cases = [
        (
            object(json!({"size": "3"}), json!({})),
            ".spec.size accessor error: 3 is of the type string, expected int64",
        ),
        (
            object(json!({"size": 1.5}), json!({})),
            ".spec.size accessor error: 1.5 is of the type float64, expected int64",
        ),
        (
            object(json!({"size": 1}), json!({"size": [1, true]})),
            ".status.size accessor error: [1 true] is of the type []interface {}, expected int64",
        ),
        (
            object(json!({"size": 1}), json!({"sel": {"b": 1, "a": null}})),
            ".status.sel accessor error: map[a:<nil> b:1] is of the type map[string]interface {}, expected string",
        ),
        (
            object(json!("text"), json!({})),
            // kube names the path up to the step it could not take.
            ".spec.size accessor error: text is of the type string, expected map[string]interface{}",
        ),
    ];
    for (object, want) in cases {
        let e = read(&paths, &object).unwrap_err();
        assert_eq!((e.code(), message(e)), (500, want.to_string()));
    }
}

#[test]
fn written_replicas_are_checked_as_kube_checks_them() {
    let paths = custom(Some(".status.sel"));
    let fine = object(json!({"size": 2147483647}), json!({"size": 0, "sel": "a=b"}));
    assert!(causes(&paths, &fine).is_empty());
    assert!(causes(&paths, &object(json!({}), json!({}))).is_empty(), "unset replicas are fine");
    let bad = object(json!({"size": -1}), json!({"size": 2147483648_i64, "sel": 5}));
    let found: Vec<(String, String)> =
        causes(&paths, &bad).into_iter().map(|c| (c.field, c.message)).collect();
    assert_eq!(
        found,
        [
            (".spec.size".to_string(), "Invalid value: -1: should be a non-negative integer".to_string()),
            (
                ".status.size".to_string(),
                "Invalid value: 2147483648: should be less than or equal to 2147483647".to_string()
            ),
            (
                ".status.sel".to_string(),
                "Invalid value: \"\": .status.sel accessor error: 5 is of the type int64, expected string"
                    .to_string()
            ),
        ]
    );
    let typed = causes(&paths, &object(json!({"size": "2"}), json!({})));
    assert_eq!(
        typed[0].message,
        "Invalid value: 0: .spec.size accessor error: 2 is of the type string, expected int64"
    );
    assert!(causes(&ScalePaths::Workload, &bad).is_empty(), "kube's workloads validate their own fields");
}

#[test]
fn a_scale_a_client_sends_is_decoded_and_validated_as_kube_does() {
    let scale = |replicas: Value| json!({"metadata": {"name": "web"}, "spec": {"replicas": replicas}});
    assert_eq!(requested_replicas(&ScalePaths::Workload, &scale(json!(4))).unwrap(), 4);
    assert_eq!(requested_replicas(&ScalePaths::Workload, &scale(Value::Null)).unwrap(), 0, "Go's zero value");
    let e = requested_replicas(&ScalePaths::Workload, &scale(json!(-1))).unwrap_err();
    assert_eq!(
        (e.code(), message(e)),
        (422, "Scale.autoscaling \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0".to_string())
    );
    // A custom resource's own validation refuses negatives once written.
    assert_eq!(requested_replicas(&custom(None), &scale(json!(-1))).unwrap(), -1);
    for (value, what) in
        [(json!(3_000_000_000_i64), "number 3000000000"), (json!("2"), "string"), (json!(1.5), "number 1.5")]
    {
        let e = requested_replicas(&ScalePaths::Workload, &scale(value)).unwrap_err();
        assert_eq!(
            (e.code(), message(e)),
            (
                400,
                format!(
                    "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {what} into Go struct field ScaleSpec.spec.replicas of type int32"
                )
            )
        );
    }
}

#[test]
fn admission_may_change_the_replicas_a_scale_asks_for() {
    let paths = custom(None);
    let pool = object(json!({"size": 2}), json!({}));
    let admitted = with_admitted_replicas(&paths, pool.clone(), Some(&json!({"spec": {"replicas": 3}})));
    assert_eq!(admitted["spec"]["size"], 3);
    assert_eq!(with_admitted_replicas(&paths, pool.clone(), Some(&json!({"spec": {}}))), pool);
}
