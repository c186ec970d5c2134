//! When a request that failed on one etcd member may be sent to another:
//! what the caller says of its request ([`Retry`]), and what the failure
//! says of whether the request was applied ([`Failure`]).
//!
//! The rule is etcd's client's (`client/v3/retry_interceptor.go`): reads go
//! anywhere as often as needed; writes only when they cannot be applied
//! twice. kube's writes are transactions with a compare on the key's mod
//! revision, so most are safe to repeat: a compare on a non-zero revision
//! can succeed once at most, because no revision comes back. A create's
//! compare (`MOD == 0`) is the exception: it holds again once the key is
//! deleted.

use std::error::Error as StdError;

/// What may be done with a request after the member it went to failed it;
/// callers set it as a request extension, else it follows from the method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Sent again anywhere, as often as needed: a read, or a write that a
    /// repeat cannot apply twice (a compare on a non-zero revision; a lease
    /// grant whose extra lease expires unused).
    Always,
    /// Sent again after its member refused or dropped the connection, or
    /// answered that nothing was proposed, but not after the member fell
    /// silent: a silent member may still apply it later, when the repeat
    /// has succeeded and the key may have been deleted since (a create).
    UnlessSilent,
    /// Sent again only when it never reached a member.
    IfNotSent,
    /// A stream the client keeps sending on (Watch, LeaseKeepAlive): sent
    /// once, and ended with an error if its member falls silent, so that
    /// its owner opens it again elsewhere.
    Stream,
}

impl Retry {
    /// The class of a gRPC method nobody classified.
    pub(super) fn of_method(path: &str) -> Retry {
        match path {
            "/etcdserverpb.Watch/Watch" | "/etcdserverpb.Lease/LeaseKeepAlive" => Retry::Stream,
            "/etcdserverpb.KV/Range"
            | "/etcdserverpb.Maintenance/Status"
            | "/etcdserverpb.Maintenance/Alarm"
            | "/etcdserverpb.Maintenance/HashKV"
            | "/etcdserverpb.Cluster/MemberList"
            | "/etcdserverpb.Lease/LeaseTimeToLive"
            | "/etcdserverpb.Lease/LeaseLeases" => Retry::Always,
            _ => Retry::IfNotSent,
        }
    }

    /// Whether a request of this class may be sent again after `failure`.
    pub(super) fn allows(self, failure: Failure) -> bool {
        match (self, failure) {
            (Retry::Stream, _) => false,
            (_, Failure::NotSent) => true,
            (Retry::IfNotSent, _) => false,
            (Retry::UnlessSilent, Failure::Silent) => false,
            (Retry::Always | Retry::UnlessSilent, _) => true,
        }
    }

    /// Whether an attempt is abandoned when its member falls silent.
    pub(super) fn leaves_silent_members(self) -> bool {
        matches!(self, Retry::Always)
    }
}

/// How an attempt on one member failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Failure {
    /// No connection could be made: the member never saw the request.
    NotSent,
    /// The connection broke or was closed with the request on it.
    ConnectionLost,
    /// The member answered `Unavailable` before doing anything: it has no
    /// leader, or is stopping.
    Refused,
    /// The member stopped answering its health checks with the request on
    /// it (SIGSTOP, a partition): it may still apply it later.
    Silent,
}

impl Failure {
    /// The failure a transport error shows.
    pub(super) fn of_transport(error: &(dyn StdError + 'static)) -> Failure {
        let mut source = Some(error);
        while let Some(error) = source {
            if error.downcast_ref::<tonic::ConnectError>().is_some() {
                return Failure::NotSent;
            }
            source = error.source();
        }
        Failure::ConnectionLost
    }

    /// The failure a trailers-only gRPC answer shows, if it is one another
    /// member may not give: etcd's `Unavailable` answers (no leader, leader
    /// changed, timed out, stopping).
    pub(super) fn of_answer(headers: &axum::http::HeaderMap) -> Option<Failure> {
        let code = headers.get("grpc-status")?;
        (code.as_bytes() == b"14").then_some(Failure::Refused)
    }
}

/// Set on a response that came after more than one attempt: a write whose
/// first attempt may have been applied (its compare then fails on the
/// repeat).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retried;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_go_anywhere_and_writes_only_where_they_cannot_repeat() {
        let range = Retry::of_method("/etcdserverpb.KV/Range");
        let txn = Retry::of_method("/etcdserverpb.KV/Txn");
        let watch = Retry::of_method("/etcdserverpb.Watch/Watch");
        assert_eq!((range, txn, watch), (Retry::Always, Retry::IfNotSent, Retry::Stream));
        for failure in [Failure::NotSent, Failure::ConnectionLost, Failure::Refused, Failure::Silent] {
            assert!(Retry::Always.allows(failure));
            assert!(!Retry::Stream.allows(failure));
            assert_eq!(Retry::IfNotSent.allows(failure), failure == Failure::NotSent);
            assert_eq!(Retry::UnlessSilent.allows(failure), failure != Failure::Silent);
        }
    }

    #[test]
    fn a_connect_error_anywhere_in_the_chain_means_not_sent() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let connect = tonic::ConnectError(Box::new(refused));
        #[derive(Debug, thiserror::Error)]
        #[error("transport error")]
        struct Wrapper(#[source] tonic::ConnectError);
        assert_eq!(Failure::of_transport(&Wrapper(connect)), Failure::NotSent);
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert_eq!(Failure::of_transport(&reset), Failure::ConnectionLost);
    }

    #[test]
    fn only_unavailable_answers_are_failures() {
        let mut headers = axum::http::HeaderMap::new();
        assert_eq!(Failure::of_answer(&headers), None);
        headers.insert("grpc-status", axum::http::HeaderValue::from_static("5"));
        assert_eq!(Failure::of_answer(&headers), None);
        headers.insert("grpc-status", axum::http::HeaderValue::from_static("14"));
        assert_eq!(Failure::of_answer(&headers), Some(Failure::Refused));
    }
}
