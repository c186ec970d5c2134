//! The body of a streamed answer (a watch) that ends with `Unavailable`
//! once its member is marked down. A watch on a stopped or cut-off member
//! would otherwise wait on an open socket for as long as the connection's
//! keep-alive takes to give up, and the watch cache would fall behind for
//! that long; ended, it is opened again on another member from the revision
//! it had reached.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tonic::body::Body as GrpcBody;

type Signal = Pin<Box<dyn Future<Output = ()> + Send>>;

pub(super) struct EndsWhenSilent {
    inner: GrpcBody,
    /// Completes when the member is marked down; None once it has.
    silent: Option<Signal>,
    url: String,
}

impl EndsWhenSilent {
    pub(super) fn new(inner: GrpcBody, silent: impl Future<Output = ()> + Send + 'static, url: &str) -> Self {
        EndsWhenSilent { inner, silent: Some(Box::pin(silent)), url: url.to_string() }
    }
}

impl Body for EndsWhenSilent {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        let this = &mut *self;
        match &mut this.silent {
            Some(silent) => {
                if silent.as_mut().poll(cx).is_ready() {
                    this.silent = None;
                    let why = format!("etcd member {} stopped answering", this.url);
                    return Poll::Ready(Some(Err(tonic::Status::unavailable(why))));
                }
            }
            // Ended already: nothing more is read from the member.
            None => return Poll::Ready(None),
        }
        Pin::new(&mut this.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.silent.is_none() || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    #[tokio::test]
    async fn a_silent_member_ends_the_stream_with_unavailable() {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let pending = http_body_util::StreamBody::new(futures_util::stream::pending::<
            Result<Frame<Bytes>, tonic::Status>,
        >());
        let mut body = EndsWhenSilent::new(
            GrpcBody::new(pending),
            async move {
                let _ = rx.await;
            },
            "http://m1",
        );
        tx.send(()).unwrap();
        let error = body.frame().await.unwrap().unwrap_err();
        assert_eq!(error.code(), tonic::Code::Unavailable);
        assert_eq!(error.message(), "etcd member http://m1 stopped answering");
        assert!(body.frame().await.is_none());
        assert!(body.is_end_stream());
    }
}
