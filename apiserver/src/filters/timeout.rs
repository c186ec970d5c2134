//! kube's request deadline and timeout (`WithRequestDeadline`,
//! `WithTimeoutForNonLongRunningRequests`): a request that is not
//! long-running (watches, proxies and the like are) gets the shorter of its
//! `timeout` query parameter and `--request-timeout`; when that passes, the
//! work is dropped (cancelled at its next await) and the client gets kube's
//! 504. Work that does not await sees the deadline, and whether the client
//! has gone, through `request::deadline`. A `timeout` that is not a Go
//! duration is a 400.

use std::collections::HashMap;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::errors::ApiError;
use crate::metrics::tracker;
use crate::request::{ClientPresence, RequestInfo, deadline};

/// kube's answer, as its timeout handler writes it: the bare Status
/// (no kind or apiVersion), encoded with a trailing newline, sniffed as
/// text by Go's server.
const TIMED_OUT: &str = "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"Timeout: request did not complete within the allotted timeout\",\"reason\":\"Timeout\",\"details\":{},\"code\":504}\n";

pub(super) async fn timeout(State(limit): State<Duration>, request: Request, next: Next) -> Response {
    if request.extensions().get::<RequestInfo>().is_some_and(RequestInfo::is_long_running) {
        return next.run(request).await;
    }
    let asked = match requested(request.uri()) {
        Ok(asked) => asked,
        Err(why) => return ApiError::BadRequest(why).into_response(),
    };
    // A timeout of 0 is none of the client's: the server's applies.
    let allotted = asked.filter(|t| !t.is_zero() && *t < limit).unwrap_or(limit);
    // A deadline past what Instant can hold is no deadline for the work.
    let deadline = std::time::Instant::now().checked_add(allotted);
    let client = request.extensions().get::<ClientPresence>().cloned();
    let work = async move {
        match deadline {
            Some(deadline) => deadline::within(deadline, client, next.run(request)).await,
            None => next.run(request).await,
        }
    };
    match tokio::time::timeout(allotted, work).await {
        Ok(response) => response,
        Err(_) => {
            tracker::timed_out();
            timed_out()
        }
    }
}

/// The `timeout` query parameter, if given.
fn requested(uri: &axum::http::Uri) -> Result<Option<Duration>, String> {
    let query = axum::extract::Query::<HashMap<String, String>>::try_from_uri(uri).map(|q| q.0);
    let Some(value) = query.unwrap_or_default().remove("timeout").filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    rtcd_duration::parse(&value)
        .map(Some)
        .map_err(|e| format!("invalid timeout specified in the request URL - {e}"))
}

fn timed_out() -> Response {
    let mut response = Response::new(Body::from(TIMED_OUT));
    *response.status_mut() = StatusCode::GATEWAY_TIMEOUT;
    let text = header::HeaderValue::from_static("text/plain; charset=utf-8");
    response.headers_mut().insert(header::CONTENT_TYPE, text);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_parameter_is_a_go_duration() {
        let uri = |query: &str| format!("/api/v1/pods?{query}").parse::<axum::http::Uri>().unwrap();
        assert_eq!(requested(&uri("timeout=5s&limit=1")), Ok(Some(Duration::from_secs(5))));
        assert_eq!(requested(&uri("timeout=1m30s")), Ok(Some(Duration::from_secs(90))));
        assert_eq!(requested(&uri("limit=1")), Ok(None));
        let refused = requested(&uri("timeout=5")).unwrap_err();
        assert!(refused.starts_with("invalid timeout specified in the request URL - "), "{refused}");
    }
}
