//! Fanout: 1000 concurrent watchers of one resource, on rtcd and on etcd,
//! all receive every event, in order, from the one etcd watch the cache
//! holds.

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;

use crate::common::{ApiServer, Backend, open_watch};

const WATCHERS: usize = 1000;
const UPDATES: usize = 30;

/// The `data.n` values of the MODIFIED events on `fanout`, until `want`
/// have arrived.
async fn collect(mut reader: BufReader<TcpStream>, want: usize) -> Vec<u64> {
    let mut seen = Vec::new();
    let mut line = String::new();
    while seen.len() < want {
        line.clear();
        if reader.read_line(&mut line).await.unwrap() == 0 {
            break;
        }
        let event: serde_json::Value = serde_json::from_str(&line).unwrap();
        if event["type"] == "MODIFIED" {
            seen.push(event["object"]["data"]["n"].as_str().unwrap().parse().unwrap());
        }
    }
    seen
}

async fn fanout(backend: Backend) {
    rlimit::increase_nofile_limit(u64::MAX).unwrap();
    let api = ApiServer::start(backend).await;
    api.ok_stdin(
        &["apply", "-f", "-"],
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fanout"},"data":{"n":"0"}}"#,
    );
    let rv = api.ok(&["get", "cm", "fanout", "-o", "jsonpath={.metadata.resourceVersion}"]);
    let addr = api.url.trim_start_matches("http://").to_string();
    let path =
        format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}&timeoutSeconds=120");
    let mut readers = Vec::with_capacity(WATCHERS);
    for _ in 0..WATCHERS {
        readers.push(open_watch(&addr, &path).await);
    }
    // Every watcher is registered once its response has started (above).
    let watchers: Vec<_> = readers.into_iter().map(|r| tokio::spawn(collect(r, UPDATES))).collect();
    for n in 1..=UPDATES {
        api.ok(&["patch", "cm", "fanout", "--type", "merge", "-p", &format!(r#"{{"data":{{"n":"{n}"}}}}"#)]);
    }
    let want: Vec<u64> = (1..=UPDATES as u64).collect();
    for (i, watcher) in watchers.into_iter().enumerate() {
        let seen = tokio::time::timeout(Duration::from_secs(120), watcher).await.unwrap().unwrap();
        assert_eq!(seen, want, "watcher {i} missed or reordered events");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousand_watchers_on_rtcd() {
    fanout(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousand_watchers_on_etcd() {
    fanout(Backend::Etcd).await;
}
