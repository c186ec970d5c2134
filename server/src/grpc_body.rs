//! gRPC request bodies as the services receive them: each message is handed
//! to tonic only once all of it has arrived, and a message declaring more
//! than the limit is refused as soon as its 5-byte header is read.
//!
//! Why: tonic reserves a message's declared length the moment it reads the
//! header. A client could declare 2 MiB on each of hundreds of streams, send
//! nothing more, and pin gigabytes. Held back here, a message costs the
//! server only the bytes the client actually sent, as with etcd (grpc-go
//! reads a message's body before allocating for it).

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes};
use http_body::{Body as HttpBody, Frame, SizeHint};
use tonic::Status;
use tonic::body::Body;

/// gRPC's message prefix: a compression flag and a big-endian length.
const PREFIX: usize = 5;

/// Wraps the bodies of gRPC requests (other HTTP requests pass untouched).
#[derive(Debug, Clone, Copy)]
pub struct WholeMessagesLayer {
    /// `--max-request-bytes` plus gRPC's allowance, as etcd gives grpc-go.
    pub max_message_bytes: usize,
}

impl<S> tower_layer::Layer<S> for WholeMessagesLayer {
    type Service = WholeMessagesService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        WholeMessagesService { inner, max_message_bytes: self.max_message_bytes }
    }
}

#[derive(Debug, Clone)]
pub struct WholeMessagesService<S> {
    inner: S,
    max_message_bytes: usize,
}

impl<S> tower_service::Service<http::Request<Body>> for WholeMessagesService<S>
where
    S: tower_service::Service<http::Request<Body>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let max = self.max_message_bytes;
        let request = if is_grpc(&request) {
            request.map(|body| Body::new(WholeMessages::new(body, max)))
        } else {
            request
        };
        self.inner.call(request)
    }
}

pub fn is_grpc(request: &http::Request<Body>) -> bool {
    request
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/grpc"))
}

/// Where the body is in its current message.
#[derive(Debug)]
enum Framing {
    /// Reading a prefix; `have` bytes of it so far.
    Prefix { bytes: [u8; PREFIX], have: usize },
    /// Collecting a message body: `left` bytes still to come.
    Message { parts: Vec<Bytes>, left: usize },
}

/// A request body that releases whole gRPC messages (prefix and body
/// together) and refuses a declared length over `max`.
pub struct WholeMessages {
    inner: Body,
    max: usize,
    framing: Framing,
    /// Complete messages' pieces, released one per poll.
    ready: VecDeque<Bytes>,
}

impl WholeMessages {
    fn new(inner: Body, max: usize) -> Self {
        WholeMessages {
            inner,
            max,
            framing: Framing::Prefix { bytes: [0; PREFIX], have: 0 },
            ready: VecDeque::new(),
        }
    }

    /// Takes one chunk of the body, completing messages as it goes.
    fn take(&mut self, mut data: Bytes) -> Result<(), Status> {
        while data.has_remaining() {
            match &mut self.framing {
                Framing::Prefix { bytes, have } => {
                    let n = (PREFIX - *have).min(data.len());
                    bytes[*have..*have + n].copy_from_slice(&data[..n]);
                    *have += n;
                    data.advance(n);
                    if *have == PREFIX {
                        let prefix = *bytes;
                        self.start_message(prefix)?;
                    }
                }
                Framing::Message { parts, left } => {
                    let n = (*left).min(data.len());
                    parts.push(data.split_to(n));
                    *left -= n;
                    if *left == 0 {
                        self.ready.extend(parts.drain(..));
                        self.framing = Framing::Prefix { bytes: [0; PREFIX], have: 0 };
                    }
                }
            }
        }
        Ok(())
    }

