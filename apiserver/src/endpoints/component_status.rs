//! `componentstatuses` (core v1, deprecated since 1.19, still served): `kubectl get cs`. Never
//! stored: every get or list probes, as kube's, the storage (`etcd-0`), kube-scheduler at
//! `https://127.0.0.1:10259/healthz` and kube-controller-manager at
//! `https://127.0.0.1:10257/healthz` (certificates not verified: a health check, on loopback).
//! Each answer is a ComponentStatus with one `Healthy` condition: True with the body (`ok`) when
//! the probe succeeds, False when it answers otherwise, Unknown with the error when it cannot
//! be reached.

use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::App;
use super::negotiate::{Shape, negotiate};
use super::respond;
use super::reviews::Unstored;
use crate::errors::ApiError;
use crate::request::ResourceRequest;
use crate::table::{self, Printer, col};

pub const COMPONENT_STATUSES: Unstored = Unstored {
    group: "",
    plural: "componentstatuses",
    kind: "ComponentStatus",
    namespaced: false,
    verbs: &["get", "list"],
    short_names: &["cs"],
};

/// kube's deprecation warning for the kind.
const DEPRECATED: &str = "v1 ComponentStatus is deprecated in v1.19+";
/// kube's probe timeout.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);
/// The components kube probes, on their default secure ports.
const COMPONENTS: [(&str, u16); 2] = [("controller-manager", 10257), ("scheduler", 10259)];
const STORAGE: &str = "etcd-0";

pub fn is_component_statuses(info: &ResourceRequest) -> bool {
    info.group.is_empty() && info.version == "v1" && info.resource == "componentstatuses"
}

pub async fn serve(app: &App, info: &ResourceRequest, headers: &HeaderMap) -> Result<Response, ApiError> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let (shape, _) = negotiate(accept, None)?;
    let statuses = match (info.verb, info.name.as_deref()) {
        ("get", Some(name)) => vec![status(app, name).await.ok_or_else(|| ApiError::NotFound {
            qualified: "componentstatus".into(),
            name: name.to_string(),
        })?],
        ("list", None) => {
            let names = COMPONENTS.iter().map(|(name, _)| *name).chain([STORAGE]);
            let probes = names.map(|name| status(app, name));
            futures_util::future::join_all(probes).await.into_iter().flatten().collect()
        }
        _ => {
            return Err(ApiError::MethodNotAllowed(
                "the server does not allow this method on the requested resource".into(),
            ));
        }
    };
    let body = match shape {
        Shape::Table(_) => table(&statuses),
        _ if info.name.is_some() => statuses.into_iter().next().unwrap_or_default(),
        _ => json!({"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": statuses}),
    };
    let response = respond::json_response(StatusCode::OK, &body);
    Ok(respond::with_warnings(response, &[DEPRECATED.to_string()]))
}

/// The ComponentStatus of `name`, probed now; None for a name kube does not probe.
async fn status(app: &App, name: &str) -> Option<Value> {
    let (healthy, message, error) = if name == STORAGE {
        match super::etcd_check(app).await {
            Ok(()) => ("True", "ok".to_string(), String::new()),
            Err(why) => ("False", String::new(), why),
        }
    } else {
        let (_, port) = COMPONENTS.iter().find(|(component, _)| *component == name)?;
        match tokio::time::timeout(PROBE_TIMEOUT, healthz(*port)).await {
            Ok(Ok((code, body))) if (200..400).contains(&code) => ("True", body, String::new()),
            Ok(Ok((_, body))) => ("False", body, String::new()),
            Ok(Err(why)) => ("Unknown", String::new(), why),
            Err(_) => ("Unknown", String::new(), format!("Get \"{}\": timeout", url(*port))),
        }
    };
    Some(json!({
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": name},
        "conditions": [{"type": "Healthy", "status": healthy, "message": message, "error": error}],
    }))
}

fn url(port: u16) -> String {
    format!("https://127.0.0.1:{port}/healthz")
}

/// `GET /healthz` on a loopback port over TLS: the status code and the body; the error in Go's
/// words (`Get "<url>": dial tcp ...: connect: connection refused`) when it cannot be asked.
async fn healthz(port: u16) -> Result<(u16, String), String> {
    let failed = |why: String| format!("Get \"{}\": {why}", url(port));
    let address = format!("127.0.0.1:{port}");
    let tcp = tokio::net::TcpStream::connect(&address).await.map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::ConnectionRefused => "connect: connection refused".to_string(),
            _ => e.to_string(),
        };
        failed(format!("dial tcp {address}: {why}"))
    })?;
    let config = rustls::ClientConfig::builder()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate))
        .with_no_client_auth();
    let name = ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into());
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let request =
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: rtcd-apiserver\r\nConnection: close\r\n\r\n";
    tls.write_all(request.as_bytes()).await.map_err(|e| failed(e.to_string()))?;
    let mut response = Vec::new();
    // A peer that closes without TLS's close_notify still gave its answer.
    let _ = tls.read_to_end(&mut response).await;
    let text = String::from_utf8_lossy(&response);
    let (head, body) = text.split_once("\r\n\r\n").ok_or_else(|| failed("malformed HTTP response".into()))?;
    let code = head.split_whitespace().nth(1).and_then(|c| c.parse().ok());
    let code = code.ok_or_else(|| failed("malformed HTTP response".into()))?;
    Ok((code, body.to_string()))
}

/// kube's columns for the kind.
static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        col("Status", "string", "Status of the component conditions"),
        col("Message", "string", "Message of the component conditions"),
        col("Error", "string", "Error of the component conditions"),
    ],
    cells,
};

/// NAME, STATUS (Healthy when the condition is True, else Unhealthy), MESSAGE, ERROR.
fn cells(status: &Value, _now: i64) -> Vec<Value> {
    let condition = &status["conditions"][0];
    let health = if condition["status"] == "True" { "Healthy" } else { "Unhealthy" };
    vec![
        status["metadata"]["name"].clone(),
        json!(health),
        condition["message"].clone(),
        condition["error"].clone(),
    ]
}

fn table(statuses: &[Value]) -> Value {
    let rows: Vec<Value> = statuses
        .iter()
        .map(|status| json!({"cells": PRINTER.cells(status, 0), "object": respond::partial_metadata(status)}))
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {},
        "columnDefinitions": PRINTER.columns(),
        "rows": rows,
    })
}

/// Accepts any server certificate (kube's probe sets InsecureSkipVerify).
#[derive(Debug)]
struct AnyCertificate;

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn verify_tls13_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        rustls::crypto::ring::default_provider().signature_verification_algorithms.supported_schemes()
    }
}
