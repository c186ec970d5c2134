//! Records audited requests (kube's `WithAudit`), right after
//! authentication: the policy picks the level from the authenticated user
//! and the request; level None costs nothing more. Otherwise the event is
//! shared with the inner layers (`AuditContext`), written at
//! RequestReceived, at ResponseStarted for watches, at ResponseComplete when
//! the response body has been sent (or dropped), and at Panic if the
//! handler panics. At Request level and above the JSON request body is
//! copied as the handler reads it; at RequestResponse the JSON response of
//! a request that is not long-running is kept too.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use futures_util::FutureExt;
use serde_json::{Value, json};

use crate::audit::{AuditContext, AuditId, Auditor, Event, Level, Stage, describe_client, request_uri};
use crate::protobuf;
use crate::request::{RequestInfo, UserInfo};

/// Bodies beyond this are not copied into events (kube truncates too).
const MAX_CAPTURED: usize = 3 * 1024 * 1024;

pub(super) async fn audit(State(auditor): State<Arc<Auditor>>, request: Request, next: Next) -> Response {
    let (Some(info), Some(user)) = (
        request.extensions().get::<RequestInfo>().cloned(),
        request.extensions().get::<Arc<UserInfo>>().cloned(),
    ) else {
        return next.run(request).await;
    };
    let decision = auditor.decide(Some(&user), &info);
    if decision.level == Level::None {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let audit_id = parts.extensions.get::<AuditId>().map(|id| id.0.to_string()).unwrap_or_default();
    let mut event = Event::new(decision.level, &audit_id, &request_uri(&parts), &info);
    event.user = Some((*user).clone());
    describe_client(&mut event, &parts);
    let context = AuditContext(Arc::new(Mutex::new(event)));
    parts.extensions.insert(context.clone());
    if decision.records(Stage::RequestReceived) {
        auditor.record(&context.lock(), Stage::RequestReceived);
    }
    // The request body, copied as the handler reads it.
    let request_format = BodyFormat::of(parts.headers.get(header::CONTENT_TYPE));
    let request_copy = Arc::new(Mutex::new(Vec::new()));
    let body = if decision.level >= Level::Request && request_format.is_some() {
        Body::new(Copied::new(body, request_copy.clone(), None))
    } else {
        body
    };
    let outcome =
        std::panic::AssertUnwindSafe(next.run(Request::from_parts(parts, body))).catch_unwind().await;
    let response = match outcome {
        Ok(response) => response,
        Err(panic) => {
            if decision.records(Stage::Panic) {
                let mut event = context.lock().clone();
                event.response_status = Some(json!({
                    "metadata": {}, "status": "Failure", "code": 500,
                    "message": "This request caused apiserver to panic. Look in the logs for details.",
                }));
                auditor.record(&event, Stage::Panic);
            }
            std::panic::resume_unwind(panic);
        }
    };
    let code = response.status();
    let long_running = info.is_long_running() && code.is_success();
    if long_running && decision.records(Stage::ResponseStarted) {
        let mut event = context.lock().clone();
        event.response_status = Some(json!({"metadata": {}, "code": code.as_u16()}));
        auditor.record(&event, Stage::ResponseStarted);
    }
    // Errors are kept to report their Status; successes only at
    // RequestResponse (and never a watch's stream).
    let keep_response = !code.is_success() || (decision.level == Level::RequestResponse && !long_running);
    // JSON, or protobuf for the clients that ask for it (recorded as the JSON it decodes to).
    let response_format = BodyFormat::of(response.headers().get(header::CONTENT_TYPE));
    let records_complete = decision.records(Stage::ResponseComplete);
    let level = decision.level;
    let (parts, body) = response.into_parts();
    let finish = Box::new(move |response_body: Option<Vec<u8>>| {
        if !records_complete {
            return;
        }
        // The last stage: the event is finished in place, not copied.
        let mut event = context.lock();
        if level >= Level::Request {
            let copied = std::mem::take(&mut *request_copy.lock().unwrap_or_else(|p| p.into_inner()));
            event.request_object = request_format.and_then(|format| format.decode(&copied));
        }
        let body: Option<Value> =
            response_body.and_then(|b| response_format.and_then(|format| format.decode(&b)));
        event.response_status = Some(response_status(code, body.as_ref()));
        if level == Level::RequestResponse && code.is_success() {
            event.response_object = body;
        }
        auditor.record(&event, Stage::ResponseComplete);
    });
    let copy = (keep_response && response_format.is_some()).then(|| Arc::new(Mutex::new(Vec::new())));
    let body = Body::new(Copied::new(body, copy.unwrap_or_default(), Some(finish)));
    Response::from_parts(parts, body)
}

/// How a request or response body is written; the event records it as JSON, as kube
/// records the decoded object.
#[derive(Debug, Clone, Copy)]
enum BodyFormat {
    Json,
    Protobuf,
    Yaml,
}

impl BodyFormat {
    fn of(content_type: Option<&axum::http::HeaderValue>) -> Option<BodyFormat> {
        let media = content_type.and_then(|v| v.to_str().ok())?.split(';').next()?.trim();
        match media {
            protobuf::PROTOBUF => Some(BodyFormat::Protobuf),
            "application/yaml" => Some(BodyFormat::Yaml),
            m if m.starts_with("application/") && m.ends_with("json") => Some(BodyFormat::Json),
            _ => None,
        }
    }

    fn decode(self, body: &[u8]) -> Option<Value> {
        match self {
            BodyFormat::Json => serde_json::from_slice(body).ok(),
            BodyFormat::Protobuf => protobuf::decode(body).ok(),
            BodyFormat::Yaml => serde_norway::from_slice(body).ok(),
        }
    }
}

/// `responseStatus`: the code, and for a failure the Status it sent.
fn response_status(code: StatusCode, body: Option<&Value>) -> Value {
    let mut status = json!({"metadata": {}, "code": code.as_u16()});
    if let Some(sent) = body.filter(|b| !code.is_success() && b["kind"] == "Status") {
        for field in ["status", "message", "reason", "details"] {
            if let Some(value) = sent.get(field).filter(|v| !v.is_null()) {
                status[field] = value.clone();
            }
        }
    }
    status
}

type Finish = Box<dyn FnOnce(Option<Vec<u8>>) + Send>;

/// A body passed through unchanged while what goes by is copied (up to
/// [`MAX_CAPTURED`]), with `finish` called once when it ends or is dropped.
struct Copied {
    inner: Body,
    copy: Arc<Mutex<Vec<u8>>>,
    copying: bool,
    finish: Option<Finish>,
}

impl Copied {
    fn new(inner: Body, copy: Arc<Mutex<Vec<u8>>>, finish: Option<Finish>) -> Copied {
        Copied { inner, copy, copying: true, finish }
    }

    fn done(&mut self) {
        if let Some(finish) = self.finish.take() {
            let copied = std::mem::take(&mut *self.copy.lock().unwrap_or_else(|p| p.into_inner()));
            finish((self.copying && !copied.is_empty()).then_some(copied));
        }
    }
}

impl http_body::Body for Copied {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref()
                    && self.copying
                {
                    let mut copy = self.copy.lock().unwrap_or_else(|p| p.into_inner());
                    if copy.len() + data.len() > MAX_CAPTURED {
                        copy.clear();
                        drop(copy);
                        self.copying = false;
                    } else {
                        copy.extend_from_slice(data);
                    }
                }
            }
            Poll::Ready(None) | Poll::Ready(Some(Err(_))) => self.done(),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Copied {
    fn drop(&mut self) {
        self.done();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::Router;
    use axum::http::Request as HttpRequest;
    use axum::middleware;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;
    use crate::audit::{Policy, log::Rotation};

    const POLICY: &str = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n";

    /// The audit layers around `handler`, as the chain puts them, with a
    /// user already authenticated; events go to `dir/audit.log`.
    fn app(dir: &std::path::Path, handler: Router, watch: bool) -> Router {
        let policy = Policy::parse(POLICY).unwrap();
        let rotation = Rotation { max_bytes: 0, max_backups: 0, max_age: Duration::ZERO };
        let auditor = Arc::new(Auditor::new(policy, &dir.join("audit.log"), rotation).unwrap());
        handler
            .layer(middleware::from_fn(|request: Request, next: Next| async move {
                // An inner layer's annotation reaches the event.
                if let Some(context) = request.extensions().get::<AuditContext>() {
                    context.annotate("test/seen", "yes");
                }
                next.run(request).await
            }))
            .layer(middleware::from_fn_with_state(auditor, audit))
            .layer(middleware::from_fn(move |mut request: Request, next: Next| async move {
                let info = RequestInfo::parse(request.method(), request.uri().path(), watch);
                request.extensions_mut().insert(info);
                request
                    .extensions_mut()
                    .insert(Arc::new(UserInfo { name: "jane".into(), ..UserInfo::default() }));
                next.run(request).await
            }))
            .layer(middleware::from_fn(super::super::audit_init::audit_init))
    }

    fn events(dir: &std::path::Path, count: usize) -> Vec<Value> {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(dir.join("audit.log")).unwrap_or_default();
            let events: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
            if events.len() >= count {
                return events;
            }
            assert!(std::time::Instant::now() < deadline, "only {} events", events.len());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[tokio::test]
    async fn a_request_is_recorded_at_each_stage_with_its_bodies() {
        let dir = tempfile::tempdir().unwrap();
        let handler = Router::new().fallback(|body: Bytes| async move {
            let mut object: Value = serde_json::from_slice(&body).unwrap();
            object["status"] = json!("made");
            (StatusCode::CREATED, [(header::CONTENT_TYPE, "application/json")], object.to_string())
        });
        let request = HttpRequest::post("/api/v1/namespaces/dev/configmaps")
            .header("audit-id", "given-id")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(r#"{"metadata":{"name":"c"}}"#))
            .unwrap();
        let response = app(dir.path(), handler, false).oneshot(request).await.unwrap();
        assert_eq!(response.headers()["audit-id"], "given-id");
        response.into_body().collect().await.unwrap();
        let events = events(dir.path(), 2);
        let stages: Vec<&str> = events.iter().map(|e| e["stage"].as_str().unwrap()).collect();
        assert_eq!(stages, ["RequestReceived", "ResponseComplete"]);
        let complete = &events[1];
        assert_eq!(complete["auditID"], "given-id");
        assert_eq!(complete["verb"], "create");
        assert_eq!(complete["user"]["username"], "jane");
        assert_eq!(complete["requestObject"], json!({"metadata": {"name": "c"}}));
        assert_eq!(complete["responseObject"]["status"], "made");
        assert_eq!(complete["responseStatus"], json!({"metadata": {}, "code": 201}));
        assert_eq!(complete["annotations"]["test/seen"], "yes");
    }

    #[tokio::test]
    async fn a_watch_is_recorded_when_it_starts_and_when_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let handler = Router::new().fallback(|| async { "event-1\nevent-2\n" });
        let request = HttpRequest::get("/api/v1/configmaps?watch=1").body(Body::empty()).unwrap();
        let response = app(dir.path(), handler, true).oneshot(request).await.unwrap();
        let events_now = std::fs::read_to_string(dir.path().join("audit.log")).unwrap_or_default();
        assert!(!events_now.contains("ResponseComplete"), "the stream has not ended yet");
        response.into_body().collect().await.unwrap();
        let events = events(dir.path(), 3);
        let stages: Vec<&str> = events.iter().map(|e| e["stage"].as_str().unwrap()).collect();
        assert_eq!(stages, ["RequestReceived", "ResponseStarted", "ResponseComplete"]);
        assert!(events[2].get("responseObject").is_none(), "a watch's stream is not recorded");
    }

    #[tokio::test]
    async fn a_panicking_handler_is_recorded_at_the_panic_stage() {
        let dir = tempfile::tempdir().unwrap();
        let handler = Router::new().fallback(|| async {
            if true {
                panic!("boom");
            }
            ""
        });
        let app = app(dir.path(), handler, false);
        let request = HttpRequest::get("/api/v1/pods").body(Body::empty()).unwrap();
        let outcome = std::panic::AssertUnwindSafe(app.oneshot(request)).catch_unwind().await;
        assert!(outcome.is_err(), "the panic goes on to the recovery filter");
        let events = events(dir.path(), 2);
        assert_eq!(events[1]["stage"], "Panic");
        assert_eq!(events[1]["responseStatus"]["code"], 500);
    }
}
