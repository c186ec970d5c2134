//! A client certificate requested, approved and issued as on kube: a CertificateSigningRequest
//! for `kubernetes.io/kube-apiserver-client` made with openssl, approved with `kubectl
//! certificate approve`, signed by the cluster signing CA (here also the `--client-ca-file`), and
//! the issued certificate then authenticates its subject. Refusals as kube's: a `system:masters`
//! request, a request that is not PKCS#10, usages this signer cannot issue, approval through
//! `/status`, and a denied request.

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, json, make_ca, openssl};

fn request_pem(dir: &Path, name: &str, subject: &str) -> String {
    let (key, csr) = (dir.join(format!("{name}.key")), dir.join(format!("{name}.csr")));
    openssl(&[
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-subj",
        subject,
        "-keyout",
        &key.display().to_string(),
        "-out",
        &csr.display().to_string(),
    ]);
    std::fs::read_to_string(csr).unwrap()
}

fn csr(name: &str, request: &[u8], usages: &[&str]) -> String {
    json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": base64::engine::general_purpose::STANDARD.encode(request),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "expirationSeconds": 86400,
            "usages": usages,
            "username": "someone-else",
        },
    })
    .to_string()
}

fn get(api: &ApiServer, name: &str) -> Value {
    json(&api.ok(&["get", "csr", name, "-o", "json"]))
}

