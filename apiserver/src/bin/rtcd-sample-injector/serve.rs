//! The webhook server: HTTPS, one AdmissionReview a request on `/inject`,
//! answered in the review's own version. It always allows the pod (a
//! confused injector must never block pods); it only decides whether to
//! patch it. Namespaces' annotations are read from the API server and kept
//! for a few seconds, as an informer would keep them.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};

use crate::inject::{self, Decision, Images};
use crate::kube;

/// How long a namespace's annotations are trusted before reading again.
const NAMESPACE_TTL: Duration = Duration::from_secs(2);
/// The most a review may hold (kube's request limit is 3 MiB).
const MAX_BODY: usize = 6 << 20;

pub struct Options {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    pub port: u16,
    pub kubeconfig: PathBuf,
    pub images: Images,
}

struct Injector {
    api: kube::Client,
    images: Images,
    namespaces: Mutex<HashMap<String, (Instant, Value)>>,
}

pub async fn run(options: Options) -> Result<(), String> {
    let chain = CertificateDer::pem_file_iter(&options.cert_file)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{}: {e}", options.cert_file.display()))?;
    let key = PrivateKeyDer::from_pem_file(&options.key_file)
        .map_err(|e| format!("{}: {e}", options.key_file.display()))?;
    let config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| e.to_string())?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let injector = Arc::new(Injector {
        api: kube::Client::from_kubeconfig(&options.kubeconfig)?,
        images: options.images,
        namespaces: Mutex::default(),
    });
    let listener =
        tokio::net::TcpListener::bind(("0.0.0.0", options.port)).await.map_err(|e| e.to_string())?;
    eprintln!("rtcd-sample-injector: serving AdmissionReviews on https://0.0.0.0:{}/inject", options.port);
    loop {
        let Ok((tcp, _)) = listener.accept().await else { continue };
        let (acceptor, injector) = (acceptor.clone(), injector.clone());
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else { return };
            let service = hyper::service::service_fn(move |request| {
                let injector = injector.clone();
                async move { Ok::<_, hyper::Error>(injector.answer(request).await) }
            });
            let _ =
                hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tls), service).await;
        });
    }
}

impl Injector {
    async fn answer(&self, request: Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
        if request.uri().path() != "/inject" {
            return reply(StatusCode::NOT_FOUND, "only /inject is served\n".into());
        }
        let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
            Ok(body) => body.to_bytes(),
            Err(e) => return reply(StatusCode::BAD_REQUEST, format!("cannot read the body: {e}\n")),
        };
        let review: Value = match serde_json::from_slice(&body) {
            Ok(review) => review,
            Err(e) => return reply(StatusCode::BAD_REQUEST, format!("not an AdmissionReview: {e}\n")),
        };
        let Some(uid) = review["request"]["uid"].as_str() else {
            return reply(StatusCode::BAD_REQUEST, "not an AdmissionReview: no request.uid\n".into());
        };
        let response = self.review(uid, &review["request"]).await;
        let api_version = review["apiVersion"].as_str().unwrap_or("admission.k8s.io/v1");
        let body = json!({"apiVersion": api_version, "kind": "AdmissionReview", "response": response});
        let mut answer = reply(StatusCode::OK, body.to_string());
        answer
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
        answer
    }

    /// The review's response: always allowed, with the patch when the pod
    /// is injected, and why in an audit annotation.
    async fn review(&self, uid: &str, request: &Value) -> Value {
        let pod = &request["object"];
        let namespace = request["namespace"].as_str().unwrap_or_default();
        let annotations = match self.namespace_annotations(namespace).await {
            Ok(annotations) => Some(annotations),
            Err(why) => {
                eprintln!("rtcd-sample-injector: namespace {namespace}: {why}; deciding on the pod alone");
                None
            }
        };
        let mut response = json!({"uid": uid, "allowed": true});
        let is_pod_create = request["kind"]["kind"] == "Pod" && request["operation"] == "CREATE";
        match (is_pod_create, inject::decide(pod, annotations.as_ref())) {
            (true, Decision::Inject) => {
                let patch = inject::patch(pod, &self.images).to_string();
                response["patch"] = json!(base64::engine::general_purpose::STANDARD.encode(patch));
                response["patchType"] = json!("JSONPatch");
                response["auditAnnotations"] = json!({"injected": "true"});
            }
            (false, _) => {
                response["auditAnnotations"] = json!({"injected": "false", "reason": "not a pod create"})
            }
            (true, Decision::Skip(why)) => {
                response["auditAnnotations"] = json!({"injected": "false", "reason": why})
            }
        }
        response
    }

    async fn namespace_annotations(&self, name: &str) -> Result<Value, String> {
        let cached = self.namespaces.lock().unwrap_or_else(|p| p.into_inner()).get(name).cloned();
        if let Some((read, annotations)) = cached
            && read.elapsed() < NAMESPACE_TTL
        {
            return Ok(annotations);
        }
        let annotations = self.api.namespace(name).await?["metadata"]["annotations"].clone();
        let mut namespaces = self.namespaces.lock().unwrap_or_else(|p| p.into_inner());
        namespaces.insert(name.to_string(), (Instant::now(), annotations.clone()));
        Ok(annotations)
    }
}

fn reply(code: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = code;
    response
}
