//! Query parameters of resource requests, checked the way kube checks
//! them, turned into the registry's and the cache's options.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::cacher::{Filter, ListOptions, ReadAt, WatchSpec, WatchStart};
use crate::errors::{ApiError, Cause, go_quote};
use crate::registry::{Propagation, Store};
use crate::runtime::FieldValidation;
use crate::selector::{FieldSelector, LabelSelector};
use crate::storage::Preconditions;

/// A PATCH's options: `force` only for an apply, which needs a
/// `fieldManager` (kube's `ValidatePatchOptions`); whether it forces.
pub fn patch_options(params: &Params, kind: crate::patch::PatchType) -> Result<bool, ApiError> {
    let apply = kind == crate::patch::PatchType::Apply;
    let force = params.get("force");
    let mut causes = Vec::new();
    if !apply && force.is_some() {
        causes.push(Cause {
            reason: "FieldValueForbidden",
            field: "force".into(),
            message: "Forbidden: may not be specified for non-apply patch".into(),
        });
    }
    if apply && params.get("fieldManager").is_none_or(str::is_empty) {
        causes.push(Cause {
            reason: "FieldValueRequired",
            field: "fieldManager".into(),
            message: "Required value: is required for apply patch".into(),
        });
    }
    if !causes.is_empty() {
        return Err(ApiError::Invalid {
            kind: "PatchOptions.meta.k8s.io".into(),
            name: String::new(),
            causes,
        });
    }
    params.field_manager("PatchOptions")?;
    // kube reads `force` as a bool where anything but false is true
    // (`?force` alone too).
    Ok(force.is_some_and(|f| !matches!(f, "0" | "f" | "F" | "false" | "False" | "FALSE")))
}

/// How long a watch without `timeoutSeconds` lasts: kube picks between
/// 30 and 60 minutes so that watches do not all end together.
const MIN_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);
/// The longest watch a client may ask for.
const MAX_WATCH_TIMEOUT_SECONDS: u64 = 24 * 3600;

#[derive(Debug, Clone, Default)]
pub struct Params(pub HashMap<String, String>);

