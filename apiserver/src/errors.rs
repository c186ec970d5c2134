//! Every error a client can see, and the one place each becomes a
//! `metav1.Status` with kube's HTTP code, reason and message.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::storage::StorageError;

/// The most an error answer carries of its message, of one cause's
/// message, and of its causes together. kube has no bound: one request
/// could be answered with gigabytes (a 50,000-value enum repeated in each
/// of a thousand causes, an apply conflicting on 130,000 fields). Past
/// these, an answer says how much it leaves out, keeping it under 1 MiB
/// even when JSON escaping doubles every byte (quotes in quoted values).
const MAX_MESSAGE_BYTES: usize = 128 << 10;
const MAX_CAUSE_MESSAGE_BYTES: usize = 32 << 10;
const MAX_CAUSES_BYTES: usize = 256 << 10;

/// What went wrong, in the terms kube-apiserver answers with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApiError {
    #[error("{qualified} \"{name}\" not found")]
    NotFound { qualified: String, name: String },
    #[error("{qualified} \"{name}\" already exists")]
    AlreadyExists { qualified: String, name: String },
    /// A resourceVersion or uid precondition did not hold.
    #[error("Operation cannot be fulfilled on {qualified} \"{name}\": {why}")]
    Conflict { qualified: String, name: String, why: String },
    /// A server-side apply that would change fields other managers hold.
    #[error("{message}")]
    ApplyConflict { message: String, causes: Vec<Cause> },
    #[error("{0}")]
    Expired(String),
    /// A continued list whose revision is compacted: 410 with a token that
    /// goes on from the same key at the latest revision.
    #[error("{message}")]
    ExpiredContinue { message: String, continue_token: String },
    /// Validation failed: `<Kind> "<name>" is invalid: <causes>`, several
    /// causes bracketed and repeated ones once (kube's error aggregate).
    #[error("{kind} \"{name}\" is invalid: {}", aggregate(causes))]
    Invalid { kind: String, name: String, causes: Vec<Cause> },
    /// A request that is well-formed but cannot be applied (a patch that
    /// does not fit the object): 422 without field causes.
    #[error("{0}")]
    Unprocessable(String),
    #[error("{0}")]
    BadRequest(String),
    /// A body, or what a patch would copy, over the server's limits:
    /// kube's `NewRequestEntityTooLargeError`.
    #[error("Request entity too large: {0}")]
    RequestEntityTooLarge(String),
    /// A request the authorizers did not allow, an impersonation or RBAC
    /// grant they refused, or a write an admission plugin refused (kube's
    /// `NewForbidden`): `qualified` is `<resource>[.<group>]`, empty for a
    /// path; `why` says who cannot do what; `causes` go into the details.
    #[error("{}", forbidden_message(qualified, name, why))]
    ForbiddenFor { qualified: String, name: String, why: String, causes: Vec<Cause> },
    /// No valid credentials (kube answers just "Unauthorized").
    #[error("Unauthorized")]
    Unauthorized,
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("{0}")]
    NotAcceptable(String),
    #[error("the server could not find the requested resource")]
    NoSuchPath,
    #[error("{0}")]
    MethodNotAllowed(String),
    #[error("Too many requests, please try again later.")]
    TooManyRequests,
    /// A read or watch at a revision the server has not seen yet: kube's
    /// 504 whose cause tells client-go to relist from the latest.
    #[error("Timeout: Too large resource version: {requested}, current: {current}")]
    TooLargeResourceVersion { requested: i64, current: i64 },
    #[error("Internal error occurred: {0}")]
    Internal(String),
    /// An error kube returns as it is, not as a typed API error: 500 with
    /// the bare message and no reason (the field manager's refusals of an
    /// applied configuration the schema cannot place).
    #[error("{0}")]
    Untyped(String),
    #[error("{0}")]
    ServiceUnavailable(String),
    /// A webhook's refusal: its Status as it sent it, but for kube's
    /// message prefix and the code and status kube insists on.
    #[error("{message}")]
    Denied { code: u16, reason: String, message: String, details: Option<Value> },
}

/// One reason a field is invalid (`details.causes[]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    /// `FieldValueInvalid`, `FieldValueRequired`, ...
    pub reason: &'static str,
    pub field: String,
    pub message: String,
}

