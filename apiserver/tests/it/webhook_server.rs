//! A real HTTPS admission webhook for the tests, on loopback with its own
//! CA: each path answers AdmissionReviews one way (allow with a patch,
//! deny, answer late, answer garbage or the wrong uid); `/convert*` paths
//! answer ConversionReviews (a Sprocket's `spec.size` in v1beta1 is
//! `spec.count` in v1).

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
    if path.starts_with("/convert") {
        return Ok(json_reply(convert(&path, &review)));
    }
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
    Ok(json_reply(review))
}

fn json_reply(body: Value) -> Response<Full<Bytes>> {
    let mut reply = Response::new(Full::new(Bytes::from(body.to_string())));
    reply
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    reply
}

/// A ConversionReview's answer: `/convert` renames `spec.size` (v1beta1)
/// to `spec.count` (v1) and back, labelling what it converted;
/// `/convert-fail` refuses; `/convert-rename` answers other objects.
fn convert(path: &str, review: &Value) -> Value {
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].as_str().unwrap_or_default();
    let (from, to) = if desired.ends_with("/v1") { ("size", "count") } else { ("count", "size") };
    let mut converted = Vec::new();
    for object in request["objects"].as_array().into_iter().flatten() {
        let mut object = object.clone();
        object["apiVersion"] = json!(desired);
        if let Some(n) = object["spec"].as_object_mut().and_then(|spec| spec.remove(from)) {
            object["spec"][to] = n;
        }
        object["metadata"]["labels"]["converted-to"] = json!(desired.rsplit('/').next());
        if path == "/convert-rename" {
            object["metadata"]["name"] = json!("someone-else");
        }
        converted.push(object);
    }
    let result = match path {
        "/convert-fail" => json!({"status": "Failure", "message": "sprockets cannot be converted today"}),
        _ => json!({"status": "Success"}),
    };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
           "response": {"uid": request["uid"], "result": result, "convertedObjects": converted}})
}

/// `response` carrying `operations` as its JSON Patch.
fn patched(mut response: Value, operations: Value) -> Value {
    response["patch"] = json!(base64::engine::general_purpose::STANDARD.encode(operations.to_string()));
    response["patchType"] = json!("JSONPatch");
    response
}