impl Params {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Some("true" | "1"))
    }

    pub fn is_watch(&self) -> bool {
        self.flag("watch")
    }

    /// `dryRun=All` (the only value kube accepts).
    pub fn dry_run(&self) -> Result<bool, ApiError> {
        match self.get("dryRun") {
            None | Some("") => Ok(false),
            Some("All") => Ok(true),
            Some(other) => Err(ApiError::BadRequest(format!(
                "Invalid dryRun value: dryRun: Unsupported value: \"{other}\": supported values: \"All\""
            ))),
        }
    }

    /// `fieldManager` of any write: 128 printable characters at most (kube's
    /// `ValidateFieldManager`); `options` names the kind of options in the
    /// 422 (`CreateOptions`, `PatchOptions`, ...).
    pub fn field_manager(&self, options: &str) -> Result<Option<&str>, ApiError> {
        let Some(manager) = self.get("fieldManager") else {
            return Ok(None);
        };
        let mut causes = Vec::new();
        if manager.len() > 128 {
            causes.push(Cause {
                reason: "FieldValueTooLong",
                field: "fieldManager".into(),
                message: "Too long: may not be more than 128 bytes".into(),
            });
        }
        for (at, c) in manager.char_indices().filter(|(_, c)| c.is_control()) {
            causes.push(Cause {
                reason: "FieldValueInvalid",
                field: "fieldManager".into(),
                message: format!(
                    "Invalid value: {}: invalid character U+{:04X} (at position {at})",
                    go_quote(manager),
                    c as u32
                ),
            });
        }
        if causes.is_empty() {
            return Ok(Some(manager));
        }
        Err(ApiError::Invalid { kind: format!("{options}.meta.k8s.io"), name: String::new(), causes })
    }

    pub fn field_validation(&self) -> Result<FieldValidation, ApiError> {
        FieldValidation::parse(self.get("fieldValidation"))
    }

    /// `resourceVersion`: None when unset, 0 for "0" (any), else N.
    pub fn resource_version(&self) -> Result<Option<i64>, ApiError> {
        match self.get("resourceVersion") {
            None | Some("") => Ok(None),
            Some(text) => text
                .parse::<i64>()
                .ok()
                .filter(|rv| *rv >= 0)
                .map(Some)
                .ok_or_else(|| ApiError::BadRequest(format!("invalid resource version: \"{text}\""))),
        }
    }

    fn selectors(&self, store: &Store, namespace: Option<&str>) -> Result<Filter, ApiError> {
        let field_labels = *store.strategy().field_labels();
        let labels = match self.get("labelSelector") {
            Some(text) if !text.is_empty() => {
                Some(LabelSelector::parse(text).map_err(|e| ApiError::BadRequest(e.to_string()))?)
            }
            _ => None,
        };
        let fields = match self.get("fieldSelector") {
            Some(text) if !text.is_empty() => {
                let fields = FieldSelector::parse(text).map_err(|e| ApiError::BadRequest(e.to_string()))?;
                fields.check_supported(&field_labels).map_err(|e| ApiError::BadRequest(e.to_string()))?;
                Some(fields)
            }
            _ => None,
        };
        Ok(Filter { namespace: namespace.map(str::to_string), labels, fields, field_labels })
    }

    /// A list's options, with kube's rules on combining them.
    pub fn list_options(&self, store: &Store, namespace: Option<&str>) -> Result<ListOptions, ApiError> {
        if self.get("sendInitialEvents").is_some() {
            return Err(ApiError::BadRequest("sendInitialEvents is forbidden for list".into()));
        }
        let continue_token = self.get("continue").filter(|c| !c.is_empty()).map(str::to_string);
        let rv = self.resource_version()?;
        let limit = match self.get("limit") {
            None | Some("") => 0,
            Some(text) => text
                .parse::<i64>()
                .map_err(|_| ApiError::BadRequest(format!("invalid limit: {text}")))?
                .max(0),
        };
        let exact = match self.get("resourceVersionMatch") {
            None | Some("") => rv.is_some_and(|rv| rv > 0) && limit > 0,
            Some(_) if continue_token.is_some() => {
                return Err(ApiError::BadRequest(
                    "resourceVersionMatch is forbidden when continue is provided".into(),
                ));
            }
            Some(_) if rv.is_none() => {
                return Err(ApiError::BadRequest(
                    "resourceVersionMatch is forbidden unless resourceVersion is provided".into(),
                ));
            }
            Some("NotOlderThan") => false,
            Some("Exact") if rv == Some(0) => {
                return Err(ApiError::BadRequest(
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"".into(),
                ));
            }
            Some("Exact") => true,
            Some(other) => {
                return Err(ApiError::BadRequest(format!(
                    "resourceVersionMatch: Unsupported value: \"{other}\": supported values: \"Exact\", \"NotOlderThan\""
                )));
            }
        };
        let at = ReadAt { resource_version: rv, exact };
        Ok(ListOptions { at, limit, continue_token, filter: self.selectors(store, namespace)? })
    }

    /// A watch's options: where it starts, its filter, bookmarks, WatchList.
    pub fn watch_spec(&self, store: &Store, namespace: Option<&str>) -> Result<WatchSpec, ApiError> {
        let rv = self.resource_version()?;
        let send_initial = match self.get("sendInitialEvents") {
            None | Some("") => None,
            Some("true") => Some(true),
            Some("false") => Some(false),
            Some(other) => return Err(ApiError::BadRequest(format!("invalid sendInitialEvents: {other}"))),
        };
        let rv_match = self.get("resourceVersionMatch").filter(|m| !m.is_empty());
        let bookmarks = self.flag("allowWatchBookmarks");
        match (send_initial, rv_match) {
            (Some(_), Some("NotOlderThan")) => {}
            (Some(_), _) => {
                return Err(ApiError::Invalid {
                    kind: "ListOptions".into(),
                    name: String::new(),
                    causes: vec![crate::errors::Cause {
                        reason: "FieldValueRequired",
                        field: "resourceVersionMatch".into(),
                        message: "Required value: resourceVersionMatch is required when sendInitialEvents is provided".into(),
                    }],
                });
            }
            (None, Some(_)) => {
                return Err(ApiError::BadRequest(
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided".into(),
                ));
            }
            (None, None) => {}
        }
        if send_initial == Some(true) && !bookmarks {
            return Err(ApiError::BadRequest(
                "sendInitialEvents requires setting allowWatchBookmarks to true".into(),
            ));
        }
        let start = match (send_initial, rv) {
            (Some(true), _) | (None, None | Some(0)) => WatchStart::CurrentState,
            (Some(false), None | Some(0)) => WatchStart::Now,
            (_, Some(rv)) => WatchStart::After(rv),
        };
        // 0 or unset: kube's default, 30 to 60 minutes so that watches do
        // not all end together; at most a day.
        let asked = match self.get("timeoutSeconds") {
            Some(text) if !text.is_empty() => text
                .parse::<u64>()
                .map_err(|_| ApiError::BadRequest(format!("invalid timeoutSeconds: {text}")))?,
            _ => 0,
        };
        let timeout = match asked {
            0 => {
                MIN_WATCH_TIMEOUT
                    + Duration::from_millis(u64::from(uuid::Uuid::new_v4().as_bytes()[0]) * 7_000)
            }
            seconds => Duration::from_secs(seconds.min(MAX_WATCH_TIMEOUT_SECONDS)),
        };
        Ok(WatchSpec {
            filter: self.selectors(store, namespace)?,
            start,
            not_older_than: if send_initial == Some(true) { rv.unwrap_or(0) } else { 0 },
            bookmarks,
            initial_events_end: send_initial == Some(true),
            deadline: Instant::now() + timeout,
        })
    }
}