/// Waits for the signer's answer: a certificate or a Failed condition.
async fn answered(api: &ApiServer, name: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let csr = get(api, name);
        let failed =
            csr["status"]["conditions"].as_array().into_iter().flatten().any(|c| c["type"] == "Failed");
        if failed || csr["status"]["certificate"].is_string() {
            return csr;
        }
        assert!(Instant::now() < deadline, "{name} never answered: {csr}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_certificate_is_requested_approved_and_used() {
    let api = ApiServer::start_prepared(Backend::Rtcd, true, |dir| {
        make_ca(dir, "client-ca", "rtcd-cluster-ca");
        let flags = format!(
            "--cluster-signing-cert-file={}\n--cluster-signing-key-file={}\n",
            dir.join("client-ca.crt").display(),
            dir.join("client-ca.key").display()
        );
        std::fs::write(dir.join("flags"), flags).unwrap();
    })
    .await;
    let dir = api.dir.path().to_path_buf();

    let jane = request_pem(&dir, "jane", "/CN=jane/O=dev");
    let out = api.ok_stdin(
        &["create", "-f", "-"],
        &csr("jane", jane.as_bytes(), &["client auth", "digital signature"]),
    );
    assert!(out.contains("certificatesigningrequest.certificates.k8s.io/jane created"), "{out}");
    let pending = get(&api, "jane");
    assert_eq!(pending["spec"]["username"], "admin", "the requester is who created it: {pending}");
    let table = api.ok(&["get", "csr", "jane"]);
    assert!(table.contains("kubernetes.io/kube-apiserver-client") && table.contains("Pending"), "{table}");
    assert!(table.contains("24h") && table.contains("admin"), "{table}");

    let out = api.ok(&["certificate", "approve", "jane"]);
    assert!(out.contains("certificatesigningrequest.certificates.k8s.io/jane approved"), "{out}");
    let issued = answered(&api, "jane").await;
    let approved = &issued["status"]["conditions"][0];
    assert_eq!(
        (approved["type"].as_str(), approved["reason"].as_str()),
        (Some("Approved"), Some("KubectlApprove"))
    );
    assert!(api.ok(&["get", "csr", "jane"]).contains("Approved,Issued"));
    let pem = base64::engine::general_purpose::STANDARD
        .decode(issued["status"]["certificate"].as_str().unwrap())
        .unwrap();
    std::fs::write(dir.join("jane.crt"), &pem).unwrap();
    let text = String::from_utf8_lossy(&pem);
    assert!(text.starts_with("-----BEGIN CERTIFICATE-----"), "{text}");

    // The certificate is jane's: the server authenticates her by it.
    let whoami = api.kubectl(&[
        "auth",
        "whoami",
        "-o",
        "json",
        &format!("--client-certificate={}", dir.join("jane.crt").display()),
        &format!("--client-key={}", dir.join("jane.key").display()),
        "--token=",
    ]);
    assert!(whoami.status.success(), "{}", String::from_utf8_lossy(&whoami.stderr));
    let user = &json(&String::from_utf8_lossy(&whoami.stdout))["status"]["userInfo"];
    assert_eq!(user["username"], "jane");
    let groups = user["groups"].as_array().unwrap();
    assert!(groups.contains(&json!("dev")), "{user}");

    // kube's refusals.
    let masters = request_pem(&dir, "evil", "/CN=evil/O=system:masters");
    let (ok, _, stderr) =
        api.kubectl_in(&["create", "-f", "-"], &csr("evil", masters.as_bytes(), &["client auth"]));
    assert!(!ok);
    assert!(
        stderr.contains("certificatesigningrequests.certificates.k8s.io \"evil\" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"),
        "{stderr}"
    );
    let (ok, _, stderr) =
        api.kubectl_in(&["create", "-f", "-"], &csr("junk", b"not a csr", &["client auth"]));
    assert!(!ok);
    assert!(
        stderr.contains("spec.request: Invalid value: []byte{0x6e, 0x6f, 0x74, 0x20, 0x61, 0x20, 0x63, 0x73, 0x72}: PEM block type must be CERTIFICATE REQUEST"),
        "{stderr}"
    );
    let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], &csr("nousage", jane.as_bytes(), &[]));
    assert!(!ok && stderr.contains("spec.usages: Required value"), "{stderr}");

    // Usages this signer cannot issue: approved, then failed by the signer.
    let server = request_pem(&dir, "server", "/CN=server");
    api.ok_stdin(&["create", "-f", "-"], &csr("server", server.as_bytes(), &["server auth"]));
    api.ok(&["certificate", "approve", "server"]);
    let refused = answered(&api, "server").await;
    let failed =
        refused["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "Failed").cloned();
    let failed = failed.unwrap_or_default();
    assert_eq!(
        (failed["reason"].as_str(), failed["message"].as_str()),
        (Some("SignerValidationFailure"), Some("invalid usage for client certificate: server auth"))
    );
    assert!(refused["status"].get("certificate").is_none(), "{refused}");
    assert!(api.ok(&["get", "csr", "server"]).contains("Approved,Failed"));
    // Several groups: refused rather than issued with fewer.
    let groups = request_pem(&dir, "groups", "/CN=ann/O=a/O=b");
    api.ok_stdin(&["create", "-f", "-"], &csr("groups", groups.as_bytes(), &["client auth"]));
    api.ok(&["certificate", "approve", "groups"]);
    let refused = answered(&api, "groups").await;
    assert!(refused["status"].get("certificate").is_none(), "{refused}");

    // Approval only through /approval; a denied request is never signed.
    let bob = request_pem(&dir, "bob", "/CN=bob");
    api.ok_stdin(&["create", "-f", "-"], &csr("bob", bob.as_bytes(), &["client auth"]));
    let approve = r#"{"status":{"conditions":[{"type":"Approved","status":"True","reason":"Sneaky"}]}}"#;
    api.ok(&["patch", "csr", "bob", "--subresource=status", "--type=merge", "-p", approve]);
    let bob = get(&api, "bob");
    assert!(bob["status"].get("conditions").is_none(), "status may not approve: {bob}");
    api.ok(&["certificate", "deny", "bob"]);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let denied = get(&api, "bob");
    assert_eq!(denied["status"]["conditions"][0]["type"], "Denied");
    assert!(denied["status"].get("certificate").is_none(), "{denied}");
    let (ok, _, stderr) = api.kubectl_in(&["certificate", "approve", "bob"], "");
    assert!(!ok, "kubectl does not approve a denied request: {stderr}");
    let mut both = get(&api, "bob");
    both["status"]["conditions"].as_array_mut().unwrap().push(json!({"type": "Approved", "status": "True"}));
    let approval = "/apis/certificates.k8s.io/v1/certificatesigningrequests/bob/approval";
    let (ok, _, stderr) = api.kubectl_in(&["replace", "--raw", approval, "-f", "-"], &both.to_string());
    assert!(!ok && stderr.contains("Approved and Denied conditions are mutually exclusive"), "{stderr}");
    assert!(get(&api, "bob")["status"]["conditions"].as_array().unwrap().len() == 1);
}

