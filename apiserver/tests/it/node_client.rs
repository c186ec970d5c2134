//! The official JavaScript client (`@kubernetes/client-node`, from npm,
//! scripts/install-deps.sh) server-side applies on rtcd and on etcd: its
//! KubernetesObjectApi `patch` with the ServerSideApply strategy creates,
//! conflicts with another manager (409, kube's message), forces, and the
//! object reads back with kube's managedFields.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend};

/// The node_modules install-deps.sh installs the client into
/// (~/.cache/rtcd/node, or $RTCD_NODE_PREFIX).
fn node_modules() -> PathBuf {
    let prefix = std::env::var_os("RTCD_NODE_PREFIX").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/rtcd/node")
    });
    prefix.join("node_modules")
}

/// Runs a Node.js script with the client on NODE_PATH, KUBECONFIG set.
fn node(api: &ApiServer, script: &str) -> Output {
    let modules = node_modules();
    assert!(
        modules.join("@kubernetes/client-node/package.json").exists(),
        "@kubernetes/client-node is not in {} (scripts/install-deps.sh installs it)",
        modules.display()
    );
    Command::new("node")
        .arg("-e")
        .arg(script)
        .env("NODE_PATH", &modules)
        .env("KUBECONFIG", api.kubeconfig())
        .output()
        .expect("node (Node.js) on PATH")
}

/// The client is an ES module: resolve it through NODE_PATH (CommonJS
/// resolution), then import it.
const SCRIPT: &str = r#"
const { pathToFileURL } = require('url');
(async () => {
  const k8s = await import(pathToFileURL(require.resolve('@kubernetes/client-node')).href);
  const kc = new k8s.KubeConfig();
  kc.loadFromDefault();
  const client = k8s.KubernetesObjectApi.makeApiClient(kc);
  const spec = (k) => ({apiVersion: 'v1', kind: 'ConfigMap',
                        metadata: {name: 'js', namespace: 'default'}, data: {k}});
  const apply = (k, manager, force) =>
    client.patch(spec(k), undefined, undefined, manager, force, k8s.PatchStrategy.ServerSideApply);
  const first = await apply('1', 'node-client', undefined);
  let conflict = null;
  try {
    await apply('2', 'other', false);
  } catch (e) {
    if (e.code === undefined) throw e;
    conflict = typeof e.body === 'string' ? JSON.parse(e.body) : e.body;
    console.error('conflict body:', JSON.stringify(conflict));
  }
  const forced = await apply('2', 'other', true);
  const read = await client.read({apiVersion: 'v1', kind: 'ConfigMap',
                                  metadata: {name: 'js', namespace: 'default'}});
  const managers = (read.metadata.managedFields || []).map((m) => [m.manager, m.operation]).sort();
  console.log(JSON.stringify({first: first.data.k, conflict, forced: forced.data.k,
                              read: read.data.k, managers}));
})().catch((e) => { console.error(e); process.exit(1); });
"#;

async fn node_client_suite(backend: Backend) {
    // HTTPS: client-node 1.x refuses a plain http:// server unless the
    // kubeconfig sets insecure-skip-tls-verify; over HTTPS it uses the
    // kubeconfig as written (the server's CA and an admin token).
    let api = ApiServer::start_with(backend, true).await;
    let out = node(&api, SCRIPT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "node failed:\n{stderr}\n{}", api.log());
    eprintln!("{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    eprintln!("{line}");
    let result: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    assert_eq!(result["first"], "1", "{result}");
    let conflict = &result["conflict"];
    assert_eq!(conflict["code"], 409, "{result}");
    assert_eq!(conflict["message"], "Apply failed with 1 conflict: conflict with \"node-client\": .data.k");
    assert_eq!(
        conflict["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "field": ".data.k", "message": "conflict with \"node-client\""}]),
        "{conflict}"
    );
    assert_eq!(result["forced"], "2", "{result}");
    assert_eq!(result["read"], "2", "{result}");
    assert_eq!(result["managers"], json!([["other", "Apply"]]), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_client_applies_on_rtcd() {
    node_client_suite(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_client_applies_on_etcd() {
    node_client_suite(Backend::Etcd).await;
}