impl ApiError {
    pub fn code(&self) -> u16 {
        match self {
            ApiError::NotFound { .. } | ApiError::NoSuchPath => 404,
            ApiError::AlreadyExists { .. } | ApiError::Conflict { .. } | ApiError::ApplyConflict { .. } => {
                409
            }
            ApiError::Expired(_) | ApiError::ExpiredContinue { .. } => 410,
            ApiError::Invalid { .. } | ApiError::Unprocessable(_) => 422,
            ApiError::BadRequest(_) => 400,
            ApiError::RequestEntityTooLarge(_) => 413,
            ApiError::ForbiddenFor { .. } => 403,
            ApiError::Unauthorized => 401,
            ApiError::UnsupportedMediaType(_) => 415,
            ApiError::NotAcceptable(_) => 406,
            ApiError::MethodNotAllowed(_) => 405,
            ApiError::TooManyRequests => 429,
            ApiError::TooLargeResourceVersion { .. } => 504,
            ApiError::Internal(_) | ApiError::Untyped(_) => 500,
            ApiError::ServiceUnavailable(_) => 503,
            ApiError::Denied { code, .. } => *code,
        }
    }

    pub fn reason(&self) -> &'static str {
        match self {
            ApiError::NotFound { .. } | ApiError::NoSuchPath => "NotFound",
            ApiError::AlreadyExists { .. } => "AlreadyExists",
            ApiError::Conflict { .. } | ApiError::ApplyConflict { .. } => "Conflict",
            ApiError::Expired(_) | ApiError::ExpiredContinue { .. } => "Expired",
            ApiError::Invalid { .. } | ApiError::Unprocessable(_) => "Invalid",
            ApiError::BadRequest(_) => "BadRequest",
            ApiError::RequestEntityTooLarge(_) => "RequestEntityTooLarge",
            ApiError::ForbiddenFor { .. } => "Forbidden",
            ApiError::Unauthorized => "Unauthorized",
            ApiError::UnsupportedMediaType(_) => "UnsupportedMediaType",
            ApiError::NotAcceptable(_) => "NotAcceptable",
            ApiError::MethodNotAllowed(_) => "MethodNotAllowed",
            ApiError::TooManyRequests => "TooManyRequests",
            ApiError::TooLargeResourceVersion { .. } => "Timeout",
            ApiError::Internal(_) => "InternalError",
            ApiError::ServiceUnavailable(_) => "ServiceUnavailable",
            // Whatever the webhook said; `status` writes it.
            ApiError::Denied { .. } | ApiError::Untyped(_) => "",
        }
    }

    /// The `metav1.Status` body for this error.
    pub fn status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": bounded(self.to_string(), MAX_MESSAGE_BYTES),
            "reason": self.reason(),
            "code": self.code(),
        });
        if let Some(details) = self.details() {
            status["details"] = details;
        }
        if let (ApiError::Untyped(_), Some(fields)) = (self, status.as_object_mut()) {
            fields.remove("reason");
        }
        if let (ApiError::Denied { reason, .. }, Some(fields)) = (self, status.as_object_mut()) {
            match reason.as_str() {
                "" => fields.remove("reason"),
                reason => fields.insert("reason".into(), json!(reason)),
            };
        }
        if let ApiError::ExpiredContinue { continue_token, .. } = self {
            status["metadata"] = json!({"continue": continue_token});
        }
        status
    }

    fn details(&self) -> Option<Value> {
        match self {
            ApiError::NotFound { qualified, name }
            | ApiError::AlreadyExists { qualified, name }
            | ApiError::Conflict { qualified, name, .. } => {
                let (kind, group) = qualified.split_once('.').unwrap_or((qualified, ""));
                let mut details = json!({"name": name, "kind": kind});
                if !group.is_empty() {
                    details["group"] = json!(group);
                }
                Some(details)
            }
            ApiError::Invalid { kind, name, causes } => {
                // `Deployment.apps`: kind and group apart, as kube's details.
                let (kind, group) = kind.split_once('.').unwrap_or((kind, ""));
                let mut details = json!({"name": name, "kind": kind});
                if !group.is_empty() {
                    details["group"] = json!(group);
                }
                details["causes"] = causes_json(causes);
                Some(details)
            }
            ApiError::ForbiddenFor { qualified, name, causes, .. } => {
                // kube fills group, kind (the plural) and name, each only
                // when set: a path's 403 carries empty details.
                let (kind, group) = qualified.split_once('.').unwrap_or((qualified, ""));
                let mut details = json!({});
                for (field, value) in [("name", name.as_str()), ("group", group), ("kind", kind)] {
                    if !value.is_empty() {
                        details[field] = json!(value);
                    }
                }
                if !causes.is_empty() {
                    details["causes"] = causes_json(causes);
                }
                Some(details)
            }
            ApiError::ApplyConflict { causes, .. } => Some(json!({"causes": causes_json(causes)})),
            ApiError::TooManyRequests => Some(json!({"retryAfterSeconds": 1})),
            // kube's NewInternalError repeats the error as the one cause.
            ApiError::Internal(message) => Some(json!({"causes": [{"message": message}]})),
            ApiError::Denied { details, .. } => details.clone(),
            ApiError::TooLargeResourceVersion { .. } => Some(json!({
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1,
            })),
            _ => None,
        }
    }

    /// Seconds a client should wait before trying again, if it should.
    pub fn retry_after(&self) -> Option<u32> {
        match self {
            ApiError::TooManyRequests | ApiError::TooLargeResourceVersion { .. } => Some(1),
            // what kube's handlers do with a Status's retryAfterSeconds
            ApiError::Denied { details: Some(details), .. } => {
                details["retryAfterSeconds"].as_u64().filter(|s| *s > 0).and_then(|s| u32::try_from(s).ok())
            }
            _ => None,
        }
    }

    /// Maps a storage error on object `name` of `qualified` (as kube names
    /// the resource in messages).
    pub fn from_storage(err: StorageError, qualified: &str, name: &str) -> ApiError {
        let qualified = qualified.to_string();
        let name = name.to_string();
        match err {
            StorageError::NotFound { .. } => ApiError::NotFound { qualified, name },
            StorageError::AlreadyExists { .. } => ApiError::AlreadyExists { qualified, name },
            StorageError::PreconditionFailed { why, .. } => ApiError::Conflict { qualified, name, why },
            StorageError::Expired => ApiError::Expired(err.to_string()),
            // Callers that know the revisions say them (TooLargeResourceVersion).
            StorageError::FutureRevision => ApiError::TooLargeResourceVersion { requested: 0, current: 0 },
            StorageError::InvalidContinue(_) => ApiError::BadRequest(err.to_string()),
            StorageError::Update(message) => ApiError::BadRequest(message),
            StorageError::Etcd(message) => ApiError::Internal(message),
            // kube passes it on as it is: a 500 with etcd's words and no
            // reason.
            StorageError::TooLarge(message) => ApiError::Untyped(message),
            // kube passes a conversion webhook's failure on as a plain
            // error: a 500 with no reason.
            StorageError::Conversion(message) => ApiError::Untyped(message),
        }
    }
}