/// CertificateApproval and CertificateSigning: access to `/approval` and `/status` is not
/// enough, the user needs `approve` / `sign` on the request's signer (or its domain's `*`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_and_signing_need_the_signer() {
    const TOKEN: &str = "approver-token-0123456789";
    let api = ApiServer::start_prepared(Backend::Rtcd, true, |dir| {
        make_ca(dir, "other-ca", "some-ca");
        let tokens = std::fs::read_to_string(dir.join("tokens.csv")).unwrap();
        std::fs::write(dir.join("tokens.csv"), format!("{tokens}{TOKEN},approver,approver-uid\n")).unwrap();
        std::fs::write(dir.join("flags"), "--authorization-mode=RBAC\n").unwrap();
    })
    .await;
    api.add_identity("approver", &format!("{{token: {TOKEN}}}"));
    let dir = api.dir.path().to_path_buf();
    let csrs = "certificatesigningrequests";
    api.ok(&["create", "clusterrole", "csr-handler", "--verb=get,list,watch", &format!("--resource={csrs}")]);
    let handler = format!(
        r#"[{{"op":"add","path":"/rules/-","value":{{"apiGroups":["certificates.k8s.io"],"resources":["{csrs}/approval","{csrs}/status"],"verbs":["get","update","patch"]}}}}]"#
    );
    api.ok(&["patch", "clusterrole", "csr-handler", "--type=json", "-p", &handler]);
    api.ok(&["create", "clusterrolebinding", "csr-handler", "--clusterrole=csr-handler", "--user=approver"]);
    let alice = request_pem(&dir, "alice", "/CN=alice");
    api.ok_stdin(&["create", "-f", "-"], &csr("alice", alice.as_bytes(), &["client auth"]));

    let refusal = |args: &[&str]| {
        let out = api.kubectl_as("approver", args);
        assert!(!out.status.success(), "{args:?} was allowed");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = refusal(&["certificate", "approve", "alice"]);
    assert!(
        stderr.contains("certificatesigningrequests.certificates.k8s.io \"alice\" is forbidden: user not permitted to approve requests with signerName \"kubernetes.io/kube-apiserver-client\""),
        "{stderr}"
    );
    assert!(get(&api, "alice")["status"].get("conditions").is_none());

    // A certificate written through /status is signing.
    let certificate =
        base64::engine::general_purpose::STANDARD.encode(std::fs::read(dir.join("other-ca.crt")).unwrap());
    let sign = format!(r#"{{"status":{{"certificate":"{certificate}"}}}}"#);
    let args = ["patch", "csr", "alice", "--subresource=status", "--type=merge", "-p", &sign];
    let stderr = refusal(&args);
    assert!(
        stderr.contains("is forbidden: user not permitted to sign requests with signerName \"kubernetes.io/kube-apiserver-client\""),
        "{stderr}"
    );

    // Granted for the signer's domain, both go through.
    // (kubectl's `create clusterrole` refuses a resource discovery does not list.)
    let signers = r#"{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "kube-signers"},
        "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
                   "resourceNames": ["kubernetes.io/*"], "verbs": ["approve", "sign"]}]}"#;
    api.ok_stdin(&["create", "-f", "-"], signers);
    api.ok(&[
        "create",
        "clusterrolebinding",
        "kube-signers",
        "--clusterrole=kube-signers",
        "--user=approver",
    ]);
    let approved = api.kubectl_as("approver", &["certificate", "approve", "alice"]);
    assert!(approved.status.success(), "{}", String::from_utf8_lossy(&approved.stderr));
    let signed = api.kubectl_as("approver", &args);
    assert!(signed.status.success(), "{}", String::from_utf8_lossy(&signed.stderr));
    assert_eq!(get(&api, "alice")["status"]["certificate"], certificate.as_str());
}