    /// A prefix is complete: refuse an oversized message (grpc-go's code
    /// and text, which etcd's clients see), or start collecting its body.
    fn start_message(&mut self, prefix: [u8; PREFIX]) -> Result<(), Status> {
        let len = u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize;
        if len > self.max {
            return Err(Status::resource_exhausted(format!(
                "grpc: received message larger than max ({len} vs. {})",
                self.max
            )));
        }
        let prefix = Bytes::copy_from_slice(&prefix);
        self.framing = if len == 0 {
            self.ready.push_back(prefix);
            Framing::Prefix { bytes: [0; PREFIX], have: 0 }
        } else {
            Framing::Message { parts: vec![prefix], left: len }
        };
        Ok(())
    }

    /// The body ended: whatever partial message is held goes to tonic, which
    /// reports a truncated message the way it always has.
    fn release_partial(&mut self) {
        match std::mem::replace(&mut self.framing, Framing::Prefix { bytes: [0; PREFIX], have: 0 }) {
            Framing::Prefix { bytes, have } if have > 0 => {
                self.ready.push_back(Bytes::copy_from_slice(&bytes[..have]))
            }
            Framing::Prefix { .. } => {}
            Framing::Message { parts, .. } => self.ready.extend(parts),
        }
    }
}

impl HttpBody for WholeMessages {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let this = &mut *self;
        loop {
            if let Some(part) = this.ready.pop_front() {
                return Poll::Ready(Some(Ok(Frame::data(part))));
            }
            match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => this.take(data)?,
                    // Trailers: nothing of a message can follow them.
                    Err(frame) => {
                        this.release_partial();
                        if this.ready.is_empty() {
                            return Poll::Ready(Some(Ok(frame)));
                        }
                    }
                },
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => {
                    this.release_partial();
                    if this.ready.is_empty() {
                        return Poll::Ready(None);
                    }
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        // A partial message still held must reach tonic (as a truncation).
        let holding = !matches!(self.framing, Framing::Prefix { have: 0, .. });
        self.ready.is_empty() && !holding && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    fn message(payload: &[u8]) -> Vec<u8> {
        let mut m = vec![0];
        m.extend((payload.len() as u32).to_be_bytes());
        m.extend(payload);
        m
    }

    /// The body `chunks` make, as the wrapper releases it.
    async fn released(chunks: Vec<Vec<u8>>, max: usize) -> Result<Vec<Vec<u8>>, Status> {
        let stream =
            tokio_stream::iter(chunks.into_iter().map(|c| Ok::<_, Status>(Frame::data(Bytes::from(c)))));
        let mut body = WholeMessages::new(Body::new(http_body_util::StreamBody::new(stream)), max);
        let mut out = Vec::new();
        while let Some(frame) = body.frame().await {
            out.push(frame?.into_data().map(|d| d.to_vec()).unwrap_or_default());
        }
        Ok(out)
    }

    #[tokio::test]
    async fn messages_are_released_whole_however_they_are_split() {
        let (a, b) = (message(b"hello"), message(b""));
        let whole: Vec<u8> = [a.clone(), b.clone(), a.clone()].concat();
        for split in 0..whole.len() {
            let chunks = vec![whole[..split].to_vec(), whole[split..].to_vec()];
            let out = released(chunks, 100).await.unwrap();
            assert_eq!(out.concat(), whole, "split at {split}");
        }
        // Byte by byte: nothing is released until a message is complete.
        let out = released(a.iter().map(|b| vec![*b]).collect(), 100).await.unwrap();
        assert_eq!(out.concat(), a);
    }

    #[tokio::test]
    async fn an_oversized_declaration_is_refused_from_its_prefix_alone() {
        let prefix = message(&[0; 11])[..PREFIX].to_vec();
        let err = released(vec![prefix], 10).await.unwrap_err();
        assert_eq!(err.code(), tonic::Code::ResourceExhausted);
        assert_eq!(err.message(), "grpc: received message larger than max (11 vs. 10)");
        assert!(released(vec![message(&[0; 10])], 10).await.is_ok());
    }

    #[tokio::test]
    async fn a_truncated_message_reaches_tonic_as_sent() {
        let partial = message(b"hello")[..7].to_vec();
        let out = released(vec![partial.clone()], 100).await.unwrap();
        assert_eq!(out.concat(), partial);
    }
}