/// What a DELETE's body (`DeleteOptions`, may be empty) asks for.
#[derive(Debug, Clone, Default)]
pub struct DeleteBody {
    pub preconditions: Preconditions,
    /// `dryRun: ["All"]` in the body (client-go puts it there, not in the
    /// query).
    pub dry_run: bool,
    /// `propagationPolicy` or `orphanDependents`, from the body or else
    /// the query.
    pub propagation: Option<Propagation>,
    /// `gracePeriodSeconds`, from the body or else the query.
    pub grace_period_seconds: Option<i64>,
}

pub fn delete_body(body: &[u8], params: &Params) -> Result<DeleteBody, ApiError> {
    let mut opts: serde_json::Value = match body.iter().all(u8::is_ascii_whitespace) {
        true => serde_json::json!({}),
        false => serde_json::from_slice(body)
            .map_err(|e| ApiError::BadRequest(format!("invalid DeleteOptions: {e}")))?,
    };
    // kube decodes the query's options first and the body over them.
    for (name, parse) in [("propagationPolicy", false), ("orphanDependents", true)] {
        if let (Some(value), Some(fields)) = (params.get(name), opts.as_object_mut()) {
            let value = match parse {
                true => serde_json::Value::Bool(value == "true"),
                false => serde_json::Value::String(value.to_string()),
            };
            fields.entry(name).or_insert(value);
        }
    }
    if let (Some(text), Some(fields)) = (params.get("gracePeriodSeconds"), opts.as_object_mut()) {
        let seconds: i64 = text.parse().map_err(|_| {
            ApiError::BadRequest(format!(
                "invalid DeleteOptions: gracePeriodSeconds: \"{text}\" is not an integer"
            ))
        })?;
        fields.entry("gracePeriodSeconds").or_insert(seconds.into());
    }
    let grace_period_seconds = match &opts["gracePeriodSeconds"] {
        serde_json::Value::Null => None,
        value => Some(value.as_i64().ok_or_else(|| {
            ApiError::BadRequest(format!(
                "invalid DeleteOptions: gracePeriodSeconds: {value} is not an integer"
            ))
        })?),
    };
    let pre = &opts["preconditions"];
    let resource_version = match pre["resourceVersion"].as_str() {
        Some(text) if !text.is_empty() => Some(
            text.parse::<i64>()
                .map_err(|_| ApiError::BadRequest(format!("invalid resource version: \"{text}\"")))?,
        ),
        _ => None,
    };
    let dry_run = match opts.get("dryRun") {
        None | Some(serde_json::Value::Null) => false,
        Some(serde_json::Value::Array(values)) => match values.as_slice() {
            [] => false,
            [all] if all == "All" => true,
            _ => {
                return Err(ApiError::BadRequest(format!(
                    "Invalid dryRun value: dryRun: Unsupported value: {}: supported values: \"All\"",
                    opts["dryRun"]
                )));
            }
        },
        Some(other) => return Err(ApiError::BadRequest(format!("invalid DeleteOptions: dryRun: {other}"))),
    };
    Ok(DeleteBody {
        preconditions: Preconditions {
            uid: pre["uid"].as_str().filter(|u| !u.is_empty()).map(str::to_string),
            resource_version,
        },
        dry_run,
        propagation: propagation(&opts)?,
        grace_period_seconds,
    })
}

