//! ResourceQuotas as kubectl meets them: a quota's status appears on its
//! own, `kubectl get quota` prints kube's columns, the N+1th ConfigMap is
//! refused with kube's "exceeded quota" text, a pod stating no cpu request
//! with "must specify", a deletion gives its share back, and 50 clients
//! creating at once never get past the quota.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, request};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Waits until the quota's `status.used[resource]` reads `expected`.
async fn used_becomes(api: &ApiServer, namespace: &str, quota: &str, resource: &str, expected: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let path = format!("jsonpath={{.status.used.{}}}", resource.replace('.', "\\.").replace('/', "\\/"));
    loop {
        let now = api.ok(&["get", "quota", quota, "-n", namespace, "-o", &path]);
        if now == expected {
            return;
        }
        assert!(Instant::now() < deadline, "{resource} used stays {now:?}, not {expected}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn scenario(backend: Backend) {
    let api = ApiServer::start(backend).await;
    api.ok(&["create", "namespace", "qa"]);
    api.ok(&["create", "quota", "q", "-n", "qa", "--hard=count/configmaps=3,pods=2,requests.cpu=1"]);
    used_becomes(&api, "qa", "q", "count/configmaps", "0").await;
    let printed = api.ok(&["get", "quota", "-n", "qa"]);
    let lines: Vec<&str> = printed.lines().collect();
    assert!(
        lines[0].starts_with("NAME")
            && lines[0].contains("AGE")
            && lines[0].contains("REQUEST")
            && lines[0].ends_with("LIMIT"),
        "{printed}"
    );
    assert!(lines[1].contains("count/configmaps: 0/3, pods: 0/2, requests.cpu: 0/1"), "{printed}");

    for name in ["cm1", "cm2", "cm3"] {
        api.ok(&["create", "configmap", name, "-n", "qa", "--from-literal=a=b"]);
    }
    let out = api.kubectl(&["create", "configmap", "cm4", "-n", "qa", "--from-literal=a=b"]);
    assert_eq!(
        stderr(&out),
        "error: failed to create configmap: configmaps \"cm4\" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=3, limited: count/configmaps=3\n"
    );
    assert_eq!(
        api.ok(&["get", "quota", "q", "-n", "qa", "-o", "jsonpath={.status.used.count/configmaps}"]),
        "3"
    );
    let out = api.kubectl(&["run", "nocpu", "-n", "qa", "--image=nginx"]);
    assert_eq!(
        stderr(&out),
        "Error from server (Forbidden): pods \"nocpu\" is forbidden: failed quota: q: must specify requests.cpu\n"
    );
    let pod = json!({"spec": {"containers": [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "600m"}}}]}});
    api.ok(&["run", "web", "-n", "qa", "--image=nginx", "--overrides", &pod.to_string()]);
    assert_eq!(
        api.ok(&["get", "quota", "q", "-n", "qa", "-o", "jsonpath={.status.used.requests\\.cpu}"]),
        "600m"
    );
    let pod = json!({"spec": {"containers": [{"name": "big", "image": "nginx", "resources": {"requests": {"cpu": "500m"}}}]}});
    let out = api.kubectl(&["run", "big", "-n", "qa", "--image=nginx", "--overrides", &pod.to_string()]);
    assert!(stderr(&out).contains("exceeded quota: q, requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1"), "{}", stderr(&out));
    // A dry run is checked, not charged.
    api.ok(&["delete", "configmap", "cm3", "-n", "qa"]);
    used_becomes(&api, "qa", "q", "count/configmaps", "2").await;
    api.ok(&["create", "configmap", "tried", "-n", "qa", "--from-literal=a=b", "--dry-run=server"]);
    assert_eq!(
        api.ok(&["get", "quota", "q", "-n", "qa", "-o", "jsonpath={.status.used.count/configmaps}"]),
        "2"
    );
    api.ok(&["create", "configmap", "cm3", "-n", "qa", "--from-literal=a=b"]);

    // 50 clients at once against a quota of 20: exactly 20 get in.
    api.ok(&["create", "namespace", "rush"]);
    api.ok(&["create", "quota", "twenty", "-n", "rush", "--hard=count/configmaps=20"]);
    used_becomes(&api, "rush", "twenty", "count/configmaps", "0").await;
    let addr = api.url.trim_start_matches("http://").to_string();
    let clients: Vec<_> = (0..50)
        .map(|i| {
            let addr = addr.clone();
            tokio::spawn(async move {
                let body =
                    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("c{i}")}})
                        .to_string();
                request(&addr, "POST", "/api/v1/namespaces/rush/configmaps", "application/json", &body).await
            })
        })
        .collect();
    let mut created = 0;
    for client in clients {
        let (code, body): (u16, Value) = client.await.unwrap();
        match code {
            201 => created += 1,
            403 => assert!(
                body["message"]
                    .as_str()
                    .unwrap()
                    .contains("exceeded quota: twenty, requested: count/configmaps=1"),
                "{body}"
            ),
            other => panic!("HTTP {other}: {body}"),
        }
    }
    assert_eq!(created, 20);
    let stored = api.ok(&["get", "configmaps", "-n", "rush", "--no-headers", "-o", "name"]);
    assert_eq!(stored.lines().count(), 20);
    assert_eq!(
        api.ok(&["get", "quota", "twenty", "-n", "rush", "-o", "jsonpath={.status.used.count/configmaps}"]),
        "20"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_on_rtcd() {
    scenario(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_on_etcd() {
    scenario(Backend::Etcd).await;
}