/// A PodCertificateRequest as kubelet makes one (an empty PKCS#10 request for a fresh key, made
/// here with openssl) and a signer answers it: created with kube's defaults and an empty status,
/// listed Pending; a signer without `sign` on the signer is refused with kube's 422; with it, a
/// certificate for the request's key is issued through `/status`, and the request is immutable
/// from then on. A request whose key is too small is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pod_certificate_requests_are_issued_by_signers() {
    const TOKEN: &str = "pod-signer-token-0123456789";
    let api = ApiServer::start_prepared(Backend::Rtcd, true, |dir| {
        let tokens = std::fs::read_to_string(dir.join("tokens.csv")).unwrap();
        std::fs::write(dir.join("tokens.csv"), format!("{tokens}{TOKEN},pod-signer,pod-signer-uid\n"))
            .unwrap();
        std::fs::write(dir.join("flags"), "--authorization-mode=RBAC\n").unwrap();
    })
    .await;
    api.add_identity("pod-signer", &format!("{{token: {TOKEN}}}"));
    let dir = api.dir.path().to_path_buf();
    let (key, der) = (dir.join("pod.key"), dir.join("pod.csr.der"));
    let path = |p: &Path| p.display().to_string();
    openssl(&["genpkey", "-algorithm", "ed25519", "-out", &path(&key)]);
    openssl(&["req", "-new", "-key", &path(&key), "-subj", "/", "-outform", "DER", "-out", &path(&der)]);
    let stub = base64::engine::general_purpose::STANDARD.encode(std::fs::read(&der).unwrap());
    let pcr = |name: &str, stub: &str| {
        json!({"apiVersion": "certificates.k8s.io/v1", "kind": "PodCertificateRequest",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"signerName": "example.com/pod-identity", "podName": "web-0", "podUID": "pod-uid",
                "serviceAccountName": "default", "serviceAccountUID": "sa-uid", "nodeName": "node-a",
                "nodeUID": "node-uid", "stubPKCS10Request": stub}})
        .to_string()
    };
    api.ok_stdin(&["create", "-f", "-"], &pcr("web-0", &stub));
    let stored = json(&api.ok(&["get", "podcertificaterequest", "web-0", "-o", "json"]));
    assert_eq!(stored["spec"]["maxExpirationSeconds"], 86400);
    assert_eq!(stored["status"], json!({}));
    let table = api.ok(&["get", "podcertificaterequests"]);
    assert_eq!(
        table.lines().collect::<Vec<_>>(),
        [
            "NAME    PODNAME   SERVICEACCOUNTNAME   NODENAME   SIGNERNAME                 STATE",
            "web-0   web-0     default              node-a     example.com/pod-identity   Pending",
        ]
    );

    // The signer's certificate: the request's own key, for a day.
    let cert = dir.join("pod.crt");
    openssl(&["req", "-x509", "-key", &path(&key), "-subj", "/CN=web-0", "-days", "1", "-out", &path(&cert)]);
    let chain = std::fs::read_to_string(&cert).unwrap();
    let dates = String::from_utf8(
        std::process::Command::new("openssl")
            .args(["x509", "-in", &path(&cert), "-noout", "-startdate", "-enddate", "-dateopt", "iso_8601"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let date = |key: &str| {
        let line = dates.lines().find_map(|l| l.strip_prefix(key)).unwrap();
        line.trim().replace(' ', "T")
    };
    let (not_before, not_after) = (date("notBefore="), date("notAfter="));
    let refresh =
        jiff::Timestamp::from_second(not_before.parse::<jiff::Timestamp>().unwrap().as_second() + 3600)
            .unwrap()
            .to_string();
    let issued = json!({"status": {"conditions": [{"type": "Issued", "status": "True", "reason": "Signed",
            "message": "issued", "lastTransitionTime": not_before}],
        "certificateChain": chain, "notBefore": not_before, "notAfter": not_after, "beginRefreshAt": refresh}})
    .to_string();
    let args =
        ["patch", "podcertificaterequest", "web-0", "--subresource=status", "--type=merge", "-p", &issued];

    // Allowed the subresource, not the signer: kube's strategy refuses.
    let role = r#"{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "pod-signer"},
        "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": ["podcertificaterequests", "podcertificaterequests/status"],
                   "verbs": ["get", "list", "update", "patch"]}]}"#;
    api.ok_stdin(&["create", "-f", "-"], role);
    api.ok(&["create", "clusterrolebinding", "pod-signer", "--clusterrole=pod-signer", "--user=pod-signer"]);
    let out = api.kubectl_as("pod-signer", &args);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "The PodCertificateRequest \"web-0\" is invalid: spec.signerName: Forbidden: User \"pod-signer\" is not permitted to \"sign\" for signer \"example.com/pod-identity\"\n"
    );
    let signers = r#"{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "pod-identity-signer"},
        "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
                   "resourceNames": ["example.com/pod-identity"], "verbs": ["sign"]}]}"#;
    api.ok_stdin(&["create", "-f", "-"], signers);
    api.ok(&[
        "create",
        "clusterrolebinding",
        "pod-identity-signer",
        "--clusterrole=pod-identity-signer",
        "--user=pod-signer",
    ]);
    let out = api.kubectl_as("pod-signer", &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stored = json(&api.ok(&["get", "podcertificaterequest", "web-0", "-o", "json"]));
    assert_eq!(stored["status"]["certificateChain"], chain.as_str());
    assert!(api.ok(&["get", "podcertificaterequest", "web-0"]).contains(" Issued"));

    // Issued is final.
    let deny = r#"{"status":{"conditions":[{"type":"Denied","status":"True","reason":"Changed","lastTransitionTime":"2026-01-01T00:00:00Z"}],"certificateChain":null,"notBefore":null,"notAfter":null,"beginRefreshAt":null}}"#;
    let (ok, _, stderr) = api.kubectl_in(
        &["patch", "podcertificaterequest", "web-0", "--subresource=status", "--type=merge", "-p", deny],
        "",
    );
    assert!(
        !ok && stderr.contains(
            "status: Invalid value: immutable after PodCertificateRequest is issued, denied, or failed"
        ),
        "{stderr}"
    );

    // Too small an RSA key.
    let (small, small_der) = (dir.join("small.key"), dir.join("small.csr.der"));
    openssl(&["genpkey", "-algorithm", "rsa", "-pkeyopt", "rsa_keygen_bits:2048", "-out", &path(&small)]);
    openssl(&[
        "req",
        "-new",
        "-key",
        &path(&small),
        "-subj",
        "/",
        "-outform",
        "DER",
        "-out",
        &path(&small_der),
    ]);
    let small_stub = base64::engine::general_purpose::STANDARD.encode(std::fs::read(&small_der).unwrap());
    let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], &pcr("small", &small_stub));
    assert!(!ok);
    assert!(
        stderr.contains("spec.stubPKCS10Request: Invalid value: \"2048-bit modulus\": RSA keys must have modulus size 3072 or 4096"),
        "{stderr}"
    );
}