/// kube's `ValidateDeleteOptions` of the policy: one of the three, not
/// together with `orphanDependents` (true: Orphan; false: Background).
fn propagation(opts: &serde_json::Value) -> Result<Option<Propagation>, ApiError> {
    let invalid = |cause: Cause| ApiError::Invalid {
        kind: "DeleteOptions.meta.k8s.io".into(),
        name: String::new(),
        causes: vec![cause],
    };
    let field = "propagationPolicy".to_string();
    let orphan = opts.get("orphanDependents").and_then(serde_json::Value::as_bool);
    let policy = match opts.get("propagationPolicy") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(policy)) => Some(policy.as_str()),
        Some(other) => {
            return Err(ApiError::BadRequest(format!("invalid DeleteOptions: propagationPolicy: {other}")));
        }
    };
    if let (Some(_), Some(policy)) = (orphan, policy) {
        return Err(invalid(Cause {
            reason: "FieldValueInvalid",
            field,
            message: format!(
                "Invalid value: {}: orphanDependents and deletionPropagation cannot be both set",
                go_quote(policy)
            ),
        }));
    }
    Ok(match (policy, orphan) {
        (Some("Background"), _) | (None, Some(false)) => Some(Propagation::Background),
        (Some("Foreground"), _) => Some(Propagation::Foreground),
        (Some("Orphan"), _) | (None, Some(true)) => Some(Propagation::Orphan),
        (None, None) => None,
        (Some(other), _) => {
            return Err(invalid(Cause {
                reason: "FieldValueNotSupported",
                field,
                message: format!(
                    "Unsupported value: {}: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
                    go_quote(other)
                ),
            }));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(body: &str, query: &[(&str, &str)]) -> Result<Option<Propagation>, String> {
        let params = Params(query.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
        delete_body(body.as_bytes(), &params).map(|b| b.propagation).map_err(|e| e.to_string())
    }

    #[test]
    fn propagation_comes_from_the_body_or_the_query_as_kube_reads_it() {
        assert_eq!(policy("", &[]), Ok(None));
        assert_eq!(policy(r#"{"propagationPolicy":"Foreground"}"#, &[]), Ok(Some(Propagation::Foreground)));
        assert_eq!(policy("", &[("propagationPolicy", "Orphan")]), Ok(Some(Propagation::Orphan)));
        // The body wins over the query.
        let both = policy(r#"{"propagationPolicy":"Background"}"#, &[("propagationPolicy", "Orphan")]);
        assert_eq!(both, Ok(Some(Propagation::Background)));
        assert_eq!(policy(r#"{"orphanDependents":true}"#, &[]), Ok(Some(Propagation::Orphan)));
        assert_eq!(policy(r#"{"orphanDependents":false}"#, &[]), Ok(Some(Propagation::Background)));
        assert_eq!(
            policy(r#"{"orphanDependents":true,"propagationPolicy":"Foreground"}"#, &[]),
            Err(r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Foreground": orphanDependents and deletionPropagation cannot be both set"#.into())
        );
        assert_eq!(
            policy(r#"{"propagationPolicy":"Sideways"}"#, &[]),
            Err(r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil""#.into())
        );
    }
}
