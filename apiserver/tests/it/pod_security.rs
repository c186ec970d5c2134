//! PodSecurity as kubectl meets it: a restricted namespace refuses a
//! privileged pod with kube's text and takes a compliant one; a warn-only
//! namespace takes the privileged pod with kube's warning; a Deployment
//! whose template breaks the namespace's level is warned about, not
//! refused.

use serde_json::json;

use crate::common::{ApiServer, Backend};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

async fn scenario(backend: Backend) {
    let api = ApiServer::start(backend).await;
    api.ok(&["create", "namespace", "strict"]);
    api.ok(&[
        "label",
        "namespace",
        "strict",
        "pod-security.kubernetes.io/enforce=restricted",
        "pod-security.kubernetes.io/warn=restricted",
    ]);
    let privileged = json!({"spec": {"containers": [{"name": "priv", "image": "nginx", "securityContext": {"privileged": true}}]}}).to_string();
    let out = api.kubectl(&["run", "priv", "-n", "strict", "--image=nginx", "--overrides", &privileged]);
    assert_eq!(
        stderr(&out),
        "Error from server (Forbidden): pods \"priv\" is forbidden: violates PodSecurity \"restricted:latest\": \
         privileged (container \"priv\" must not set securityContext.privileged=true), \
         allowPrivilegeEscalation != false (container \"priv\" must set securityContext.allowPrivilegeEscalation=false), \
         unrestricted capabilities (container \"priv\" must set securityContext.capabilities.drop=[\"ALL\"]), \
         runAsNonRoot != true (pod or container \"priv\" must set securityContext.runAsNonRoot=true), \
         seccompProfile (pod or container \"priv\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")\n"
    );
    let compliant = json!({"spec": {
        "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "ok", "image": "nginx", "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]}})
    .to_string();
    let out = api.kubectl(&["run", "ok", "-n", "strict", "--image=nginx", "--overrides", &compliant]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");

    // Workloads are warned about, never refused.
    let out = api.kubectl(&["create", "deployment", "web", "-n", "strict", "--image=nginx"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("Warning: would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"nginx\""),
        "{}",
        stderr(&out)
    );

    // Warn only: the pod is made, with kube's warning.
    api.ok(&["create", "namespace", "lax"]);
    api.ok(&[
        "label",
        "namespace",
        "lax",
        "pod-security.kubernetes.io/warn=baseline",
        "pod-security.kubernetes.io/warn-version=v1.36",
    ]);
    let out = api.kubectl(&["run", "priv", "-n", "lax", "--image=nginx", "--overrides", &privileged]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "Warning: would violate PodSecurity \"baseline:v1.36\": privileged (container \"priv\" must not set securityContext.privileged=true)\n"
    );
    // Unlabelled namespaces are privileged.
    api.ok(&["run", "priv", "--image=nginx", "--overrides", &privileged]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pod_security_on_rtcd() {
    scenario(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pod_security_on_etcd() {
    scenario(Backend::Etcd).await;
}