/// A Status's `details.causes`, as many as fit [`MAX_CAUSES_BYTES`] (each
/// message within [`MAX_CAUSE_MESSAGE_BYTES`]); a last cause counts those
/// left out.
fn causes_json(causes: &[Cause]) -> Value {
    let mut size = 0;
    let mut shown = Vec::new();
    for cause in causes {
        let message = bounded(cause.message.clone(), MAX_CAUSE_MESSAGE_BYTES);
        size += message.len() + cause.field.len() + cause.reason.len();
        if size > MAX_CAUSES_BYTES {
            let left = causes.len() - shown.len();
            shown.push(json!({"message": format!("{left} more causes not shown")}));
            break;
        }
        shown.push(json!({"reason": cause.reason, "message": message, "field": cause.field}));
    }
    Value::Array(shown)
}

/// Causes as kube's error aggregate prints them: one alone, several in
/// brackets, each distinct message once; stopped, with a count of those
/// left, once past [`MAX_MESSAGE_BYTES`].
fn aggregate(causes: &[Cause]) -> String {
    let mut seen = HashSet::new();
    let mut lines: Vec<String> = Vec::new();
    let mut size = 0;
    // Room left for the kind and name before, and the count after.
    let room = MAX_MESSAGE_BYTES - 4096;
    for (i, cause) in causes.iter().enumerate() {
        let line = format!("{}: {}", cause.field, bounded(cause.message.clone(), MAX_CAUSE_MESSAGE_BYTES));
        if size + line.len() > room {
            lines.push(format!("and {} more", causes.len() - i));
            break;
        }
        if seen.insert(line.clone()) {
            size += line.len() + 2;
            lines.push(line);
        }
    }
    match lines.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// `text` cut to about `max` bytes (on character boundaries) by leaving
/// out its middle, saying how much: what kube says about a value comes
/// after it (`Invalid value: <value>: <why>`), so both ends are kept.
fn bounded(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut head = max / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - max / 2;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}... ({} bytes not shown) ...{}", &text[..head], tail - head, &text[tail..])
}

