//! The JSON side of etcd's gateway, as grpc-gateway (v1, which etcd 3.4
//! runs) writes it: messages in proto3's JSON form with proto field names
//! (pbjson, generated in rtcd-proto), errors as `{"error", "code",
//! "message"}` with the HTTP status of the gRPC code, stream messages as
//! newline-separated `{"result": ...}` and a failed stream's last line as
//! `{"error": {"grpc_code", "http_code", "message", "http_status"}}`.

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tonic::{Code, Status};

use super::framer::Framer;

/// The request message of a body: empty means all defaults, as with
/// grpc-gateway.
pub fn decode<T: DeserializeOwned + Default>(body: &[u8]) -> Result<T, Status> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| Status::invalid_argument(e.to_string()))
}

/// grpc-gateway's HTTP status for a gRPC code.
pub fn http_status(code: Code) -> StatusCode {
    match code {
        Code::Ok => StatusCode::OK,
        Code::Cancelled => StatusCode::REQUEST_TIMEOUT,
        Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => StatusCode::BAD_REQUEST,
        Code::DeadlineExceeded => StatusCode::GATEWAY_TIMEOUT,
        Code::NotFound => StatusCode::NOT_FOUND,
        Code::AlreadyExists | Code::Aborted => StatusCode::CONFLICT,
        Code::PermissionDenied => StatusCode::FORBIDDEN,
        Code::Unauthenticated => StatusCode::UNAUTHORIZED,
        Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
        Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
        Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        Code::Unknown | Code::Internal | Code::DataLoss => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    code: i32,
    message: &'a str,
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

pub fn error(status: &Status) -> Response {
    let body = ErrorBody { error: status.message(), code: status.code() as i32, message: status.message() };
    json_response(http_status(status.code()), serde_json::to_vec(&body).unwrap_or_default())
}

/// A unary call's answer.
pub fn answer<T: Serialize>(result: Result<T, Status>) -> Response {
    match result.and_then(|message| serde_json::to_vec(&message).map_err(|e| Status::internal(e.to_string())))
    {
        Ok(body) => json_response(StatusCode::OK, body),
        Err(status) => error(&status),
    }
}

#[derive(Serialize)]
struct StreamResult<T> {
    result: T,
}

#[derive(Serialize)]
struct StreamError<'a> {
    error: StreamErrorBody<'a>,
}

#[derive(Serialize)]
struct StreamErrorBody<'a> {
    grpc_code: i32,
    http_code: u16,
    message: &'a str,
    http_status: &'a str,
}

/// One line of a streamed answer.
fn line<T: Serialize>(item: Result<T, Status>) -> Bytes {
    let mut text = match item {
        Ok(result) => serde_json::to_vec(&StreamResult { result }),
        Err(status) => {
            let http = http_status(status.code());
            let error = StreamErrorBody {
                grpc_code: status.code() as i32,
                http_code: http.as_u16(),
                message: status.message(),
                http_status: http.canonical_reason().unwrap_or(""),
            };
            serde_json::to_vec(&StreamError { error })
        }
    }
    .unwrap_or_default();
    text.push(b'\n');
    Bytes::from(text)
}

/// A streamed answer: one line per message, ending after an error.
pub fn stream<T, S>(messages: S) -> Response
where
    T: Serialize + Send + 'static,
    S: Stream<Item = Result<T, Status>> + Send + 'static,
{
    let mut failed = false;
    let lines = messages
        .take_while(move |item| {
            let go_on = !failed;
            failed |= item.is_err();
            std::future::ready(go_on)
        })
        .map(|item| Ok::<_, std::convert::Infallible>(line(item)));
    let mut response = Response::new(Body::from_stream(lines));
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The request messages of a streamed body: JSON values one after another
/// (grpc-gateway decodes them so), each handed on as soon as it is whole.
/// A body that is not JSON, or a value over `limit` bytes, ends the stream
/// with an error. Each byte is looked at once by a [`Framer`] and each
/// value decoded once: a body trickled a byte at a time costs what it
/// costs sent whole.
pub fn requests<T>(body: Body, limit: usize) -> impl Stream<Item = Result<T, Status>> + Send + Unpin + 'static
where
    T: DeserializeOwned + Send + 'static,
{
    let state = (body.into_data_stream(), Vec::new(), Framer::default(), false);
    Box::pin(futures_util::stream::unfold(
        state,
        move |(mut chunks, mut buffer, mut framer, done)| async move {
            if done {
                return None;
            }
            loop {
                if let Some(end) = framer.scan(&buffer) {
                    let value = serde_json::from_slice::<T>(&buffer[..end]);
                    buffer.drain(..end);
                    framer = Framer::default();
                    let failed = value.is_err();
                    let item = value.map_err(|e| Status::invalid_argument(e.to_string()));
                    return Some((item, (chunks, buffer, framer, failed)));
                }
                if buffer.len() > limit {
                    let status = Status::resource_exhausted("rtcd: a request in the stream is too large");
                    return Some((Err(status), (chunks, buffer, framer, true)));
                }
                match chunks.next().await {
                    Some(Ok(chunk)) => buffer.extend_from_slice(&chunk),
                    Some(Err(e)) => {
                        return Some((Err(Status::cancelled(e.to_string())), (chunks, buffer, framer, true)));
                    }
                    // The body's end: what is left is one last value, or
                    // nothing but whitespace.
                    None if buffer.iter().all(u8::is_ascii_whitespace) => return None,
                    None => {
                        let item = serde_json::from_slice::<T>(&buffer)
                            .map_err(|e| Status::invalid_argument(e.to_string()));
                        return Some((item, (chunks, Vec::new(), framer, true)));
                    }
                }
            }
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Message {
        a: serde_json::Value,
    }

    fn trickled(text: &str, chunk: usize) -> Vec<Result<Message, Status>> {
        let chunks: Vec<Result<Bytes, std::io::Error>> =
            text.as_bytes().chunks(chunk).map(|c| Ok(Bytes::copy_from_slice(c))).collect();
        let body = Body::from_stream(futures_util::stream::iter(chunks));
        block_on(requests::<Message>(body, 1 << 20).collect::<Vec<_>>())
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().expect("a runtime").block_on(future)
    }

    #[test]
    fn values_are_framed_however_the_body_is_cut() {
        let text = r#" {"a": "}{\"]"} {"a": [1, {"b": [2]}]}
{"a": 3}"#;
        for chunk in [1, 2, 5, 1000] {
            let values: Vec<Message> = trickled(text, chunk).into_iter().map(Result::unwrap).collect();
            assert_eq!(
                values,
                [
                    Message { a: serde_json::json!("}{\"]") },
                    Message { a: serde_json::json!([1, {"b": [2]}]) },
                    Message { a: serde_json::json!(3) },
                ],
                "chunks of {chunk}"
            );
        }
        let broken = trickled(r#"{"a": 1} {"a": 2"#, 3);
        assert!(broken[0].is_ok());
        assert_eq!(broken[1].as_ref().unwrap_err().code(), Code::InvalidArgument);
        assert_eq!(broken.len(), 2);
    }
}
