//! Auditing (audit.k8s.io/v1): with `--audit-policy-file` and a backend
//! (`--audit-log-path`), every request the policy selects is recorded as
//! events, one per stage, with who asked (and whom they impersonated), what
//! about, the decision of the authorizers, and, by level, the request and
//! response bodies. Without a policy nothing is recorded, as in kube.
//!
//! * `policy`: which requests, at which level.
//! * `event`: the events as kube writes them.
//! * `log`: the bounded, non-blocking log file writer.
//!
//! The audit filters drive it; the
//! impersonation and authorization filters add to the request's
//! [`AuditContext`].

pub mod event;
pub mod log;
pub mod policy;

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::request::Parts;
use serde_json::{Value, json};

pub use event::Event;
pub use policy::{Decision, Level, Policy, Stage};

use crate::options::AuditOptions;
use crate::request::{RequestInfo, UserInfo};

#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("cannot read the audit policy {path}: {why}")]
    Policy { path: String, why: String },
    #[error("cannot open the audit log {path}: {why}")]
    Log { path: String, why: String },
}

/// The request's audit ID (the client's `Audit-ID`, else a new UUID),
/// in the extensions of every request and echoed as `Audit-Id`.
#[derive(Debug, Clone)]
pub struct AuditId(pub Arc<str>);

/// The policy and the backend.
#[derive(Debug)]
pub struct Auditor {
    policy: Policy,
    log: log::LogBackend,
    counters: Arc<log::Counters>,
    /// Events by level, for `apiserver_audit_level_total`.
    levels: Mutex<[u64; 4]>,
}

impl Auditor {
    /// The auditor the flags describe; None without a policy or a log.
    pub fn from_options(options: &AuditOptions) -> Result<Option<Arc<Auditor>>, AuditError> {
        let (Some(policy_path), Some(log_path)) = (&options.audit_policy_file, &options.audit_log_path)
        else {
            return Ok(None);
        };
        let policy_error = |why: String| AuditError::Policy { path: policy_path.display().to_string(), why };
        let text = std::fs::read_to_string(policy_path).map_err(|e| policy_error(e.to_string()))?;
        let policy = Policy::parse(&text).map_err(policy_error)?;
        let rotation = log::Rotation {
            max_bytes: u64::from(options.audit_log_maxsize) * 1024 * 1024,
            max_backups: options.audit_log_maxbackup as usize,
            max_age: Duration::from_secs(u64::from(options.audit_log_maxage) * 24 * 3600),
        };
        Ok(Some(Arc::new(Auditor::new(policy, log_path, rotation)?)))
    }

    pub fn new(
        policy: Policy,
        log_path: &std::path::Path,
        rotation: log::Rotation,
    ) -> Result<Auditor, AuditError> {
        let counters = Arc::new(log::Counters::default());
        let log = log::LogBackend::start(log_path, rotation, counters.clone())
            .map_err(|e| AuditError::Log { path: log_path.display().to_string(), why: e.to_string() })?;
        Ok(Auditor { policy, log, counters, levels: Mutex::new([0; 4]) })
    }

    pub fn decide(&self, user: Option<&UserInfo>, info: &RequestInfo) -> Decision {
        self.policy.decide(user, info)
    }

    /// Writes the event of `stage`.
    pub fn record(&self, event: &Event, stage: Stage) {
        self.levels.lock().unwrap_or_else(|p| p.into_inner())[event.level as usize] += 1;
        match serde_json::to_vec(&event.to_json(stage)) {
            Ok(line) => self.log.write(line),
            Err(e) => tracing::warn!(error = %e, "an audit event could not be encoded"),
        }
    }

    /// kube's failed-authentication audit: the 401, for the policy's
    /// catch-all rules (there is no user to match).
    pub fn failed_authentication(&self, parts: &Parts, info: &RequestInfo, audit_id: &str, message: &str) {
        let decision = self.decide(None, info);
        if !decision.records(Stage::ResponseComplete) {
            return;
        }
        let mut event = Event::new(decision.level, audit_id, &request_uri(parts), info);
        describe_client(&mut event, parts);
        event.response_status = Some(json!({"metadata": {}, "message": message, "code": 401}));
        self.record(&event, Stage::ResponseComplete);
    }

    /// `apiserver_audit_*` in Prometheus text.
    pub fn write_metrics(&self, out: &mut String) {
        let events = self.counters.events.load(Ordering::Relaxed);
        let errors = self.counters.errors.load(Ordering::Relaxed);
        out.push_str("# HELP apiserver_audit_event_total Counter of audit events generated and sent to the audit backend.\n");
        out.push_str("# TYPE apiserver_audit_event_total counter\n");
        let _ = writeln!(out, "apiserver_audit_event_total {events}");
        out.push_str("# HELP apiserver_audit_error_total Counter of audit events that failed to be audited properly.\n");
        out.push_str("# TYPE apiserver_audit_error_total counter\n");
        let _ = writeln!(out, "apiserver_audit_error_total{{plugin=\"log\"}} {errors}");
        out.push_str(
            "# HELP apiserver_audit_level_total Counter of policy levels for audit events (1 per request).\n",
        );
        out.push_str("# TYPE apiserver_audit_level_total counter\n");
        let levels = *self.levels.lock().unwrap_or_else(|p| p.into_inner());
        for level in [Level::Metadata, Level::Request, Level::RequestResponse] {
            let _ = writeln!(
                out,
                "apiserver_audit_level_total{{level=\"{}\"}} {}",
                level.as_str(),
                levels[level as usize]
            );
        }
    }
}

/// The path and query, as the client sent them.
pub fn request_uri(parts: &Parts) -> String {
    parts.uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| parts.uri.path().to_string())
}

/// `sourceIPs` (the X-Forwarded-For chain, then the peer) and `userAgent`.
pub fn describe_client(event: &mut Event, parts: &Parts) {
    if let Some(forwarded) = parts.headers.get("x-forwarded-for").and_then(|v| v.to_str().ok()) {
        event
            .source_ips
            .extend(forwarded.split(',').map(|ip| ip.trim().to_string()).filter(|ip| !ip.is_empty()));
    }
    if let Some(peer) = parts.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>() {
        event.source_ips.push(peer.0.ip().to_string());
    }
    if let Some(agent) = parts.headers.get("user-agent").and_then(|v| v.to_str().ok()) {
        event.user_agent = agent.to_string();
    }
}

/// An audited request's event, shared with the layers inside the audit
/// filter (impersonation, authorization) that add to it.
#[derive(Debug, Clone)]
pub struct AuditContext(pub Arc<Mutex<Event>>);

impl AuditContext {
    pub fn set_impersonated_user(&self, user: &UserInfo) {
        self.lock().impersonated_user = Some(user.clone());
    }

    pub fn annotate(&self, key: &str, value: impl Into<String>) {
        self.lock().annotations.insert(key.to_string(), Value::String(value.into()));
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, Event> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}
