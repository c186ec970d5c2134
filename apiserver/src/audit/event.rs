//! audit.k8s.io/v1 `Event`s, one per stage of an audited request, written
//! as kube writes them (empty fields left out, times in RFC 3339 with
//! microseconds).

use serde_json::{Map, Value, json};

use super::policy::{Level, Stage};
use crate::request::{RequestInfo, UserInfo};

/// What every event of one request shares.
#[derive(Debug, Clone)]
pub struct Event {
    pub level: Level,
    pub audit_id: String,
    pub request_uri: String,
    pub verb: String,
    pub user: Option<UserInfo>,
    pub impersonated_user: Option<UserInfo>,
    pub source_ips: Vec<String>,
    pub user_agent: String,
    pub object_ref: Option<Value>,
    pub received: jiff::Timestamp,
    pub annotations: Map<String, Value>,
    pub request_object: Option<Value>,
    pub response_object: Option<Value>,
    pub response_status: Option<Value>,
}

impl Event {
    pub fn new(level: Level, audit_id: &str, request_uri: &str, info: &RequestInfo) -> Event {
        Event {
            level,
            audit_id: audit_id.to_string(),
            request_uri: request_uri.to_string(),
            verb: info.verb().to_string(),
            user: None,
            impersonated_user: None,
            source_ips: Vec::new(),
            user_agent: String::new(),
            object_ref: object_ref(info),
            received: jiff::Timestamp::now(),
            annotations: Map::new(),
            request_object: None,
            response_object: None,
            response_status: None,
        }
    }

    /// The event of `stage`, as one JSON line.
    pub fn to_json(&self, stage: Stage) -> Value {
        let mut fields = Map::new();
        let base = json!({
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": self.level.as_str(),
            "auditID": self.audit_id,
            "stage": stage.as_str(),
            "requestURI": self.request_uri,
            "verb": self.verb,
            "user": self.user.as_ref().map(UserInfo::to_json).unwrap_or_else(|| json!({})),
            "requestReceivedTimestamp": micros(self.received),
            "stageTimestamp": micros(jiff::Timestamp::now()),
        });
        if let Value::Object(base) = base {
            fields.extend(base);
        }
        if let Some(user) = &self.impersonated_user {
            fields.insert("impersonatedUser".into(), user.to_json());
        }
        if !self.source_ips.is_empty() {
            fields.insert("sourceIPs".into(), json!(self.source_ips));
        }
        if !self.user_agent.is_empty() {
            fields.insert("userAgent".into(), json!(self.user_agent));
        }
        for (field, value) in [
            ("objectRef", &self.object_ref),
            ("responseStatus", &self.response_status),
            ("requestObject", &self.request_object),
            ("responseObject", &self.response_object),
        ] {
            if let Some(value) = value {
                fields.insert(field.into(), value.clone());
            }
        }
        if !self.annotations.is_empty() {
            fields.insert("annotations".into(), Value::Object(self.annotations.clone()));
        }
        Value::Object(fields)
    }
}

/// `2026-07-01T10:00:00.000001Z`.
fn micros(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// What a resource request is about (`objectRef`); None for paths.
fn object_ref(info: &RequestInfo) -> Option<Value> {
    let RequestInfo::Resource(r) = info else { return None };
    let mut out = Map::new();
    out.insert("resource".into(), json!(r.resource));
    for (field, value) in [("namespace", &r.namespace), ("name", &r.name), ("subresource", &r.subresource)] {
        if let Some(value) = value {
            out.insert(field.into(), json!(value));
        }
    }
    if !r.group.is_empty() {
        out.insert("apiGroup".into(), json!(r.group));
    }
    out.insert("apiVersion".into(), json!(r.version));
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use axum::http::Method;

    use super::*;

    #[test]
    fn events_carry_kubes_fields_and_leave_out_empty_ones() {
        let info = RequestInfo::parse(&Method::GET, "/apis/apps/v1/namespaces/dev/deployments/web", false);
        let mut event =
            Event::new(Level::Metadata, "id-1", "/apis/apps/v1/namespaces/dev/deployments/web", &info);
        event.user =
            Some(UserInfo { name: "jane".into(), groups: vec!["dev".into()], ..UserInfo::default() });
        event.response_status = Some(json!({"metadata": {}, "code": 200}));
        let json = event.to_json(Stage::ResponseComplete);
        assert_eq!(json["stage"], "ResponseComplete");
        assert_eq!(json["verb"], "get");
        assert_eq!(json["user"], json!({"username": "jane", "groups": ["dev"]}));
        assert_eq!(
            json["objectRef"],
            json!({"resource": "deployments", "namespace": "dev", "name": "web", "apiGroup": "apps", "apiVersion": "v1"})
        );
        for absent in ["impersonatedUser", "requestObject", "responseObject", "annotations", "userAgent"] {
            assert!(json.get(absent).is_none(), "{absent}");
        }
        let stamp = json["stageTimestamp"].as_str().unwrap();
        assert!(stamp.ends_with('Z') && stamp.len() == "2026-07-01T10:00:00.000001Z".len(), "{stamp}");
    }
}
