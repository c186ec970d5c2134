use std::collections::BTreeMap;

use axum::http::Method;

use super::*;
use crate::registry::kinds::flowcontrol::bootstrap;

/// kube's bootstrap schemas and levels as served, each with a uid of its
/// name.
pub(super) fn bootstrap_config() -> (Vec<Value>, Vec<Value>) {
    let with_uid = |mut object: Value| {
        object["metadata"]["uid"] = object["metadata"]["name"].clone();
        object
    };
    let schemas = bootstrap::mandatory_flow_schemas().into_iter().chain(bootstrap::suggested_flow_schemas());
    let levels =
        bootstrap::mandatory_priority_levels().into_iter().chain(bootstrap::suggested_priority_levels());
    (schemas.map(with_uid).collect(), levels.map(with_uid).collect())
}

fn configured(server_limit: u32) -> Arc<FlowControl> {
    let flow_control = Arc::new(FlowControl::new(server_limit, Duration::from_secs(60)));
    let (schemas, levels) = bootstrap_config();
    flow_control.configure(&schemas, &levels);
    flow_control
}

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        uid: String::new(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        extra: BTreeMap::new(),
    }
}

async fn admit(
    flow_control: &Arc<FlowControl>,
    user: &UserInfo,
    path: &str,
    wait: Duration,
) -> Result<Admission, Refused> {
    let uri: Uri = path.parse().unwrap();
    let info = RequestInfo::parse(&Method::GET, uri.path(), false);
    let classification = flow_control.classify(user, &info).unwrap();
    flow_control.admit(&classification, (&info, &uri, user), Some(Instant::now() + wait * 4)).await
}

#[tokio::test]
async fn a_full_level_refuses_after_the_wait_and_exempt_users_pass() {
    // 30 seats: global-default gets ceil(30 × 20 / 245) = 3, and starts
    // with 3 - round(3 × 50%) / 2 = 2 before any borrowing.
    let flow_control = configured(30);
    let alice = user("alice", &["system:authenticated"]);
    let mut held = Vec::new();
    while let Ok(admitted) =
        admit(&flow_control, &alice, "/api/v1/namespaces/a/pods/p", Duration::from_millis(50)).await
    {
        held.push(admitted);
        assert!(held.len() < 100, "never refused");
    }
    assert!(!held.is_empty());
    let refused =
        admit(&flow_control, &alice, "/api/v1/namespaces/a/pods/p", Duration::from_millis(10)).await;
    assert_eq!(refused.unwrap_err(), Refused { retry_after: 1 });
    let admin = user("admin", &["system:masters"]);
    for _ in 0..50 {
        held.push(admit(&flow_control, &admin, "/api/v1/pods", Duration::ZERO).await.expect("exempt"));
    }
    let dump = flow_control.dump_priority_levels();
    let exempt = dump.lines().find(|l| l.starts_with("exempt,")).unwrap();
    assert!(exempt.split(',').map(str::trim).nth(5) == Some("50"), "50 executing: {dump}");
    let mut metrics = String::new();
    flow_control.write_metrics(&mut metrics);
    let timed_out = "apiserver_flowcontrol_rejected_requests_total{flow_schema=\"global-default\",priority_level=\"global-default\",reason=\"time-out\"} 2";
    assert!(metrics.lines().any(|l| l == timed_out), "{metrics}");
    drop(held);
    admit(&flow_control, &alice, "/api/v1/namespaces/a/pods/p", Duration::from_millis(50))
        .await
        .expect("room again");
}

#[tokio::test]
async fn a_waiting_request_runs_when_a_seat_frees_up() {
    let flow_control = configured(30);
    let alice = user("alice", &["system:authenticated"]);
    let mut held = Vec::new();
    while let Ok(admitted) =
        admit(&flow_control, &alice, "/api/v1/namespaces/a/pods/p", Duration::from_millis(20)).await
    {
        held.push(admitted);
    }
    let waiter = {
        let flow_control = flow_control.clone();
        let bob = user("bob", &["system:authenticated"]);
        tokio::spawn(async move {
            admit(&flow_control, &bob, "/api/v1/namespaces/b/pods/p", Duration::from_secs(5)).await.is_ok()
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let requests = flow_control.dump_requests(true);
    assert!(
        requests.lines().any(|l| l.contains("bob") && l.contains("/api/v1/namespaces/b/pods/p")),
        "{requests}"
    );
    held.pop();
    assert!(waiter.await.unwrap(), "bob ran once alice's request finished");
}

#[test]
fn the_default_configuration_is_dumped_level_by_level() {
    let flow_control = configured(600);
    let levels = flow_control.dump_priority_levels();
    let names: Vec<&str> = levels.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(
        names,
        [
            "catch-all",
            "exempt",
            "global-default",
            "leader-election",
            "node-high",
            "system",
            "workload-high",
            "workload-low"
        ]
    );
    // 64 + 128 × 3 + 16 + 64 × 2 queues, one line each, and the header.
    assert_eq!(flow_control.dump_queues().lines().count(), 1 + 64 * 2 + 128 * 3 + 16);
    let mut metrics = String::new();
    flow_control.write_metrics(&mut metrics);
    assert!(
        metrics.contains("apiserver_flowcontrol_nominal_limit_seats{priority_level=\"global-default\"} 49\n"),
        "{metrics}"
    );
    // Configuring the same objects again changes nothing.
    let (schemas, levels) = bootstrap_config();
    flow_control.configure(&schemas, &levels);
    assert_eq!(flow_control.levels().len(), 8);
}
