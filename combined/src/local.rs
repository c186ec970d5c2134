//! The API server's connection to its own member, inside the process: each
//! connection the API server's gRPC channel opens is an in-memory pipe whose
//! other end is handed to the member, which serves it as it serves a
//! client URL's connections. Same etcd API, same code paths on both sides,
//! no socket and no system call in between.

use std::io;

use hyper_util::rt::TokioIo;
use rtcd_server::server::LocalConnections;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint, Uri};

/// Each direction of a pipe buffers this much before the writer waits:
/// a whole list page or a burst of watch events in one go.
const PIPE_BYTES: usize = 1 << 20;

/// A lazily connecting channel for the API server, and the connections it
/// opens, for the member to serve.
pub fn connect() -> (Channel, LocalConnections) {
    let (handed, connections) = mpsc::channel(16);
    let connector = tower::service_fn(move |_: Uri| {
        let handed = handed.clone();
        async move {
            let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
            handed.send(Ok(theirs)).await.map_err(|_| {
                io::Error::new(io::ErrorKind::ConnectionRefused, "the member stopped serving")
            })?;
            Ok::<_, io::Error>(TokioIo::new(ours))
        }
    });
    // The address only names the connection; nothing is resolved or dialled.
    let channel = Endpoint::from_static("http://rtcd.in-process").connect_with_connector_lazy(connector);
    (channel, ReceiverStream::new(connections))
}