/// kube's `NewForbidden` message: `forbidden: …` for a path,
/// `<resource> is forbidden: …`, or `<resource> "<name>" is forbidden: …`.
fn forbidden_message(qualified: &str, name: &str, why: &str) -> String {
    match (qualified, name) {
        ("", _) => format!("forbidden: {why}"),
        (_, "") => format!("{qualified} is forbidden: {why}"),
        _ => format!("{qualified} {} is forbidden: {why}", go_quote(name)),
    }
}

/// A string as Go's `%q` writes it (kube quotes names and users with it).
pub fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() && (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// kube's "the object has been modified" conflict, for stale updates.
pub fn modified(qualified: &str, name: &str) -> ApiError {
    ApiError::Conflict {
        qualified: qualified.to_string(),
        name: name.to_string(),
        why: "the object has been modified; please apply your changes to the latest version and try again"
            .to_string(),
    }
}

/// Go's `syscall` texts for the connection errors users meet.
pub fn go_io_error(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connect: connection refused".into(),
        std::io::ErrorKind::TimedOut => "i/o timeout".into(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_reads_like_kubes() {
        let err = ApiError::NotFound { qualified: "deployments.apps".into(), name: "web".into() };
        let status = err.status();
        assert_eq!(status["message"], "deployments.apps \"web\" not found");
        assert_eq!(status["code"], 404);
        assert_eq!(status["details"]["kind"], "deployments");
        assert_eq!(status["details"]["group"], "apps");
    }

    #[test]
    fn conflict_reads_like_kubes() {
        let status = modified("configmaps", "c").status();
        assert_eq!(
            status["message"],
            "Operation cannot be fulfilled on configmaps \"c\": the object has been modified; please apply your changes to the latest version and try again"
        );
        assert_eq!((status["code"].as_u64(), status["reason"].as_str()), (Some(409), Some("Conflict")));
    }

    #[test]
    fn an_error_answer_stays_under_a_mebibyte_whatever_it_has_to_say() {
        // A thousand causes each repeating a 500 KB list of values.
        let listed = "\"value\", ".repeat(50_000);
        let causes: Vec<Cause> = (0..1000)
            .map(|i| Cause {
                reason: "FieldValueNotSupported",
                field: format!("spec.items[{i}]"),
                message: format!("Unsupported value: \"x\": supported values: {listed}"),
            })
            .collect();
        let err = ApiError::Invalid { kind: "Thing.example.com".into(), name: "t".into(), causes };
        let body = serde_json::to_vec(&err.status()).unwrap();
        assert!(body.len() < 1 << 20, "{} bytes", body.len());
        let status = err.status();
        let message = status["message"].as_str().unwrap();
        assert!(message.starts_with("Thing.example.com \"t\" is invalid: [spec.items[0]: Unsupported value"));
        assert!(message.ends_with(" more]"), "{}", &message[message.len() - 80..]);
        let shown = status["details"]["causes"].as_array().unwrap();
        let last = shown.last().unwrap()["message"].as_str().unwrap();
        assert_eq!(last, format!("{} more causes not shown", 1000 - (shown.len() - 1)));
        let first = shown[0]["message"].as_str().unwrap();
        assert!(
            first.contains(" bytes not shown) ...") && first.ends_with("\"value\", "),
            "{}",
            &first[..100]
        );
    }

    #[test]
    fn small_errors_are_untouched_and_repeats_shown_once() {
        let cause = |field: &str| Cause {
            reason: "FieldValueRequired",
            field: field.into(),
            message: "Required value".into(),
        };
        let err = ApiError::Invalid {
            kind: "Pod".into(),
            name: "p".into(),
            causes: vec![cause("a"), cause("b"), cause("a")],
        };
        assert_eq!(err.to_string(), "Pod \"p\" is invalid: [a: Required value, b: Required value]");
        assert_eq!(err.status()["details"]["causes"].as_array().unwrap().len(), 3);
    }
}
