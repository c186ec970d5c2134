//! A real HTTPS admission webhook for the tests, on loopback with its own
//! CA: each path answers AdmissionReviews one way (allow with a patch,
//! deny, answer late, answer garbage or the wrong uid).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};

/// The running webhook.
pub struct WebhookServer {
    pub port: u16,
    /// PEM of the CA its certificate is signed by (a webhook's caBundle).
    pub ca_pem: String,
    /// Reviews received so far.
    pub calls: Arc<AtomicUsize>,
}

impl WebhookServer {
    /// Serves on a free loopback port; its certificate is valid for
    /// 127.0.0.1 and `hooks.webhooks.svc` (a Service-backed webhook).
    pub async fn start() -> WebhookServer {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let ca_pem = ca_cert.pem();
        let issuer = Issuer::from_ca_cert_pem(&ca_pem, ca_key).unwrap();
        let key = KeyPair::generate().unwrap();
        let params =
            CertificateParams::new(vec!["127.0.0.1".to_string(), "hooks.webhooks.svc".to_string()]).unwrap();
        let cert = params.signed_by(&key, &issuer).unwrap();
        let chain = vec![CertificateDer::from_pem_slice(cert.pem().as_bytes()).unwrap()];
        let private = PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).unwrap();
        let config =
            rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(chain, private)
                .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                let calls = counted.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    let service = hyper::service::service_fn(move |request| answer(request, calls.clone()));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        WebhookServer { port, ca_pem, calls }
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    pub fn ca_bundle(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.ca_pem)
    }
}

async fn answer(
    request: Request<hyper::body::Incoming>,
    calls: Arc<AtomicUsize>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let path = request.uri().path().to_string();
    let authorization = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = request.into_body().collect().await?.to_bytes();
    calls.fetch_add(1, Ordering::SeqCst);
    let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let uid = review["request"]["uid"].as_str().unwrap_or_default().to_string();
    let object = &review["request"]["object"];
    let mut response = json!({"uid": uid, "allowed": true});
    match path.as_str() {
        "/mutate" => {
            let op = match object["metadata"]["labels"].is_object() {
                true => json!({"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}),
                false => json!({"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}),
            };
            let patch = base64::engine::general_purpose::STANDARD.encode(json!([op]).to_string());
            response["patch"] = json!(patch);
            response["patchType"] = json!("JSONPatch");
            response["warnings"] = json!(["labelled by the test webhook"]);
            response["auditAnnotations"] = json!({"decision": "labelled"});
        }
        "/deny" if object["metadata"]["labels"]["deny"] == "yes" => {
            response["allowed"] = json!(false);
            response["status"] = json!({"code": 403, "reason": "Forbidden", "message": "configmaps labelled deny=yes are refused"});
        }
        "/slow" => tokio::time::sleep(Duration::from_secs(3)).await,
        // Lets in only callers presenting the test's token.
        "/needs-token" if authorization != "Bearer s3cret" => {
            response["allowed"] = json!(false);
            response["status"] = json!({"code": 401, "reason": "Unauthorized", "message": format!("who are you? ({authorization:?})")});
        }
        "/deny-all" => {
            response["allowed"] = json!(false);
            response["status"] = json!({"code": 403, "reason": "Forbidden", "message": "blocked"});
        }
        // Reinvocation: records whether the object already carries the
        // label the other webhook adds.
        "/note-label" => {
            let saw = if object["metadata"]["labels"]["b"] == "yes" { "yes" } else { "no" };
            response = patched(
                response,
                json!([{"op": "add", "path": "/metadata/annotations", "value": {"a-saw-b": saw}}]),
            );
        }
        "/add-label" => {
            response =
                patched(response, json!([{"op": "add", "path": "/metadata/labels", "value": {"b": "yes"}}]));
        }
        "/huge" => {
            let big = "x".repeat(10 << 20);
            response = patched(
                response,
                json!([{"op": "add", "path": "/metadata/annotations", "value": {"big": big}}]),
            );
        }
        "/redirect" => {
            let mut reply = Response::new(Full::new(Bytes::new()));
            *reply.status_mut() = hyper::StatusCode::TEMPORARY_REDIRECT;
            reply
                .headers_mut()
                .insert(hyper::header::LOCATION, hyper::header::HeaderValue::from_static("/redirect"));
            return Ok(reply);
        }
        "/wrong-uid" => response["uid"] = json!("not-the-uid"),
        "/garbage" => return Ok(Response::new(Full::new(Bytes::from_static(b"this is not a review")))),
        "/break" => response = patched(response, json!([{"op": "add", "path": "/data", "value": 42}])),
        _ => {}
    }
    let review =
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response});
    let mut reply = Response::new(Full::new(Bytes::from(review.to_string())));
    reply
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    Ok(reply)
}

/// `response` carrying `operations` as its JSON Patch.
fn patched(mut response: Value, operations: Value) -> Value {
    response["patch"] = json!(base64::engine::general_purpose::STANDARD.encode(operations.to_string()));
    response["patchType"] = json!("JSONPatch");
    response
}
