//! One request passed on to an extension server, as kube's aggregator
//! passes it: the caller, already authenticated and authorized here,
//! travels as front-proxy headers (`X-Remote-User`, `-Uid`, `-Group`,
//! `-Extra-*`) over a connection that presents the proxy's certificate;
//! the caller's own credentials stay here. Bodies stream both ways, so
//! watches and long lists pass through as they come; an upgrade (`exec`,
//! `port-forward`) becomes a byte pipe once the extension server agrees.

use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use hyper_util::rt::TokioIo;

use super::pool::Pool;
use super::transport::Connection;
use crate::request::{UserInfo, escape_extra_key};

/// How long a discovery request (`/apis/<group>/<version>`) may take:
/// kube's aggregator cuts it short so one slow extension server does not
/// hold up every client's discovery.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);

/// Headers that belong to one hop, never passed on (RFC 9110 §7.6.1).
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The front-proxy headers, always set from the caller here (never passed
/// through from the client).
const REMOTE_USER: &str = "x-remote-user";
const REMOTE_UID: &str = "x-remote-uid";
const REMOTE_GROUP: &str = "x-remote-group";
const REMOTE_EXTRA: &str = "x-remote-extra-";

/// Sends `request` on `connection` (to `address`) for `user` and answers
/// what the extension server answered, the connection going back to
/// `pool` under `key` once the answer is read; why not when it did not
/// answer (a discovery request within [`DISCOVERY_TIMEOUT`]).
pub async fn forward(
    (mut connection, pool, key): (Connection, &Pool, String),
    address: &str,
    mut request: Request,
    user: &UserInfo,
    discovery: bool,
) -> Result<Response, String> {
    let upgrade = wants_upgrade(request.headers());
    let client_upgrade = upgrade.then(|| hyper::upgrade::on(&mut request));
    let (parts, body) = request.into_parts();
    let mut outgoing = hyper::Request::builder().method(parts.method).uri(path_and_query(&parts.uri));
    if let Some(headers) = outgoing.headers_mut() {
        *headers = outgoing_headers(&parts.headers, address, user, upgrade);
    }
    let outgoing = outgoing.body(body).map_err(|e| e.to_string())?;
    let sent = connection.send_request(outgoing);
    let answered = match discovery {
        true => match tokio::time::timeout(DISCOVERY_TIMEOUT, sent).await {
            Ok(answered) => answered.map_err(|e| e.to_string()),
            Err(_) => Err("context deadline exceeded".to_string()),
        },
        false => sent.await.map_err(|e| e.to_string()),
    };
    let mut response = answered?;
    let upgraded = response.status() == StatusCode::SWITCHING_PROTOCOLS && client_upgrade.is_some();
    if upgraded && let Some(client_upgrade) = client_upgrade {
        tokio::spawn(pipe(client_upgrade, hyper::upgrade::on(&mut response)));
    }
    let (mut head, incoming) = response.into_parts();
    head.headers = incoming_headers(&head.headers, upgraded);
    let body = match upgraded {
        true => Body::new(incoming),
        false => pool.returning(key, connection, incoming),
    };
    Ok(Response::from_parts(head, body))
}

/// Bytes both ways between the client and the extension server once both
/// sides have switched protocols.
async fn pipe(client: hyper::upgrade::OnUpgrade, server: hyper::upgrade::OnUpgrade) {
    let (Ok(client), Ok(server)) = (client.await, server.await) else { return };
    let _ = tokio::io::copy_bidirectional(&mut TokioIo::new(client), &mut TokioIo::new(server)).await;
}

fn path_and_query(uri: &Uri) -> String {
    uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into())
}

/// Whether the client asks to switch protocols (`Connection: Upgrade`
/// with an `Upgrade` header).
fn wants_upgrade(headers: &HeaderMap) -> bool {
    let connection = headers.get_all(header::CONNECTION).iter().filter_map(|v| v.to_str().ok());
    let mut tokens = connection.flat_map(|v| v.split(','));
    headers.contains_key(header::UPGRADE) && tokens.any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
}

/// The client's headers as the extension server gets them: this hop's
/// own, the caller's credentials and impersonation requests (already
/// acted on here) and any front-proxy headers the client sent removed;
/// the caller as front-proxy headers.
fn outgoing_headers(incoming: &HeaderMap, address: &str, user: &UserInfo, upgrade: bool) -> HeaderMap {
    let mut headers = filtered(&without_hop_headers(incoming), |name| {
        name != "authorization"
            && !name.starts_with("impersonate-")
            && !matches!(name, REMOTE_USER | REMOTE_UID | REMOTE_GROUP)
            && !name.starts_with(REMOTE_EXTRA)
    });
    if upgrade {
        headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
        if let Some(protocol) = incoming.get(header::UPGRADE) {
            headers.insert(header::UPGRADE, protocol.clone());
        }
    }
    if let Ok(host) = HeaderValue::from_str(address) {
        headers.insert(header::HOST, host);
    }
    let mut add = |name: &str, value: &str| {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(name), HeaderValue::from_str(value)) {
            headers.append(name, value);
        }
    };
    add(REMOTE_USER, &user.name);
    if !user.uid.is_empty() {
        add(REMOTE_UID, &user.uid);
    }
    for group in &user.groups {
        add(REMOTE_GROUP, group);
    }
    for (key, values) in &user.extra {
        let name = format!("{REMOTE_EXTRA}{}", escape_extra_key(key));
        for value in values {
            add(&name, value);
        }
    }
    headers
}

/// The extension server's headers as the client gets them: this hop's
/// own removed, but an agreed upgrade's kept.
fn incoming_headers(incoming: &HeaderMap, upgraded: bool) -> HeaderMap {
    let mut headers = without_hop_headers(incoming);
    if upgraded {
        for name in [header::CONNECTION, header::UPGRADE] {
            if let Some(value) = incoming.get(&name) {
                headers.insert(name, value.clone());
            }
        }
    }
    headers
}

/// `headers` less the hop-by-hop ones, and less those `Connection` names.
fn without_hop_headers(headers: &HeaderMap) -> HeaderMap {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .collect();
    filtered(headers, |name| !HOP_BY_HOP.contains(&name) && !named.iter().any(|n| n == name))
}

/// The headers whose (lowercase) names `keep` keeps.
fn filtered(headers: &HeaderMap, keep: impl Fn(&str) -> bool) -> HeaderMap {
    let mut kept = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if keep(name.as_str()) {
            kept.append(name.clone(), value.clone());
        }
    }
    kept
}
